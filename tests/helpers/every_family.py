"""One history with state of every kind a run must read from a range's base (earlier versions
of deltas, a prune boundary, a sums file's pins) and findings of several families in it (DL202,
DL205, DL206, DL209, PV203, WS202), on the main line and on a merged side branch: what the shard
tests split and the reporter tests print."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.conversations import A0, B0, C0, LEGACY0, A, B, C
from tests.helpers.git import LEGACY, GitRepo, delta, isolate_git
from tests.helpers.sums import sums
from tests.helpers.working_state import COMPACTED, CP2, WS, version

ORIGINAL = b"measured 2026-09-21\n"


def every_family_history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    """The history, in ``tmp_path/repo`` (git isolated, the working directory ``tmp_path``),
    tagged ``base`` at its first commit."""
    isolate_git(monkeypatch, tmp_path / "home")
    monkeypatch.chdir(tmp_path)
    r = GitRepo(tmp_path / "repo")
    r.commit(
        "base",
        {A: A0, B: B0, C: C0, LEGACY: LEGACY0, WS: COMPACTED, "README.md": "x\n",
         "data/raw.csv": ORIGINAL, "SHA256SUMS": sums((ORIGINAL, "data/raw.csv"))},
    )  # fmt: skip
    r.git("tag", "base")
    r.commit("A works", {A: delta(updated="2026-09-21T16:30:00+08:00")}, trailers=[A])
    r.commit("drop B", delete=[B])  # DL206
    r.commit("readme", {"README.md": "y\n"})
    r.commit("boundary moved", {WS: version(checkpoint_id=CP2, prune_safe_through_seq=110)})
    r.git("checkout", "-q", "-b", "side")
    r.commit("C works", {C: delta("2026-09-21T18:00:00+08:00", "2026-09-21T19:00:00+08:00",
                                  "claude")}, trailers=[C])  # fmt: skip
    r.commit("A and C", {A: delta(updated="2026-09-21T16:40:00+08:00"),
                         C: delta("2026-09-21T18:00:00+08:00", "2026-09-21T19:30:00+08:00",
                                  "claude")})  # fmt: skip  # DL202
    r.git("checkout", "-q", "main")
    r.commit("readme again", {"README.md": "z\n"})
    r.git("merge", "-q", "--no-ff", "-m", "merge side", "side")
    r.commit("re-measure", {"data/raw.csv": b"measured again\n"})  # PV203: pinned at base
    r.commit("legacy", {LEGACY: LEGACY0.replace("2026-09-21", "2026-09-22")})  # DL209
    r.commit("A goes back", {A: delta(updated="2026-09-21T16:00:00+08:00")}, trailers=[A])
    r.commit("readme last", {"README.md": "w\n"})
    return r
