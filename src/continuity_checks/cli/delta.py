"""``continuity delta``: a drop-in for the DeltaLayer prototype CLI (see docs/delta-helper.md).

Same commands, options, JSON output and error texts as ``prototype/deltalayer.py``: a domain
error or an OSError prints one line ``deltalayer: <message>`` on stderr, nothing on stdout, and
exits 2. The work is done by :mod:`continuity_checks.checks.deltas.store`, imported only when a
command runs.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from continuity_checks.checks.deltas.store import DeltaStore

PROG = "deltalayer"
LIMIT_HELP = "Number of items (1 to 1000)."
REF_HELP = "The delta: its _path, a file name in .deltalayer/changes/, or an absolute path."


def _not_an_option(ctx: click.Context, param: click.Parameter, value: object) -> object:
    """Refuse a value that is one of the command's option names: its own value was forgotten.

    Other values that begin with ``-`` are kept (``--change -x``, ``--change "-5% latency"``),
    which the prototype's argparse refused (docs/delta-helper.md).
    """
    names = set(ctx.help_option_names)
    for other in ctx.command.params:
        names.update(other.opts, other.secondary_opts)
    given = value if isinstance(value, tuple) else (value,)
    for item in given:
        if isinstance(item, str) and item in names:
            raise click.BadParameter(
                f"{item!r} is an option name, not a value: give {param.opts[0]} a value first",
                ctx=ctx,
                param=param,
            )
    return value


def _emit(text: str, *, err: bool = False) -> None:
    # UTF-8 whatever the console says; a lone surrogate (from an undecodable file name or a
    # "\ud800" escape in a file) becomes "\udXXX", which inside a JSON string is that same escape
    click.echo(text.encode("utf-8", "backslashreplace"), nl=False, err=err)


def _one_line(exc: BaseException) -> str:
    message = str(exc) or type(exc).__name__
    return message.replace("\r", "\\r").replace("\n", "\\n")


def _run(ctx: click.Context, operation: Callable[[DeltaStore], object]) -> None:
    from continuity_checks.checks.deltas.store import DeltaError, DeltaStore

    root: str = ctx.obj
    try:
        result = operation(DeltaStore(root))
    except (DeltaError, OSError) as exc:
        _emit(f"{PROG}: {_one_line(exc)}\n", err=True)
        ctx.exit(2)
    if isinstance(result, str):
        _emit(result + "\n")
    else:
        _emit(json.dumps(result, indent=2, ensure_ascii=False) + "\n")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--root",
    default=".",
    show_default=True,
    metavar="DIR",
    help="Project root holding .deltalayer/, PROJECT.md and AGENTS.md.",
)
@click.pass_context
def delta(ctx: click.Context, root: str) -> None:
    """Write and read DeltaLayer Conversation Deltas (a drop-in for the prototype CLI).

    --root must come before the command. Errors print "deltalayer: <message>" and exit 2.
    """
    ctx.obj = root


@delta.command("init")
@click.pass_context
def init_command(ctx: click.Context) -> None:
    """Create .deltalayer/, PROJECT.md and the AGENTS.md section where missing."""
    _run(ctx, lambda store: "\n".join(store.init()) or "already initialized")


@delta.command()
@click.option(
    "--source",
    required=True,
    callback=_not_an_option,
    help="Who writes the delta (e.g. codex, human).",
)
@click.option(
    "--conversation-id",
    default=None,
    callback=_not_an_option,
    help="Optional conversation id to store.",
)
@click.option(
    "--started-at",
    default=None,
    callback=_not_an_option,
    help="ISO 8601 start time (default: now).",
)
@click.option(
    "--change",
    "changes",
    multiple=True,
    callback=_not_an_option,
    help="A durable change (repeatable).",
)
@click.pass_context
def start(
    ctx: click.Context,
    source: str,
    conversation_id: str | None,
    started_at: str | None,
    changes: tuple[str, ...],
) -> None:
    """Start a new Conversation Delta and print it (remember its _path)."""
    _run(
        ctx,
        lambda store: store.start(
            source, changes, started_at=started_at, conversation_id=conversation_id
        ),
    )


@delta.command()
@click.option("--conversation", "ref", required=True, callback=_not_an_option, help=REF_HELP)
@click.option(
    "--updated-at", default=None, callback=_not_an_option, help="ISO 8601 time (default: now)."
)
@click.option(
    "--change",
    "changes",
    multiple=True,
    callback=_not_an_option,
    help="A change; the list replaces the old one.",
)
@click.pass_context
def update(ctx: click.Context, ref: str, updated_at: str | None, changes: tuple[str, ...]) -> None:
    """Replace the changes of your own, non-frozen delta (no --change clears them)."""
    _run(ctx, lambda store: store.update(ref, changes, updated_at=updated_at))


@delta.command()
@click.option("--conversation", "ref", required=True, callback=_not_an_option, help=REF_HELP)
@click.pass_context
def show(ctx: click.Context, ref: str) -> None:
    """Print one delta, frozen or not (show and current are the same command)."""
    _run(ctx, lambda store: store.show(ref))


delta.add_command(show, "current")


@delta.command()
@click.option("--conversation", "ref", required=True, callback=_not_an_option, help=REF_HELP)
@click.pass_context
def freeze(ctx: click.Context, ref: str) -> None:
    """Archive X.json as X.frozen.json (optional in v0.2.1; never overwrites)."""
    _run(ctx, lambda store: store.freeze(ref))


@delta.command()
@click.option("--limit", type=int, default=5, show_default=True, help=LIMIT_HELP)
@click.pass_context
def recent(ctx: click.Context, limit: int) -> None:
    """Newest deltas first, then legacy history, with next_before for paging."""
    _run(ctx, lambda store: store.recent(limit))


@delta.command()
@click.option(
    "--before",
    required=True,
    callback=_not_an_option,
    help="A cursor: next_before or an item's _cursor.",
)
@click.option("--limit", type=int, default=5, show_default=True, help=LIMIT_HELP)
@click.pass_context
def older(ctx: click.Context, before: str, limit: int) -> None:
    """The items after a cursor."""
    _run(ctx, lambda store: store.older(before, limit))


@delta.command("rebuild-context")
@click.option("--limit", type=int, default=5, show_default=True, help=LIMIT_HELP)
@click.pass_context
def rebuild_context(ctx: click.Context, limit: int) -> None:
    """PROJECT.md plus the recent history, sorted into buckets (writes nothing)."""
    _run(ctx, lambda store: store.rebuild_context(limit))
