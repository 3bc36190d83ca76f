"""``continuity verify`` on real git histories: what a range is (merges, refs, the git processes
asked, the configuration that judges it, the order of its findings)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from continuity_checks.cli import main
from tests.conftest import RunCLI
from tests.helpers.conversations import A0, A, B, C
from tests.helpers.git import LEGACY, GitRepo, delta, isolate_git
from tests.helpers.verify import A_FROZEN, config, found, three_conversations, verify


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    """A history with three conversations' deltas and legacy history, as the base commit."""
    return three_conversations(tmp_path, monkeypatch)


# --- merges answer for what they bring into the mainline -------------------------------------


def merge(repo: GitRepo, branch: str, *options: str) -> str:
    repo.git("merge", "-q", "--no-ff", "--no-edit", *options, branch)
    return repo.head()


def side_branch(repo: GitRepo, change: dict[str, Any]) -> tuple[str, str]:
    """A branch ``side`` from HEAD with one commit making ``change`` (``delete``, ``files``),
    an unrelated commit on main, then the merge of ``side`` into main: (side commit, merge)."""
    repo.git("checkout", "-q", "-b", "side")
    side = repo.commit("side work", change.get("files"), delete=change.get("delete", ()))
    repo.git("checkout", "-q", "main")
    repo.commit("main work", {"src.py": "print()\n"})
    return side, merge(repo, "side")


@pytest.mark.parametrize(
    ("change", "rule", "path", "line"),
    [
        ({"delete": [A_FROZEN]}, "DL207", A_FROZEN, None),
        ({"delete": [B]}, "DL206", B, None),
        ({"files": {LEGACY: ""}}, "DL209", LEGACY, 1),
    ],
    ids=["frozen-deleted", "delta-deleted", "legacy-emptied"],
)
def test_merge_that_keeps_the_other_side(
    repo: GitRepo,
    run_json: RunCLI,
    change: dict[str, Any],
    rule: str,
    path: str,
    line: int | None,
) -> None:
    """The merge brings the side branch's change into the mainline: it answers for it, also
    when the side commit that made it is outside the range, and again when it is inside."""
    repo.commit("freeze A", {A_FROZEN: A0}, delete=[A], trailers=[A])
    side, merged = side_branch(repo, change)
    code, report = verify(run_json, repo, "--range", f"{side}..HEAD")
    assert (code, found(report)) == (1, [(rule, path, merged, line)])
    code, report = verify(run_json, repo, "--range", "base..HEAD")
    assert code == 1
    assert sorted(found(report), key=str) == sorted(
        [(rule, path, side, line), (rule, path, merged, line)], key=str
    )


def test_merge_that_rolls_updated_at_back(repo: GitRepo, run_json: RunCLI) -> None:
    repo.git("checkout", "-q", "-b", "side")
    repo.commit("side: A to 17:00", {A: delta(updated="2026-09-21T17:00:00+08:00")}, trailers=[A])
    repo.git("checkout", "-q", "main")
    repo.commit("main: A to 18:00", {A: delta(updated="2026-09-21T18:00:00+08:00")}, trailers=[A])
    merged = merge(repo, "side", "-X", "theirs")  # the conflict resolved with side's version
    code, report = verify(run_json, repo, "--range", "base..HEAD")
    assert (code, found(report)) == (1, [("DL205", A, merged, 1)])


def test_unrelated_history_merge_that_changes_a_source(repo: GitRepo, run_json: RunCLI) -> None:
    repo.git("checkout", "-q", "--orphan", "other")
    repo.git("rm", "-q", "-r", "--cached", ".")
    (repo.path / A).unlink()
    (repo.path / C).unlink()
    (repo.path / LEGACY).unlink()
    root = repo.commit("other root", {B: delta("2026-09-21T17:00:00+08:00", source="agent")})
    repo.git("clean", "-q", "-f", "-d")
    repo.git("checkout", "-q", "-f", "main")
    merged = merge(repo, "other", "--allow-unrelated-histories", "-X", "theirs")
    code, report = verify(run_json, repo, "--range", "base..HEAD")
    # B's name says "codex" (DL110), on the other line and in the merge that brings it in
    assert (code, found(report)) == (
        1, [("DL110", B, root, None), ("DL110", B, merged, None), ("DL204", B, merged, 1)]
    )  # fmt: skip
    assert report["findings"][2]["pointer"] == "/source"


# --- no ref or file of the repository shows verify other commits -------------------------------


def test_replace_refs_do_not_hide_a_commit(repo: GitRepo, run_json: RunCLI) -> None:
    frozen = repo.commit("freeze A", {A_FROZEN: A0}, delete=[A], trailers=[A])
    edit = repo.commit("edit frozen", {A_FROZEN: A0.replace("first", "rewritten")})
    repo.git("checkout", "-q", "-b", "decoy", frozen)
    clean = repo.commit("edit frozen", {"README.md": "y\n"})
    repo.git("checkout", "-q", "main")
    repo.git("replace", edit, clean)
    assert repo.git("log", "-1", "--format=%H", "--", A_FROZEN) == frozen  # git is fooled
    code, report = verify(run_json, repo, "--range", "base..HEAD")
    assert (code, found(report)) == (1, [("DL207", A_FROZEN, edit, 1)])


def test_grafts_do_not_hide_a_commit(repo: GitRepo, run_json: RunCLI) -> None:
    repo.commit("freeze A", {A_FROZEN: A0}, delete=[A], trailers=[A])
    edit = repo.commit("edit frozen", {A_FROZEN: A0.replace("first", "rewritten")})
    later = repo.commit("later", {"src.py": "print()\n"})
    grafts = repo.path / ".git" / "info" / "grafts"
    grafts.parent.mkdir(exist_ok=True)
    grafts.write_text(f"{later} {repo.git('rev-parse', 'base')}\n", encoding="ascii")
    assert edit not in repo.git("-c", "advice.graftFileDeprecated=false", "log", "--format=%H")
    code, report = verify(run_json, repo, "--range", "base..HEAD")
    assert (code, found(report)) == (1, [("DL207", A_FROZEN, edit, 1)])


# --- at most three git processes per run --------------------------------------------------------


def verify_spied(
    run_json: RunCLI, root: Path, spec: str, spy: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[list[str], dict[str, Any]]:
    """``verify --range spec`` with a ``git`` first on PATH that logs each command and runs the
    real git: the git subcommands it started, and its report."""
    real = shutil.which("git")
    assert real is not None
    spy.mkdir(exist_ok=True)
    log = spy / "commands"
    log.write_text("", encoding="utf-8")
    (spy / "git").write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{real}" "$@"\n')
    (spy / "git").chmod(0o755)
    with monkeypatch.context() as patch:
        patch.setenv("PATH", f"{spy}{os.pathsep}{os.environ['PATH']}")
        _, report = run_json("verify", "--root", str(root), "--range", spec)
    commands = []
    for line in log.read_text(encoding="utf-8").splitlines():
        words = line.split()
        command = next(word for word in words if not word.startswith("--"))
        # the look-up of where deltas created before the range came from (DL211)
        commands.append("log --diff-filter=A" if "--diff-filter=A" in words else command)
    return commands, report


@pytest.mark.skipif(sys.platform == "win32", reason="a shell script stands in for git")
def test_three_git_processes_per_run(
    repo: GitRepo, run_json: RunCLI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three git processes whatever the number of commits; a fourth, one ``git log`` for all of
    them, when the range changes deltas created before it (their creators own them: DL211)."""
    for n in range(3):
        repo.commit(f"A {n}", {A: delta(updated=f"2026-09-21T16:3{n}:00+08:00")}, trailers=[A])
    bad = repo.commit("drop B", delete=[B])
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo.path), str(clone)], check=True)
    work = GitRepo.__new__(GitRepo)
    work.path = clone
    work.git("checkout", "-q", "-b", "feature")
    work.commit("C", {C: delta("2026-09-21T18:00:00+08:00", "2026-09-21T19:00:00+08:00", "claude")})
    dropped = [("DL206", B, bad, None)]
    lookup = ["log --diff-filter=A"]
    for root, spec, commits, findings, after in (
        # A was created before base: one look-up of its creator, after the walk
        (repo.path, "base..HEAD", 4, dropped, lookup),
        (repo.path, "HEAD", 5, dropped, []),  # every creation is in the range
        # no remote-tracking branch: all history
        (repo.path, "0" * 40 + "..HEAD", 5, dropped, []),
        # the remote-tracking tips come from the same rev-parse; C is older than the range
        (clone, "..HEAD", 1, [], lookup),
    ):
        commands, report = verify_spied(run_json, root, spec, tmp_path / "spy", monkeypatch)
        # log and cat-file run side by side: either may write its line first
        assert commands[:1] == ["rev-parse"], spec
        assert sorted(commands[1:3]) == ["cat-file", "log"], spec
        assert commands[3:] == after, spec
        assert (report["summary"]["commits"], found(report)) == (commits, findings), spec


def test_merge_ownership(repo: GitRepo, run_json: RunCLI) -> None:
    """A merge that brings changes of two deltas into the mainline modifies two deltas: its
    trailers must name them (docs/history-checks.md, Merges)."""
    repo.git("checkout", "-q", "-b", "side")
    repo.commit("A works", {A: delta(updated="2026-09-21T16:30:00+08:00")}, trailers=[A])
    repo.commit(
        "B works",
        {B: delta("2026-09-21T17:00:00+08:00", "2026-09-21T17:30:00+08:00", "codex")},
        trailers=[B],
    )
    repo.git("checkout", "-q", "main")
    repo.commit("main work", {"src.py": "print()\n"})
    repo.git("tag", "before")
    merged = merge(repo, "side")
    code, report = verify(run_json, repo, "--range", "base..HEAD")
    assert (code, [f[:3] for f in found(report)]) == (1, [("DL202", A, merged)])
    repo.git("reset", "-q", "--hard", "before")
    trailers = f"Continuity-Delta: {A}\nContinuity-Delta: {B}"
    named = merge(repo, "side", "-m", "Merge side", "-m", trailers)
    assert named != merged
    assert verify(run_json, repo, "--range", "base..HEAD")[0] == 0


# --- the configuration that judges a range is the base's ------------------------------------


@pytest.mark.parametrize(
    ("name", "text"),
    [
        (".continuity.toml", '[rules]\nDL207 = "off"\n'),
        (".continuity.toml", 'exclude = [".deltalayer/**"]\n'),
        ("pyproject.toml", '[tool.continuity.rules]\nDL207 = "off"\n'),
    ],
)
def test_a_range_cannot_switch_off_the_rule_it_breaks(
    repo: GitRepo, run_json: RunCLI, name: str, text: str
) -> None:
    repo.commit("freeze", {A_FROZEN: A0}, delete=[A], trailers=[A_FROZEN])
    repo.git("tag", "-f", "base")
    edit = repo.commit("edit and silence", {A_FROZEN: A0.replace("first", "changed"), name: text})
    code, report = verify(run_json, repo, "--range", "base..HEAD")
    assert code == 1
    assert sorted(found(report)) == sorted(
        [("DL207", A_FROZEN, edit, 1), ("CC011", name, edit, None)]
    )
    # given on the command line, a configuration still wins
    given = repo.path.parent / "given" / name
    given.parent.mkdir()
    given.write_text(text, encoding="utf-8")
    code, report = verify(run_json, repo, "--range", "base..HEAD", "--config", str(given))
    assert ("DL207", A_FROZEN, edit, 1) not in found(report)


def test_the_base_configuration_applies(repo: GitRepo, run_json: RunCLI) -> None:
    repo.commit("configure", {".continuity.toml": '[rules]\nDL206 = "warning"\n'})
    repo.git("tag", "-f", "base")
    repo.write({".continuity.toml": ""})  # the work tree's says otherwise: not what judges
    deleted = repo.commit("delete", delete=[B])
    code, report = verify(run_json, repo, "--range", "base..HEAD")
    assert code == 0
    assert sorted((f["rule"], f["severity"]) for f in report["findings"]) == [
        ("CC011", "warning"),
        ("DL206", "warning"),
    ]
    assert {f["commit"] for f in report["findings"]} == {deleted}


def test_a_pyproject_change_outside_tool_continuity_is_no_configuration_change(
    repo: GitRepo, run_json: RunCLI
) -> None:
    repo.commit("project", {"pyproject.toml": '[project]\nname = "x"\n'})
    repo.git("tag", "-f", "base")
    repo.commit("version", {"pyproject.toml": '[project]\nname = "x"\nversion = "1"\n'})
    assert verify(run_json, repo, "--range", "base..HEAD") == (
        0,
        verify(run_json, repo, "--range", "base..HEAD")[1],
    )
    assert verify(run_json, repo, "--range", "base..HEAD")[1]["findings"] == []


def test_a_bad_configuration_at_the_base_names_the_base(
    repo: GitRepo, run_json: RunCLI, capsys: pytest.CaptureFixture[str]
) -> None:
    repo.commit("configure", {".continuity.toml": "colour = 1\n"})
    repo.git("tag", "-f", "base")
    repo.commit("fix", {".continuity.toml": ""})
    capsys.readouterr()
    code = main(["verify", "--range", "base..HEAD", "--root", str(repo.path)])
    assert code == 2
    err = capsys.readouterr().err
    assert "the base" in err and ".continuity.toml" in err and "colour" in err


@pytest.mark.parametrize(
    ("name", "text"),
    [
        (".continuity.toml", '[rules]\nCX201 = "off"\n'),
        ("pyproject.toml", '[tool.continuity.rules]\nCX201 = "off"\n'),
    ],
)
@pytest.mark.parametrize("revision_range", ["HEAD", "..HEAD"])
def test_a_range_with_no_base_is_judged_by_the_default_configuration(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    run_json: RunCLI,
    name: str,
    text: str,
    revision_range: str,
) -> None:
    """All of history (and a new branch where no remote-tracking branch exists) has no base:
    a first commit that brings a configuration switching a rule off does not switch it off
    for the range; the configuration is CC011, whose message names the defaults."""
    from tests.helpers.captures import CAP, build, edit

    isolate_git(monkeypatch, tmp_path / "home")
    fresh = GitRepo(tmp_path / "fresh")
    configured = fresh.commit("publish a capture, silence CX201", {**build(), name: text})
    capture = CAP + "capture.json"
    rewrite = fresh.commit(
        "rewrite it", {capture: edit((fresh.path / capture).read_text(), "{", "{ ")}
    )
    code, report = run_json("verify", "--root", str(fresh.path), "--range", revision_range)
    assert code == 1
    # (the rewrite also leaves the capture's pins false: CX104, CX111, as check --all says)
    assert [f for f in found(report) if f[0] in ("CC011", "CX201")] == [
        ("CC011", name, configured, None),
        ("CX201", capture, rewrite, None),
    ]
    message = report["findings"][0]["message"]
    assert "judged by the default configuration" in message, message
    assert "base" not in message.replace("has no base", ""), message


def test_cc011_names_the_base_that_judges_the_range(repo: GitRepo, run_json: RunCLI) -> None:
    """The configuration change is reported with the configuration actually used: the base
    commit's, named by its id, with or without a configuration file there."""
    base = repo.git("rev-parse", "base")
    added = repo.commit("configure", {".continuity.toml": '[rules]\nDL206 = "off"\n'})
    code, report = verify(run_json, repo, "--range", "base..HEAD")
    assert (code, found(report)) == (0, [("CC011", ".continuity.toml", added, None)])
    assert f"judged by the base {base[:12]} (no configuration)" in report["findings"][0]["message"]
    changed = repo.commit("configure again", {".continuity.toml": '[rules]\nDL206 = "warning"\n'})
    code, report = verify(run_json, repo, "--range", f"{added}..HEAD")
    assert (code, found(report)) == (0, [("CC011", ".continuity.toml", changed, None)])
    message = report["findings"][0]["message"]
    assert f"judged by the base {added[:12]}:.continuity.toml" in message, message


def test_findings_keep_history_order_and_the_report_knows_every_place(
    repo: GitRepo, run_json: RunCLI
) -> None:
    """The report knows each walked commit's place in the range from 20 bytes a commit (not a
    string and a dict entry each): findings still come in history order, whatever their paths,
    and a commit without findings is found too."""
    from continuity_checks import engine
    from continuity_checks.core.config import Config

    repo.commit(
        "forward C", {C: delta(C0_START, "2026-09-21T19:00:00+08:00", "claude")}, trailers=[C]
    )
    forward = repo.commit(
        "forward A", {A: delta(updated="2026-09-21T18:00:00+08:00")}, trailers=[A]
    )
    first = repo.commit(
        "back C", {C: delta(C0_START, "2026-09-21T18:30:00+08:00", "claude")}, trailers=[C]
    )
    unrelated = repo.commit("unrelated", {"README.md": "y\n"})
    second = repo.commit("back A", {A: delta(updated="2026-09-21T17:00:00+08:00")}, trailers=[A])
    code, report = verify(run_json, repo, "--range", "base..HEAD")
    assert (code, found(report)) == (1, [("DL205", C, first, 1), ("DL205", A, second, 1)])
    order = engine.verify(repo.path, Config(), "base..HEAD").commit_order
    assert (order[first], order[second], order[forward], order[unrelated]) == (3, 5, 2, 4)
    assert list(order)[2:] == [first, unrelated, second] and len(order) == 5
    assert order.get("0" * 40) is None and order.get("not a commit") is None


C0_START = "2026-09-21T18:00:00+08:00"


def test_history_findings_come_oldest_first_with_how_to_rewrite_each(
    repo: GitRepo, run_json: RunCLI
) -> None:
    """Findings in history order, whatever the order of the commit ids; each hint names the
    rebase that rewrites its commit: from its parent, and through a merge."""
    base = repo.git("rev-parse", "base")
    shas = [
        repo.commit(f"back {n}", {A: delta(updated=f"2026-09-21T15:{50 - 10 * n}:00+08:00")})
        for n in range(4)
    ]
    code, report = verify(run_json, repo, "--range", "base..HEAD")
    assert code == 1
    assert [(f["rule"], f["commit"]) for f in report["findings"]] == [
        ("DL205", sha) for sha in shas
    ]
    for finding, parent in zip(report["findings"], [base, *shas], strict=False):
        assert f"`git rebase -i {parent[:12]}`" in finding["hint"], finding["hint"]
    repo.git("checkout", "-q", "-b", "side", "base")
    side = repo.commit("side drops B", delete=[B])
    repo.git("checkout", "-q", "main")
    merged = merge(repo, "side")
    _, report = verify(run_json, repo, "--range", f"{shas[-1]}..HEAD")
    hints = {f["commit"]: f["hint"] for f in report["findings"]}
    assert f"`git rebase -i {base[:12]}`" in hints[side]
    assert f"`git rebase -i --rebase-merges {shas[-1][:12]}`" in hints[merged]


def test_a_root_commit_is_rewritten_from_the_root(tmp_path: Path, run_json: RunCLI) -> None:
    fresh = GitRepo(tmp_path / "fresh")
    root = fresh.commit("a delta with no trailer", {A: A0})
    strict = config(tmp_path, '[deltas]\nownership = "trailer"\n')
    code, report = run_json(
        "verify", "--root", str(fresh.path), "--range", "HEAD", "--config", strict
    )
    assert (code, [(f["rule"], f["commit"]) for f in report["findings"]]) == (
        1,
        [("DL203", root)],
    )
    assert "`git rebase -i --root`" in report["findings"][0]["hint"]


def test_verify_from_a_subdirectory_applies_the_top_configuration(
    repo: GitRepo, run_json: RunCLI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run in a subdirectory without --root, verify finds the repository and the configuration
    at its top: the base's for a range with a base. A range without a base is judged by the
    defaults, not by the work tree's configuration, unless --config names it."""
    dropped = repo.commit("drop B", delete=[B])
    configured = repo.commit("configure", {".continuity.toml": '[rules]\nDL206 = "off"\n'})
    (repo.path / "sub").mkdir()
    monkeypatch.chdir(repo.path / "sub")
    code, report = run_json("verify", "--range", "HEAD")
    assert (code, found(report)) == (
        1,
        [("DL206", B, dropped, None), ("CC011", ".continuity.toml", configured, None)],
    )
    code, report = run_json("verify", "--range", "HEAD", "--config", "../.continuity.toml")
    assert (code, found(report)) == (0, [("CC011", ".continuity.toml", configured, None)])
