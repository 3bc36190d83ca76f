"""The performance budget, row by row: this version side by side with another one
(``--against OTHER/src``, e.g. a ``git worktree`` of an earlier commit) and with the peer tools,
in one run.

Rows (``--rows`` picks some; default all):

- ``check-all``: ``continuity check --all --jobs 1`` (one process, as each peer) on N generated
  deltas (default 10,000) against ``check-jsonschema`` with the same schema and against a loop
  of ``orjson.loads`` + ``jsonschema_rs`` validation (``peer_loop.py``; skipped when orjson is
  not installed), paired with each; and ``continuity check --all`` with the default ``--jobs``
  paired with each in wall time;
- ``hook``: the commit hook (``continuity check --staged <one changed delta>``) in a store of 10
  deltas, against ``python -m json.tool`` on the same file and ``python -c pass`` of a clean
  venv (no packages, no ``.pth`` files: the interpreter's own floor);
- ``hook-store``: the same hook in a store of 100,000 deltas (``--large``) against 10, and the
  instructions of its whole process tree (each git process too);
- ``recent``: ``continuity delta recent --limit 5`` on 100,000 deltas against 10: peak memory;
- ``legacy``: ``delta recent --limit 1`` with a legacy history of 1,000,000 lines (``--legacy``);
- ``verify-memory``: ``continuity verify --range HEAD`` on 100,000 small commits: peak memory;
- ``jobs``: ``check --all`` with the default ``--jobs`` against ``--jobs 1``, on a quiet machine
  and with both CPUs kept busy by two spinning processes (a busy CI runner).

Instructions are counted with ``valgrind --tool=callgrind`` (the Python process only; they do
not depend on the machine's load); wall times are medians of interleaved runs (each command in
turn, so that a change of load hits all alike); peak memory is the process's maximum resident
set (``wait4``). The Python commands run with bytecode caches, as pip installs them: the caches
go to a scratch directory (``PYTHONPYCACHEPREFIX``) written by a warm-up run. Not part of the
test run (``nox -s bench``)::

    python benchmarks/bench_budget.py [--work DIR] [--against OTHER/src] [--rows ROW,...]
        [--repeat 11] [--no-instructions]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import callgrind
from gen_deltas import CHANGES_DIR, generate

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
SCHEMA = SRC / "continuity_checks" / "schemas" / "deltalayer-conversation-delta.schema.json"
BIN = Path(sys.executable).parent
TIME = "/usr/bin/time" if os.path.exists("/usr/bin/time") else None  # GNU time: peak memory
ROWS = ("check-all", "hook", "hook-store", "recent", "legacy", "verify-memory", "jobs")


@dataclass
class Command:
    label: str
    argv: list[str]
    cwd: Path
    env: dict[str, str]
    ok: tuple[int, ...] = (0,)
    walls: list[float] = field(default_factory=list)
    peaks: list[int] = field(default_factory=list)  # KiB

    def run(self) -> tuple[float, int, bytes]:
        """Wall seconds, peak resident KiB and standard output of one run. The peak comes from
        GNU time between this process and the command: a child started straight from here
        would report this (large) process's peak if it were higher, since Linux keeps the
        largest resident set across fork and exec. Wall time includes time's own start (the
        same for every command)."""
        with tempfile.TemporaryDirectory() as scratch:
            peak_file = Path(scratch) / "peak"
            argv = [TIME, "-f", "%M", "-o", str(peak_file), *self.argv] if TIME else self.argv
            out = Path(scratch) / "out"
            with out.open("wb") as sink:
                start = time.perf_counter()
                code = subprocess.call(
                    argv, cwd=self.cwd, env=self.env, stdout=sink, stderr=subprocess.STDOUT
                )
                wall = time.perf_counter() - start
            output = out.read_bytes()
            peak = int(peak_file.read_text().split()[-1]) if TIME else 0
        if code not in self.ok:
            text = output.decode(errors="replace")[-1500:]
            raise SystemExit(f"{self.label}: exit {code}\n{text}")
        return wall, peak, output

    @property
    def median(self) -> float:
        return statistics.median(self.walls)

    @property
    def peak(self) -> int:
        return max(self.peaks)


def load() -> str:
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


def interleaved(commands: Sequence[Command], repeat: int) -> None:
    """One warm-up run each (it writes the bytecode caches), then ``repeat`` rounds."""
    for command in commands:
        command.run()
    for _ in range(repeat):
        for command in commands:
            wall, peak, _ = command.run()
            command.walls.append(wall)
            command.peaks.append(peak)


def instructions(command: Command) -> int:
    """Instructions of one run of ``command`` (its own process, not its children)."""
    return callgrind.instructions(command.argv, command.env, command.cwd)[0]


def tree_instructions(command: Command) -> list[tuple[int, str]]:
    """Instructions of one run of ``command`` and of every process it starts (git's among
    them), as ``(count, command line)``, largest first."""
    return callgrind.tree_instructions(command.argv, command.env, command.cwd)


def show(commands: Sequence[Command], *, memory: bool = False) -> None:
    base = commands[0]
    for c in commands:
        line = (
            f"  {c.label:44s} median {c.median * 1000:9.1f} ms  best {min(c.walls) * 1000:9.1f} ms"
        )
        line += f"  ({c.median / base.median:5.2f}x the first)"
        if memory:
            line += f"  peak {c.peak / 1024:7.1f} MiB"
        print(line)


def paired(a: Command, b: Command) -> str:
    ratios = [x / y for x, y in zip(a.walls, b.walls, strict=True)]
    return (
        f"paired {a.label} / {b.label}: median {statistics.median(ratios):.3f} "
        f"({min(ratios):.3f}-{max(ratios):.3f}, {len(ratios)} pairs)"
    )


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.work: Path = args.work
        self.work.mkdir(parents=True, exist_ok=True)
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE",)}
        env["PYTHONPYCACHEPREFIX"] = str(self.work / "pycache")
        env.pop("PYTHONPATH", None)
        # one identity for the commits made here and for the hook's commit being made: the
        # conversation that created a delta updates it (another identity would be DL211)
        for who in ("AUTHOR", "COMMITTER"):
            env[f"GIT_{who}_NAME"] = "bench"
            env[f"GIT_{who}_EMAIL"] = "bench@example.invalid"
        self.plain = env
        self.sides = [("this", {**env, "PYTHONPATH": str(SRC)})]
        if args.against:
            self.sides.append(("before", {**env, "PYTHONPATH": str(args.against.resolve())}))

    # --- data -------------------------------------------------------------------------------

    def store(self, name: str, count: int, *, git: bool = False) -> Path:
        root = self.work / name
        if not (root / CHANGES_DIR).is_dir():
            generate(root, count)
            if git:
                for argv in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "deltas"]):
                    self.git(root, *argv)
        return root

    def git(self, root: Path, *argv: str) -> str:
        done = subprocess.run(
            ["git", *argv], cwd=root, env=self.plain, check=True, capture_output=True
        )
        return done.stdout.decode()

    def staged_delta(self, root: Path) -> str:
        """A delta of ``root`` changed and staged the way an agent updates it: one more change
        and a later ``updated_at``. The same one in every store (the first open delta)."""
        changes = root / CHANGES_DIR
        name = next(n for n in sorted(os.listdir(changes)) if not n.endswith(".frozen.json"))
        path = changes / name
        record = json.loads(path.read_text(encoding="utf-8"))
        if "One more change." not in record["changes"]:
            record["changes"].append("One more change.")
            later = datetime.fromisoformat(record["updated_at"]) + timedelta(minutes=1)
            record["updated_at"] = later.isoformat()
            text = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
            path.write_text(text, encoding="utf-8")
            self.git(root, "add", "--", str(path.relative_to(root)))
        return str(path.relative_to(root))

    def clean_python(self) -> str:
        venv = self.work / "clean-venv"
        if not (venv / "bin" / "python").exists():
            subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
        return str(venv / "bin" / "python")

    def continuity(self, *argv: str) -> list[str]:
        """The ``continuity`` script of this venv, or with ``--module`` ``python -m
        continuity_checks`` (the same entry point for two versions whose scripts differ)."""
        if self.args.module:
            return [sys.executable, "-m", "continuity_checks", *argv]
        return [str(BIN / "continuity"), *argv]

    def each_side(self, label: str, argv: list[str], cwd: Path, ok: tuple[int, ...] = (0,)):
        return [Command(f"{label} [{side}]", argv, cwd, env, ok) for side, env in self.sides]

    def counted(self, commands: Sequence[Command]) -> None:
        if self.args.no_instructions:
            return
        counts = [instructions(c) for c in commands]
        for c, n in zip(commands, counts, strict=True):
            print(
                f"  instructions {c.label:44s} {n / 1e6:10,.1f} M  ({n / counts[0]:.2f}x the first)"
            )

    # --- rows -------------------------------------------------------------------------------

    def check_all(self) -> None:
        """One process against one process: ``--jobs 1`` (the peers use one CPU), in wall time
        (paired with each peer) and in instructions; and the default ``--jobs`` (as a user runs
        it: two processes on two idle CPUs) in wall time, paired with each peer."""
        count = self.args.count
        root = self.store(f"d{count}", count)
        changes = root / CHANGES_DIR
        names = sorted(os.listdir(changes))
        print(f"check --all: {count} deltas in {root}, load {load()}")
        ones = self.each_side(
            "continuity check --all --jobs 1",
            self.continuity("check", "--all", "--jobs", "1"),
            root,
        )
        defaults = self.each_side(
            "continuity check --all (default --jobs)", self.continuity("check", "--all"), root
        )
        jsonschema = [str(BIN / "check-jsonschema"), "--schemafile", str(SCHEMA), *names]
        peers = [Command("check-jsonschema", jsonschema, changes, self.plain)]
        try:
            import orjson  # noqa: F401
        except ImportError:
            print("  (orjson not installed: no orjson + jsonschema-rs loop)")
        else:
            loop = [sys.executable, str(REPO / "benchmarks" / "peer_loop.py"), str(SCHEMA), "."]
            peers.append(Command("orjson + jsonschema-rs loop", loop, changes, self.plain))
        interleaved([*ones, *defaults, *peers], self.args.repeat)
        show([*ones, *defaults, *peers])
        for peer in peers:
            for side in (*ones, *defaults):
                print("  " + paired(side, peer))
        if len(self.sides) == 2:
            print("  " + paired(ones[0], ones[1]))
            print("  " + paired(defaults[0], defaults[1]))
        self.counted([*ones, *peers])  # one process each: the default --jobs may fork
        print(f"  load after: {load()}")

    def hook(self) -> None:
        root = self.store("r10", 10, git=True)
        delta = self.staged_delta(root)
        print(f"hook: continuity check --staged {delta} in a store of 10, load {load()}")
        commands = self.each_side(
            "continuity check --staged", self.continuity("check", "--staged", delta), root
        )
        commands.append(
            Command(
                "python -m json.tool", [sys.executable, "-m", "json.tool", delta], root, self.plain
            )
        )
        commands.append(
            Command("python -c pass (this venv)", [sys.executable, "-c", "pass"], root, self.plain)
        )
        commands.append(
            Command(
                "python -c pass (clean venv)", [self.clean_python(), "-c", "pass"], root, self.plain
            )
        )
        interleaved(commands, self.args.runs)
        show(commands)
        if len(self.sides) == 2:
            print("  " + paired(commands[0], commands[1]))
        print("  " + paired(commands[0], commands[len(self.sides)]))
        self.counted(commands)
        print(f"  load after: {load()}")

    def hook_store(self) -> None:
        small = self.store("r10", 10, git=True)
        large = self.store(f"r{self.args.large}", self.args.large, git=True)
        deltas = [self.staged_delta(small), self.staged_delta(large)]
        print(f"hook in a store of {self.args.large} deltas against 10, load {load()}")
        commands = []
        for root, delta, size in ((small, deltas[0], 10), (large, deltas[1], self.args.large)):
            argv = self.continuity("check", "--staged", delta)
            commands += self.each_side(f"hook, {size} deltas", argv, root)
        commands.sort(key=lambda c: c.label.rpartition("[")[2])  # this, this, before, before
        interleaved(commands, self.args.runs)
        show(commands)
        for i in range(0, len(commands), 2):
            print("  " + paired(commands[i + 1], commands[i]))
        self.counted(commands)
        if self.args.no_instructions:
            return
        # git's share: the staged changes and the trees cost git itself more in a large store
        for command in commands:
            counts = tree_instructions(command)
            total = sum(n for n, _ in counts)
            print(f"  process tree {command.label:40s} {total / 1e6:10,.1f} M")
            for n, cmd in counts:
                print(f"    {n / 1e6:10,.1f} M  {cmd[:100]}")

    def recent(self) -> None:
        small = self.store("d10", 10)
        large = self.store(f"d{self.args.large}", self.args.large)
        print(f"delta recent --limit 5, {self.args.large} deltas against 10, load {load()}")
        commands = []
        for root, size in ((small, 10), (large, self.args.large)):
            argv = self.continuity("delta", "--root", str(root), "recent", "--limit", "5")
            commands += self.each_side(f"recent, {size} deltas", argv, root)
        interleaved(commands, 3)
        show(commands, memory=True)
        for side, _ in self.sides:
            ten, big = (c for c in commands if c.label.endswith(f"[{side}]"))
            print(f"  memory [{side}]: {big.peak / ten.peak:.2f}x the 10-delta store")

    def legacy(self) -> None:
        root = self.work / "legacy"
        history = root / ".deltalayer" / "changes.jsonl"
        lines = self.args.legacy
        if not history.exists():
            generate(root, 0)
            with history.open("w", encoding="utf-8") as out:
                for n in range(lines):
                    day, minute = divmod(n, 1440)
                    out.write(
                        json.dumps(
                            {
                                "time": f"2020-01-01T{minute // 60:02d}:{minute % 60:02d}:00+00:00",
                                "source": "legacy",
                                "changes": [f"Legacy change {n} of day {day}."],
                            },
                            separators=(",", ":"),
                        )
                        + "\n"
                    )
        print(f"delta recent --limit 1 on {lines} legacy lines, load {load()}")
        argv = self.continuity("delta", "--root", str(root), "recent", "--limit", "1")
        commands = self.each_side("recent --limit 1, legacy", argv, root)
        interleaved(commands, 1)
        show(commands, memory=True)

    def own_peak(self, command: Command) -> int:
        """The peak resident KiB of the Python process alone (``VmHWM`` when it exits), without
        its git children: ``git log`` over a long range holds every commit it has shown
        (about 2 KB each), which GNU time's peak of the process tree includes."""
        with tempfile.TemporaryDirectory() as scratch:
            out = Path(scratch) / "peak"
            wrapper = (
                "import atexit, runpy, sys\n"
                "def peak():\n"
                "    status = open('/proc/self/status').read()\n"
                f"    open({str(out)!r}, 'w').write(status.split('VmHWM:')[1].split()[0])\n"
                "atexit.register(peak)\n"
                "sys.argv = ['continuity', *sys.argv[1:]]\n"
                "runpy.run_module('continuity_checks', run_name='__main__', alter_sys=True)\n"
            )
            given = command.argv[len(self.continuity()) :]  # the command's own arguments
            argv = [sys.executable, "-c", wrapper, *given]
            Command(command.label, argv, command.cwd, command.env, command.ok).run()
            return int(out.read_text())

    def verify_memory(self) -> None:
        root = self.work / f"v{self.args.commits}"
        if not (root / ".git").exists():
            subprocess.run(
                [sys.executable, str(REPO / "benchmarks" / "bench_verify.py"), "--commits",
                 str(self.args.commits), "--updates", "99", "--repeat", "1", "--keep", str(root)],
                check=True, env=self.plain, stdout=subprocess.DEVNULL,
            )  # fmt: skip
        quarter = self.args.commits // 4
        print(f"verify, {quarter} and {self.args.commits} commits, load {load()}")
        commands = []
        for spec, count in (
            (f"HEAD~{self.args.commits - quarter}..HEAD", quarter),
            ("HEAD", self.args.commits),
        ):
            argv = self.continuity("verify", "--range", spec, "--format", "json")
            commands += self.each_side(f"verify, {count} commits", argv, root, ok=(0, 1))
        interleaved(commands, 1)
        show(commands, memory=True)
        print("  (peak: the process tree, git log included; the Python process alone:)")
        for c in commands:
            print(f"  {c.label:44s} own peak {self.own_peak(c) / 1024:7.1f} MiB")

    def jobs(self) -> None:
        count = self.args.count
        root = self.store(f"d{count}", count)
        print(f"check --all, default --jobs against --jobs 1, {count} deltas, load {load()}")
        commands = []
        for side, env in self.sides:
            commands.append(
                Command(f"--jobs default [{side}]", self.continuity("check", "--all"), root, env)
            )
            commands.append(
                Command(
                    f"--jobs 1 [{side}]",
                    self.continuity("check", "--all", "--jobs", "1"),
                    root,
                    env,
                )
            )
        for busy in (0, os.cpu_count() or 1):
            spinners = [
                subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(busy)
            ]
            try:
                for c in commands:
                    c.walls.clear()
                    c.peaks.clear()
                time.sleep(1 if busy else 0)
                print(f" {busy} spinning processes, load {load()}")
                interleaved(commands, self.args.repeat)
                show(commands)
                for i in range(0, len(commands), 2):
                    print("  " + paired(commands[i], commands[i + 1]))
            finally:
                for spinner in spinners:
                    spinner.send_signal(signal.SIGTERM)
                    spinner.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, help="data directory, kept and reused")
    parser.add_argument("--against", type=Path, help="another version's src directory")
    parser.add_argument("--rows", default=",".join(ROWS), help=f"some of {','.join(ROWS)}")
    parser.add_argument("--count", type=int, default=10_000, help="deltas for check --all")
    parser.add_argument("--large", type=int, default=100_000, help="deltas of the large store")
    parser.add_argument("--legacy", type=int, default=1_000_000, help="legacy history lines")
    parser.add_argument("--commits", type=int, default=100_000, help="commits for verify")
    parser.add_argument("--repeat", type=int, default=7, help="rounds of the bulk commands")
    parser.add_argument("--runs", type=int, default=21, help="rounds of the one-file commands")
    parser.add_argument("--no-instructions", action="store_true", help="skip valgrind")
    parser.add_argument(
        "--module", action="store_true", help="run python -m continuity_checks, not the script"
    )
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        args.no_instructions = True
    scratch = None
    if args.work is None:
        scratch = tempfile.TemporaryDirectory()
        args.work = Path(scratch.name)
    bench = Bench(args)
    rows: dict[str, Callable[[], None]] = {
        "check-all": bench.check_all,
        "hook": bench.hook,
        "hook-store": bench.hook_store,
        "recent": bench.recent,
        "legacy": bench.legacy,
        "verify-memory": bench.verify_memory,
        "jobs": bench.jobs,
    }
    print(f"{os.cpu_count()} CPUs, load {load()}, {sys.executable}")
    for row in args.rows.split(","):
        if row not in rows:
            raise SystemExit(f"unknown row {row!r}: expected some of {', '.join(ROWS)}")
        rows[row]()
    if scratch is not None:
        scratch.cleanup()


if __name__ == "__main__":
    main()
