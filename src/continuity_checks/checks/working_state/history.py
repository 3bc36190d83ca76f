"""History checks for DSH working state (``continuity verify``): one commit at a time, the old
and the new version of each WORKING_STATE it changed.

- The prune boundary (WS201, WS202): ``prune_safe_through_seq`` never decreases, and it moves
  only in a ``compaction-evacuation`` version that carries a new ``prune_audit_id``.
- Versions (WS203): ``schema_version`` never decreases.
- Checkpoints (WS204): content whose recomputed ``state_hash`` changed comes with a new
  ``checkpoint_id``.
- Runtime files (WS205): no commit adds or changes ``.dsh/runtime/`` or a ``tx-*`` journal.
- Symlinks (WS206, judged by the family for every commit): a state file or a DSH directory
  committed as a symlink; such a version is no state to compare, so the rules above skip it.

The old version is the last good one (``change.old()``: the engine's, past a broken version or
a deletion, so a re-added file is a modification). A version that is not a strict JSON object is
file mode's finding, at the commit that made it. Positions are computed only for a finding,
from the new version.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, NamedTuple

from continuity_checks.checks.working_state import files
from continuity_checks.checks.working_state import rules as ws
from continuity_checks.checks.working_state import state as dsh
from continuity_checks.checks.working_state.settings import RUNTIME_KINDS
from continuity_checks.core import strict_json
from continuity_checks.core.display import show
from continuity_checks.core.family import Change, CommitContext
from continuity_checks.core.findings import Finding
from continuity_checks.core.rules import Rule

BOUNDARY = "/checkpoint_meta/prune_safe_through_seq"


class HistoryOptions(NamedTuple):
    """The options the history checks read, built once by the family from its configuration."""

    #: ``limits.max-depth``, for parsing each version of a state
    max_depth: int


def check_commit(
    context: CommitContext, options: HistoryOptions, linked: Collection[str] = ()
) -> list[Finding]:
    """The findings of one commit; ``linked`` are the paths it left as symlinks (WS206)."""
    sha = context.commit.sha
    findings: list[Finding] = []
    runtime = [c.path for c in context.changes if c.kind in RUNTIME_KINDS and c.status != "D"]
    if runtime:
        findings.extend(files.runtime_findings(runtime, sha))
    for change in context.changes:
        if change.kind == "state" and change.status == "M" and change.path not in linked:
            findings.extend(_state(change, sha, options.max_depth))
    return findings


class _Version:
    """What history needs of one WORKING_STATE version."""

    def __init__(self, data: bytes, max_depth: int) -> None:
        self.data = data
        accepted = strict_json.accepts(data, max_depth, lone_surrogates=True)
        value = accepted[1] if accepted is not None else None
        self.value: dict[str, Any] | None = value if isinstance(value, dict) else None
        meta = self.value.get("checkpoint_meta") if self.value is not None else None
        self.meta: dict[str, Any] = meta if isinstance(meta, dict) else {}

    def content_hash(self) -> str | None:
        if self.value is None or not all(k in self.value for k in dsh.HASH_FIELDS):
            return None
        try:
            return dsh.state_hash(self.value)
        except (ValueError, TypeError):
            return None


_int = files.whole_number  # 100.0 is the integer 100 to DSH


def _state(change: Change, sha: str, max_depth: int) -> list[Finding]:
    old_data, new_data = change.old(), change.new()
    if old_data is None or new_data is None:
        return []  # over the size limit: the engine reports it
    old, new = _Version(old_data, max_depth), _Version(new_data, max_depth)
    if old.value is None or new.value is None:
        return []
    findings: list[Finding] = []
    doc: list[strict_json.Document] = []

    def at(rule: Rule, pointer: str, message: str) -> None:
        if not doc:
            loaded = strict_json.load(new_data, max_depth=max_depth, lone_surrogates=True)
            assert isinstance(loaded, strict_json.Document)  # accepts() took it
            doc.append(loaded)
        line, column = doc[0].position(pointer)
        findings.append(
            rule.finding(
                change.path, message, line=line, column=column, pointer=pointer, commit=sha
            )
        )

    old_prune = _int(old.meta.get("prune_safe_through_seq"))
    new_prune_raw = new.meta.get("prune_safe_through_seq")
    new_prune = _int(new_prune_raw)
    if old_prune is not None and (new_prune is None or new_prune < old_prune):
        at(
            ws.BOUNDARY_DECREASED,
            BOUNDARY,
            f"expected prune_safe_through_seq {old_prune} or more (its last good version's), found "
            f"{show(new_prune_raw)}",
        )
    elif new_prune is not None and new_prune != old_prune:
        kind = new.meta.get("checkpoint_kind")
        audit = new.meta.get("prune_audit_id")
        if kind != "compaction-evacuation":
            at(
                ws.BOUNDARY_WITHOUT_AUDIT,
                BOUNDARY,
                f"expected prune_safe_through_seq to move ({show(old_prune)} to {new_prune}) "
                f"only in a compaction-evacuation checkpoint, found checkpoint_kind {show(kind)}",
            )
        elif not isinstance(audit, str) or audit == old.meta.get("prune_audit_id"):
            found = "none" if not isinstance(audit, str) else f"the parent's {audit}"
            at(
                ws.BOUNDARY_WITHOUT_AUDIT,
                BOUNDARY,
                f"expected prune_safe_through_seq to move ({show(old_prune)} to {new_prune}) "
                f"with a new prune_audit_id, found {found}",
            )
    old_version, new_version = (
        _int(old.value.get("schema_version")),
        _int(new.value.get("schema_version")),
    )
    if old_version is not None and new_version is not None and new_version < old_version:
        at(
            ws.SCHEMA_VERSION_DECREASED,
            "/schema_version",
            f"expected schema_version {old_version} or more (its last good version's), "
            f"found {new_version}",
        )
    checkpoint = new.meta.get("checkpoint_id")
    if isinstance(checkpoint, str) and checkpoint == old.meta.get("checkpoint_id"):
        old_hash, new_hash = old.content_hash(), new.content_hash()
        if old_hash is not None and new_hash is not None and old_hash != new_hash:
            at(
                ws.SAME_CHECKPOINT,
                "/checkpoint_meta/checkpoint_id",
                f"expected a new checkpoint_id for changed content (state_hash {old_hash[:12]}… "
                f"to {new_hash[:12]}…), found the parent's {checkpoint}",
            )
    return findings
