"""What the commit being made holds, as the commit hook's file checks see the work tree."""

from __future__ import annotations

from collections.abc import Callable, Collection

#: How many answers :class:`Committed` keeps before it starts again.
KEPT = 256

UNTRACKED = (
    "not found in the commit being made: the work tree has it, but it is not staged (git add it, "
    "or the commit leaves it out)"
)


class Committed:
    """What the commit being made holds, for the commit hook's file checks (``check --staged``):
    pre-commit puts the work tree's tracked files back to their staged bytes before the hooks
    run, but leaves untracked files where they are. A family that reads a sibling (the capture a
    manifest pins, the PROJECT.md beside a delta store) must not find a file that the commit
    will not hold: judged with it, the commit passed without it.

    ``staged(path)`` tells whether the index holds the file ``path`` (None: it cannot tell).
    Files the run was given by name (``files``, and every file under ``directories``), git's
    own directories and directories are not hidden: only a file can be missing from a commit,
    and a directory's files are asked about when they are read."""

    def __init__(
        self,
        staged: Callable[[str], bool | None],
        files: Collection[str] = (),
        directories: Collection[str] = (),
    ) -> None:
        self._staged = staged
        self._files = frozenset(files)
        self._under = tuple(d.rstrip("/") + "/" for d in directories if d)
        self._everything = "" in directories
        self._known: dict[str, bool] = {}

    def hides(self, path: str) -> bool:
        """Whether the file ``path`` is in the work tree only (not staged)."""
        if (
            self._everything
            or path in self._files
            or path.startswith(self._under)
            or ".git" in path.split("/")
        ):
            return False
        known = self._known.get(path)
        if known is None:
            if len(self._known) >= KEPT:
                self._known.clear()
            known = self._known[path] = self._staged(path) is False
        return known
