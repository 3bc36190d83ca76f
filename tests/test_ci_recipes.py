"""The GitLab CI job of docs/ci.md, run as a runner runs it: its ``script`` in one bash with
``set -eo pipefail``, the CI_* variables of a merge request pipeline or a branch pipeline, in a
full clone of a temporary repository (``before_script``, the install, is replaced by a
``continuity`` command on PATH that runs this checkout)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import REPO
from tests.git_helpers import GitRepo, isolate_git
from tests.test_packaging import code_blocks
from tests.test_verify import A0, B0, A, B

ZEROS = "0" * 40


def gitlab_job() -> dict[str, Any]:
    text = (REPO / "docs" / "ci.md").read_text(encoding="utf-8")
    jobs = [
        yaml.safe_load(body)
        for lang, body in code_blocks(text)
        if lang == "yaml" and "GIT_DEPTH" in body
    ]
    assert len(jobs) == 1, "docs/ci.md should hold one GitLab CI job"
    (job,) = jobs[0].values()
    assert job["variables"]["GIT_DEPTH"] == "0"
    return dict(job)


@pytest.fixture
def clone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    """A full clone (origin is the server) on a branch one commit ahead of main."""
    isolate_git(monkeypatch, tmp_path / "home")
    server = GitRepo(tmp_path / "server")
    server.commit("base", {A: A0, B: B0, "README.md": "x\n"})
    server.git("checkout", "-q", "-b", "feature")
    server.commit("readme", {"README.md": "y\n"})
    server.git("checkout", "-q", "main")
    work = tmp_path / "build"
    subprocess.run(["git", "clone", "-q", str(server.path), str(work)], check=True)
    repo = GitRepo.__new__(GitRepo)
    repo.path = work
    repo.git("checkout", "-q", "feature")
    return repo


def run_job(repo: GitRepo, tmp: Path, variables: dict[str, str]) -> tuple[int, str]:
    shim = tmp / "shim"
    shim.mkdir(exist_ok=True)
    (shim / "continuity").write_text(
        f'#!/bin/sh\nexec "{sys.executable}" -m continuity_checks "$@"\n', encoding="utf-8"
    )
    (shim / "continuity").chmod(0o755)
    script = "\n".join(["set -eo pipefail", *gitlab_job()["script"]])
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("CI_")},
        "PATH": f"{shim}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")]),
        "GITLAB_CI": "true",
        "CI_COMMIT_SHA": repo.head(),
        "CI_DEFAULT_BRANCH": "main",
        **variables,
    }
    done = subprocess.run(
        ["bash", "-c", script], cwd=repo.path, env=env, capture_output=True, text=True
    )
    return done.returncode, done.stdout + done.stderr


def test_a_merge_request_pipeline(clone: GitRepo, tmp_path: Path) -> None:
    base = clone.git("rev-parse", "origin/main")
    mr = {"CI_MERGE_REQUEST_DIFF_BASE_SHA": base, "CI_COMMIT_BEFORE_SHA": ZEROS}
    assert run_job(clone, tmp_path, mr)[0] == 0
    bad = clone.commit("drop B", delete=[B])
    code, log = run_job(clone, tmp_path, mr)
    assert code == 1
    assert "DL206" in log and bad[:12] in log


def test_a_branch_pipeline_and_a_new_branch(clone: GitRepo, tmp_path: Path) -> None:
    before = clone.head()
    bad = clone.commit("drop B", delete=[B])
    code, log = run_job(clone, tmp_path, {"CI_COMMIT_BEFORE_SHA": before})
    assert (code, "DL206" in log) == (1, True)
    # a new branch: judged by what it adds to the default branch (both commits)
    code, log = run_job(clone, tmp_path, {"CI_COMMIT_BEFORE_SHA": ZEROS})
    assert (code, "DL206" in log, bad[:12] in log) == (1, True, True)


def test_the_worst_exit_code_wins(clone: GitRepo, tmp_path: Path) -> None:
    """A broken configuration is exit 2 for check; verify's findings (exit 1) do not lower it."""
    clone.commit("drop B", delete=[B])
    (clone.path / ".continuity.toml").write_text("not toml [\n", encoding="utf-8")
    before = clone.git("rev-parse", "HEAD~1")
    code, log = run_job(clone, tmp_path, {"CI_COMMIT_BEFORE_SHA": before})
    assert code == 2, log
    assert "configuration error" in log
