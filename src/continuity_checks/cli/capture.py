"""``continuity capture``: write manifests, verify capture directories, read captures by JSON
Pointer with paging, and diff/apply cycle deltas (see docs/formats.md, captures).

Every command prints one JSON document on stdout and exits 0 on success, 1 on a refusal
(``ok: false`` with a stable ``error_code``), 2 on a usage error or a file it may not read or
write (outside the repository, through a symlinked directory, not a regular file, past the size
limit). The work is done by :mod:`continuity_checks.tools.captures`.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from continuity_checks.checks.captures import layout
from continuity_checks.cli.args import (
    at_least,
    directory,
    existing_directory,
    fail,
    file,
    group_usage,
    parse_group,
    parser,
    write_bytes,
)
from continuity_checks.core.confined_files import Refused
from continuity_checks.tools.captures import checked, cycle, manifest, read
from continuity_checks.tools.captures.results import output

LIST_DEPTH_HELP = (
    "Levels below each selected node (0: the node itself; see [captures] list-depth-origin; "
    "default: %(default)s)."
)


def main(argv: Sequence[str]) -> int:
    group = parser("capture", "LoopX context captures: manifests, verified reads, cycle deltas.")

    manifest_ = group.add_command(
        "manifest",
        "Write DIRECTORY/manifest.json for the capture in it (never over a different pin).",
    )
    manifest_.add_argument("directory", metavar="DIRECTORY", type=directory)
    manifest_.add_argument(
        "--capture",
        dest="name",
        help="The capture's file name in DIRECTORY "
        "(default: capture.json; projection.json in a decision-<id>/ directory).",
    )
    manifest_.add_argument(
        "--digest",
        choices=("raw", "canonical"),
        help="Hash the capture's bytes, or its canonical JSON (default: [captures] "
        "capture-digest of the configuration, raw without one; another value is refused).",
    )

    verify = group.add_command("verify", "Run every captures check on the files under DIRECTORY.")
    verify.add_argument("directory", metavar="DIRECTORY", type=existing_directory)

    read_ = group.add_command(
        "read",
        "Read selected values of a capture, verified by digest, paged to 16,000 bytes.",
    )
    _add_read_options(read_)
    read_.add_argument(
        "--list",
        dest="as_list",
        action="store_true",
        help="List {pointer, type, size, members} instead.",
    )
    read_.add_argument(
        "--list-depth",
        type=at_least(0),
        default=1,
        metavar="N",
        help="With --list: levels below each selected node "
        "(0: the node itself; see [captures] list-depth-origin; default: %(default)s).",
    )

    list_ = group.add_command(
        "list", "List the nodes under selected pointers (same as read --list)."
    )
    _add_read_options(list_)
    list_.add_argument(
        "--list-depth", type=at_least(0), default=1, metavar="N", help=LIST_DEPTH_HELP
    )

    diff = group.add_command(
        "diff",
        "Write the cycle delta that restores CURRENT from BASE (stdout without -o).",
    )
    diff.add_argument("base", metavar="BASE", type=file)
    diff.add_argument("current", metavar="CURRENT", type=file)
    diff.add_argument("-o", "--output", dest="out", metavar="OUT", help="Write the delta here.")

    apply = group.add_command(
        "apply",
        "Restore the current document from BASE and a cycle DELTA; refuse on any digest mismatch.",
    )
    apply.add_argument("base", metavar="BASE", type=file)
    apply.add_argument("delta", metavar="DELTA", type=file)
    apply.add_argument(
        "-o",
        "--output",
        dest="out",
        metavar="OUT",
        help="Write the restored document here (canonical JSON; stdout without -o).",
    )

    args = parse_group(group, argv)
    if args.command is None:
        return group_usage(group)
    try:
        return _emit(_run(args))
    except Refused as exc:  # a path outside the root, a FIFO, a device, a file past the limit
        raise fail(str(exc)) from None


def _add_read_options(command: argparse.ArgumentParser) -> None:
    add = command.add_argument
    add("--capture-file", metavar="F", help="The capture to read.")
    add(
        "--capture-sha256",
        metavar="SHA",
        help="Its SHA-256 (bare or sha256:), checked before anything is read.",
    )
    add(
        "--select",
        action="append",
        default=[],
        metavar="PTR",
        help="An RFC 6901 pointer (repeatable; results keep this order).",
    )
    add("--reference-file", metavar="R", help="Read what a *.reader.json reference pins.")
    add(
        "--cursor",
        type=at_least(0),
        metavar="N",
        help="Byte offset of the page to read (from next_command).",
    )
    add(
        "--selection-sha256",
        metavar="S",
        help="The selection digest a continuation must still match.",
    )
    add("--reference-out", metavar="FILE",
        help="Write a *.reader.json reference of this read (never over another).")  # fmt: skip


def _run(args: argparse.Namespace) -> tuple[int, Any]:
    """The work of the subcommand ``args`` names: (exit code, what to print)."""
    if args.command == "verify":
        return checked.verify(args.directory)
    # manifest follows the [captures] options of the repository that holds its directory; read,
    # list, diff and apply those of the repository that holds the current directory (as check
    # does, from any directory of it); a bad one is their refusal (exit 1)
    modes = {"read": read.READ_MODE, "list": read.READ_MODE}
    modes.update(manifest="capture-manifest", diff="capture-diff", apply="capture-apply")
    where = args.directory if args.command == "manifest" else "."
    settings = checked.configured(modes[args.command], where)
    if not isinstance(settings, layout.Settings):  # a bad configuration: the refusal
        return settings
    if args.command == "manifest":
        return manifest.manifest(args.directory, args.name, args.digest, settings)
    if args.command == "diff":
        return cycle.diff(args.base, args.current, args.out, settings)
    if args.command == "apply":
        return cycle.apply(args.base, args.delta, args.out, settings)
    as_list = args.command == "list" or args.as_list
    return read.read(
        capture_file=args.capture_file,
        capture_sha256=args.capture_sha256,
        select=list(args.select),
        list_depth=args.list_depth if as_list else None,
        cursor=args.cursor,
        selection_sha256=args.selection_sha256,
        reference_file=args.reference_file,
        reference_out=args.reference_out,
        settings=settings,
    )


def _emit(result: tuple[int, Any]) -> int:
    code, payload = result
    write_bytes(payload if isinstance(payload, bytes) else output(payload).encode("utf-8"))
    return code
