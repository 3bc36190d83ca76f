"""`continuity check --family sessions` on a generated state directory, side by side with plain
Python that only opens and parses the same node files (the floor any checker of them pays).

    python benchmarks/bench_sessions.py [DIR] [--sessions 1000] [--nodes 200] [--runs 3]
        [--jobs N] [--against OTHER/src]

Generates DIR with gen_sessions.py when it does not exist (without DIR: in a temporary
directory, removed at the end, as `nox -s bench` runs it). The two commands run alternately,
after one warm-up run each; reported: median and best wall time, median CPU time (user +
system, the process and its children, from ``wait4``: steadier than wall time on a loaded
machine) and the peak resident memory of each process, in one run of this script. With
``--against SRC`` the same check of another version of the code (its ``src`` directory, on
``PYTHONPATH``) runs in the same turns, and the paired ratios of the two are printed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

# open and parse every node file of every session, nothing else
PLAIN = """
import json, os, sys
root = os.path.join(sys.argv[1], ".openprogram", "sessions")
count = 0
for sid in os.listdir(root):
    history = os.path.join(root, sid, "history")
    if os.path.isdir(history):
        for name in os.listdir(history):
            with open(os.path.join(history, name), "rb") as f:
                json.loads(f.read())
            count += 1
print(count, "node files parsed")
"""


def run(command: list[str], env: dict[str, str] | None = None) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (user + system, children included) and peak RSS (KiB) of one
    run."""
    before = os.times()
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    after = os.times()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(command)}")
    # the process's own usage, plus that of the workers it waited for (engine processes)
    cpu = usage.ru_utime + usage.ru_stime
    cpu = max(cpu, (after.children_user - before.children_user)
              + (after.children_system - before.children_system))  # fmt: skip
    return elapsed, cpu, usage.ru_maxrss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path, nargs="?")
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--nodes", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--jobs", help="passed to continuity check (default: its own)")
    parser.add_argument("--against", type=Path, help="another version's src, run in turns")
    args = parser.parse_args()
    if args.directory is None:
        with tempfile.TemporaryDirectory() as scratch:
            args.directory = Path(scratch) / "state"
            measure(args)
    else:
        measure(args)


def measure(args: argparse.Namespace) -> None:
    if not args.directory.exists():
        subprocess.run(
            [sys.executable, str(HERE / "gen_sessions.py"), str(args.directory),
             "--sessions", str(args.sessions), "--nodes", str(args.nodes)],
            check=True,
        )  # fmt: skip
    jobs = ["--jobs", args.jobs] if args.jobs else []
    check = [sys.executable, "-m", "continuity_checks", "check", "--family", "sessions", "--all",
             "--root", str(args.directory), *jobs]  # fmt: skip
    here = str(HERE.parent / "src")
    commands: dict[str, tuple[list[str], dict[str, str] | None]] = {
        "plain Python: open + json.loads of every node file": (
            [sys.executable, "-c", PLAIN, str(args.directory)], None),
        "continuity check --family sessions --all --root DIR": (
            check, {**os.environ, "PYTHONPATH": here} if args.against else None),
    }  # fmt: skip
    if args.against:
        other = {**os.environ, "PYTHONPATH": str(args.against.resolve())}
        commands[f"the same check, {args.against}"] = (check, other)
    for command, env in commands.values():
        run(command, env)  # warm-up: the page cache holds the files for both
    times: dict[str, list[float]] = {name: [] for name in commands}
    cpus: dict[str, list[float]] = {name: [] for name in commands}
    memory: dict[str, int] = dict.fromkeys(commands, 0)
    for _ in range(args.runs):
        for name, (command, env) in commands.items():
            elapsed, cpu, rss = run(command, env)
            times[name].append(elapsed)
            cpus[name].append(cpu)
            memory[name] = max(memory[name], rss)
    print(f"{args.sessions} sessions x {args.nodes} nodes, {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()[0]:.2f}")  # fmt: skip
    print("| command | median | best | CPU (median) | peak RSS | runs |\n"
          "|---|---:|---:|---:|---:|---:|")  # fmt: skip
    for name in commands:
        print(f"| `{name}` | {statistics.median(times[name]):.2f} s | {min(times[name]):.2f} s "
              f"| {statistics.median(cpus[name]):.2f} s | {memory[name] / 1024:.0f} MiB "
              f"| {args.runs} |")  # fmt: skip
    names = list(commands)
    for name in names[1:]:
        ratio = statistics.median(times[name]) / statistics.median(times[names[0]])
        cpu_ratio = statistics.median(cpus[name]) / statistics.median(cpus[names[0]])
        print(f"{name} / plain (median): {ratio:.2f}x wall, {cpu_ratio:.2f}x CPU")
    if args.against:
        paired = [a / b for a, b in zip(times[names[1]], times[names[2]], strict=True)]
        paired_cpu = [a / b for a, b in zip(cpus[names[1]], cpus[names[2]], strict=True)]
        print(f"this / {args.against}, paired by run (median): "
              f"{statistics.median(paired):.3f} wall, "
              f"{statistics.median(paired_cpu):.3f} CPU")  # fmt: skip
    for name in commands:
        print(
            f"{name}: wall {', '.join(f'{t:.2f}' for t in times[name])} s; "
            f"CPU {', '.join(f'{t:.2f}' for t in cpus[name])} s"
        )


if __name__ == "__main__":
    main()
