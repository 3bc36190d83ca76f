"""SARIF 2.1.0 for code-scanning upload: one run, one rule per rule id."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from continuity_checks import __version__
from continuity_checks.checks import all_rules
from continuity_checks.core import pretty_json
from continuity_checks.core.findings import Finding, Report, escaped, printable_finding

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


# what the paths are relative to, as every format reports them
SRCROOT = (
    "the top of the git repository that holds the checked root (the checked root itself when it "
    "is not in a git repository)"
)


def uri(path: str) -> str:
    """``path`` (root-relative, ``/`` separators) as the relative URI reference SARIF requires
    (§3.10.2): percent-encoded as UTF-8 but for ``/`` and the unreserved characters, so that a
    space, ``#``, ``?``, ``%``, a non-ASCII letter or a ``:`` in the first segment (which would
    read as a scheme) resolves against %SRCROOT% to the file itself; a name's bytes that are not
    UTF-8 (kept as lone surrogates) are escaped as those bytes, so the URI names that file too."""
    try:
        return quote(path.encode("utf-8", "surrogateescape"), safe="/")
    except UnicodeEncodeError:  # a surrogate that no byte stands for: the escaped text
        return quote(escaped(path), safe="/")


#: partialFingerprints key: what code scanning tells alerts apart by (with the rule id). Without
#: one, upload-sarif hashes the result's line, the same for every finding on that line (history
#: findings of several commits, findings without a line, placed on line 1) and they were one alert.
FINGERPRINT = "continuityFinding/v1"


def _result(
    found: Finding, index: dict[str, int], baselined: bool, fingerprint: str
) -> dict[str, Any]:
    finding = printable_finding(found)  # every text valid UTF-8; the URI from the path as found
    # a region always: code scanning places a result without one nowhere
    region = {"startLine": finding.line or 1}
    if finding.line is not None and finding.column is not None:
        region["startColumn"] = finding.column
    location: dict[str, Any] = {
        "artifactLocation": {"uri": uri(found.path), "uriBaseId": "%SRCROOT%"},
        "region": region,
    }
    # the commit in the text too, as in the GitHub format: code scanning shows the message, and
    # the same line of a file may be a finding of several commits
    text = finding.message + (f" (commit {finding.commit})" if finding.commit else "")
    text += f" Hint: {finding.hint}" if finding.hint else ""
    result: dict[str, Any] = {
        "ruleId": finding.rule,
        "ruleIndex": index[finding.rule],
        "level": finding.severity.value,
        "message": {"text": text},
        "locations": [{"physicalLocation": location}],
        "partialFingerprints": {FINGERPRINT: fingerprint},
    }
    if baselined:  # compared with a baseline: what is reported is what it did not know
        result["baselineState"] = "new"
    properties = {k: v for k, v in (("pointer", finding.pointer), ("commit", finding.commit)) if v}
    if properties:
        result["properties"] = properties
    return result


def _fingerprints(findings: list[Finding]) -> list[str]:
    """Each finding's baseline fingerprint (rule, path, pointer, message without positions,
    commit: an edit elsewhere in the file keeps the alert) and its occurrence among equal ones."""
    from continuity_checks.core.baseline import fingerprint

    seen: dict[str, int] = {}
    prints = []
    for finding in findings:
        digest = fingerprint(finding)
        seen[digest] = seen.get(digest, 0) + 1
        prints.append(f"{digest}:{seen[digest]}")
    return prints


def render(report: Report, *, color: bool = False) -> str:
    rules = all_rules()
    shown = report.sorted_findings(printable=False)
    index = {r.id: i for i, r in enumerate(rules)}
    baselined = report.baselined is not None
    run: dict[str, Any] = {}
    not_shown = report.not_shown
    if baselined or report.suppressed or not_shown:
        # what the run found and left out of the results: counted, never silently dropped
        run["properties"] = {
            "suppressed": report.suppressed,
            "baselined": report.baselined or 0,
            "not_shown": not_shown,
        }
    notifications = [{"level": "note", "message": {"text": note}} for note in report.notes]
    if not_shown:  # the limits cut the results: said where code scanning shows the run's state
        text = (
            f"{not_shown} finding{'s' if not_shown != 1 else ''} not shown: at most "
            f"{report.max_per_file} per file and {report.max_total} in all ([limits] "
            "max-findings-per-file and max-findings)"
        )
        notifications.append({"level": "warning", "message": {"text": text}})
    if notifications:  # the text format's notes (files given and not checked), and the above
        run["invocations"] = [
            {"executionSuccessful": True, "toolExecutionNotifications": notifications}
        ]
    document = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "continuity-checks",
                        "version": __version__,
                        "rules": [
                            {
                                "id": r.id,
                                "name": r.summary,
                                "shortDescription": {"text": r.summary},
                                "fullDescription": {"text": r.explanation},
                                "help": {"text": r.hint or r.explanation},
                                "defaultConfiguration": {"level": r.severity.value},
                                "properties": {"family": r.family},
                            }
                            for r in rules
                        ],
                    }
                },
                "columnKind": "unicodeCodePoints",
                "originalUriBaseIds": {"%SRCROOT%": {"description": {"text": SRCROOT}}},
                "results": [
                    _result(f, index, baselined, print_)
                    for f, print_ in zip(shown, _fingerprints(shown), strict=True)
                ],
                **run,
            }
        ],
    }
    return pretty_json.dumps(document)
