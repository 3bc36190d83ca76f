"""``python -m tests.fuzz.crash``: the crash session (``nox -s crash``; docs/reliability.md).

Every helper command that writes (``delta init|start|update|freeze``, ``capture manifest``,
``capture diff -o``, ``capture apply -o``, ``capture read --reference-out``, ``provenance add``,
``baseline check``) is run once under ``strace`` to list its write-related
system calls (an ``openat`` that can write or create, ``write``, ``fsync``, ``rename``,
``link``, ``unlink``, ``mkdir``, ...), then once per such call in a fresh copy of the same
repository with ``strace -e inject=CALL:signal=SIGKILL:when=N``: killed at that call, before it
runs. After each kill:

- every file of the work tree is byte for byte its version before the command or after an
  uninterrupted run of it (a file the command creates may be absent), and no other file is
  there (no temp file a ``git add -A`` could pick up);
- the next helper operation (the same command again) succeeds, and ``continuity check --all``
  passes.

Bytecode writing is off (``PYTHONDONTWRITEBYTECODE``), so that the N-th call of the dry run is
the N-th call of every run.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CALLS = (
    "openat", "open", "creat", "write", "pwrite64", "writev", "fsync", "fdatasync", "rename",
    "renameat", "renameat2", "link", "linkat", "unlink", "unlinkat", "mkdir", "mkdirat",
    "ftruncate", "fchmod", "symlink", "symlinkat",
)  # fmt: skip
WRITE_FLAGS = re.compile(r"O_WRONLY|O_RDWR|O_CREAT|O_TRUNC")
LINE = re.compile(r"^(?P<pid>\d+) +(?P<call>\w+)\((?P<args>.*)")
T1 = "2026-09-21T00:01:00+08:00"
T2 = "2026-09-21T00:02:00+08:00"
DELTA = "2026-09-21T00-01-00p08-00--codex.json"
ENV = {
    "GIT_AUTHOR_NAME": "crash",
    "GIT_AUTHOR_EMAIL": "crash@example.invalid",
    "GIT_COMMITTER_NAME": "crash",
    "GIT_COMMITTER_EMAIL": "crash@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONHASHSEED": "0",
}


@dataclass
class Scenario:
    name: str
    setup: Callable[[Path], None]
    args: tuple[str, ...]
    """The command, after ``continuity``; ``{root}`` is replaced by the copy's path."""
    again: Callable[[Path], tuple[str, ...]] | None = None
    """The next helper operation after a kill (default: the same command again)."""


def _cli(root: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "continuity_checks", *(a.format(root=root) for a in args)],
        cwd=root,
        env=_env(),
        capture_output=True,
        timeout=120,
    )


def _env() -> dict[str, str]:
    return {**os.environ, **ENV, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), *sys.path])}


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=root, env=_env(), check=True, capture_output=True, timeout=60
    )
    return done.stdout.decode("utf-8", "replace")


def _repo(root: Path, files: dict[str, bytes]) -> None:
    root.mkdir(parents=True)
    _git(root, "init", "-q", "-b", "main")
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "--allow-empty", "-m", "setup")


def _delta_repo(*commands: tuple[str, ...]) -> Callable[[Path], None]:
    def setup(root: Path) -> None:
        _repo(root, {"README.md": b"project\n"})
        for command in commands:
            done = _cli(root, "delta", "--root", "{root}", *command)
            assert done.returncode == 0, done.stderr
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "--allow-empty", "-m", "deltas")

    return setup


CAPTURE = {"goal_id": "g-1", "history": [{"turn": n, "text": f"turn {n}"} for n in range(40)]}
CAPTURE_BYTES = json.dumps(CAPTURE, indent=2).encode() + b"\n"


def _capture_repo(root: Path) -> None:
    capture = CAPTURE
    current = {**capture, "history": [*capture["history"][:30], {"turn": 99, "text": "new"}]}
    _repo(
        root,
        {
            "captures/turn-0001/capture.json": CAPTURE_BYTES,
            "captures/cycle-base.json": json.dumps(capture).encode(),
            "captures/current.json": json.dumps(current).encode(),
        },
    )


def _capture_delta_repo(root: Path) -> None:
    _capture_repo(root)
    done = _cli(root, "capture", "diff", "-o", "{root}/captures/cycle-delta.json",
                "{root}/captures/cycle-base.json", "{root}/captures/current.json")  # fmt: skip
    assert done.returncode == 0, done.stderr
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "cycle delta")


def _user_files_repo(root: Path) -> None:
    """AGENTS.md and .gitignore of the user's: ``init`` appends to both (atomic replace)."""
    _repo(root, {"AGENTS.md": b"# Rules\n\nBe brief.\n", ".gitignore": b"*.pyc\r\n"})


def _killed_writer_repo(root: Path) -> None:
    """A delta, and what killed writers left: the prototype's temp file in ``changes/`` (DL112
    until swept) and a temp file of ours in the git directory."""
    _delta_repo(("start", "--source", "codex", "--started-at", T1, "--change", "a"))(root)
    changes = root / ".deltalayer" / "changes"
    (changes / f".{DELTA}.x1y2z3.tmp").write_bytes(b'{"started_at":')
    done = _cli(root, "delta", "--root", "{root}", "recent")  # readers ignore both
    assert done.returncode == 0, done.stderr


def _provenance_repo(root: Path) -> None:
    _repo(root, {"evidence/a.txt": b"a\n" * 100, "evidence/b.txt": b"b\n"})
    done = _cli(root, "provenance", "add", "--root", "{root}", "--sums",
                "{root}/evidence/SHA256SUMS", "{root}/evidence/b.txt")  # fmt: skip
    assert done.returncode == 0, done.stderr
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "sums")


def _reference_repo(root: Path) -> None:
    _capture_repo(root)
    done = _cli(root, "capture", "manifest", "{root}/captures/turn-0001")
    assert done.returncode == 0, done.stderr
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "manifest")


def _baseline_repo(root: Path) -> None:
    """A repository with one finding (a delta without its source) for the baseline to list."""
    bad = b'{"started_at":"2026-09-21T00:01:00+08:00","updated_at":"2026-09-21T00:01:00+08:00"}\n'
    _delta_repo(("init",))(root)
    (root / ".deltalayer" / "changes" / DELTA).write_bytes(bad)
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "a finding")


SCENARIOS = [
    Scenario("delta init", _delta_repo(), ("delta", "--root", "{root}", "init")),
    Scenario("delta init appends", _user_files_repo, ("delta", "--root", "{root}", "init")),
    Scenario(
        "delta start, no init",
        _delta_repo(),
        ("delta", "--root", "{root}", "start", "--source", "claude", "--started-at", T2),
    ),
    Scenario(
        "delta update, leftovers",
        _killed_writer_repo,
        (
            "delta",
            "--root",
            "{root}",
            "update",
            "--conversation",
            DELTA,
            "--updated-at",
            T2,
            "--change",
            "swept",
        ),
    ),
    Scenario(
        "delta start",
        _delta_repo(("init",)),
        (
            "delta",
            "--root",
            "{root}",
            "start",
            "--source",
            "codex",
            "--started-at",
            T1,
            "--change",
            "first",
        ),
    ),
    Scenario(
        "delta update",
        _delta_repo(("start", "--source", "codex", "--started-at", T1, "--change", "a")),
        (
            "delta",
            "--root",
            "{root}",
            "update",
            "--conversation",
            DELTA,
            "--updated-at",
            T2,
            "--change",
            "b" * 5000,
        ),
    ),
    Scenario(
        "delta freeze",
        _delta_repo(("start", "--source", "codex", "--started-at", T1, "--change", "a")),
        ("delta", "--root", "{root}", "freeze", "--conversation", DELTA),
        # freezing again finishes a freeze cut short after its link; once X.json is gone the
        # freeze was complete, and freezing it again is "does not exist", as in the prototype
        again=lambda root: (
            ("delta", "--root", "{root}", "freeze", "--conversation", DELTA)
            if (root / ".deltalayer" / "changes" / DELTA).exists()
            else ("delta", "--root", "{root}", "recent")
        ),
    ),
    Scenario(
        "capture manifest", _capture_repo, ("capture", "manifest", "{root}/captures/turn-0001")
    ),
    Scenario(
        "capture diff -o",
        _capture_repo,
        (
            "capture",
            "diff",
            "-o",
            "{root}/captures/cycle-delta.json",
            "{root}/captures/cycle-base.json",
            "{root}/captures/current.json",
        ),
    ),
    Scenario(
        "capture apply -o",
        _capture_delta_repo,
        (
            "capture",
            "apply",
            "-o",
            "{root}/captures/restored.json",
            "{root}/captures/cycle-base.json",
            "{root}/captures/cycle-delta.json",
        ),
    ),
    Scenario(
        "capture read --reference-out",
        _reference_repo,
        (
            "capture",
            "read",
            "--capture-file",
            "{root}/captures/turn-0001/capture.json",
            "--capture-sha256",
            hashlib.sha256(CAPTURE_BYTES).hexdigest(),
            "--select",
            "/history/3",
            "--reference-out",
            "{root}/captures/turn-0001/turn.reader.json",
        ),
    ),
    Scenario("baseline check", _baseline_repo, ("baseline", "check", "--root", "{root}")),
    Scenario(
        "provenance add, new",
        lambda root: _repo(root, {"evidence/a.txt": b"a\n", "evidence/b.txt": b"b\n"}),
        (
            "provenance",
            "add",
            "--root",
            "{root}",
            "--sums",
            "{root}/evidence/SHA256SUMS",
            "{root}/evidence/a.txt",
            "{root}/evidence/b.txt",
        ),
    ),
    Scenario(
        "provenance add",
        _provenance_repo,
        (
            "provenance",
            "add",
            "--root",
            "{root}",
            "--sums",
            "{root}/evidence/SHA256SUMS",
            "{root}/evidence/a.txt",
        ),
    ),
]


def tree(root: Path) -> dict[str, bytes]:
    """Every file outside ``.git`` (symlinks as their target's name)."""
    found: dict[str, bytes] = {}
    for directory, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not (directory == str(root) and d == ".git")]
        for name in files:
            path = Path(directory, name)
            rel = path.relative_to(root).as_posix()
            found[rel] = (
                b"-> " + os.readlink(path).encode() if path.is_symlink() else path.read_bytes()
            )
    return found


def write_points(template: Path, scratch: Path, args: tuple[str, ...]) -> list[tuple[str, int]]:
    """(call, N) of every write-related call of the command's own process, N counting every
    call of that name (as ``when=`` counts)."""
    copy = scratch / "dry"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(template, copy, symlinks=True)
    trace = scratch / "trace.txt"
    command = [a.format(root=copy) for a in args]
    done = subprocess.run(
        ["strace", "-f", "-qq", "-o", str(trace), "-e", f"trace={','.join(CALLS)}",
         sys.executable, "-m", "continuity_checks", *command],
        cwd=copy, env=_env(), capture_output=True, timeout=300,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"dry run of {' '.join(args)} failed: {done.stderr.decode()}")
    lines = trace.read_text(encoding="utf-8", errors="replace").splitlines()
    main_pid = LINE.match(lines[0]).group("pid") if lines and LINE.match(lines[0]) else None  # type: ignore[union-attr]
    seen: Counter[str] = Counter()
    points = []
    for line in lines:
        match = LINE.match(line)
        if not match or match.group("pid") != main_pid:
            continue
        call = match.group("call")
        seen[call] += 1
        if call in ("openat", "open") and not WRITE_FLAGS.search(match.group("args")):
            continue
        points.append((call, seen[call]))
    shutil.rmtree(copy, ignore_errors=True)
    return points


@dataclass
class Result:
    scenario: str
    call: str
    when: int
    problem: str | None


def kill_at(
    scenario: Scenario,
    template: Path,
    scratch: Path,
    call: str,
    when: int,
    old: dict[str, bytes],
    new: dict[str, bytes],
) -> Result:
    copy = scratch / "run"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(template, copy, symlinks=True)

    def problem(text: str) -> Result:
        return Result(scenario.name, call, when, text)

    command = [a.format(root=copy) for a in scenario.args]
    done = subprocess.run(
        ["strace", "-f", "-qq", "-o", os.devnull, "-e", f"trace={call}",
         "-e", f"inject={call}:signal=SIGKILL:when={when}",
         sys.executable, "-m", "continuity_checks", *command],
        cwd=copy, env=_env(), capture_output=True, timeout=300,
    )  # fmt: skip
    if done.returncode not in (-9, 137):
        return problem(f"not killed: exit {done.returncode} {done.stderr.decode()[-300:]}")
    after = tree(copy)
    for rel, data in after.items():
        if data != old.get(rel) and data != new.get(rel):
            kind = "torn" if rel in old or rel in new else "stray file"
            return problem(f"{kind}: {rel} is neither the old nor the new version")
    for rel in old:
        if rel not in after and rel in new:
            return problem(f"lost: {rel}")
    staged = [
        line for line in _git(copy, "add", "-A", "--dry-run").splitlines()
        if ".tmp" in line and not any(rel in line for rel in old)  # a leftover set up before
    ]  # fmt: skip
    if staged:
        return problem(f"git add -A would commit a temp file: {staged}")
    again = _cli(copy, *(scenario.again(copy) if scenario.again else scenario.args))
    if again.returncode != 0:
        return problem(f"the next operation failed: {again.stderr.decode()[-300:]}")
    check = _cli(copy, "check", "--all", "--root", "{root}")
    if check.returncode != 0:
        said = (check.stdout + check.stderr).decode("utf-8", "replace")[-600:]
        return problem(f"check --all after the next operation: exit {check.returncode} {said}")
    if ".tmp" in _git(copy, "status", "--porcelain", "--untracked-files=all"):
        return problem("a temp file in the work tree after the next operation")
    return Result(scenario.name, call, when, None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz.crash", description=__doc__)
    parser.add_argument("--scenario", action="append", choices=[s.name for s in SCENARIOS])
    parser.add_argument("--max-points", type=int, default=0, help="per scenario (0: all)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    if shutil.which("strace") is None:
        parser.error("strace is needed (apt-get install strace)")
    chosen = [s for s in SCENARIOS if not args.scenario or s.name in args.scenario]
    began = time.monotonic()
    results: list[Result] = []
    per: dict[str, dict[str, int]] = {}
    memory = "/dev/shm" if os.path.isdir("/dev/shm") else None
    with tempfile.TemporaryDirectory(prefix="continuity-crash-", dir=memory) as tmp:
        for scenario in chosen:
            scratch = Path(tmp, scenario.name.replace(" ", "-"))
            template = scratch / "template"
            scenario.setup(template)
            old = tree(template)
            reference = scratch / "reference"
            shutil.copytree(template, reference, symlinks=True)
            done = _cli(reference, *scenario.args)
            if done.returncode != 0:
                raise SystemExit(f"{scenario.name} fails unkilled: {done.stderr.decode()}")
            new = tree(reference)
            points = write_points(template, scratch, scenario.args)
            if args.max_points:
                points = points[: args.max_points]
            calls = Counter(call for call, _ in points)
            ours = [kill_at(scenario, template, scratch, c, n, old, new) for c, n in points]
            results.extend(ours)
            bad = [r for r in ours if r.problem]
            per[scenario.name] = {"kills": len(ours), "problems": len(bad), **calls}
            print(f"{scenario.name:18} {len(ours):4} kills  {len(bad)} problems  {dict(calls)}",
                  flush=True)  # fmt: skip
            for r in bad[:5]:
                print(f"    {r.call} #{r.when}: {r.problem}", flush=True)
    problems = [r for r in results if r.problem]
    summary = {
        "command": "python -m tests.fuzz.crash " + " ".join(argv or sys.argv[1:]),
        "kills": len(results),
        "problems": len(problems),
        "scenarios": per,
        "failures": [r.__dict__ for r in problems[:50]],
        "seconds": time.monotonic() - began,
    }
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print(f"{len(results)} kills, {len(problems)} problems, {summary['seconds']:.0f} s")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
