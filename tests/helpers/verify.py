"""The history ``continuity verify`` is tried on in tests/engine/test_verify*.py: three
conversations' deltas and legacy history in a base commit, and how a report is read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RunCLI
from tests.helpers.conversations import A0, B0, C0, LEGACY0, A, B, C
from tests.helpers.git import LEGACY, GitRepo, isolate_git, path_of

A_FROZEN = path_of("2026-09-21T16-20-00p08-00--agent.frozen.json")


def three_conversations(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    """A repository whose base commit (tagged ``base``) holds three conversations' deltas and
    legacy history; the working directory is ``tmp_path``."""
    isolate_git(monkeypatch, tmp_path / "home")
    monkeypatch.chdir(tmp_path)
    r = GitRepo(tmp_path / "repo")
    r.commit("base", {A: A0, B: B0, C: C0, LEGACY: LEGACY0, "README.md": "x\n"})
    r.git("tag", "base")
    return r


def verify(run_json: RunCLI, repo: GitRepo, *args: str) -> tuple[int, dict[str, Any]]:
    return run_json("verify", "--root", str(repo.path), *args)


def found(report: dict[str, Any]) -> list[tuple[str, str, str | None, int | None]]:
    return [(f["rule"], f["path"], f["commit"], f["line"]) for f in report["findings"]]


def config(tmp_path: Path, text: str) -> str:
    path = tmp_path / "continuity.toml"
    path.write_text(text, encoding="utf-8")
    return str(path)
