"""Small helpers shared by the file and tree checks: loading JSON through the strict loader
with findings at positions."""

from __future__ import annotations

from continuity_checks.core import strict_json
from continuity_checks.core.findings import Finding
from continuity_checks.core.snapshot import Snapshot, Unreadable

SESSION_STATUSES = ("idle", "running", "needs_input", "done", "failed", "interrupted")


def load(
    data: bytes, path: str, max_depth: int, findings: list[Finding]
) -> strict_json.Document | None:
    doc = strict_json.load(data, max_depth=max_depth)
    if isinstance(doc, strict_json.Problem):
        findings.append(doc.finding(path))
        return None
    return doc


def read_json(
    snapshot: Snapshot, path: str, max_depth: int, findings: list[Finding], at: str | None = None
) -> strict_json.Document | None:
    """The document at ``path``, or None with the reason among ``findings`` (reported at ``at``
    when another file named ``path``)."""
    data = snapshot.read(path)
    if isinstance(data, Unreadable):
        findings.append(data.finding(at))
        return None
    return load(data, path, max_depth, findings)
