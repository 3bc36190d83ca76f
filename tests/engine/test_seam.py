"""The seam a family plugs into, driven through the real CLI with a family that lives in tests/.

The example family (tests/example_family) is registered the way a real one is, by one line in
``checks.PACKAGES``; everything else (``--family`` choices, configuration keys, rules, the hook
manifest, the log format of history mode) must follow from its declaration.
"""

from __future__ import annotations

import ast
import inspect
import json
from collections.abc import Iterable, Sequence
from pathlib import Path

import pytest

from continuity_checks import checks
from continuity_checks.cli import main
from continuity_checks.core.family import Claimed, Commit, FileInput
from continuity_checks.core.findings import Finding
from continuity_checks.core.git.log import RawChange
from continuity_checks.core.snapshot import CommitTree, Snapshot
from continuity_checks.hooks import family_hook
from tests.conftest import REPO, RunCLI, write_tree
from tests.helpers.git import GitRepo, isolate_git

EXAMPLE = "tests.example_family"


@pytest.fixture
def with_example(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(checks, "PACKAGES", (*checks.PACKAGES, EXAMPLE))


def test_everything_follows_from_the_declaration(with_example: None) -> None:
    assert "notes" in checks.names()
    assert checks.rule_exists("ZZ101") and not checks.rule_exists("ZZ999")
    assert {"ZZ101", "ZZ201"} <= {r.id for r in checks.all_rules()}
    declaration = checks.declarations()[-1]
    hook = family_hook(declaration)
    assert (hook.id, hook.files, hook.entry) == (
        "check-notes",
        r"(^|/)notes/",
        "continuity check --staged --family notes",
    )


def test_an_unregistered_family_is_nowhere() -> None:
    assert "notes" not in checks.names()
    assert not checks.rule_exists("ZZ101")  # registered by an earlier test, yet not offered
    assert "ZZ101" not in {r.id for r in checks.all_rules()}


def test_file_mode_reads_a_sibling_through_the_snapshot(
    with_example: None, tmp_path: Path, run_json: RunCLI
) -> None:
    write_tree(tmp_path, {"notes/INDEX": "a.note\n", "notes/a.note": "A", "notes/b.note": "B"})
    code, report = run_json("check", "--all", "--root", str(tmp_path), "--family", "notes")
    assert code == 1
    assert [(f["rule"], f["path"]) for f in report["findings"]] == [("ZZ101", "notes/b.note")]
    assert report["summary"]["files"] == 2


def test_options_come_from_the_family_table(
    with_example: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_tree(tmp_path, {".continuity.toml": "[notes]\nbogus = 1\n", "notes/a.note": "A"})
    assert main(["check", "--all", "--root", str(tmp_path)]) == 2
    assert "notes.bogus" in capsys.readouterr().err


def test_history_mode_gives_every_commit_its_author_and_both_trees(
    with_example: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_json: RunCLI
) -> None:
    isolate_git(monkeypatch, tmp_path / "home")
    repo = GitRepo(tmp_path / "repo")
    repo.commit("authors", {"notes/AUTHORS": "agent@example.invalid\n", "notes/INDEX": "a.note\n"})
    base = repo.head()
    repo.commit("a note", {"notes/a.note": "A"})
    repo.write({"README": "by Eve\n"})  # a path no family claims
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "readme", "--author=Eve <eve@example.invalid>")
    eve = repo.head()
    # Eve lists herself: the commit that does so is judged by the tree it makes (after)
    repo.write({"notes/AUTHORS": "agent@example.invalid\neve@example.invalid\n"})
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "list eve", "--author=Eve <eve@example.invalid>")
    code, report = run_json("verify", "--range", f"{base}..HEAD", "--root", str(repo.path))
    assert code == 1
    found = [(f["rule"], f["commit"], f["message"]) for f in report["findings"]]
    assert found == [
        ("ZZ201", eve, "expected a listed author, found eve@example.invalid (nothing; README)")
    ]
    assert report["summary"]["commits"] == 3


def test_a_commit_is_judged_by_the_files_that_depend_on_what_it_changed(
    with_example: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_json: RunCLI
) -> None:
    """A commit that changes only notes/INDEX leaves a note it does not touch unlisted: the
    error check --all finds in its tree and not in its parent's is reported at that commit, by
    verify and by the commit hook, through the family's dependents of the path."""
    isolate_git(monkeypatch, tmp_path / "home")
    repo = GitRepo(tmp_path / "repo")
    files = {"notes/AUTHORS": "agent@example.invalid\n", "notes/INDEX": "a.note\nb.note\n"}
    repo.commit("notes", {**files, "notes/a.note": "A", "notes/b.note": "B"})
    base = repo.head()
    repo.write({"notes/INDEX": "a.note\n"})
    repo.git("add", "-A")
    root = str(repo.path)
    monkeypatch.chdir(repo.path)  # as git runs a hook: from the top of the work tree
    code, report = run_json("check", "--staged", "notes/INDEX")
    found = [(f["rule"], f["path"], f["commit"]) for f in report["findings"]]
    # (the hook's identity is git's own here, not a listed author: ZZ201 too)
    assert (code, found[-1:]) == (1, [("ZZ101", "notes/b.note", "staged")])
    repo.git("commit", "-q", "-m", "drop b from the index")
    dropped = repo.head()
    repo.commit("unrelated", {"README": "r\n"})
    code, report = run_json("verify", "--range", f"{base}..HEAD", "--root", root)
    found = [(f["rule"], f["path"], f["commit"]) for f in report["findings"]]
    assert (code, found) == (1, [("ZZ101", "notes/b.note", dropped)])


def test_a_family_called_on_every_commit_may_decline_one(
    with_example: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_json: RunCLI
) -> None:
    """``commit_needed`` false: the family's ``check_commit`` is not called for a commit none
    of whose changes it claims (an unknown author's README goes unjudged); it is asked with
    whether the commit leaves a symlink, and never for a commit with a claimed change."""
    from tests.example_family import NotesFamily

    asked: list[tuple[str, bool]] = []

    def symlinks_only(
        self: NotesFamily, commit: Commit, paths: Sequence[RawChange], symlinked: bool
    ) -> bool:
        asked.append((paths[0].path, symlinked))
        return symlinked

    monkeypatch.setattr(NotesFamily, "commit_needed", symlinks_only)
    isolate_git(monkeypatch, tmp_path / "home")
    repo = GitRepo(tmp_path / "repo")
    base = repo.commit("authors", {"notes/AUTHORS": "agent@example.invalid\n"})
    for name, author in (("README", "Eve"), ("notes/b.note", "Eve")):
        repo.write({name: "by Eve\n"})
        repo.git("add", "-A")
        repo.git("commit", "-q", "-m", name, f"--author={author} <eve@example.invalid>")
    (repo.path / "LINK").symlink_to("README")
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "a link", "--author=Eve <eve@example.invalid>")
    linked = repo.head()
    code, report = run_json("verify", "--range", f"{base}..HEAD", "--root", str(repo.path))
    found = [(f["rule"], f["commit"]) for f in report["findings"] if f["rule"] == "ZZ201"]
    assert code == 1
    assert asked == [("README", False), ("LINK", True)]
    assert len(found) == 2 and found[1] == ("ZZ201", linked)  # the note's commit, the link's


def test_dependents_are_asked_only_where_a_family_may_have_some(
    with_example: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_json: RunCLI
) -> None:
    """``may_depend`` is asked once per changed path (and whether the change only rewrote its
    bytes), and ``dependents`` only where it is true."""
    from tests.example_family import NotesFamily

    may: list[tuple[str, bool]] = []
    depends: list[str] = []
    original = NotesFamily.dependents

    def may_depend(self: NotesFamily, path: str, edited: bool) -> bool:
        may.append((path, edited))
        return path == "notes/INDEX"

    def dependents(self: NotesFamily, path: str, tree: object, edited: bool) -> object:
        depends.append(path)
        return original(self, path, tree, edited)  # type: ignore[arg-type]

    monkeypatch.setattr(NotesFamily, "may_depend", may_depend)
    monkeypatch.setattr(NotesFamily, "dependents", dependents)
    isolate_git(monkeypatch, tmp_path / "home")
    repo = GitRepo(tmp_path / "repo")
    files = {"notes/AUTHORS": "agent@example.invalid\n", "notes/INDEX": "a.note\nb.note\n"}
    base = repo.commit("notes", {**files, "notes/a.note": "A", "notes/b.note": "B"})
    repo.commit("a edited", {"notes/a.note": "A2"})
    repo.commit("a edited again", {"notes/a.note": "A3"})
    repo.commit("b unlisted", {"notes/INDEX": "a.note\n"})
    code, report = run_json("verify", "--range", f"{base}..HEAD", "--root", str(repo.path))
    assert code == 1
    assert [(f["rule"], f["path"]) for f in report["findings"]] == [("ZZ101", "notes/b.note")]
    assert may == [("notes/a.note", True), ("notes/INDEX", True)]
    assert depends == ["notes/INDEX", "notes/INDEX"]  # in the commit's tree, its parent's


def test_dependents_are_told_the_tree_on_the_other_side_of_the_change(
    with_example: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_json: RunCLI
) -> None:
    """``dependents_between`` is given the tree on the other side of the change (the parent's
    for the commit's tree, the commit's for the parent's), and a dependent it leaves out is not
    judged; by default it is ``dependents``."""
    from tests.example_family import NotesFamily

    asked: list[tuple[str, str, str]] = []
    checked: list[str] = []
    original = NotesFamily.check_file

    def between(
        self: NotesFamily, path: str, tree: Snapshot, other: Snapshot, edited: bool
    ) -> object:
        assert isinstance(tree, CommitTree) and isinstance(other, CommitTree)
        asked.append((path, str(tree.commit), str(other.commit)))
        found = self.dependents(path, tree, edited)
        return [d for d in found if _listed(tree, d) != _listed(other, d)]

    def check_file(self: NotesFamily, file: FileInput) -> Iterable[Finding]:
        checked.append(file.path)
        return original(self, file)

    monkeypatch.setattr(NotesFamily, "check_file", check_file)
    isolate_git(monkeypatch, tmp_path / "home")
    repo = GitRepo(tmp_path / "repo")
    files = {"notes/AUTHORS": "agent@example.invalid\n", "notes/INDEX": "a.note\nb.note\n"}
    base = repo.commit("notes", {**files, "notes/a.note": "A", "notes/b.note": "B"})
    parent = repo.commit("a edited", {"notes/a.note": "A2"})
    head = repo.commit("b unlisted", {"notes/INDEX": "a.note\n"})
    reports = []
    for patched in (False, True):
        checked.clear()
        if patched:
            monkeypatch.setattr(NotesFamily, "dependents_between", between)
        code, report = run_json("verify", "--range", f"{base}..HEAD", "--root", str(repo.path))
        assert code == 1
        reports.append(report["findings"])
        # a.note edited, then at the head both notes, in its tree and its parent's; patched,
        # only the note whose listing the commit changed
        both = ["notes/a.note", "notes/b.note"]
        assert checked == ["notes/a.note", *(["notes/b.note"] * 2 if patched else both * 2)]
    assert reports[0] == reports[1]
    assert [(f["rule"], f["path"]) for f in reports[0]] == [("ZZ101", "notes/b.note")]
    edit = ("notes/a.note", parent, base)
    assert asked == [edit, ("notes/INDEX", head, parent), ("notes/INDEX", parent, head)]


def _listed(tree: Snapshot, path: str) -> bool:
    data = tree.read("notes/INDEX")
    return isinstance(data, bytes) and path.rpartition("/")[2] in data.decode().split()


def _notes_edited(repo: GitRepo) -> str:
    """A notes project (one listed note, its authors) committed, then its note edited: the
    first commit."""
    files = {"notes/AUTHORS": "agent@example.invalid\n", "notes/INDEX": "a.note\n"}
    base = repo.commit("notes", {**files, "notes/a.note": "A"})
    repo.commit("a edited", {"notes/a.note": "A2"})
    return base


def test_a_tree_check_that_reads_no_bytes_is_not_fed_a_file_whose_bytes_alone_changed(
    with_example: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_json: RunCLI
) -> None:
    """With ``tree_reads_bytes`` false, the state a commit leaves feeds the family's tree
    check the files it judges but an edited one (its file check still runs); with the
    default, every one."""
    from tests.example_family import NotesFamily

    fed: list[list[str]] = []

    def check_tree(self: NotesFamily, snapshot: object, claimed: list[Claimed]) -> object:
        fed.append([c.path for c in claimed])
        return ()

    monkeypatch.setattr(NotesFamily, "check_tree", check_tree)
    isolate_git(monkeypatch, tmp_path / "home")
    repo = GitRepo(tmp_path / "repo")
    base = _notes_edited(repo)
    repo.commit("b added, unlisted", {"notes/b.note": "B"})
    for reads in (True, False):
        fed.clear()
        monkeypatch.setattr(NotesFamily, "tree_reads_bytes", lambda self, reads=reads: reads)
        code, report = run_json("verify", "--range", f"{base}..HEAD", "--root", str(repo.path))
        assert code == 1
        assert [(f["rule"], f["path"]) for f in report["findings"]] == [("ZZ101", "notes/b.note")]
        assert fed == ([["notes/a.note"], ["notes/b.note"]] if reads else [["notes/b.note"]])


def test_a_tree_check_that_can_find_nothing_by_a_file_is_not_fed_it(
    with_example: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_json: RunCLI
) -> None:
    """``tree_may_find`` is asked of a family whose tree check reads no bytes, for a file it
    judges for more than its bytes (not an edited one), with the tree; a file it answers no
    for is not fed to the tree check, and its file check still runs."""
    from tests.example_family import NotesFamily

    fed: list[list[str]] = []
    asked: list[tuple[str, str, str]] = []

    def check_tree(self: NotesFamily, snapshot: object, claimed: list[Claimed]) -> object:
        fed.append([c.path for c in claimed])
        return ()

    def tree_may_find(self: NotesFamily, path: str, kind: str, tree: Snapshot) -> bool:
        assert isinstance(tree, CommitTree)
        asked.append((path, kind, str(tree.commit)))
        return path != "notes/b.note"

    monkeypatch.setattr(NotesFamily, "check_tree", check_tree)
    monkeypatch.setattr(NotesFamily, "tree_reads_bytes", lambda self: False)
    monkeypatch.setattr(NotesFamily, "tree_may_find", tree_may_find)
    isolate_git(monkeypatch, tmp_path / "home")
    repo = GitRepo(tmp_path / "repo")
    base = _notes_edited(repo)
    b_added = repo.commit("b added, unlisted", {"notes/b.note": "B"})
    c_added = repo.commit("c added, unlisted", {"notes/c.note": "C"})
    code, report = run_json("verify", "--range", f"{base}..HEAD", "--root", str(repo.path))
    assert code == 1
    found = [(f["rule"], f["path"]) for f in report["findings"]]
    assert found == [("ZZ101", "notes/b.note"), ("ZZ101", "notes/c.note")]
    # the edited a.note is not asked about; b's error is its file check's, and c is fed
    assert asked == [("notes/b.note", "note", b_added), ("notes/c.note", "note", c_added)]
    assert fed == [["notes/c.note"]]


# --- what a family may not do -----------------------------------------------------------------

CHECKS = REPO / "src" / "continuity_checks" / "checks"
CHECK_MODULES = sorted(p.relative_to(CHECKS).as_posix() for p in CHECKS.rglob("*.py"))
#: A family's checks read only through the snapshot: never these, nor ``open()``.
FORBIDDEN_MODULES = {"os", "pathlib", "io", "shutil", "glob", "tempfile"}
#: core's writers: a helper command that writes lives in tools/<family>/, never under checks/.
WRITERS = (
    "continuity_checks.core.atomic",
    "continuity_checks.core.confined_files",
    "continuity_checks.core.gitignore",
)
#: What drives the families (the engine and its modules, the helper commands, the command
#: line): it imports checks/, never the reverse.
ABOVE = ("continuity_checks.engine", "continuity_checks.tools", "continuity_checks.cli")


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, at the top or inside a function (``from M import N`` as
    both ``M`` and ``M.N``), and ``open()`` when it calls it."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "open":
            names.add("open()")
    return names


def _within(names: set[str], packages: tuple[str, ...]) -> list[str]:
    """The names that are one of ``packages`` or inside one."""
    return sorted(n for n in names if any(n == p or n.startswith(p + ".") for p in packages))


@pytest.mark.parametrize("module", CHECK_MODULES)
def test_checks_read_only_through_the_snapshot(module: str) -> None:
    imported = _imports(CHECKS / module)
    used = {name.split(".")[0] for name in imported} & (FORBIDDEN_MODULES | {"open()"})
    assert not used, f"checks/{module} uses {sorted(used)}: read through the snapshot instead"
    writers = _within(imported, WRITERS)
    assert not writers, f"checks/{module} imports {writers}: a writer belongs in tools/<family>/"


@pytest.mark.parametrize("module", CHECK_MODULES)
def test_checks_import_nothing_that_drives_them(module: str) -> None:
    above = _within(_imports(CHECKS / module), ABOVE)
    assert not above, f"checks/{module} imports {above}: the engine and the tools call families"


def test_the_scan_sees_writers_and_upward_imports_anywhere(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import os\n"
        "from continuity_checks import engine\n"
        "from continuity_checks.core.atomic import locked\n"
        "def f():\n"
        "    from continuity_checks.tools.deltas import store\n"
        "    open('x')\n",
        encoding="utf-8",
    )
    imported = _imports(sample)
    assert {"os", "open()"} <= imported
    assert _within(imported, WRITERS) == [
        "continuity_checks.core.atomic",
        "continuity_checks.core.atomic.locked",
    ]
    assert _within(imported, ABOVE) == [
        "continuity_checks.engine",
        "continuity_checks.tools.deltas",
        "continuity_checks.tools.deltas.store",
    ]


TOOLS = REPO / "src" / "continuity_checks" / "tools"
#: The engine and its modules: a tool takes from them only the public names of the package.
ENGINE = ABOVE[:1]


def _engine_names(path: Path) -> set[str]:
    """What ``path`` takes from the engine: ``N`` of ``from continuity_checks.engine import N``
    and of ``engine.N``; the whole name of any other import of an engine module."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "continuity_checks.engine":
                names.update(alias.name for alias in node.names)
            elif _within({node.module}, ENGINE):
                names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names if _within({alias.name}, ENGINE))
        elif isinstance(node, ast.Attribute) and getattr(node.value, "id", None) == "engine":
            names.add(node.attr)
    return names


def _private(name: str) -> bool:
    from continuity_checks import engine

    value = getattr(engine, name, None) if "." not in name else None
    return name.startswith("_") or value is None or inspect.ismodule(value)


@pytest.mark.parametrize(
    "module", sorted(p.relative_to(TOOLS).as_posix() for p in TOOLS.rglob("*.py"))
)
def test_tools_call_the_engine_only_through_its_public_functions(module: str) -> None:
    private = sorted(n for n in _engine_names(TOOLS / module) if _private(n))
    assert not private, f"tools/{module} takes {private} from the engine: use its public functions"


def test_the_engine_scan_sees_a_private_name(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from continuity_checks import engine\n"
        "from continuity_checks.engine import check, _claimed\n"
        "import continuity_checks.engine.last_good\n"
        "engine.relative(engine._walk)\n",
        encoding="utf-8",
    )
    names = _engine_names(sample)
    assert names == {
        "check",
        "_claimed",
        "continuity_checks.engine.last_good",
        "relative",
        "_walk",
    }
    assert sorted(n for n in names if _private(n)) == [
        "_claimed",
        "_walk",
        "continuity_checks.engine.last_good",
    ]


def test_core_knows_no_family() -> None:
    core = REPO / "src" / "continuity_checks" / "core"
    for path in core.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert "continuity_checks.checks" not in text, path


def test_json_report_is_valid_for_the_example(
    with_example: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_tree(tmp_path, {"notes/INDEX": "", "notes/x.note": "X"})
    main(["check", "--all", "--root", str(tmp_path), "--format", "sarif"])
    sarif = json.loads(capsys.readouterr().out)
    rules = {r["id"] for r in sarif["runs"][0]["tool"]["driver"]["rules"]}
    assert "ZZ101" in rules


def test_commit_trees_resolve_symlinks_as_the_work_tree_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from continuity_checks.core.git.repository import Repository
    from continuity_checks.core.snapshot import CommitTree, Unreadable, WorkTree

    isolate_git(monkeypatch, tmp_path / "home")
    repo = GitRepo(tmp_path / "repo")
    repo.write({"a/one.json": "1", "a/two.json": "22"})
    os.symlink("one.json", repo.path / "a" / "alias.json")
    os.symlink("a", repo.path / "b")
    os.symlink("../../outside", repo.path / "out")
    sha = repo.commit("links")
    work = WorkTree(repo.path, 1024)
    with Repository(repo.path, 1024) as git:
        tree = CommitTree(git, sha, 1024)
        for snapshot in (work, tree):
            assert snapshot.resolve("a/alias.json") == "a/one.json"
            assert snapshot.resolve("b/two.json") == "a/two.json"
            assert snapshot.read("b/alias.json") == b"1"
            assert isinstance(snapshot.resolve("out/x"), Unreadable)
            assert snapshot.list("b") == ["alias.json", "one.json", "two.json"]
