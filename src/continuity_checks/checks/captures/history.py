"""History checks for captures (``continuity verify``): what was published stays as it was.

A capture, the manifest that pins it and the reader references that pin both are never
rewritten or deleted; in a ``decision-<id>/`` directory (one immutable observation) nothing is.
A new observation is a new directory, so adding files is always allowed.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable

from continuity_checks.checks.captures import files, model
from continuity_checks.checks.captures import rules as cx
from continuity_checks.core import strict_json
from continuity_checks.core.family import Change, CommitContext
from continuity_checks.core.findings import Finding
from continuity_checks.core.snapshot import Snapshot

# files that may be replaced inside a capture directory that is not a decision directory: a
# cycle's baseline and delta and the necessary view move on with the cycle
_MUTABLE = frozenset({files.CYCLE_BASE, files.CYCLE_DELTA, files.REQUIRED})


def published(change: Change, before: Snapshot) -> bool:
    """Whether the old version of ``change`` is a published capture file."""
    directory, name = posixpath.split(change.path)
    if files.is_decision_dir(directory) or change.kind == "reader":
        return True
    if change.kind == "manifest":
        old = change.old()
        parsed = None if old is None else strict_json.accepts(old)
        # only a manifest that named a capture was published (a web app's manifest.json is not)
        return parsed is not None and isinstance(parsed[1], dict) and "capture_file" in parsed[1]
    if change.kind == "capture":
        return files.manifest_names(before, directory, name)
    return name not in _MUTABLE and files.manifest_names(before, directory, files.CAPTURE)


def check_commit(context: CommitContext) -> Iterable[Finding]:
    findings: list[Finding] = []
    sha = context.commit.sha
    for change in context.changes:
        if change.status == "A" or change.old_blob == change.new_blob:
            continue
        if not published(change, context.before):
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
                detail = f" (SHA-256 {model.sha256_hex(old)} became {model.sha256_hex(new)})"
            findings.append(
                cx.PUBLISHED_CHANGED.finding(
                    change.path,
                    f"expected the published {change.kind} to keep its bytes, found them "
                    f"rewritten{detail}",
                    commit=sha,
                )
            )
    return findings
