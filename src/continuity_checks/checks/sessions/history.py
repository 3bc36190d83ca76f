"""History checks (``continuity verify``): placeholder, filled in below."""

from __future__ import annotations

from collections.abc import Iterable

from continuity_checks.core.family import CommitContext
from continuity_checks.core.findings import Finding


class History:
    def __init__(self, max_depth: int) -> None:
        self.max_depth = max_depth

    def check_commit(self, context: CommitContext) -> Iterable[Finding]:
        return []
