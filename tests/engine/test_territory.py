"""Every file in a family's territory is judged, or named with the reason it is not: files
no check reads where a family keeps its files, files of a family left out of the run, a
``capture.json`` no manifest pins, a delta one directory too deep, sums files in any case, and
the commit being made when ``check --staged`` gets no names. Real repositories, the real CLI,
real ``sha256sum`` and a real git hook."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from continuity_checks.cli import main
from tests.conftest import RunCLI, rules_of, write_tree
from tests.helpers.git import GitRepo, delta, isolate_git, path_of

NAME = "2026-09-21T16-20-00p08-00--agent.json"
PROJECT = {
    "AGENTS.md": "<!-- deltalayer-conversation-v0.2.1 -->\n## Project Continuity\n",
    "PROJECT.md": "# Project\n",
}
WS = ".dsh/project/WORKING_STATE.json"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    isolate_git(monkeypatch, tmp_path / "home")
    repo = GitRepo(tmp_path / "repo")
    repo.commit("start", {**PROJECT, path_of(NAME): delta(changes=["a"])})
    monkeypatch.chdir(repo.path)
    return repo


# --- captures -------------------------------------------------------------------------------


def test_an_unpinned_capture_is_not_counted_as_checked(repo: GitRepo, run_json: RunCLI) -> None:
    """A capture.json that no manifest names is not LoopX's: not judged, so not counted, and
    named with the reason; capture verify refuses a directory where nothing was checked."""
    repo.commit("capture", {"captures/x/capture.json": "{not json\n"})
    code, report = run_json("check", "captures/x/capture.json")
    assert (code, report["findings"], report["summary"]["files"]) == (0, [], 0)
    [note] = report["notes"]
    assert note.startswith("not checked, no manifest.json beside them, and a capture.json")
    assert note.endswith(": captures/x/capture.json")
    _, walked = run_json("check", "captures")
    assert (walked["summary"]["files"], walked["notes"]) == (0, [note])
    assert main(["capture", "verify", "captures/x"]) == 1


def test_capture_verify_names_why_nothing_was_checked(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    repo.commit("capture", {"captures/x/capture.json": "{not json\n"})
    capsys.readouterr()
    assert main(["capture", "verify", "captures/x"]) == 1
    refusal = json.loads(capsys.readouterr().out)
    assert (refusal["ok"], refusal["error_code"]) == (False, "NOTHING_CHECKED")
    assert "no manifest.json beside them, and a capture.json" in refusal["error"]


def test_a_pinned_capture_is_judged(repo: GitRepo, run_json: RunCLI) -> None:
    """A capture with a manifest beside it that names it: read, and its JSON refused."""
    repo.write({"captures/x/capture.json": '{\n  "history": []\n}\n'})
    assert main(["capture", "manifest", "captures/x"]) == 0
    repo.write({"captures/x/capture.json": "{not json\n"})
    code, report = run_json("check", "captures/x")
    assert code == 1
    assert ("CC004", "captures/x/capture.json") in {
        (f["rule"], f["path"]) for f in report["findings"]
    }
    assert report["notes"] == []


def test_a_file_of_a_decision_directory_no_check_reads(tmp_path: Path, run_json: RunCLI) -> None:
    write_tree(tmp_path, {"d/decision-ab12cd34/notes.json": "{"})
    code, report = run_json("check", "--all", "--root", str(tmp_path))
    assert (code, report["summary"]["files"]) == (0, 0)
    assert report["notes"] == [
        "not checked, in a LoopX capture directory, where no check reads them: "
        "d/decision-ab12cd34/notes.json"
    ]


# --- working state --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [".dsh/project/task_packets/T1.json", ".dsh/project/evidence/T1.deterministic-tests.json"],
)
def test_dsh_task_packets_and_evidence_are_checked(
    repo: GitRepo, run_json: RunCLI, path: str
) -> None:
    repo.write({path: "{not json\n"})
    repo.git("add", "-A")
    code, report = run_json("check", "--staged", path)
    assert (code, rules_of(report)) == (1, [("CC004", path, 1)])
    assert report["notes"] == []


def test_dsh_files_no_check_reads_are_named(tmp_path: Path, run_json: RunCLI) -> None:
    """DSH's Markdown and the user's source material carry nothing to check and are not named;
    anything else under .dsh/ that no check reads is."""
    write_tree(
        tmp_path,
        {
            ".dsh/project/FULL_SPEC.md": "# spec\n",
            ".dsh/project/source_material/brief.json": "{",
            ".dsh/notes.txt": "x",
        },
    )
    code, report = run_json("check", "--all", "--root", str(tmp_path))
    assert (code, report["summary"]["files"]) == (0, 0)
    assert report["notes"] == [
        "not checked, in .dsh/, where only DSH's JSON files, runtime files and journals are "
        "checked: .dsh/notes.txt"
    ]


# --- deltas ---------------------------------------------------------------------------------


def test_a_delta_one_directory_too_deep_is_refused_at_commit_and_in_history(
    repo: GitRepo, run_json: RunCLI
) -> None:
    deep = path_of("sub/" + NAME.replace("agent", "codex"))
    record = delta(source="codex", changes=["b"])
    repo.write({deep: record})
    repo.git("add", "-A")
    code, report = run_json("check", "--staged", deep)
    assert code == 1
    [finding] = report["findings"]
    assert (finding["rule"], finding["path"]) == ("DL114", deep)
    assert "found it in .deltalayer/changes/sub/" in finding["message"]
    assert report["notes"] == []
    sha = repo.commit("deep")
    code, history = run_json("verify", "--range", f"{sha}~1..{sha}")
    assert code == 1
    assert [(f["rule"], f["path"], f["commit"]) for f in history["findings"]] == [
        ("DL114", deep, sha)
    ]


def test_other_files_in_deltalayer_are_named(repo: GitRepo, run_json: RunCLI) -> None:
    """A file in .deltalayer/ that DeltaLayer never reads is named; its lock is not."""
    repo.write({".deltalayer/README": "notes\n", ".deltalayer/.lock": ""})
    code, report = run_json("check", "--all")
    assert code == 0
    assert report["notes"] == [
        "not checked, in .deltalayer/, where DeltaLayer reads only changes/*.json and "
        "changes.jsonl: .deltalayer/README"
    ]


# --- provenance -----------------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("sha256sum") is None, reason="needs GNU sha256sum")
@pytest.mark.parametrize("name", ["sha256sums.txt", "Sha256Sums", "SHA256SUMS.TXT"])
def test_sums_files_are_claimed_in_any_case(tmp_path: Path, run_json: RunCLI, name: str) -> None:
    root = tmp_path / "r"
    write_tree(root, {"a.txt": "hello\n", "b.txt": "bye\n"})
    listing = subprocess.run(
        ["sha256sum", "a.txt", "b.txt"], cwd=root, capture_output=True, check=True
    ).stdout
    (root / name).write_bytes(listing)
    code, report = run_json("check", str(root / name), "--root", str(root))
    assert (code, report["findings"], report["summary"]["files"]) == (0, [], 1)
    (root / "b.txt").write_text("changed\n")
    code, report = run_json("check", str(root / name), "--root", str(root))
    assert code == 1 and {f["path"] for f in report["findings"]} == {name}


def test_a_listing_that_names_no_algorithm_stays_unclaimed(
    tmp_path: Path, run_json: RunCLI
) -> None:
    write_tree(tmp_path, {"checksums.txt": "d41d8cd98f00b204e9800998ecf8427e  a\n"})
    code, report = run_json("check", str(tmp_path / "checksums.txt"), "--root", str(tmp_path))
    assert (code, report["notes"]) == (0, ["not checked, no family claims them: checksums.txt"])


# --- families left out of the run -----------------------------------------------------------


def test_files_of_a_family_not_enabled_are_named_with_the_reason(
    tmp_path: Path, run_json: RunCLI
) -> None:
    write_tree(
        tmp_path,
        {
            ".continuity.toml": 'families = ["deltas"]\n',
            "captures/x/capture.json": "{",
            "captures/x/manifest.json": "{",
        },
    )
    reason = (
        f"not checked, family captures is not enabled in {tmp_path / '.continuity.toml'} "
        '(families = ["deltas"])'
    )
    code, report = run_json("check", "--root", str(tmp_path), str(tmp_path / "captures"))
    assert (code, report["summary"]["files"]) == (0, 0)
    assert report["notes"] == [f"{reason}: captures/x/capture.json, captures/x/manifest.json"]
    code, named = run_json(
        "check", "--root", str(tmp_path), str(tmp_path / "captures/x/manifest.json")
    )
    assert named["notes"] == [f"{reason}: captures/x/manifest.json"]
    _, chosen = run_json("check", "--all", "--root", str(tmp_path), "--family", "working-state")
    assert chosen["notes"] == [
        "not checked, family captures is not enabled in this run (--family working-state): "
        "captures/x/capture.json, captures/x/manifest.json"
    ]


# --- check --staged without names -----------------------------------------------------------


def test_check_staged_without_names_checks_the_commit_being_made(
    repo: GitRepo, run_json: RunCLI
) -> None:
    """Every staged file is checked, warnings included (the errors the commit leaves were
    reported before, by the history half, with nothing counted as checked)."""
    pretty = delta(changes=["a", "b"]).replace(",", ", ")
    repo.write({WS: "{\n", "README.md": "# r\n", path_of(NAME): pretty})
    repo.git("add", "-A")
    code, report = run_json("check", "--staged")
    assert code == 1
    assert [(f["rule"], f["path"]) for f in report["findings"]] == [
        ("DL113", path_of(NAME)),
        ("CC004", WS),
    ]
    assert report["summary"]["files"] == 2
    assert report["notes"] == ["not checked, no family claims them: README.md"]


def test_a_hand_written_hook_refuses_an_unparseable_staged_state(repo: GitRepo) -> None:
    """A plain git pre-commit hook that runs `check --staged` with no names refuses the commit
    of an unparseable WORKING_STATE.json, and lets a good commit through."""
    hook = repo.path / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\nexec {sys.executable} -m continuity_checks check --staged\n")
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    repo.write({WS: "{\n"})
    repo.git("add", "-A")
    env = {**os.environ, "NO_COLOR": "1"}
    refused = subprocess.run(["git", "commit", "-q", "-m", "state"], cwd=repo.path,
                             capture_output=True, text=True, env=env, check=False)  # fmt: skip
    assert refused.returncode != 0
    said = refused.stdout + refused.stderr  # git gives a hook's output on its stderr
    assert f"{WS}:" in said and "CC004" in said and "1 file checked: 1 error" in said
    repo.git("rm", "-q", "--cached", WS)
    repo.write({"README.md": "# r\n"})
    repo.git("add", "README.md")
    accepted = subprocess.run(["git", "commit", "-q", "-m", "readme"], cwd=repo.path,
                              capture_output=True, text=True, env=env, check=False)  # fmt: skip
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
