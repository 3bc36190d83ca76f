"""``verify --shard K/N``: which commits of a range the K-th of N parallel jobs checks.

The range's commits are numbered in the order the walk gives them (oldest first, parents before
children: ``git rev-list --reverse --topo-order``); shard K of N takes the K-th of N contiguous
slices, as even as whole commits allow. The same range gives every job the same numbering, so
the N slices cover it exactly, each commit once.
"""

from __future__ import annotations

import re

from continuity_checks.core.frozen import Frozen

_SPEC = re.compile(r"([1-9][0-9]{0,5})/([1-9][0-9]{0,5})")


class ShardError(ValueError):
    """A ``--shard`` value that is not ``K/N`` with 1 <= K <= N."""


class Shard(Frozen):
    """The K-th (``index``, from 1) of ``count`` slices of a range."""

    _fields = ("index", "count")
    __slots__ = _fields
    index: int
    count: int

    def __init__(self, index: int, count: int) -> None:
        self._set(index, count)

    @classmethod
    def parse(cls, spec: str) -> Shard:
        match = _SPEC.fullmatch(spec.strip())
        if match is None:
            raise ShardError(f"expected K/N (e.g. 2/4), found {spec!r}")
        index, count = int(match[1]), int(match[2])
        if index > count:
            raise ShardError(f"expected K from 1 to N, found {spec!r}")
        return cls(index, count)

    def bounds(self, total: int) -> tuple[int, int]:
        """``start, end``: this shard holds commits ``start <= i < end`` of ``total``."""
        return (self.index - 1) * total // self.count, self.index * total // self.count

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"
