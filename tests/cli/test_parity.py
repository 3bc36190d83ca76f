"""The command line reads its arguments as it did with click: what a differential run of the
click and the argparse versions on the same command lines found different (the real CLI, in a
subprocess)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import write_tree
from tests.helpers.git import GitRepo, isolate_git

BAD = '{"started_at": 1}\n'
LAYOUT = {".deltalayer/changes/x.json": BAD, "AGENTS.md": "<!-- deltalayer-conversation-v0.2.1 -->\n",
          "PROJECT.md": "# P\n", "a.txt": "a\n", "-b.txt": "b\n"}  # fmt: skip


def cli(cwd: Path, *args: str, stdin: str = "") -> tuple[int, str, str]:
    result = subprocess.run(
        [sys.executable, "-m", "continuity_checks", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
    )
    return result.returncode, result.stdout, result.stderr


def test_an_option_takes_the_next_word_as_its_value_even_with_a_dash(tmp_path: Path) -> None:
    write_tree(tmp_path, LAYOUT)
    code, out, err = cli(tmp_path, "provenance", "add", "a.txt", "--sums", "-SUMS.sha256")
    assert (code, err) == (0, "") and out.startswith("added to -SUMS.sha256: ")
    assert (tmp_path / "-SUMS.sha256").read_text().endswith("  a.txt\n")
    code, out, _ = cli(tmp_path, "check", "-", "--stdin-filename", "-x.json", stdin=BAD)
    assert code == 0 and out.startswith("not checked, no family claims them: -x.json\n"), out
    code, _, err = cli(tmp_path, "verify", "--range", "-x")
    assert code == 2 and "malformed range '-x'" in err, err
    # an option that ends the line has no value: it takes none of the arguments
    before = sorted(tmp_path.rglob("*"))
    code, out, err = cli(tmp_path, "provenance", "add", "a.txt", "PROJECT.md", "--sums")
    assert (code, out) == (2, "") and "argument --sums: expected one argument" in err, err
    assert sorted(tmp_path.rglob("*")) == before


def test_double_dash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(monkeypatch, tmp_path / "home")
    tmp_path = tmp_path / "repo"
    repo = GitRepo(tmp_path)
    repo.commit("first", LAYOUT)
    # paths on both sides of --: all of them are given, as click read them
    code, out, _ = cli(tmp_path, "check", "AGENTS.md", "-q", "--", "-b.txt", "a.txt")
    assert (code, out) == (0, "")
    code, out, _ = cli(tmp_path, "check", "AGENTS.md", "--no-color", "--", "-b.txt", "a.txt")
    assert out == "not checked, no family claims them: -b.txt, a.txt\n1 file checked: no problems\n"
    # a -- that ends the line, or stands before a group's subcommand, is passed over
    code, out, err = cli(tmp_path, "verify", "--range", "HEAD", "--")
    # the first commit leaves x.json broken: reported at it
    assert (code, err) == (1, "") and out.endswith("\n1 commit checked: 2 errors, 0 warnings\n")
    code, out, err = cli(tmp_path, "baseline", "--", "check")
    assert (code, err) == (0, "") and (tmp_path / ".continuity-baseline.json").is_file()
    # -- as an option's value is that value
    delta = ["delta", "start", "--source", "x", "--started-at", "2026-09-21T16:20:00+08:00"]
    code, out, err = cli(tmp_path, *delta, "--change", "--")
    assert (code, err) == (0, "") and json.loads(out)["changes"] == ["--"]


def test_a_forgotten_value_is_refused_in_either_spelling(tmp_path: Path) -> None:
    delta = ["delta", "start", "--started-at", "2026-09-21T16:20:00+08:00"]
    for args in (["--source", "x", "--change=--source"], ["--source=--change"]):
        code, out, err = cli(tmp_path, *delta, *args)
        assert (code, out) == (2, "") and "is an option name, not a value" in err, err
    assert not (tmp_path / ".deltalayer").exists()


def test_unknown_options_are_named_and_help_comes_first(tmp_path: Path) -> None:
    for args, named in [
        (["--root", ".", "check", "--all"], "--root"),
        (["-q"], "-q"),
        (["baseline", "--root", ".", "check"], "--root"),
        (["explain", "-x"], "-x"),
        (["provenance", "add", "-b.txt"], "-b.txt"),
    ]:
        code, out, err = cli(tmp_path, *args)
        assert (code, out) == (2, "") and f"unrecognized arguments: {named}" in err, (args, err)
    for args in (["check", "--jobs", "0", "--help"], ["delta", "recent", "--limit", "x", "-h"]):
        code, out, err = cli(tmp_path, *args)  # click's --help came first
        assert (code, err) == (0, "") and out.startswith(f"usage: continuity {args[0]} "), err
