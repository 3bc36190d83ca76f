"""``{"format_version": 1, "findings": [...], "notes": [...], "summary": {...}}``: sorted,
deterministic. ``notes`` are the lines the text format prints between the findings and the
summary (files given that were not checked, a shard's commits): never only in one format."""

from __future__ import annotations

from continuity_checks.core import pretty_json
from continuity_checks.core.findings import Report


def render(report: Report, *, color: bool = False) -> str:
    document = {
        "format_version": 1,
        "findings": [f.to_dict() for f in report.sorted_findings()],
        "notes": list(report.notes),
        "summary": {
            "files": report.files,
            "commits": report.commits,
            "errors": report.errors,
            "warnings": report.warnings,
            "not_shown": report.not_shown,
            "suppressed": report.suppressed,
            "baselined": report.baselined,
        },
    }
    return pretty_json.dumps(document)
