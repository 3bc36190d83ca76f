"""``continuity verify --shard K/N``: the N shards of a range check each of its commits once, and
together report exactly what one run over the range reports, also where a rule needs the state
before a shard (the previous version of a delta, a prune boundary, the pins of a sums file, a
session's node names)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from continuity_checks import engine
from continuity_checks.core.config import Config
from continuity_checks.core.shard import Shard, ShardError
from tests.conftest import RunCLI
from tests.helpers.conversations import A0, A
from tests.helpers.every_family import every_family_history
from tests.helpers.git import GitRepo, delta, isolate_git
from tests.helpers.sessions import SYNTHETIC, rebuild_corpus


def test_the_slices_cover_a_range_once_in_order() -> None:
    for total in range(0, 23):
        for count in range(1, 9):
            covered: list[int] = []
            for index in range(1, count + 1):
                start, end = Shard(index, count).bounds(total)
                assert start == len(covered)  # contiguous, in order
                covered.extend(range(start, end))
                assert end - start in (total // count, -(-total // count))  # as even as can be
            assert covered == list(range(total)), (total, count)


@pytest.mark.parametrize("spec", ["", "1", "0/4", "5/4", "1/0", "a/b", "2/4/1", "-1/4", "1 / 4"])
def test_a_malformed_shard_is_refused(spec: str) -> None:
    with pytest.raises(ShardError):
        Shard.parse(spec)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    """One history of every kind of state a shard must read from its base, with findings in
    every part of it and a merge of a side branch."""
    return every_family_history(tmp_path, monkeypatch)


def canonical(report: dict[str, Any]) -> Counter[str]:
    return Counter(json.dumps(f, sort_keys=True) for f in report["findings"])


def assert_shards_add_up(run_json: RunCLI, root: Path, spec: str, counts: Iterable[int]) -> int:
    """Each N of ``counts``: the shards' findings, as a multiset, are the whole run's, and their
    commits add up to its. The whole run's number of commits."""
    code, whole = run_json("verify", "--root", str(root), "--range", spec)
    total = whole["summary"]["commits"]
    for count in counts:
        union: Counter[str] = Counter()
        commits = 0
        codes = []
        for index in range(1, count + 1):
            shard_code, part = run_json(
                "verify", "--root", str(root), "--range", spec, "--shard", f"{index}/{count}"
            )
            union += canonical(part)
            commits += part["summary"]["commits"]
            codes.append(shard_code)
        assert union == canonical(whole), count
        assert commits == total, count
        assert max(codes) == code, count
    return total


def test_the_shards_report_what_the_whole_run_reports(repo: GitRepo, run_json: RunCLI) -> None:
    code, whole = run_json("verify", "--root", str(repo.path), "--range", "base..HEAD")
    rules = Counter(f["rule"] for f in whole["findings"])
    assert code == 1
    assert {"DL202", "DL205", "DL206", "DL209", "PV203", "WS202"} <= set(rules), rules
    total = assert_shards_add_up(run_json, repo.path, "base..HEAD", (2, 3, 5, 12, 14))
    assert total == 12
    # with 4 shards, findings come from every one of them
    per_shard = [
        len(run_json("verify", "--root", str(repo.path), "--range", "base..HEAD",
                     "--shard", f"{k}/4")[1]["findings"])
        for k in range(1, 5)
    ]  # fmt: skip
    assert all(per_shard), per_shard


def test_each_commit_is_checked_by_one_shard(repo: GitRepo) -> None:
    whole = engine.verify(repo.path, Config(), "base..HEAD")
    order = list(whole.commit_order)
    assert len(order) == 12
    for count in (1, 2, 4, 5, 12, 20):
        walked: list[str] = []
        for index in range(1, count + 1):
            part = engine.verify(repo.path, Config(), "base..HEAD", shard=Shard(index, count))
            walked.extend(part.commit_order)
            assert part.commits == len(part.commit_order)
        assert walked == order, count  # each once, none skipped, in the walk's order


def test_an_empty_shard_says_so(repo: GitRepo, run_json: RunCLI, capsys: Any) -> None:
    code, report = run_json(
        "verify", "--root", str(repo.path), "--range", "HEAD..HEAD", "--shard", "1/2"
    )
    assert (code, report["summary"]["commits"]) == (0, 0)
    from continuity_checks.cli import main

    assert (
        main(["verify", "--root", str(repo.path), "--range", "HEAD~1..HEAD", "--shard", "2/3"]) == 0
    )
    assert "shard 2/3 of HEAD~1..HEAD: no commits (1 in the range)" in capsys.readouterr().out


def test_the_cli_refuses_a_malformed_shard(tmp_path: Path, capsys: Any) -> None:
    """Before anything else: exit 2 with the form expected, not a silent pass of nothing."""
    from continuity_checks.cli import main

    for spec in ("0/4", "5/4", "x", "1/"):
        code = main(["verify", "--root", str(tmp_path), "--range", "HEAD", "--shard", spec])
        err = capsys.readouterr().err
        assert code == 2, spec
        assert "--shard" in err and "hint: give --shard K/N" in err, spec


# --- a session repository: what the family remembers across commits ---------------------------


OPENPROGRAM = ["-c", "user.name=OpenProgram", "-c", "user.email=openprogram@local"]


def _git(repo: Path, *args: str) -> str:
    result = subprocess.run(
        ["git", *OPENPROGRAM, "-c", "commit.gpgsign=false", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )
    return result.stdout.decode("utf-8", "replace")


def test_a_session_repository_in_shards(
    tmp_path: Path, run_json: RunCLI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A node rewound and written again under another name is SS206 only through what the run
    remembers of the name it was first written with: each shard replays the commits before it
    to the sessions family, so the shard that holds the new name still catches it."""
    assert SYNTHETIC.is_dir(), f"the OpenProgram corpus is missing: {SYNTHETIC}"
    isolate_git(monkeypatch, tmp_path / "home")
    session = rebuild_corpus(tmp_path / "corpus") / ".openprogram/sessions/local_8b21e47a90"
    node = "history/0003-u-0ee460370cdc.json"
    kept = (session / node).read_bytes()
    _git(session, "rm", "-q", node)
    _git(session, "commit", "-q", "-m", "rewind")
    renamed = session / "history/0013-u-0ee460370cdc.json"
    renamed.write_bytes(kept)
    _git(session, "add", "-A")
    _git(session, "commit", "-q", "-m", "turn: again")
    code, whole = run_json("verify", "--root", str(session), "--range", "HEAD")
    assert code == 1
    assert ("SS206", "history/0013-u-0ee460370cdc.json") in {
        (f["rule"], f["path"]) for f in whole["findings"]
    }
    total = assert_shards_add_up(run_json, session, "HEAD", (2, 5))
    assert total >= 5
    # the shard that holds only the last commit still knows the node's first name
    _, last = run_json("verify", "--root", str(session), "--range", "HEAD",
                       "--shard", f"{total}/{total}")  # fmt: skip
    assert last["summary"]["commits"] == 1
    assert "SS206" in {f["rule"] for f in last["findings"]}


# --- git processes -----------------------------------------------------------------------------


def spied(root: Path, args: list[str], spy: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The git subcommands a ``continuity verify`` run starts (a ``git`` first on PATH logs each
    command and runs the real git)."""
    real = shutil.which("git")
    assert real is not None
    spy.mkdir(exist_ok=True)
    log = spy / "commands"
    log.write_text("", encoding="utf-8")
    (spy / "git").write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{real}" "$@"\n')
    (spy / "git").chmod(0o755)
    from continuity_checks.cli import main

    with monkeypatch.context() as patch:
        patch.setenv("PATH", f"{spy}{os.pathsep}{os.environ['PATH']}")
        main(["verify", "--root", str(root), *args, "--format", "json"])
    options = ("--no-replace-objects", "--git-dir=", "--literal-pathspecs")
    return [
        next(word for word in line.split() if not word.startswith(options))
        for line in log.read_text(encoding="utf-8").splitlines()
    ]


@pytest.mark.skipif(sys.platform == "win32", reason="a shell script stands in for git")
def test_git_processes_of_a_shard(
    repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One more than a whole run: the ``git rev-list`` that numbers the range's commits. With the
    sessions family (every family, by default) a later shard also replays the commits before it
    to that family, in a ``git log`` that ends after the first commit in a project repository.
    Every shard here changes a delta created before the range, so each also looks up the
    creators (DL211) in one more ``git log``, as a whole run does; a shard after the first
    looks first among the range's commits before it (where the whole run saw them), latest
    first, in one more ``git log --no-walk``."""
    spy = tmp_path / "spy"
    commands = spied(repo.path, ["--range", "base..HEAD", "--shard", "2/3", "--family",
                                 "deltas"], spy, monkeypatch)  # fmt: skip
    # cat-file starts when the base's configuration is read, before or after rev-list
    assert commands[:1] == ["rev-parse"]
    assert sorted(commands[1:]) == ["cat-file", "log", "log", "log", "rev-list"]
    for shard, logs in (("1/3", 2), ("3/3", 4)):
        commands = spied(repo.path, ["--range", "base..HEAD", "--shard", shard], spy, monkeypatch)
        assert commands[:1] == ["rev-parse"], shard
        assert sorted(commands[1:]) == ["cat-file", *["log"] * logs, "rev-list"], shard


def test_an_owner_created_in_an_earlier_shard(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_json: RunCLI
) -> None:
    """DL211 in a shard whose delta was created by an earlier shard's commit: the creator is
    looked up from the commits before the shard, as the whole run saw it in its walk."""
    isolate_git(monkeypatch, tmp_path / "home")
    monkeypatch.chdir(tmp_path)
    r = GitRepo(tmp_path / "repo")
    r.commit("base", {"README.md": "x\n"})
    r.git("tag", "base")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "alice@example.invalid")
    r.commit("alice starts", {A: A0}, trailers=[A])
    r.commit("alice works", {A: delta(updated="2026-09-21T16:30:00+08:00")}, trailers=[A])
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "bob@example.invalid")
    r.commit("readme", {"README.md": "y\n"})
    r.commit("bob takes over", {A: delta(updated="2026-09-21T16:40:00+08:00")}, trailers=[A])
    code, whole = run_json("verify", "--root", str(r.path), "--range", "base..HEAD")
    assert code == 1
    assert [f["rule"] for f in whole["findings"]] == ["DL211"]
    assert assert_shards_add_up(run_json, r.path, "base..HEAD", (2, 3, 4)) == 4


def test_a_shard_does_not_take_a_later_creator_for_an_earlier_one(
    tmp_path: Path, run_json: RunCLI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """All of history, a delta deleted and created again by someone else: judged against its
    last good version, the one before the deletion (DL205, and DL211: the first creator owns
    it); a shard before the
    second creation judges its changes by the first creator, as the whole run does (the
    creators of a shard's deltas are looked up in the commits before it, not from the head,
    which reaches the later shards' commits)."""
    isolate_git(monkeypatch, tmp_path / "home")
    monkeypatch.chdir(tmp_path)
    r = GitRepo(tmp_path / "repo")
    r.commit("create A", {A: A0}, trailers=[A])
    r.commit("A works", {A: delta(changes=["first"], updated="2026-09-21T16:30:00+08:00")},
             trailers=[A])  # fmt: skip
    r.commit("drop A", delete=[A])  # DL206
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "other@example.invalid")
    r.commit("create A again", {A: delta(changes=["again"])}, trailers=[A])
    r.commit("A works again", {A: delta(changes=["first"], updated="2026-09-21T16:40:00+08:00")},
             trailers=[A])  # fmt: skip
    code, whole = run_json("verify", "--root", str(r.path), "--range", "HEAD")
    assert (code, {f["rule"] for f in whole["findings"]}) == (1, {"DL205", "DL206", "DL211"})
    assert assert_shards_add_up(run_json, r.path, "HEAD", (5, 2, 3)) == 5


def test_a_shard_takes_a_delta_the_base_holds_for_one_created_before_the_range(
    tmp_path: Path, run_json: RunCLI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A delta created before the range, deleted in it and added again by someone else: the
    addition is a change of the delta the base holds (DL211 by its creator), in every shard as
    in the whole run."""
    isolate_git(monkeypatch, tmp_path / "home")
    monkeypatch.chdir(tmp_path)
    r = GitRepo(tmp_path / "repo")
    r.commit("create A", {A: A0}, trailers=[A])
    r.git("tag", "base")
    r.commit("A works", {A: delta(changes=["first"], updated="2026-09-21T16:30:00+08:00")},
             trailers=[A])  # fmt: skip
    r.commit("drop A", delete=[A])
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "other@example.invalid")
    r.commit("create A again", {A: delta(changes=["again"])}, trailers=[A])
    r.commit("A works again", {A: delta(changes=["first"], updated="2026-09-21T16:40:00+08:00")},
             trailers=[A])  # fmt: skip
    code, whole = run_json("verify", "--root", str(r.path), "--range", "base..HEAD")
    rules = Counter(f["rule"] for f in whole["findings"])
    assert (code, rules["DL211"]) == (1, 2), whole["findings"]
    assert assert_shards_add_up(run_json, r.path, "base..HEAD", (4, 2, 3)) == 4


def test_a_shard_compares_with_the_last_good_version_before_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_json: RunCLI
) -> None:
    """A delta left unparseable in one shard and rewritten with another conversation's identity
    in the next: the later shard compares it with the version before the broken one, as the
    whole run does, and the shards still add up to the whole run."""
    isolate_git(monkeypatch, tmp_path / "home")
    r = GitRepo(tmp_path / "repo")
    marker = "<!-- deltalayer-conversation-v0.2.1 -->\n## Project Continuity\n"
    r.commit("base", {"PROJECT.md": "# P\n", "AGENTS.md": marker})
    r.git("tag", "base")
    r.commit("start", {A: delta(changes=["first"])})
    r.commit("broken", {A: delta(changes=["first"])[:20]}, trailers=[A])
    retaken = r.commit(
        "retaken",
        {A: delta(updated="2026-09-21T16:10:00+08:00", conversation_id="other")},
        trailers=[A],
    )
    code, whole = run_json("verify", "--root", str(r.path), "--range", "base..HEAD")
    found = {(f["rule"], f["commit"]) for f in whole["findings"]}
    assert code == 1 and {("DL204", retaken), ("DL205", retaken)} <= found, found
    code, last = run_json(
        "verify", "--root", str(r.path), "--range", "base..HEAD", "--shard", "3/3"
    )
    assert code == 1 and {(f["rule"], f["commit"]) for f in last["findings"]} == {
        (rule, sha) for rule, sha in found if sha == retaken
    }
    assert_shards_add_up(run_json, r.path, "base..HEAD", (2, 3))
