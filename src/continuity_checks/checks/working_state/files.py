"""File checks for DSH working state (``continuity check``): WORKING_STATE.json, the other
``.dsh/project`` JSON files, runtime files, and captured projections."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from continuity_checks.checks.working_state import rules as ws
from continuity_checks.checks.working_state import state as dsh
from continuity_checks.checks.working_state.settings import RUNTIME_KINDS, Settings
from continuity_checks.core import pointer as jp
from continuity_checks.core import schemas, strict_json
from continuity_checks.core.display import json_type, quote, show
from continuity_checks.core.family import FileInput
from continuity_checks.core.findings import Finding
from continuity_checks.core.rules import Rule
from continuity_checks.core.snapshot import Snapshot, Unreadable
from continuity_checks.core.strict_json import located

STATE_SCHEMA = "dsh-working-state"
#: the .dsh/project files whose shape the spec gives, by file name
PROJECT_SCHEMAS = {
    "state.json": "dsh-project-state",
    "RUNTIME_POLICY.json": "dsh-runtime-policy",
    "EXECUTION_POLICY.json": "dsh-execution-policy",
    "ACTIVE_REQUIREMENTS.json": "dsh-active-requirements",
    "SOURCE_INDEX.json": "dsh-source-index",
}
#: DSH's compiled context_pressure defaults, applied before its cross-field constraints
CONTEXT_DEFAULTS = {
    "context_window": 131072,
    "completion_reserve_tokens": 16384,
    "compression_recovery_reserve_tokens": 8192,
    "safety_margin_tokens": 4096,
    "soft_headroom_tokens": 24576,
    "hard_headroom_tokens": 4096,
}
_HEX64 = re.compile("[0-9a-f]{64}")
_ISO_TIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z")

#: how the parts of a state check report: a finding of ``rule`` at a pointer, with a message
Report = Callable[[Rule, str, str], None]
COMPRESS_REFUSAL_CHARS = 80000


def check_file(file: FileInput, settings: Settings) -> list[Finding]:
    if file.kind in RUNTIME_KINDS:
        return []  # reported once per runtime directory or journal, by check_tree
    if file.kind == "projection":
        return check_projection(file, settings)
    linked = _linked(file)
    if linked is not None:
        return [linked]
    doc = strict_json.load(file.data, max_depth=settings.max_depth, lone_surrogates=True)
    if isinstance(doc, strict_json.Problem):
        return [doc.finding(file.path)]
    cut = cut_characters(doc, file.path)
    if file.kind == "state":
        return cut + check_state(doc, file.path, file.data, settings)
    return cut + check_project_file(doc, file.path, file.data)


def cut_characters(doc: strict_json.Document, path: str) -> list[Finding]:
    """WS120 at the first string of ``doc`` holding an unpaired surrogate (one per file: the
    same cut usually repeats across the state's lists)."""
    if "\\u" not in doc.text:  # an unpaired surrogate can only come from an escape
        return []
    pointer = strict_json.lone_surrogate(doc.value)
    if pointer is None:
        return []
    return [
        located(
            ws.LONE_SURROGATE,
            doc,
            path,
            pointer,
            "expected Unicode text, found an unpaired UTF-16 surrogate (half of a character, as "
            "JSON.stringify writes a string cut inside an emoji); DSH reads and hashes it as "
            "written",
        )
    ]


def _linked(file: FileInput) -> Finding | None:
    """WS119 when the state file at ``file.path`` is really another path (a symlink, or a
    symlinked directory on the way): the one finding for it, in place of its content's. A
    symlink that cannot be followed never gets here (its read is the engine's CC001), nor does
    a path that is not on disk (bytes given on standard input) count as one."""
    real = file.snapshot.resolve(file.path)
    if not isinstance(real, str) or real == file.path:
        return None
    return ws.STATE_LINKED.finding(
        file.path, f"expected a regular file, found a symlink to {quote(real)}"
    )


def runtime_root(path: str) -> str:
    """The directory a runtime file belongs to, for reporting once: its ``tx-*`` journal, else
    its ``.dsh/runtime`` directory."""
    parts = path.split("/")
    for index in range(len(parts) - 1):
        if parts[index] == "transactions" and parts[index + 1].startswith("tx-"):
            return "/".join(parts[: index + 2])
    at = parts.index(".dsh")
    return "/".join(parts[: at + 2])


def runtime_findings(paths: list[str], commit: str | None = None) -> list[Finding]:
    """One WS113 (file mode) or WS205 (a commit) per runtime directory or journal, at its first
    file, with the number of files."""
    groups: dict[str, list[str]] = {}
    for path in sorted(paths):
        groups.setdefault(runtime_root(path), []).append(path)
    rule = ws.RUNTIME_COMMITTED if commit is None else ws.RUNTIME_ADDED
    where = "in the repository" if commit is None else "in a commit"
    findings = []
    for root, members in groups.items():
        what = "transaction journal" if "/tx-" in "/" + root else "runtime directory"
        more = f" ({len(members)} files)" if len(members) > 1 else ""
        findings.append(
            rule.finding(
                members[0],
                f"expected no .dsh runtime state {where}, found the {what} {root}/{more}",
                commit=commit,
            )
        )
    return findings


# --- WORKING_STATE.json -------------------------------------------------------------------------


def check_state(
    doc: strict_json.Document, path: str, data: bytes, settings: Settings
) -> list[Finding]:
    value = doc.value
    findings: list[Finding] = []

    def at(rule: Rule, pointer: str, message: str) -> None:
        findings.append(located(rule, doc, path, pointer, message))

    if not isinstance(value, dict):
        at(ws.NOT_STATE, "", f"expected a WORKING_STATE object, found {json_type(value)}")
        return findings
    if "projection_meta" in value:
        at(
            ws.PROJECTION_SHAPE,
            "/projection_meta",
            "expected the canonical state (no projection_meta), found a bounded projection",
        )
        return findings
    if "schema_version" in value and value["schema_version"] != dsh.SCHEMA_VERSION:
        at(
            ws.BAD_SCHEMA_VERSION,
            "/schema_version",
            f"expected schema_version 7, found {show(value['schema_version'])}",
        )
        return findings
    schema_clean = _schema_findings(value, at)
    meta = value.get("checkpoint_meta")
    _item_findings(value, at)
    if isinstance(meta, dict):
        _meta_findings(value, meta, at)
    findings.extend(_boundary_warnings(doc, path, meta))
    text = dsh.pretty(value)  # what DSH would write: measured for WS111, compared for WS112
    size = dsh.js_length(text)
    if size >= settings.compress_warn_chars:
        at(
            ws.NEAR_COMPRESS_BUDGET,
            "",
            f"expected the 2-space JSON of WORKING_STATE well below {COMPRESS_REFUSAL_CHARS} "
            f"characters (with the canonical project state, /compress refuses beyond that), "
            f"found {size}",
        )
    if schema_clean and not findings and data != (text + "\n").encode("utf-8"):
        findings.append(
            ws.NOT_WRITER_FORMAT.finding(
                path,
                "expected JSON.stringify(state, null, 2) and a final newline, found other "
                "formatting",
                line=1,
                column=1,
            )
        )
    return findings


def _schema_findings(value: dict[str, Any], at: Report) -> bool:
    """Schema errors of a state, each under its rule; True when there were none."""
    validator = schemas.validator(STATE_SCHEMA)
    if validator.is_valid(value):
        return True
    missing = [k for k in dsh.TOP_LEVEL_KEYS if k not in value]
    if missing:
        at(
            ws.NOT_STATE,
            "",
            f"expected the keys {', '.join(dsh.TOP_LEVEL_KEYS)}; missing {', '.join(missing)}",
        )
    seen: set[str] = set()
    for error in validator.errors(value):
        parts = jp.tokens(error.pointer)
        if not parts or error.pointer in seen:
            continue  # the object itself: its missing keys are reported above
        seen.add(error.pointer)
        found = jp.value_or_none(value, error.pointer)
        if parts[0] == "checkpoint_meta" and len(parts) > 1:
            key = parts[1]
            if error.keyword == "required":
                continue
            at(ws.BAD_META, error.pointer, f"{key}: {_expected_meta(key)}; found {show(found)}")
        elif parts[0] == "checkpoint_meta":
            if error.keyword == "required":
                required = schemas.load(STATE_SCHEMA)["$defs"]["checkpoint_meta"]["required"]
                absent = [k for k in required if isinstance(found, dict) and k not in found]
                at(
                    ws.BAD_META,
                    error.pointer,
                    f"expected every checkpoint_meta key; missing {', '.join(absent)}",
                )
            else:
                at(
                    ws.BAD_FIELD,
                    error.pointer,
                    f"expected checkpoint_meta an object, found {show(found)}",
                )
        elif parts[0] == "task_id":
            at(
                ws.BAD_FIELD,
                error.pointer,
                f"expected task_id a string or null, found {show(found)}",
            )
        elif parts[0] in dsh.SEMANTIC_FIELDS:
            what = "an array of strings" if len(parts) == 1 else "a string item"
            at(ws.BAD_FIELD, error.pointer, f"expected {parts[0]} {what}, found {show(found)}")
    return False


_META_EXPECTED = {
    "mode": 'one of "init", "merge", "replace"',
    "checkpoint_kind": 'null, "investigative-state" or "compaction-evacuation"',
    "checkpoint_id": "CP-<uuid> (lowercase) or null",
    "prune_audit_id": "CA-<uuid> (lowercase)",
    "updated_at": "a real UTC time with milliseconds such as 2026-08-26T13:43:42.731Z, or null",
    "prune_audited_at": "a real UTC time with milliseconds such as 2026-08-26T13:43:42.731Z",
    "state_hash": "64 lowercase hex digits or null",
    "covered_evidence_ids": "an array of distinct strings",
}


def _expected_meta(key: str) -> str:
    return "expected " + _META_EXPECTED.get(key, "an integer >= 0 or null")


def _item_findings(value: dict[str, Any], at: Report) -> None:
    task = value.get("task_id")
    for name in dsh.SEMANTIC_FIELDS:
        items = value.get(name)
        if not isinstance(items, list):
            continue
        if name == "failed_hypotheses" and isinstance(task, str) and task:
            continue  # copied raw from the active task: DSH neither trims nor deduplicates it
        first: dict[str, int] = {}
        for index, item in enumerate(items):
            if not isinstance(item, str):
                continue  # WS103
            if not dsh.is_trimmed(item):
                found = "an empty string" if not item else f"{quote(item)}"
                at(
                    ws.PADDED_ITEM,
                    jp.join((name, index)),
                    f"expected a trimmed, non-empty item, found {found}",
                )
            elif item in first:
                at(
                    ws.DUPLICATE_ITEM,
                    jp.join((name, index)),
                    f"expected unique items, found a copy of {name}[{first[item]}] {quote(item)}",
                )
            else:
                first[item] = index


def _meta_findings(value: dict[str, Any], meta: dict[str, Any], at: Report) -> None:
    kind = meta.get("checkpoint_kind")
    audit_keys = [k for k in ("prune_audit_id", "prune_audited_at") if k in meta]
    if kind == "investigative-state" and audit_keys:
        at(
            ws.KIND_KEYS,
            jp.join(("checkpoint_meta", audit_keys[0])),
            f"expected no prune audit keys on an investigative-state checkpoint, found "
            f"{' and '.join(audit_keys)}",
        )
    if kind == "compaction-evacuation":
        absent = [k for k in ("prune_audit_id", "prune_audited_at") if k not in meta]
        if absent:
            at(
                ws.KIND_KEYS,
                "/checkpoint_meta",
                f"expected prune_audit_id and prune_audited_at on a compaction-evacuation "
                f"checkpoint, found no {' and no '.join(absent)}",
            )
        # the /compress authorization rebuilds the metadata as a merge covering no evidence
        if meta.get("mode") == "replace":
            at(
                ws.KIND_KEYS,
                "/checkpoint_meta/mode",
                'expected mode "merge" on a compaction-evacuation checkpoint (/compress writes '
                'it so), found "replace"',
            )
        covered = meta.get("covered_evidence_ids")
        if isinstance(covered, list) and covered:
            at(
                ws.KIND_KEYS,
                "/checkpoint_meta/covered_evidence_ids",
                f"expected no covered_evidence_ids on a compaction-evacuation checkpoint "
                f"(/compress writes []), found {len(covered)}",
            )
        audited, updated = meta.get("prune_audited_at"), meta.get("updated_at")
        # /compress writes both from one clock reading; a malformed one is WS106 alone
        if _is_time(audited) and _is_time(updated) and audited != updated:
            at(
                ws.KIND_KEYS,
                "/checkpoint_meta/prune_audited_at",
                f"expected prune_audited_at equal to updated_at {quote(updated)} on a "
                f"compaction-evacuation checkpoint (one /compress authorization writes both), "
                f"found {quote(audited)}",
            )
        boundary = meta.get("prune_safe_through_seq")
        number = _int(boundary)
        if number is None or number < 0:
            at(
                ws.KIND_KEYS,
                "/checkpoint_meta/prune_safe_through_seq",
                f"expected an integer prune_safe_through_seq >= 0 on a compaction-evacuation "
                f"checkpoint, found {show(boundary)}",
            )
    if kind is None and audit_keys:
        at(
            ws.KIND_KEYS,
            jp.join(("checkpoint_meta", audit_keys[0])),
            f"expected no prune audit keys without a checkpoint_kind, found "
            f"{' and '.join(audit_keys)}",
        )
    if kind in ("investigative-state", "compaction-evacuation"):
        unset = [k for k in ("checkpoint_id", "updated_at", "state_hash") if meta.get(k) is None]
        if unset:
            at(
                ws.KIND_KEYS,
                "/checkpoint_meta",
                f"expected checkpoint_id, updated_at and state_hash set on a {kind} checkpoint, "
                f"found {', '.join(unset)} null",
            )
    if meta.get("mode") == "init":
        filled = [
            k
            for k, v in meta.items()
            if k != "mode" and v is not None and v != [] and k in _INIT_KEYS
        ] + [k for k in ("prune_audit_id", "prune_audited_at") if k in meta]
        if filled:
            at(
                ws.INIT_NOT_EMPTY,
                jp.join(("checkpoint_meta", filled[0])),
                f"expected null or empty metadata with mode init, found {', '.join(filled)} set",
            )
    recorded = meta.get("state_hash")
    if (
        isinstance(recorded, str)
        and _HEX64.fullmatch(recorded)
        and all(name in value for name in dsh.HASH_FIELDS)
    ):  # a malformed hash is WS106 alone
        try:
            actual = dsh.state_hash(value)
        except (ValueError, TypeError):
            return  # a value JavaScript could not have written: reported by WS103
        if actual != recorded:
            at(
                ws.STATE_HASH,
                "/checkpoint_meta/state_hash",
                f"expected state_hash {actual} (recomputed from the content), found "
                f"{quote(recorded)}",
            )


_INIT_KEYS = frozenset(
    {
        "updated_at",
        "covered_evidence_ids",
        "checkpoint_id",
        "checkpoint_kind",
        "protocol_committed_through_seq",
        "prune_safe_through_seq",
        "session_revision",
        "source_revision",
        "state_hash",
    }
)


def _is_time(value: object) -> bool:
    """Whether ``value`` is a time as the schema allows it (toISOString() of a real date)."""
    if not isinstance(value, str) or not _ISO_TIME.fullmatch(value):
        return False
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def whole_number(value: object) -> int | None:
    """``value`` as the integer DSH reads it (``Number.isInteger``: 100.0 is 100), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float):
        return int(value) if value.is_integer() else None
    return value if isinstance(value, int) else None


_int = whole_number


def _boundary_warnings(doc: strict_json.Document, path: str, meta: object) -> list[Finding]:
    if not isinstance(meta, dict):
        return []
    prune = _int(meta.get("prune_safe_through_seq"))
    if prune is None:
        return []
    reasons = []
    for key in ("protocol_committed_through_seq", "session_revision"):
        other = _int(meta.get(key))
        if other is not None and prune > other:
            reasons.append(f"{key} {other}")
    if not reasons:
        return []
    return [
        located(
            ws.BOUNDARY_AHEAD,
            doc,
            path,
            "/checkpoint_meta/prune_safe_through_seq",
            f"expected prune_safe_through_seq at or below {' and '.join(reasons)}, found {prune} "
            f"(seqs are per session while the state is per project: a boundary from another chat "
            f"carries over)",
        )
    ]


# --- the other .dsh/project files ---------------------------------------------------------------


def check_project_file(doc: strict_json.Document, path: str, data: bytes) -> list[Finding]:
    findings: list[Finding] = []
    directory, _, name = path.rpartition("/")
    # the schemas are those of .dsh/project's own files, not of a task packet of that name
    schema = PROJECT_SCHEMAS.get(name) if directory.endswith(".dsh/project") else None
    value = doc.value
    if schema is not None:
        validator = schemas.validator(schema)
        if not validator.is_valid(value):
            seen: set[str] = set()
            for error in validator.errors(value):
                key = f"{error.pointer}\0{error.keyword}"
                if key in seen:
                    continue
                seen.add(key)
                findings.append(
                    located(
                        ws.PROJECT_FILE,
                        doc,
                        path,
                        error.pointer,
                        f"{name}{error.pointer or ''}: expected what {schema} allows; "
                        f"{error.message}",
                    )
                )
        elif name == "RUNTIME_POLICY.json":
            findings.extend(_policy_constraints(doc, path, value))
    if not findings and data != dsh.file_bytes(value):
        findings.append(
            ws.NOT_WRITER_FORMAT.finding(
                path,
                "expected JSON.stringify(value, null, 2) and a final newline, found other "
                "formatting",
                line=1,
                column=1,
            )
        )
    return findings


def _policy_constraints(doc: strict_json.Document, path: str, value: object) -> list[Finding]:
    raw = value.get("context_pressure") if isinstance(value, dict) else None
    given = raw if isinstance(raw, dict) else {}
    merged = {**CONTEXT_DEFAULTS, **{k: v for k, v in given.items() if k in CONTEXT_DEFAULTS}}
    findings = []
    if merged["hard_headroom_tokens"] >= merged["soft_headroom_tokens"]:
        pointer = "/context_pressure/hard_headroom_tokens"
        findings.append(
            located(
                ws.POLICY_CONSTRAINT,
                doc,
                path,
                pointer if "hard_headroom_tokens" in given else "/context_pressure",
                f"expected hard_headroom_tokens below soft_headroom_tokens "
                f"{merged['soft_headroom_tokens']}, found {merged['hard_headroom_tokens']}",
            )
        )
    reserves = (
        "completion_reserve_tokens",
        "compression_recovery_reserve_tokens",
        "safety_margin_tokens",
    )
    total = sum(merged[k] for k in reserves)
    if total >= merged["context_window"]:
        findings.append(
            located(
                ws.POLICY_CONSTRAINT,
                doc,
                path,
                "/context_pressure",
                f"expected the reserves ({' + '.join(reserves)}) below context_window "
                f"{merged['context_window']}, found {total}",
            )
        )
    return findings


# --- projections and injection captures ---------------------------------------------------------


def check_projection(file: FileInput, settings: Settings) -> list[Finding]:
    data = file.data
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        problem = strict_json.load(data)  # says where the bad byte is
        assert isinstance(problem, strict_json.Problem)
        return [problem.finding(file.path)]
    capture = dsh.capture_body(text.removeprefix("\ufeff"))
    if capture is None:
        return [
            ws.PROJECTION_SHAPE.finding(
                file.path,
                f"expected a projection, or an injection capture with the header "
                f"{quote(dsh.INVESTIGATIVE_HEADER)} followed by the projection JSON, found neither",
            )
        ]
    doc = strict_json.parse(
        capture.body,
        max_depth=settings.max_depth,
        first_line=capture.first_line,
        lone_surrogates=True,
    )
    if isinstance(doc, strict_json.Problem):
        return [doc.finding(file.path)]
    value = doc.value
    if not isinstance(value, dict) or not isinstance(value.get("projection_meta"), dict):
        return [
            located(
                ws.PROJECTION_SHAPE,
                doc,
                file.path,
                "",
                f"expected a projection with a projection_meta object, found "
                f"{json_type(value) if not isinstance(value, dict) else 'an object without it'}",
            )
        ]
    confused = [k for k in ("schema_version", "checkpoint_meta") if k in value]
    if confused:
        return [
            located(
                ws.PROJECTION_SHAPE,
                doc,
                file.path,
                jp.append("", confused[0]),
                f"expected a projection without {' or '.join(confused)}, found "
                f"{' and '.join(confused)} (canonical-state keys)",
            )
        ]
    return _compare_critical(file.path, file.snapshot, doc, value)


def canonical_for(snapshot: Snapshot, projection_path: str, full_state_path: str) -> str | None:
    """Where the projection's canonical state is: ``full_state_path`` (relative to the DSH
    project root) under the projection's directory or the nearest parent that has it."""
    directory = posixpath.dirname(projection_path)
    while True:
        candidate = posixpath.join(directory, full_state_path) if directory else full_state_path
        if snapshot.exists(candidate):
            return candidate
        if not directory:
            return None
        directory = posixpath.dirname(directory)


def _compare_critical(
    path: str, snapshot: Snapshot, doc: strict_json.Document, value: Mapping[str, Any]
) -> list[Finding]:
    meta = value["projection_meta"]
    full = meta.get("full_state_path", dsh.FULL_STATE_PATH)
    pointer = "/projection_meta/full_state_path"
    if not isinstance(full, str) or not full:
        return [
            located(ws.PROJECTION_SHAPE, doc, path, pointer, f"expected a path, found {show(full)}")
        ]
    canonical_path = canonical_for(snapshot, path, full)
    if canonical_path is None:
        return [
            located(
                ws.NO_CANONICAL,
                doc,
                path,
                pointer,
                f"expected the canonical state {quote(full)} beside the projection or in a parent "
                f"directory, found none; critical fields not compared",
            )
        ]
    data = snapshot.read(canonical_path)
    if isinstance(data, Unreadable):
        line, column = doc.position(pointer)
        return [data.finding(path, line=line, column=column, pointer=pointer)]
    accepted = strict_json.accepts(data, lone_surrogates=True)
    canonical = accepted[1] if accepted is not None else None
    if not isinstance(canonical, dict):
        return [
            located(
                ws.NO_CANONICAL,
                doc,
                path,
                pointer,
                f"expected {canonical_path} to hold a WORKING_STATE object, found none; critical "
                f"fields not compared",
            )
        ]
    findings = []
    for name in ("task_id", *dsh.CRITICAL_FIELDS):
        expected = canonical.get(name)
        if expected is None and name != "task_id":
            expected = []  # DSH copies `state.constraints ?? []`
        found = value.get(name)
        if found != expected:
            findings.append(
                located(
                    ws.CRITICAL_DIFFERS,
                    doc,
                    path,
                    jp.append("", name),
                    f"expected {name} equal to {canonical_path}{_difference(expected, found)}",
                )
            )
    return findings


def _difference(expected: object, found: object) -> str:
    if isinstance(expected, list) and isinstance(found, list):
        missing = [item for item in expected if item not in found]
        extra = [item for item in found if item not in expected]
        if missing:
            return f", found {len(found)} items without {quote(missing[0])}"
        if extra:
            return f", found the extra item {quote(extra[0])}"
        return f", found the same {len(found)} items in another order or count"
    return f" ({show(expected)}), found {show(found)}"
