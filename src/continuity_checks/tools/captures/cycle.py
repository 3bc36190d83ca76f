"""``continuity capture diff`` and ``capture apply``: the cycle delta from a base to the current
document, in the configured vocabulary, and the document restored from them byte for byte;
``-o`` never rewrites a published capture file."""

from __future__ import annotations

import os
from typing import Any

from continuity_checks.checks.captures import cycle_delta, layout, model
from continuity_checks.core import hashing, pretty_json, schemas
from continuity_checks.core.confined_files import ConfinedFiles
from continuity_checks.tools.captures.results import (
    Raw,
    Result,
    confined,
    load_json,
    parse_json,
    refuse,
    refuse_output,
)


def diff(
    base: str,
    current: str,
    out: str | None = None,
    settings: layout.Settings = layout.Settings(),  # noqa: B008 (frozen: shared safely)
) -> Result:
    """The cycle delta from ``base`` to ``current``, in the configured vocabulary."""
    mode = "capture-diff"
    refuse_output(out, settings)
    try:
        base_data = confined(base, settings).read(base)
        base_value, base_sha = parse_json(base, base_data), hashing.sha256_hex(base_data)
        current_value = load_json(current, settings)
    except (OSError, ValueError) as exc:
        return refuse(mode, "INPUT_INVALID", f"expected two strict JSON files: {exc}")
    if out is not None and os.path.basename(out) == layout.CYCLE_DELTA:
        # check holds a cycle-delta.json against the cycle-base.json beside it (CX103)
        beside = os.path.join(os.path.dirname(out), layout.CYCLE_BASE)
        try:
            found = confined(beside, settings).sha256(beside).hex
        except OSError:
            found = None
        if found != base_sha:
            return refuse(
                mode,
                "BASE_NOT_BESIDE",
                f"expected BASE to be the {beside} that check holds {out} against, found "
                f"{base} ({'none there' if found is None else 'other bytes'}); nothing was "
                "written",
            )
    operations = cycle_delta.diff(base_value, current_value, settings.delta_ops)
    delta: dict[str, Any] = {
        "schema_version": model.SCHEMA_VERSION,
        "base_sha256": base_sha,
        "target_sha256": model.canonical_sha256(current_value),
        "operations": operations,
    }
    text = pretty_json.dumps(delta).encode("utf-8")
    if out is None:
        return 0, delta
    unwritten = _write_out(confined(out, settings), out, text)
    if unwritten is not None:
        return refuse(mode, *unwritten)
    return 0, {"ok": True, "mode": mode, "output": out, "base_sha256": base_sha,
               "target_sha256": delta["target_sha256"], "operations": len(operations),
               "bytes": len(text)}  # fmt: skip


def apply(
    base: str,
    delta_file: str,
    out: str | None = None,
    settings: layout.Settings = layout.Settings(),  # noqa: B008 (frozen: shared safely)
) -> Raw:
    """Restore the current document from ``base`` and a cycle delta; refuse (writing nothing)
    when the base or the restored document does not have the digest the delta names."""
    mode = "capture-apply"
    refuse_output(out, settings)
    try:
        base_data = confined(base, settings).read(base)
        base_value, base_sha = parse_json(base, base_data), hashing.sha256_hex(base_data)
        delta = load_json(delta_file, settings)
    except (OSError, ValueError) as exc:
        return refuse(mode, "INPUT_INVALID", f"expected two strict JSON files: {exc}")
    schema = "loopx-cycle-delta" if settings.delta_ops == "loopx" else "loopx-cycle-delta-rfc6902"
    if not schemas.validator(schema).is_valid(delta):
        return refuse(
            mode,
            "DELTA_INVALID",
            f"{delta_file} is not a cycle delta (delta-ops = {settings.delta_ops!r})",
        )
    if not hashing.same_digest(delta["base_sha256"], base_sha):
        return refuse(
            mode,
            "BASE_MISMATCH",
            f"expected a base hashing to {delta['base_sha256']}, found {base_sha}",
        )
    try:
        restored = cycle_delta.apply_delta(base_value, delta["operations"], settings.delta_ops)
    except cycle_delta.DeltaError as exc:
        return refuse(
            mode, "OPERATION_INVALID", f"operation {exc.index}: {exc}", pointer=exc.pointer
        )
    data = model.canonical_bytes(restored)
    target = hashing.sha256_hex(data)
    if not hashing.same_digest(delta["target_sha256"], target):
        return refuse(
            mode,
            "TARGET_MISMATCH",
            f"expected the restored document to hash to {delta['target_sha256']}, found {target}",
        )
    if out is None:
        return 0, data  # the restored document itself, byte for byte
    unwritten = _write_out(confined(out, settings), out, data)
    if unwritten is not None:
        return refuse(mode, *unwritten)
    return 0, {"ok": True, "mode": mode, "output": out, "target_sha256": target, "bytes": len(data)}


#: Files a capture directory's cycle may replace (as captures/history.py lets it)
_MOVING = frozenset({layout.CYCLE_BASE, layout.CYCLE_DELTA, layout.REQUIRED})
#: The other files of a decision directory that check reads (all of them never change there)
_DECISION_FILES = frozenset({layout.CAPTURE, layout.PROJECTION, layout.DELIVERY, layout.MANIFEST})


def _published(files: ConfinedFiles, out: str, data: bytes) -> bool:
    """Whether writing ``data`` to ``out`` would rewrite a published capture file: anything in
    a decision directory, a reader reference, or a file beside a manifest other than the
    cycle's own (``continuity verify`` reports that rewrite, CX201)."""
    try:
        if files.read(out) == data:
            return False  # the same bytes: nothing is rewritten
    except OSError:
        return False  # absent (or unreadable: the write says why)
    directory, name = os.path.split(os.path.abspath(out))
    if name.endswith(".reader.json"):
        return True
    if layout.is_decision_dir(directory):
        return name in _MOVING or name in _DECISION_FILES
    return name not in _MOVING and os.path.exists(os.path.join(directory, layout.MANIFEST))


def _write_out(files: ConfinedFiles, out: str, data: bytes) -> tuple[str, str] | None:
    """Write ``-o OUT`` atomically; else the error code and why (a refusal in JSON, as every
    other)."""
    if _published(files, out, data):
        return "OUTPUT_PUBLISHED", (
            f"{out} is part of a published capture, which is never rewritten (continuity "
            "verify reports it, CX201): write the new observation to a new directory; nothing "
            "was written"
        )
    try:
        files.write(out, data)
    except OSError as exc:
        return (
            "OUTPUT_UNWRITABLE",
            f"cannot write {out}: {exc.strerror or exc}; nothing was written",
        )
    return None
