"""The commit being made (``check --staged``): what the index changes against ``HEAD``, judged
as ``verify`` judges a commit."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from continuity_checks.core.config import Config
from continuity_checks.core.family import STAGED, Commit, Declaration, Family
from continuity_checks.core.findings import Finding
from continuity_checks.core.globs import Globs
from continuity_checks.core.lookups import Alike
from continuity_checks.core.snapshot import CommitTree, Snapshot
from continuity_checks.engine.commit_state import CommitState
from continuity_checks.engine.last_good import BeforeHead
from continuity_checks.engine.router import Owners, Router, finish

if TYPE_CHECKING:
    from continuity_checks.core.git.log import RawChange
    from continuity_checks.core.git.repository import Repository


def check_staged(
    repo: Repository,
    config: Config,
    chosen: Sequence[Declaration],
    families: Sequence[Family],
    staged: Sequence[RawChange] | None = None,
) -> list[Finding]:
    """The prospective commit (what the index changes against ``HEAD``, with the index's tree
    as the commit's and ``HEAD``'s as its parent's), judged as ``verify`` judges a commit: the
    history rules, each claimed change from the last good version of its path (looked for
    back through ``HEAD``'s history:
    :class:`~continuity_checks.engine.last_good.BeforeHead`), and the errors the commit leaves
    (:mod:`~continuity_checks.engine.commit_state`). Findings carry the commit id ``staged``.
    ``staged``: what the index changes, when the caller read it already."""
    findings: list[Finding] = []
    exclude = Globs(config.exclude)
    if staged is None:
        staged = repo.staged(any(d.gitlinks for d in chosen))
    raw_changes = [c for c in staged if not exclude.match(c.path)]
    if not raw_changes and not any(d.every_commit for d in chosen):
        return findings

    owners = Owners(families, exclude)
    state = CommitState(families, owners, config, repo.read_blob)
    head = repo.head()
    commit = _commit(repo, chosen, head)
    trees = _Trees(repo, config.max_file_bytes, head, commit, raw_changes)
    start = BeforeHead(repo, head, trees.before, state)
    everyone = range(len(families))
    judged: list[Finding] = []
    Router(chosen, families, owners, repo.read_blob).judge(
        commit, raw_changes, start, trees, everyone, judged
    )
    findings += start.cut  # the look-backs cut short, met as the changes were routed
    findings += judged
    left = state.leaves((trees.before, trees.after), raw_changes)
    state.report(findings, left.findings, commit)
    findings.extend(finish(repo, chosen, families, (head,) if head else ()))
    return findings


def _commit(repo: Repository, chosen: Sequence[Declaration], head: str | None) -> Commit:
    """The commit being made: ``HEAD`` its first parent, and a merge's other parents, with the
    commit fields the families ask for (from the identities git would commit with)."""
    fields: dict[str, str] = {}
    asked = frozenset().union(*(d.fields for d in chosen))
    if asked:
        for who, (name, email, date) in repo.identities().items():
            fields |= {f"{who}_name": name, f"{who}_email": email, f"{who}_date": date}
    # a commit that concludes a merge has MERGE_HEAD's commits as its other parents
    merging = repo.merge_heads() if head else ()
    return Commit(STAGED, (head, *merging) if head else (), "", {}, fields)


class _Trees:
    """The trees of the commit being made: ``HEAD``'s (``before``), the index's (``after``),
    and a merge's other parents'. The look-ups of a path the commit leaves alone are answered
    once for both trees, and what exists in the commit's tree by the index (git inflates no
    large tree object)."""

    def __init__(
        self,
        repo: Repository,
        limit: int,
        head: str | None,
        commit: Commit,
        raw_changes: Sequence[RawChange],
    ) -> None:
        self.repo = repo
        self.alike = Alike((c.path, c.old_mode, c.new_mode) for c in raw_changes)
        self.written = written = repo.write_tree()
        self.before: Snapshot = CommitTree(repo, head, limit, None, self.alike, self.in_head)
        self.after: Snapshot = CommitTree(repo, written, limit, None, self.alike, self.in_index)
        self._others = tuple(CommitTree(repo, p, limit) for p in commit.parents[1:])

    def in_index(self, path: str) -> bool | None:
        """Whether the commit's tree has an entry at ``path``."""
        return self.repo.index_has(path, self.written)

    def in_head(self, path: str) -> bool | None:
        """Whether ``HEAD``'s tree has an entry at ``path``, when the commit leaves it alone."""
        return self.repo.index_has(path, self.written) if self.alike.untouched(path) else None

    def of(self, commit: Commit, raw_changes: Sequence[RawChange]) -> tuple[Snapshot, Snapshot]:
        return self.before, self.after

    def others(self, commit: Commit) -> tuple[Snapshot, ...]:
        return self._others
