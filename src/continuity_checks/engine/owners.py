"""Which families of a run claim a path, and as what."""

from __future__ import annotations

from collections.abc import Sequence

from continuity_checks.core.family import Family
from continuity_checks.core.globs import Globs

#: The families that claim a path: (index of the family in the run, kind) each.
Claimants = tuple[tuple[int, str], ...]

#: Paths whose answer is kept, at most: the answers are dropped all at once past it.
KEPT = 1 << 16


class Owners:
    """The families of a run that claim each path, none for a path the configuration excludes;
    asked of the families once per path (up to :data:`KEPT` paths), not once per commit."""

    def __init__(self, families: Sequence[Family], exclude: Globs) -> None:
        self._families = families
        self._exclude = exclude
        self._known: dict[str, list[tuple[int, str]]] = {}

    def of(self, path: str) -> list[tuple[int, str]]:
        """``(index of the family, kind)`` for each family that claims ``path``."""
        found = self._known.get(path)
        if found is None:
            found = []
            if not self._exclude.match(path):
                found = [
                    (index, kind)
                    for index, family in enumerate(self._families)
                    if (kind := family.claims(path)) is not None
                ]
            if len(self._known) >= KEPT:
                self._known.clear()
            self._known[path] = found
        return found
