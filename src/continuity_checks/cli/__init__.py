"""The ``continuity`` command line: the table of commands, and the process around them. A command's
module is imported only when it runs."""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import NoReturn

from continuity_checks import __version__, checks
from continuity_checks.core.family import Command

#: The program's own commands; each family's helper commands come from its declaration
#: (:func:`commands`). A command's module is imported only when it runs.
CORE_COMMANDS = (
    Command(
        "check",
        "continuity_checks.cli.check:main",
        "Check continuity files (file mode; what pre-commit runs).",
    ),
    Command(
        "verify",
        "continuity_checks.cli.verify:main",
        "Check the commits of a range (history mode; what CI and pre-push run).",
    ),
    Command("rules", "continuity_checks.cli.rules:main", "List every rule."),
    Command("explain", "continuity_checks.cli.rules:explain", "Explain one rule."),
    Command(
        "schema",
        "continuity_checks.cli.schema:main",
        "List, show or export the shipped JSON Schemas.",
    ),
    Command(
        "baseline",
        "continuity_checks.cli.baseline:main",
        "Record the findings a repository already has, so that only new ones fail.",
    ),
)


def commands() -> dict[str, Command]:
    """Every command by name: the core ones, then each family's helper commands (registry
    order). Reads only the families' declarations, none of their modules."""
    table: dict[str, Command] = {}
    for command in (*CORE_COMMANDS, *(c for d in checks.declarations() for c in d.commands)):
        if command.name in table:
            raise RuntimeError(f"two commands are named {command.name!r}")
        table[command.name] = command
    return table


DESCRIPTION = """\
Keep the continuity files AI agents leave in a repository valid, owned and true.

Exit codes: 0 no error, 1 findings, 2 usage, configuration or git-context error.

commands (continuity COMMAND --help for each):
"""


def _parser(table: dict[str, Command]) -> argparse.ArgumentParser:
    width = max(map(len, table)) + 2
    listing = "".join(f"  {name:<{width}}{table[name].help}\n" for name in sorted(table))
    parser = argparse.ArgumentParser(
        prog="continuity",
        description=DESCRIPTION + listing,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    parser.add_argument("--version", action="version", version=f"continuity, version {__version__}")
    parser.add_argument("command", metavar="COMMAND", choices=sorted(table))
    parser.add_argument(
        "arguments", metavar="ARGS", nargs=argparse.REMAINDER, help="the command's own arguments"
    )
    return parser


def dispatch(argv: Sequence[str], *, settle: bool = False) -> int:
    """Run the command ``argv`` names with the rest of ``argv``, untouched (a ``--`` in it is
    the command's); its exit code. ``settle``: see :func:`_start_up`."""
    table = commands()
    if argv and argv[0] in table:
        name, rest = argv[0], list(argv[1:])
    else:  # --help, --version, nothing or a mistake: the parser answers (and exits)
        parser = _parser(table)
        if not argv:
            parser.print_help(sys.stderr)  # as click did: nothing was done (exit 2)
            return 2
        for word in argv:  # an option before the command is named, as click named it
            if word in table or not word.startswith("-"):
                break
            if word.split("=", 1)[0] not in ("-h", "--help", "--version", "--"):
                parser.error(f"unrecognized arguments: {word}")
        given = parser.parse_args(argv)
        name, rest = given.command, given.arguments
    module, _, function = table[name].target.partition(":")
    with _start_up(settle):
        command: Callable[[list[str]], int] = getattr(importlib.import_module(module), function)
    return command(rest)


@contextlib.contextmanager
def _start_up(settle: bool) -> Iterator[None]:
    """The import of a command's modules. With ``settle`` (the process entry point, whose
    start-up objects live until it exits): no collection while they are made, and frozen once
    made, so that neither the run's collections nor the last one at exit traverse them again.
    The collector is enabled again as it was; the freeze lasts as long as the process."""
    if not settle:
        yield
        return
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def run() -> NoReturn:
    """The process entry point (the ``continuity`` script, ``python -m continuity_checks``).

    The report is flushed here, so that a stdout that cannot take it (a full disk, a closed
    pipe) is one line on stderr and exit 2, not an error at interpreter shutdown."""
    code = main(settle=True)
    try:
        sys.stdout.flush()
    except OSError as exc:
        _quiet_stdout()
        if not isinstance(exc, BrokenPipeError):  # a reader that stopped (| head) wants no more
            _say(f"cannot write the report: {exc.strerror or exc}")
        code = max(code, 2) if not isinstance(exc, BrokenPipeError) else code
    sys.exit(code)


def main(argv: Sequence[str] | None = None, *, settle: bool = False) -> int:
    """Entry point: returns the exit code instead of raising SystemExit. Never a traceback for
    the process's own surroundings: a working directory that was deleted, an output that cannot
    be written."""
    try:
        os.getcwd()
    except OSError:
        _say("the current directory no longer exists", "cd to the repository and run again")
        return 2
    try:
        return dispatch(sys.argv[1:] if argv is None else argv, settle=settle)
    except SystemExit as exc:  # argparse's --help and usage errors, and fail()
        code = exc.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        print(code, file=sys.stderr)
        return 2
    except BrokenPipeError:
        _quiet_stdout()  # the reader went away (| head): nothing more to tell it
        return 1
    except OSError as exc:
        _quiet_stdout()
        where = f": {exc.filename}" if exc.filename else ""
        _say(f"cannot write the report: {exc.strerror or exc}{where}")
        return 2


def _say(message: str, hint: str | None = None) -> None:
    print(f"continuity: {message}", file=sys.stderr)
    if hint:
        print(f"hint: {hint}", file=sys.stderr)


def _quiet_stdout() -> None:
    """Point stdout at nothing, so that the interpreter's last flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
