"""Hashing: right digests at every buffer boundary, limits that stop the read, nothing but
regular files by path, both digest shapes, and the same answers from one thread or several."""

from __future__ import annotations

import hashlib
import io
import os
import socket
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from continuity_checks.core import hashing
from continuity_checks.core.hashing import Digest, NotRegularFile, TooLarge

EMPTY = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
ABC = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


def expected(data: bytes) -> Digest:
    return Digest(hashlib.sha256(data).hexdigest(), len(data))


def write(path: Path, data: bytes) -> str:
    path.write_bytes(data)
    return str(path)


OpenWith = Callable[[bytes], int]


@pytest.fixture
def fd_of(tmp_path: Path) -> Iterator[OpenWith]:
    """Open a file with these bytes; every descriptor is closed after the test."""
    opened: list[int] = []

    def open_with(data: bytes) -> int:
        fd = os.open(write(tmp_path / f"f{len(opened)}", data), os.O_RDONLY)
        opened.append(fd)
        return fd

    yield open_with
    for fd in opened:
        os.close(fd)


# --- digests of data ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "hex"),
    [(b"", EMPTY), (b"abc", ABC), (bytes(1 << 20), hashlib.sha256(bytes(1 << 20)).hexdigest())],
)
def test_known_vectors_every_way(tmp_path: Path, data: bytes, hex: str) -> None:
    want = Digest(hex, len(data))
    path = write(tmp_path / "f", data)
    assert hashing.sha256_bytes(data) == want
    assert hashing.sha256_bytes(memoryview(bytearray(data))) == want
    assert hashing.sha256_path(path) == want
    assert hashing.sha256_chunks([data[:1], bytearray(data[1:2]), memoryview(data)[2:]]) == want
    assert hashing.sha256_reader(io.BytesIO(data).read, chunk_size=1000) == want
    fd = os.open(path, os.O_RDONLY)
    try:
        assert hashing.sha256_fd(fd) == want
    finally:
        os.close(fd)


@pytest.mark.parametrize("buf", [1, 64, hashing.BUFFER_SIZE])
@pytest.mark.parametrize(("buffers", "extra"), [(0, 0), (0, 1), (1, -1), (1, 0), (1, 1), (3, 7)])
def test_files_around_buffer_boundaries(tmp_path: Path, buf: int, buffers: int, extra: int) -> None:
    size = buffers * buf + extra
    data = bytes(i * 7 % 251 for i in range(size))
    path = write(tmp_path / "f", data)
    buffer = bytearray(buf)
    assert hashing.sha256_path(path, buffer=buffer) == expected(data)
    assert hashing.sha256_path(path, buffer=buffer, limit=size) == expected(data)
    if size:
        with pytest.raises(TooLarge) as raised:
            hashing.sha256_path(path, buffer=buffer, limit=size - 1)
        assert (raised.value.size, raised.value.limit) == (size, size - 1)


def test_fd_from_its_position_and_left_open(fd_of: OpenWith) -> None:
    data = b"0123456789" * 1000
    fd = fd_of(data)
    os.lseek(fd, 3, os.SEEK_SET)
    assert hashing.sha256_fd(fd, buffer=bytearray(100)) == expected(data[3:])
    assert os.lseek(fd, 0, os.SEEK_CUR) == len(data)  # still open, at the end


@pytest.mark.parametrize("limit", [0, 1, 99, 100, 5000])
def test_limit_stops_one_byte_past_it(fd_of: OpenWith, limit: int) -> None:
    data = bytes(10_000)
    fd = fd_of(data)
    with pytest.raises(TooLarge) as raised:
        hashing.sha256_fd(fd, limit=limit, buffer=bytearray(100))
    assert raised.value.size == limit + 1
    assert os.lseek(fd, 0, os.SEEK_CUR) == limit + 1  # the rest was never read
    assert str(raised.value) == f"more than {limit} bytes"


def test_limit_of_an_empty_file_and_bad_arguments(fd_of: OpenWith) -> None:
    assert hashing.sha256_fd(fd_of(b""), limit=0) == Digest(EMPTY, 0)
    with pytest.raises(ValueError):
        hashing.sha256_fd(fd_of(b"x"), limit=-1)
    with pytest.raises(ValueError):
        hashing.sha256_fd(fd_of(b"x"), buffer=bytearray())


def test_reader_reads_exactly_the_declared_size() -> None:
    stream = io.BytesIO(b"abc" + b"NEXT OBJECT")
    asked: list[int] = []

    def read(n: int) -> bytes:
        asked.append(n)
        return stream.read(n)

    assert hashing.sha256_reader(read, size=3, chunk_size=2) == Digest(ABC, 3)
    assert asked == [2, 1]
    assert stream.read() == b"NEXT OBJECT"


def test_reader_short_stream_too_large_and_misbehaving_reads() -> None:
    with pytest.raises(EOFError):
        hashing.sha256_reader(io.BytesIO(b"ab").read, size=3)
    declared = io.BytesIO(b"abcdef")
    with pytest.raises(TooLarge) as raised:
        hashing.sha256_reader(declared.read, size=6, limit=5)
    assert (raised.value.size, declared.tell()) == (6, 0)  # nothing read: the caller decides
    undeclared = io.BytesIO(bytes(1000))
    with pytest.raises(TooLarge) as raised:
        hashing.sha256_reader(undeclared.read, limit=10, chunk_size=4)
    assert (raised.value.size, undeclared.tell()) == (11, 11)
    assert hashing.sha256_reader(io.BytesIO(b"abc").read, limit=3) == Digest(ABC, 3)
    with pytest.raises(ValueError):
        hashing.sha256_reader(lambda n: b"x" * (n + 1))
    for bad in ({"chunk_size": 0}, {"limit": -1}, {"size": -1}):
        with pytest.raises(ValueError):
            hashing.sha256_reader(io.BytesIO().read, **bad)
    with pytest.raises(ValueError):
        hashing.sha256_chunks([], limit=-1)


def test_chunks_limit() -> None:
    assert hashing.sha256_chunks([b"a", b"bc"], limit=3) == Digest(ABC, 3)
    consumed: list[bytes] = []

    def chunks() -> Iterator[bytes]:
        for chunk in (b"ab", b"cd", b"ef"):
            consumed.append(chunk)
            yield chunk

    with pytest.raises(TooLarge) as raised:
        hashing.sha256_chunks(chunks(), limit=3)
    assert raised.value.size == 4
    assert consumed == [b"ab", b"cd"]


# --- only regular files by path -----------------------------------------------------------------


def test_fifo_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    outcome: list[BaseException | Digest] = []

    def attempt() -> None:
        try:
            outcome.append(hashing.sha256_path(fifo))
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=attempt, daemon=True)
    thread.start()
    thread.join(10)
    if thread.is_alive():  # opened without O_NONBLOCK: give it a writer so the test can end
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        thread.join(10)
        pytest.fail("sha256_path waited for a writer on a FIFO")
    [error] = outcome
    assert isinstance(error, NotRegularFile)
    assert error.kind == "FIFO"
    assert error.filename == str(fifo)
    assert str(error) == "expected a regular file, found a FIFO"


def test_symlinks_refused_not_followed(tmp_path: Path) -> None:
    target = write(tmp_path / "target", b"abc")
    (tmp_path / "link").symlink_to(target)
    (tmp_path / "dangling").symlink_to(tmp_path / "missing")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    for name in ("link", "dangling", "loop"):
        with pytest.raises(NotRegularFile) as raised:
            hashing.sha256_path(tmp_path / name)
        assert raised.value.kind == "symlink"
        assert isinstance(raised.value, OSError)
    # only the last component: a symlinked directory on the way is the caller's business
    (tmp_path / "dir").symlink_to(tmp_path, target_is_directory=True)
    assert hashing.sha256_path(tmp_path / "dir" / "target") == Digest(ABC, 3)


def test_directory_refused_missing_file_is_an_oserror(tmp_path: Path) -> None:
    with pytest.raises(NotRegularFile) as raised:
        hashing.sha256_path(tmp_path)
    assert raised.value.kind == "directory"
    with pytest.raises(FileNotFoundError):
        hashing.sha256_path(tmp_path / "missing")
    with pytest.raises(NotADirectoryError):
        hashing.sha256_path(Path(write(tmp_path / "file", b"")) / "below")


def test_character_device_and_socket_refused(tmp_path: Path) -> None:
    with pytest.raises(NotRegularFile) as raised:
        hashing.sha256_path(os.devnull)
    assert raised.value.kind == "character device"
    with socket.socket(socket.AF_UNIX) as listening:
        listening.bind(str(tmp_path / "sock"))
        with pytest.raises(NotRegularFile) as raised:
            hashing.sha256_path(tmp_path / "sock")
    assert raised.value.kind == "socket"


# --- digest shapes ------------------------------------------------------------------------------

HEX = "0123456789abcdef" * 4


@pytest.mark.parametrize(
    ("text", "parsed", "shape"),
    [
        (HEX, HEX, "bare"),
        (HEX.upper(), HEX, "bare"),
        ("sha256:" + HEX, HEX, "prefixed"),
        ("sha256:" + HEX.upper(), HEX, "prefixed"),
        ("SHA256:" + HEX, None, None),  # the algorithm is written in lowercase everywhere
        ("Sha256:" + HEX, None, None),
        (HEX[:-1], None, None),
        (HEX + "0", None, None),
        ("sha256:" + HEX[:-1], None, None),
        (HEX[:-1] + "g", None, None),
        ("sha256:" + HEX[:-1] + "-", None, None),
        ("sha1:" + "0" * 40, None, None),
        ("0" * 40, None, None),
        ("sha512:" + HEX, None, None),
        ("sha256:sha256:" + HEX[14:], None, None),
        (" " + HEX, None, None),  # not stripped: a different value to every reader
        (HEX + "\n", None, None),
        ("sha256: " + HEX[1:], None, None),
        ("", None, None),
        ("sha256:", None, None),
        ("٠" * 64, None, None),  # Arabic-Indic zeros: digits, not hex
        (None, None, None),
        (64, None, None),
        (HEX.encode(), None, None),
    ],
)
def test_parse_digest(text: object, parsed: str | None, shape: str | None) -> None:
    assert hashing.parse_digest(text) == parsed
    assert hashing.shape_of(text) == shape


def test_format_and_compare_across_shapes() -> None:
    assert hashing.format_digest(HEX.upper(), "bare") == HEX
    assert hashing.format_digest(HEX, "prefixed") == "sha256:" + HEX
    assert hashing.format_digest("sha256:" + HEX, "bare") == HEX
    assert hashing.format_digest("sha256:" + HEX) == HEX
    with pytest.raises(ValueError):
        hashing.format_digest("sha1:" + "0" * 40, "bare")
    with pytest.raises(ValueError):
        hashing.format_digest(HEX, "enveloped")  # type: ignore[arg-type]
    assert hashing.same_digest(HEX, "sha256:" + HEX.upper())
    assert hashing.same_digest("sha256:" + HEX, HEX)
    assert not hashing.same_digest(HEX, "sha256:" + HEX[:-1] + "0")
    assert not hashing.same_digest("x", "x")  # equal text, but not digests
    assert not hashing.same_digest(None, None)


# --- many files ---------------------------------------------------------------------------------


@pytest.mark.parametrize("workers", [1, 4, None])
def test_many_in_order_with_errors_per_item(tmp_path: Path, workers: int | None) -> None:
    datas = [b"a" * n for n in (0, 5, 3, 100, 7)]
    paths: list[str | Path] = [write(tmp_path / f"f{i}", d) for i, d in enumerate(datas)]
    paths.insert(2, tmp_path / "missing")
    paths.insert(4, tmp_path)
    results = hashing.sha256_paths(paths, limit=50, workers=workers)
    assert len(results) == 7
    assert results[0] == expected(datas[0])
    assert results[1] == expected(datas[1])
    assert isinstance(results[2], FileNotFoundError)
    assert results[3] == expected(datas[2])
    assert isinstance(results[4], NotRegularFile)
    assert isinstance(results[5], TooLarge)
    assert results[6] == expected(datas[4])


class Interrupt(BaseException):
    pass


@pytest.mark.parametrize("workers", [1, 3])
def test_many_lets_base_exceptions_through(workers: int) -> None:
    def hash_one(item: int, buffer: bytearray) -> Digest:
        if item == 5:
            raise Interrupt
        return hashing.sha256_bytes(bytes(item))

    before = threading.active_count()
    with pytest.raises(Interrupt):
        hashing.sha256_many(range(20), hash_one, workers=workers)
    assert threading.active_count() == before  # the pool is gone with the call


def test_each_thread_has_its_own_buffer() -> None:
    used: list[tuple[int, bytearray]] = []
    lock = threading.Lock()
    barrier = threading.Barrier(4, timeout=10)

    def hash_one(item: int, buffer: bytearray) -> Digest:
        if item < 4:
            barrier.wait()  # all four threads are inside at once
        with lock:
            used.append((threading.get_ident(), buffer))
        buffer[:] = bytes([item]) * len(buffer)  # a shared buffer would show in the results
        threading.Event().wait(0.001)
        return hashing.sha256_bytes(bytes(buffer[:1]) * item)

    before = threading.active_count()
    results = hashing.sha256_many(range(40), hash_one, workers=4, buffer_size=16)
    assert results == [expected(bytes([i]) * i) for i in range(40)]
    by_thread: dict[int, set[int]] = {}
    for ident, buffer in used:
        by_thread.setdefault(ident, set()).add(id(buffer))
    assert len(by_thread) == 4
    assert all(len(ids) == 1 for ids in by_thread.values())
    assert len(set.union(*by_thread.values())) == 4
    assert threading.get_ident() not in by_thread
    assert threading.active_count() == before


def _where(sizes: list[int], **kwargs: object) -> list[bool]:
    """For each item, whether it was hashed in the calling thread."""
    caller = threading.get_ident()
    here: list[bool] = [False] * len(sizes)

    def hash_one(index: int, buffer: bytearray) -> Digest:
        here[index] = threading.get_ident() == caller
        return Digest(EMPTY, sizes[index])

    results = hashing.sha256_many(range(len(sizes)), hash_one, **kwargs)  # type: ignore[arg-type]
    assert [r.size for r in results if isinstance(r, Digest)] == sizes
    return here


def test_automatic_choice_of_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hashing, "usable_cpus", lambda: 2)
    monkeypatch.setattr(hashing, "PARALLEL_MIN_BYTES", 100)
    monkeypatch.setattr(hashing, "PARALLEL_MIN_AVERAGE", 10)
    # small items: all in the calling thread, whatever their number
    assert all(_where([1] * 500))
    # sizes unknown: in the calling thread until those seen meet the rule, then threads
    assert _where([50, 60, 1, 1, 1]) == [True, True, False, False, False]
    # ... but never a pool for the last item alone
    assert _where([50, 60, 1]) == [True, True, True]
    # a total size given decides at once
    assert not any(_where([50, 60, 1, 1, 1], total_size=112))
    assert all(_where([50, 60, 1, 1, 1], total_size=99))
    assert all(_where([50, 60, 1, 1, 1], total_size=112, workers=1))
    monkeypatch.setattr(hashing, "usable_cpus", lambda: 1)
    assert all(_where([50, 60, 1, 1, 1]))


def test_paths_look_up_sizes_of_a_few_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[int | None] = []
    real = hashing.sha256_many

    def spy(*args: object, total_size: int | None = None, **kwargs: object) -> object:
        seen.append(total_size)
        return real(*args, total_size=total_size, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(hashing, "sha256_many", spy)
    few = [write(tmp_path / f"f{i}", b"x" * i) for i in range(4)]
    hashing.sha256_paths([*few, tmp_path / "missing"])
    hashing.sha256_paths(few * 10)
    hashing.sha256_paths(few, workers=2)
    assert seen == [6, None, None]


def test_many_of_nothing() -> None:
    assert hashing.sha256_paths([]) == []
    assert hashing.sha256_many([], lambda item, buffer: Digest(EMPTY, 0), workers=4) == []
    with pytest.raises(ValueError):
        hashing.sha256_many([1], lambda item, buffer: Digest(EMPTY, 0), workers=0)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.binary(max_size=3000), max_size=12))
def test_one_thread_and_four_agree(datas: list[bytes]) -> None:
    with tempfile.TemporaryDirectory() as directory:
        paths = [write(Path(directory) / f"f{i}", d) for i, d in enumerate(datas)]
        one = hashing.sha256_paths(paths, workers=1)
        four = hashing.sha256_many(
            paths,
            lambda path, buffer: hashing.sha256_path(path, buffer=buffer),
            workers=4,
            buffer_size=64,
        )
        assert one == four == [expected(d) for d in datas]


def test_buffers_start_small_and_grow_once_needed() -> None:
    lengths: list[int] = []

    def hash_one(size: int, buffer: bytearray) -> Digest:
        lengths.append(len(buffer))
        return Digest(EMPTY, size)

    sizes = [10, 100_000, 10, 2 << 20, 10]
    hashing.sha256_many(sizes, hash_one, workers=1)
    small, full = hashing.SMALL_BUFFER_SIZE, hashing.BUFFER_SIZE
    assert lengths == [small, small, full, full, full]
    lengths.clear()
    hashing.sha256_many(sizes, hash_one, workers=1, total_size=300_000)
    assert lengths == [300_001, 300_001, 300_001, 300_001, full]
    lengths.clear()
    hashing.sha256_many(sizes, hash_one, workers=1, buffer_size=100)
    assert lengths == [100] * 5
