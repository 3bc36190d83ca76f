"""``continuity verify`` for deltas and working state: the state each commit leaves (the errors
its dependents show, found from what it changed) and the last good version of each file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from continuity_checks.checks.deltas.family import DeltasFamily
from continuity_checks.core.config import Config
from tests.conftest import RunCLI
from tests.helpers.git import GitRepo, delta, isolate_git, path_of
from tests.helpers.untouched import NoTree
from tests.helpers.working_state import CA2, COMPACTED, CP2, version

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
A = path_of("2026-09-21T16-20-00p08-00--agent.json")
B = path_of("2026-09-21T17-00-00p08-00--codex.json")
AGENTS = "AGENTS.md"
MARKED = "# Agents\n\n<!-- deltalayer-conversation-v0.2.1 -->\n"
WS = ".dsh/project/WORKING_STATE.json"
PROJECTION = "notes/turn-12.projection.json"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    isolate_git(monkeypatch, tmp_path / "home")
    monkeypatch.chdir(tmp_path)
    return GitRepo(tmp_path / "repo")


def verify(run_json: RunCLI, repo: GitRepo, *args: str) -> tuple[int, dict[str, Any]]:
    return run_json("verify", "--root", str(repo.path), "--range", "base..HEAD", *args)


def strict(run_json: RunCLI, repo: GitRepo) -> tuple[int, dict[str, Any]]:
    """verify with DL130 and DL131 (warnings by default) made errors: the state a commit
    leaves is judged by its errors."""
    path = repo.path.parent / "strict.toml"
    path.write_text('[rules]\nDL130 = "error"\nDL131 = "error"\n', encoding="utf-8")
    return verify(run_json, repo, "--config", str(path))


def found(report: dict[str, Any]) -> list[tuple[str, str, str | None]]:
    return sorted((f["rule"], f["path"], f["commit"]) for f in report["findings"])


def store(repo: GitRepo, **files: str) -> None:
    """A DeltaLayer project with two deltas, PROJECT.md and AGENTS.md, tagged ``base``."""
    layout = {A: delta(), B: delta("2026-09-21T17:00:00+08:00", source="codex")}
    repo.commit("base", {**layout, "PROJECT.md": "# P\n", AGENTS: MARKED, **files})
    repo.git("tag", "base")


# --- what a delta's checks read besides the file itself --------------------------------------


def test_project_md_removed_is_reported_at_that_commit(repo: GitRepo, run_json: RunCLI) -> None:
    store(repo)
    assert repo.commit("unrelated", {"README.md": "x\n"})
    gone = repo.commit("drop PROJECT.md", delete=["PROJECT.md"])
    code, report = strict(run_json, repo)
    assert (code, found(report)) == (1, [("DL131", "PROJECT.md", gone)])


def test_agents_md_removed_is_reported_at_that_commit(repo: GitRepo, run_json: RunCLI) -> None:
    store(repo)
    gone = repo.commit("drop AGENTS.md", delete=[AGENTS])
    code, report = strict(run_json, repo)
    assert (code, found(report)) == (1, [("DL130", AGENTS, gone)])


def test_a_store_beside_an_agents_md_without_its_section(repo: GitRepo, run_json: RunCLI) -> None:
    """AGENTS.md needs the continuity section once .deltalayer/ is beside it: the commit that
    creates the directory (with a file no family claims) breaks the AGENTS.md it does not
    touch."""
    repo.commit("base", {AGENTS: "# Agents\n", "PROJECT.md": "# P\n"})
    repo.git("tag", "base")
    repo.commit("unrelated", {"notes/x.txt": "x\n"})
    made = repo.commit("a store", {".deltalayer/README.txt": "later\n"})
    code, report = strict(run_json, repo)
    assert (code, found(report)) == (1, [("DL130", AGENTS, made)])


def test_a_project_that_already_lacked_its_files_is_no_news(
    repo: GitRepo, run_json: RunCLI
) -> None:
    """A store without PROJECT.md and AGENTS.md: a commit that adds, changes or deletes a delta
    leaves what its parent had (DL130, DL131 there already), and the errors of a delta it did
    not touch are not its own."""
    broken = delta("2026-09-21T17:00:00+08:00", source="codex").replace("[]", '"x"')
    repo.commit("base", {A: delta(), B: broken})
    repo.git("tag", "base")
    c = path_of("2026-09-21T18-00-00p08-00--claude.json")
    repo.commit("add", {c: delta("2026-09-21T18:00:00+08:00", source="claude")}, trailers=[c])
    deleted = repo.commit("delete the first", delete=[A])
    code, report = strict(run_json, repo)
    assert (code, found(report)) == (1, [("DL206", A, deleted)])


# --- what the working-state checks read besides the file itself ------------------------------


def dsh_project(repo: GitRepo) -> None:
    source = EXAMPLES / "working-state"
    shutil.copytree(source, repo.path, dirs_exist_ok=True)
    repo.commit("base")
    repo.git("tag", "base")


def test_a_state_change_breaks_the_projection_it_does_not_touch(
    repo: GitRepo, run_json: RunCLI
) -> None:
    dsh_project(repo)
    repo.commit("unrelated", {"notes/other.txt": "x\n"})
    state = json.loads((repo.path / WS).read_text(encoding="utf-8"))
    state["constraints"] = [*state["constraints"], "Never deploy on Fridays"]
    changed = repo.commit("a new constraint", {WS: json.dumps(state, indent=2) + "\n"})
    code, report = verify(run_json, repo)
    assert code == 1
    assert ("WS116", PROJECTION, changed) in found(report)
    assert {f["commit"] for f in report["findings"]} == {changed}


def test_a_runtime_file_added_beside_a_committed_one(repo: GitRepo, run_json: RunCLI) -> None:
    """One finding per runtime directory, at its first file with their number: the commit that
    adds a second file is judged on the whole directory, as check --all judges it."""
    repo.commit("base", {".dsh/runtime/b.json": "{}\n"})
    repo.git("tag", "base")
    added = repo.commit("another", {".dsh/runtime/a.json": "{}\n"})
    code, report = verify(run_json, repo)
    assert (code, found(report)) == (
        1,
        [("WS113", ".dsh/runtime/a.json", added), ("WS205", ".dsh/runtime/a.json", added)],
    )
    assert "(2 files)" in report["findings"][0]["message"]
    _, checked = run_json("check", "--all", "--root", str(repo.path))
    assert report["findings"][0]["message"] == checked["findings"][0]["message"]


# --- the last good version ------------------------------------------------------------------


def test_a_delta_broken_in_between_is_compared_with_its_last_good_version(
    repo: GitRepo, run_json: RunCLI
) -> None:
    store(repo)
    good = delta(updated="2026-09-21T16:40:00+08:00", changes=["a"])
    repo.commit("work", {A: good}, trailers=[A])
    conflict = "<<<<<<< HEAD\n" + good + "=======\n" + delta() + ">>>>>>> theirs\n"
    broken = repo.commit("a conflict committed", {A: conflict}, trailers=[A])
    taken = delta(updated="2026-09-21T16:30:00+08:00", changes=["a"], conversation_id="other")
    back = repo.commit("back, as another conversation", {A: taken}, trailers=[A])
    code, report = verify(run_json, repo)
    assert code == 1
    rules = found(report)
    assert ("DL204", A, back) in rules and ("DL205", A, back) in rules
    assert [r for r in rules if r[2] == broken and r[0].startswith("CC")]  # the parse error
    assert {r[2] for r in rules} == {broken, back}


def test_a_truncated_delta_in_between(repo: GitRepo, run_json: RunCLI) -> None:
    store(repo)
    repo.commit("work", {A: delta(updated="2026-09-21T16:40:00+08:00")}, trailers=[A])
    repo.commit("truncated", {A: delta()[:20]}, trailers=[A])
    back = repo.commit("back", {A: delta(source="agent", conversation_id="x")}, trailers=[A])
    code, report = verify(run_json, repo)
    assert code == 1
    assert {("DL204", A, back), ("DL205", A, back)} <= set(found(report))


def boundary(seq: int, audit: str = CA2, checkpoint: str = CP2) -> bytes:
    return version(
        "compaction-evacuation",
        prune_safe_through_seq=seq,
        prune_audit_id=audit,
        checkpoint_id=checkpoint,
    )


def test_a_working_state_broken_in_between(repo: GitRepo, run_json: RunCLI) -> None:
    repo.commit("base", {WS: COMPACTED})
    repo.git("tag", "base")
    raised = boundary(377)
    repo.commit("compress", {WS: raised})
    broken = repo.commit("broken", {WS: raised[: len(raised) // 2]})
    lowered = repo.commit("lowered", {WS: boundary(5)})
    code, report = verify(run_json, repo)
    assert code == 1
    rules = found(report)
    assert ("WS201", WS, lowered) in rules
    assert [r for r in rules if r[2] == broken]  # the parse error, where it was made


def test_a_working_state_removed_and_added_again(repo: GitRepo, run_json: RunCLI) -> None:
    repo.commit("base", {WS: boundary(377)})
    repo.git("tag", "base")
    repo.commit("removed", delete=[WS])
    again = repo.commit("added again", {WS: boundary(5)})
    code, report = verify(run_json, repo)
    assert (code, found(report)) == (1, [("WS201", WS, again)])


def test_a_delta_deleted_and_created_again(
    repo: GitRepo, run_json: RunCLI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without allow-delete the deletion is DL206 and leaves the delta's promises standing: the
    re-creation is judged against the version before it. With allow-delete the deletion ends
    the delta, and the creation starts a new one, by its new creator."""
    store(repo)
    repo.commit("work", {A: delta(updated="2026-09-21T16:40:00+08:00")}, trailers=[A])
    deleted = repo.commit("deleted", delete=[A])
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "other@example.invalid")
    again = repo.commit("again", {A: delta(conversation_id="other")}, trailers=[A])
    code, report = verify(run_json, repo)
    assert (code, found(report)) == (
        1,
        [("DL204", A, again), ("DL205", A, again), ("DL206", A, deleted), ("DL211", A, again)],
    )
    allowed = tmp_path / "continuity.toml"
    allowed.write_text("[deltas]\nallow-delete = true\n", encoding="utf-8")
    code, report = verify(run_json, repo, "--config", str(allowed))
    assert (code, found(report)) == (0, [])


@pytest.mark.parametrize(
    "path", [".deltalayer/changes/2026-09-21T16-00-00p08-00--a.json", "AGENTS.md", "PROJECT.md"]
)
def test_a_delta_store_edit_has_no_dependents_and_reads_no_tree(path: str) -> None:
    """The deltas checks of other files read only whether a delta, PROJECT.md or AGENTS.md
    exists: a commit that only rewrites one's bytes breaks nothing beside it."""
    family = DeltasFamily(Config())
    assert list(family.dependents(path, NoTree(), True)) == []
