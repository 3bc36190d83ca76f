"""Reporters: one module per output format, each ``render(report) -> str``."""

from __future__ import annotations

import importlib

from continuity_checks.core.findings import Report

FORMATS = ("text", "json", "sarif", "github")


def render(report: Report, fmt: str, *, color: bool = False, quiet: bool = False) -> str:
    """``report`` in ``fmt``. ``quiet`` leaves only the errors in the text format; the other
    formats are documents for programs, whole whatever a person asked to see."""
    module = importlib.import_module(f"continuity_checks.report.{fmt}_format")
    if fmt == "text":
        text: str = module.render(report, color=color, quiet=quiet)
    else:
        text = module.render(report, color=color)
    return text
