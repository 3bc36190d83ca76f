"""The command table: the program's own commands plus the helper commands each family declares,
built without importing any command's or family's module."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys

import pytest

from continuity_checks import checks
from continuity_checks.cli import CORE_COMMANDS, commands
from continuity_checks.core.family import Command, Declaration
from tests.conftest import REPO

#: each helper command, and the family that declares it
HELPERS = {"delta": "deltas", "capture": "captures", "state": "working-state",
           "provenance": "provenance"}  # fmt: skip


def test_the_table_is_the_core_commands_and_the_declared_helpers() -> None:
    table = commands()
    assert sorted(table) == sorted(
        ["check", "verify", "rules", "explain", "schema", "baseline", *HELPERS]
    )
    assert [c.name for c in CORE_COMMANDS] == list(table)[: len(CORE_COMMANDS)]
    declared = {c.name: d.name for d in checks.declarations() for c in d.commands}
    assert declared == HELPERS
    for command in table.values():
        module, _, function = command.target.partition(":")
        assert callable(getattr(importlib.import_module(module), function)), command
        assert command.help.endswith(".") and "\n" not in command.help


def test_building_the_table_imports_no_command_and_no_family_module() -> None:
    code = (
        "import sys\n"
        "from continuity_checks.cli import commands\n"
        "assert len(commands()) == 10\n"
        "print('\\n'.join(m for m in sys.modules if m.startswith('continuity_checks.')))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    loaded = set(done.stdout.split())
    packages = {f"continuity_checks.checks.{p.rpartition('.')[2]}" for p in checks.PACKAGES}
    assert packages <= loaded  # the declarations were read, in this interpreter
    family_modules = {m for m in loaded if m.startswith("continuity_checks.checks.")} - packages
    assert family_modules == set()
    assert {m for m in loaded if m.startswith("continuity_checks.cli.")} == set()


def notes(*helpers: Command) -> Declaration:
    """The declaration of a family with these helper commands."""
    return Declaration(
        name="notes",
        family="notes.family:NotesFamily",
        rules="notes.rules",
        prefix="NT",
        summary="notes",
        files="notes/",
        hook_id="check-notes",
        commands=helpers,
    )


def test_two_commands_of_one_name_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    clash = notes(Command("check", "notes.cli:main", "Check notes."))
    monkeypatch.setattr(checks, "declarations", lambda: (clash,))
    with pytest.raises(RuntimeError, match="two commands are named 'check'"):
        commands()


def test_a_helper_command_names_its_function_as_module_colon_function() -> None:
    for target in ("notes.cli", "notes.cli:", ":main", ""):
        with pytest.raises(ValueError, match="'module:function'"):
            notes(Command("notes", target, "Write notes."))
