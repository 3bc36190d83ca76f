"""The commit and push hooks as a user meets them: a repository with both installed by real
pre-commit (local hooks on this package: no network), a bare remote, commits by two people.
The commit hook is the early warning, the push hook the guarantee, and the docs pin what
exists."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.git import (
    CHECK_HOOK,
    LOCAL_HOOKS,
    GitRepo,
    delta,
    isolate_git,
    path_of,
    run_merged,
)

REPO = Path(__file__).resolve().parents[2]
A = path_of("2026-09-21T16-20-00p08-00--agent.json")
ALICE, BOB = "alice@example.invalid", "bob@example.invalid"

CONFIG = (
    "default_install_hook_types: [pre-commit, pre-push]\n"
    + LOCAL_HOOKS
    + CHECK_HOOK
    + f"""\
  - id: continuity-verify
    name: continuity verify
    entry: {sys.executable} -m continuity_checks verify
    language: system
    stages: [pre-push]
    always_run: true
    pass_filenames: false
    require_serial: true
"""
)


def update(minute: int) -> str:
    return delta(updated=f"2026-09-21T17:{minute:02d}:00+08:00", changes=[f"step {minute}"])


class Project:
    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        isolate_git(monkeypatch, tmp_path / "home")
        self.monkeypatch = monkeypatch
        self.remote = tmp_path / "remote.git"
        subprocess.run(["git", "init", "-q", "--bare", str(self.remote)], check=True)
        self.repo = GitRepo(tmp_path / "project")
        examples = REPO / "examples" / "deltalayer"
        self.as_(ALICE)
        self.repo.commit(
            "start",
            {
                ".pre-commit-config.yaml": CONFIG,
                "AGENTS.md": (examples / "AGENTS.md").read_text(encoding="utf-8"),
                "PROJECT.md": (examples / "PROJECT.md").read_text(encoding="utf-8"),
                A: update(0),
            },
        )
        self.repo.git("remote", "add", "origin", str(self.remote))
        self.repo.git("push", "-q", "origin", "main")
        self.run(sys.executable, "-m", "pre_commit", "install")

    def as_(self, email: str) -> None:
        self.monkeypatch.setenv("GIT_AUTHOR_EMAIL", email)
        self.monkeypatch.setenv("GIT_COMMITTER_EMAIL", email)

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        """``args`` in the project, the hooks' output (stderr) in stdout."""
        return run_merged(self.repo.path, *args)

    def commit(self, files: dict[str, str], *options: str) -> subprocess.CompletedProcess[str]:
        self.repo.write(files)
        self.repo.git("add", "-A")
        return self.run("git", "commit", "-q", *options, "-m", "change")

    def remote_tip(self) -> str:
        return subprocess.run(
            ["git", "--git-dir", str(self.remote), "rev-parse", "main"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    return Project(tmp_path, monkeypatch)


def test_another_identity_is_refused_at_commit_and_at_push(project: Project) -> None:
    """Bob's edit of Alice's delta: refused by the commit hook (DL211, staged); forced past it
    with --no-verify, refused by the push hook with the commit to rewrite, and the remote keeps
    its tip. Alice's own edit goes through both."""
    project.as_(BOB)
    refused = project.commit({A: update(1)})
    assert refused.returncode != 0
    assert "DL211" in refused.stdout and "[commit staged]" in refused.stdout, refused.stdout
    assert "git restore --staged" in refused.stdout

    forced = project.commit({A: update(1)}, "--no-verify")
    assert forced.returncode == 0, forced.stdout
    taken = project.repo.head()
    before = project.remote_tip()
    push = project.run("git", "push", "origin", "main")
    assert push.returncode != 0
    assert "DL211" in push.stdout and f"[commit {taken[:12]}]" in push.stdout, push.stdout
    assert "git rebase -i" in push.stdout
    assert project.remote_tip() == before

    project.repo.git("reset", "-q", "--hard", "origin/main")
    project.as_(ALICE)
    accepted = project.commit({A: update(2)})
    assert accepted.returncode == 0, accepted.stdout
    pushed = project.run("git", "push", "-q", "origin", "main")
    assert pushed.returncode == 0, pushed.stdout
    assert project.remote_tip() == project.repo.head()


def test_warnings_show_on_a_passing_commit_with_verbose(project: Project) -> None:
    """A pretty-printed delta is a warning (DL113): the commit passes, and with `verbose: true`
    (as the README's configuration has it) pre-commit shows the warning."""
    pretty = update(3).replace(",", ", ")
    passed = project.commit({A: pretty})
    assert passed.returncode == 0, passed.stdout
    assert "DL113" in passed.stdout and "1 warning" in passed.stdout, passed.stdout


def test_the_docs_pin_a_commit_not_a_missing_tag() -> None:
    """No tag is released yet: the README pins a commit id (`rev:` of 40 hex digits) and says
    how to move it (`pre-commit autoupdate`), and no page names `v0.1.0`."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    revs = re.findall(r"^\s*rev:\s*(\S+)", readme, re.MULTILINE)
    assert revs and all(re.fullmatch(r"[0-9a-f]{40}", rev) for rev in revs), revs
    assert "pre-commit autoupdate" in readme
    assert "verbose: true" in readme
    for page in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        assert "v0.1.0" not in page.read_text(encoding="utf-8"), page
