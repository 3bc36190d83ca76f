"""The one way a helper command opens a file it reads or writes, as safely as the checker reads.

:class:`ConfinedFiles` is rooted once: at the top of the repository that holds the path the
user named (found from the path as named, as ``check`` finds it), or at that path's directory
outside any repository. Reads go through the checker's own :class:`~.snapshot.WorkTree` over
that root (a symlink is followed only while it stays inside the root, a FIFO is opened without
blocking), then ``fstat``: anything but a regular file is refused, and so is one past the size
limit (at most ``limit + 1`` bytes are ever read). Writes go through :mod:`.atomic`, into a real
directory inside the root (:func:`.atomic.refuse_linked`), over nothing or a regular file.

A refusal is a :class:`Refused` naming the path and the reason, which the command line turns
into exit 2; a file that is not there is a ``FileNotFoundError``, which each helper answers in
its own words.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from continuity_checks.core.config import project_root
from continuity_checks.core.snapshot import Unreadable, WorkTree
from continuity_checks.core.strict_json import DEFAULT_MAX_FILE_BYTES

if TYPE_CHECKING:
    from continuity_checks.core import hashing
    from continuity_checks.core.atomic import StrPath


_CHUNK = 64 * 1024


class Refused(Exception):
    """A file a helper may not read or write; ``str()`` names it and says why (exit 2)."""

    def __init__(self, path: StrPath, reason: str) -> None:
        super().__init__(f"{os.fspath(path)}: {reason}; nothing was read from or written to it")
        self.path = os.fspath(path)
        self.reason = reason


class ConfinedFiles:
    """Regular files under ``root`` (resolved once), read at most ``limit`` bytes at a time."""

    def __init__(self, root: StrPath, limit: int = DEFAULT_MAX_FILE_BYTES) -> None:
        self.top = Path(os.path.abspath(root))
        self.limit = limit
        self.tree = WorkTree(self.top, limit)
        self._real = os.path.realpath(self.top)

    @classmethod
    def around(cls, path: StrPath, limit: int = DEFAULT_MAX_FILE_BYTES) -> ConfinedFiles:
        """Confined to the repository that holds ``path`` as named (its directory outside any
        repository)."""
        return cls(project_root(Path(os.path.dirname(os.path.abspath(path)))), limit)

    @classmethod
    def named(cls, path: StrPath, limit: int) -> tuple[ConfinedFiles, str]:
        """The file a user named explicitly (``--config``, ``--baseline``), wherever it leads,
        and the path to read it at: still a regular file, within ``limit``."""
        real = os.path.realpath(path)
        return cls(os.path.dirname(real), limit), real

    def relative(self, path: StrPath) -> str:
        """``path`` (as named, or as its real path) relative to the root, with ``/``."""
        full = os.path.abspath(path)
        for base in (str(self.top), self._real):
            rel = os.path.relpath(full, base)
            if rel != os.pardir and not rel.startswith(os.pardir + os.sep):
                return "" if rel == os.curdir else rel.replace(os.sep, "/")
        raise Refused(path, f"expected a path inside {self.top}, found one outside it")

    def exists(self, path: StrPath) -> bool:
        """Whether anything (a file, a directory, a symlink) is at ``path`` inside the root."""
        return self.tree.exists(self.relative(path))

    @contextlib.contextmanager
    def opened(self, path: StrPath) -> Iterator[tuple[int, int]]:
        """``(descriptor, size)`` of the regular file at ``path``, for the block; a missing
        file is a ``FileNotFoundError``, a directory an ``IsADirectoryError``."""
        rel = self.relative(path)
        full = os.path.join(self.top, rel)
        if not os.path.exists(full):  # missing, or a dangling symlink
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), os.fspath(path))
        if os.path.isdir(full) and self.tree.is_dir(rel):  # as open() says it (inside the root)
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), os.fspath(path))
        fd = self.tree.open_file(rel)
        if isinstance(fd, Unreadable):
            raise Refused(path, fd.message)
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                kind = _kind(info.st_mode)
                raise Refused(path, f"expected a regular file, found a {kind}")
            if info.st_size > self.limit:
                raise Refused(path, self._too_large(str(info.st_size)))
            yield fd, info.st_size
        finally:
            os.close(fd)

    def read(self, path: StrPath) -> bytes:
        """The bytes of the regular file at ``path`` (never more than ``limit + 1`` read)."""
        with self.opened(path) as (fd, expected):
            chunks = []
            size = 0
            while size <= self.limit:
                # what fstat said and one byte more (the end, or growth), in 64 KiB reads at least
                chunk = os.read(fd, min(self.limit + 1 - size, max(expected + 1 - size, _CHUNK)))
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
        if size > self.limit:  # it grew after fstat
            raise Refused(path, self._too_large("more"))
        return b"".join(chunks)

    def sha256(self, path: StrPath) -> hashing.Digest:
        """The SHA-256 of the regular file at ``path``, streamed."""
        from continuity_checks.core import hashing

        with self.opened(path) as (fd, _):
            try:
                return hashing.sha256_fd(fd, limit=self.limit)
            except hashing.TooLarge:
                raise Refused(path, self._too_large("more")) from None

    def writable(self, path: StrPath) -> str:
        """The path to write ``path`` at: its directory real and inside the root, nothing or
        a regular file at its name (a symlink is neither written through nor replaced, a FIFO
        or a device is refused; a directory there is an ``IsADirectoryError``)."""
        from continuity_checks.core import atomic  # (writers only)

        rel = self.relative(path)
        full = os.path.join(self.top, rel) if rel else str(self.top)
        try:
            atomic.refuse_linked(self.top, os.path.dirname(full))
        except atomic.LinkRefused as exc:
            raise Refused(path, str(exc).partition("; nothing was written")[0]) from None
        try:
            mode = os.lstat(full).st_mode
        except OSError:
            return full  # absent, or the write itself says why (a name too long)
        if stat.S_ISDIR(mode):  # as open() says it: an error of the write, not a refusal
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), os.fspath(path))
        if not stat.S_ISREG(mode):
            kind = _kind(mode)
            raise Refused(path, f"expected a regular file or nothing to write over, found a {kind}")
        return full

    def write(self, path: StrPath, data: bytes, *, mode: int | None = None) -> None:
        """Replace (or create) ``path`` with ``data`` atomically (:func:`.atomic.atomic_write`)."""
        from continuity_checks.core import atomic

        atomic.atomic_write(self.writable(path), data, mode=mode)

    def create(self, path: StrPath, data: bytes, *, mode: int = 0o666) -> None:
        """Create ``path`` holding ``data``; FileExistsError when the name is taken
        (:func:`.atomic.exclusive_create`)."""
        from continuity_checks.core import atomic

        atomic.exclusive_create(self.writable(path), data, mode=mode)

    def _too_large(self, found: str) -> str:
        return f"expected at most {self.limit} bytes, found {found}"


def _kind(mode: int) -> str:
    from continuity_checks.core.hashing import file_kind  # (hashlib: not for every run)

    return file_kind(mode)
