"""What each module's import costs one run of a command, in instructions.

The command runs once for warm bytecode, then once under ``valgrind --tool=callgrind`` with a
mark (a call of ``os.getppid``, which callgrind dumps before: ``--dump-before=getppid``) where
each module's execution starts and ends. Every interval between two marks goes to the module
executing then (the innermost), so a module's row is its own work (its code, its classes, its
expressions, the search for the modules it imports), not its imports'. ``<interp>`` is the
interpreter's start-up before the first mark, ``<main>`` the rest: the run and the teardown
(``<exit>``, after the last mark, is shown apart)::

    cd /tmp/bb/r10 && python benchmarks/import_costs.py [--src SRC] [--top 60] -- \\
        check --staged .deltalayer/changes/<the staged delta>

The marks cost about 5 M instructions of their own, spread over the rows. With ``--keep DIR``
the dumps stay in ``DIR``, and ``--parts MODULE`` prints the dumps of one module's row, for
``callgrind_annotate --inclusive=yes $(...)``: where its instructions go (unmarshalling its
bytecode, making its classes, compiling its expressions).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

#: run in the measured process: marks each module's execution, then runs the command
DRIVER = """
import os, runpy, sys
import _frozen_importlib as bootstrap

events = []
load = bootstrap._load_unlocked


def marked(spec):
    events.append("+ " + spec.name)
    os.getppid()
    try:
        return load(spec)
    finally:
        events.append("- " + spec.name)
        os.getppid()


bootstrap._load_unlocked = marked
sys.argv = ["continuity", *sys.argv[2:]]
try:
    runpy.run_module("continuity_checks", run_name="__main__", alter_sys=True)
except SystemExit:
    pass
events.append("end")
os.getppid()
with open(os.environ["MARKS"], "w") as out:
    out.write("\\n".join(events) + "\\n")
"""


def _parts(directory: Path) -> dict[int, int]:
    """Each dump's number and its instructions."""
    found: dict[int, int] = {}
    for path in directory.glob("out*"):
        part = None
        with path.open(encoding="utf-8", errors="replace") as dump:
            for line in dump:
                if line.startswith("part:"):
                    part = int(line.split()[1])
                elif line.startswith("summary:") and part is not None:
                    found[part] = int(line.split()[1])
                    break
    return found


def where_each_part_goes(events: list[str]) -> list[tuple[int, str]]:
    """Each dump's number and the row it goes to: part 1 is before the first mark (the
    interpreter's start-up), part k + 1 follows mark k."""
    found = [(1, "<interp>")]
    stack = ["<main>"]
    for index, event in enumerate(events):
        if event.startswith("+ "):
            stack.append(event[2:])
        elif event.startswith("- "):
            stack.pop()
        found.append((index + 2, "<exit>" if event == "end" else stack[-1]))
    return found


def attribute(parts: dict[int, int], events: list[str]) -> collections.Counter[str]:
    """Instructions by module (see :func:`where_each_part_goes`)."""
    costs: collections.Counter[str] = collections.Counter()
    for part, where in where_each_part_goes(events):
        costs[where] += parts.get(part, 0)
    return costs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", type=Path, help="the src directory measured (PYTHONPATH)")
    parser.add_argument("--top", type=int, default=60, help="modules listed")
    parser.add_argument("--keep", type=Path, help="keep the dumps and the marks in this directory")
    parser.add_argument(
        "--parts", metavar="MODULE", help="print the dumps of MODULE's row (--keep)"
    )
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- and the command's arguments")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONHASHSEED"] = "0"
    if args.src is not None:
        env["PYTHONPATH"] = str(args.src.resolve())
    if args.parts is not None and args.keep is None:
        parser.error("--parts needs --keep")
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
        for old in args.keep.glob("out*"):  # a previous run's dumps
            old.unlink()
    kept = contextlib.nullcontext(str(args.keep)) if args.keep else tempfile.TemporaryDirectory()
    with kept as scratch:
        work = Path(scratch)
        driver = work / "driver.py"
        driver.write_text(DRIVER, encoding="utf-8")
        env["MARKS"] = str(work / "marks")
        run = [sys.executable, str(driver), "--", *command]
        subprocess.run(run, env=env, capture_output=True, check=False)  # warm bytecode
        valgrind = ["valgrind", "--tool=callgrind", "--dump-before=getppid", "--dump-instr=no"]
        valgrind.append(f"--callgrind-out-file={work / 'out'}")
        subprocess.run([*valgrind, *run], env=env, capture_output=True, check=False)
        events = (work / "marks").read_text(encoding="utf-8").splitlines()
        costs = attribute(_parts(work), events)
        if args.parts is not None:
            dumps = [p for p, where in where_each_part_goes(events) if where == args.parts]
            print(" ".join(str(work / f"out.{p}") for p in dumps))
            return
    total = sum(costs.values())
    ours = sum(v for k, v in costs.items() if k.startswith("continuity_checks"))
    special = ("<interp>", "<main>", "<exit>")
    others = total - ours - sum(costs[k] for k in special)
    print(
        f"total {total / 1e6:.1f} M: this project's modules {ours / 1e6:.1f} M, other modules "
        f"{others / 1e6:.1f} M, " + ", ".join(f"{k} {costs[k] / 1e6:.1f} M" for k in special)
    )
    for name, cost in costs.most_common(args.top):
        print(f"{cost / 1e6:8.2f} M  {name}")


if __name__ == "__main__":
    main()
