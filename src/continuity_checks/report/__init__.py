"""Reporters: one module per output format, each ``render(report) -> str``."""

from __future__ import annotations

import importlib

from continuity_checks.core.findings import Report

FORMATS = ("text", "json", "sarif", "github")


def render(report: Report, fmt: str, *, color: bool = False) -> str:
    module = importlib.import_module(f"continuity_checks.report.{fmt}_format")
    text: str = module.render(report, color=color)
    return text
