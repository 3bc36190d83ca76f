"""OpenProgram data for the sessions tests: a small valid state directory written as the code
writes it, and the synthetic corpus rebuilt with its git repositories."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from tests.conftest import CORPUS

SYNTHETIC = CORPUS / "openprogram" / "synthetic"
SID = "local_0a1b2c3d4e"
SESSION = f".openprogram/sessions/{SID}/"
HISTORY = SESSION + "history/"


def node(seq: int, role: str, node_id: str, **fields: Any) -> tuple[str, str]:
    """A history node file as OpenProgram writes it: json.dumps(asdict(Call)), no newline."""
    value: dict[str, Any] = {
        "id": node_id, "created_at": 1795983613.5 + seq, "seq": seq, "role": role, "name": "",
        "input": None, "output": "", "caller": "", "predecessor": None, "reads": [],
        "metadata": {},
    }  # fmt: skip
    value.update(fields)
    letter = role[0] if role else "x"
    name = f"{seq:04d}-{letter}-{node_id}.json"
    return HISTORY + name, json.dumps(value, ensure_ascii=False)


WORKSPACE = "w-0a1b2c3d"
MEMORY = ".openprogram/memory/"
ARCHIVE = MEMORY + f"sources/openprogram/_v2/{SID}.md"
TOPIC = MEMORY + "topics/projects/app.md"
SOURCE_META = base64.urlsafe_b64encode(json.dumps(
    {"authority_tier": "owner", "principal_id": "owner/install/0123456789abcdef",
     "speaker_kind": "owner", "trust_state": "trusted", "version": 1},
    sort_keys=True, separators=(",", ":")).encode()).rstrip(b"=").decode()  # fmt: skip


def anchor(ref: str) -> str:
    return "source-" + hashlib.sha256(ref.encode()).hexdigest()[:16]


def frame(node_id: str, lines: list[str], speaker: str = "owner%2Flocal") -> str:
    ref = f"openprogram/{SID}/{node_id}"
    head = f'<a id="{anchor(ref)}"></a>\n<!-- source-id:{ref} -->\n'
    head += f"<!-- speaker-id:{speaker} -->\n<!-- source-meta:{SOURCE_META} -->\n"
    body = [f"[2026-11-29T20:20:13+00:00] Owner (owner/local): {lines[0]}", *lines[1:]]
    return head + f"<!-- record-lines:{len(lines)} -->\n" + "\n".join(body) + "\n\n"


ARCHIVE_TEXT = (
    "<!-- openprogram-source-archive:v2 -->\n\n"
    + frame("1a2b3c4d", ["Fix the crash", "with details"])
    + frame("1a2b3c4d_reply", ["Done."], "runtime%2Fagent%252Fmain")
)
TOPIC_TEXT = (
    "# App\n\nThe crash is fixed.[^e-1] ^b1c2d3e4\n\n"
    f"[^e-1]: Time: `2026-11-29`; Sources: [openprogram/{SID}/1a2b3c4d]"
    f"(../../sources/openprogram/_v2/{SID}.md#{anchor(f'openprogram/{SID}/1a2b3c4d')})\n"
)


def session_nodes() -> dict[str, str]:
    items = [
        node(0, "user", "ROOT", metadata={"display": "root"}),
        node(1, "user", "1a2b3c4d", output="Fix the crash\nwith details", caller="ROOT",
             predecessor="ROOT", metadata={"source": "web", "memory_written_scriptorium": WORKSPACE}),
        node(2, "llm", "1a2b3c4d_reply", output="Done.", predecessor="1a2b3c4d",
             metadata={"source": "web", "status": "completed", "predecessor": "1a2b3c4d",
                       "finished_at": 1795983616.0, "extra": '{"tool_calls": [], "blocks": []}'}),
        node(3, "code", "1a2b3c4d_reply_t_toolu_1", name="grep", input={"pattern": "x"},
             output="x.py:1", caller="1a2b3c4d_reply",
             metadata={"tool_call_id": "toolu_1", "is_error": False}),
    ]  # fmt: skip
    return dict(items)


META: dict[str, Any] = {
    "id": SID, "agent_id": "main", "title": "Fix the crash", "source": "web",
    "created_at": 1795983613.6, "updated_at": 1795983616.5, "project_id": "default",
    "status": "idle", "head_id": "1a2b3c4d_reply", "_auto_titled": True, "_title_gen_count": 1,
    "branches": {"1a2b3c4d_reply": {"turns": 1}},
}  # fmt: skip
INDEX: dict[str, Any] = {
    SID: {
        "id": SID, "status": "idle", "pinned": False, "archived": False, "unread": False,
        "agent_id": "main", "title": "Fix the crash", "source": "web",
        "created_at": 1795983613.6, "updated_at": 1795983616.5, "channel": None,
        "peer_display": None, "peer_id": None, "preview": "Fix the crash with details",
    }
}  # fmt: skip
PROJECTS: dict[str, Any] = {
    "default": {
        "id": "default", "name": "alice", "path": "/home/alice", "is_default": True,
        "session_ids": [SID], "status": "active", "created_at": 1795983613.0,
    }
}  # fmt: skip


def state(**overrides: Any) -> dict[str, str | bytes]:
    """A home directory with a state directory holding one valid session (``.git`` included: a
    HEAD file is enough for the file checks). ``overrides`` replace files by path; None drops."""
    files: dict[str, str | bytes] = {
        SESSION + ".git/HEAD": "ref: refs/heads/main\n",
        SESSION + ".git/refs/heads/main": "0" * 40 + "\n",
        SESSION + "meta.json": json.dumps(META),
        **session_nodes(),
        ".openprogram/sessions/index.json": json.dumps(INDEX, indent=2),
        ".openprogram/sessions/locations.json": "{}",
        ".openprogram/projects/projects.json": json.dumps(PROJECTS, indent=2),
        MEMORY + ".scriptorium/workspace-id": WORKSPACE + "\n",
        ARCHIVE: ARCHIVE_TEXT,
        TOPIC: TOPIC_TEXT,
    }
    for path, content in overrides.items():
        if content is None:
            files.pop(path, None)
        else:
            files[path] = content
    return files


def loose_commit(
    subject: str, identity: str = "OpenProgram Agent <agent@openprogram.local>"
) -> tuple[str, str, bytes]:
    """A commit as git stores it loose: its id, its path under .git/objects, its bytes."""
    import zlib

    body = (
        f"tree {'4b825dc642cb6eb9a060e54bf8d69288fbee4904'}\n"
        f"author {identity} 1795983624 +0000\ncommitter {identity} 1795983624 +0000\n\n{subject}\n"
    ).encode()
    raw = b"commit " + str(len(body)).encode() + b"\0" + body
    sha = hashlib.sha1(raw).hexdigest()
    return sha, f"objects/{sha[:2]}/{sha[2:]}", zlib.compress(raw)


def git(*args: str, cwd: Path) -> str:
    result = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)
    return result.stdout.decode("utf-8", "replace").strip()


def clone_bundle(name: str, target: Path) -> None:
    """Put the repository of ``_git/<name>.bundle`` at ``target`` (its work tree kept when it
    already exists: only the .git is moved in, as the corpus notes say)."""
    scratch = target.parent / f".clone-{name}"
    git(
        "clone",
        "-q",
        str(SYNTHETIC / "_git" / f"{name}.bundle"),
        str(scratch),
        cwd=target.parent.parent,
    )
    target.mkdir(parents=True, exist_ok=True)
    if any(p.name != ".git" for p in target.iterdir()):
        shutil.move(str(scratch / ".git"), str(target / ".git"))
    else:
        for entry in scratch.iterdir():
            shutil.move(str(entry), str(target / entry.name))
    shutil.rmtree(scratch)


def rebuild_corpus(tmp: Path) -> Path:
    """The synthetic home directory with every .git rebuilt from its bundle. Session C's work tree
    and the project's .openprogram/.gitignore are not in the shared copy of the corpus (a copy
    that dropped the project's .openprogram/): C is checked out at its last commit, and the
    .gitignore is written as resolve_project writes it ("*" and a newline, SOURCE.md)."""
    home = tmp / "home" / "alice"
    shutil.copytree(SYNTHETIC / "home", tmp / "home")
    for path in [tmp / "home", *(tmp / "home").rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    for sid in ("local_3f9a1c0d2e", "local_8b21e47a90"):
        clone_bundle(sid, home / ".openprogram" / "sessions" / sid)
    project = home / "code" / "wiki-agent"
    bound = project / ".openprogram" / "sessions" / "local_c47d09e5b1"
    if not bound.is_dir():
        bound.parent.mkdir(parents=True)
        clone_bundle("local_c47d09e5b1", bound)
    gitignore = project / ".openprogram" / ".gitignore"
    if not gitignore.exists():
        gitignore.write_text("*\n")
    clone_bundle("project-wiki-agent", project)
    return home


# --- a writer doing what OpenProgram's stores do -------------------------------------------------

SESSION_GIT = ("OpenProgram", "openprogram@local")
AGENT_GIT = ("OpenProgram Agent", "agent@openprogram.local")


def commit_as(identity: tuple[str, str], *args: str, cwd: Path) -> None:
    """``git commit`` as ``identity``, as OpenProgram's repository-local identity commits."""
    name, email = identity
    env = {**os.environ, "GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email,
           "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email}  # fmt: skip
    subprocess.run(["git", "commit", "-q", *args], cwd=cwd, env=env, check=True)


def _write_json(path: Path, value: Any, indent: int | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, ensure_ascii=False, indent=indent), "utf-8")


class OpenProgram:
    """OpenProgram's operations as its stores perform them, on a home directory: sessions
    created lazily (home root, or inside a bound project with a location), turns (ROOT seeded
    or not, user node, llm placeholder filled in place, tool nodes, a failed turn as an error
    node), one git commit per turn, resends forking from a predecessor, compaction summaries,
    rewinds (soft: nodes marked rewound, the head moved back, "ROOT" for the first message),
    and, for bound projects, the project auto-commit and the shadow-git store with their
    metadata stamps written after the turn's commit (left uncommitted, as upstream leaves them).
    The default project is created at the first ad-hoc chat only."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.state = home / ".openprogram"
        self.count = 0
        self.clock = 1795983613.0
        self.repos: dict[str, Path] = {}  # session id -> its directory
        self.nodes: dict[str, dict[str, dict[str, Any]]] = {}  # sid -> id -> node

    def _now(self) -> float:
        self.clock += 1.0
        return self.clock

    def _id(self, width: int = 12) -> str:
        self.count += 1
        return hashlib.sha1(str(self.count).encode()).hexdigest()[:width]

    def _projects(self) -> dict[str, Any]:
        path = self.state / "projects" / "projects.json"
        return json.loads(path.read_text()) if path.exists() else {}

    def _registry(self, name: str) -> dict[str, Any]:
        path = self.state / "sessions" / name
        return json.loads(path.read_text()) if path.exists() else {}

    def _bind(self, sid: str, project: Path | None) -> str:
        """resolve_project / get_default_project, then bind_session."""
        projects = self._projects()
        if project is None:
            pid = "default"
            projects.setdefault(pid, {
                "id": pid, "name": self.home.name, "path": str(self.home), "is_default": True,
                "session_ids": [], "status": "active", "created_at": self._now()})  # fmt: skip
        else:
            pid = "proj_" + hashlib.sha1(str(project).lower().encode()).hexdigest()[:8]
            projects.setdefault(pid, {
                "id": pid, "name": project.name, "path": str(project), "is_default": False,
                "session_ids": [], "status": "active", "created_at": self._now()})  # fmt: skip
            (project / ".openprogram").mkdir(parents=True, exist_ok=True)
            (project / ".openprogram" / ".gitignore").write_text("*\n")
        projects[pid]["session_ids"].append(sid)
        _write_json(self.state / "projects" / "projects.json", projects, 2)
        return pid

    def create_session(self, project: Path | None = None, *, root: bool = True) -> str:
        """create_session: a bound session lives in its project (work_dir left null)."""
        sid = "local_" + self._id(10)
        pid = self._bind(sid, project)
        if project is None:
            directory = self.state / "sessions" / sid
        else:
            directory = project / ".openprogram" / "sessions" / sid
            locations = self._registry("locations.json")
            locations[sid] = str(directory)
            _write_json(self.state / "sessions" / "locations.json", locations, 2)
        now = self._now()
        meta: dict[str, Any] = {
            "id": sid, "agent_id": "main", "title": "", "source": "web", "created_at": now,
            "updated_at": now, "project_id": pid, "head_id": None}  # fmt: skip
        if project is not None:
            meta["work_dir"] = None
        (directory / "history").mkdir(parents=True)
        (directory / "workdir").mkdir()
        (directory / "workdir" / ".gitkeep").write_text("")
        git("init", "-q", "--initial-branch=main", cwd=directory)
        commit_as(SESSION_GIT, "--allow-empty", "-m", "session init", cwd=directory)
        self.repos[sid], self.nodes[sid] = directory, {}
        self._meta(sid, meta)
        index = self._registry("index.json")
        index[sid] = {
            "id": sid, "status": "idle", "pinned": False, "archived": False, "unread": False,
            "agent_id": "main", "title": "", "source": "web", "created_at": now,
            "updated_at": now, "channel": None, "peer_display": None, "peer_id": None}  # fmt: skip
        _write_json(self.state / "sessions" / "index.json", index, 2)
        if root:
            self._append(sid, {"id": "ROOT", "role": "user", "metadata": {"display": "root"}})
        return sid

    def meta(self, sid: str) -> dict[str, Any]:
        value: dict[str, Any] = json.loads((self.repos[sid] / "meta.json").read_text())
        return value

    def _meta(self, sid: str, meta: dict[str, Any]) -> None:
        _write_json(self.repos[sid] / "meta.json", meta)

    def _write(self, sid: str, node: dict[str, Any]) -> None:
        name = f"{node['seq']:04d}-{node['role'][0]}-{node['id']}.json"
        _write_json(self.repos[sid] / "history" / name, node)

    def _append(self, sid: str, fields: dict[str, Any]) -> dict[str, Any]:
        """append_message: the next seq, the node file; a top-level llm node moves the head."""
        nodes = self.nodes[sid]
        node: dict[str, Any] = {
            "id": "", "created_at": self._now(), "seq": max((n["seq"] for n in nodes.values()),
            default=-1) + 1, "role": "user", "name": "", "input": None, "output": "",
            "caller": "", "predecessor": None, "reads": [], "metadata": {}}  # fmt: skip
        node.update(fields)
        nodes[node["id"]] = node
        self._write(sid, node)
        meta = self.meta(sid)
        if node["role"] == "llm" and not node["caller"] and not node["metadata"].get("covers_ids"):
            meta["head_id"] = node["id"]
        meta["updated_at"] = node["created_at"]
        self._meta(sid, meta)
        index = self._registry("index.json")
        index[sid]["updated_at"] = node["created_at"]
        if node["role"] == "user" and node["output"]:
            text = node["output"].strip().replace("\n", " ")
            index[sid]["preview"] = text if len(text) <= 80 else text[:77] + "…"
        _write_json(self.state / "sessions" / "index.json", index, 2)
        return node

    def _update(self, sid: str, node_id: str, **metadata: Any) -> None:
        """merge_node_metadata: the node file rewritten in place, its name unchanged."""
        node = self.nodes[sid][node_id]
        node["metadata"] = {**node["metadata"], **metadata}
        self._write(sid, node)

    def turn(
        self,
        sid: str,
        text: str,
        *,
        fail: bool = False,
        after: str | None = None,
        edits: dict[str, str] | None = None,
        project: Path | None = None,
        shadow: bool = False,
    ) -> str:
        """One dispatcher turn; ``after`` the node the user message follows (default the head,
        "ROOT" in a fresh session). Returns the user node's id."""
        head = self.meta(sid)["head_id"]
        user = self._id()
        reply = user + "_reply"
        self._append(sid, {
            "id": user, "output": text, "caller": "ROOT", "predecessor": after or head or "ROOT",
            "metadata": {"source": "web", "speaker_kind": "owner", "speaker_id": "owner/local",
                         "authority_tier": "owner", "interaction": "interactive"}})  # fmt: skip
        self._append(sid, {
            "id": reply, "role": "llm", "predecessor": user,
            "metadata": {"source": "web", "status": "running", "started_at": self.clock}})  # fmt: skip
        call = "toolu_" + self._id(8)
        self._append(sid, {
            "id": f"{reply}_t_{call}", "role": "code", "name": "edit", "input": {"n": 1},
            "output": "ok", "caller": reply,
            "metadata": {"tool_call_id": call, "is_error": False}})  # fmt: skip
        node = self.nodes[sid][reply]
        if fail:
            node["output"] = "[error] RuntimeError: provider down"
            node["metadata"].update(
                error="provider down", error_type="RuntimeError", trace="Traceback …",
                status="error", finished_at=self._now())  # fmt: skip
        else:
            node["output"] = "Done: " + text
            node["metadata"].update(
                predecessor=user, model="m", status="completed", finished_at=self._now(),
                extra=json.dumps({"tool_calls": [], "blocks": []}))  # fmt: skip
        self._write(sid, node)
        meta = self.meta(sid)
        if not meta.get("_auto_titled"):
            first = text.strip().splitlines()[0]
            meta.update(title=first if len(first) <= 50 else first[:50] + "…",
                        _auto_titled=True, _title_gen_count=1)  # fmt: skip
        meta["branches"] = {**meta.get("branches", {}), reply: {"turns": 1}}
        meta.update(status="running", model="m", last_prompt_tokens=100)
        self._meta(sid, meta)
        index = self._registry("index.json")
        index[sid]["title"] = meta["title"]
        _write_json(self.state / "sessions" / "index.json", index, 2)
        line = (text.strip().splitlines() or [""])[0][:60] or "turn"
        self.commit(sid, f"turn (error): {line}" if fail else f"turn: {line}")
        if project is not None and edits:
            self._project_commit(sid, reply, project, edits, line)
        if project is not None and edits and shadow:
            self._shadow_commit(sid, reply, project, edits, line)
        meta = self.meta(sid)
        meta["status"] = "failed" if fail else "idle"
        self._meta(sid, meta)
        return user

    def commit(self, sid: str, message: str) -> None:
        """commit_all: git add -A, a commit only when something is staged."""
        directory = self.repos[sid]
        git("add", "-A", cwd=directory)
        if git("diff", "--cached", "--name-only", cwd=directory):
            commit_as(SESSION_GIT, "-m", message, cwd=directory)

    def _project_commit(
        self, sid: str, reply: str, project: Path, edits: dict[str, str], line: str
    ) -> None:
        """project_commit.commit_turn_changes: auto-init with an empty first commit, git add -A
        as the agent, the stamp {repo, sha}."""
        if not (project / ".git").exists():
            git("init", "-q", "--initial-branch=main", cwd=project)
            commit_as(AGENT_GIT, "--allow-empty", "-m", "openprogram: project init", cwd=project)
        for rel, content in edits.items():
            (project / rel).parent.mkdir(parents=True, exist_ok=True)
            (project / rel).write_text(content)
        git("add", "-A", cwd=project)
        commit_as(AGENT_GIT, "-m", f"[agent {sid[:8]}] {line}", cwd=project)
        sha = git("rev-parse", "HEAD", cwd=project)
        self._update(sid, reply, project_commit={"repo": str(project), "sha": sha})

    def _shadow_commit(
        self, sid: str, reply: str, project: Path, edits: dict[str, str], line: str
    ) -> None:
        """shadow_git.ShadowGitStore.commit_turn: the store of the project's resolved path,
        created with an empty root commit; the changed files copied in; the stamp names the
        project (not the store) with the HEAD before and the new commit."""
        repo = str(project.resolve())
        digest = hashlib.sha256(repo.encode()).hexdigest()[:16]
        store = self.state / "shadow-git" / digest
        if not (store / ".git").exists():
            store.mkdir(parents=True)
            git("init", "-q", "--initial-branch=main", cwd=store)
            commit_as(AGENT_GIT, "--allow-empty", "-m", "shadow-git: init", cwd=store)
        before = git("rev-parse", "HEAD", cwd=store)
        for rel in edits:
            (store / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(project / rel, store / rel)
        git("add", "-A", cwd=store)
        commit_as(AGENT_GIT, "-m", f"[{reply[:8]}] {line}", cwd=store)
        after = git("rev-parse", "HEAD", cwd=store)
        self._update(sid, reply, shadow_git={"repo": repo, "before": before, "after": after})

    def rewind_to(self, sid: str, user: str) -> None:
        """Rewind to a user message: it and what followed on the branch are marked rewound,
        the head goes back to its predecessor ("ROOT" for the first message)."""
        nodes = self.nodes[sid]
        chain, current = [], self.meta(sid)["head_id"]
        while current and current in nodes:
            chain.append(current)
            if current == user:
                break
            current = nodes[current]["predecessor"]
        for node_id in chain:
            self._update(sid, node_id, rewound=True, rewound_at=self._now())
        meta = self.meta(sid)
        meta["head_id"] = nodes[user]["predecessor"]
        self._meta(sid, meta)
        self.commit(sid, "rewind")

    def compact(self, sid: str, covered: list[str], kept: str) -> None:
        """A compaction summary spliced into the chain: it takes the first covered node's
        predecessor, and the first kept node now follows it (the head does not move)."""
        nodes = self.nodes[sid]
        summary = self._append(sid, {
            "id": "summary_" + self._id(), "role": "llm", "name": "context/summary",
            "output": "Earlier: …", "predecessor": nodes[covered[0]]["predecessor"],
            "metadata": {"covers_ids": covered}})  # fmt: skip
        nodes[kept]["predecessor"] = summary["id"]
        self._write(sid, nodes[kept])
