"""The last good version of a claimed path: what a cross-commit rule compares a file with.

A version is good when it is a regular file that file mode finds no error at
(:meth:`~continuity_checks.engine.commit_state.CommitState.good`). ``verify`` remembers, walking
a range, the last good version before each version that was not good (:class:`Remembered`); the
commit hook (:class:`BeforeHead`) and a shard's first commits (:func:`look_back`) look back
through git's history for it instead, a bounded number of versions.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from continuity_checks.core import core_rules as cc
from continuity_checks.core.family import STAGED
from continuity_checks.core.findings import Finding
from continuity_checks.core.snapshot import CommitTree, Snapshot
from continuity_checks.engine.commit_state import SYMLINK, CommitState
from continuity_checks.engine.router import Owners

if TYPE_CHECKING:
    from continuity_checks.core.git.log import RawChange
    from continuity_checks.core.git.repository import Repository

#: How many earlier versions of a file the commit hook looks through for its last good one,
#: and how many commits back it looks for a file absent from HEAD (deleted before, or new).
LOOK_BACK = 20
LOOK_BACK_COMMITS = 50
#: How many versions of one path a shard looks through for the last good one before it.
SHARD_LOOK_BACK = 1000


def _status(old: str | None, new: str | None) -> str:
    """The status of a change from version ``old`` to version ``new`` (None: absent)."""
    return "A" if old is None else ("D" if new is None else "M")


class Remembered:
    """What ``verify`` remembers walking a range: the last good version of each claimed path
    whose version at some commit was not good (broken, a symlink, deleted), as
    ``(path, that version's blob or None) -> the last good blob before it, or None``."""

    def __init__(self) -> None:
        self.versions: dict[tuple[str, str | None], str | None] = {}

    def judged_from(self, change: RawChange) -> tuple[str | None, str]:
        """The version a claimed change is judged from, and its status against it: the parent's
        version, or the last good one before it when the parent's was not good."""
        key = (change.path, change.old_blob)
        if key not in self.versions:
            return change.old_blob, change.status
        old = self.versions[key]
        return old, _status(old, change.new_blob)

    def remember(
        self, raw_changes: Sequence[RawChange], broken: Collection[str], owners: Owners
    ) -> None:
        """After a commit: each claimed path it left without a good version (deleted, a
        symlink, or holding an error) keeps the last good version it had before. A path that
        never had one (added broken) is judged from its first version: the history rules'
        promises (a frozen file's bytes) start when it is committed, not when it is first
        good."""
        versions = self.versions
        for c in raw_changes:
            if c.new_blob is not None and c.new_mode != SYMLINK and c.path not in broken:
                continue
            if owners.of(c.path):
                good = versions.get((c.path, c.old_blob), c.old_blob)
                if good is not None or c.new_blob is None:
                    versions[(c.path, c.new_blob)] = good


class BeforeHead:
    """The versions the commit being made is judged from: each claimed change's version in
    ``HEAD`` (its tree is ``before``), or the last good one before it when that one is not good,
    looked for back through ``HEAD``'s history (:func:`before_head`). A look-back cut short
    before it found one is CC012, kept in :attr:`cut`."""

    def __init__(
        self, repo: Repository, head: str | None, before: Snapshot, state: CommitState
    ) -> None:
        self.repo = repo
        self.head = head
        self.before = before
        self.state = state
        self.cut: list[Finding] = []

    def judged_from(self, change: RawChange) -> tuple[str | None, str]:
        """The version ``change`` is judged from, and its status against it."""
        c, head = change, self.head
        old = c.old_blob
        if head and c.new_blob and not self.state.good(self.before, (c.path, old, c.old_mode)):
            good, cut = before_head(self.repo, head, c.path, self.state, old is None)
            if cut:
                self.cut.append(cut_short(c.path))
            else:
                old = good
        return old, _status(old, c.new_blob)


def look_back(
    repo: Repository,
    path: str,
    versions: Sequence[tuple[str, str | None, str]],
    state: CommitState,
    in_range: Collection[str] | None = None,
) -> tuple[str | None, bool]:
    """The version a change of ``path`` is judged from, when the version before it is not
    good, as ``verify`` remembers it: the newest good one among ``versions`` (``(commit, blob
    or None, git mode)``, newest first, as
    :meth:`~continuity_checks.core.git.repository.Repository.versions` gives them, judged by
    :meth:`CommitState.good` in the tree of their commit); one made before the range (a commit
    not ``in_range``, when given) counts as good; a path with no good version is judged from
    the first version it was added with (the promises of a file start when it is committed).
    Also whether a good version (or the range's start) was found."""
    limit = state.config.max_file_bytes
    first = None
    for commit, blob, mode in versions:
        if in_range is not None and commit not in in_range:
            return blob, True
        if blob is not None:
            if state.good(CommitTree(repo, commit, limit), (path, blob, mode)):
                return blob, True
            first = blob
    return first, False


def before_head(
    repo: Repository, head: str, path: str, state: CommitState, absent: bool
) -> tuple[str | None, bool]:
    """The last good version of ``path`` before the commit being made, whose ``HEAD`` version
    is not good, or ``absent``, and whether the look-back was cut short before it found one.
    A path absent from HEAD may never have existed: its look-back is bounded in commits."""
    versions = repo.versions(head, path, LOOK_BACK, within=LOOK_BACK_COMMITS if absent else None)
    found, good = look_back(repo, path, versions, state)
    return found, not good and len(versions) >= LOOK_BACK


def cut_short(path: str) -> Finding:
    """CC012 for the commit being made: no good version of ``path`` within the look-back."""
    return cc.LOOK_BACK_CUT.finding(
        path,
        f"expected a good version of the file among the last {LOOK_BACK} commits that changed "
        "it, found none: the history rules compared this commit's version with nothing",
        commit=STAGED,
    )
