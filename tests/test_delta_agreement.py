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
from continuity_checks.core import atomic
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


@POSIX_ONLY
@pytest.mark.parametrize("length", [238, 243, 248])
def test_long_source_names_are_written(root: Path, cli: Any, length: int) -> None:
    stem = "2026-09-21T00-01-00p08-00--"
    source = "s" * (length - len(stem) - len(".json"))
    item = cli("start", "--source", source, "--started-at", T1, "--change", "a").json
    name = Path(item["_path"]).name
    assert len(name.encode()) == length
    assert cli("update", "--conversation", item["_path"], "--updated-at", T2).json
    assert sorted(p.name for p in changes(root).iterdir()) == [name]


@POSIX_ONLY
def test_a_name_too_long_is_reported_with_the_final_name_not_the_temp(root: Path, cli: Any) -> None:
    stem = "2026-09-21T00-01-00p08-00--"
    source = "s" * (256 - len(stem) - len(".json"))
    message = cli("start", "--source", source, "--started-at", T1).message
    name = stem + source + ".json"
    assert message.startswith("[Errno 36] File name too long: ")
    assert message.endswith(f"{name}'")
    assert ".tmp" not in message
    assert list(changes(root).iterdir()) == []


def test_temp_names_are_short(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    real = os.open

    def spy(path: Any, *args: Any, **kwargs: Any) -> int:
        seen.append(Path(path).name)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", spy)
    target = tmp_path / ("x" * 200 + ".json")
    atomic.atomic_write(target, b"{}\n")
    temps = [name for name in seen if name.endswith(".tmp")]
    assert temps and all(len(name) <= 24 and name.startswith(".") for name in temps)


def test_errors_never_name_the_temp_file(
    root: Path, cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = cli("start", "--source", "codex", "--started-at", T1).json["_path"]
    real_replace = os.replace

    def replace(src: Any, dst: Any) -> None:
        if os.fspath(src).endswith(".tmp"):
            raise OSError(5, "Input/output error", os.fspath(src), None, os.fspath(dst))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    message = cli("update", "--conversation", path, "--updated-at", T2).message
    assert ".tmp" not in message
    assert message == f"[Errno 5] Input/output error: '{(root / path).resolve()}'"


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
