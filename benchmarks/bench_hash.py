"""Benchmark SHA-256 of files: ``core.hashing`` against hashlib's own ways, side by side.

One run, the same files, page cache warm, methods taking turns within each round (so that a
change of machine load hits all of them alike); best and median of --repeat rounds:

- one large file (default 512 MiB): ``hashlib.sha256(f.read())`` (the whole file in memory),
  ``hashlib.file_digest`` (Python 3.11+), ``hashing.sha256_path`` with buffers of 256 KiB,
  1 MiB (the default) and 4 MiB, and SHA-256 of memory alone (the floor: no reads at all);
- the large file hashed twice, one thread against two (``sha256_paths``);
- many small files (default 10,000 × 4 KiB): the same three ways one after another, then
  ``sha256_paths`` with the automatic choice and with two threads;
- with ``--thresholds``: where a second thread starts to pay, over file sizes and counts, and
  what the automatic choice makes of it.

Prints GB/s (10^9 bytes) and files/s, and the load average before and after. Temp files are
removed at the end unless --keep. Not part of the test run:

    python benchmarks/bench_hash.py [--large-mib 512] [--small 10000] [--repeat 7] [--thresholds]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

from continuity_checks.core import hashing

MiB = 1 << 20


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _rounds(methods: dict[str, Callable[[], object]], repeat: int) -> dict[str, list[float]]:
    """Wall times per method, methods taking turns, after one warm-up call each."""
    for fn in methods.values():
        fn()
    times: dict[str, list[float]] = {name: [] for name in methods}
    for _ in range(repeat):
        for name, fn in methods.items():
            times[name].append(_timed(fn))
    return times


def _plain(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def _file_digest(path: str) -> str:
    with open(path, "rb") as f:
        digest = hashlib.file_digest(f, "sha256")  # type: ignore[attr-defined,unused-ignore]
    return str(digest.hexdigest())


def _memory_only(total: int) -> Callable[[], str]:
    block = memoryview(bytearray(MiB))

    def run() -> str:
        sha = hashlib.sha256()
        for _ in range(total // MiB):
            sha.update(block)
        return sha.hexdigest()

    return run


def _write_large(path: Path, mib: int) -> None:
    block = bytearray(os.urandom(MiB))
    with open(path, "wb") as f:
        for i in range(mib):
            block[:8] = i.to_bytes(8, "little")
            f.write(block)


def _write_small(directory: Path, count: int, size: int) -> list[str]:
    paths = []
    for i in range(count):
        sub = directory / f"{i // 100:03d}"
        if i % 100 == 0:
            sub.mkdir()
        path = sub / f"{i:05d}.bin"
        path.write_bytes(os.urandom(size))
        paths.append(str(path))
    return paths


def _table(
    title: str, times: dict[str, list[float]], amount: float, unit: str, note: str = ""
) -> None:
    print(f"\n{title}{note}")
    print(f"| method | best {unit} | median {unit} | best s | median s | runs |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, ts in times.items():
        best, median = min(ts), statistics.median(ts)
        print(
            f"| {name} | {amount / best:,.3f} | {amount / median:,.3f} "
            f"| {best:.4f} | {median:.4f} | {len(ts)} |"
        )


def _check_same(expected: str, got: Sequence[object]) -> None:
    for value in got:
        found = value.hex if isinstance(value, hashing.Digest) else value
        if found != expected:
            raise SystemExit(f"methods disagree: {found!r} != {expected!r}")


def bench_large(path: str, size: int, repeat: int) -> None:
    methods: dict[str, Callable[[], object]] = {"hashlib.sha256(f.read())": lambda: _plain(path)}
    if sys.version_info >= (3, 11):
        methods["hashlib.file_digest(f, 'sha256')"] = lambda: _file_digest(path)
    for n in (256 << 10, MiB, 4 * MiB):
        buffer = bytearray(n)
        label = f"hashing.sha256_path, {n // 1024} KiB buffer"
        if n == hashing.BUFFER_SIZE:
            label += " (default)"
        methods[label] = lambda buffer=buffer: hashing.sha256_path(path, buffer=buffer)  # type: ignore[misc]
    methods["SHA-256 of memory alone (floor)"] = _memory_only(size)
    expected = _plain(path)
    _check_same(expected, [fn() for name, fn in methods.items() if "floor" not in name])
    times = _rounds(methods, repeat)
    _table(f"One file of {size / MiB:,.0f} MiB", times, size / 1e9, "GB/s")

    both = [path, path]
    parallel: dict[str, Callable[[], object]] = {
        "sha256_paths(workers=1)": lambda: hashing.sha256_paths(both, workers=1),
        "sha256_paths(workers=None) (auto)": lambda: hashing.sha256_paths(both),
        "sha256_paths(workers=2)": lambda: hashing.sha256_paths(both, workers=2),
    }
    times = _rounds(parallel, repeat)
    _table(f"The same file twice ({2 * size / MiB:,.0f} MiB)", times, 2 * size / 1e9, "GB/s")


def bench_small(paths: list[str], size: int, repeat: int) -> None:
    methods: dict[str, Callable[[], object]] = {
        "hashlib.sha256(f.read()) per file": lambda: [_plain(p) for p in paths],
    }
    if sys.version_info >= (3, 11):
        methods["hashlib.file_digest per file"] = lambda: [_file_digest(p) for p in paths]
    buffer = bytearray(hashing.BUFFER_SIZE)
    methods["hashing.sha256_path per file, one buffer"] = lambda: [
        hashing.sha256_path(p, buffer=buffer) for p in paths
    ]
    methods["sha256_paths(workers=1)"] = lambda: hashing.sha256_paths(paths, workers=1)
    methods["sha256_paths(workers=None) (auto)"] = lambda: hashing.sha256_paths(paths)
    methods["sha256_paths(workers=2)"] = lambda: hashing.sha256_paths(paths, workers=2)
    times = _rounds(methods, repeat)
    note = f" ({len(paths) * size / 1e6:,.1f} MB)"
    _table(f"{len(paths):,} files of {size:,} bytes", times, len(paths), "files/s", note)


def bench_thresholds(directory: Path, repeat: int) -> None:
    """Where a second thread starts to pay: files of one size, one thread against two and
    against the automatic choice (``sha256_paths``, which looks up the sizes of up to 16 paths
    and otherwise decides from the sizes of the files hashed so far)."""
    print("\nThresholds: same files, median of at least", repeat * 5, "calls per column")
    print("| files | bytes each | total | workers=1 | workers=2 | 2 / 1 | auto | auto / 1 |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for each in (4 << 10, 64 << 10, 256 << 10, 512 << 10, MiB, 4 * MiB):
        pool: list[str] = []
        for count in (2, 16, 64, 1024):
            if count * each > 64 * MiB:
                break
            while len(pool) < count:
                path = directory / f"{each}-{len(pool)}.bin"
                path.write_bytes(os.urandom(each))
                pool.append(str(path))
            files = pool[:count]
            calls = max(repeat * 5, min(500, int(200e6 / (count * each))))
            times = _rounds(
                {
                    "1": partial(hashing.sha256_paths, files, workers=1),
                    "2": partial(hashing.sha256_paths, files, workers=2),
                    "auto": partial(hashing.sha256_paths, files),
                },
                calls,
            )
            one, two, auto = (statistics.median(times[k]) for k in ("1", "2", "auto"))
            print(
                f"| {count:,} | {each:,} | {count * each / MiB:,.2f} MiB | {one * 1e3:.3f} ms "
                f"| {two * 1e3:.3f} ms | {two / one:.2f} | {auto * 1e3:.3f} ms | {auto / one:.2f} |"
            )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--large-mib", type=int, default=512)
    parser.add_argument("--small", type=int, default=10_000, help="number of small files")
    parser.add_argument("--small-bytes", type=int, default=4096)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument(
        "--thresholds", action="store_true", help="also measure the pool's break-even"
    )
    parser.add_argument(
        "--dir", type=Path, default=None, help="parent of the temp directory (default /tmp)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the temp files")
    args = parser.parse_args(argv)

    print(f"load average at the start: {os.getloadavg()}")
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    print(f"hashing.BUFFER_SIZE = {hashing.BUFFER_SIZE:,} bytes")
    directory = Path(tempfile.mkdtemp(prefix="bench-hash-", dir=args.dir))
    try:
        large = directory / "large.bin"
        _write_large(large, args.large_mib)
        small_dir = directory / "small"
        small_dir.mkdir()
        small = _write_small(small_dir, args.small, args.small_bytes)
        bench_large(str(large), large.stat().st_size, args.repeat)
        bench_small(small, args.small_bytes, args.repeat)
        if args.thresholds:
            bench_thresholds(directory, args.repeat)
    finally:
        if args.keep:
            print(f"\nfiles kept in {directory}")
        else:
            shutil.rmtree(directory)
    print(f"\nload average at the end: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
