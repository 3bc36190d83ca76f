"""The ``continuity`` command line. Subcommands are imported only when they run."""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any, NoReturn

import click

from continuity_checks import __version__

# command name -> "module:attribute"; each module imports what it needs when it runs
COMMANDS = {
    "check": "continuity_checks.cli.check:check",
    "verify": "continuity_checks.cli.verify:verify",
    "delta": "continuity_checks.cli.delta:delta",
    "capture": "continuity_checks.cli.capture:capture",
    "rules": "continuity_checks.cli.rules:rules",
    "explain": "continuity_checks.cli.rules:explain",
    "schema": "continuity_checks.cli.schema:schema",
    "state": "continuity_checks.cli.state:state",
    "provenance": "continuity_checks.cli.provenance:provenance",
    "baseline": "continuity_checks.cli.baseline:baseline",
}

HELP = {
    "check": "Check continuity files (file mode; what pre-commit runs).",
    "verify": "Check the commits of a range (history mode; what CI and pre-push run).",
    "capture": "LoopX captures: write manifests, verified paged reads, cycle deltas.",
    "delta": "Write DeltaLayer Conversation Deltas (a drop-in for the prototype CLI).",
    "rules": "List every rule.",
    "explain": "Explain one rule.",
    "schema": "List, show or export the shipped JSON Schemas.",
    "state": "DSH working state: recompute state_hash, render the bounded projection.",
    "provenance": "List files in a SHA256SUMS file (atomically, under a lock).",
    "baseline": "Record the findings a repository already has, so that only new ones fail.",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module, _, attribute = target.partition(":")
        command: click.Command = getattr(importlib.import_module(module), attribute)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, HELP[name]) for name in sorted(COMMANDS)])


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="continuity")
def cli() -> None:
    """Keep the continuity files AI agents leave in a repository valid, owned and true.

    Exit codes: 0 no error, 1 findings, 2 usage, configuration or git-context error.
    """


def run() -> NoReturn:
    """The process entry point (the ``continuity`` script, ``python -m continuity_checks``).

    The report is flushed here, so that a stdout that cannot take it (a full disk, a closed
    pipe) is one line on stderr and exit 2, not an error at interpreter shutdown."""
    code = main()
    try:
        sys.stdout.flush()
    except OSError as exc:
        _quiet_stdout()
        if not isinstance(exc, BrokenPipeError):  # a reader that stopped (| head) wants no more
            _say(f"cannot write the report: {exc.strerror or exc}")
        code = max(code, 2) if not isinstance(exc, BrokenPipeError) else code
    sys.exit(code)


def main(argv: list[str] | None = None) -> int:
    """Entry point: returns the exit code instead of raising SystemExit. Never a traceback for
    the process's own surroundings: a working directory that was deleted, an output that cannot
    be written."""
    try:
        os.getcwd()
    except OSError:
        _say("the current directory no longer exists", "cd to the repository and run again")
        return 2
    try:
        cli.main(args=argv, prog_name="continuity", standalone_mode=True)
    except SystemExit as exc:
        code: Any = exc.code
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
    return 0


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
