"""``continuity capture read`` and ``capture list``: LoopX's ``quota context-read`` (spec §3),
the values at JSON Pointers of a capture whose digest is pinned, or a listing under them, in
pages; a ``*.reader.json`` reference of a read written on request."""

from __future__ import annotations

import mmap
import os
import shlex
from collections.abc import Sequence
from typing import Any

from continuity_checks.checks.captures import layout, model, scan
from continuity_checks.checks.captures.scan import ScanError
from continuity_checks.core import hashing, pretty_json, schemas
from continuity_checks.core import pointer as jp
from continuity_checks.core.confined_files import ConfinedFiles
from continuity_checks.tools.captures.checked import unchecked
from continuity_checks.tools.captures.results import (
    Result,
    confined,
    load_json,
    output,
    refuse,
    refuse_output,
)

PAGE_BYTES = 16_000  # at most this much content per page (SEED 001)
STDOUT_BYTES = 20_000  # at most this much output per call (SEED 001)
READ_MODE = "context-read"


# plain classes, not dataclasses: making a dataclass runs generated code at import, about 1 % of
# a whole capture command each


class _Request:
    """What a read asks for, every part of it checked before the capture is opened."""

    __slots__ = ("capture_file", "list_depth", "pinned", "select")

    def __init__(
        self, capture_file: str, pinned: str, select: list[str], list_depth: int | None
    ) -> None:
        self.capture_file = capture_file
        self.pinned = pinned  # the capture's digest, bare hex
        self.select = select
        self.list_depth = list_depth


class _Selection:
    """What a read returns: the selection digest and the results (values, or listing rows)."""

    __slots__ = ("digest", "items")

    def __init__(self, digest: str, items: list[dict[str, Any]]) -> None:
        self.digest = digest
        self.items = items


def _fail(code: str, message: str, **extra: Any) -> Result:
    return refuse(READ_MODE, code, message, **extra)


def read(
    *,
    capture_file: str | None = None,
    capture_sha256: str | None = None,
    select: Sequence[str] = (),
    list_depth: int | None = None,
    cursor: int | None = None,
    selection_sha256: str | None = None,
    reference_file: str | None = None,
    reference_out: str | None = None,
    settings: layout.Settings = layout.Settings(),  # noqa: B008 (frozen: shared safely)
) -> Result:
    """LoopX's ``quota context-read`` (spec §3): the digest first, then every pointer (one miss
    rejects the batch), then the results, or a page of their compact canonical JSON with the
    command that reads the next one. ``list_depth`` (not None) lists instead of reading;
    ``settings`` gives the listing's shape and whether a duplicate pointer is refused."""
    select = list(select)
    refuse_output(reference_out, settings)
    request = _request(capture_file, capture_sha256, select, list_depth, reference_file, settings)
    if not isinstance(request, _Request):
        return request
    files = confined(request.capture_file, settings)
    stale = _check_pin(files, request, settings)
    if stale is not None:
        return stale
    selection = _selected(files, request, selection_sha256, settings)
    if not isinstance(selection, _Selection):
        return selection
    head = {
        "ok": True,
        "mode": READ_MODE,
        "capture_sha256": request.pinned,
        "selection_sha256": selection.digest,
    }
    if reference_out is not None:
        written = _write_reference(
            confined(reference_out, settings),
            reference_out,
            (request.capture_file, request.pinned),
            request.select,
            request.list_depth,
            selection.digest,
        )
        if written is not None:
            return _fail("REFERENCE_REFUSED", written)
        head["reference_file"] = reference_out
    content = model.canonical_bytes(selection.items)
    if cursor is None:
        whole = {**head, "results": selection.items}
        if len(content) <= PAGE_BYTES and len(output(whole).encode("utf-8")) <= STDOUT_BYTES:
            return 0, whole
        cursor = 0
    return _page(head, content, cursor, request.capture_file, request.select, request.list_depth)


def _request(
    capture_file: str | None,
    capture_sha256: str | None,
    select: list[str],
    list_depth: int | None,
    reference_file: str | None,
    settings: layout.Settings,
) -> _Request | Result:
    """The read asked for (a reader reference's capture, digest, pointers and depth where the
    command line gives none), or the refusal of the first thing wrong with it."""
    if reference_file is not None:
        try:
            reference = load_json(reference_file, settings)
        except (OSError, ValueError) as exc:
            return _fail("REFERENCE_UNREADABLE", f"expected a reader reference: {exc}")
        if not schemas.validator("loopx-capture-reader").is_valid(reference):
            return _fail("REFERENCE_INVALID", f"{reference_file} is not a reader reference")
        refused = model.inside_name(reference["capture_file"])
        if refused is not None:
            return _fail("PATH_OUTSIDE", f"capture_file: {refused}")
        capture_file = os.path.join(os.path.dirname(reference_file), reference["capture_file"])
        capture_sha256 = reference["capture_sha256"]
        select = select or list(reference["select"])
        if list_depth is None and "list_depth" in reference:
            list_depth = reference["list_depth"]
    if capture_file is None or capture_sha256 is None:
        return _fail("USAGE", "expected --capture-file and --capture-sha256, or --reference-file")
    pinned = hashing.parse_digest(capture_sha256)
    if pinned is None:
        return _fail("DIGEST_INVALID", f"expected a SHA-256 digest, found {capture_sha256!r}")
    if not select:
        return _fail("USAGE", "expected at least one --select pointer")
    invalid = []
    for pointer in select:
        try:
            jp.tokens(pointer)
        except jp.PointerError:
            invalid.append(pointer)
    if invalid:
        return _fail("POINTER_INVALID", "expected RFC 6901 pointers", pointers=invalid)
    duplicates = sorted({p for i, p in enumerate(select) if p in select[:i]})
    if duplicates and settings.duplicate_pointers == "reject":
        return _fail(
            "POINTER_DUPLICATE",
            'expected each pointer once (duplicate-pointers = "reject")',
            pointers=duplicates,
        )
    if list_depth == 0 and settings.list_depth_origin == "children":
        return _fail(
            "USAGE",
            'expected --list-depth 1 or more: with list-depth-origin = "children" depth 0 '
            "lists nothing",
        )
    return _Request(capture_file, pinned, select, list_depth)


def _check_pin(files: ConfinedFiles, request: _Request, settings: layout.Settings) -> Result | None:
    """The refusal when the capture cannot be read or does not hash to the pinned digest."""
    capture_file, pinned = request.capture_file, request.pinned
    try:
        actual = files.sha256(capture_file).hex
        if settings.capture_digest == "canonical":  # what check expects a pin to be (CX111)
            actual = model.canonical_sha256(load_json(capture_file, settings))
    except (OSError, ValueError) as exc:
        return _fail("CAPTURE_UNREADABLE", f"cannot read {capture_file}: {exc}")
    if actual != pinned:
        basis = "'s canonical JSON" if settings.capture_digest == "canonical" else ""
        return _fail(
            "DIGEST_MISMATCH",
            f"expected {capture_file}{basis} to hash to {pinned}, found {actual}: nothing is read",
        )
    return None


def _selected(
    files: ConfinedFiles,
    request: _Request,
    selection_sha256: str | None,
    settings: layout.Settings,
) -> _Selection | Result:
    """The values (or listing rows) at the request's pointers and their selection digest; a
    refusal when a pointer does not resolve or a continuation's digest is another."""
    capture_file, select, list_depth = request.capture_file, request.select, request.list_depth

    def mismatch(selection: str) -> Result | None:
        if selection_sha256 is None or hashing.same_digest(selection_sha256, selection):
            return None
        return _fail(
            "SELECTION_MISMATCH",
            f"expected the selection digest {selection} for this capture and selection, found "
            f"{selection_sha256}: start the read again",
        )

    # the configured hypothesis, as check recomputes it (CX113): H1 over what is asked, known
    # before anything is read; H2 over what is returned ("shape" is not recomputed: H1)
    selection = model.selection_h1(request.pinned, select, list_depth)
    if settings.selection_digest != "H2" and (stale := mismatch(selection)) is not None:
        return stale
    try:
        values = select_values(files, capture_file, select)
    except (ScanError, OSError, RecursionError) as exc:
        return _fail("CAPTURE_UNREADABLE", f"cannot read {capture_file}: {exc}")
    missing = [p for p, v in zip(select, values, strict=True) if v is jp.MISSING]
    if missing:
        return _fail(
            "POINTER_MISSING",
            "expected every pointer to resolve; the whole batch is rejected",
            pointers=missing,
        )
    if settings.selection_digest == "H2":
        returned = [{"pointer": p, "value": v} for p, v in zip(select, values, strict=True)]
        selection = model.selection_h2(returned)
        if (stale := mismatch(selection)) is not None:
            return stale
    items: list[dict[str, Any]] = []
    if list_depth is None:
        items = [{"pointer": p, "value": v} for p, v in zip(select, values, strict=True)]
    else:
        for pointer, value in zip(select, values, strict=True):
            items.extend(
                model.listing(
                    value,
                    pointer,
                    list_depth,
                    size=settings.list_size == "canonical",
                    origin=settings.list_depth_origin,
                )
            )
    return _Selection(selection, items)


def _page(
    head: dict[str, Any],
    content: bytes,
    cursor: int,
    capture_file: str,
    select: list[str],
    list_depth: int | None,
) -> Result:
    total = len(content)
    if cursor < 0 or cursor > total or (cursor < total and content[cursor] & 0xC0 == 0x80):
        return refuse(
            READ_MODE,
            "CURSOR_INVALID",
            f"expected a cursor at a character boundary in 0..{total}, found {cursor}",
        )
    end = min(cursor + PAGE_BYTES, total)
    while True:
        while end < total and content[end] & 0xC0 == 0x80:  # never split a UTF-8 character
            end -= 1
        complete = end == total
        payload = {
            **head,
            "page": {
                "cursor": cursor,
                "bytes": end - cursor,
                "total_bytes": total,
                "content": content[cursor:end].decode("utf-8"),
                "complete": complete,
            },
            "next_command": None
            if complete
            else next_command(capture_file, head, select, list_depth, end),
        }
        size = len(output(payload).encode("utf-8"))
        if size <= STDOUT_BYTES:
            return 0, payload
        # escapes made the page too long for stdout: shorten it by the excess, and retry
        end = max(cursor + 1, end - (size - STDOUT_BYTES))


def next_command(
    capture_file: str, head: dict[str, Any], select: list[str], list_depth: int | None, cursor: int
) -> str:
    words = ["continuity", "capture", "read", "--capture-file", capture_file,
             "--capture-sha256", head["capture_sha256"]]  # fmt: skip
    for pointer in select:
        words += ["--select", pointer]
    if list_depth is not None:
        words += ["--list", "--list-depth", str(list_depth)]
    words += ["--cursor", str(cursor), "--selection-sha256", head["selection_sha256"]]
    return shlex.join(words)


def _write_reference(
    files: ConfinedFiles,
    out: str,
    capture: tuple[str, str],
    select: list[str],
    list_depth: int | None,
    selection: str,
) -> str | None:
    """Write a reader reference (never over an existing file) to ``capture`` (its path and
    digest); the reason it was not written."""
    capture_file, capture_sha256 = capture
    relative = os.path.relpath(os.path.abspath(capture_file), os.path.dirname(os.path.abspath(out)))
    relative = relative.replace(os.sep, "/")
    refused = model.inside_name(relative)
    if refused is not None:
        return f"expected the reference beside its capture (capture_file: {refused})"
    if not out.endswith(".reader.json"):
        return "expected a reference file name ending in .reader.json"
    unread = unchecked(out)
    if unread is not None:
        return f"{out}: {unread}"
    words = ["continuity", "capture", "read", "--capture-file", relative,
             "--capture-sha256", capture_sha256]  # fmt: skip
    for pointer in select:
        words += ["--select", pointer]
    record: dict[str, Any] = {
        "schema_version": model.SCHEMA_VERSION,
        "capture_file": relative,
        "capture_sha256": capture_sha256,
        "select": select,
        "selection_sha256": selection,
    }
    if list_depth is not None:
        record["list_depth"] = list_depth
        words += ["--list", "--list-depth", str(list_depth)]
    record["command"] = shlex.join(words)
    text = pretty_json.dumps(record).encode("utf-8")
    try:
        files.create(out, text)
    except FileExistsError:
        try:
            if files.read(out) == text:
                return None  # the same read again: the reference it pins is already there
        except OSError:
            pass
        return f"{out} exists: a reader reference is never rewritten"
    except OSError as exc:
        return f"cannot write {out}: {exc}"
    return None


# --- selecting from a mapped capture ------------------------------------------------------

_DROP_EVERY = 2 << 20  # bytes scanned between handing pages back to the kernel


def select_values(files: ConfinedFiles, path: str, pointers: list[str]) -> list[Any]:
    """The values at ``pointers`` in the JSON file at ``path``, in order (:data:`MISSING` for
    an absent one), found by :func:`scan.select` over the mapped file. The pages the scanner
    has passed are handed back to the kernel as it goes, so memory stays near the size of the
    selection, not of the capture. Raises ``ScanError``, ``PointerError`` or ``OSError``."""
    for pointer in pointers:
        jp.tokens(pointer)  # every pointer's syntax before any work
    with files.opened(path) as (fd, size):
        if size == 0:
            raise ScanError("expected a JSON value, found an empty file")
        with mmap.mmap(fd, 0, access=mmap.ACCESS_READ) as data:
            released = [0]

            def release(upto: int) -> None:
                end = (upto // mmap.PAGESIZE) * mmap.PAGESIZE
                if end - released[0] >= _DROP_EVERY and hasattr(mmap, "MADV_DONTNEED"):
                    data.madvise(mmap.MADV_DONTNEED, released[0], end - released[0])
                    released[0] = end

            def restart() -> None:
                released[0] = 0  # the next pointer starts from the root again

            return scan.select(data, pointers, release, restart)
