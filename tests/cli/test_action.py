"""The GitHub Action (``action.yml``), replayed in a shell as the runner would run it: its steps in
order, each ``run:`` line in bash with the step's ``env:`` (inputs substituted), the GITHUB_*
variables and an event payload file the runner provides, ``$GITHUB_OUTPUT``/``$GITHUB_ENV``
carried from step to step, each ``if:`` evaluated; a ``uses:`` step is recorded with its inputs.
On a temporary repository with a pull-request-like range (a base branch and a feature branch)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import REPO
from tests.helpers.conversations import A0, B0, A, B
from tests.helpers.git import GitRepo, isolate_git
from tests.helpers.markdown import code_blocks
from tests.helpers.sarif import assert_valid_sarif

ACTION = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
STEPS: list[dict[str, Any]] = ACTION["runs"]["steps"]
INSTALL = 'bash "$GITHUB_ACTION_PATH/action/continuity-action.sh" install'
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


@dataclass
class Job:
    """What the replay saw: each step that ran (name, exit code, output), the ``uses:`` steps
    with their resolved inputs, and the job's result."""

    ran: list[tuple[str, int, str]] = field(default_factory=list)
    uploads: list[dict[str, str]] = field(default_factory=list)
    outputs: dict[str, dict[str, str]] = field(default_factory=dict)
    failed: bool = False

    @property
    def log(self) -> str:
        return "\n".join(out for _, _, out in self.ran)


def value(expression: str, context: Mapping[str, Any]) -> str:
    """A context reference (``inputs.mode``, ``steps.run.outputs.code``, ``github.action_path``);
    a missing output is the empty string, as on the runner."""
    found: Any = context
    for part in expression.split("."):
        found = found.get(part, "") if isinstance(found, Mapping) else ""
    return str(found)


def condition(text: str, context: Mapping[str, Any]) -> bool:
    """The ``if:`` forms action.yml uses: comparisons with a quoted string, joined by ``&&``."""
    result = True
    for part in text.split("&&"):
        match = re.fullmatch(r"\s*([\w.-]+)\s*(==|!=)\s*'([^']*)'\s*", part)
        assert match, f"an if: this replay cannot evaluate: {text!r}"
        equal = value(match[1], context) == match[3]
        result = result and (equal if match[2] == "==" else not equal)
    return result


def substitute(text: str, context: Mapping[str, Any]) -> str:
    return EXPRESSION.sub(lambda m: value(m[1], context), text)


def replay(
    inputs: Mapping[str, str], env: Mapping[str, str], work: Path, tmp: Path, *, install: bool
) -> Job:
    """Run the action's steps as the runner does, in ``work`` (the workspace). Without
    ``install``, the install step is not run (it builds the package from PyPI: the slow test
    runs it) but its effect is given: the interpreter of this test run, with ``src`` on its
    path, is the one the action's steps use."""
    defaults = {name: spec.get("default", "") for name, spec in ACTION["inputs"].items()}
    unknown = set(inputs) - set(defaults)
    assert not unknown, f"not inputs of the action: {unknown}"
    context: dict[str, Any] = {
        "inputs": {**defaults, **inputs},
        "github": {"action_path": str(REPO)},
        "steps": {},
    }
    job = Job()
    job_env = dict(env)
    for number, step in enumerate(STEPS):
        if "if" in step and not condition(step["if"], context):
            continue
        if "uses" in step:
            resolved = {k: substitute(str(v), context) for k, v in step.get("with", {}).items()}
            job.uploads.append({"uses": step["uses"], **resolved})
            continue
        assert step["shell"] == "bash"
        if step["run"] == INSTALL and not install:
            job_env["CONTINUITY_PYTHON"] = sys.executable
            continue
        files = {name: tmp / f"{name.lower()}-{number}" for name in ("GITHUB_OUTPUT", "GITHUB_ENV")}
        for path in files.values():
            path.write_text("", encoding="utf-8")
        step_env = {k: substitute(str(v), context) for k, v in step.get("env", {}).items()}
        done = subprocess.run(
            ["bash", "-e", "-c", step["run"]],
            cwd=work,
            env={**job_env, **step_env, **{k: str(v) for k, v in files.items()}}
            | {"GITHUB_ACTION_PATH": str(REPO)},
            capture_output=True,
            text=True,
        )
        job.ran.append((step["name"], done.returncode, done.stdout + done.stderr))
        outputs = dict(
            line.split("=", 1) for line in files["GITHUB_OUTPUT"].read_text().splitlines()
        )
        if "id" in step:
            context["steps"][step["id"]] = {"outputs": outputs}
            job.outputs[step["id"]] = outputs
        job_env.update(line.split("=", 1) for line in files["GITHUB_ENV"].read_text().splitlines())
        if done.returncode != 0:
            job.failed = True
            break
    return job


@pytest.fixture
def pull_request(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[GitRepo, Path]:
    """A repository cloned as actions/checkout does with fetch-depth: 0 (origin is the server),
    on a pull request's head: a feature branch two commits ahead of main."""
    isolate_git(monkeypatch, tmp_path / "home")
    server = GitRepo(tmp_path / "server")
    server.commit("base", {A: A0, B: B0, "README.md": "x\n"})
    server.git("checkout", "-q", "-b", "feature")
    server.commit("readme", {"README.md": "y\n"})
    server.commit("docs", {"docs.md": "z\n"})
    server.git("checkout", "-q", "main")
    work = tmp_path / "workspace"
    subprocess.run(["git", "clone", "-q", str(server.path), str(work)], check=True)
    clone = GitRepo.__new__(GitRepo)
    clone.path = work
    clone.git("checkout", "-q", "feature")
    return clone, tmp_path


def github_env(
    tmp: Path, work: Path, event_name: str, payload: Mapping[str, Any], ref: str
) -> dict[str, str]:
    """The variables the runner sets for every step, and the event payload file."""
    event = tmp / "event.json"
    event.write_text(json.dumps(payload), encoding="utf-8")
    runner_temp = tmp / "runner-temp"
    runner_temp.mkdir(exist_ok=True)
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    return {
        **keep,
        "CI": "true",
        "GITHUB_ACTIONS": "true",
        "GITHUB_WORKSPACE": str(work),
        "GITHUB_EVENT_NAME": event_name,
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_REF": ref,
        "GITHUB_SHA": payload.get("after") or payload.get("pull_request", {}).get("head", {}).get("sha", ""),
        "RUNNER_TEMP": str(runner_temp),
        "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")]),
    }  # fmt: skip


def pr_payload(repo: GitRepo) -> dict[str, Any]:
    return {
        "action": "synchronize",
        "pull_request": {
            "base": {"ref": "main", "sha": repo.git("rev-parse", "origin/main")},
            "head": {"ref": "feature", "sha": repo.head()},
        },
        "repository": {"default_branch": "main"},
    }


def test_a_clean_pull_request_passes(pull_request: tuple[GitRepo, Path]) -> None:
    repo, tmp = pull_request
    env = github_env(tmp, repo.path, "pull_request", pr_payload(repo), "refs/pull/1/merge")
    job = replay({}, env, repo.path, tmp, install=False)
    assert not job.failed, job.log
    base = repo.git("rev-parse", "origin/main")
    assert job.outputs["run"] == {"range": f"{base}..{repo.head()}", "code": "0"}
    assert job.uploads == []
    assert "continuity check --all" in job.log and "continuity verify" in job.log


def test_a_tampered_delta_fails_the_pull_request(pull_request: tuple[GitRepo, Path]) -> None:
    """A commit of the pull request deletes a delta (DL206) and breaks another's JSON: both the
    file check and the history check fail, with annotations on the files."""
    repo, tmp = pull_request
    bad = repo.commit("tamper", {A: A0.replace("{", "[", 1)}, delete=[B])
    env = github_env(tmp, repo.path, "pull_request", pr_payload(repo), "refs/pull/1/merge")
    job = replay({}, env, repo.path, tmp, install=False)
    assert job.failed
    assert job.outputs["run"]["code"] == "1"
    assert job.ran[-1][:2] == ("continuity result", 1)  # the job fails at its last step
    assert f"::error file={A}" in job.log  # the broken delta, from check --all
    assert re.search(rf"::error file={re.escape(B)}.*DL206.*{bad[:12]}", job.log), job.log


def test_sarif_goes_to_code_scanning(pull_request: tuple[GitRepo, Path]) -> None:
    repo, tmp = pull_request
    repo.commit("drop B", delete=[B])
    env = github_env(tmp, repo.path, "pull_request", pr_payload(repo), "refs/pull/1/merge")
    job = replay({"sarif": "true", "mode": "verify"}, env, repo.path, tmp, install=False)
    assert job.failed and job.outputs["run"]["code"] == "1"
    assert [u["category"] for u in job.uploads] == ["continuity-verify"]
    assert job.uploads[0]["uses"].startswith("github/codeql-action/upload-sarif@")
    sarif = json.loads(Path(job.uploads[0]["sarif_file"]).read_text(encoding="utf-8"))
    assert_valid_sarif(sarif)  # what the CLI wrote in a subprocess, for code scanning
    assert [r["ruleId"] for r in sarif["runs"][0]["results"]] == ["DL206"]
    assert "DL206" in job.log and "1 finding(s)" in job.log


def test_a_push_and_a_new_branch(pull_request: tuple[GitRepo, Path]) -> None:
    """A push verifies before..after; a push that creates a branch (before is all zeros) is
    judged by what it adds to the default branch, not by the remote-tracking branches (the
    checkout's own branch is one of them: that would be nothing)."""
    repo, tmp = pull_request
    before = repo.head()
    repo.commit("drop B", delete=[B])
    push = {"before": before, "after": repo.head(), "repository": {"default_branch": "main"}}
    env = github_env(tmp, repo.path, "push", push, "refs/heads/feature")
    job = replay({"mode": "verify"}, env, repo.path, tmp, install=False)
    assert job.outputs["run"] == {"range": f"{before}..{repo.head()}", "code": "1"}
    created = {**push, "before": "0" * 40, "created": True}
    env = github_env(tmp, repo.path, "push", created, "refs/heads/feature")
    job = replay({"mode": "verify"}, env, repo.path, tmp, install=False)
    assert job.outputs["run"] == {"range": f"origin/main..{repo.head()}", "code": "1"}
    assert "DL206" in job.log
    deleted = {**push, "after": "0" * 40}
    env = github_env(tmp, repo.path, "push", deleted, "refs/heads/feature")
    job = replay({"mode": "verify"}, env, repo.path, tmp, install=False)
    assert not job.failed and job.outputs["run"] == {"code": "0"}
    assert "::notice title=continuity verify::the push deleted refs/heads/feature" in job.log


def test_a_force_push_is_judged_as_a_new_branch(pull_request: tuple[GitRepo, Path]) -> None:
    """After a force push the old head is on no ref the checkout fetched: before..after cannot
    be walked (and fetch-depth: 0 would not bring it back), so the branch is judged by what it
    adds to the default branch, with a notice; the default branch itself by all its history."""
    repo, tmp = pull_request
    repo.commit("drop B", delete=[B])
    gone = "5" * 40  # the previous head, rewritten away
    push = {"before": gone, "after": repo.head(), "forced": True,
            "repository": {"default_branch": "main"}}  # fmt: skip
    env = github_env(tmp, repo.path, "push", push, "refs/heads/feature")
    job = replay({"mode": "verify"}, env, repo.path, tmp, install=False)
    assert job.outputs["run"] == {"range": f"origin/main..{repo.head()}", "code": "1"}, job.log
    assert "DL206" in job.log
    assert "::notice title=continuity verify::the push rewrote refs/heads/feature" in job.log
    assert "fetch-depth" not in job.log
    env = github_env(tmp, repo.path, "push", push, "refs/heads/main")
    job = replay({"mode": "verify"}, env, repo.path, tmp, install=False)
    assert job.outputs["run"]["range"] == repo.head(), job.log


def test_a_shallow_checkout_fails_with_the_fix(
    pull_request: tuple[GitRepo, Path], tmp_path: Path
) -> None:
    """actions/checkout's default (fetch-depth: 1) gives a shallow clone: the job fails, and the
    error annotation says how to fetch the history."""
    repo, tmp = pull_request
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", "--branch", "feature",
                    f"file://{repo.path}", str(shallow)], check=True)  # fmt: skip
    payload = pr_payload(repo)
    env = github_env(tmp, shallow, "pull_request", payload, "refs/pull/1/merge")
    job = replay({"mode": "verify"}, env, shallow, tmp, install=False)
    assert job.failed
    assert job.outputs["run"]["code"] == "2"
    assert job.ran[-1][:2] == ("continuity result", 2)
    assert re.search(r"::error title=continuity verify::shallow clone.*fetch-depth: 0", job.log)


def test_an_event_without_a_range_is_an_error(pull_request: tuple[GitRepo, Path]) -> None:
    repo, tmp = pull_request
    env = github_env(tmp, repo.path, "workflow_dispatch", {}, "refs/heads/feature")
    job = replay({}, env, repo.path, tmp, install=False)
    assert job.failed and job.ran[-1][:2] == ("continuity", 2)
    assert "give the action's range input" in job.log
    given = {"range": "origin/main..HEAD", "mode": "verify"}
    job = replay(given, env, repo.path, tmp, install=False)
    assert not job.failed and job.outputs["run"]["range"] == "origin/main..HEAD"
    job = replay({"mode": "all"}, env, repo.path, tmp, install=False)
    assert job.failed and "mode: expected check, verify or both" in job.log


@pytest.mark.slow
def test_the_action_installs_its_own_version(pull_request: tuple[GitRepo, Path]) -> None:
    """The install step for real: a virtual environment with this checkout built and installed
    (pip fetches the build backend), then the run step uses it."""
    repo, tmp = pull_request
    env = github_env(tmp, repo.path, "pull_request", pr_payload(repo), "refs/pull/1/merge")
    env.pop("PYTHONPATH")
    job = replay({}, env, repo.path, tmp, install=True)
    assert not job.failed, job.log
    assert job.ran[0][0].startswith("install") and "continuity" in job.ran[0][2]
    assert job.outputs["run"]["code"] == "0"


def test_the_documented_uses_of_the_action_name_its_inputs() -> None:
    """Every workflow in docs/ci.md that uses the action passes only inputs it has, and checks
    out the whole history first."""
    text = (REPO / "docs" / "ci.md").read_text(encoding="utf-8")
    uses = 0
    for lang, body in code_blocks(text):
        if lang != "yaml" or "continuity-checks@" not in body:
            continue
        steps = yaml.safe_load(body)
        steps = steps if isinstance(steps, list) else [
            s for job in steps.get("jobs", {}).values() for s in job["steps"]
        ] or steps.get("steps", [])  # fmt: skip
        for number, step in enumerate(steps):
            if "continuity-checks@" in step.get("uses", ""):
                uses += 1
                assert set(step.get("with", {})) <= set(ACTION["inputs"]), step
                checkout = steps[number - 1]
                assert checkout["uses"].startswith("actions/checkout@"), body
                assert checkout["with"]["fetch-depth"] == 0, body
    assert uses >= 3
