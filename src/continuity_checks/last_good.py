"""The last good version of a claimed path: what a cross-commit rule compares a file with.

A version is good when it is a regular file that file mode finds no error at
(:func:`~continuity_checks.commit_state.good`). ``verify`` remembers, walking a range, the last
good version before each version that was not good (:func:`remember`, :func:`judged_from`); the
commit hook (:func:`before_head`) and a shard's first commits (:func:`look_back`) look back
through git's history for it instead, a bounded number of versions.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING

from continuity_checks.commit_state import SYMLINK
from continuity_checks.core import core_rules as cc
from continuity_checks.core.family import STAGED
from continuity_checks.core.findings import Finding
from continuity_checks.core.snapshot import CommitTree, Snapshot

if TYPE_CHECKING:
    from continuity_checks.core.git.log import RawChange
    from continuity_checks.core.git.repository import Repository

#: How many earlier versions of a file the commit hook looks through for its last good one,
#: and how many commits back it looks for a file absent from HEAD (deleted before, or new).
LOOK_BACK = 20
LOOK_BACK_COMMITS = 50
#: How many versions of one path a shard looks through for the last good one before it.
SHARD_LOOK_BACK = 1000

#: The last good version of a claimed path whose version at some commit was not good:
#: ``(path, that version's blob or None) -> the last good blob before it, or None``.
Remembered = dict[tuple[str, "str | None"], "str | None"]
#: Whether a version ``(path, blob or None, git mode)`` is good in a tree.
IsGood = Callable[[Snapshot, tuple[str, "str | None", str]], bool]


def judged_from(remembered: Remembered, change: RawChange) -> tuple[str | None, str]:
    """The version a claimed change is judged from, and its status against it: the parent's
    version, or the last good one before it when the parent's was not good."""
    key = (change.path, change.old_blob)
    if key not in remembered:
        return change.old_blob, change.status
    old = remembered[key]
    status = "A" if old is None else ("D" if change.new_blob is None else "M")
    return old, status


def remember(
    remembered: Remembered,
    raw_changes: Sequence[RawChange],
    broken: Collection[str],
    owners: Callable[[str], Sequence[tuple[int, str]]],
) -> None:
    """After a commit: each claimed path it left without a good version (deleted, a symlink, or
    holding an error) keeps the last good version it had before. A path that never had one
    (added broken) is judged from its first version: the history rules' promises (a frozen
    file's bytes) start when it is committed, not when it is first good."""
    for c in raw_changes:
        if c.new_blob is not None and c.new_mode != SYMLINK and c.path not in broken:
            continue
        if owners(c.path):
            good = remembered.get((c.path, c.old_blob), c.old_blob)
            if good is not None or c.new_blob is None:
                remembered[(c.path, c.new_blob)] = good


def look_back(
    versions: Sequence[tuple[str, str | None, str]],
    tree_of: Callable[[str], Snapshot],
    is_good: Callable[[Snapshot, str, str], bool],
    in_range: Callable[[str], bool] = lambda commit: True,
) -> tuple[str | None, bool]:
    """The version a change is judged from, when the version before it is not good, as
    ``verify`` remembers it: the newest good one among ``versions`` (``(commit, blob or None,
    git mode)``, newest first, as
    :meth:`~continuity_checks.core.git.repository.Repository.versions` gives
    them, judged by ``is_good(tree, blob, mode)``); one made before the range (not
    ``in_range``) counts as good; a path with no good version is judged from the first version
    it was added with (the promises of a file start when it is committed). Also whether a good
    version (or the range's start) was found."""
    first = None
    for commit, blob, mode in versions:
        if not in_range(commit):
            return blob, True
        if blob is not None:
            if is_good(tree_of(commit), blob, mode):
                return blob, True
            first = blob
    return first, False


def before_head(
    repo: Repository, head: str, path: str, is_good: IsGood, limit: int, absent: bool
) -> tuple[str | None, bool]:
    """The last good version of ``path`` before the commit being made, whose ``HEAD`` version
    is not good, or ``absent``, and whether the look-back was cut short before it found one.
    A path absent from HEAD may never have existed: its look-back is bounded in commits."""
    versions = repo.versions(head, path, LOOK_BACK, within=LOOK_BACK_COMMITS if absent else None)
    found, good = look_back(
        versions,
        lambda sha: CommitTree(repo, sha, limit),
        lambda tree, blob, mode: is_good(tree, (path, blob, mode)),
    )
    return found, not good and len(versions) >= LOOK_BACK


def cut_short(path: str) -> Finding:
    """CC012 for the commit being made: no good version of ``path`` within the look-back."""
    return cc.LOOK_BACK_CUT.finding(
        path,
        f"expected a good version of the file among the last {LOOK_BACK} commits that changed "
        "it, found none: the history rules compared this commit's version with nothing",
        commit=STAGED,
    )
