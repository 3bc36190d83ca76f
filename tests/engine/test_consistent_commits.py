"""Every commit leaves the continuity files consistent, as a user meets it: the shipped examples
in a repository with the commit hook installed by real pre-commit. Each sequence below once
passed both the hook and ``verify``: an earlier commit forced past the hook (``--no-verify``: a
conflict marker, a truncated write, a symlink) must not reset what a file promised, and a commit
must answer for the files that depend on what it changed. The last commit of each is refused by
the hook, and, forced past it, reported at that commit by ``verify``."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers.git import CHECK_HOOK, LOCAL_HOOKS, GitRepo, isolate_git, run_merged

REPO = Path(__file__).resolve().parents[2]
STATE = "examples/working-state/.dsh/project/WORKING_STATE.json"
MANIFEST = "examples/provenance/PROVENANCE.json"
ORIGINAL = "examples/provenance/evidence/session-log.txt"
DERIVED = "examples/provenance/evidence/session-log.redacted.txt"
CHANGES = "examples/deltalayer/.deltalayer/changes"
DELTA = f"{CHANGES}/2026-09-22T14-00-00p02-00--claude.json"

CONFIG = LOCAL_HOOKS + CHECK_HOOK


class Project:
    """A repository holding the shipped examples, with the commit hook installed."""

    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        isolate_git(monkeypatch, tmp_path / "home")
        self.repo = GitRepo(tmp_path / "project")
        shutil.copytree(REPO / "examples", self.repo.path / "examples", symlinks=True)
        self.repo.commit("examples", {".pre-commit-config.yaml": CONFIG})
        self.base = self.repo.head()
        self.run(sys.executable, "-m", "pre_commit", "install")

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        """``args`` in the project, the hooks' output (stderr) in stdout."""
        return run_merged(self.repo.path, *args)

    def text(self, path: str) -> str:
        return (self.repo.path / path).read_text(encoding="utf-8")

    def change(self, edit: Callable[[Path], object], *, hook: bool) -> str:
        """Make ``edit`` in the work tree and commit everything, through the hook or past it
        (``--no-verify``); the hook's output, or the commit's id."""
        edit(self.repo.path)
        self.repo.git("add", "-A")
        made = self.run("git", "commit", "-q", "-m", "change", *(() if hook else ("--no-verify",)))
        if hook:
            return made.stdout if made.returncode else ""
        assert made.returncode == 0, made.stdout
        return self.repo.head()

    def refused(self, edit: Callable[[Path], object], *rules: str) -> str:
        """The hook refuses ``edit`` naming ``rules``; forced past it, ``verify`` reports them
        at its commit. The commit's id."""
        out = self.change(edit, hook=True)
        assert out, "the commit hook let it through"
        for rule in rules:
            assert rule in out, out
        sha = self.change(lambda root: None, hook=False)
        found = self.verify()
        for rule in rules:
            assert (rule, sha) in found, found
        return sha

    def verify(self) -> set[tuple[str, str]]:
        out = self.run(
            sys.executable, "-m", "continuity_checks", "verify", "--range", f"{self.base}..HEAD",
            "--format", "json",
        )  # fmt: skip
        return {(f["rule"], f["commit"]) for f in json.loads(out.stdout)["findings"]}


def write(path: str, text: str | bytes) -> Callable[[Path], None]:
    def edit(root: Path) -> None:
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_symlink():
            target.unlink()
        data = text.encode("utf-8") if isinstance(text, str) else text
        target.write_bytes(data)

    return edit


def json_edit(path: str, change: Callable[[dict[str, object]], None]) -> Callable[[Path], None]:
    def edit(root: Path) -> None:
        document = json.loads((root / path).read_text(encoding="utf-8"))
        change(document)
        (root / path).write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")

    return edit


def set_boundary(seq: int) -> Callable[[dict[str, object]], None]:
    def change(state: dict[str, object]) -> None:
        meta = state["checkpoint_meta"]
        assert isinstance(meta, dict)
        meta["prune_safe_through_seq"] = seq

    return change


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    return Project(tmp_path, monkeypatch)


def test_a_delta_broken_in_between_is_compared_with_its_last_good_version(
    project: Project,
) -> None:
    good = project.text(DELTA)
    project.change(write(DELTA, good[: len(good) // 2]), hook=False)  # a truncated write
    record = json.loads(good)
    record["conversation_id"] = "someone-else"
    record["updated_at"] = "2026-09-22T14:00:00+02:00"
    project.refused(write(DELTA, json.dumps(record, separators=(",", ":")) + "\n"), "DL204")


def test_a_working_state_broken_in_between_keeps_its_prune_boundary(project: Project) -> None:
    project.change(write(STATE, "<<<<<<< HEAD\n" + project.text(STATE)), hook=False)
    project.refused(json_edit_from(project, STATE, set_boundary(5)), "WS201")


def json_edit_from(
    project: Project, path: str, change: Callable[[dict[str, object]], None]
) -> Callable[[Path], None]:
    """``change`` applied to the version of ``path`` at the base (the last good one)."""
    document = json.loads(project.repo.git("show", f"{project.base}:{path}"))
    change(document)
    return write(path, json.dumps(document, indent=2) + "\n")


def test_a_working_state_deleted_and_added_back_keeps_its_prune_boundary(
    project: Project,
) -> None:
    project.change(lambda root: (root / STATE).unlink(), hook=False)
    project.refused(json_edit_from(project, STATE, set_boundary(5)), "WS201")


def test_a_listing_broken_in_between_keeps_its_pins(project: Project) -> None:
    project.change(write(MANIFEST, project.text(MANIFEST)[:200]), hook=False)

    def restored_without_the_original(root: Path) -> None:
        document = json.loads(project.repo.git("show", f"{project.base}:{MANIFEST}"))
        document["artifacts"] = [a for a in document["artifacts"] if a["path"] != ORIGINAL]
        (root / MANIFEST).write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
        (root / ORIGINAL).write_text("rewritten\n", encoding="utf-8")

    project.refused(restored_without_the_original, "PV202")


def test_an_exemption_declared_by_the_listing_is_a_change_of_its_pin(project: Project) -> None:
    def exempt(document: dict[str, object]) -> None:
        artifacts = document["artifacts"]
        assert isinstance(artifacts, list)
        artifacts[0]["in_repository"] = False

    project.refused(json_edit(MANIFEST, exempt), "PV204")


def test_a_derived_artifact_changed_alone_breaks_its_listing(project: Project) -> None:
    project.refused(write(DERIVED, "edited alone\n"), "PV104")


def test_a_working_state_replaced_by_a_symlink(project: Project) -> None:
    def link(root: Path) -> None:
        (root / "examples/old-state.json").write_text(project.text(STATE), encoding="utf-8")
        (root / STATE).unlink()
        (root / STATE).symlink_to("../../../old-state.json")

    project.refused(link, "WS206")


def test_a_runtime_directory_committed_as_a_symlink(project: Project) -> None:
    def link(root: Path) -> None:
        (root / "elsewhere").mkdir()
        (root / "elsewhere/journal.json").write_text("{}\n", encoding="utf-8")
        (root / "examples/working-state/.dsh/runtime").symlink_to("../../../elsewhere")

    project.refused(link, "WS206")


def test_a_delta_store_committed_as_a_symlink(project: Project) -> None:
    def link(root: Path) -> None:
        shutil.move(str(root / CHANGES), str(root / "examples/moved"))
        (root / CHANGES).symlink_to("../moved")

    project.refused(link, "DL212")


def test_a_session_node_another_names_as_predecessor_deleted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In an OpenProgram session repository, with the hook installed: deleting the user node
    a reply names as its predecessor leaves the untouched reply dangling (SS117)."""
    from tests.helpers.sessions import SYNTHETIC, rebuild_corpus

    assert SYNTHETIC.is_dir(), f"the OpenProgram corpus is missing: {SYNTHETIC}"
    isolate_git(monkeypatch, tmp_path / "home")
    session = rebuild_corpus(tmp_path / "corpus") / ".openprogram/sessions/local_3f9a1c0d2e"
    git = ["git", "-c", "commit.gpgsign=false"]
    subprocess.run([*git, "stash", "-q", "--include-untracked"], cwd=session, check=True)
    base = subprocess.run(
        [*git, "rev-parse", "HEAD"], cwd=session, check=True, capture_output=True, text=True
    ).stdout.strip()
    (session / ".pre-commit-config.yaml").write_text(CONFIG, encoding="utf-8")
    subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=session, check=True)
    subprocess.run(
        [*git, "rm", "-q", "--", "history/0005-u-1b87267a.json"], cwd=session, check=True
    )
    commit = [*git, "commit", "-q", "-m", "rewind"]
    refused = subprocess.run(commit, cwd=session, capture_output=True, text=True)
    assert refused.returncode != 0 and "SS117" in refused.stdout + refused.stderr, refused
    subprocess.run([*commit, "--no-verify"], cwd=session, check=True)
    out = subprocess.run(
        [sys.executable, "-m", "continuity_checks", "verify", "--range", f"{base}..HEAD",
         "--format", "json"],
        cwd=session, capture_output=True, text=True,
    ).stdout  # fmt: skip
    found = {(f["rule"], f["path"]) for f in json.loads(out)["findings"]}
    assert ("SS117", "history/0006-l-1b87267a_reply.json") in found, found


@pytest.mark.parametrize(("broken_commits", "cut"), [(2, False), (20, True)])
def test_the_hook_says_when_its_look_back_is_cut_short(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, broken_commits: int, cut: bool
) -> None:
    """A delta left broken by the commits before (forced past the hook): the hook looks back
    through at most 20 of its versions for the last good one; past that it compares with HEAD's
    and warns (CC012), where ``verify``, which remembers every version, still finds DL204."""
    project = Project(tmp_path, monkeypatch)
    good = project.text(DELTA)
    for n in range(broken_commits):
        project.change(write(DELTA, good[: 20 + n]), hook=False)
    record = json.loads(good)
    record["conversation_id"] = "someone-else"
    write(DELTA, json.dumps(record, separators=(",", ":")) + "\n")(project.repo.path)
    project.repo.git("add", "-A")
    monkeypatch.chdir(project.repo.path)
    out = project.run(
        sys.executable, "-m", "continuity_checks", "check", "--staged", DELTA, "--format", "json"
    )
    found = {f["rule"] for f in json.loads(out.stdout)["findings"]}
    assert ("CC012" in found) is cut, found
    assert ("DL204" in found) is not cut, found
    sha = project.change(lambda root: None, hook=False)
    assert ("DL204", sha) in project.verify()
