"""What every listing shares: where a listed path leads, and hashing the listed files.

Both listings (sums files and manifests) name files by path; each path is confined to the root
before anything is read (a path that escapes is CC010 and is never opened), then the files are
hashed through the snapshot. In the work tree several files are hashed at once on
``core.hashing``'s thread pool (its measured rule decides when threads pay); a commit's tree is
read through the run's one ``git cat-file`` process, which is not shared between threads, so
history mode hashes one file after another.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from typing import NamedTuple

from continuity_checks.core import hashing
from continuity_checks.core.display import quote
from continuity_checks.core.snapshot import Snapshot, Unreadable, WorkTree, confine
from continuity_checks.core.snapshot_digests import sha256_all


class Target(NamedTuple):
    """A listed path as written, and the root-relative path it leads to (or why it leads
    nowhere)."""

    written: str
    resolved: str | Unreadable


def resolve(listing: str, written: str, relative_to: str) -> Target:
    """Where ``written`` (a path in the listing at ``listing``) leads: relative to the root, or
    to the listing's own directory with ``relative_to == "sums-file"``."""
    if relative_to == "sums-file" and not written.startswith("/"):
        base = posixpath.dirname(listing)
        joined = posixpath.join(base, written) if base else written
        found = confine(joined)
        if isinstance(found, Unreadable):  # name the path as written, not as joined
            found = Unreadable(written, found.rule, found.message)
        return Target(written, found)
    return Target(written, confine(written))


def read_otherwise(snapshot: Snapshot, listing: str, written: str, relative_to: str) -> str | None:
    """The hint for a listed path that names no file but names one when read the other way
    (relative to the listing's directory instead of the root, or the reverse); None if not."""
    other = "root" if relative_to == "sums-file" else "sums-file"
    found = resolve(listing, written, other).resolved
    if (
        not isinstance(found, str)
        or found == resolve(listing, written, relative_to).resolved
        or not snapshot.exists(found)
    ):
        return None
    if other == "sums-file":
        return (
            f"{found} exists: the path is read relative to the root, and this listing names "
            f"its files relative to its own directory (as `cd {posixpath.dirname(listing)} && "
            f"sha256sum FILE > {posixpath.basename(listing)}` writes them): set relative-to = "
            '"sums-file" in the provenance options ([provenance] in .continuity.toml, '
            "[tool.continuity.provenance] in pyproject.toml)"
        )
    return (
        f"{found} exists: the path is read relative to the listing's directory "
        '(relative-to = "sums-file"), and this listing names its files relative to the root: '
        'set relative-to = "root", or write the path relative to the listing'
    )


def hash_all(snapshot: Snapshot, paths: Sequence[str]) -> list[hashing.Digest | Unreadable]:
    """The SHA-256 of each root-relative path, in order, through the snapshot."""
    if not isinstance(snapshot, WorkTree) or len(paths) < 2:
        return [snapshot.sha256(path) for path in paths]
    return sha256_all(snapshot, paths)


PATH_QUOTE = 400
"""Characters of a listed path quoted in a message: enough for any real path, so that a finding
names the file in full, and still bounded against a hostile listing."""


def named(path: str) -> str:
    """A listed path, quoted in full (up to :data:`PATH_QUOTE` characters) for a message."""
    return quote(path, PATH_QUOTE)
