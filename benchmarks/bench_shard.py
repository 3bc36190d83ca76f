"""Benchmark ``continuity verify --shard K/N`` against the whole run, and check their union.

Builds the history of ``bench_verify.py`` (10,000 commits by default) with one commit in 997
stripped of its ``Continuity-Delta`` trailer, and judges it with ``ownership = "trailer"``, so
that DL203 findings are spread over the whole history. Then it runs the whole range and each of
the N shards in turn (``--repeat`` rounds, the runs of a round one after another, so that a
change in machine load hits them alike), prints each one's commits, findings, median wall and
CPU time (the process and its git children), and whether the shards' findings, as a multiset
of JSON objects, are the whole run's and their commits add up. Not part of the test run:

    python benchmarks/bench_shard.py [--commits 10000] [--shards 4] [--repeat 5] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_verify  # the history generator, beside this file

STRIPPED_EVERY = 997


def stream(commits: int) -> Iterator[bytes]:
    """bench_verify's fast-import stream, every STRIPPED_EVERY-th commit without its trailer."""
    mark = 0
    for chunk in bench_verify.stream(commits, 4):
        if chunk.startswith(b"commit refs/heads/main\nmark :"):
            mark = int(chunk.split(b":")[1])
        elif chunk.startswith(b"data ") and mark % STRIPPED_EVERY == 0:
            message = chunk.split(b"\n", 1)[1][:-1]
            chunk = bench_verify._data(message.split(b"\n\n")[0] + b"\n")
        yield chunk


def build(repo: Path, commits: int) -> None:
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    importer = subprocess.Popen(["git", "fast-import", "--quiet"], cwd=repo, stdin=subprocess.PIPE)
    assert importer.stdin is not None
    for chunk in stream(commits):
        importer.stdin.write(chunk)
    importer.stdin.close()
    if importer.wait() != 0:
        raise SystemExit("git fast-import failed")
    subprocess.run(["git", "reset", "-q", "--hard", "main"], cwd=repo, check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commits", type=int, default=10_000)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="build the repository here and keep it")
    args = parser.parse_args()
    scratch = None if args.keep else tempfile.TemporaryDirectory()
    where = args.keep or Path(scratch.name)  # type: ignore[union-attr]
    repo = where / "repo"
    config = where / "trailer.toml"
    if not repo.exists():
        build(repo, args.commits)
    config.write_text('[deltas]\nownership = "trailer"\n', encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(bench_verify.SRC)}
    runs = [[]] + [["--shard", f"{k}/{args.shards}"] for k in range(1, args.shards + 1)]
    walls: list[list[float]] = [[] for _ in runs]
    cpus: list[list[float]] = [[] for _ in runs]
    reports: list[dict] = [{} for _ in runs]  # type: ignore[type-arg]
    print(f"load average before the runs: {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs)")
    for _ in range(args.repeat):
        for index, extra in enumerate(runs):
            usage = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", "continuity_checks", "verify", "--root", str(repo),
                 "--range", "HEAD", "--config", str(config), "--format", "json", *extra],
                capture_output=True, env=env, text=True,
            )  # fmt: skip
            walls[index].append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus[index].append(after.ru_utime + after.ru_stime - usage.ru_utime - usage.ru_stime)
            reports[index] = json.loads(done.stdout)
    for index, extra in enumerate(runs):
        report = reports[index]
        print(
            f"{' '.join(extra) or 'whole range':14} commits {report['summary']['commits']:6} "
            f"findings {len(report['findings']):3}  "
            f"wall median {statistics.median(walls[index]):.3f} s"
            f"  CPU median {statistics.median(cpus[index]):.3f} s"
        )

    def findings(report: dict) -> Counter[str]:  # type: ignore[type-arg]
        return Counter(json.dumps(f, sort_keys=True) for f in report["findings"])

    union: Counter[str] = Counter()
    for report in reports[1:]:
        union += findings(report)
    commits = sum(report["summary"]["commits"] for report in reports[1:])
    print(f"shards' findings == whole range's: {union == findings(reports[0])}; "
          f"shards' commits: {commits} of {reports[0]['summary']['commits']}")  # fmt: skip
    print(f"load average after the runs: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
