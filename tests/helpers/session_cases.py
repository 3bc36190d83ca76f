"""OpenProgram state directories for the SS1xx file-mode tests: a second session bound to a
project (its location, project entry and an auto-committed project commit), and the fixture
tables built on the valid state: broken layouts, each with exactly the findings
``continuity check --family sessions --all`` reports (rule, path, pointer), and near-misses that
pass. The schema tests hold both schema engines to the same answer on every one."""

from __future__ import annotations

import json
from typing import Any

from tests.helpers.sessions import (
    ARCHIVE,
    ARCHIVE_TEXT,
    HISTORY,
    INDEX,
    META,
    PROJECTS,
    SESSION,
    SID,
    TOPIC,
    TOPIC_TEXT,
    WORKSPACE,
    anchor,
    frame,
    loose_commit,
    node,
    session_nodes,
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


def found(report: dict[str, Any]) -> list[tuple[str, str, str | None]]:
    return ordered([(f["rule"], f["path"], f["pointer"]) for f in report["findings"]])


def ordered(items: Expected) -> Expected:
    return sorted(items, key=lambda t: (t[0], t[1], t[2] or ""))


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
