"""``path:line:col: RULE message`` lines, then a one-line summary."""

from __future__ import annotations

from continuity_checks.core.findings import Finding, Report, Severity

_RED, _YELLOW, _BOLD, _RESET = "\033[31m", "\033[33m", "\033[1m", "\033[0m"

#: control characters as C escapes (``\n``, ``\x1b``), as git quotes a file name holding them
_CONTROL = {c: f"\\x{c:02x}" for c in [*range(0x20), 0x7F]} | {
    ord("\n"): "\\n",
    ord("\r"): "\\r",
    ord("\t"): "\\t",
}


def one_line(text: str) -> str:
    """``text`` (a file name, a note naming files) on one line and without terminal escapes: a
    line break in a name would start a line of its own, read as a finding's line, or in a
    GitHub log as a workflow command (``::stop-commands::`` silences every annotation after it)."""
    return text.translate(_CONTROL)


def location(finding: Finding) -> str:
    parts = [one_line(finding.path)]
    if finding.line is not None:
        parts.append(str(finding.line))
        if finding.column is not None:
            parts.append(str(finding.column))
    return ":".join(parts)


def line(finding: Finding, *, color: bool) -> str:
    rule = finding.rule
    if color:
        tint = _RED if finding.severity is Severity.ERROR else _YELLOW
        rule = f"{tint}{_BOLD}{rule}{_RESET}"
    # a message or hint may quote a file name as found: one_line keeps it on its finding's line
    text = f"{location(finding)}: {rule} {one_line(finding.message)}"
    if finding.severity is Severity.WARNING:
        text += " (warning)"
    if finding.pointer:
        text += f" [at {one_line(finding.pointer)}]"
    if finding.commit:
        text += f" [commit {finding.commit[:12]}]"
    if finding.hint:
        text += f"\n    hint: {one_line(finding.hint)}"
    return text


def summary(report: Report) -> str:
    count = report.commits if report.unit == "commit" else report.files
    scope = f"{count} {report.unit}{'s' if count != 1 else ''}"
    errors, warnings = report.errors, report.warnings
    if not errors and not warnings:
        return f"{scope} checked: no problems" + _left_out(report)
    text = (
        f"{scope} checked: {errors} error{'s' if errors != 1 else ''}, "
        f"{warnings} warning{'s' if warnings != 1 else ''}"
    )
    hidden = report.not_shown
    if hidden:
        text += (
            f" ({hidden} not shown: at most {report.max_per_file} per file and "
            f"{report.max_total} in all, [limits] max-findings-per-file and max-findings)"
        )
    return text + _left_out(report)


def _left_out(report: Report) -> str:
    """What the run found and did not report, so that nothing disappears unsaid."""
    parts = []
    if report.baselined:
        known = report.baselined
        parts.append(f"{known} known finding{'s' if known != 1 else ''} hidden by the baseline")
    if report.suppressed:
        parts.append(f"{report.suppressed} suppressed by [[ignore]] in the configuration")
    return "; " + ", ".join(parts) if parts else ""


def render(report: Report, *, color: bool = False, quiet: bool = False) -> str:
    """The report; with ``quiet`` only the error-severity findings (no warnings, notes or
    summary): nothing at all when there is no error."""
    if quiet:
        errors = [f for f in report.sorted_findings() if f.severity is Severity.ERROR]
        return "".join(line(f, color=color) + "\n" for f in errors)
    lines = [line(f, color=color) for f in report.sorted_findings()]
    lines.extend(one_line(note) for note in report.notes)
    lines.append(summary(report))
    return "\n".join(lines) + "\n"
