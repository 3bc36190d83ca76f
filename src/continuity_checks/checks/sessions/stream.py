"""The family's cross-file checks in file mode (``continuity check``), fed one claimed file at
a time as the engine streams them: each session judged whole once, each memory workspace
checked when the stream leaves it, and the registries at the end with the sessions they name."""

from __future__ import annotations

from collections.abc import Collection

from continuity_checks.checks.sessions import layout
from continuity_checks.checks.sessions.lookups import TreeLookups
from continuity_checks.checks.sessions.memory import Workspace
from continuity_checks.checks.sessions.places import REGISTRIES, last_node_file, session_of_node
from continuity_checks.checks.sessions.registries import Registries
from continuity_checks.checks.sessions.session import check_sessions
from continuity_checks.core.family import Claimed
from continuity_checks.core.findings import Finding

SESSION_KINDS = frozenset({layout.NODE, layout.META, layout.TEMP, layout.BACKUP})
MEMORY_KINDS = (layout.ARCHIVE, layout.TOPIC, layout.RECORDS)
REGISTRY_KINDS = (layout.INDEX, layout.LOCATIONS, layout.PROJECTS)


def check_tree(tree: TreeLookups, claimed: list[Claimed]) -> list[Finding]:
    """The cross-file findings over a list of claimed files (what :class:`SessionsTree` gives
    when fed them in order)."""
    stream = SessionsTree(tree)
    for path, kind in claimed:
        stream.add(path, kind)
    return stream.finish(())


class SessionsTree:
    """The family's cross-file checks, fed by the engine one claimed file at a time in the
    order of its stream (a directory's files together; see ``engine.walk``), so that what it
    holds does not grow with the number of sessions.

    A session is settled when a file of another session arrives (or at the end): if its last
    node file by name was part of the run, ``check_file`` judges it whole when that file
    arrives (:class:`~.session.Gather`); otherwise it is judged at the end (:attr:`deferred`),
    as its last node file may still come later in the stream (sources that overlap: ``d`` then
    ``d/<session>/history/<last>``), and Gather would then judge it a second time. Each
    settled session's directory is remembered (:attr:`settled`, the one thing kept per
    session: about 110 bytes), so that a session met again or named by the registries is not
    judged twice. Memory files are held per workspace (a state directory's ``memory/``) and
    checked when the stream moves to another workspace (its block ids once, however often the
    stream comes back to it). The registries are checked at the end, with the sessions they
    name that the run did not settle."""

    def __init__(self, tree: TreeLookups) -> None:
        self.tree = tree
        self.snapshot = tree.snapshot
        self.findings: list[Finding] = []
        self.settled: set[str] = set()
        # settled sessions whose last node file has not come (yet): judged at the end
        self.deferred: dict[str, None] = {}
        self.block_ids: set[str] = set()  # workspaces whose block ids were checked
        self.session: str | None = None  # the session directory being gathered
        self.last_claimed = ""  # its last claimed node file by name
        self.states: dict[str, None] = {}  # state directories of the claimed registries
        self.workspace: str | None = None
        self.memory: list[Claimed] = []  # the claimed memory files of that workspace

    def add(self, path: str, kind: str) -> None:
        if kind == layout.NODE:
            directory: str | None = session_of_node(path)
        elif kind in SESSION_KINDS:
            directory = layout.session_dir_of(path)
        else:
            if kind in REGISTRY_KINDS:
                self.states.setdefault(_state_dir(path))
            elif kind in MEMORY_KINDS:
                workspace = layout.workspace_of(path)
                if workspace != self.workspace:
                    self._settle_workspace()
                    self.workspace = workspace
                self.memory.append(Claimed(path, kind))
            return
        if directory is None:
            return
        if directory != self.session:
            self._settle_session()
            self.session = directory
        if kind == layout.NODE and path > self.last_claimed:
            self.last_claimed = path

    def _settle_session(self) -> None:
        directory, last = self.session, self.last_claimed
        self.session, self.last_claimed = None, ""
        if directory is None:
            return
        if directory in self.settled and directory not in self.deferred:
            return
        self.settled.add(directory)
        if last and last_node_file(self.snapshot, directory) == last:
            # judged whole in check_file when that file arrived (Gather)
            self.deferred.pop(directory, None)
            return
        self.deferred[directory] = None

    def _settle_workspace(self) -> None:
        if self.workspace is not None and self.memory:
            located = self.tree.located(self.workspace)
            workspace = Workspace(self.snapshot, self.workspace, self.tree.max_depth, located)
            block_ids = self.workspace not in self.block_ids
            self.block_ids.add(self.workspace)
            self.findings.extend(workspace.check(self.memory, block_ids=block_ids))
        self.workspace, self.memory = None, []

    def finish(self, unread: Collection[str]) -> list[Finding]:
        """What is left at the end of the run: the last session and workspace, the sessions
        whose last node file could not be read (``check_file`` never got it), and the
        registries with the sessions they name that the run did not settle."""
        self._settle_session()
        self._settle_workspace()
        findings, self.findings = self.findings, []
        pending, self.deferred = self.deferred, {}
        for path in unread:
            if layout.claims(path) == layout.NODE:
                directory = session_of_node(path)
                if last_node_file(self.snapshot, directory) == path:
                    pending[directory] = None
        for state in self.states:
            registries = Registries(self.snapshot, state, self.tree.max_depth, self.tree.path_map)
            findings.extend(registries.check())
            for directory in registries.discovered:
                if directory not in self.settled:
                    pending[directory] = None
        self.states = {}
        findings.extend(check_sessions(self.tree, list(pending)))
        return findings


def _state_dir(path: str) -> str:
    """The state directory (``""`` or ending in /) of a registry path."""
    for registry in REGISTRIES:
        if path.endswith(registry):
            return path[: -len(registry)]
    return ""
