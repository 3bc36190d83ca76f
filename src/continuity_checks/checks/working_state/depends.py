"""Which claimed files a change of a path can break without touching them (history mode).

What the working-state checks read besides a file's own bytes:

- A projection is compared with its canonical state, ``.dsh/project/WORKING_STATE.json`` under
  the projection's directory or the nearest parent that has one: a change of
  ``R/.dsh/project/WORKING_STATE.json`` (added, modified, deleted) can break every projection
  under ``R/`` that has no nearer one. The projections of the run are found once, in the first
  tree that needs them, and then from the changed paths themselves.
- Runtime files are reported once per runtime directory or ``tx-*`` journal, at its first
  file and with the number of files: a change of one can change the finding of all of them.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable

from continuity_checks.checks.working_state.settings import RUNTIME_KINDS, runtime_root
from continuity_checks.checks.working_state.state import FULL_STATE_PATH
from continuity_checks.core.skipped_dirs import SKIP_DIRS
from continuity_checks.core.snapshot import Snapshot


class Dependents:
    """The dependents of changed paths, for one run: ``claims`` is the family's, ``endings``
    the name endings every projection has (None when the globs do not say)."""

    def __init__(
        self, claims: Callable[[str], str | None], endings: tuple[str, ...] | None
    ) -> None:
        self.claims = claims
        self.endings = endings
        #: every projection path known to the run (None until a tree is first searched)
        self.projections: set[str] | None = None

    def __call__(self, path: str, tree: Snapshot) -> list[str]:
        kind = self.claims(path)
        if kind == "projection":
            if self.projections is not None:
                self.projections.add(path)
            return []
        if kind in RUNTIME_KINDS:
            return _runtime_group(path, tree, self.claims)
        if path == FULL_STATE_PATH or path.endswith("/" + FULL_STATE_PATH):
            return self._projections_of(path[: -len(FULL_STATE_PATH)], tree)
        return []

    def _projections_of(self, root: str, tree: Snapshot) -> list[str]:
        """The projections of ``tree`` whose canonical state is looked up at ``root``."""
        if self.projections is None:
            found = tree.find(SKIP_DIRS, self.endings)
            self.projections = {p for p in found if self.claims(p) == "projection"}
        return sorted(
            p
            for p in self.projections
            if p.startswith(root) and tree.exists(p) and _nearest(tree, p, root)
        )


def _nearest(tree: Snapshot, projection: str, root: str) -> bool:
    """Whether no directory between the projection's and ``root`` holds a canonical state."""
    directory = posixpath.dirname(projection)
    top = root.rstrip("/")
    while directory != top and directory:
        if tree.exists(posixpath.join(directory, FULL_STATE_PATH)):
            return False
        directory = posixpath.dirname(directory)
    return True


def _runtime_group(path: str, tree: Snapshot, claims: Callable[[str], str | None]) -> list[str]:
    """Every runtime file of ``tree`` in the runtime directory or journal of ``path``."""
    return [m for m in tree.files_under(runtime_root(path)) if claims(m) in RUNTIME_KINDS]
