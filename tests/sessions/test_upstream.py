"""What OpenProgram's own operations write is clean: sessions, turns, retries, failed turns,
compaction, rewinds (to the first message: head "ROOT"), branches, and project-bound sessions
with the project auto-commit and the shadow-git store, written by the test-side writer
(``sessions_helpers.OpenProgram``) and checked with the real CLI in real git repositories."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RunCLI
from tests.helpers.git import isolate_git
from tests.helpers.sessions import AGENT_GIT, OpenProgram, commit_as, git


@pytest.fixture(autouse=True)
def _git_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    isolate_git(monkeypatch, tmp_path / "git-home")


def findings(report: dict[str, Any]) -> list[tuple[str, str, str | None]]:
    return sorted((f["rule"], f["path"], f["pointer"]) for f in report["findings"])


def bound_run(home: Path) -> tuple[OpenProgram, Path, str]:
    """Two sessions bound to one project, before any ad-hoc chat (no default project): turns
    with the project auto-commit and the shadow-git store, a failed turn and its resend, a
    rewind to the first message and a fresh start from "ROOT"; a second session whose ROOT was
    never seeded, rewound to its first message."""
    op = OpenProgram(home)
    project = home / "code" / "wiki"
    project.mkdir(parents=True)
    sid = op.create_session(project)
    first = op.turn(sid, "Fix the README", edits={"README.md": "one\n"}, project=project,
                    shadow=True)  # fmt: skip
    op.turn(sid, "Now the docs\nin detail", edits={"docs/a.md": "a\n"}, project=project,
            shadow=True)  # fmt: skip
    failed = op.turn(sid, "Break it", fail=True, edits={"x.py": "x\n"}, project=project,
                     shadow=True)  # fmt: skip
    op.turn(sid, "Break it", after=op.nodes[sid][failed]["predecessor"])
    op.rewind_to(sid, first)
    assert op.meta(sid)["head_id"] == "ROOT"
    op.turn(sid, "Start over", edits={"README.md": "two\n"}, project=project, shadow=True)
    other = op.create_session(project, root=False)
    hello = op.turn(other, "Hello")
    op.rewind_to(other, hello)
    assert op.meta(other)["head_id"] == "ROOT"
    return op, project, sid


def test_project_bound_sessions_before_any_ad_hoc_chat_are_clean(
    tmp_path: Path, run_json: RunCLI
) -> None:
    """No default project yet (created at the first ad-hoc chat): no SS135, and the absolute
    paths of the registries and of the project_commit / shadow_git stamps all resolve (no
    SS133, no SS149, no SS140/SS150 cascade); work_dir null is no SS110; head "ROOT" is no
    SS105."""
    home = tmp_path / "home" / "alice"
    bound_run(home)
    code, report = run_json("check", "--family", "sessions", "--all", "--root", str(home))
    assert (code, findings(report)) == (0, [])


def test_writer_semantics_leave_no_finding(tmp_path: Path, run_json: RunCLI) -> None:
    """The whole of OpenProgram's public operations, ad-hoc and bound, checked in place with no
    configuration: no error and no warning."""
    home = tmp_path / "home" / "alice"
    op, project, bound = bound_run(home)
    sid = op.create_session()  # the first ad-hoc chat: the default project now exists
    one = op.turn(sid, "Why does listing crash on Windows?")
    two = op.turn(sid, "Add a test for it")
    op.turn(sid, "And a changelog entry")
    op.compact(sid, [one, one + "_reply"], two)
    op.turn(sid, "Branch: try another fix", after=one + "_reply")  # a fork from turn one
    op.turn(sid, "x" * 120, fail=True)
    op.rewind_to(sid, one)
    op.turn(sid, "From scratch")
    op.turn(bound, "Back in the project", edits={"README.md": "three\n"}, project=project,
            shadow=True)  # fmt: skip
    code, report = run_json("check", "--family", "sessions", "--all", "--root", str(home))
    assert (code, findings(report)) == (0, [])
    shadow = list((home / ".openprogram" / "shadow-git").iterdir())
    assert len(shadow) == 1  # one store for the project
    for repo in [project, *shadow, *op.repos.values()]:
        code, report = run_json("verify", "--range", "HEAD", "--family", "sessions",
                                "--root", str(repo))  # fmt: skip
        assert (code, findings(report)) == (0, []), repo


def test_a_shadow_stamp_is_looked_for_in_the_state_directorys_store(
    tmp_path: Path, run_json: RunCLI
) -> None:
    """[49] shadow_git {repo, before, after} names the project; its commits are looked for in
    <state>/shadow-git/<sha256(repo)[:16]>/: a commit missing there is SS149 naming the store;
    with the state directory outside the checked root, SS133 says why it was not read."""
    home = tmp_path / "home" / "alice"
    op, project, sid = bound_run(home)
    reply = next(n for n in op.nodes[sid].values() if "shadow_git" in n["metadata"])
    stamp = reply["metadata"]["shadow_git"]
    op._update(sid, reply["id"], shadow_git={**stamp, "after": "0" * 40})
    name = f"{reply['seq']:04d}-l-{reply['id']}.json"
    path = f"code/wiki/.openprogram/sessions/{sid}/history/{name}"
    code, report = run_json("check", "--family", "sessions", "--all", "--root", str(home))
    assert (code, findings(report)) == (0, [("SS149", path, "/metadata/shadow_git/after")])
    (message,) = [f["message"] for f in report["findings"]]
    assert ".openprogram/shadow-git/" in message
    code, report = run_json("check", "--family", "sessions", "--all", "--root", str(project))
    shadows = {rule for rule, _, pointer in findings(report) if "shadow_git" in (pointer or "")}
    assert shadows == {"SS133"}
    # the project_commit stamps of a project checked alone read the bound project's path
    assert not [f for f in findings(report) if f[2] and "project_commit" in f[2]]


def test_verify_in_a_shadow_store_knows_its_subjects(tmp_path: Path, run_json: RunCLI) -> None:
    """[48] the shadow-git store's commits ("shadow-git: init", "[baseline] pre-turn images",
    "[<turn>] <text>") are no SS209 from its root; a range that starts later says which kind of
    repository verify took it for; a subject the store never writes is SS209."""
    home = tmp_path / "home" / "alice"
    bound_run(home)
    (store,) = (home / ".openprogram" / "shadow-git").iterdir()
    (store / "seen.txt").write_text("old\n")
    git("add", "-A", cwd=store)
    commit_as(AGENT_GIT, "-m", "[baseline] pre-turn images", cwd=store)
    code, report = run_json("verify", "--range", "HEAD", "--root", str(store))
    assert (code, findings(report)) == (0, [])
    code, report = run_json("verify", "--range", "HEAD~1..HEAD", "--root", str(store))
    assert (code, findings(report)) == (0, [])  # the baseline's subject is the store's alone
    commit_as(AGENT_GIT, "--allow-empty", "-m", "[abcdef12] a turn", cwd=store)
    code, report = run_json("verify", "--range", "HEAD~1..HEAD", "--root", str(store))
    assert code == 0  # a warning
    (finding,) = report["findings"]
    assert finding["rule"] == "SS209" and "took this for a project repository" in finding["message"]
    commit_as(AGENT_GIT, "--allow-empty", "-m", "tidy up", cwd=store)
    _, report = run_json("verify", "--range", "HEAD", "--root", str(store))
    assert [(f["rule"], f["commit"]) for f in report["findings"]] == [
        ("SS209", git("rev-parse", "HEAD", cwd=store))
    ]


def test_a_session_repository_committed_into_the_project_is_caught(
    tmp_path: Path, run_json: RunCLI
) -> None:
    """[47] once .openprogram/.gitignore is lost, the project's git add -A takes each session
    repository in as a gitlink: SS208 at the commit that adds it, which says it adds it (also
    when that commit is the first of the range)."""
    home = tmp_path / "home" / "alice"
    op, project, sid = bound_run(home)
    (project / ".openprogram" / ".gitignore").unlink()
    op.turn(sid, "One more edit", edits={"b.md": "b\n"}, project=project)
    sha = git("rev-parse", "HEAD", cwd=project)
    assert "160000" in git("ls-tree", "-r", "HEAD", ".openprogram", cwd=project)
    for base in ("HEAD", "HEAD~1..HEAD"):
        code, report = run_json("verify", "--range", base, "--root", str(project))
        assert code == 0  # a warning
        assert [(f["rule"], f["commit"]) for f in report["findings"]] == [("SS208", sha)], base
        (message,) = [f["message"] for f in report["findings"]]
        assert "this commit adds the nested repository (a gitlink)" in message, message
