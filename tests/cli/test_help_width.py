"""The width of every command's help: ``cli.args.terminal_columns`` gives the columns that
``shutil.get_terminal_size()`` gives, whatever ``COLUMNS`` and standard output are, and a
command's help is the one argparse's own formatter writes."""

from __future__ import annotations

import argparse
import io
import os
import pty
import shutil
import sys

import pytest

from continuity_checks.cli.args import HelpFormatter, parser, terminal_columns

COLUMNS = (None, "", "0", "-3", "x", " 90", "100", "7")


class NoFileno(io.StringIO):
    def fileno(self) -> int:
        raise io.UnsupportedOperation("fileno")


def _outputs() -> list[object]:
    return [None, io.StringIO(), NoFileno(), sys.__stdout__]


@pytest.mark.parametrize("columns", COLUMNS)
@pytest.mark.parametrize("lines", (None, "0", "30"))
def test_the_columns_are_shutils(
    columns: str | None, lines: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in (("COLUMNS", columns), ("LINES", lines)):
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    for stdout in _outputs():
        monkeypatch.setattr(sys, "__stdout__", stdout)
        assert terminal_columns() == shutil.get_terminal_size().columns, (columns, stdout)


@pytest.mark.parametrize("columns", (None, "0", "120"))
def test_the_columns_of_a_terminal_are_shutils(
    columns: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    main, other = pty.openpty()
    try:
        with open(other, "w", closefd=False) as terminal:
            monkeypatch.setattr(sys, "__stdout__", terminal)
            assert terminal_columns() == shutil.get_terminal_size().columns
    finally:
        os.close(main)
        os.close(other)


@pytest.mark.parametrize("columns", ("30", "80", "200"))
def test_a_commands_help_is_argparses(columns: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", columns)
    ours = parser("check", "A description\n  kept as written.\n")
    theirs = argparse.ArgumentParser(
        prog="continuity check",
        description="A description\n  kept as written.\n",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    assert ours.formatter_class is HelpFormatter
    for made in (ours, theirs):
        made.add_argument("paths", nargs="*", metavar="PATHS")
        made.add_argument("--jobs", metavar="N", help="Processes that check " * 6)
    assert ours.format_help() == theirs.format_help()
