"""The options the provenance history checks read, built once by the family from the
configuration.

The family module imports this and not ``history``: the commit hook builds every family to
route the staged paths, and most commits touch no listing.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class HistoryOptions:
    """What the history checks (``history``) read."""

    #: ``provenance.relative-to``: what a sums file's paths are relative to (``root`` or
    #: ``sums-file``)
    relative_to: str
    #: ``limits.max-depth``, for parsing each manifest
    max_depth: int
