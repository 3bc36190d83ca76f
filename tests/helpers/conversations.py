"""Three conversations' deltas and a legacy history, as a history's base commit holds them:
the starting point of the ``continuity verify`` tests, the shard tests and the CI recipes."""

from __future__ import annotations

from tests.helpers.git import delta, path_of

A = path_of("2026-09-21T16-20-00p08-00--agent.json")
B = path_of("2026-09-21T17-00-00p08-00--codex.json")
C = path_of("2026-09-21T18-00-00p08-00--claude.json")
A0 = delta(changes=["first"])
B0 = delta("2026-09-21T17:00:00+08:00", source="codex")
C0 = delta("2026-09-21T18:00:00+08:00", source="claude")
LEGACY0 = (
    '{"time":"2026-09-21T18:02:16+08:00","source":"agent","changes":["a"]}\n'
    '{"time":"2026-09-21","source":"agent","changes":[]}\n'
)
