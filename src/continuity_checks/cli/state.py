"""``continuity state hash|project``: DSH's ``state_hash`` and bounded projection of a state."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from continuity_checks.cli.args import (
    fail,
    file_path,
    group_usage,
    parse_group,
    parser,
    positive_number,
    write_bytes,
)
from continuity_checks.cli.common import load_config
from continuity_checks.core.confined_files import ConfinedFiles, Refused
from continuity_checks.tools.working_state import helper

PROJECT_DESCRIPTION = """\
Print the bounded projection DSH injects for the state in FILE (a WORKING_STATE.json, a
projection, or a captured injection), exactly as DSH renders it.
"""


def main(argv: Sequence[str]) -> int:
    group = parser(
        "state", "DSH working state: recompute state_hash, render the bounded projection."
    )
    hash_ = group.add_command(
        "hash",
        "Print the state_hash of FILE's content, computed exactly as DSH computes it.",
    )
    project = group.add_command("project", PROJECT_DESCRIPTION)
    for each in (hash_, project):
        each.add_argument("file", metavar="FILE", type=file_path)
    project.add_argument(
        "--soft-max-chars",
        type=positive_number,
        default=12000,
        metavar="N",
        help="The soft budget, a number above 0 (RUNTIME_POLICY "
        "investigative_state.snapshot_max_chars; default: %(default)s).",
    )
    project.add_argument(
        "--json", dest="body_only", action="store_true", help="Print only the projection JSON."
    )
    args = parse_group(group, argv)
    if args.command == "hash":
        return _hash(args.file)
    if args.command == "project":
        return _project(args.file, args.soft_max_chars, args.body_only)
    return group_usage(group)


def _read(path: Path) -> bytes:
    """The bytes of ``path``, read as every helper reads: inside the repository that holds it,
    a regular file, within its configuration's size limit; exit 2 otherwise."""
    top = ConfinedFiles.around(path).top
    files = ConfinedFiles(top, load_config(top, None).max_file_bytes)
    try:
        return files.read(path)
    except Refused as exc:
        raise fail(str(exc)) from None
    except OSError as exc:
        raise fail(f"cannot read {path}: {exc.strerror or exc}") from None


def _hash(file: Path) -> int:
    try:
        print(helper.state_hash(_read(file)))
    except helper.StateError as exc:
        raise fail(f"{file}:{exc}") from None
    return 0


def _project(file: Path, soft_max_chars: float, body_only: bool) -> int:
    try:
        text = helper.project(_read(file), soft_max_chars, body_only=body_only)
    except helper.StateError as exc:
        raise fail(f"{file}:{exc}") from None
    write_bytes(text.encode("utf-8") + b"\n")
    return 0
