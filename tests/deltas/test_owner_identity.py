"""DL211: the identity that created a delta owns it. Real repositories with commits by different
``GIT_AUTHOR_EMAIL``s, judged through the real CLI: ``verify`` over a range (deltas created in
it and before it) and ``check --staged`` (the commit being made)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from continuity_checks.cli import main
from tests.conftest import RunCLI
from tests.helpers.git import GitRepo, delta, isolate_git, path_of

A = path_of("2026-09-21T16-20-00p08-00--agent.json")
A_FROZEN = path_of("2026-09-21T16-20-00p08-00--agent.frozen.json")
B = path_of("2026-09-21T17-00-00p08-00--codex.json")
ALICE, BOB, CAROL = "alice@example.invalid", "bob@example.invalid", "carol@example.invalid"


def update(n: int, source: str = "agent", started: str = "2026-09-21T16:20:00+08:00") -> str:
    return delta(started, f"2026-09-21T18:{n:02d}:00+08:00", source, changes=[f"step {n}"])


class Authors:
    """Who makes the next commit: author and committer emails, through git's environment."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.monkeypatch = monkeypatch

    def __call__(self, author: str, committer: str | None = None) -> None:
        self.monkeypatch.setenv("GIT_AUTHOR_EMAIL", author)
        self.monkeypatch.setenv("GIT_COMMITTER_EMAIL", committer or author)


@pytest.fixture
def as_(monkeypatch: pytest.MonkeyPatch) -> Authors:
    return Authors(monkeypatch)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, as_: Authors) -> GitRepo:
    """Alice creates delta A and Bob delta B in the base commit... in two commits: ``base`` is
    the second."""
    isolate_git(monkeypatch, tmp_path / "home")
    monkeypatch.chdir(tmp_path)
    r = GitRepo(tmp_path / "repo")
    as_(ALICE)
    r.commit("alice starts", {A: update(0), "README.md": "x\n"})
    as_(BOB)
    r.commit("bob starts", {B: update(0, "codex", "2026-09-21T17:00:00+08:00")})
    r.git("tag", "base")
    return r


def verify(run_json: RunCLI, repo: GitRepo, *args: str) -> tuple[int, list[tuple[Any, ...]]]:
    code, report = run_json("verify", "--root", str(repo.path), *args)
    return code, [(f["rule"], f["path"], f["commit"]) for f in report["findings"]]


def config(repo: GitRepo, text: str) -> str:
    path = repo.path.parent / "continuity.toml"
    path.write_text(text, encoding="utf-8")
    return str(path)


# --- verify: a delta created before the range ---------------------------------------------------


def test_another_identity_changing_an_older_delta(
    repo: GitRepo, run_json: RunCLI, as_: Authors
) -> None:
    """Bob edits Alice's delta, naming it in a trailer: the trailer is his own claim."""
    as_(BOB)
    taken = repo.commit("bob edits A", {A: update(1)}, trailers=[A])
    code, findings = verify(run_json, repo, "--range", "base..HEAD")
    assert (code, findings) == (1, [("DL211", A, taken)])
    _, report = run_json("verify", "--root", str(repo.path), "--range", "base..HEAD")
    [finding] = report["findings"]
    assert ALICE in finding["message"] and BOB in finding["message"]
    assert "rebase -i" in finding["hint"]


def test_the_creator_changing_an_older_delta_passes(
    repo: GitRepo, run_json: RunCLI, as_: Authors
) -> None:
    as_(ALICE.upper())  # the same address, in other case
    repo.commit("alice edits A", {A: update(1)})
    as_(BOB)
    repo.commit("bob edits B", {B: update(1, "codex", "2026-09-21T17:00:00+08:00")})
    assert verify(run_json, repo, "--range", "base..HEAD") == (0, [])


def test_several_older_deltas_one_look_up(repo: GitRepo, run_json: RunCLI, as_: Authors) -> None:
    """Changes of both older deltas by Carol, in two commits each: all four judged."""
    as_(CAROL)
    shas = [
        repo.commit(
            f"carol {n}", {A: update(n), B: update(n, "codex", "2026-09-21T17:00:00+08:00")}
        )
        for n in (1, 2)
    ]
    code, findings = verify(run_json, repo, "--range", "base..HEAD", "--config", config(repo, ""))
    assert code == 1
    # DL202 (two older deltas, no trailer) beside DL211: a different fact
    assert [f for f in findings if f[0] == "DL211"] == [
        ("DL211", A, shas[0]),
        ("DL211", B, shas[0]),
        ("DL211", A, shas[1]),
        ("DL211", B, shas[1]),
    ]


# --- verify: a delta created in the range, and the root commit ----------------------------------


def test_a_delta_created_in_the_range(repo: GitRepo, run_json: RunCLI, as_: Authors) -> None:
    c = path_of("2026-09-22T09-00-00p08-00--claude.json")
    started = "2026-09-22T09:00:00+08:00"
    as_(CAROL)
    repo.commit("carol starts", {c: delta(started, source="claude")})
    repo.commit("carol goes on", {c: delta(started, "2026-09-22T10:00:00+08:00", "claude")})
    assert verify(run_json, repo, "--range", "base..HEAD") == (0, [])
    as_(ALICE)
    taken = repo.commit("alice edits C", {c: delta(started, "2026-09-22T11:00:00+08:00", "claude")})
    assert verify(run_json, repo, "--range", "base..HEAD") == (1, [("DL211", c, taken)])


def test_all_history_from_the_root_commit(repo: GitRepo, run_json: RunCLI, as_: Authors) -> None:
    """``--range HEAD``: Alice's delta was created by the root commit, inside the range."""
    as_(BOB)
    taken = repo.commit("bob edits A", {A: update(1)})
    assert verify(run_json, repo, "--range", "HEAD") == (1, [("DL211", A, taken)])


# --- freeze, delete ------------------------------------------------------------------------------


def test_a_freeze_is_a_change_by_the_freezer(repo: GitRepo, run_json: RunCLI, as_: Authors) -> None:
    as_(BOB)
    repo.git("mv", A, A_FROZEN)
    repo.git("commit", "-q", "-m", "bob freezes A")
    frozen = repo.head()
    assert verify(run_json, repo, "--range", "base..HEAD") == (1, [("DL211", A_FROZEN, frozen)])
    repo.git("reset", "-q", "--hard", "base")
    as_(ALICE)
    repo.git("mv", A, A_FROZEN)
    repo.git("commit", "-q", "-m", "alice freezes A")
    assert verify(run_json, repo, "--range", "base..HEAD") == (0, [])


def test_deletions_where_they_are_allowed(repo: GitRepo, run_json: RunCLI, as_: Authors) -> None:
    allowed = config(repo, "[deltas]\nallow-delete = true\n")
    as_(BOB)
    dropped = repo.commit("bob drops A", delete=[A])
    code, findings = verify(run_json, repo, "--range", "base..HEAD", "--config", allowed)
    assert (code, findings) == (1, [("DL211", A, dropped)])
    # without allow-delete the deletion is DL206 alone: one root cause, one finding
    assert verify(run_json, repo, "--range", "base..HEAD") == (1, [("DL206", A, dropped)])
    repo.git("reset", "-q", "--hard", "base")
    as_(ALICE)
    repo.commit("alice drops A", delete=[A])
    assert verify(run_json, repo, "--range", "base..HEAD", "--config", allowed) == (0, [])


# --- configuration -------------------------------------------------------------------------------


def test_allowed_identities_and_switching_it_off(
    repo: GitRepo, run_json: RunCLI, as_: Authors
) -> None:
    as_(CAROL)
    taken = repo.commit("the bot edits A", {A: update(1)})
    rng = ("--range", "base..HEAD")
    assert verify(run_json, repo, *rng) == (1, [("DL211", A, taken)])
    for text in (
        '[deltas]\nowner-allowed = ["Carol@Example.invalid"]\n',
        '[deltas]\nowner-identity = "off"\n',
        '[deltas]\nownership = "off"\n',
        '[deltas]\nowner-allowed = ["bob@example.invalid"]\nDL211 = "off"\n'.replace(
            "DL211", "[rules]\nDL211"
        ),
    ):
        assert verify(run_json, repo, *rng, "--config", config(repo, text)) == (0, []), text
    code, _ = verify(
        run_json,
        repo,
        *rng,
        "--config",
        config(repo, '[deltas]\nowner-allowed = ["bob@example.invalid"]\n'),
    )
    assert code == 1  # another identity listed does not let Carol through


def test_the_committer_as_the_owner(repo: GitRepo, run_json: RunCLI, as_: Authors) -> None:
    """Alice authored the base commits' deltas and committed them too; Carol commits a patch
    that Alice authored: the author owns by default, the committer when configured."""
    as_(ALICE, committer=CAROL)
    applied = repo.commit("alice's patch, committed by carol", {A: update(1)})
    assert verify(run_json, repo, "--range", "base..HEAD") == (0, [])
    committer = config(repo, '[deltas]\nowner-identity = "committer-email"\n')
    code, findings = verify(run_json, repo, "--range", "base..HEAD", "--config", committer)
    assert (code, findings) == (1, [("DL211", A, applied)])


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ('owner-identity = "author-name"', "deltas.owner-identity"),
        ('owner-allowed = "ci@example.invalid"', "deltas.owner-allowed"),
        ('owner-allowed = [""]', "deltas.owner-allowed"),
    ],
)
def test_bad_options_are_exit_2(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], text: str, key: str
) -> None:
    path = config(repo, f"[deltas]\n{text}\n")
    capsys.readouterr()
    code = main(["verify", "--root", str(repo.path), "--range", "base..HEAD", "--config", path])
    assert code == 2
    assert key in capsys.readouterr().err


# --- merges ---------------------------------------------------------------------------------------


def _side(repo: GitRepo, as_: Authors, author: str, files: dict[str, str]) -> str:
    repo.git("checkout", "-q", "-b", "side")
    as_(author)
    side = repo.commit("side work", files)
    repo.git("checkout", "-q", "main")
    as_(CAROL)
    repo.commit("main work", {"src.py": "print()\n"})
    return side


def test_a_merge_answers_for_its_own_changes_only(
    repo: GitRepo, run_json: RunCLI, as_: Authors
) -> None:
    """Carol merges Alice's work on A: brought in, not Carol's change. Bob's edit of A on a side
    branch is his, found at his commit, not at Carol's merge."""
    _side(repo, as_, ALICE, {A: update(1)})
    repo.git("merge", "-q", "--no-ff", "--no-edit", "side")
    assert verify(run_json, repo, "--range", "base..HEAD") == (0, [])

    repo.git("reset", "-q", "--hard", "base")
    repo.git("branch", "-q", "-D", "side")
    taken = _side(repo, as_, BOB, {A: update(1)})
    repo.git("merge", "-q", "--no-ff", "--no-edit", "side")
    assert verify(run_json, repo, "--range", "base..HEAD") == (1, [("DL211", A, taken)])


def test_an_evil_merge_is_the_mergers_change(repo: GitRepo, run_json: RunCLI, as_: Authors) -> None:
    """Carol merges Alice's branch and edits A in the merge itself: no parent had that version."""
    _side(repo, as_, ALICE, {A: update(1)})
    repo.git("merge", "-q", "--no-ff", "--no-commit", "side")
    repo.write({A: update(2)})
    repo.git("add", "-A")
    repo.git("commit", "-q", "--no-edit")
    merged = repo.head()
    assert verify(run_json, repo, "--range", "base..HEAD") == (1, [("DL211", A, merged)])


# --- check --staged: the commit being made ---------------------------------------------------


def staged(capsys: pytest.CaptureFixture[str]) -> tuple[int, list[tuple[Any, ...]]]:
    """The exit code, and the findings about the commit being made (the staged files' own
    findings, here the warnings of a store without PROJECT.md and AGENTS.md, left out)."""
    capsys.readouterr()
    code = main(["check", "--staged", "--format", "json"])
    findings = json.loads(capsys.readouterr().out)["findings"]
    return code, [(f["rule"], f["path"], f["commit"]) for f in findings if f["commit"]]


def test_staged_change_by_another_identity(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, as_: Authors
) -> None:
    monkeypatch.chdir(repo.path)
    repo.write({A: update(1)})
    repo.git("add", "-A")
    as_(BOB)  # the identity the commit would have: from git's environment and configuration
    assert staged(capsys) == (1, [("DL211", A, "staged")])
    as_(ALICE)
    assert staged(capsys) == (0, [])


def test_staged_merge_takes_the_side_version(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, as_: Authors
) -> None:
    """Concluding a merge (MERGE_HEAD): Alice's version of A, brought in by Carol, passes; Carol
    editing it in the merge does not."""
    monkeypatch.chdir(repo.path)
    _side(repo, as_, ALICE, {A: update(1)})
    repo.git("merge", "-q", "--no-ff", "--no-commit", "side")
    assert staged(capsys) == (0, [])
    repo.write({A: update(2)})
    repo.git("add", "-A")
    assert staged(capsys) == (1, [("DL211", A, "staged")])


def test_an_older_delta_created_on_a_side_branch_belongs_to_its_author(
    repo: GitRepo, run_json: RunCLI, as_: Authors
) -> None:
    """Dave creates a delta on a branch that Carol merges, all before the range: the look-up
    finds Dave's commit (history simplification follows the side), not Carol's merge."""
    d = path_of("2026-09-23T09-00-00p08-00--dave.json")
    started = "2026-09-23T09:00:00+08:00"
    _side(repo, as_, "dave@example.invalid", {d: delta(started, source="dave")})
    repo.git("merge", "-q", "--no-ff", "--no-edit", "side")
    repo.git("tag", "-f", "base")
    as_("dave@example.invalid")
    repo.commit("dave goes on", {d: delta(started, "2026-09-23T10:00:00+08:00", "dave")})
    assert verify(run_json, repo, "--range", "base..HEAD") == (0, [])
    as_(CAROL)
    taken = repo.commit("carol edits", {d: delta(started, "2026-09-23T11:00:00+08:00", "dave")})
    assert verify(run_json, repo, "--range", "base..HEAD") == (1, [("DL211", d, taken)])


# --- ways around the owner: a frozen copy, case folding, same-named deltas of other lines -------


def test_a_frozen_copy_added_beside_the_delta_is_a_change_not_a_creation(
    repo: GitRepo, run_json: RunCLI, as_: Authors
) -> None:
    """Bob adds ``A.frozen.json`` beside Alice's ``A.json`` (no deletion: no freeze) and edits
    ``A.json`` in the same commit. Taken as a creation, the frozen name made Bob the owner of
    ``A.json`` and his edit passed verify with no finding at all."""
    as_(BOB)
    taken = repo.commit("bob copies and edits A", {A_FROZEN: update(0), A: update(1)})
    code, findings = verify(run_json, repo, "--range", "base..HEAD")
    assert code == 1
    assert ("DL211", A, taken) in findings
    assert ("DL211", A_FROZEN, taken) in findings
    # in two commits: the copy first, the edit later
    repo.git("reset", "-q", "--hard", "base")
    copied = repo.commit("bob copies A", {A_FROZEN: update(0)})
    edited = repo.commit("bob edits A", {A: update(1)})
    code, findings = verify(run_json, repo, "--range", "base..HEAD")
    assert code == 1
    assert {f for f in findings if f[0] == "DL211"} == {
        ("DL211", A_FROZEN, copied),
        ("DL211", A, edited),
    }


def test_identities_equal_only_in_unicode_case_folding_are_two(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_json: RunCLI, as_: Authors
) -> None:
    """``"ſam".casefold() == "sam"``: an address with a long s (or a Kelvin sign for ``k``) is
    another address, not the creator's in other case."""
    isolate_git(monkeypatch, tmp_path / "home")
    r = GitRepo(tmp_path / "repo")
    as_("sam@example.invalid")
    r.commit("sam starts", {A: update(0)})
    r.git("tag", "base")
    as_("\u017fam@example.invalid")
    taken = r.commit("someone else edits A", {A: update(1)})
    assert verify(run_json, r, "--range", "base..HEAD") == (1, [("DL211", A, taken)])
    as_("SAM@EXAMPLE.INVALID")  # ASCII case is still no other identity
    r.git("reset", "-q", "--hard", "base")
    r.commit("sam edits A", {A: update(1)})
    assert verify(run_json, r, "--range", "base..HEAD") == (0, [])
    # owner-allowed is compared the same way
    allowed = config(r, '[deltas]\nowner-allowed = ["stra\u00dfe@example.invalid"]\n')
    as_("strasse@example.invalid")
    strasse = r.commit("another address edits A", {A: update(2)})
    assert verify(run_json, r, "--range", "base..HEAD", "--config", allowed) == (
        1,
        [("DL211", A, strasse)],
    )


def _unrelated(repo: GitRepo, as_: Authors, author: str, files: dict[str, str]) -> str:
    """A branch ``evil`` with no common history, one commit by ``author`` adding ``files``."""
    repo.git("checkout", "-q", "--orphan", "evil")
    repo.git("rm", "-rq", "--cached", ".")
    repo.git("clean", "-qfdx")
    as_(author)
    made = repo.commit("a history of my own", files)
    repo.git("checkout", "-q", "-f", "main")
    return made


@pytest.mark.parametrize("victim_in_range", [False, True])
def test_a_merge_bringing_in_another_delta_of_the_same_name(
    repo: GitRepo, run_json: RunCLI, as_: Authors, victim_in_range: bool
) -> None:
    """Bob creates his own ``A.json`` (same name, same identity fields) in an unrelated history
    and it replaces Alice's through a merge that takes his side. The merge's version was
    "brought in", and Bob's commit was a creation: no commit was judged as a change of
    Alice's delta, and verify passed."""
    rng = "HEAD" if victim_in_range else "base..HEAD"  # HEAD: Alice's creation in the range
    _unrelated(repo, as_, BOB, {A: update(5)})
    as_(CAROL)
    repo.git("merge", "-q", "--allow-unrelated-histories", "-X", "theirs", "-m", "merge", "evil")
    merge = repo.head()
    code, findings = verify(run_json, repo, "--range", rng)
    assert code == 1
    assert [f for f in findings if f[0] == "DL211"] == [("DL211", A, merge)]


@pytest.mark.parametrize("victim_in_range", [False, True])
def test_a_creation_on_another_line_does_not_make_its_author_the_owner(
    repo: GitRepo, run_json: RunCLI, as_: Authors, victim_in_range: bool
) -> None:
    """Bob adds an ``A.json`` of his own in an unrelated history, merges it with ``-s ours``
    (no change at all), then edits Alice's ``A.json`` on main: creators kept by path made
    him its owner."""
    rng = "HEAD" if victim_in_range else "base..HEAD"  # HEAD: Alice's creation in the range
    _unrelated(repo, as_, BOB, {A: update(7)})
    as_(BOB)
    repo.git("merge", "-q", "--allow-unrelated-histories", "-s", "ours", "-m", "merge", "evil")
    taken = repo.commit("bob edits A", {A: update(8)})
    code, findings = verify(run_json, repo, "--range", rng)
    assert code == 1
    assert [f for f in findings if f[0] == "DL211"] == [("DL211", A, taken)]
