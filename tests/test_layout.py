"""The tests' own layout: what test modules share lives in ``tests/helpers/``, and no test module
imports another (a test module is run, never used as a library: importing one runs its module
code again and ties two tests' files together)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO

TESTS = REPO / "tests"


def imports_of_test_modules(path: Path) -> list[tuple[int, str]]:
    """``(line, module)`` of every import in ``path`` that names a ``test_*`` module, at any
    depth of the file (a function's import too) and in either form of the statement."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            # ``from tests.engine import test_verify`` names the test module in the alias
            names = [module, *(f"{module}.{alias.name}" for alias in node.names)]
        else:
            continue
        for name in names:
            if any(part.startswith("test_") for part in name.split(".")):
                found.append((node.lineno, name))
                break
    return found


def test_no_test_module_imports_another() -> None:
    imports = {
        f"{path.relative_to(REPO).as_posix()}:{line}": module
        for path in sorted(TESTS.rglob("*.py"))
        for line, module in imports_of_test_modules(path)
    }
    assert imports == {}, "move what the modules share into tests/helpers/"


def test_the_scan_sees_each_form_of_import(tmp_path: Path) -> None:
    """The three forms that name a test module are each found; helpers and conftest are not."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import tests.engine.test_verify\n"
        "from tests.working_state.test_check import WS\n"
        "from tests.engine import test_shard\n"
        "from tests.helpers.working_state import WS\n"
        "from tests.conftest import RunCLI\n"
        "def f() -> None:\n"
        "    from .test_packaging import code_blocks\n",
        encoding="utf-8",
    )
    assert [line for line, _ in imports_of_test_modules(sample)] == [1, 2, 3, 7]
