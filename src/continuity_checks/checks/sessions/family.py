"""The sessions family as the engine drives it: what it claims, and its three kinds of checks.

Importing this module costs only what ``__init__`` and ``claims`` need (``layout``,
``pathmap``): the engine builds every family for every run, and the commit hook checking one
file of another family must not pay for the sessions checks. The check modules are imported
inside the calls that use them, the first time one does.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from continuity_checks.checks.sessions import DECLARATION, layout
from continuity_checks.checks.sessions.pathmap import PathMap
from continuity_checks.core.config import Config
from continuity_checks.core.family import (
    STAGED,
    Claimed,
    CommitContext,
    Family,
    FileInput,
    TreeCheck,
    options,
)
from continuity_checks.core.findings import Finding, Severity
from continuity_checks.core.snapshot import Snapshot
from continuity_checks.core.symlinks import SYMLINK

if TYPE_CHECKING:
    from continuity_checks.checks.sessions.depends import Dependents
    from continuity_checks.checks.sessions.history import History
    from continuity_checks.checks.sessions.lookups import TreeLookups
    from continuity_checks.checks.sessions.session import Gather
    from continuity_checks.core.family import Commit
    from continuity_checks.core.git.log import RawChange


#: files OpenProgram writes under .openprogram/ that hold nothing a check can hold against
#: anything: the install's owner, settings, the memory writer's workspace id, git's placeholders
_CARRY_NOTHING = frozenset(
    {"owner.json", "settings.json", "default-settings.json", "workspace-id", ".gitkeep"}
)
#: directories of a session that hold the user's files or a turn's context as given: a
#: session's scratch space, the copies of a turn's file backups, the per-turn context views
_USERS_FILES = frozenset({"workdir", "file_backups", "context"})


class SessionsFamily(Family):
    def __init__(self, config: Config) -> None:
        table = options(config, DECLARATION)
        raw = table.get("path-map", {})
        if not isinstance(raw, dict):
            raise config.error(
                "sessions.path-map", f"expected a table of absolute path to path, found {raw!r}"
            )
        for key, value in raw.items():
            if not key.startswith("/") or not isinstance(value, str) or not value:
                raise config.error(
                    f"sessions.path-map.{key}",
                    f"expected an absolute prefix mapped to a non-empty path, found {key!r} = "
                    f"{value!r}",
                )
        self.path_map = PathMap(raw)
        self.max_depth = config.max_depth
        #: the rules the configuration makes errors (what the state a commit leaves counts)
        self.raised = frozenset(
            r for r, level in config.severity.items() if level is Severity.ERROR
        )
        self._gather: Gather | None = None
        self._lookups: TreeLookups | None = None
        self._history: History | None = None
        self._dependents: Dependents | None = None

    @property
    def gather(self) -> Gather:
        """File mode: the node files of the session being gathered (one session at a time)."""
        if self._gather is None:
            # imported here, not at the top: see the module's docstring
            from continuity_checks.checks.sessions.session import Gather

            self._gather = Gather()
        return self._gather

    def _lookups_for(self, snapshot: Snapshot) -> TreeLookups:
        """What the session checks of ``snapshot`` look up once per tree: one per snapshot,
        shared by ``check_file`` and the tree check of that tree."""
        lookups = self._lookups
        if lookups is None or lookups.snapshot is not snapshot:
            # imported here, not at the top: see the module's docstring
            from continuity_checks.checks.sessions.lookups import TreeLookups

            lookups = self._lookups = TreeLookups(snapshot, self.max_depth, self.path_map)
        return lookups

    @property
    def history(self) -> History:
        """What history mode remembers across the commits of one run."""
        if self._history is None:
            # imported here, not at the top: see the module's docstring
            from continuity_checks.checks.sessions.history import History, HistoryOptions

            self._history = History(HistoryOptions(max_depth=self.max_depth))
        return self._history

    #: by path alone (layout.claims), called as it is: one call less for every path of a run
    claims = staticmethod(layout.claims)
    claimable = staticmethod(layout.claimable)

    @staticmethod
    def unread(path: str) -> str | None:
        """A file under a ``.openprogram/`` directory that is none of OpenProgram's session
        files, registries or memory files, nor one it writes with nothing to check
        (:data:`_CARRY_NOTHING`, and the user's files under :data:`_USERS_FILES`)."""
        if ".openprogram/" not in path or "/.openprogram/" not in f"/{path}":
            return None
        parts = path[path.rindex(".openprogram/") :].split("/")
        if parts[-1] in _CARRY_NOTHING or not _USERS_FILES.isdisjoint(parts[1:-1]):
            return None
        return "in .openprogram/, where no check reads them"

    def check_file(self, file: FileInput) -> Iterable[Finding]:
        if file.kind == layout.NODE:
            # held until the session's last node file arrives, then the session is checked
            # whole: each node file is read once, by the engine
            return self.gather.node(file.path, file.data, self._lookups_for(file.snapshot))
        # imported here, not at the top: see the module's docstring
        from continuity_checks.checks.sessions import files

        return files.check_file(file, self.max_depth)

    def check_tree(self, snapshot: Snapshot, claimed: list[Claimed]) -> Iterable[Finding]:
        # imported here, not at the top: see the module's docstring
        from continuity_checks.checks.sessions import stream

        return stream.check_tree(self._lookups_for(snapshot), claimed)

    def tree(self, snapshot: Snapshot) -> TreeCheck:
        """File mode's cross-file checks as the files stream by: one session (and one memory
        workspace) at a time, whatever the number of sessions."""
        # imported here, not at the top: see the module's docstring
        from continuity_checks.checks.sessions.stream import SessionsTree

        return SessionsTree(self._lookups_for(snapshot))

    def may_depend(self, path: str, edited: bool) -> bool:
        return layout.relevant(path)

    def dependents(self, path: str, tree: Snapshot, edited: bool) -> Iterable[str]:
        """The claimed files of ``tree`` whose checks read ``path``: one file of the session it
        is in (the session is judged whole), the registries and memory files that name that
        session, the sessions and topics a memory file's checks reach (see ``depends``)."""
        if not layout.relevant(path):
            return ()
        if self._dependents is None:
            # imported here, not at the top: see the module's docstring
            from continuity_checks.checks.sessions.depends import Dependents

            self._dependents = Dependents(self.max_depth, self.path_map, self.raised)
        return self._dependents.of(path, tree, edited)

    def same_cause(self, history: Finding, state: Finding) -> bool:
        """Whether ``history`` is SS205 (a commit writes an invalid node or meta.json, naming the
        file rule that fails) at the file ``state`` is about: SS205 already says it."""
        return history.rule == "SS205" and state.path == history.path

    def commit_needed(self, commit: Commit, paths: Sequence[RawChange], symlinked: bool) -> bool:
        """Not for a commit the history rules pass over (:meth:`History.passes`: most commits of
        a project repository); always for the first, which tells which kind of repository
        this is."""
        return self._history is None or not self._history.passes(commit, paths)

    def check_commit(self, context: CommitContext) -> Iterable[Finding]:
        if self._history is None and context.commit.sha == STAGED and _nothing_to_find(context):
            return []  # the commit hook of another family's files: no history module imported
        return self.history.check_commit(context)

    def history_needed(self) -> bool:
        """Whether commits before a shard can still change how its commits are judged: only in
        a session repository (names and pending turns); a project repository's commits are
        judged on their own, once the first commit has told which kind it is."""
        return self._history is None or self._history.session_repo is not False


def _nothing_to_find(context: CommitContext) -> bool:
    """Whether the history rules find nothing in the commit being made (the one commit of its
    run, with no subject yet), decided from the paths it changes and a few look-ups: neither
    tree is a session repository's (SS201-SS207), no change leaves a symlink (SS211), no changed
    path holds ``sources/`` (SS210), and the commit's tree has no ``.openprogram`` (SS208: what
    it adds there, or holds from before); SS209 judges a subject.
    ``tests/sessions/test_staged_history.py`` holds it to :meth:`History.check_commit`."""
    if any(c.new_mode == SYMLINK or "sources/" in c.path for c in context.paths):
        return False
    after = context.after
    if after.exists(".openprogram") or after.is_dir(".openprogram"):
        return False
    return not any(layout.session_repo_tree(tree) for tree in (after, context.before))
