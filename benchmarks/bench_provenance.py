"""Benchmark provenance hashing: the snapshot, the thread pool and plain hashlib, in one run.

Files are generated in a scratch directory and read once before timing (warm page cache: the
numbers are hashing and reading, not the disk). For each data set, each way is run ``--repeat``
times, interleaved, and the best and median rates are reported:

- ``hashlib``: one thread, ``hashlib.sha256`` fed 1 MiB reads into a reused buffer (the floor
  of one core);
- ``snapshot, one by one``: ``WorkTree.sha256`` for each file in turn (what history mode and a
  one-file listing do);
- ``snapshot, pool``: ``listed.hash_all``, the provenance family's path: ``WorkTree.sha256`` for
  each file through ``core.hashing.sha256_many`` (threads where its measured rule says so);
- ``sha256_paths``: ``core.hashing.sha256_paths`` on the same files (reused buffers, no
  snapshot), for comparison;
- ``continuity check``: the whole command on a SHA256SUMS listing the files (process start-up
  included).

Not part of the test run::

    python benchmarks/bench_provenance.py [--repeat 5] [--keep DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from continuity_checks.checks.provenance import listed
from continuity_checks.core import hashing
from continuity_checks.core.parallel import usable_cpus
from continuity_checks.core.snapshot import WorkTree

SETS = {
    "16 x 32 MiB": (16, 32 << 20),
    "2,000 x 64 KiB": (2000, 64 << 10),
}


def generate(root: Path, count: int, size: int) -> list[str]:
    root.mkdir(parents=True, exist_ok=True)
    names = []
    block = os.urandom(1 << 20)
    for index in range(count):
        name = f"f{index:05}.bin"
        with open(root / name, "wb") as out:
            left = size
            out.write(index.to_bytes(8, "little"))  # every file different
            left -= 8
            while left > 0:
                out.write(block[:left])
                left -= min(left, len(block))
        names.append(name)
    return names


def plain_hashlib(root: Path, names: list[str]) -> None:
    buffer = bytearray(1 << 20)
    view = memoryview(buffer)
    for name in names:
        sha = hashlib.sha256()
        with open(root / name, "rb", buffering=0) as handle:
            while n := handle.readinto(buffer):
                sha.update(view[:n])
        sha.hexdigest()


def ways_for(root: Path, names: list[str], snapshot: WorkTree) -> dict[str, Callable[[], object]]:
    command = [sys.executable, "-m", "continuity_checks", "check", "--root", str(root)]
    return {
        "hashlib, one thread": lambda: plain_hashlib(root, names),
        "snapshot, one by one": lambda: [snapshot.sha256(n) for n in names],
        "snapshot, pool (provenance)": lambda: listed.hash_all(snapshot, names),
        "core.hashing.sha256_paths": lambda: hashing.sha256_paths([root / n for n in names]),
        "continuity check SHA256SUMS": lambda: subprocess.run(
            [*command, str(root / "SHA256SUMS")], check=True, capture_output=True
        ),
    }


def _cpu() -> float:
    """CPU seconds of this process (all its threads) and of its finished children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--keep", type=Path, default=None)
    args = parser.parse_args()
    scratch = args.keep or Path(tempfile.mkdtemp(prefix="bench-pv-"))
    print(f"python {platform.python_version()}, {usable_cpus()} usable CPUs, "
          f"load {os.getloadavg()[0]:.2f} before")  # fmt: skip
    for label, (count, size) in SETS.items():
        root = scratch / label.replace(" ", "").replace(",", "")
        names = generate(root, count, size)
        total = count * size
        (root / "SHA256SUMS").write_text(
            "".join(f"{hashing.sha256_path(root / n).hex}  {n}\n" for n in names)
        )
        plain_hashlib(root, names)  # warm the page cache
        ways = ways_for(root, names, WorkTree(root, total + 1))
        (root / ".continuity.toml").write_text(
            f"[limits]\nmax-file-bytes = {max(size, 1 << 24) + 1}\n"
        )
        times: dict[str, list[float]] = {way: [] for way in ways}
        cpu: dict[str, list[float]] = {way: [] for way in ways}
        for _ in range(args.repeat):
            for way, run in ways.items():
                start, used = time.perf_counter(), _cpu()
                run()
                times[way].append(time.perf_counter() - start)
                cpu[way].append(_cpu() - used)
        print(f"\n{label} ({total / (1 << 20):.0f} MiB)")
        print("| way | best | median | best rate | CPU time (median) |\n|---|---|---|---|---|")
        for way, seconds in times.items():
            best, median = min(seconds), statistics.median(seconds)
            used = statistics.median(cpu[way])
            print(
                f"| {way} | {best * 1000:.0f} ms | {median * 1000:.0f} ms | "
                f"{total / best / 1e9:.2f} GB/s | {used * 1000:.0f} ms |"
            )
    print(f"\nload {os.getloadavg()[0]:.2f} after")


if __name__ == "__main__":
    main()
