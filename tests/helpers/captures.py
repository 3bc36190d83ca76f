"""A valid captures layout built from its parts, digests computed as the formats say: a capture
directory (capture, manifest, reader reference) and a decision directory with a delta delivery.
Tests change one part after the digests were taken, as a rewrite in place would."""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

from continuity_checks.checks.captures import cycle_delta, model

CAP = "caps/c1/"
DEC = "caps/decision-k3j2x9q0/"


def pretty(value: object) -> str:
    """A capture as LoopX writes decision.json: 2-space indent, non-ASCII as is, one newline."""
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def sha(text: str | bytes) -> str:
    return hashlib.sha256(text.encode("utf-8") if isinstance(text, str) else text).hexdigest()


TODO = {
    "todo_id": "todo_voice",
    "title": "转写语音",
    "owner": "agent-7",
    "constraints": ["keep order"],
}


def outcome() -> dict[str, Any]:
    requirements = [
        {"id": "r0", "description": "转写结果回到原对话，保留消息来源、顺序及原始音频引用。"},
        {"id": "r1", "description": "Voice notes longer than 60 s are split."},
    ]
    basis = model.basis_digest({"objective": "Voice replies", "requirements": requirements})
    return {
        "id": "voice",
        "objective": "Voice replies",
        "requirements": [
            {
                **requirements[0],
                "status": "unverified",
                "planning_satisfied": False,
                "agent_review": {
                    "conclusion": "unmet",
                    "basis_current": False,
                    "independently_verified": False,
                    "evidence_refs": [],
                    "note": "the source link is lost",
                },
            },
            {
                **requirements[1],
                "status": "accepted",
                "planning_satisfied": True,
                "agent_review": {
                    "conclusion": "met",
                    "basis_current": True,
                    "basis_digest": basis,
                    "independently_verified": False,
                    "evidence_refs": ["tests/test_split.py::test_61s"],
                    "note": "split at 60 s",
                },
            },
        ],
        "review": {
            "basis_digest": basis,
            "items": [
                {"id": "r0", "conclusion": "unmet", "evidence_refs": [], "note": "lost link"},
                {"id": "r1", "conclusion": "met", "evidence_refs": ["t.py::a"], "note": "ok"},
            ],
        },
    }


def capture_value() -> dict[str, Any]:
    return {
        "goal_id": "g-1",
        "history": [{"turn": i, "text": f"turn {i}", "null": None} for i in range(6)],
        "outcomes": [outcome()],
        "todos": [copy.deepcopy(TODO), {"todo_id": "todo_other", "title": "x"}],
    }


def required_value() -> dict[str, Any]:
    return {
        "complete": True,
        "agent_todo_summary": {"first_open_items": [copy.deepcopy(TODO)]},
        "user_todos": {"open": [{"todo_id": "todo_voice", "context_ref": "/agent_todo_summary/first_open_items/0"}]},
        "requirements": [
            {
                "description": "转写结果回到原对话，保留消息来源、顺序及原始音频引用。",
                "status": "unverified",
                "agent_review": {"conclusion": "unmet", "basis_current": False, "independently_verified": False},
                "supporting_material_pointer": "/outcomes/0/requirements/0/agent_review/note",
            }
        ],
    }  # fmt: skip


def reader(capture_text: str, select: list[str], **extra: Any) -> dict[str, Any]:
    digest = sha(capture_text)
    record: dict[str, Any] = {
        "schema_version": 1,
        "capture_file": "capture.json",
        "capture_sha256": "sha256:" + digest,
        "select": select,
        "selection_sha256": model.selection_h1(digest, select, None),
    }
    record["command"] = (
        f"continuity capture read --capture-file capture.json --capture-sha256 {digest} "
        + " ".join(f"--select {p}" for p in select)
    )
    record.update(extra)
    return record


def build(
    capture: dict[str, Any] | None = None,
    projection: dict[str, Any] | None = None,
    base: dict[str, Any] | None = None,
    required: dict[str, Any] | None = None,
) -> dict[str, str]:
    """Every file of the valid layout, as text."""
    capture_text = pretty(capture if capture is not None else capture_value())
    projection_value = projection if projection is not None else capture_value()
    projection_text = pretty(projection_value)
    base_value = base if base is not None else _older(projection_value)
    base_text = pretty(base_value)
    delta_text = pretty(
        {
            "schema_version": 1,
            "base_sha256": sha(base_text),
            "target_sha256": model.canonical_sha256(projection_value),
            "operations": cycle_delta.diff(base_value, projection_value),
        }
    )
    required_text = pretty(required if required is not None else required_value())
    files = {
        CAP + "capture.json": capture_text,
        CAP + "manifest.json": pretty(
            {
                "schema_version": 1,
                "capture_file": "capture.json",
                "capture_sha256": sha(capture_text),
                "capture_bytes": len(capture_text.encode()),
                "created_at": "2026-11-29T10:00:00Z",
                "goal_id": "g-1",
            }
        ),
        CAP + "first.reader.json": pretty(reader(capture_text, ["/outcomes/0/requirements/0", "/history/2/null"])),
        DEC + "projection.json": projection_text,
        DEC + "required-context.json": required_text,
        DEC + "cycle-base.json": base_text,
        DEC + "cycle-delta.json": delta_text,
        DEC + "manifest.json": pretty(
            {
                "schema_version": 1,
                "capture_file": "projection.json",
                "capture_sha256": "sha256:" + sha(projection_text),
                "capture_bytes": len(projection_text.encode()),
                "files": {"required-context.json": {"sha256": sha(required_text), "bytes": len(required_text.encode())}},
            }
        ),
        DEC + "delivery.json": pretty(
            {
                "schema_version": 1,
                "mode": "delta",
                "projection_sha256": sha(projection_text),
                "required_context_sha256": sha(required_text),
                "base": {"file": "cycle-base.json", "sha256": sha(base_text)},
                "delta": {"file": "cycle-delta.json", "sha256": sha(delta_text)},
            }
        ),
    }  # fmt: skip
    return files


def _older(value: dict[str, Any]) -> dict[str, Any]:
    """The previous turn's source: two fewer history entries, the todos in the other order."""
    older = copy.deepcopy(value)
    older["history"] = older["history"][:-2]
    older["todos"].reverse()
    older["goal_id"] = "g-0"
    return older


def edit(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)
