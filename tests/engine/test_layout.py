"""How the engine is laid out, pinned by reading the source: one module per concern, each
small; every family inherits the ``Family`` Protocol, so the engine calls its optional methods
directly and never looks one up by name; one skip list of directories, in ``core``."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from continuity_checks import checks
from continuity_checks.core.family import Family
from tests import example_family
from tests.conftest import REPO

SRC = REPO / "src" / "continuity_checks"
ENGINE = SRC / "engine"
#: what a module of the engine may hold, at most (the project's limit is 700, most under 500)
MODULE_LINES = 500
FUNCTION_LINES = 100


def _modules(directory: Path) -> list[Path]:
    return sorted(directory.rglob("*.py"))


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


#: the methods the engine calls when a family has them, each with a default in the Protocol
OPTIONAL = {"tree", "unread", "unjudged", "same_cause", "finish_commits", "history_needed"}


def _family_methods() -> set[str]:
    """Every method the ``Family`` Protocol declares."""
    return {
        name for name, value in vars(Family).items() if callable(value) and not name.startswith("_")
    }


def test_the_engine_is_a_package_of_small_modules() -> None:
    assert (ENGINE / "__init__.py").is_file(), "the engine is a package, one module per concern"
    assert not (SRC / "engine.py").exists()
    for path in _modules(ENGINE):
        lines = len(path.read_text(encoding="utf-8").splitlines())
        assert lines < MODULE_LINES, f"{path.relative_to(SRC)}: {lines} lines"
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assert node.end_lineno is not None
                length = node.end_lineno - node.lineno + 1
                assert length <= FUNCTION_LINES, f"{path.name}: {node.name} has {length} lines"


def test_no_engine_module_shares_a_name_the_engine_exports() -> None:
    """``from continuity_checks.engine import walk`` is the function: no module hides behind
    it."""
    from continuity_checks import engine

    assert not {path.stem for path in ENGINE.glob("*.py")} & set(engine.__all__)


def test_the_protocol_declares_every_optional_method() -> None:
    assert _family_methods() >= OPTIONAL


def test_no_family_method_is_looked_up_by_name() -> None:
    """``getattr(family, "same_cause", None)`` and the like: a method the Protocol declares
    has a default there, and is called."""
    methods = _family_methods() | OPTIONAL
    found = []
    for path in _modules(SRC):
        for node in ast.walk(_tree(path)):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("getattr", "hasattr")
                and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant)
                and node.args[1].value in methods
            ):
                found.append(f"{path.relative_to(SRC)}:{node.lineno} {node.args[1].value}")
    assert not found


def _family_classes() -> list[type]:
    """The class of every family this version has, and of the example family of the tests."""
    classes = []
    for declaration in [*checks.declarations(), example_family.DECLARATION]:
        module, _, name = declaration.family.partition(":")
        classes.append(vars(importlib.import_module(module))[name])
    return classes


@pytest.mark.parametrize("cls", _family_classes(), ids=lambda cls: cls.__name__)
def test_every_family_inherits_the_protocol(cls: type) -> None:
    assert Family in cls.__mro__, f"{cls.__name__} must inherit Family (its optional defaults)"


def test_one_skip_list() -> None:
    """The directories no walk enters are defined once, in core, for the engine's walk and the
    families' searches alike."""
    defined = [
        path.relative_to(SRC).as_posix()
        for path in _modules(SRC)
        for node in ast.walk(_tree(path))
        if isinstance(node, ast.Assign | ast.AnnAssign)
        and any(
            isinstance(target, ast.Name) and target.id == "SKIP_DIRS"
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        )
    ]
    assert defined == ["core/skipped_dirs.py"]
