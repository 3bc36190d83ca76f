"""One history node on its own: its name against its content, its shape, and the properties a
single node can show. The same code runs on the work tree (file mode, with positions) and on
any commit's version (history mode, without)."""

import json
from collections.abc import Callable
from typing import NamedTuple

from continuity_checks.checks.sessions import layout
from continuity_checks.checks.sessions import rules as ss
from continuity_checks.core import pointer as jp
from continuity_checks.core import schemas
from continuity_checks.core.display import json_type, quote, show
from continuity_checks.core.findings import Finding
from continuity_checks.core.rules import Rule
from continuity_checks.core.snapshot import Snapshot

SCHEMA = "openprogram-history-node"
KEYS = (
    "id", "created_at", "seq", "role", "name", "input", "output", "caller", "predecessor",
    "reads", "metadata",
)  # fmt: skip
ACTIVE = frozenset({"queued", "pending", "running", "streaming"})
TERMINAL = frozenset({"completed", "cancelled", "error", "failed", "interrupted"})
STATUSES = ACTIVE | TERMINAL | {"cancelling"}
SEQ_LIMIT = 10000
TEXT_KEPT = 200  # characters of a user node's output kept for title and preview checks

#: reports a finding for this node: rule, JSON Pointer into the node, message
At = Callable[[Rule, str, str], Finding]


class Node(NamedTuple):
    """What the cross-node checks need of one node (kept small: a session may hold thousands)."""

    path: str
    id: str
    seq: int
    role: str
    caller: str
    predecessor: str | None  # "" read as null (legacy)
    input_null: bool
    summary: bool  # metadata.covers_ids present: a compaction summary
    spawn: bool  # a spawn-branch root (its caller may be in another session)
    attach: bool  # metadata.function == "attach"
    tool_call: bool  # metadata.tool_call_id present (a stream-tap tool node)
    text: str  # a user node's output, cut to TEXT_KEPT characters
    marker: object  # metadata.memory_written_scriptorium
    commits: tuple[object, object] | None  # metadata.project_commit, metadata.shadow_git
    runtime: bool  # a runtime turn (display "runtime", source job_followup or merge_turn)


def role_letter(role: str) -> str:
    return role[0] if role else "x"


def check(
    path: str, value: object, at: At, snapshot: Snapshot | None
) -> tuple[list[Finding], Node | None]:
    """Findings for one node file, and the node when its shape lets other checks use it."""
    findings: list[Finding] = []
    name = path.rpartition("/")[2]
    parsed = layout.NODE_NAME.match(name)
    if parsed is None:
        findings.append(
            at(
                ss.NODE_NAME,
                "",
                f"expected a name <seq, 4+ digits>-<role letter>-<id>.json, found {quote(name)}",
            )
        )
    if not isinstance(value, dict):
        findings.append(at(ss.NODE_SHAPE, "", f"expected a JSON object, found {json_type(value)}"))
        return findings, None
    shape_ok = _shape(value, at, findings)
    if parsed is not None:
        seq_text, letter, node_id = parsed.groups()
        seq, role, found_id = value.get("seq"), value.get("role"), value.get("id")
        if isinstance(seq, int) and int(seq_text) != seq:
            findings.append(
                at(
                    ss.NODE_NAME,
                    "/seq",
                    f"expected seq {int(seq_text)} (from the file name), found {show(seq)}",
                )
            )
        if isinstance(role, str) and role_letter(role) != letter:
            findings.append(
                at(
                    ss.NODE_NAME,
                    "/role",
                    f"expected a role starting with {letter!r} (from the "
                    f"file name), found {show(role)}",
                )
            )
        if isinstance(found_id, str) and found_id != node_id:
            findings.append(
                at(
                    ss.NODE_NAME,
                    "/id",
                    f"expected id {quote(node_id)} (from the file name), found {show(found_id)}",
                )
            )
    if not shape_ok:
        return findings, None
    node = _node(path, value)
    findings.extend(_single(value, node, at, snapshot, path))
    return findings, node


def _shape(value: dict[str, object], at: At, findings: list[Finding]) -> bool:
    validator = schemas.validator(SCHEMA)
    ok = True
    if type(value.get("seq")) is float:  # 3.0 is an integer to JSON Schema, never to the code
        findings.append(
            at(ss.NODE_SHAPE, "/seq", f"expected an integer, found {show(value['seq'])}")
        )
        ok = False
    if validator.is_valid(value):
        return ok
    missing = [k for k in KEYS if k not in value]
    extra = [k for k in value if k not in KEYS]
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"missing {', '.join(missing)}")
        if extra:
            parts.append(f"extra {', '.join(quote(k, 40) for k in extra[:5])}")
        findings.append(
            at(ss.NODE_SHAPE, "", f"expected exactly the 11 Call keys; found {'; '.join(parts)}")
        )
    for error in validator.errors(value):
        parts_ = jp.tokens(error.pointer)
        if not parts_:
            continue  # missing or extra keys, reported above
        field = parts_[0]
        rule = ss.NODE_ROLE if field == "role" else ss.NODE_SHAPE
        expected = {
            "id": "a non-empty string",
            "created_at": "a number",
            "seq": "an integer >= 0",
            "role": "user, llm or code",
            "name": "a string",
            "caller": "a string",
            "predecessor": "a string or null",
            "reads": "a list of strings",
            "metadata": "an object",
        }.get(field, "a valid value")
        found = value[field] if len(parts_) == 1 else jp.value_or_none(value, error.pointer)
        findings.append(at(rule, error.pointer, f"expected {expected}, found {show(found)}"))
    return False


def _node(path: str, value: dict[str, object]) -> Node:
    # positional: this runs once per node file, and keyword construction costs twice as much
    metadata = value["metadata"]
    assert isinstance(metadata, dict)
    get = metadata.get
    role = value["role"]
    output = value["output"]
    return Node(
        path,
        value["id"],  # type: ignore[arg-type]
        value["seq"],  # type: ignore[arg-type]
        role,  # type: ignore[arg-type]
        value["caller"],  # type: ignore[arg-type]
        value["predecessor"] or None,  # type: ignore[arg-type]
        value["input"] is None,
        "covers_ids" in metadata,
        bool(get("spawn_branch_root")) or get("source") == "agent_spawn",
        get("function") == "attach",
        "tool_call_id" in metadata,
        output[:TEXT_KEPT] if role == "user" and isinstance(output, str) else "",
        get("memory_written_scriptorium"),
        (get("project_commit"), get("shadow_git"))
        if "project_commit" in metadata or "shadow_git" in metadata
        else None,
        get("display") == "runtime" or get("source") in RUNTIME_SOURCES,
    )


RUNTIME_SOURCES = ("job_followup", "merge_turn")


def _single(
    value: dict[str, object], node: Node, at: At, snapshot: Snapshot | None, path: str
) -> list[Finding]:
    """What one node shows on its own, beyond its shape."""
    findings: list[Finding] = []
    metadata = value["metadata"]
    assert isinstance(metadata, dict)
    if node.seq >= SEQ_LIMIT:
        findings.append(
            at(ss.SEQ_TOO_LARGE, "/seq", f"expected a seq below {SEQ_LIMIT}, found {node.seq}")
        )
    if node.id == "ROOT":
        findings.extend(_root(value, metadata, at))
    role = node.role
    if node.tool_call and role == "code":
        call_id = metadata["tool_call_id"]
        if node.predecessor is not None:
            findings.append(
                at(
                    ss.TOOL_SHAPE,
                    "/predecessor",
                    f"expected null for a tool node, found {show(value['predecessor'])}",
                )
            )
        if isinstance(call_id, str) and node.id != f"{node.caller}_t_{call_id}":
            findings.append(
                at(
                    ss.TOOL_SHAPE,
                    "/id",
                    f"expected <caller>_t_<tool_call_id> "
                    f"{quote(node.caller + '_t_' + call_id)}, found {quote(node.id)}",
                )
            )
        if not isinstance(metadata.get("is_error"), bool):
            findings.append(
                at(
                    ss.TOOL_SHAPE,
                    "/metadata/is_error",
                    f"expected a boolean, found {show(metadata.get('is_error'))}",
                )
            )
    if role in ("llm", "code") and "status" in metadata:
        status = metadata["status"]
        if not isinstance(status, str) or status not in STATUSES:  # a list or object too
            findings.append(
                at(
                    ss.NODE_STATUS,
                    "/metadata/status",
                    f"expected one of {', '.join(sorted(STATUSES))}, found {show(status)}",
                )
            )
        elif status in TERMINAL and "finished_at" not in metadata:
            findings.append(
                at(
                    ss.NODE_STATUS,
                    "/metadata/status",
                    f"expected finished_at with the terminal status {quote(status)}, found none",
                )
            )
    if "predecessor" in metadata and (metadata["predecessor"] or None) != node.predecessor:
        findings.append(
            at(
                ss.METADATA_PREDECESSOR,
                "/metadata/predecessor",
                f"expected "
                f"{show(value['predecessor'])} (the top-level predecessor), found "
                f"{show(metadata['predecessor'])}",
            )
        )
    if role == "llm" and "extra" in metadata:
        extra = metadata["extra"]
        ok = isinstance(extra, str)
        if ok:
            try:
                json.loads(str(extra))
            except ValueError:
                ok = False
        if not ok:
            findings.append(
                at(
                    ss.BAD_EXTRA,
                    "/metadata/extra",
                    f"expected a string holding JSON, found {show(extra, 60)}",
                )
            )
    spilled = metadata.get("spilled")
    if spilled is not None and snapshot is not None:
        findings.extend(_spill(spilled, node, at, snapshot, path))
    return findings


def _root(value: dict[str, object], metadata: dict[str, object], at: At) -> list[Finding]:
    """The ROOT node is the empty user node OpenProgram writes first."""
    expected = {
        "/role": (value["role"], "user"),
        "/output": (value["output"], ""),
        "/caller": (value["caller"], ""),
        "/predecessor": (value["predecessor"], None),
        "/metadata/display": (metadata.get("display"), "root"),
    }
    return [
        at(ss.BAD_ROOT, pointer, f"expected the ROOT node's {show(wanted)}, found {show(found)}")
        for pointer, (found, wanted) in expected.items()
        if found != wanted or type(found) is not type(wanted)
    ]


def _spill(spilled: object, node: Node, at: At, snapshot: Snapshot, path: str) -> list[Finding]:
    wanted = f"large_nodes/{node.seq:04d}-{node.id}.txt"
    found = spilled.get("path") if isinstance(spilled, dict) else None
    if not isinstance(found, str) or found.rpartition("/")[2] != wanted.rpartition("/")[2]:
        return [
            at(
                ss.SPILL_MISSING,
                "/metadata/spilled/path",
                f"expected a path ending in {quote(wanted)}, found {show(found)}",
            )
        ]
    session_dir = path.rpartition("history/")[0]
    if not snapshot.exists(session_dir + wanted):
        return [
            at(
                ss.SPILL_MISSING,
                "/metadata/spilled/path",
                f"expected {quote(wanted)} in the session, found no such file",
            )
        ]
    return []
