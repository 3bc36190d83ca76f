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

import json
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

from continuity_checks.checks.deltas import naming, records, timestamps
from continuity_checks.checks.deltas.naming import LOCK_NAME
from continuity_checks.checks.deltas.records import DeltaTimes, RecordError
from continuity_checks.checks.deltas.timestamps import Timestamp, TimestampError
from continuity_checks.core import atomic, gitignore, strict_json
from continuity_checks.core.confined_files import ConfinedFiles
from continuity_checks.core.strict_json import DEFAULT_MAX_FILE_BYTES
from continuity_checks.tools.deltas import scaffold
from continuity_checks.tools.deltas.reader import (
    DELTALAYER_DIR,
    DeltaError,
    DeltaReader,
    JSONObject,
    Resolved,
    inside,
)

GITIGNORE = gitignore.FILE_NAME
GITIGNORE_ENTRY = f"{DELTALAYER_DIR}/{LOCK_NAME}"
"""The line ``init`` adds to ``.gitignore``, so that ``git add .`` never commits the lock."""
_MARKERS = tuple(marker.encode("utf-8") for marker in scaffold.MARKERS)


def _has_marker(agents: bytes) -> bool:
    return any(marker in agents for marker in _MARKERS)


DELTA_MODE = 0o600

# upstream's messages
FROZEN_UPDATE = "frozen conversation delta cannot be updated"
FROZEN_EXISTS = "frozen conversation delta already exists: {}"
TAKEN = "conversation delta already exists: {}"
NO_NAME = "could not allocate a collision-safe conversation filename"
LEADS_OUTSIDE = (
    "{} leads outside the root (to {}); the helper writes only inside the root: "
    "replace the symlink with the directory or file itself; nothing was written"
)
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


def _local_now() -> datetime:
    """Upstream's automatic time: local time with its offset, whole seconds."""
    return datetime.now().astimezone().replace(microsecond=0)


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


class DeltaStore(DeltaReader):
    """The DeltaLayer files of one project root: every write, under the store's lock, and
    every read (:class:`DeltaReader`)."""

    def __init__(
        self,
        root: str | os.PathLike[str] = ".",
        *,
        lock_timeout: float = atomic.DEFAULT_LOCK_TIMEOUT,
        clock: Callable[[], datetime] = _local_now,
        limit: int = DEFAULT_MAX_FILE_BYTES,
    ) -> None:
        super().__init__(root, limit=limit)
        self.lock_path = self.base / LOCK_NAME
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
        if os.path.lexists(path) and inside(Path(real), Path(os.path.realpath(self.root))) is None:
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

    def _refuse_frozen(self, resolved: Resolved) -> None:
        if naming.is_frozen(resolved.name) or self._frozen_link(resolved.path) is not None:
            raise DeltaError(FROZEN_UPDATE)

    def _time(self, raw: str | None) -> Timestamp:
        """A given time (empty is an error), or now when it is absent."""
        if raw is None:
            return Timestamp(self.clock())
        try:
            return timestamps.parse(raw)
        except TimestampError as exc:
            raise DeltaError(str(exc)) from None
