"""Generate N valid DeltaLayer Conversation Deltas into a project directory, deterministically.

The same N always gives the same bytes: a DeltaLayer project (PROJECT.md, AGENTS.md with the
v0.2.1 marker) and N files in ``.deltalayer/changes/`` that ``continuity check --all`` passes with
no finding and the shipped JSON Schema accepts. The files vary the way real ones do: several
offsets (including ``Z`` normalised to ``+00:00`` and negative ones), fractional seconds, sources
that need slugging, collision suffixes, optional ``conversation_id``, one in ten frozen, zero to
four changes with non-ASCII text.

    python benchmarks/gen_deltas.py DIR [--count 10000]
"""

from __future__ import annotations

import argparse
import json
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

CHANGES_DIR = ".deltalayer/changes"

PROJECT_MD = """# Project

## Goal
A synthetic project for benchmarks.

## Current Architecture
Generated.

## Current Stage
Generated.

## Recently Completed
Nothing.

## Known Constraints
None.

## Open Areas
None.
"""

AGENTS_MD = """# Agent instructions

<!-- deltalayer-conversation-v0.2.1 -->
## Project Continuity

Generated for benchmarks: read PROJECT.md, then the newest deltas.
"""

SOURCES = ("codex", "claude", "human", "ci agent", "Claude 3.5 (Sonnet)", "gpt/5")
OFFSETS = (timedelta(hours=8), timedelta(0), timedelta(hours=-5), timedelta(hours=5, minutes=30))
WORDS = (
    "parser",
    "exporter",
    "schema",
    "CSV",
    "due dates",
    "UTF-8",
    "naïve timestamps",
    "lock file",
    "cursor",
    "frozen history",
    "日付",
)
EPOCH = datetime(2026, 1, 1, 8, 0, 0)

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def source_slug(source: str) -> str:
    return _UNSAFE.sub("-", source).strip("-") or "source"


def record(n: int) -> tuple[str, dict[str, object]]:
    """The file stem (without collision suffix) and the record of delta number ``n``."""
    # now and then a delta starts at the same time as the one before it, by the same source, so
    # collision suffixes (--1) occur
    base = n - 1 if n % 97 == 1 else n
    offset = OFFSETS[base % len(OFFSETS)]
    local = EPOCH + timedelta(minutes=7 * base)
    if base % 5 == 3:
        local = local.replace(microsecond=(base * 7919) % 1_000_000 or 1)
    started = local.replace(tzinfo=timezone(offset))
    updated = started + timedelta(minutes=n % 180)
    source = SOURCES[base % len(SOURCES)]
    changes = [
        f"Change {n}.{k}: the {WORDS[(n + k) % len(WORDS)]} now handles case {n * 31 + k}, "
        f"so the next conversation can rely on it."
        for k in range(n % 5)
    ]
    value: dict[str, object] = {
        "started_at": started.isoformat(),
        "updated_at": updated.isoformat(),
        "source": source,
        "changes": changes,
    }
    if n % 3 == 0:
        value["conversation_id"] = f"conv-{n:06d}"
    stem = started.isoformat().replace(":", "-").replace("+", "p") + "--" + source_slug(source)
    return stem, value


def generate(root: Path, count: int) -> list[Path]:
    """Write the project and ``count`` deltas under ``root``; return the delta paths in order."""
    changes = root / CHANGES_DIR
    changes.mkdir(parents=True, exist_ok=True)
    (root / "PROJECT.md").write_text(PROJECT_MD, encoding="utf-8", newline="\n")
    (root / "AGENTS.md").write_text(AGENTS_MD, encoding="utf-8", newline="\n")
    taken: dict[str, int] = {}
    paths = []
    for n in range(count):
        stem, value = record(n)
        suffix = taken.get(stem, 0)
        taken[stem] = suffix + 1
        name = stem if suffix == 0 else f"{stem}--{suffix}"
        name += ".frozen.json" if n % 10 == 9 else ".json"
        path = changes / name
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n"
        path.write_bytes(text.encode("utf-8"))
        paths.append(path)
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", type=Path, help="project root to write (created if absent)")
    parser.add_argument("--count", type=int, default=10_000, help="number of deltas")
    args = parser.parse_args(argv)
    paths = generate(args.directory, args.count)
    print(f"{len(paths)} deltas in {args.directory / CHANGES_DIR}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
