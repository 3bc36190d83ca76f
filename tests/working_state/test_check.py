"""Every WS1xx rule: a fixture it catches (rule, path, pointer, with a line) and near-misses it
passes; the DSH corpus samples; mutations of the real sample, each caught with its pointer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from continuity_checks.checks import all_rules
from continuity_checks.checks.working_state import state as dsh
from tests.conftest import CORPUS, EXAMPLES, RunCLI, write_tree
from tests.helpers.working_state import (
    BAD,
    CA,
    CAPTURE,
    CP,
    EMPTY,
    GOOD_CASES,
    GOOD_STATE,
    TIME,
    WS,
    edit,
    oracle_hash,
    with_field,
)

DSH = CORPUS / "dsh"
SAMPLE = DSH / "evidence/memory-injections/WORKING_STATE.json"
RECONSTRUCTED = (
    DSH / "derived/live-log-2026-08-25-qualification-v080.WORKING_STATE.reconstructed.json"
)
QUALIFICATION = DSH / "evidence/qualification/2026-08-28-selective-capture-late-transfer"
INJECTION = QUALIFICATION / "03-post-compress-context-injection.raw.txt"


def findings_of(report: dict[str, Any]) -> list[tuple[str, str, str | None]]:
    return [(f["rule"], f["path"], f["pointer"]) for f in report["findings"]]


@pytest.mark.parametrize(("files", "expected"), [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_fixture_is_caught(
    tmp_path: Path,
    run_json: RunCLI,
    files: dict[str, bytes | str],
    expected: list[tuple[str, str, str | None]],
) -> None:
    write_tree(tmp_path, files)
    code, report = run_json("check", "--all", "--root", str(tmp_path))
    assert findings_of(report) == expected
    for finding in report["findings"]:
        assert finding["pointer"] is None or finding["line"] >= 1
        assert "expected" in finding["message"]
    severities = {f["severity"] for f in report["findings"]}
    assert code == (1 if "error" in severities else 0)


@pytest.mark.parametrize("files", [c[1] for c in GOOD_CASES], ids=[c[0] for c in GOOD_CASES])
def test_good_fixture_passes(
    tmp_path: Path, run_json: RunCLI, files: dict[str, bytes | str]
) -> None:
    write_tree(tmp_path, files)
    code, report = run_json("check", "--all", "--root", str(tmp_path))
    assert report["findings"] == []
    assert code == 0


def test_every_ws_file_rule_has_a_bad_fixture() -> None:
    caught = {rule for _, _, expected in BAD for rule, _, _ in expected}
    file_rules = {r.id for r in all_rules() if r.id.startswith("WS1")}
    assert file_rules <= caught


def test_positions_are_the_lines_of_the_values(tmp_path: Path, run_json: RunCLI) -> None:
    text = with_field("constraints", ["a", "b", "a"])
    write_tree(tmp_path, {WS: text})
    _, report = run_json("check", "--all", "--root", str(tmp_path))
    [finding] = report["findings"]
    lines = text.split("\n")
    constraints = lines.index('  "constraints": [')
    assert finding["line"] == constraints + 4  # the third item, 1-based
    assert finding["column"] == 5


def test_the_budget_warning_threshold_is_configurable(tmp_path: Path, run_json: RunCLI) -> None:
    write_tree(
        tmp_path,
        {WS: GOOD_STATE, ".continuity.toml": "[working-state]\ncompress-warn-chars = 500\n"},
    )
    code, report = run_json("check", "--all", "--root", str(tmp_path))
    assert (code, findings_of(report)) == (0, [("WS111", WS, "")])
    assert report["findings"][0]["severity"] == "warning"


@pytest.mark.parametrize(
    "table",
    ['projections = "*.txt"', "compress-warn-chars = 0", "compress-warn-chars = true", "other = 1"],
)
def test_bad_options_are_exit_2(tmp_path: Path, table: str) -> None:
    from continuity_checks.cli import main

    write_tree(tmp_path, {WS: GOOD_STATE, ".continuity.toml": f"[working-state]\n{table}\n"})
    assert main(["check", "--all", "--root", str(tmp_path)]) == 2


def test_projection_globs_are_configurable(tmp_path: Path, run_json: RunCLI) -> None:
    files = {WS: GOOD_STATE, "captures/turn-7.txt": CAPTURE.replace("Write the", "Skip the")}
    write_tree(
        tmp_path,
        {**files, ".continuity.toml": '[working-state]\nprojections = ["captures/*.txt"]\n'},
    )
    code, report = run_json("check", "--all", "--root", str(tmp_path))
    assert (code, findings_of(report)) == (1, [("WS116", "captures/turn-7.txt", "/next_action")])


def test_the_example_is_clean(run_json: RunCLI, capsys: pytest.CaptureFixture[str]) -> None:
    from continuity_checks.cli import main

    code, report = run_json("check", "--all", "--root", str(EXAMPLES), "--family", "working-state")
    assert (code, report["findings"]) == (0, [])
    assert report["summary"]["files"] == 7  # six .dsh/project files and a projection
    # the example's projection is what `continuity state project --json` renders for its state
    example = EXAMPLES / "working-state"
    assert main(["state", "project", "--json", str(example / WS)]) == 0
    rendered = capsys.readouterr().out
    assert rendered == (example / "notes/turn-12.projection.json").read_text("utf-8")


def test_claims() -> None:
    from continuity_checks.checks.working_state.family import WorkingStateFamily
    from continuity_checks.core.config import Config

    family = WorkingStateFamily(Config())
    assert family.claims(WS) == "state"
    assert family.claims("anything/WORKING_STATE.json") == "state"
    assert family.claims("WORKING_STATE.json.bak") is None
    assert family.claims(".dsh/project/state.json") == "project"
    assert family.claims(".dsh/project/SOURCE_INTAKE.md") is None
    assert family.claims(".dsh/project/task_packets/T.json") == "project"
    assert family.claims(".dsh/project/evidence/run/T.tests.json") == "project"
    assert family.claims(".dsh/project/source_material/spec.json") is None
    assert family.claims(".dsh/runtime/worktrees/a/b.txt") == "runtime"
    assert family.claims(".dsh/runtime/transactions/tx-x-1-u/after/000.bin") == "transaction"
    assert family.claims("a/.dsh/project/transactions/tx-1/journal.json") == "transaction"
    assert family.claims("a/.dsh/project/transactions/other.json") is None
    assert family.claims("x/turn.projection.json") == "projection"
    assert family.claims("03-post-compress-context-injection.raw.txt") == "projection"
    assert family.claims("notes/dsh/project/state.json") is None


CLAIMED = [
    WS,
    "a/b/WORKING_STATE.json",
    ".dsh/project/RUNTIME_POLICY.json",
    ".dsh/runtime/project.lock/owner.json",
    "x/.dsh/project/transactions/tx-1/journal.json",
    "notes/turn.projection.json",
    "evidence/03-post-compress-context-injection.raw.txt",
]


@pytest.mark.parametrize("path", CLAIMED)
def test_the_hook_pattern_covers_every_claimed_path(path: str) -> None:
    import re

    from continuity_checks.checks.working_state import DECLARATION
    from continuity_checks.checks.working_state.family import WorkingStateFamily
    from continuity_checks.core.config import Config

    assert WorkingStateFamily(Config()).claims(path) is not None
    assert re.search(DECLARATION.files, path)


# --- the corpus ---------------------------------------------------------------------------------


def test_the_corpus_is_here() -> None:
    # the corpus tests must fail, not skip, when the corpus is missing (CI has it)
    assert SAMPLE.is_file() and RECONSTRUCTED.is_file() and INJECTION.is_file()


@pytest.mark.parametrize("sample", [SAMPLE, RECONSTRUCTED], ids=["committed", "reconstructed"])
def test_corpus_samples_pass_with_zero_errors(
    tmp_path: Path, run_json: RunCLI, sample: Path
) -> None:
    write_tree(tmp_path, {WS: sample.read_bytes()})
    code, report = run_json("check", "--all", "--root", str(tmp_path))
    assert (code, report["findings"]) == (0, [])


def test_the_corpus_tree_has_no_errors(run_json: RunCLI) -> None:
    code, report = run_json("check", "--all", "--root", str(DSH), "--family", "working-state")
    assert code == 0
    # the injection capture is checked, and says its canonical state is not in the corpus
    assert findings_of(report) == [
        ("WS118", INJECTION.relative_to(DSH).as_posix(), "/projection_meta/full_state_path")
    ]
    assert report["summary"]["files"] == 2


@pytest.mark.parametrize("sample", [SAMPLE, RECONSTRUCTED], ids=["committed", "reconstructed"])
def test_state_hash_command_gives_the_recorded_hash(
    sample: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from continuity_checks.cli import main

    assert main(["state", "hash", str(sample)]) == 0
    recorded = json.loads(sample.read_bytes())["checkpoint_meta"]["state_hash"]
    assert capsys.readouterr().out == recorded + "\n"


def _capture_text() -> str:
    return INJECTION.read_bytes().decode("utf-8").replace("\r\n", "\n")


def test_state_project_reproduces_the_injection_body(capsys: pytest.CaptureFixture[str]) -> None:
    from continuity_checks.cli import main

    text = _capture_text()
    body = text[text.index("\n{\n") + 1 : text.index("\n}\n") + 2]
    assert main(["state", "project", str(INJECTION), "--json"]) == 0
    out = capsys.readouterr().out
    assert out == body + "\n"  # character for character (the capture's CRLF are the UI's)


def test_state_project_renders_the_whole_injected_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from continuity_checks.cli import main

    text = _capture_text()
    state_file = tmp_path / "state.json"
    state_file.write_text(text[text.index("\n{\n") + 1 : text.index("\n}\n") + 2], encoding="utf-8")
    assert main(["state", "project", str(state_file)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(dsh.INVESTIGATIVE_HEADER + "\n{\n")
    assert out.endswith("}\n" + dsh.INVESTIGATIVE_FOOTER + "\n")
    assert text.endswith(out[:-1])  # the capture is the message after three UI label lines


def test_the_spec_worked_numbers() -> None:
    text = _capture_text()
    captured = json.loads(text[text.index("\n{\n") + 1 : text.index("\n}\n") + 2])
    spent = dsh.budget(captured, 12000)
    assert (spent.critical_cost, spent.bulk) == (1939, 10061)
    assert captured["projection_meta"]["omitted"] == {"decisions": 0, "evidence": 0, "known": 0}
    committed = json.loads(SAMPLE.read_bytes())
    spent = dsh.budget(committed, 12000)
    assert (spent.critical_cost, spent.bulk) == (4044, 7956)
    projected = dsh.project(committed)
    assert projected["projection_meta"]["omitted"] == {"decisions": 0, "evidence": 0, "known": 25}
    assert projected["known"] == committed["known"][-9:]  # the newest 9, a contiguous suffix


def test_state_project_budget_option(capsys: pytest.CaptureFixture[str]) -> None:
    from continuity_checks.cli import main

    assert main(["state", "project", str(SAMPLE), "--json", "--soft-max-chars", "5000"]) == 0
    projected = json.loads(capsys.readouterr().out)
    assert projected["projection_meta"]["soft_max_chars"] == 5000
    # bulk 956: known gets 956 - floor(0.68 * 956) = 307 characters, the newest item alone
    assert projected["projection_meta"]["omitted"]["known"] == 33
    assert projected["known"] == json.loads(SAMPLE.read_bytes())["known"][-1:]
    committed = json.loads(SAMPLE.read_bytes())
    for name in dsh.CRITICAL_FIELDS:  # never truncated, whatever the budget
        assert projected[name] == committed[name]
    assert main(["state", "project", str(SAMPLE), "--soft-max-chars", "0"]) == 2


def test_state_commands_refuse_what_is_not_a_state(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from continuity_checks.cli import main

    bad = tmp_path / "bad.json"
    bad.write_text('{"known": [1,\n}', encoding="utf-8")
    assert main(["state", "hash", str(bad)]) == 2
    assert f"{bad}:2:1:" in capsys.readouterr().err
    bad.write_text("[]", encoding="utf-8")
    assert main(["state", "project", str(bad)]) == 2
    assert "expected a WORKING_STATE object, found an array" in capsys.readouterr().err
    bad.write_text('{"task_id": null}', encoding="utf-8")
    assert main(["state", "hash", str(bad)]) == 2
    assert "missing known" in capsys.readouterr().err
    assert main(["state", "hash", str(tmp_path / "absent.json")]) == 2
    assert "cannot read" in capsys.readouterr().err


# --- mutations of the real sample: each caught with its rule, pointer and line ------------------


def _mutated(change: str) -> bytes:
    value = json.loads(SAMPLE.read_bytes())
    if change == "duplicated item":
        value["known"].append(value["known"][3])
    elif change == "padded item":
        value["decisions"][2] = " " + value["decisions"][2]
    elif change == "wrong state_hash":
        value["checkpoint_meta"]["state_hash"] = "f" * 64
    elif change == "audit id on investigative":
        value["checkpoint_meta"]["prune_audit_id"] = CA
        value["checkpoint_meta"]["prune_audited_at"] = value["checkpoint_meta"]["updated_at"]
    if change in ("duplicated item", "padded item"):
        value["checkpoint_meta"]["state_hash"] = oracle_hash(value)  # only the item is wrong
    return (json.dumps(value, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ("duplicated item", ("WS105", "/known/34")),
        ("padded item", ("WS104", "/decisions/2")),
        ("wrong state_hash", ("WS109", "/checkpoint_meta/state_hash")),
        ("audit id on investigative", ("WS107", "/checkpoint_meta/prune_audit_id")),
    ],
)
def test_mutations_of_the_sample_are_caught(
    tmp_path: Path, run_json: RunCLI, change: str, expected: tuple[str, str]
) -> None:
    write_tree(tmp_path, {WS: _mutated(change)})
    code, report = run_json("check", "--all", "--root", str(tmp_path))
    assert code == 1
    assert [(f["rule"], f["pointer"]) for f in report["findings"]] == [expected]
    assert report["findings"][0]["line"] > 1


# --- any bytes in, a finding out ------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**60), 2**60) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3),
    max_leaves=10,
)  # fmt: skip
meta_values = st.fixed_dictionaries(
    {},
    optional={key: json_values | st.sampled_from([CP, CA, TIME, "merge", "init", "compaction-evacuation", 5])
              for key in [*EMPTY["checkpoint_meta"], "prune_audit_id", "prune_audited_at"]},
)  # fmt: skip
states = st.fixed_dictionaries(
    {},
    optional={
        "schema_version": st.sampled_from([7, 6, "7"]),
        "task_id": json_values,
        **{name: st.lists(st.text(max_size=4) | json_values, max_size=3) | json_values for name in dsh.SEMANTIC_FIELDS},
        "checkpoint_meta": meta_values | json_values,
        "projection_meta": json_values,
    },
)  # fmt: skip


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    value=states,
    where=st.sampled_from([WS, "x.projection.json", ".dsh/project/RUNTIME_POLICY.json"]),
)
def test_any_json_gives_findings_never_a_traceback(value: dict[str, Any], where: str) -> None:
    from continuity_checks.checks.working_state.family import WorkingStateFamily
    from continuity_checks.core.config import Config
    from continuity_checks.core.family import FileInput
    from continuity_checks.core.snapshot import WorkTree

    family = WorkingStateFamily(Config())
    data = json.dumps(value, ensure_ascii=False, indent=2).encode("utf-8", "surrogatepass")
    kind = family.claims(where)
    assert kind is not None
    snapshot = WorkTree(Path(__file__).parent, 1 << 20)
    for finding in family.check_file(FileInput(where, kind, data, snapshot)):
        assert finding.message


@settings(max_examples=100, deadline=None)
@given(data=st.binary(max_size=64))
def test_any_bytes_give_findings_never_a_traceback(data: bytes) -> None:
    from continuity_checks.checks.working_state.family import WorkingStateFamily
    from continuity_checks.core.config import Config
    from continuity_checks.core.family import FileInput
    from continuity_checks.core.snapshot import WorkTree
    from continuity_checks.tools.working_state import helper

    family = WorkingStateFamily(Config())
    snapshot = WorkTree(Path(__file__).parent, 1 << 20)
    for where in (WS, "x.projection.json", "a-injection.raw.txt"):
        kind = family.claims(where)
        assert kind is not None
        findings = list(family.check_file(FileInput(where, kind, data, snapshot)))
        assert findings  # a few random bytes are never a valid state or projection
        assert all(f.rule.startswith(("CC", "WS")) for f in findings)
    for operation in (helper.state_hash, lambda b: helper.project(b, 100)):
        try:
            assert operation(data)  # "{}" projects, as DSH projects an empty object
        except helper.StateError as exc:
            assert str(exc)[0].isdigit()  # line:col: reason


def test_lengths_are_javascript_lengths() -> None:
    assert dsh.js_length("abc") == 3
    assert dsh.js_length("Снимок — x") == 10
    assert dsh.js_length("\U0001f600") == 2  # a surrogate pair
    assert dsh.js_length("\ud800x") == 2  # a lone surrogate is one unit
    assert dsh.js_trim("\ufeff\u3000 a b\u2029\n") == "a b"
    assert dsh.js_trim("\x1ca\x85") == "\x1ca\x85"  # Python's strip() would remove both
    assert dsh.uniq([" a", "a", "", 5, None, [1, None], {"k": 1}]) == [
        "a", "5", "null", "1,", "[object Object]"
    ]  # fmt: skip


@given(st.text(alphabet=st.sampled_from(" \t\ufeff\xa0\u3000\x1cab\n"), max_size=6))
def test_is_trimmed_is_trim_leaving_it_unchanged(text: str) -> None:
    assert dsh.is_trimmed(text) == (bool(text) and dsh.js_trim(text) == text)


def test_a_copied_sample_is_checked_by_its_path(
    tmp_path: Path, run_json: RunCLI, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_tree(tmp_path, {"samples/WORKING_STATE.json": _mutated("wrong state_hash")})
    monkeypatch.chdir(tmp_path / "samples")
    code, report = run_json("check", "WORKING_STATE.json", "--root", str(tmp_path))
    assert (code, findings_of(report)) == (
        1,
        [("WS109", "samples/WORKING_STATE.json", "/checkpoint_meta/state_hash")],
    )
    monkeypatch.chdir(DSH)
    code, report = run_json("check", "evidence/memory-injections/WORKING_STATE.json")
    assert (code, report["findings"], report["summary"]["files"]) == (0, [], 1)


def test_a_null_is_named_once_in_a_message(tmp_path: Path, run_json: RunCLI) -> None:
    """``show(None)`` read "null null" in every message that quoted a null."""
    write_tree(tmp_path, {WS: edit("compaction-evacuation", prune_safe_through_seq=None)})
    code, report = run_json("check", "--all", "--root", str(tmp_path))
    (message,) = [f["message"] for f in report["findings"]]
    assert code == 1
    assert message.endswith(
        "prune_safe_through_seq >= 0 on a compaction-evacuation checkpoint, found null"
    )
