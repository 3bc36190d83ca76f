"""GitHub Actions workflow commands: ``::error file=…,line=…,col=…,title=RULE::message``."""

from __future__ import annotations

from continuity_checks.core.findings import Finding, Report
from continuity_checks.report.text_format import one_line, summary


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(finding: Finding) -> str:
    props = [f"file={_property(finding.path)}"]
    if finding.line is not None:
        props.append(f"line={finding.line}")
        if finding.column is not None:
            props.append(f"col={finding.column}")
    props.append(f"title={_property(finding.rule)}")
    message = finding.message
    if finding.commit:
        message += f" (commit {finding.commit})"
    if finding.hint:
        message += f"\nhint: {finding.hint}"
    return f"::{finding.severity.value} {','.join(props)}::{_data(message)}"


#: Annotations of one kind (error, warning, notice) GitHub shows for a step; the rest are in the
#: log only, dropped from the run's page without a word
PER_STEP = 10


def render(report: Report, *, color: bool = False) -> str:
    lines = [annotation(f) for f in report.sorted_findings()]
    errors, warnings = report.errors, report.warnings
    if errors > PER_STEP or warnings > PER_STEP:
        lines.append(
            f"::notice title=continuity::{errors} error{'s' if errors != 1 else ''}, {warnings} "
            f"warning{'s' if warnings != 1 else ''}: GitHub shows at most {PER_STEP} annotations "
            "of each kind for a step; the log above has every one"
        )
    lines.extend(one_line(note) for note in report.notes)  # never a command of their own
    lines.append(summary(report))
    return "\n".join(lines) + "\n"
