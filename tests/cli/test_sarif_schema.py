"""The SARIF schema check the tests apply to every SARIF document can fail, and does, on what
the reporter must never write."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from continuity_checks.cli import main
from tests.helpers.sarif import assert_valid_sarif


def test_a_result_without_a_message_is_rejected() -> None:
    document = {
        "version": "2.1.0",
        "runs": [{"tool": {"driver": {"name": "x"}}, "results": [{"ruleId": "DL101"}]}],
    }
    with pytest.raises(AssertionError, match="message"):
        assert_valid_sarif(document)


def test_a_wrong_version_is_rejected() -> None:
    with pytest.raises(AssertionError, match="version"):
        assert_valid_sarif({"version": "2.0.0", "runs": []})


def test_the_reporter_is_checked_as_it_renders(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The autouse fixture validates what the reporter renders: a reporter that writes a level
    SARIF does not know fails the run's test."""
    from continuity_checks.report import sarif_format

    delta = tmp_path / ".deltalayer" / "changes" / "2026-09-21T16-20-00p08-00--agent.json"
    delta.parent.mkdir(parents=True)
    delta.write_text("{}", encoding="utf-8")
    real_result = sarif_format._result

    def bad_level(*args: Any, **kwargs: Any) -> dict[str, Any]:
        return {**real_result(*args, **kwargs), "level": "fatal"}

    monkeypatch.setattr(sarif_format, "_result", bad_level)
    with pytest.raises(AssertionError, match="fatal"):
        main(["check", "--all", "--root", str(tmp_path), "--format", "sarif"])
