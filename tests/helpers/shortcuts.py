"""The shortcuts of the state a commit leaves, turned off (:func:`without_shortcuts`), and a
report made both ways (:func:`both_ways`): what the tests that hold them to the work they
replace share."""

from __future__ import annotations

import contextlib
import io
import json
from typing import Any

import pytest

from continuity_checks.checks.captures.family import CapturesFamily
from continuity_checks.checks.deltas.family import DeltasFamily
from continuity_checks.checks.provenance.family import ProvenanceFamily
from continuity_checks.checks.sessions.family import SessionsFamily
from continuity_checks.checks.working_state.family import WorkingStateFamily
from continuity_checks.cli import main
from continuity_checks.engine.commit_state import CommitState


def run_cli(*args: str) -> tuple[int, dict[str, Any], str]:
    """``continuity <args> --format json`` in this process: exit code, report, standard error."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([*args, "--format", "json"])
    text = out.getvalue()
    assert code in (0, 1), f"continuity {' '.join(args)}: exit {code}\n{err.getvalue()}"
    return code, json.loads(text), err.getvalue()


FAMILIES = (DeltasFamily, WorkingStateFamily, CapturesFamily, SessionsFamily, ProvenanceFamily)


def without_shortcuts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every family's tree check fed every item, every every-commit family called, every
    family asked for the dependents of every changed path as if told one tree alone, and no
    commit judged by its file checks alone."""
    monkeypatch.setattr(DeltasFamily, "tree_reads_bytes", lambda self: True)
    monkeypatch.setattr(CommitState, "_rewritten", lambda self, tree, other, changes, named: None)
    monkeypatch.setattr(DeltasFamily, "tree_may_find", lambda self, path, kind, tree: True)
    monkeypatch.setattr(
        DeltasFamily,
        "dependents_between",
        lambda self, path, tree, other, edited: self.dependents(path, tree, edited),
    )
    for family in FAMILIES:
        monkeypatch.setattr(family, "commit_needed", lambda self, commit, paths, linked: True)
        monkeypatch.setattr(family, "may_depend", lambda self, path, edited: True)


def both_ways(monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[str, str]:
    """The JSON report of ``continuity <args>`` with the shortcuts, and without them."""
    fast = run_cli(*args)[1]
    with monkeypatch.context() as slow:
        without_shortcuts(slow)
        slow_report = run_cli(*args)[1]
    return json.dumps(fast), json.dumps(slow_report)


def rules(report: str) -> set[str]:
    return {f["rule"] for f in json.loads(report)["findings"]}
