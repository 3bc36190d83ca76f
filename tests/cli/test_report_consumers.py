"""What CI systems and people read from the reports: file names that must resolve to the file
(SARIF URIs, workflow-command properties), whatever characters the path holds, from any
directory of the repository."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

import pytest

from continuity_checks.cli import main
from tests.helpers.git import GitRepo, delta, isolate_git

#: directories whose names a URI or a workflow command must carry intact
ODD = ["sp ace", "ha#sh", "pc%41t", "nön-äscii", "com,ma", "co:lon", "br[ack]et?q", "pl+us&"]
SUMS = "0" * 64 + "  missing.txt\n"  # PV103 in each: the listed file is missing
#: RFC 3986 relative-ref characters (percent-escapes included)
URI_CHARACTERS = re.compile(r"[A-Za-z0-9\-._~%!$&'()*+,;=:@/]*")


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    isolate_git(monkeypatch, tmp_path / "home")
    repo = GitRepo(tmp_path / "repo")
    repo.write({f"{name}/SHA256SUMS": SUMS for name in ODD})
    repo.write({"sub/SHA256SUMS": SUMS})
    return repo


def sarif_uris(capsys: pytest.CaptureFixture[str], *args: str) -> list[str]:
    capsys.readouterr()
    assert main(["check", *args, "--format", "sarif"]) == 1
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    return [
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]
    ]


def resolved(top: Path, uri: str) -> Path:
    """What a SARIF consumer makes of ``uri`` against %SRCROOT% = ``top`` (RFC 3986 §5)."""
    assert URI_CHARACTERS.fullmatch(uri), f"{uri!r} is not a URI reference"
    target = urlsplit(urljoin(top.as_uri() + "/", uri))
    assert (target.scheme, target.query, target.fragment) == ("file", "", ""), uri
    return Path(unquote(target.path))


@pytest.mark.parametrize("where", ["top", "subdirectory", "--root"])
def test_sarif_uris_resolve_to_the_files_found_whatever_their_names(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    top = repo.path
    expected = {top / name / "SHA256SUMS" for name in ODD} | {top / "sub" / "SHA256SUMS"}
    if where == "top":
        monkeypatch.chdir(top)
        uris = sarif_uris(capsys, "--all")
    elif where == "subdirectory":
        monkeypatch.chdir(top / "sub")
        uris = sarif_uris(capsys, "--all")
    else:  # --root narrows --all to a directory; the URIs stay relative to the repository
        monkeypatch.chdir(top.parent)
        uris = sarif_uris(capsys, "--all", "--root", str(top / "ha#sh"))
        expected = {top / "ha#sh" / "SHA256SUMS"}
    assert {resolved(top, uri) for uri in uris} == expected
    assert len(uris) == len(expected)


def test_sarif_describes_the_base_its_uris_resolve_against(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``--root`` inside a repository the URIs are relative to the repository's top (the
    test above), and %SRCROOT%'s description says so: a consumer who sets it reads it there."""
    monkeypatch.chdir(repo.path.parent)
    capsys.readouterr()
    assert main(["check", "--all", "--root", str(repo.path / "sub"), "--format", "sarif"]) == 1
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    described = run["originalUriBaseIds"]["%SRCROOT%"]["description"]["text"]
    assert described.startswith("the top of the git repository")
    uri = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert resolved(repo.path, uri) == repo.path / "sub" / "SHA256SUMS"


#: a directory name that, printed raw, starts a line with a workflow command
INJECTED = "d\n::stop-commands::token"


@pytest.mark.parametrize("fmt", ["text", "github"])
def test_a_line_break_in_a_file_name_never_starts_a_line_of_its_own(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    """A file name with a line break, in a finding's place or in the note naming files no family
    claims: printed raw, its second half was a line of its own, so that in a GitHub log
    ``::stop-commands::`` turned off every annotation after it, and a text reader took it for a
    finding's line."""
    isolate_git(monkeypatch, tmp_path / "home")
    repo = GitRepo(tmp_path / "repo")
    repo.write({f"{INJECTED}/SHA256SUMS": SUMS, f"{INJECTED}.txt": "not claimed\n"})
    monkeypatch.chdir(repo.path)
    capsys.readouterr()
    code = main(["check", "--format", fmt, f"{INJECTED}/SHA256SUMS", f"{INJECTED}.txt"])
    lines = capsys.readouterr().out.splitlines()
    assert code == 1
    assert not [line for line in lines if line.startswith("::") and "::error " not in line]
    if fmt == "text":
        (finding,) = [line for line in lines if "PV103" in line]
        assert finding.startswith("d\\n::stop-commands::token/SHA256SUMS:1: PV103 ")
        assert "not checked, no family claims them: d\\n::stop-commands::token.txt" in lines
    else:
        (annotation,) = [line for line in lines if line.startswith("::error ")]
        # the property carries the real name, escaped as the runner reads it back
        assert annotation.startswith("::error file=d%0A%3A%3Astop-commands%3A%3Atoken/SHA256SUMS,")
        assert "not checked, no family claims them: d\\n::stop-commands::token.txt" in lines


def test_the_note_naming_files_not_checked_is_in_every_format(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``check`` given a file no family claims passes (pre-commit passes every staged file), and
    says so in a note: the text and GitHub formats printed it, JSON and SARIF dropped it, so a
    program reading them could not tell that a file it named was never checked."""
    repo.write({"notes.txt": "not a continuity file\n"})
    monkeypatch.chdir(repo.path)
    note = "not checked, no family claims them: notes.txt"
    outputs = {}
    for fmt in ("text", "github", "json", "sarif"):
        capsys.readouterr()
        assert main(["check", "notes.txt", "--format", fmt]) == 0
        outputs[fmt] = capsys.readouterr().out
    assert note in outputs["text"].splitlines()
    assert note in outputs["github"].splitlines()
    assert json.loads(outputs["json"])["notes"] == [note]
    (run,) = json.loads(outputs["sarif"])["runs"]
    (invocation,) = run["invocations"]
    assert invocation["toolExecutionNotifications"] == [
        {"level": "note", "message": {"text": note}}
    ]
    assert run["results"] == []


def test_a_message_quoting_a_file_name_stays_on_its_finding_s_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """DL110 names the file it found; a name with a line break made the rest of the message a
    line of its own, here one that reads as a finding (``SHA256SUMS:1: PV103 ...``)."""
    isolate_git(monkeypatch, tmp_path / "home")
    repo = GitRepo(tmp_path / "repo")
    forged = "x\nSHA256SUMS:1: PV103 forged.json"
    repo.write({f".deltalayer/changes/{forged}": delta()})
    monkeypatch.chdir(repo.path)
    capsys.readouterr()
    assert main(["check", "--all", "--no-color"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert not [line for line in lines if line.startswith("SHA256SUMS")]
    (finding,) = [line for line in lines if " DL110 " in line]
    assert finding.endswith("found x\\nSHA256SUMS:1: PV103 forged.json")


@pytest.mark.parametrize(("sums", "expected"), [("clean", 0), ("findings", 1)])
def test_a_reader_that_stopped_early_gets_the_run_s_exit_code(
    tmp_path: Path, sums: str, expected: int
) -> None:
    """``continuity check --all | head -1``: the exit code says what was found, whether the pipe
    closed before the report was written or after (it was 1 for a clean run when the reader
    had gone before the write, 0 when it went after: a matter of timing)."""
    (tmp_path / "x").write_text("x\n")
    digest = hashlib.sha256(b"x\n").hexdigest() if sums == "clean" else "0" * 64
    (tmp_path / "SHA256SUMS").write_text(f"{digest}  x\n")
    read, write = os.pipe()
    os.close(read)  # the reader is gone before anything is written
    try:
        result = subprocess.run(
            [sys.executable, "-m", "continuity_checks", "check", "--all", "--root", str(tmp_path)],
            stdout=write, stderr=subprocess.PIPE, check=False,
        )  # fmt: skip
    finally:
        os.close(write)
    assert (result.returncode, result.stderr) == (expected, b"")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_quiet_with_nothing_to_print_needs_no_room_on_stdout(tmp_path: Path) -> None:
    """``-q`` on a clean run prints nothing: a stdout that cannot take a byte is no error then
    (it was exit 2, "cannot write the report", for a report of no bytes)."""
    (tmp_path / "x").write_text("x\n")
    digest = hashlib.sha256(b"x\n").hexdigest()
    (tmp_path / "SHA256SUMS").write_text(f"{digest}  x\n")
    command = [sys.executable, "-m", "continuity_checks", "check", "--all", "--root", str(tmp_path)]
    with open("/dev/full", "wb") as full:
        quiet = subprocess.run([*command, "-q"], stdout=full, stderr=subprocess.PIPE, check=False)
        loud = subprocess.run(command, stdout=full, stderr=subprocess.PIPE, check=False)
    assert (quiet.returncode, quiet.stderr) == (0, b"")
    assert loud.returncode == 2  # the summary line had to be written, and could not


def alert_identity(result: dict[str, object]) -> tuple[object, ...]:
    """What code scanning tells results apart by: the rule and the partial fingerprints; where a
    result has none, upload-sarif makes primaryLocationLineHash from the file's line (the same
    for every result on that line of that file)."""
    fingerprints = result.get("partialFingerprints")
    if fingerprints:
        return (result["ruleId"], json.dumps(fingerprints, sort_keys=True))
    location = result["locations"][0]["physicalLocation"]  # type: ignore[index]
    return (result["ruleId"], location["artifactLocation"]["uri"], location["region"]["startLine"])


def test_history_findings_on_one_line_stay_distinct_alerts_in_code_scanning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two commits that each change a listed digest: two PV201 findings at SHA256SUMS line 1.
    Without fingerprints of their own, code scanning took them for one alert (one was lost);
    the fingerprints do not change from one run to the next, so an alert is kept."""
    isolate_git(monkeypatch, tmp_path / "home")
    repo = GitRepo(tmp_path / "repo")
    for content in ("a\n", "b\n", "c\n"):
        digest = hashlib.sha256(content.encode()).hexdigest()
        repo.commit(content, {"a.txt": content, "SHA256SUMS": f"{digest}  a.txt\n"})
    monkeypatch.chdir(repo.path)
    runs = []
    for _ in range(2):
        capsys.readouterr()
        assert main(["verify", "--range", "HEAD", "--format", "sarif"]) == 1
        runs.append(json.loads(capsys.readouterr().out)["runs"][0]["results"])
    results = runs[0]
    assert [r["ruleId"] for r in results] == ["PV201", "PV201"]
    assert len({alert_identity(r) for r in results}) == 2
    for result in results:  # and the message shown says which commit each one is
        assert f"(commit {result['properties']['commit']})" in result["message"]["text"]
    assert [r["partialFingerprints"] for r in runs[1]] == [
        r["partialFingerprints"] for r in results
    ]


def test_sarif_says_how_many_findings_the_limits_left_out(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``max-findings`` caps what is shown: the text summary and JSON's ``summary.not_shown``
    said how many were left out, SARIF said nothing, so code scanning showed 2 of 9 as if all."""
    repo.write({".continuity.toml": "[limits]\nmax-findings = 2\n"})
    monkeypatch.chdir(repo.path)
    capsys.readouterr()
    assert main(["check", "--all", "--format", "sarif"]) == 1
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    assert len(run["results"]) == 2
    assert run["properties"]["not_shown"] == len(ODD) + 1 - 2
    (notification,) = run["invocations"][0]["toolExecutionNotifications"]
    assert notification["level"] == "warning"
    assert notification["message"]["text"].startswith(f"{len(ODD) + 1 - 2} findings not shown")


def test_github_format_says_when_annotations_go_past_what_a_step_shows(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """GitHub shows 10 error annotations of a step and drops the rest unsaid: with 11 errors a
    notice says how many there are and that the log has them all; with 10, no notice."""
    repo.write({f"more{i}/SHA256SUMS": SUMS for i in range(2)})  # 8 + 1 + 2 = 11 PV103
    monkeypatch.chdir(repo.path)
    capsys.readouterr()
    assert main(["check", "--all", "--format", "github"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert sum(line.startswith("::error ") for line in lines) == 11
    (notice,) = [line for line in lines if line.startswith("::notice")]
    assert notice == (
        "::notice title=continuity::11 errors, 0 warnings: GitHub shows at most 10 annotations "
        "of each kind for a step; the log above has every one"
    )
    (repo.path / "more1" / "SHA256SUMS").unlink()
    capsys.readouterr()
    assert main(["check", "--all", "--format", "github"]) == 1
    assert not [line for line in capsys.readouterr().out.splitlines() if "::notice" in line]
