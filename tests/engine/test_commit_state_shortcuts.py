"""The work history mode leaves out, held to the work it replaces: a tree check that reads no
bytes is not fed a file whose bytes alone changed (``Family.tree_reads_bytes``), a family
called on every commit is not called where it says nothing can be found
(``Family.commit_needed``), and a family is not asked for the dependents of a path it says
none can have (``Family.may_depend``). With these turned off, ``verify`` and ``check
--staged`` report the same findings, byte for byte, on a random history of the shipped
examples and on commits made to exercise the deltas tree check (an edit beside a twin,
PROJECT.md or AGENTS.md coming and going)."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from continuity_checks.checks.captures.family import CapturesFamily
from continuity_checks.checks.deltas.family import DeltasFamily
from continuity_checks.checks.provenance.family import ProvenanceFamily
from continuity_checks.checks.sessions.family import SessionsFamily
from continuity_checks.checks.working_state.family import WorkingStateFamily
from tests.conftest import EXAMPLES
from tests.engine.test_commit_state_oracle import CONFIG, History, run_cli
from tests.helpers.git import GitRepo, delta, isolate_git, path_of

FAMILIES = (DeltasFamily, WorkingStateFamily, CapturesFamily, SessionsFamily, ProvenanceFamily)


def without_shortcuts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every family's tree check fed every item, every every-commit family called, and every
    family asked for the dependents of every changed path."""
    monkeypatch.setattr(DeltasFamily, "tree_reads_bytes", lambda self: True)
    for family in FAMILIES:
        monkeypatch.setattr(family, "commit_needed", lambda self, commit, paths, linked: True)
        monkeypatch.setattr(family, "may_depend", lambda self, path, edited: True)


def both_ways(monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[str, str]:
    """The JSON report of ``continuity <args>`` with the shortcuts, and without them."""
    fast = run_cli(*args)[1]
    with monkeypatch.context() as slow:
        without_shortcuts(slow)
        slow_report = run_cli(*args)[1]
    return json.dumps(fast), json.dumps(slow_report)


def rules(report: str) -> set[str]:
    return {f["rule"] for f in json.loads(report)["findings"]}


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    isolate_git(monkeypatch, tmp_path / "home")
    made = GitRepo(tmp_path / "repo")
    monkeypatch.chdir(made.path)
    return made


def test_a_random_history_is_judged_alike(repo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(EXAMPLES, repo.path / "examples", symlinks=True)
    (repo.path / ".continuity.toml").write_text(CONFIG, encoding="utf-8")
    base = repo.commit("the shipped examples")
    history = History(repo, random.Random(5))
    history.record()
    for index in range(30):
        what = history.mutate()
        repo.git("commit", "-q", "--no-verify", "-m", f"{index}: {what}")
        history.record()
    fast, slow = both_ways(monkeypatch, "verify", "--range", f"{base}..HEAD")
    assert len(rules(fast)) > 3  # the history breaks things, of several kinds
    assert fast == slow


def test_edits_beside_the_files_the_deltas_tree_check_reads(
    repo: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = path_of("2026-09-21T16-20-00p08-00--agent.json")
    other = path_of("2026-09-22T10-00-00p08-00--agent.json")
    frozen = plain.replace(".json", ".frozen.json")

    def edit(n: int) -> dict[str, str]:
        return {plain: delta(changes=[f"edit {n}"])}

    base = repo.commit(
        "a project",
        {
            # the tree check's warnings made errors: the state a commit leaves weighs errors
            ".continuity.toml": '[rules]\nDL130 = "error"\nDL131 = "error"\n',
            "PROJECT.md": "# project\n",
            "AGENTS.md": "<!-- deltalayer-conversation-v0.2.1 -->\n",
            **edit(0),
            other: delta(started="2026-09-22T10:00:00+08:00"),
        },
    )
    repo.commit("an edit and its twin added", {**edit(1), frozen: delta()})
    repo.commit("an edit and the twin deleted", edit(2), delete=[frozen])
    repo.commit("an edit and PROJECT.md deleted", edit(3), delete=["PROJECT.md"])
    repo.commit("an edit, PROJECT.md still missing", edit(4))
    repo.commit("an edit and PROJECT.md back", {**edit(5), "PROJECT.md": "# project\n"})
    repo.commit("an edit and AGENTS.md deleted", edit(6), delete=["AGENTS.md"])
    repo.commit("an edit of the other delta", {other: delta(changes=["other"])})
    repo.commit("AGENTS.md back without a marker", {**edit(7), "AGENTS.md": "# agents\n"})
    repo.write({**edit(8), frozen: delta()})
    repo.git("rm", "-q", "--", "PROJECT.md")
    repo.git("add", "-A")
    fast, slow = both_ways(monkeypatch, "check", "--staged", plain, frozen)
    assert {"DL111", "DL131"} <= rules(fast)  # the twin, and PROJECT.md missing
    assert fast == slow
    repo.git("commit", "-q", "--no-verify", "-m", "an edit, a twin and PROJECT.md deleted")
    fast, slow = both_ways(monkeypatch, "verify", "--range", f"{base}..HEAD")
    assert {"DL111", "DL130", "DL131"} <= rules(fast)
    assert fast == slow
