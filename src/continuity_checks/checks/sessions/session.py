"""One session judged whole: its node files as one DAG, meta.json against them, the commits
its nodes stamp, its branches, backups and memory markers. ``check_file`` gathers a session's
node files as they arrive (:class:`Gather`); the tree check judges the rest
(:func:`check_sessions`, on every usable CPU for many)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from continuity_checks.checks.sessions import memory
from continuity_checks.checks.sessions import rules as ss
from continuity_checks.checks.sessions.common import read_json
from continuity_checks.checks.sessions.dag import check_dag, check_meta_nodes
from continuity_checks.checks.sessions.lookups import TreeLookups
from continuity_checks.checks.sessions.nodefiles import NodeFile, check_node_file, load_nodes
from continuity_checks.checks.sessions.nodes import Node
from continuity_checks.checks.sessions.places import (
    BOUND,
    check_project_gitignore,
    is_state_dir,
    last_node_file,
    repository_itself,
    session_name,
    session_of_node,
    symlinked,
)
from continuity_checks.checks.sessions.stamps import check_commit_stamps
from continuity_checks.core.display import quote
from continuity_checks.core.findings import Finding
from continuity_checks.core.parallel import split_map, usable_cpus
from continuity_checks.core.snapshot import Snapshot, Unreadable

MAX_BACKUP_TURNS = 100


class Gather:
    """Node files as ``check_file`` receives them, one session at a time, so that each is read
    once (by the engine) rather than again in ``check_tree``.

    A session is checked whole — its DAG, its meta.json, branches, backups — when its last node
    file by name arrives; whichever process of the engine's that file reaches does it, and its
    findings travel back with that call's. A node file that has not arrived by then (handled
    by another process, in another order, or not part of the run) is read there. Everything
    held belongs to the session being gathered: a file of another session drops it (files
    arrive sorted, a session's together), so memory is one session's nodes, whatever the number
    of sessions. :class:`~.stream.SessionsTree` judges a session only when its last node file
    was not part of the run, or could not be read: each session is judged once."""

    def __init__(self) -> None:
        self.directory: str | None = None
        self.snapshot: Snapshot | None = None
        self.listing: list[str] | Unreadable = []
        self.last: str | None = None
        self.held: dict[str, NodeFile] = {}

    def node(self, path: str, data: bytes, tree: TreeLookups) -> list[Finding]:
        """The findings of the node file ``path`` of ``tree`` (bytes ``data``): none until the
        session's last node file, then those of the whole session."""
        directory = session_of_node(path)
        snapshot = tree.snapshot
        # what is held belongs to one session of one tree (history mode checks two trees of
        # each commit with the same family)
        if directory != self.directory or snapshot is not self.snapshot:
            self.directory, self.snapshot, self.held = directory, snapshot, {}
            self.listing = snapshot.list(directory + "history")
            self.last = last_node_file(snapshot, directory, self.listing)
        self.held[path] = check_node_file(path, data, snapshot, tree.max_depth)
        if path != self.last:
            return []
        held, listing = self.held, self.listing
        self.directory, self.snapshot, self.held, self.listing = None, None, {}, []
        return check_session(tree, directory, held, listing)


PARALLEL_SESSIONS = 50  # below this a second process costs more than it saves


def check_sessions(tree: TreeLookups, directories: list[str]) -> list[Finding]:
    """Each session on its own (sessions share nothing), on every usable CPU for many."""

    def part(chunk: Sequence[str]) -> list[Finding]:
        found: list[Finding] = []
        for directory in chunk:
            found.extend(check_session(tree, directory))
        return found

    jobs = usable_cpus() if len(directories) >= PARALLEL_SESSIONS else 1
    return [f for chunk in split_map(part, directories, jobs) for f in chunk]


def check_session(
    tree: TreeLookups,
    directory: str,
    held: Mapping[str, NodeFile] | None = None,
    listing: list[str] | Unreadable | None = None,
) -> list[Finding]:
    """The findings of the session at ``directory`` of ``tree``. A node file in ``held`` was
    checked already, from the bytes the engine read; ``listing`` is its history/ listing when
    the caller has it."""
    snapshot, max_depth = tree.snapshot, tree.max_depth
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
                local, state = tree.session_map(directory, doc.value, stamped)
                sid = str(doc.value.get("id") or session_name(snapshot, directory))
                found = check_commit_stamps(snapshot, stamped, sid, local, state)
                findings.extend(loaded.place(found))
    if snapshot.is_dir(directory + ".git"):
        findings.extend(check_branches(snapshot, directory))
    findings.extend(check_backups(snapshot, directory, by_id))
    marked = [n for n in all_nodes if isinstance(n.marker, str)]
    if marked:
        state, sid = tree.keeping(directory)
        findings.extend(loaded.place(memory.check_markers(snapshot, directory, marked, state, sid)))
    bound = BOUND.match(directory)
    if bound is not None and not is_state_dir(snapshot, bound["project"] + ".openprogram/"):
        findings.extend(check_project_gitignore(snapshot, bound["project"]))
    return findings


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
