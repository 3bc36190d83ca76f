"""The deltas family as the engine drives it: what it claims, and its three kinds of checks."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import TYPE_CHECKING

from continuity_checks.checks.deltas import DECLARATION, files
from continuity_checks.checks.deltas import rules as rules  # registers the DL rules
from continuity_checks.checks.deltas.naming import LOCK_NAME, SourceSlugs
from continuity_checks.checks.deltas.owners import normal
from continuity_checks.core import symlinks
from continuity_checks.core.config import Config
from continuity_checks.core.family import (
    Claimed,
    Commit,
    CommitContext,
    Family,
    FileInput,
    Names,
    Origins,
    TreeCheck,
    option,
    options,
    strings_option,
)
from continuity_checks.core.findings import Finding
from continuity_checks.core.globs import Globs
from continuity_checks.core.snapshot import Snapshot

if TYPE_CHECKING:
    from continuity_checks.checks.deltas.depends import Dependents
    from continuity_checks.checks.deltas.history import HistoryChecks
    from continuity_checks.core.git.log import RawChange


class DeltasFamily(Family):
    def __init__(self, config: Config) -> None:
        options(config, DECLARATION)
        self.legacy_mode: str = option(
            config, "deltas", "legacy", "read-only", ("read-only", "append-only")
        )
        self.ownership: str = option(
            config,
            "deltas",
            "ownership",
            "trailer-or-single",
            ("trailer-or-single", "trailer", "off"),
        )
        self.allow_delete: bool = option(config, "deltas", "allow-delete", False, (False, True))
        self.legacy_files = Globs(
            strings_option(config, "deltas", "legacy-files", (), "glob strings")
        )
        identity: str = option(
            config,
            "deltas",
            "owner-identity",
            "author-email",
            ("author-email", "committer-email", "off"),
        )
        #: the commit field whose value owns a delta (DL211), None when ownership by identity
        #: is off (also with ownership = "off")
        self.owner_field: str | None = (
            None if identity == "off" or self.ownership == "off" else identity.replace("-", "_")
        )
        allowed = strings_option(
            config, "deltas", "owner-allowed", (), "identities (email addresses)"
        )
        #: identities that may change any delta, compared as owners are (see owners.normal)
        self.owner_allowed = frozenset(normal(a) for a in allowed)
        self.max_depth = config.max_depth
        self._history: HistoryChecks | None = None  # history mode only, made on first use
        self._exclude = Globs(config.exclude)
        self._dependents: Dependents | None = None  # history mode only, made on first use
        self._slugs = SourceSlugs()  # the sources' slugs of the file names checked

    def claims(self, path: str) -> str | None:
        head, _, name = path.rpartition("/")
        if head == ".deltalayer/changes" or head.endswith("/.deltalayer/changes"):
            if name.endswith(".json"):
                return "delta"
            if name.endswith(".tmp"):
                return "temp"
        elif name == "changes.jsonl" and (head == ".deltalayer" or head.endswith("/.deltalayer")):
            return "legacy"
        if self.legacy_files.match(path):
            return "legacy"
        if name.endswith(".json") and ".deltalayer/changes/" in path and _STORE in f"/{head}/":
            return "nested"  # under changes/, in a subdirectory no reader enters (DL114)
        if name == "AGENTS.md":
            return "agents"
        return None

    def claimable(self, directory: str) -> Names | None:
        if self.legacy_files:
            return None  # globs over whole paths: any name may match
        framed = f"/{directory}/"
        # the legacy history in .deltalayer/; deltas and temp files in the store, or below it
        # (nested deltas)
        legacy = ("changes.jsonl",) if framed.endswith("/.deltalayer/") else ()
        endings = (".json", ".tmp") if _STORE in framed else ()
        return Names(frozenset(("AGENTS.md", *legacy)), endings)

    def unread(self, path: str) -> str | None:
        """A file under a ``.deltalayer/`` directory that is not a delta, a temp file, the
        legacy history or the store's lock: no reader of DeltaLayer's reads it."""
        if ".deltalayer/" not in path or "/.deltalayer/" not in f"/{path}":
            return None
        head, _, name = path.rpartition("/")
        if name == LOCK_NAME and (head == ".deltalayer" or head.endswith("/.deltalayer")):
            return None  # the advisory lock of `continuity delta`, git-ignored by `delta init`
        return "in .deltalayer/, where DeltaLayer reads only changes/*.json and changes.jsonl"

    def check_file(self, file: FileInput) -> Iterable[Finding]:
        # in history mode, a version (and a time) the history checks parsed is not parsed again
        history = self._history
        if history is None:
            return files.check_file(file, self.max_depth, None, self._slugs)
        return files.check_file(
            file, self.max_depth, history.parsed.load, self._slugs, history.times.parse
        )

    def check_tree(self, snapshot: Snapshot, claimed: list[Claimed]) -> Iterable[Finding]:
        return files.check_tree(snapshot, claimed)

    def before_workers(self, kinds: Collection[str]) -> None:
        files.compile_schemas(kinds)  # once, inherited by every worker

    def tree(self, snapshot: Snapshot) -> TreeCheck:
        return files.DeltasTree(snapshot)

    def tree_reads_bytes(self) -> bool:
        """The tree check reads which deltas were claimed and whether their twins, PROJECT.md
        and AGENTS.md exist: never a file's bytes."""
        return False

    def tree_may_find(self, path: str, kind: str, tree: Snapshot) -> bool:
        """A delta gives the tree check its twin (DL111) and its project's PROJECT.md and
        AGENTS.md to look for: nothing when the twin is absent and both are there."""
        if kind != "delta":
            return True
        return files.tree_may_find(path, tree)

    def may_depend(self, path: str, edited: bool) -> bool:
        # most paths of a commit: no delta check reads them; and the checks of other files
        # read only whether a delta, PROJECT.md or AGENTS.md exists, never their bytes
        return not edited and (".deltalayer" in path or path.endswith(("PROJECT.md", "AGENTS.md")))

    def dependents(self, path: str, tree: Snapshot, edited: bool) -> Iterable[str]:
        return self._depending(path, tree, None, edited)

    def dependents_between(
        self, path: str, tree: Snapshot, other: Snapshot, edited: bool
    ) -> Iterable[str]:
        """As :meth:`dependents`, but ``AGENTS.md`` only where ``.deltalayer/`` beside it is a
        directory in one of the two trees and not in the other: its checks read nothing else
        the change can alter."""
        return self._depending(path, tree, other, edited)

    def _depending(
        self, path: str, tree: Snapshot, other: Snapshot | None, edited: bool
    ) -> Iterable[str]:
        if not self.may_depend(path, edited):
            return ()
        if self._dependents is None:
            from continuity_checks.checks.deltas.depends import Dependents

            self._dependents = Dependents(self._exclude)
        return self._dependents(path, tree, other)

    def commit_needed(self, commit: Commit, paths: Sequence[RawChange], symlinked: bool) -> bool:
        """Every commit is asked for only for the symlinks it leaves: one that leaves none and
        changes none of the family's files gives the history rules nothing."""
        return symlinked

    def check_commit(self, context: CommitContext) -> Iterable[Finding]:
        # called for every commit (every_commit): a store directory committed as a symlink is
        # a path no family claims (DL212); the deltas and legacy history are judged below
        links = symlinks.committed(context, store_directory)
        findings = [symlinks.finding(rules.SYMLINK, link, context) for link in links]
        context = symlinks.beneath(context, links)
        if not context.changes:
            return findings
        if self._history is None:
            # imported here: the commit hook (file mode) never needs the history checks
            from continuity_checks.checks.deltas.history import HistoryChecks, HistoryOptions

            options = HistoryOptions(
                ownership=self.ownership,
                legacy_mode=self.legacy_mode,
                allow_delete=self.allow_delete,
                max_depth=self.max_depth,
                owner_field=self.owner_field,
                owner_allowed=self.owner_allowed,
            )
            self._history = HistoryChecks(options)
        findings.extend(self._history.check_commit(context))
        return findings

    def finish_commits(self, origins: Origins) -> Iterable[tuple[Commit, Finding]]:
        if self._history is None:
            return ()
        return self._history.finish(origins)


#: the store's directory of deltas, framed by ``/`` on both sides
_STORE = "/.deltalayer/changes/"


def store_directory(path: str) -> str | None:
    """``"a directory"`` when ``path`` is a store's ``.deltalayer`` or its ``changes``
    (DL212 when committed as a symlink), else None."""
    names = path.rsplit("/", 2)
    if names[-1] == ".deltalayer" or (
        len(names) > 1 and names[-2] == ".deltalayer" and names[-1] == "changes"
    ):
        return "a directory"
    return None
