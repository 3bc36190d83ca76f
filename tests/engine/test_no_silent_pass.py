"""No silent passes: whatever a user names is checked, or the run says why not (the tool is impossible
to fool). Real temporary repositories, the real CLI, from the top and from subdirectories."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from continuity_checks.cli import main
from tests.conftest import write_tree
from tests.helpers.git import GitRepo, isolate_git

NAME = ".deltalayer/changes/2026-09-21T16-20-00p08-00--agent.json"
GOOD = (
    '{"started_at":"2026-09-21T16:20:00+08:00","updated_at":"2026-09-21T16:30:00+08:00",'
    '"source":"agent","changes":["x"]}\n'
)
BAD = GOOD.replace('"source":"agent"', '"source":"  "')
PROJECT = {
    "AGENTS.md": "<!-- deltalayer-conversation-v0.2.1 -->\n## Project Continuity\n",
    "PROJECT.md": "# Project\n",
}


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    isolate_git(monkeypatch, tmp_path / "home")
    repo = GitRepo(tmp_path / "repo")
    repo.commit("project", {**PROJECT, NAME: BAD, "src/app.py": "print()\n"})
    return repo


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def report(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, object]]:
    code, out, _ = run(capsys, *args, "--format", "json")
    return code, json.loads(out)


@pytest.mark.parametrize("directory", [".", ".deltalayer", ".deltalayer/changes"])
def test_a_directory_means_every_claimed_file_under_it(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    directory: str,
) -> None:  # fmt: skip
    monkeypatch.chdir(repo.path)
    code, out, _ = run(capsys, "check", directory)
    assert code == 1
    assert f"{NAME}:1:" in out and "DL104" in out
    assert "commit" not in out and " checked: 1 error" in out


def test_from_a_subdirectory_the_top_and_its_configuration_apply(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo.write({".continuity.toml": '[rules]\nDL104 = "warning"\n'})
    monkeypatch.chdir(repo.path / "src")
    for args in (
        ("check", f"../{NAME}"),
        ("check", "--all", "--root", ".."),
        ("check", ".."),
        ("check", "--all"),  # all of the repository, as from the top
    ):
        code, found = report(capsys, *args)
        assert code == 0, args  # DL104 is a warning by the top's configuration
        paths = {(f["rule"], f["path"], f["severity"]) for f in found["findings"]}  # type: ignore[union-attr,index]
        assert paths == {("DL104", NAME, "warning")}, args


def test_root_below_the_top_reports_paths_from_the_top(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(repo.path)
    code, out, _ = run(capsys, "check", "--all", "--root", ".deltalayer", "--format", "sarif")
    assert code == 1
    (result,) = json.loads(out)["runs"][0]["results"]
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == NAME
    assert location["region"]["startLine"] == 1
    code, out, _ = run(capsys, "check", "--all", "--root", ".deltalayer", "--format", "github")
    assert f"file={NAME}," in out


def test_sarif_results_always_have_a_region(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo.path / "PROJECT.md").unlink()  # DL131: a finding with no line
    monkeypatch.chdir(repo.path)
    _, out, _ = run(capsys, "check", "--all", "--format", "sarif")
    results = json.loads(out)["runs"][0]["results"]
    assert {r["ruleId"] for r in results} == {"DL104", "DL131"}
    for result in results:
        assert result["locations"][0]["physicalLocation"]["region"]["startLine"] >= 1


def test_a_file_no_family_claims_is_named(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(repo.path)
    code, out, _ = run(capsys, "check", "src/app.py")
    assert code == 0
    assert out.splitlines() == [
        "not checked, no family claims them: src/app.py",
        "0 files checked: no problems",
    ]


def test_all_that_finds_nothing_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_tree(tmp_path, {"docs/readme.txt": "x"})
    code, out, err = run(capsys, "check", "--all", "--root", str(tmp_path / "docs"))
    assert code == 0
    assert out == "0 files checked: no problems\n"
    assert "no continuity file found under" in err


def test_a_path_outside_the_repository_is_refused(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    write_tree(tmp_path / "elsewhere", {NAME: BAD})
    monkeypatch.chdir(repo.path)
    code, _, err = run(capsys, "check", str(tmp_path / "elsewhere" / NAME))
    assert code == 2
    assert "outside the repository" in err


def _stdin(cwd: Path, data: bytes, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "continuity_checks", "check", *args],
        input=data,
        cwd=cwd,
        capture_output=True,
        check=False,
    )


def test_stdin_needs_a_name_and_is_then_checked(repo: GitRepo) -> None:
    refused = _stdin(repo.path, BAD.encode(), "-")
    assert refused.returncode == 2 and b"--stdin-filename" in refused.stderr
    checked = _stdin(repo.path, BAD.encode(), "-", "--stdin-filename", NAME)
    assert checked.returncode == 1
    assert f"{NAME}:1:".encode() in checked.stdout and b"DL104" in checked.stdout
    clean = _stdin(repo.path, GOOD.encode(), "-", "--stdin-filename", NAME)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert clean.stdout.endswith(b"1 file checked: no problems\n")


@pytest.mark.parametrize(
    "args", [("rules", "--family", "bogus"), ("check", "--family", "captain", "x")]
)
def test_unknown_families_are_refused(
    capsys: pytest.CaptureFixture[str], args: tuple[str, ...]
) -> None:
    code, _, err = run(capsys, *args)
    assert code == 2
    assert "deltas" in err  # the choices that exist


def test_a_family_option_error_names_its_file(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo.write({"pyproject.toml": '[tool.continuity.deltas]\nlegacy = "loose"\n'})
    monkeypatch.chdir(repo.path / "src")
    code, _, err = run(capsys, "check", "--all")
    assert code == 2
    assert "pyproject.toml" in err and "deltas.legacy" in err and "defaults" not in err


@pytest.mark.parametrize("kind", ["fifo", "device", "large"])
def test_a_configuration_that_is_no_file_is_refused_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    import os

    target = tmp_path / "config.toml"
    if kind == "fifo":
        os.mkfifo(target)  # with no writer: reading it would block forever
    elif kind == "device":
        target = Path("/dev/zero")  # reading it would never end
    else:
        target.write_text("# " + "x" * (2 * 1024 * 1024) + "\n")
    code, _, err = run(capsys, "check", "--all", "--root", str(tmp_path), "--config", str(target))
    assert code == 2
    assert "expected a regular file" in err or "expected at most" in err


def test_hostile_input_gives_bounded_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A delta with 100,000 bad items: a bounded report that still counts and fails."""
    bad = GOOD.replace('["x"]', "[" + ",".join(["1"] * 100_000) + "]")
    legacy = "".join(f'{{"time":"x{i}","source":"h","changes":["a"]}}\n' for i in range(3000))
    write_tree(tmp_path, {**PROJECT, NAME: bad, ".deltalayer/changes.jsonl": legacy})
    code, out, _ = run(capsys, "check", "--all", "--root", str(tmp_path))
    assert code == 1
    lines = out.splitlines()
    assert len(lines) < 2 * 1000 + 10  # a finding and its hint each, at most
    assert "not shown" in lines[-1] and "max-findings" in lines[-1]
    assert len(out) < 1_000_000
    _, out, _ = run(capsys, "check", "--all", "--root", str(tmp_path), "--format", "json")
    document = json.loads(out)
    summary, shown = document["summary"], len(document["findings"])
    assert summary["errors"] > shown
    assert summary["not_shown"] == summary["errors"] + summary["warnings"] - shown


@pytest.mark.parametrize("fmt", ["json", "sarif", "text", "github"])
def test_file_names_that_are_not_utf8_give_valid_utf8_reports(tmp_path: Path, fmt: str) -> None:
    changes = tmp_path / ".deltalayer" / "changes"
    changes.mkdir(parents=True)
    (changes / os.fsdecode(b"bad\xff.json")).write_text("{}")
    result = subprocess.run(
        [sys.executable, "-m", "continuity_checks", "check", "--all", "--format", fmt],
        cwd=tmp_path, capture_output=True, check=False,
    )  # fmt: skip
    assert result.returncode == 1
    text = result.stdout.decode("utf-8")  # valid UTF-8, or this raises
    if fmt == "sarif":  # the URI names the file's own bytes, as a consumer resolves it
        results = json.loads(text)["runs"][0]["results"]
        uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results]
        assert ".deltalayer/changes/bad%FF.json" in uris
    elif fmt == "json":
        text = json.dumps(json.loads(text), ensure_ascii=False)  # the strings as read back
        assert "bad\\\\xff.json" in text
    else:
        assert "bad\\xff.json" in text


def test_escaped_keeps_every_string_valid() -> None:
    from continuity_checks.core.findings import escaped

    assert escaped("plain ü") == "plain ü"
    assert escaped(os.fsdecode(b"a\xffb")) == "a\\xffb"
    assert escaped("lone \ud800") == "lone \\ud800"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_full_disk_on_stdout_is_one_line_and_exit_2(tmp_path: Path) -> None:
    write_tree(tmp_path, {**PROJECT, NAME: BAD})
    with open("/dev/full", "wb") as full:
        result = subprocess.run(
            [sys.executable, "-m", "continuity_checks", "check", "--all", "--root", str(tmp_path)],
            stdout=full, stderr=subprocess.PIPE, check=False,
        )  # fmt: skip
    assert result.returncode == 2
    assert (
        result.stderr.decode() == "continuity: cannot write the report: No space left on device\n"
    )


def test_a_deleted_working_directory_is_one_line_and_exit_2(tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    script = f'cd "{gone}" && rmdir "{gone}" && exec "$0" -m continuity_checks check --all'
    result = subprocess.run(["sh", "-c", script, sys.executable], capture_output=True, check=False)
    assert result.returncode == 2
    assert b"the current directory no longer exists" in result.stderr
    assert b"Traceback" not in result.stderr


def test_a_directory_that_cannot_be_listed_is_a_finding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """As root every directory can be listed, so the refusal is the operating system's answer
    played back: what ``--all`` does with it is what is tested."""
    write_tree(tmp_path, {**PROJECT, NAME: GOOD, "locked/.deltalayer/changes/x.json": "{}"})
    real_scandir = os.scandir

    def scandir(path: object = ".") -> object:
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "scandir", scandir)
    code, found = report(capsys, "check", "--all", "--root", str(tmp_path))
    assert code == 1
    assert [(f["rule"], f["path"]) for f in found["findings"]] == [("CC001", "locked")]  # type: ignore[index]
