"""History checks for captures (``continuity verify``): what was published stays as it was.

A capture, the manifest that pins it and the reader references that pin both are never
rewritten or deleted; in a ``decision-<id>/`` directory (one immutable observation) nothing is.
A new observation is a new directory, so adding files is always allowed.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Collection, Iterable, Iterator
from typing import Any

from continuity_checks.checks.captures import model
from continuity_checks.checks.captures import rules as cx
from continuity_checks.checks.captures.checker import escape
from continuity_checks.checks.captures.layout import (
    CAPTURE,
    CYCLE_BASE,
    CYCLE_DELTA,
    MANIFEST,
    PROJECTION,
    REQUIRED,
    is_decision_dir,
)
from continuity_checks.checks.captures.manifest import names_capture
from continuity_checks.core import pointer as jp
from continuity_checks.core import strict_json
from continuity_checks.core.family import STAGED, Change, CommitContext
from continuity_checks.core.findings import Finding
from continuity_checks.core.hashing import sha256_hex
from continuity_checks.core.snapshot import Unreadable

# files that may be replaced inside a capture directory that is not a decision directory: a
# cycle's baseline and delta and the necessary view move on with the cycle
_MUTABLE = frozenset({CYCLE_BASE, CYCLE_DELTA, REQUIRED})


def published(change: Change, context: CommitContext) -> bool:
    """Whether the old version of ``change`` (its last good version) is a published capture
    file: for a capture, whether the last good version of the manifest beside it names it."""
    directory, name = posixpath.split(change.path)
    if is_decision_dir(directory) or change.kind == "reader":
        return True
    if change.kind == "manifest":
        old = change.old()
        parsed = None if old is None else strict_json.accepts(old)
        # only a manifest that named a capture was published (a web app's manifest.json is not)
        return parsed is not None and isinstance(parsed[1], dict) and "capture_file" in parsed[1]
    if change.kind != "capture" and name in _MUTABLE:
        return False
    manifest = _good_manifest(context, model.join(directory, MANIFEST))
    return names_capture(manifest, directory, name if change.kind == "capture" else CAPTURE)


def _good_manifest(context: CommitContext, path: str) -> bytes | None:
    """The last good version of the manifest at ``path`` before this commit: the old version
    the engine gives with its change, the commit's own when the commit put it back to that
    version (the engine then gives no change), else the parent's."""
    for change in context.changes:
        if change.path == path:
            return change.old()
    changed = any(raw.path == path for raw in context.paths)
    data = (context.after if changed else context.before).read(path)
    return None if isinstance(data, Unreadable) else data


def check_commit(
    context: CommitContext, claims: Callable[[str], str | None], linked: Collection[str] = ()
) -> Iterable[Finding]:
    """The findings of one commit; ``linked`` are the capture files it left as symlinks, which
    CX203 reports (a published one is not also rewritten, nor a pin leading through it CX102)."""
    findings = _immutable(context, linked)
    if context.commit.sha != STAGED:  # the commit hook's file checks report it already
        findings.extend(_symlinks_out(context, claims, linked))
    return findings


def _names(kind: str, value: dict[str, Any]) -> Iterator[tuple[str, object]]:
    """``(pointer, name)`` of every file a family file names (explicitly or by its role)."""
    if kind in ("manifest", "reader") and "capture_file" in value:
        yield "/capture_file", value["capture_file"]
    if kind == "manifest" and isinstance(value.get("files"), dict):
        for name in value["files"]:
            yield jp.append("/files", name), name
    if kind == "delivery":
        for key, name in (
            ("projection_sha256", PROJECTION),
            ("required_context_sha256", REQUIRED),
        ):
            if key in value:
                yield "/" + key, name
        for key in ("base", "delta"):
            entry = value.get(key)
            if isinstance(entry, dict) and "file" in entry:
                yield f"/{key}/file", entry["file"]
    if kind == "cycle-delta":
        yield "/base_sha256", CYCLE_BASE


def _symlinks_out(
    context: CommitContext, claims: Callable[[str], str | None], linked: Collection[str]
) -> list[Finding]:
    """CX102 in history: a file a capture file names whose real location (symlinks followed in
    the commit's tree) leaves the naming file's directory. Checked for every directory a commit
    adds or changes a claimed file in (a capture.json that becomes a symlink is such a change),
    so the commit that brings the symlink in is the one named."""
    after = context.after
    sha = context.commit.sha
    findings: list[Finding] = []
    touched = {posixpath.dirname(c.path) for c in context.changes if c.status != "D"}
    for directory in sorted(touched):
        names = after.list(directory)
        if isinstance(names, Unreadable):
            continue
        for name in names:
            path = model.join(directory, name)
            kind = claims(path)
            if kind not in ("manifest", "reader", "delivery", "cycle-delta"):
                continue
            data = after.read(path)
            parsed = None if isinstance(data, Unreadable) else strict_json.accepts(data)
            if parsed is None or not isinstance(parsed[1], dict):
                continue  # not ours, or reported by the file checks
            for pointer, named in _names(kind, parsed[1]):
                if model.inside_name(named) is not None:
                    continue  # a ".." or an absolute name: the file checks' CX102
                assert isinstance(named, str)
                target = model.join(directory, named)
                if target in linked or not after.exists(target):
                    continue
                left = escape(after, directory, target)
                if left is None:
                    continue
                # at the name, as in file mode (accepts() took the bytes, so load() does)
                loaded = strict_json.load(data) if isinstance(data, bytes) else None
                line, column = (
                    loaded.position(pointer)
                    if isinstance(loaded, strict_json.Document)
                    else (None, None)
                )
                if isinstance(left, Unreadable):
                    findings.append(
                        left.finding(path, line=line, column=column, pointer=pointer, commit=sha)
                    )
                else:
                    findings.append(
                        cx.PATH_ESCAPES.finding(
                            path,
                            f"{left} ({target})",
                            line=line,
                            column=column,
                            pointer=pointer,
                            commit=sha,
                        )
                    )
    return findings


def _immutable(context: CommitContext, linked: Collection[str]) -> list[Finding]:
    findings: list[Finding] = []
    sha = context.commit.sha
    for change in context.changes:
        if change.status == "A" or change.old_blob == change.new_blob or change.path in linked:
            continue
        if not published(change, context):
            continue
        if change.status == "D":
            findings.append(
                cx.PUBLISHED_DELETED.finding(
                    change.path,
                    f"expected the published {change.kind} to stay, found it deleted",
                    commit=sha,
                )
            )
        else:
            old, new = change.old(), change.new()
            detail = ""
            if old is not None and new is not None:
                detail = f" (SHA-256 {sha256_hex(old)} became {sha256_hex(new)})"
            findings.append(
                cx.PUBLISHED_CHANGED.finding(
                    change.path,
                    f"expected the published {change.kind} to keep its bytes, found them "
                    f"rewritten{detail}",
                    commit=sha,
                )
            )
    return findings
