"""core.git: range forms, errors, the one-pass walk, merges, blobs, odd paths."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from continuity_checks.core.git import GitError, Repository, parse_range, start_early
from tests.git_helpers import GitRepo, isolate_git


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    isolate_git(monkeypatch, tmp_path / "home")
    return GitRepo(tmp_path / "repo")


def walk(root: Path, spec: str) -> list[tuple[str, str, list[tuple[str, str]]]]:
    with Repository(root) as r:
        base, head = r.resolve_range(spec)
        return [
            (c.sha, c.subject, [(x.status, x.path) for x in changes])
            for c, changes in r.walk(base, head)
        ]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("main..HEAD", ("main", "HEAD")),
        ("HEAD", (None, "HEAD")),
        ("origin/main..", ("origin/main", "HEAD")),
        ("..HEAD", ("", "HEAD")),
        ("0" * 40 + "..abc", ("", "abc")),
        ("0" * 64 + "..abc", ("", "abc")),
        ("  HEAD~2..HEAD  ", ("HEAD~2", "HEAD")),
    ],
)
def test_range_forms(spec: str, expected: tuple[str | None, str]) -> None:
    assert parse_range(spec) == expected


@pytest.mark.parametrize("spec", ["", "a...b", "a..b..c", "--all", "a..--output=x", "a b"])
def test_malformed_ranges(spec: str) -> None:
    with pytest.raises(GitError) as caught:
        parse_range(spec)
    assert "malformed range" in caught.value.message
    assert "BASE..HEAD" in caught.value.hint


def test_walk_is_oldest_first_with_statuses(repo: GitRepo) -> None:
    first = repo.commit("one", {"a.txt": "1\n", "b.txt": "1\n"})
    second = repo.commit("two", {"a.txt": "2\n"}, delete=["b.txt"])
    commits = walk(repo.path, "HEAD")
    assert commits == [
        (first, "one", [("A", "a.txt"), ("A", "b.txt")]),
        (second, "two", [("M", "a.txt"), ("D", "b.txt")]),
    ]
    assert walk(repo.path, f"{first}..{second}") == commits[1:]
    assert walk(repo.path, f"{second}..{second}") == []


def test_blob_ids_and_contents(repo: GitRepo) -> None:
    repo.commit("one", {"a.txt": b"old\x00bytes"})
    repo.commit("two", {"a.txt": b"new\xff"})
    with Repository(repo.path) as r:
        base, head = r.resolve_range("HEAD~1..HEAD")
        [(commit, [change])] = list(r.walk(base, head))
        assert commit.parents == (base,)
        assert change.old_blob and change.new_blob
        assert r.read_blob(change.old_blob) == b"old\x00bytes"
        assert r.read_blob(change.new_blob) == b"new\xff"
        assert r.read_blob(change.new_blob) == b"new\xff"  # cached
        with pytest.raises(GitError, match="cannot read blob"):
            r.read_blob("0123456789" * 4)


def test_trailers_and_subject(repo: GitRepo) -> None:
    repo.commit("first", {"a": "1"})
    repo.git(
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "Update: a subject with ü\n\nBody text.\n\n"
        "Continuity-Delta: .deltalayer/changes/a b.json\n"
        "continuity-delta: ./x.json\n"
        "Signed-off-by: Someone <s@example.invalid>",
    )
    with Repository(repo.path) as r:
        commits = [c for c, _ in r.walk(*r.resolve_range("HEAD"))]
    assert commits[0].trailers == {}
    assert commits[1].subject == "Update: a subject with ü"
    assert commits[1].trailers == {"Continuity-Delta": (".deltalayer/changes/a b.json", "./x.json")}


def test_odd_paths_survive(repo: GitRepo) -> None:
    names = ["with space.json", "ünïcode ✓.json", "tab\there.json", "new\nline.json", '"q".json']
    repo.commit("odd", {f".deltalayer/changes/{n}": "{}\n" for n in names})
    (repo.path / "bad").mkdir()
    with open(bytes(repo.path / "bad") + b"/\xff.json", "wb") as handle:
        handle.write(b"{}")
    repo.commit("non-utf8 name")
    [(_, _, first), (_, _, second)] = walk(repo.path, "HEAD")
    assert sorted(p for _, p in first) == sorted(f".deltalayer/changes/{n}" for n in names)
    assert second == [("A", "bad/\\xff.json")]


def test_merges_report_only_what_the_merge_changed(repo: GitRepo) -> None:
    repo.commit("base", {"f": "1\n", "g": "1\n", "k": "1\n"})
    repo.git("checkout", "-q", "-b", "side")
    repo.commit("side", {"g": "1\n2\n", "only-side": "x\n"}, delete=["k"])
    repo.git("checkout", "-q", "main")
    main_tip = repo.commit("main", {"f": "1\n2\n"})
    repo.git("merge", "-q", "--no-edit", "side")
    clean = repo.head()
    repo.git("checkout", "-q", "-b", "side2", main_tip)
    repo.commit("side2", {"h": "x\n"})
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--no-commit", "side2")
    repo.write({"f": "evil\n", "new": "n\n"})
    repo.git("rm", "-q", "g")
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "evil merge")
    evil = repo.head()
    with Repository(repo.path) as r:
        commits = {c.sha: (c, ch) for c, ch in r.walk(*r.resolve_range("HEAD"))}
        assert commits[clean][1] == []
        commit, changes = commits[evil]
        assert commit.is_merge and commit.parents[0] == clean
        assert [(c.status, c.path) for c in changes] == [("M", "f"), ("D", "g"), ("A", "new")]
        old = changes[0].old_blob
        assert old is not None and r.read_blob(old) == b"1\n2\n"  # the first parent's version


def test_zero_base_means_not_on_a_remote(repo: GitRepo, tmp_path: Path) -> None:
    published = repo.commit("published", {"a": "1"})
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo.path), str(clone)], check=True)
    work = GitRepo.__new__(GitRepo)
    work.path = clone
    work.git("checkout", "-q", "-b", "feature")
    new = work.commit("new work", {"b": "2"})
    assert [c for c, _, _ in walk(clone, "0" * 40 + "..HEAD")] == [new]
    assert [c for c, _, _ in walk(clone, "..HEAD")] == [new]
    # no remote-tracking branches at all: every reachable commit
    assert [c for c, _, _ in walk(repo.path, "0" * 40 + "..HEAD")] == [published]


def test_errors(repo: GitRepo, tmp_path: Path) -> None:
    with pytest.raises(GitError, match="not a git repository"):
        Repository(tmp_path / "home")
    repo.commit("one", {"a": "1"})
    repo.commit("two", {"a": "2"})
    with Repository(repo.path) as r:
        with pytest.raises(GitError, match="unknown revision 'nope'") as caught:
            r.resolve_range("nope..HEAD")
        assert "fetch-depth: 0" in caught.value.hint
        with pytest.raises(GitError, match="unknown revision 'HEAD~9'"):
            r.resolve_range("HEAD~9")
    shallow = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", f"file://{repo.path}", str(shallow)], check=True
    )
    with Repository(shallow) as r, pytest.raises(GitError, match="shallow") as caught:
        r.resolve_range("HEAD")
    assert "fetch-depth: 0" in caught.value.hint and "--unshallow" in caught.value.hint


def test_discovery_from_a_subdirectory_and_hook_environment(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sha = repo.commit("one", {"sub/dir/a": "1"})
    other = GitRepo(tmp_path / "other")
    other.commit("other", {"x": "1"})
    monkeypatch.setenv("GIT_DIR", str(other.path / ".git"))  # as a git hook may export it
    assert [c for c, _, _ in walk(repo.path / "sub" / "dir", "HEAD")] == [sha]


def test_close_ends_the_cat_file_process(repo: GitRepo) -> None:
    repo.commit("one", {"a": "1"})
    r = Repository(repo.path)
    [(_, [change])] = list(r.walk(*r.resolve_range("HEAD")))
    assert change.new_blob is not None
    r.read_blob(change.new_blob)
    process = r._cat
    assert process is not None and process.poll() is None
    r.close()
    assert process.poll() is not None


def test_log_started_before_gitpython_is_used_when_it_matches(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = repo.commit("one", {"sub/a": "1"})
    second = repo.commit("two", {"sub/a": "2"})
    other = GitRepo(tmp_path / "other")
    other.commit("other", {"x": "1"})
    monkeypatch.setenv("GIT_DIR", str(other.path / ".git"))  # as a git hook may export it
    root = repo.path / "sub"
    for spec, expected in (("HEAD", [first, second]), (f"{first}..HEAD", [second])):
        early = start_early(root, spec)
        assert early is not None
        with Repository(root, early=early) as r:
            assert [c.sha for c, _ in r.walk(*r.resolve_range(spec))] == expected
            assert r.log_started_early
        assert early.process.poll() is not None


def test_log_started_early_for_another_range_is_not_used(repo: GitRepo) -> None:
    first = repo.commit("one", {"a": "1"})
    second = repo.commit("two", {"a": "2"})
    early = start_early(repo.path, "HEAD~1")
    assert early is not None
    with Repository(repo.path, early=early) as r:
        assert [c.sha for c, _ in r.walk(*r.resolve_range("HEAD"))] == [first, second]
        assert not r.log_started_early
    assert early.process.poll() is not None


def test_no_early_log_where_gitpython_decides(repo: GitRepo, tmp_path: Path) -> None:
    repo.commit("one", {"a": "1"})
    assert start_early(repo.path, "nope..HEAD") is None  # unknown revision: GitPython's error
    assert start_early(repo.path, "..HEAD") is None  # remote-tracking branches
    assert start_early(repo.path, "a...b") is None
    assert start_early(tmp_path / "home", "HEAD") is None  # not a repository
    early = start_early(repo.path, "HEAD")
    assert early is not None
    with pytest.raises(GitError, match="not a git repository"):
        Repository(tmp_path / "home", early=early)
    assert early.process.poll() is not None  # stopped by the failed constructor
    early = start_early(repo.path, "HEAD")
    assert early is not None
    Repository(repo.path, early=early).close()  # never walked
    assert early.process.poll() is not None
