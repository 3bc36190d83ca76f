"""Every CC and DL1xx rule: a fixture it catches (with the line) and near-misses it passes."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from continuity_checks import engine
from continuity_checks.checks import all_rules
from continuity_checks.core import schemas
from continuity_checks.core.config import Config
from tests.conftest import EXAMPLES, RunCLI, rules_of, write_tree
from tests.helpers.delta_cases import (
    BAD,
    CHANGES,
    GOOD,
    GOOD_CASES,
    LEGACY_GOOD,
    NAME,
    PROJECT,
    delta,
    legacy,
)


@pytest.mark.parametrize(("files", "expected"), [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_fixture_is_caught(tmp_path: Path, run_json: RunCLI, files: dict[str, bytes | str],
                               expected: list[tuple[str, str, int | None]]) -> None:  # fmt: skip
    write_tree(tmp_path, files)
    code, report = run_json("check", "--all", "--root", str(tmp_path))
    assert rules_of(report) == expected
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


def test_every_file_rule_has_a_bad_fixture() -> None:
    caught = {rule for _, _, expected in BAD for rule, _, _ in expected}
    file_rules = {r.id for r in all_rules() if r.id.startswith("CC") or r.id.startswith("DL1")}
    # CC001 and CC008 need file-system conditions; they have their own tests below. CC010 is
    # for paths named inside files, which deltas have none of: tests/core/test_snapshot.py has it.
    # CC011 and CC012 are history rules (a configuration change inside a verified range, a
    # look-back cut short): tests/engine/test_verify.py and tests/engine/test_consistent_commits.py have them.
    assert file_rules - caught == {"CC001", "CC008", "CC010", "CC011", "CC012"}


def test_legacy_messages_are_the_readers(tmp_path: Path, run_json: RunCLI) -> None:
    """A bad legacy conversation_id is said as DeltaLayer's reader (and continuity delta
    recent) says it, not with the delta's text."""
    write_tree(tmp_path, legacy(LEGACY_GOOD[:-2] + ',"conversation_id":5}\n'))
    code, report = run_json("check", "--all", "--root", str(tmp_path))
    assert (code, rules_of(report)) == (1, [("DL106", ".deltalayer/changes.jsonl", 1)])
    assert report["findings"][0]["message"].startswith("legacy conversation_id must be a string;")


def test_examples_are_clean(run_json: RunCLI) -> None:
    code, report = run_json("check", "--all", "--root", str(EXAMPLES), "--family", "deltas")
    assert (code, report["findings"]) == (0, [])
    assert report["summary"]["files"] == 4  # AGENTS.md, legacy, two deltas


def test_too_large_file_is_not_read(tmp_path: Path, run_json: RunCLI) -> None:
    write_tree(tmp_path, delta(GOOD))
    (tmp_path / ".continuity.toml").write_text("[limits]\nmax-file-bytes = 100\n")
    code, report = run_json("check", "--all", "--root", str(tmp_path))
    assert code == 1
    assert rules_of(report) == [("CC008", CHANGES + NAME, None)]


def test_symlink_outside_root_is_not_followed(tmp_path: Path, run_json: RunCLI) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text(GOOD)
    project = write_tree(tmp_path / "p", PROJECT)
    (project / CHANGES).mkdir(parents=True)
    (project / CHANGES / NAME).symlink_to(outside)
    code, report = run_json("check", "--all", "--root", str(project))
    assert code == 1
    assert rules_of(report) == [("CC001", CHANGES + NAME, None)]


def test_paths_mode_checks_only_given_files(
    tmp_path: Path, run_json: RunCLI, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_tree(tmp_path, {**delta(GOOD), CHANGES + "bad.json": "{", "README.md": "# not ours\n"})
    monkeypatch.chdir(tmp_path)
    code, report = run_json("check", CHANGES + NAME, "README.md")
    assert (code, report["findings"], report["summary"]["files"]) == (0, [], 1)
    code, report = run_json("check", CHANGES + "bad.json")
    assert code == 1
    assert rules_of(report) == [("CC004", CHANGES + "bad.json", 1)]


def test_finding_carries_pointer_column_and_hint(tmp_path: Path, run_json: RunCLI) -> None:
    write_tree(tmp_path, delta('{"started_at":"2026-09-21T16:20:00+08:00",\n  "updated_at":"2026-09-21T16:30:00+08:00",\n  "source":"agent",\n  "changes":["ok", 7]}\n'))  # fmt: skip
    _, report = run_json("check", "--all", "--root", str(tmp_path))
    (finding,) = [f for f in report["findings"] if f["rule"] == "DL105"]
    assert (finding["line"], finding["column"], finding["pointer"]) == (4, 20, "/changes/1")
    assert "found a number 7" in finding["message"]
    assert finding["hint"]


def test_a_frozen_delta_is_not_told_to_be_edited(tmp_path: Path, run_json: RunCLI) -> None:
    """A finding on a frozen delta cannot be mended in place (DL207 forbids the edit): its hint
    says how to accept it instead; the same finding on an active delta keeps the rule's hint."""
    frozen = NAME.replace(".json", ".frozen.json")
    empty_change = GOOD.replace('["x"]', '[" "]')
    write_tree(tmp_path, delta(empty_change, frozen))
    code, report = run_json("check", "--all", "--root", str(tmp_path))
    (finding,) = report["findings"]
    assert (code, finding["rule"], finding["path"]) == (1, "DL107", CHANGES + frozen)
    assert "frozen" in finding["hint"] and "baseline" in finding["hint"]
    write_tree(tmp_path / "active", delta(empty_change))
    _, report = run_json("check", "--all", "--root", str(tmp_path / "active"))
    (finding,) = report["findings"]
    assert finding["rule"] == "DL107" and "frozen" not in finding["hint"]


def test_severity_override_and_off(tmp_path: Path, run_json: RunCLI) -> None:
    write_tree(tmp_path, delta(GOOD[:-2] + ',"status":"done"}\n'))
    (tmp_path / ".continuity.toml").write_text('[rules]\nDL108 = "error"\n')
    code, report = run_json("check", "--all", "--root", str(tmp_path))
    assert code == 1 and report["findings"][0]["severity"] == "error"
    (tmp_path / ".continuity.toml").write_text('[rules]\nDL108 = "off"\n')
    code, report = run_json("check", "--all", "--root", str(tmp_path))
    assert (code, report["findings"]) == (0, [])


def test_exclude_globs(tmp_path: Path, run_json: RunCLI) -> None:
    write_tree(tmp_path, {**{"vendored/" + k: v for k, v in delta("{").items()}, **delta(GOOD)})
    (tmp_path / "pyproject.toml").write_text('[tool.continuity]\nexclude = ["vendored/**"]\n')
    code, report = run_json("check", "--all", "--root", str(tmp_path))
    assert (code, report["findings"]) == (0, [])


def test_parallel_workers_report_exactly_what_one_process_does(
    tmp_path: Path, run_json: RunCLI
) -> None:
    files: dict[str, bytes | str] = dict(PROJECT)
    for i in range(60):
        name = f"2026-09-21T16-{i:02}-00p08-00--agent.json"
        text = GOOD.replace(
            '"started_at":"2026-09-21T16:20:00', f'"started_at":"2026-09-21T16:{i:02}:00'
        )
        text = text.replace(
            '"updated_at":"2026-09-21T16:30:00', f'"updated_at":"2026-09-21T16:{i:02}:30'
        )
        files[CHANGES + name] = text if i % 7 else text.replace('["x"]', '[""]')  # every 7th is bad
    files[CHANGES + "broken.json"] = "{"
    write_tree(tmp_path, files)
    one = run_json("check", "--all", "--root", str(tmp_path), "--jobs", "1")
    many = run_json("check", "--all", "--root", str(tmp_path), "--jobs", "3")
    assert one == many
    code, report = one
    assert code == 1
    assert sorted({rule for rule, _, _ in rules_of(report)}) == ["CC004", "DL107"]
    assert report["summary"]["files"] == 62


def test_split_map_raises_a_worker_error_in_the_parent() -> None:
    from continuity_checks.core.parallel import split_map

    def work(part: Sequence[int]) -> int:
        if 9 in part:
            raise ValueError("item 9 is bad")
        return sum(part)

    assert split_map(work, list(range(9)), 3) == [3, 12, 21]
    with pytest.raises(ValueError, match="item 9 is bad"):
        split_map(work, list(range(12)), 3)


@pytest.mark.parametrize(
    ("extra", "compiled"),
    [
        ({}, ["deltalayer-conversation-delta"]),
        (
            {".deltalayer/changes.jsonl": LEGACY_GOOD},
            ["deltalayer-conversation-delta", "deltalayer-legacy-record"],
        ),
    ],
)
def test_the_schemas_of_the_kinds_looked_ahead_at_are_compiled_before_the_workers(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    extra: dict[str, str],
    compiled: list[str],
) -> None:
    """With workers, the process that forks them compiles the schemas of the kinds of files it
    looked ahead at, once (the workers inherit them: the process checks no file itself), and
    the findings are one process's."""
    files: dict[str, bytes | str] = {**PROJECT, **extra}
    for i in range(12):
        files[f"{CHANGES}2026-09-21T16-{i:02}-00p08-00--agent.json"] = GOOD if i % 5 else "{"
    write_tree(tmp_path, files)
    one = engine.check(tmp_path, Config(), under=("",), jobs=1)
    made: list[str] = []  # the schemas compiled in this process (a worker's list is its own)
    original = schemas.Validator.__init__

    def recording(self: schemas.Validator, name: str) -> None:
        made.append(name)
        original(self, name)

    monkeypatch.setattr(schemas.Validator, "__init__", recording)
    schemas.validator.cache_clear()
    many = engine.check(tmp_path, Config(), under=("",), jobs=2)
    assert sorted(made) == compiled
    assert (many.files, many.sorted_findings()) == (one.files, one.sorted_findings())
