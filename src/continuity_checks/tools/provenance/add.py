"""``continuity provenance add``: list new files in a sums file, atomically and under a lock.

Reads and the write go through :class:`~continuity_checks.core.confined_files.ConfinedFiles`
(confined to the root, regular files only, within the size limit; the listed files hashed
streamed, several at once, through its work tree), the write atomic: the sums file is replaced
whole (temp file, fsync, rename) while an advisory lock beside it (``.<name>.lock``, which a
line in the repository's ``.gitignore`` keeps out of commits, as ``delta init`` does for its
lock) keeps two writers from losing each other's lines. Existing bytes are kept exactly; new
lines are GNU text lines in the file's own line ending (CRLF if its first line ends so, as DSH
writes them).

A path that is listed already is left alone when its bytes still hash to the listed digest (so
the command can be run again), and refused when they do not: a listing is a promise that those
bytes are preserved, and nothing is written then, not even the other files' lines.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence

from continuity_checks.checks.provenance import listed, sums
from continuity_checks.core import atomic, gitignore
from continuity_checks.core.confined_files import ConfinedFiles
from continuity_checks.core.hashing import Digest
from continuity_checks.core.snapshot import Unreadable, confine


class AddError(Exception):
    """Why nothing was written (one line)."""


class Added:
    """What :func:`add` did."""

    __slots__ = ("ignored", "lines", "unchanged")

    def __init__(self) -> None:
        #: The lines appended, without line endings.
        self.lines: list[str] = []
        #: Paths that were listed already with the same digest.
        self.unchanged: list[str] = []
        #: The lock's root-relative path, when a line for it was added to ``.gitignore``.
        self.ignored: str | None = None


def add(
    confined: ConfinedFiles,
    files: Sequence[str],
    sums_path: str,
    *,
    relative_to: str = "root",
    lock_timeout: float = atomic.DEFAULT_LOCK_TIMEOUT,
) -> Added:
    """List ``files`` (root-relative) in the sums file ``sums_path`` (root-relative)."""
    root = confined.top
    target = confine(sums_path)
    if isinstance(target, Unreadable) or not target:
        raise AddError(f"{sums_path}: expected a sums file path inside the root")
    wanted: list[str] = []
    for name in files:
        rel = confine(name)
        if isinstance(rel, Unreadable) or not rel:
            raise AddError(f"{name}: expected a file inside the root {root}")
        if rel == target:
            raise AddError(f"{name}: a sums file cannot list itself")
        if rel not in wanted:
            wanted.append(rel)
    if not wanted:
        raise AddError("expected at least one file to add")
    directory, _, name = target.rpartition("/")
    if directory and not confined.tree.is_dir(directory):
        raise AddError(f"{directory}: expected an existing directory for the sums file")
    base = f"{root}/{directory}" if directory else str(root)
    confined.writable(f"{base}/{name}")  # Refused: never written through a symlink
    lock = f".{name}.lock"
    # the lock stays beside the listing, whatever the outcome: git is told to ignore it first
    entry = f"{directory}/{lock}" if directory else lock
    ignored = entry if gitignore.add(root, entry) is not None else None
    with atomic.locked(f"{base}/{lock}", lock_timeout):
        added = _add_locked(confined, wanted, target, f"{base}/{name}", relative_to)
    added.ignored = ignored
    return added


def _add_locked(
    confined: ConfinedFiles, wanted: list[str], target: str, full_path: str, relative_to: str
) -> Added:
    try:
        data = confined.read(full_path)
    except FileNotFoundError:
        data = b""
    parsed = sums.parse(data)
    if parsed.malformed or parsed.bad_text:
        first = min([m.line for m in parsed.malformed] + [b.line for b in parsed.bad_text])
        raise AddError(
            f"{target}: line {first} is not a checksum line; fix it first "
            "(continuity check shows every problem), nothing was written"
        )
    listed_now: dict[str, sums.Entry] = {}
    for entry in parsed.entries:
        resolved = listed.resolve(target, entry.path, relative_to).resolved
        if isinstance(resolved, str):
            listed_now.setdefault(resolved, entry)
    digests = listed.hash_all(confined.tree, wanted)
    result = Added()
    conflicts: list[str] = []
    for path, digest in zip(wanted, digests, strict=True):
        if isinstance(digest, Unreadable):
            raise AddError(f"{path}: {digest.message}; nothing was written")
        assert isinstance(digest, Digest)
        known = listed_now.get(path)
        if known is None:
            written = _written(path, target, relative_to)
            result.lines.append(sums.format_line(digest.hex, written, parsed.single_space))
        elif known.digest == digest.hex:
            result.unchanged.append(path)
        else:
            conflicts.append(
                f"{path} is listed on line {known.line} with {known.digest}, its bytes now hash "
                f"to {digest.hex}"
            )
    if conflicts:
        raise AddError(
            f"refusing to list a path again with another digest ({'; '.join(conflicts)}); "
            f"{target} was not changed"
        )
    if result.lines:
        eol = "\r\n" if parsed.crlf else "\n"
        prefix = data if not data or parsed.final_newline else data + eol.encode()
        text = "".join(line + eol for line in result.lines)
        confined.write(full_path, prefix + text.encode("utf-8"))
    return result


def _written(path: str, sums_file: str, relative_to: str) -> str:
    """``path`` as the sums file names it."""
    if relative_to != "sums-file":
        return path
    return posixpath.relpath(path, posixpath.dirname(sums_file) or ".")
