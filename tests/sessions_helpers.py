"""OpenProgram data for the sessions tests: a small valid state directory written as the code
writes it, and the synthetic corpus rebuilt with its git repositories."""

from __future__ import annotations

import base64
import hashlib
import json
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
