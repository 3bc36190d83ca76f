"""The working-state family as the engine drives it: what it claims, and its checks."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

# Only what __init__ and claims need is imported here: the commit hook builds every family to
# route the staged paths, and most commits touch none of ours. The check modules (files,
# history, state) are imported inside the calls that use them.
from continuity_checks.checks.working_state import DECLARATION
from continuity_checks.checks.working_state import rules as rules  # registers the WS rules
from continuity_checks.checks.working_state.settings import (
    DEFAULT_COMPRESS_WARN_CHARS,
    RUNTIME_KINDS,
    Settings,
)
from continuity_checks.core import symlinks
from continuity_checks.core.config import Config
from continuity_checks.core.family import (
    Claimed,
    CommitContext,
    Family,
    FileInput,
    Names,
    options,
    strings_option,
)
from continuity_checks.core.findings import Finding
from continuity_checks.core.globs import Globs
from continuity_checks.core.snapshot import Snapshot

if TYPE_CHECKING:
    from continuity_checks.checks.working_state.depends import Dependents
    from continuity_checks.checks.working_state.history import HistoryOptions
    from continuity_checks.core.family import Commit
    from continuity_checks.core.git.log import RawChange

#: captured projections claimed by default: rendered projections and injection captures
DEFAULT_PROJECTIONS = ("**/*.projection.json", "**/*-injection.raw.txt")
#: the file name endings of those globs, for finding projections in a tree
DEFAULT_ENDINGS = (".projection.json", "-injection.raw.txt")
#: what the family may claim outside a ``.dsh/`` directory with the default projections
_STATE_OR_PROJECTION = Names(frozenset({"WORKING_STATE.json"}), DEFAULT_ENDINGS)


class WorkingStateFamily(Family):
    def __init__(self, config: Config) -> None:
        table = options(config, DECLARATION)
        projections = strings_option(
            config, DECLARATION.name, "projections", DEFAULT_PROJECTIONS, "glob strings"
        )
        self.projections = Globs(projections)
        warn = table.get("compress-warn-chars", DEFAULT_COMPRESS_WARN_CHARS)
        if not isinstance(warn, int) or isinstance(warn, bool) or warn <= 0:
            raise config.error(
                "working-state.compress-warn-chars",
                f"expected a positive integer, found {warn!r}",
            )
        self.max_depth = config.max_depth
        self.settings = Settings(config.max_depth, warn)
        self._endings = DEFAULT_ENDINGS if projections == DEFAULT_PROJECTIONS else None
        self._dependents: Dependents | None = None  # history mode only, made on first use
        #: what the history checks read, made on their first use
        self._history_options: HistoryOptions | None = None

    def claims(self, path: str) -> str | None:
        if path.endswith("/WORKING_STATE.json") or path == "WORKING_STATE.json":
            return "state"
        # no split for the paths of other families (almost every path of a run): a directory
        # named .dsh needs the name in the path
        if ".dsh/" not in path:
            return "projection" if self.projections.match(path) else None
        parts = path.split("/")
        name = parts[-1]
        if ".dsh" in parts[:-1]:
            at = parts.index(".dsh")
            below = parts[at + 1 : -1]
            if below[:1] == ["project"] and name.endswith(".json") and _written(below[1:]):
                return "project"
            if below and below[0] == "runtime":
                return "transaction" if _in_transaction(parts[at + 1 :]) else "runtime"
            if _in_transaction(parts[at + 1 :]):
                return "transaction"
        if self.projections.match(path):
            return "projection"
        return None

    def claimable(self, directory: str) -> Names | None:
        if self._endings is None or ".dsh/" in f"{directory}/" or self.projections.match(directory):
            # globs of one's own, a DSH directory, or one a glob covers whole (a pattern that
            # names a directory covers everything below it): any name may be claimed
            return None
        return _STATE_OR_PROJECTION

    def unread(self, path: str) -> str | None:
        """A file under a ``.dsh/`` directory that is none of DSH's JSON files, runtime files
        or journals, nor DSH's Markdown or the user's source material under ``project/``
        (nothing a check can hold against anything)."""
        if ".dsh/" not in path or "/.dsh/" not in f"/{path}":
            return None
        below = path[path.rindex(".dsh/") + len(".dsh/") :].split("/")
        if below[0] == "project" and (
            below[-1].endswith(".md") or below[1:2] == ["source_material"]
        ):
            return None  # DSH's Markdown (intake, conflicts, full spec), the user's sources
        return "in .dsh/, where only DSH's JSON files, runtime files and journals are checked"

    def check_file(self, file: FileInput) -> Iterable[Finding]:
        # imported here, not at the top: see the comment on the imports
        from continuity_checks.checks.working_state import files

        return files.check_file(file, self.settings)

    def check_tree(self, snapshot: Snapshot, claimed: list[Claimed]) -> Iterable[Finding]:
        runtime = [c.path for c in claimed if c.kind in RUNTIME_KINDS]
        if not runtime:
            return ()
        from continuity_checks.checks.working_state import files  # see the imports

        return files.runtime_findings(runtime)

    def may_depend(self, path: str, edited: bool) -> bool:
        # dependents only under a .dsh/ directory; a projection elsewhere is recorded
        return ".dsh/" in path or self.claims(path) == "projection"

    def dependents(self, path: str, tree: Snapshot, edited: bool) -> Iterable[str]:
        known = self._dependents
        if ".dsh/" not in path and (known is None or known.projections is None):
            return ()  # no check reads it, unless it is a projection the run must know of
        if known is None:
            from continuity_checks.checks.working_state.depends import Dependents

            known = self._dependents = Dependents(self.claims, self._endings)
        return known(path, tree)

    def same_cause(self, history: Finding, state: Finding) -> bool:
        """Whether ``state`` says of a file only that it is a symlink (WS119), where ``history``
        reports the commit that made it one (WS206)."""
        return history.rule == rules.SYMLINK.id and state.rule == rules.STATE_LINKED.id

    def commit_needed(self, commit: Commit, paths: Sequence[RawChange], symlinked: bool) -> bool:
        """Every commit is asked for only for the symlinks it leaves: one that leaves none and
        changes none of the family's files gives the history rules nothing."""
        return symlinked

    def check_commit(self, context: CommitContext) -> Iterable[Finding]:
        # called for every commit (every_commit): a directory of DSH's committed as a symlink
        # is a path no family claims (WS206)
        links = symlinks.committed(context, self.kept)
        findings = [symlinks.finding(rules.SYMLINK, link, context) for link in links]
        context = symlinks.beneath(context, links)
        if context.changes:
            # imported here, not at the top: see the comment on the imports
            from continuity_checks.checks.working_state import history

            if self._history_options is None:
                self._history_options = history.HistoryOptions(self.max_depth)
            linked = {link.path for link in links}
            findings.extend(history.check_commit(context, self._history_options, linked))
        return findings

    def kept(self, path: str) -> str | None:
        """What DSH keeps at ``path`` that must not be a symlink (WS206): its state files and
        projections, and its directories ``.dsh``, ``.dsh/project`` and ``.dsh/runtime``. Runtime
        files are left to WS205, which refuses them whatever they are."""
        if _dsh_directory(path):
            return "a directory"
        kind = self.claims(path)
        return "a regular file" if kind in _FILE_KINDS else None


#: the kinds of claimed files that are never symlinks (runtime files are WS205's whatever)
_FILE_KINDS = ("state", "project", "projection")


#: the directories of ``.dsh/project/`` whose JSON files DSH writes itself (``atomicWriteJson``):
#: task packets, and evidence and reviews at any depth; ``source_material/`` holds the user's
#: files as given
_WRITTEN = frozenset({"evidence", "reviews"})


def _written(below: list[str]) -> bool:
    """Whether a JSON file ``below`` (the directories under ``.dsh/project/``) is DSH's own."""
    return not below or below == ["task_packets"] or below[0] in _WRITTEN


def _dsh_directory(path: str) -> bool:
    """Whether ``path`` is a ``.dsh`` directory, or its ``project`` or ``runtime``."""
    names = path.rsplit("/", 2)
    if names[-1] == ".dsh":
        return True
    return len(names) > 1 and names[-2] == ".dsh" and names[-1] in ("project", "runtime")


def _in_transaction(parts: list[str]) -> bool:
    """Whether a path below .dsh/ is a ``transactions/tx-*`` journal or lies inside one."""
    return any(
        parts[i] == "transactions" and parts[i + 1].startswith("tx-") for i in range(len(parts) - 1)
    )
