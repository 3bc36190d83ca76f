"""The work tree's discovery walk: every file under a directory, as a stream in sorted order,
and the paths the command line names, made root-relative."""

from __future__ import annotations

import os
from collections.abc import Collection, Iterator
from pathlib import Path

from continuity_checks.core import core_rules as cc
from continuity_checks.core.findings import Finding
from continuity_checks.core.globs import Globs
from continuity_checks.core.skipped_dirs import SKIP_DIRS


def walk(
    root: Path,
    exclude: Globs,
    under: str = "",
    unlisted: list[Finding] | None = None,
    prune: Collection[str] = (),
) -> Iterator[str]:
    """Every file under ``root/under`` as a root-relative ``/`` path, as a stream in sorted
    order (the order of ``sorted()`` over all of them): inside a directory, files sort by their
    name and subdirectories by their name and a ``/``, so the depth-first order is the global
    order (every path under ``d/`` sorts between the same two neighbours of ``d/``). Only the
    listings of the directories on the way down are held. Symlinked directories are not
    followed, so nothing outside the root is reached; subdirectories named in ``prune``
    (root-relative) and those of :data:`~continuity_checks.core.skipped_dirs.SKIP_DIRS` are not
    entered. A directory that cannot be listed is a CC001 finding in ``unlisted``, never a
    silent gap."""
    lister = _Lister(root, exclude, unlisted, prune)
    start = os.path.join(root, under) if under else str(root)
    rel = os.path.relpath(start, root).replace(os.sep, "/")
    top = "" if rel == "." else rel + "/"
    names = lister.listing(start, top)
    if names is None:
        return
    stack: list[tuple[str, str, Iterator[str]]] = [(start, top, iter(names))]
    while stack:
        directory, prefix, entries = stack[-1]
        for name in entries:
            if name[-1] != "/":
                yield prefix + name
                continue
            inner = os.path.join(directory, name[:-1])
            found = lister.listing(inner, prefix + name)
            if found:
                stack.append((inner, prefix + name, iter(found)))
                break
        else:
            stack.pop()


class _Lister:
    """Lists the directories of one walk: what it leaves out, and where it reports a directory
    that cannot be listed."""

    def __init__(
        self, root: Path, exclude: Globs, unlisted: list[Finding] | None, prune: Collection[str]
    ) -> None:
        self.root = root
        self.exclude = exclude
        self.unlisted = unlisted
        self.prune = prune

    def listing(self, directory: str, prefix: str) -> list[str] | None:
        """The names to visit in ``directory``, sorted; a subdirectory's with a ``/``."""
        exclude, prune = self.exclude, self.prune
        excluding = bool(exclude)
        names: list[str] = []
        try:
            with os.scandir(directory) as entries:
                for entry in entries:
                    name = entry.name
                    try:
                        is_dir = entry.is_dir()
                    except OSError:
                        is_dir = False
                    if not is_dir:
                        if not (excluding and exclude.match(prefix + name)):
                            names.append(name)
                        continue
                    try:
                        if entry.is_symlink():
                            continue
                    except OSError:
                        pass  # listed as a directory: its own listing says what is wrong
                    path = prefix + name
                    if name in SKIP_DIRS or exclude.match(path) or path in prune:
                        continue
                    names.append(name + "/")
        except OSError as error:
            # as os.walk: a directory that fails part-way is left out whole
            self.cannot_list(error)
            return None
        names.sort()
        return names

    def cannot_list(self, error: OSError) -> None:
        """CC001 for a directory the walk cannot list, when the walk reports them."""
        if self.unlisted is not None and error.filename is not None:
            rel = os.path.relpath(error.filename, self.root).replace(os.sep, "/")
            self.unlisted.append(
                cc.UNREADABLE.finding(
                    rel, f"expected a directory to check, cannot list it: {error.strerror}"
                )
            )


def relative(root: Path, given: str) -> str | None:
    """``given`` (relative to the working directory, or absolute) as a root-relative ``/`` path
    (``""`` for the root itself), or ``None`` when it lies outside the root."""
    absolute = Path(os.path.abspath(given))
    try:
        rel = absolute.relative_to(root).as_posix()
    except ValueError:
        return None
    return "" if rel == "." else rel
