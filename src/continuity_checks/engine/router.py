"""The commit router: which family gets which change of a commit, each from the version it is
judged from (the path's last good one), and the families' history findings on the commit. One
router for the commit being made (``check --staged``) and for each commit of a range
(``verify``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from continuity_checks.core.family import Change, Commit, CommitContext, Declaration, Family
from continuity_checks.core.findings import Finding
from continuity_checks.core.git.log import GITLINK
from continuity_checks.core.snapshot import Snapshot
from continuity_checks.engine.commit_state import Read
from continuity_checks.engine.mending import rewrite_hint
from continuity_checks.engine.owners import Owners

if TYPE_CHECKING:
    from continuity_checks.core.git import RawChange


class JudgedFrom(Protocol):
    """Where a claimed change starts: the version it is judged from, and its status against
    that version (the parent's version, or the last good one before it)."""

    def judged_from(self, change: RawChange) -> tuple[str | None, str]: ...


class CommitTrees(Protocol):
    """The trees a commit is judged by, made when a family first needs them."""

    def of(self, commit: Commit, raw_changes: Sequence[RawChange]) -> tuple[Snapshot, Snapshot]:
        """The first parent's tree and the commit's own."""

    def others(self, commit: Commit) -> tuple[Snapshot, ...]:
        """The trees of a merge's other parents (none for any other commit)."""


class Router:
    """Routes the changes of commits to the families of one run (``chosen``, built as
    ``families``): a family gets the changes of the paths it claims (``owners``), a submodule
    entry only when its declaration asks for them, and each commit when it asks for every one.
    ``read`` reads a version's bytes by blob id; ``pushed`` as for :func:`rewrite_hint`."""

    def __init__(
        self,
        chosen: Sequence[Declaration],
        families: Sequence[Family],
        owners: Owners,
        read: Read,
        pushed: bool = False,
    ) -> None:
        self.families = families
        self.owners = owners
        self.read = read
        self.pushed = pushed
        self.gitlinks = [d.gitlinks for d in chosen]
        self.every_commit = [d.every_commit for d in chosen]

    def changes(self, raw_changes: Sequence[RawChange], start: JudgedFrom) -> list[list[Change]]:
        """Each family's claimed changes, each from the version ``start`` says it is judged
        from."""
        owners, read, gitlinks = self.owners.of, self.read, self.gitlinks
        changes: list[list[Change]] = [[] for _ in self.families]
        for c in raw_changes:
            found = owners(c.path)
            if not found:
                continue
            gitlink = GITLINK in (c.old_mode, c.new_mode)
            old, status = start.judged_from(c)
            for index, kind in found:
                if not gitlink or gitlinks[index]:
                    changes[index].append(
                        Change(c.path, kind, status, old, c.new_blob, read, c.new_mode)
                    )
        return changes

    def judge(
        self,
        commit: Commit,
        raw_changes: Sequence[RawChange],
        start: JudgedFrom,
        trees: CommitTrees,
        wanted: Sequence[int],
        out: list[Finding],
    ) -> None:
        """The history findings of the families ``wanted`` on one commit, added to ``out``:
        each family that has claimed changes in it, or asks for every commit, is handed them
        with the commit's ``trees``."""
        changes = self.changes(raw_changes, start)
        made: tuple[Snapshot, Snapshot] | None = None
        others: tuple[Snapshot, ...] = ()
        for index in wanted:
            if not (changes[index] or self.every_commit[index]):
                continue
            if made is None:
                made = trees.of(commit, raw_changes)
                others = trees.others(commit)
            context = CommitContext(commit, changes[index], *made, raw_changes, others)
            for finding in self.families[index].check_commit(context):
                out.append(rewrite_hint(finding, commit, pushed=self.pushed))
