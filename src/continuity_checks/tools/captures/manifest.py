"""``continuity capture manifest``: write the manifest that pins a capture, never over one that
pins another digest."""

from __future__ import annotations

import os

from continuity_checks.checks.captures import layout, model
from continuity_checks.core import hashing, pretty_json
from continuity_checks.tools.captures.checked import unchecked
from continuity_checks.tools.captures.results import (
    Result,
    confined,
    load_json,
    parse_json,
    refuse,
)


def manifest(
    directory: str,
    capture: str | None = None,
    digest: str | None = None,
    settings: layout.Settings = layout.Settings(),  # noqa: B008 (frozen: shared safely)
) -> Result:
    """Write ``DIRECTORY/manifest.json`` for the capture in it (``capture.json``, or
    ``projection.json`` in a decision directory). An existing manifest that pins the same
    digest is left alone; one that pins another is a refusal. The digest is over the basis
    ``settings`` configure (``capture-digest``); ``digest`` may only repeat it, since a manifest
    over the other basis is what ``check`` rejects (CX104)."""
    mode = "capture-manifest"
    if digest is not None and digest != settings.capture_digest:
        return refuse(
            mode,
            "DIGEST_NOT_CONFIGURED",
            f"expected --digest {settings.capture_digest} ([captures] capture-digest = "
            f"{settings.capture_digest!r}), found --digest {digest}: continuity check would "
            "reject the manifest (CX104); change the configuration first",
        )
    digest = settings.capture_digest
    name = capture or (
        layout.PROJECTION
        if layout.is_decision_dir(os.path.basename(os.path.abspath(directory)))
        else layout.CAPTURE
    )
    refused = model.inside_name(name)
    if refused is not None:
        return refuse(mode, "PATH_OUTSIDE", f"{name}: {refused}")
    path = os.path.join(directory, name)
    target = os.path.join(directory, layout.MANIFEST)
    files = confined(target, settings)
    files.writable(target)  # a directory that is a symlink: refused before anything is read
    try:
        data = files.read(path)
        value, found = parse_json(path, data), hashing.sha256_bytes(data)
    except FileNotFoundError:
        return refuse(mode, "CAPTURE_MISSING", f"expected a capture at {path}, found none")
    except (OSError, ValueError) as exc:
        return refuse(mode, "CAPTURE_UNREADABLE", f"expected a strict JSON capture: {exc}")
    sha = model.canonical_sha256(value) if digest == "canonical" else found.hex
    record = {
        "schema_version": model.SCHEMA_VERSION,
        "capture_file": name,
        "capture_sha256": sha,
        "capture_bytes": found.size,
    }
    unread = unchecked(target)
    if unread is not None:
        return refuse(mode, "NOT_CHECKED", f"{target}: {unread}; nothing was written")
    text = pretty_json.dumps(record).encode("utf-8")
    result = {"ok": True, "mode": mode, "manifest": target, "capture_sha256": sha,
              "capture_bytes": found.size}  # fmt: skip
    try:
        files.create(target, text)
        return 0, {**result, "written": True}
    except FileExistsError:
        pass
    try:
        existing = load_json(target, settings)
    except (OSError, ValueError) as exc:
        return refuse(mode, "MANIFEST_CONFLICT", f"an unreadable manifest is in the way: {exc}")
    pinned = existing.get("capture_sha256") if isinstance(existing, dict) else None
    if not hashing.same_digest(pinned, sha):
        return refuse(
            mode,
            "MANIFEST_CONFLICT",
            f"expected {target} to pin {sha} or not to exist, found it pinning "
            f"{pinned!r}: a capture is never rewritten, write a new directory",
        )
    return 0, {**result, "written": False}
