"""Every hint can be followed, and the words around the tool say what it does: each test makes
the situation in a real git repository, runs the real CLI (or real pre-commit), and where the
hint names a command, runs it and checks that the finding is gone."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from continuity_checks.cli import main
from continuity_checks.hooks import CHECK, HOOKS
from tests.conftest import REPO, RunCLI
from tests.helpers.captures import CAP, build
from tests.helpers.git import CHECK_HOOK, LOCAL_HOOKS, GitRepo, delta, isolate_git, path_of

A = path_of("2026-09-21T16-20-00p08-00--agent.json")
B = path_of("2026-09-21T16-20-00p08-00--other.json")
FROZEN = path_of("2026-09-21T16-20-00p08-00--agent.frozen.json")


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    isolate_git(monkeypatch, tmp_path / "home")
    monkeypatch.delenv("CI", raising=False)
    made = GitRepo(tmp_path / "project")
    monkeypatch.chdir(made.path)
    return made


def only(report: dict[str, Any], rule: str) -> dict[str, Any]:
    found = [f for f in report["findings"] if f["rule"] == rule]
    assert len(found) == 1, report["findings"]
    return found[0]


def restore_command(hint: str) -> list[str]:
    """The `git restore --staged -- ...` command a hint names, as words."""
    match = re.search(r"`(git restore --staged -- [^`]+)`", hint)
    assert match, hint
    return match.group(1).split()


def test_pv203_at_commit_time_names_the_original_to_unstage(
    repo: GitRepo, run_json: RunCLI
) -> None:
    """The staged change is the listed original, not its listing: the hint unstages the
    original, and doing so leaves a commit that passes."""
    repo.commit("evidence", {"evidence/x.txt": "hello\n"})
    subprocess.run("sha256sum evidence/x.txt > SHA256SUMS", shell=True, check=True, cwd=repo.path)
    repo.commit("listing")
    repo.write({"evidence/x.txt": "changed\n"})
    repo.git("add", "-A")
    code, report = run_json("check", "--staged", "evidence/x.txt")
    finding = only(report, "PV203")
    assert code == 1 and finding["path"] == "SHA256SUMS"
    command = restore_command(finding["hint"])
    assert command[-1] == "evidence/x.txt", finding["hint"]
    repo.git(*command[1:])
    assert run_json("check", "--staged", "evidence/x.txt")[0] == 0


def test_dl202_at_commit_time_unstages_the_other_deltas_without_a_trailer(
    repo: GitRepo, run_json: RunCLI
) -> None:
    """The commit hook runs before the message exists, so it never suggests a trailer: it
    keeps one delta in the commit and unstages the others."""
    repo.commit("two", {A: delta(changes=["a"]), B: delta(source="other", changes=["b"])})
    later = "2026-09-21T17:00:00+08:00"
    repo.write({A: delta(updated=later, changes=["a", "c"])})
    repo.write({B: delta(updated=later, source="other", changes=["b", "d"])})
    repo.git("add", "-A")
    code, report = run_json("check", "--staged", A, B)
    hint = only(report, "DL202")["hint"]
    assert code == 1 and "Continuity-Delta" not in hint and "trailer" not in hint, hint
    assert restore_command(hint)[3:] == ["--", B]
    repo.git(*restore_command(hint)[1:])
    assert run_json("check", "--staged", A)[0] == 0


def test_cx103_does_not_assume_the_named_file_existed(repo: GitRepo, run_json: RunCLI) -> None:
    """A manifest naming a capture that was never committed: the hint says how to add it, not
    only how to restore it from history."""
    files = build()
    del files[CAP + "capture.json"]
    repo.commit("captures", files)
    code, report = run_json("check", "--all")
    hint = next(f for f in report["findings"] if f["rule"] == "CX103")["hint"]
    assert code == 1 and "never committed: add it" in hint, hint
    assert "restore the file from history" not in hint


def frozen_edit(repo: GitRepo) -> str:
    """A repository whose last commit changes a frozen delta (DL207); that commit's id."""
    repo.commit("freeze", {FROZEN: delta(changes=["a"])})
    return repo.commit("edit", {FROZEN: delta(changes=["b"]), "notes.txt": "also\n"})


def test_a_pushed_commit_is_not_told_to_be_rewritten_before_the_push(
    repo: GitRepo, run_json: RunCLI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """By hand (or at push) a commit is rewritten before it is pushed; in CI it is already
    pushed: a rewrite and a force-push only for a branch no one else has, the baseline for a
    shared one. The rewrite, followed step by step, leaves a range that passes."""
    edit = frozen_edit(repo)
    hint = only(run_json("verify", "--range", "HEAD~1..HEAD")[1], "DL207")["hint"]
    assert f"commit {edit[:12]} must be rewritten before it is pushed" in hint
    monkeypatch.setenv("CI", "true")
    hint = only(run_json("verify", "--range", "HEAD~1..HEAD")[1], "DL207")["hint"]
    assert "before it is pushed" not in hint and f"commit {edit[:12]} is already pushed" in hint
    assert "`git push --force-with-lease`" in hint and "branch no one else has built on" in hint
    assert "On a shared branch it stays in history" in hint and "baseline verify" in hint
    steps = re.findall(r"`(git [^`]+)`", hint)
    assert steps[0] == f"git rebase -i {repo.git('rev-parse', 'HEAD~1')[:12]}", steps
    monkeypatch.setenv("GIT_SEQUENCE_EDITOR", "sed -i 1s/^pick/edit/")
    monkeypatch.setenv("GIT_EDITOR", "true")
    repo.git(*steps[0].split()[1:])
    repo.git("checkout", "HEAD~1", "--", FROZEN)  # the change: the frozen bytes back
    for step in steps[1:3]:  # git commit --amend --no-verify, git rebase --continue
        repo.git(*step.split()[1:])
    assert run_json("verify", "--range", "HEAD")[0] == 0


def test_github_annotations_say_the_commit_is_pushed(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    """--format github is a run in Actions, whatever the environment says."""
    edit = frozen_edit(repo)
    capsys.readouterr()
    assert main(["verify", "--range", "HEAD~1..HEAD", "--format", "github"]) == 1
    out = capsys.readouterr().out
    assert f"commit {edit[:12]} is already pushed" in out and "before it is pushed" not in out


def test_pv103_for_a_listing_written_in_its_directory_names_relative_to(
    repo: GitRepo, run_json: RunCLI
) -> None:
    """`cd evidence && sha256sum x > SHA256SUMS`, the usual way: the path exists beside the
    listing, and the hint names the option that reads it so; setting it passes."""
    repo.write({"evidence/x.txt": "hello\n"})
    subprocess.run(
        "sha256sum x.txt > SHA256SUMS", shell=True, check=True, cwd=repo.path / "evidence"
    )
    repo.commit("evidence")
    code, report = run_json("check", "--all")
    hint = only(report, "PV103")["hint"]
    assert code == 1 and hint.startswith("evidence/x.txt exists"), hint
    assert 'relative-to = "sums-file"' in hint and "cd evidence && sha256sum" in hint
    history = only(run_json("verify", "--range", "HEAD")[1], "PV103")["hint"]
    assert 'relative-to = "sums-file"' in history
    repo.write({".continuity.toml": '[provenance]\nrelative-to = "sums-file"\n'})
    assert run_json("check", "--all") == (0, run_json("check", "--all")[1])
    assert run_json("check", "--all")[1]["findings"] == []


def test_provenance_add_keeps_its_lock_out_of_git(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    """The lock beside the listing gets a .gitignore line, once, beside delta init's."""
    repo.commit("evidence", {"evidence/x.txt": "hello\n"})
    assert main(["delta", "init"]) == 0
    capsys.readouterr()
    assert main(["provenance", "add", "evidence/x.txt", "--sums", "evidence/SHA256SUMS"]) == 0
    assert "added evidence/.SHA256SUMS.lock to .gitignore" in capsys.readouterr().out
    assert main(["provenance", "add", "evidence/x.txt", "--sums", "evidence/SHA256SUMS"]) == 0
    lines = (repo.path / ".gitignore").read_text().splitlines()
    assert lines == [".deltalayer/.lock", "evidence/.SHA256SUMS.lock"]
    untracked = repo.git("status", "--porcelain", "--untracked-files=all")
    assert ".lock" not in untracked and "evidence/SHA256SUMS" in untracked


def readme_local_hooks() -> str:
    """The README's `repo: local` configuration, as written."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    found = re.search(r"```yaml\n(repos:\n  - repo: local\n.*?)```", readme, re.DOTALL)
    assert found, "the README has no repo: local block"
    return found.group(1)


def test_the_readme_local_hook_is_the_tested_one() -> None:
    """The commit hook the real-pre-commit tests install is the README's, comments aside."""

    def words(text: str) -> list[list[str]]:
        lines = [line.split("#")[0].split() for line in text.splitlines()]
        # the entry as the command's words: `continuity` here, this interpreter in the tests
        return [w[:1] + w[-2:] if w[:1] == ["entry:"] else w for w in lines if w]

    assert words(readme_local_hooks()) == words(LOCAL_HOOKS + CHECK_HOOK)


def test_warnings_and_notes_show_at_commit_with_the_readme_local_hook(
    repo: GitRepo,
) -> None:
    """With the README's local hook under real pre-commit, a passing commit shows its
    warning (DL113, a pretty-printed delta) and its note (a file no family claims)."""
    config = readme_local_hooks().replace(
        "entry: continuity check", f"entry: {sys.executable} -m continuity_checks check"
    )
    examples = REPO / "examples" / "deltalayer"
    repo.commit(
        "start",
        {
            ".pre-commit-config.yaml": config,
            "AGENTS.md": (examples / "AGENTS.md").read_text(encoding="utf-8"),
            "PROJECT.md": (examples / "PROJECT.md").read_text(encoding="utf-8"),
            A: delta(),
        },
    )
    subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=repo.path, check=True)
    pretty = delta(updated="2026-09-21T17:00:00+08:00", changes=["x"]).replace(",", ", ")
    repo.write({A: pretty, "app.py": "print()\n"})
    repo.git("add", "-A")
    done = subprocess.run(
        ["git", "commit", "-q", "-m", "pretty"],
        cwd=repo.path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout
    assert "DL113" in done.stdout and "no family claims them: app.py" in done.stdout, done.stdout


def test_every_shipped_hook_shows_a_passing_run() -> None:
    """pre-commit shows a passing hook's output only with verbose: every hook sets it."""
    assert all(hook.verbose for hook in HOOKS)
    manifest = (REPO / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    assert manifest.count("  verbose: true\n") == len(HOOKS)


def test_the_hook_description_says_unclaimed_files_get_a_note(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    repo.write({"app.py": "print()\n"})
    capsys.readouterr()
    assert main(["check", "app.py"]) == 0
    assert "not checked, no family claims them: app.py" in capsys.readouterr().out
    assert "named in a note" in CHECK.description and "ignored" not in CHECK.description


def test_check_help_names_the_configuration_that_applies(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], run_json: RunCLI
) -> None:
    """The configuration at the top of the repository applies under --root, and --help says
    so (not ROOT/.continuity.toml, which is never read for a subdirectory)."""
    repo.write(
        {
            ".continuity.toml": '[rules]\nPV103 = "off"\n',
            "sub/.continuity.toml": '[rules]\nPV103 = "error"\n',
            "sub/SHA256SUMS": f"{'0' * 64}  sub/missing.txt\n",
        }
    )
    assert run_json("check", "--all", "--root", "sub") == (0, run_json("check", "--all")[1])
    capsys.readouterr()
    assert main(["check", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "ROOT/.continuity.toml" not in text
    assert "default: .continuity.toml at the top of the repository that holds ROOT" in text


def test_the_readme_says_why_the_examples_are_clean(tmp_path: Path, run_json: RunCLI) -> None:
    """`check --all --root examples` is clean in this repository only: the README names what
    makes it so, and a copy elsewhere reports exactly that."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    quick_start = readme[: readme.index("Run the tests")]
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    off = re.findall(r'^(\w{2}\d{3}) = "off"', pyproject, re.MULTILINE)
    assert off and all(f"`{rule}` off" in quick_start for rule in off), off
    assert run_json("check", "--all", "--root", str(REPO / "examples"))[0] == 0
    copy = shutil.copytree(REPO / "examples", tmp_path / "examples")
    findings = run_json("check", "--all", "--root", str(copy))[1]["findings"]
    assert {f["rule"] for f in findings} == {*off, "PV103"}
    assert "`PV103`" in quick_start


def test_verify_says_which_baseline_it_read(repo: GitRepo, run_json: RunCLI) -> None:
    """An untracked baseline hides a finding for a range without a base (all of history) and
    not for one with a base (whose committed baseline judges it): each run says which it read."""
    frozen_edit(repo)
    assert main(["baseline", "verify"]) == 0
    code, report = run_json("verify", "--range", "HEAD")
    assert code == 0 and report["summary"]["baselined"] == 1
    assert report["notes"] == [
        "baseline read: .continuity-baseline.json in the work tree (the range has no base "
        "commit to read one from)"
    ]
    code, report = run_json("verify", "--range", "HEAD~1..HEAD")
    assert code == 1 and not report["summary"]["baselined"]
    base = repo.git("rev-parse", "HEAD~1")[:12]
    assert report["notes"] == [
        f"baseline read: none (the range's base {base} has no .continuity-baseline.json; the "
        "work tree's is read only for a range without a base, or with --baseline)"
    ]
