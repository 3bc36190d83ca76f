"""The SHA-256 of several files of one snapshot, on hashing's thread pool
(:func:`~continuity_checks.core.hashing.sha256_many`)."""

from __future__ import annotations

from collections.abc import Sequence

from continuity_checks.core import hashing
from continuity_checks.core.snapshot import Snapshot, Unreadable


class _Failed(Exception):
    def __init__(self, unreadable: Unreadable) -> None:
        super().__init__(unreadable.message)
        self.unreadable = unreadable


def sha256_all(
    snapshot: Snapshot, paths: Sequence[str], *, workers: int | None = None
) -> list[hashing.Digest | Unreadable]:
    """``snapshot.sha256`` of each root-relative path, in input order, on ``workers`` threads
    as :func:`~continuity_checks.core.hashing.sha256_many` decides them (``None``: only where
    that pays). A file the snapshot cannot hash is its :class:`Unreadable`; any other
    exception is raised."""

    def hash_one(path: str, buffer: bytearray) -> hashing.Digest:
        # a snapshot streams through a buffer of its own; ours goes unused
        found = snapshot.sha256(path)
        if isinstance(found, Unreadable):
            raise _Failed(found)
        return found

    results: list[hashing.Digest | Unreadable] = []
    for result in hashing.sha256_many(paths, hash_one, workers=workers, buffer_size=1):
        if isinstance(result, _Failed):
            results.append(result.unreadable)
        elif isinstance(result, Exception):  # a bug, not a file problem: do not hide it
            raise result
        else:
            results.append(result)
    return results
