"""``manifest.json``: the manifest against the capture it pins, and whether a directory holds
one (what makes a ``capture.json`` beside it LoopX's)."""

from __future__ import annotations

import posixpath
from collections.abc import Callable

from continuity_checks.checks.captures import model
from continuity_checks.checks.captures import rules as cx
from continuity_checks.checks.captures.checker import Checker
from continuity_checks.checks.captures.layout import (
    CAPTURE,
    MANIFEST,
    PROJECTION,
    Settings,
    is_backup_dir,
    is_decision_dir,
)
from continuity_checks.core import pointer as jp
from continuity_checks.core import strict_json
from continuity_checks.core.display import quote
from continuity_checks.core.findings import Finding
from continuity_checks.core.hashing import parse_digest
from continuity_checks.core.snapshot import Snapshot


def check_manifest(
    path: str,
    data: bytes,
    snapshot: Snapshot,
    settings: Settings,
    is_capture: Callable[[str], bool],
) -> list[Finding]:
    """A manifest and the capture it names. A manifest that names no capture beside it (no
    capture_file, and no capture.json or projection.json next to it) is not a capture manifest
    (OpenProgram keeps manifest.json files of its own): nothing is reported for it."""
    c = Checker(path, snapshot, settings)
    directory = c.directory
    beside = any(snapshot.exists(model.join(directory, name)) for name in (CAPTURE, PROJECTION))
    if not c.load(data):
        return c.findings if beside else []
    assert c.doc is not None
    value = c.doc.value
    if not beside and not (isinstance(value, dict) and "capture_file" in value):
        return []
    c.schema("manifest")
    if not isinstance(value, dict):
        return c.findings
    capture = (
        c.named(value.get("capture_file"), "/capture_file") if "capture_file" in value else None
    )
    if capture is not None and (posixpath.dirname(capture) != directory or not is_capture(capture)):
        # spec §2: the capture lives beside its manifest, as capture.json. Under another name
        # (or in a subdirectory) no check is started by a change to it, and history cannot
        # tell that a published capture was rewritten or deleted: refused, not passed.
        names = "capture.json or projection.json" if is_decision_dir(directory) else "capture.json"
        c.at(
            cx.MANIFEST_SCHEMA,
            "/capture_file",
            f"expected {names} beside the manifest (the names the commit hook and verify guard "
            f"against rewrites), found {quote(value['capture_file'])}",
        )
    if capture is not None:
        pinned = parse_digest(value.get("capture_sha256"))
        found = c.capture_digest(capture, "/capture_file")
        if found is not None:
            actual, size = found
            if pinned is not None and pinned != actual:
                basis = "canonical JSON" if settings.capture_digest == "canonical" else "bytes"
                c.at(
                    cx.CAPTURE_DIGEST,
                    "/capture_sha256",
                    f"expected the SHA-256 of the {basis} of {capture}, {actual}; found "
                    f"{quote(value.get('capture_sha256'))}",
                )
            stated = value.get("capture_bytes")
            # a size that differs with the digest is the same root cause, reported once
            if _whole(stated) not in (None, size) and pinned == actual:
                c.at(
                    cx.CAPTURE_SIZE,
                    "/capture_bytes",
                    f"expected {size} (the size of {capture}), found {stated}",
                )
        if not is_capture(capture):
            # a capture under another name has no check of its own: strict JSON here
            c.document(capture, "/capture_file")
    files = value.get("files")
    if isinstance(files, dict):
        for name, entry in files.items():
            pointer = jp.append("/files", name)
            target = c.named(name, pointer)
            if target is None or not isinstance(entry, dict):
                continue
            found = c.file_digest(target, pointer)
            if found is None:
                continue
            pinned = parse_digest(entry.get("sha256"))
            if pinned is not None and pinned != found[0]:
                c.at(
                    cx.CAPTURE_DIGEST,
                    pointer + "/sha256",
                    f"expected the SHA-256 of {target}, {found[0]}; found {quote(entry['sha256'])}",
                )
            elif _whole(entry.get("bytes")) not in (None, found[1]):
                c.at(
                    cx.CAPTURE_SIZE,
                    pointer + "/bytes",
                    f"expected {found[1]} (the size of {target}), found {entry['bytes']}",
                )
    return c.findings


def _whole(value: object) -> int | None:
    """A size as JSON Schema's "integer" takes it (12.0 is 12: the schema lets it through, so
    it is compared too), else None."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def has_manifest(snapshot: Snapshot, directory: str) -> bool:
    """Whether ``directory`` holds a manifest of ours: what makes a ``capture.json`` beside it
    LoopX's (the manifest's own check says what is wrong with its pin)."""
    return not is_backup_dir(directory) and snapshot.exists(model.join(directory, MANIFEST))


def names_capture(data: bytes | None, directory: str, name: str) -> bool:
    """Whether ``data``, a version of ``directory``'s manifest, names ``name`` as its capture."""
    if data is None:
        return False
    parsed = strict_json.accepts(data)
    if parsed is None or not isinstance(parsed[1], dict):
        return False
    named = parsed[1].get("capture_file")
    return (
        isinstance(named, str)
        and model.inside_name(named) is None
        and (model.join(directory, named) == model.join(directory, name))
    )
