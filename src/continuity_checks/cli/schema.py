"""``continuity schema list|show|export``: the shipped JSON Schemas, for editors and other tools."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from continuity_checks.cli.args import (
    directory_path,
    fail,
    group_usage,
    parse_group,
    parser,
)
from continuity_checks.core import schemas


def main(argv: Sequence[str]) -> int:
    group = parser("schema", "List, show or export the shipped JSON Schemas (draft 2020-12).")
    group.add_command("list", "Print each schema's name, $id and title.")
    show = group.add_command("show", "Print one schema exactly as shipped.")
    show.add_argument("name", metavar="NAME")
    export = group.add_command("export", "Write every schema as DIRECTORY/<name>.schema.json.")
    export.add_argument("directory", metavar="DIRECTORY", type=directory_path)
    args = parse_group(group, argv)
    if args.command == "list":
        for name in schemas.names():
            loaded = schemas.load(name)
            print(f"{name}  {loaded['$id']}  {loaded.get('title', '')}")
        return 0
    if args.command == "show":
        sys.stdout.write(schemas.text(_known(args.name)))
        return 0
    if args.command == "export":
        return _export(args.directory)
    return group_usage(group)


def _known(name: str) -> str:
    if name not in schemas.names():
        raise fail(f"unknown schema {name!r}", "`continuity schema list` names the shipped schemas")
    return name


def _export(directory: Path) -> int:
    directory.mkdir(parents=True, exist_ok=True)
    for name in schemas.names():
        target = directory / f"{name}.schema.json"
        target.write_text(schemas.text(name), encoding="utf-8")
        print(target)
    return 0
