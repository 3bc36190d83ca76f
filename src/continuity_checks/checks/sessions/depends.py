"""Which claimed files of a tree a change of one path can break without touching them
(:meth:`SessionsFamily.dependents`): what the family's file and tree checks read besides the
file they judge.

A session is judged whole by the tree check as soon as one of its claimed files is in the run
(:class:`~continuity_checks.checks.sessions.stream.SessionsTree`), so a change inside a session
directory answers one file of it (its ``meta.json``, else its last node file), never each of
its nodes. The answer is what can turn into an *error* (the state a commit leaves is judged by
its errors): the registries' comparisons with a session (index ↔ meta.json, preview, location
binding, project listing, GC) and the memory files' references to its nodes and markers are
warnings, so their files are answered only when the configuration makes one of those rules an
error. A change under ``memory/`` answers the topics that link to an archive (SS142, an error)
and the sessions whose markers read it (SS141, a warning). Every answer costs a few look-ups by
name or the listing of a few directories: what the path touches, never the size of the tree.
"""

from __future__ import annotations

import re
from urllib.parse import quote, unquote

from continuity_checks.checks.sessions import layout
from continuity_checks.checks.sessions import rules as ss
from continuity_checks.checks.sessions.pathmap import PathMap
from continuity_checks.checks.sessions.places import (
    BOUND,
    HOME_SESSION,
    REGISTRIES,
    STATE_MARKERS,
    is_state_dir,
    last_node_file,
)
from continuity_checks.checks.sessions.registries import Registries
from continuity_checks.core.snapshot import Snapshot, Unreadable

#: a path inside a session directory that its checks read: the directory (``""`` for the
#: root, else ending in ``sessions/<sid>/``) and the part inside it
_IN_SESSION = re.compile(
    r"^(?P<dir>(?:.*/)?sessions/[^/]+/)?"
    r"(?P<rest>history/[^/]+|meta\.json|file_backups/[^/]+(?:/[^/]+)?|large_nodes/[^/]+|[^/]+\.tmp)$"
)
#: an entry of a sessions directory itself (a symlink in place of a session directory)
_SESSION_ENTRY = re.compile(r"^(?P<dir>(?:.*/)?sessions/[^/]+)$")
_MEMORY = re.compile(r"^(?P<state>(?:.*/)?)memory/(?P<rest>.+)$")
#: a file at the top of a state directory: the root's, or a ``.openprogram*/`` directory's
_STATE_DIR = re.compile(r"^(?:(?:.*/)?\.openprogram[^/]*/)?[^/]+$")
_ARCHIVE = re.compile(r"^sources/openprogram/_v2/(?P<sid>[^/]+)\.md$")
#: the warnings whose checks of one file read a session's meta.json, nodes or presence
REGISTRY_RULES = frozenset(
    r.id
    for r in (ss.INDEX_META, ss.PREVIEW, ss.LOCATION_BINDING, ss.PROJECT_SESSIONS, ss.GC_PENDING)
)
QUOTING_RULES = frozenset(r.id for r in (ss.ARCHIVE_REF, ss.PROVENANCE_REF))
MARKER_RULES = frozenset({ss.MEMORY_MARKER.id})


class Dependents:
    """The family's answer, with what it needs to place a session (depth limit, path-map) and
    the rules the configuration makes errors (``raised``)."""

    def __init__(self, max_depth: int, path_map: PathMap, raised: frozenset[str]) -> None:
        self.max_depth = max_depth
        self.path_map = path_map
        self.registries = bool(raised & REGISTRY_RULES)
        self.quoting = bool(raised & QUOTING_RULES)
        self.markers = bool(raised & MARKER_RULES)

    def of(self, path: str, tree: Snapshot, edited: bool) -> list[str]:
        found: list[str] = []
        inside = _IN_SESSION.match(path)
        if inside is not None:
            directory = inside["dir"] or ""
            found += session_files(tree, directory)
            registries = self.registries and inside["rest"].startswith(("history/", "meta."))
            quoting = self.quoting and inside["rest"].startswith("history/")
            if directory and (registries or quoting):
                states = self.states_of(tree, directory)
                if registries:
                    found += [s + r for s in states for r in REGISTRIES if tree.exists(s + r)]
                if quoting:
                    found += self.quoting_files(tree, states, directory)
            return found
        entry = _SESSION_ENTRY.match(path)
        if entry is not None and not path.endswith((".json", ".tmp", ".lock")):
            states = self.states_of(tree, entry["dir"] + "/")
            return [s + r for s in states for r in REGISTRIES if tree.exists(s + r)]
        memory = _MEMORY.match(path)
        if memory is not None:
            return self.reading_memory(tree, memory["state"], memory["rest"])
        marker = next((m for m in STATE_MARKERS if path == m or path.endswith("/" + m)), None)
        if marker is not None and (marker in REGISTRIES or _STATE_DIR.match(path)):
            # the registries of a state directory are read and judged together
            state = path[: -len(marker)]
            found = [state + r for r in REGISTRIES if r != marker and tree.exists(state + r)]
            if not edited and not any(tree.exists(state + m) for m in STATE_MARKERS if m != marker):
                # the marker alone tells a state directory from a project's (is_state_dir),
                # and a project's sessions need its .gitignore: one session says which it is
                found += one_session(tree, state + "sessions")
            return found
        if path.endswith(".openprogram/.gitignore"):
            # [46] every session bound to the project reads it: one of them says so
            return one_session(tree, path[: -len(".gitignore")] + "sessions")
        return found

    def states_of(self, tree: Snapshot, directory: str) -> list[str]:
        """The state directories (ending in /) whose registries and memory may name the session
        at ``directory``: a home-root session's own, or for a session bound to a project the
        ``.openprogram*/`` directories from the project up to the root that have registries."""
        home = HOME_SESSION.match(directory)
        if home is None:
            return []
        bound = BOUND.match(directory)
        if bound is None or is_state_dir(tree, bound["project"] + ".openprogram/"):
            return [home["state"]]
        parts = bound["project"].rstrip("/").split("/") if bound["project"] else []
        states = []
        for depth in range(len(parts), -1, -1):
            base = "/".join(parts[:depth])
            listing = tree.list(base)
            if isinstance(listing, Unreadable):
                continue
            for name in listing:
                if name == ".openprogram" or name.startswith(".openprogram-"):
                    state = f"{base}/{name}/" if base else f"{name}/"
                    if is_state_dir(tree, state):
                        states.append(state)
        return states

    def quoting_files(self, tree: Snapshot, states: list[str], directory: str) -> list[str]:
        """The memory files of the states' workspaces that quote or cite nodes of the session:
        its v2 archive, and the provenance records."""
        sid = directory.rstrip("/").rpartition("/")[2]
        found = []
        for state in states:
            archive = f"{state}memory/sources/openprogram/_v2/{quote(sid, safe='')}.md"
            if tree.exists(archive):
                found.append(archive)
            for records in ("timeline", "graph"):
                listing = tree.list(f"{state}memory/{records}")
                if not isinstance(listing, Unreadable):
                    found += [
                        f"{state}memory/{records}/{n}" for n in listing if n.endswith(".jsonl")
                    ]
        return found

    def reading_memory(self, tree: Snapshot, state: str, rest: str) -> list[str]:
        """The files whose checks read ``<state>memory/<rest>``: an archive's session (its
        markers look for the archive's frames) and the workspace's topics (their links resolve
        to its anchors); for the workspace id, every session of the state that may be marked."""
        archive = _ARCHIVE.match(rest)
        found: list[str] = []
        if archive is not None:
            found += _topics(tree, state + "memory/topics")
        if not self.markers:
            return found
        if archive is not None:
            sids = [unquote(archive["sid"])]
        elif rest == ".scriptorium/workspace-id":
            listing = tree.list(state + "sessions")
            sids = [] if isinstance(listing, Unreadable) else list(listing)
        else:
            return found
        located = self._located(tree, state)
        for sid in sids:
            directory = located.get(sid) or f"{state}sessions/{sid}/"
            found += session_files(tree, directory)
        return found

    def _located(self, tree: Snapshot, state: str) -> dict[str, str | None]:
        if not tree.exists(state + "sessions/locations.json"):
            return {}
        return Registries(tree, state, self.max_depth, self.path_map).session_dirs()


def one_session(tree: Snapshot, sessions: str) -> list[str]:
    """One claimed file of the first session in the directory ``sessions`` that has one."""
    listing = tree.list(sessions)
    if not isinstance(listing, Unreadable):
        for name in listing:
            found = session_files(tree, f"{sessions}/{name}/")
            if found:
                return found
    return []


def session_files(tree: Snapshot, directory: str) -> list[str]:
    """One claimed file of the session at ``directory``, through which the tree check judges
    it whole: its meta.json, else its last node file; none when it has neither."""
    if tree.exists(directory + "meta.json"):
        return [directory + "meta.json"]
    last = last_node_file(tree, directory)
    return [] if last is None else [last]


def _topics(tree: Snapshot, top: str) -> list[str]:
    """The topic files under ``top`` (the workspace's topics/)."""
    return [p for p in tree.files_under(top) if layout.claims(p) == layout.TOPIC]
