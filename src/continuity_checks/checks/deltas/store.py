"""DeltaLayer Conversation Delta operations behind ``continuity delta`` (specs/deltalayer.md §3-§4).

Every operation returns plain JSON-ready dicts shaped exactly like the prototype's output and
raises :class:`DeltaError` (or ``OSError``) with the prototype's one-line message. Differences
from the prototype are deliberate and listed in docs/delta-helper.md:

- every write is atomic and durable (:mod:`continuity_checks.core.atomic`) and happens under one
  advisory lock per store (``.deltalayer/.lock``); name allocation, exclusive creation,
  read-modify-write and freeze all happen inside it;
- ``freeze`` moves with hard link + unlink, so an existing ``X.frozen.json`` is never replaced;
- an empty time or an empty change is an error, and ``start`` validates before ``init`` writes;
- ``_path`` always uses ``/``;
- ``update`` refuses a delta that is not strict JSON (a key twice), whose rewrite would drop
  values, and an updated_at (given, or now) that goes back (the checker's DL205) or
  precedes started_at (DL109);
- ``init`` adds ``.deltalayer/.lock`` to ``.gitignore``.
"""

from __future__ import annotations

import errno
import heapq
import json
import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from continuity_checks.checks.deltas import naming, records, scaffold, timestamps
from continuity_checks.checks.deltas.records import DeltaTimes, RecordError
from continuity_checks.checks.deltas.timestamps import Timestamp, TimestampError
from continuity_checks.core import atomic, gitignore, strict_json
from continuity_checks.core.confined_files import ConfinedFiles, Refused
from continuity_checks.core.strict_json import DEFAULT_MAX_FILE_BYTES

JSONObject = dict[str, Any]

DELTALAYER_DIR = ".deltalayer"
CHANGES_REL = ".deltalayer/changes"
LEGACY_REL = ".deltalayer/changes.jsonl"
LOCK_NAME = ".lock"
"""The lock file, in ``.deltalayer/``: neither ``*.json`` nor ``*.tmp``, so readers ignore it."""

GITIGNORE = gitignore.FILE_NAME
GITIGNORE_ENTRY = f"{DELTALAYER_DIR}/{LOCK_NAME}"
"""The line ``init`` adds to ``.gitignore``, so that ``git add .`` never commits the lock."""
_MARKERS = tuple(marker.encode("utf-8") for marker in scaffold.MARKERS)


def _has_marker(agents: bytes) -> bool:
    return any(marker in agents for marker in _MARKERS)


DEFAULT_LIMIT = 5
MAX_LIMIT = 1000
DELTA_MODE = 0o600

MISSING_PROJECT = "(PROJECT.md is missing.)"
INSTRUCTION = (
    "If this context is insufficient, read older Conversation Deltas with next_before; "
    "continue into legacy history when needed."
)

# upstream's messages
BAD_LIMIT = "limit must be an integer between 1 and 1000"
OUTSIDE = "conversation path must be inside .deltalayer/changes"
MISSING = "conversation delta does not exist: {}"
FROZEN_UPDATE = "frozen conversation delta cannot be updated"
FROZEN_EXISTS = "frozen conversation delta already exists: {}"
TAKEN = "conversation delta already exists: {}"
NO_NAME = "could not allocate a collision-safe conversation filename"
LEADS_OUTSIDE = (
    "{} leads outside the root (to {}); the helper writes only inside the root: "
    "replace the symlink with the directory or file itself; nothing was written"
)
UNKNOWN_CURSOR = "cursor does not identify a readable history item"
BAD_CURSOR_LINE = "cursor line must be an integer"
NONPOSITIVE_CURSOR_LINE = "cursor line must be positive"
BAD_LEGACY_CURSOR = "legacy cursor line must be an integer"
DATE_ONLY_CURSOR = "date-only values require a full cursor from recent/older"
# this project's messages
EMPTY_CHANGE = "change must be a non-empty string"
WENT_BACK = (
    "updated_at cannot go back: expected {} or later, found {} "
    "(continuity verify reports it as DL205)"
)
BEFORE_START = (
    "updated_at cannot precede started_at: expected {} or later, found {} "
    "(continuity check reports it as DL109)"
)
NOW_HINT = "; the clock is behind the delta's times: give --updated-at {} or later"
NOT_STRICT = (
    "conversation delta is not strict JSON at line {} column {}: {} (continuity check reports "
    "it as {}); fix the file first, nothing was written"
)
NOT_FINITE = (
    "conversation delta holds a number JSON cannot write (NaN, or beyond a double such as 1e999);"
    " refusing to write it as Infinity"
)
NOT_UNICODE = "conversation delta text must be valid Unicode (lone surrogates cannot be stored)"

#: Bytes of the legacy file read at a time.
LEGACY_BLOCK = 1 << 20

CONVERSATION_PREFIX = "conversation:"
LEGACY_PREFIX = "legacy:"
LINE_MARK = "#line="


class DeltaError(Exception):
    """A domain error; ``str()`` is the one-line message (``deltalayer: <message>`` in the CLI)."""


_DeltaKey = tuple[tuple[int, float], tuple[int, float], str]


@dataclass(frozen=True)
class _Entry:
    """One item of the merged history list."""

    item: JSONObject
    legacy_time: Timestamp | None = None  # set for legacy items only
    line: int = 0  # physical line of a legacy item

    @property
    def cursor(self) -> str:
        cursor: str = self.item["_cursor"]
        return cursor


@dataclass(frozen=True)
class _Resolved:
    path: Path  # real path of the delta file
    rel: str  # path below .deltalayer/changes/, with "/"

    @property
    def name(self) -> str:
        return self.path.name


def _local_now() -> datetime:
    """Upstream's automatic time: local time with its offset, whole seconds."""
    return datetime.now().astimezone().replace(microsecond=0)


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


def serialise(record: JSONObject) -> bytes:
    """The prototype's on-disk form: one compact JSON line, raw non-ASCII, then ``\\n``."""
    try:
        # allow_nan=False: a number beyond a double (1e999 read back as infinity) or NaN would be
        # written as Infinity / NaN, which is not JSON and which `continuity check` rejects (CC006)
        text = json.dumps(record, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError:
        raise DeltaError(NOT_FINITE) from None
    try:
        return (text + "\n").encode("utf-8")
    except UnicodeEncodeError:
        raise DeltaError(NOT_UNICODE) from None


def check_limit(limit: object) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise DeltaError(BAD_LIMIT)
    return limit


def check_new_changes(changes: Sequence[str]) -> list[str]:
    """Changes given to ``start``/``update``: strings, none of them empty or blank."""
    if isinstance(changes, str):
        raise DeltaError(records.BAD_CHANGES)
    values = list(changes)
    if not all(isinstance(change, str) for change in values):
        raise DeltaError(records.BAD_CHANGES)
    if any(not change.strip() for change in values):
        raise DeltaError(EMPTY_CHANGE)
    return values


def _inside(path: Path, directory: Path) -> str | None:
    """``path`` relative to ``directory`` with ``/``, or None if it is not inside."""
    try:
        return path.relative_to(directory).as_posix()
    except ValueError:
        return None


class DeltaStore:
    """The DeltaLayer files of one project root."""

    def __init__(
        self,
        root: str | os.PathLike[str] = ".",
        *,
        lock_timeout: float = atomic.DEFAULT_LOCK_TIMEOUT,
        clock: Callable[[], datetime] = _local_now,
        limit: int = DEFAULT_MAX_FILE_BYTES,
    ) -> None:
        self.root = Path(root).resolve()
        self.files = ConfinedFiles(self.root, limit)  # every read and write of the store
        self.base = self.root / DELTALAYER_DIR
        self.changes_dir = self.base / "changes"
        self.legacy_path = self.base / "changes.jsonl"
        self.lock_path = self.base / LOCK_NAME
        self.project_path = self.root / "PROJECT.md"
        self.agents_path = self.root / "AGENTS.md"
        self.lock_timeout = lock_timeout
        self.clock = clock

    # ------------------------------------------------------------------ writing

    @contextmanager
    def lock(self) -> Iterator[None]:
        """The store's writer lock (not re-entrant; every write operation takes it itself).
        Holding it, no other helper is writing: a temp file left in ``changes/`` is what a
        killed writer left, and is removed before anything else happens (``check`` would
        report it as DL112 until then)."""
        atomic.refuse_linked(self.root, self.changes_dir)
        with atomic.locked(self.lock_path, self.lock_timeout):
            self._remove_stale_temp_files()
            yield

    def _refuse_outside(self, path: Path) -> None:
        """Refuse, before anything is written, a file written through its symlink (AGENTS.md,
        .gitignore) whose target is outside the root."""
        real = os.path.realpath(path)
        if os.path.lexists(path) and _inside(Path(real), Path(os.path.realpath(self.root))) is None:
            raise DeltaError(LEADS_OUTSIDE.format(path.relative_to(self.root).as_posix(), real))

    def _remove_stale_temp_files(self) -> None:
        """Remove ``changes/.*.tmp`` (this helper's temp files, and the prototype's
        ``.X.json.*.tmp``), inside the root only."""
        directory = os.path.realpath(self.changes_dir)
        root = os.path.realpath(self.root)
        if not directory.startswith(root.rstrip(os.sep) + os.sep):
            return
        try:
            entries = list(os.scandir(directory))
        except OSError:
            return  # no changes/ yet, or unreadable: the operation itself says so
        for entry in entries:
            if entry.name.startswith(".") and entry.name.endswith(".tmp"):
                try:
                    if entry.is_file(follow_symlinks=False):
                        os.unlink(entry.path)
                except OSError:
                    pass  # another process removed it, or it cannot be: DL112 will tell

    def init(self) -> list[str]:
        """Create what is missing (§4.1); return the report lines (empty: already initialised)."""
        self._refuse_init_outside()
        self.base.mkdir(parents=True, exist_ok=True)
        with self.lock():
            return self._init_locked()

    def start(
        self,
        source: str,
        changes: Sequence[str] = (),
        *,
        started_at: str | None = None,
        conversation_id: str | None = None,
    ) -> JSONObject:
        """Create a new Conversation Delta; everything is validated before any file is touched."""
        try:
            records.check_source(source)
        except RecordError as exc:
            raise DeltaError(str(exc)) from None
        values = check_new_changes(changes)
        time = self._time(started_at)
        record: JSONObject = {
            "started_at": time.isoformat(),
            "updated_at": time.isoformat(),
            "source": source,
            "changes": values,
        }
        if conversation_id is not None:
            record["conversation_id"] = conversation_id
        self._validate(record)
        data = serialise(record)
        base = naming.stem(time.slug(), source)

        self._refuse_init_outside()
        self.base.mkdir(parents=True, exist_ok=True)
        with self.lock():
            self._init_locked()
            name = self._allocate(base)
            try:
                self.files.create(self.changes_dir / name, data, mode=DELTA_MODE)
            except FileExistsError:  # only a writer that ignores the lock can get here
                raise DeltaError(TAKEN.format(name)) from None
        return self._delta_item(record, name, name)

    def update(
        self, ref: str, changes: Sequence[str] = (), *, updated_at: str | None = None
    ) -> JSONObject:
        """Replace the changes of a non-frozen delta and set ``updated_at`` (now if None).

        An ``updated_at`` (given, or now) that sorts before the stored one is refused:
        ``continuity verify`` would reject that commit (DL205); so is one before started_at
        (DL109).
        """
        return self._rewrite(ref, lambda _old: changes, updated_at)

    def amend(
        self,
        ref: str,
        edit: Callable[[list[str]], Sequence[str]],
        *,
        updated_at: str | None = None,
    ) -> JSONObject:
        """Read-modify-write under the lock: the new changes are ``edit(current changes)``.

        Not a prototype command; it lets several writers add to one delta without losing each
        other's changes.
        """
        return self._rewrite(ref, edit, updated_at)

    def freeze(self, ref: str) -> JSONObject:
        """Archive ``X.json`` as ``X.frozen.json``; a frozen REF is shown unchanged."""
        resolved = self._resolve(ref)
        if naming.is_frozen(resolved.name):
            return self.show(ref)
        with self.lock():
            resolved = self._resolve(ref)  # may have been frozen or removed meanwhile
            if naming.is_frozen(resolved.name):
                return self._item_of(resolved)
            record, _ = self._load(resolved.path)
            target_name = Path(resolved.name).stem + naming.FROZEN_SUFFIX
            target = resolved.path.with_name(target_name)
            if os.path.lexists(target):
                if self._frozen_link(resolved.path) != target:
                    raise DeltaError(FROZEN_EXISTS.format(target_name))
                os.unlink(resolved.path)  # finish a freeze that was interrupted after the link
                atomic.fsync_dir(target.parent)
            else:
                try:
                    atomic.rename_no_overwrite(resolved.path, target)
                except FileExistsError:
                    raise DeltaError(FROZEN_EXISTS.format(target_name)) from None
        rel = resolved.rel[: len(resolved.rel) - len(resolved.name)] + target_name
        return self._delta_item(record, target_name, rel)

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

    # ------------------------------------------------------------------ internals: writes

    def _init_locked(self) -> list[str]:
        """The prototype's three steps and report lines in its order, then the .gitignore line."""
        self._refuse_init_outside()  # again, holding the lock
        self.changes_dir.mkdir(parents=True, exist_ok=True)
        report: list[str] = []
        if self._create_missing(self.legacy_path, b""):
            report.append(str(self.legacy_path))
        if self._create_missing(self.project_path, scaffold.PROJECT_TEMPLATE.encode("utf-8")):
            report.append(str(self.project_path))
        agents = self._init_agents()
        if agents:
            report.append(agents)
        ignored = self._ignore_lock()
        if ignored:
            report.append(ignored)
        return report

    def _refuse_init_outside(self) -> None:
        """What ``init`` writes stays inside the root: the store's directories are never
        written through a symlink, AGENTS.md and .gitignore are, but never to a file outside;
        refused before anything is created."""
        atomic.refuse_linked(self.root, self.changes_dir)
        if not self._done(self.agents_path, _has_marker):
            self._refuse_outside(self.agents_path)
        if not gitignore.names(self.root, GITIGNORE_ENTRY):
            self._refuse_outside(self.root / GITIGNORE)

    def _done(self, path: Path, done: Callable[[bytes], bool]) -> bool:
        """``path`` needs no write: ``done(its bytes)`` wherever its symlink leads (a shared
        AGENTS.md holding the section is only looked at: a regular file within the limit), or
        it is a dangling name init leaves."""
        files, real = ConfinedFiles.named(path, self.files.limit)
        try:
            return done(files.read(real))
        except FileNotFoundError:
            return os.path.lexists(path)

    def _init_agents(self) -> str | None:
        """Create AGENTS.md or append the section; the report line, or None."""
        section = scaffold.AGENTS_SECTION.encode("utf-8")
        if self._done(self.agents_path, _has_marker):  # (wherever it leads: only looked at)
            return None
        try:
            current = self.files.read(self.agents_path)
        except FileNotFoundError:
            created = self._create_missing(self.agents_path, section + b"\n")
            return str(self.agents_path) if created else None
        prefix = current if not current or current.endswith(b"\n") else current + b"\n"
        # write through a symlinked AGENTS.md instead of replacing the link
        self.files.write(os.path.realpath(self.agents_path), prefix + b"\n" + section + b"\n")
        return f"appended continuity section to {self.agents_path}"

    def _ignore_lock(self) -> str | None:
        """Make git ignore the lock file (:func:`gitignore.add`); the report line, or None."""
        return gitignore.add(self.root, GITIGNORE_ENTRY)

    def _create_missing(self, path: Path, data: bytes) -> bool:
        if os.path.lexists(path):
            return False
        try:
            self.files.create(path, data)
        except FileExistsError:
            return False
        return True

    def _allocate(self, base: str) -> str:
        for n in range(naming.MAX_COLLISION + 1):
            stem = naming.candidate(base, n)
            taken = (stem + naming.SUFFIX, stem + naming.FROZEN_SUFFIX)
            if not any(os.path.lexists(self.changes_dir / name) for name in taken):
                return stem + naming.SUFFIX
        raise DeltaError(NO_NAME)

    def _rewrite(
        self,
        ref: str,
        edit: Callable[[list[str]], Sequence[str]],
        updated_at: str | None,
    ) -> JSONObject:
        self._refuse_frozen(self._resolve(ref))  # fail early, before taking the lock
        with self.lock():
            resolved = self._resolve(ref)  # again: a freeze may have renamed it meanwhile
            self._refuse_frozen(resolved)
            data = self.files.read(resolved.path)
            record, times = self._parse(data)
            record["changes"] = check_new_changes(edit(list(record["changes"])))
            time = self._time(updated_at)
            self._refuse_going_back(time, times, given=updated_at is not None)
            record["updated_at"] = time.isoformat()
            self._validate(record)
            new = serialise(record)
            self._refuse_loose(data)
            self.files.write(resolved.path, new)
        return self._delta_item(record, resolved.name, resolved.rel)

    @staticmethod
    def _refuse_going_back(time: Timestamp, times: DeltaTimes, *, given: bool) -> None:
        """Refuse an updated_at that ``continuity verify`` (DL205: before the stored one, by
        the ordering key) or ``check`` (DL109: before started_at in time) would report, given
        or now: a clock behind the one that wrote the delta must not write history backwards."""
        hint = "" if given else NOW_HINT
        if time.sort_key() < times.updated.sort_key():
            stored = times.updated.isoformat()
            raise DeltaError(WENT_BACK.format(stored, time.isoformat()) + hint.format(stored))
        if timestamps.earlier(time, times.started):
            started = times.started.isoformat()
            raise DeltaError(BEFORE_START.format(started, time.isoformat()) + hint.format(started))

    @staticmethod
    def _refuse_loose(data: bytes) -> None:
        """Refuse to rewrite a delta that only a tolerant reader takes (a key twice, which
        ``json.loads`` reads as its last value): writing it back would drop the other values
        silently, where ``check`` reports the file (CC005) for its owner to fix."""
        loaded = strict_json.load(data)
        if isinstance(loaded, strict_json.Problem):
            raise DeltaError(
                NOT_STRICT.format(loaded.line, loaded.column, loaded.message, loaded.rule.id)
            )

    def _refuse_frozen(self, resolved: _Resolved) -> None:
        if naming.is_frozen(resolved.name) or self._frozen_link(resolved.path) is not None:
            raise DeltaError(FROZEN_UPDATE)

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

    def _time(self, raw: str | None) -> Timestamp:
        """A given time (empty is an error), or now when it is absent."""
        if raw is None:
            return Timestamp(self.clock())
        try:
            return timestamps.parse(raw)
        except TimestampError as exc:
            raise DeltaError(str(exc)) from None

    @staticmethod
    def _validate(record: object) -> DeltaTimes:
        try:
            return records.validate_delta(record)
        except RecordError as exc:
            raise DeltaError(str(exc)) from None

    # ------------------------------------------------------------------ internals: reads

    def _resolve(self, ref: str) -> _Resolved:
        """REF (§4.2): absolute as is; relative from the root, else from changes/."""
        candidate = Path(ref)
        if not candidate.is_absolute():
            at_root = self.root / ref
            candidate = at_root if os.path.exists(at_root) else self.changes_dir / ref
        real = Path(os.path.realpath(candidate))
        rel = _inside(real, Path(os.path.realpath(self.changes_dir)))
        if rel is None:
            raise DeltaError(OUTSIDE)
        if not real.is_file():
            raise DeltaError(MISSING.format(ref))
        return _Resolved(real, rel)

    def _load(self, path: Path) -> tuple[JSONObject, DeltaTimes]:
        return self._parse(self.files.read(path))

    def _parse(self, data: bytes) -> tuple[JSONObject, DeltaTimes]:
        value = _decode_json(data, text_mode=True)
        times = self._validate(value)
        assert isinstance(value, dict)
        return value, times

    def _item_of(self, resolved: _Resolved) -> JSONObject:
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
                        if _inside(Path(os.path.realpath(path)), changes_real) is None:
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
                    if _inside(Path(os.path.realpath(path)), changes_real) is None:
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
