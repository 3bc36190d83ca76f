"""``continuity check``: file mode."""

from __future__ import annotations

from pathlib import Path

import click

from continuity_checks.cli.common import (
    config_option,
    emit,
    fail,
    family_option,
    format_option,
    load_config,
    only,
    root_option,
)
from continuity_checks.core.config import ConfigError


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@click.option(
    "--all", "all_files", is_flag=True, help="Check every continuity file under the root."
)
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    help="Processes for a large batch (default: one per CPU from 2,000 files on).",
)
@root_option
@config_option
@family_option
@format_option
def check(
    paths: tuple[str, ...],
    all_files: bool,
    jobs: int | None,
    root: Path,
    config_path: Path | None,
    families: tuple[str, ...],
    fmt: str,
) -> None:
    """Check continuity files: the PATHS given (what pre-commit passes), or --all.

    Files that no family claims are ignored.
    """
    from continuity_checks import engine

    if not paths and not all_files:
        raise fail("nothing to check", "give file paths, or --all to check every file under --root")
    config = load_config(root, config_path)
    try:
        report = engine.check(
            root, config, paths, all_files=all_files, only=only(families), jobs=jobs
        )
    except ConfigError as exc:
        raise fail(f"configuration error in {exc}") from None
    raise click.exceptions.Exit(emit(report, fmt))
