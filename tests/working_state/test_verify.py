"""``continuity verify`` on real git histories of a DSH project: every WS2xx rule with its commit,
and a prune boundary that decreases across two commits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RunCLI
from tests.helpers.git import GitRepo, isolate_git
from tests.helpers.working_state import CA2, COMPACTED, CP2, WS, line_of, version

CP3 = "CP-1a2b3c4d-5e6f-4a1b-8c2d-3e4f5a6b7c8d"
CA3 = "CA-8f7e6d5c-4b3a-4d2e-9f1a-0b9c8d7e6f5a"
JOURNAL = ".dsh/runtime/transactions/tx-checkpoint-1767000000000-ab/journal.json"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    """A project whose base commit holds a WORKING_STATE after one audited /compress."""
    isolate_git(monkeypatch, tmp_path / "home")
    monkeypatch.chdir(tmp_path)
    r = GitRepo(tmp_path / "repo")
    r.commit("base", {WS: COMPACTED, "README.md": "x\n"})
    r.git("tag", "base")
    return r


def verify(run_json: RunCLI, repo: GitRepo) -> tuple[int, dict[str, Any]]:
    return run_json("verify", "--root", str(repo.path), "--range", "base..HEAD")


def found(report: dict[str, Any]) -> list[tuple[str, str, str | None, int | None]]:
    return [(f["rule"], f["path"], f["commit"], f["line"]) for f in report["findings"]]


def test_a_real_history_passes(repo: GitRepo, run_json: RunCLI) -> None:
    # an investigative checkpoint carries the boundary; a new audit advances it
    repo.commit(
        "checkpoint", {WS: version(content="a", checkpoint_id=CP2, prune_safe_through_seq=100)}
    )
    repo.commit(
        "compress",
        {WS: version("compaction-evacuation", content="a", checkpoint_id=CP3,
                     prune_safe_through_seq=140, prune_audit_id=CA3, protocol_committed_through_seq=150,
                     session_revision=152)},
    )  # fmt: skip
    repo.commit("runtime cleaned up", {"README.md": "y\n"})
    code, report = verify(run_json, repo)
    assert (code, report["findings"]) == (0, [])
    assert report["summary"]["commits"] == 3


def test_prune_boundary_decreasing_across_two_commits(repo: GitRepo, run_json: RunCLI) -> None:
    repo.commit(
        "checkpoint", {WS: version(content="a", checkpoint_id=CP2, prune_safe_through_seq=100)}
    )
    lowered = version("compaction-evacuation", content="a", checkpoint_id=CP3,
                      prune_safe_through_seq=60, prune_audit_id=CA3)  # fmt: skip
    bad = repo.commit("compress on another session's seqs", {WS: lowered})
    code, report = verify(run_json, repo)
    assert code == 1
    assert found(report) == [("WS201", WS, bad, line_of(lowered, "prune_safe_through_seq"))]
    assert report["findings"][0]["pointer"] == "/checkpoint_meta/prune_safe_through_seq"


def test_boundary_moved_without_an_audit(repo: GitRepo, run_json: RunCLI) -> None:
    moved = version(checkpoint_id=CP2, prune_safe_through_seq=110)
    bad = repo.commit("hand-edited boundary", {WS: moved})
    code, report = verify(run_json, repo)
    assert (code, found(report)) == (
        1,
        [("WS202", WS, bad, line_of(moved, "prune_safe_through_seq"))],
    )


def test_schema_version_and_checkpoint_identity(repo: GitRepo, run_json: RunCLI) -> None:
    older = COMPACTED.replace(b'"schema_version": 7', b'"schema_version": 6')
    first = repo.commit("old copy", {WS: older})
    edited = version("compaction-evacuation", content="added by hand")
    second = repo.commit("restore and edit", {WS: edited})
    code, report = verify(run_json, repo)
    assert code == 1
    # schema_version 6 is also no state file mode reads (WS102); the edit is judged against
    # the last good version, the parent's of the old copy
    assert found(report) == [
        ("WS102", WS, first, 2),
        ("WS203", WS, first, 2),
        ("WS204", WS, second, line_of(edited, '"checkpoint_id"')),
    ]


def test_runtime_journal_committed(repo: GitRepo, run_json: RunCLI) -> None:
    bad = repo.commit("oops", {JOURNAL: '{"schema":"qwen-v4-project-transaction-1"}\n'})
    repo.commit("removed", delete=[JOURNAL])
    code, report = verify(run_json, repo)
    # the runtime file committed (WS205) is also in the tree the commit leaves (WS113)
    assert (code, found(report)) == (
        1,
        [("WS113", JOURNAL, bad, None), ("WS205", JOURNAL, bad, None)],
    )


def test_a_merge_answers_for_what_it_brings(repo: GitRepo, run_json: RunCLI) -> None:
    repo.git("checkout", "-q", "-b", "side")
    lowered = version("compaction-evacuation", checkpoint_id=CP2, prune_safe_through_seq=50,
                      prune_audit_id=CA2)  # fmt: skip
    side = repo.commit("lower on a branch", {WS: lowered})
    repo.git("checkout", "-q", "main")
    repo.commit("unrelated", {"README.md": "z\n"})
    repo.git("merge", "-q", "--no-ff", "-m", "merge side", "side")
    merge = repo.head()
    code, report = verify(run_json, repo)
    assert code == 1
    rules = {(f["rule"], f["commit"]) for f in report["findings"]}
    assert rules == {("WS201", side), ("WS201", merge)}


def test_a_boundary_written_as_a_float_still_only_grows(repo: GitRepo, run_json: RunCLI) -> None:
    """JavaScript reads 100.0 as the integer 100: 100 -> 100.0 is no change, and 100.0 -> 50 a
    decrease (it was the other way round: 100.0 was not taken for an integer)."""
    as_float = version("compaction-evacuation").replace(
        b'"prune_safe_through_seq": 100,', b'"prune_safe_through_seq": 100.0,'
    )
    assert as_float != version("compaction-evacuation")
    repo.commit("written by hand", {WS: as_float})
    bad = repo.commit(
        "compress",
        {WS: version("compaction-evacuation", checkpoint_id=CP2, prune_safe_through_seq=50,
                     prune_audit_id=CA2)},
    )  # fmt: skip
    code, report = verify(run_json, repo)
    assert code == 1
    assert [(f["rule"], f["commit"]) for f in report["findings"]] == [("WS201", bad)]
