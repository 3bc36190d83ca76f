"""A few hundred inputs of the fuzz session (``nox -s fuzz`` runs 100,000 per family), and proof
that its oracles can fail: a checker that stops checking is caught as silent passes, one that
raises as tracebacks, one that never ends as hangs."""

from __future__ import annotations

from pathlib import Path

import pytest

from continuity_checks.checks.deltas import family as deltas_family
from tests.conftest import CORPUS
from tests.fuzz.families import FAMILIES
from tests.fuzz.runner import Rates, Task


def task(name: str, tmp_path: Path, rates: Rates, timeout: float = 30.0) -> Task:
    return Task(
        FAMILIES[name], tmp_path / name, CORPUS, seed=7, timeout=timeout, rates=rates,
        failures_dir=None,
    )  # fmt: skip


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_sixty_inputs_per_family_find_nothing(name: str, tmp_path: Path) -> None:
    tally = task(name, tmp_path, Rates(history=0.02, config=0.1, cli=0.0)).run(0, 60)
    assert tally.inputs == 60 and tally.invalid_inputs > 0 and tally.kinds["config"] > 0
    assert (tally.tracebacks, tally.hangs, tally.silent_passes) == (0, 0, 0), tally.failures


def test_a_checker_that_stops_checking_is_caught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fuzz = task("deltas", tmp_path, Rates(history=0.0, config=0.0, cli=0.0, invalid=1.0))
    monkeypatch.setattr(deltas_family.DeltasFamily, "check_file", lambda self, file: [])
    tally = fuzz.run(0, 40)
    assert tally.silent_passes > 10
    assert all(f["kind"] == "silent_passes" for f in tally.failures)


def test_a_checker_that_raises_is_counted_as_tracebacks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(self: object, file: object) -> list[object]:
        raise KeyError("a bug")

    fuzz = task("deltas", tmp_path, Rates(history=0.0, config=0.0, cli=0.0))
    monkeypatch.setattr(deltas_family.DeltasFamily, "check_file", broken)
    tally = fuzz.run(0, 5)
    assert tally.tracebacks == 5 and tally.hangs == 0
    assert all("KeyError: 'a bug'" in f["detail"] for f in tally.failures)


def test_a_checker_that_never_ends_is_counted_as_hangs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def spinning(self: object, file: object) -> list[object]:
        while True:
            pass

    fuzz = task("deltas", tmp_path, Rates(history=0.0, config=0.0, cli=0.0), timeout=0.2)
    monkeypatch.setattr(deltas_family.DeltasFamily, "check_file", spinning)
    tally = fuzz.run(0, 2)
    assert tally.hangs == 2 and tally.tracebacks == 0
