"""`continuity check --family sessions` on a generated state directory, side by side with plain
Python that only opens and parses the same node files (the floor any checker of them pays).

    python benchmarks/bench_sessions.py [DIR] [--sessions 1000] [--nodes 200] [--runs 3]
        [--jobs N] [--against OTHER/src]
    python benchmarks/bench_sessions.py DIR --parts [engine,read,accepts,...] [--against SRC]

Generates DIR with gen_sessions.py when it does not exist (without DIR: in a temporary
directory, removed at the end, as `nox -s bench` runs it). The two commands run alternately,
after one warm-up run each; reported: median and best wall time, median CPU time (user +
system, the process and its children, from ``wait4``: steadier than wall time on a loaded
machine) and the peak resident memory of each process, in one run of this script. With
``--against SRC`` the same check of another version of the code (its ``src`` directory, on
``PYTHONPATH``) runs in the same turns, and the paired ratios of the two are printed.

With ``--parts``, what one node file costs, part by part, in instructions (valgrind callgrind,
bytecode caches present): each part runs over every node file of DIR in its own process, and
the same process without the part (set-up only: imports, the walk, reading and parsing every
node file once) is subtracted; the rest is divided by the node files. ``plain`` is the loop
above (the floor) and ``engine`` all of ``engine.check`` in one process (``--jobs 1``), each
less the start-up alone (the imports); see :data:`PARTS` for the others.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))

import callgrind

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


#: what ``--parts`` measures, each over every node file (or session) of DIR
PARTS = {
    "plain": "open and json.loads every node file (the loop above), start-up taken off",
    "engine": "engine.check of the sessions family, one process, start-up taken off",
    "claims": "the family's claims() on every path the walk yields",
    "read": "WorkTree.read of every node file (confined, size-limited)",
    "accepts": "strict_json.accepts of every node file (the strict parse)",
    "node": "nodes.check of every parsed node (shape, name, single-node rules)",
    "node-file": "nodefiles.check_node_file of every node file (parse and node)",
    "check-file": "the family's check_file on every node file: node files and whole sessions",
    "session": "session.check_session of each session, its node files checked already",
    "dag": "dag.check_dag of each session's nodes",
    "stream": "SessionsTree fed every claimed file, and its finish (registries)",
}


def run_part(root: Path, part: str) -> None:
    """In the measured process: set up (imports, walk, every node file read and parsed once),
    then run ``part`` over all of them (nothing more for ``setup``)."""
    from continuity_checks import checks, engine
    from continuity_checks.checks.sessions import dag, nodefiles, nodes, session, stream
    from continuity_checks.core import config as config_files
    from continuity_checks.core import strict_json
    from continuity_checks.core.family import Claimed, FileInput
    from continuity_checks.core.globs import Globs
    from continuity_checks.core.snapshot import WorkTree

    if part == "plain":
        exec(PLAIN.replace("sys.argv[1]", repr(str(root))), {})
    if part in ("start", "plain"):
        return
    config = config_files.load(root, checks.known(), None)
    (family,) = checks.build(config, checks.selected(config, ("sessions",)))
    if part == "engine":
        engine.check(root, config, under=[""], jobs=1, only=("sessions",))
        return
    tree = WorkTree(root, config.max_file_bytes)
    paths = list(engine.walk(root, Globs(config.exclude), "", []))
    claimed = [Claimed(p, k) for p in paths if (k := family.claims(p)) is not None]
    node_paths = [c.path for c in claimed if c.kind == "node"]
    data = [tree.read(p) for p in node_paths]
    values = [strict_json.accepts(d, config.max_depth)[1] for d in data]
    lookups = family._lookups_for(tree)
    held: dict[str, dict[str, nodefiles.NodeFile]] = {}
    for path, bytes_ in zip(node_paths, data, strict=True):
        checked = nodefiles.check_node_file(path, bytes_, tree, config.max_depth)
        held.setdefault(path[: path.rindex("/") - len("history")], {})[path] = checked
    if part == "setup":
        return
    if part == "claims":
        for path in paths:
            family.claims(path)
    elif part == "read":
        for path in node_paths:
            tree.read(path)
    elif part == "accepts":
        for bytes_ in data:
            strict_json.accepts(bytes_, config.max_depth)
    elif part == "node":
        for path, value in zip(node_paths, values, strict=True):
            nodes.check(path, value, nodefiles._unplaced(path), tree)
    elif part == "node-file":
        for path, bytes_ in zip(node_paths, data, strict=True):
            nodefiles.check_node_file(path, bytes_, tree, config.max_depth)
    elif part == "check-file":
        for path, bytes_ in zip(node_paths, data, strict=True):
            family.check_file(FileInput(path, "node", bytes_, tree))
    elif part == "session":
        for directory, checked in held.items():
            session.check_session(lookups, directory, checked)
    elif part == "dag":
        for checked in held.values():
            found = [c.node for c in checked.values() if c.node is not None]
            dag.check_dag(found, [])
    elif part == "stream":
        stream.check_tree(lookups, claimed)
    else:
        raise SystemExit(f"unknown part {part!r}: expected some of {', '.join(PARTS)}")


def instructions(src: Path, root: Path, part: str) -> int:
    """The instructions of one process running ``part`` (after a run that writes the bytecode)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(src)
    argv = [sys.executable, __file__, "--in-process", part, str(root)]
    subprocess.run(argv, env=env, check=True)  # warm: bytecode caches
    return callgrind.instructions(argv, env)[0]


def parts(args: argparse.Namespace) -> None:
    """Instructions per node file of each part, for this version and ``--against``'s."""
    root = args.directory.resolve()
    sessions = root / ".openprogram" / "sessions"
    count = sum(
        len(os.listdir(sessions / sid / "history"))
        for sid in os.listdir(sessions)
        if (sessions / sid / "history").is_dir()
    )
    sources = [HERE.parent / "src", *([args.against.resolve()] if args.against else [])]
    print(f"instructions per node file, {count} node files in {root}")
    print(f"| part | {' | '.join(str(s) for s in sources)} |\n|---|{'---:|' * len(sources)}")
    starts = {src: instructions(src, root, "start") for src in sources}
    setups = {src: instructions(src, root, "setup") for src in sources}
    for part in args.parts.split(","):
        cells = []
        for src in sources:
            spent = instructions(src, root, part)
            spent -= starts[src] if part in ("plain", "engine") else setups[src]
            cells.append(f"{spent / count / 1000:,.1f} K")
        print(f"| {part} | {' | '.join(cells)} |", flush=True)


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
    if sys.argv[1:2] == ["--in-process"]:
        run_part(Path(sys.argv[3]).resolve(), sys.argv[2])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=Path, nargs="?")
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--nodes", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--jobs", help="passed to continuity check (default: its own)")
    parser.add_argument("--against", type=Path, help="another version's src, run in turns")
    parser.add_argument(
        "--parts",
        nargs="?",
        const=",".join(PARTS),
        help=f"instructions per node file of some of {','.join(PARTS)} (DIR must exist)",
    )
    args = parser.parse_args()
    if args.parts:
        if args.directory is None or not args.directory.exists():
            raise SystemExit("--parts needs a generated DIR")
        parts(args)
        return
    if args.directory is None:
        with tempfile.TemporaryDirectory() as scratch:
            args.directory = Path(scratch) / "state"
            measure(args)
    else:
        measure(args)


def _size(directory: Path) -> tuple[int, int]:
    """The sessions and node files the measured directory holds (given or generated)."""
    root = directory / ".openprogram" / "sessions"
    histories = [d / "history" for d in root.iterdir() if (d / "history").is_dir()]
    return len(histories), sum(len(os.listdir(h)) for h in histories)


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
    sessions, nodes = _size(args.directory)
    print(f"{sessions} sessions, {nodes} node files, {os.cpu_count()} CPUs, "
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
