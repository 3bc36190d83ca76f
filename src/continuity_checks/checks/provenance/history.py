"""History checks for provenance (``continuity verify``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from continuity_checks.core.family import CommitContext
from continuity_checks.core.findings import Finding

if TYPE_CHECKING:
    from continuity_checks.checks.provenance.family import ProvenanceFamily


def check_commit(family: ProvenanceFamily, context: CommitContext) -> list[Finding]:
    return []
