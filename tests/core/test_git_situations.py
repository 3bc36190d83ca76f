"""The commit hook and ``verify`` in unusual but real git situations: a commit made with another
index than ``.git/index`` (``git commit -a``, ``git commit <paths>``: git hands its hooks the
index being committed in ``GIT_INDEX_FILE``), and others found in an audit. Real repositories,
the real CLI; real pre-commit in the tests marked ``slow``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from continuity_checks.cli import main
from tests.helpers.git import CHECK_HOOK, LOCAL_HOOKS, GitRepo, delta, isolate_git, path_of

NAME = path_of("2026-09-21T16-20-00p08-00--agent.json")
FROZEN = path_of("2026-09-20T10-00-00p08-00--codex.frozen.json")
PROJECT = {
    "AGENTS.md": "<!-- deltalayer-conversation-v0.2.1 -->\n## Project Continuity\n",
    "PROJECT.md": "# Project\n",
}
FROZEN_BYTES = delta("2026-09-20T10:00:00+08:00", source="codex")
FROZEN_EDITED = delta("2026-09-20T10:00:00+08:00", source="codex", changes=["x"])


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    isolate_git(monkeypatch, tmp_path / "home")
    repo = GitRepo(tmp_path / "repo")
    repo.commit("start", {**PROJECT, NAME: delta(changes=["a"]), FROZEN: FROZEN_BYTES})
    monkeypatch.chdir(repo.path)
    return repo


def staged(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[tuple[str, str]]]:
    capsys.readouterr()
    code = main(["check", "--staged", *args, "--format", "json"])
    findings = json.loads(capsys.readouterr().out)["findings"]
    return code, [(f["rule"], f["path"]) for f in findings]


def other_index(repo: GitRepo, *paths: str) -> Path:
    """An index as ``git commit <paths>`` makes it for its hooks: HEAD's tree with ``paths``
    added from the work tree (all tracked changes for none, as ``git commit -a``)."""
    index = Path(repo.git("rev-parse", "--absolute-git-dir")) / "next-index-1.lock"
    env = {**os.environ, "GIT_INDEX_FILE": str(index)}
    for args in (["read-tree", "HEAD"], ["add", "--", *paths] if paths else ["add", "-u"]):
        subprocess.run(["git", *args], cwd=repo.path, env=env, check=True)
    return index


def test_the_index_git_commit_hands_its_hooks_is_judged(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``git commit -a`` edits a frozen delta that ``.git/index`` does not have staged: the
    index being committed is GIT_INDEX_FILE's, and the hook must judge that one (it passed)."""
    repo.write({FROZEN: FROZEN_EDITED})
    monkeypatch.setenv("GIT_INDEX_FILE", str(other_index(repo)))
    assert staged(capsys, FROZEN) == (1, [("DL207", FROZEN)])
    assert staged(capsys, "--family", "deltas", FROZEN) == (1, [("DL207", FROZEN)])


def test_what_is_staged_but_not_in_the_commit_is_not_judged(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``git commit PROJECT.md`` while a frozen edit is staged in ``.git/index``: the commit
    leaves the frozen delta alone, so the hook has nothing to say about it."""
    repo.write({FROZEN: FROZEN_EDITED})
    repo.git("add", FROZEN)
    repo.write({"PROJECT.md": "# Project\n\nMore.\n"})
    monkeypatch.setenv("GIT_INDEX_FILE", str(other_index(repo, "PROJECT.md")))
    assert staged(capsys) == (0, [])


def test_a_relative_index_is_read_from_the_top_as_git_reads_it(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plain ``git commit`` hands its hooks ``GIT_INDEX_FILE=.git/index``, relative to the
    top of the work tree; a check run from a subdirectory reads the same index."""
    repo.write({FROZEN: FROZEN_EDITED})
    repo.git("add", FROZEN)
    (repo.path / "sub").mkdir()
    monkeypatch.chdir(repo.path / "sub")
    monkeypatch.setenv("GIT_INDEX_FILE", ".git/index")
    assert staged(capsys) == (1, [("DL207", FROZEN)])


def test_a_sibling_the_commit_leaves_out_is_not_read_from_the_work_tree(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    """pre-commit leaves untracked files in the work tree. A staged manifest and reader that pin
    a capture.json nobody staged passed the commit hook (read from the work tree, exit 0): the
    commit holds no capture. Staged, it passes."""
    from tests.helpers.captures import CAP, build

    repo.write(build())
    repo.git("add", "-A")
    repo.git("rm", "-q", "--cached", CAP + "capture.json")
    named = (CAP + "manifest.json", CAP + "first.reader.json")
    code, findings = staged(capsys, *named)
    assert code == 1
    assert {f for f in findings if f[0] == "CX103"} == {("CX103", p) for p in named}
    repo.git("add", CAP + "capture.json")
    assert staged(capsys, *named) == (0, [])


def test_a_delta_store_without_its_project_file_in_the_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The first commit of a delta store, PROJECT.md written but not staged (and a temporary
    index, as ``git commit <paths>`` makes: the same question asked of it)."""
    isolate_git(monkeypatch, tmp_path / "home")
    fresh = GitRepo(tmp_path / "fresh")
    fresh.write({**PROJECT, NAME: delta(changes=["a"])})
    fresh.git("add", "AGENTS.md", NAME)
    monkeypatch.chdir(fresh.path)
    assert staged(capsys, "AGENTS.md", NAME) == (0, [("DL131", "PROJECT.md")])
    fresh.git("add", "PROJECT.md")
    assert staged(capsys, "AGENTS.md", NAME) == (0, [])
    index = tmp_path / "fresh" / ".git" / "next-index-1.lock"
    env = {**os.environ, "GIT_INDEX_FILE": str(index)}
    subprocess.run(["git", "add", "AGENTS.md", NAME], cwd=fresh.path, env=env, check=True)
    monkeypatch.setenv("GIT_INDEX_FILE", str(index))
    assert staged(capsys, "AGENTS.md", NAME) == (0, [("DL131", "PROJECT.md")])


HOOK = (
    LOCAL_HOOKS
    + CHECK_HOOK
    + f"""\
  - id: check-conversation-deltas
    name: continuity check deltas
    entry: {sys.executable} -m continuity_checks check --staged --family deltas
    language: system
    files: ^\\.deltalayer/
    require_serial: true
"""
)


def hooked(repo: GitRepo) -> None:
    repo.commit("hooks", {".pre-commit-config.yaml": HOOK})
    subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=repo.path, check=True,
                   capture_output=True)  # fmt: skip


def commit(repo: GitRepo, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "commit", "-q", "-m", "change", *args], cwd=repo.path,
                          capture_output=True, text=True, check=False)  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("how", [["-a"], ["--", FROZEN], ["-a", "--amend"]])
def test_the_real_hooks_refuse_a_frozen_edit_committed_without_git_add(
    repo: GitRepo, how: list[str]
) -> None:
    """``git commit -a``, ``git commit <path>`` and ``git commit -a --amend`` with real
    pre-commit: both hooks refuse the frozen edit (the default hook stopped with exit 2 on
    ``.git/index.lock``, the deltas hook passed it)."""
    hooked(repo)
    repo.write({FROZEN: FROZEN_EDITED})
    refused = commit(repo, *how)
    output = refused.stdout + refused.stderr
    assert refused.returncode != 0, output
    assert output.count("DL207") == 2 and "index.lock" not in output, output
    repo.git("checkout", "HEAD", "--", FROZEN)
    repo.write({NAME: delta(updated="2026-09-21T17:00:00+08:00", changes=["a", "b"])})
    accepted = commit(repo, *(["-a"] if how[0] == "-a" else ["--", NAME]))
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr


def test_a_shallow_clone_names_no_creator_for_what_it_cannot_see(
    repo: GitRepo,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """In a shallow clone the oldest commit shows every file as added. Bob's commit is the
    clone's only one; Bob's takeover of the delta the test agent created before it passed the
    commit hook (exit 0, Bob taken for its creator), and the creator's own edit was refused."""
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "bob@example.invalid")
    repo.commit("bob's unrelated work", {"notes.txt": "bob\n"})
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{repo.path}", str(clone)],
                   check=True, capture_output=True)  # fmt: skip
    (clone / NAME).write_text(delta(updated="2026-09-21T17:00:00+08:00", changes=["a", "b"]))
    subprocess.run(["git", "add", "-A"], cwd=clone, check=True)
    monkeypatch.chdir(clone)
    code, findings = staged(capsys)
    assert (code, findings) == (1, [("DL211", NAME)])
    assert main(["check", "--staged"]) == 1
    text = capsys.readouterr().out
    assert "cannot be told" in text and "git fetch --unshallow" in text, text
    # the hint is the way out of a missing history, not the takeover's
    assert "bring in the history that created the delta" in text, text


@pytest.mark.slow
def test_the_real_hook_refuses_a_commit_without_the_capture_its_manifest_pins(
    repo: GitRepo,
) -> None:
    """With real pre-commit: the capture.json left unstaged stays in the work tree (pre-commit
    stashes changes of tracked files only), and the commit without it is refused."""
    from tests.helpers.captures import CAP, build

    hooked(repo)
    repo.write(build())
    repo.git("add", "-A")
    repo.git("rm", "-q", "--cached", CAP + "capture.json")
    refused = commit(repo)
    output = refused.stdout + refused.stderr
    assert refused.returncode != 0 and "CX103" in output, output
    repo.git("add", CAP + "capture.json")
    accepted = commit(repo)
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr


@pytest.mark.slow
def test_the_rewrite_verify_advises_gets_past_the_commit_hook(repo: GitRepo) -> None:
    """verify's hint for a frozen edit already committed: ``git rebase -i``, mark the commit
    ``edit``, make the change, amend as the hint says, continue. The commit hook compares
    what is staged with ``HEAD``, the commit being replaced: the restored frozen delta is a
    change of it (DL207), and the plain ``git commit --amend`` the hint gave was refused."""
    hooked(repo)
    repo.write({FROZEN: FROZEN_EDITED, "work.txt": "the commit's own work\n"})
    repo.git("add", "-A")
    repo.git("commit", "-q", "--no-verify", "-m", "work, and an edit of the frozen delta")
    repo.commit("later", {"notes.txt": "later\n"})
    base = repo.git("rev-parse", "HEAD~2")
    checked = subprocess.run(
        [sys.executable, "-m", "continuity_checks", "verify", "--range", f"{base}..HEAD",
         "--format", "json"], cwd=repo.path, capture_output=True, text=True, check=False,
    )  # fmt: skip
    [finding] = json.loads(checked.stdout)["findings"]
    hint = finding["hint"]
    amend = next(part for part in hint.split("`") if part.startswith("git commit --amend"))
    bad = finding["commit"][:12]
    script = f"sed -i 's/^pick {bad[:7]}/edit {bad[:7]}/'"
    env = {**os.environ, "GIT_SEQUENCE_EDITOR": script}
    subprocess.run(["git", "rebase", "-q", "-i", base], cwd=repo.path, env=env, check=True,
                   capture_output=True)  # fmt: skip
    repo.git("checkout", "HEAD~1", "--", FROZEN)
    fixed = subprocess.run([*amend.split(), "--no-edit"], cwd=repo.path, capture_output=True,
                           text=True, check=False)  # fmt: skip
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    repo.git("rebase", "--continue")
    assert main(["verify", "--range", f"{base}..HEAD"]) == 0


def family_hooks_config() -> str:
    """The per-family hooks as the manifest defines them (``files``, ``always_run``), opted in
    as the README says (``stages: [pre-commit]``), run from this checkout (no network)."""
    from continuity_checks.hooks import HOOKS

    lines = ["repos:", "- repo: local", "  hooks:"]
    for hook in HOOKS:
        if "--family" not in hook.command:
            continue
        family = hook.command[hook.command.index("--family") + 1]
        lines += [
            f"  - id: {hook.id}",
            f"    name: {hook.name}",
            f"    entry: {sys.executable} -m continuity_checks check --staged --family {family}",
            "    language: system",
            "    stages: [pre-commit]",
            f"    files: '{hook.files}'" if hook.files else "",
            f"    always_run: {str(bool(hook.always_run)).lower()}",
            "    require_serial: true",
        ]
    return "\n".join(line for line in lines if line) + "\n"


@pytest.mark.slow
def test_the_family_hooks_judge_a_commit_that_only_deletes(repo: GitRepo) -> None:
    """pre-commit passes no name for a deleted file, and runs a hook whose ``files`` match
    no staged name only with ``always_run``: the deltas hook let a commit that only deletes a
    delta pass (DL206), the captures hook one that only deletes a published capture (CX202)."""
    from tests.helpers.captures import CAP, build

    repo.commit("captures", build())
    repo.commit("hooks", {".pre-commit-config.yaml": family_hooks_config()})
    subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=repo.path, check=True,
                   capture_output=True)  # fmt: skip
    for path, rule in ((NAME, "DL206"), (CAP + "capture.json", "CX202")):
        repo.git("rm", "-q", path)
        refused = commit(repo)
        output = refused.stdout + refused.stderr
        assert refused.returncode != 0 and rule in output, output
        repo.git("reset", "-q", "--hard")


def test_an_octopus_merge_answers_for_what_its_third_parent_brings(
    repo: GitRepo, run_json: Any
) -> None:
    """A frozen edit made on the second of two merged branches: reported at the side commit and
    again at the octopus merge (against its first parent), also when the range holds only the
    merge and its side commits."""
    base = repo.head()
    repo.git("checkout", "-q", "-b", "one")
    repo.commit("one", {"one.txt": "1\n"})
    repo.git("checkout", "-q", "-b", "two", "main")
    edit = repo.commit("two", {FROZEN: FROZEN_EDITED})
    repo.git("checkout", "-q", "main")
    repo.commit("main", {"main.txt": "m\n"})
    repo.git("merge", "-q", "--no-edit", "one", "two")
    merge = repo.head()
    assert len(repo.git("log", "-1", "--format=%P").split()) == 3
    code, report = run_json("verify", "--range", f"{base}..HEAD")
    assert code == 1
    assert sorted((f["rule"], f["commit"]) for f in report["findings"]) == sorted(
        [("DL207", edit), ("DL207", merge)]
    )


@pytest.mark.parametrize("where", ["worktree", "submodule"])
def test_the_commit_hook_in_a_linked_worktree_and_a_submodule(
    repo: GitRepo,
    tmp_path: Path,
    where: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``.git`` is a file there, the index lives in the main repository's git directory: the
    frozen edit staged in the linked worktree (or the submodule) is the one judged."""
    if where == "worktree":
        top = tmp_path / "linked"
        repo.git("worktree", "add", "-q", str(top), "-b", "linked")
    else:
        outer = GitRepo(tmp_path / "outer")
        outer.commit("outer", {"README.md": "outer\n"})
        outer.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(repo.path),
                  "inner")  # fmt: skip
        top = outer.path / "inner"
    assert (top / ".git").is_file()
    (top / FROZEN).write_text(FROZEN_EDITED)
    subprocess.run(["git", "add", FROZEN], cwd=top, check=True)
    monkeypatch.chdir(top / ".deltalayer")
    assert staged(capsys) == (1, [("DL207", FROZEN)])


@pytest.mark.slow
def test_the_real_hook_judges_the_staged_bytes_not_the_work_tree(repo: GitRepo) -> None:
    """pre-commit puts unstaged changes aside while its hooks run: a delta staged broken and
    mended only in the work tree is refused; staged whole and broken only in the work tree, it
    goes through, and the work tree keeps its bytes."""
    hooked(repo)
    good = delta(updated="2026-09-21T17:00:00+08:00", changes=["a", "b"])
    repo.write({NAME: good[:-3] + "\n"})  # the closing bracket and brace cut off
    repo.git("add", NAME)
    repo.write({NAME: good})
    refused = commit(repo)
    output = refused.stdout + refused.stderr
    assert refused.returncode != 0 and "CC004" in output, output
    assert (repo.path / NAME).read_text() == good
    repo.git("add", NAME)
    repo.write({NAME: "{broken\n"})
    accepted = commit(repo)
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert (repo.path / NAME).read_text() == "{broken\n"
    assert repo.git("show", f"HEAD:{NAME}") + "\n" == good
