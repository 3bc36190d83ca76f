"""What the fuzz session (``nox -s fuzz``, docs/reliability.md) found, each kept fixed here with
the input that found it, reduced: the real CLI on a copy of ``examples/``."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from continuity_checks.checks.provenance import manifest
from tests.conftest import EXAMPLES

HUGE = "1" * 400  # an integer no double can hold: JavaScript reads it as Infinity


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    root = tmp_path / "r"
    shutil.copytree(EXAMPLES, root / "examples")
    return root


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_a_working_state_integer_beyond_a_double_is_cc006_not_a_traceback(
    copy: Path, run_json: Any
) -> None:
    state = copy / "examples/working-state/.dsh/project/WORKING_STATE.json"
    edit(state, '"task_id": null', f'"task_id": {HUGE}')
    code, report = run_json("check", "--root", str(copy), str(state))
    assert code == 1
    assert ("CC006", "/task_id") in {(f["rule"], f["pointer"]) for f in report["findings"]}


def test_a_session_time_beyond_a_double_is_compared_not_a_traceback(
    copy: Path, run_json: Any
) -> None:
    sessions = copy / "examples/openprogram/.openprogram/sessions"
    (meta,) = sessions.glob("*/meta.json")
    value = json.loads(meta.read_text(encoding="utf-8"))
    edit(meta, f'"updated_at": {value["updated_at"]}', f'"updated_at": {HUGE}')
    code, report = run_json("check", "--root", str(copy), str(copy / "examples/openprogram"))
    assert code == 1
    rules = {(f["rule"], f["pointer"]) for f in report["findings"]}
    assert ("SS129", f"/{value['id']}/updated_at") in rules


class Recorder:
    """A compiled pattern that records the length of every text it searches."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern, self.searched = pattern, []  # type: list[int]

    def search(self, text: str) -> re.Match[str] | None:
        self.searched.append(len(text))
        return self.pattern.search(text)


def test_a_huge_value_in_a_provenance_manifest_is_not_searched_by_message_patterns(
    copy: Path, run_json: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The input took 8 s (quadratic backtracking of the patterns over a schema message quoting
    a 20,000-item array); the patterns now see only the messages they are for."""
    path = copy / "examples/provenance/PROVENANCE.json"
    value = json.loads(path.read_text(encoding="utf-8"))
    value["artifacts"][3]["role"] = [""] * 20_000
    value["artifacts"][3]["size"] = {"n": [""] * 20_000}
    path.write_text(json.dumps(value), encoding="utf-8")
    required, extra = Recorder(manifest._REQUIRED), Recorder(manifest._EXTRA)
    monkeypatch.setattr(manifest, "_REQUIRED", required)
    monkeypatch.setattr(manifest, "_EXTRA", extra)
    code, report = run_json("check", "--root", str(copy), str(path))
    assert code == 1
    found = [f for f in report["findings"] if f["pointer"].startswith("/artifacts/3/")]
    assert {f["pointer"] for f in found} >= {"/artifacts/3/role", "/artifacts/3/size"}
    assert all(len(f["message"]) < 400 for f in report["findings"])
    assert max(required.searched + extra.searched, default=0) < 400


def test_a_named_directory_the_configuration_excludes_is_named_in_a_note(
    copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from continuity_checks.cli import main

    (copy / ".continuity.toml").write_text('exclude = ["examples/**"]\n', encoding="utf-8")
    code = main(["check", "--root", str(copy), str(copy / "examples/captures/turn-0007")])
    out = capsys.readouterr().out
    assert code == 0
    assert "not checked, excluded by the configuration: examples/captures/turn-0007" in out
