"""``continuity provenance``: helper commands for provenance listings (see README)."""

from __future__ import annotations

from pathlib import Path

import click

from continuity_checks.cli.common import config_option, load_config, root_option


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def provenance() -> None:
    """Write provenance listings (SHA256SUMS-style files)."""


@provenance.command("add")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=str))
@click.option(
    "--sums",
    "sums_file",
    default=None,
    type=click.Path(dir_okay=False, path_type=str),
    help="The sums file to append to (default: SHA256SUMS at the top of the repository).",
)
@root_option
@config_option
def add_command(
    files: tuple[str, ...], sums_file: str | None, root: Path, config_path: Path | None
) -> None:
    """List FILES in a SHA256SUMS file: one GNU text line (`<sha256>  <path>`) per new file.

    Appends atomically under a lock. A file listed already with the same digest is left as it
    is; one listed with another digest is refused (exit 1) and nothing is written.
    """
    from continuity_checks.checks.provenance.add import AddError, add
    from continuity_checks.checks.provenance.family import ProvenanceFamily
    from continuity_checks.core.config import ConfigError, project_root
    from continuity_checks.core.snapshot import WorkTree
    from continuity_checks.engine import relative

    top = project_root(root)  # as check does: lines and findings name paths alike
    config = load_config(top, config_path)
    try:
        relative_to = ProvenanceFamily(config).relative_to
    except ConfigError as exc:
        click.echo(f"continuity: configuration error in {exc}", err=True)
        raise click.exceptions.Exit(2) from None
    given = [relative(top, name) for name in files]
    outside = [name for name, rel in zip(files, given, strict=True) if rel is None]
    target = relative(top, sums_file) if sums_file else "SHA256SUMS"
    if outside or target is None:
        names = ", ".join(outside or [str(sums_file)])
        click.echo(f"continuity: {names}: expected a path inside the repository {top}", err=True)
        raise click.exceptions.Exit(1)
    snapshot = WorkTree(top, config.max_file_bytes)
    try:
        result = add(snapshot, [g for g in given if g is not None], target, relative_to=relative_to)
    except (AddError, OSError) as exc:
        click.echo(f"continuity: {exc}", err=True)
        raise click.exceptions.Exit(1) from None
    for line in result.lines:
        click.echo(f"added to {target}: {line}")
    for path in result.unchanged:
        click.echo(f"already listed with the same digest: {path}")
