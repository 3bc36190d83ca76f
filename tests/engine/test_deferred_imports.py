"""Imports are at the top of a module; the ones inside functions are exactly those listed in
docs/design.md, "Imports inside functions", each with why it is not at the top and what it
would cost there. A new import inside a function fails until it is listed; a listed one that
moved to the top fails until its row is removed."""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

from tests.conftest import REPO

SRC = REPO / "src"
PACKAGE = "continuity_checks"
DESIGN = REPO / "docs" / "design.md"
SECTION = "## Imports inside functions"

#: (module file under src/continuity_checks/, the function's dotted name, the module imported;
#: ours without the ``continuity_checks.`` prefix)
Deferred = tuple[str, str, str]


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and (
        (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
        or (isinstance(node.test, ast.Attribute) and node.test.attr == "TYPE_CHECKING")
    )


def _is_module(name: str, src: Path) -> bool:
    """Whether ``name`` is a module: of ``src`` when it is ours, else of this interpreter."""
    if name.startswith(f"{PACKAGE}."):
        where = src.joinpath(*name.split("."))
        return where.with_suffix(".py").is_file() or where.is_dir()
    try:
        return importlib.util.find_spec(name) is not None
    except ImportError:
        return False


def _imported(node: ast.Import | ast.ImportFrom, src: Path) -> set[str]:
    """The modules ``node`` imports: ``from a import b`` is ``a.b`` when that is a module, else
    ``a``."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names}
    assert node.level == 0, "relative imports are not used in src/"
    base = node.module or ""
    names = (f"{base}.{alias.name}" for alias in node.names)
    return {name if _is_module(name, src) else base for name in names}


def _short(module: str) -> str:
    return module.removeprefix(f"{PACKAGE}.")


def deferred_imports(src: Path) -> set[Deferred]:
    """Every import statement inside a function of the modules under ``src/continuity_checks``
    (an ``if TYPE_CHECKING:`` block is not an import at run time)."""
    found: set[Deferred] = set()
    root = src / PACKAGE
    for path in sorted(root.rglob("*.py")):
        module = path.relative_to(root).as_posix()

        def visit(node: ast.AST, names: list[str], in_function: bool, module: str = module) -> None:
            for child in ast.iter_child_nodes(node):
                if _is_type_checking(child):
                    continue
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    visit(child, [*names, child.name], True)
                elif isinstance(child, ast.ClassDef):
                    visit(child, [*names, child.name], in_function)
                elif isinstance(child, (ast.Import, ast.ImportFrom)):
                    if in_function:
                        for imported in _imported(child, src):
                            found.add((module, ".".join(names), _short(imported)))
                else:
                    visit(child, names, in_function)

        visit(ast.parse(path.read_text(encoding="utf-8"), str(path)), [], False)
    return found


def _spans(cell: str) -> list[str]:
    return re.findall(r"`([^`]+)`", cell)


def listed_imports(text: str) -> tuple[set[Deferred], list[str]]:
    """The imports the section's table lists (each row: every function named with every module
    named), and the rows that do not say why or what the import would cost at the top."""
    section = text.split(f"\n{SECTION}\n", 1)[1]
    section = re.split(r"\n#", section, maxsplit=1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")][2:]  # no header
    listed: set[Deferred] = set()
    incomplete = []
    for row in rows:
        cells = [cell.strip() for cell in row.strip().strip("|").split("|")]
        if len(cells) != 5:
            incomplete.append(row)
            continue
        module, functions, modules, why, cost = cells
        if not why or not re.search(r"[0-9]", cost) or len(_spans(module)) != 1:
            incomplete.append(row)
        for function in _spans(functions):
            for imported in _spans(modules):
                listed.add((_spans(module)[0], function, imported))
    return listed, incomplete


def test_every_import_inside_a_function_is_listed_with_its_reason() -> None:
    found = deferred_imports(SRC)
    listed, incomplete = listed_imports(DESIGN.read_text(encoding="utf-8"))
    assert incomplete == [], "each row: module, functions, modules, why, the cost measured"
    assert sorted(found - listed) == [], f"list these in {DESIGN.name}, {SECTION!r}, or move them"
    assert sorted(listed - found) == [], "these are at the top now: remove their rows"


def test_the_scan_sees_each_place_an_import_can_hide(tmp_path: Path) -> None:
    """A function's import, a method's, a nested function's and one in a block of a function
    are found; the module's own imports and ``if TYPE_CHECKING:`` blocks are not; ``from a
    import b`` names the module ``a.b`` when there is one."""
    package = tmp_path / PACKAGE
    (package / "sub").mkdir(parents=True)
    (package / "sub" / "__init__.py").write_text("", encoding="utf-8")
    (package / "sub" / "leaf.py").write_text("", encoding="utf-8")
    (package / "sample.py").write_text(
        "import os\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    import decimal\n"
        "def f() -> None:\n"
        "    import json\n"
        "    if TYPE_CHECKING:\n"
        "        import fractions\n"
        "    def g() -> None:\n"
        "        from continuity_checks.sub import leaf, name\n"
        "    try:\n"
        "        import tomllib\n"
        "    except ImportError:\n"
        "        pass\n"
        "class C:\n"
        "    import string\n"
        "    def m(self) -> None:\n"
        "        from collections import abc\n",
        encoding="utf-8",
    )
    assert deferred_imports(tmp_path) == {
        ("sample.py", "f", "json"),
        ("sample.py", "f.g", "sub.leaf"),
        ("sample.py", "f.g", "sub"),
        ("sample.py", "f", "tomllib"),
        ("sample.py", "C.m", "collections.abc"),
    }


def test_a_row_names_every_function_with_every_module() -> None:
    text = (
        f"# Page\n\n{SECTION}\n\n"
        "| module | function | imports | why | cost at the top |\n"
        "|---|---|---|---|---|\n"
        "| `a.py` | `f`, `C.m` | `core.x`, `json` | only f needs them | +1.0 M the hook |\n"
        "| `b.py` | `g` | `core.y` |  | +2.0 M |\n"
        "\n## Next\n\n| `c.py` | `h` | `z` | not in the section | 1 |\n"
    )
    listed, incomplete = listed_imports(text)
    assert listed == {
        ("a.py", "f", "core.x"),
        ("a.py", "f", "json"),
        ("a.py", "C.m", "core.x"),
        ("a.py", "C.m", "json"),
        ("b.py", "g", "core.y"),
    }
    assert incomplete == ["| `b.py` | `g` | `core.y` |  | +2.0 M |"]
