"""What one commit tree's look-ups can take from another's: :class:`Known` carries what a
commit's tree answered to its child's (a walk), :class:`Alike` shares what a commit's tree and
its parent's answer alike (the two trees one commit is judged by)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from continuity_checks.core.snapshot import Unreadable

_SYMLINK = "120000"
_TREE = "040000"


class Known:
    """What :meth:`CommitTree.exists` and the look-up of a file's blob answered in the tree of
    the commit a walk is at, carried to the next commit's tree when that commit is its child,
    less the paths the child changes: a look-up a walk repeats at every commit (a project's
    PROJECT.md and AGENTS.md, a delta's twin) is asked of git once. A path that is, or was, a
    symlink takes every answer below it along.

    A directory where the trees of :data:`LIST_AFTER` commits of the walk asked git for a name
    is listed (``name -> mode``, read once from its tree) and the listing carried with each
    commit's changes, so that a look-up there of a name never asked before (each added
    delta's twin) asks git nothing."""

    #: the commits whose trees asked git for a name in a directory before the walk lists it
    LIST_AFTER = 2

    def __init__(self) -> None:
        self.at: str | None = None
        self.answers: dict[str, bool] = {}
        self.blobs: dict[str, tuple[str, str] | Unreadable] = {}
        self.dirs: dict[str, bool] = {}
        #: each listed directory (reached without a symlink) -> its entries' names -> modes
        self.listings: dict[str, dict[str, str]] = {}
        #: by directory: how many commits' trees asked git for a name there, and the last one
        self.misses: dict[str, tuple[int, str | None]] = {}

    def before(self, parent: str | None, directories: Iterable[str]) -> Known | None:
        """What these answers say of ``directories`` (whether each is a directory), for
        ``parent``'s tree when they are its; None when they are not."""
        if parent is None or parent != self.at:
            return None
        known = Known()
        known.at = parent
        dirs = self.dirs
        for directory in directories:
            if directory in dirs:
                known.dirs[directory] = dirs[directory]
        return known

    def after(
        self, commit: str, parent: str | None, changes: Iterable[tuple[str, str, str]]
    ) -> Known:
        """These answers, made ``commit``'s: its ``changes`` (``(path, old mode, new mode)``)
        against ``parent`` taken out, or all of them when they were not ``parent``'s."""
        if parent is None or parent != self.at:
            self.answers, self.blobs, self.dirs, self.listings = {}, {}, {}, {}
        else:
            if self.listings:
                self._relist(changes)
            answers, blobs, dirs = self.answers, self.blobs, self.dirs
            for path, old_mode, new_mode in changes:
                answers.pop(path, None)
                blobs.pop(path, None)
                dirs.pop(path, None)
                if old_mode and new_mode:
                    if old_mode != _SYMLINK and new_mode != _SYMLINK:
                        continue  # the common change: a file's bytes or its mode rewritten
                else:
                    # a directory comes and goes with what is added to it or deleted from it
                    directory = path.rpartition("/")[0]
                    while directory:
                        answers.pop(directory, None)
                        blobs.pop(directory, None)
                        dirs.pop(directory, None)
                        directory = directory.rpartition("/")[0]
                if _SYMLINK in (old_mode, new_mode):
                    below = f"{path}/"
                    for kept in (answers, blobs, dirs):
                        for key in [k for k in kept if k.startswith(below)]:
                            del kept[key]
        self.at = commit
        return self

    def _relist(self, changes: Iterable[tuple[str, str, str]]) -> None:
        """The listings made the child's by its changes: a name added, rewritten or deleted in
        a listed directory; a subdirectory that an addition below it makes. A listing is
        dropped where a deletion below it may empty a subdirectory. (A directory replaced by a
        file or a symlink has each of its files deleted: its listing is then empty or gone,
        and it is asked only where the directory is one again.)"""
        listings = self.listings
        for path, old_mode, new_mode in changes:
            directory, _, name = path.rpartition("/")
            listing = listings.get(directory)
            if listing is not None:
                if new_mode:
                    listing[name] = new_mode
                else:
                    listing.pop(name, None)
            if old_mode and new_mode:
                continue  # a file rewritten: no directory made or emptied
            while directory:  # the listed directories above: one of their subdirectories
                directory, _, name = directory.rpartition("/")
                listing = listings.get(directory)
                if listing is None:
                    continue
                if not new_mode:
                    del listings[directory]
                elif not old_mode:
                    listing[name] = _TREE


class Alike:
    """The existence look-ups a tree and its parent's answer alike, given what the commit
    changed between them (``(path, old mode, new mode)``): a path that is not changed, holds
    no changed path and lies under none (a symlink or file replaced there changes what is
    below it) is answered once, by whichever tree is asked first. Only answers found without a
    symlink on the way are shared (one through a symlink changes with what it leads to)."""

    def __init__(self, changes: Iterable[tuple[str, str, str]]) -> None:
        self._changes = tuple(changes)
        self._changed: set[str] | None = None  # made at the first question: most commits ask none
        self._holding: set[str] = set()  # the directories that hold a changed path
        self.answers: dict[str, bool] = {}

    def untouched(self, path: str) -> bool:
        """Whether the commit leaves ``path`` and everything on the way to it as they were."""
        changed, holding = self._changed, self._holding
        if changed is None:
            changed = self._changed = set()
            for changed_path, _, _ in self._changes:
                changed.add(changed_path)
                directory = changed_path.rpartition("/")[0]
                while directory and directory not in holding:
                    holding.add(directory)
                    directory = directory.rpartition("/")[0]
        if path in changed or path in holding:
            return False
        directory = path.rpartition("/")[0]
        while directory:
            if directory in changed:
                return False
            directory = directory.rpartition("/")[0]
        return True
