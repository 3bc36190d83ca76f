"""What the fuzz session (``nox -s fuzz``, docs/reliability.md) found, each kept fixed here with
the input that found it, reduced: the real CLI on a copy of ``examples/``."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from continuity_checks.checks.provenance import manifest
from continuity_checks.core import schemas, strict_json
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


@pytest.mark.parametrize(
    ("path", "old", "new"),
    [
        ("examples/working-state/.dsh/project/WORKING_STATE.json", '"task_id": null', "/task_id"),
        ("examples/captures/decision-k3j2x9q0/cycle-delta.json", '"g-1"', "/operations/0/value"),
        (
            "examples/openprogram/.openprogram/sessions/local_0a1b2c3d4e/meta.json",
            '"updated_at": 1795983616.5',
            "/updated_at",
        ),
        (
            "examples/deltalayer/.deltalayer/changes/2026-09-22T14-00-00p02-00--claude.json",
            '"conversation_id":"example-2"',
            "/conversation_id",
        ),
    ],
    ids=["working-state", "captures", "sessions", "deltas"],
)
def test_an_integer_beyond_a_double_is_cc006_in_every_family(
    copy: Path, run_json: Any, path: str, old: str, new: str
) -> None:
    """Found as tracebacks (canonical JSON, a float comparison): JavaScript writers read such
    an integer as Infinity and canonical JSON has no form for it, so the strict parse reports it
    like 1e400."""
    key = new.rsplit("/", 1)[1]
    replacement = HUGE if old.startswith('"g-1"') else f'"{key}": {HUGE}'
    if old.startswith('"conversation_id"'):
        replacement = f'"{key}":{HUGE}'
    edit(copy / path, old, replacement)
    code, report = run_json("check", "--root", str(copy), str(copy / path))
    assert code == 1
    assert ("CC006", path, new) in {
        (f["rule"], f["path"], f["pointer"]) for f in report["findings"]
    }


def test_a_node_status_that_is_an_object_is_ss122_not_a_traceback(
    copy: Path, run_json: Any
) -> None:
    node = copy / "examples/openprogram/.openprogram/sessions/local_0a1b2c3d4e/history"
    node = node / "0002-l-1a2b3c4d_reply.json"
    edit(node, '"status": "completed"', '"status": {"done": true}')
    code, report = run_json("check", "--root", str(copy), str(copy / "examples/openprogram"))
    assert code in (0, 1)
    assert ("SS122", "/metadata/status") in {(f["rule"], f["pointer"]) for f in report["findings"]}


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


@given(st.text(alphabet=st.sampled_from('0123456789a"'), min_size=0, max_size=1500))
def test_the_long_digit_look_agrees_with_a_regular_expression(text: str) -> None:
    """The parse looks at every 300th character only; a run of 309 digits cannot slip by."""
    assert strict_json._long_digit_run(text) == (re.search("[0-9]{309}", text) is not None)


@pytest.mark.parametrize("run", [308, 309, 600, 901])
@pytest.mark.parametrize("offset", [0, 1, 299, 300, 301, 599])
def test_a_run_of_digits_at_any_offset(run: int, offset: int) -> None:
    text = "a" * offset + "7" * run + "a"
    assert strict_json._long_digit_run(text) == (run >= 309)


class Spy:
    """Stands for a compiled jsonschema-rs validator; records the instances it is given."""

    def __init__(self, real: Any) -> None:
        self.real, self.seen = real, []  # type: ignore[var-annotated]

    def iter_errors(self, instance: Any) -> Any:
        self.seen.append(instance)
        return self.real.iter_errors(instance)

    def is_valid(self, instance: Any) -> bool:
        return bool(self.real.is_valid(instance))


def cycle_delta(operations: list[Any]) -> dict[str, Any]:
    return {"schema_version": 1, "base_sha256": "0" * 64, "target_sha256": "1" * 64,
            "operations": operations}  # fmt: skip


def test_twenty_thousand_bad_items_are_validated_cut_to_the_first_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Found as a hang (7 s): jsonschema-rs built 480,000 error objects for 20,000 bad
    operations under a ``oneOf`` before the first was taken."""
    validator = schemas.Validator("loopx-cycle-delta")
    spy = Spy(validator._validator)
    monkeypatch.setattr(validator, "_validator", spy)
    errors = validator.errors(cycle_delta([{"x": 1}] * 20_000))
    assert 0 < len(errors) <= schemas.MAX_ERRORS
    assert all(len(seen["operations"]) <= schemas.MAX_ERRORS + 1 for seen in spy.seen)
    assert {e.pointer.split("/")[1] for e in errors} == {"operations"}


@pytest.mark.parametrize(
    "operations",
    [
        [{"x": 1}] * 300,  # every item bad: the cut copy's errors stand
        [{"op": "remove", "path": "/a"}] * 200 + [{"x": 1}],  # the only bad item is cut away
        [{"op": "remove", "path": "/a"}, 7] * 150,
    ],
    ids=["all-bad", "bad-beyond-the-cut", "mixed"],
)
def test_a_cut_never_invents_or_loses_a_document_error(operations: list[Any]) -> None:
    validator = schemas.Validator("loopx-cycle-delta")
    document = cycle_delta(operations)
    full = validator._errors(document, 10**6)
    cut = validator.errors(document)
    assert cut and {(e.pointer, e.keyword, e.message) for e in cut} <= {e[:3] for e in full}


def test_a_cut_never_invents_an_error_above_the_cut_array(monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``oneOf`` that holds the cut array can judge the cut copy otherwise than the document:
    an error at or above a cut array sends the whole document to the validator."""
    import jsonschema_rs

    schema = {
        "type": "object",
        "oneOf": [
            {"properties": {"items": {"minItems": 150}}},
            {"required": ["other"]},
        ],
    }
    validator = schemas.Validator("loopx-cycle-delta")
    monkeypatch.setattr(validator, "_validator", jsonschema_rs.Draft202012Validator(schema))
    assert validator.errors({"items": list(range(200))}) == []  # the first branch holds
    assert validator.errors({"items": list(range(120))})  # neither branch holds


def test_a_duplicate_past_the_cut_is_not_hidden_by_another_error() -> None:
    """``uniqueItems`` (a project's ``session_ids``) judges the whole array: with a duplicate
    only past the cut and one other error elsewhere, the cut copy's errors stood and the
    duplicate was never reported, though the document has two errors, far below the cap."""
    validator = schemas.Validator("openprogram-projects")
    ids: list[Any] = [f"s{i}" for i in range(300)]
    ids[250] = "s1"
    project = {"id": "default", "name": "n", "path": "/p", "is_default": True,
               "session_ids": ids, "status": "active", "created_at": "x"}  # fmt: skip
    found = {(e.pointer, e.keyword) for e in validator.errors({"default": project})}
    assert ("/default/session_ids", "uniqueItems") in found
    assert ("/default/created_at", "type") in found
    ids[250] = 1.5  # no duplicate: the cut copy's errors, the bad item past the cut not among them
    found = {(e.pointer, e.keyword) for e in validator.errors({"default": project})}
    assert found == {("/default/created_at", "type")}
    # 1 and 1.0 are one JSON value; true and 1 are not
    assert schemas._duplicate_past([1, 2, 1.0], 2)
    assert not schemas._duplicate_past([True, 2, 1], 2)
    assert schemas._duplicate_past([{"a": 1, "b": [2]}, 0, {"b": [2.0], "a": 1}], 2)
