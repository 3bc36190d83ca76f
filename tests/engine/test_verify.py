"""``continuity verify`` on real git histories: every history rule caught with its commit."""

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
from tests.helpers.conversations import A0, B0, C0, LEGACY0, A, B, C
from tests.helpers.git import LEGACY, GitRepo, delta, isolate_git, path_of

A_FROZEN = path_of("2026-09-21T16-20-00p08-00--agent.frozen.json")


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    """A history with three conversations' deltas and legacy history, as the base commit."""
    isolate_git(monkeypatch, tmp_path / "home")
    monkeypatch.chdir(tmp_path)
    r = GitRepo(tmp_path / "repo")
    r.commit("base", {A: A0, B: B0, C: C0, LEGACY: LEGACY0, "README.md": "x\n"})
    r.git("tag", "base")
    return r


def verify(run_json: RunCLI, repo: GitRepo, *args: str) -> tuple[int, dict[str, Any]]:
    return run_json("verify", "--root", str(repo.path), *args)


def found(report: dict[str, Any]) -> list[tuple[str, str, str | None, int | None]]:
    return [(f["rule"], f["path"], f["commit"], f["line"]) for f in report["findings"]]


def config(tmp_path: Path, text: str) -> str:
    path = tmp_path / "continuity.toml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_clean_history_passes(repo: GitRepo, run_json: RunCLI) -> None:
    repo.commit(
        "update A", {A: delta(updated="2026-09-21T16:30:00+08:00", changes=["x"])}, trailers=[A]
    )
    repo.commit(
        "update B", {B: delta("2026-09-21T17:00:00+08:00", "2026-09-21T17:05:00+08:00", "codex")}
    )
    new = path_of("2026-09-22T09-00-00p08-00--agent.json")
    repo.commit("new conversation", {new: delta("2026-09-22T09:00:00+08:00")})
    repo.commit("freeze A", {A_FROZEN: (repo.path / A).read_bytes()}, delete=[A], trailers=[A])
    repo.commit("code only", {"src.py": "print()\n"})
    code, report = verify(run_json, repo, "--range", "base..HEAD")
    assert (code, report["findings"], report["summary"]["commits"]) == (0, [], 5)
    code, report = verify(run_json, repo, "--range", "HEAD")
    assert (code, report["summary"]["commits"]) == (0, 6)


def test_takeover_without_trailer(repo: GitRepo, run_json: RunCLI) -> None:
    sha = repo.commit(
        "touch two conversations",
        {
            A: delta(updated="2026-09-21T16:40:00+08:00"),
            B: delta("2026-09-21T17:00:00+08:00", "2026-09-21T17:10:00+08:00", "codex"),
        },
    )
    code, report = verify(run_json, repo, "--range", "base..HEAD")
    assert code == 1
    assert found(report) == [("DL202", A, sha, None)]
    assert B in report["findings"][0]["message"]


def test_takeover_through_identity_fields(repo: GitRepo, run_json: RunCLI) -> None:
    sha = repo.commit(
        "adopt", {B: delta("2026-09-21T17:00:00+08:00", source="agent", conversation_id="x")}
    )
    code, report = verify(run_json, repo, "--range", "base..HEAD")
    assert code == 1
    # the name no longer matches the source either: the state the commit leaves (DL110)
    assert sorted((f["rule"], f["pointer"], f["commit"]) for f in report["findings"]) == [
        ("DL110", None, sha),
        ("DL204", "/conversation_id", sha),
        ("DL204", "/source", sha),
    ]
    takeovers = [f for f in report["findings"] if f["rule"] == "DL204"]
    assert all(f["line"] == 1 and f["column"] > 1 for f in takeovers)
    messages = sorted(f["message"] for f in takeovers)
    assert messages == [
        'expected conversation_id to stay absent, found "x"',
        'expected source to stay "codex", found "agent"',
    ]


def test_normalised_started_at_is_not_a_takeover(repo: GitRepo, run_json: RunCLI) -> None:
    repo.commit("z", {C: delta("2026-09-21T10:00:00Z", source="claude")})
    repo.git("tag", "z")
    repo.commit("normalise", {C: delta("2026-09-21T10:00:00+00:00", source="claude")})
    code, report = verify(run_json, repo, "--range", "z..HEAD")
    assert (code, report["findings"]) == (0, [])
    moved = repo.commit("move", {C: delta("2026-09-21T11:00:00+00:00", source="claude")})
    assert found(verify(run_json, repo, "--range", "z..HEAD")[1]) == [
        ("DL110", C, moved, None),  # the name says 10:00: the state the commit leaves
        ("DL204", C, moved, 1),
    ]


def test_trailer_naming_another_delta(repo: GitRepo, run_json: RunCLI) -> None:
    sha = repo.commit(
        "A's conversation edits B",
        {
            A: delta(updated="2026-09-21T16:40:00+08:00"),
            B: delta("2026-09-21T17:00:00+08:00", "2026-09-21T17:10:00+08:00", "codex"),
        },
        trailers=["./" + A],
    )
    code, report = verify(run_json, repo, "--range", "base..HEAD")
    assert (code, found(report)) == (1, [("DL201", B, sha, None)])


def test_a_commit_naming_two_conversations_is_dl210(repo: GitRepo, run_json: RunCLI) -> None:
    """Trailers cannot make one commit speak for two conversations (the form a takeover would
    take to pass DL201)."""
    sha = repo.commit(
        "A and B",
        {
            A: delta(updated="2026-09-21T16:40:00+08:00"),
            B: delta("2026-09-21T17:00:00+08:00", "2026-09-21T17:10:00+08:00", "codex"),
        },
        trailers=[A, B],
    )
    code, report = verify(run_json, repo, "--range", "base..HEAD")
    assert (code, found(report)) == (1, [("DL210", A, sha, None)])
    assert B in report["findings"][0]["message"]


def test_a_delta_and_its_frozen_form_are_one_conversation(repo: GitRepo, run_json: RunCLI) -> None:
    repo.commit("freeze A", {A_FROZEN: A0}, delete=[A], trailers=[A, A_FROZEN])
    code, report = verify(run_json, repo, "--range", "base..HEAD")
    assert (code, report["findings"]) == (0, [])


@pytest.mark.parametrize(
    "trailer",
    [
        A.rpartition("/")[2],  # the bare file name: the store's directory goes without saying
        A.replace("/", "\\"),  # Windows separators
        f"`{A}`",
        f"/{A}",
    ],
)
def test_trailer_forms_that_name_a_delta(repo: GitRepo, run_json: RunCLI, trailer: str) -> None:
    # with a trailer, a delta it does not name would be DL201: each form must name A
    repo.commit("A updates", {A: delta(updated="2026-09-21T16:40:00+08:00")}, trailers=[trailer])
    code, report = verify(run_json, repo, "--range", "base..HEAD")
    assert (code, report["findings"]) == (0, [])


def test_a_trailer_that_leaves_the_repository_names_nothing(
    repo: GitRepo, run_json: RunCLI, tmp_path: Path
) -> None:
    strict = config(tmp_path, '[deltas]\nownership = "trailer"\n')
    sha = repo.commit(
        "A updates", {A: delta(updated="2026-09-21T16:40:00+08:00")}, trailers=["../" + A]
    )
    code, report = verify(run_json, repo, "--range", "base..HEAD", "--config", strict)
    assert (code, found(report)) == (1, [("DL203", A, sha, None)])


def test_ownership_trailer_mode(repo: GitRepo, run_json: RunCLI, tmp_path: Path) -> None:
    strict = config(tmp_path, '[deltas]\nownership = "trailer"\n')
    new = path_of("2026-09-22T09-00-00p08-00--agent.json")
    created = repo.commit("create without trailer", {new: delta("2026-09-22T09:00:00+08:00")})
    repo.commit(
        "update with trailer",
        {new: delta("2026-09-22T09:00:00+08:00", "2026-09-22T10:00:00+08:00")},
        trailers=[new],
    )
    code, report = verify(run_json, repo, "--range", "base..HEAD", "--config", strict)
    assert (code, found(report)) == (1, [("DL203", new, created, None)])
    # the default mode allows creations without a trailer
    assert verify(run_json, repo, "--range", "base..HEAD")[0] == 0


def test_ownership_off(repo: GitRepo, run_json: RunCLI, tmp_path: Path) -> None:
    repo.commit(
        "touch two",
        {
            A: delta(updated="2026-09-21T16:40:00+08:00"),
            C: delta("2026-09-21T18:00:00+08:00", "2026-09-21T18:10:00+08:00", "claude"),
        },
    )
    off = config(tmp_path, '[deltas]\nownership = "off"\n')
    assert verify(run_json, repo, "--range", "base..HEAD", "--config", off)[0] == 0
    assert verify(run_json, repo, "--range", "base..HEAD")[0] == 1


def test_updated_at_going_back(repo: GitRepo, run_json: RunCLI) -> None:
    repo.commit("forward", {A: delta(updated="2026-09-21T18:00:00+08:00")}, trailers=[A])
    back = repo.commit("back", {A: delta(updated="2026-09-21T17:00:00+08:00")}, trailers=[A])
    code, report = verify(run_json, repo, "--range", "base..HEAD")
    assert (code, found(report)) == (1, [("DL205", A, back, 1)])
    assert report["findings"][0]["pointer"] == "/updated_at"


def test_frozen_delta_edited(repo: GitRepo, run_json: RunCLI) -> None:
    repo.commit("freeze", {A_FROZEN: A0}, delete=[A], trailers=[A])
    edit = repo.commit("edit frozen", {A_FROZEN: A0.replace("first", "rewritten")})
    gone = repo.commit("delete frozen", delete=[A_FROZEN])
    code, report = verify(run_json, repo, "--range", "base..HEAD")
    assert code == 1
    assert sorted(found(report)) == sorted(
        [("DL207", A_FROZEN, edit, 1), ("DL207", A_FROZEN, gone, None)]
    )


def test_update_then_freeze_in_one_commit(repo: GitRepo, run_json: RunCLI) -> None:
    """DeltaLayer's handoff order (update, freeze, then one commit): the freeze carries an
    update, judged as any update is. It passes when the update would."""
    updated = delta(updated="2026-09-21T17:00:00+08:00", changes=["first", "second"])
    repo.commit("update and freeze", {A_FROZEN: updated}, delete=[A], trailers=[A])
    code, report = verify(run_json, repo, "--range", "base..HEAD")
    assert (code, found(report)) == (0, [])


def test_freeze_carrying_an_update_no_update_could_make(repo: GitRepo, run_json: RunCLI) -> None:
    """The update inside a freeze answers to the update rules: an identity field rewritten is
    DL204, an updated_at going back DL205, both on the frozen file."""
    taken = delta(source="mallory", changes=["first"])
    back = delta(updated="2026-09-21T16:00:00+08:00", changes=["first"])
    sha = repo.commit("freeze as another", {A_FROZEN: taken}, delete=[A], trailers=[A])
    code, report = verify(run_json, repo, "--range", "base..HEAD")
    # the name says "agent" (DL110): the state the commit leaves
    assert (code, found(report)) == (
        1,
        [("DL110", A_FROZEN, sha, None), ("DL204", A_FROZEN, sha, 1)],
    )
    assert report["findings"][1]["pointer"] == "/source"
    repo.git("reset", "-q", "--hard", "base")
    sha = repo.commit("freeze going back", {A_FROZEN: back}, delete=[A], trailers=[A])
    code, report = verify(run_json, repo, "--range", "base..HEAD")
    assert (code, found(report)) == (1, [("DL205", A_FROZEN, sha, 1)])


def test_freeze_with_bytes_that_are_no_delta(repo: GitRepo, run_json: RunCLI) -> None:
    """Bytes that cannot be compared as an update (not a JSON object) are DL208: a rename that
    would otherwise hide them."""
    sha = repo.commit("freeze and break", {A_FROZEN: "[1, 2]\n"}, delete=[A], trailers=[A])
    code, report = verify(run_json, repo, "--range", "base..HEAD")
    assert code == 1
    assert ("DL208", A_FROZEN, sha, 1) in found(report)


def test_deleted_delta(repo: GitRepo, run_json: RunCLI, tmp_path: Path) -> None:
    sha = repo.commit("drop B", delete=[B])
    code, report = verify(run_json, repo, "--range", "base..HEAD")
    assert (code, found(report)) == (1, [("DL206", B, sha, None)])
    allowed = config(tmp_path, "[deltas]\nallow-delete = true\n")
    assert verify(run_json, repo, "--range", "base..HEAD", "--config", allowed)[0] == 0


def test_legacy_line_rewritten(repo: GitRepo, run_json: RunCLI, tmp_path: Path) -> None:
    sha = repo.commit("rewrite", {LEGACY: LEGACY0.replace('"changes":[]', '"changes":["x"]')})
    code, report = verify(run_json, repo, "--range", "base..HEAD")
    assert (code, found(report)) == (1, [("DL209", LEGACY, sha, 2)])
    append_only = config(tmp_path, '[deltas]\nlegacy = "append-only"\n')
    assert found(verify(run_json, repo, "--range", "base..HEAD", "--config", append_only)[1]) == [
        ("DL209", LEGACY, sha, 2)
    ]


def test_legacy_append(repo: GitRepo, run_json: RunCLI, tmp_path: Path) -> None:
    line = '{"time":"2026-09-22","source":"agent","changes":[]}\n'
    sha = repo.commit("append", {LEGACY: LEGACY0 + line})
    code, report = verify(run_json, repo, "--range", "base..HEAD")
    assert (code, found(report)) == (1, [("DL209", LEGACY, sha, 3)])  # read-only by default
    append_only = config(tmp_path, '[deltas]\nlegacy = "append-only"\n')
    assert verify(run_json, repo, "--range", "base..HEAD", "--config", append_only)[0] == 0
    gone = repo.commit("delete legacy", delete=[LEGACY])
    _, report = verify(run_json, repo, "--range", f"{sha}..HEAD", "--config", append_only)
    assert found(report) == [("DL209", LEGACY, gone, None)]


def test_legacy_written_after_init(repo: GitRepo, run_json: RunCLI, tmp_path: Path) -> None:
    """init leaves changes.jsonl empty; a v0.2 store never writes it (specs/deltalayer.md I10).
    The first record written into it is an append to legacy history, which every reader then
    lists after all deltas, as older than any of them."""
    pkg = "pkg/" + LEGACY  # the base commit's own legacy file has content
    repo.commit("init", {pkg: ""})
    line = '{"time":"2026-09-22T10:00:00+08:00","source":"agent","changes":["v0 habit"]}\n'
    sha = repo.commit("write legacy", {pkg: line})
    code, report = verify(run_json, repo, "--range", "base..HEAD")
    assert (code, found(report)) == (1, [("DL209", pkg, sha, 1)])
    assert "appended at line 1" in report["findings"][0]["message"]
    append_only = config(tmp_path, '[deltas]\nlegacy = "append-only"\n')
    assert verify(run_json, repo, "--range", "base..HEAD", "--config", append_only)[0] == 0
    # an empty legacy file deleted loses no history
    other = "lib/" + LEGACY
    repo.commit("init lib", {other: ""})
    repo.commit("drop lib's empty file", delete=[other])
    assert verify(run_json, repo, "--range", f"{sha}..HEAD")[0] == 0


def test_delta_started_and_frozen_before_its_first_commit(repo: GitRepo, run_json: RunCLI) -> None:
    """A conversation that starts its delta and freezes it before committing adds only
    X.frozen.json, with a trailer naming the path start gave it, X.json: one delta, two names,
    as for a freeze (and DL210). It was DL201, "found this delta created"."""
    name = "2026-09-22T10-00-00p08-00--codex"
    frozen = path_of(name + ".frozen.json")
    record = delta("2026-09-22T10:00:00+08:00", source="codex", changes=["x"])
    repo.commit("conversation work", {frozen: record}, trailers=[path_of(name + ".json")])
    code, report = verify(run_json, repo, "--range", "base..HEAD")
    assert (code, found(report)) == (0, [])
    other = repo.commit("another's frozen delta", {path_of("z.frozen.json"): record}, trailers=[B])
    code, report = verify(run_json, repo, "--range", "base..HEAD")
    assert (code, found(report)) == (
        1,
        [
            ("DL110", path_of("z.frozen.json"), other, None),
            ("DL201", path_of("z.frozen.json"), other, None),
        ],
    )


def test_twin_resolved_as_its_hint_says(repo: GitRepo, run_json: RunCLI) -> None:
    """X.json beside an X.frozen.json of the same bytes (a freeze committed in two steps, or
    its X.json never removed) is DL111, whose hint is to remove X.json: that commit completes
    the freeze and loses nothing. It was DL206, whose hint (restore X.json) was the twin again."""
    copy = repo.commit("frozen copy", {A_FROZEN: A0}, trailers=[A_FROZEN])
    twin = repo.commit("remove X.json of the twin", delete=[A], trailers=[A])
    code, report = verify(run_json, repo, "--range", "base..HEAD")
    # the copy leaves the twin (DL111); its removal is no deletion
    assert (code, found(report)) == (1, [("DL111", A, copy, None)])
    # X.json whose bytes the frozen file does not keep: its deletion loses them
    repo.git("reset", "-q", "--hard", "base")
    copy = repo.commit("frozen copy of an older version", {A_FROZEN: A0.replace("first", "older")})
    lost = repo.commit("remove X.json of the twin", delete=[A], trailers=[A])
    code, report = verify(run_json, repo, "--range", "base..HEAD")
    assert (code, found(report)) == (1, [("DL111", A, copy, None), ("DL206", A, lost, None)])
    assert twin != lost


def test_symlinked_delta_or_legacy(repo: GitRepo, run_json: RunCLI) -> None:
    """A frozen delta that is a symlink keeps its content in another file: every later edit of
    that file changes the frozen delta and no commit shows it (check follows the link, verify
    compares the link). Caught at the commit that makes the symlink, by the commit hook too."""
    frozen = path_of("2026-09-22T09-00-00p08-00--agent.frozen.json")
    record = delta("2026-09-22T09:00:00+08:00", changes=["kept"])
    repo.commit("notes", {"notes/frozen.json": record})
    (repo.path / frozen).symlink_to("../../notes/frozen.json")
    sha = repo.commit("a frozen delta as a link")
    repo.commit("edit through the link", {"notes/frozen.json": record.replace("kept", "x")})
    code, report = verify(run_json, repo, "--range", "base..HEAD")
    assert (code, found(report)) == (1, [("DL212", frozen, sha, None)])
    assert "../../notes/frozen.json" in report["findings"][0]["message"]
    # legacy history through a link, and a delta replaced by one in the commit hook
    (repo.path / LEGACY).unlink()
    (repo.path / LEGACY).symlink_to("../notes/frozen.json")
    (repo.path / B).unlink()
    (repo.path / B).symlink_to(B.rpartition("/")[2].replace("codex", "claude"))
    repo.git("add", "-A")
    code, report = run_json("check", "--staged", "--root", str(repo.path), "--family", "deltas")
    assert code == 1
    assert {(f["rule"], f["path"]) for f in report["findings"]} >= {
        ("DL212", LEGACY),
        ("DL212", B),
    }
    # the same frozen delta as a regular file passes
    repo.git("reset", "-q", "--hard", "base")
    repo.commit("a frozen delta", {frozen: record})
    code, report = verify(run_json, repo, "--range", "base..HEAD")
    assert (code, report["findings"]) == (0, [])


def test_merges(repo: GitRepo, run_json: RunCLI) -> None:
    repo.commit("freeze A", {A_FROZEN: A0}, delete=[A], trailers=[A])
    repo.git("checkout", "-q", "-b", "codex")
    repo.commit(
        "B works",
        {B: delta("2026-09-21T17:00:00+08:00", "2026-09-21T17:30:00+08:00", "codex")},
        trailers=[B],
    )
    repo.git("checkout", "-q", "main")
    repo.commit(
        "C works",
        {C: delta("2026-09-21T18:00:00+08:00", "2026-09-21T18:30:00+08:00", "claude")},
        trailers=[C],
    )
    repo.git("merge", "-q", "--no-edit", "codex")
    code, report = verify(run_json, repo, "--range", "base..HEAD")
    assert (code, report["findings"], report["summary"]["commits"]) == (0, [], 4)
    repo.git("checkout", "-q", "-b", "later", "HEAD~1")
    repo.commit("unrelated", {"x.txt": "x\n"})
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--no-commit", "later")
    repo.write({A_FROZEN: A0.replace("first", "evil")})
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "evil merge")
    evil = repo.head()
    code, report = verify(run_json, repo, "--range", "base..HEAD")
    assert (code, found(report)) == (1, [("DL207", A_FROZEN, evil, 1)])


def test_paths_with_spaces(repo: GitRepo, run_json: RunCLI) -> None:
    odd = path_of("my conversation ü.frozen.json")
    named = repo.commit("odd", {odd: A0})
    sha = repo.commit("edit odd", {odd: A0 + "\n"})
    code, report = verify(run_json, repo, "--range", "base..HEAD")
    # the name is no delta's (DL110); its bytes are frozen all the same from the commit on
    assert (code, found(report)) == (1, [("DL110", odd, named, None), ("DL207", odd, sha, 2)])


def test_garbage_bytes_no_traceback(repo: GitRepo, run_json: RunCLI) -> None:
    repo.commit(
        "garbage", {A: b"\xef\xbb\xbf\xff\x00{", LEGACY: b"\xff" + LEGACY0.encode()}, trailers=[A]
    )
    repo.commit(
        "more garbage", {A: b'{"started_at": 1, "source": [], "updated_at": "x"}'}, trailers=[A]
    )
    code, report = verify(run_json, repo, "--range", "base..HEAD")
    # each commit's broken files, and the second version against the last good one (DL204)
    assert code == 1
    assert sorted(f["rule"] for f in report["findings"]) == [
        "CC002", "CC003", "DL102", "DL103", "DL103", "DL104", "DL204", "DL209"
    ]  # fmt: skip


def test_shallow_clone_is_exit_2(
    repo: GitRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo.commit("second", {"x": "1"})
    shallow = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", f"file://{repo.path}", str(shallow)], check=True
    )
    assert main(["verify", "--root", str(shallow), "--range", "HEAD~1..HEAD"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("continuity: shallow clone")
    assert "hint: fetch the whole history (actions/checkout with fetch-depth: 0" in err


def test_unknown_ref_and_malformed_range(repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", "--root", str(repo.path), "--range", "origin/main..HEAD"]) == 2
    err = capsys.readouterr().err
    assert "unknown revision 'origin/main'" in err and "fetch-depth: 0" in err
    assert main(["verify", "--root", str(repo.path), "--range", "a...b"]) == 2
    assert "malformed range" in capsys.readouterr().err
    assert main(["verify", "--root", str(repo.path)]) == 2
    assert "no range to verify" in capsys.readouterr().err


def test_not_a_repository(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    isolate_git(monkeypatch, tmp_path / "home")
    (tmp_path / "plain").mkdir()
    assert main(["verify", "--root", str(tmp_path / "plain"), "--range", "HEAD"]) == 2
    assert "not a git repository" in capsys.readouterr().err


def test_empty_range_passes_with_note(repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", "--root", str(repo.path), "--range", "HEAD..HEAD"]) == 0
    out = capsys.readouterr().out
    assert "no commits in HEAD..HEAD: nothing to verify" in out


def test_pre_push_environment(
    repo: GitRepo, run_json: RunCLI, monkeypatch: pytest.MonkeyPatch
) -> None:
    sha = repo.commit("drop B", delete=[B])
    monkeypatch.setenv("PRE_COMMIT_FROM_REF", repo.git("rev-parse", "base"))
    monkeypatch.setenv("PRE_COMMIT_TO_REF", sha)
    code, report = verify(run_json, repo)
    assert (code, found(report)) == (1, [("DL206", B, sha, None)])
    monkeypatch.delenv("PRE_COMMIT_FROM_REF")
    monkeypatch.delenv("PRE_COMMIT_TO_REF")
    monkeypatch.setenv("PRE_COMMIT_LOCAL_BRANCH", "refs/heads/main")  # root commit pushed
    code, report = verify(run_json, repo)
    assert (code, report["summary"]["commits"]) == (1, 2)


def test_subprocess_run(repo: GitRepo) -> None:
    sha = repo.commit("edit frozen later", {A_FROZEN: A0}, delete=[A], trailers=[A])
    bad = repo.commit("edit", {A_FROZEN: "{}\n"})
    result = subprocess.run(
        [sys.executable, "-m", "continuity_checks", "verify", "--range", f"{sha}~1..HEAD"],
        cwd=repo.path,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1, result.stderr
    assert f"{A_FROZEN}:1: DL207" in result.stdout
    assert f"[commit {bad[:12]}]" in result.stdout
    # DL207, and the state the edit leaves: "{}" is no delta (DL102)
    assert f"{A_FROZEN}:1:1: DL102" in result.stdout
    assert result.stdout.rstrip().endswith("2 commits checked: 2 errors, 0 warnings")


def test_legacy_edge_cases(repo: GitRepo, run_json: RunCLI, tmp_path: Path) -> None:
    append_only = config(tmp_path, '[deltas]\nlegacy = "append-only"\n')
    other = "nested/.deltalayer/changes.jsonl"
    repo.commit("init creates it empty", {other: ""})
    repo.commit("first records", {other: LEGACY0.rstrip("\n")})  # empty before: nothing to keep
    glued = repo.commit("glued", {other: LEGACY0.rstrip("\n") + '{"x":1}\n'})
    code, report = verify(run_json, repo, "--range", "base..HEAD", "--config", append_only)
    # the glued line is no record either (CC004): the state the commit leaves
    assert (code, found(report)) == (1, [("DL209", other, glued, 2), ("CC004", other, glued, 2)])
    assert "no final newline" in report["findings"][0]["message"]


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
