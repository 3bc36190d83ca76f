"""Ownership by identity (DL211): the identity that created a delta owns it.

An identity is one commit field (``deltas.owner-identity``: the author email by default), as git
recorded it, compared without regard to case. Each commit of the run that modifies or freezes a
delta (or deletes one, where deletions are allowed at all) is compared with the delta's
creator:

- created in the run: the creator is remembered from the commit that added it;
- created before the run: the commit that changes it is kept, and after the last commit the
  family asks history once, for all such deltas together, which commit added each
  (:data:`~continuity_checks.core.family.Origins`);
- identities in ``deltas.owner-allowed`` may change any delta.

A merge answers for what it changed itself: a version (or a deletion) that one of its other
parents already had was brought in from that side, and is judged at the commit that made it.
A delta and its frozen form are one delta: a freeze is a change, by the freezer.
"""

from collections.abc import Iterable, Sequence

from continuity_checks.checks.deltas import naming
from continuity_checks.checks.deltas import rules as dl
from continuity_checks.core.family import Change, Commit, CommitContext, Origins
from continuity_checks.core.findings import Finding
from continuity_checks.core.snapshot import Snapshot

_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def normal(identity: str) -> str:
    """An identity as it is compared: email addresses are not told apart by ASCII case in
    practice (the domain never is), and surrounding blanks are not part of one. Only ASCII
    case: ``casefold`` would make other addresses equal (``ſam@…`` and ``sam@…``, a Kelvin
    sign and ``k``), letting an address that is not the creator's pass as the creator's."""
    return identity.strip().translate(_ASCII_LOWER)


_KEPT = 1024  # identities remembered in their normal form, at most


class _Creator:
    """Who created a delta (as recorded, and in its normal form) and in which commit."""

    __slots__ = ("commit", "identity", "recorded")

    def __init__(self, identity: str, recorded: str, commit: str) -> None:
        self.identity = identity  # normal(recorded)
        self.recorded = recorded
        self.commit = commit


class _Unknown:
    """A change of a delta created before the run: judged once its creator is known."""

    __slots__ = ("action", "commit", "created_as", "path", "recorded")

    def __init__(
        self, commit: Commit, path: str, created_as: str, action: str, recorded: str
    ) -> None:
        self.commit = commit
        self.path = path  # the path the change is reported at
        self.created_as = created_as  # the path whose addition made the delta (X.json for a freeze)
        self.action = action
        self.recorded = recorded


class Owners:
    """DL211 for one run: the creators it has seen, and the changes still waiting for theirs."""

    def __init__(self, field: str, allowed: frozenset[str], allow_delete: bool) -> None:
        self.field = field
        self.allowed = allowed
        self.allow_delete = allow_delete
        #: a version of a delta made in this run, (its X.json path, blob id) -> who created the
        #: delta it is a version of. By version, not by path: two lines of history can hold
        #: deltas of one name with different creators (a side branch or an unrelated history
        #: that adds its own X.json), and a creation on one line must not make its author the
        #: owner of the other line's X.json
        self._versions: dict[tuple[str, str | None], _Creator] = {}
        #: the last creator of each path in this run: for a frozen copy added beside X.json,
        #: whose X.json version is not at hand
        self._latest: dict[str, _Creator] = {}
        self._unknown: list[_Unknown] = []
        #: recorded identity -> normal(identity): most commits repeat their predecessor's
        self._normal: dict[str, str] = {}

    def see(
        self, context: CommitContext, deltas: Sequence[Change], freezes: dict[str, Change]
    ) -> list[Finding]:
        commit = context.commit
        recorded = commit.fields.get(self.field)
        if recorded is None:
            return []  # the log was not asked for the field: nothing to compare (never happens)
        who = self._normal.get(recorded)
        if who is None:
            if len(self._normal) >= _KEPT:
                self._normal.clear()
            who = self._normal[recorded] = normal(recorded)
        others = context.others
        findings: list[Finding] = []
        for change in deltas:
            path, status = change.path, change.status
            old: tuple[str, str | None] | None
            # the common case first: an ordinary delta modified
            if status == "M":
                if change.old_blob == change.new_blob or naming.is_frozen(path):
                    continue  # a mode change is no edit; a changed frozen file is DL207's
                key = created_as = path
                old = (key, change.old_blob)
                action = "modified"
            elif status == "A":
                frozen = naming.is_frozen(path)
                key = naming.unfrozen_name(path) if frozen else path
                if frozen and path in freezes:
                    created_as = freezes[path].path
                    old = (key, freezes[path].old_blob)
                elif frozen and context.before.exists(key):
                    # X.frozen.json added beside an X.json the parent has: no new delta, a
                    # change of X (a copy frozen in place); as a creation it would make its
                    # author X's owner, and the next edit of X.json would pass
                    created_as = key
                    old = None
                else:
                    if not (others and _brought_in(change, others)):
                        made = _Creator(who, recorded, commit.sha)
                        self._versions.setdefault((key, change.new_blob), made)
                        self._latest[key] = made
                    continue
                action = "frozen"
            else:
                # a frozen file: DL207; a freeze's X.json: judged with the freeze; without
                # allow-delete, a deletion is DL206's alone
                if not self.allow_delete or naming.is_frozen(path) or _frees(path, freezes):
                    continue
                key = created_as = path
                old = (key, change.old_blob)
                action = "deleted"
            creator = self._latest.get(key) if old is None else self._versions.get(old)
            if others and _brought_in(change, others):
                # judged where it was made; unless the version brought in belongs to another
                # delta of that name, created on the side line (an add/add merge, an unrelated
                # history): then the merge replaces the mainline's delta with it
                side = self._versions.get((key, change.new_blob)) if status == "M" else None
                if side is not None and (creator is None or creator.identity != side.identity):
                    replaced = f"replaced with the delta of that name created in {side.commit[:12]}"
                    if creator is None:
                        self._unknown.append(
                            _Unknown(commit, path, created_as, replaced, side.recorded)
                        )
                    else:
                        findings.append(
                            _finding(path, replaced, side.recorded, creator, commit.sha)
                        )
                continue
            if who not in self.allowed:
                if creator is None:
                    self._unknown.append(_Unknown(commit, path, created_as, action, recorded))
                elif creator.identity != who:
                    findings.append(_finding(path, action, recorded, creator, commit.sha))
            if action == "deleted":
                self._versions.pop((key, change.old_blob), None)
                self._latest.pop(key, None)
            elif action == "modified" and creator is not None:
                self._versions.setdefault((key, change.new_blob), creator)
        return findings

    def finish(self, origins: Origins) -> Iterable[tuple[Commit, Finding]]:
        """The changes of deltas created before the run, judged against their creators (one
        look-up for all of them)."""
        if not self._unknown:
            return []
        found = origins({u.created_as for u in self._unknown})
        results = []
        for unknown in self._unknown:
            origin = found.get(unknown.created_as)
            if origin is None:
                results.append(
                    (
                        unknown.commit,
                        dl.OTHER_IDENTITY.finding(
                            unknown.path,
                            f"expected the commit that created {unknown.created_as} in the "
                            "history before it, found none: the owner of the delta "
                            f"{unknown.action} by {unknown.recorded} cannot be told (in a "
                            "shallow clone, `git fetch --unshallow` brings the history in)",
                            commit=unknown.commit.sha,
                            hint=UNKNOWN_OWNER_HINT,
                        ),
                    )
                )
                continue
            recorded = origin.fields.get(self.field, "")
            if normal(recorded) != normal(unknown.recorded):
                creator = _Creator(normal(recorded), recorded, origin.sha)
                results.append(
                    (
                        unknown.commit,
                        _finding(
                            unknown.path,
                            unknown.action,
                            unknown.recorded,
                            creator,
                            unknown.commit.sha,
                        ),
                    )
                )
        self._unknown = []
        return results


# the rule's own hint is for a takeover; here nothing says there was one, only that the history
# that would tell is missing
UNKNOWN_OWNER_HINT = (
    "bring in the history that created the delta (`git fetch --unshallow` in a shallow clone, "
    "or a checkout with fetch-depth: 0), then run again"
)


def _finding(path: str, action: str, recorded: str, creator: _Creator, sha: str) -> Finding:
    return dl.OTHER_IDENTITY.finding(
        path,
        f"expected changes by {creator.recorded or '(empty)'}, who created the delta in commit "
        f"{creator.commit[:12]}, found it {action} by {recorded or '(empty)'}",
        commit=sha,
    )


def _frees(path: str, freezes: dict[str, Change]) -> bool:
    """Whether ``path`` is the ``X.json`` a freeze of this commit deleted."""
    return any(source.path == path for source in freezes.values())


def _brought_in(change: Change, others: Sequence[Snapshot]) -> bool:
    """Whether a merge's change (against its first parent) is a version that another parent
    already had: a deletion, when another parent lacks the file; otherwise the same bytes."""
    if not others:
        return False
    if change.status == "D":
        return any(not other.exists(change.path) for other in others)
    new = change.new()
    if new is None:
        return False  # too large to read (CC008): judged as the merge's own change
    return any(other.read(change.path) == new for other in others)
