"""Where OpenProgram keeps things, by path alone (the same answer in file and history mode).

A session directory is the checked root itself (a session repository checked on its own),
``sessions/<sid>/`` under a state directory, or ``.openprogram/sessions/<sid>/`` inside a
project; the registries live in ``<state>/sessions/`` and ``<state>/projects/``.
"""

import re

from continuity_checks.core.family import Names
from continuity_checks.core.snapshot import Snapshot

# seq (at least 4 digits), the role letter, the node id
NODE_NAME = re.compile(r"^(\d{4,})-([a-z])-(.+)\.json$")


class _Expression:
    """A regular expression compiled when it is first used (what a compiled pattern would be,
    made later)."""

    __slots__ = ("_compiled", "pattern")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._compiled: re.Pattern[str] | None = None

    def search(self, text: str) -> "re.Match[str] | None":
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = re.compile(self.pattern)
        return compiled.search(text)


# the memory files: compiled when a path under memory/ is first asked about (the commit hook of
# another family's files never is)
_ARCHIVE = _Expression(r"(?:^|/)memory/sources/(?:.*/)?_v2/[^/]+\.md$")
_TOPIC = _Expression(r"(?:^|/)memory/topics/(?:.*/)?[^/]+\.md$")
_RECORDS = _Expression(r"(?:^|/)memory/(?:timeline|graph)/[^/]+\.jsonl$")

#: compiled (by ``re``, once) when a path first gets past the string tests in front of it: the
#: commit hook of another family's files never does
_SESSION_FILE = (
    r"^(?P<dir>(?:.*/)?sessions/(?P<sid>[^/]+)/)?"
    r"(?P<rest>history/[^/]+|meta\.json|file_backups/[^/]+/manifest\.json|[^/]+\.tmp)$"
)

NODE, META, TEMP, BACKUP = "node", "meta", "temp", "backup-manifest"
INDEX, LOCATIONS, PROJECTS, GITIGNORE = "index", "locations", "projects", "gitignore"
ARCHIVE, TOPIC, RECORDS = "archive", "topic", "provenance-records"


class SessionPath:
    """A path inside a session directory: the directory ("" for the root, else ending in /),
    the session id it is named for ("" for the root) and the rest of the path."""

    __slots__ = ("directory", "rest", "sid")

    def __init__(self, directory: str, sid: str, rest: str) -> None:
        self.directory = directory
        self.sid = sid
        self.rest = rest


def session_path(path: str) -> SessionPath | None:
    match = re.match(_SESSION_FILE, path)
    if match is None:
        return None
    return SessionPath(match["dir"] or "", match["sid"] or "", match["rest"])


def claims(path: str) -> str | None:
    head, _, name = path.rpartition("/")
    if name == "index.json" and (head == "sessions" or head.endswith("/sessions")):
        return INDEX
    if name == "locations.json" and (head == "sessions" or head.endswith("/sessions")):
        return LOCATIONS
    if name == "projects.json" and (head == "projects" or head.endswith("/projects")):
        return PROJECTS
    if name == ".gitignore" and (head == ".openprogram" or head.endswith("/.openprogram")):
        return GITIGNORE
    if "memory/" in path:
        if _ARCHIVE.search(path):
            return ARCHIVE
        if _TOPIC.search(path):
            return TOPIC
        if _RECORDS.search(path):
            return RECORDS
    # what _SESSION_FILE's last part needs, tested before the expression (most paths of a run
    # are other families' files)
    if not (
        name.endswith(".tmp")
        or name in ("meta.json", "manifest.json")
        or head == "history"
        or head.endswith("/history")
    ):
        return None
    found = session_path(path)
    if found is not None:
        rest = found.rest
        if rest.startswith("history/"):
            if rest.endswith(".json"):
                return NODE
            return TEMP if rest.endswith(".tmp") else None
        if rest == "meta.json":
            return META
        if rest.startswith("file_backups/"):
            return BACKUP
        # a *.tmp in the session's own directory; at the root only the atomic-write temp files
        # of the session's own JSON files, so that a repository's other *.tmp stay unclaimed
        if found.directory or rest.startswith(("meta.json.", "jobs.json.")):
            return TEMP
    return None


#: what :func:`claims` may claim in a directory that is not a session's ``history/`` and holds
#: no ``memory/``: the registries, a session's own files and temp files
_BY_NAME = Names(
    frozenset({"index.json", "locations.json", "projects.json", ".gitignore"})
    | frozenset({"meta.json", "manifest.json"}),
    (".tmp",),
)


def claimable(directory: str) -> Names | None:
    """The names :func:`claims` may claim in ``directory`` (see ``Family.claimable``): any name
    in a ``history/`` directory or under a ``memory/`` one."""
    framed = f"/{directory}/"
    if framed.endswith("/history/") or "memory/" in framed:
        return None
    return _BY_NAME


def session_repo_tree(tree: Snapshot) -> bool:
    """Whether ``tree`` is a session repository's: meta.json beside history/ at the top."""
    return tree.exists("meta.json") and tree.is_dir("history")


def session_dir_of(path: str) -> str | None:
    found = session_path(path)
    return None if found is None else found.directory


#: compiled (by ``re``, once) when a path under ``memory/`` is first asked about
_WORKSPACE = r"^((?:[^/]+/)*?)memory/"


def workspace_of(path: str) -> str:
    """The state directory (``""`` or ending in /) of a path under ``memory/``."""
    match = re.match(_WORKSPACE, path)
    return "" if match is None else match[1]


def relevant(path: str) -> bool:
    """Whether a change of ``path`` can matter to the family's checks of other files: string
    tests only (most paths of a run are other families')."""
    name = path.rpartition("/")[2]
    return (
        "history/" in path
        or name in ("meta.json", "projects.json", "owner.json")
        or "memory/" in path
        or "sessions/" in path
        or "file_backups/" in path
        or "large_nodes/" in path
        or name.endswith(".tmp")
        or path.endswith(".openprogram/.gitignore")
    )
