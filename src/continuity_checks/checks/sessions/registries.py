"""The registries of one state directory (``sessions/index.json``, ``sessions/locations.json``,
``projects/projects.json``) against each other and against the sessions they name; the index's
own cross-checks are in :mod:`index`."""

from __future__ import annotations

from continuity_checks.checks.sessions import rules as ss
from continuity_checks.checks.sessions.common import read_json
from continuity_checks.checks.sessions.index import check_index
from continuity_checks.checks.sessions.pathmap import PathMap, Unresolved, inferred_home
from continuity_checks.checks.sessions.places import (
    check_project_gitignore,
    is_state_dir,
    linked_sessions,
    symlinked,
)
from continuity_checks.core import pointer as jp
from continuity_checks.core import strict_json
from continuity_checks.core.display import quote, show
from continuity_checks.core.findings import Finding
from continuity_checks.core.rules import Rule
from continuity_checks.core.snapshot import Snapshot, Unreadable
from continuity_checks.core.strict_json import located

METAS_KEPT = 64  # meta.json values kept for the registries' cross-checks (each is read ≤ 3 times)


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

    def at(
        self, doc: strict_json.Document, rel: str, rule: Rule, pointer: str, message: str
    ) -> Finding:
        """A finding at ``pointer`` in the registry ``rel`` of this state directory."""
        return located(rule, doc, self.state + rel, pointer, message)

    def _resolve(
        self, absolute: str, doc: strict_json.Document, rel: str, pointer: str
    ) -> str | None:
        resolved = self.path_map.resolve(absolute, self.snapshot)
        if isinstance(resolved, Unresolved):
            self.findings.append(
                self.at(
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
        """The session's meta.json as an object, None when it is not one (a few kept)."""
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
        check_index(self, located_dirs)
        self._check_locations(located_dirs)
        self._check_projects(located_dirs)
        return self.findings

    def history(self, directory: str) -> list[str] | Unreadable:
        """The session's history/ listing; the last one asked for is kept (the index's checks
        of one entry ask twice)."""
        if self._listed is None or self._listed[0] != directory:
            self._listed = (directory, self.snapshot.list(directory + "history"))
        return self._listed[1]

    def linked_away(self, directory: str) -> bool:
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

    def lists_location(self, sid: str) -> bool:
        """Whether locations.json lists ``sid``, whatever its location (valid or not)."""
        return (
            self.locations is not None
            and isinstance(self.locations.value, dict)
            and sid in self.locations.value
        )

    def dir_of(self, sid: str, located_dirs: dict[str, str | None]) -> str | None:
        """The directory of session ``sid``: where locations.json places it (None: not
        resolvable), else its directory in this state directory."""
        if sid in located_dirs:
            return located_dirs[sid]
        return self._home_dir(sid)

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
                        self.at(
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
            if meta is None and self.linked_away(directory):
                continue  # its directory is a symlink off the checked tree: SS101 says so
            if meta is None:
                self.findings.append(
                    self.at(
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
                    self.at(
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
                    self.at(
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
                        self.at(
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
                    or self.linked_away(d)  # SS101 says where it went
                    for d in candidates
                ):
                    self.findings.append(
                        self.at(
                            doc,
                            rel,
                            ss.PROJECT_SESSIONS,
                            item,
                            f"expected a session directory for {quote(sid)}, found none "
                            "(prune_sessions would drop it)",
                        )
                    )
