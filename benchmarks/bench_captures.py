"""Benchmark the captures family's heavy paths, side by side in one run (``nox -s bench``).

1. Hashing a large capture (default 512 MiB): ``hashlib.sha256`` over the file read in 1 MiB
   chunks (the reference), core's streamed hashing through the work-tree snapshot (what the
   manifest check runs), and the ``continuity check`` of the manifest beside it (a process, with
   ``limits.max-file-bytes`` raised so that the capture is hashed, not refused).
2. Several captures hashed one after another and on the thread pool (``--jobs`` captures).
3. ``continuity capture read`` of a small selection and of a paged one from a 100 MiB capture:
   wall time, peak memory of the process (VmHWM), and the pages reassembled to exactly the
   unpaged selection.

    python benchmarks/bench_captures.py [--size-mib 512] [--read-mib 100] [--keep DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from continuity_checks.checks.captures import model
from continuity_checks.core import hashing
from continuity_checks.core.snapshot import WorkTree

CHUNK = 1 << 20
PEAK = (
    "import sys\n"
    "from continuity_checks.cli import main\n"
    "code = main(sys.argv[1:])\n"
    "peak = open('/proc/self/status').read().split('VmHWM:')[1].split()[0]\n"
    "print(peak, file=sys.stderr)\n"
    "sys.exit(code)\n"
)


def write_capture(path: Path, size: int, tail: object) -> int:
    """A JSON capture of about ``size`` bytes: a long history, then ``tail``. Returns the
    number of history entries."""
    record = json.dumps(
        {"turn": 0, "text": "lorem ipsum dolor sit amet " * 8, "n": list(range(16))}
    )
    count = max(1, size // (len(record) + 1))
    block = ",".join([record] * 1000)
    with path.open("w", encoding="utf-8") as handle:
        handle.write('{"history": [')
        written = 0
        while written + 1000 <= count:
            handle.write(("," if written else "") + block)
            written += 1000
        if written < count:
            handle.write(("," if written else "") + ",".join([record] * (count - written)))
        handle.write('], "tail": ' + json.dumps(tail, ensure_ascii=False) + "}\n")
    return count


def hashlib_rate(path: Path) -> float:
    digest = hashlib.sha256()
    buffer = bytearray(CHUNK)
    view = memoryview(buffer)
    start = time.perf_counter()
    with path.open("rb", buffering=0) as handle:
        while n := handle.readinto(buffer):
            digest.update(view[:n])
    return time.perf_counter() - start


def snapshot_rate(path: Path) -> float:
    tree = WorkTree(path.parent, 1 << 40)
    start = time.perf_counter()
    found = tree.sha256(path.name)
    assert not isinstance(found, str)
    return time.perf_counter() - start


def best_median(samples: list[float]) -> tuple[float, float]:
    return min(samples), statistics.median(samples)


def run_peak(*args: str) -> tuple[float, int, bytes]:
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "-c", PEAK, *args], capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(result.stdout.decode() + result.stderr.decode())
    return elapsed, int(result.stderr.decode().strip().splitlines()[-1]), result.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size-mib", type=int, default=512)
    parser.add_argument("--read-mib", type=int, default=100)
    parser.add_argument("--count", type=int, default=8, help="captures hashed together")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--keep", type=Path, default=None)
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-captures-"))
    work.mkdir(parents=True, exist_ok=True)
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}, load {os.getloadavg()[0]:.2f}"
    )
    try:
        # 1. one large capture
        big = work / "big" / "capture.json"
        big.parent.mkdir(exist_ok=True)
        write_capture(big, args.size_mib << 20, {"wanted": 1})
        size = big.stat().st_size
        digest = hashing.sha256_path(big).hex
        (big.parent / "manifest.json").write_text(
            json.dumps(
                {
                    "schema_version": 1,
                    "capture_file": "capture.json",
                    "capture_sha256": digest,
                    "capture_bytes": size,
                },
                indent=2,
            )
            + "\n"
        )
        reference, ours = [], []
        for _ in range(args.repeat):  # interleaved, so that load hits both alike
            reference.append(hashlib_rate(big))
            ours.append(snapshot_rate(big))
        gib = size / (1 << 30)
        for name, samples in (
            ("hashlib.sha256, 1 MiB reads", reference),
            ("WorkTree.sha256 (the manifest check)", ours),
        ):
            best, median = best_median(samples)
            print(
                f"{name}: {gib / best:.2f} GiB/s best, {gib / median:.2f} GiB/s median "
                f"({size / 1e9 / median:.2f} GB/s), {len(samples)} runs of {size:,} bytes"
            )
        (work / ".continuity.toml").write_text("[limits]\nmax-file-bytes = 1099511627776\n")
        start = time.perf_counter()
        result = subprocess.run(
            ["continuity", "check", "--root", str(work), str(big.parent / "manifest.json")],
            capture_output=True,
            check=False,
            cwd=work,
        )
        print(
            f"continuity check big/manifest.json: {time.perf_counter() - start:.2f} s, exit "
            f"{result.returncode} ({result.stdout.decode().strip().splitlines()[-1]})"
        )

        # 2. several captures: one after another, and on core's thread pool
        many = []
        for i in range(args.count):
            path = work / f"many-{i}.json"
            shutil.copyfile(big, path) if i == 0 else os.link(work / "many-0.json", path)
            many.append(path)
        # hard links share one file's pages: copy instead, so that each is its own data
        for path in many[1:]:
            path.unlink()
            shutil.copyfile(big, path)
        start = time.perf_counter()
        for path in many:
            hashing.sha256_path(path)
        sequential = time.perf_counter() - start
        start = time.perf_counter()
        hashing.sha256_paths(many)
        parallel = time.perf_counter() - start
        total = sum(p.stat().st_size for p in many) / 1e9
        print(
            f"{args.count} captures, {total:.2f} GB: one after another {total / sequential:.2f} "
            f"GB/s, on the thread pool {total / parallel:.2f} GB/s"
        )
        for path in many:
            path.unlink()

        # 3. paged reads from a 100 MiB capture
        tail = {"wanted": [{"i": i, "text": "二" * 40 + '"quoted"'} for i in range(3000)]}
        cap = work / "read" / "capture.json"
        cap.parent.mkdir(exist_ok=True)
        count = write_capture(cap, args.read_mib << 20, tail)
        cap_digest = hashing.sha256_path(cap).hex
        base = ["capture", "read", "--capture-file", str(cap), "--capture-sha256", cap_digest]
        elapsed, peak, out = run_peak(*base, "--select", f"/history/{count - 1}/n/3")
        print(
            f"read 1 value from {cap.stat().st_size:,} bytes: {elapsed:.2f} s, "
            f"peak {peak / 1024:.0f} MiB"
        )
        elapsed, floor, _ = run_peak("rules")
        print(f"interpreter + CLI floor (continuity rules): peak {floor / 1024:.0f} MiB")
        command: list[str] | None = [*base, "--select", "/tail/wanted", "--select", "/tail"]
        pages, content, times, peaks = 0, [], [], []
        while command:
            elapsed, peak, out = run_peak(*command)
            assert len(out) <= 20_000
            payload = json.loads(out)
            page = payload["page"]
            assert page["bytes"] <= 16_000
            content.append(page["content"])
            pages += 1
            times.append(elapsed)
            peaks.append(peak)
            command = shlex.split(payload["next_command"])[1:] if payload["next_command"] else None
        expected = model.canonical_bytes(
            [
                {"pointer": "/tail/wanted", "value": tail["wanted"]},
                {"pointer": "/tail", "value": tail},
            ]
        )
        same = "".join(content).encode("utf-8") == expected
        print(
            f"paged read of {len(expected):,} bytes: {pages} pages, reassembled identical: {same}, "
            f"{statistics.median(times):.2f} s per page (median), peak {max(peaks) / 1024:.0f} MiB"
        )
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
