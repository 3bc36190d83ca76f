"""The blobs a walk reads by id, and CC008 for those over ``limits.max-file-bytes``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from continuity_checks.core import core_rules as cc
from continuity_checks.core.findings import Finding

if TYPE_CHECKING:
    from continuity_checks.core.git import RawChange, Repository


class Blobs:
    """Reads the blobs of one walk by id (:meth:`read`: None for a version larger than
    ``limit``, which is not read into memory), and reports each such blob a family asked for,
    once per run (:meth:`oversized`)."""

    def __init__(self, repo: Repository, limit: int) -> None:
        self._repo = repo
        self._limit = limit
        self._too_large: list[str] = []  # asked for since the last oversized() or forget()
        self._reported: set[str] = set()

    def read(self, sha: str) -> bytes | None:
        data = self._repo.read_blob(sha)
        if data is None:
            self._too_large.append(sha)
        return data

    def oversized(self, changes: Sequence[RawChange], commit: str) -> list[Finding]:
        """CC008 for each blob over the limit asked for since the last call (or
        :meth:`forget`) and not reported before, at the path of ``changes`` that holds it;
        they are then forgotten."""
        if not self._too_large:
            return []
        sizes = self._repo.oversized
        findings = []
        for sha in dict.fromkeys(self._too_large):
            if sha in self._reported:
                continue
            self._reported.add(sha)
            for c in changes:
                if sha in (c.old_blob, c.new_blob):
                    version = "new" if sha == c.new_blob else "old"
                    findings.append(
                        cc.TOO_LARGE.finding(
                            c.path,
                            f"expected at most {self._limit} bytes, found {sizes[sha]} "
                            f"in the {version} version (not read)",
                            commit=commit,
                        )
                    )
                    break
        self._too_large.clear()
        return findings

    def forget(self) -> None:
        """The blobs over the limit asked for so far are not to be reported (whoever read
        them reported them, or they are another run's to report)."""
        self._too_large.clear()
