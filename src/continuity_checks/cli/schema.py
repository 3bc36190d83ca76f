"""``continuity schema list|show|export``: the shipped JSON Schemas, for editors and other tools."""

from __future__ import annotations

from pathlib import Path

import click

from continuity_checks.cli.common import fail
from continuity_checks.core import schemas


@click.group()
def schema() -> None:
    """List, show or export the shipped JSON Schemas (draft 2020-12)."""


@schema.command("list")
def list_schemas() -> None:
    """Print each schema's name, $id and title."""
    for name in schemas.names():
        loaded = schemas.load(name)
        click.echo(f"{name}  {loaded['$id']}  {loaded.get('title', '')}")


def _known(name: str) -> str:
    if name not in schemas.names():
        raise fail(f"unknown schema {name!r}", "`continuity schema list` names the shipped schemas")
    return name


@schema.command()
@click.argument("name")
def show(name: str) -> None:
    """Print one schema exactly as shipped."""
    click.echo(schemas.text(_known(name)), nl=False)


@schema.command()
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
def export(directory: Path) -> None:
    """Write every schema as DIRECTORY/<name>.schema.json."""
    directory.mkdir(parents=True, exist_ok=True)
    for name in schemas.names():
        target = directory / f"{name}.schema.json"
        target.write_text(schemas.text(name), encoding="utf-8")
        click.echo(str(target))
