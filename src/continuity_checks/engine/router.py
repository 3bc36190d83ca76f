"""The commit router: which families claim a path (:class:`Owners`), which family gets which
change of a commit, each from the version it is judged from (the path's last good one), and the
families' history findings on the commit (:class:`Router`), and after the last commit of a run
(:func:`finish`). One router for the commit being made (``check --staged``) and for each
commit of a range (``verify``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from continuity_checks.core.family import Change, Commit, CommitContext, Declaration, Family
from continuity_checks.core.findings import Finding
from continuity_checks.core.git.log import GITLINK, LogRequest
from continuity_checks.core.globs import Globs
from continuity_checks.core.snapshot import CommitTree, Snapshot
from continuity_checks.core.symlinks import SYMLINK
from continuity_checks.engine.mending import rewrite_hint

if TYPE_CHECKING:
    from typing import Protocol

    from continuity_checks.core.git.log import RawChange
    from continuity_checks.core.git.repository import Repository

    # what the router asks of its callers' objects, for the type checker alone: nothing is
    # checked against them at run time, and a Protocol class costs the hook to make

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


#: The families that claim a path: (index of the family in the run, kind) each.
Claimants = tuple[tuple[int, str], ...]
#: Reads a blob by id: None when it is larger than the size limit.
Read = Callable[[str], "bytes | None"]

#: Paths whose owners are kept, at most: the answers are dropped all at once past it.
KEPT = 1 << 16


class Owners:
    """The families of a run that claim each path, none for a path the configuration excludes;
    asked of the families once per path (up to :data:`KEPT` paths), not once per commit."""

    def __init__(self, families: Sequence[Family], exclude: Globs) -> None:
        self._families = families
        self._exclude = exclude
        self._known: dict[str, list[tuple[int, str]]] = {}

    def of(self, path: str) -> list[tuple[int, str]]:
        """``(index of the family, kind)`` for each family that claims ``path``."""
        found = self._known.get(path)
        if found is None:
            found = []
            if not self._exclude.match(path):
                found = [
                    (index, kind)
                    for index, family in enumerate(self._families)
                    if (kind := family.claims(path)) is not None
                ]
            if len(self._known) >= KEPT:
                self._known.clear()
            self._known[path] = found
        return found


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
        each family gets its claimed changes, each from the version ``start`` says it is judged
        from, when it has some or asks for every commit, with the commit's ``trees``."""
        owners, read, gitlinks = self.owners.of, self.read, self.gitlinks
        changes: dict[int, list[Change]] = {}  # by family, for those with claimed changes
        for c in raw_changes:
            found = owners(c.path)
            if not found:
                continue
            gitlink = GITLINK in (c.old_mode, c.new_mode)
            old, status = start.judged_from(c)
            for index, kind in found:
                if not gitlink or gitlinks[index]:
                    change = Change(c.path, kind, status, old, c.new_blob, read, c.new_mode)
                    if index in changes:
                        changes[index].append(change)
                    else:
                        changes[index] = [change]
        made: tuple[Snapshot, Snapshot] | None = None
        others: tuple[Snapshot, ...] = ()
        symlinked: bool | None = None  # whether the commit leaves any path a symlink
        families = self.families
        for index in wanted:
            claimed = changes.get(index)
            if claimed is None:
                if not self.every_commit[index]:
                    continue
                if symlinked is None:
                    symlinked = any(c.new_mode == SYMLINK for c in raw_changes)
                if not families[index].commit_needed(commit, raw_changes, symlinked):
                    continue
                claimed = []
            if made is None:
                made = trees.of(commit, raw_changes)
                others = trees.others(commit) if len(commit.parents) > 1 else ()
            context = CommitContext(commit, claimed, *made, raw_changes, others)
            for finding in families[index].check_commit(context):
                out.append(rewrite_hint(finding, commit, pushed=self.pushed))


def finish(
    repo: Repository,
    chosen: Sequence[Declaration],
    families: Sequence[Family],
    before: Sequence[str],
    earlier: Sequence[str] = (),
    pushed: bool = False,
) -> list[Finding]:
    """The findings families make after the last commit (``finish_commits``), with where
    files came from before the run (:class:`Origins`, one per family); ``pushed`` as for
    :func:`rewrite_hint`."""
    bases = [CommitTree(repo, sha, 0) for sha in before if earlier]
    findings: list[Finding] = []
    for declaration, family in zip(chosen, families, strict=True):
        origins = Origins(repo, LogRequest(fields=declaration.fields), before, earlier, bases)
        for commit, finding in family.finish_commits(origins):
            findings.append(rewrite_hint(finding, commit, pushed=pushed))
    return findings


class Origins:
    """Where files came from before the run, for one family
    (:data:`~continuity_checks.core.family.Origins`): one ``git log`` for the paths asked, and
    for a shard one more, first, over the range's ``earlier`` commits alone, in the order the
    whole run walked them. There a path's first addition is its creation when the range's base
    (``bases``: the trees of ``before``) lacks it: the whole run judged a later one, after a
    deletion, from the version before the deletion (the last good version), as a change of
    that delta. A path the base holds was created before the range, and an addition inside it
    is such a change too."""

    def __init__(
        self,
        repo: Repository,
        request: LogRequest,
        before: Sequence[str],
        earlier: Sequence[str],
        bases: Sequence[CommitTree],
    ) -> None:
        self.repo = repo
        self.request = request
        self.before = before
        self.earlier = earlier
        self.bases = bases

    def __call__(self, paths: Iterable[str]) -> dict[str, Commit]:
        repo, request, earlier = self.repo, self.request, self.earlier
        wanted = list(paths)
        found = repo.added_by(earlier, wanted, request, walk=False) if earlier else {}
        for path in [p for p in found if any(tree.exists(p) for tree in self.bases)]:
            del found[path]
        rest = [p for p in wanted if p not in found]
        if rest and self.before:
            found.update(repo.added_by(self.before, rest, request))
        return found
