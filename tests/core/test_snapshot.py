"""core.snapshot: what a family may read, and what it is refused, in file mode and history mode."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from continuity_checks.core.snapshot import Snapshot, Unreadable, WorkTree, confine
from tests.conftest import write_tree

LIMIT = 1024


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("a/b.json", "a/b.json"),
        ("./a//b.json", "a/b.json"),
        ("a/../b.json", "b.json"),
        ("", ""),
        (".", ""),
    ],
)
def test_confine_normalises(given: str, expected: str) -> None:
    assert confine(given) == expected


@pytest.mark.parametrize(
    "given",
    ["../x", "a/../../x", "/etc/passwd", "C:/x", "a\0b", "..\\x", "a\\..\\..\\x", "\\x", "C:\\x"],
)
def test_confine_refuses_what_leaves_the_root(given: str) -> None:
    """Also where a backslash would climb out on Windows, where it separates."""
    refused = confine(given)
    assert isinstance(refused, Unreadable)
    assert refused.rule.id == "CC010"


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("a\\b", "a\\b"),
        ("back\\\\slash", "back\\\\slash"),
        ("d/a\\..\\b", "d/a\\..\\b"),
        ("./x\\", "x\\"),
    ],
)
def test_a_backslash_is_a_character_of_a_name(given: str, expected: str) -> None:
    """As for git and GNU sha256sum: a file may be named ``a\\b`` (it was CC010)."""
    assert confine(given) == expected


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, WorkTree]:
    root = tmp_path / "root"
    write_tree(root, {"a/one.json": "1", "a/two.json": "22", "big.bin": b"x" * (LIMIT + 1)})
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.json").write_text("secret")
    return root, WorkTree(root, LIMIT)


def test_reads_lists_sizes_and_hashes(tree: tuple[Path, WorkTree]) -> None:
    _, snap = tree
    assert snap.read("a/one.json") == b"1"
    assert snap.read("./a/../a/two.json") == b"22"
    assert snap.list("a") == ["one.json", "two.json"]
    assert snap.list("") == ["a", "big.bin"]
    assert snap.size("a/two.json") == 2
    digest = snap.sha256("a/two.json")
    assert not isinstance(digest, Unreadable)
    assert digest.hex == hashlib.sha256(b"22").hexdigest()
    assert snap.exists("a") and snap.exists("a/one.json") and not snap.exists("a/three.json")
    assert snap.is_dir("a") and not snap.is_dir("a/one.json")


def _refused(result: object, rule: str) -> Unreadable:
    assert isinstance(result, Unreadable), result
    assert result.rule.id == rule
    return result


def test_limits_and_missing_files(tree: tuple[Path, WorkTree]) -> None:
    _, snap = tree
    _refused(snap.read("big.bin"), "CC008")
    _refused(snap.sha256("big.bin"), "CC008")
    _refused(snap.read("a/none.json"), "CC001")
    _refused(snap.read("a"), "CC001")
    _refused(snap.list("a/one.json"), "CC001")
    _refused(snap.read("../outside/secret.json"), "CC010")


def test_never_outside_the_root(tree: tuple[Path, WorkTree], tmp_path: Path) -> None:
    root, snap = tree
    os.symlink(tmp_path / "outside", root / "linked-dir")
    os.symlink(tmp_path / "outside" / "secret.json", root / "a" / "linked.json")
    os.symlink("one.json", root / "a" / "inside.json")
    os.symlink("loop.json", root / "a" / "loop.json")
    for method in ("read", "sha256", "size"):
        for path in ("linked-dir/secret.json", "a/linked.json", "a/loop.json"):
            refused = _refused(getattr(snap, method)(path), "CC001")
            assert "secret" not in refused.message
    _refused(snap.list("linked-dir"), "CC001")
    assert not snap.is_dir("linked-dir")
    assert snap.read("a/inside.json") == b"1"  # a symlink that stays inside is followed


def test_a_fifo_never_blocks(tree: tuple[Path, WorkTree]) -> None:
    root, snap = tree
    os.mkfifo(root / "a" / "fifo.json")
    _refused(snap.read("a/fifo.json"), "CC001")
    _refused(snap.sha256("a/fifo.json"), "CC001")
    _refused(snap.size("a/fifo.json"), "CC001")


def test_unreadable_is_reported_where_it_was_named() -> None:
    refused = confine("../x")
    assert isinstance(refused, Unreadable)
    here = refused.finding("manifest.json", pointer="/files/0")
    assert (here.path, here.pointer, here.rule) == ("manifest.json", "/files/0", "CC010")
    assert here.message.startswith("../x: ")
    assert refused.finding().path == "../x"


def test_both_snapshots_are_snapshots() -> None:
    from continuity_checks.core.snapshot import CommitTree

    assert issubclass(WorkTree, Snapshot) and issubclass(CommitTree, Snapshot)


def test_resolve_follows_symlinks_inside_and_refuses_outside(
    tree: tuple[Path, WorkTree], tmp_path: Path
) -> None:
    root, snap = tree
    os.symlink("one.json", root / "a" / "alias.json")
    os.symlink("a", root / "b")
    os.symlink(tmp_path / "outside", root / "out")
    assert snap.resolve("a/alias.json") == "a/one.json"
    assert snap.resolve("b/two.json") == "a/two.json"
    assert snap.resolve("a/one.json") == "a/one.json"
    _refused(snap.resolve("out/secret.json"), "CC001")
    _refused(snap.resolve("a/none.json"), "CC001")


def test_find_gives_the_same_paths_from_a_commit_and_from_the_work_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CommitTree.find skips the directories whose tree object cannot hold a wanted name
    without parsing them; it must find what the plain walk (Snapshot.find) finds, in a commit
    and in the work tree: nested listings, names that only end like one, symlinks and
    submodule-like skips; a name in another case than the ending's too."""
    from continuity_checks.core.git.repository import Repository
    from continuity_checks.core.snapshot import CommitTree
    from tests.helpers.git import GitRepo, isolate_git

    isolate_git(monkeypatch, tmp_path / "home")
    repo = GitRepo(tmp_path / "repo")
    files = {f"many/{n:03d}.json": "{}" for n in range(200)}
    files |= {
        "SHA256SUMS": "",
        "a/b/c/x.sha256": "",
        "a/b/notSHA256SUMS": "",
        "a/plain.txt": "",
        "a/b/deeper/none.json": "",
        "node_modules/SHA256SUMS": "",
        "odd/40000 name.sha256": "",
        "many/Sha256Sums": "",  # any case, in a directory of no other wanted name
    }
    repo.write(files)
    os.symlink("a/b", repo.path / "link")
    os.symlink("SHA256SUMS", repo.path / "alias.sha256")
    sha = repo.commit("files")
    work = WorkTree(repo.path, 1 << 20)
    skip = frozenset({"node_modules", ".git"})
    with Repository(repo.path, 1 << 20) as git:
        commit = CommitTree(git, sha, 1 << 20)
        for endings in ((".sha256", "SHA256SUMS"), None):
            walked = sorted(Snapshot.find(commit, skip, endings))
            assert sorted(commit.find(skip, endings)) == walked
            assert sorted(work.find(skip, endings)) == walked
        assert sorted(commit.find(skip, (".sha256", "SHA256SUMS"))) == [
            "SHA256SUMS",
            "a/b/c/x.sha256",
            "a/b/notSHA256SUMS",
            "alias.sha256",
            "many/Sha256Sums",
            "odd/40000 name.sha256",
        ]
        assert list(CommitTree(git, None, 1 << 20).find(skip, None)) == []


def test_answers_carried_from_commit_to_commit_are_a_fresh_trees(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a walk carries from a commit's tree to its child's (what exists, which blob a path
    names, which paths are directories), and what a commit's tree and its parent's share,
    answer as a tree read afresh does, across additions,
    deletions, a directory that empties, and a symlink put in a directory's place and taken
    out."""
    from continuity_checks.core.git.repository import Repository
    from continuity_checks.core.lookups import Alike, Known
    from continuity_checks.core.snapshot import CommitTree
    from tests.helpers.git import GitRepo, isolate_git

    isolate_git(monkeypatch, tmp_path / "home")
    repo = GitRepo(tmp_path / "repo")
    other = repo.path / "other"
    steps: list[tuple[str, object]] = [
        ("add", {"d/x.json": "1", "d/y.json": "2", "other/z.json": "3"}),
        ("edit", {"d/x.json": "11"}),
        ("empty d", ["d/x.json", "d/y.json"]),
        ("link d", "other"),
        ("unlink d", {"d/x.json": "4"}),
    ]
    shas = []
    for subject, change in steps:
        if isinstance(change, dict):
            if (repo.path / "d").is_symlink():
                (repo.path / "d").unlink()
            repo.write(change)
        elif isinstance(change, list):
            for name in change:
                (repo.path / name).unlink()
        else:
            (repo.path / "d").rmdir()  # left empty by the commit before
            (repo.path / "d").symlink_to(str(change))
        if subject == "add":  # a file read through a symlink changes with what it leads to
            (repo.path / "alias.json").symlink_to("d/x.json")
            (repo.path / "alias").symlink_to("d")
        shas.append(repo.commit(subject))
    probes = ["d", "d/x.json", "d/y.json", "d/z.json", "other/z.json", "alias.json", "alias/x.json"]
    with Repository(repo.path, 1 << 20) as git:
        known = Known()
        parent = None
        for sha in shas:
            changes = [(c.path, c.old_mode, c.new_mode) for c in _changes(git, parent, sha)]
            carried = CommitTree(git, sha, 1 << 20, known.after(sha, parent, changes))
            fresh = CommitTree(git, sha, 1 << 20)
            for _ in range(2):  # asked twice: the second answer is the carried one
                for path in probes:
                    assert carried.exists(path) == fresh.exists(path), (sha, path)
                    assert carried.is_dir(path) == fresh.is_dir(path), (sha, path)
                    assert carried.read(path) == fresh.read(path), (sha, path)
            # a commit's tree and its parent's share what the commit leaves alone, whichever
            # is asked first
            truth = (CommitTree(git, parent, 1 << 20), fresh)
            for order in (1, -1):
                alike = Alike(changes)
                pair = [CommitTree(git, c, 1 << 20, None, alike) for c in (parent, sha)]
                for path in probes:
                    for tree, read_afresh in list(zip(pair, truth, strict=True))[::order]:
                        assert tree.exists(path) == read_afresh.exists(path), (sha, path)
            parent = sha
        assert other.is_dir()


def _changes(git: object, parent: str | None, sha: str) -> list:  # type: ignore[type-arg]
    from continuity_checks.core.git.repository import Repository

    assert isinstance(git, Repository)
    base = parent if parent is not None else None
    return next(changes for commit, changes in git.walk(base, sha) if commit.sha == sha)


def test_the_commit_being_made_answers_from_the_index_as_its_tree_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a directory whose tree object is large, the commit hook asks the index whether a path
    exists instead of making git inflate the tree: every answer is the written tree's, for a
    file, a missing name, a directory, a symlink, a submodule, a staged file and an
    intent-to-add file (which the written tree leaves out)."""
    from continuity_checks.core.git.repository import Repository
    from continuity_checks.core.snapshot import CommitTree
    from tests.helpers.git import GitRepo, isolate_git

    isolate_git(monkeypatch, tmp_path / "home")
    repo = GitRepo(tmp_path / "repo")
    repo.write({f"big/{n:05d}-a-name-of-some-length.json": "" for n in range(2000)})
    repo.write({"big/sub/x": "1", "small/y": "2"})
    os.symlink("00001-a-name-of-some-length.json", repo.path / "big/link")
    sha = repo.commit("big")
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{sha},big/module")
    repo.write({"big/added-later.json": "x", "big/intended.json": "y"})
    repo.git("add", "big/added-later.json")
    repo.git("add", "-N", "big/intended.json")
    probes = [
        "big/00001-a-name-of-some-length.json", "big/missing.json", "big/sub", "big/sub/x",
        "big/link", "big/module", "big/added-later.json", "big/intended.json", "small/y",
        "small/none", "big", "nothing/at/all",
    ]  # fmt: skip
    with Repository(repo.path, 1 << 20) as git:
        written = git.write_tree()
        plain = CommitTree(git, written, 1 << 20)

        def from_index(path: str) -> bool | None:
            return git.index_has(path, written)

        indexed = CommitTree(git, written, 1 << 20, None, None, from_index)
        for path in probes:
            assert indexed.exists(path) == plain.exists(path), path
        assert from_index("big/missing.json") is False  # the index answered, not the tree
        assert from_index("big/intended.json") is None  # an empty blob: the tree answers
        assert from_index("small/y") is None  # a small directory: the tree answers
