"""Real temporary git repositories for history-mode tests: no global git configuration used."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

IDENTITY = ("-c", "user.name=Test Agent", "-c", "user.email=agent@example.invalid")
CHANGES = ".deltalayer/changes"
LEGACY = ".deltalayer/changes.jsonl"
#: The start of a .pre-commit-config.yaml of local hooks, and the commit hook as the README
#: gives it, run by this interpreter (no network): what tests with real pre-commit install.
LOCAL_HOOKS = "repos:\n- repo: local\n  hooks:\n"
CHECK_HOOK = f"""\
  - id: continuity-check
    name: continuity check
    entry: {sys.executable} -m continuity_checks check --staged
    language: system
    always_run: true
    require_serial: true
    verbose: true
"""


def isolate_git(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    """Keep the machine's git configuration and any hook environment out of the tests."""
    home.mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / "gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for name in (
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_COMMITTER_NAME",
        "GIT_COMMITTER_EMAIL",
    ):
        monkeypatch.setenv(name, "Test Agent" if name.endswith("NAME") else "agent@example.invalid")
    for name in list(os.environ):
        if name.startswith("PRE_COMMIT") or name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
            monkeypatch.delenv(name, raising=False)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    """An empty repository, the working directory of the test (a module may define its own)."""
    isolate_git(monkeypatch, tmp_path / "home")
    made = GitRepo(tmp_path / "repo")
    monkeypatch.chdir(made.path)
    return made


def run_merged(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``args`` in ``cwd``, stderr merged into stdout (git writes its hooks' output on stderr)."""
    return subprocess.run(
        args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False
    )


def delta(
    started: str = "2026-09-21T16:20:00+08:00",
    updated: str | None = None,
    source: str = "agent",
    changes: Iterable[str] = (),
    **extra: object,
) -> str:
    """A Conversation Delta as the prototype writes it: one compact line and a newline."""
    record: dict[str, object] = {
        "started_at": started,
        "updated_at": updated or started,
        "source": source,
        "changes": list(changes),
        **extra,
    }
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


def path_of(name: str) -> str:
    return f"{CHANGES}/{name}"


class GitRepo:
    """A work tree with helpers to write files and make commits."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q")
        self.git("symbolic-ref", "HEAD", "refs/heads/main")

    def git(self, *args: str) -> str:
        result = subprocess.run(
            ["git", *IDENTITY, "-c", "commit.gpgsign=false", *args],
            cwd=self.path,
            check=True,
            capture_output=True,
        )
        return result.stdout.decode("utf-8", "replace").strip()

    def write(self, files: Mapping[str, str | bytes]) -> None:
        for rel, content in files.items():
            target = self.path / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)

    def commit(
        self,
        subject: str,
        files: Mapping[str, str | bytes] | None = None,
        *,
        delete: Iterable[str] = (),
        trailers: Iterable[str] = (),
    ) -> str:
        """Write ``files``, delete ``delete``, commit with ``Continuity-Delta`` trailers."""
        self.write(files or {})
        for rel in delete:
            self.git("rm", "-q", "--", rel)
        self.git("add", "-A")
        message = subject
        lines = [f"Continuity-Delta: {t}" for t in trailers]
        if lines:
            message += "\n\n" + "\n".join(lines)
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.head()

    def head(self) -> str:
        return self.git("rev-parse", "HEAD")
