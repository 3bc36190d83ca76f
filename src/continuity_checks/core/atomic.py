"""Crash-safe and concurrency-safe file writes for the helper commands of every family.

- :func:`atomic_write` replaces a file so that a reader (or a crash) sees either the old bytes or
  the new ones, never a mixture: temp file in the same directory, fsync, ``os.replace``, fsync
  of the directory.
- :func:`exclusive_create` creates a file that must not exist yet, with the same guarantees: the
  complete temp file is hard-linked to the final name, which fails if the name is taken.
- :func:`rename_no_overwrite` moves a file to a name that must not exist yet (hard link + unlink),
  so an existing target is never replaced, whatever happens between a check and the move.
- :func:`locked` holds an advisory inter-process lock (``filelock``) with a timeout.

Temp files are named ``.<random>.tmp``: short, whatever the length of the target's name (a temp
name longer than the final one would fail with "File name too long" where the final name fits),
in the target's directory (so ``os.replace`` is atomic), removed on every error path; only a
killed process can leave one behind, and readers ignore them (they do not end in ``.json``). An
error names the target, never the temp file, which the caller has never heard of.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import TypeAlias

StrPath: TypeAlias = "str | os.PathLike[str]"

DEFAULT_LOCK_TIMEOUT = 60.0
"""Seconds a writer waits for another writer before giving up."""

POLL_INTERVAL = 0.005
"""Seconds between two attempts to take a contended lock (filelock's default of 50 ms is slow)."""

# errors meaning "this filesystem or platform cannot do that", as opposed to a real failure
_UNSUPPORTED = frozenset(
    code
    for code in (
        errno.EPERM,
        errno.EINVAL,
        errno.ENOSYS,
        errno.EXDEV,
        getattr(errno, "ENOTSUP", None),
        getattr(errno, "EOPNOTSUPP", None),
    )
    if code is not None
)
_BINARY = getattr(os, "O_BINARY", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class LockRefused(OSError):
    """The lock path is not a lock file this tool can take safely (a symlink)."""


class LockTimeout(TimeoutError):
    """The advisory lock could not be taken in time; ``str()`` is a one-line reason."""


def temp_name() -> str:
    """A temp-file name: ``.<random>.tmp``, 18 characters."""
    return f".{secrets.token_hex(6)}.tmp"


def _about(target: Path, exc: OSError) -> OSError:
    """``exc`` naming ``target`` where it named the temp file (same type, errno and text)."""
    if exc.errno is None or exc.filename is None:
        return exc  # e.g. a failed write or fsync, which names no file
    return type(exc)(exc.errno, exc.strerror, os.fspath(target))


def fsync_dir(directory: StrPath) -> None:
    """Make a rename or create inside ``directory`` durable (a no-op where the OS cannot)."""
    if os.name == "nt":  # directories cannot be opened for fsync on Windows
        return
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    except OSError as exc:  # some filesystems refuse fsync on a directory
        if exc.errno not in _UNSUPPORTED and exc.errno != errno.EBADF:
            raise
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _unlink_quietly(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def _write_temp(target: Path, data: bytes, create_mode: int, exact_mode: int | None) -> Path:
    """Write ``data`` to a new, fsynced temp file beside ``target`` and return its path."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _BINARY | _NOFOLLOW
    while True:
        temp = target.with_name(temp_name())
        try:
            fd = os.open(temp, flags, create_mode)
        except FileExistsError:  # pragma: no cover - 48 random bits collided
            continue
        except OSError as exc:
            raise _about(target, exc) from None
        break
    try:
        if exact_mode is not None and hasattr(os, "fchmod"):
            os.fchmod(fd, exact_mode)
        _write_all(fd, data)
        os.fsync(fd)
    except OSError as exc:
        os.close(fd)
        _unlink_quietly(temp)
        raise _about(target, exc) from None
    except BaseException:
        os.close(fd)
        _unlink_quietly(temp)
        raise
    os.close(fd)
    return temp


def atomic_write(path: StrPath, data: bytes, *, mode: int | None = None) -> None:
    """Replace (or create) ``path`` with ``data`` atomically and durably.

    ``mode`` applies to a new file (through the umask; default 0o666 like ``open``); without it
    an existing file keeps its permission bits.
    """
    target = Path(path)
    exact: int | None = None
    create_mode = 0o666 if mode is None else mode
    if mode is None:
        with contextlib.suppress(FileNotFoundError):
            exact = stat.S_IMODE(os.stat(target).st_mode)
            create_mode = exact
    temp = _write_temp(target, data, create_mode, exact)
    try:
        os.replace(temp, target)
    except OSError as exc:
        _unlink_quietly(temp)
        raise _about(target, exc) from None
    except BaseException:
        _unlink_quietly(temp)
        raise
    fsync_dir(target.parent)


def _link(source: Path, target: Path) -> bool:
    """Hard-link ``source`` to ``target``; False when the filesystem has no hard links.

    Raises FileExistsError when ``target`` exists: ``link(2)`` never replaces a name.
    """
    try:
        os.link(source, target)
    except FileExistsError:
        raise
    except (AttributeError, NotImplementedError):  # pragma: no cover - platform without link
        return False
    except OSError as exc:
        if exc.errno in _UNSUPPORTED:
            return False
        raise
    return True


def exclusive_create(path: StrPath, data: bytes, *, mode: int = 0o666) -> None:
    """Create ``path`` holding ``data``; raise FileExistsError if the name is taken.

    The name appears complete or not at all: the fsynced temp file is hard-linked to it. Where
    hard links are unavailable the file is created with ``O_CREAT | O_EXCL`` and then written.
    """
    target = Path(path)
    temp = _write_temp(target, data, mode, None)
    try:
        linked = _link(temp, target)
    except OSError as exc:  # FileExistsError stays a FileExistsError
        raise _about(target, exc) from None
    finally:
        _unlink_quietly(temp)
    if not linked:  # pragma: no cover - filesystems without hard links
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _BINARY | _NOFOLLOW
        fd = os.open(target, flags, mode)
        try:
            _write_all(fd, data)
            os.fsync(fd)
        except BaseException:
            os.close(fd)
            _unlink_quietly(target)
            raise
        os.close(fd)
    fsync_dir(target.parent)


def rename_no_overwrite(source: StrPath, target: StrPath) -> None:
    """Move ``source`` to ``target``; raise FileExistsError (changing nothing) if ``target`` exists.

    Done as hard link + unlink, so there is no window in which an existing ``target`` could be
    replaced. A crash between the two steps leaves both names on the same file; callers that care
    can recognise that with :func:`os.path.samefile` and finish the move. Without hard links the
    fallback is ``os.rename``, which never replaces on Windows and is guarded by a check on POSIX
    (callers hold a lock).
    """
    src, dst = Path(source), Path(target)
    if _link(src, dst):
        os.unlink(src)
    else:  # pragma: no cover - filesystems without hard links
        if os.name != "nt" and os.path.lexists(dst):
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), os.fspath(dst))
        os.rename(src, dst)
    fsync_dir(dst.parent)
    if src.parent != dst.parent:
        fsync_dir(src.parent)


@contextlib.contextmanager
def locked(lock_path: StrPath, timeout: float = DEFAULT_LOCK_TIMEOUT) -> Iterator[None]:
    """Hold the advisory lock ``lock_path`` (created if missing, left in place) for the block.

    Raises :class:`LockTimeout` (an ``OSError``) when another holder keeps it past ``timeout``
    seconds. The lock is not re-entrant: take it once per operation.
    """
    from filelock import FileLock, Timeout  # imported here: only writers pay for it

    if os.path.islink(lock_path):
        # a lock that is a symlink could make the lock's own open/truncate reach its target
        # (a file of the store, or one outside the repository): never take it
        raise LockRefused(
            f"the lock {os.fspath(lock_path)} is a symlink; remove it (it holds nothing) and "
            "run again"
        )
    lock = FileLock(os.fspath(lock_path), timeout=timeout)
    try:
        lock.acquire(poll_interval=POLL_INTERVAL)
    except Timeout:
        raise LockTimeout(
            f"could not take the lock {os.fspath(lock_path)} within {timeout:g} s; "
            "another writer is holding it"
        ) from None
    try:
        yield
    finally:
        lock.release()
