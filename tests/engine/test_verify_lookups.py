"""The trees ``verify`` judges a commit by answer as trees read afresh: a directory that holds a
path the commit adds or modifies is one, and a look-up in it asks git for the path alone, without
reading the directories on the way, with the same answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from continuity_checks.core.config import Config
from continuity_checks.core.git.log import Commit, LogRequest, RawChange
from continuity_checks.core.git.repository import Repository
from continuity_checks.core.snapshot import CommitTree
from continuity_checks.engine.history import Blobs, _Trees
from tests.helpers.git import GitRepo, isolate_git

LIMIT = 1 << 20
PROBES = [
    "s/d/x.json",
    "s/d/x.frozen.json",
    "s/d/y.json",
    "s/d/sub",
    "s/d/sub/z.json",
    "s/d",
    "s/e/x.json",
    "s/e",
    "s",
    "s/link/x.json",
    "s/link",
    "s/f",
    "s/f/x.json",
    "top.json",
    "mod",
    "mod/x.json",
    "s/d/mod",
]


def _history(repo: GitRepo) -> list[str]:
    """Commits that add, modify, freeze, delete, put a symlink and a file where a directory
    was, and add a submodule entry."""
    shas = [repo.commit("add", {"s/d/x.json": "1", "s/e/x.json": "2", "top.json": "3"})]
    shas.append(repo.commit("edit", {"s/d/x.json": "11"}))
    shas.append(repo.commit("twin", {"s/d/x.frozen.json": "11"}))
    shas.append(repo.commit("freeze", delete=["s/d/x.json"]))
    shas.append(repo.commit("nested", {"s/d/sub/z.json": "4", "s/d/y.json": "5"}))
    (repo.path / "s" / "link").symlink_to("d")
    shas.append(repo.commit("link", {"s/d/y.json": "55"}))
    repo.git("rm", "-q", "-r", "--", "s/e")
    repo.write({"s/f": "a file where a directory could be", "s/d/y.json": "56"})
    shas.append(repo.commit("file"))
    head = repo.head()
    repo.write({"s/d/y.json": "57"})
    repo.git("add", "s/d/y.json")
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{head},s/d/mod")
    repo.git("commit", "-q", "-m", "submodule")
    shas.append(repo.head())
    repo.git("rm", "-q", "--cached", "s/d/mod")
    (repo.path / "s" / "link").unlink()
    repo.write({"s/link/x.json": "6", "s/d/y.json": "58"})
    shas.append(repo.commit("unlink"))
    return shas


def _walk(git: Repository, shas: list[str]) -> list[tuple[Commit, list[RawChange]]]:
    """The walk of ``shas`` from the root, submodule entries included (as a run with the
    sessions family, the default, sees them)."""
    walked = list(git.walk(None, shas[-1], request=LogRequest(gitlinks=True)))
    assert [commit.sha for commit, _ in walked] == shas
    return walked


def test_the_walk_s_trees_answer_as_trees_read_afresh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    isolate_git(monkeypatch, tmp_path / "home")
    repo = GitRepo(tmp_path / "repo")
    shas = _history(repo)
    with Repository(repo.path, LIMIT) as git:
        trees = _Trees(git, Config().max_file_bytes)
        walked = _walk(git, shas)
        for commit, changes in walked:
            parent = commit.parents[0] if commit.parents else None
            before, after = trees.of(commit, changes)
            # existence first: a directory read for another question would answer it instead
            for path in PROBES:
                fresh = CommitTree(git, commit.sha, LIMIT).exists(path)
                assert after.exists(path) == fresh, (commit.sha, path)
                fresh = CommitTree(git, parent, LIMIT).exists(path)
                assert before.exists(path) == fresh, (commit.sha, path)
            for path in PROBES:
                assert after.is_dir(path) == CommitTree(git, commit.sha, LIMIT).is_dir(path)


def test_the_parent_s_tree_answers_for_its_directories_as_read_afresh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At a commit that adds a path, the parent's tree takes what the walk knew of the
    directories holding it there: each answers ``is_dir`` as a tree read afresh, and one the
    walk knew is answered without a read."""
    isolate_git(monkeypatch, tmp_path / "home")
    repo = GitRepo(tmp_path / "repo")
    shas = _history(repo)
    with Repository(repo.path, LIMIT) as git:
        trees = _Trees(git, Config().max_file_bytes)
        walked = _walk(git, shas)
        taken = 0
        for commit, changes in walked:
            parent = commit.parents[0] if commit.parents else None
            before, _ = trees.of(commit, changes)
            known = list(before._dirs)
            for path in known:
                assert before.is_dir(path) == CommitTree(git, parent, LIMIT).is_dir(path), path
            assert not before._trees  # answered without a read
            taken += bool(known)
            for path in PROBES:
                assert before.is_dir(path) == CommitTree(git, parent, LIMIT).is_dir(path), path
        assert taken >= 2


def test_a_look_up_beside_a_changed_path_reads_no_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A delta's twin, looked up where the commit adds the delta: one question to git, no tree
    of the directories on the way read."""
    isolate_git(monkeypatch, tmp_path / "home")
    repo = GitRepo(tmp_path / "repo")
    repo.commit("first", {"s/d/a.json": "1", "s/d/a.frozen.json": "1"})
    added = repo.commit("add", {"s/d/b.json": "2"})
    with Repository(repo.path, LIMIT) as git:
        [(commit, changes)] = list(git.walk(None, added))[1:]
        _, after = _Trees(git, LIMIT).of(commit, changes)
        assert after.exists("s/d/a.frozen.json") and not after.exists("s/d/b.frozen.json")
        assert after.is_dir("s/d") and after.is_dir("s")
        assert not after._trees  # no directory read


def test_the_walk_s_blobs_answer_as_the_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The blobs the walk keeps from its last reads are the repository's bytes, past the number
    kept; a blob over the size limit is never kept, and is reported once, however often read."""
    isolate_git(monkeypatch, tmp_path / "home")
    repo = GitRepo(tmp_path / "repo")
    files = {f"f{i}.json": f"{i}" * (i + 1) for i in range(2 * Blobs.KEPT)}
    head = repo.commit("files", {**files, "big.json": "x" * 64})
    with Repository(repo.path, 32) as git:
        [(commit, changes)] = list(git.walk(None, head))
        blobs = Blobs(git, 32)
        ids = {c.path: c.new_blob for c in changes}
        for _ in range(2):
            for path, text in files.items():
                assert blobs.read(ids[path]) == text.encode()
            assert blobs.read(ids["big.json"]) is None
        [found] = blobs.oversized(changes, commit.sha)
        assert (found.rule, found.path) == ("CC008", "big.json")
        assert blobs.read(ids["big.json"]) is None and not blobs.oversized(changes, commit.sha)


def test_a_directory_the_walk_lists_answers_as_trees_read_afresh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A directory where the walk looks names up at more than one commit is listed once and
    carried: every look-up answers as a tree read afresh, across names added and deleted, a
    subdirectory made and emptied, submodule entries (one whose commit git has, one it has
    not), the directory replaced by a symlink and by a file above it; and once listed, a name
    never asked before asks git nothing."""
    isolate_git(monkeypatch, tmp_path / "home")
    repo = GitRepo(tmp_path / "repo")
    shas = [repo.commit("add", {"s/d/a.json": "1", "s/e/x.json": "2"})]
    shas.append(repo.commit("more", {"s/d/b.json": "3"}))
    shas.append(repo.commit("sub", {"s/d/sub/z.json": "4", "s/d/c.json": "5"}))
    shas.append(repo.commit("unsub", {"s/d/b.json": "33"}, delete=["s/d/sub/z.json"]))
    repo.write({"s/d/c.json": "55"})
    repo.git("add", "s/d/c.json")
    for name, sha in (("mod", repo.head()), ("gone", "0123456789" * 4)):
        repo.git("update-index", "--add", "--cacheinfo", f"160000,{sha},s/d/{name}")
    repo.git("commit", "-q", "-m", "submodules")
    shas.append(repo.head())
    repo.git("rm", "-q", "-r", "--cached", "--", "s/d")
    for name in ("a.json", "b.json", "c.json"):
        (repo.path / "s" / "d" / name).unlink()
    (repo.path / "s" / "d").rmdir()
    (repo.path / "s" / "d").symlink_to("e")
    shas.append(repo.commit("link"))
    (repo.path / "s" / "d").unlink()
    shas.append(repo.commit("back", {"s/d/a.json": "6"}))
    shas.append(repo.commit("again", {"s/d/f.json": "7"}))
    repo.git("rm", "-q", "-r", "--", "s")
    repo.write({"s": "a file above the directory"})
    shas.append(repo.commit("file"))
    repo.git("rm", "-q", "--", "s")
    shas.append(repo.commit("dirs", {"s/d/g.json": "8"}))
    shas.append(repo.commit("last", {"s/d/h.json": "9"}))
    names = [f"{n}.json" for n in "abcfghz"] + ["sub", "sub/z.json", "mod", "gone"]
    with Repository(repo.path, LIMIT) as git:
        trees = _Trees(git, LIMIT)
        walked = _walk(git, shas)
        listed = 0
        for step, (commit, changes) in enumerate(walked):
            _, after = trees.of(commit, changes)
            probes = [f"s/d/{n}" for n in names] + [f"s/d/twin-{step}.json", "s/e/x.json"]
            for path in probes:
                fresh = CommitTree(git, commit.sha, LIMIT).exists(path)
                assert after.exists(path) == fresh, (step, path)
            listed += "s/d" in trees.known.listings
        assert listed >= 5
        assert "s/d" in trees.known.listings
        asked: list[str] = []
        real = git.read_object

        def read_object(spec: str) -> object:
            asked.append(spec)
            return real(spec)

        monkeypatch.setattr(git, "read_object", read_object)
        assert not after.exists("s/d/never-asked.json") and after.exists("s/d/h.json")
        assert asked == []
        monkeypatch.undo()
        # a walk that goes on at a commit that is not the child of the last takes no listing
        commit, changes = walked[2]
        _, after = trees.of(commit, changes)
        for path in [f"s/d/{n}" for n in names]:
            assert after.exists(path) == CommitTree(git, commit.sha, LIMIT).exists(path), path
