"""``continuity delta`` against the DeltaLayer prototype's tests (specs/deltalayer-conformance.md).

Every case T1-T20 and Appendix A (a)-(h) runs through the real CLI, in process
(``continuity_checks.cli.main``) or, for T7's second conversation and T18, as a separate
``python -m continuity_checks delta`` process. The "Derived" expectations are asserted too.
Deliberate differences (docs/delta-helper.md): T1 looks for the v0.2.1 marker, and Appendix
(f) also rejects an empty ``--started-at`` instead of reading it as "now".
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from continuity_checks.cli import main

MARKER_V021 = "<!-- deltalayer-conversation-v0.2.1 -->"
MARKER_V02 = "<!-- deltalayer-conversation-v0.2 -->"
INSTRUCTION = (
    "If this context is insufficient, read older Conversation Deltas with next_before; "
    "continue into legacy history when needed."
)
PREFIX = "deltalayer: "
ENV = {**os.environ, "PYTHONIOENCODING": "utf-8"}


@dataclass
class Result:
    code: int
    out: str
    err: str


class Delta:
    """The CLI bound to one project root ``R`` (``--root R`` before every subcommand)."""

    def __init__(self, root: Path, capsys: pytest.CaptureFixture[str]) -> None:
        self.root = root
        self.capsys = capsys
        self.D = root / ".deltalayer" / "changes"
        self.L = root / ".deltalayer" / "changes.jsonl"

    def run(self, *args: str) -> Result:
        self.capsys.readouterr()
        code = main(["delta", "--root", str(self.root), *args])
        out, err = self.capsys.readouterr()
        return Result(code, out, err)

    def ok(self, *args: str) -> Any:
        result = self.run(*args)
        assert (result.code, result.err) == (0, ""), result.err
        value = json.loads(result.out)
        # indent=2, raw non-ASCII, one trailing newline
        assert result.out == json.dumps(value, indent=2, ensure_ascii=False) + "\n"
        return value

    def text(self, *args: str) -> str:
        result = self.run(*args)
        assert (result.code, result.err) == (0, ""), result.err
        return result.out

    def fails(self, *args: str) -> str:
        """The message of a domain error: exit 2, empty stdout, one stderr line."""
        result = self.run(*args)
        assert result.code == 2, result
        assert result.out == ""
        assert result.err.startswith(PREFIX) and result.err.endswith("\n")
        assert result.err.count("\n") == 1
        return result.err[len(PREFIX) : -1]

    # the test file's shorthands
    def start(self, k: int, changes: list[str] | None = None, source: str = "codex") -> Any:
        return self.start_at(f"2026-09-21T00:{k:02d}:00+08:00", changes or [], source)

    def start_at(self, started_at: str, changes: list[str], source: str = "codex") -> Any:
        args = ["start", "--source", source, "--started-at", started_at]
        for change in changes:
            args += ["--change", change]
        return self.ok(*args)

    def update(self, ref: str, changes: list[str], updated_at: str | None = None) -> Any:
        args = ["update", "--conversation", ref]
        if updated_at is not None:
            args += ["--updated-at", updated_at]
        for change in changes:
            args += ["--change", change]
        return self.ok(*args)

    def show(self, ref: str) -> Any:
        return self.ok("show", "--conversation", ref)

    def freeze(self, ref: str) -> Any:
        return self.ok("freeze", "--conversation", ref)

    def recent(self, n: int) -> Any:
        return self.ok("recent", "--limit", str(n))

    def older(self, cursor: str, n: int = 5) -> Any:
        return self.ok("older", "--before", cursor, "--limit", str(n))

    def rebuild_context(self, n: int) -> Any:
        return self.ok("rebuild-context", "--limit", str(n))

    def deltas(self) -> list[str]:
        return sorted(p.name for p in self.D.glob("*.json"))

    def write_legacy(self, *lines: bytes) -> None:
        self.L.write_bytes(b"".join(lines))


@pytest.fixture
def R(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Delta:
    root = tmp_path / "R"
    root.mkdir()
    return Delta(root, capsys)


def subprocess_delta(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "continuity_checks", "delta", "--root", str(root), *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=ENV,
        check=False,
    )


def changes_of(page: Any) -> list[list[str]]:
    return [event["changes"] for event in page["events"]]


def paginate(R: Delta, size: int) -> tuple[list[Any], list[Any]]:
    """recent(size), then older(next_before, size) until an empty page; (events, pages)."""
    pages = [R.recent(size)]
    while pages[-1]["events"]:
        pages.append(R.older(pages[-1]["next_before"], size))
    return [event for page in pages for event in page["events"]], pages


# ------------------------------------------------------------------------------------------ T1-T20


def test_T1_init_creates_conversation_directory_and_preserves_legacy_slot(R: Delta) -> None:
    report = R.text("init")
    assert R.D.is_dir()
    assert R.L.is_file() and R.L.read_bytes() == b""
    assert (R.root / "PROJECT.md").is_file()
    agents = (R.root / "AGENTS.md").read_text(encoding="utf-8")
    # deliberate difference: the v0.2.1 marker (the v0.2 string is not a substring of it)
    assert MARKER_V021 in agents
    assert MARKER_V02 not in agents
    assert report.splitlines() == [
        str(R.L.resolve()),
        str((R.root / "PROJECT.md").resolve()),
        str((R.root / "AGENTS.md").resolve()),
        # deliberate difference: the lock file is git-ignored (docs/delta-helper.md)
        str((R.root / ".gitignore").resolve()),
    ]
    assert R.text("init") == "already initialized\n"
    assert list(R.D.glob("*.json")) == []


def test_T2_start_creates_one_persisted_empty_delta(R: Delta) -> None:
    result = R.start(1)
    stored = json.loads((R.root / result["_path"]).read_text(encoding="utf-8"))
    assert stored["changes"] == []
    assert set(stored) == {"started_at", "updated_at", "source", "changes"}
    assert len(R.deltas()) == 1
    assert R.recent(1)["events"][0]["changes"] == []
    # Derived
    assert result["_path"] == ".deltalayer/changes/2026-09-21T00-01-00p08-00--codex.json"
    assert (R.root / result["_path"]).read_bytes() == (
        b'{"started_at":"2026-09-21T00:01:00+08:00","updated_at":"2026-09-21T00:01:00+08:00",'
        b'"source":"codex","changes":[]}\n'
    )
    assert result["_cursor"] == "conversation:2026-09-21T00-01-00p08-00--codex.json"
    assert result["_frozen"] is False
    assert list(result) == [
        "started_at", "updated_at", "source", "changes", "_kind", "_cursor", "_path", "_frozen",
    ]  # fmt: skip
    assert result["_kind"] == "conversation"


def test_T3_same_conversation_update_reuses_one_file(R: Delta) -> None:
    started = R.start(1, ["initial"])
    absolute = str(R.root / started["_path"])
    R.update(absolute, ["final"], "2026-09-21T00:02:00+08:00")
    R.update(absolute, ["final", "boundary"], "2026-09-21T00:03:00+08:00")
    assert len(R.deltas()) == 1
    shown = R.show(started["_path"])
    assert shown["changes"] == ["final", "boundary"]
    assert shown["updated_at"] == "2026-09-21T00:03:00+08:00"
    assert shown["started_at"] == "2026-09-21T00:01:00+08:00"


def test_T4_current_delta_can_remove_intermediate_temporary_item(R: Delta) -> None:
    started = R.start(1, ["temporary attempt", "durable decision"])
    updated = R.update(started["_path"], ["durable decision"])
    assert updated["changes"] == ["durable decision"]
    # the automatic time is "now": local time with an offset, whole seconds (a now before the
    # stored updated_at is refused, DL205: docs/delta-helper.md §7, T4)
    now = updated["updated_at"]
    assert len(now) == 25 and now[19] in "+-" and "." not in now
    R.update(started["_path"], [])
    assert R.show(started["_path"])["changes"] == []
    assert R.ok("current", "--conversation", started["_path"])["changes"] == []


def test_T5_freeze_rejects_update_and_new_conversation_does_not_touch_old_bytes(
    R: Delta,
) -> None:
    started = R.start(1, ["durable"])
    frozen = R.freeze(started["_path"])
    before = (R.root / frozen["_path"]).read_bytes()
    message = R.fails("update", "--conversation", frozen["_path"], "--change", "rewritten")
    assert "frozen" in message
    assert message == "frozen conversation delta cannot be updated"
    second = R.start(2, ["new conversation"])
    assert second["_path"] != frozen["_path"]
    assert (R.root / frozen["_path"]).read_bytes() == before
    assert frozen["_frozen"] is True
    # Derived
    assert frozen["_path"] == ".deltalayer/changes/2026-09-21T00-01-00p08-00--codex.frozen.json"
    assert frozen["_cursor"] == "conversation:2026-09-21T00-01-00p08-00--codex.frozen.json"
    assert not (R.root / started["_path"]).exists()
    assert second["_path"].endswith("T00-02-00p08-00--codex.json")


def test_T6_same_started_at_collision_does_not_overwrite(R: Delta) -> None:
    first = R.start_at("2026-09-21T01:00:00+08:00", ["first"])
    second = R.start_at("2026-09-21T01:00:00+08:00", ["second"])
    assert first["_path"] != second["_path"]
    assert len(R.deltas()) == 2
    assert R.show(first["_path"])["changes"] == ["first"]
    assert R.show(second["_path"])["changes"] == ["second"]
    # Derived
    assert first["_path"].endswith("/2026-09-21T01-00-00p08-00--codex.json")
    assert second["_path"].endswith("/2026-09-21T01-00-00p08-00--codex--1.json")


def test_T7_new_conversation_does_not_adopt_interrupted_active_delta(R: Delta) -> None:
    a = R.start(1, ["A initial"])
    R.update(a["_path"], ["A durable"], "2026-09-21T00:02:00+08:00")
    a_bytes = (R.root / a["_path"]).read_bytes()
    # a new conversation in a fresh process
    proc = subprocess_delta(
        R.root, "start", "--source", "codex", "--started-at", "2026-09-22T00:00:00+08:00"
    )
    assert (proc.returncode, proc.stderr) == (0, "")
    b = json.loads(proc.stdout)
    assert b["changes"] == []
    R.update(b["_path"], ["B durable"], "2026-09-22T00:01:00+08:00")
    assert a["_path"] != b["_path"]
    assert (R.root / a["_path"]).read_bytes() == a_bytes
    assert len(R.deltas()) == 2
    page = R.recent(2)
    assert changes_of(page) == [["B durable"], ["A durable"]]
    assert R.show(a["_path"])["_frozen"] is False
    assert page["events"][1]["_frozen"] is False


def test_T8_recent_reads_newest_conversation_deltas_first(R: Delta) -> None:
    R.start_at("2026-09-21T01:00:00+08:00", ["old"])
    R.start_at("2026-09-21T03:00:00+08:00", ["new"])
    R.start_at("2026-09-21T02:00:00+08:00", ["middle"])
    page = R.recent(3)
    assert changes_of(page) == [["new"], ["middle"], ["old"]]
    assert all(event["_kind"] == "conversation" for event in page["events"])


def test_T9_empty_conversation_is_visible_but_semantically_skipped(R: Delta) -> None:
    R.start(1)
    context = R.rebuild_context(1)
    assert context["recent_changes"] == []
    assert len(context["empty_conversations"]) == 1
    assert (R.root / context["empty_conversations"][0]["_path"]).is_file()
    # Derived
    assert context["recent_deltas"] == [] and context["legacy_fallback"] == []
    assert context["next_before"] == "conversation:2026-09-21T00-01-00p08-00--codex.json"
    assert context["project"] == (R.root / "PROJECT.md").read_text(encoding="utf-8")
    assert context["project"].startswith("# Project\n")
    headings = [line for line in context["project"].splitlines() if line.startswith("## ")]
    assert headings == [
        "## Goal", "## Current Architecture", "## Current Stage",
        "## Recently Completed", "## Known Constraints", "## Open Areas",
    ]  # fmt: skip
    assert context["instruction"] == INSTRUCTION


def test_T10_older_paginates_conversation_files(R: Delta) -> None:
    for k in range(1, 6):
        R.start(k, [str(k)])
    events, pages = paginate(R, 2)
    assert [event["changes"][0] for event in events] == ["5", "4", "3", "2", "1"]
    # Derived
    assert [[e["changes"][0] for e in page["events"]] for page in pages] == [
        ["5", "4"], ["3", "2"], ["1"], [],
    ]  # fmt: skip
    assert pages[0]["next_before"] == "conversation:2026-09-21T00-04-00p08-00--codex.json"
    assert pages[-1]["next_before"] is None
    assert pages[-2]["next_before"] == "conversation:2026-09-21T00-01-00p08-00--codex.json"


def test_T11_legacy_history_is_fallback_and_read_only(R: Delta) -> None:
    R.text("init")
    legacy = (
        b'{"time":"2026-09-20T00:00:00+08:00","source":"legacy","changes":["old"]}\n'
        b'{"time":"2026-09-21","source":"legacy","changes":[]}\n'
    )
    R.write_legacy(legacy)
    page = R.recent(5)
    assert [event["_kind"] for event in page["events"]] == ["legacy", "legacy"]
    assert page["events"][0]["time"] == "2026-09-21"
    R.start_at("2026-09-22T00:00:00+08:00", ["new"])
    assert R.L.read_bytes() == legacy
    # Derived
    first, second = page["events"]
    assert first["_cursor"] == "2026-09-21#line=2" and first["_line"] == 2
    assert second["_cursor"] == "2026-09-20T00:00:00+08:00#line=1"
    assert first["_path"] == second["_path"] == ".deltalayer/changes.jsonl"
    assert list(first) == ["time", "source", "changes", "_kind", "_cursor", "_path", "_line"]
    assert "_frozen" not in first


def test_T12_mixed_conversation_and_legacy_history(R: Delta) -> None:
    R.text("init")
    R.write_legacy(b'{"time":"2026-09-21T00:00:00+08:00","source":"legacy","changes":["old"]}')
    R.start(1, ["conversation"])
    page = R.recent(2)
    assert [event["_kind"] for event in page["events"]] == ["conversation", "legacy"]
    assert changes_of(page) == [["conversation"], ["old"]]


def test_T13_rebuild_context_contains_project_recent_deltas_and_legacy_fallback(
    R: Delta,
) -> None:
    R.text("init")
    (R.root / "PROJECT.md").write_bytes(b"# Current view\n")
    R.write_legacy(b'{"time":"2026-09-20T00:00:00+08:00","source":"legacy","changes":["old"]}\n')
    R.start(1, ["new"])
    context = R.rebuild_context(2)
    assert context["project"] == "# Current view\n"
    assert context["recent_deltas"][0]["changes"] == ["new"]
    assert context["legacy_fallback"][0]["changes"] == ["old"]
    assert context["next_before"]
    # Derived
    assert list(context) == [
        "project", "recent_deltas", "legacy_fallback", "recent_changes",
        "empty_conversations", "next_before", "warnings", "instruction",
    ]  # fmt: skip
    assert changes_of({"events": context["recent_changes"]}) == [["new"], ["old"]]
    assert [e["_kind"] for e in context["recent_changes"]] == ["conversation", "legacy"]
    assert context["empty_conversations"] == []
    assert context["next_before"] == "2026-09-20T00:00:00+08:00#line=1"
    assert context["warnings"] == []
    assert context["instruction"] == INSTRUCTION


def test_T14_malformed_conversation_is_isolated(R: Delta) -> None:
    R.text("init")
    (R.D / "bad.json").write_bytes(b"{not json}")
    good = R.start(1, ["good"])
    page = R.recent(5)
    assert changes_of(page) == [["good"]]
    assert len(page["warnings"]) == 1
    assert "bad.json" in page["warnings"][0]["path"]
    assert R.show(good["_path"])["changes"] == ["good"]
    # Derived
    try:
        json.loads("{not json}")
    except json.JSONDecodeError as exc:
        decode_message = str(exc)
    assert page["warnings"] == [
        {"path": ".deltalayer/changes/bad.json", "error": decode_message, "skipped": True}
    ]
    assert R.fails("show", "--conversation", ".deltalayer/changes/bad.json") == decode_message


def test_T15_malformed_legacy_line_is_isolated(R: Delta) -> None:
    R.text("init")
    R.write_legacy(b"{bad}\n", b'{"time":"2026-09-21","source":"legacy","changes":["good"]}\n')
    page = R.recent(5)
    assert changes_of(page) == [["good"]]
    assert [warning["line"] for warning in page["warnings"]] == [1]
    assert page["warnings"][0]["skipped"] is True
    assert set(page["warnings"][0]) == {"line", "error", "skipped"}


def test_T16_date_only_conversation_retains_original_precision(R: Delta) -> None:
    started = R.start_at("2026-09-21", ["date-only"], source="human")
    shown = R.show(started["_path"])
    assert shown["started_at"] == "2026-09-21"
    assert shown["updated_at"] == "2026-09-21"
    assert shown["_cursor"].startswith("conversation:")
    # Derived
    assert (R.D / "2026-09-21--human.json").is_file()
    assert shown["_cursor"] == "conversation:2026-09-21--human.json"


def test_T17_2500_conversation_files_remain_pageable(R: Delta) -> None:
    R.text("init")
    for n in range(2500):
        x = f"2026-09-01T00:{n // 60:02d}:{n % 60:02d}+00:00"
        record = {"started_at": x, "updated_at": x, "source": "fixture", "changes": [str(n)]}
        (R.D / f"{n:04d}.json").write_text(
            json.dumps(record, separators=(",", ":")) + "\n", encoding="utf-8"
        )
    assert (
        (R.D / "2499.json")
        .read_text(encoding="utf-8")
        .startswith('{"started_at":"2026-09-01T00:41:39+00:00"')
    )
    events, pages = paginate(R, 137)
    assert all(page["warnings"] == [] for page in pages)
    assert [int(event["changes"][0]) for event in events] == list(range(2499, -1, -1))


def test_T18_cli_start_update_current_freeze_and_recent(tmp_path: Path) -> None:
    root = tmp_path / "R"

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess_delta(root, *args)

    assert run("init").returncode == 0
    proc = run(
        "start", "--source", "codex", "--started-at", "2026-09-21T01:00:00+08:00",
        "--change", "initial",
    )  # fmt: skip
    assert proc.returncode == 0
    started = json.loads(proc.stdout)
    assert started["_path"] == ".deltalayer/changes/2026-09-21T01-00-00p08-00--codex.json"
    proc = run(
        "update", "--conversation", started["_path"],
        "--updated-at", "2026-09-21T01:01:00+08:00", "--change", "final",
    )  # fmt: skip
    assert proc.returncode == 0
    current = run("current", "--conversation", started["_path"])
    assert json.loads(current.stdout)["changes"] == ["final"]
    proc = run("freeze", "--conversation", started["_path"])
    assert proc.returncode == 0
    frozen = json.loads(proc.stdout)
    assert frozen["_frozen"] is True
    assert frozen["_path"].endswith("--codex.frozen.json")
    proc = run("update", "--conversation", frozen["_path"], "--change", "bad")
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == "deltalayer: frozen conversation delta cannot be updated\n"
    proc = run("recent", "--limit", "1")
    assert json.loads(proc.stdout)["events"][0]["changes"] == ["final"]
    assert proc.stdout == json.dumps(json.loads(proc.stdout), indent=2, ensure_ascii=False) + "\n"


def test_T19_legacy_time_cursor_remains_compatible(R: Delta) -> None:
    R.text("init")
    R.write_legacy(
        b'{"time":"2026-09-21T00:00:00+08:00","source":"legacy","changes":["a"]}\n',
        b'{"time":"2026-09-21T01:00:00+08:00","source":"legacy","changes":["b"]}\n',
    )
    assert R.recent(1)["events"][0]["changes"] == ["b"]
    assert R.older("2026-09-21T01:00:00+08:00", 1)["events"][0]["changes"] == ["a"]
    # Derived
    assert changes_of(R.older("2026-09-21T01:00:00+08:00#line=2", 1)) == [["a"]]


def test_T20_mixed_precision_legacy_pagination_preserves_append_order(R: Delta) -> None:
    R.text("init")
    legacy = (
        b'{"time":"2026-09-22T01:00:00+08:00","source":"legacy","changes":["a"]}\n'
        b'{"time":"2026-09-21","source":"legacy","changes":["b"]}\n'
        b"{bad}\n"
        b'{"time":"2026-09-21","source":"legacy","changes":["c"]}\n'
        b'{"time":"2026-09-20T00:00:00Z","source":"legacy","changes":["d"]}\n'
    )
    R.write_legacy(legacy)
    R.start(1, ["native"])
    events, pages = paginate(R, 2)
    assert all([w["line"] for w in page["warnings"]] == [3] for page in pages)
    assert [event["changes"][0] for event in events] == ["native", "d", "c", "b", "a"]
    assert R.L.read_bytes() == legacy
    assert "full cursor" in R.fails("older", "--before", "2026-09-23T00:00:00+08:00")
    message = R.fails("older", "--before", "2026-09-21")
    assert "full cursor" in message
    # Derived
    assert [[e["changes"][0] for e in page["events"]] for page in pages] == [
        ["native", "d"], ["c", "b"], ["a"], [],
    ]  # fmt: skip
    assert [page["next_before"] for page in pages] == [
        "2026-09-20T00:00:00+00:00#line=5",
        "2026-09-21#line=2",
        "2026-09-22T01:00:00+08:00#line=1",
        None,
    ]
    assert message == "date-only values require a full cursor from recent/older"


# ------------------------------------------------------------------------------- Appendix A (v0)


def test_A_a_malformed_legacy_lines_are_skipped_with_warnings(R: Delta) -> None:
    R.text("init")
    R.write_legacy(b"{not json}\n", b'{"time":"2026-09-21T00:00:00+08:00"}\n')
    page = R.recent(5)
    assert page["events"] == []
    assert [w["line"] for w in page["warnings"]] == [1, 2]
    assert all(w["skipped"] is True for w in page["warnings"])
    assert page["warnings"][1]["error"] == "source must be a non-empty string"
    assert page["next_before"] is None


def test_A_b_date_only_crlf_record_reads_without_warning(R: Delta) -> None:
    R.text("init")
    legacy = b'{"time": "2026-09-21", "source": "test", "changes": ["legacy"]}\r\n'
    R.write_legacy(legacy)
    page = R.recent(5)
    assert page["warnings"] == []
    [event] = page["events"]
    assert event["time"] == "2026-09-21"
    assert event["_cursor"] == "2026-09-21#line=1"
    assert R.L.read_bytes() == legacy


def test_A_c_mixed_precision_pagination_across_blank_and_invalid_lines(R: Delta) -> None:
    R.text("init")
    R.write_legacy(
        b'{"time":"2026-09-21","source":"test","changes":["first"]}\n',
        b"\n",
        b"{bad json}\n",
        b'{"time":"2026-09-22T00:00:00Z","source":"test","changes":["second"]}\n',
        b'{"time":"2026-02-30","source":"test","changes":[]}\n',
        b"\xff\n",
        b'{"time":"2026-09-21","source":"test","changes":["third"]}\n',
    )
    events, pages = paginate(R, 1)
    assert [event["_line"] for event in events] == [7, 4, 1]
    assert [e["changes"] for e in events] == [["third"], ["second"], ["first"]]
    assert len(pages) == 4 and pages[-1]["events"] == []
    assert all([w["line"] for w in page["warnings"]] == [3, 5, 6] for page in pages)
    assert pages[0]["warnings"][1]["error"] == "time must be a valid ISO 8601 date or timestamp"


def test_A_d_append_order_not_time_order(R: Delta) -> None:
    R.text("init")
    R.write_legacy(
        b'{"time":"2026-09-21T11:00:00+08:00","source":"test","changes":["first"]}\n',
        b'{"time":"2026-09-21T00:00:00Z","source":"test","changes":["second"]}\n',
        b'{"time":"2026-09-21T10:00:00+08:00","source":"test","changes":["third"]}\n',
    )
    assert changes_of(R.recent(5)) == [["third"], ["second"], ["first"]]
    assert changes_of(R.older("2026-09-21T10:00:00+08:00#line=3")) == [["second"], ["first"]]
    assert changes_of(R.older("2026-09-21T02:00:00Z")) == [["second"]]
    assert changes_of(R.older("2026-09-22T00:00:00Z")) == [["third"], ["second"], ["first"]]
    # a legacy cursor must match time and line exactly (v0 only compared lines)
    assert R.fails("older", "--before", "2026-09-21T09:00:00+08:00#line=3") == (
        "cursor does not identify a readable history item"
    )


def test_A_e_cursor_and_limit_validation(R: Delta) -> None:
    R.text("init")
    R.write_legacy(b'{"time":"2026-09-21","source":"test","changes":["x"]}\n')
    limit = "limit must be an integer between 1 and 1000"
    assert R.fails("recent", "--limit", "0") == limit
    assert R.fails("recent", "--limit", "1001") == limit
    assert R.fails("older", "--before", "2026-09-21#line=1", "--limit", "0") == limit
    assert R.fails("rebuild-context", "--limit", "-1") == limit
    assert len(R.recent(1000)["events"]) == 1
    assert R.fails("older", "--before", "2026-09-21T16:00:00") == (
        "timestamp must include a timezone offset"
    )
    assert R.fails("older", "--before", "2026-09-21#line=0") == "cursor line must be positive"
    assert R.fails("older", "--before", "2026-09-21#line=-1") == "cursor line must be positive"
    assert R.fails("older", "--before", "2026-09-21#line=x") == "cursor line must be an integer"
    assert R.fails("older", "--before", "2026-02-30#line=1") == (
        "time must be a valid ISO 8601 date or timestamp"
    )
    assert R.fails("older", "--before", "legacy:x") == "legacy cursor line must be an integer"
    assert R.fails("older", "--before", "conversation:nope.json") == (
        "cursor does not identify a readable history item"
    )
    # legacy:<n> is accepted but never emitted: legacy items with line < n
    assert changes_of(R.older("legacy:2")) == [["x"]]
    assert changes_of(R.older("legacy:1")) == []
    # the CLI: "limit" on stderr and exit 2; a non-integer is a usage error, also exit 2
    result = R.run("recent", "--limit", "0")
    assert result.code == 2 and "limit" in result.err
    result = R.run("recent", "--limit", "x")
    assert result.code == 2 and result.out == "" and "--limit" in result.err


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("", "time must be a non-empty ISO 8601 date or timestamp"),
        ("2026-09-21T16:00:00", "timestamp must include a timezone offset"),
        ("2026-02-30", "time must be a valid ISO 8601 date or timestamp"),
        ("2026-13-01", "time must be a valid ISO 8601 date or timestamp"),
        ("2026-09", "time must be a valid ISO 8601 date or timestamp"),
        ("not a time", "time must be a valid ISO 8601 date or timestamp"),
    ],
)
def test_A_f_timestamp_rejection_list(R: Delta, value: str, message: str) -> None:
    assert R.fails("start", "--source", "test", "--started-at", value) == message
    assert not (R.root / ".deltalayer").exists()  # validated before init touches anything


def test_A_f_date_only_is_accepted(R: Delta) -> None:
    started = R.start_at("2026-09-21", ["legacy"], source="test")
    assert started["started_at"] == started["updated_at"] == "2026-09-21"


def test_A_g_2500_legacy_lines_page_back_without_loss(R: Delta) -> None:
    R.text("init")
    times = ["2026-09-21", "2026-09-22T00:00:00Z", "2026-09-20", "2026-09-21T16:00:00+08:00"]
    R.write_legacy(
        *(
            json.dumps({"time": times[n % 4], "source": "test", "changes": [str(n)]}).encode()
            + b"\n"
            for n in range(2500)
        )
    )
    events, pages = paginate(R, 137)
    assert all(page["warnings"] == [] for page in pages)
    assert [int(event["changes"][0]) for event in events] == list(range(2499, -1, -1))


def test_A_h_rebuild_context_without_project_md_never_writes_it(R: Delta) -> None:
    context = R.rebuild_context(5)
    assert "missing" in context["project"]
    assert context["project"] == "(PROJECT.md is missing.)"
    assert list(R.root.iterdir()) == []  # nothing at all was written
    R.text("init")
    (R.root / "PROJECT.md").unlink()
    assert R.rebuild_context(5)["project"] == "(PROJECT.md is missing.)"
    assert not (R.root / "PROJECT.md").exists()
