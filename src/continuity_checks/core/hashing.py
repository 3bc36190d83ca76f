"""SHA-256 of files, pipes and bytes, and the two shapes digests are written in.

Several families pin content by SHA-256 (captures manifests and reader references, provenance
``SHA256SUMS``, working-state transactions), so the reading, the limits and the digest shapes
live here once instead of once per family. The module knows nothing of snapshots, roots or
findings: it hashes what it is handed (a file descriptor, a read callable, chunks, bytes, a
path) and reports problems as exceptions, which the caller turns into findings.

Why it reads the way it does (numbers in ``docs/performance.md``, "Hashing"):

- **Streamed into one reused buffer.** A file is never held in memory whole, and no read
  allocates: ``os.readv`` fills the same buffer again and again, and the hash reads it through a
  ``memoryview``. SHA-256 itself (OpenSSL, SHA extensions) is the floor; 1 MiB reads come
  closest to it here.
- **Limits stop the read.** With a limit, at most ``limit + 1`` bytes are read: enough to know
  the file is too large, never the rest of it.
- **Threads, not processes, for many files.** hashlib and ``os.readv`` release the GIL, so a
  few threads keep both CPUs busy without forking; below a measured amount of work the pool
  costs more than it saves and everything runs in the calling thread.

Digest shapes: the formats write SHA-256 either bare (``^[0-9a-f]{64}$``: LoopX basis digests,
``SHA256SUMS`` lines, working-state hashes) or enveloped (``^sha256:[0-9a-f]{64}$``: LoopX
turn keys and decision hashes). :func:`parse_digest` is the one place both are read, so a bare
digest and an enveloped one are never compared as strings.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Generic, Literal, NamedTuple, TypeAlias, TypeVar, cast

from continuity_checks.core.parallel import usable_cpus

T = TypeVar("T")

Shape = Literal["bare", "prefixed"]
StrPath: TypeAlias = "str | os.PathLike[str]"
BytesLike: TypeAlias = "bytes | bytearray | memoryview"

BUFFER_SIZE = 1 << 20
"""Bytes per read: 1 MiB measured fastest (256 KiB 2-4 % slower, 4 MiB 8-10 %)."""

SMALL_BUFFER_SIZE = 64 << 10
"""The smallest buffer made here: enough for a small file in one read, and cheap to make."""

PARALLEL_MIN_BYTES = 16 << 20
PARALLEL_MIN_AVERAGE = 512 << 10
"""With ``workers=None``, threads are used for at least PARALLEL_MIN_BYTES in all, at least
PARALLEL_MIN_AVERAGE per item. Measured on 2 CPUs: starting the pool costs 0.2-0.5 ms, and
every file adds GIL hand-offs (open, fstat, each read, close) that cost more than they let run
in parallel until files reach about half a MiB: 10,000 files of 4 KiB take longer on two
threads than on one. Around 8 MiB the gain of a quiet machine turned into a loss when other
work kept the CPUs busy; from 16 MiB it held or broke even."""

_STAT_FIRST = 16  # sha256_paths: up to this many paths, sizes are looked up before hashing

PREFIX = "sha256:"
"""The envelope, lowercase only (see :func:`parse_digest`)."""

_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_BINARY", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
)
_HEX64 = re.compile(r"[0-9a-fA-F]{64}")
_readv = getattr(os, "readv", None)  # not on Windows: os.read there


class Digest(NamedTuple):
    """A SHA-256 and the number of bytes it covers."""

    hex: str
    """64 lowercase hex digits."""
    size: int


class TooLarge(Exception):
    """The data is larger than the limit. ``size`` is what was known when reading stopped: the
    bytes read (``limit + 1``) or the size the caller declared; the rest was not read."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"more than {limit} bytes")
        self.size = size
        self.limit = limit


class NotRegularFile(OSError):
    """:func:`sha256_path` found something other than a regular file: a symlink (never
    followed), a directory, a FIFO, a socket or a device. ``kind`` names it."""

    def __init__(self, path: StrPath, kind: str) -> None:
        super().__init__(f"expected a regular file, found a {kind}")
        self.filename = os.fspath(path)
        self.kind = kind

    def __str__(self) -> str:  # OSError's own would be "[Errno None] None: '<path>'"
        return str(self.args[0])


# --- hashing -------------------------------------------------------------------------------------


def sha256_fd(fd: int, *, limit: int | None = None, buffer: bytearray | None = None) -> Digest:
    """The SHA-256 of what ``fd`` yields from its current position to its end.

    The caller owns the descriptor: it opens it (with ``O_NONBLOCK``, so that opening a FIFO
    does not wait for a writer) and checks with ``fstat`` that it is a regular file before
    calling this; reading a FIFO or socket here would wait for data or raise
    :class:`BlockingIOError`. The descriptor is left open, positioned where reading stopped.

    ``buffer`` (any length ≥ 1) is reused for every read; it must not be shared by two threads
    at once. Without one, a buffer is made for this call, as large as the file needs up to
    :data:`BUFFER_SIZE`. Raises :class:`TooLarge` once more than ``limit`` bytes have been read,
    :class:`OSError` when a read fails.
    """
    if buffer is None:
        buffer = _buffer_for(os.fstat(fd).st_size, limit)
    return _hash_fd(fd, limit, buffer)


def _buffer_for(size: int, limit: int | None) -> bytearray:
    # A new 1 MiB buffer costs 12 µs to 1 ms here (zero-filled, often freshly mapped pages):
    # more than hashing a small file. Room for the whole file and the read that finds its end.
    if limit is not None:
        size = min(size, limit)
    return bytearray(min(BUFFER_SIZE, max(SMALL_BUFFER_SIZE, size + 1)))


def _hash_fd(fd: int, limit: int | None, buffer: bytearray) -> Digest:
    view = memoryview(buffer)
    full = len(view)
    if full == 0:
        raise ValueError("the buffer must not be empty")
    _check_limit(limit)
    sha = hashlib.sha256()
    size = 0
    # Below the limit the whole buffer is offered; near it, only up to ``limit + 1`` bytes, so
    # that an oversized file costs one byte past the limit, not a buffer's worth.
    room = full if limit is None else min(full, limit + 1)
    while True:
        target = view if room == full else view[:room]
        n = _readv(fd, [target]) if _readv is not None else _read_into(fd, target)
        if n == 0:
            return Digest(sha.hexdigest(), size)
        size += n
        sha.update(view if n == full else view[:n])
        if limit is not None:
            if size > limit:
                raise TooLarge(size, limit)
            room = min(full, limit + 1 - size)


def _check_limit(limit: int | None) -> None:
    if limit is not None and limit < 0:
        raise ValueError("limit must not be negative")


def _read_into(fd: int, target: memoryview) -> int:  # pragma: no cover - no os.readv (Windows)
    data = os.read(fd, len(target))
    target[: len(data)] = data
    return len(data)


def sha256_reader(
    read: Callable[[int], bytes],
    *,
    size: int | None = None,
    limit: int | None = None,
    chunk_size: int = BUFFER_SIZE,
) -> Digest:
    """The SHA-256 of a stream read through ``read(n)`` (a pipe's ``read``, for instance git
    cat-file's output), at most ``chunk_size`` bytes per call.

    Without ``size`` it reads until ``read`` returns ``b""``. With ``size`` it reads exactly
    ``size`` bytes and never asks for more, so that whatever follows on a shared stream (the
    next object of ``git cat-file --batch``) stays unread; a stream that ends sooner raises
    :class:`EOFError`. A declared ``size`` larger than ``limit`` raises :class:`TooLarge`
    before anything is read: the caller, who knows the stream, skips or drains those bytes.
    """
    if chunk_size < 1:
        raise ValueError("chunk_size must be at least 1")
    _check_limit(limit)
    if size is not None and size < 0:
        raise ValueError("size must not be negative")
    if size is not None and limit is not None and size > limit:
        raise TooLarge(size, limit)
    sha = hashlib.sha256()
    seen = 0
    while True:
        want = chunk_size
        if size is not None:
            want = min(want, size - seen)
            if want == 0:
                return Digest(sha.hexdigest(), seen)
        elif limit is not None:
            want = min(want, limit + 1 - seen)
        data = read(want)
        if not data:
            if size is not None:
                raise EOFError(f"expected {size} bytes, the stream ended after {seen}")
            return Digest(sha.hexdigest(), seen)
        if len(data) > want:
            raise ValueError(f"read({want}) returned {len(data)} bytes")
        seen += len(data)
        sha.update(data)
        if limit is not None and seen > limit:
            raise TooLarge(seen, limit)


def sha256_chunks(chunks: Iterable[BytesLike], *, limit: int | None = None) -> Digest:
    """The SHA-256 of the concatenated chunks (any bytes-like objects), consumed one at a
    time. Raises :class:`TooLarge` at the first chunk that takes the total past ``limit``."""
    _check_limit(limit)
    sha = hashlib.sha256()
    size = 0
    for chunk in chunks:
        size += memoryview(chunk).nbytes
        if limit is not None and size > limit:
            raise TooLarge(size, limit)
        sha.update(chunk)
    return Digest(sha.hexdigest(), size)


def sha256_hex(data: BytesLike) -> str:
    """The SHA-256 of bytes already in memory (any bytes-like object), as 64 lowercase hex
    digits: the one place a digest of bytes is made."""
    return hashlib.sha256(data).hexdigest()


def sha256_bytes(data: BytesLike) -> Digest:
    """The SHA-256 of bytes already in memory (any bytes-like object), and their size."""
    return Digest(sha256_hex(data), memoryview(data).nbytes)


def sha256_path(
    path: StrPath, *, limit: int | None = None, buffer: bytearray | None = None
) -> Digest:
    """The SHA-256 of the regular file at ``path``.

    Opened with ``O_NOFOLLOW | O_NONBLOCK`` (where the platform has them): a symlink as the last
    component is refused rather than followed, and a FIFO is opened without waiting for a
    writer, then refused. Anything but a regular file raises :class:`NotRegularFile` (a subclass
    of :class:`OSError`); a file that cannot be opened or read raises :class:`OSError`; one past
    ``limit`` raises :class:`TooLarge`. Symlinks in earlier components are followed: keeping a
    path inside a root is the caller's job.
    """
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        kind = _refused_kind(path, exc)
        if kind is None:
            raise
        raise NotRegularFile(path, kind) from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFile(path, file_kind(info.st_mode))
        if buffer is None:
            buffer = _buffer_for(info.st_size, limit)
        return _hash_fd(fd, limit, buffer)
    finally:
        os.close(fd)


def _refused_kind(path: StrPath, exc: OSError) -> str | None:
    """What ``os.open`` refused, when the reason is the kind of file rather than an error."""
    # ELOOP is O_NOFOLLOW meeting a symlink (also a loop of links, hence the lstat); FreeBSD
    # says EMLINK for the symlink, Linux ENXIO for a socket, Windows EACCES for a directory.
    if exc.errno not in (errno.ELOOP, errno.EMLINK, errno.ENXIO, errno.EISDIR, errno.EACCES):
        return None
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return None
    return None if stat.S_ISREG(mode) else file_kind(mode)


def file_kind(mode: int) -> str:
    """What a file of ``mode`` is, in words: ``FIFO``, ``character device``, ``directory``..."""
    for test, name in (
        (stat.S_ISLNK, "symlink"),
        (stat.S_ISDIR, "directory"),
        (stat.S_ISFIFO, "FIFO"),
        (stat.S_ISSOCK, "socket"),
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
    ):
        if test(mode):
            return name
    return "special file"  # pragma: no cover - doors, whiteouts


# --- many files ----------------------------------------------------------------------------------


def sha256_many(
    items: Sequence[T],
    hash_one: Callable[[T, bytearray], Digest],
    *,
    workers: int | None = None,
    total_size: int | None = None,
    buffer_size: int = BUFFER_SIZE,
) -> list[Digest | Exception]:
    """``hash_one(item, buffer)`` for every item, in input order; an :class:`Exception` raised
    for an item is returned in its place (anything else, such as ``KeyboardInterrupt``,
    propagates).

    ``buffer`` belongs to the thread making the call, for ``hash_one`` to pass on to
    :func:`sha256_fd` or :func:`sha256_path`; no buffer is ever shared by two threads.
    ``hash_one`` must be safe to call from several threads at once. A thread's buffer starts
    at :data:`SMALL_BUFFER_SIZE` (or the ``total_size`` given, plus one) and grows to
    ``buffer_size`` after the first item larger than it.

    ``workers=n`` uses exactly ``min(n, len(items))`` threads (1: the calling thread).
    ``workers=None`` uses one thread per usable CPU only where that was measured to pay: at
    least :data:`PARALLEL_MIN_BYTES` in all, at least :data:`PARALLEL_MIN_AVERAGE` per item.
    A ``total_size`` given by the caller decides at once; without it, items are hashed in the
    calling thread until the sizes seen so far meet the rule, and the rest then go to the
    threads. The pool lives for this call only.
    """
    count = len(items)
    if workers is not None and workers < 1:
        raise ValueError("workers must be at least 1")
    watch = workers is None and total_size is None  # decide from the sizes seen
    if workers is None:
        workers = usable_cpus()
        if total_size is not None and not _worth_threads(total_size, count):
            workers = 1
    workers = min(workers, count)
    watch = watch and workers > 1
    first_size = buffer_size
    if total_size is not None:
        first_size = min(buffer_size, max(SMALL_BUFFER_SIZE, total_size + 1))
    elif buffer_size > SMALL_BUFFER_SIZE:
        first_size = SMALL_BUFFER_SIZE
    results: list[Digest | Exception | None] = [None] * count
    buffer = bytearray(first_size)
    done = seen = 0
    if workers <= 1 or watch:
        while done < count:
            if watch and count - done > 1 and _worth_threads(seen, done):
                break
            result = results[done] = _one(hash_one, items[done], buffer)
            done += 1
            if isinstance(result, Digest):
                seen += result.size
                buffer = _grown(buffer, result.size, buffer_size)
    if done < count:
        pool = _Pool(items, hash_one, results, first_size, buffer_size, spare=buffer)
        pool.run(range(done, count), min(workers, count - done))
    assert None not in results
    return cast("list[Digest | Exception]", results)


def _worth_threads(size: int, count: int) -> bool:
    return size >= PARALLEL_MIN_BYTES and size >= PARALLEL_MIN_AVERAGE * count


def _grown(buffer: bytearray, size: int, most: int) -> bytearray:
    return bytearray(most) if size > len(buffer) < most else buffer


def _one(
    hash_one: Callable[[T, bytearray], Digest], item: T, buffer: bytearray
) -> Digest | Exception:
    try:
        return hash_one(item, buffer)
    except Exception as exc:
        return exc


class _Pool(Generic[T]):
    """The threads of one :func:`sha256_many` call, each with its own buffer: the package's
    one thread pool (every caller that hashes files side by side comes here)."""

    def __init__(
        self,
        items: Sequence[T],
        hash_one: Callable[[T, bytearray], Digest],
        results: list[Digest | Exception | None],
        first_size: int,
        most: int,
        spare: bytearray,
    ) -> None:
        self.items = items
        self.hash_one = hash_one
        self.results = results
        self.first_size = first_size
        self.most = most
        self.spares = [spare]  # the calling thread's buffer, for one of the threads
        # imported here: the one-file commit hook never hashes in parallel, and these imports
        # (logging among them) cost it several milliseconds
        import threading

        self.take = threading.Lock()
        self.stop = threading.Event()
        self.pending: Iterator[int] = iter(())

    def run(self, indices: range, threads: int) -> None:
        # Items are handed out one at a time, not in fixed slices: with one large file among
        # small ones, the other threads go on with the small ones while one hashes the large.
        self.pending = iter(indices)
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="sha256") as pool:
            futures = [pool.submit(self._work) for _ in range(threads)]
            try:
                for future in futures:
                    future.result()  # raises again here what ended a thread
            finally:
                self.stop.set()  # on an interrupt, the threads finish their item, take no more

    def _work(self) -> None:
        with self.take:
            buffer = self.spares.pop() if self.spares else None
        if buffer is None:
            buffer = bytearray(self.first_size)
        try:
            while not self.stop.is_set():
                with self.take:
                    index = next(self.pending, None)
                if index is None:
                    return
                result = self.results[index] = _one(self.hash_one, self.items[index], buffer)
                if isinstance(result, Digest):
                    buffer = _grown(buffer, result.size, self.most)
        except BaseException:
            self.stop.set()  # what _one lets through ends the whole call: the others stop too
            raise


def sha256_paths(
    paths: Sequence[StrPath], *, limit: int | None = None, workers: int | None = None
) -> list[Digest | Exception]:
    """:func:`sha256_path` for every path, through :func:`sha256_many`: in input order, with
    :class:`OSError`, :class:`NotRegularFile` and :class:`TooLarge` returned per path."""
    total_size = None
    if workers is None and 1 < len(paths) <= _STAT_FIRST:
        # A few large files gain most from threads, and hashing them one by one until the
        # sizes show it would leave nothing for the threads: a stat each tells at once.
        total_size = 0
        for path in paths:
            with contextlib.suppress(OSError):  # reported by the hash itself
                total_size += os.stat(path).st_size

    def hash_one(path: StrPath, buffer: bytearray) -> Digest:
        return sha256_path(path, limit=limit, buffer=buffer)

    return sha256_many(paths, hash_one, workers=workers, total_size=total_size)


# --- digest shapes -------------------------------------------------------------------------------


def parse_digest(text: object) -> str | None:
    """The SHA-256 written in ``text`` as 64 lowercase hex digits, or ``None`` when ``text`` is
    not one (not a string, wrong length, not hex, another algorithm such as ``sha1:``).

    Accepted: 64 hex digits in either case, optionally after the lowercase prefix ``sha256:``.
    Hex case carries no meaning (``sha256sum -c`` accepts both), so it is not a reason to call
    two equal digests different; a family whose format demands lowercase checks that against
    :func:`format_digest`. ``SHA256:`` is not accepted: every format here and the OCI digest
    grammar write the algorithm in lowercase, and a reader of those formats would not take it.
    Surrounding whitespace is not stripped: ``" <hex>"`` in a JSON string is a different value
    from ``"<hex>"`` to every reader, so it is reported, not repaired (split a ``SHA256SUMS``
    line before parsing its digest).
    """
    if not isinstance(text, str):
        return None
    hex_part = text[len(PREFIX) :] if text.startswith(PREFIX) else text
    if len(hex_part) != 64 or not _HEX64.fullmatch(hex_part):
        return None
    return hex_part.lower()


def shape_of(text: object) -> Shape | None:
    """``"prefixed"`` or ``"bare"`` for a digest :func:`parse_digest` accepts, else ``None``."""
    if parse_digest(text) is None:
        return None
    assert isinstance(text, str)
    return "prefixed" if text.startswith(PREFIX) else "bare"


def format_digest(hex: str, shape: Shape = "bare") -> str:
    """A digest in any accepted shape, written in ``shape`` with lowercase hex; raises
    :class:`ValueError` for text that is not a SHA-256 digest."""
    parsed = parse_digest(hex)
    if parsed is None:
        raise ValueError(f"not a SHA-256 digest: {hex!r}")
    if shape == "bare":
        return parsed
    if shape == "prefixed":
        return PREFIX + parsed
    raise ValueError(f"unknown digest shape: {shape!r}")


def same_digest(a: object, b: object) -> bool:
    """Whether ``a`` and ``b`` are the same SHA-256 in whatever accepted shapes; ``False`` when
    either is not a digest. Not constant-time: these digests are not secrets."""
    parsed = parse_digest(a)
    return parsed is not None and parsed == parse_digest(b)
