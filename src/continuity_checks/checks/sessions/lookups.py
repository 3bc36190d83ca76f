"""One tree as the session checks read it, with what they look up in it once per tree: the
state directory keeping a session (its memory workspace, its shadow-git store), the sessions
each state directory's locations.json places, and the path-map its registries read with."""

from __future__ import annotations

from continuity_checks.checks.sessions.nodes import Node
from continuity_checks.checks.sessions.pathmap import PathMap
from continuity_checks.checks.sessions.places import BOUND, HOME_SESSION, is_state_dir, session_name
from continuity_checks.checks.sessions.registries import Registries
from continuity_checks.core.snapshot import Snapshot, Unreadable


class TreeLookups:
    """The snapshot, depth limit and configured path-map the session checks of one tree read,
    and the state directories' answers they share (a few per tree). The family makes one per
    snapshot and passes it down: nothing is kept beyond the tree it belongs to."""

    def __init__(self, snapshot: Snapshot, max_depth: int, path_map: PathMap) -> None:
        self.snapshot = snapshot
        self.max_depth = max_depth
        self.path_map = path_map
        #: per state directory: each session its locations.json places, with its directory
        self._located: dict[str, dict[str, str | None]] = {}
        #: per state directory: the path-map its registries read absolute paths with
        self._maps: dict[str, PathMap] = {}

    def located(self, state: str) -> dict[str, str | None]:
        """Each session id the locations.json of ``state`` places, with its directory (None:
        not resolvable); none without a locations.json."""
        found = self._located.get(state)
        if found is None:
            if not self.snapshot.exists(state + "sessions/locations.json"):
                found = {}
            else:
                registries = Registries(self.snapshot, state, self.max_depth, self.path_map)
                found = registries.session_dirs()
            self._located[state] = found
        return found

    def keeping(self, directory: str) -> tuple[str | None, str]:
        """The state directory keeping the session at ``directory`` (its memory workspace, its
        shadow-git store) and the session's id: a home-root session's own; a project-bound
        session's, the one of the checked tree whose locations.json places it there."""
        home = HOME_SESSION.match(directory)
        bound = BOUND.match(directory) if home is None or home["state"] else None
        if bound is not None and not is_state_dir(
            self.snapshot, bound["project"] + ".openprogram/"
        ):
            sid = bound["sid"]
            return self._listing_state(sid, directory), sid
        if home is not None:
            return home["state"], home["sid"]
        return None, session_name(self.snapshot, directory)

    def _listing_state(self, sid: str, directory: str) -> str | None:
        """The state directory of the checked tree whose locations.json places session ``sid``
        at ``directory``: looked for in each directory from the session's project up to the
        root (``.openprogram/`` and ``.openprogram-<profile>/``), which is where a home
        directory holds it; None when there is none."""
        parts = directory.rstrip("/").split("/")[:-3]  # the project directory's components
        for depth in range(len(parts), -1, -1):
            base = "/".join(parts[:depth])
            base = f"{base}/" if base else ""
            listing = self.snapshot.list(base.rstrip("/"))
            if isinstance(listing, Unreadable):
                continue
            for name in sorted(listing):
                if name != ".openprogram" and not name.startswith(".openprogram-"):
                    continue
                state = f"{base}{name}/"
                if self.located(state).get(sid) == directory:
                    return state
        return None

    def session_map(
        self, directory: str, meta: dict[str, object], stamped: list[Node]
    ) -> tuple[PathMap, str | None]:
        """How a session's node metadata reads absolute paths, and the state directory keeping
        the session (None: none in the checked tree). The configured map, or the one that state
        directory's registries read theirs with; a bound session with none in the tree reads its
        work_dir, else the one repository its project_commit stamps name (OpenProgram stamps the
        bound project's path), as the project directory holding it."""
        state, _ = self.keeping(directory)
        if self.path_map.pairs:
            return self.path_map, state
        if state is not None:
            found = self._maps.get(state)
            if found is None:
                registries = Registries(self.snapshot, state, self.max_depth, self.path_map)
                found = self._maps[state] = registries.path_map
            return found, state
        bound = BOUND.match(directory)
        if bound is not None:
            stamps = [n.commits[0] for n in stamped if n.commits is not None]
            repos = {s.get("repo") for s in stamps if isinstance(s, dict)}
            work_dir = meta.get("work_dir") if isinstance(meta.get("work_dir"), str) else None
            project = work_dir or (repos.pop() if len(repos) == 1 else None)
            if isinstance(project, str) and project.startswith("/"):
                return PathMap({project: bound["project"].rstrip("/") or "."}), None
        return self.path_map, None
