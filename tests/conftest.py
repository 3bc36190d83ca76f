"""Shared helpers: write a project layout, run the real CLI, read its JSON report."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from continuity_checks.cli import main
from continuity_checks.report import sarif_format
from tests.helpers.sarif import assert_valid_sarif

# No wall-time limits in tests: hypothesis's per-example deadline (200 ms) and its "too slow"
# health check fail on a loaded machine, not on a wrong result.
settings.register_profile("continuity", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("continuity")

# the `root` and `cli` fixtures of the `continuity delta` tests, and `repo` (an empty git repository)
pytest_plugins = ("tests.helpers.delta_cli", "tests.helpers.git")

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
CORPUS = SHARED / "corpus"
EXAMPLES = REPO / "examples"


class Symlink(str):
    """A tree entry for :func:`write_tree` that is a symlink to this text (relative to the
    link's directory), not a file holding it."""


def write_tree(root: Path, files: Mapping[str, bytes | str]) -> Path:
    for rel, content in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, Symlink):
            target.symlink_to(str(content))
            continue
        target.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return root


RunCLI = Callable[..., tuple[int, dict[str, Any]]]


@pytest.fixture
def run_json(capsys: pytest.CaptureFixture[str]) -> RunCLI:
    """Run ``continuity <args> --format json``; return the exit code and the parsed report."""

    def run(*args: str) -> tuple[int, dict[str, Any]]:
        capsys.readouterr()
        code = main([*args, "--format", "json"])
        out = capsys.readouterr().out
        return code, json.loads(out)

    return run


def rules_of(report: dict[str, Any]) -> list[tuple[str, str, int | None]]:
    return [(f["rule"], f["path"], f["line"]) for f in report["findings"]]


@pytest.fixture(autouse=True)
def sarif_is_valid(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every SARIF document a test makes in process is validated against the SARIF 2.1.0
    schema as it is rendered (tests that run the CLI in a subprocess validate what it wrote)."""
    render = sarif_format.render

    def validated(*args: Any, **kwargs: Any) -> str:
        text = render(*args, **kwargs)
        assert_valid_sarif(text)
        return text

    monkeypatch.setattr(sarif_format, "render", validated)
