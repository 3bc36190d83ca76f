"""Cross-file checks (``continuity check``): each session as a whole (its nodes as one DAG,
meta.json against them, its branches and backups) and the registries against the sessions."""

from __future__ import annotations

import re
import time
import weakref
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from typing import NamedTuple
from urllib.parse import quote as url_quote

from continuity_checks.checks.sessions import files, layout, memory, nodes
from continuity_checks.checks.sessions import rules as ss
from continuity_checks.checks.sessions.common import read_json
from continuity_checks.checks.sessions.nodes import Node
from continuity_checks.checks.sessions.pathmap import PathMap, Unresolved, inferred_home
from continuity_checks.checks.sessions.stamps import check_commit_stamps
from continuity_checks.core import pointer as jp
from continuity_checks.core import strict_json
from continuity_checks.core.display import quote, show
from continuity_checks.core.family import Claimed
from continuity_checks.core.findings import Finding
from continuity_checks.core.parallel import split_map, usable_cpus
from continuity_checks.core.rules import Rule
from continuity_checks.core.snapshot import Snapshot, Unreadable
from continuity_checks.core.strict_json import located

SESSION_KINDS = frozenset({layout.NODE, layout.META, layout.TEMP, layout.BACKUP})
MAX_BACKUP_TURNS = 100
BOUND = re.compile(r"^(?P<project>(?:.*/)?)\.openprogram/sessions/(?P<sid>[^/]+)/$")
HOUR, DAY = 3600.0, 86400.0
GC_CAP = 1000
METAS_KEPT = 64  # meta.json values kept for the registries' cross-checks (each is read ≤ 3 times)


def check_tree(
    snapshot: Snapshot, claimed: list[Claimed], max_depth: int, path_map: PathMap
) -> list[Finding]:
    """The cross-file findings over a list of claimed files (what :class:`SessionsTree` gives
    when fed them in order)."""
    tree = SessionsTree(snapshot, max_depth, path_map)
    for item in claimed:
        tree.add(item)
    return tree.finish(())


MEMORY_KINDS = (layout.ARCHIVE, layout.TOPIC, layout.RECORDS)
REGISTRY_KINDS = (layout.INDEX, layout.LOCATIONS, layout.PROJECTS)


class SessionsTree:
    """The family's cross-file checks, fed by the engine one claimed file at a time in the
    order of its stream (a directory's files together; see ``engine.walk``), so that what it
    holds does not grow with the number of sessions.

    A session is settled when a file of another session arrives (or at the end): if its last
    node file by name was part of the run, ``check_file`` judges it whole when that file
    arrives (:class:`Gather`); otherwise it is judged at the end (:attr:`deferred`), as its
    last node file may still come later in the stream (sources that overlap: ``d`` then
    ``d/<session>/history/<last>``), and Gather would then judge it a second time. Each
    settled session's directory is remembered (:attr:`settled`, the one thing kept per
    session: about 110 bytes), so that a session met again or named by the registries is not
    judged twice. Memory files are held per workspace (a state directory's ``memory/``) and
    checked when the stream moves to another workspace (its block ids once, however often the
    stream comes back to it). The registries are checked at the end, with the sessions they
    name that the run did not settle."""

    def __init__(self, snapshot: Snapshot, max_depth: int, path_map: PathMap) -> None:
        self.snapshot = snapshot
        self.max_depth = max_depth
        self.path_map = path_map
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

    def add(self, item: Claimed) -> None:
        kind = item.kind
        if kind == layout.NODE:
            directory: str | None = session_of_node(item.path)
        elif kind in SESSION_KINDS:
            directory = layout.session_dir_of(item.path)
        else:
            if kind in REGISTRY_KINDS:
                self.states.setdefault(_state_dir(item.path))
            elif kind in MEMORY_KINDS:
                workspace = layout.workspace_of(item.path)
                if workspace != self.workspace:
                    self._settle_workspace()
                    self.workspace = workspace
                self.memory.append(item)
            return
        if directory is None:
            return
        if directory != self.session:
            self._settle_session()
            self.session = directory
        if kind == layout.NODE and item.path > self.last_claimed:
            self.last_claimed = item.path

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
            workspace = Workspace(self.snapshot, self.workspace, self.max_depth, self.path_map)
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
            registries = Registries(self.snapshot, state, self.max_depth, self.path_map)
            findings.extend(registries.check())
            for directory in registries.discovered:
                if directory not in self.settled:
                    pending[directory] = None
        self.states = {}
        findings.extend(check_sessions(self.snapshot, list(pending), self.max_depth, self.path_map))
        return findings


REGISTRIES = ("sessions/index.json", "sessions/locations.json", "projects/projects.json")
#: The files that make a ``.openprogram/`` directory a state directory (:func:`is_state_dir`).
STATE_MARKERS = (*REGISTRIES, "owner.json")


def _state_dir(path: str) -> str:
    """The state directory (``""`` or ending in /) of a registry path."""
    for registry in REGISTRIES:
        if path.endswith(registry):
            return path[: -len(registry)]
    return ""


# --- one session ---------------------------------------------------------------------------------


def _name(snapshot: Snapshot, directory: str) -> str:
    if directory:
        return directory.rstrip("/").rpartition("/")[2]
    name, target = snapshot.root_name()
    # the checked root named through a symlink: the session's directory is the one it leads to
    return name if target is None else target.rstrip("/").rpartition("/")[2]


class Loaded:
    """A session's node files: the nodes whose shape allows the DAG checks, and the ids every
    node file names (a broken node still exists: edges to it are not dangling). One session at
    a time is held."""

    def __init__(self, snapshot: Snapshot, max_depth: int) -> None:
        self.snapshot = snapshot
        self.max_depth = max_depth
        self.nodes: list[Node] = []
        self.named: set[str] = set()

    def place(self, findings: list[Finding]) -> list[Finding]:
        """``findings`` with the line and column of their pointer in the node file (read again:
        positions are worked out only for the rare file that has a finding)."""
        placed = []
        docs: dict[str, strict_json.Document | None] = {}
        for finding in findings:
            if finding.line is None and finding.pointer is not None:
                if finding.path not in docs:
                    docs[finding.path] = _document(self.snapshot, finding.path, self.max_depth)
                doc = docs[finding.path]
                if doc is not None:
                    line, column = doc.position(finding.pointer)
                    finding = replace(finding, line=line, column=column)
            placed.append(finding)
        return placed


def _document(snapshot: Snapshot, path: str, max_depth: int) -> strict_json.Document | None:
    data = snapshot.read(path)
    if isinstance(data, Unreadable):
        return None
    doc = strict_json.load(data, max_depth=max_depth)
    return doc if isinstance(doc, strict_json.Document) else None


class NodeFile(NamedTuple):
    """One node file checked on its own: its findings (positioned) and the node, when its shape
    lets the DAG checks use it."""

    findings: list[Finding]
    node: Node | None


def check_node_file(path: str, data: bytes, snapshot: Snapshot, max_depth: int) -> NodeFile:
    """The common case (a valid node) costs one strict parse without positions
    (``strict_json.accepts``); the loader with positions runs only for a file with a problem,
    on the bytes in hand."""
    accepted = strict_json.accepts(data, max_depth)
    doc: strict_json.Document | None = None
    if accepted is None:
        loaded = strict_json.load(data, max_depth=max_depth)
        if isinstance(loaded, strict_json.Problem):
            return NodeFile([loaded.finding(path)], None)
        doc = loaded
        accepted = (doc.text, doc.value)
    found, node = nodes.check(path, accepted[1], _unplaced(path), snapshot)
    if found:
        if doc is None:
            loaded = strict_json.load(data, max_depth=max_depth)
            doc = loaded if isinstance(loaded, strict_json.Document) else None
        found = [_placed(finding, doc) for finding in found]
    return NodeFile(found, node)


def _placed(finding: Finding, doc: strict_json.Document | None) -> Finding:
    if doc is None or finding.line is not None or finding.pointer is None:
        return finding
    line, column = doc.position(finding.pointer)
    return replace(finding, line=line, column=column)


def last_node_file(
    snapshot: Snapshot, directory: str, listing: list[str] | Unreadable | None = None
) -> str | None:
    """The session's node file that comes last by name: the one whose arrival in ``check_file``
    completes the session (see :class:`Gather`). None when history/ has no node file."""
    if listing is None:
        listing = snapshot.list(directory + "history")
    if isinstance(listing, Unreadable):
        return None
    # the listing is sorted: the last name ending in .json
    return next(
        (f"{directory}history/{name}" for name in reversed(listing) if name.endswith(".json")),
        None,
    )


def load_nodes(
    snapshot: Snapshot,
    directory: str,
    max_depth: int,
    findings: list[Finding],
    held: Mapping[str, NodeFile] | None = None,
    listing: list[str] | Unreadable | None = None,
) -> Loaded:
    """Every node file of the session, checked on its own; the nodes whose shape allows more.
    A node file in ``held`` was checked already, from the bytes the engine read: not read again
    (nor is history/ listed again when its ``listing`` is given)."""
    loaded = Loaded(snapshot, max_depth)
    if listing is None:
        listing = snapshot.list(directory + "history")
    if isinstance(listing, Unreadable):
        return loaded
    found = loaded.nodes
    for name in listing:
        if not name.endswith(".json"):
            continue
        named = layout.NODE_NAME.match(name)
        if named is not None:
            loaded.named.add(named[3])
        path = f"{directory}history/{name}"
        result = held.get(path) if held is not None else None
        if result is None:
            data = snapshot.read(path)
            if isinstance(data, Unreadable):
                findings.append(data.finding())
                continue
            result = check_node_file(path, data, snapshot, max_depth)
        findings.extend(result.findings)
        if result.node is not None:
            found.append(result.node)
    return loaded


def _unplaced(path: str) -> nodes.At:
    def at(rule: Rule, pointer: str, message: str) -> Finding:
        return rule.finding(path, message, pointer=pointer or None)

    return at


class Gather:
    """Node files as ``check_file`` receives them, one session at a time, so that each is read
    once (by the engine) rather than again in ``check_tree``.

    A session is checked whole — its DAG, its meta.json, branches, backups — when its last node
    file by name arrives; whichever process of the engine's that file reaches does it, and its
    findings travel back with that call's. A node file that has not arrived by then (handled
    by another process, in another order, or not part of the run) is read there. Everything
    held belongs to the session being gathered: a file of another session drops it (files
    arrive sorted, a session's together), so memory is one session's nodes, whatever the number
    of sessions. :class:`SessionsTree` judges a session only when its last node file was not
    part of the run, or could not be read: each session is judged once."""

    def __init__(self, max_depth: int, path_map: PathMap) -> None:
        self.max_depth = max_depth
        self.path_map = path_map
        self.directory: str | None = None
        self.snapshot: Snapshot | None = None
        self.listing: list[str] | Unreadable = []
        self.last: str | None = None
        self.held: dict[str, NodeFile] = {}

    def node(self, path: str, data: bytes, snapshot: Snapshot) -> list[Finding]:
        directory = session_of_node(path)
        # what is held belongs to one session of one tree (history mode checks two trees of
        # each commit with the same family)
        if directory != self.directory or snapshot is not self.snapshot:
            self.directory, self.snapshot, self.held = directory, snapshot, {}
            self.listing = snapshot.list(directory + "history")
            self.last = last_node_file(snapshot, directory, self.listing)
        self.held[path] = check_node_file(path, data, snapshot, self.max_depth)
        if path != self.last:
            return []
        held, listing = self.held, self.listing
        self.directory, self.snapshot, self.held, self.listing = None, None, {}, []
        return check_session(snapshot, directory, self.max_depth, self.path_map, held, listing)


def session_of_node(path: str) -> str:
    """The session directory (``""`` or ending in /) of a path claimed as a node file, which is
    always ``<directory>history/<name>``: string slicing, not the layout's pattern (this runs
    for every node file)."""
    return path[: path.rindex("/") + 1 - len("history/")]


PARALLEL_SESSIONS = 50  # below this a second process costs more than it saves


def check_sessions(
    snapshot: Snapshot, directories: list[str], max_depth: int, path_map: PathMap
) -> list[Finding]:
    """Each session on its own (sessions share nothing), on every usable CPU for many."""

    def part(chunk: Sequence[str]) -> list[Finding]:
        found: list[Finding] = []
        for directory in chunk:
            found.extend(check_session(snapshot, directory, max_depth, path_map))
        return found

    jobs = usable_cpus() if len(directories) >= PARALLEL_SESSIONS else 1
    return [f for chunk in split_map(part, directories, jobs) for f in chunk]


def check_session(
    snapshot: Snapshot,
    directory: str,
    max_depth: int,
    path_map: PathMap | None = None,
    held: Mapping[str, NodeFile] | None = None,
    listing: list[str] | Unreadable | None = None,
) -> list[Finding]:
    findings: list[Finding] = []
    here = directory.rstrip("/") or "."
    link = symlinked(snapshot, directory)
    if link is not None:
        return [link]  # OpenProgram does not open it: nothing in it is the session's
    has_history = snapshot.is_dir(directory + "history")
    has_git = snapshot.exists(directory + ".git") or repository_itself(snapshot, directory)
    missing = [p for p, ok in ((".git", has_git), ("history/", has_history)) if not ok]
    if missing:
        findings.append(
            ss.NOT_A_SESSION.finding(
                here,
                "expected a session repository with .git and history/, missing "
                f"{' and '.join(missing)}",
            )
        )
    loaded = load_nodes(snapshot, directory, max_depth, findings, held, listing)
    all_nodes = loaded.nodes
    dag: list[Finding] = []
    by_id = check_dag(all_nodes, dag, loaded.named)
    findings.extend(loaded.place(dag))
    meta_path = directory + "meta.json"
    if snapshot.exists(meta_path):
        doc = read_json(snapshot, meta_path, max_depth, findings)
        if doc is not None and isinstance(doc.value, dict):
            findings.extend(check_meta_nodes(doc, meta_path, by_id, all_nodes))
            stamped = [n for n in all_nodes if n.commits is not None and n.role == "llm"]
            # a session checked on its own names repositories outside the root: without a
            # path-map saying where they are, each is SS133 (not checked), never a silent pass
            if stamped:
                configured = path_map or PathMap({})
                local, state = _session_map(
                    snapshot, directory, doc.value, stamped, max_depth, configured
                )
                sid = str(doc.value.get("id") or _name(snapshot, directory))
                found = check_commit_stamps(snapshot, stamped, sid, local, state)
                findings.extend(loaded.place(found))
    if snapshot.is_dir(directory + ".git"):
        findings.extend(check_branches(snapshot, directory))
    findings.extend(check_backups(snapshot, directory, by_id))
    findings.extend(
        loaded.place(check_markers(snapshot, directory, all_nodes, max_depth, path_map))
    )
    bound = BOUND.match(directory)
    if bound is not None and not is_state_dir(snapshot, bound["project"] + ".openprogram/"):
        findings.extend(check_project_gitignore(snapshot, bound["project"]))
    return findings


def repository_itself(snapshot: Snapshot, directory: str) -> bool:
    """Whether the session directory is the root of a commit's tree: its ``.git`` is then the
    repository the commit belongs to, which every checkout of the commit has and no commit's
    tree can hold (git tracks no ``.git``)."""
    return not directory and snapshot.commit is not None


def symlinked(snapshot: Snapshot, directory: str) -> Finding | None:
    """[1] The session directory is named by a safe id and is a real directory, not a symlink
    (a directory above it may be one: OpenProgram looks at the session's own directory)."""
    path = directory.rstrip("/")
    if not path:
        return _root_symlinked(snapshot)
    name = path.rpartition("/")[2]
    if "\\" in name:
        return ss.SESSION_SYMLINK.finding(
            path,
            f"expected a session directory named by a safe id (no \\), found {quote(name)} "
            "(OpenProgram does not open it)",
        )
    real = snapshot.resolve(path)
    if real == path:
        return None  # the common case: no symlink anywhere on the way, one lookup
    parent, _, name = path.rpartition("/")
    real_parent = snapshot.resolve(parent) if parent else ""
    if isinstance(real_parent, Unreadable):
        return None  # the way there is the problem, reported where it is read
    if isinstance(real, Unreadable):
        return ss.SESSION_SYMLINK.finding(
            path,
            f"expected a session directory, found a symlink that cannot be followed here "
            f"({real.message})",
        )
    if real == (f"{real_parent}/{name}" if real_parent else name):
        return None  # a symlinked directory above the session; the session's own is real
    return ss.SESSION_SYMLINK.finding(
        path, f"expected a session directory, found a symlink to {quote(real or '.')}"
    )


def _root_symlinked(snapshot: Snapshot) -> Finding | None:
    """[1] for a session that is the checked root: its name is a safe id, and it is not a
    symlink where OpenProgram would open it (in a ``sessions/`` directory). Where it is and what
    it is are facts of the directory the user named, not of any file in it (a tree of git
    objects has no directory: not judged there)."""
    name, target = snapshot.root_name()
    if "\\" in name:
        return ss.SESSION_SYMLINK.finding(
            ".",
            f"expected a session directory named by a safe id (no \\), found {quote(name)} "
            "(OpenProgram does not open it)",
        )
    parent = str(getattr(snapshot, "root", "")).rstrip("/").rpartition("/")[0]
    if target is not None and parent.rpartition("/")[2] == "sessions":
        return ss.SESSION_SYMLINK.finding(
            ".",
            f"expected a session directory, found {quote(name)} in {quote(parent)}, a symlink to "
            f"{quote(target)} (OpenProgram does not open it)",
        )
    return None


def is_state_dir(snapshot: Snapshot, directory: str) -> bool:
    """Whether ``directory`` (``…/.openprogram/``) is a state directory, whose sessions/ holds the
    default project's sessions, rather than a project's: it has registries, a project has none."""
    return any(snapshot.exists(directory + name) for name in STATE_MARKERS)


def check_dag(
    all_nodes: list[Node], findings: list[Finding], named: set[str] | frozenset[str] = frozenset()
) -> dict[str, Node]:
    """Unique ids and seqs, the ROOT node, edges, cycles, the write invariant and turn shape."""
    all_nodes = sorted(all_nodes, key=lambda n: (n.seq, n.path))
    by_id: dict[str, Node] = {}
    by_seq: dict[int, Node] = {}
    for node in all_nodes:
        first = by_id.get(node.id)
        if first is not None:
            findings.append(
                ss.DUPLICATE_NODE.finding(
                    node.path,
                    f"expected a unique node id, found {quote(node.id)} also in {first.path}",
                    pointer="/id",
                )
            )
        else:
            by_id[node.id] = node
        same = by_seq.get(node.seq)
        if same is not None:
            findings.append(
                ss.DUPLICATE_NODE.finding(
                    node.path,
                    f"expected a unique seq, found {node.seq} also in {same.path}",
                    pointer="/seq",
                )
            )
        else:
            by_seq[node.seq] = node
    for node in all_nodes:
        pred = node.predecessor
        if pred is not None and pred not in by_id and pred not in named and pred != "ROOT":
            findings.append(
                ss.DANGLING_EDGE.finding(
                    node.path,
                    f"expected the predecessor to name a node of the session, found {quote(pred)}",
                    pointer="/predecessor",
                )
            )
        if (
            node.caller not in ("", "ROOT")
            and node.caller not in by_id
            and node.caller not in named
            and not node.spawn
        ):
            findings.append(
                ss.DANGLING_EDGE.finding(
                    node.path,
                    'expected the caller to be "", "ROOT" or a node of the session, found '
                    f"{quote(node.caller)}",
                    pointer="/caller",
                )
            )
    for field in ("predecessor", "caller"):
        edges = {n.id: getattr(n, field) for n in by_id.values() if getattr(n, field)}
        for cycle in _cycles(edges):
            start = min((by_id[i] for i in cycle), key=lambda n: (n.seq, n.path))
            loop = " -> ".join(quote(i, 30) for i in [*cycle, cycle[0]])
            findings.append(
                ss.EDGE_CYCLE.finding(
                    start.path,
                    f"expected the {field} chain to end, found a cycle {loop}",
                    pointer=f"/{field}",
                )
            )
    conversational = [
        n
        for n in all_nodes
        if n.role in ("user", "llm") and n.caller in ("", "ROOT") and n.input_null
        and n.id != "ROOT"
    ]  # fmt: skip
    first_id = conversational[0].id if conversational else None
    for node in conversational:
        if node.predecessor is None and not node.spawn and not node.summary and node.id != first_id:
            findings.append(
                ss.WRITE_INVARIANT.finding(
                    node.path,
                    f"expected a predecessor for the {node.role} node {quote(node.id)}, found none",
                    pointer="/predecessor",
                )
            )
    for node in all_nodes:
        if node.tool_call and node.role == "code":
            caller = by_id.get(node.caller)
            if caller is not None and caller.role != "llm":
                findings.append(
                    ss.TOOL_SHAPE.finding(
                        node.path,
                        f"expected an llm caller for a tool node, found the {caller.role} node "
                        f"{quote(caller.id)}",
                        pointer="/caller",
                    )
                )
        if node.role == "llm" and node.caller == "" and not node.attach and node.predecessor:
            previous = by_id.get(node.predecessor)
            if previous is not None and previous.role != "user":
                findings.append(
                    ss.TURN_SHAPE.finding(
                        node.path,
                        "expected a user node as the predecessor of a top-level llm node, found "
                        f"the {previous.role} node {quote(previous.id)}",
                        pointer="/predecessor",
                    )
                )
        if (
            node.role == "user"
            and node.id != "ROOT"
            and node.caller == ""
            and node.input_null
            and not node.spawn
            and not node.summary
        ):
            findings.append(
                ss.TURN_SHAPE.finding(
                    node.path,
                    'expected caller "ROOT" on a top-level user node, found ""',
                    pointer="/caller",
                )
            )
    return by_id


def _cycles(edges: dict[str, str]) -> list[list[str]]:
    """Each cycle of a graph where every node has at most one outgoing edge, once."""
    done: set[str] = set()
    cycles = []
    for start in edges:
        if start in done:
            continue
        order: dict[str, int] = {}
        path: list[str] = []
        node: str | None = start
        while node is not None and node not in done and node not in order:
            order[node] = len(path)
            path.append(node)
            node = edges.get(node)
        if node is not None and node in order:
            cycles.append(path[order[node] :])
        done.update(path)
    return cycles


def check_meta_nodes(
    doc: strict_json.Document, path: str, by_id: dict[str, Node], all_nodes: list[Node]
) -> list[Finding]:
    meta = doc.value
    assert isinstance(meta, dict)
    findings: list[Finding] = []

    def at(rule: Rule, pointer: str, message: str) -> Finding:
        return located(rule, doc, path, pointer, message)

    head = meta.get("head_id")
    if isinstance(head, str) and head != "ROOT":  # rewind_to the first message: a fresh start
        node = by_id.get(head)
        if node is None:
            findings.append(
                at(
                    ss.BAD_HEAD,
                    "/head_id",
                    f"expected null or the id of a node in history/, found {quote(head)}",
                )
            )
        elif node.summary:
            findings.append(
                at(
                    ss.HEAD_IS_SUMMARY,
                    "/head_id",
                    f"expected a conversational head, found the compaction summary {quote(head)}",
                )
            )
    branches = meta.get("branches")
    if isinstance(branches, dict):
        for key in branches:
            if key not in by_id:
                findings.append(
                    at(
                        ss.META_BRANCHES,
                        jp.append("/branches", key),
                        f"expected a branch key naming a node, found {quote(key)}",
                    )
                )
    merged = meta.get("merged_heads")
    if isinstance(merged, list):
        for index, item in enumerate(merged):
            if isinstance(item, str) and item not in by_id:
                findings.append(
                    at(
                        ss.META_BRANCHES,
                        f"/merged_heads/{index}",
                        f"expected a node id, found {quote(item)}",
                    )
                )
    title = meta.get("title")
    if (
        meta.get("_auto_titled") is True
        and meta.get("_title_gen_count") == 1
        and not meta.get("_user_titled")
        and isinstance(title, str)
    ):
        users = sorted(
            (n for n in all_nodes if n.role == "user" and n.id != "ROOT" and n.caller == "ROOT"),
            key=lambda n: n.seq,
        )
        if users:
            expected = phase1_title(users[0].text)
            if title != expected:
                findings.append(
                    at(
                        ss.META_TITLE,
                        "/title",
                        f"expected the phase-1 title {quote(expected)} (first line of the first "
                        f"user message), found {quote(title)}",
                    )
                )
    return findings


def phase1_title(text: str) -> str:
    lines = text.strip().splitlines()
    first = lines[0].strip() if lines else ""
    return first if len(first) <= 50 else first[:50] + "…"


def check_branches(snapshot: Snapshot, directory: str) -> list[Finding]:
    """[27] only main (read from the repository's own refs: loose and packed)."""
    names: set[str] = set()
    base = directory + ".git/refs/heads"
    stack = [""]
    while stack:
        prefix = stack.pop()
        listing = snapshot.list(base + ("/" + prefix if prefix else ""))
        if isinstance(listing, Unreadable):
            continue
        for entry in listing:
            rel = f"{prefix}/{entry}" if prefix else entry
            if snapshot.is_dir(f"{base}/{rel}"):
                stack.append(rel)
            else:
                names.add(rel)
    packed = snapshot.read(directory + ".git/packed-refs")
    if not isinstance(packed, Unreadable):
        for line in packed.decode("utf-8", "replace").splitlines():
            parts = line.split(" ", 1)
            if len(parts) == 2 and parts[1].startswith("refs/heads/"):
                names.add(parts[1][len("refs/heads/") :])
    findings = []
    here = directory + ".git"
    for branch in sorted(names - {"main"}):
        if branch.startswith("retry-"):
            findings.append(
                ss.RETRY_BRANCH.finding(
                    here,
                    "expected only the branch main, found the proposal's retry branch "
                    f"{quote(branch)}",
                )
            )
        else:
            findings.append(
                ss.BRANCHES.finding(here, f"expected only the branch main, found {quote(branch)}")
            )
    return findings


def check_backups(snapshot: Snapshot, directory: str, by_id: dict[str, Node]) -> list[Finding]:
    """[36] turn directories named after llm nodes, each with a manifest, at most 100."""
    listing = snapshot.list(directory + "file_backups")
    if isinstance(listing, Unreadable):
        return []
    findings = []
    turns = [t for t in listing if snapshot.is_dir(f"{directory}file_backups/{t}")]
    for turn in turns:
        here = f"{directory}file_backups/{turn}"
        node = by_id.get(turn)
        if node is None or node.role != "llm":
            found = "no node" if node is None else f"a {node.role} node"
            findings.append(
                ss.BACKUP.finding(
                    here,
                    f"expected a turn directory named after an llm node, found {found} with id "
                    f"{quote(turn)}",
                )
            )
        if not snapshot.exists(here + "/manifest.json"):
            findings.append(
                ss.BACKUP.finding(here, "expected manifest.json in the turn directory, found none")
            )
    if len(turns) > MAX_BACKUP_TURNS:
        findings.append(
            ss.BACKUP.finding(
                f"{directory}file_backups",
                f"expected at most {MAX_BACKUP_TURNS} turn directories (GC keeps the newest), "
                f"found {len(turns)}",
            )
        )
    return findings


def check_project_gitignore(snapshot: Snapshot, project: str) -> list[Finding]:
    """[46] a project holding sessions has .openprogram/.gitignore with exactly "*\\n"."""
    path = project + ".openprogram/.gitignore"
    data = snapshot.read(path)
    if isinstance(data, Unreadable):
        if snapshot.exists(path):
            return [data.finding()]
        return [
            ss.PROJECT_GITIGNORE.finding(
                path,
                'expected .openprogram/.gitignore containing "*\\n" in a project holding '
                "sessions, found none",
            )
        ]
    return files.gitignore_findings(path, data)


# --- registries ----------------------------------------------------------------------------------


class Registries:
    """The registries of one state directory against each other and against the sessions."""

    def __init__(self, snapshot: Snapshot, state: str, max_depth: int, path_map: PathMap) -> None:
        self.snapshot = snapshot
        self.state = state
        self.max_depth = max_depth
        self.findings: list[Finding] = []
        self.discovered: list[str] = []
        self.index = self._load("sessions/index.json")
        self.locations = self._load("sessions/locations.json")
        self.projects = self._load("projects/projects.json")
        self.path_map = path_map
        if state.endswith(".openprogram/"):
            # the default project's path is the home directory holding .openprogram/; before
            # the first ad-hoc chat there is none, and a bound project's path tells it
            home = state[: -len(".openprogram/")].rstrip("/")
            default = self._default_project() or inferred_home(snapshot, home, self._paths())
            if default is not None:
                self.path_map = path_map.with_default(default, home)
        self._metas: dict[str, dict[str, object] | None] = {}
        self._listed: tuple[str, list[str] | Unreadable] | None = None

    def _load(self, rel: str) -> strict_json.Document | None:
        path = self.state + rel
        if not self.snapshot.exists(path):
            return None
        doc = read_json(self.snapshot, path, self.max_depth, self.findings)
        return doc if doc is not None and isinstance(doc.value, dict) else None

    def _default_project(self) -> str | None:
        if self.projects is None:
            return None
        assert isinstance(self.projects.value, dict)
        for project in self.projects.value.values():
            if (
                isinstance(project, dict)
                and project.get("is_default") is True
                and isinstance(project.get("path"), str)
            ):
                return str(project["path"])
        return None

    def _paths(self) -> list[str]:
        """The absolute project paths the registries hold (projects and session locations)."""
        projects = self.projects.value if self.projects is not None else {}
        locations = self.locations.value if self.locations is not None else {}
        assert isinstance(projects, dict) and isinstance(locations, dict)
        found = [p.get("path") for p in projects.values() if isinstance(p, dict)]
        found += [v.partition("/.openprogram/sessions/")[0] for v in locations.values() if v]
        return [path for path in found if isinstance(path, str)]

    def _at(
        self, doc: strict_json.Document, rel: str, rule: Rule, pointer: str, message: str
    ) -> Finding:
        return located(rule, doc, self.state + rel, pointer, message)

    def _resolve(
        self, absolute: str, doc: strict_json.Document, rel: str, pointer: str
    ) -> str | None:
        resolved = self.path_map.resolve(absolute, self.snapshot)
        if isinstance(resolved, Unresolved):
            self.findings.append(
                self._at(
                    doc,
                    rel,
                    ss.UNRESOLVED_PATH,
                    pointer,
                    f"expected {quote(absolute)} to resolve inside the checked root, found that "
                    f"{resolved.reason}",
                )
            )
            return None
        return resolved

    def session_dirs(self) -> dict[str, str | None]:
        """Each session id the registries know, with its directory (None: not resolvable)."""
        found: dict[str, str | None] = {}
        if self.locations is not None:
            assert isinstance(self.locations.value, dict)
            for sid, location in self.locations.value.items():
                suffix = f"/.openprogram/sessions/{sid}"
                if (
                    isinstance(location, str)
                    and location.startswith("/")
                    and location.endswith(suffix)
                ):
                    resolved = self._resolve(
                        location, self.locations, "sessions/locations.json", jp.append("", sid)
                    )
                    found[sid] = None if resolved is None else (resolved + "/" if resolved else "")
        return found

    def meta(self, directory: str) -> dict[str, object] | None:
        if directory in self._metas:
            return self._metas[directory]
        data = self.snapshot.read(directory + "meta.json")
        value = None
        if not isinstance(data, Unreadable):
            accepted = strict_json.accepts(data, self.max_depth)
            if accepted is not None and isinstance(accepted[1], dict):
                value = accepted[1]
        if len(self._metas) >= METAS_KEPT:
            self._metas.clear()  # bounded: memory must not grow with the sessions
        self._metas[directory] = value
        return value

    def check(self) -> list[Finding]:
        located_dirs = self.session_dirs()
        for directory in located_dirs.values():
            if directory is not None and self.snapshot.is_dir(directory + "history"):
                self.discovered.append(directory)
        self.discovered.extend(linked_sessions(self.snapshot, self.state + "sessions"))
        self._check_index(located_dirs)
        self._check_locations(located_dirs)
        self._check_projects(located_dirs)
        return self.findings

    def _history(self, directory: str) -> list[str] | Unreadable:
        """The session's history/ listing; the last one asked for is kept (the index's checks
        of one entry ask twice)."""
        if self._listed is None or self._listed[0] != directory:
            self._listed = (directory, self.snapshot.list(directory + "history"))
        return self._listed[1]

    def _previews(self, directory: str, flushed_at: float | None) -> list[str] | None:
        """[39] The previews the index entry may hold, the first the one expected; None when a
        user node on the way is broken (its own findings say why) or there is no user text.

        Each append of a user node with text sets the entry's preview and ``updated_at`` in
        memory; the file is flushed 5 s later. ``flushed_at`` None: the entry is flushed, its
        preview is the latest user text by seq. Otherwise the entry is as it was at
        ``flushed_at``: its preview is the text of the latest user node created by then, or of
        the one before (created by then but appended after); none created by then: ""."""
        listing = self._history(directory)
        if isinstance(listing, Unreadable):
            return None
        users = []
        for name in listing:
            match = layout.NODE_NAME.match(name)
            if match is not None and match[2] == "u" and match[3] != "ROOT":
                users.append((int(match[1]), name))
        found: list[str] = []
        for _, name in sorted(users, reverse=True):
            data = self.snapshot.read(f"{directory}history/{name}")
            accepted = None if isinstance(data, Unreadable) else strict_json.accepts(data)
            value = None if accepted is None else accepted[1]
            if not isinstance(value, dict) or not isinstance(value.get("output"), str):
                return None
            if not value["output"]:
                continue  # an append without text leaves the preview as it was
            created = value.get("created_at")
            if (
                not found
                and flushed_at is not None
                and isinstance(created, (int, float))
                and created > flushed_at
            ):
                continue  # written after the index was: not in its preview yet
            found.append(files.preview_of(value["output"]))
            if flushed_at is None or len(found) == 2:
                return found
        if flushed_at is None:
            return found or None
        return [*found, ""] if len(found) < 2 else found

    def _linked_away(self, directory: str) -> bool:
        """Whether the session directory is a symlink whose target cannot be read here (off the
        checked tree, dangling): nothing can be said of its content, SS101 is the finding.
        Asked only when its meta.json could not be read (the rare case)."""
        path = directory.rstrip("/")
        return (
            bool(path)
            and self.snapshot.exists(path)
            and symlinked(self.snapshot, directory) is not None
        )

    def _home_dir(self, sid: str) -> str:
        return f"{self.state}sessions/{sid}/"

    def _located(self, sid: str) -> bool:
        """Whether locations.json lists ``sid``, whatever its location (valid or not)."""
        return (
            self.locations is not None
            and isinstance(self.locations.value, dict)
            and sid in self.locations.value
        )

    def _dir_of(self, sid: str, located_dirs: dict[str, str | None]) -> str | None:
        if sid in located_dirs:
            return located_dirs[sid]
        return self._home_dir(sid)

    def _check_index(self, located_dirs: dict[str, str | None]) -> None:
        doc = self.index
        if doc is None:
            return
        rel = "sessions/index.json"
        entries = doc.value
        assert isinstance(entries, dict)
        now = time.time()
        archived_left = 0
        for sid, entry in entries.items():
            if not isinstance(entry, dict):
                continue
            pointer = jp.append("", sid)
            directory = self._dir_of(sid, located_dirs)
            if directory is None:
                continue  # its location is unresolvable: reported there
            meta = self.meta(directory)
            if meta is None:
                # a directory that is a symlink off the checked tree: SS101 says so
                if not self._linked_away(directory):
                    self.findings.append(
                        self._at(
                            doc,
                            rel,
                            ss.INDEX_META,
                            pointer,
                            f"expected a session with meta.json at {quote(directory or '.')}, "
                            "found none",
                        )
                    )
            else:
                for key in ("title", "agent_id", "source", "created_at", "archived", "pinned"):
                    if key not in entry and key not in meta:
                        continue
                    default = False if key in ("archived", "pinned") else None
                    mine, theirs = entry.get(key, default), meta.get(key, default)
                    if mine != theirs or type(mine) is not type(theirs):
                        self.findings.append(
                            self._at(
                                doc,
                                rel,
                                ss.INDEX_META,
                                f"{pointer}/{key}",
                                f"expected {show(theirs)} as in {directory}meta.json, found "
                                f"{show(mine)}",
                            )
                        )
                mine_u, theirs_u = entry.get("updated_at"), meta.get("updated_at")
                if (
                    isinstance(mine_u, (int, float))
                    and isinstance(theirs_u, (int, float))
                    # an int 5, not 5.0: an integer beyond a double must not be made a float
                    and not (theirs_u - 5 <= mine_u <= theirs_u)
                ):
                    self.findings.append(
                        self._at(
                            doc,
                            rel,
                            ss.INDEX_META,
                            f"{pointer}/updated_at",
                            f"expected {show(theirs_u)} as in {directory}meta.json (or up to 5 s "
                            f"behind), found {show(mine_u)}",
                        )
                    )
                preview = entry.get("preview")
                # flushed: the latest user message; lagging (at most 5 s, else SS129 above): the
                # one the entry saw when it was written (see _previews)
                lagging = (
                    isinstance(mine_u, (int, float))
                    and isinstance(theirs_u, (int, float))
                    and theirs_u - 5 <= mine_u < theirs_u
                )
                if (
                    isinstance(preview, str)
                    and files.preview_ok(preview)  # else reported on its own by check_file
                    and (mine_u == theirs_u or lagging)
                ):
                    # equal values may both be missing: taken as flushed
                    flushed_at = (
                        float(mine_u) if lagging and isinstance(mine_u, (int, float)) else None
                    )
                    previews = self._previews(directory, flushed_at)
                    if previews and preview not in previews:
                        if lagging:
                            latest = "the latest user message written by the index's updated_at"
                            also = "".join(
                                f" or, appended after it, {quote(p)}" for p in previews[1:]
                            )
                        else:
                            latest, also = "the latest user message", ""
                        self.findings.append(
                            self._at(
                                doc,
                                rel,
                                ss.PREVIEW,
                                f"{pointer}/preview",
                                f"expected {quote(previews[0])} (from {latest}){also}, found "
                                f"{quote(preview)}",
                            )
                        )
            created, updated = entry.get("created_at"), entry.get("updated_at")
            if entry.get("archived") is True:
                archived_left += 1
                if isinstance(updated, (int, float)) and now - updated > 90 * DAY:
                    self.findings.append(
                        self._at(
                            doc,
                            rel,
                            ss.GC_PENDING,
                            pointer,
                            "expected startup GC to have deleted an archived session idle for "
                            "over 90 days, found it",
                        )
                    )
            if isinstance(created, (int, float)) and now - created > HOUR and directory:
                listing = self._history(directory)
                # GC deletes a home-root entry whose directory is gone (no history/ either);
                # a location that leads nowhere is "unreachable", which GC skips, and so is one
                # it cannot use (SS131): the entry is project-bound all the same
                if (
                    (self.snapshot.exists(directory) or not self._located(sid))
                    and (
                        isinstance(listing, Unreadable)
                        or not any(n.endswith(".json") for n in listing)
                    )
                    and not self._linked_away(directory)
                ):
                    self.findings.append(
                        self._at(
                            doc,
                            rel,
                            ss.GC_PENDING,
                            pointer,
                            "expected startup GC to have deleted an empty session older than 1 "
                            "h, found it",
                        )
                    )
        if len(entries) > GC_CAP and archived_left:
            self.findings.append(
                self._at(
                    doc,
                    rel,
                    ss.GC_PENDING,
                    "",
                    f"expected at most {GC_CAP} entries while archived ones remain, found "
                    f"{len(entries)}",
                )
            )

    def _projects_by_path(self) -> dict[str, tuple[str, dict[str, object]]]:
        found: dict[str, tuple[str, dict[str, object]]] = {}
        if self.projects is not None:
            assert isinstance(self.projects.value, dict)
            for pid, project in self.projects.value.items():
                if (
                    isinstance(project, dict)
                    and isinstance(project.get("path"), str)
                    and project.get("is_default") is not True
                ):
                    found[str(project["path"]).rstrip("/")] = (pid, project)
        return found

    def _check_locations(self, located_dirs: dict[str, str | None]) -> None:
        doc = self.locations
        if doc is None:
            return
        rel = "sessions/locations.json"
        assert isinstance(doc.value, dict)
        by_path = self._projects_by_path() if self.projects is not None else None
        for sid, location in doc.value.items():
            pointer = jp.append("", sid)
            suffix = f"/.openprogram/sessions/{sid}"
            if not isinstance(location, str) or not location.endswith(suffix):
                continue  # malformed: SS131
            root = location[: -len(suffix)]
            if by_path is not None:
                owner = by_path.get(root)
                session_ids = owner[1].get("session_ids") if owner else None
                if owner is None or not isinstance(session_ids, list) or sid not in session_ids:
                    self.findings.append(
                        self._at(
                            doc,
                            rel,
                            ss.LOCATION_BINDING,
                            pointer,
                            f"expected a non-default project at {quote(root)} listing "
                            f"{quote(sid)}, found none",
                        )
                    )
                    owner = None
            else:
                owner = None
            directory = located_dirs.get(sid)
            if directory is None:
                continue
            meta = self.meta(directory)
            if meta is None and self._linked_away(directory):
                continue  # its directory is a symlink off the checked tree: SS101 says so
            if meta is None:
                self.findings.append(
                    self._at(
                        doc,
                        rel,
                        ss.LOCATION_BINDING,
                        pointer,
                        f"expected a session with meta.json at {quote(directory or '.')}, found "
                        "none",
                    )
                )
                continue
            if owner is not None and meta.get("project_id") != owner[0]:
                self.findings.append(
                    self._at(
                        doc,
                        rel,
                        ss.LOCATION_BINDING,
                        pointer,
                        f"expected meta.project_id {quote(owner[0])} in {directory}meta.json, "
                        f"found {show(meta.get('project_id'))}",
                    )
                )
            work_dir = meta.get("work_dir")
            if isinstance(work_dir, str) and work_dir.rstrip("/") != root:
                self.findings.append(
                    self._at(
                        doc,
                        rel,
                        ss.LOCATION_BINDING,
                        pointer,
                        f"expected meta.work_dir {quote(root)} in {directory}meta.json, found "
                        f"{quote(work_dir)}",
                    )
                )

    def _check_projects(self, located_dirs: dict[str, str | None]) -> None:
        doc = self.projects
        if doc is None:
            return
        rel = "projects/projects.json"
        assert isinstance(doc.value, dict)
        owners: dict[str, str] = {}
        for pid, project in doc.value.items():
            if not isinstance(project, dict) or not isinstance(project.get("session_ids"), list):
                continue
            pointer = jp.append("", pid)
            path = project.get("path")
            project_dir: str | None = None
            if (
                project.get("is_default") is not True
                and isinstance(path, str)
                and path.startswith("/")
            ):
                project_dir = self._resolve(path, doc, rel, pointer + "/path")
                if project_dir is not None:
                    prefix = project_dir + "/" if project_dir else ""
                    if self.snapshot.is_dir(prefix + ".openprogram/sessions") and not is_state_dir(
                        self.snapshot, prefix + ".openprogram/"
                    ):
                        self.findings.extend(check_project_gitignore(self.snapshot, prefix))
                        listing = self.snapshot.list(prefix + ".openprogram/sessions")
                        if not isinstance(listing, Unreadable):
                            for name in listing:
                                candidate = f"{prefix}.openprogram/sessions/{name}/"
                                if self.snapshot.is_dir(candidate + "history"):
                                    self.discovered.append(candidate)
                        self.discovered.extend(
                            linked_sessions(self.snapshot, prefix + ".openprogram/sessions")
                        )
            for index, sid in enumerate(project["session_ids"]):
                if not isinstance(sid, str):
                    continue
                item = f"{pointer}/session_ids/{index}"
                if sid in owners and owners[sid] != pid:
                    self.findings.append(
                        self._at(
                            doc,
                            rel,
                            ss.PROJECT_SESSIONS,
                            item,
                            f"expected {quote(sid)} in one project's session_ids, found it also "
                            f"in {quote(owners[sid])}",
                        )
                    )
                owners.setdefault(sid, pid)
                directory = located_dirs.get(sid) if sid in located_dirs else None
                if sid in located_dirs and directory is None:
                    continue  # unresolvable location: reported there
                candidates = [d for d in (directory, self._home_dir(sid)) if d is not None]
                if project_dir is not None:
                    prefix = project_dir + "/" if project_dir else ""
                    candidates.append(f"{prefix}.openprogram/sessions/{sid}/")
                if not any(
                    self.meta(d) is not None
                    or self.snapshot.is_dir(d + "history")
                    or self._linked_away(d)  # SS101 says where it went
                    for d in candidates
                ):
                    self.findings.append(
                        self._at(
                            doc,
                            rel,
                            ss.PROJECT_SESSIONS,
                            item,
                            f"expected a session directory for {quote(sid)}, found none "
                            "(prune_sessions would drop it)",
                        )
                    )


def linked_sessions(snapshot: Snapshot, sessions: str) -> list[str]:
    """The entries of a sessions directory that are symlinks in place of a session directory:
    the walk does not follow them (nothing outside the root is reached), so their files are
    never claimed, and without this they would go unseen. The registries' own files are not
    sessions."""
    listing = snapshot.list(sessions)
    if isinstance(listing, Unreadable):
        return []
    real_parent = snapshot.resolve(sessions)
    if isinstance(real_parent, Unreadable):
        return []
    found = []
    for name in listing:
        if name.endswith((".json", ".tmp", ".lock")):
            continue  # the registries and their atomic-write leftovers
        path = f"{sessions}/{name}"
        real = snapshot.resolve(path)
        expected = f"{real_parent}/{name}" if real_parent else name
        # a symlink: to a directory here, or to what cannot be followed (off the tree, dangling)
        if isinstance(real, Unreadable) or (real != expected and snapshot.is_dir(path)):
            found.append(path + "/")
    return found


# --- memory ---------------------------------------------------------------------------------------

HOME_SESSION = re.compile(r"^(?P<state>(?:.*/)?)sessions/(?P<sid>[^/]+)/$")


def check_markers(
    snapshot: Snapshot,
    directory: str,
    all_nodes: list[Node],
    max_depth: int = strict_json.DEFAULT_MAX_DEPTH,
    path_map: PathMap | None = None,
) -> list[Finding]:
    """[52] nodes marked as written to their state directory's memory workspace have a frame.
    A home-root session's state directory holds it; a project-bound session's is any state
    directory of the checked tree whose locations.json (read through the path-map) lists the
    session at this place. With none in the tree the frames cannot be looked for: SS150 says
    so, once for the session."""
    marked = [n for n in all_nodes if isinstance(n.marker, str)]
    if not marked:
        return []
    state, sid = _keeping_state(snapshot, directory, max_depth, path_map or PathMap({}))
    if state is None:
        where = (
            "the session is the checked root"
            if not directory
            else "no state directory of the checked tree lists it in sessions/locations.json"
        )
        return [
            ss.MARKER_NOT_JUDGED.finding(
                marked[0].path,
                f"expected the memory workspace of {quote(marked[0].marker)} in the checked tree "
                f"to look for the frames of {len(marked)} marked node(s), found none: {where}",
                pointer="/metadata/memory_written_scriptorium",
            )
        ]
    data = snapshot.read(state + "memory/.scriptorium/workspace-id")
    if isinstance(data, Unreadable):
        return []  # no scriptorium workspace: no marker names this state directory's memory
    workspace = data.decode("utf-8", "replace").strip()
    archive = f"{state}memory/sources/openprogram/_v2/{url_quote(sid, safe='')}.md"
    content = snapshot.read(archive)
    if isinstance(content, Unreadable):
        refs: set[str] = set()
    else:
        frames, broken = memory.scan(archive, content)
        if broken:
            return []  # the archive's own finding (SS139) is the cause
        refs = {f.ref for f in frames}
    findings = []
    for node in marked:
        if node.marker == workspace and f"openprogram/{sid}/{node.id}" not in refs:
            findings.append(
                ss.MEMORY_MARKER.finding(
                    node.path,
                    f"expected a frame openprogram/{sid}/{node.id} in {archive}, found none",
                    pointer="/metadata/memory_written_scriptorium",
                )
            )
    return findings


def _keeping_state(
    snapshot: Snapshot, directory: str, max_depth: int, path_map: PathMap
) -> tuple[str | None, str]:
    """The state directory keeping the session at ``directory`` (its memory workspace, its
    shadow-git store) and the session's id: a home-root session's own; a project-bound
    session's, the one of the checked tree whose locations.json places it there."""
    home = HOME_SESSION.match(directory)
    bound = BOUND.match(directory) if home is None or home["state"] else None
    if bound is not None and not is_state_dir(snapshot, bound["project"] + ".openprogram/"):
        sid = bound["sid"]
        return _listing_state(snapshot, sid, directory, max_depth, path_map), sid
    if home is not None:
        return home["state"], home["sid"]
    return None, _name(snapshot, directory)


# per snapshot: the state directories looked at and the sessions their locations.json place
# (a few per tree; dropped with the snapshot)
_STATES: weakref.WeakKeyDictionary[Snapshot, dict[str, dict[str, str | None]]] = (
    weakref.WeakKeyDictionary()
)


def _listing_state(
    snapshot: Snapshot, sid: str, directory: str, max_depth: int, path_map: PathMap
) -> str | None:
    """The state directory of the checked tree whose locations.json places session ``sid`` at
    ``directory``: looked for in each directory from the session's project up to the root
    (``.openprogram/`` and ``.openprogram-<profile>/``), which is where a home directory holds
    it; None when there is none."""
    states = _STATES.setdefault(snapshot, {})
    parts = directory.rstrip("/").split("/")[:-3]  # the project directory's components
    for depth in range(len(parts), -1, -1):
        base = "/".join(parts[:depth])
        base = f"{base}/" if base else ""
        listing = snapshot.list(base.rstrip("/"))
        if isinstance(listing, Unreadable):
            continue
        for name in sorted(listing):
            if name != ".openprogram" and not name.startswith(".openprogram-"):
                continue
            state = f"{base}{name}/"
            if state not in states:
                if not snapshot.exists(state + "sessions/locations.json"):
                    states[state] = {}
                else:
                    registries = Registries(snapshot, state, max_depth, path_map)
                    states[state] = registries.session_dirs()
            if states[state].get(sid) == directory:
                return state
    return None


class Workspace:
    """A state directory's memory: archives against the sessions they quote, block ids, and the
    proposal's provenance records against the sessions they point to."""

    def __init__(self, snapshot: Snapshot, state: str, max_depth: int, path_map: PathMap) -> None:
        self.snapshot = snapshot
        self.state = state
        self.max_depth = max_depth
        # only the registries' locations are used here; their findings come from their own check
        self.located = Registries(snapshot, state, max_depth, path_map).session_dirs()
        self._listings: dict[str, dict[str, str] | None] = {}

    def nodes_of(self, sid: str) -> dict[str, str] | None:
        """Node id -> file path of session ``sid``, or None when it has no session here."""
        if sid not in self._listings:
            directory = self.located.get(sid, f"{self.state}sessions/{sid}/")
            found: dict[str, str] | None = None
            if directory is not None:
                listing = self.snapshot.list(directory + "history")
                if not isinstance(listing, Unreadable):
                    found = {}
                    for name in listing:
                        match = layout.NODE_NAME.match(name)
                        if match is not None:
                            found[match[3]] = f"{directory}history/{name}"
            self._listings[sid] = found
        return self._listings[sid]

    def check(self, items: list[Claimed], *, block_ids: bool = True) -> list[Finding]:
        """The cross-file findings of ``items`` (claimed memory files of this workspace), and
        with ``block_ids`` those of the workspace's block ids (every topic file: once per run,
        however many parts of the run bring topic files)."""
        findings: list[Finding] = []
        for item in items:
            if item.kind == layout.ARCHIVE:
                findings.extend(self._archive(item.path))
            elif item.kind == layout.RECORDS:
                findings.extend(self._records(item.path))
        if block_ids and any(item.kind == layout.TOPIC for item in items):
            findings.extend(self._block_ids())
        return findings

    def _archive(self, path: str) -> list[Finding]:
        data = self.snapshot.read(path)
        if isinstance(data, Unreadable):
            return []
        findings = []
        for frame in memory.scan(path, data)[0]:
            parts = frame.ref.split("/")
            if len(parts) != 3 or parts[0] != "openprogram":
                continue
            sid, nid = parts[1], parts[2]
            nodes_here = self.nodes_of(sid)

            def bad(message: str, _line: int = frame.line) -> Finding:
                return ss.ARCHIVE_REF.finding(path, message, line=_line)

            if nodes_here is None:
                findings.append(
                    bad(
                        f"expected the session {quote(sid)} of {quote(frame.ref)}, found none "
                        "(deleted?)"
                    )
                )
                continue
            node_path = nodes_here.get(nid)
            if node_path is None:
                findings.append(
                    bad(f"expected the node {quote(nid)} in session {quote(sid)}, found none")
                )
                continue
            content = self.snapshot.read(node_path)
            accepted = (
                None
                if isinstance(content, Unreadable)
                else strict_json.accepts(content, self.max_depth)
            )
            value = accepted[1] if accepted is not None else None
            if not isinstance(value, dict):
                continue  # the node file's own findings say why
            if value.get("role") not in ("user", "llm"):
                findings.append(
                    bad(
                        f"expected a user or llm node, found the {show(value.get('role'))} node "
                        f"{quote(nid)}"
                    )
                )
            elif value.get("output") != frame.body:
                findings.append(
                    bad(
                        f"expected the record to equal the output of {node_path}, found "
                        "different text"
                    )
                )
        return findings

    def _block_ids(self) -> list[Finding]:
        seen: dict[str, str] = {}
        findings = []
        stack = [self.state + "memory/topics"]
        files = []
        while stack:
            directory = stack.pop()
            listing = self.snapshot.list(directory)
            if isinstance(listing, Unreadable):
                continue
            for name in listing:
                path = f"{directory}/{name}"
                if self.snapshot.is_dir(path):
                    stack.append(path)
                elif name.endswith(".md"):
                    files.append(path)
        for path in sorted(files):
            data = self.snapshot.read(path)
            if isinstance(data, Unreadable):
                continue
            for number, line in enumerate(data.decode("utf-8", "replace").split("\n"), 1):
                block = memory.BLOCK_ID.search(line)
                if block is None or line.startswith("[^"):
                    continue
                where = f"{path}:{number}"
                if block[1] in seen:
                    findings.append(
                        ss.TOPIC.finding(
                            path,
                            f"expected block id ^{block[1]} once in the workspace, found it also "
                            f"at {seen[block[1]]}",
                            line=number,
                        )
                    )
                else:
                    seen[block[1]] = where
        return findings

    def _records(self, path: str) -> list[Finding]:
        data = self.snapshot.read(path)
        if isinstance(data, Unreadable):
            return []
        findings = []
        for number, line in enumerate(data.split(b"\n"), 1):
            accepted = strict_json.accepts(line, self.max_depth) if line.strip() else None
            record = accepted[1] if accepted is not None else None
            provenance = record.get("provenance") if isinstance(record, dict) else None
            if not isinstance(provenance, dict) or not isinstance(
                provenance.get("session_id"), str
            ):
                continue
            sid = provenance["session_id"]
            nodes_here = self.nodes_of(sid)
            if nodes_here is None:
                findings.append(
                    ss.PROVENANCE_REF.finding(
                        path,
                        f"expected the session {quote(sid)}, found none (deleted?)",
                        line=number,
                        pointer="/provenance/session_id",
                    )
                )
                continue
            ids = provenance.get("node_ids")
            for index, nid in enumerate(ids if isinstance(ids, list) else []):
                if isinstance(nid, str) and nid not in nodes_here:
                    findings.append(
                        ss.PROVENANCE_REF.finding(
                            path,
                            f"expected the node {quote(nid)} in session {quote(sid)}, found none",
                            line=number,
                            pointer=f"/provenance/node_ids/{index}",
                        )
                    )
        return findings


# --- project and shadow commits named by nodes ----------------------------------------------------


def _session_map(
    snapshot: Snapshot,
    directory: str,
    meta: dict[str, object],
    stamped: list[Node],
    max_depth: int,
    path_map: PathMap,
) -> tuple[PathMap, str | None]:
    """How a session's node metadata reads absolute paths, and the state directory keeping the
    session (None: none in the checked tree). The configured map, or the one that state
    directory's registries read theirs with; a bound session with none in the tree reads its
    work_dir, else the one repository its project_commit stamps name (OpenProgram stamps the
    bound project's path), as the project directory holding it."""
    state, _ = _keeping_state(snapshot, directory, max_depth, path_map)
    if path_map.pairs:
        return path_map, state
    if state is not None:
        maps = _MAPS.setdefault(snapshot, {})
        if state not in maps:
            maps[state] = Registries(snapshot, state, max_depth, path_map).path_map
        return maps[state], state
    bound = BOUND.match(directory)
    if bound is not None:
        stamps = [n.commits[0] for n in stamped if n.commits is not None]
        repos = {s.get("repo") for s in stamps if isinstance(s, dict)}
        work_dir = meta.get("work_dir") if isinstance(meta.get("work_dir"), str) else None
        project = work_dir or (repos.pop() if len(repos) == 1 else None)
        if isinstance(project, str) and project.startswith("/"):
            return PathMap({project: bound["project"].rstrip("/") or "."}), None
    return path_map, None


# per snapshot: the path map of each state directory's registries (a few per tree)
_MAPS: weakref.WeakKeyDictionary[Snapshot, dict[str, PathMap]] = weakref.WeakKeyDictionary()
