"""History checks for deltas (``continuity verify``): one commit's claimed changes at a time.

- Ownership (DL201-DL203): a commit with ``Continuity-Delta: <path>`` trailers may create,
  modify or freeze only the deltas they name; without a trailer it may modify (or freeze) at most
  one delta that existed before it (``ownership = "trailer-or-single"``), or none at all
  (``ownership = "trailer"``). Creations are free in the default mode. Deletions are left to
  DL206, changes of frozen files to DL207.
- Content (DL204, DL205): a modified delta keeps started_at, source and conversation_id, and its
  updated_at does not go back, compared with the last good version (``change.old()``: the
  engine's, past a broken version or a deletion). A version that is not a strict JSON object
  is file mode's finding, at the commit that made it. History reads each version with file
  mode's ``strict_json.load``, once (:class:`Parsed`, shared with the file check of the state
  the commit leaves), and keeps per blob only the four fields it compares.
- Frozen files and freezes (DL206-DL208): a freeze is ``D X.json`` + ``A X.frozen.json`` in
  one commit, with identical bytes or with those of an update of ``X.json`` (update, freeze,
  then one commit), judged as that update (DL204, DL205); DL208 when either side is not a delta
  to compare.
- Legacy history (DL209): read-only once it has content, or append-only by configuration.
- Ownership by identity (DL211): see :mod:`.owners`.
"""

import posixpath
from collections.abc import Iterable

from continuity_checks.checks.deltas import naming, timestamps
from continuity_checks.checks.deltas import rules as dl
from continuity_checks.checks.deltas.history_versions import MISSING, Parsed, Times, Versions
from continuity_checks.checks.deltas.owners import Owners
from continuity_checks.checks.deltas.timestamps import Timestamp, TimestampError
from continuity_checks.core import strict_json
from continuity_checks.core.display import quote
from continuity_checks.core.family import STAGED, Change, Commit, CommitContext, Origins
from continuity_checks.core.findings import Finding
from continuity_checks.core.frozen import Frozen
from continuity_checks.core.snapshot import Snapshot
from continuity_checks.core.symlinks import SYMLINK

TRAILER = "Continuity-Delta"
IDENTITY_KEYS = ("started_at", "source", "conversation_id")
_QUOTES = "\"'`"


class HistoryOptions(Frozen):
    """The options the history checks read, built once by the family from its configuration
    (a frozen value: a ``NamedTuple`` class costs every start-up more to make)."""

    _fields = (
        "ownership",
        "legacy_mode",
        "allow_delete",
        "max_depth",
        "owner_field",
        "owner_allowed",
    )
    __slots__ = _fields

    #: ``deltas.ownership``: ``trailer-or-single``, ``trailer`` or ``off``
    ownership: str
    #: ``deltas.legacy``: ``read-only`` or ``append-only``
    legacy_mode: str
    #: ``deltas.allow-delete``: deleting a delta is no finding, and a re-added one is new
    allow_delete: bool
    #: ``limits.max-depth``, for parsing each version
    max_depth: int
    #: the commit field whose value owns a delta (DL211, ``deltas.owner-identity``); None when
    #: ownership by identity is off (also with ``ownership = "off"``)
    owner_field: str | None
    #: ``deltas.owner-allowed``: identities that may change any delta, as ``owners.normal``
    #: gives them
    owner_allowed: frozenset[str]

    def __init__(
        self,
        ownership: str,
        legacy_mode: str,
        allow_delete: bool,
        max_depth: int,
        owner_field: str | None,
        owner_allowed: frozenset[str],
    ) -> None:
        self._set(ownership, legacy_mode, allow_delete, max_depth, owner_field, owner_allowed)


class Touch:
    """A delta a commit created, modified or froze, and the paths that name it in a trailer."""

    __slots__ = ("action", "names", "path")

    def __init__(self, path: str, action: str, names: frozenset[str]) -> None:
        self.path = path
        self.action = action  # "created" | "modified" | "frozen"
        self.names = names

    @property
    def pre_existing(self) -> bool:
        return self.action != "created"


class HistoryChecks:
    """The history checks of one run, with what they remember across its commits."""

    NAMES_KEPT = 1024

    def __init__(self, options: HistoryOptions) -> None:
        self.options = options
        #: the versions parsed last, shared with the family's file check
        self.parsed = Parsed(options.max_depth)
        #: the times parsed last, shared with the family's file check
        self.times = Times()
        #: the versions of deltas this run has parsed, by blob id
        self.versions = Versions(self.parsed, self.times)
        #: trailer values -> the paths they name (most commits repeat their predecessor's)
        self._names: dict[tuple[str, ...], frozenset[str]] = {}
        #: ownership by identity (DL211), None when it is off
        self.owners = (
            Owners(options.owner_field, options.owner_allowed, options.allow_delete)
            if options.owner_field is not None
            else None
        )

    def named(self, values: tuple[str, ...]) -> frozenset[str]:
        found = self._names.get(values)
        if found is None:
            if len(self._names) >= self.NAMES_KEPT:
                self._names.clear()
            found = self._names[values] = _named(values)
        return found

    def check_commit(self, context: CommitContext) -> list[Finding]:
        named = self.named(context.commit.trailers.get(TRAILER, ()))
        return check_commit(self.options, self.versions, named, context, self.owners)

    def finish(self, origins: Origins) -> Iterable[tuple[Commit, Finding]]:
        """DL211 for the changes of deltas created before the run (see :mod:`.owners`)."""
        return self.owners.finish(origins) if self.owners is not None else ()


def check_commit(
    options: HistoryOptions,
    versions: "Versions",
    named: frozenset[str],
    context: CommitContext,
    owners: Owners | None = None,
) -> list[Finding]:
    sha = context.commit.sha
    deltas = []
    for change in context.changes:
        if change.kind == "delta":
            deltas.append(change)
    if options.allow_delete:
        deltas = [_created_again(c, context.before) for c in deltas]
    freezes = _freezes(deltas) if len(deltas) > 1 else {}  # a freeze is two changes
    findings = _ownership(options.ownership, context.commit, deltas, freezes, named)
    if owners is not None and deltas:
        findings.extend(owners.see(context, deltas, freezes))
    for change in deltas:
        if change.new_mode == SYMLINK:
            findings.append(_symlink(change, sha))
        else:
            findings.extend(_delta(options, versions, change, freezes, sha, context.after))
    if len(deltas) < len(context.changes):
        for change in context.changes:
            if change.kind != "legacy":
                continue
            if change.new_mode == SYMLINK:
                findings.append(_symlink(change, sha))
            else:
                findings.extend(_legacy(options.legacy_mode, change, sha))
    return findings


def _created_again(change: Change, before: Snapshot) -> Change:
    """A delta the parent does not have, given as a modification of the version before its
    deletion (its last good version): where deletions are allowed, the deletion ended that
    delta, and this is a new one, by its creator. A frozen file's deletion never is (DL207)."""
    if change.status != "M" or naming.is_frozen(change.path) or before.exists(change.path):
        return change
    return change.judged_as("A", None)


def _symlink(change: Change, sha: str) -> Finding:
    """DL212: the new version is a link, whose bytes are the path it names. What it judges in
    place of the content rules: the link text is no record to compare, and the one cause gets
    one finding (a freeze into a link is not also DL208, nor a frozen file made one DL207)."""
    target = change.new()
    shown = "" if target is None else f" to {quote(target.decode('utf-8', 'replace'))}"
    return dl.SYMLINK.finding(
        change.path, f"expected a regular file, found a symlink{shown}", commit=sha
    )


# --- freezes -----------------------------------------------------------------------------------


def _freezes(deltas: list[Change]) -> dict[str, Change]:
    """Each ``.frozen.json`` this commit added, mapped to the deletion of its ``X.json``."""
    deleted = {c.path: c for c in deltas if c.status == "D" and not naming.is_frozen(c.path)}
    return {
        c.path: deleted[naming.unfrozen_name(c.path)]
        for c in deltas
        if c.status == "A" and naming.is_frozen(c.path) and naming.unfrozen_name(c.path) in deleted
    }


# --- ownership ---------------------------------------------------------------------------------


def _named(values: tuple[str, ...]) -> frozenset[str]:
    """The paths a commit's trailer values name (a bare file name stays bare: see
    :func:`_is_named`)."""
    return frozenset(n for v in values if (n := normalise_trailer_path(v)))


def normalise_trailer_path(value: str) -> str:
    """A trailer value as a repository-relative ``/`` path: surrounding quotes dropped, ``\\``
    read as ``/``, ``./x`` and ``/x`` meaning ``x``. ``""`` when it names nothing usable (empty,
    or climbing out of the repository with ``..``)."""
    text = value.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in _QUOTES:
        text = text[1:-1].strip()
    text = text.replace("\\", "/")
    if not text:
        return ""
    text = posixpath.normpath(text).lstrip("/")
    return "" if text == "." or text == ".." or text.startswith("../") else text


def _several_conversations(named: frozenset[str], commit: Commit) -> list[Finding]:
    """DL210 when the trailers of a commit that is not a merge name more than one conversation's
    delta: a delta and its frozen form are one conversation."""
    if commit.is_merge:
        return []  # a merge carries the work of the commits it merges, each judged on its own
    conversations = sorted({naming.unfrozen_name(n) if naming.is_frozen(n) else n for n in named})
    if len(conversations) < 2:
        return []
    return [
        dl.SEVERAL_CONVERSATIONS.finding(
            conversations[0],
            f"expected a {TRAILER} trailer naming one conversation's delta, found "
            f"{len(conversations)}: {', '.join(conversations)}",
            commit=commit.sha,
        )
    ]


def _is_named(path: str, named: frozenset[str]) -> bool:
    """Whether a trailer names ``path``: by its repository path, by its bare file name (the
    store's directory goes without saying), or by its path from the store's project root, which
    is the ``_path`` that ``continuity delta --root DIR`` prints for a store below the top."""
    if path in named or path.rpartition("/")[2] in named:
        return True
    store = path.rfind("/.deltalayer/")
    return store >= 0 and path[store + 1 :] in named


def _touches(deltas: list[Change], freezes: dict[str, Change]) -> list[Touch]:
    frozen_sources = {c.path for c in freezes.values()}
    touches = []
    for change in deltas:
        if change.status == "D" or change.path in frozen_sources:
            continue  # deletions: DL206; the X.json of a freeze: the freeze below
        if naming.is_frozen(change.path):
            # one delta, two names (as for DL210): a trailer naming either owns it, also when
            # it is created frozen (started and frozen before its first commit, named by the
            # path start gave it)
            names = frozenset({change.path, naming.unfrozen_name(change.path)})
            if change.path in freezes:
                touches.append(Touch(change.path, "frozen", names))
            elif change.status == "A":
                touches.append(Touch(change.path, "created", names))
            continue  # a changed frozen file: DL207
        action = "created" if change.status == "A" else "modified"
        touches.append(Touch(change.path, action, frozenset({change.path})))
    return sorted(touches, key=lambda t: t.path)


def _ownership(
    mode: str,
    commit: Commit,
    deltas: list[Change],
    freezes: dict[str, Change],
    named: frozenset[str],
) -> list[Finding]:
    if mode == "off" or not deltas:
        return []
    # one name is one conversation
    several = _several_conversations(named, commit) if len(named) > 1 else []
    if several:
        return several
    if named:
        for change in deltas:
            if change.status != "D" and not _is_named(change.path, named):
                break
        else:
            return []  # the common case: the commit names every delta it touches
    touches = _touches(deltas, freezes)
    if named:
        listed = ", ".join(sorted(named))
        return [
            dl.FOREIGN_DELTA.finding(
                t.path,
                f"expected changes only to the delta named by {TRAILER} ({listed}), "
                f"found this delta {t.action}",
                commit=commit.sha,
            )
            for t in touches
            if not any(_is_named(name, named) for name in t.names)
        ]
    if mode == "trailer":
        if commit.sha == STAGED:
            return []  # the commit hook runs before the message (and its trailers) exists
        return [
            dl.TRAILER_REQUIRED.finding(
                t.path,
                f"expected a `{TRAILER}: {t.path}` trailer, found none (delta {t.action})",
                commit=commit.sha,
            )
            for t in touches
        ]
    existing = [t for t in touches if t.pre_existing]
    if len(existing) <= 1:
        return []
    listed = ", ".join(f"{t.path} ({t.action})" for t in existing)
    # the commit hook runs before the message exists: no trailer can help there
    staged = commit.sha == STAGED
    split = f"commit each conversation's delta in a commit of its own: keep {existing[0].path} "
    return [
        dl.SEVERAL_DELTAS.finding(
            existing[0].path,
            f"expected at most one existing delta changed without a {TRAILER} trailer, "
            f"found {len(existing)}: {listed}",
            commit=commit.sha,
            hint=split + "in this one and stage the others for the next" if staged else None,
            unstage=tuple(t.path for t in existing[1:]) if staged else (),
        )
    ]


# --- one delta ---------------------------------------------------------------------------------


def _delta(
    options: HistoryOptions,
    versions: "Versions",
    change: Change,
    freezes: dict[str, Change],
    sha: str,
    after: Snapshot,
) -> list[Finding]:
    if naming.is_frozen(change.path):
        return _frozen(change, freezes, versions, sha)
    if change.status == "D":
        frozen_sources = {c.path for c in freezes.values()}
        if options.allow_delete or change.path in frozen_sources:
            return []
        if _kept_frozen(change, after):
            return []
        return [
            dl.DELTA_DELETED.finding(
                change.path, "expected the delta kept, found it deleted", commit=sha
            )
        ]
    if change.status == "M" and change.old_blob != change.new_blob:
        return _content(change, versions, sha)
    return []


def _kept_frozen(change: Change, after: Snapshot) -> bool:
    """Whether the deleted X.json's bytes stay in the commit as X.frozen.json: the removal of
    a twin (DL111) whose frozen side an earlier commit added, which completes that freeze and
    loses nothing. Read only for such a deletion, rare."""
    frozen = after.read(naming.frozen_name(change.path))
    return isinstance(frozen, bytes) and frozen == change.old()


def _frozen(
    change: Change, freezes: dict[str, Change], versions: "Versions", sha: str
) -> list[Finding]:
    if change.status == "D":
        return [
            dl.FROZEN_CHANGED.finding(
                change.path, "expected the frozen delta kept, found it deleted", commit=sha
            )
        ]
    if change.status == "M":
        if change.old_blob == change.new_blob:
            return []
        line = _difference_line(change.old(), change.new())
        return [
            dl.FROZEN_CHANGED.finding(
                change.path,
                "expected the frozen bytes unchanged, found them changed"
                + (f" at line {line}" if line else ""),
                line=line,
                commit=sha,
            )
        ]
    source = freezes.get(change.path)
    if source is None or source.old_blob == change.new_blob:
        return []
    # An update and then the freeze, committed together (the handoff order of DeltaLayer's
    # AGENTS.md snippet: update, freeze, commit once): judged as that update, by the rules every
    # update answers to (DL204, DL205), on the frozen file.
    assert source.old_blob is not None and change.new_blob is not None  # D X.json + A X.frozen
    if (
        versions.get(source.old_blob, source.old) is not None
        and versions.get(change.new_blob, change.new) is not None
    ):
        return _content(change.judged_as("M", source.old_blob), versions, sha)
    line = _difference_line(source.old(), change.new())
    return [
        dl.BAD_FREEZE.finding(
            change.path,
            f"expected the bytes of {source.path} (deleted in this commit) or an update of "
            "them, found different bytes"
            + (f" from line {line}" if line else "")
            + " that are not a delta to compare with it",
            line=line,
            commit=sha,
        )
    ]


def _difference_line(old: bytes | None, new: bytes | None) -> int | None:
    """Where two versions with different blob ids first differ; None when one of them is too
    large to read (the engine reports CC008 for it)."""
    if old is None or new is None:
        return None
    return first_difference_line(old, new)


def _position(text: str, pointer: str) -> tuple[int, int]:
    """Line and column of the value at ``pointer`` (computed only for a finding)."""
    return strict_json.Document(text=text, value=None).position(pointer)


def _time(value: object) -> Timestamp | None:
    return _parse_time(value) if isinstance(value, str) else None


def _parse_time(value: str) -> Timestamp | None:
    try:
        return timestamps.parse(value)
    except TimestampError:
        return None


def _show(value: object) -> str:
    return "absent" if value is MISSING else quote(value)


def _identity_changed(key: str, before: object, after: object) -> bool:
    if key == "started_at":
        if before == after:
            return False
        old, new = _time(before), _time(after)
        return old is not None and new is not None and old.isoformat() != new.isoformat()
    if key == "conversation_id":
        before = None if before is MISSING else before
        after = None if after is MISSING else after
    elif before is MISSING or after is MISSING:
        return False  # a missing source is file mode's finding
    return bool(before != after or type(before) is not type(after))


def _content(change: Change, versions: Versions, sha: str) -> list[Finding]:
    assert change.old_blob is not None and change.new_blob is not None  # a modification
    old = versions.get(change.old_blob, change.old)
    new = versions.get(change.new_blob, change.new)
    if old is None or new is None:
        return []
    findings: list[Finding] = []
    if old.identity != new.identity:
        for key in IDENTITY_KEYS:
            before, after = old.value.get(key, MISSING), new.value.get(key, MISSING)
            if not _identity_changed(key, before, after):
                continue
            line, column = _position(new.text, "/" + key)
            findings.append(
                dl.TAKEOVER.finding(
                    change.path,
                    f"expected {key} to stay {_show(before)}, found {_show(after)}",
                    line=line,
                    column=column,
                    pointer="/" + key,
                    commit=sha,
                )
            )
    if old.updated is not None and new.updated is not None and new.updated < old.updated:
        previous, current = old.value["updated_at"], new.value["updated_at"]
        assert isinstance(previous, str) and isinstance(current, str)
        line, column = _position(new.text, "/updated_at")
        findings.append(
            dl.UPDATED_WENT_BACK.finding(
                change.path,
                f"expected updated_at at or after {_isoformat(previous)}, "
                f"found {_isoformat(current)}",
                line=line,
                column=column,
                pointer="/updated_at",
                commit=sha,
            )
        )
    return findings


def _isoformat(value: str) -> str:
    parsed = _parse_time(value)
    return value if parsed is None else parsed.isoformat()


# --- legacy history ----------------------------------------------------------------------------


def common_prefix_length(a: bytes, b: bytes) -> int:
    """The length of the longest common prefix, by bisection over C-speed slice compares."""
    if b.startswith(a):
        return len(a)
    va, vb = memoryview(a), memoryview(b)
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if va[:mid] == vb[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def first_difference_line(old: bytes, new: bytes) -> int:
    """The 1-based line of ``old`` (and ``new``) where the two first differ."""
    return old.count(b"\n", 0, common_prefix_length(old, new)) + 1


def _legacy(mode: str, change: Change, sha: str) -> list[Finding]:
    if change.status == "A":
        return []
    old = change.old()
    if old == b"" and (mode == "append-only" or change.status == "D"):
        # nothing recorded yet: deleting loses nothing, and append-only lets it grow. Read-only
        # still refuses the first record: v0.2 never writes legacy history (init leaves the file
        # empty), and readers list such a record after every delta, as the oldest history.
        return []
    if change.status == "D":
        return [_rewritten(change.path, "found the file deleted", None, sha, mode)]
    if change.old_blob == change.new_blob:
        return []
    new = change.new()
    if old is None or new is None:
        # a version too large to read (CC008): without its bytes only read-only can be judged
        if mode == "append-only":
            return []
        return [_rewritten(change.path, "found the file changed", None, sha, mode)]
    if new == old:
        return []
    prefix = common_prefix_length(old, new)
    line = old.count(b"\n", 0, prefix) + 1
    if prefix < len(old):
        return [_rewritten(change.path, f"found line {line} changed", line, sha, mode)]
    added = new[len(old) :]
    if old and not old.endswith(b"\n") and not added.startswith((b"\n", b"\r\n")):
        return [
            _rewritten(
                change.path,
                f"found text appended to line {line}, which had no final newline",
                line,
                sha,
                mode,
            )
        ]
    if mode == "append-only":
        return []
    size = f"{len(added)} byte{'s' if len(added) != 1 else ''}"
    return [_rewritten(change.path, f"found {size} appended at line {line}", line, sha, mode)]


def _rewritten(path: str, found: str, line: int | None, sha: str, mode: str) -> Finding:
    expected = (
        "the previous bytes kept as a prefix (append-only)"
        if mode == "append-only"
        else "legacy history left unchanged (read-only)"
    )
    return dl.LEGACY_REWRITTEN.finding(path, f"expected {expected}, {found}", line=line, commit=sha)
