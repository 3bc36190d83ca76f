"""What the families find after the last commit of a run (history mode, or the commit being
made): :meth:`~continuity_checks.core.family.Family.finish_commits`, with where files came
from before the run."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from continuity_checks.core.family import Commit, Declaration, Family
from continuity_checks.core.findings import Finding
from continuity_checks.core.git.log import LogRequest
from continuity_checks.core.snapshot import CommitTree
from continuity_checks.engine.mending import rewrite_hint

if TYPE_CHECKING:
    from continuity_checks.core.git import Repository


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
