"""The GitLab CI job of docs/ci.md, run as a runner runs it: its ``script`` in one bash with
``set -eo pipefail``, the CI_* variables of a merge request pipeline or a branch pipeline, in a
full clone of a temporary repository (``before_script``, the install, is replaced by a
``continuity`` command on PATH that runs this checkout)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import REPO, RunCLI
from tests.helpers.conversations import A0, B0, A, B
from tests.helpers.git import GitRepo, delta, isolate_git
from tests.helpers.markdown import code_blocks

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


# --- a pull request as CI sees it: a test merge commit above the pull request's head --------


@pytest.fixture
def pull_request(clone: GitRepo) -> dict[str, str]:
    """The feature branch updates two deltas, each commit naming its delta (nothing wrong), and
    the CI checkout is the test merge of it into main that GitHub (``github.sha``) and a GitLab
    merged-results pipeline (``CI_COMMIT_SHA``) build, whose message names no delta."""
    clone.commit("A works", {A: delta(changes=["first"], updated="2026-09-21T16:30:00+08:00")},
                 trailers=[A])  # fmt: skip
    clone.commit("B works", {B: delta("2026-09-21T17:00:00+08:00", "2026-09-21T17:30:00+08:00",
                                      "codex")}, trailers=[B])  # fmt: skip
    head = clone.head()
    base = clone.git("rev-parse", "origin/main")
    clone.git("checkout", "-q", "--detach", base)
    clone.git("merge", "-q", "--no-ff", "-m", f"Merge {head} into {base}", head)
    return {"base": base, "head": head, "merge": clone.head()}


def test_a_merged_results_pipeline_verifies_the_merge_requests_commits(
    clone: GitRepo, tmp_path: Path, pull_request: dict[str, str]
) -> None:
    """The test merge brings two deltas' changes without trailers (DL202 at the merge): the
    merge request's own commits are what is verified, not that merge."""
    mr = {
        "CI_MERGE_REQUEST_DIFF_BASE_SHA": pull_request["base"],
        "CI_MERGE_REQUEST_SOURCE_BRANCH_SHA": pull_request["head"],
        "CI_COMMIT_SHA": pull_request["merge"],
    }
    code, log = run_job(clone, tmp_path, mr)
    assert code == 0, log
    assert "3 commits checked" in log


def test_the_pre_commit_recipe_verifies_the_pull_requests_commits(
    clone: GitRepo, pull_request: dict[str, str], run_json: RunCLI
) -> None:
    """The `pre-commit run --hook-stage manual continuity-verify` step of docs/ci.md, its
    expressions resolved as GitHub resolves them for a pull request: the hook verifies
    --from-ref..--to-ref, which must be the pull request's commits, not the test merge."""
    text = (REPO / "docs" / "ci.md").read_text(encoding="utf-8")
    (step,) = [
        line
        for lang, body in code_blocks(text)
        if lang == "yaml" and "continuity-verify" in body and "--to-ref" in body
        for line in [" ".join(body.split("--from-ref", 1)[1].split())]
    ]
    github = {
        "github.sha": pull_request["merge"],
        "github.event.pull_request.base.sha": pull_request["base"],
        "github.event.pull_request.head.sha": pull_request["head"],
    }
    resolved = re.sub(r"\$\{\{\s*([\w.]+)\s*\}\}", lambda m: github[m[1]], step)
    from_ref, to_ref = resolved.split(" --to-ref ")
    code, report = run_json(
        "verify", "--root", str(clone.path), "--range", f"{from_ref.strip()}..{to_ref.strip()}"
    )
    assert (code, report["findings"], report["summary"]["commits"]) == (0, [], 3)
