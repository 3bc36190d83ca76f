"""``continuity delta``: a drop-in for the DeltaLayer prototype CLI (see docs/delta-helper.md).

Same commands, options, JSON output and error texts as ``prototype/deltalayer.py``: a domain
error or an OSError prints one line ``deltalayer: <message>`` on stderr, nothing on stdout, and
exits 2. The work is done by :mod:`continuity_checks.tools.deltas`.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence

from continuity_checks.cli.args import (
    DASHES,
    group_usage,
    parser,
    with_dashes,
    write_bytes,
)
from continuity_checks.core import pretty_json
from continuity_checks.core.confined_files import Refused
from continuity_checks.tools.deltas import DeltaError, DeltaStore

PROG = "deltalayer"
LIMIT_HELP = "Number of items (1 to 1000; default: %(default)s)."
REF_HELP = "The delta: its _path, a file name in .deltalayer/changes/, or an absolute path."

DESCRIPTION = """\
Write and read DeltaLayer Conversation Deltas (a drop-in for the prototype CLI).

--root must come before the command. Errors print "deltalayer: <message>" and exit 2.
"""

#: The options of each command whose value is free text: it may begin with "-" (see
#: :func:`_text_values`)
TEXT_OPTIONS = {
    "start": ("--source", "--conversation-id", "--started-at", "--change"),
    "update": ("--conversation", "--updated-at", "--change"),
    "show": ("--conversation",),
    "current": ("--conversation",),
    "freeze": ("--conversation",),
    "older": ("--before",),
}
#: Their other options
OTHER_OPTIONS = {"recent": ("--limit",), "older": ("--limit",), "rebuild-context": ("--limit",)}


def main(argv: Sequence[str]) -> int:
    group = parser("delta", DESCRIPTION)
    group.add_argument(
        "--root",
        default=".",
        metavar="DIR",
        help="Project root holding .deltalayer/, PROJECT.md and AGENTS.md (default: %(default)s).",
    )
    group.add_command(
        "init", "Create .deltalayer/, PROJECT.md and the AGENTS.md section where missing."
    )
    start = group.add_command(
        "start", "Start a new Conversation Delta and print it (remember its _path)."
    )
    start.add_argument("--source", required=True, help="Who writes the delta (e.g. codex, human).")
    start.add_argument("--conversation-id", help="Optional conversation id to store.")
    start.add_argument("--started-at", help="ISO 8601 start time (default: now).")
    start.add_argument(
        "--change", dest="changes", metavar="CHANGE", action="append", default=[],
        help="A durable change (repeatable).",
    )  # fmt: skip
    update = group.add_command(
        "update",
        "Replace the changes of your own, non-frozen delta (no --change clears them).",
    )
    update.add_argument("--conversation", dest="ref", required=True, help=REF_HELP)
    update.add_argument("--updated-at", help="ISO 8601 time (default: now).")
    update.add_argument(
        "--change", dest="changes", metavar="CHANGE", action="append", default=[],
        help="A change; the list replaces the old one.",
    )  # fmt: skip
    show = group.add_command(
        "show",
        "Print one delta, frozen or not (show and current are the same command).",
        aliases=("current",),
    )
    freeze = group.add_command(
        "freeze",
        "Archive X.json as X.frozen.json (optional in v0.2.1; never overwrites).",
    )
    for each in (show, freeze):
        each.add_argument("--conversation", dest="ref", required=True, help=REF_HELP)
    recent = group.add_command(
        "recent", "Newest deltas first, then legacy history, with next_before for paging."
    )
    older = group.add_command("older", "The items after a cursor.")
    older.add_argument(
        "--before", required=True, help="A cursor: next_before or an item's _cursor."
    )
    rebuild = group.add_command(
        "rebuild-context",
        "PROJECT.md plus the recent history, sorted into buckets (writes nothing).",
    )
    for each in (recent, older, rebuild):
        each.add_argument("--limit", type=int, default=5, help=LIMIT_HELP)
    args = with_dashes(group.parse_args(_text_values(argv, group)))
    operations: dict[str, Callable[[DeltaStore], object]] = {
        "init": lambda store: "\n".join(store.init()) or "already initialized",
        "start": lambda store: store.start(
            args.source,
            args.changes,
            started_at=args.started_at,
            conversation_id=args.conversation_id,
        ),
        "update": lambda store: store.update(args.ref, args.changes, updated_at=args.updated_at),
        "show": lambda store: store.show(args.ref),
        "current": lambda store: store.show(args.ref),
        "freeze": lambda store: store.freeze(args.ref),
        "recent": lambda store: store.recent(args.limit),
        "older": lambda store: store.older(args.before, args.limit),
        "rebuild-context": lambda store: store.rebuild_context(args.limit),
    }
    if args.command is None:
        return group_usage(group)
    return _run(args.root, operations[args.command])


def _text_values(argv: Sequence[str], group: argparse.ArgumentParser) -> list[str]:
    """``argv`` with each free-text option and its value joined (``--change=-x``), so that
    argparse keeps a value that begins with ``-`` (``--change -x``, ``--source -bot``,
    ``--root -dir``, ``--change --``), which it would take for an option; a ``--`` before the
    command's name passed over, one that ends the line dropped, and ``-h`` read first, as click
    did.

    A value that is exactly one of the command's option names (``--source --change``, or
    ``--source=--change``) means a value was forgotten: a usage error, as argparse would have
    it, before anything is written (docs/delta-helper.md).
    """
    out: list[str] = []
    command: str | None = None
    i = 0
    while i < len(argv):
        word = argv[i]
        i += 1
        if command is None:
            if word == "--root" and i < len(argv):  # the group's one option with a value
                out.append(f"--root={_value(argv[i])}")
                i += 1
            elif word == "--" and i < len(argv) and not argv[i].startswith("-"):
                continue
            else:
                out.append(word)
                if not word.startswith("-"):
                    command = word
            continue
        name, equals, given = word.partition("=")
        if name in TEXT_OPTIONS.get(command, ()) and (equals or i < len(argv)):
            if not equals:
                given = argv[i]
                i += 1
            names = {
                "-h",
                "--help",
                *TEXT_OPTIONS.get(command, ()),
                *OTHER_OPTIONS.get(command, ()),
            }
            if given in names:
                group.exit(
                    2,
                    f"{group.prog} {command}: error: argument {name}: {given!r} is an option name, "
                    f"not a value: give {name} a value first\n",
                )
            out.append(f"{name}={_value(given)}")
        elif word in OTHER_OPTIONS.get(command, ()) and i < len(argv):
            out.append(f"{word}={argv[i]}")  # its value, even -h (a bad --limit, as click said)
            i += 1
        elif word == "--" and i == len(argv):
            continue
        elif word in ("-h", "--help"):  # first, as click did: before any value is checked
            out.insert(out.index(command) + 1, word)
        else:
            out.append(word)
    return out


def _value(word: str) -> str:
    """An option's value as argparse is to read it (``--``, which it would drop, in disguise)."""
    return DASHES if word == "--" else word


def _emit(text: str, *, err: bool = False) -> None:
    # UTF-8 whatever the console says; a lone surrogate (from an undecodable file name or a
    # "\ud800" escape in a file) becomes "\udXXX", which inside a JSON string is that same escape
    write_bytes(text.encode("utf-8", "backslashreplace"), err=err)


def _one_line(exc: BaseException) -> str:
    message = str(exc) or type(exc).__name__
    return message.replace("\r", "\\r").replace("\n", "\\n")


def _run(root: str, operation: Callable[[DeltaStore], object]) -> int:
    try:
        result = operation(DeltaStore(root))
    except (DeltaError, OSError, Refused) as exc:
        _emit(f"{PROG}: {_one_line(exc)}\n", err=True)
        return 2
    if isinstance(result, str):
        _emit(result + "\n")
    else:
        _emit(pretty_json.dumps(result))
    return 0
