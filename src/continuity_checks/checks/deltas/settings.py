"""The options the deltas history checks read, built once by the family from the configuration.

The family module imports this and not ``history``: file mode and most commit hooks never run
the history checks.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class OwnerOptions:
    """What ownership by identity (DL211, :mod:`.owners`) reads."""

    #: the commit field whose value owns a delta (``author_email`` or ``committer_email``)
    field: str
    #: identities that may change any delta, in their compared form (``owners.normal``)
    allowed: frozenset[str]
    #: ``deltas.allow-delete``: a deletion is a change by its author
    allow_delete: bool


@dataclass(frozen=True)
class HistoryOptions:
    """What the history checks of :mod:`.history` read."""

    #: ``deltas.ownership``: ``trailer-or-single``, ``trailer`` or ``off``
    ownership: str
    #: ``deltas.legacy``: ``read-only`` or ``append-only``
    legacy_mode: str
    #: ``deltas.allow-delete``: deleting a delta is no finding, and a re-added one is new
    allow_delete: bool
    #: ``limits.max-depth``, for parsing each version
    max_depth: int
    #: ownership by identity (DL211); None when it is off (also with ``ownership = "off"``)
    owners: OwnerOptions | None
