"""core.git: range forms, errors, the one-pass walk, merges, blobs, objects, odd paths."""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

import pytest

from continuity_checks.core import git
from continuity_checks.core.git import objects
from continuity_checks.core.git.errors import GitError
from continuity_checks.core.git.log import FIELDS, LogRequest
from continuity_checks.core.git.objects import GitObject, TreeEntry
from continuity_checks.core.git.repository import Repository, parse_range
from tests.conftest import REPO
from tests.helpers.git import GitRepo, isolate_git


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
    request = LogRequest(trailers=("Continuity-Delta",))
    with Repository(repo.path) as r:
        commits = [c for c, _ in r.walk(*r.resolve_range("HEAD"), request=request)]
        assert all(c.trailers == {} for c, _ in r.walk(*r.resolve_range("HEAD")))  # not asked
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


def test_merges_are_diffed_against_their_first_parent(repo: GitRepo) -> None:
    """A merge lists everything it brings into the mainline, its own edits included; the old
    version is the first parent's."""
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
        assert [(c.status, c.path) for c in commits[clean][1]] == [
            ("M", "g"),
            ("D", "k"),
            ("A", "only-side"),
        ]
        commit, changes = commits[evil]
        assert commit.is_merge and commit.parents[0] == clean
        assert [(c.status, c.path) for c in changes] == [
            ("M", "f"),
            ("D", "g"),
            ("A", "h"),
            ("A", "new"),
        ]
        old = changes[0].old_blob
        assert old is not None and r.read_blob(old) == b"1\n2\n"  # the first parent's version
        g = changes[1]
        assert (g.old_mode, g.new_mode, g.new_blob) == ("100644", "", None)


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
    process = r.objects.process
    assert process is not None and process.poll() is None
    r.close()
    assert process.poll() is not None


def test_bare_repository_and_top(repo: GitRepo, tmp_path: Path) -> None:
    sha = repo.commit("one", {"sub/a": "1"})
    with Repository(repo.path / "sub") as r:
        assert r.top == repo.path.resolve() and r.git_dir == (repo.path / ".git").resolve()
        assert (r.shallow, r.object_format) == (False, "sha1")
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo.path), str(bare)], check=True)
    with Repository(bare, revision_range="HEAD") as r:
        assert r.top == r.git_dir == bare.resolve()
        assert [c.sha for c, _ in r.walk(*r.resolve_range("HEAD"))] == [sha]
    with pytest.raises(GitError, match="not a git repository"):
        Repository(tmp_path / "nowhere")


def test_commit_fields(repo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Ann Author")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "ann@example.invalid")
    monkeypatch.setenv("GIT_AUTHOR_DATE", "2026-09-21T16:20:00+08:00")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Cid Committer")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "cid@example.invalid")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2026-09-22T01:02:03Z")
    (repo.path / ".mailmap").write_text("Someone Else <ann@example.invalid>\n", encoding="utf-8")
    subprocess.run(
        ["git", "-c", "commit.gpgsign=false", "commit", "-q", "--allow-empty", "-m", "x"],
        cwd=repo.path,
        check=True,
    )
    everything = LogRequest(fields=frozenset(FIELDS))
    with Repository(repo.path) as r:
        [(commit, [])] = list(r.walk(*r.resolve_range("HEAD"), request=everything))
        [(plain, [])] = list(r.walk(*r.resolve_range("HEAD")))
    assert commit.fields == {
        "author_name": "Ann Author",  # as recorded: the .mailmap is not applied
        "author_email": "ann@example.invalid",
        "author_date": "2026-09-21T16:20:00+08:00",
        "committer_name": "Cid Committer",
        "committer_email": "cid@example.invalid",
        "committer_date": "2026-09-22T01:02:03+00:00",
        "message": "x\n",
    }
    assert plain.fields == {} and plain[:3] == commit[:3]


def test_log_request() -> None:
    request = LogRequest(("Continuity-Delta", "Co-authored-by"), frozenset({"author_name"}))
    assert request.format() == (
        "tformat:%H%x00%P"
        "%x00%(trailers:key=Continuity-Delta,valueonly,unfold,separator=%x1f)"
        "%x00%(trailers:key=Co-authored-by,valueonly,unfold,separator=%x1f)"
        "%x00%an%x00%s"
    )
    union = request.union(LogRequest(("co-authored-by", "X"), frozenset({"author_date"}), True))
    assert union == LogRequest(
        ("Continuity-Delta", "Co-authored-by", "X"),
        frozenset({"author_name", "author_date"}),
        True,
    )
    for bad in ("a,b", "key)", "", "-x", "a b", "x=y"):
        with pytest.raises(ValueError, match="not a trailer key"):
            LogRequest((bad,))
    with pytest.raises(ValueError, match="given twice"):
        LogRequest(("Key", "key"))
    with pytest.raises(ValueError, match="unknown commit fields"):
        LogRequest(fields=frozenset({"author"}))


def add_gitlink(repo: GitRepo, path: str, target: str) -> None:
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{target},{path}")


def test_gitlinks(repo: GitRepo) -> None:
    first = repo.commit("one", {"a": "1"})
    second = repo.commit("two", {"a": "2"})
    add_gitlink(repo, "sub", first)
    repo.git("commit", "-q", "-m", "add submodule")
    add_gitlink(repo, "sub", second)
    repo.git("commit", "-q", "-m", "move submodule")
    repo.git("rm", "-q", "--cached", "sub")
    repo.write({"sub": "now a file\n"})
    repo.git("add", "sub")
    repo.git("commit", "-q", "-m", "submodule becomes a file")

    def changes(request: LogRequest | None) -> list[list[tuple[str, ...]]]:
        with Repository(repo.path) as r:
            base, head = r.resolve_range(f"{second}..HEAD")
            return [
                [(c.status, c.path, c.old_mode, c.new_mode, c.old_blob or "", c.new_blob or "")
                 for c in ch]
                for _, ch in r.walk(base, head, prefetch=bool, request=request)
            ]  # fmt: skip

    file_blob = repo.git("rev-parse", "HEAD:sub")
    assert changes(None) == [[], [], [("A", "sub", "", "100644", "", file_blob)]]
    assert changes(LogRequest(gitlinks=True)) == [
        [("A", "sub", "", "160000", "", first)],
        [("M", "sub", "160000", "160000", first, second)],
        [("M", "sub", "160000", "100644", second, file_blob)],
    ]


def test_objects_by_path(repo: GitRepo) -> None:
    sha = repo.commit("one", {"dir/a b.json": "{}\n", "dir/ü.json": "ü", "big": "x" * 500})
    later = repo.commit("two", {"dir/a b.json": "[]\n"})
    with Repository(repo.path, max_blob_bytes=300) as r:
        blob = r.read_object(f"{sha}:dir/a b.json")
        assert blob == GitObject(repo.git("rev-parse", f"{sha}:dir/a b.json"), "blob", 3, b"{}\n")
        assert r.read_object(f"{later}:dir/a b.json") == GitObject(
            repo.git("rev-parse", f"{later}:dir/a b.json"), "blob", 3, b"[]\n"
        )
        assert r.read_object(blob.sha) == blob  # by id, from the cache
        assert r.read_object(f"{sha}:dir/ü.json") == GitObject(
            repo.git("rev-parse", f"{sha}:dir/ü.json"), "blob", 2, "ü".encode()
        )
        big = r.read_object(f"{sha}:big")
        assert big is not None and (big.type, big.size, big.data) == ("blob", 500, None)
        assert r.oversized == {big.sha: 500}
        assert r.read_object(f"{sha}:nope") is None
        assert r.read_object(f"{sha}:dir/a b.json/x") is None
        assert r.read_object("0123456789" * 4) is None
        assert r.read_object("") is None
        commit = r.read_object(later)
        assert commit is not None and commit.type == "commit" and commit.data is not None
        assert commit.data.startswith(b"tree ")
        tree = r.read_object(f"{sha}:dir")
        assert tree is not None and tree.type == "tree" and tree.data is not None
        assert r.tree_entries(tree.data) == [
            TreeEntry("100644", "a b.json", blob.sha),
            TreeEntry("100644", "ü.json", repo.git("rev-parse", f"{sha}:dir/ü.json")),
        ]
        root = r.read_object(f"{sha}:")
        assert root is not None and root.data is not None
        assert [(e.mode, e.name) for e in r.tree_entries(root.data)] == [
            ("100644", "big"),
            ("040000", "dir"),
        ]


def test_paths_cat_file_cannot_be_asked_for(repo: GitRepo) -> None:
    """A line break, a final carriage return, a backslash, bytes that are not UTF-8 (shown as
    the log shows them): read through the trees."""
    repo.commit("one", {"d/new\nline": "n", "d/cr\r": "r", "d/back\\slash": "b"})
    with open(bytes(repo.path / "d") + b"/\xff", "wb") as handle:
        handle.write(b"not utf-8")
    sha = repo.commit("two")
    with Repository(repo.path) as r:
        [(_, changes)] = list(r.walk(*r.resolve_range("HEAD~1..HEAD")))
        assert [c.path for c in changes] == ["d/\\xff"]
        for path, data in (
            ("d/new\nline", b"n"),
            ("d/cr\r", b"r"),
            ("d/back\\slash", b"b"),
            ("d/\\xff", b"not utf-8"),  # the log's name for it
        ):
            found = r.read_object(f"{sha}:{path}")
            assert found is not None and found.data == data, path
        assert r.read_object(f"{sha}:d/new\nline/x") is None
        assert r.read_object(f"{sha}:d/no\nsuch") is None
        assert r.read_object("no\nsuch:d/new\nline") is None


def test_requests_in_flight_and_a_long_path(repo: GitRepo) -> None:
    """A path longer than the pipe's buffer, asked while many blobs are in flight."""
    files = {f"f{i:03d}": f"{i}\n" for i in range(300)}
    sha = repo.commit("many", files)
    with Repository(repo.path) as r:
        ids = [repo.git("rev-parse", f"{sha}:{name}") for name in list(files)[:5]]
        r.objects.request(ids + [e.sha for e in r.tree_entries(r.read_object(f"{sha}:").data)])  # type: ignore[union-attr]
        assert r.read_object(f"{sha}:" + "x/" * 20_000 + "y") is None
        assert r.read_blob(ids[0]) == b"0\n"


def test_blob_cache_is_bounded_by_count_and_bytes(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {f"f{i:02d}": f"{i:02d}" * (i + 1) for i in range(40)}
    sha = repo.commit("many", files)
    monkeypatch.setattr(objects, "_CACHE_ITEMS", 10)
    monkeypatch.setattr(objects, "_CACHE_BYTES", 500)
    with Repository(repo.path) as r:
        for name, content in files.items():
            assert r.read_blob(repo.git("rev-parse", f"{sha}:{name}")) == content.encode()
            cache = r.objects._cache
            assert len(cache) <= 10 and sum(map(len, cache.values())) <= 500
        assert len(cache) < 10  # the bytes bound: the last blobs are about 80 bytes each


def test_sha256_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(monkeypatch, tmp_path / "home")
    path = tmp_path / "repo256"
    subprocess.run(["git", "init", "-q", "--object-format=sha256", str(path)], check=True)
    repo = GitRepo.__new__(GitRepo)
    repo.path = path
    repo.commit("one", {"a/b": "1"})
    sha = repo.commit("two", {"a/b": "2"})
    with Repository(path, revision_range="HEAD~1..HEAD") as r:
        assert r.object_format == "sha256"
        [(commit, [change])] = list(r.walk(*r.resolve_range("HEAD~1..HEAD"), prefetch=bool))
        assert commit.sha == sha and len(sha) == 64
        assert change.new_blob is not None and r.read_blob(change.new_blob) == b"2"
        tree = r.read_object(f"{sha}:a")
        assert tree is not None and tree.data is not None
        assert r.tree_entries(tree.data) == [TreeEntry("100644", "b", change.new_blob)]


def test_the_package_is_plain_and_each_name_is_imported_from_its_module() -> None:
    """core.git's ``__init__`` holds its docstring and nothing else (no table of names to keep
    in step, no names found on first use), and every import from the package in src/, tests/
    and benchmarks/ names one of its modules."""
    package = Path(git.__file__)
    body = ast.parse(package.read_text(encoding="utf-8")).body
    assert len(body) == 1 and isinstance(body[0], ast.Expr), "only a docstring"
    modules = {path.stem for path in package.parent.glob("*.py")} - {"__init__"}
    named = []
    for folder in ("src", "tests", "benchmarks"):
        for path in sorted((REPO / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and node.module == git.__name__:
                    where = f"{path.relative_to(REPO)}:{node.lineno}"
                    named += [f"{where} {a.name}" for a in node.names if a.name not in modules]
    assert named == []


def test_added_by_takes_a_request_larger_than_a_pipe_holds(repo: GitRepo) -> None:
    """The request goes to git through a pipe: one of several hundred KiB (far more than a
    pipe holds unread) is read whole, whether git finds every path or walks all of history."""
    first = repo.commit("one", {"a": "1"})
    second = repo.commit("two", {"b": "2"})
    unknown = [f"never/{'x' * 60}/{n}.json" for n in range(6_000)]
    with Repository(repo.path) as r:
        assert {p: c.sha for p, c in r.added_by([second], ["a", "b"]).items()} == {
            "a": first,
            "b": second,
        }
        found = r.added_by([second], ["a", *unknown])
        assert {p: c.sha for p, c in found.items()} == {"a": first}


def test_added_by_reports_the_complaint_of_a_failing_git_log(repo: GitRepo) -> None:
    """git's complaint arrives through a pipe and is the error's message."""
    repo.commit("one", {"a": "1"})
    with Repository(repo.path) as r, pytest.raises(GitError, match="git log failed: fatal: "):
        r.added_by(["f" * 40], ["a"])
