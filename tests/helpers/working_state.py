"""DSH working states for the tests, written as DSH writes them (2-space JSON, ``JSON.stringify``'s
escapes, the state hash recomputed): the valid state and its edits, the WS1xx file-mode fixture
table (each case with exactly the findings ``continuity check --all`` reports, and near-misses
that pass; the schema tests hold both schema engines to the same answer on every one), and
versions of the state for the history tests."""

from __future__ import annotations

import copy
import hashlib
import json
import re
from typing import Any

from continuity_checks.checks.working_state import state as dsh
from tests.conftest import Symlink

WS = ".dsh/project/WORKING_STATE.json"
CP = "CP-b3955791-420c-42ec-959a-35feb4a42bf6"
CA = "CA-0d7c5e2a-9b1f-4c3e-8a6d-2f4b7c9e1a30"
TIME = "2026-08-26T13:43:42.731Z"


def js_escaped(text: str) -> str:
    """``json.dumps`` output as JSON.stringify writes it: a lone surrogate (which json.dumps
    leaves raw) as a lowercase ``\\udxxx`` escape, the spec's one difference for strings."""
    return re.sub("[\ud800-\udfff]", lambda m: f"\\u{ord(m.group()):04x}", text)


def oracle_hash(value: dict[str, Any]) -> str:
    """The spec's Python port of DSH's state_hash: an oracle independent of core.canonical_json."""
    subset = {k: value[k] for k in dsh.HASH_FIELDS}
    text = js_escaped(json.dumps(subset, ensure_ascii=False, separators=(",", ":")))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def base(kind: str = "investigative-state") -> dict[str, Any]:
    value: dict[str, Any] = {
        "schema_version": 7,
        "task_id": None,
        "known": ["Build runs on Python 3.12", "Папка общая — em dash and Cyrillic stay raw"],
        "constraints": ["Do not touch production"],
        "decisions": ["Use uv for environments"],
        "evidence": ["pytest: 12 passed in 0.4s"],
        "failed_hypotheses": ["The cache was stale"],
        "do_not_repeat": ["Do not rerun the full suite"],
        "open_acceptance": ["User confirms the fix"],
        "next_action": ["Write the migration"],
        "checkpoint_meta": {
            "mode": "merge",
            "updated_at": TIME,
            "covered_evidence_ids": [],
            "checkpoint_id": CP,
            "checkpoint_kind": kind,
            "protocol_committed_through_seq": 120,
            "prune_safe_through_seq": None,
            "session_revision": 122,
            "source_revision": 0,
            "state_hash": None,
        },
    }
    if kind == "compaction-evacuation":
        value["checkpoint_meta"].update(
            prune_safe_through_seq=100, prune_audit_id=CA, prune_audited_at=TIME
        )
    return value


def encode(value: Any, *, rehash: bool = True) -> str:
    """A state as DSH writes it (2-space JSON, final newline), with its state_hash recomputed."""
    if rehash:
        value = copy.deepcopy(value)
        value["checkpoint_meta"]["state_hash"] = oracle_hash(value)
    return js_escaped(json.dumps(value, ensure_ascii=False, indent=2)) + "\n"


def edit(kind: str = "investigative-state", rehash: bool = True, **meta: Any) -> str:
    """The base state with some checkpoint_meta values replaced (None values are set to null;
    the key DROP removes them)."""
    value = base(kind)
    for key, new in meta.items():
        if new is DROP:
            del value["checkpoint_meta"][key]
        else:
            value["checkpoint_meta"][key] = new
    return encode(value, rehash=rehash)


def with_field(name: str, new: Any, kind: str = "investigative-state") -> str:
    value = base(kind)
    value[name] = new
    return encode(value, rehash=False) if name == "checkpoint_meta" else encode(value)


DROP = object()
EMPTY = {
    "schema_version": 7,
    "task_id": None,
    **{name: [] for name in dsh.SEMANTIC_FIELDS},
    "checkpoint_meta": {
        "mode": "init",
        "updated_at": None,
        "covered_evidence_ids": [],
        "checkpoint_id": None,
        "checkpoint_kind": None,
        "protocol_committed_through_seq": None,
        "prune_safe_through_seq": None,
        "session_revision": None,
        "source_revision": None,
        "state_hash": None,
    },
}


def pretty(value: Any) -> str:
    return js_escaped(json.dumps(value, ensure_ascii=False, indent=2)) + "\n"


STATE_JSON = {
    "schema": "qwen-v4-project-state-0.7.2",
    "source_revision": 0,
    "source_conflict_count": 0,
    "source_intake_status": "UNRESOLVED",
    "source_intake_mode": "UNSET",
    "source_compatibility_policy": "NONE",
    "current_phase": None,
    "active_task_id": None,
    "task_state": "NO_TASK",
    "worker_session_id": None,
    "last_test": None,
    "last_review": None,
    "last_acceptance": None,
    "operation": None,
    "budget_defaults": {"max_model_requests": 96, "max_failed_hypotheses": 2},
    "updated_at": "2026-08-27T18:58:49.000Z",
}
POLICY = {
    "schema_version": "qwen-v4-runtime-policy-0.8.0",
    "roles": {"CONTEXT_COMPACTOR": {"max_input_chars": 64000}},
    "investigative_state": {"snapshot_max_chars": 8000},
    "context_pressure": {"soft_headroom_tokens": 20000, "hard_headroom_tokens": 4096},
}
PROJECT_FILES = {
    ".dsh/project/state.json": pretty(STATE_JSON),
    ".dsh/project/RUNTIME_POLICY.json": pretty(POLICY),
    ".dsh/project/EXECUTION_POLICY.json": pretty(
        {
            "schema_version": "qwen-v4-execution-policy-0.7.2",
            "mode": "ask",
            "rules": [],
            "pending": None,
            "updated_at": None,
        }
    ),
    ".dsh/project/ACTIVE_REQUIREMENTS.json": pretty({"schema_version": 3, "requirements": []}),
    ".dsh/project/SOURCE_INDEX.json": pretty(
        {
            "schema_version": 3,
            "status": "EMPTY",
            "revision": 0,
            "generation": 0,
            "conflicts": [],
            "sources": [],
            "intake": {"status": "UNRESOLVED", "revision": 0, "mode": "UNSET"},
        }
    ),
    ".dsh/project/TOOLCHAIN.json": pretty({"python": "3.12", "anything": ["goes"]}),
}


def projection_of(value: dict[str, Any], **changes: Any) -> dict[str, Any]:
    projected = dsh.project(value)
    projected.update(changes)
    return projected


GOOD_STATE = encode(base())
GOOD_VALUE = json.loads(GOOD_STATE)
CAPTURE = "Supersedes earlier snapshots\r\n\r\nqwen-v4-investigative-state\r\n" + dsh.render(
    GOOD_VALUE
).replace("\n", "\r\n")

Case = tuple[str, dict[str, bytes | str], list[tuple[str, str, str | None]]]
# (case id, files, expected (rule, path, pointer) findings — exactly these)
BAD: list[Case] = [
    ("CC004 syntax", {WS: GOOD_STATE[:-3] + ",}\n"}, [("CC004", WS, None)]),
    ("CC005 duplicate key", {WS: GOOD_STATE.replace('"task_id": null', '"task_id": null, "task_id": "T"')},
     [("CC005", WS, "/task_id")]),
    ("WS101 array", {WS: "[]\n"}, [("WS101", WS, "")]),
    ("WS101 missing key", {WS: pretty({k: v for k, v in GOOD_VALUE.items() if k != "known"})},
     [("WS101", WS, "")]),
    ("WS102 version 6", {WS: GOOD_STATE.replace('"schema_version": 7', '"schema_version": 6')},
     [("WS102", WS, "/schema_version")]),
    ("WS120 a string cut inside an emoji (JSON.stringify's escape)",
     {WS: with_field("known", ["cut \ud83d", "\ude00 starts with the other half"])},
     [("WS120", WS, "/known/0")]),
    ("WS103 list is a string", {WS: with_field("known", "one fact")}, [("WS103", WS, "/known")]),
    ("WS103 item is a number", {WS: with_field("evidence", ["a", 5])}, [("WS103", WS, "/evidence/1")]),
    ("WS103 task_id number", {WS: with_field("task_id", 5)}, [("WS103", WS, "/task_id")]),
    ("WS103 meta not object", {WS: with_field("checkpoint_meta", "x")}, [("WS103", WS, "/checkpoint_meta")]),
    ("WS104 padded", {WS: with_field("decisions", ["  Use uv"])}, [("WS104", WS, "/decisions/0")]),
    ("WS104 empty", {WS: with_field("next_action", ["a", ""])}, [("WS104", WS, "/next_action/1")]),
    ("WS104 BOM is JS whitespace", {WS: with_field("known", ["fact\ufeff"])}, [("WS104", WS, "/known/0")]),
    ("WS104 no-break space", {WS: with_field("known", ["\xa0fact"])}, [("WS104", WS, "/known/0")]),
    ("WS104 raw failed_hypotheses only with a task",
     {WS: with_field("failed_hypotheses", ["x", "x "])}, [("WS104", WS, "/failed_hypotheses/1")]),
    ("WS105 duplicate", {WS: with_field("constraints", ["a", "b", "a"])}, [("WS105", WS, "/constraints/2")]),
    ("WS106 checkpoint id", {WS: edit(checkpoint_id="CP-123")}, [("WS106", WS, "/checkpoint_meta/checkpoint_id")]),
    ("WS106 mode", {WS: edit(mode="append")}, [("WS106", WS, "/checkpoint_meta/mode")]),
    ("WS106 time without ms", {WS: edit(updated_at="2026-08-26T13:43:42Z")},
     [("WS106", WS, "/checkpoint_meta/updated_at")]),
    ("WS106 time with a line break after it", {WS: edit(updated_at=TIME + "\n")},
     [("WS106", WS, "/checkpoint_meta/updated_at")]),
    ("WS106 upper-case checkpoint id", {WS: edit(checkpoint_id=CP.upper())},
     [("WS106", WS, "/checkpoint_meta/checkpoint_id")]),
    ("WS106 impossible date", {WS: edit(updated_at="2026-02-30T13:43:42.731Z")},
     [("WS106", WS, "/checkpoint_meta/updated_at")]),
    ("WS106 impossible hour", {WS: edit(updated_at="2026-08-26T25:43:42.731Z")},
     [("WS106", WS, "/checkpoint_meta/updated_at")]),
    ("WS106 covered evidence twice", {WS: edit(covered_evidence_ids=["EV-1", "EV-1"])},
     [("WS106", WS, "/checkpoint_meta/covered_evidence_ids")]),
    ("WS106 negative seq", {WS: edit(session_revision=-1)}, [("WS106", WS, "/checkpoint_meta/session_revision")]),
    ("WS106 upper-case hash", {WS: edit(rehash=False, state_hash="A" * 64)},
     [("WS106", WS, "/checkpoint_meta/state_hash")]),
    ("WS106 missing meta key", {WS: edit(source_revision=DROP)}, [("WS106", WS, "/checkpoint_meta")]),
    ("WS106 audit id", {WS: edit("compaction-evacuation", prune_audit_id="CA-x")},
     [("WS106", WS, "/checkpoint_meta/prune_audit_id")]),
    ("WS107 audit id on investigative", {WS: edit(prune_audit_id=CA)},
     [("WS107", WS, "/checkpoint_meta/prune_audit_id")]),
    ("WS107 compaction without audit", {WS: edit("compaction-evacuation", prune_audit_id=DROP, prune_audited_at=DROP)},
     [("WS107", WS, "/checkpoint_meta")]),
    ("WS107 compaction without boundary", {WS: edit("compaction-evacuation", prune_safe_through_seq=None)},
     [("WS107", WS, "/checkpoint_meta/prune_safe_through_seq")]),
    ("WS107 audit time is not the update time",
     {WS: edit("compaction-evacuation", prune_audited_at="2026-08-26T13:43:43.000Z")},
     [("WS107", WS, "/checkpoint_meta/prune_audited_at")]),
    ("WS107 compaction written in replace mode", {WS: edit("compaction-evacuation", mode="replace")},
     [("WS107", WS, "/checkpoint_meta/mode")]),
    ("WS107 compaction covering evidence", {WS: edit("compaction-evacuation", covered_evidence_ids=["EV-1"])},
     [("WS107", WS, "/checkpoint_meta/covered_evidence_ids")]),
    ("WS107 kind without checkpoint id", {WS: edit(checkpoint_id=None)}, [("WS107", WS, "/checkpoint_meta")]),
    ("WS108 init with an id", {WS: pretty({**EMPTY, "checkpoint_meta": {**EMPTY["checkpoint_meta"], "checkpoint_id": CP}})},
     [("WS108", WS, "/checkpoint_meta/checkpoint_id")]),
    ("WS109 wrong hash", {WS: edit(rehash=False, state_hash="0" * 64)}, [("WS109", WS, "/checkpoint_meta/state_hash")]),
    ("WS109 content edited", {WS: GOOD_STATE.replace("12 passed", "13 passed")},
     [("WS109", WS, "/checkpoint_meta/state_hash")]),
    ("WS110 prune above protocol", {WS: edit("compaction-evacuation", prune_safe_through_seq=121)},
     [("WS110", WS, "/checkpoint_meta/prune_safe_through_seq")]),
    ("WS111 near the /compress budget", {WS: with_field("known", ["k" * 60000])}, [("WS111", WS, "")]),
    ("WS112 compact", {WS: json.dumps(GOOD_VALUE, ensure_ascii=False) + "\n"}, [("WS112", WS, None)]),
    ("WS112 task packet not as DSH writes it", {".dsh/project/task_packets/T1.json": '{"id":"T1"}\n'},
     [("WS112", ".dsh/project/task_packets/T1.json", None)]),
    ("CC004 task packet", {".dsh/project/task_packets/T1.json": "{"}, [("CC004", ".dsh/project/task_packets/T1.json", None)]),
    ("CC004 evidence", {".dsh/project/evidence/T1.deterministic-tests.json": "{"},
     [("CC004", ".dsh/project/evidence/T1.deterministic-tests.json", None)]),
    ("WS112 escaped non-ascii", {WS: json.dumps(GOOD_VALUE, indent=2) + "\n"}, [("WS112", WS, None)]),
    ("WS113 lock owner", {".dsh/runtime/project.lock/owner.json": '{"pid":1}\n'},
     [("WS113", ".dsh/runtime/project.lock/owner.json", None)]),
    ("WS113 journal", {"sub/.dsh/project/transactions/tx-commit-1-ab/journal.json": "{}\n"},
     [("WS113", "sub/.dsh/project/transactions/tx-commit-1-ab/journal.json", None)]),
    ("WS113 once per directory and journal", {".dsh/runtime/worktrees/a/x.txt": "x", ".dsh/runtime/worktrees/a/y.txt": "y",
                                              ".dsh/runtime/transactions/tx-a-1-u/journal.json": "{}",
                                              ".dsh/runtime/transactions/tx-a-1-u/before/000.bin": "b"},
     [("WS113", ".dsh/runtime/transactions/tx-a-1-u/before/000.bin", None), ("WS113", ".dsh/runtime/worktrees/a/x.txt", None)]),
    ("WS114 state.json", {".dsh/project/state.json": pretty({**STATE_JSON, "source_revision": "0"})},
     [("WS114", ".dsh/project/state.json", "/source_revision")]),
    ("WS114 policy unknown key", {".dsh/project/RUNTIME_POLICY.json": pretty({**POLICY, "extra": 1})},
     [("WS114", ".dsh/project/RUNTIME_POLICY.json", "")]),
    ("WS114 policy zero", {".dsh/project/RUNTIME_POLICY.json": pretty({**POLICY, "investigative_state": {"snapshot_max_chars": 0}})},
     [("WS114", ".dsh/project/RUNTIME_POLICY.json", "/investigative_state/snapshot_max_chars")]),
    ("WS114 requirements", {".dsh/project/ACTIVE_REQUIREMENTS.json": pretty({"schema_version": 2, "requirements": []})},
     [("WS114", ".dsh/project/ACTIVE_REQUIREMENTS.json", "/schema_version")]),
    ("WS114 execution policy", {".dsh/project/EXECUTION_POLICY.json": pretty({"schema_version": "x", "mode": "ask"})},
     [("WS114", ".dsh/project/EXECUTION_POLICY.json", ""), ("WS114", ".dsh/project/EXECUTION_POLICY.json", "/schema_version")]),
    ("WS114 source index", {".dsh/project/SOURCE_INDEX.json": pretty({"schema_version": 3})},
     [("WS114", ".dsh/project/SOURCE_INDEX.json", "")]),
    ("WS115 headroom", {".dsh/project/RUNTIME_POLICY.json": pretty({"context_pressure": {"hard_headroom_tokens": 30000}})},
     [("WS115", ".dsh/project/RUNTIME_POLICY.json", "/context_pressure/hard_headroom_tokens")]),
    ("WS115 reserves", {".dsh/project/RUNTIME_POLICY.json": pretty({"context_pressure": {"context_window": 20000}})},
     [("WS115", ".dsh/project/RUNTIME_POLICY.json", "/context_pressure")]),
    ("WS116 stale constraints", {WS: GOOD_STATE, "x.projection.json": pretty(projection_of(GOOD_VALUE, constraints=[]))},
     [("WS116", "x.projection.json", "/constraints")]),
    ("WS116 capture with another task", {WS: GOOD_STATE, "cap-injection.raw.txt": CAPTURE.replace('"task_id": null', '"task_id": "T-1"')},
     [("WS116", "cap-injection.raw.txt", "/task_id")]),
    ("WS117 projection with checkpoint_meta",
     {WS: GOOD_STATE, "x.projection.json": pretty({**projection_of(GOOD_VALUE), "checkpoint_meta": {}})},
     [("WS117", "x.projection.json", "/checkpoint_meta")]),
    ("WS117 canonical with projection_meta", {WS: pretty(projection_of(GOOD_VALUE))}, [("WS117", WS, "/projection_meta")]),
    ("WS117 capture without a body", {"a-injection.raw.txt": "QWEN-V4 DURABLE INVESTIGATIVE WORKING STATE (host-injected):\nnothing\n"},
     [("WS117", "a-injection.raw.txt", None)]),
    ("WS118 no canonical state", {"x.projection.json": pretty(projection_of(GOOD_VALUE))},
     [("WS118", "x.projection.json", "/projection_meta/full_state_path")]),
    ("WS119 state that is a symlink to an older copy",
     {"backup/ws.json": GOOD_STATE, WS: Symlink("../../backup/ws.json")}, [("WS119", WS, None)]),
    ("WS119 a project file that is a symlink",
     {WS: GOOD_STATE, ".dsh/project/state.json": Symlink("WORKING_STATE.json")},
     [("WS119", ".dsh/project/state.json", None)]),
]  # fmt: skip

GOOD_CASES: list[tuple[str, dict[str, bytes | str]]] = [
    ("investigative checkpoint", {WS: GOOD_STATE}),
    ("compaction checkpoint", {WS: encode(base("compaction-evacuation"))}),
    ("prune boundary at the protocol boundary", {WS: edit("compaction-evacuation", prune_safe_through_seq=120)}),
    ("empty state", {WS: pretty(EMPTY)}),
    ("active task keeps raw failed hypotheses", {WS: encode({**base(), "task_id": "TASK-20260825062445-C7A9",
                                                        "failed_hypotheses": ["x", "x", " y"]})}),
    ("extra top-level key kept by the migration", {WS: encode({**base(), "legacy_note": "kept"})}),
    ("inner spaces and Python-only whitespace", {WS: with_field("known", ["a  b", "x\x1c"])}),
    ("a copied sample outside .dsh", {"samples/WORKING_STATE.json": GOOD_STATE}),
    ("project files", {WS: GOOD_STATE, **PROJECT_FILES}),
    ("a rendered projection", {WS: GOOD_STATE, "x.projection.json": pretty(dsh.project(GOOD_VALUE))}),
    ("an injection capture with UI labels and CRLF", {WS: GOOD_STATE, "cap-injection.raw.txt": CAPTURE}),
    ("a projection finds the state of its own project",
     {"p/" + WS: GOOD_STATE, "p/notes/x.projection.json": pretty(dsh.project(GOOD_VALUE))}),
    ("a symlink beside the state that is none of DSH's",
     {WS: GOOD_STATE, "notes/ws.md": Symlink("../.dsh/project/WORKING_STATE.json")}),
    ("not ours", {".dsh/project/SOURCE_INTAKE.md": "# intake\n", ".dsh/project/source_material/spec.json": "{",
                  "notes.txt": "x"}),
    ("task packets, evidence and reviews as DSH writes them",
     {".dsh/project/task_packets/T1.json": pretty({"id": "T1", "state": "READY"}),
      ".dsh/project/task_packets/state.json": pretty({"id": "state"}),
      ".dsh/project/evidence/T1.deterministic-tests.json": pretty({"schema_version": 2, "runs": []}),
      ".dsh/project/reviews/T1/R1.json": pretty({"verdict": "pass"})}),
]  # fmt: skip


# --- versions of the state, for the history tests ------------------------------------------------

CA2 = "CA-7a1e9c2d-3b4f-4d6a-8e0f-1c2b3d4e5f60"
CP2 = "CP-9d8c7b6a-5f4e-4d3c-8b2a-190807060504"


def version(kind: str = "investigative-state", content: str | None = None, **meta: Any) -> bytes:
    value = base(kind)
    if content is not None:
        value["known"] = [*value["known"], content]
    value["checkpoint_meta"].update(meta)
    return encode(value).encode("utf-8")


COMPACTED = version("compaction-evacuation")  # prune 100, audit CA


def line_of(data: bytes, needle: str) -> int:
    return data.decode("utf-8").split("\n").index(next(
        line for line in data.decode("utf-8").split("\n") if needle in line)) + 1  # fmt: skip
