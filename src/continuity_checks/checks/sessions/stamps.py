"""[49] The commits an llm node's metadata names: ``project_commit {repo, sha}`` in the project's
own repository, ``shadow_git {repo, before, after}`` in the shadow-git store of the state
directory that keeps the session, ``<state>/shadow-git/<first 16 hex of sha256(normpath(repo))>/``
(OpenProgram's ``store/shadow_git``: ``repo`` is the project directory, not the store)."""

from __future__ import annotations

import posixpath
from collections.abc import Callable

from continuity_checks.checks.sessions import gitobjects
from continuity_checks.checks.sessions import rules as ss
from continuity_checks.checks.sessions.nodes import Node
from continuity_checks.checks.sessions.pathmap import PathMap, Unresolved
from continuity_checks.core.display import quote, show
from continuity_checks.core.findings import Finding
from continuity_checks.core.hashing import sha256_hex
from continuity_checks.core.snapshot import Snapshot

AGENT = "OpenProgram Agent <agent@openprogram.local>"


def shadow_store(state: str, repo: str) -> str:
    """The root-relative directory of the shadow-git store of project ``repo`` (absolute, as
    stamped) in the state directory ``state``."""
    digest = sha256_hex(posixpath.normpath(repo).encode("utf-8"))[:16]
    return f"{state}shadow-git/{digest}"


def check_commit_stamps(
    snapshot: Snapshot, stamped: list[Node], sid: str, path_map: PathMap, state: str | None
) -> list[Finding]:
    """[49] metadata.project_commit and metadata.shadow_git name real commits. ``path_map``
    reads a project's absolute path; ``state`` is the state directory keeping the session
    (None: none in the checked tree)."""
    findings: list[Finding] = []
    for node in stamped:
        assert node.commits is not None
        project, shadow = node.commits
        if project is not None:
            findings.extend(_stamp(snapshot, node, sid, path_map, project, "project_commit", None))
        if shadow is not None:
            findings.extend(_stamp(snapshot, node, sid, path_map, shadow, "shadow_git", state))
    return findings


def _stamp(
    snapshot: Snapshot,
    node: Node,
    sid: str,
    path_map: PathMap,
    stamp: object,
    key: str,
    state: str | None,
) -> list[Finding]:
    pointer = f"/metadata/{key}"
    shas = ("sha",) if key == "project_commit" else ("before", "after")

    def bad(message: str, where: str = pointer) -> list[Finding]:
        return [ss.PROJECT_COMMIT.finding(node.path, message, pointer=where)]

    if not isinstance(stamp, dict) or not isinstance(stamp.get("repo"), str):
        return bad(
            f"expected {{repo, {', '.join(shas)}}} with an absolute repo path, found {show(stamp)}"
        )
    repo = stamp["repo"]
    if key == "shadow_git":
        if state is None:
            why = "no state directory of the checked tree keeps the session"
            return [_unresolved(node, pointer, repo, why)]
        where = shadow_store(state, repo)
        gitdir = gitobjects.git_dir(snapshot, where)
        named = f"the shadow-git store of {quote(repo)} ({where}/)"
    else:
        resolved = path_map.resolve(repo, snapshot)
        if isinstance(resolved, Unresolved):
            return [_unresolved(node, pointer, repo, resolved.reason, path_map)]
        gitdir = gitobjects.git_dir(snapshot, resolved)
        named = quote(repo)
    if gitdir is None:
        return bad(f"expected a git repository at {named}, found none", pointer + "/repo")
    findings: list[Finding] = []
    for field in shas:
        sha = stamp.get(field)
        where = f"{pointer}/{field}"
        if sha is None and field == "before":
            continue  # the store's first turn: no HEAD before it
        if not isinstance(sha, str) or not gitobjects.SHA.match(sha):
            findings += bad(f"expected a 40-digit commit id, found {show(sha)}", where)
            continue
        findings += _commit(snapshot, gitdir, sha, named, key, sid, bad, where)
    return findings


def _commit(
    snapshot: Snapshot,
    gitdir: str,
    sha: str,
    named: str,
    key: str,
    sid: str,
    bad: Callable[[str, str], list[Finding]],
    where: str,
) -> list[Finding]:
    found = gitobjects.find_commit(snapshot, gitdir, sha)
    if found is None:
        return bad(f"expected commit {sha[:12]} in {named}, found none", where)
    if found.text is None and found.unread is not None:
        return bad(
            f"expected commit {sha[:12]} in {named} to be read, found that a file it needs "
            f"cannot be read here ({found.unread}): its subject and identity are not checked",
            where,
        )
    if found.text is None:
        return bad(
            f"expected commit {sha[:12]} in {named} to be a commit git can read, found an "
            "object of that id that is not (corrupt, or another kind of object)",
            where,
        )
    if key != "project_commit":
        return []
    subject, identities = gitobjects.subject_and_identities(found.text)
    prefix = f"[agent {sid[:8]}]"
    if not subject.startswith(prefix):
        return bad(
            f"expected the commit's subject to start with {prefix}, found {quote(subject)}", where
        )
    if AGENT not in identities:
        return bad(f"expected an agent-identity commit, found {', '.join(identities)}", where)
    return []


def _unresolved(
    node: Node, pointer: str, repo: str, reason: str, path_map: PathMap | None = None
) -> Finding:
    """SS133: the repository a stamp names has no place in the checked root."""
    hint = None
    if node.path.startswith("history/") and (path_map is None or not path_map.pairs):
        reason += " (the session is the checked root: the repository is not in it)"
        hint = "check a directory that holds both the session and the repository"
    elif path_map is None:
        reason += " (its store is <state>/shadow-git/<sha256 of the path>/ of that directory)"
        hint = "check the home directory that holds the state directory and the project"
    return ss.UNRESOLVED_PATH.finding(
        node.path,
        f"expected {quote(repo)} to resolve inside the checked root, found that {reason}",
        pointer=pointer + "/repo",
        hint=hint,
    )
