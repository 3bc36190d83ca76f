"""What the read commands of ``continuity delta`` read (specs/deltalayer.md §3-§4.2): one delta
(``show``, ``current``), a page of the merged history (``recent``, ``older``) and the context a
new conversation starts from (``rebuild-context``). Nothing here writes.

The merged history lists the Conversation Deltas newest first, then the legacy events of
``.deltalayer/changes.jsonl`` from the last line back (§3.1); a cursor names an item of it.
Every file is read through the store's
:class:`~continuity_checks.core.confined_files.ConfinedFiles`.
"""

from __future__ import annotations

import errno
import heapq
import json
import os
from collections import deque
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from continuity_checks.checks.deltas import naming, records, timestamps
from continuity_checks.checks.deltas.records import DeltaTimes, RecordError
from continuity_checks.checks.deltas.timestamps import Timestamp, TimestampError
from continuity_checks.core.confined_files import ConfinedFiles, Refused
from continuity_checks.core.strict_json import DEFAULT_MAX_FILE_BYTES

JSONObject = dict[str, Any]

DELTALAYER_DIR = ".deltalayer"
CHANGES_REL = ".deltalayer/changes"
LEGACY_REL = ".deltalayer/changes.jsonl"

DEFAULT_LIMIT = 5
MAX_LIMIT = 1000

MISSING_PROJECT = "(PROJECT.md is missing.)"
INSTRUCTION = (
    "If this context is insufficient, read older Conversation Deltas with next_before; "
    "continue into legacy history when needed."
)

# upstream's messages
BAD_LIMIT = "limit must be an integer between 1 and 1000"
OUTSIDE = "conversation path must be inside .deltalayer/changes"
MISSING = "conversation delta does not exist: {}"
UNKNOWN_CURSOR = "cursor does not identify a readable history item"
BAD_CURSOR_LINE = "cursor line must be an integer"
NONPOSITIVE_CURSOR_LINE = "cursor line must be positive"
BAD_LEGACY_CURSOR = "legacy cursor line must be an integer"
DATE_ONLY_CURSOR = "date-only values require a full cursor from recent/older"

#: Bytes of the legacy file read at a time.
LEGACY_BLOCK = 1 << 20

CONVERSATION_PREFIX = "conversation:"
LEGACY_PREFIX = "legacy:"
LINE_MARK = "#line="


class DeltaError(Exception):
    """A domain error; ``str()`` is the one-line message (``deltalayer: <message>`` in the CLI)."""


_DeltaKey = tuple[tuple[int, float], tuple[int, float], str]


class _Entry(NamedTuple):
    """One item of the merged history list."""

    item: JSONObject
    legacy_time: Timestamp | None = None  # set for legacy items only
    line: int = 0  # physical line of a legacy item

    @property
    def cursor(self) -> str:
        cursor: str = self.item["_cursor"]
        return cursor


class Resolved(NamedTuple):
    path: Path  # real path of the delta file
    rel: str  # path below .deltalayer/changes/, with "/"

    @property
    def name(self) -> str:
        return self.path.name


def _decode_json(data: bytes, *, text_mode: bool = False) -> object:
    """Strict UTF-8 then ``json.loads``; any failure is a DeltaError with the parser's message.

    ``text_mode`` reads the bytes as the prototype reads a delta file, as text with universal
    newlines: CRLF and a lone CR become LF. That changes no value (a raw CR or LF inside a JSON
    string is an error either way), only the line, column and char of an error message.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DeltaError(str(exc)) from None
    if text_mode and "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, int digit limit, nesting
        raise DeltaError(str(exc) or type(exc).__name__) from None


def _read_entry(files: ConfinedFiles, path: str) -> bytes:
    """The bytes of a ``*.json`` entry of changes/; an OSError with open()'s text when it is not
    a readable regular file (a directory is "Is a directory", a dangling link "No such file")."""
    if os.path.isdir(path):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
    if os.path.exists(path) and not os.path.isfile(path):
        raise DeltaError("not a regular file")  # a FIFO would block, a device never end
    try:
        return files.read(path)
    except Refused as exc:  # past the size limit
        raise DeltaError(exc.reason) from None


def check_limit(limit: object) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise DeltaError(BAD_LIMIT)
    return limit


def inside(path: Path, directory: Path) -> str | None:
    """``path`` relative to ``directory`` with ``/``, or None if it is not inside."""
    try:
        return path.relative_to(directory).as_posix()
    except ValueError:
        return None


class DeltaReader:
    """The DeltaLayer files of one project root, read."""

    def __init__(
        self, root: str | os.PathLike[str] = ".", *, limit: int = DEFAULT_MAX_FILE_BYTES
    ) -> None:
        self.root = Path(root).resolve()
        self.files = ConfinedFiles(self.root, limit)  # every read and write of the store
        self.base = self.root / DELTALAYER_DIR
        self.changes_dir = self.base / "changes"
        self.legacy_path = self.base / "changes.jsonl"
        self.project_path = self.root / "PROJECT.md"

    # ------------------------------------------------------------------ reading

    def show(self, ref: str) -> JSONObject:
        """One delta (frozen or not) with its read-time metadata; ``current`` is the same."""
        return self._item_of(self._resolve(ref))

    current = show

    def recent(self, limit: int = DEFAULT_LIMIT) -> JSONObject:
        """The first ``limit`` items of the merged history (§3.1): the same page as the whole
        list would give, with memory bounded by the page (and the warnings). Every delta is
        read for its sort key, but only the ``limit`` newest are kept; the legacy file is read
        in blocks, every line checked (each page carries all warnings, T20), and only the last
        lines the page still needs are kept."""
        limit = check_limit(limit)
        deltas, delta_warnings = self._newest_deltas(limit)
        legacy, legacy_warnings = self._read_legacy(keep=limit - len(deltas))
        return self._page(deltas + legacy[::-1], limit, delta_warnings + legacy_warnings)

    def older(self, before: str, limit: int = DEFAULT_LIMIT) -> JSONObject:
        """The ``limit`` items after cursor ``before`` (§3.2)."""
        limit = check_limit(limit)
        entries, warnings = self._history()
        return self._page(self._after(before, entries), limit, warnings)

    def rebuild_context(self, limit: int = DEFAULT_LIMIT) -> JSONObject:
        """``recent(limit)`` sorted into buckets, with PROJECT.md; never writes anything."""
        page = self.recent(limit)
        events: list[JSONObject] = page["events"]

        def conversation(item: JSONObject) -> bool:
            return bool(item["_kind"] == "conversation")

        return {
            "project": self._project_text(),
            "recent_deltas": [e for e in events if conversation(e) and e["changes"]],
            "legacy_fallback": [e for e in events if e["_kind"] == "legacy"],
            "recent_changes": [e for e in events if e["changes"]],
            "empty_conversations": [e for e in events if conversation(e) and not e["changes"]],
            "next_before": page["next_before"],
            "warnings": page["warnings"],
            "instruction": INSTRUCTION,
        }

    # ------------------------------------------------------------------ internals

    @staticmethod
    def _frozen_link(path: Path) -> Path | None:
        """``X.frozen.json`` if it is the same file as ``X.json`` (a freeze cut short)."""
        if not path.name.endswith(naming.SUFFIX) or naming.is_frozen(path.name):
            return None
        frozen = path.with_name(naming.frozen_name(path.name))
        try:
            return frozen if os.path.samefile(path, frozen) else None
        except OSError:
            return None

    @staticmethod
    def _validate(record: object) -> DeltaTimes:
        try:
            return records.validate_delta(record)
        except RecordError as exc:
            raise DeltaError(str(exc)) from None

    def _resolve(self, ref: str) -> Resolved:
        """REF (§4.2): absolute as is; relative from the root, else from changes/."""
        candidate = Path(ref)
        if not candidate.is_absolute():
            at_root = self.root / ref
            candidate = at_root if os.path.exists(at_root) else self.changes_dir / ref
        real = Path(os.path.realpath(candidate))
        rel = inside(real, Path(os.path.realpath(self.changes_dir)))
        if rel is None:
            raise DeltaError(OUTSIDE)
        if not real.is_file():
            raise DeltaError(MISSING.format(ref))
        return Resolved(real, rel)

    def _load(self, path: Path) -> tuple[JSONObject, DeltaTimes]:
        return self._parse(self.files.read(path))

    def _parse(self, data: bytes) -> tuple[JSONObject, DeltaTimes]:
        value = _decode_json(data, text_mode=True)
        times = self._validate(value)
        assert isinstance(value, dict)
        return value, times

    def _item_of(self, resolved: Resolved) -> JSONObject:
        record, _ = self._load(resolved.path)
        return self._delta_item(record, resolved.name, resolved.rel)

    @staticmethod
    def _delta_item(record: JSONObject, name: str, rel: str) -> JSONObject:
        item = dict(record)
        item["_kind"] = "conversation"
        item["_cursor"] = CONVERSATION_PREFIX + name
        item["_path"] = f"{CHANGES_REL}/{rel}"
        item["_frozen"] = naming.is_frozen(name)
        return item

    def _project_text(self) -> str:
        try:
            return self.files.read(self.project_path).decode("utf-8")
        except FileNotFoundError:
            return MISSING_PROJECT
        except UnicodeDecodeError as exc:
            raise DeltaError(f"PROJECT.md is not valid UTF-8: {exc}") from None

    def _history(self) -> tuple[list[_Entry], list[JSONObject]]:
        deltas, delta_warnings = self._read_deltas()
        legacy, legacy_warnings = self._read_legacy()
        return deltas + legacy[::-1], delta_warnings + legacy_warnings

    def _delta_files(self) -> Iterator[tuple[str, str, bool]]:
        """(name, path, is a symlink) of every ``*.json`` entry directly in changes/, by name.

        Whatever its type: a directory or a dangling symlink named ``*.json`` is listed too, and
        reading it gives the prototype's warning instead of a silent skip.
        """
        try:
            with os.scandir(self.changes_dir) as scan:
                found = {
                    entry.name: (entry.path, entry.is_symlink())
                    for entry in scan
                    if entry.name.endswith(naming.SUFFIX)
                }
        except FileNotFoundError:
            return
        for name in sorted(found):
            path, link = found[name]
            if (
                not naming.is_frozen(name)
                and naming.frozen_name(name) in found
                and self._frozen_link(Path(path)) is not None
            ):
                continue  # listed once, under its frozen name
            yield name, path, link

    def _newest_deltas(self, limit: int) -> tuple[list[_Entry], list[JSONObject]]:
        """The ``limit`` first deltas of the history and the warnings of all of them, as
        :meth:`_read_deltas` gives them, holding no more than ``limit`` records at a time: the
        directory is scanned as it comes (not listed whole), each delta read for its sort key
        and dropped unless it is among the newest so far (a heap of at most ``limit``). An
        ``X.json`` that is the same file as ``X.frozen.json`` (a freeze cut short) is listed
        once, under its frozen name: looked up only for a delta that would be kept or warned
        about, so that the scan needs no set of every name."""
        heap: list[tuple[_DeltaKey, _Entry]] = []  # the names make the keys unique
        warned: list[tuple[str, JSONObject]] = []
        changes_real: Path | None = None
        try:
            scan = os.scandir(self.changes_dir)
        except FileNotFoundError:
            return [], []
        with scan:
            for entry in scan:
                name = entry.name
                if not name.endswith(naming.SUFFIX):
                    continue
                path = entry.path
                try:
                    if entry.is_symlink():
                        changes_real = changes_real or Path(os.path.realpath(self.changes_dir))
                        if inside(Path(os.path.realpath(path)), changes_real) is None:
                            raise DeltaError(OUTSIDE)
                    record, times = self._parse(_read_entry(self.files, path))
                except (DeltaError, OSError) as exc:
                    if self._frozen_link(Path(path)) is None:
                        warning = {
                            "path": f"{CHANGES_REL}/{name}",
                            "error": str(exc),
                            "skipped": True,
                        }
                        warned.append((name, warning))
                    continue
                key = (times.updated.sort_key(), times.started.sort_key(), name)
                if len(heap) == limit and key <= heap[0][0]:
                    continue  # older than every delta kept: not on the page
                if self._frozen_link(Path(path)) is not None:
                    continue  # listed under its frozen name
                kept = (key, _Entry(self._delta_item(record, name, name)))
                if len(heap) < limit:
                    heapq.heappush(heap, kept)
                else:
                    heapq.heapreplace(heap, kept)
        heap.sort(key=lambda kept: kept[0], reverse=True)
        warned.sort(key=lambda pair: pair[0])
        return [entry for _, entry in heap], [warning for _, warning in warned]

    def _read_deltas(self) -> tuple[list[_Entry], list[JSONObject]]:
        keyed: list[tuple[_DeltaKey, _Entry]] = []
        warnings: list[JSONObject] = []
        changes_real: Path | None = None
        for name, path, link in self._delta_files():
            try:
                if link:
                    changes_real = changes_real or Path(os.path.realpath(self.changes_dir))
                    if inside(Path(os.path.realpath(path)), changes_real) is None:
                        raise DeltaError(OUTSIDE)
                data = _read_entry(self.files, path)
                record, times = self._parse(data)
            except (DeltaError, OSError) as exc:
                warnings.append(
                    {"path": f"{CHANGES_REL}/{name}", "error": str(exc), "skipped": True}
                )
                continue
            key = (times.updated.sort_key(), times.started.sort_key(), name)
            keyed.append((key, _Entry(self._delta_item(record, name, name))))
        keyed.sort(key=lambda pair: pair[0], reverse=True)
        return [entry for _, entry in keyed], warnings

    def _read_legacy(self, keep: int | None = None) -> tuple[list[_Entry], list[JSONObject]]:
        """Legacy events in file order; a bad line is a warning, blank lines only count. With
        ``keep``, only the last ``keep`` events are returned (and held): the file is read in
        blocks of :data:`LEGACY_BLOCK` bytes, not whole."""
        entries: deque[_Entry] | list[_Entry] = [] if keep is None else deque(maxlen=keep)
        warnings: list[JSONObject] = []
        number = 0
        try:
            with self.files.opened(self.legacy_path) as (fd, _):
                rest = b""
                while block := os.read(fd, LEGACY_BLOCK):
                    lines = (rest + block).split(b"\n")
                    rest = lines.pop()
                    for line in lines:
                        number += 1
                        self._legacy_line(line, number, entries, warnings)
                number += 1
                self._legacy_line(rest, number, entries, warnings)
        except FileNotFoundError:
            return [], []
        except (OSError, Refused) as exc:
            return [], [{"path": self.legacy_path.as_posix(), "error": str(exc), "skipped": True}]
        return list(entries), warnings

    @staticmethod
    def _legacy_line(
        line: bytes,
        number: int,
        entries: deque[_Entry] | list[_Entry],
        warnings: list[JSONObject],
    ) -> None:
        if not line.strip():
            # blank means ASCII whitespace only, as in the prototype: a line of U+3000 or
            # U+00A0 is not blank, and json.loads reports it
            return
        try:
            value = _decode_json(line)
            time = records.validate_legacy(value)
        except (DeltaError, RecordError) as exc:
            warnings.append({"line": number, "error": str(exc), "skipped": True})
            return
        if isinstance(entries, deque) and entries.maxlen == 0:
            return  # the page is full of deltas: only the warnings are wanted
        assert isinstance(value, dict)
        item = dict(value)
        item["_kind"] = "legacy"
        item["_cursor"] = f"{time.isoformat()}{LINE_MARK}{number}"
        item["_path"] = LEGACY_REL
        item["_line"] = number
        entries.append(_Entry(item, time, number))

    @staticmethod
    def _page(entries: Sequence[_Entry], limit: int, warnings: list[JSONObject]) -> JSONObject:
        events = [entry.item for entry in entries[:limit]]
        return {
            "events": events,
            "next_before": events[-1]["_cursor"] if events else None,
            "warnings": warnings,
        }

    @staticmethod
    def _after(before: str, entries: list[_Entry]) -> list[_Entry]:
        def following(cursor: str) -> list[_Entry]:
            for index, entry in enumerate(entries):
                if entry.cursor == cursor:
                    return entries[index + 1 :]
            raise DeltaError(UNKNOWN_CURSOR)

        if before.startswith(CONVERSATION_PREFIX):
            return following(before)
        if before.startswith(LEGACY_PREFIX):
            try:
                line = int(before[len(LEGACY_PREFIX) :])
            except ValueError:
                raise DeltaError(BAD_LEGACY_CURSOR) from None
            return [e for e in entries if e.legacy_time is not None and e.line < line]
        if LINE_MARK in before:
            time_part, _, line_part = before.partition(LINE_MARK)
            try:  # the line first, then the time, in the prototype's order
                line = int(line_part)
            except ValueError:
                raise DeltaError(BAD_CURSOR_LINE) from None
            if line < 1:
                raise DeltaError(NONPOSITIVE_CURSOR_LINE)
            try:
                time = timestamps.parse(time_part)
            except TimestampError as exc:
                raise DeltaError(str(exc)) from None
            return following(f"{time.isoformat()}{LINE_MARK}{line}")
        try:
            boundary = timestamps.parse(before)
        except TimestampError as exc:
            raise DeltaError(str(exc)) from None
        legacy = [e for e in entries if e.legacy_time is not None]
        if boundary.date_only or any(e.legacy_time.date_only for e in legacy if e.legacy_time):
            raise DeltaError(DATE_ONLY_CURSOR)
        return [e for e in legacy if e.legacy_time and e.legacy_time.value < boundary.value]
