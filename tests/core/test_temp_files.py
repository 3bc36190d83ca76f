"""Where the helpers' temp files go (docs/decisions.md, "Temp files"): inside the git directory,
so that a helper killed between the write and the rename leaves nothing a real ``git add -A``
picks up, and ``check --all`` passes at once; the next holder of the same lock removes it."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from continuity_checks.core import atomic
from tests.helpers.git import GitRepo, isolate_git

POSIX_ONLY = pytest.mark.skipif(os.name == "nt", reason="POSIX signals")
T1 = "2026-09-21T00:01:00+08:00"
T2 = "2026-09-21T00:02:00+08:00"

# runs one CLI command in a process that kills itself at the named call of ``os`` (the temp file
# is complete and fsynced then, the rename or link not done): what SIGKILL at that point leaves
KILLED_AT = r"""
import os, signal, sys
from continuity_checks.cli import main
call = sys.argv[1]
def die(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)
setattr(os, call, die)
main(sys.argv[2:])
"""


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    isolate_git(monkeypatch, tmp_path / "home")
    repo = GitRepo(tmp_path / "repo")
    repo.commit("start", {"README.md": "x\n"})
    return repo


def killed_at(call: str, *args: str) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-c", KILLED_AT, call, *args], capture_output=True, env=env, timeout=60
    )
    assert done.returncode == -9, done.stderr


def left(repo: GitRepo) -> list[Path]:
    return sorted((repo.path / ".git" / atomic.TEMP_DIR).rglob("*.tmp"))


def staged_after_add_all(repo: GitRepo) -> list[str]:
    repo.git("add", "-A")
    return repo.git("diff", "--cached", "--name-only").splitlines()


def check_all(repo: GitRepo, run_json: Any) -> tuple[int, list[str]]:
    code, report = run_json("check", "--all", "--root", str(repo.path))
    return code, [f["rule"] for f in report["findings"]]


@POSIX_ONLY
def test_a_delta_update_killed_before_its_rename_leaves_nothing_git_add_sees(
    repo: GitRepo, run_json: Any
) -> None:
    root = str(repo.path)
    from continuity_checks.cli import main

    assert main(["delta", "--root", root, "start", "--source", "codex", "--started-at", T1]) == 0
    (delta,) = (repo.path / ".deltalayer" / "changes").glob("*.json")
    repo.commit("delta", {})
    before = delta.read_bytes()
    killed_at("replace", "delta", "--root", root, "update", "--conversation", delta.name,
              "--updated-at", T2, "--change", "b")  # fmt: skip
    assert delta.read_bytes() == before  # the old version
    (temp,) = left(repo)  # the killed writer's complete temp file, inside .git
    assert b'"changes":["b"]' in temp.read_bytes()
    assert not list((repo.path / ".deltalayer" / "changes").glob(".*"))
    assert staged_after_add_all(repo) == []
    assert check_all(repo, run_json) == (0, [])
    # the next holder of the lock removes it
    assert main(["delta", "--root", root, "update", "--conversation", delta.name,
                 "--updated-at", T2, "--change", "c"]) == 0  # fmt: skip
    assert left(repo) == []
    assert staged_after_add_all(repo) == [delta.relative_to(repo.path).as_posix()]


@POSIX_ONLY
def test_a_delta_start_killed_before_its_link_leaves_nothing_git_add_sees(
    repo: GitRepo, run_json: Any
) -> None:
    from continuity_checks.cli import main

    root = str(repo.path)
    assert main(["delta", "--root", root, "init"]) == 0
    repo.commit("init", {})
    killed_at("link", "delta", "--root", root, "start", "--source", "codex", "--started-at", T1)
    assert len(left(repo)) == 1
    assert list((repo.path / ".deltalayer" / "changes").iterdir()) == []
    assert staged_after_add_all(repo) == []
    assert check_all(repo, run_json) == (0, [])


@POSIX_ONLY
def test_provenance_add_and_capture_manifest_killed_leave_nothing_git_add_sees(
    repo: GitRepo, run_json: Any
) -> None:
    root = str(repo.path)
    repo.commit("data", {"evidence/a.txt": "a\n", "evidence/SHA256SUMS": ""})
    sums = repo.path / "evidence" / "SHA256SUMS"
    killed_at("replace", "provenance", "add", "--root", root, "--sums", str(sums),
              str(repo.path / "evidence" / "a.txt"))  # fmt: skip
    assert sums.read_bytes() == b""
    capture = repo.path / "turn-0001"
    capture.mkdir()
    (capture / "capture.json").write_text('{"a": 1}\n')
    repo.commit("capture", {})
    killed_at("link", "capture", "manifest", str(capture))
    assert not (capture / "manifest.json").exists()
    assert len(left(repo)) == 2
    assert [p for p in staged_after_add_all(repo) if "tmp" in p] == []
    assert not [p for p in (repo.path / "evidence").iterdir() if p.name.endswith(".tmp")]


def test_outside_a_repository_the_temp_file_goes_beside_the_target(tmp_path: Path) -> None:
    assert atomic.temp_dir(tmp_path) is None
    atomic.atomic_write(tmp_path / "a.json", b"1")
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]


def test_a_linked_worktree_uses_the_git_directory_its_git_file_names(
    repo: GitRepo, tmp_path: Path
) -> None:
    worktree = tmp_path / "wt"
    repo.git("worktree", "add", "-q", str(worktree))
    found = atomic.temp_dir(worktree / "sub" if (worktree / "sub").mkdir() is None else worktree)
    assert found is not None
    assert found.parent.parent == (repo.path / ".git" / "worktrees" / "wt").resolve()
    atomic.atomic_write(worktree / "sub" / "x.json", b"1")
    assert sorted(p.name for p in (worktree / "sub").iterdir()) == ["x.json"]


@POSIX_ONLY
def test_a_symlinked_temp_directory_is_not_followed(repo: GitRepo, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (repo.path / ".git" / atomic.TEMP_DIR).symlink_to(outside)
    assert atomic.temp_dir(repo.path) is None
    atomic.atomic_write(repo.path / "x.json", b"1")
    assert list(outside.iterdir()) == []
    assert (repo.path / "x.json").read_bytes() == b"1"


def test_a_rename_across_mounts_falls_back_to_a_temp_file_beside_the_target(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_replace, real_link = os.replace, os.link
    seen: list[Path] = []

    def replace(src: Any, dst: Any) -> None:
        seen.append(Path(src).parent)
        if ".git" in Path(src).parts:  # what a bind mount between the two answers
            raise OSError(errno.EXDEV, os.strerror(errno.EXDEV), src)
        real_replace(src, dst)

    def link(src: Any, dst: Any) -> None:
        seen.append(Path(src).parent)
        if ".git" in Path(src).parts:
            raise OSError(errno.EXDEV, os.strerror(errno.EXDEV), src)
        real_link(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    monkeypatch.setattr(os, "link", link)
    atomic.atomic_write(repo.path / "a.json", b"new")
    atomic.exclusive_create(repo.path / "b.json", b"made")
    assert (repo.path / "a.json").read_bytes() == b"new"
    assert (repo.path / "b.json").read_bytes() == b"made"
    assert [p.name for p in seen] == [seen[0].name, "repo", seen[0].name, "repo"]
    assert seen[0].parent.name == atomic.TEMP_DIR
    assert sorted(p.name for p in repo.path.iterdir() if p.name != ".git") == [
        "README.md", "a.json", "b.json",
    ]  # fmt: skip
    assert left(repo) == []


def test_the_lock_holder_sweeps_its_own_temp_directory_only(repo: GitRepo) -> None:
    mine, other = repo.path / "a.lock", repo.path / "b.lock"
    with atomic.locked(other):
        other_dir = atomic.temp_dir(repo.path, other)
    mine_dir = atomic.temp_dir(repo.path, mine)
    unlocked = atomic.temp_dir(repo.path)
    assert other_dir and mine_dir and unlocked and len({other_dir, mine_dir, unlocked}) == 3
    for directory in (mine_dir, other_dir, unlocked):
        (directory / ".0123456789ab.tmp").write_bytes(b"torn")
    fresh = unlocked / ".0123456789ab.tmp"
    old = unlocked / ".ba9876543210.tmp"
    old.write_bytes(b"torn")
    os.utime(old, (1, 1))
    with atomic.locked(mine):
        pass
    assert not (mine_dir / ".0123456789ab.tmp").exists()
    assert (other_dir / ".0123456789ab.tmp").exists()  # another lock's writer may be alive
    assert fresh.exists() and not old.exists()  # unlocked: only when stale


@POSIX_ONLY
def test_a_work_tree_whose_git_directory_is_named_by_git_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_json: Any
) -> None:
    """``GIT_DIR`` and ``GIT_WORK_TREE`` (a bare repository checked out elsewhere): no ``.git``
    above the work tree, and the temp file of a killed ``delta start`` was left in
    ``changes/``, where ``git add -A`` staged it."""
    isolate_git(monkeypatch, tmp_path / "home")
    work, gitdir = tmp_path / "work", tmp_path / "repo.git"
    work.mkdir()
    subprocess.run(["git", "init", "-q", "--bare", str(gitdir)], check=True)
    monkeypatch.setenv("GIT_DIR", str(gitdir))
    monkeypatch.setenv("GIT_WORK_TREE", str(work))
    from continuity_checks.cli import main

    root = str(work)
    assert main(["delta", "--root", root, "init"]) == 0
    killed_at("link", "delta", "--root", root, "start", "--source", "codex", "--started-at", T1)
    assert list((work / ".deltalayer" / "changes").iterdir()) == []
    assert len(list((gitdir / atomic.TEMP_DIR).rglob("*.tmp"))) == 1
    subprocess.run(["git", "add", "-A"], cwd=work, check=True)
    staged = subprocess.run(
        ["git", "diff", "--cached", "--name-only"], cwd=work, check=True, capture_output=True
    ).stdout.decode()
    assert ".tmp" not in staged and "AGENTS.md" in staged
    # the next holder of the lock removes it
    assert main(["delta", "--root", root, "start", "--source", "codex", "--started-at", T2]) == 0
    assert list((gitdir / atomic.TEMP_DIR).rglob("*.tmp")) == []
