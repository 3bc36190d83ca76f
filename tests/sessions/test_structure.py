"""The sessions family's layout rules, read from its source: modules and functions of a size a
reader can hold, no state kept at module level, no attribute found by ``getattr``, and a
history module that takes an options object."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from continuity_checks.checks import sessions

PACKAGE = Path(sessions.__file__).parent
MODULES = sorted(PACKAGE.glob("*.py"))
MODULE_LINES = 700
FUNCTION_LINES = 100
#: calls that make a container a module could keep filling
CONTAINERS = {"dict", "list", "set", "defaultdict", "OrderedDict", "WeakKeyDictionary",
              "WeakValueDictionary", "WeakSet", "deque", "Counter"}  # fmt: skip
#: methods that change a container in place
MUTATORS = {"setdefault", "update", "append", "extend", "add", "insert", "pop", "popitem",
            "clear", "remove", "discard"}  # fmt: skip


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _ids(paths: list[Path]) -> list[str]:
    return [p.name for p in paths]


def test_the_package_holds_the_modules_it_was_split_into() -> None:
    """The tree check's parts are modules of their own (the checks below scan real files)."""
    names = {p.stem for p in MODULES}
    assert {"stream", "session", "registries", "memory", "lookups"} <= names
    assert "tree" not in names


@pytest.mark.parametrize("path", MODULES, ids=_ids(MODULES))
def test_no_module_over_700_lines_and_no_function_over_100(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count("\n") <= MODULE_LINES, f"{path.name}: {text.count(chr(10))} lines"
    long = [
        (node.name, node.end_lineno - node.lineno + 1)
        for node in ast.walk(_tree(path))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > FUNCTION_LINES
    ]
    assert long == [], f"{path.name}: functions over {FUNCTION_LINES} lines"


def _containers(module: ast.Module) -> set[str]:
    """The names a module binds at its top level to a mutable container."""
    found: set[str] = set()
    for node in module.body:
        targets: list[ast.expr] = []
        value: ast.expr | None = None
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign):
            targets, value = [node.target], node.value
        if value is None:
            continue
        call = value.func if isinstance(value, ast.Call) else None
        called = call.id if isinstance(call, ast.Name) else getattr(call, "attr", None)
        mutable = isinstance(value, (ast.Dict, ast.List, ast.Set)) or called in CONTAINERS
        if mutable:
            found.update(t.id for t in targets if isinstance(t, ast.Name))
    return found


@pytest.mark.parametrize("path", MODULES, ids=_ids(MODULES))
def test_no_module_level_cache(path: Path) -> None:
    """What a check remembers belongs to an object of the run (docs/design.md, "State and
    caches"): no module-level container is filled by the code, nor any name rebound with
    ``global``, nor a weak-reference table kept."""
    module = _tree(path)
    names = _containers(module)
    filled = []
    for node in ast.walk(module):
        if isinstance(node, ast.Global):
            filled += node.names
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            if isinstance(owner, ast.Name) and owner.id in names and node.func.attr in MUTATORS:
                filled.append(owner.id)
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            for target in targets:
                if (
                    isinstance(target, ast.Subscript)
                    and isinstance(target.value, ast.Name)
                    and target.value.id in names
                ):
                    filled.append(target.value.id)
    weak = [
        n.lineno
        for n in ast.walk(module)
        if (isinstance(n, ast.Import) and any(a.name == "weakref" for a in n.names))
        or (isinstance(n, ast.ImportFrom) and n.module == "weakref")
    ]
    assert (sorted(set(filled)), weak) == ([], []), path.name


@pytest.mark.parametrize("path", MODULES, ids=_ids(MODULES))
def test_no_attribute_found_by_getattr(path: Path) -> None:
    """An attribute the family reads is declared where it is read from (``Snapshot.root``),
    never looked for by name with a fallback."""
    found = [
        node.lineno
        for node in ast.walk(_tree(path))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("getattr", "hasattr")
        and len(node.args) >= 2
        and isinstance(node.args[1], ast.Constant)
    ]
    assert found == [], f"{path.name}: lines {found}"


def test_history_takes_an_options_object() -> None:
    """History mode gets the options it reads as one frozen object, and imports no family
    module."""
    from continuity_checks.checks.sessions.history import History, HistoryOptions

    history = History(HistoryOptions(max_depth=7))
    assert history.options.max_depth == 7
    with pytest.raises(AttributeError):
        history.options.max_depth = 8  # type: ignore[misc]
    imported: list[str] = []
    for node in ast.walk(_tree(PACKAGE / "history.py")):
        if isinstance(node, ast.ImportFrom):
            imported += [node.module or "", *(f"{node.module}.{a.name}" for a in node.names)]
        elif isinstance(node, ast.Import):
            imported += [alias.name for alias in node.names]
    families = [n for n in imported if n.startswith("continuity_checks.checks.")]
    assert not [n for n in families if n.endswith(".family")], families
