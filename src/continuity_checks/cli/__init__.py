"""The ``continuity`` command line. Subcommands are imported only when they run."""

from __future__ import annotations

import importlib
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
    """The process entry point (the ``continuity`` script, ``python -m continuity_checks``)."""
    sys.exit(main())


def main(argv: list[str] | None = None) -> int:
    """Entry point: returns the exit code instead of raising SystemExit."""
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
    return 0
