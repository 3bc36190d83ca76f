"""Crash-safe and concurrency-safe file writes for the helper commands of every family.

- :func:`atomic_write` replaces a file so that a reader (or a crash) sees either the old bytes or
  the new ones, never a mixture: fsynced temp file, ``os.replace``, fsync of the directory.
- :func:`exclusive_create` creates a file that must not exist yet, with the same guarantees: the
  complete temp file is hard-linked to the final name, which fails if the name is taken.
- :func:`rename_no_overwrite` moves a file to a name that must not exist yet (hard link + unlink),
  so an existing target is never replaced, whatever happens between a check and the move.
- :func:`locked` holds an advisory inter-process lock (``filelock``) with a timeout.
- :func:`refuse_linked` refuses, before anything is written, a directory to write into that is
  a symlink or lies below one (a family's store committed as a symlink: its writes would land
  where no check of the family looks), wherever the link leads.

Where temp files go (docs/decisions.md, "Temp files"): inside the repository's git directory,
``<git dir>/continuity-tmp/<lock>/``, when that directory is on the target's filesystem, so that
a helper killed between the write and the rename leaves nothing ``git add -A`` (or ``check
--all``) can pick up; beside the target otherwise (outside a repository, another filesystem, a
rename or link that fails with EXDEV). The holder of a lock removes what a killed holder of the
same lock left in its directory, never another lock's files. Temp files are named
``.<random>.tmp``: short, whatever the length of the target's name, removed on every error path.
An error names the target, never the temp file, which the caller has never heard of.
"""

from __future__ import annotations

import contextlib
import contextvars
import errno
import os
import secrets
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeAlias

from continuity_checks.core.hashing import sha256_hex

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


TEMP_DIR = "continuity-tmp"
"""The directory, inside the git directory, that holds the helpers' temp files."""

UNLOCKED = "unlocked"
"""The temp directory of writes made without a lock (see :func:`sweep_temp_files`)."""

STALE_UNLOCKED = 3600.0
"""Seconds after which an unlocked writer's temp file is taken to be a killed writer's."""

# the lock held by this thread of execution: its writes put their temp files in its directory
_held: contextvars.ContextVar[str | None] = contextvars.ContextVar("held_lock", default=None)


class LockRefused(OSError):
    """The lock path is not a lock file this tool can take safely (a symlink)."""


class LinkRefused(OSError):
    """A directory a helper would write into is a symlink, or lies below one; ``str()`` is a
    one-line reason naming it."""


class LockTimeout(TimeoutError):
    """The advisory lock could not be taken in time; ``str()`` is a one-line reason."""


def temp_name() -> str:
    """A temp-file name: ``.<random>.tmp``, 18 characters."""
    return f".{secrets.token_hex(6)}.tmp"


def git_dir(start: StrPath) -> Path | None:
    """The git directory of the repository whose work tree holds ``start`` (``.git``, or the
    directory a ``.git`` file names, as in a linked worktree; ``$GIT_DIR`` when no ``.git`` is
    found); None outside a repository or when ``.git`` is anything else (a symlink is not
    followed)."""
    here = Path(os.path.abspath(start))
    for directory in (here, *here.parents):
        dot = directory / ".git"
        try:
            info = os.lstat(dot)
        except FileNotFoundError:
            continue
        except OSError:
            return None
        if stat.S_ISDIR(info.st_mode):
            return dot
        if not stat.S_ISREG(info.st_mode):
            return None
        try:
            with open(dot, "rb") as handle:
                first = handle.read(4096).split(b"\n", 1)[0].decode("utf-8").strip()
        except (OSError, UnicodeDecodeError):
            return None
        if not first.startswith("gitdir:"):
            return None
        named = Path(first[len("gitdir:") :].strip())
        named = named if named.is_absolute() else directory / named
        return named if named.is_dir() else None
    # no .git above: a work tree whose git directory is elsewhere (GIT_DIR and GIT_WORK_TREE,
    # as a bare repository checked out with --work-tree); git add -A there picks up a temp file
    # beside the target as readily as in any repository
    env = os.environ.get("GIT_DIR")
    if env:
        named = Path(os.path.abspath(env))
        return named if _real_dir(named) else None
    return None


def _lock_key(lock_path: StrPath | None) -> str:
    if lock_path is None:
        return UNLOCKED
    real = os.path.realpath(os.path.abspath(lock_path)).encode("utf-8", "surrogateescape")
    return "lock-" + sha256_hex(real)[:16]


def _real_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def linked_directory(top: StrPath, directory: StrPath) -> Path | None:
    """The first of the directories from below ``top`` down to ``directory`` (itself included)
    that is a symlink, or None. ``directory`` is under ``top`` (or is ``top``, which is never
    looked at: where a user runs the helper is theirs to choose); what does not exist yet
    ends the search."""
    base = Path(os.path.abspath(top))
    path = Path(os.path.abspath(directory))
    try:
        names = path.relative_to(base).parts
    except ValueError:
        return None
    here = base
    for name in names:
        here = here / name
        try:
            if stat.S_ISLNK(os.lstat(here).st_mode):
                return here
        except OSError:
            return None  # not there (yet): created as a real directory, or the write says why
    return None


def refuse_linked(top: StrPath, *directories: StrPath) -> None:
    """Raise :class:`LinkRefused` when one of ``directories`` (each under ``top``) is a symlink
    or lies below one, before anything is written: a helper writes only into real directories,
    whether the link leads inside the repository or outside it."""
    base = Path(os.path.abspath(top))
    for directory in directories:
        found = linked_directory(base, directory)
        if found is None:
            continue
        name = found.relative_to(base).as_posix()
        real = os.path.realpath(found)
        inside = real == os.path.realpath(base) or real.startswith(
            os.path.join(os.path.realpath(base), "")
        )
        where = f"is a symlink (to {real})" if inside else f"leads outside the root (to {real})"
        raise LinkRefused(
            f"{name} {where}; the helper writes only into real directories, never through a "
            "symlink: replace the symlink with the directory itself; nothing was written"
        )


def temp_dir(directory: StrPath, lock_path: StrPath | None = None) -> Path | None:
    """Where temp files for targets in ``directory`` go: ``<git dir>/continuity-tmp/<lock>/``
    (created), or None when the targets' own directory must hold them (no repository, another
    filesystem, a directory that cannot be made or is a symlink)."""
    gitdir = git_dir(directory)
    if gitdir is None:
        return None
    path = gitdir / TEMP_DIR / _lock_key(lock_path)
    try:
        for level in (path.parent, path):
            with contextlib.suppress(FileExistsError):
                os.mkdir(level, 0o700)
            if not _real_dir(level):  # a symlink planted there could lead anywhere
                return None
        if os.stat(path).st_dev != os.stat(directory).st_dev:
            return None
    except OSError:
        return None
    return path


def sweep_temp_files(lock_path: StrPath) -> None:
    """Remove the temp files a killed holder of ``lock_path`` left in its temp directory, and
    unlocked writers' temp files older than STALE_UNLOCKED. Call holding the lock."""
    gitdir = git_dir(Path(os.path.abspath(lock_path)).parent)
    if gitdir is None:
        return
    now = time.time()
    for key, stale in ((_lock_key(lock_path), 0.0), (UNLOCKED, STALE_UNLOCKED)):
        directory = gitdir / TEMP_DIR / key
        if not _real_dir(directory):
            continue
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            if not (entry.name.startswith(".") and entry.name.endswith(".tmp")):
                continue
            with contextlib.suppress(OSError):  # gone already, or cannot be: harmless there
                info = entry.stat(follow_symlinks=False)
                if stat.S_ISREG(info.st_mode) and now - info.st_mtime >= stale:
                    os.unlink(entry.path)


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


def _write_temp(
    target: Path, data: bytes, create_mode: int, exact_mode: int | None, directory: Path
) -> Path:
    """Write ``data`` to a new, fsynced temp file in ``directory`` and return its path."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _BINARY | _NOFOLLOW
    while True:
        temp = directory / temp_name()
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

    def replace(temp: Path) -> None:
        os.replace(temp, target)

    _through_temp(target, data, create_mode, exact, replace)
    fsync_dir(target.parent)


def _through_temp(
    target: Path,
    data: bytes,
    create_mode: int,
    exact: int | None,
    finish: Callable[[Path], None],
) -> None:
    """Write ``data`` to a temp file and ``finish(temp)`` (a rename or a link to ``target``);
    the temp file is gone afterwards, whatever happened. The temp file goes to the lock's
    directory in the git directory, and beside ``target`` when that cannot be (EXDEV: a bind
    mount between the two)."""
    preferred = temp_dir(target.parent, _held.get())
    for directory in (preferred, target.parent) if preferred else (target.parent,):
        temp = _write_temp(target, data, create_mode, exact, directory)
        try:
            finish(temp)
        except OSError as exc:
            _unlink_quietly(temp)
            if exc.errno == errno.EXDEV and directory != target.parent:
                continue
            raise _about(target, exc) from None
        except BaseException:
            _unlink_quietly(temp)
            raise
        _unlink_quietly(temp)  # a link leaves the temp name behind; a rename does not
        return


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
    linked = True

    def link(temp: Path) -> None:
        nonlocal linked
        try:
            os.link(temp, target)
        except FileExistsError:  # stays a FileExistsError, naming the target
            raise
        except (AttributeError, NotImplementedError):  # pragma: no cover - no link at all
            linked = False
        except OSError as exc:
            if exc.errno == errno.EXDEV and temp.parent != target.parent:
                raise  # try again with the temp file beside the target
            if exc.errno not in _UNSUPPORTED:
                raise
            linked = False

    _through_temp(target, data, mode, None, link)
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
    token = _held.set(os.fspath(lock_path))
    try:
        sweep_temp_files(lock_path)
        yield
    finally:
        _held.reset(token)
        lock.release()
