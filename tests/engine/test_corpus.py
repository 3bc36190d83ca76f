"""Real DeltaLayer files pass; mutations of them are caught with the right rule and line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import CORPUS, RunCLI, rules_of

DL = CORPUS / "deltalayer"


@pytest.fixture(autouse=True)
def _corpus_is_there() -> None:
    # a missing corpus must fail, never skip: CI would otherwise pass without these checks
    assert DL.is_dir(), f"the DeltaLayer corpus is missing: {DL} (../shared beside the repository)"


LEGACY_GLOBS = '[deltas]\nlegacy-files = ["experiments/*.jsonl", "evidence/*/changes.jsonl"]\n'
EXAMPLE = "prototype/examples/"
FROZEN = EXAMPLE + ".deltalayer/changes/2026-09-21T16-20-00p08-00--agent.frozen.json"
ACTIVE = EXAMPLE + ".deltalayer/changes/2026-09-21T16-40-00p08-00--agent.json"
LEGACY = EXAMPLE + ".deltalayer/changes.jsonl"


def test_every_upstream_valid_file_passes(tmp_path: Path, run_json: RunCLI) -> None:
    config = tmp_path / "continuity.toml"
    config.write_text(LEGACY_GLOBS)
    code, report = run_json("check", "--all", "--root", str(DL), "--config", str(config))
    assert code == 0
    assert report["summary"]["errors"] == 0
    # the example's AGENTS.md predates the v0.2.1 marker: a warning, not an error
    assert rules_of(report) == [("DL130", EXAMPLE + "AGENTS.md", None)]
    # example project (AGENTS.md, legacy, two deltas), two evidence histories, public-deltas.jsonl,
    # and three more AGENTS.md files (read, but with no .deltalayer/ beside them nothing applies)
    assert report["summary"]["files"] == 10


def test_legacy_corpus_files_are_really_read(tmp_path: Path, run_json: RunCLI) -> None:
    """Break one record in each corpus history: each is caught at its line, so all were read."""
    root = tmp_path / "c"
    shutil.copytree(DL, root)
    (root / ".continuity.toml").write_text(LEGACY_GLOBS)
    expected = []
    for rel, line in (("experiments/public-deltas.jsonl", 48), ("evidence/qicetai-20260921/changes.jsonl", 9),
                      ("evidence/workbench-20260921/changes.jsonl", 3)):  # fmt: skip
        path = root / rel
        lines = path.read_bytes().split(b"\n")
        lines[line - 1] = lines[line - 1].replace(b'"source":', b'"sauce":', 1)
        path.write_bytes(b"\n".join(lines))
        expected.append(("DL102", rel, line))
    _, report = run_json("check", "--all", "--root", str(root))
    assert sorted(r for r in rules_of(report) if r[0] != "DL130") == sorted(expected)


def mutate(tmp_path: Path, rel: str, old: bytes, new: bytes) -> Path:
    root = tmp_path / "c"
    shutil.copytree(DL / "prototype", root / "prototype")
    path = root / rel
    data = path.read_bytes()
    assert old in data
    path.write_bytes(data.replace(old, new, 1))
    return root


MUTATIONS = [
    ("bad timestamp", FROZEN, b"16:30:00+08:00", b"16:30:00", ("DL103", FROZEN, 1)),
    ("missing field", ACTIVE, b'"source":"agent",', b"", ("DL102", ACTIVE, 1)),
    ("name/content mismatch", ACTIVE, b'"started_at":"2026-09-21T16:40', b'"started_at":"2026-09-21T16:39',
     ("DL110", ACTIVE, None)),
    ("non-string change", FROZEN, "视图\"]".encode(), "视图\",42]".encode(), ("DL105", FROZEN, 1)),
    ("broken legacy line", LEGACY, b'"source":"agent","changes"', b'"source":"agent" "changes"', ("CC004", LEGACY, 2)),
    ("empty change", ACTIVE, b'"changes":[]', b'"changes":[""]', ("DL107", ACTIVE, 1)),
]  # fmt: skip


@pytest.mark.parametrize(
    ("rel", "old", "new", "expected"), [m[1:] for m in MUTATIONS], ids=[m[0] for m in MUTATIONS]
)
def test_mutation_is_caught(tmp_path: Path, run_json: RunCLI, rel: str, old: bytes, new: bytes,
                            expected: tuple[str, str, int | None]) -> None:  # fmt: skip
    root = mutate(tmp_path, rel, old, new)
    code, report = run_json("check", "--all", "--root", str(root))
    assert code == 1
    assert [r for r in rules_of(report) if r[0] != "DL130"] == [expected]


def test_twin_of_corpus_frozen_delta_is_caught(tmp_path: Path, run_json: RunCLI) -> None:
    root = mutate(tmp_path, FROZEN, b"", b"")
    shutil.copy(root / FROZEN, root / FROZEN.replace(".frozen.json", ".json"))
    code, report = run_json("check", "--all", "--root", str(root))
    assert code == 1
    assert [r for r in rules_of(report) if r[0] != "DL130"] == [
        ("DL111", FROZEN.replace(".frozen.json", ".json"), None)
    ]
