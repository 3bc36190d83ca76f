"""File mode's discovery: every file under a directory, as a stream in sorted order (the work
tree's walk); the sources a run is given (directories to walk, files named on the command
line, by the commit being made, on standard input) made into the stream of claimed files, each
once, with the families that claim it and judge it; paths named made root-relative."""

from __future__ import annotations

import operator
import os
from collections.abc import Collection, Iterable, Iterator, Sequence
from pathlib import Path

from continuity_checks.core import core_rules as cc
from continuity_checks.core.family import Family, Names
from continuity_checks.core.findings import Finding
from continuity_checks.core.globs import Globs
from continuity_checks.core.skipped_dirs import SKIP_DIRS
from continuity_checks.core.snapshot import Snapshot
from continuity_checks.engine import territory
from continuity_checks.engine.router import Claimants

#: A claimed path and the families that claim it and judge it.
Item = tuple[str, Claimants]
#: A source of a run: a root-relative path, and whether it is a directory to walk.
Source = tuple[str, bool]


def walk(
    root: Path,
    exclude: Globs,
    under: str = "",
    unlisted: list[Finding] | None = None,
    prune: Collection[str] = (),
    backlog: Backlog | None = None,
) -> Iterator[str]:
    """Every file under ``root/under`` as a root-relative ``/`` path, as a stream in sorted
    order (the order of ``sorted()`` over all of them): inside a directory, files sort by their
    name and subdirectories by their name and a ``/``, so the depth-first order is the global
    order (every path under ``d/`` sorts between the same two neighbours of ``d/``). Only the
    listings of the directories on the way down are held. Symlinked directories are not
    followed, so nothing outside the root is reached; subdirectories named in ``prune``
    (root-relative) and those of :data:`~continuity_checks.core.skipped_dirs.SKIP_DIRS` are not
    entered. A directory that cannot be listed is a CC001 finding in ``unlisted``, never a
    silent gap. ``backlog`` is kept pointing at the listing of the directory being walked."""
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
        if backlog is not None:
            backlog.entries = entries
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


class Backlog:
    """The names of the directory a walk is in that it has not handed on yet: a sign, before
    the files are met, that many are to come (a bound from above of the claimed files among
    them: not every name is claimed, a subdirectory counts as one)."""

    __slots__ = ("entries",)

    def __init__(self) -> None:
        self.entries: Iterator[str] = iter(())

    def listed(self) -> int:
        """The names of the current directory's listing not yet handed on."""
        return operator.length_hint(self.entries)


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


def sources(
    under: Sequence[str],
    paths: Sequence[str],
    exclude: Globs,
    snapshot: Snapshot,
    families: Sequence[Family],
    unchecked: territory.Unchecked,
) -> list[Source]:
    """The sources in order: the directories ``under`` (``--all``'s), then ``paths``, where a
    directory no family claims stands for the files under it. A path the configuration
    excludes (a file or a whole directory) is named in a note, not walked."""
    found: list[Source] = [(directory, True) for directory in under]
    for path in paths:
        if exclude.match(path):
            unchecked.add(territory.EXCLUDED, path)
        elif snapshot.is_dir(path) and not any(f.claims(path) for f in families):
            found.append((path, True))
        else:
            found.append((path, False))
    return found


def claimed(
    root: Path,
    sources: Sequence[Source],
    families: Sequence[Family],
    exclude: Globs,
    unlisted: list[Finding],
    unchecked: territory.Unchecked,
    backlog: Backlog | None = None,
) -> Iterator[Item]:
    """The claimed files of ``sources`` (in order), each once and with the families that claim
    it and judge it, at its first place among the sources. Without a set of all paths: a file
    named on its own comes where a walk meets it or at its own place in the sources, whichever
    is first, a directory walked is not walked again, and a walk does not enter a directory
    that is a source of its own. What is not checked goes to ``unchecked``: files named that no
    family claims, files walked in a family's territory. A directory that cannot be listed is
    a finding in ``unlisted``. ``backlog`` follows the directory being walked
    (:class:`Backlog`)."""
    explicit = frozenset(path for path, is_dir in sources if not is_dir)
    roots = frozenset(path for path, is_dir in sources if is_dir)

    claimants = DirectoryClaims(families)
    # sources handled, and files named on their own that a walk met: as many as were given
    done: set[str] = set()
    for source, is_dir in sources:
        if source in done:
            continue
        done.add(source)
        paths: Iterable[str] = (
            (source,) if not is_dir else walk(root, exclude, source, unlisted, roots, backlog)
        )
        for path in paths:
            if is_dir and explicit and path in explicit:  # (an empty set hashes the path too)
                # where the walk meets it (its first place among the sources, as before the
                # stream): a node file of a session must come before the session's last, or
                # its findings are held for a judgment that was made already (and standard
                # input's bytes for it would be read from disk instead)
                if path in done:
                    continue
                done.add(path)
            found = claimants.of(path)
            if not found:
                if is_dir and path not in explicit:
                    unchecked.walked(path)
                else:
                    unchecked.named(path)
            elif found := unchecked.judged(path, found):
                yield path, found


#: What any name may be (``Family.claimable`` None): every name ends with ``""``.
_ANY = Names(frozenset(), ("",))
#: Answers by the end of a name kept for one directory, at most: dropped all at once past it.
TAILS_KEPT = 4096


class DirectoryClaims:
    """The families that claim each path (``Family.claims``), asked only where the path's name
    is one its family may claim in the path's directory (``Family.claimable``). The families'
    answers for one directory are kept while its files stream by, and which families may
    claim a name by its ending is kept by the name's last characters (as many as the longest
    ending: names that end alike end with the same endings)."""

    def __init__(self, families: Sequence[Family]) -> None:
        self.families = families
        self.directory: str | None = None
        self.claimable: list[tuple[int, Family, Names]] = []  # of those that may claim any
        self.names: frozenset[str] = frozenset()  # every name a family may claim here
        self.longest = 0  # the longest ending a family may claim here
        self.by_tail: dict[str, tuple[tuple[int, Family], ...]] = {}
        # the claimants of a path one family alone claims, one tuple for each of its kinds: a
        # batch of a kind's files for a worker pickles it once
        self.alone: list[dict[str, Claimants]] = [{} for _ in families]

    def of(self, path: str) -> Claimants:
        """``(index of the family, kind)`` for each family that claims ``path``."""
        directory, _, name = path.rpartition("/")
        if directory != self.directory:
            self.enter(directory)
        if self.names and name in self.names:  # (as above: no hash of the name for none)
            asked = self.may_claim(name, name)
        else:
            tail = name[-self.longest :] if self.longest else ""
            found = self.by_tail.get(tail)
            if found is None:
                if len(self.by_tail) >= TAILS_KEPT:
                    self.by_tail.clear()
                found = self.by_tail[tail] = self.may_claim("", tail)
            asked = found
        if len(asked) == 1:  # one family may claim the name (in one family's store, all)
            index, family = asked[0]
            kind = family.claims(path)
            if kind is None:
                return ()
            alone = self.alone[index]
            shared = alone.get(kind)
            if shared is None:
                shared = alone[kind] = ((index, kind),)
            return shared
        claimants = []
        for index, family in asked:
            kind = family.claims(path)
            if kind is not None:
                claimants.append((index, kind))
        return tuple(claimants)

    def may_claim(self, name: str, tail: str) -> tuple[tuple[int, Family], ...]:
        """The families that may claim the name ``name`` or a name ending with ``tail``."""
        return tuple(
            (index, family)
            for index, family, (names, endings) in self.claimable
            if name in names or tail.endswith(endings)
        )

    def enter(self, directory: str) -> None:
        """Asks each family which names it may claim in ``directory``."""
        self.directory = directory
        self.claimable = []
        for index, family in enumerate(self.families):
            names = family.claimable(directory) or _ANY
            if names.names or names.endings:
                self.claimable.append((index, family, names))
        self.names = frozenset().union(*(names for *_, (names, _) in self.claimable))
        endings = [e for *_, (_, endings) in self.claimable for e in endings]
        self.longest = max(map(len, endings), default=0)
        self.by_tail = {}
