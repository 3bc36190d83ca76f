"""History checks for deltas (``continuity verify``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from continuity_checks.core.family import CommitContext
from continuity_checks.core.findings import Finding

if TYPE_CHECKING:
    from continuity_checks.checks.deltas import DeltasFamily


def check_commit(family: DeltasFamily, context: CommitContext) -> Iterable[Finding]:
    return []
