"""File mode's sources and the stream of claimed files they make: directories to walk and
files named (on the command line, by the commit being made, on standard input), each claimed
file once, with the families that claim it and judge it."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from continuity_checks.core.family import Family
from continuity_checks.core.findings import Finding
from continuity_checks.core.globs import Globs
from continuity_checks.core.snapshot import Snapshot
from continuity_checks.engine import territory
from continuity_checks.engine.pipeline import Item
from continuity_checks.engine.walk import walk

#: A source of a run: a root-relative path, and whether it is a directory to walk.
Source = tuple[str, bool]


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
) -> Iterator[Item]:
    """The claimed files of ``sources`` (in order), each once and with the families that claim
    it and judge it, at its first place among the sources. Without a set of all paths: a file
    named on its own comes where a walk meets it or at its own place in the sources, whichever
    is first, a directory walked is not walked again, and a walk does not enter a directory
    that is a source of its own. What is not checked goes to ``unchecked``: files named that no
    family claims, files walked in a family's territory. A directory that cannot be listed is
    a finding in ``unlisted``."""
    explicit = frozenset(path for path, is_dir in sources if not is_dir)
    roots = frozenset(path for path, is_dir in sources if is_dir)

    numbered = tuple(enumerate(families))
    # sources handled, and files named on their own that a walk met: as many as were given
    done: set[str] = set()
    for source, is_dir in sources:
        if source in done:
            continue
        done.add(source)
        paths: Iterable[str] = (
            (source,) if not is_dir else walk(root, exclude, source, unlisted, roots)
        )
        for path in paths:
            if is_dir and path in explicit:
                # where the walk meets it (its first place among the sources, as before the
                # stream): a node file of a session must come before the session's last, or
                # its findings are held for a judgment that was made already (and standard
                # input's bytes for it would be read from disk instead)
                if path in done:
                    continue
                done.add(path)
            found = tuple((i, kind) for i, f in numbered if (kind := f.claims(path)) is not None)
            if not found:
                if is_dir and path not in explicit:
                    unchecked.walked(path)
                else:
                    unchecked.named(path)
            elif found := unchecked.judged(path, found):
                yield path, found
