"""Every SS1xx rule: a fixture it catches (with the path and pointer) and the valid layouts it
passes; the synthetic OpenProgram corpus passes, and mutations of it are caught."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from continuity_checks.checks import all_rules
from tests.conftest import EXAMPLES, RunCLI, write_tree
from tests.helpers.sessions import (
    ARCHIVE,
    ARCHIVE_TEXT,
    HISTORY,
    INDEX,
    META,
    PROJECTS,
    SESSION,
    SID,
    SYNTHETIC,
    TOPIC,
    TOPIC_TEXT,
    WORKSPACE,
    anchor,
    frame,
    loose_commit,
    node,
    rebuild_corpus,
    session_nodes,
    state,
)

IDX = ".openprogram/sessions/index.json"
LOC = ".openprogram/sessions/locations.json"
PRJ = ".openprogram/projects/projects.json"
MJ = SESSION + "meta.json"
USER = HISTORY + "0001-u-1a2b3c4d.json"
REPLY = HISTORY + "0002-l-1a2b3c4d_reply.json"
TOOL = HISTORY + "0003-c-1a2b3c4d_reply_t_toolu_1.json"
ROOT = HISTORY + "0000-u-ROOT.json"
BOUND_SID = "local_5e6f7a8b9c"
BOUND = f"code/proj/.openprogram/sessions/{BOUND_SID}/"
PROJECT_ID = "proj_6d7d035e"
MEMORY_TOPIC2 = ".openprogram/memory/topics/projects/zz.md"
TIMELINE = ".openprogram/memory/timeline/2026-11.jsonl"  # sha1("/home/alice/code/proj")[:8]


def meta(**changes: Any) -> str:
    value = {**META, **changes}
    return json.dumps({k: v for k, v in value.items() if v is not None})


def edit(path: str, **changes: Any) -> str:
    """The node at ``path`` of the valid session with ``changes`` applied to its fields."""
    value = json.loads(session_nodes()[path])
    for key, new in changes.items():
        if key == "metadata":
            value["metadata"] = {**value["metadata"], **new}
        elif new is DROP:
            del value[key]
        else:
            value[key] = new
    return json.dumps(value, ensure_ascii=False)


DROP = object()


def index(**changes: Any) -> str:
    return json.dumps({SID: {**INDEX[SID], **changes}}, indent=2)


def projects(**extra: Any) -> str:
    return json.dumps({**PROJECTS, **extra}, indent=2)


AGENT_SHA, AGENT_OBJECT, AGENT_BYTES = loose_commit(f"[agent {BOUND_SID[:8]}] Fix the crash")
OTHER_SHA, OTHER_OBJECT, OTHER_BYTES = loose_commit("[agent local_5e] Fix it", "Alice <a@x>")
BOUND_REPLY = BOUND + "history/0002-l-1a2b3c4d_reply.json"


def stamped(sha: str) -> str:
    value = json.loads(session_nodes()[REPLY])
    value["metadata"]["project_commit"] = {"repo": "/home/alice/code/proj", "sha": sha}
    return json.dumps(value)


def bound_layout(**overrides: Any) -> dict[str, Any]:
    """A second session bound to a project, with its location and project entry; its reply's
    edit was auto-committed to the project repository (a loose commit object)."""
    bound_meta = {
        **META,
        "id": BOUND_SID,
        "project_id": PROJECT_ID,
        "work_dir": "/home/alice/code/proj",
    }
    files: dict[str, Any] = {
        BOUND + ".git/HEAD": "ref: refs/heads/main\n",
        BOUND + "meta.json": json.dumps(bound_meta),
        **{p.replace(SESSION, BOUND): t for p, t in session_nodes().items()},
        "code/proj/.openprogram/.gitignore": "*\n",
        BOUND_REPLY: stamped(AGENT_SHA),
        "code/proj/.git/" + AGENT_OBJECT: AGENT_BYTES,
        "code/proj/.git/" + OTHER_OBJECT: OTHER_BYTES,
        LOC: json.dumps({BOUND_SID: f"/home/alice/code/proj/.openprogram/sessions/{BOUND_SID}"}),
        PRJ: projects(**{PROJECT_ID: {
            "id": PROJECT_ID, "name": "proj", "path": "/home/alice/code/proj", "is_default": False,
            "session_ids": [BOUND_SID], "status": "active", "created_at": 1795983613.0}}),
        IDX: json.dumps({**INDEX, BOUND_SID: {**INDEX[SID], "id": BOUND_SID}}, indent=2),
        # its nodes are marked as written to the home workspace's memory: their frames [52]
        BOUND_ARCHIVE: bound_archive(),
    }  # fmt: skip
    files.update(overrides)
    return files


BOUND_ARCHIVE = ARCHIVE.replace(SID, BOUND_SID)


def bound_archive() -> str:
    text = ARCHIVE_TEXT.replace(SID, BOUND_SID)
    for nid in ("1a2b3c4d", "1a2b3c4d_reply"):
        text = text.replace(
            anchor(f"openprogram/{SID}/{nid}"), anchor(f"openprogram/{BOUND_SID}/{nid}")
        )
    return text


Expected = list[tuple[str, str, str | None]]

# (case id, overrides of the valid state, exactly the (rule, path, pointer) findings expected)
BAD: list[tuple[str, dict[str, Any], Expected]] = [
    ("SS102 no .git", {SESSION + ".git/HEAD": None, SESSION + ".git/refs/heads/main": None},
     [("SS102", SESSION[:-1], None)]),
    ("SS103 meta array", {MJ: "[]"}, [("SS103", MJ, ""), ("SS129", IDX, f"/{SID}")]),
    ("SS104 id differs", {MJ: meta(id="local_ffffffffff")}, [("SS104", MJ, "/id")]),
    ("SS104 agent_id missing", {MJ: meta(agent_id=None)}, [("SS104", MJ, ""), ("SS129", IDX, f"/{SID}/agent_id")]),
    ("SS105 head missing", {MJ: json.dumps({k: v for k, v in META.items() if k != "head_id"})},
     [("SS105", MJ, "")]),
    ("SS105 head nowhere", {MJ: meta(head_id="nope_reply")}, [("SS105", MJ, "/head_id")]),
    ("SS106 head is summary", {REPLY: edit(REPLY, metadata={"covers_ids": ["1a2b3c4d"]})},
     [("SS106", MJ, "/head_id")]),
    ("SS107 status", {MJ: meta(status="sleeping")}, [("SS107", MJ, "/status")]),
    ("SS108 project id", {MJ: meta(project_id="proj_XYZ")}, [("SS108", MJ, "/project_id")]),
    ("SS108 project id missing", {MJ: meta(project_id=None)}, [("SS108", MJ, "")]),
    ("SS109 branch key", {MJ: meta(branches={"gone_reply": {}})}, [("SS109", MJ, "/branches/gone_reply")]),
    ("SS109 merged head", {MJ: meta(merged_heads=["gone"])}, [("SS109", MJ, "/merged_heads/0")]),
    ("SS110 count past 5", {MJ: meta(_title_gen_count=6)}, [("SS110", MJ, "/_title_gen_count")]),
    ("SS110 count without auto", {MJ: meta(_auto_titled=False, _title_gen_count=2)},
     [("SS110", MJ, "/_title_gen_count")]),
    # 2.0 is an integer to JSON Schema, so the range check passes it; the implication must too
    ("SS110 count 2.0 without auto", {MJ: meta(_auto_titled=False, _title_gen_count=2.0)},
     [("SS110", MJ, "/_title_gen_count")]),
    ("SS110 phase-1 title", {MJ: meta(title="Something else"), IDX: index(title="Something else")},
     [("SS110", MJ, "/title")]),
    ("SS111 bad name", {HISTORY + "1-u-1a2b3c4d.json": session_nodes()[USER], USER: None},
     [("SS111", HISTORY + "1-u-1a2b3c4d.json", None), ("SS140", ARCHIVE, None)]),
    ("SS111 renamed node (seq)", {HISTORY + "0009-u-1a2b3c4d.json": session_nodes()[USER], USER: None},
     [("SS111", HISTORY + "0009-u-1a2b3c4d.json", "/seq")]),
    ("SS111 role letter", {HISTORY + "0001-l-1a2b3c4d.json": session_nodes()[USER], USER: None},
     [("SS111", HISTORY + "0001-l-1a2b3c4d.json", "/role")]),
    ("SS111 id", {HISTORY + "0001-u-1a2b3c4e.json": session_nodes()[USER], USER: None},
     [("SS111", HISTORY + "0001-u-1a2b3c4e.json", "/id"), ("SS140", ARCHIVE, None)]),
    ("SS112 old key names", {USER: edit(USER, parent_id="ROOT")}, [("SS112", USER, None)]),
    ("SS112 missing key", {USER: edit(USER, reads=DROP)}, [("SS112", USER, None)]),
    ("SS112 reads type", {USER: edit(USER, reads=[1])}, [("SS112", USER, "/reads/0")]),
    ("SS112 seq float", {USER: edit(USER, seq=1.0)}, [("SS112", USER, "/seq")]),
    ("SS112 not an object", {USER: "[]"}, [("SS112", USER, None)]),
    ("SS113 role", {HISTORY + "0001-s-1a2b3c4d.json": edit(USER, role="system"), USER: None},
     [("SS113", HISTORY + "0001-s-1a2b3c4d.json", "/role"), ("SS140", ARCHIVE, None)]),
    ("SS114 duplicated seq", {HISTORY + "0003-u-77777777.json": json.dumps(
        {**json.loads(session_nodes()[USER]), "id": "77777777", "seq": 3, "metadata": {}})},
     [("SS114", HISTORY + "0003-u-77777777.json", "/seq")]),
    ("SS114 duplicated id", {HISTORY + "0005-u-1a2b3c4d.json": edit(USER, seq=5)},
     [("SS114", HISTORY + "0005-u-1a2b3c4d.json", "/id")]),
    ("SS115 seq 10000", {HISTORY + "10000-u-99.json": json.dumps(
        {**json.loads(session_nodes()[USER]), "id": "99", "seq": 10000, "predecessor": "1a2b3c4d_reply",
         "metadata": {}})},
     [("SS115", HISTORY + "10000-u-99.json", "/seq")]),
    ("SS116 root output", {ROOT: edit(ROOT, output="hi")}, [("SS116", ROOT, "/output")]),
    ("SS117 dangling predecessor", {REPLY: edit(REPLY, predecessor="gone", metadata={"predecessor": "gone"})},
     [("SS117", REPLY, "/predecessor")]),
    ("SS117 dangling caller", {TOOL: edit(TOOL, caller="gone", id="gone_t_toolu_1")},
     [("SS111", TOOL, "/id"), ("SS117", TOOL, "/caller")]),
    ("SS118 predecessor cycle", {USER: edit(USER, predecessor="1a2b3c4d_reply")},
     [("SS118", USER, "/predecessor")]),
    ("SS118 caller cycle", {REPLY: edit(REPLY, caller=TOOL.rsplit("-", 1)[1][:-5])},
     [("SS118", REPLY, "/caller")]),
    ("SS119 write invariant", {REPLY: edit(REPLY, predecessor=None, metadata={"predecessor": None})},
     [("SS119", REPLY, "/predecessor")]),
    ("SS120 tool id", {TOOL: edit(TOOL, metadata={"is_error": "no"})}, [("SS120", TOOL, "/metadata/is_error")]),
    ("SS120 tool caller not llm", {TOOL: edit(TOOL, caller="1a2b3c4d", id="1a2b3c4d_t_toolu_1")},
     [("SS111", TOOL, "/id"), ("SS120", TOOL, "/caller")]),
    ("SS121 user caller", {USER: edit(USER, caller="")}, [("SS121", USER, "/caller")]),
    ("SS122 status", {REPLY: edit(REPLY, metadata={"status": "done"})}, [("SS122", REPLY, "/metadata/status")]),
    ("SS122 finished_at", {REPLY: json.dumps({**json.loads(session_nodes()[REPLY]), "metadata": {
        k: v for k, v in json.loads(session_nodes()[REPLY])["metadata"].items() if k != "finished_at"}})},
     [("SS122", REPLY, "/metadata/status")]),
    ("SS123 metadata predecessor", {REPLY: edit(REPLY, metadata={"predecessor": "ROOT"})},
     [("SS123", REPLY, "/metadata/predecessor")]),
    ("SS124 extra", {REPLY: edit(REPLY, metadata={"extra": "{not json"})}, [("SS124", REPLY, "/metadata/extra")]),
    ("SS125 spilled", {REPLY: edit(REPLY, metadata={"spilled": {"path": "large_nodes/0002-1a2b3c4d_reply.txt"}})},
     [("SS125", REPLY, "/metadata/spilled/path")]),
    ("SS126 temp", {MJ + ".3f2a.tmp": "{"}, [("SS126", MJ + ".3f2a.tmp", None)]),
    ("SS126 temp in history", {REPLY + ".tmp": "{"}, [("SS126", REPLY + ".tmp", None)]),
    ("SS127 backup dir", {SESSION + "file_backups/1a2b3c4d/manifest.json": '{"backed_at": 1.5, "files": {}}'},
     [("SS127", SESSION + "file_backups/1a2b3c4d", None)]),
    ("SS127 backup blob", {SESSION + "file_backups/1a2b3c4d_reply/manifest.json": json.dumps(
        {"backed_at": 1.5, "files": {"abc_x.py": {"path": "/home/alice/x.py", "pre_existing": True}}})},
     [("SS127", SESSION + "file_backups/1a2b3c4d_reply/manifest.json", "/files/abc_x.py")]),
    ("SS127 manifest shape", {SESSION + "file_backups/1a2b3c4d_reply/manifest.json": '{"files": {}}'},
     [("SS127", SESSION + "file_backups/1a2b3c4d_reply/manifest.json", "")]),
    ("SS128 index key", {IDX: json.dumps({"other": INDEX[SID]})},
     [("SS128", IDX, "/other/id"), ("SS129", IDX, "/other"), ("SS143", IDX, "/other")]),
    ("SS128 index flag", {IDX: index(pinned="no")}, [("SS128", IDX, f"/{SID}/pinned"), ("SS129", IDX, f"/{SID}/pinned")]),
    ("SS129 index title", {IDX: index(title="Old title")}, [("SS129", IDX, f"/{SID}/title")]),
    ("SS129 index lags", {IDX: index(updated_at=1795983600.0)}, [("SS129", IDX, f"/{SID}/updated_at")]),
    ("SS130 preview", {IDX: index(preview="x" * 81, updated_at=1795983614.0)}, [("SS130", IDX, f"/{SID}/preview")]),
    ("SS130 preview of another message", {IDX: index(preview="Something else")},
     [("SS130", IDX, f"/{SID}/preview")]),
    ("SS130 preview not stripped", {IDX: index(preview=" Fix the crash with details")},
     [("SS130", IDX, f"/{SID}/preview")]),
    # the index lags by 3 s: its preview may be the one before the latest (none here: ""), not
    # a message the session never had
    ("SS130 lagging preview of no message", {IDX: index(updated_at=1795983613.5, preview="older")},
     [("SS130", IDX, f"/{SID}/preview")]),
    # [39] a lagging entry cannot hold the text of a message created after its updated_at
    ("SS130 lagging preview ahead of its flush", {
        HISTORY + "0004-u-2222.json": node(4, "user", "2222", output="Next", caller="ROOT",
                                           predecessor="1a2b3c4d_reply")[1],
        IDX: index(updated_at=1795983614.6, preview="Next")}, [("SS130", IDX, f"/{SID}/preview")]),
    ("SS131 location", {LOC: json.dumps({SID: "/home/alice/elsewhere"})}, [("SS131", LOC, f"/{SID}")]),
    ("SS132 location unbound", bound_layout(**{PRJ: projects()}),
     [("SS132", LOC, f"/{BOUND_SID}")]),
    ("SS132 work_dir not a path", bound_layout(**{BOUND + "meta.json": json.dumps(
        {**META, "id": BOUND_SID, "project_id": PROJECT_ID, "work_dir": 7})}),
     [("SS132", BOUND + "meta.json", "/work_dir")]),
    ("SS132 work_dir", bound_layout(**{BOUND + "meta.json": json.dumps(
        {**META, "id": BOUND_SID, "project_id": PROJECT_ID, "work_dir": "/home/alice/other"})}),
     # the reply's project_commit.repo is read as the registries read their paths, not
     # through the wrong work_dir
     [("SS132", LOC, f"/{BOUND_SID}")]),
    ("SS133 unmapped", bound_layout(**{LOC: json.dumps({BOUND_SID: f"/srv/x/.openprogram/sessions/{BOUND_SID}"}),
                                       BOUND_ARCHIVE: None}),
     # the bound session is listed nowhere it can be found: its memory markers are not judged
     [("SS132", LOC, f"/{BOUND_SID}"), ("SS133", LOC, f"/{BOUND_SID}"),
      ("SS150", BOUND + "history/0001-u-1a2b3c4d.json", "/metadata/memory_written_scriptorium")]),
    ("SS134 project shape", {PRJ: json.dumps({"default": {**PROJECTS["default"], "status": "gone"}})},
     [("SS134", PRJ, "/default/status")]),
    ("SS135 two defaults", {PRJ: projects(proj_00000000={**PROJECTS["default"], "id": "proj_00000000",
                                                          "session_ids": []})},
     [("SS135", PRJ, "/proj_00000000"), ("SS135", PRJ, "")]),
    ("SS135 bad id", {PRJ: projects(other={**PROJECTS["default"], "id": "other", "is_default": False,
                                         "session_ids": []})},
     [("SS135", PRJ, "/other"), ("SS135", PRJ, "/other/id")]),
    ("SS136 id hash", bound_layout(**{PRJ: json.dumps({**PROJECTS, "proj_00000000": {
        "id": "proj_00000000", "name": "proj", "path": "/home/alice/code/proj", "is_default": False,
        "session_ids": [BOUND_SID], "status": "active", "created_at": 1.0}})}),
     [("SS136", PRJ, "/proj_00000000"), ("SS132", LOC, f"/{BOUND_SID}")]),
    ("SS137 listed twice", bound_layout(**{PRJ: projects(**{PROJECT_ID: {
        "id": PROJECT_ID, "name": "proj", "path": "/home/alice/code/proj", "is_default": False,
        "session_ids": [BOUND_SID, SID], "status": "active", "created_at": 1.0}})}),
     [("SS137", PRJ, f"/{PROJECT_ID}/session_ids/1")]),
    ("SS137 listed nowhere", {PRJ: json.dumps({"default": {**PROJECTS["default"], "session_ids": [SID, "local_gone"]}})},
     [("SS137", PRJ, "/default/session_ids/1")]),
    ("SS138 gitignore content", bound_layout(**{"code/proj/.openprogram/.gitignore": "*"}),
     [("SS138", "code/proj/.openprogram/.gitignore", None)]),
    ("SS138 gitignore missing", {k: v for k, v in bound_layout().items() if not k.endswith(".gitignore")},
     [("SS138", "code/proj/.openprogram/.gitignore", None)]),
    ("SS149 commit missing", bound_layout(**{BOUND_REPLY: stamped("1" * 40)}),
     [("SS149", BOUND_REPLY, "/metadata/project_commit/sha")]),
    ("SS149 not the agent's commit", bound_layout(**{BOUND_REPLY: stamped(OTHER_SHA)}),
     [("SS149", BOUND_REPLY, "/metadata/project_commit/sha")]),
    ("SS149 no repository", bound_layout(**{BOUND_REPLY: stamped(AGENT_SHA).replace("code/proj", "code/proj/sub")}),
     [("SS149", BOUND_REPLY, "/metadata/project_commit/repo")]),
    ("SS133 repo unmapped", bound_layout(**{BOUND_REPLY: stamped(AGENT_SHA).replace("/home/alice", "/srv")}),
     [("SS133", BOUND_REPLY, "/metadata/project_commit/repo")]),
    ("SS143 gc empty session", {**{p: None for p in session_nodes()}, HISTORY + ".keep": "",
                                MJ: json.dumps({**META, "head_id": None, "branches": {}})},
     [("SS143", IDX, f"/{SID}"), ("SS140", ARCHIVE, None), ("SS140", ARCHIVE, None)]),
    # [56] startup GC deletes an entry whose history/ is missing, the whole directory included
    ("SS143 gc entry without a directory",
     {IDX: json.dumps({SID: INDEX[SID], "local_9f8e7d6c5b": {**INDEX[SID], "id": "local_9f8e7d6c5b"}})},
     [("SS129", IDX, "/local_9f8e7d6c5b"), ("SS143", IDX, "/local_9f8e7d6c5b")]),
    # [56] GC skips a project-bound session whose location is unreachable: a location it cannot
    # use (SS131) is such a one, not a home-root session that GC would delete
    ("SS143 gc entry whose location is malformed",
     {IDX: json.dumps({SID: INDEX[SID], "local_9f8e7d6c5b": {**INDEX[SID], "id": "local_9f8e7d6c5b"}}),
      LOC: json.dumps({"local_9f8e7d6c5b": "/home/alice/code/app/.openprogram/sessions/local_9f8e7d6c5bx"})},
     [("SS129", IDX, "/local_9f8e7d6c5b"), ("SS131", LOC, "/local_9f8e7d6c5b")]),
    ("SS143 gc archived", {IDX: index(archived=True, updated_at=1000.0), MJ: meta(archived=True, updated_at=1000.0)},
     [("SS143", IDX, f"/{SID}")]),
    ("SS144 branch", {SESSION + ".git/refs/heads/feature": "0" * 40}, [("SS144", SESSION + ".git", None)]),
    ("SS145 retry branch", {SESSION + ".git/packed-refs": f"{'0' * 40} refs/heads/retry-1a2b3c4d_reply\n"},
     [("SS145", SESSION + ".git", None)]),
    ("SS139 no marker", {ARCHIVE: ARCHIVE_TEXT.split("\n", 1)[1]}, [("SS139", ARCHIVE, None)]),
    ("SS139 wrong anchor", {ARCHIVE: ARCHIVE_TEXT.replace(ARCHIVE_TEXT.split('"')[1], "source-" + "0" * 16, 1)},
     [("SS139", ARCHIVE, None), ("SS142", TOPIC, None), ("SS146", TOPIC, None)]),
    ("SS139 record count", {ARCHIVE: ARCHIVE_TEXT.replace("record-lines:2", "record-lines:3", 1)},
     [("SS139", ARCHIVE, None)]),
    ("SS139 speaker encoding", {ARCHIVE: ARCHIVE_TEXT.replace("owner%2Flocal", "owner/local", 1)},
     [("SS139", ARCHIVE, None)]),
    ("SS139 source-meta padding", {ARCHIVE: ARCHIVE_TEXT.replace(" -->\n<!-- record-lines:2", "== -->\n<!-- record-lines:2", 1)},
     [("SS139", ARCHIVE, None)]),
    ("SS139 repeated ref", {ARCHIVE: ARCHIVE_TEXT + ARCHIVE_TEXT.split("\n\n", 1)[1]},
     [("SS139", ARCHIVE, None)]),
    ("SS140 record differs", {ARCHIVE: ARCHIVE_TEXT.replace("with details", "with other details")},
     [("SS140", ARCHIVE, None)]),
    ("SS140 tool node archived", {ARCHIVE: ARCHIVE_TEXT.replace(
        frame("1a2b3c4d_reply", ["Done."], "runtime%2Fagent%252Fmain"),
        frame("1a2b3c4d_reply_t_toolu_1", ["x.py:1"]))},
     [("SS140", ARCHIVE, None)]),
    ("SS141 marked but not archived", {USER: edit(USER, metadata={"memory_written_scriptorium": WORKSPACE}),
                                       ARCHIVE: "<!-- openprogram-source-archive:v2 -->\n\n",
                                       TOPIC: "# App\n"},
     [("SS141", USER, "/metadata/memory_written_scriptorium")]),
    ("SS142 footnote grammar", {TOPIC: TOPIC_TEXT.replace("Time: `2026-11-29`", "Time: 2026-11-29")},
     [("SS142", TOPIC, None), ("SS146", TOPIC, None)]),
    ("SS142 anchor missing", {TOPIC: TOPIC_TEXT.replace("#source-", "#source-0")},
     [("SS142", TOPIC, None), ("SS146", TOPIC, None)]),
    ("SS142 block id reused", {MEMORY_TOPIC2: TOPIC_TEXT}, [("SS142", MEMORY_TOPIC2, None)]),
    ("SS146 block without citation", {TOPIC: TOPIC_TEXT.replace(".[^e-1] ^b1c2d3e4", ". ^b1c2d3e4")},
     [("SS146", TOPIC, None)]),
    ("SS147 provenance shape", {TIMELINE: json.dumps({"id": "t1", "summary": "x", "provenance": {
        "project_id": "default", "session_id": SID, "node_ids": "1a2b3c4d", "event_time": 1.0,
        "ingestion_time": 2.0}}) + "\n"}, [("SS147", TIMELINE, "/provenance/node_ids")]),
    ("SS147 provenance missing", {TIMELINE: '{"id": "t1", "summary": "x"}\n'}, [("SS147", TIMELINE, None)]),
    ("SS148 provenance dangling", {TIMELINE: json.dumps({"id": "t1", "provenance": {
        "project_id": "default", "session_id": SID, "node_ids": ["gone"], "event_time": 1.0,
        "ingestion_time": 2.0}}) + "\n"}, [("SS148", TIMELINE, "/provenance/node_ids/0")]),
]  # fmt: skip


def _apply(tmp_path: Path, files: dict[str, Any]) -> Path:
    root = tmp_path / "home"
    write_tree(root, {k: v for k, v in state().items() if k not in files or files[k] is not None})
    write_tree(root, {k: v for k, v in files.items() if v is not None})
    for path, content in files.items():
        if content is None and (root / path).exists():
            (root / path).unlink()
    return root


def found(report: dict[str, Any]) -> list[tuple[str, str, str | None]]:
    return ordered([(f["rule"], f["path"], f["pointer"]) for f in report["findings"]])


def ordered(items: Expected) -> Expected:
    return sorted(items, key=lambda t: (t[0], t[1], t[2] or ""))


@pytest.mark.parametrize(("case", "files", "expected"), BAD, ids=[b[0] for b in BAD])
def test_bad_fixture_is_caught(
    tmp_path: Path, run_json: RunCLI, case: str, files: dict[str, Any], expected: Expected
) -> None:
    root = _apply(tmp_path, files)
    code, report = run_json("check", "--family", "sessions", "--all", "--root", str(root))
    assert found(report) == ordered(expected), case
    errors = any(f["severity"] == "error" for f in report["findings"])
    assert code == (1 if errors else 0)
    for finding in report["findings"]:
        if finding["pointer"] is not None and finding["path"].endswith(".json"):
            assert finding["line"] is not None, finding  # positioned in the file


GOOD: list[tuple[str, dict[str, Any]]] = [
    ("valid state", {}),
    ("bound session", bound_layout()),
    # [5] rewind_to on the first message: the next turn starts from "ROOT" as in a fresh session
    ("head ROOT after a rewind to the first message, no ROOT node seeded",
     {HISTORY + "0000-u-ROOT.json": None, MJ: meta(head_id="ROOT")}),
    ("head ROOT with the ROOT node seeded", {MJ: meta(head_id="ROOT")}),
    # create_session(project_path=…) leaves work_dir null; project_commit.repo is read as the
    # registries read their paths
    ("bound session with work_dir null", bound_layout(**{BOUND + "meta.json": json.dumps(
        {**META, "id": BOUND_SID, "project_id": PROJECT_ID, "work_dir": None})})),
    ("ask_user answer without predecessor", {HISTORY + "0004-u-ask1.json": node(
        4, "user", "ask1", input={"q": "?"}, caller="1a2b3c4d_reply")[1]}),
    ("fork: two users after one reply", {
        HISTORY + "0004-u-aaaa.json": node(4, "user", "aaaa", caller="ROOT", predecessor="1a2b3c4d_reply")[1],
        HISTORY + "0005-u-bbbb.json": node(5, "user", "bbbb", caller="ROOT", predecessor="1a2b3c4d_reply")[1]}),
    # [39] a user node without text leaves the preview as it was (OpenProgram sets it from text)
    ("seq gap after deletion", {HISTORY + "0009-u-cccc.json": node(9, "user", "cccc", caller="ROOT",
                                                                   predecessor="1a2b3c4d_reply")[1]}),
    ("user-titled session", {MJ: meta(title="Mine", _user_titled=True), IDX: index(title="Mine")}),
    ("legacy string branch value", {MJ: meta(branches={"1a2b3c4d_reply": "named"})}),
    ("index lags by 3 s (and its preview with it: none before the first message)",
     {IDX: index(updated_at=1795983613.5, preview="")}),
    # [39] the user node is created at 1795983614.5: an entry written after that has its preview
    ("index lags by 2 s, its preview already the latest", {IDX: index(updated_at=1795983614.6)}),
    # [39] neither side has updated_at: the entry is taken as flushed (no traceback)
    ("no updated_at on either side", {
        IDX: json.dumps({SID: {k: v for k, v in INDEX[SID].items() if k != "updated_at"}}),
        MJ: meta(updated_at=None)}),
    ("index lags by 2 s behind a second turn", {
        HISTORY + "0004-u-2222.json": node(4, "user", "2222", output="Next", caller="ROOT",
                                           predecessor="1a2b3c4d_reply")[1],
        IDX: index(updated_at=1795983614.6)}),
    # [39] created by the entry's updated_at but appended after it: the entry has the one before
    ("index lags, the latest written node appended after the flush", {
        HISTORY + "0004-u-2222.json": node(4, "user", "2222", output="Next", caller="ROOT",
                                           predecessor="1a2b3c4d_reply", created_at=1795983615.0)[1],
        IDX: index(updated_at=1795983615.0)}),
    ("preview cut at 77 plus ellipsis", {
        HISTORY + "0004-u-2222.json": node(4, "user", "2222", output="x" * 100, caller="ROOT",
                                           predecessor="1a2b3c4d_reply")[1],
        IDX: index(preview="x" * 77 + "…")}),
    ("spawn root caller elsewhere", {HISTORY + "0004-u-sp.json": node(
        4, "user", "sp", caller="other_session_node", predecessor="1a2b3c4d_reply",
        metadata={"spawn_branch_root": True})[1]}),
    ("provenance record", {TIMELINE: json.dumps({"id": "t1", "kind": "work", "provenance": {
        "project_id": "default", "session_id": SID, "node_ids": ["1a2b3c4d"], "commit": None,
        "event_time": 1.0, "ingestion_time": 2.0}}) + "\n"}),
    ("graph entities need no provenance", {".openprogram/memory/graph/entities.jsonl": '{"id": "e1"}\n'}),
    ("dangling archive of a deleted session is kept", {}),
    ("backup with blob", {SESSION + "file_backups/1a2b3c4d_reply/manifest.json": json.dumps(
        {"backed_at": 1.5, "files": {"abc_x.py": {"path": "/home/alice/x.py", "pre_existing": True}}}),
        SESSION + "file_backups/1a2b3c4d_reply/abc_x.py": "print()\n"}),
]  # fmt: skip


@pytest.mark.parametrize(("case", "files"), GOOD, ids=[g[0] for g in GOOD])
def test_near_miss_passes(
    tmp_path: Path, run_json: RunCLI, case: str, files: dict[str, Any]
) -> None:
    root = _apply(tmp_path, files)
    code, report = run_json("check", "--family", "sessions", "--all", "--root", str(root))
    assert (code, found(report)) == (0, []), case


def test_a_bound_session_marked_as_written_has_its_frames(tmp_path: Path, run_json: RunCLI) -> None:
    """[52] a project-bound session's nodes marked as written to the home workspace (the state
    directory whose locations.json lists it) have frames there."""
    root = _apply(tmp_path, bound_layout(**{BOUND_ARCHIVE: None}))
    code, report = run_json("check", "--family", "sessions", "--all", "--root", str(root))
    pointer = "/metadata/memory_written_scriptorium"
    assert (code, found(report)) == (
        0,
        [("SS141", BOUND + "history/0001-u-1a2b3c4d.json", pointer)],
    )


def test_every_file_rule_has_a_bad_fixture() -> None:
    rules = {r.id for r in all_rules() if r.id.startswith("SS1")}
    caught = {rule for _, _, expected in BAD for rule, _, _ in expected}
    caught |= {rule for _, _, _, expected in LINKED for rule, _, _ in expected}
    assert rules - caught == set()


# --- the synthetic corpus ------------------------------------------------------------------------


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    assert SYNTHETIC.is_dir(), f"the OpenProgram corpus is missing: {SYNTHETIC}"
    return rebuild_corpus(tmp_path)


def test_synthetic_corpus_passes_clean(corpus: Path, run_json: RunCLI) -> None:
    code, report = run_json("check", "--family", "sessions", "--all", "--root", str(corpus))
    assert (code, report["findings"]) == (0, [])
    assert report["summary"]["files"] == 34


def test_state_directory_alone_reports_paths_outside_it(corpus: Path, run_json: RunCLI) -> None:
    code, report = run_json(
        "check", "--family", "sessions", "--all", "--root", str(corpus / ".openprogram")
    )
    assert code == 0
    assert found(report) == [
        ("SS133", "projects/projects.json", "/proj_3939bc8f/path"),
        ("SS133", "sessions/locations.json", "/local_c47d09e5b1"),
    ]


def test_path_map_option_resolves_moved_home(
    corpus: Path, run_json: RunCLI, tmp_path: Path
) -> None:
    # the home directory moved: an explicit map replaces the default one
    (corpus / ".continuity.toml").write_text(
        f'[sessions]\npath-map = {{ "/home/alice" = "{corpus}" }}\n'
    )
    code, report = run_json("check", "--family", "sessions", "--all", "--root", str(corpus))
    assert (code, report["findings"]) == (0, [])
    (corpus / ".continuity.toml").write_text(
        '[sessions]\npath-map = { "/home/alice" = "/elsewhere" }\n'
    )
    code, report = run_json("check", "--family", "sessions", "--all", "--root", str(corpus))
    assert code == 0
    assert {f["rule"] for f in report["findings"]} == {"SS133"}
    assert "outside the checked root" in report["findings"][0]["message"]


def test_path_map_option_is_validated(corpus: Path, run_json: RunCLI) -> None:
    (corpus / ".continuity.toml").write_text('[sessions]\npath-map = { "home/alice" = "." }\n')
    from continuity_checks.cli import main

    assert main(["check", "--family", "sessions", "--all", "--root", str(corpus)]) == 2


def test_one_session_repository_as_the_root(corpus: Path, run_json: RunCLI) -> None:
    session = corpus / "code/wiki-agent/.openprogram/sessions/local_c47d09e5b1"
    code, report = run_json("check", "--family", "sessions", "--all", "--root", str(session))
    # [49] its project_commit names the project repository, outside the root: said, not passed
    assert (code, found(report), report["summary"]["files"]) == (
        0,
        [("SS133", "history/0002-l-eeef4f48_reply.json", "/metadata/project_commit/repo")],
        11,
    )


B = ".openprogram/sessions/local_8b21e47a90/"


def _mutate(corpus: Path, rel: str, change: Any) -> None:
    path = corpus / rel
    value = json.loads(path.read_text("utf-8"))
    change(value)
    path.write_text(json.dumps(value, ensure_ascii=False), "utf-8")


def test_mutations_of_the_corpus_are_caught(corpus: Path, run_json: RunCLI, tmp_path: Path) -> None:
    pristine = tmp_path / "pristine"
    shutil.copytree(corpus, pristine, symlinks=True)
    reply = B + "history/0006-l-3dc740745104_reply.json"
    user = B + "history/0005-u-3dc740745104.json"

    def dangling(v: dict[str, Any]) -> None:
        v["predecessor"] = "000000000000"
        v["metadata"]["predecessor"] = "000000000000"

    def cycle(v: dict[str, Any]) -> None:
        v["predecessor"] = "3dc740745104_reply"

    def reseq(v: dict[str, Any]) -> None:
        v["seq"] = 4

    def nowhere(v: dict[str, Any]) -> None:
        v["head_id"] = "ffffffffffff_reply"

    def rewritten(v: dict[str, Any]) -> None:
        v["metadata"]["project_commit"]["sha"] = "81c3d1dc4e57b3f285e2c367cf0c38f3f69951a5"

    def disagree(v: dict[str, Any]) -> None:
        v["local_8b21e47a90"]["title"] = "Something the meta never said"

    cases: list[tuple[str, Any, str]] = [
        (reply, dangling, "SS117"),
        (user, cycle, "SS118"),
        (B + "history/0006-l-3dc740745104_reply.json", "rename", "SS111"),
        (B + "history/0005-u-3dc740745104.json", reseq, "SS111"),
        (B + "meta.json", nowhere, "SS105"),
        (".openprogram/sessions/index.json", disagree, "SS129"),
        (
            "code/wiki-agent/.openprogram/sessions/local_c47d09e5b1/history/0002-l-eeef4f48_reply.json",
            rewritten,
            "SS149",
        ),
    ]
    for rel, change, rule in cases:
        shutil.rmtree(corpus)
        shutil.copytree(pristine, corpus, symlinks=True)
        if change == "rename":
            (corpus / rel).rename(corpus / rel.replace("0006-l-", "0016-l-"))
        else:
            _mutate(corpus, rel, change)
        code, report = run_json("check", "--family", "sessions", "--all", "--root", str(corpus))
        rules = {f["rule"] for f in report["findings"]}
        assert rule in rules, (rel, rule, report["findings"])
    # a duplicated seq: a copy of a node under another id with the same seq
    shutil.rmtree(corpus)
    shutil.copytree(pristine, corpus, symlinks=True)
    source = corpus / (B + "history/0005-u-3dc740745104.json")
    value = json.loads(source.read_text("utf-8"))
    value["id"] = "99999999"
    (corpus / (B + "history/0005-u-99999999.json")).write_text(json.dumps(value))
    code, report = run_json("check", "--family", "sessions", "--all", "--root", str(corpus))
    assert code == 1 and "SS114" in {f["rule"] for f in report["findings"]}


def test_example_passes_the_quick_start(run_json: RunCLI) -> None:
    code, report = run_json("check", "--family", "sessions", "--all", "--root", str(EXAMPLES))
    assert (code, report["findings"], report["summary"]["files"]) == (0, [], 10)


def test_hook_inside_a_session_repository(
    corpus: Path, run_json: RunCLI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What pre-commit runs in a session repository: the staged files, from its top."""
    session = corpus / ".openprogram/sessions/local_8b21e47a90"
    monkeypatch.chdir(session)
    staged = [
        "meta.json",
        "history/0005-u-3dc740745104.json",
        "history/0006-l-3dc740745104_reply.json",
    ]
    code, report = run_json("check", *staged)
    assert (code, report["findings"], report["summary"]["files"]) == (0, [], 3)
    # one staged node whose predecessor was deleted: the rest of the DAG is read to judge it
    (session / "history/0002-l-64fa3073579f_reply.json").unlink()
    code, report = run_json("check", "history/0005-u-3dc740745104.json")
    assert code == 1
    assert ("SS117", "history/0003-u-0ee460370cdc.json", "/predecessor") in found(report)
    assert ("SS117", "history/0005-u-3dc740745104.json", "/predecessor") in found(report)


# --- [1] a session directory that is a symlink (write_tree makes none: built on the corpus) -------

C = "code/wiki-agent/.openprogram/sessions/local_c47d09e5b1"
# (case, the session directory replaced by a symlink, where its directory goes: inside the
# root (relative to it) or "<outside>", the findings)
LINKED: list[tuple[str, str, str, Expected]] = [
    ("home session moved inside the root", B.rstrip("/"), "archive/local_8b21e47a90",
     [("SS101", B.rstrip("/"), None)]),
    ("home session leading out of the root", B.rstrip("/"), "<outside>",
     # the registries, which name it, say nothing of what cannot be read: SS101 is the cause
     [("SS101", B.rstrip("/"), None)]),
    ("dangling symlink", B.rstrip("/"), "<gone>", [("SS101", B.rstrip("/"), None)]),
    ("project-bound session moved inside the root", C, "code/wiki-agent/state/local_c47d09e5b1",
     [("SS101", C, None)]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("case", "session", "target", "expected"), LINKED, ids=[c[0] for c in LINKED]
)
def test_a_symlinked_session_directory_is_caught(
    corpus: Path, run_json: RunCLI, tmp_path: Path, case: str, session: str, target: str,
    expected: Expected,
) -> None:  # fmt: skip
    """OpenProgram refuses to open a session whose directory is a symlink. The walk does not
    follow the symlink, so the session is found through the sessions directory it sits in."""
    outside = target in ("<outside>", "<gone>")
    moved = tmp_path / "outside" / "session" if outside else corpus / target
    moved.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(corpus / session), str(moved))
    (corpus / session).symlink_to(moved if outside else Path(*[".."] * session.count("/"), target))
    if target == "<gone>":
        shutil.rmtree(moved)
    code, report = run_json("check", "--family", "sessions", "--all", "--root", str(corpus))
    assert (code, found(report)) == (1, ordered(expected)), case
    assert "symlink" in report["findings"][0]["message"]


def test_a_symlinked_directory_above_the_sessions_passes(
    corpus: Path, run_json: RunCLI, tmp_path: Path
) -> None:
    """[1] judges the session's own directory: the state directory kept elsewhere in the tree
    and linked in as .openprogram is no symlinked session."""
    shutil.move(str(corpus / ".openprogram"), str(corpus / "state"))
    (corpus / ".openprogram").symlink_to("state")
    code, report = run_json("check", "--family", "sessions", "--root", str(corpus), str(corpus / B))
    assert (code, report["findings"]) == (0, [])
    assert report["summary"]["files"] > 5  # the session was read through the symlink above it


# --- each node file read once: sessions judged in check_file, in whichever process -------------


def _many_sessions() -> dict[str, Any]:
    """The valid state and three more sessions, each with a misnamed first node, a shape error
    in the middle and a dangling predecessor in its last node file."""
    files: dict[str, Any] = {}
    for sid in ("local_b1", "local_b2", "local_b3"):
        history = f".openprogram/sessions/{sid}/history/"
        files[f".openprogram/sessions/{sid}/.git/HEAD"] = "ref: refs/heads/main\n"
        files[history + "0000-u-ROOT.json"] = node(0, "user", "ROOT", metadata={"display": "root"})[
            1
        ]
        files[history + "0001-u-aaaa.json"] = node(
            1, "user", "zzzz", caller="ROOT", predecessor="ROOT"
        )[1]
        files[history + "0002-l-aaaa_reply.json"] = node(
            2, "llm", "aaaa_reply", predecessor="aaaa", reads="x"
        )[1]
        for seq in range(3, 9):
            files[history + f"{seq:04d}-c-t{seq}.json"] = node(
                seq, "code", f"t{seq}", caller="aaaa_reply"
            )[1]
        files[history + "0009-u-bbbb.json"] = node(
            9, "user", "bbbb", caller="ROOT", predecessor="gone"
        )[1]
    return files  # fmt: skip


def test_each_session_is_judged_once_whatever_the_processes(
    tmp_path: Path, run_json: RunCLI
) -> None:
    """Node files are checked as the engine hands them over and a session is judged when its
    last node file arrives: with the work split over 1, 2 or 5 processes (so that sessions are
    cut between them), every finding appears exactly once, at its position."""
    root = _apply(tmp_path, _many_sessions())
    expected = []
    for sid in ("local_b1", "local_b2", "local_b3"):
        history = f".openprogram/sessions/{sid}/history/"
        expected += [("SS111", history + "0001-u-aaaa.json", "/id"),
                     ("SS112", history + "0002-l-aaaa_reply.json", "/reads"),
                     ("SS117", history + "0009-u-bbbb.json", "/predecessor")]  # fmt: skip
    for jobs in ("1", "2", "5"):
        code, report = run_json(
            "check", "--family", "sessions", "--all", "--root", str(root), "--jobs", jobs
        )
        assert (code, found(report)) == (1, ordered(expected)), jobs
        assert all(f["line"] is not None for f in report["findings"]), jobs


def test_named_node_files_in_any_order_judge_their_session_once(
    tmp_path: Path, run_json: RunCLI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hook names files in its own order, some of a session only: the session is judged
    once, its other node files read from the tree (their findings reported too)."""
    root = _apply(tmp_path, _many_sessions())
    monkeypatch.chdir(root)
    history = ".openprogram/sessions/local_b2/history/"
    named = [history + "0009-u-bbbb.json", ".openprogram/sessions/local_b1/history/0003-c-t3.json",
             history + "0001-u-aaaa.json"]  # fmt: skip
    code, report = run_json("check", "--family", "sessions", *named)
    b1 = ".openprogram/sessions/local_b1/history/"
    assert (code, found(report)) == (1, ordered([
        ("SS111", b1 + "0001-u-aaaa.json", "/id"), ("SS111", history + "0001-u-aaaa.json", "/id"),
        ("SS112", b1 + "0002-l-aaaa_reply.json", "/reads"),
        ("SS112", history + "0002-l-aaaa_reply.json", "/reads"),
        ("SS117", b1 + "0009-u-bbbb.json", "/predecessor"),
        ("SS117", history + "0009-u-bbbb.json", "/predecessor"),
    ]))  # fmt: skip


# --- the commit hook's start-up ------------------------------------------------------------------

_IMPORTS = """
import sys
from continuity_checks.core.config import Config
from continuity_checks.checks.sessions.family import SessionsFamily

family = SessionsFamily(Config())
assert family.claims(".openprogram/sessions/s/history/0001-u-a.json") == "node"
print(sorted(m for m in sys.modules if m.startswith("continuity_checks.checks.sessions")))
"""


def test_importing_the_family_leaves_the_check_modules_unloaded() -> None:
    """The engine builds every family for every run: the sessions family's module, its
    construction and ``claims`` load only ``layout`` and ``pathmap``, in a fresh interpreter;
    the check modules load when a check first runs."""
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-c", _IMPORTS], capture_output=True, text=True, check=True
    )
    package = "continuity_checks.checks.sessions"
    assert json.loads(result.stdout.replace("'", '"')) == [
        package, f"{package}.family", f"{package}.layout", f"{package}.pathmap"
    ]  # fmt: skip
    from continuity_checks.checks import sessions

    on_disk = {p.stem for p in Path(sessions.__file__).parent.glob("*.py")}
    check_modules = on_disk - {"__init__", "family", "layout", "pathmap"}
    assert {"files", "stream", "session", "registries", "memory", "history", "rules"} <= on_disk
    for check_module in sorted(check_modules):
        assert f"'{package}.{check_module}'" not in result.stdout


def _deltified_project(root: Path) -> dict[str, str]:
    """The project of the bound layout as a real repository whose commits git stores as deltas
    (near-identical long messages, repacked): subject -> the id of a commit stored as a delta."""
    from tests.helpers.sessions import git

    project = root / "code/proj"
    git("init", "-q", cwd=project)
    body = "".join(f"line {k} of a long commit body repeated in every commit\n" for k in range(60))
    for number in range(24):
        (project / "f.txt").write_text(f"{number}\n")
        git("add", "f.txt", cwd=project)
        prefix = BOUND_SID[:8] if number % 2 else "zzzzzzzz"
        git("-c", "user.name=OpenProgram Agent", "-c", "user.email=agent@openprogram.local",
            "-c", "commit.gpgsign=false", "commit", "-q", "-m",
            f"[agent {prefix}] change {number}\n\n{body}", cwd=project)  # fmt: skip
    git("repack", "-q", "-adf", "--window=250", "--depth=50", cwd=project)
    packs = list((project / ".git/objects/pack").glob("*.idx"))
    listing = git("verify-pack", "-v", str(packs[0]), cwd=project)
    deltas = {line.split()[0] for line in listing.splitlines() if " commit " in line
              and len(line.split()) >= 7}  # fmt: skip
    by_prefix: dict[str, str] = {}
    for sha in deltas:
        subject = git("log", "-1", "--format=%s", sha, cwd=project)
        by_prefix.setdefault(subject.split("]")[0] + "]", sha)
    return by_prefix


def test_a_project_commit_stored_as_a_pack_delta_is_read(tmp_path: Path, run_json: RunCLI) -> None:
    """[49] a commit git stores as a delta in a pack is rebuilt through the snapshot, so its
    subject is judged like a loose commit's."""
    root = _apply(tmp_path, bound_layout(**{
        "code/proj/.git/" + AGENT_OBJECT: None, "code/proj/.git/" + OTHER_OBJECT: None}))  # fmt: skip
    deltified = _deltified_project(root)
    good, bad = deltified[f"[agent {BOUND_SID[:8]}]"], deltified["[agent zzzzzzzz]"]
    (root / BOUND_REPLY).write_text(stamped(good))
    code, report = run_json("check", "--family", "sessions", "--all", "--root", str(root))
    assert (code, found(report)) == (0, [])
    (root / BOUND_REPLY).write_text(stamped(bad))
    code, report = run_json("check", "--family", "sessions", "--all", "--root", str(root))
    assert (code, found(report)) == (0, [("SS149", BOUND_REPLY, "/metadata/project_commit/sha")])
    assert "[agent zzzzzzzz] change" in report["findings"][0]["message"]
