"""``continuity delta`` agrees with the checker and with the prototype it replaces (issue 6).

Each test pins one difference that a side-by-side run against the DeltaLayer prototype (same
frozen clock, time zone and locale) or against ``continuity verify`` found. Where we keep our own
behaviour on purpose, the test pins it and checks that docs/delta-helper.md says so.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from continuity_checks.cli import main
from tests.conftest import RunCLI, write_tree

PREFIX = "deltalayer: "
T1 = "2026-09-21T00:01:00+08:00"
T2 = "2026-09-21T00:02:00+08:00"
T3 = "2026-09-21T00:03:00+08:00"
DOCS = Path(__file__).resolve().parent.parent / "docs" / "delta-helper.md"
POSIX_ONLY = pytest.mark.skipif(os.name == "nt", reason="POSIX file names and symlinks")


class Result:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err

    @property
    def json(self) -> Any:
        assert (self.code, self.err) == (0, ""), self.err
        return json.loads(self.out)

    @property
    def message(self) -> str:
        assert self.code == 2 and self.out == "", (self.code, self.out, self.err)
        assert self.err.startswith(PREFIX) and self.err.count("\n") == 1, self.err
        return self.err[len(PREFIX) : -1]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "R"
    path.mkdir()
    return path


@pytest.fixture
def cli(root: Path, capsys: pytest.CaptureFixture[str]) -> Any:
    def run(*args: str) -> Result:
        capsys.readouterr()
        code = main(["delta", "--root", str(root), *args])
        out, err = capsys.readouterr()
        return Result(code, out, err)

    return run


def changes(root: Path) -> Path:
    return root / ".deltalayer" / "changes"


def docs() -> str:
    return " ".join(DOCS.read_text(encoding="utf-8").split())


# --------------------------------------------------------------- the helper agrees with the checker


# ------------------------------------------------------------- the helper agrees with the prototype


# ------------------------------------------------------------ DL103 is the helper's own parser


@pytest.mark.parametrize(
    ("time", "normal"),
    [
        ("2026-09-21T00:01:00 +08:00", "2026-09-21T00:01:00+08:00"),
        ("2026-09-21 00:01:00 +0800", "2026-09-21T00:01:00+08:00"),
        ("2026-09-21T00:00:00+00:60", "2026-09-21T00:00:00+01:00"),
    ],
)
def test_times_the_prototype_accepts_are_accepted_by_helper_and_checker(
    root: Path, cli: Any, run_json: RunCLI, time: str, normal: str
) -> None:
    item = cli("start", "--source", "codex", "--started-at", time).json
    assert item["started_at"] == normal
    legacy = json.dumps({"time": time, "source": "legacy", "changes": ["a"]}) + "\n"
    write_tree(root, {".deltalayer/changes.jsonl": legacy})
    page = cli("recent").json
    assert page["warnings"] == []
    assert page["events"][-1]["_cursor"] == f"{normal}#line=1"
    _, report = run_json("check", "--root", str(root), str(root / ".deltalayer/changes.jsonl"))
    assert [f["rule"] for f in report["findings"] if f["rule"] == "DL103"] == []


def test_offset_minutes_past_59_are_normalised_in_the_file_name(root: Path, cli: Any) -> None:
    item = cli("start", "--source", "codex", "--started-at", "2026-09-21T00:00:00+00:60").json
    assert item["_path"] == ".deltalayer/changes/2026-09-21T00-00-00p01-00--codex.json"
