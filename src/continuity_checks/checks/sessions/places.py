"""Where sessions and state directories are in a tree, and what stands in a session directory's
place: the look-ups the session, registry and memory checks share (through the snapshot, unlike
:mod:`layout`, which answers by path alone)."""

from __future__ import annotations

import re

from continuity_checks.checks.sessions import files
from continuity_checks.checks.sessions import rules as ss
from continuity_checks.core.display import quote
from continuity_checks.core.findings import Finding
from continuity_checks.core.snapshot import Snapshot, Unreadable

#: a session directory inside a project (``<project>.openprogram/sessions/<sid>/``)
BOUND = re.compile(r"^(?P<project>(?:.*/)?)\.openprogram/sessions/(?P<sid>[^/]+)/$")
#: a session directory in a state directory (``<state>sessions/<sid>/``)
HOME_SESSION = re.compile(r"^(?P<state>(?:.*/)?)sessions/(?P<sid>[^/]+)/$")
REGISTRIES = ("sessions/index.json", "sessions/locations.json", "projects/projects.json")
#: The files that make a ``.openprogram/`` directory a state directory (:func:`is_state_dir`).
STATE_MARKERS = (*REGISTRIES, "owner.json")


def session_name(snapshot: Snapshot, directory: str) -> str:
    """The name of the session directory at ``directory`` (``""``: the checked root)."""
    if directory:
        return directory.rstrip("/").rpartition("/")[2]
    name, target = snapshot.root_name()
    # the checked root named through a symlink: the session's directory is the one it leads to
    return name if target is None else target.rstrip("/").rpartition("/")[2]


def session_of_node(path: str) -> str:
    """The session directory (``""`` or ending in /) of a path claimed as a node file, which is
    always ``<directory>history/<name>``: string slicing, not the layout's pattern (this runs
    for every node file)."""
    return path[: path.rindex("/") + 1 - len("history/")]


def last_node_file(
    snapshot: Snapshot, directory: str, listing: list[str] | Unreadable | None = None
) -> str | None:
    """The session's node file that comes last by name: the one whose arrival in ``check_file``
    completes the session (see :class:`~.session.Gather`). None when history/ has no node file."""
    if listing is None:
        listing = snapshot.list(directory + "history")
    if isinstance(listing, Unreadable):
        return None
    # the listing is sorted: the last name ending in .json
    return next(
        (f"{directory}history/{name}" for name in reversed(listing) if name.endswith(".json")),
        None,
    )


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
    parent = str(snapshot.root or "").rstrip("/").rpartition("/")[0]
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
