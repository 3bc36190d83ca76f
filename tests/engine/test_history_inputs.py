"""What a family's history checks are handed: a small frozen options object (``HistoryOptions``,
declared by the history module) that the family builds once from its configuration, never the
family itself. A history module imports no family module, not even for type checking."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from tests.conftest import REPO

CHECKS = REPO / "src" / "continuity_checks" / "checks"
#: the history modules, and the module of ownership by identity that the deltas history drives
HISTORY = sorted(
    [*(p.relative_to(CHECKS).as_posix() for p in CHECKS.glob("*/history.py")), "deltas/owners.py"]
)
#: the history modules that read options: each declares them in one frozen ``HistoryOptions``
OPTIONS = ("deltas", "provenance", "working_state")


def family_references(path: Path) -> list[str]:
    """Each import of a family module (``continuity_checks.checks.<name>.family``) and each
    use of a family class's name (``...Family``) in ``path``, type-checking blocks and
    annotations included."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module:
            modules = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            found += [
                m
                for m in modules
                if m.startswith("continuity_checks.checks.") and m.endswith(".family")
            ]
        elif isinstance(node, ast.Import):
            found += [
                a.name for a in node.names if a.name.endswith(".family") and ".checks." in a.name
            ]
        elif isinstance(node, ast.Name) and node.id.endswith("Family"):
            found.append(node.id)
    return found


def test_the_history_modules_are_found() -> None:
    assert {"deltas/history.py", "provenance/history.py", "working_state/history.py",
            "captures/history.py", "deltas/owners.py"} <= set(HISTORY)  # fmt: skip


@pytest.mark.parametrize("module", HISTORY)
def test_a_history_module_knows_no_family(module: str) -> None:
    assert family_references(CHECKS / module) == []


def test_the_scan_sees_a_family_in_a_type_checking_block(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from continuity_checks.checks.deltas.family import DeltasFamily\n"
        "import continuity_checks.checks.provenance.family\n"
        "def check(family: DeltasFamily) -> None: ...\n",
        encoding="utf-8",
    )
    assert sorted(family_references(sample)) == [
        "DeltasFamily",
        "continuity_checks.checks.deltas.family",
        "continuity_checks.checks.provenance.family",
    ]


@pytest.mark.parametrize("package", OPTIONS)
def test_the_options_are_one_frozen_value(package: str) -> None:
    options = importlib.import_module(f"continuity_checks.checks.{package}.history").HistoryOptions
    fields = options._fields
    made = options(*range(len(fields)))
    for name in fields:
        with pytest.raises(AttributeError):
            setattr(made, name, None)
    assert made == options(*range(len(fields)))
