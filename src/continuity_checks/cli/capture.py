"""``continuity capture``: write manifests, verify capture directories, read captures by JSON
Pointer with paging, and diff/apply cycle deltas (see docs/formats.md, captures).

Every command prints one JSON document on stdout and exits 0 on success, 1 on a refusal
(``ok: false`` with a stable ``error_code``), 2 on a usage error. The work is done by
:mod:`continuity_checks.checks.captures.helper`, imported only when a command runs.
"""

from __future__ import annotations

from typing import Any

import click


def _emit(ctx: click.Context, result: tuple[int, Any]) -> None:
    from continuity_checks.checks.captures.helper import output

    code, payload = result
    if isinstance(payload, bytes):
        click.echo(payload, nl=False)
    else:
        click.echo(output(payload).encode("utf-8"), nl=False)
    ctx.exit(code)


def _settings(ctx: click.Context, mode: str) -> Any:
    """The [captures] options of the current directory's configuration (a bad one: exit 1)."""
    from continuity_checks.checks.captures import helper

    found = helper.configured(mode)
    if isinstance(found, tuple):
        _emit(ctx, found)
    return found


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def capture() -> None:
    """LoopX context captures: manifests, verified reads, cycle deltas."""


@capture.command("manifest")
@click.argument("directory", type=click.Path(file_okay=False))
@click.option(
    "--capture",
    "name",
    default=None,
    help="The capture's file name in DIRECTORY "
    "(default: capture.json; projection.json in a decision-<id>/ directory).",
)
@click.option(
    "--digest",
    type=click.Choice(["raw", "canonical"]),
    default="raw",
    show_default=True,
    help="Hash the capture's bytes, or its canonical JSON.",
)
@click.pass_context
def manifest(ctx: click.Context, directory: str, name: str | None, digest: str) -> None:
    """Write DIRECTORY/manifest.json for the capture in it (never over a different pin)."""
    from continuity_checks.checks.captures import helper

    _emit(ctx, helper.manifest(directory, name, digest))


@capture.command("verify")
@click.argument("directory", type=click.Path(file_okay=False, exists=True))
@click.pass_context
def verify(ctx: click.Context, directory: str) -> None:
    """Run every captures check on the files under DIRECTORY."""
    from continuity_checks.checks.captures import helper

    _emit(ctx, helper.verify(directory))


def _read_options(f: Any) -> Any:
    options = [
        click.option("--capture-file", default=None, metavar="F", help="The capture to read."),
        click.option("--capture-sha256", default=None, metavar="SHA",
                     help="Its SHA-256 (bare or sha256:), checked before anything is read."),
        click.option("--select", "select", multiple=True, metavar="PTR",
                     help="An RFC 6901 pointer (repeatable; results keep this order)."),
        click.option("--reference-file", default=None, metavar="R",
                     help="Read what a *.reader.json reference pins."),
        click.option("--cursor", type=click.IntRange(min=0), default=None,
                     help="Byte offset of the page to read (from next_command)."),
        click.option("--selection-sha256", default=None, metavar="S",
                     help="The selection digest a continuation must still match."),
        click.option("--reference-out", default=None, metavar="FILE",
                     help="Also write a *.reader.json reference for this read (never over one)."),
    ]  # fmt: skip
    for option in reversed(options):
        f = option(f)
    return f


@capture.command("read")
@_read_options
@click.option(
    "--list", "as_list", is_flag=True, help="List {pointer, type, size, members} instead."
)
@click.option(
    "--list-depth",
    type=click.IntRange(min=0),
    default=1,
    show_default=True,
    help="With --list: levels below each selected node "
    "(0: the node itself; see [captures] list-depth-origin).",
)
@click.pass_context
def read(ctx: click.Context, /, as_list: bool, list_depth: int, **kwargs: Any) -> None:
    """Read selected values of a capture, verified by digest, paged to 16,000 bytes."""
    from continuity_checks.checks.captures import helper

    settings = _settings(ctx, helper.READ_MODE)
    depth = list_depth if as_list else None
    _emit(ctx, helper.read(list_depth=depth, settings=settings, **_args(kwargs)))


@capture.command("list")
@_read_options
@click.option(
    "--list-depth",
    type=click.IntRange(min=0),
    default=1,
    show_default=True,
    help="Levels below each selected node (0: the node itself; see [captures] list-depth-origin).",
)
@click.pass_context
def list_(ctx: click.Context, /, list_depth: int, **kwargs: Any) -> None:
    """List the nodes under selected pointers (same as read --list)."""
    from continuity_checks.checks.captures import helper

    settings = _settings(ctx, helper.READ_MODE)
    _emit(ctx, helper.read(list_depth=list_depth, settings=settings, **_args(kwargs)))


def _args(kwargs: dict[str, Any]) -> dict[str, Any]:
    kwargs["select"] = list(kwargs["select"])
    return kwargs


@capture.command("diff")
@click.argument("base", type=click.Path(dir_okay=False))
@click.argument("current", type=click.Path(dir_okay=False))
@click.option("-o", "--output", "out", default=None, metavar="OUT", help="Write the delta here.")
@click.pass_context
def diff(ctx: click.Context, base: str, current: str, out: str | None) -> None:
    """Write the cycle delta that restores CURRENT from BASE (stdout without -o)."""
    from continuity_checks.checks.captures import helper

    _emit(ctx, helper.diff(base, current, out, _settings(ctx, "capture-diff")))


@capture.command("apply")
@click.argument("base", type=click.Path(dir_okay=False))
@click.argument("delta", type=click.Path(dir_okay=False))
@click.option(
    "-o",
    "--output",
    "out",
    default=None,
    metavar="OUT",
    help="Write the restored document here (canonical JSON; stdout without -o).",
)
@click.pass_context
def apply(ctx: click.Context, base: str, delta: str, out: str | None) -> None:
    """Restore the current document from BASE and a cycle DELTA; refuse on any digest mismatch."""
    from continuity_checks.checks.captures import helper

    _emit(ctx, helper.apply(base, delta, out, _settings(ctx, "capture-apply")))
