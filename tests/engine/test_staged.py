"""The commit hook applies the history rules to the commit being made (``check --staged``):
what is staged against HEAD, so that a frozen edit, a takeover or a deletion is caught while the
fix is one ``git restore --staged`` away. Real repositories, the real CLI, and real pre-commit."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from continuity_checks.cli import main
from tests.helpers.git import GitRepo, delta, isolate_git, path_of

NAME = "2026-09-21T16-20-00p08-00--agent.json"
FROZEN = "2026-09-20T10-00-00p08-00--codex.frozen.json"
PROJECT = {
    "AGENTS.md": "<!-- deltalayer-conversation-v0.2.1 -->\n## Project Continuity\n",
    "PROJECT.md": "# Project\n",
}


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    isolate_git(monkeypatch, tmp_path / "home")
    repo = GitRepo(tmp_path / "repo")
    repo.commit(
        "start",
        {
            **PROJECT,
            path_of(NAME): delta(changes=["a"]),
            path_of(FROZEN): delta("2026-09-20T10:00:00+08:00", source="codex"),
        },
    )
    monkeypatch.chdir(repo.path)
    return repo


def staged(capsys: pytest.CaptureFixture[str], *paths: str) -> tuple[int, list[dict[str, object]]]:
    capsys.readouterr()
    code = main(["check", "--staged", *paths, "--format", "json"])
    return code, json.loads(capsys.readouterr().out)["findings"]


def test_a_staged_edit_of_a_frozen_delta(repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    repo.write({path_of(FROZEN): delta("2026-09-20T10:00:00+08:00", source="codex", changes=["x"])})
    repo.git("add", "-A")
    code, findings = staged(capsys, path_of(FROZEN))
    assert code == 1
    [finding] = findings
    assert (finding["rule"], finding["path"], finding["commit"]) == (
        "DL207",
        path_of(FROZEN),
        "staged",
    )
    assert f"git restore --staged -- {path_of(FROZEN)}" in str(finding["hint"])
    assert "rebase" not in str(finding["hint"])


def test_a_staged_deletion_is_caught_with_no_path_given(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    repo.git("rm", "-q", path_of(NAME))
    code, findings = staged(capsys)  # pre-commit passes no name for a deleted file
    assert code == 1
    assert [(f["rule"], f["path"]) for f in findings] == [("DL206", path_of(NAME))]


def test_identity_and_time_going_back(repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    repo.write({path_of(NAME): delta(source="other", updated="2026-09-21T16:00:00+08:00")})
    repo.git("add", "-A")
    code, findings = staged(capsys, path_of(NAME))
    assert code == 1
    assert {f["rule"] for f in findings} >= {"DL204", "DL205"}


def test_a_clean_change_passes_and_nothing_staged_passes(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    assert staged(capsys) == (0, [])
    repo.write({path_of(NAME): delta(updated="2026-09-21T17:00:00+08:00", changes=["a", "b"])})
    repo.git("add", "-A")
    assert staged(capsys, path_of(NAME)) == (0, [])


def test_before_the_first_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    isolate_git(monkeypatch, tmp_path / "home")
    repo = GitRepo(tmp_path / "fresh")
    repo.write({**PROJECT, path_of(NAME): delta(changes=["a"])})
    repo.git("add", "-A")
    monkeypatch.chdir(repo.path)
    assert staged(capsys, path_of(NAME)) == (0, [])


def test_trailer_mode_waits_for_the_message(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    repo.write({".continuity.toml": '[deltas]\nownership = "trailer"\n'})
    repo.write({path_of(NAME): delta(updated="2026-09-21T17:00:00+08:00", changes=["a", "b"])})
    repo.git("add", "-A")
    assert staged(capsys, path_of(NAME)) == (0, [])


def test_outside_a_repository_is_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    isolate_git(monkeypatch, tmp_path / "home")
    (tmp_path / "plain").mkdir()
    monkeypatch.chdir(tmp_path / "plain")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    assert main(["check", "--staged"]) == 2
    assert "not a git repository" in capsys.readouterr().err


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_the_real_commit_hook_refuses_the_commit(repo: GitRepo) -> None:
    """pre-commit with this package's hook entry (as a local hook: no network) refuses a commit
    that edits a frozen delta, and one that only deletes a delta."""
    repo.write(
        {
            ".pre-commit-config.yaml": (
                "repos:\n- repo: local\n  hooks:\n  - id: continuity-check\n"
                "    name: continuity check\n"
                f"    entry: {sys.executable} -m continuity_checks check --staged\n"
                "    language: system\n    always_run: true\n    require_serial: true\n"
            )
        }
    )
    repo.commit("hooks", {})
    subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=repo.path, check=True,
                   capture_output=True)  # fmt: skip

    def commit() -> subprocess.CompletedProcess[str]:
        repo.git("add", "-A")
        return subprocess.run(["git", "commit", "-q", "-m", "change"], cwd=repo.path,
                              capture_output=True, text=True, check=False)  # fmt: skip

    repo.write({path_of(FROZEN): delta("2026-09-20T10:00:00+08:00", source="codex", changes=["x"])})
    refused = commit()
    assert refused.returncode != 0
    assert "DL207" in refused.stdout + refused.stderr
    repo.git("checkout", "HEAD", "--", path_of(FROZEN))
    repo.git("rm", "-q", path_of(NAME))
    refused = commit()
    assert refused.returncode != 0 and "DL206" in refused.stdout + refused.stderr
    repo.git("reset", "-q", "HEAD", "--", path_of(NAME))
    repo.git("checkout", "HEAD", "--", path_of(NAME))
    repo.write({path_of(NAME): delta(updated="2026-09-21T17:00:00+08:00", changes=["a", "b"])})
    accepted = commit()
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr


def test_an_update_then_freeze_staged_together(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    """The handoff order (update, freeze, commit once) passes the commit hook; a freeze that
    rewrites who wrote the delta is still caught, as the update it carries."""
    frozen = NAME.replace(".json", ".frozen.json")
    repo.git("rm", "-q", "--", path_of(NAME))
    updated = delta(updated="2026-09-21T17:00:00+08:00", changes=["a", "b"])
    repo.write({path_of(frozen): updated})
    repo.git("add", "-A")
    assert staged(capsys, path_of(frozen)) == (0, [])
    repo.write({path_of(frozen): delta(source="mallory", changes=["a", "b"])})
    repo.git("add", "-A")
    code, findings = staged(capsys, path_of(frozen))
    assert code == 1
    # the file name no longer matches the source either (DL110, file mode)
    assert ("DL204", path_of(frozen), "/source") in [
        (f["rule"], f["path"], f["pointer"]) for f in findings
    ]


def test_a_freeze_not_committed_yet_is_told_how_to_mend_it(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    """A frozen delta whose freeze is only staged can still be mended (DL207 judges committed
    bytes): a file-mode finding on it keeps the rule's own hint, not only the advice to accept the
    finding for good with a baseline, which fits a frozen delta already committed."""
    frozen = NAME.replace(".json", ".frozen.json")
    repo.git("rm", "-q", "--", path_of(NAME))
    repo.write({path_of(frozen): delta(updated="2026-09-21T17:00:00+08:00", changes=["a", " "])})
    repo.git("add", "-A")
    code, findings = staged(capsys, path_of(frozen))
    assert code == 1
    [finding] = findings
    assert (finding["rule"], finding["path"]) == ("DL107", path_of(frozen))
    hint = str(finding["hint"])
    assert "remove the empty item" in hint, hint  # DL107's own hint: the way to mend it
    assert "once committed" in hint and "baseline" in hint, hint
