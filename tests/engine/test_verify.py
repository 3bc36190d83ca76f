"""``continuity verify`` on real git histories: every history rule caught with its commit."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from continuity_checks.cli import main
from tests.conftest import RunCLI
from tests.helpers.conversations import A0, LEGACY0, A, B, C
from tests.helpers.git import LEGACY, GitRepo, delta, isolate_git, path_of
from tests.helpers.verify import A_FROZEN, config, found, three_conversations, verify


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    """A history with three conversations' deltas and legacy history, as the base commit."""
    return three_conversations(tmp_path, monkeypatch)


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
