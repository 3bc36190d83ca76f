"""``delta recent`` keeps only the page: the newest deltas in a heap of the page's size,
the legacy file read in blocks keeping only the lines the page still needs. The page and the
warnings must be exactly those of the whole merged history (specs/deltalayer.md §3.1)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from continuity_checks.tools.deltas import DeltaStore, reader


def _delta(started: str, updated: str, *changes: str) -> str:
    record = {"started_at": started, "updated_at": updated, "source": "codex", "changes": changes}
    return json.dumps(record, separators=(",", ":")) + "\n"


def _mixed_store(root: Path) -> DeltaStore:
    """Deltas with equal times (the name decides), date-only ones, a frozen twin that is the
    same file (a freeze cut short), bad files; a legacy file with bad, blank and torn lines."""
    changes = root / ".deltalayer" / "changes"
    changes.mkdir(parents=True)
    times = [
        ("2026-09-21T00:01:00+08:00", "2026-09-21T00:05:00+08:00"),
        ("2026-09-21T00:02:00+08:00", "2026-09-21T00:05:00+08:00"),  # same updated_at
        ("2026-09-20", "2026-09-22"),  # date-only: below every datetime
        ("2026-09-19T10:00:00Z", "2026-09-19T11:00:00.250000Z"),
        ("2026-09-21T00:02:00+08:00", "2026-09-21T00:05:00+08:00"),
    ]
    for n in range(23):
        started, updated = times[n % len(times)]
        (changes / f"d{n:02d}.json").write_text(_delta(started, updated, f"c{n}"), "utf-8")
    (changes / "d03.frozen.json").write_text(_delta(*times[3], "frozen"), "utf-8")
    os.link(changes / "d08.json", changes / "d08.frozen.json")  # listed once, as frozen
    (changes / "bad.json").write_bytes(b"{not json}")
    (changes / "zz-missing-key.json").write_text('{"source":"codex"}\n', "utf-8")
    (changes / "notes.txt").write_text("not a delta", "utf-8")
    legacy = [
        '{"time":"2026-09-01T00:00:00Z","source":"legacy","changes":["l1"]}',
        "{bad}",
        "",
        '{"time":"2026-09-02","source":"legacy","changes":["l4"]}',
        " \t\r",
        '{"time":"2026-09-03T00:00:00+02:00","source":"legacy","changes":["l6"]}\r',
        '{"time":"not a time","source":"legacy","changes":["l7"]}',
        '{"time":"2026-09-04T00:00:00Z","source":"legacy","changes":["l8"]}',
    ]
    text = "\n".join(legacy) + '\n{"time":"2026-09-05","source":"legacy","changes":["torn"]}'
    (root / ".deltalayer" / "changes.jsonl").write_text(text, "utf-8")
    return DeltaStore(root)


def _whole_history_page(store: DeltaStore, limit: int) -> dict[str, object]:
    entries, warnings = store._history()
    return DeltaStore._page(entries, limit, warnings)


@pytest.mark.parametrize("block", [reader.LEGACY_BLOCK, 1, 7, 64])
def test_recent_gives_the_page_of_the_whole_history(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    store = _mixed_store(tmp_path)
    monkeypatch.setattr(reader, "LEGACY_BLOCK", block)  # line ends across blocks
    total = len(store._history()[0])
    assert total == 23 + 1 + 5  # d08 once (frozen), d03.frozen; five good legacy lines
    for limit in range(1, total + 3):
        assert store.recent(limit) == _whole_history_page(store, limit), limit
    page = store.recent(30)
    assert [w.get("line") for w in page["warnings"]] == [None, None, 2, 7]
    assert [e["_line"] for e in page["events"] if e["_kind"] == "legacy"] == [9, 8, 6, 4, 1]


def test_recent_without_legacy_file_or_changes_directory(tmp_path: Path) -> None:
    store = DeltaStore(tmp_path)
    assert store.recent(5) == {"events": [], "next_before": None, "warnings": []}
    (tmp_path / ".deltalayer").mkdir()
    (tmp_path / ".deltalayer" / "changes.jsonl").write_text(
        '{"time":"2026-09-02","source":"legacy","changes":["only"]}\n', "utf-8"
    )
    assert store.recent(5) == _whole_history_page(store, 5)
    assert [e["changes"] for e in store.recent(5)["events"]] == [["only"]]
