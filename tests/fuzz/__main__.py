"""``python -m tests.fuzz``: the fuzz session (``nox -s fuzz``), recorded in docs/reliability.md.

Each family's inputs, and each helper command's (``--helper``, tests/fuzz/helpers.py), are cut
into chunks run by worker processes, each in its own scratch
repository. A worker that stops making progress for ``--hard-timeout`` seconds (a hang SIGPROF
cannot break, in native code) is killed: the input it was on counts as a hang, and the rest of
its chunk runs again in a new worker. Exit status 1 when any traceback, hang, silent pass, or read or write outside the root.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from tests.fuzz import helpers
from tests.fuzz.families import FAMILIES
from tests.fuzz.runner import KEPT_FAILURES, Rates, Tally, run_task

DEFAULT_CORPUS = Path("/work/shared/corpus")


def _child(result: str, progress: Any, args: tuple[Any, ...]) -> None:
    if args[0] in helpers.HELPERS:
        name, start, stop, scratch, _, seed, timeout, _, _ = args
        outcome = helpers.run_task(name, start, stop, scratch, seed, timeout, progress=progress)
    else:
        outcome = run_task(*args, progress=progress)
    Path(result).write_text(json.dumps(outcome), encoding="utf-8")


def fuzz(
    families: list[str],
    per_family: int,
    *,
    helper_names: tuple[str, ...] = (),
    per_helper: int = 0,
    workers: int,
    chunk: int,
    seed: int,
    timeout: float,
    hard_timeout: float,
    corpus: Path,
    rates: Rates,
    work: Path,
    failures_dir: Path | None,
    log: Any = sys.stderr,
) -> dict[str, Any]:
    """Run every chunk; return the tallies per family and the duration."""
    context = multiprocessing.get_context("fork")
    counts = {**{name: per_family for name in families}, **dict.fromkeys(helper_names, per_helper)}
    pending = [
        (name, start, min(start + chunk, count))
        for name, count in counts.items()
        for start in range(0, count, chunk)
    ]
    tallies = {name: Tally() for name in counts}
    seconds = {name: 0.0 for name in counts}
    running: list[dict[str, Any]] = []
    began = reported = time.monotonic()
    serial = 0
    while pending or running:
        while pending and len(running) < workers:
            name, start, stop = pending.pop(0)
            serial += 1
            result = work / f"result-{serial}.json"
            progress = context.Value("q", start)
            args = (name, start, stop, str(work / f"scratch-{serial}"), str(corpus), seed,
                    timeout, asdict(rates), str(failures_dir) if failures_dir else None)  # fmt: skip
            proc = context.Process(target=_child, args=(str(result), progress, args))
            proc.start()
            running.append({"proc": proc, "name": name, "start": start, "stop": stop,
                            "result": result, "progress": progress, "seen": start,
                            "since": time.monotonic(), "began": time.monotonic()})  # fmt: skip
        time.sleep(0.2)
        for job in list(running):
            proc = job["proc"]
            if not proc.is_alive():
                proc.join()
                running.remove(job)
                name = job["name"]
                if proc.exitcode == 0 and job["result"].exists():
                    outcome = json.loads(job["result"].read_text(encoding="utf-8"))
                    tallies[name].add(outcome)
                    seconds[name] += outcome["seconds"]
                else:  # the worker itself died: its current input is the culprit
                    _lost(tallies[name], job, f"worker exit {proc.exitcode}", pending, "tracebacks")
                continue
            value = job["progress"].value
            if value != job["seen"]:
                job["seen"], job["since"] = value, time.monotonic()
            elif time.monotonic() - job["since"] > hard_timeout:
                proc.kill()
                proc.join()
                running.remove(job)
                _lost(tallies[job["name"]], job, f"no progress for {hard_timeout} s", pending,
                      "hangs")  # fmt: skip
        if log is not None and time.monotonic() - reported > 60:
            reported = time.monotonic()
            done = sum(t.inputs for t in tallies.values())
            print(f"... {done} inputs, {reported - began:.0f} s", file=log, flush=True)
    return {
        "families": {name: tallies[name].to_json() for name in counts},
        "worker_seconds": seconds,
        "seconds": time.monotonic() - began,
    }


def _lost(tally: Tally, job: dict[str, Any], why: str, pending: list[Any], kind: str) -> None:
    """A chunk whose worker was killed or died at input ``h``: ``h`` is counted, the inputs
    before and after it run again in new workers."""
    hung = job["progress"].value
    tally.inputs += 1
    setattr(tally, kind, getattr(tally, kind) + 1)
    if len(tally.failures) < KEPT_FAILURES:
        tally.failures.append({"kind": kind, "family": job["name"], "index": hung, "detail": why})
    if job["start"] < hung:
        pending.append((job["name"], job["start"], hung))
    if hung + 1 < job["stop"]:
        pending.append((job["name"], hung + 1, job["stop"]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__)
    parser.add_argument("--per-family", type=int, default=100_000)
    parser.add_argument("--family", action="append", choices=sorted(FAMILIES))
    parser.add_argument("--helper", action="append", choices=sorted(helpers.HELPERS))
    parser.add_argument(
        "--per-helper", type=int, default=10_000, help="inputs per helper command (0: none)"
    )
    parser.add_argument(
        "--workers", type=int, default=4, help="processes (2 CPUs: 4 keep both busy)"
    )
    parser.add_argument("--chunk", type=int, default=5_000)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds of CPU per input")
    parser.add_argument("--hard-timeout", type=float, default=120.0)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--history-rate", type=float, default=Rates.history)
    parser.add_argument("--config-rate", type=float, default=Rates.config)
    parser.add_argument("--cli-rate", type=float, default=Rates.cli)
    parser.add_argument("--failures", type=Path, help="save failing inputs here")
    parser.add_argument("--json", type=Path, help="write the summary here")
    parser.add_argument(
        "--replay", type=int, help="run one input (with --family or --helper) and print it"
    )
    args = parser.parse_args(argv)
    if not args.corpus.is_dir():
        parser.error(f"the corpus {args.corpus} is missing: the fuzzer's seeds come from it")
    families = args.family or ([] if args.helper else sorted(FAMILIES))
    chosen = tuple(args.helper or ([] if args.family else sorted(helpers.HELPERS)))
    rates = Rates(args.history_rate, args.config_rate, args.cli_rate)
    memory = "/dev/shm" if os.path.isdir("/dev/shm") else None  # scratch writes stay in memory
    with tempfile.TemporaryDirectory(prefix="continuity-fuzz-", dir=memory) as tmp:
        if args.replay is not None and chosen and not args.family:
            outcome = helpers.run_task(chosen[0], args.replay, args.replay + 1, f"{tmp}/s",
                                       args.seed, args.timeout)  # fmt: skip
            print(json.dumps(outcome, indent=2))
            return 1 if outcome["failures"] else 0
        if args.replay is not None:
            outcome = run_task(families[0], args.replay, args.replay + 1, f"{tmp}/s",
                               str(args.corpus), args.seed, args.timeout, asdict(rates),
                               str(args.failures) if args.failures else None)  # fmt: skip
            print(json.dumps(outcome, indent=2))
            return 1 if outcome["failures"] else 0
        summary = fuzz(
            families,
            args.per_family,
            helper_names=chosen if args.per_helper else (),
            per_helper=args.per_helper,
            workers=args.workers,
            chunk=args.chunk,
            seed=args.seed,
            timeout=args.timeout,
            hard_timeout=args.hard_timeout,
            corpus=args.corpus,
            rates=rates,
            work=Path(tmp),
            failures_dir=args.failures,
        )
    summary["command"] = "python -m tests.fuzz " + " ".join(argv or sys.argv[1:])
    text = json.dumps(summary, indent=2)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    print(f"{'family':22} {'inputs':>8} {'invalid':>8} {'file':>7} {'config':>7} {'history':>7} "
          f"{'cli':>5} {'tracebacks':>10} {'hangs':>6} {'silent':>6} {'outside':>7}")  # fmt: skip
    bad = 0
    for name, t in summary["families"].items():
        k = t["kinds"]
        outside = t["outside_writes"] + t["outside_reads"]
        print(f"{name:22} {t['inputs']:>8} {t['invalid_inputs']:>8} {k.get('file', 0):>7} "
              f"{k.get('config', 0):>7} {k.get('history', 0):>7} {k.get('cli', 0):>5} "
              f"{t['tracebacks']:>10} {t['hangs']:>6} {t['silent_passes']:>6} "
              f"{outside:>7}")  # fmt: skip
        bad += t["tracebacks"] + t["hangs"] + t["silent_passes"] + outside
        for failure in t["failures"][:5]:
            print("   ", json.dumps(failure)[:600])
    print(f"{summary['seconds']:.0f} s wall")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
