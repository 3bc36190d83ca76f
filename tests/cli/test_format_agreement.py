"""The four reporters tell the same findings: one temporary repository, `check --all` and
`verify` in text, json, sarif and github, each parsed back to (rule, path, line, severity,
commit), compared as multisets."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from continuity_checks.cli import main
from tests.helpers.every_family import every_family_history
from tests.helpers.git import GitRepo

Found = tuple[str, str, int | None, str, str | None]

TEXT = re.compile(
    r"(?P<path>[^\s:][^:]*?)(?::(?P<line>\d+)(?::\d+)?)?: (?P<rule>[A-Z]{2}\d{3}) .*?"
    r"(?P<warning> \(warning\))?(?: \[at [^\]]*\])?(?: \[commit (?P<commit>[0-9a-f]{12})\])?$"
)
GITHUB = re.compile(
    r"::(?P<level>error|warning|notice) file=(?P<path>[^,]*)(?:,line=(?P<line>\d+))?"
    r"(?:,col=\d+)?,title=(?P<rule>[A-Z]{2}\d{3})::.*?(?:\(commit (?P<commit>[0-9a-f]{40})\))?"
    r"(?:%0A.*)?$"
)


def from_json(out: str) -> list[Found]:
    return [
        (f["rule"], f["path"], f["line"], f["severity"], (f["commit"] or "")[:12] or None)
        for f in json.loads(out)["findings"]
    ]


def from_text(out: str) -> list[Found]:
    found: list[Found] = []
    for line in out.splitlines():
        if line.startswith(" ") or not line or re.match(r"\d+ (files?|commits?) checked", line):
            continue
        m = TEXT.fullmatch(line)
        assert m, f"a text line that is not a finding: {line!r}"
        severity = "warning" if m["warning"] else "error"
        number = int(m["line"]) if m["line"] else None
        found.append((m["rule"], m["path"], number, severity, m["commit"]))
    return found


def from_github(out: str) -> list[Found]:
    found: list[Found] = []
    for line in out.splitlines():
        if not line.startswith("::error file=") and not line.startswith("::warning file="):
            continue
        m = GITHUB.fullmatch(line)
        assert m, f"an annotation this test cannot read: {line!r}"
        number = int(m["line"]) if m["line"] else None
        commit = m["commit"][:12] if m["commit"] else None
        found.append((m["rule"], m["path"], number, m["level"], commit))
    return found


def from_sarif(out: str) -> list[Found]:
    found: list[Found] = []
    for r in json.loads(out)["runs"][0]["results"]:
        where = r["locations"][0]["physicalLocation"]
        commit = r.get("properties", {}).get("commit")
        found.append(
            (
                r["ruleId"],
                where["artifactLocation"]["uri"],
                where["region"]["startLine"],
                r["level"],
                commit[:12] if commit else None,
            )
        )
    return found


def lines_as_sarif(found: list[Found]) -> Counter[Found]:
    """SARIF always gives a region: a finding without a line is on line 1 there."""
    return Counter((rule, path, line or 1, sev, c) for rule, path, line, sev, c in found)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    """Findings of every family, on the main line and on a merged side branch."""
    return every_family_history(tmp_path, monkeypatch)


@pytest.mark.parametrize(
    "args", [("check", "--all"), ("verify", "--range", "HEAD"), ("verify", "--range", "base..HEAD")]
)
def test_text_json_sarif_and_github_report_the_same_findings(
    repo: GitRepo,
    capsys: pytest.CaptureFixture[str],
    args: tuple[str, ...],
) -> None:
    outputs: dict[str, str] = {}
    codes = set()
    for fmt in ("text", "json", "sarif", "github"):
        capsys.readouterr()
        codes.add(main([*args, "--root", str(repo.path), "--format", fmt, "--no-color"]))
        outputs[fmt] = capsys.readouterr().out
    assert codes == {1}
    expected = from_json(outputs["json"])
    assert len(expected) >= 3, expected
    assert Counter(from_text(outputs["text"])) == Counter(expected)
    assert Counter(from_github(outputs["github"])) == Counter(expected)
    assert Counter(from_sarif(outputs["sarif"])) == lines_as_sarif(expected)
