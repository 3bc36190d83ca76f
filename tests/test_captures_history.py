"""CX2xx: published captures never change and are never deleted — on real git repositories.

History mode's engine gets its commit trees when the git layer lands; until then these tests
drive the family's ``check_commit`` exactly as the engine will: each commit's changes (from
``git diff-tree``), and both trees as core's :class:`CommitTree` snapshots over the real
repository's objects.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from continuity_checks.checks.captures.family import CapturesFamily
from continuity_checks.core.config import Config
from continuity_checks.core.family import Change, Commit, CommitContext
from continuity_checks.core.snapshot import CommitTree
from tests.captures_layout import CAP, DEC, build, edit
from tests.git_helpers import GitRepo, isolate_git


@dataclass
class GitObject:
    sha: str
    type: str
    size: int
    data: bytes | None


class Objects:
    """Objects of a real repository, read with ``git cat-file`` (the ObjectReader protocol)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def read_object(self, spec: str) -> GitObject | None:
        result = subprocess.run(
            ["git", "cat-file", "--batch"], cwd=self.path, input=spec.encode() + b"\n",
            capture_output=True, check=True,
        )  # fmt: skip
        header, _, rest = result.stdout.partition(b"\n")
        parts = header.decode().split()
        if len(parts) != 3:
            return None
        sha, kind, size = parts[0], parts[1], int(parts[2])
        return GitObject(sha, kind, size, rest[:size])


def verify(repo: GitRepo, family: CapturesFamily | None = None) -> list[tuple[str, str, str]]:
    """(rule, path, commit) of every finding over the whole history, oldest commit first."""
    family = family or CapturesFamily(Config())
    objects = Objects(repo.path)
    found = []
    for sha in repo.git("rev-list", "--reverse", "HEAD").split():
        parents = tuple(repo.git("rev-list", "--parents", "-n1", sha).split()[1:])
        raw = repo.git("diff-tree", "-r", "--root", "--no-renames", "--raw", "--no-abbrev", sha)
        changes = []
        for line in raw.splitlines():
            if not line.startswith(":"):
                continue
            meta, path = line.split("\t", 1)
            _, _, old, new, status = meta.split()
            kind = family.claims(path)
            if kind is None:
                continue

            def read(blob: str) -> bytes | None:
                obj = objects.read_object(blob)
                return None if obj is None else obj.data

            changes.append(Change(path, kind, status, None if set(old) == {"0"} else old,
                                  None if set(new) == {"0"} else new, read))  # fmt: skip
        if not changes:
            continue
        context = CommitContext(
            Commit(sha, parents, "", {}),
            changes,
            CommitTree(objects, parents[0] if parents else None, 1 << 24),
            CommitTree(objects, sha, 1 << 24),
        )
        found += [(f.rule, f.path, f.commit or "") for f in family.check_commit(context)]
    return found


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    isolate_git(monkeypatch, tmp_path / "home")
    repo = GitRepo(tmp_path / "repo")
    repo.commit("publish a capture and a decision", build())
    return repo


def test_new_observations_in_new_directories_pass(repo: GitRepo) -> None:
    files = build()
    repo.commit("a second observation", {k.replace("c1/", "c2/"): v for k, v in files.items()})
    repo.commit(
        "another reader beside the first",
        {CAP + "second.reader.json": files[CAP + "first.reader.json"]},
    )
    assert verify(repo) == []


@pytest.mark.parametrize(
    "path", [CAP + "capture.json", CAP + "manifest.json", CAP + "first.reader.json",
             DEC + "delivery.json", DEC + "projection.json", DEC + "cycle-delta.json"],
)  # fmt: skip
def test_a_rewrite_is_caught_with_its_commit(repo: GitRepo, path: str) -> None:
    text = (repo.path / path).read_text()
    sha = repo.commit("rewrite in place", {path: edit(text, "{", "{ ")})
    assert verify(repo) == [("CX201", path, sha)]


@pytest.mark.parametrize(
    "path", [CAP + "capture.json", CAP + "manifest.json", DEC + "required-context.json"]
)
def test_a_deletion_is_caught_with_its_commit(repo: GitRepo, path: str) -> None:
    sha = repo.commit("delete", delete=[path])
    assert verify(repo) == [("CX202", path, sha)]


def test_a_deleted_directory_reports_every_published_file(repo: GitRepo) -> None:
    sha = repo.commit(
        "drop the capture",
        delete=[CAP + n for n in ("capture.json", "manifest.json", "first.reader.json")],
    )
    assert sorted(verify(repo)) == [
        ("CX202", CAP + n, sha) for n in ("capture.json", "first.reader.json", "manifest.json")
    ]


def test_what_is_not_a_published_capture_may_change(repo: GitRepo) -> None:
    repo.commit("unrelated files", {"web/manifest.json": '{"name": "app"}\n', "misc/capture.json": "{}\n",
                                    "caps/c9/manifest.json": '{"name": "x"}\n'})  # fmt: skip
    repo.commit("they change", {"web/manifest.json": '{"name": "app2"}\n', "misc/capture.json": "[]\n",
                                "caps/c9/manifest.json": '{"name": "y"}\n'})  # fmt: skip
    repo.commit("and go", delete=["web/manifest.json", "misc/capture.json"])
    # a capture directory's cycle baseline and necessary view move on with the cycle
    repo.commit(
        "cycle files beside a capture",
        {CAP + "cycle-base.json": "{}\n", CAP + "required-context.json": "{}\n"},
    )
    repo.commit(
        "next cycle", {CAP + "cycle-base.json": '{"a": 1}\n', CAP + "required-context.json": "[]\n"}
    )
    assert verify(repo) == []
