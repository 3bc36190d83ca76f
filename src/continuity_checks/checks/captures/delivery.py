"""A decision's ``delivery.json`` and ``cycle-delta.json``: the files they pin, and the
projection restored exactly from a base and a cycle delta."""

from __future__ import annotations

from continuity_checks.checks.captures import cycle_delta, model
from continuity_checks.checks.captures import rules as cx
from continuity_checks.checks.captures.checker import Checker
from continuity_checks.checks.captures.layout import (
    CYCLE_BASE,
    CYCLE_DELTA,
    PROJECTION,
    REQUIRED,
    Settings,
)
from continuity_checks.core import pointer as jp
from continuity_checks.core.display import quote
from continuity_checks.core.findings import Finding
from continuity_checks.core.hashing import parse_digest
from continuity_checks.core.snapshot import Snapshot


def check_delivery(path: str, data: bytes, snapshot: Snapshot, settings: Settings) -> list[Finding]:
    c = Checker(path, snapshot, settings)
    if not c.load(data):
        return c.findings
    assert c.doc is not None
    value = c.doc.value
    c.schema("delivery")
    if not isinstance(value, dict):
        return c.findings
    for key, name in (("projection_sha256", PROJECTION), ("required_context_sha256", REQUIRED)):
        if key in value:
            _pinned_file(c, name, value[key], "/" + key)
    mode = value.get("mode")
    if mode == "full":
        for key in ("base", "delta"):
            if key in value:
                c.at(
                    cx.FULL_WITH_BASE, "/" + key, f"expected no {key} in a full delivery, found one"
                )
        return c.findings
    if mode != "delta":
        return c.findings
    named: dict[str, str] = {}
    for key, expected in (("base", CYCLE_BASE), ("delta", CYCLE_DELTA)):
        entry = value.get(key)
        if isinstance(entry, dict) and "file" in entry:
            name = entry["file"]
            if model.inside_name(name) is None and model.join(c.directory, name) != model.join(
                c.directory, expected
            ):
                # spec §5: the base is cycle-base.json, the delta cycle-delta.json. Under another
                # name the file has no check of its own (schema, operations) and no guard
                # against rewrites: refused rather than applied unchecked
                c.at(
                    cx.DELIVERY_SCHEMA,
                    f"/{key}/file",
                    f"expected {expected} beside the delivery, found {quote(name)}",
                )
                continue
            target = _pinned_file(
                c, entry["file"], entry.get("sha256"), f"/{key}/file", f"/{key}/sha256"
            )
            if target is not None:
                named[key] = target
    if len(named) == 2 and not c.findings:
        _check_restore(c, named["base"], named["delta"])
    return c.findings


def _pinned_file(
    c: Checker, name: object, digest: object, pointer: str, digest_pointer: str | None = None
) -> str | None:
    """The file ``name`` beside the delivery, checked against ``digest``; its path when the
    digest matches."""
    target = c.named(name, pointer)
    if target is None:
        return None
    found = c.file_digest(target, pointer)
    pinned = parse_digest(digest)
    if found is None or pinned is None:
        return None
    if pinned != found[0]:
        c.at(
            cx.DELIVERY_DIGEST,
            digest_pointer or pointer,
            f"expected the SHA-256 of {target}, {found[0]}; found {quote(digest)}",
        )
        return None
    return target


def _check_restore(c: Checker, base_path: str, delta_path: str) -> None:
    base = c.document(base_path, "/base/file", report=False)
    delta = c.document(delta_path, "/delta/file", report=False)
    projection = c.document(model.join(c.directory, PROJECTION), "/projection_sha256", report=False)
    if jp.MISSING in (base, delta, projection) or not isinstance(delta, dict):
        return  # reported by the files' own checks
    try:
        restored = cycle_delta.apply_delta(base, delta.get("operations", []), c.settings.delta_ops)
    except cycle_delta.DeltaError:
        return  # CX126 on the delta itself
    if model.canonical_bytes(restored) != model.canonical_bytes(projection):
        c.at(
            cx.DELTA_RESTORE,
            "/delta",
            f"expected {delta_path} applied to {base_path} to restore projection.json exactly "
            f"(canonical SHA-256 {model.canonical_sha256(projection)}), found "
            f"{model.canonical_sha256(restored)}",
        )


def check_cycle_delta(
    path: str, data: bytes, snapshot: Snapshot, settings: Settings
) -> list[Finding]:
    c = Checker(path, snapshot, settings)
    if not c.load(data):
        return c.findings
    assert c.doc is not None
    value = c.doc.value
    valid = c.schema("cycle-delta")
    if not isinstance(value, dict) or not valid:
        return c.findings
    base_path = model.join(c.directory, CYCLE_BASE)
    if not snapshot.exists(base_path):
        c.at(cx.NAMED_MISSING, "/base_sha256", f"expected the base {base_path} beside {path}")
        return c.findings
    if not c.stays(base_path, "/base_sha256"):
        return c.findings
    found = c.file_digest(base_path, "/base_sha256")
    if found is None:
        return c.findings
    if parse_digest(value["base_sha256"]) != found[0]:
        c.at(
            cx.BASE_DIGEST,
            "/base_sha256",
            f"expected the SHA-256 of {base_path}, {found[0]}; found {quote(value['base_sha256'])}",
        )
        return c.findings
    base = c.document(base_path, "/base_sha256", report=False)
    if base is jp.MISSING:
        return c.findings
    try:
        restored = cycle_delta.apply_delta(base, value["operations"], settings.delta_ops)
    except cycle_delta.DeltaError as exc:
        c.at(cx.BAD_OPERATION, exc.pointer, f"operation {exc.index}: {exc}")
        return c.findings
    actual = model.canonical_sha256(restored)
    if parse_digest(value["target_sha256"]) != actual:
        c.at(
            cx.DELTA_RESTORE,
            "/target_sha256",
            f"expected the canonical SHA-256 of the restored document, {actual}; found "
            f"{quote(value['target_sha256'])}",
        )
    return c.findings
