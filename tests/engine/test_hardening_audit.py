"""Hardening that had no regression test of its own in the default run: a path through a
symlinked directory that leads outside the root, a symlink loop, a console that cannot encode a
file name, and the lower bound of filelock."""

from __future__ import annotations

import io
import json
import os
import re
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, write_tree

POSIX_ONLY = pytest.mark.skipif(os.name == "nt", reason="symlinks need privileges on Windows")
CHANGES = ".deltalayer/changes/"
NAME = "2026-09-21T16-20-00p08-00--agent.json"
GOOD = (
    '{"started_at":"2026-09-21T16:20:00+08:00","updated_at":"2026-09-21T16:30:00+08:00",'
    '"source":"agent","changes":["x"]}\n'
)
PROJECT = {
    "AGENTS.md": "<!-- deltalayer-conversation-v0.2.1 -->\n## Project Continuity\n",
    "PROJECT.md": "# Project\n",
}


@POSIX_ONLY
@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_an_explicit_path_through_a_symlinked_directory_out_of_the_root_is_never_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    from continuity_checks.cli import main

    outside = tmp_path / "outside"
    secret = GOOD.replace('"agent"', '"SECRET-OUTSIDE"').replace('["x"]', '["y", 7]')
    write_tree(outside, {NAME: secret})
    project = write_tree(tmp_path / "p", PROJECT)
    (project / ".deltalayer").mkdir()
    (project / CHANGES).symlink_to(outside)
    capsys.readouterr()
    code = main(["check", "--root", str(project), "--format", fmt, str(project / CHANGES / NAME)])
    out = capsys.readouterr().out
    assert code == 1
    assert "SECRET-OUTSIDE" not in out  # nothing of the outside file is quoted
    if fmt == "json":
        rules = [f["rule"] for f in json.loads(out)["findings"]]
    elif fmt == "sarif":
        rules = [r["ruleId"] for r in json.loads(out)["runs"][0]["results"]]
    else:
        rules = re.findall(r"\b(?:CC|DL)\d{3}\b", out)
    assert rules == ["CC001"]  # and nothing it holds (DL105 for the 7) is judged


@POSIX_ONLY
def test_a_symlink_loop_is_a_finding_not_a_traceback(tmp_path: Path, run_json: Any) -> None:
    project = write_tree(tmp_path / "p", PROJECT)
    (project / CHANGES).mkdir(parents=True)
    (project / CHANGES / "a.json").symlink_to("b.json")
    (project / CHANGES / "b.json").symlink_to("a.json")
    (project / CHANGES / "self.json").symlink_to("self.json")
    code, report = run_json("check", "--all", "--root", str(project))
    assert code == 1
    found = {(f["rule"], f["path"]) for f in report["findings"]}
    assert found == {("CC001", CHANGES + n) for n in ("a.json", "b.json", "self.json")}
    code, report = run_json("check", "--root", str(project), str(project / CHANGES / "a.json"))
    assert (code, [f["rule"] for f in report["findings"]]) == (1, ["CC001"])


@pytest.mark.parametrize(
    ("encoding", "fmt"),
    [("cp1252", "text"), ("latin-1", "json"), ("ascii", "sarif"), ("cp1252", "github")],
)
def test_a_console_that_cannot_encode_a_file_name_gets_escapes_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, encoding: str, fmt: str
) -> None:
    from continuity_checks.cli import main

    name = CHANGES + "Ω€ 日本.json"
    project = write_tree(tmp_path / "p", {**PROJECT, name: "{"})
    console = io.TextIOWrapper(io.BytesIO(), encoding=encoding)  # strict, as a real console
    monkeypatch.setattr(sys, "stdout", console)
    code = main(["check", "--all", "--root", str(project), "--format", fmt])
    console.flush()
    out = console.buffer.getvalue().decode(encoding)  # type: ignore[attr-defined]
    assert code == 1
    if fmt == "json":
        assert [f["path"] for f in json.loads(out)["findings"]] == [name]
    elif fmt == "sarif":
        (result,) = json.loads(out)["runs"][0]["results"]
        location = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        assert "%CE%A9" in location or "Ω" in location  # a URI: percent-encoded or not
    else:
        assert "\\u03a9" in out and "\\u65e5\\u672c.json" in out  # what cannot go, escaped


def test_filelock_is_at_least_the_version_that_refuses_a_symlinked_lock() -> None:
    """filelock before 3.20.1 followed a symlinked lock file and truncated its target (a
    ``.lock`` symlink to ``changes.jsonl`` erased the legacy history)."""
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    (bound,) = re.findall(r'"filelock>=([0-9.]+)"', pyproject)
    as_tuple = tuple(int(part) for part in bound.split("."))
    assert as_tuple >= (3, 20, 1)
    installed = tuple(int(part) for part in re.findall(r"\d+", version("filelock"))[:3])
    assert installed >= as_tuple
