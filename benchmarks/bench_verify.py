"""Benchmark ``continuity verify`` on a generated history.

Builds a repository with N commits (default 10,000) through ``git fast-import``: conversations
one after another, each creating its delta and updating it four times (every commit carries a
``Continuity-Delta`` trailer), one in ten frozen at the end, and a legacy file that is never
touched. Then it times, best of --repeat runs:

- ``git log`` alone with the same options verify uses (the floor set by git),
- ``continuity verify --range HEAD`` as a user runs it (a new interpreter each time),
- with ``--against SRC``, the same verify of another version of the code (its ``src``
  directory, e.g. a ``git worktree`` of an earlier commit), taking turns with this one, so that
  each pair of runs meets the same machine load; the ratio of each pair and their median,

and prints commits/s. With ``--stages``, instead, the instructions of one call of each step of
the walk (the trees of a commit, each family's history rules, the state check and its parts),
on the last commit of ``HEAD~30..HEAD`` that modifies a delta and the last that adds one: the
difference between callgrind counts of a run that repeats the step and one that does not,
divided by the repetitions (of ``--against``'s code when given). With ``--instructions``,
the instructions of one verify run of each version are counted with ``valgrind
--tool=callgrind`` (the Python process only, not its git children; independent of the
machine's load, and slow); with ``--tree`` too, those of every process of the run, git's
included (what the run costs the machine: a look-up that makes git inflate a large tree object
costs little in Python and much in git). The Python commands run as from an installed
package, with bytecode caches (pip writes them at install time): the caches go to a scratch
directory (``PYTHONPYCACHEPREFIX``), written by one warm-up run of each command, even where
the environment sets ``PYTHONDONTWRITEBYTECODE``. Not part of the test run:

    python benchmarks/bench_verify.py [--commits 10000] [--repeat 5] [--keep DIR]
        [--against OTHER/src] [--instructions [--tree] | --stages]
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
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import callgrind

CHANGES = ".deltalayer/changes"
SRC = Path(__file__).resolve().parents[1] / "src"
EPOCH = datetime(2026, 1, 1, 8, 0, tzinfo=timezone(timedelta(hours=8)))
AGENTS = b"<!-- deltalayer-conversation-v0.2.1 -->\n## Project Continuity\n"


def _data(payload: bytes) -> bytes:
    return b"data %d\n%s\n" % (len(payload), payload)


def _delta(n: int, updates: int) -> bytes:
    started = EPOCH + timedelta(minutes=30 * n)
    updated = started + timedelta(seconds=updates)
    record = {
        "started_at": started.isoformat(),
        "updated_at": updated.isoformat(),
        "source": "agent",
        "changes": [
            f"conversation {n} change {i}: why a later conversation needs it"
            for i in range(updates)
        ],
    }
    return (json.dumps(record, separators=(",", ":")) + "\n").encode()


def _name(n: int) -> str:
    """The delta's path without ``.json``, named as DeltaLayer names it (started_at, source)."""
    started = EPOCH + timedelta(minutes=30 * n)
    return f"{CHANGES}/{started.strftime('%Y-%m-%dT%H-%M-%S')}p08-00--agent"


def stream(commits: int, updates: int) -> Iterator[bytes]:
    """The fast-import stream for ``commits`` commits on refs/heads/main: conversations one
    after another, each creating its delta and updating it ``updates`` times."""
    mark = 0
    when = 1_790_000_000
    legacy = b'{"time":"2026-01-01","source":"agent","changes":[]}\n' * 50
    conversation = 0
    while mark < commits:
        for update in range(updates + 1):
            if mark >= commits:
                break
            mark += 1
            path = f"{_name(conversation)}.json"
            ops = [b"M 100644 inline %s\n%s" % (path.encode(), _data(_delta(conversation, update)))]
            last = update == updates
            if last and conversation % 10 == 0:  # freeze: same bytes under the frozen name
                ops = [
                    b"D %s\n" % path.encode(),
                    b"M 100644 inline %s.frozen.json\n%s"
                    % (_name(conversation).encode(), _data(_delta(conversation, update - 1))),
                ]
            if mark == 1:  # a clean project: check --all passes on every commit's tree
                ops.append(b"M 100644 inline .deltalayer/changes.jsonl\n" + _data(legacy))
                ops.append(b"M 100644 inline PROJECT.md\n" + _data(b"# Bench\n"))
                ops.append(b"M 100644 inline AGENTS.md\n" + _data(AGENTS))
            message = b"conversation %d, step %d\n\nContinuity-Delta: %s\n" % (
                conversation,
                update,
                path.encode(),
            )
            yield b"commit refs/heads/main\nmark :%d\n" % mark
            yield b"committer Bench <bench@example.invalid> %d +0000\n" % (when + mark)
            yield _data(message)
            if mark > 1:
                yield b"from :%d\n" % (mark - 1)
            yield b"".join(ops) + b"\n"
        conversation += 1


def build(repo: Path, commits: int, updates: int) -> float:
    start = time.perf_counter()
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    importer = subprocess.Popen(["git", "fast-import", "--quiet"], cwd=repo, stdin=subprocess.PIPE)
    assert importer.stdin is not None
    for chunk in stream(commits, updates):
        importer.stdin.write(chunk)
    importer.stdin.close()
    if importer.wait() != 0:
        raise SystemExit("git fast-import failed")
    subprocess.run(["git", "reset", "-q", "--hard", "main"], cwd=repo, check=True)
    return time.perf_counter() - start


@dataclass
class Timing:
    best: float
    median: float
    cpu: float  # median CPU seconds (user + system) of the command and its children
    output: bytes
    walls: list[float]  # every timed run, in order


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(
    commands: list[list[str]], cwd: Path, repeat: int, envs: list[dict[str, str]]
) -> list[Timing]:
    """Wall and CPU time of each command (run with the environment of the same index) over
    ``repeat`` rounds after one warm-up round (the commands take turns, so that a change in
    machine load hits all of them alike), and its last output."""
    walls: list[list[float]] = [[] for _ in commands]
    cpus: list[list[float]] = [[] for _ in commands]
    outputs = [b""] * len(commands)
    for command, env in zip(commands, envs, strict=True):
        subprocess.run(command, cwd=cwd, capture_output=True, env=env)
    for _ in range(repeat):
        for i, (command, env) in enumerate(zip(commands, envs, strict=True)):
            cpu, start = _children_cpu(), time.perf_counter()
            result = subprocess.run(command, cwd=cwd, capture_output=True, env=env)
            walls[i].append(time.perf_counter() - start)
            cpus[i].append(_children_cpu() - cpu)
            if result.returncode not in (0, 1):
                raise SystemExit(f"{command} failed: {result.stderr.decode()}")
            outputs[i] = result.stdout
    return [
        Timing(min(w), statistics.median(w), statistics.median(c), out, w)
        for w, c, out in zip(walls, cpus, outputs, strict=True)
    ]


def instructions(command: list[str], cwd: Path, env: dict[str, str]) -> int:
    """Instructions of one run of ``command`` (its own process), counted by callgrind."""
    return callgrind.instructions(command, env, cwd)[0]


#: The steps ``--stages`` counts, as the walk takes them for one commit.
STAGES = ("trees", "router", "history", "state", "items", "check", "file check", "tree check")
STAGE_CALLS = 200


def stage_child(stage: str, calls: int, status: str) -> None:
    """In the benchmark repository (the working directory): walks ``HEAD~30..HEAD`` as verify
    does, then repeats ``stage`` ``calls`` times on the last commit whose first change has
    ``status`` (``history DeltasFamily``: one family's history rules, through the router)."""
    from continuity_checks.core.config import Config
    from continuity_checks.core.family import FileInput
    from continuity_checks.core.git.repository import Repository
    from continuity_checks.engine.history import Walk

    config, span = Config(), "HEAD~30..HEAD"
    with Repository(Path.cwd(), config.max_file_bytes, revision_range=span) as repo:
        walk = Walk(repo, config, None, False)
        everyone = range(len(walk.families))
        last = {}
        for commit, raw in repo.walk(*repo.resolve_range(span), walk.owners.of, walk.request):
            walk.router.judge(commit, raw, walk.remembered, walk.trees, everyone, walk.findings)
            walk.leaves(commit, raw)
            last[raw[0].status] = (commit, raw)
        commit, raw = last[status]
        state, trees, deltas = walk.state, walk.trees, walk.families[0]
        made = trees.of(commit, raw)
        new = [(c.path, c.new_blob, c.new_mode) for c in raw]
        edited = [c.status == "M" for c in raw]
        items = state._items(made[1], made[0], new, edited)
        path = raw[0].path

        def of() -> None:
            trees.at = None
            trees.of(commit, raw)

        def tree_check() -> None:
            check = deltas.tree(made[1])
            check.add(path, "delta")
            list(check.finish(set()))

        def judge(wanted: list[int]) -> None:
            walk.router.judge(commit, raw, walk.remembered, trees, wanted, [])

        steps = {
            "trees": of,
            "router": lambda: judge([]),
            "state": lambda: state.leaves(made, raw),
            "items": lambda: state._items(made[1], made[0], new, edited),
            "check": lambda: state.check(made[1], items),
            "file check": lambda: list(
                deltas.check_file(
                    FileInput(path, "delta", walk.blobs.read(raw[0].new_blob), made[1])
                )
            ),
            "tree check": tree_check,
        }
        for i, family in enumerate(walk.families):
            steps[f"history {type(family).__name__}"] = lambda i=i: judge([i])
        step = steps[stage]
        for _ in range(calls):
            step()


def stages(repo: Path, env: dict[str, str]) -> None:
    """Instructions of one call of each step (see :func:`stage_child`), for a commit that
    modifies a delta (M) and one that adds a delta (A)."""
    families = ("DeltasFamily", "SessionsFamily", "CapturesFamily", "WorkingStateFamily")
    names = [*STAGES[:2], *(f"history {f}" for f in families), *STAGES[3:]]
    me = [sys.executable, str(Path(__file__).resolve()), "--stage-child"]
    for status in ("M", "A"):
        for name in names:
            subprocess.run([*me, name, "1", status], cwd=repo, env=env, capture_output=True)
            counts = [
                instructions([*me, name, str(calls), status], repo, env)
                for calls in (0, STAGE_CALLS)
            ]
            print(f"{status} {name:32s} {(counts[1] - counts[0]) / STAGE_CALLS:>10,.0f}")


def line(label: str, commits: int, t: Timing) -> str:
    return (
        f"{label:32s} best {t.best:.3f} s ({commits / t.best:,.0f} commits/s), "
        f"median {t.median:.3f} s ({commits / t.median:,.0f} commits/s), "
        f"CPU {t.cpu:.3f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commits", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--updates",
        type=int,
        default=4,
        help="updates per conversation (default 4: the changes directory grows to N/5 deltas)",
    )
    parser.add_argument(
        "--keep", type=Path, help="build the repository here and keep it (reused if it exists)"
    )
    parser.add_argument(
        "--against", type=Path, help="another version's src directory, timed in turns with this one"
    )
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="count the instructions of one verify run of each version (valgrind)",
    )
    parser.add_argument(
        "--stages",
        action="store_true",
        help="count the instructions of each step of the walk on one commit (valgrind)",
    )
    parser.add_argument(
        "--tree",
        action="store_true",
        help="with --instructions: count every process of the run too, git's included",
    )
    parser.add_argument("--stage-child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.stage_child:
        stage, calls, status = args.stage_child
        return stage_child(stage, int(calls), status)
    if "GIT_DIR" in os.environ:
        raise SystemExit("unset GIT_DIR before benchmarking")
    with tempfile.TemporaryDirectory() as scratch:
        repo = args.keep or Path(scratch) / "repo"
        if (repo / ".git").exists():
            print(f"reusing the repository in {repo}")
        else:
            built = build(repo, args.commits, args.updates)
            print(f"built {args.commits} commits with git fast-import in {built:.2f} s")
        print(f"{len(list((repo / CHANGES).iterdir()))} deltas at HEAD")
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(Path(scratch) / "pycache")
        if args.stages:
            source = args.against.resolve() if args.against else SRC
            print(f"instructions of one call of each step ({source}):")
            return stages(repo, {**env, "PYTHONPATH": str(source)})
        sys.path.insert(0, str(SRC))
        from continuity_checks.core.git.log import LogRequest, log_arguments

        request = LogRequest(trailers=("Continuity-Delta",))  # what engine.verify asks for
        arguments = [a for a in log_arguments(request) if a != "--stdin"]
        git_log = ["git", "--no-replace-objects", *arguments, "HEAD"]
        verify = [sys.executable, "-m", "continuity_checks", "verify", "--range", "HEAD"]
        version = [sys.executable, "-m", "continuity_checks", "--version"]
        this = {**env, "PYTHONPATH": str(SRC)}
        commands = [git_log, [*verify, "--format", "json"], version]
        envs = [env, this, this]
        if args.against:
            commands.append([*verify, "--format", "json"])
            envs.append({**env, "PYTHONPATH": str(args.against.resolve())})
        print(f"load average before the runs: {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs)")
        floor, total, startup, *other = timed(commands, repo, args.repeat, envs)
        report = json.loads(total.output)
        commits = report["summary"]["commits"]
        print(f"findings: {len(report['findings'])}, commits checked: {commits}")
        print(line("git log alone (same options)", commits, floor))
        print(line("continuity verify --range HEAD", commits, total))
        if other:
            [before] = other
            theirs = json.loads(before.output)
            # the findings and the counts both versions report (a newer summary has more keys)
            if theirs["findings"] != report["findings"] or any(
                report["summary"].get(k) != v for k, v in theirs["summary"].items()
            ):
                raise SystemExit(f"{args.against} reports something else")
            print(line(f"the same, {args.against}", commits, before))
            ratios = [a / b for a, b in zip(total.walls, before.walls, strict=True)]
            print(
                f"paired wall time, this / {args.against}: median {statistics.median(ratios):.3f}"
                f" over {len(ratios)} pairs (from {min(ratios):.3f} to {max(ratios):.3f})"
            )
        if args.instructions:
            sides = [("this", this), *([(str(args.against), envs[3])] if other else [])]
            counts = [instructions(verify, repo, side_env) for _, side_env in sides]
            for (label, _), count in zip(sides, counts, strict=True):
                print(f"instructions of verify, {label}: {count:,} ({count / commits:,.0f}/commit)")
            if len(counts) == 2:
                print(f"instructions, this / {args.against}: {counts[0] / counts[1]:.3f}")
        if args.instructions and args.tree:
            sides = [("this", this), *([(str(args.against), envs[3])] if other else [])]
            totals = []
            for label, side_env in sides:
                processes = callgrind.tree_instructions(verify, side_env, repo)
                totals.append(sum(count for count, _ in processes))
                print(f"instructions of every process of verify, {label}: {totals[-1]:,}")
                for count, command in processes:
                    print(f"  {count:>15,}  {command[:100]}")
            if len(totals) == 2:
                print(f"every process, this / {args.against}: {totals[0] / totals[1]:.3f}")
        print(f"{'continuity --version (start-up)':32s} best {startup.best:.3f} s")
        print(f"interpreter: {sys.executable}")
        print(f"load average after the runs: {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs)")


if __name__ == "__main__":
    main()
