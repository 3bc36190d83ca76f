"""``*.reader.json``: a reader reference against the capture it pins, its selection digest
and the command line it records."""

from __future__ import annotations

import posixpath
import shlex
from typing import Any, NamedTuple

from continuity_checks.checks.captures import model, scan
from continuity_checks.checks.captures import rules as cx
from continuity_checks.checks.captures.checker import Checker
from continuity_checks.checks.captures.layout import Settings
from continuity_checks.core import pointer as jp
from continuity_checks.core.display import quote
from continuity_checks.core.findings import Finding, Severity
from continuity_checks.core.hashing import parse_digest
from continuity_checks.core.snapshot import Snapshot, Unreadable


class Reader(NamedTuple):
    """What check_tree compares across readers."""

    path: str
    capture: str
    capture_sha256: str
    select: tuple[str, ...]
    list_depth: int | None
    selection_sha256: str
    #: line and column of selection_sha256 in the reader, for a finding check_tree makes
    position: tuple[int | None, int | None] = (None, None)


def check_reader(
    path: str, data: bytes, snapshot: Snapshot, settings: Settings
) -> tuple[list[Finding], Reader | None]:
    c = Checker(path, snapshot, settings)
    if not c.load(data):
        return c.findings, None
    assert c.doc is not None
    value = c.doc.value
    valid = c.schema("reader")
    if not isinstance(value, dict):
        return c.findings, None
    select: list[Any] = value["select"] if isinstance(value.get("select"), list) else []
    if select:
        seen: set[object] = set()
        for index, pointer in enumerate(select):
            if isinstance(pointer, str) and pointer in seen:
                c.at(
                    cx.DUPLICATE_POINTER,
                    f"/select/{index}",
                    f"expected each pointer once, found {quote(pointer)} again",
                )
                if settings.duplicate_pointers == "reject":  # an error, not the warning
                    c.findings[-1] = c.findings[-1].with_severity(Severity.ERROR)
            seen.add(pointer if isinstance(pointer, str) else None)
    capture = (
        c.named(value.get("capture_file"), "/capture_file") if "capture_file" in value else None
    )
    if capture is None or not valid:
        return c.findings, None
    pinned = parse_digest(value["capture_sha256"])
    assert pinned is not None
    found = c.capture_digest(capture, "/capture_file")
    if found is None:
        return c.findings, None
    if found[0] != pinned:
        c.at(
            cx.READER_PIN,
            "/capture_sha256",
            f"expected the digest of the current {capture}, {found[0]}; found "
            f"{quote(value['capture_sha256'])}",
        )
        return c.findings, None
    selected = _select(c, capture, select)
    depth = value.get("list_depth")
    stated = parse_digest(value["selection_sha256"])
    assert stated is not None
    resolved_all = selected is not None and len(selected) == len(select)
    if settings.selection_digest == "H1":
        expected: str | None = model.selection_h1(pinned, select, depth)
    elif settings.selection_digest == "H2" and selected is not None and resolved_all:
        expected = model.selection_h2(selected)
    else:
        expected = None
    if expected is not None and expected != stated:
        c.at(
            cx.SELECTION_DIGEST,
            "/selection_sha256",
            f"expected {expected} ({settings.selection_digest} over this selection), found "
            f"{quote(value['selection_sha256'])}",
        )
    if "command" in value:
        _check_command(c, value)
    assert c.doc is not None
    return c.findings, Reader(
        path, capture, pinned, tuple(select), depth, stated, c.doc.position("/selection_sha256")
    )


def _select(c: Checker, capture: str, select: list[Any]) -> list[dict[str, Any]] | None:
    """``[{pointer, value}]`` of the pointers that resolve in the capture (each one that does
    not is a finding), found by scanning its bytes: only the selected values are parsed, so a
    reference to a large capture costs a scan, not a parse. None when the capture cannot be
    read or followed."""
    data = c.snapshot.read(capture)
    if isinstance(data, Unreadable):
        c.unreadable(data, "/capture_file")
        return None
    valid: list[tuple[int, str]] = []
    for index, pointer in enumerate(select):
        try:
            jp.tokens(pointer)
            valid.append((index, pointer))
        except jp.PointerError as exc:
            c.at(cx.READER_POINTER, f"/select/{index}", f"expected an RFC 6901 pointer: {exc}")
    try:
        values = scan.select(data, [p for _, p in valid])
    except scan.ScanError as exc:
        c.at(
            cx.READER_POINTER, "/select", f"expected {capture} to be JSON along the pointers: {exc}"
        )
        return None
    selected = []
    for (index, pointer), found in zip(valid, values, strict=True):
        if found is jp.MISSING:
            c.at(
                cx.READER_POINTER,
                f"/select/{index}",
                f"expected {quote(pointer)} to resolve in {capture}, found nothing there "
                "(the whole reference fails)",
            )
        else:
            selected.append({"pointer": pointer, "value": found})
    return selected


def _check_command(c: Checker, value: dict[str, Any]) -> None:
    try:
        words = shlex.split(value["command"])
    except ValueError as exc:
        c.at(cx.READER_COMMAND, "/command", f"expected a shell command line: {exc}")
        return
    options: dict[str, list[str]] = {}
    flags: set[str] = set()  # every option given, a bare --list at the end of the line too
    for index, word in enumerate(words):
        if not word.startswith("--"):
            continue
        flag, eq, inline = word.partition("=")
        flags.add(flag)
        if eq:  # --select=/a, as argparse reads it, wherever it stands
            options.setdefault(flag, []).append(inline)
        elif index + 1 < len(words):
            options.setdefault(flag, []).append(words[index + 1])
    problems: list[str] = []
    files = options.get("--capture-file", [])
    name = posixpath.normpath(value["capture_file"])
    given = posixpath.normpath(files[0]) if len(files) == 1 else None
    if given is None or not (given == name or given.endswith("/" + name)):
        problems.append(f"--capture-file naming {name}")
    digests = options.get("--capture-sha256", [])
    if len(digests) != 1 or parse_digest(digests[0]) != parse_digest(value["capture_sha256"]):
        problems.append("--capture-sha256 with the pinned digest")
    if options.get("--select", []) != list(value["select"]):
        problems.append("the same --select pointers in the same order")
    depth = options.get("--list-depth")
    if "list_depth" in value and depth != [str(value["list_depth"])]:
        problems.append(f"--list-depth {value['list_depth']}")
    elif "list_depth" not in value and flags & {"--list", "--list-depth"}:
        # a listing has another selection digest (H1 binds list_depth): not this reference's
        problems.append("no --list or --list-depth (the reference pins no listing)")
    selection = options.get("--selection-sha256")
    if selection is not None and (
        len(selection) != 1 or parse_digest(selection[0]) != parse_digest(value["selection_sha256"])
    ):
        problems.append("--selection-sha256 with the pinned selection digest")
    if problems:
        c.at(
            cx.READER_COMMAND,
            "/command",
            f"expected {'; '.join(problems)}; found {quote(value['command'])}",
        )
