"""Benchmark ``continuity check``, side by side with its peer and the interpreter floor, in one run.

1. ``continuity check --all --root DIR`` on N generated deltas (default 10,000) against
   ``check-jsonschema --schemafile <the shipped delta schema> <the same files>``: each run
   several times, the two interleaved, median and best reported.
2. ``continuity check <one delta>`` (what a commit hook runs) against ``python -c pass`` (the
   interpreter's start-up, the floor no Python hook can beat): with hyperfine when it is on PATH,
   else a loop of subprocess runs.

Not part of the test run (``nox -s bench``)::

    python benchmarks/bench_check.py [--count 10000] [--repeat 5] [--runs 30]
                                     [--keep DIR] [--write-doc docs/performance.md]

``--write-doc`` replaces the ``## check`` section of the file (and nothing else in it).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gen_deltas import CHANGES_DIR, generate

REPO = Path(__file__).resolve().parents[1]
SCHEMA_NAME = "deltalayer-conversation-delta.schema.json"
SECTION = "## check"


@dataclass
class Timing:
    label: str
    command: str
    seconds: list[float]

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def best(self) -> float:
        return min(self.seconds)


def tool(name: str) -> str:
    """The executable installed beside this interpreter, else the one on PATH."""
    beside = Path(sys.executable).parent / name
    if beside.is_file():
        return str(beside)
    found = shutil.which(name)
    if found is None:
        raise SystemExit(f"{name} is not installed (pip install -e '.[dev]')")
    return found


def schema_path() -> Path:
    in_repo = REPO / "src" / "continuity_checks" / "schemas" / SCHEMA_NAME
    if in_repo.is_file():
        return in_repo
    spec = importlib.util.find_spec("continuity_checks.schemas")
    if spec is None or spec.origin is None:
        raise SystemExit("continuity-checks is not installed")
    return Path(spec.origin).parent / SCHEMA_NAME


def run_once(argv: Sequence[str], cwd: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        output = done.stdout.decode(errors="replace")[-2000:]
        raise SystemExit(f"{argv[0]} exited {done.returncode}:\n{output}")
    return elapsed


def interleaved(
    runs: Sequence[tuple[str, str, Sequence[str], Path]], repeat: int, warmup: int = 1
) -> list[Timing]:
    """Run each command ``repeat`` times, alternating between them so drift hits all alike."""
    for _ in range(warmup):
        for _, _, argv, cwd in runs:
            run_once(argv, cwd)
    timings = [Timing(label, shown, []) for label, shown, _, _ in runs]
    for _ in range(repeat):
        for timing, (_, _, argv, cwd) in zip(timings, runs, strict=True):
            timing.seconds.append(run_once(argv, cwd))
    return timings


def hyperfine(
    runs: Sequence[tuple[str, str, Sequence[str], Path]], count: int, cwd: Path
) -> list[Timing]:
    """Time short commands with hyperfine (no shell, warm-up first)."""
    with tempfile.TemporaryDirectory() as tmp:
        export = Path(tmp) / "hyperfine.json"
        argv = ["hyperfine", "--shell=none", "--warmup", "5", "--runs", str(count)]
        argv += ["--export-json", str(export)]
        for label, _, command, _ in runs:
            argv += ["--command-name", label, " ".join(command)]
        subprocess.run(argv, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
        results = json.loads(export.read_text(encoding="utf-8"))["results"]
    return [
        Timing(label, shown, list(result["times"]))
        for (label, shown, _, _), result in zip(runs, results, strict=True)
    ]


def versions() -> str:
    parts = [f"Python {platform.python_version()}"]
    for dist in ("continuity-checks", "jsonschema-rs", "check-jsonschema", "jsonschema"):
        with contextlib.suppress(metadata.PackageNotFoundError):
            parts.append(f"{dist} {metadata.version(dist)}")
    if shutil.which("hyperfine"):
        out = subprocess.run(["hyperfine", "--version"], capture_output=True, text=True).stdout
        parts.append(out.strip())
    return ", ".join(parts)


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}"


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms" if seconds >= 0.1 else f"{seconds * 1000:.1f} ms"


def table(timings: Sequence[Timing]) -> list[str]:
    lines = ["| command | median | best | runs |", "|---|---:|---:|---:|"]
    for t in timings:
        lines.append(f"| `{t.command}` | {ms(t.median)} | {ms(t.best)} | {len(t.seconds)} |")
    return lines


def report(
    count: int,
    bulk: Sequence[Timing],
    startup: Sequence[Timing],
    startup_tool: str,
    startup_command: str | None,
    load: tuple[str, str],
) -> str:
    ours, peer = bulk
    floor, one = startup
    ratio = peer.median / ours.median
    beyond = one.median - floor.median
    per_file = (ours.median - one.median) / count
    lines = [
        SECTION,
        "",
        f"Measured by `python benchmarks/bench_check.py --count {count}` (`nox -s bench`), all",
        "numbers from one run, side by side; wall time of the whole process, as a user sees it.",
        "",
        f"- Machine: {machine()}; load average {load[0]} at the start, {load[1]} at the end.",
        f"- Software: {versions()}.",
        "",
        f"### `check --all` on {count:,} generated deltas vs check-jsonschema",
        "",
        f"`python benchmarks/gen_deltas.py DIR --count {count}` writes the deltas (deterministic;",
        "all valid, so both tools read and validate every file and report nothing). The two",
        "commands ran alternately, after one warm-up run each; check-jsonschema gets the file",
        "names relative to `DIR/.deltalayer/changes`, with the same schema file the package ships.",
        "",
        *table(bulk),
        "",
        "`continuity check --all` does more than the schema (strict JSON, file names, twins,",
        f"compact form, AGENTS.md) and is **{ratio:.1f}×** faster by the median; beyond a one-file",
        f"run it costs {per_file * 1e6:.0f} µs per file. Target (DESIGN.md): at least 10× and far",
        f"below a second — {'met' if ratio >= 10 and ours.median < 1 else 'not met yet'}.",
        "",
        "### One file (a commit hook's run) vs the interpreter's start-up",
        "",
        f"Timed with {startup_tool}, from the project directory, one delta given as a",
        "relative path the way pre-commit passes it.",
        "",
        *(["```sh", startup_command, "```", ""] if startup_command else []),
        *table(startup),
        "",
        f"`continuity check` on one file costs **{ms(beyond)}** beyond the interpreter's",
        "start-up (median against median). Target: well under 100 ms — "
        f"{'met' if beyond < 0.1 else 'not met yet'}.",
        "",
    ]
    return "\n".join(lines)


def write_section(doc: Path, section: str) -> None:
    """Replace the ``## check`` section of ``doc`` (up to the next ``## `` heading), or add it;
    every other section stays byte for byte."""
    text = doc.read_text(encoding="utf-8") if doc.is_file() else "# Performance\n"
    pattern = re.compile(rf"^{re.escape(SECTION)}\n.*?(?=^## |\Z)", re.DOTALL | re.MULTILINE)
    if pattern.search(text):
        text = pattern.sub(lambda _: section + "\n", text, count=1)
    else:
        text = text.rstrip("\n") + "\n\n" + section
    doc.write_text(text.rstrip("\n") + "\n", encoding="utf-8", newline="\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=10_000, help="deltas to generate")
    parser.add_argument("--repeat", type=int, default=5, help="runs of each bulk command")
    parser.add_argument("--runs", type=int, default=30, help="runs of each one-file command")
    parser.add_argument("--keep", type=Path, help="generate into this directory and keep it")
    parser.add_argument("--write-doc", type=Path, help="replace the '## check' section here")
    parser.add_argument("--no-hyperfine", action="store_true", help="time with a plain loop")
    args = parser.parse_args(argv)

    load_start = f"{os.getloadavg()[0]:.2f}"
    with tempfile.TemporaryDirectory() as tmp:
        root = (args.keep or Path(tmp) / "project").resolve()
        if root.exists() and any(root.iterdir()):
            raise SystemExit(f"{root} is not empty")
        print(f"generating {args.count} deltas in {root} ...", file=sys.stderr)
        paths = generate(root, args.count)
        changes = root / CHANGES_DIR
        continuity = tool("continuity")
        schema = schema_path()
        names = [p.name for p in paths]
        shown_schema = (
            schema.relative_to(REPO).as_posix() if schema.is_relative_to(REPO) else str(schema)
        )

        print("timing check --all against check-jsonschema ...", file=sys.stderr)
        bulk = interleaved(
            [
                (
                    "continuity",
                    "continuity check --all --root DIR",
                    [continuity, "check", "--all", "--root", str(root)],
                    root,
                ),
                (
                    "check-jsonschema",
                    f"check-jsonschema --schemafile {shown_schema} <{args.count:,} files>",
                    [tool("check-jsonschema"), "--schemafile", str(schema), *names],
                    changes,
                ),
            ],
            args.repeat,
        )

        one = f"{CHANGES_DIR}/{names[0]}"
        startup_runs: list[tuple[str, str, Sequence[str], Path]] = [
            ("floor", "python -c pass", [sys.executable, "-c", "pass"], root),
            ("one file", f"continuity check {one}", [continuity, "check", one], root),
        ]
        print("timing one file against python -c pass ...", file=sys.stderr)
        if shutil.which("hyperfine") and not args.no_hyperfine:
            startup = hyperfine(startup_runs, args.runs, root)
            startup_tool = "hyperfine"
            startup_command: str | None = " ".join(
                [f"hyperfine --shell=none --warmup 5 --runs {args.runs}"]
                + [f"'{shown}'" for _, shown, _, _ in startup_runs]
            )
        else:
            startup = interleaved(startup_runs, args.runs, warmup=3)
            startup_tool = f"a loop of {args.runs} subprocess runs each, interleaved"
            startup_command = None

    load = (load_start, f"{os.getloadavg()[0]:.2f}")
    section = report(args.count, bulk, startup, startup_tool, startup_command, load)
    print(section)
    if args.write_doc:
        write_section(args.write_doc, section)
        print(f"wrote the {SECTION!r} section of {args.write_doc}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
