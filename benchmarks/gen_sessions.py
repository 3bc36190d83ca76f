"""Generate an OpenProgram state directory of N sessions x M nodes, deterministically.

The layout is what OpenProgram writes (spec §2): ``<home>/.openprogram/sessions/<sid>/`` with
``meta.json`` (compact, no newline), ``history/NNNN-<letter>-<id>.json`` (``json.dumps`` with the
default separators, ``ensure_ascii=False``, no newline), an empty ``.git/HEAD`` stand-in,
``sessions/index.json`` and ``projects/projects.json``. Every turn is a user node, an llm reply
and tool calls; every file passes ``continuity check --family sessions`` with no finding.

    python benchmarks/gen_sessions.py DIR [--sessions 1000] [--nodes 200]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

TEXTS = [
    "Why does the session listing crash on Windows with a cp1252 error?",
    "Draft a short weekly status update for the storage refactor — 进展如何？",
    "Add a one-question FAQ about the port to docs/faq.md",
]


def turn_nodes(turn: int, seq: int, previous: str) -> list[dict[str, object]]:
    user = f"{turn:08x}"
    reply = user + "_reply"
    text = TEXTS[turn % len(TEXTS)]
    found: list[dict[str, object]] = [
        {"id": user, "created_at": 1795983613.5 + seq, "seq": seq, "role": "user", "name": "",
         "input": None, "output": text, "caller": "ROOT", "predecessor": previous, "reads": [],
         "metadata": {"source": "web", "speaker_kind": "owner", "speaker_id": "owner/local",
                      "authority_tier": "owner", "interaction": "interactive"}},
        {"id": reply, "created_at": 1795983613.6 + seq, "seq": seq + 1, "role": "llm", "name": "",
         "input": None, "output": "Done: " + text, "caller": "", "predecessor": user, "reads": [],
         "metadata": {"source": "web", "status": "completed", "predecessor": user,
                      "model": "claude-sonnet-4-5", "input_tokens": 1834, "output_tokens": 212,
                      "finished_at": 1795983614.0 + seq,
                      "extra": json.dumps({"tool_calls": [], "blocks": []})}},
    ]  # fmt: skip
    for k in range(2):
        call = f"toolu_{turn:04x}{k:04x}"
        found.append(
            {"id": f"{reply}_t_{call}", "created_at": 1795983613.7 + seq, "seq": seq + 2 + k,
             "role": "code", "name": "grep", "input": {"pattern": "text=True", "path": "src"},
             "output": "src/store.py:356: cmd, capture_output=True, text=True,",
             "caller": reply, "predecessor": None, "reads": [],
             "metadata": {"tool_call_id": call, "is_error": False}}
        )  # fmt: skip
    return found


def session(directory: Path, sid: str, count: int) -> dict[str, object]:
    history = directory / "history"
    history.mkdir(parents=True)
    (directory / ".git").mkdir()
    (directory / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    root = {"id": "ROOT", "created_at": 1795983613.0, "seq": 0, "role": "user", "name": "",
            "input": None, "output": "", "caller": "", "predecessor": None, "reads": [],
            "metadata": {"display": "root"}}  # fmt: skip
    nodes = [root]
    previous, turn = "ROOT", 0
    while len(nodes) < count:
        batch = turn_nodes(turn, len(nodes), previous)
        nodes.extend(batch)
        previous, turn = str(batch[1]["id"]), turn + 1
    nodes = nodes[:count]
    heads = [n for n in nodes if n["role"] == "llm"]
    users = [n for n in nodes if n["role"] == "user" and n["id"] != "ROOT"]
    latest = str(users[-1]["output"]).strip().replace("\n", " ") if users else ""
    preview = latest if len(latest) <= 80 else latest[:77] + "…"
    for node in nodes:
        name = f"{node['seq']:04d}-{str(node['role'])[0]}-{node['id']}.json"
        (history / name).write_text(json.dumps(node, ensure_ascii=False), "utf-8")
    meta = {"id": sid, "agent_id": "main", "title": "Benchmark session", "source": "web",
            "created_at": 1795983613.0, "updated_at": 1795983700.0, "project_id": "default",
            "status": "idle", "head_id": heads[-1]["id"] if heads else None}  # fmt: skip
    (directory / "meta.json").write_text(json.dumps(meta, ensure_ascii=False), "utf-8")
    return {"id": sid, "status": "idle", "pinned": False, "archived": False, "unread": False,
            "agent_id": "main", "title": "Benchmark session", "source": "web",
            "created_at": 1795983613.0, "updated_at": 1795983700.0, "channel": None,
            "peer_display": None, "peer_id": None, "preview": preview}  # fmt: skip


def generate(home: Path, sessions: int, nodes: int) -> None:
    state = home / ".openprogram"
    index = {}
    for i in range(sessions):
        sid = f"local_{i:010x}"
        index[sid] = session(state / "sessions" / sid, sid, nodes)
    (state / "sessions" / "index.json").write_text(json.dumps(index, indent=2))
    (state / "sessions" / "locations.json").write_text("{}")
    (state / "projects").mkdir(parents=True)
    projects = {"default": {"id": "default", "name": "alice", "path": "/home/alice",
                            "is_default": True, "session_ids": sorted(index),
                            "status": "active", "created_at": 1795983613.0}}  # fmt: skip
    (state / "projects" / "projects.json").write_text(json.dumps(projects, indent=2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--nodes", type=int, default=200)
    args = parser.parse_args()
    generate(args.directory, args.sessions, args.nodes)


if __name__ == "__main__":
    main()
