"""History checks (``continuity verify``), one commit at a time, oldest first.

In a session repository (each session is its own git repository, one commit per turn):

- SS201 [28]: the root commit is the empty ``session init``; history is linear (no merges).
- SS202 [29]: no empty commit after the root (``commit_all`` never makes one).
- SS203 [30]: author and committer are ``OpenProgram <openprogram@local>``.
- SS204 [31]: the subject is one OpenProgram writes.
- SS205 [32]: every node file and meta.json a commit writes is valid at that commit.
- SS206 [33]: a node keeps its file name across commits; a seq is reused only after the file
  that used it was deleted.
- SS207 [34]: one commit per turn: a ``turn`` commit completes exactly one turn written since the
  previous one, answered by an llm node, and no other commit leaves more than the current turn
  uncommitted; runtime turns (``display`` runtime, ``job_followup``, ``merge_turn``) and spawn
  roots are not user turns. The commit hook, which has no subject yet, judges the part that
  needs none: no commit brings in two user turns.

In any repository holding a memory workspace: SS210 [54] v2 source archives only grow, legacy
ones never change.

In a project repository (any other repository): SS208 [47] no commit brings in ``.openprogram/``;
SS209 [48] the agent identity commits only with the subjects OpenProgram writes.

In any repository: SS211 (see :func:`linked`) no session file and no directory OpenProgram keeps
its files in is committed as a symlink; the other rules do not judge such a version again.

Invariant 35 (the work tree may differ from HEAD) is honoured by not looking at the work tree.
"""

import re
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import NamedTuple

from continuity_checks.checks.sessions import layout, nodes
from continuity_checks.checks.sessions import rules as ss
from continuity_checks.core import strict_json, symlinks
from continuity_checks.core.display import quote
from continuity_checks.core.family import STAGED, Change, Commit, CommitContext, RawChange
from continuity_checks.core.findings import Finding
from continuity_checks.core.rules import Rule
from continuity_checks.core.snapshot import Snapshot, Unreadable

SESSION_IDENTITY = ("OpenProgram", "openprogram@local")
AGENT_IDENTITY = ("OpenProgram Agent", "agent@openprogram.local")
# commit subjects: compiled (by ``re``, once) when a commit with one is judged
SUBJECTS = (
    r"^(?:turn: .{0,60}|turn \(error\): .{0,60}|rewind|merge: .*|"
    r"agent tool spawn(?: \(async\))?: .*|send_message: inbox notice|job: .*)$"
)
AGENT_SUBJECTS = r"^(?:\[agent .{1,8}\] .{1,60}|Revert agent commit [0-9a-f]{8})$"
AGENT_FIRST = ("openprogram: baseline (pre-existing files)", "openprogram: project init")
#: the shadow-git store (``<state>/shadow-git/<hash>/``): its empty root commit, the pre-turn
#: images of files it has not seen, and a turn ``[<turn id[:8]>] <first line of the user text>``
SHADOW_ROOT = "shadow-git: init"
SHADOW_BASELINE = "[baseline] pre-turn images"
SHADOW_SUBJECTS = r"^(?:\[baseline\] pre-turn images|\[[^\]\n]{1,8}\] .+)$"
GITLINK = "160000"
TURN = r"^turn(?: \(error\))?(?::|$)"
PENDING_KEPT = 64  # turns remembered between turn commits (more is reported long before)


class HistoryOptions(NamedTuple):
    """What history mode reads of the family's configuration."""

    max_depth: int


class History:
    """What history mode remembers across the commits of one run: whether the repository is a
    session repository, and the file name of every node id seen (bounded by the session)."""

    def __init__(self, options: HistoryOptions) -> None:
        self.options = options
        self.session_repo: bool | None = None
        #: the repository is OpenProgram's shadow-git store (its root commit or a baseline
        #: commit is in the run)
        self.shadow_repo = False
        self.names: dict[str, str] = {}
        #: [34] top-level user nodes since the last turn commit -> whether an llm node answered
        self.pending: dict[str, bool] = {}
        #: [34] whether the turn in progress is known from its start: the run began at the root
        #: commit, or a turn commit of the run has passed (before that, a range that starts
        #: mid-turn may hold a turn commit whose user node came before the range)
        self.turn_known = False
        # one commit's history/ listings by id and by seq, built once per side and directory
        self._ids: dict[tuple[int, str], dict[str, str]] = {}
        self._seqs: dict[tuple[int, str], dict[int, list[str]]] = {}

    def _by_id(self, snapshot: Snapshot, directory: str) -> dict[str, str]:
        key = (id(snapshot), directory)
        if key not in self._ids:
            self._ids[key] = {m[3]: m[0] for m in _node_names(snapshot, directory)}
        return self._ids[key]

    def _by_seq(self, snapshot: Snapshot, directory: str) -> dict[int, list[str]]:
        key = (id(snapshot), directory)
        if key not in self._seqs:
            seqs: dict[int, list[str]] = {}
            for m in _node_names(snapshot, directory):
                seqs.setdefault(int(m[1]), []).append(m[0])
            self._seqs[key] = seqs
        return self._seqs[key]

    def check_commit(self, context: CommitContext) -> list[Finding]:
        return [] if self.passes(context.commit, context.paths) else self.judge(context)

    def passes(self, commit: Commit, paths: Sequence[RawChange]) -> bool:  # nothing to find
        return self.session_repo is False and not self.shadow_repo and unremarkable(commit, paths)

    def judge(self, context: CommitContext) -> list[Finding]:  # check_commit without a shortcut
        self._ids.clear()  # listings belong to one commit's snapshots
        self._seqs.clear()
        first = self.session_repo is None
        if first:
            self.turn_known = self.turn_known or not context.commit.parents
            self.session_repo = is_session_repo(context)
            self.shadow_repo = not context.commit.parents and context.commit.subject == SHADOW_ROOT
        if not self.session_repo and context.commit.subject == SHADOW_BASELINE:
            self.shadow_repo = True  # a subject only the shadow-git store writes
        fields = context.commit.fields
        links = symlinks.committed(context, lambda path: kept(path, context, self.session_repo))
        found = [symlinks.finding(ss.SYMLINK, link, context) for link in links]
        if links:
            context = symlinks.beneath(context, links)
            context = context.with_changes(
                [c for c in context.changes if c.new_mode != symlinks.SYMLINK]
            )
        found += sources_appended(context, tuple(link.path for link in links))
        if self.session_repo:
            return found + self._session(context, fields)
        if self.shadow_repo:
            return found + shadow_commit(context, fields)
        return found + project_commit(context, fields, first)

    # --- session repositories --------------------------------------------------------------------

    def _session(self, context: CommitContext, fields: Mapping[str, str]) -> list[Finding]:
        commit = context.commit
        sha = commit.sha
        findings: list[Finding] = []
        subject = commit.subject
        # the commit hook judges a commit before its message exists: no subject to judge yet
        has_message = sha != STAGED
        if not commit.parents and has_message:
            listing = context.after.list("")
            entries = 0 if isinstance(listing, Unreadable) else len(listing)
            if subject != "session init" or entries:
                findings.append(
                    ss.SESSION_ROOT.finding(
                        ".",
                        f'expected the empty root commit "session init", found {quote(subject)} '
                        f"with {entries} top-level entries",
                        commit=sha,
                    )
                )
        elif commit.is_merge:
            findings.append(
                ss.SESSION_ROOT.finding(
                    ".",
                    f"expected linear history, found a merge of {len(commit.parents)} parents",
                    commit=sha,
                )
            )
        elif not context.changes and same_tree(context.before, context.after, ""):
            findings.append(
                ss.EMPTY_COMMIT.finding(
                    ".",
                    "expected every commit to change something, found an empty commit",
                    commit=sha,
                )
            )
        strangers = [
            f"{role} {quote(found[0])} <{found[1]}>"
            for role, found in _identity(fields).items()
            if found is not None and found != SESSION_IDENTITY
        ]
        if strangers:  # one finding for the commit, naming both sides when both differ
            findings.append(
                ss.SESSION_IDENTITY.finding(
                    ".",
                    f"expected OpenProgram <openprogram@local>, found {' and '.join(strangers)}",
                    commit=sha,
                )
            )
        if has_message and commit.parents and (not re.match(SUBJECTS, subject) or not subject):
            findings.append(
                ss.SESSION_SUBJECT.finding(
                    ".",
                    f"expected a subject OpenProgram writes (turn: …, rewind, merge: …, "
                    f"job: …), found {quote(subject)}",
                    commit=sha,
                )
            )
        lines = fields.get("message", "").rstrip("\n").count("\n") + 1
        if has_message and commit.parents and lines > 1:  # [31] "(non-empty, single line)"
            findings.append(
                ss.SESSION_SUBJECT.finding(
                    ".",
                    f"expected a one-line message, as OpenProgram commits, found {lines} lines "
                    f"under {quote(subject)}",
                    commit=sha,
                )
            )
        known = set(self.pending)
        for change in context.changes:
            if change.status == "D":
                if change.kind == layout.NODE:  # a rewind: a deleted turn is no longer pending
                    named = layout.NODE_NAME.match(change.path.rpartition("/")[2])
                    if named is not None:
                        self.pending.pop(named[3], None)
                continue
            if change.kind == layout.NODE:
                found_findings, node = self._node(change, context, sha)
                findings.extend(found_findings)
                if node is not None and added(change, context):
                    self._pend(node)
            elif change.kind == layout.META:
                findings.extend(self._meta(change, sha))
        if has_message and commit.parents:
            findings.extend(self._turns(sha, re.match(TURN, subject) is not None))
        elif not has_message:
            findings.extend(self._staged_turns(known))
        return findings

    def _meta(self, change: Change, sha: str) -> list[Finding]:
        """[32] the meta.json a commit writes parses as a JSON object."""
        data = change.new()
        if data is None:
            return []
        accepted = strict_json.accepts(data, self.options.max_depth)
        if accepted is not None and isinstance(accepted[1], dict):
            return []
        return [
            ss.COMMITTED_INVALID.finding(
                change.path,
                "expected meta.json to parse as a JSON object at this commit, found it does not",
                commit=sha,
            )
        ]

    def _staged_turns(self, known: set[str]) -> list[Finding]:
        """[34] at commit time (no subject yet): whatever the commit is, two user turns brought
        in by it cannot both be its own one turn, nor the one turn in progress."""
        new = [nid for nid in self.pending if nid not in known]
        if len(new) < 2:
            return []
        return [
            ss.TURN_COMMITS.finding(
                ".",
                "expected at most one new user turn in a commit (one commit per turn), found "
                f"{len(new)}: {', '.join(quote(n) for n in new)}",
                commit=STAGED,
            )
        ]

    def _pend(self, node: nodes.Node) -> None:
        """[34] a top-level user node (not ROOT, not a spawn root, not a runtime turn) starts a
        turn; a top-level llm node answering one makes it a turn that needs its commit."""
        if (
            node.role == "user"
            and node.caller == "ROOT"
            and node.id != "ROOT"
            and node.input_null
            and not node.spawn
            and not node.runtime
        ):
            self.pending.setdefault(node.id, self.pending.get(node.id, False))
        elif node.role == "llm" and node.caller == "" and node.predecessor in self.pending:
            self.pending[node.predecessor] = True
        if len(self.pending) > PENDING_KEPT:  # bounded: the oldest turns are long reported
            del self.pending[next(iter(self.pending))]

    def _turns(self, sha: str, turn: bool) -> list[Finding]:
        """[34] one commit per turn: the top-level user nodes written since the last turn commit
        (by this commit, or by others between, which may carry a turn's first nodes) are exactly
        one at a turn commit; at any other commit, at most the current turn is answered."""
        if turn:
            users = len(self.pending)
            replied = all(self.pending.values())
            self.pending.clear()
            known, self.turn_known = self.turn_known, True
            if (users == 1 and replied) or (users == 0 and not known):
                return []  # (none: its user node may be older than the range)
            if users == 1:
                return [
                    ss.TURN_COMMITS.finding(
                        ".",
                        "expected a turn commit to complete an answered turn (its user node and "
                        "an llm node replying to it), found the user node without a reply",
                        commit=sha,
                    )
                ]
            return [
                ss.TURN_COMMITS.finding(
                    ".",
                    "expected a turn commit to complete one turn (one new top-level user node "
                    f"since the last turn commit), found {users}",
                    commit=sha,
                )
            ]
        # a turn answered and left without its commit, once a later turn is answered too
        answered = [nid for nid, replied in self.pending.items() if replied]
        if len(answered) < 2:
            return []
        for nid in answered[:-1]:  # reported now: the latest is the turn in progress
            del self.pending[nid]
        return [
            ss.TURN_COMMITS.finding(
                ".",
                "expected at most the current turn since the last turn commit, found "
                f"{len(answered)} answered turns without a turn commit of their own",
                commit=sha,
            )
        ]

    def _node(
        self, change: Change, context: CommitContext, sha: str
    ) -> tuple[list[Finding], nodes.Node | None]:
        findings: list[Finding] = []
        path = change.path
        name = path.rpartition("/")[2]
        data = change.new()
        if data is None:
            return findings, None
        accepted = strict_json.accepts(data, self.options.max_depth)
        if accepted is None:
            findings.append(
                ss.COMMITTED_INVALID.finding(
                    path,
                    "expected a node of strict JSON at this commit, found it does not parse",
                    commit=sha,
                )
            )
            return findings, None
        problems: list[tuple[Rule, str, str]] = []

        def at(rule: Rule, pointer: str, message: str) -> Finding:
            problems.append((rule, pointer, message))
            return rule.finding(path, message, pointer=pointer or None, commit=sha)

        _, node = nodes.check(path, accepted[1], at, None)
        for rule, pointer, message in problems:
            if rule in (ss.NODE_NAME, ss.NODE_SHAPE, ss.NODE_ROLE):
                findings.append(
                    ss.COMMITTED_INVALID.finding(
                        path,
                        f"{rule.id} at this commit: {message}",
                        pointer=pointer or None,
                        commit=sha,
                    )
                )
        parsed = layout.NODE_NAME.match(name)
        if parsed is not None and added(change, context):
            findings.extend(self._stable(path, parsed, context, sha))
        return findings, node

    def _stable(
        self, path: str, parsed: re.Match[str], context: CommitContext, sha: str
    ) -> list[Finding]:
        """[33] the node's name agrees with every earlier one; its seq is free."""
        findings: list[Finding] = []
        name = parsed[0]
        node_id, seq = parsed[3], int(parsed[1])
        directory = path.rpartition("/")[0]
        earlier = self.names.get(node_id)
        if earlier is None:
            found = self._by_id(context.before, directory).get(node_id)
            earlier = found if found != name else None
        if earlier is not None and earlier != name:
            findings.append(
                ss.NAME_STABILITY.finding(
                    path,
                    f"expected node {quote(node_id)} to keep its file name {quote(earlier)}, "
                    f"found {quote(name)}",
                    commit=sha,
                )
            )
        for other in self._by_seq(context.after, directory).get(seq, ()):
            if other != name:
                findings.append(
                    ss.NAME_STABILITY.finding(
                        path,
                        f"expected seq {seq} to be free, found it still used by {quote(other)}",
                        commit=sha,
                    )
                )
        self.names[node_id] = name
        return findings


def unremarkable(commit: Commit, paths: Sequence[RawChange]) -> bool:
    """Whether a project repository's commit gives SS208-SS211 nothing to read: no path it
    changes a symlink, under ``.openprogram/`` or ``sources/``; no shadow-git subject or agent."""
    if commit.subject == SHADOW_BASELINE:
        return False
    for c in paths:
        if c.new_mode == symlinks.SYMLINK or "sources/" in c.path or ".openprogram/" in c.path:
            return False
    mails = (commit.fields.get("author_email"), commit.fields.get("committer_email"))
    return AGENT_IDENTITY[1] not in mails or AGENT_IDENTITY not in _identity(commit.fields).values()


def added(change: Change, context: CommitContext) -> bool:
    """Whether the commit brings the node file into the tree: added since its last good version,
    or back after a deletion (judged from the last good version, the engine calls that a
    modification) — a node new to the session's files, whose name and turn are judged."""
    return change.status == "A" or not context.before.exists(change.path)


def _node_names(snapshot: Snapshot, directory: str) -> list[re.Match[str]]:
    found = snapshot.list(directory)
    if isinstance(found, Unreadable):
        return []
    return [m for name in found if (m := layout.NODE_NAME.match(name)) is not None]


def _identity(fields: Mapping[str, str]) -> dict[str, tuple[str, str] | None]:
    found: dict[str, tuple[str, str] | None] = {}
    for role in ("author", "committer"):
        name, email = fields.get(f"{role}_name"), fields.get(f"{role}_email")
        found[role] = None if name is None or email is None else (name, email)
    return found


def is_session_repo(context: CommitContext) -> bool:
    """A session repository: its root commit is ``session init``, or its tree has meta.json
    beside history/ at the top."""
    commit = context.commit
    if not commit.parents and commit.subject == "session init":
        return True
    return any(layout.session_repo_tree(s) for s in (context.after, context.before))


def same_tree(before: Snapshot, after: Snapshot, directory: str) -> bool:
    """Whether two trees hold the same files with the same bytes (only for commits none of
    whose changes are claimed: rare, and small trees)."""
    left, right = before.list(directory), after.list(directory)
    if isinstance(left, Unreadable) or isinstance(right, Unreadable):
        return isinstance(left, Unreadable) and isinstance(right, Unreadable)
    if left != right:
        return False
    for name in left:
        path = f"{directory}/{name}" if directory else name
        if before.is_dir(path) != after.is_dir(path):
            return False
        if before.is_dir(path):
            if not same_tree(before, after, path):
                return False
        else:
            a, b = before.sha256(path), after.sha256(path)
            if isinstance(a, Unreadable) or isinstance(b, Unreadable) or a != b:
                return False
    return True


#: compiled (by ``re``, once) when a changed path holds ``sources/``, as every path it matches does
_SOURCE = r"^(?P<workspace>(?:.*/)?memory/)?sources/(?P<rest>.+\.md)$"


def sources_appended(context: CommitContext, linked: tuple[str, ...] = ()) -> list[Finding]:
    """[54] sources are append-only: a v2 archive's old bytes are a prefix of its new bytes,
    and a legacy (non-``_v2``) archive never changes. Judged from every path the commit changes
    (legacy archives are not claimed), under ``memory/sources/``, or under ``sources/`` of a
    repository that is a memory workspace itself (see :func:`is_workspace_repo`, asked only
    when such a path changes). A path the commit left as a symlink, or below one (``linked``), is
    SS211's."""
    findings = []
    workspace_repo: bool | None = None
    below = tuple(f"{path}/" for path in linked)
    # a claimed (v2) archive is judged from its last good version, as the engine hands it
    claimed = {c.path: c for c in context.changes if c.kind == layout.ARCHIVE}
    for change in context.paths:
        if change.path in linked or change.path.startswith(below):
            continue
        found = re.match(_SOURCE, change.path) if "sources/" in change.path else None
        if found is None:
            continue
        status = change.status
        old: Callable[[], bytes | Unreadable | None] = partial(context.before.read, change.path)
        if layout.claims(change.path) == layout.ARCHIVE:
            last_good = claimed.get(change.path)
            if last_good is None:
                continue  # back to its last good bytes: nothing changed since
            status, old = last_good.status, last_good.old
        if status == "A":
            continue
        if found["workspace"] is None:
            if workspace_repo is None:
                workspace_repo = is_workspace_repo(context)
            if not workspace_repo:
                continue
        legacy = not ("/" + found["rest"]).rpartition("/")[0].endswith("/_v2")
        message = _rewritten(change.path, status, legacy, old, context)
        if message is not None:
            findings.append(
                ss.SOURCE_REWRITTEN.finding(change.path, message, commit=context.commit.sha)
            )
    return findings


MEMORY_IDENTITY = ("OpenProgram Memory", "memory@openprogram.local")


def is_workspace_repo(context: CommitContext) -> bool:
    """Whether the repository is OpenProgram's memory workspace itself (``<state>/memory/``,
    which OpenProgram makes a git repository of its own): committed by its identity
    ``OpenProgram Memory <memory@openprogram.local>``, or with the workspace's layout at the top
    of a tree (``topics/`` beside ``sources/``). Its runtime directories (``.scriptorium/``,
    ``.nativemem/``) are excluded from its commits by ``.git/info/exclude``, so they are only a
    sign where someone committed them anyway."""
    if MEMORY_IDENTITY in _identity(context.commit.fields).values():
        return True
    return any(
        (side.is_dir("topics") and side.is_dir("sources"))
        or side.exists(".scriptorium/workspace-id")
        or side.is_dir(".nativemem")
        for side in (context.after, context.before)
    )


def _rewritten(
    path: str,
    status: str,
    legacy: bool,
    read_old: Callable[[], bytes | Unreadable | None],
    context: CommitContext,
) -> str | None:
    if status == "D":
        return "expected the archive to be kept (sources are append-only), found it deleted"
    if legacy:
        return (
            "expected a legacy (non-_v2) source archive to stay as it is (legacy archives are "
            "frozen), found it changed"
        )
    old, new = read_old(), context.after.read(path)
    if old is None or isinstance(old, Unreadable) or isinstance(new, Unreadable):
        return None  # not read (over the size limit): the engine says so
    if new.startswith(old):
        return None
    common = next((i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), len(new))
    line = old.count(b"\n", 0, common) + 1
    return (
        f"expected the earlier {len(old)} bytes kept as a prefix, found them changed from line "
        f"{line} on"
    )


# --- symlinks -----------------------------------------------------------------------------------

#: directories of a memory workspace (``memory/<name>``) that OpenProgram keeps its files in
_MEMORY_DIRECTORIES = ("sources", "topics", "timeline", "graph")
#: directories at the top of a session repository
_SESSION_DIRECTORIES = ("history", "file_backups")


def kept(path: str, context: CommitContext, session_repo: bool | None) -> str | None:
    """What OpenProgram keeps at ``path`` that must not be a symlink (SS211): a session file
    (a stray temp file is none), or one of its directories: a session's ``history/`` and
    ``file_backups/``, a session directory in a ``sessions/`` registry, the registries'
    ``sessions/`` and ``projects/`` where the parent held them, a memory workspace's
    directories, and ``.openprogram``. A path under ``.openprogram/`` of a project repository
    is SS208's, whatever it is."""
    if not session_repo and path.startswith(".openprogram/"):
        return None
    kind = layout.claims(path)
    if kind is not None:
        return None if kind == layout.TEMP else "a regular file"
    return "a directory" if _directory(path, context.before, session_repo is True) else None


def _directory(path: str, before: Snapshot, session_repo: bool) -> bool:
    """Whether ``path`` is one of the directories :func:`kept` names."""
    names = path.split("/")
    name = names[-1]
    parent = names[-2] if len(names) > 1 else ""
    if name == ".openprogram" or (name in _MEMORY_DIRECTORIES and parent == "memory"):
        return True
    if name in _SESSION_DIRECTORIES:
        # a session's own: at the top of a session repository, or in sessions/<sid>/
        top = session_repo and len(names) == 1
        return top or (len(names) > 2 and names[-3] == "sessions")
    if parent == "sessions" and before.exists(f"{path}/meta.json"):
        return True  # a session directory of a registry
    return _registry(path, before)


def _registry(path: str, before: Snapshot) -> bool:
    """Whether ``path`` was a registry directory at the parent: ``sessions/`` with its
    index.json or locations.json, ``projects/`` with its projects.json."""
    name = path.rpartition("/")[2]
    if name == "sessions":
        return before.exists(f"{path}/index.json") or before.exists(f"{path}/locations.json")
    return name == "projects" and before.exists(f"{path}/projects.json")


# --- project repositories ------------------------------------------------------------------------


def project_commit(
    context: CommitContext, fields: Mapping[str, str], first: bool = False
) -> list[Finding]:
    commit = context.commit
    sha = commit.sha
    findings: list[Finding] = []
    findings.extend(state_committed(context, first))
    identity = _identity(fields)
    if sha != STAGED and AGENT_IDENTITY in (identity["author"], identity["committer"]):
        subject = commit.subject
        ok = re.match(AGENT_SUBJECTS, subject) is not None or (
            subject in AGENT_FIRST and not commit.parents
        )
        if not ok:
            where = " (only as the first commit)" if subject in AGENT_FIRST else ""
            if re.match(SHADOW_SUBJECTS, subject):  # a shadow-git store's, if the range began later
                where = (
                    f" (verify took this for a project repository: the range does not start at "
                    f'a root commit "{SHADOW_ROOT}"; in a shadow-git store, verify from its root)'
                )
            findings.append(
                ss.AGENT_SUBJECT.finding(
                    ".",
                    f"expected an agent commit subject [agent <sid>] …, Revert agent commit "
                    f"<sha> or an init/baseline first commit, found {quote(subject)}{where}",
                    commit=sha,
                )
            )
    return findings


def shadow_commit(context: CommitContext, fields: Mapping[str, str]) -> list[Finding]:
    """[48] in OpenProgram's shadow-git store (not the user's repository: [47] does not apply),
    the agent identity commits the store's root commit and turns only."""
    commit = context.commit
    identity = _identity(fields)
    if commit.sha == STAGED or AGENT_IDENTITY not in (identity["author"], identity["committer"]):
        return []
    if re.match(SHADOW_SUBJECTS, commit.subject) or (
        commit.subject == SHADOW_ROOT and not commit.parents
    ):
        return []
    return [
        ss.AGENT_SUBJECT.finding(
            ".",
            f'expected a shadow-git store subject ("{SHADOW_ROOT}" as the root commit, '
            f'"[baseline] pre-turn images" or "[<turn id>] <text>"), found {quote(commit.subject)}',
            commit=commit.sha,
        )
    ]


def state_committed(context: CommitContext, run_start: bool = False) -> list[Finding]:
    """[47] no commit's tree holds a path under .openprogram/: judged from every path the commit
    adds or changes there, claimed or not (a settings.json is no session file, but it is state
    all the same). A path that is only deleted is the cure, not the fault. One finding per
    commit: the first path and how many more. The first commit of a run (a range that starts
    after state came in, or the commit being made) has its tree looked at too: what an earlier
    commit brought in and this one keeps is reported there, once a run."""
    kept = [c for c in context.paths if c.status != "D" and c.path.startswith(".openprogram/")]
    if not kept:
        carried = _state_in_tree(context.after) if run_start else []
        if not carried:
            return []
        more = f" and {len(carried) - 1} more" if len(carried) > 1 else ""
        return [
            ss.PROJECT_STATE_COMMITTED.finding(
                ".openprogram",
                f"expected no path under .openprogram/ in the project's commits, found this "
                f"commit's tree still holds {quote(carried[0])}{more}, committed before it",
                commit=context.commit.sha,
            )
        ]
    first = kept[0]
    verb = "adds" if first.status == "A" else "changes"
    if first.new_mode == GITLINK:  # git add -A took a session repository once .gitignore went
        verb += " the nested repository (a gitlink)"
    more = f" and {len(kept) - 1} more" if len(kept) > 1 else ""
    return [
        ss.PROJECT_STATE_COMMITTED.finding(
            ".openprogram",
            f"expected no path under .openprogram/ in the project's commits, found this commit "
            f"{verb} {quote(first.path)}{more}",
            commit=context.commit.sha,
        )
    ]


def _state_in_tree(tree: Snapshot, directory: str = ".openprogram") -> list[str]:
    """The files under ``directory`` in a commit's tree (one lookup when there is none); none
    through a symlink (SS211 at the commit that made it)."""
    if tree.resolve(directory) != directory:
        return []
    listing = tree.list(directory)
    if isinstance(listing, Unreadable):
        return []
    found: list[str] = []
    for name in listing:
        path = f"{directory}/{name}"
        found.extend(_state_in_tree(tree, path) if tree.is_dir(path) else [path])
    return found
