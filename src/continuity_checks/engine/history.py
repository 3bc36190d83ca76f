"""History mode (``verify``): every commit of a range (or of a shard of it), oldest first, each
judged from its first parent's tree and each claimed path's last good version."""

from __future__ import annotations

import contextlib
import gc
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from continuity_checks import checks
from continuity_checks.core import core_rules as cc
from continuity_checks.core.config import Config, apply_config
from continuity_checks.core.family import Commit
from continuity_checks.core.findings import Finding, Report
from continuity_checks.core.git.log import LogRequest
from continuity_checks.core.globs import Globs
from continuity_checks.core.lookups import Alike, Known
from continuity_checks.core.snapshot import CommitTree
from continuity_checks.engine.commit_order import CommitOrder
from continuity_checks.engine.commit_state import CommitState
from continuity_checks.engine.config_changes import base_config, config_changes, judging_files
from continuity_checks.engine.last_good import SHARD_LOOK_BACK, Remembered, look_back
from continuity_checks.engine.router import Owners, Router, finish

if TYPE_CHECKING:
    from continuity_checks.core.baseline import BaselineSource
    from continuity_checks.core.git.log import RawChange
    from continuity_checks.core.git.repository import Base, Repository
    from continuity_checks.core.shard import Shard
    from continuity_checks.engine.file_mode import Progress

_YOUNG_COLLECTION = 10_000  # allocations between young collections during the walk (default 700)


def verify(
    root: Path,
    config: Config,
    revision_range: str,
    *,
    only: tuple[str, ...] | None = None,
    config_at_base: bool = False,
    shard: Shard | None = None,
    baseline: BaselineSource | None = None,
    progress: Progress | None = None,
    pushed: bool = False,
) -> Report:
    """History mode: check every commit of ``BASE..HEAD``, oldest first. Raises ``GitError``
    (exit 2) for a shallow clone, an unknown ref or a directory that is not a repository.

    Each family gets the commits that change its paths (every commit, if it declares so), with
    the commit fields and trailers it declared, and the trees on both sides of the commit. A
    version larger than ``limits.max-file-bytes`` is not read into memory: the family gets None
    for it, and the run reports CC008 once per blob, at the first commit that needed it.

    With ``config_at_base``, the range is judged by the configuration at its base commit, or by
    the defaults when it has no base (see :func:`base_config`), not by ``config``; a commit of
    the range that changes the configuration is CC011.

    With ``shard``, only that slice of the range's commits is checked (see :class:`Walk`).

    ``baseline``: the findings the ``verify`` section of that baseline knows are hidden and
    counted (read at the base like the configuration, when the source says so; raises
    BaselineError for a file that is not a baseline). ``progress`` is told the commits walked
    (and their number: a shard's, or the range's, counted by one more git process only when
    progress is asked for). ``pushed``: the range's commits are already pushed (a run in CI),
    which changes how the hints say to mend them (:func:`rewrite_hint`).
    """
    from continuity_checks.core.git.repository import Repository

    root = Path(os.path.abspath(root))
    with Repository(root, config.max_file_bytes, revision_range=revision_range) as repo:
        base, head = repo.resolve_range(revision_range)
        if config_at_base:
            config = base_config(repo, base)
            repo.objects.max_bytes = config.max_file_bytes
        known, read = baseline.read(repo, base) if baseline is not None else (None, None)
        walk = Walk(repo, config, only, pushed)
        report = walk.run(base, head, revision_range, shard, progress)
    if read is not None:
        report.notes.append(read)  # which baseline judged the range, or that none did
    if known is not None:
        from continuity_checks.core.baseline import hide

        hide(report, known.entries("verify"))
    return report


class Walk:
    """One run over the commits of a range, or of a shard of it.

    A shard is checked as the whole run would check its commits. Each commit is judged against
    its own first parent's tree, read from the object store, whichever shard holds the parent;
    so a family that compares a commit with its parent (a delta's previous version, a prune
    boundary, the pins of the listings, built again from the parent's tree at a shard's first
    commit) needs nothing from the other shards. A family whose judgement also depends on
    commits before the parent (``Declaration.history_state``) first replays the range's
    commits before the shard, its findings dropped, until it says it no longer needs them.
    """

    def __init__(
        self, repo: Repository, config: Config, only: tuple[str, ...] | None, pushed: bool
    ) -> None:
        self.repo = repo
        self.config = config
        self.pushed = pushed
        self.chosen = chosen = checks.selected(config, only)
        self.families = families = checks.build(config, chosen)
        self.request = LogRequest(
            trailers=tuple(dict.fromkeys(key for d in chosen for key in d.trailers)),
            fields=frozenset().union(*(d.fields for d in chosen)),
            gitlinks=any(d.gitlinks for d in chosen),
        )
        self.owners = Owners(families, Globs(config.exclude))
        self.blobs = Blobs(repo, config.max_file_bytes)
        self.state = CommitState(families, self.owners, config, self.blobs.read)
        self.router = Router(chosen, families, self.owners, self.blobs.read, pushed)
        self.trees = _Trees(repo, config.max_file_bytes)
        # the last good version of each claimed path whose version at some commit was not good
        self.remembered = Remembered()
        self.findings: list[Finding] = []
        self.earlier: list[str] = []  # a shard's commits before it, for what families look up
        self._inherited: set[str] = set()  # the claimed paths a shard has met: see inherit()
        self._deleted: frozenset[str] | None = None  # what the earlier shards delete, if asked
        self._in_range: frozenset[str] | None = None  # the earlier shards' commits, if asked

    def run(
        self,
        base: Base,
        head: str,
        revision_range: str,
        shard: Shard | None,
        progress: Progress | None,
    ) -> Report:
        """Walks the range (or ``shard`` of it) and reports what its commits break."""
        repo, config, findings = self.repo, self.config, self.findings
        report = Report(
            unit="commit", max_per_file=config.max_findings_per_file, max_total=config.max_findings
        )
        judging = judging_files()
        judge, remembered, trees, blobs = self.router.judge, self.remembered, self.trees, self.blobs
        everyone = range(len(self.families))
        # the commits of the range in order, 20 bytes each (32 in a SHA-256 repository): what
        # the report needs to sort findings by commit, without a string and a dict entry per
        # commit (about 160 bytes) for a range of 100,000
        order = bytearray()
        with _few_collections():
            only_commits = None
            if shard is not None:
                only_commits = self.shard(base, head, shard, revision_range, report)
            if progress is not None:
                total = len(only_commits) if only_commits is not None else repo.count(base, head)
                progress(0, total)
            # the walk fetches ahead the blobs of the paths some family claims
            walked = repo.walk(
                base, head, prefetch=self.owners.of, request=self.request, only=only_commits
            )
            for commit, raw_changes in walked:
                report.commits += 1
                order += bytes.fromhex(commit.sha)
                if progress is not None:
                    progress(report.commits, None)
                for c in raw_changes:
                    if c.path in judging:
                        findings.extend(
                            config_changes(repo, raw_changes, commit.sha, config.source)
                        )
                        break
                if self.earlier:
                    self.inherit(commit, raw_changes)
                judge(commit, raw_changes, remembered, trees, everyone, findings)
                findings += blobs.oversized(raw_changes, commit.sha)
                self.leaves(commit, raw_changes)
                blobs.forget()  # what only the state read: it reported them itself
        findings.extend(self.finish(base, head, shard))
        report.commit_order = CommitOrder(
            order, len(head) // 2, {f.commit for f in findings if f.commit}
        )
        if report.commits == 0 and shard is None:
            report.notes.append(f"no commits in {revision_range}: nothing to verify")
        report.findings, report.suppressed = apply_config(config, findings)
        return report

    def shard(
        self, base: Base, head: str, shard: Shard, revision_range: str, report: Report
    ) -> list[str]:
        """The commits of ``shard``, named in a note of ``report``; the range's commits before
        it are replayed first to the families whose judgement depends on them."""
        ids = self.repo.commits(base, head)
        start, end = shard.bounds(len(ids))
        report.notes.append(
            f"shard {shard} of {revision_range}: commits {start + 1} to {end} of {len(ids)}"
            if end > start
            else f"shard {shard} of {revision_range}: no commits ({len(ids)} in the range)"
        )
        self.earlier = ids[:start]
        self.replay()
        self.blobs.forget()  # the earlier shards report what the replay could not read

        return ids[start:end]

    def replay(self) -> None:
        """Before a shard: the range's earlier commits, for the families whose judgement
        depends on more than the parent's tree, their findings dropped (the earlier shards
        report them). Each such family may end its replay early: once its
        :meth:`~continuity_checks.core.family.Family.history_needed` is false (a sessions
        family that found a project repository, not a session repository), the commits left
        cannot change how it judges the shard."""
        families = self.families
        stateful = [i for i, d in enumerate(self.chosen) if d.history_state]
        if not self.earlier or not stateful:
            return
        walked = self.repo.walk(None, "", request=self.request, only=self.earlier)
        try:
            for commit, raw_changes in walked:
                # the earlier shards report these findings
                self.router.judge(commit, raw_changes, self.remembered, self.trees, stateful, [])
                stateful = [i for i in stateful if families[i].history_needed()]
                if not stateful:
                    break
        finally:
            walked.close()  # ends git log when the replay stops early

    def inherit(self, commit: Commit, raw_changes: Sequence[RawChange]) -> None:
        """At a shard's first change of each claimed path whose version from before the shard
        is not good: the last good version the whole run would remember, looked for among the
        versions the earlier shards' commits made (one from before the range counts as good,
        as the whole run takes it)."""
        repo, inherited = self.repo, self._inherited
        for c in raw_changes:
            if c.path in inherited or not self.owners.of(c.path):
                continue
            inherited.add(c.path)
            if c.old_blob is None:
                if self._deleted is None:
                    self._deleted = repo.deleted_in(self.earlier)
                if c.path not in self._deleted:
                    continue  # an addition of a path no earlier shard deleted: a creation
            elif self.state.good(
                self.trees.of(commit, raw_changes)[0], (c.path, c.old_blob, c.old_mode)
            ):
                continue
            if self._in_range is None:
                self._in_range = frozenset(self.earlier)
            versions = repo.versions(commit.parents[0], c.path, SHARD_LOOK_BACK)
            self.remembered.versions[(c.path, c.old_blob)] = look_back(
                repo, c.path, versions, self.state, self._in_range
            )[0]

    def leaves(self, commit: Commit, raw_changes: Sequence[RawChange]) -> None:
        """The errors the commit leaves in its tree, added to the findings (each once: not
        where a history rule already reported the same rule at the same path), and what it
        leaves for the last good versions."""
        left = self.state.leaves(self.trees.of(commit, raw_changes), raw_changes)
        if left.findings:
            self.state.report(self.findings, left.findings, commit, self.pushed)
        self.remembered.remember(raw_changes, left.broken, self.owners)

    def finish(self, base: Base, head: str, shard: Shard | None) -> list[Finding]:
        """What the families find after the last commit, with what came before the range (or
        the shard): the base (every remote-tracking tip of a new branch), or nothing (the
        range is all of history, so the head); and a shard's earlier commits, where the whole
        run would have seen a delta created. A shard of all of history has everything before
        it in its earlier commits: the head would also reach the later shards' commits, and a
        delta created again there would pass for the creator of an earlier one."""
        if isinstance(base, str):
            before = [base]
        elif base or shard is None:
            before = list(base or (head,))
        else:
            before = []
        return finish(self.repo, self.chosen, self.families, before, self.earlier, self.pushed)


class _Trees:
    """The trees of the commit a walk is at: its first parent's and its own, made once per
    commit; its tree takes along what its parent's tree answered, when the walk was there
    last (:class:`~continuity_checks.core.lookups.Known`)."""

    def __init__(self, repo: Repository, limit: int) -> None:
        self.repo = repo
        self.limit = limit
        self.known = Known()  # what exists in the tree of the commit walked last
        self.at: str | None = None  # the commit walked now
        self.made: tuple[CommitTree, CommitTree] | None = None  # and its trees

    def of(self, commit: Commit, raw_changes: Sequence[RawChange]) -> tuple[CommitTree, CommitTree]:
        made = self.made
        if made is None or self.at != commit.sha:
            repo, limit = self.repo, self.limit
            parent = commit.parents[0] if commit.parents else None
            changes: list[tuple[str, str, str]] = []
            # the directories that hold a path the commit adds or modifies: in its tree, each
            # is a directory, and none lies under a symlink
            holding: dict[str, bool] = {}
            added = False  # whether the commit adds a path
            for c in raw_changes:
                changes.append((c.path, c.old_mode, c.new_mode))
                if c.new_mode:
                    added = added or not c.old_mode
                    directory = c.path.rpartition("/")[0]
                    while directory and directory not in holding:
                        holding[directory] = True
                        directory = directory.rpartition("/")[0]
            # an addition may make a directory: what the parent's tree said of those holding
            # one goes to the parent's tree before the child's answers replace it
            known = self.known.before(parent, holding) if added else None
            carried = self.known.after(commit.sha, parent, changes)
            carried.dirs.update(holding)
            alike = Alike(changes)
            made = (
                CommitTree(repo, parent, limit, known, alike),
                CommitTree(repo, commit.sha, limit, carried, alike),
            )
            self.at, self.made = commit.sha, made
        return made

    def others(self, commit: Commit) -> tuple[CommitTree, ...]:
        return tuple(CommitTree(self.repo, p, self.limit) for p in commit.parents[1:])


class Blobs:
    """Reads the blobs of one walk by id (:meth:`read`: None for a version larger than
    ``limit``, which is not read into memory), and reports each such blob a family asked for,
    once per run (:meth:`oversized`). The last :data:`KEPT` blobs read are kept: the history
    rules and the state check read a commit's new versions one after the other."""

    KEPT = 8

    def __init__(self, repo: Repository, limit: int) -> None:
        self._repo = repo
        self._limit = limit
        self._too_large: list[str] = []  # asked for since the last oversized() or forget()
        self._reported: set[str] = set()
        self._last: dict[str, bytes] = {}  # the blobs read last, by id (an id names its bytes)

    def read(self, sha: str) -> bytes | None:
        last = self._last
        data = last.get(sha)
        if data is not None:
            return data
        data = self._repo.read_blob(sha)
        if data is None:
            self._too_large.append(sha)
            return None
        if len(last) >= self.KEPT:
            del last[next(iter(last))]
        last[sha] = data
        return data

    def oversized(self, changes: Sequence[RawChange], commit: str) -> list[Finding]:
        """CC008 for each blob over the limit asked for since the last call (or
        :meth:`forget`) and not reported before, at the path of ``changes`` that holds it; they
        are then forgotten."""
        if not self._too_large:
            return []
        sizes = self._repo.oversized
        findings = []
        for sha in dict.fromkeys(self._too_large):
            if sha in self._reported:
                continue
            self._reported.add(sha)
            for c in changes:
                if sha in (c.old_blob, c.new_blob):
                    version = "new" if sha == c.new_blob else "old"
                    findings.append(
                        cc.TOO_LARGE.finding(
                            c.path,
                            f"expected at most {self._limit} bytes, found {sizes[sha]} "
                            f"in the {version} version (not read)",
                            commit=commit,
                        )
                    )
                    break
        self._too_large.clear()
        return findings

    def forget(self) -> None:
        """The blobs over the limit asked for so far are not to be reported here: whoever read
        them reports them (the state checks), or another run does (a shard's replay)."""
        self._too_large.clear()


@contextlib.contextmanager
def _few_collections() -> Iterator[None]:
    """The collector's settings for the walk of a range. What exists before it (configuration,
    families, compiled schemas) lives to the end of the run: frozen, it is out of the
    collector's way, so that the many short-lived containers of the walk (parsed versions,
    commits) do not make it traverse all of it again and again. And fewer young collections,
    since the walk makes almost no reference cycles. Both are undone when the walk ends."""
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(max(thresholds[0], _YOUNG_COLLECTION), *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()
