"""``continuity state hash|project``: DSH's ``state_hash`` and bounded projection of a state."""

from __future__ import annotations

from pathlib import Path

import click

from continuity_checks.cli.common import fail

FILE = click.Path(dir_okay=False, path_type=Path)


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise fail(f"cannot read {path}: {exc.strerror or exc}") from None


@click.group()
def state() -> None:
    """DSH working state: recompute state_hash, render the bounded projection."""


@state.command("hash")
@click.argument("file", type=FILE)
def hash_command(file: Path) -> None:
    """Print the state_hash of FILE's content, computed exactly as DSH computes it."""
    from continuity_checks.checks.working_state.helper import StateError, state_hash

    try:
        click.echo(state_hash(_read(file)))
    except StateError as exc:
        raise fail(f"{file}:{exc}") from None


@state.command("project")
@click.argument("file", type=FILE)
@click.option(
    "--soft-max-chars",
    type=click.IntRange(min=1),
    default=12000,
    show_default=True,
    help="The soft budget (RUNTIME_POLICY investigative_state.snapshot_max_chars).",
)
@click.option("--json", "body_only", is_flag=True, help="Print only the projection JSON.")
def project_command(file: Path, soft_max_chars: int, body_only: bool) -> None:
    """Print the bounded projection DSH injects for the state in FILE (a WORKING_STATE.json,
    a projection, or a captured injection), exactly as DSH renders it."""
    from continuity_checks.checks.working_state.helper import StateError, project

    try:
        text = project(_read(file), soft_max_chars, body_only=body_only)
    except StateError as exc:
        raise fail(f"{file}:{exc}") from None
    click.echo(text.encode("utf-8"))
