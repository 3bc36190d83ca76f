"""``continuity provenance``: helper commands for provenance listings (see README)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from continuity_checks.checks.provenance.family import ProvenanceFamily
from continuity_checks.cli.args import (
    file,
    group_usage,
    parse_group,
    parser,
)
from continuity_checks.cli.common import add_where, load_config
from continuity_checks.core.atomic import LinkRefused
from continuity_checks.core.config import Config, ConfigError, project_root
from continuity_checks.core.confined_files import ConfinedFiles, Refused
from continuity_checks.engine import relative
from continuity_checks.tools.provenance.add import AddError, add

ADD_DESCRIPTION = """\
List FILES in a SHA256SUMS file: one GNU text line (`<sha256>  <path>`) per new file.

Appends atomically under a lock. A file listed already with the same digest is left as it
is; one listed with another digest is refused (exit 1) and nothing is written.
"""


def main(argv: Sequence[str]) -> int:
    group = parser("provenance", "Write provenance listings (SHA256SUMS-style files).")
    add = group.add_command("add", ADD_DESCRIPTION)
    add.add_argument("files", nargs="+", metavar="FILES")
    add.add_argument(
        "--sums",
        dest="sums_file",
        type=file,
        metavar="FILE",
        help="The sums file to append to (default: SHA256SUMS at the top of the repository).",
    )
    add_where(add)
    args = parse_group(group, argv)
    if args.command is None:
        return group_usage(group)
    return add_files(args.files, args.sums_file, args.root or Path("."), args.config_path)


def add_files(files: list[str], sums_file: str | None, root: Path, config_path: Path | None) -> int:
    """``continuity provenance add``."""
    top = project_root(root)  # as check does: lines and findings name paths alike
    config = load_config(top, config_path)
    try:
        family = ProvenanceFamily(config)
    except ConfigError as exc:
        print(f"continuity: configuration error in {exc}", file=sys.stderr)
        return 2
    given = [relative(top, name) for name in files]
    outside = [name for name, rel in zip(files, given, strict=True) if rel is None]
    target = relative(top, sums_file) if sums_file else "SHA256SUMS"
    if outside or target is None:
        names = ", ".join(outside or [str(sums_file)])
        print(f"continuity: {names}: expected a path inside the repository {top}", file=sys.stderr)
        return 1
    unread = _unread(family, config, target)
    if unread is not None:
        print(f"continuity: {target}: {unread}; nothing was written", file=sys.stderr)
        return 1
    confined = ConfinedFiles(top, config.max_file_bytes)
    relative_to = family.relative_to
    try:
        result = add(confined, [g for g in given if g is not None], target, relative_to=relative_to)
    except (Refused, LinkRefused) as exc:
        print(f"continuity: {exc}", file=sys.stderr)
        return 2
    except (AddError, OSError) as exc:
        print(f"continuity: {exc}", file=sys.stderr)
        return 1
    for line in result.lines:
        print(f"added to {target}: {line}")
    for path in result.unchanged:
        print(f"already listed with the same digest: {path}")
    if result.ignored:
        print(f"added {result.ignored} to .gitignore (the lock file; git never commits it)")
    return 0


def _unread(family: ProvenanceFamily, config: Config, target: str) -> str | None:
    """Why ``continuity check`` would never read ``target`` as a sums file (None: it would).
    Lines no check reads protect nothing, and GNU lines make a provenance manifest invalid."""
    if config.families is not None and "provenance" not in config.families:
        return "the provenance family is not checked (families in the configuration)"
    kind = family.claims(target)
    if kind == "manifest":
        return "expected a sums file, found the name of a provenance manifest (JSON)"
    if kind is None:
        return (
            "not a sums file continuity check reads: give it a name that [provenance] "
            "sums-files matches (default SHA256SUMS, SHA256SUMS.txt, *.sha256), or add it there"
        )
    if family.exclude.match(target):
        return "excluded by the configuration (exclude): continuity check would never read it"
    return None
