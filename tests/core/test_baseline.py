"""The baseline: ``continuity baseline check|verify`` records today's findings, ``check`` and
``verify`` then report only new ones, on real git repositories through the real CLI."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from continuity_checks.cli import main
from continuity_checks.core.baseline import FILE_NAME, entries_of, fingerprint, hide
from continuity_checks.core.findings import Finding, Report
from tests.conftest import RunCLI
from tests.helpers.git import GitRepo, delta, isolate_git, path_of

ALPHA = b"alpha\n"
H_ALPHA = hashlib.sha256(ALPHA).hexdigest()
A = path_of("2026-09-21T16-20-00p08-00--agent.json")
B = path_of("2026-09-21T17-00-00p08-00--codex.json")
C = path_of("2026-09-21T18-00-00p08-00--claude.json")


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    isolate_git(monkeypatch, tmp_path / "home")
    monkeypatch.chdir(tmp_path)
    return GitRepo(tmp_path / "repo")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def found(report: dict[str, Any]) -> list[tuple[str, str, int | None]]:
    return [(f["rule"], f["path"], f["line"]) for f in report["findings"]]


def entries(repo: GitRepo, section: str) -> list[tuple[str, str]]:
    document = json.loads((repo.path / FILE_NAME).read_text(encoding="utf-8"))
    return [(e["rule"], e["path"]) for e in document[section]]


def sums(*lines: str) -> str:
    return "".join(f"{H_ALPHA}  {name}\n" for name in lines)


# --- file mode ----------------------------------------------------------------------------------


def test_check_round_trip(
    repo: GitRepo, run_json: RunCLI, capsys: pytest.CaptureFixture[str]
) -> None:
    """Write, add a violation: only it is reported; fix the old one, rewrite: it drops out."""
    repo.commit("adopt", {"a.txt": ALPHA, "SHA256SUMS": sums("a.txt", "gone.txt")})
    root = str(repo.path)
    code, report = run_json("check", "--all", "--root", root)
    assert (code, found(report), report["summary"]["baselined"]) == (
        1,
        [("PV103", "SHA256SUMS", 2)],
        None,
    )
    code, out, _ = run(capsys, "baseline", "check", "--root", root)
    assert code == 0 and "check section: 1 known finding in 1 file" in out
    assert entries(repo, "check") == [("PV103", "SHA256SUMS")]

    code, report = run_json("check", "--all", "--root", root)
    assert (code, found(report), report["summary"]["baselined"]) == (0, [], 1)
    code, out, _ = run(capsys, "check", "--all", "--root", root)
    assert (code, out) == (
        0,
        "1 file checked: no problems; 1 known finding hidden by the baseline\n",
    )

    # a new violation in another file is reported, the known one still hidden
    repo.write({"PROVENANCE.sha256": f"{H_ALPHA}  lost.txt\n"})
    code, report = run_json("check", "--all", "--root", root)
    assert (code, found(report), report["summary"]["baselined"]) == (
        1,
        [("PV103", "PROVENANCE.sha256", 1)],
        1,
    )
    # the path a pre-commit run passes sees the same
    code, report = run_json("check", "--root", root, str(repo.path / "SHA256SUMS"))
    assert (code, found(report), report["summary"]["baselined"]) == (0, [], 1)
    # --no-baseline shows everything
    code, report = run_json("check", "--all", "--root", root, "--no-baseline")
    assert (code, len(report["findings"]), report["summary"]["baselined"]) == (1, 2, None)

    # the old one fixed, the baseline rewritten: its entry is gone, the new one is recorded
    repo.write({"SHA256SUMS": sums("a.txt")})
    code, out, _ = run(capsys, "baseline", "check", "--root", root)
    assert code == 0 and "1 before" in out
    assert entries(repo, "check") == [("PV103", "PROVENANCE.sha256")]
    # and a file that broke again is new, since its entry dropped out
    repo.write({"SHA256SUMS": sums("a.txt", "gone.txt")})
    code, report = run_json("check", "--all", "--root", root)
    assert (code, found(report)) == (1, [("PV103", "SHA256SUMS", 2)])


def test_lines_shifted_by_unrelated_edits_keep_a_finding_known(
    repo: GitRepo, run_json: RunCLI
) -> None:
    repo.write(
        {"a.txt": ALPHA, "SHA256SUMS": sums("gone.txt") + sums("gone.txt").replace("  ", "  ./")}
    )
    root = str(repo.path)
    code, report = run_json("check", "--all", "--root", root)
    assert found(report) == [("PV103", "SHA256SUMS", 1), ("PV109", "SHA256SUMS", 2)]
    assert main(["baseline", "check", "--root", root]) == 0
    # two lines above them: both findings move down, and stay known (PV109's message names
    # the line of the first listing, which moved too)
    repo.write(
        {"SHA256SUMS": "# listed by hand\n" + sums("a.txt") + sums("gone.txt") + sums("./gone.txt")}
    )
    code, report = run_json("check", "--all", "--root", root, "--no-baseline")
    assert found(report) == [("PV103", "SHA256SUMS", 3), ("PV109", "SHA256SUMS", 4)]
    code, report = run_json("check", "--all", "--root", root)
    assert (code, found(report), report["summary"]["baselined"]) == (0, [], 2)


def test_a_second_occurrence_of_a_known_finding_is_new() -> None:
    """Two findings with one fingerprint (same rule, path, pointer and message at two lines):
    a baseline that knew one hides one, and the other is new."""
    first = Finding("x.json", 3, 1, "DL113", "expected compact JSON")
    second = Finding("x.json", 7, 1, "DL113", "expected compact JSON")
    known = entries_of([first])
    report = Report(findings=[first, second])
    hide(report, known)
    assert (report.findings, report.baselined) == ([second], 1)
    report = Report(findings=[first, second])
    hide(report, entries_of([first, second]))
    assert (report.findings, report.baselined, report.exit_code) == ([], 2, 0)


def test_fingerprint_ignores_position_but_not_place_rule_or_commit() -> None:
    one = Finding("x.json", 3, 1, "DL101", "expected y (first on line 3)", pointer="/a")
    moved = Finding("x.json", 9, 5, "DL101", "expected y (first on line 9)", pointer="/a")
    assert fingerprint(one) == fingerprint(moved)
    for other in (
        Finding("y.json", 3, 1, "DL101", one.message, pointer="/a"),
        Finding("x.json", 3, 1, "DL102", one.message, pointer="/a"),
        Finding("x.json", 3, 1, "DL101", one.message, pointer="/b"),
        Finding("x.json", 3, 1, "DL101", "expected z", pointer="/a"),
        Finding("x.json", 3, 1, "DL101", one.message, pointer="/a", commit="ab" * 20),
    ):
        assert fingerprint(other) != fingerprint(one)


# --- history mode -------------------------------------------------------------------------------


def test_verify_round_trip(
    repo: GitRepo, run_json: RunCLI, capsys: pytest.CaptureFixture[str]
) -> None:
    """Write, add a violating commit: only it is reported; rewrite the old commit, rewrite the
    baseline: the old entry drops out."""
    repo.commit("base", {A: delta(), B: delta("2026-09-21T17:00:00+08:00", source="codex")})
    repo.git("tag", "base")
    old = repo.commit("drop B", delete=[B])
    root = str(repo.path)
    code, report = run_json("verify", "--root", root, "--range", "HEAD")
    assert code == 1 and {f["commit"] for f in report["findings"]} == {old}
    known = len(report["findings"])
    code, out, _ = run(capsys, "baseline", "verify", "--root", root)
    assert code == 0 and f"verify section: {known} known finding" in out
    assert {e for e in entries(repo, "verify")} == {
        (f["rule"], f["path"]) for f in report["findings"]
    }

    code, report = run_json("verify", "--root", root, "--range", "HEAD")
    assert (code, report["findings"], report["summary"]["baselined"]) == (0, [], known)

    new = repo.commit("drop A", delete=[A])
    code, report = run_json("verify", "--root", root, "--range", "HEAD")
    assert code == 1 and {f["commit"] for f in report["findings"]} == {new}
    assert report["summary"]["baselined"] == known

    # the old commit rewritten (it no longer deletes B), the baseline written again: the old
    # entries drop out, the new commit's are recorded
    repo.git("reset", "-q", "--hard", "base")
    repo.commit("touch README", {"README.md": "x\n"})
    new = repo.commit("drop A", delete=[A])
    assert main(["baseline", "verify", "--root", root]) == 0
    commits = {e["commit"] for e in json.loads((repo.path / FILE_NAME).read_text())["verify"]}
    assert commits == {new}
    code, report = run_json("verify", "--root", root, "--range", "HEAD")
    assert (code, report["findings"]) == (0, [])


def test_check_and_verify_sections_are_kept_apart(repo: GitRepo, run_json: RunCLI) -> None:
    repo.commit("base", {A: delta(), B: delta("2026-09-21T17:00:00+08:00", source="codex")})
    repo.commit("drop B", delete=[B], files={"SHA256SUMS": sums("gone.txt")})
    root = str(repo.path)
    assert main(["baseline", "verify", "--root", root]) == 0
    verify_entries = entries(repo, "verify")
    assert main(["baseline", "check", "--root", root]) == 0
    assert entries(repo, "verify") == verify_entries  # the check write kept it
    assert ("PV103", "SHA256SUMS") in entries(repo, "check")
    assert main(["baseline", "verify", "--root", root]) == 0
    assert ("PV103", "SHA256SUMS") in entries(repo, "check")


def test_verify_reads_the_baseline_of_the_base(repo: GitRepo, run_json: RunCLI) -> None:
    """Like the configuration: a commit of the range cannot list its own findings as known."""
    repo.commit("base", {A: delta(), B: delta("2026-09-21T17:00:00+08:00", source="codex")})
    repo.git("tag", "base")
    bad = repo.commit("drop B", delete=[B])
    root = str(repo.path)
    assert main(["baseline", "verify", "--root", root]) == 0
    accepted = repo.commit("accept it", {FILE_NAME: (repo.path / FILE_NAME).read_bytes()})
    # the base has no baseline: the range's own baseline does not hide its commit, and the
    # commit that added it is shown (CC011)
    code, report = run_json("verify", "--root", root, "--range", "base..HEAD")
    assert code == 1 and {f["commit"] for f in report["findings"]} == {bad, accepted}
    assert [f["path"] for f in report["findings"] if f["rule"] == "CC011"] == [FILE_NAME]
    assert report["summary"]["baselined"] is None
    # named on the command line, it is used
    code, report = run_json(
        "verify", "--root", root, "--range", "base..HEAD", "--baseline", str(repo.path / FILE_NAME)
    )
    assert code == 0 and report["summary"]["baselined"] == len(entries(repo, "verify"))
    # once it is in the base, it applies to the ranges after it
    repo.commit("more", {"README.md": "y\n"})
    code, report = run_json("verify", "--root", root, "--range", f"{accepted}..HEAD")
    assert (code, report["findings"], report["summary"]["baselined"]) == (0, [], 0)


def test_a_range_that_adds_to_the_baseline_is_reported(repo: GitRepo, run_json: RunCLI) -> None:
    """A pull request that breaks a file and lists the break in the baseline passes `check`
    (which reads the work tree's baseline, as it reads the work tree's configuration), and no
    history rule sees a schema error; verify must then show the commit that grew the baseline,
    as it shows one that changes the configuration (CC011), so that review sees what is hidden,
    and the error itself: the range is judged by the base's baseline, which does not know it.
    A baseline that only shrinks (fixed findings dropping out) is no news."""
    repo.commit("adopt", {A: delta(), "SHA256SUMS": sums("gone.txt")})
    root = str(repo.path)
    assert main(["baseline", "check", "--root", root]) == 0
    repo.commit("accept", {FILE_NAME: (repo.path / FILE_NAME).read_bytes()})
    repo.git("tag", "base")
    known = len(entries(repo, "check"))
    # the pull request: a delta whose changes are not a list, and the baseline written again
    repo.write({A: delta(updated="2026-09-21T16:50:00+08:00").replace("[]", '"done"')})
    code, report = run_json("check", "--all", "--root", root)
    assert code == 1 and [f["rule"] for f in report["findings"]] == ["DL105"]
    assert main(["baseline", "check", "--root", root]) == 0
    sneaky = repo.commit("tidy", {FILE_NAME: (repo.path / FILE_NAME).read_bytes()}, trailers=[A])
    code, report = run_json("check", "--all", "--root", root)
    assert (code, report["findings"], report["summary"]["baselined"]) == (0, [], known + 1)
    code, report = run_json("verify", "--root", root, "--range", "base..HEAD")
    assert [(f["rule"], f["path"], f["commit"]) for f in report["findings"]] == [
        ("CC011", FILE_NAME, sneaky),
        ("DL105", A, sneaky),
    ]
    assert "1 more known finding" in report["findings"][0]["message"]
    # the break fixed, the baseline written again: it only shrinks, nothing to review
    repo.git("tag", "-f", "base")
    repo.write({A: delta(updated="2026-09-21T17:00:00+08:00", changes=["done"])})
    assert main(["baseline", "check", "--root", root]) == 0
    repo.commit("fix", {FILE_NAME: (repo.path / FILE_NAME).read_bytes()}, trailers=[A])
    assert len(entries(repo, "check")) == known
    code, report = run_json("verify", "--root", root, "--range", "base..HEAD")
    assert (code, report["findings"]) == (0, [])
    # adopting the history as well grows the baseline (reported); writing it again then adds
    # only the CC011 entries of those rewrites: no news, or each write would report the last
    assert main(["baseline", "verify", "--root", root]) == 0
    history = repo.commit("record history", {FILE_NAME: (repo.path / FILE_NAME).read_bytes()})
    repo.git("tag", "-f", "base")
    assert main(["baseline", "verify", "--root", root]) == 0
    document = json.loads((repo.path / FILE_NAME).read_text(encoding="utf-8"))
    assert ("CC011", history) in {(e["rule"], e["commit"]) for e in document["verify"]}
    repo.commit("record again", {FILE_NAME: (repo.path / FILE_NAME).read_bytes()})
    code, report = run_json("verify", "--root", root, "--range", "base..HEAD")
    assert (code, report["findings"]) == (0, [])


def test_a_baseline_too_large_for_verify_to_read_is_reported(
    repo: GitRepo, run_json: RunCLI
) -> None:
    """check reads a baseline of up to 64 MiB; verify reads blobs up to limits.max-file-bytes.
    A baseline the range grows past that limit cannot be compared, and is reported, never taken
    for a deleted one."""
    repo.commit("adopt", {A: delta(), ".continuity.toml": "[limits]\nmax-file-bytes = 400\n"})
    repo.git("tag", "base")
    root = str(repo.path)
    repo.write({A: delta(updated="2026-09-21T16:50:00+08:00").replace("[]", '"done"')})
    assert main(["baseline", "check", "--root", root]) == 0
    assert (repo.path / FILE_NAME).stat().st_size > 400
    sneaky = repo.commit("tidy", {FILE_NAME: (repo.path / FILE_NAME).read_bytes()}, trailers=[A])
    code, report = run_json("check", "--all", "--root", root)
    assert (code, report["findings"]) == (0, [])
    code, report = run_json("verify", "--root", root, "--range", "base..HEAD")
    assert ("CC011", FILE_NAME, sneaky) in {
        (f["rule"], f["path"], f["commit"]) for f in report["findings"]
    }


def test_an_entry_labelled_as_a_baseline_cc011_is_counted_unless_it_is_one() -> None:
    """Only a fingerprint that really is the CC011 of a baseline rewrite is no news: an entry
    that only claims to be one (its rule and path rewritten by hand) hides whatever its
    fingerprint is, so it counts."""
    from continuity_checks.core.baseline import Entry, grown, render

    real = Finding(FILE_NAME, None, None, "CC011", "expected the baseline of the base", commit="c")
    broken = Finding(A, 1, 1, "DL105", "changes must be an array of strings", pointer="/changes")
    (recorded,) = entries_of([real])
    (hidden,) = entries_of([broken])
    forged = Entry(hidden.fingerprint, "CC011", FILE_NAME, None, "c", 1, recorded.message)
    empty = render({})
    assert grown(empty, render({"verify": [recorded]})) == 0
    assert grown(empty, render({"check": [forged]})) == 1
    assert grown(empty, render({"check": [hidden]})) == 1


# --- errors -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"{", "not a JSON baseline"),
        (b"[]", "expected a JSON object"),
        (b'{"format_version": 2, "check": [], "verify": []}', "format_version"),
        (b'{"format_version": 1, "check": {}, "verify": []}', "check: expected a list"),
        (b'{"format_version": 1, "check": [{"rule": "X"}], "verify": []}', "fingerprint"),
        (b'{"format_version": 1, "check": [], "verify": [], "extra": 1}', "extra: unknown key"),
        (b'{"format_version": 1, "format_version": 1}', "duplicate key"),
        (b"\xff", "not a JSON baseline"),
    ],
)
def test_a_malformed_baseline_is_exit_2_never_ignored(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], content: bytes, reason: str
) -> None:
    repo.commit("base", {A: delta()})
    (repo.path / FILE_NAME).write_bytes(content)
    root = str(repo.path)
    for args in (
        ("check", "--all", "--root", root),
        ("verify", "--range", "HEAD", "--root", root),
        ("baseline", "check", "--root", root),
        ("baseline", "verify", "--root", root),
    ):
        code, out, err = run(capsys, *args)
        assert (code, out) == (2, ""), args
        assert f"baseline error in {repo.path / FILE_NAME}" in err and reason in err, (args, err)
        assert "Traceback" not in err
    # the baseline commands left it as it was
    assert (repo.path / FILE_NAME).read_bytes() == content
    code, _, _ = run(capsys, "check", "--all", "--root", root, "--no-baseline")
    assert code == 0


def test_baseline_options(repo: GitRepo, capsys: pytest.CaptureFixture[str]) -> None:
    repo.commit("base", {A: delta()})
    root = str(repo.path)
    code, _, err = run(capsys, "check", "--all", "--root", root, "--baseline", "missing.json")
    assert code == 2 and "missing.json does not exist" in err
    code, _, err = run(
        capsys, "check", "--all", "--root", root, "--baseline", "x.json", "--no-baseline"
    )
    assert code == 2 and "contradict" in err
    target = repo.path / "elsewhere" / "known.json"
    target.parent.mkdir()
    code, _, _ = run(capsys, "baseline", "check", "--root", root, "--output", str(target))
    assert code == 0 and target.is_file() and not (repo.path / FILE_NAME).exists()
    code, _, _ = run(capsys, "check", "--all", "--root", root, "--baseline", str(target))
    assert code == 0


def test_sarif_and_github_say_what_the_baseline_hid(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    repo.write({"a.txt": ALPHA, "SHA256SUMS": sums("gone.txt")})
    root = str(repo.path)
    assert main(["baseline", "check", "--root", root]) == 0
    repo.write({"PROVENANCE.sha256": f"{H_ALPHA}  lost.txt\n"})
    code, out, _ = run(capsys, "check", "--all", "--root", root, "--format", "sarif")
    run_ = json.loads(out)["runs"][0]
    assert code == 1 and run_["properties"] == {
        "suppressed": 0,
        "baselined": 1,
        "not_shown": 0,
    }
    assert [(r["ruleId"], r["baselineState"]) for r in run_["results"]] == [("PV103", "new")]
    code, out, _ = run(capsys, "check", "--all", "--root", root, "--format", "github")
    assert code == 1 and out.count("::error ") == 1
    assert out.endswith("1 known finding hidden by the baseline\n")


def test_the_command_line_names_the_same_file() -> None:
    from continuity_checks.cli.common import BASELINE_NAME

    assert BASELINE_NAME == FILE_NAME
