"""The helper commands under fuzz (``python -m tests.fuzz --helper NAME``; docs/reliability.md).

Each input is one run of a helper command through the real CLI, in process, in a fresh case
directory of a scratch repository whose every path slot is drawn from hostile kinds: mutated
JSON, a FIFO, a symlink to ``/dev/zero`` or ``/dev/urandom``, the devices themselves, a
directory, a symlink (or a symlinked directory) leading outside the repository, a dangling
symlink, a symlink loop, a file past the configured size limit, a missing name, paths with
``..``. Inputs derive from ``(seed, helper, index)`` alone, so any one can be replayed.

Counted per input: a traceback (an exception out of the CLI, an exit code other than 0, 1 or
2, or ``Traceback`` on stderr), a hang (still running after ``timeout`` seconds of wall time:
SIGALRM, since a blocked ``open`` of a FIFO spends no CPU), a write outside the root (anything
changed in the directory the outside symlinks lead to, or beside the repository) and a read
outside (the outside file's marker or digest in what the command printed).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any

from continuity_checks.cli import main
from tests.fuzz import mutations

MARK = "OUTSIDE-SECRET-5e1f"
SECRET = json.dumps({"secret": MARK, "history": [{"turn": 1, "text": MARK}]}).encode()
SECRET_SHA = hashlib.sha256(SECRET).hexdigest()
LIMIT = 4096
T1 = "2026-09-21T00:01:00+08:00"
T2 = "2026-09-21T00:02:00+08:00"
DELTA = "2026-09-21T00-01-00p08-00--codex.json"
GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}

SEEDS = {
    "capture": json.dumps({"goal_id": "g", "history": [{"turn": n} for n in range(5)]}).encode(),
    "state": json.dumps({
        "task_id": "t", "known": ["k"], "constraints": [], "decisions": [], "evidence": [],
        "failed_hypotheses": [], "do_not_repeat": [], "open_acceptance": [], "next_action": "n",
    }).encode(),
    "delta": json.dumps({"started_at": T1, "updated_at": T1, "source": "codex",
                         "changes": ["a"]}).encode() + b"\n",
}  # fmt: skip

# what a path slot can be: (name in the case directory, how it is made)
KINDS = (
    "file", "file", "file", "fifo", "zero", "urandom", "/dev/zero", "/dev/urandom", "directory",
    "out-file", "out-dir", "in-dir", "dangling", "loop", "big", "missing", "dot-dot",
)  # fmt: skip


class Hang(BaseException):
    """SIGALRM: a BaseException, so that no handler of the code under test takes it."""


def _alarm(_signum: int, _frame: FrameType | None) -> None:
    raise Hang


def _mutant(rng: random.Random, seed: bytes) -> bytes:
    """``seed`` as it is, or mutated (blind or into known-invalid JSON)."""
    roll = rng.random()
    if roll < 0.3:
        return seed
    if roll < 0.6:
        return rng.choice(list(mutations.INVALID_JSON.values()))(rng, seed) or seed
    data = seed
    for _ in range(rng.randint(1, 3)):
        data = rng.choice(mutations.BLIND)(rng, data) or data
    return data


class Case:
    """One input's directory, ``case/`` inside the scratch repository: its path slots."""

    def __init__(self, rng: random.Random, directory: Path, outside: Path, seed: bytes) -> None:
        self.rng = rng
        self.dir = directory
        self.outside = outside
        self.seed = seed
        self.count = 0
        self.drawn: Counter[str] = Counter()
        directory.mkdir()
        (directory / "sub").mkdir()
        (directory / "sub" / "x.json").write_bytes(_mutant(rng, seed))

    def slot(self, name: str | None = None, kind: str | None = None) -> str:
        """A new path (relative to the case directory) of a random kind."""
        kind = kind or self.rng.choice(KINDS)
        self.drawn[kind] += 1
        self.count += 1
        name = name or f"p{self.count}.json"
        path = self.dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if kind == "file":
            path.write_bytes(_mutant(self.rng, self.seed))
        elif kind == "fifo":
            os.mkfifo(path)
        elif kind in ("zero", "urandom"):
            path.symlink_to(f"/dev/{kind}")
        elif kind.startswith("/dev/"):
            return kind
        elif kind == "directory":
            path.mkdir()
        elif kind == "out-file":
            path.symlink_to(self.outside / "secret.json")
        elif kind == "out-dir":
            (self.dir / f"o{self.count}").symlink_to(self.outside)
            return f"o{self.count}/" + self.rng.choice(["secret.json", "new.json", "d/c.json"])
        elif kind == "in-dir":
            (self.dir / f"i{self.count}").symlink_to("sub")
            return f"i{self.count}/" + self.rng.choice(["x.json", "new.json"])
        elif kind == "dangling":
            path.symlink_to("nowhere/at/all")
        elif kind == "loop":
            path.symlink_to(path.name)
        elif kind == "big":
            path.write_bytes(b'{"a": "' + b"x" * (LIMIT + self.rng.randint(1, 4000)) + b'"}')
        elif kind == "dot-dot":
            return self.rng.choice(["../case/sub/x.json", "sub/../sub/x.json", "../../outside"])
        return path.relative_to(self.dir).as_posix() if kind != "missing" else name


def _pointer(rng: random.Random) -> str:
    return rng.choice(["/goal_id", "/history/0", "/history", "", "/nope", "/history/99", "/~2"])


def _sha(rng: random.Random, case: Case, path: str) -> str:
    if rng.random() < 0.2:
        return rng.choice([SECRET_SHA, "0" * 64, "sha256:" + "f" * 64, "xyz"])
    target = case.dir / path
    if not target.is_file():  # a FIFO would block the harness itself, a device never end
        return "0" * 64
    try:
        return hashlib.sha256(target.read_bytes()).hexdigest()
    except OSError:
        return "0" * 64


def _out(rng: random.Random, case: Case) -> list[str]:
    return ["-o", case.slot()] if rng.random() < 0.6 else []


def _manifest(rng: random.Random, case: Case) -> list[str]:
    directory = rng.choice(["cap", "sub", "o-dir", "i-dir", "fifo-dir"])
    if directory == "cap":
        case.slot("cap/capture.json")
        if rng.random() < 0.3:
            case.slot("cap/manifest.json")
    elif directory == "o-dir":
        (case.dir / "o-dir").symlink_to(case.outside)
    elif directory == "i-dir":
        (case.dir / "i-dir").symlink_to("sub")
    elif directory == "fifo-dir":
        (case.dir / "fifo-dir").mkdir()
        os.mkfifo(case.dir / "fifo-dir" / "capture.json")
    return ["capture", "manifest", directory]


def _read(rng: random.Random, case: Case) -> list[str]:
    path = case.slot()
    args = ["capture", "read", "--capture-file", path, "--capture-sha256", _sha(rng, case, path)]
    args += ["--select", _pointer(rng)]
    if rng.random() < 0.3:
        args += ["--list"]
    if rng.random() < 0.3:
        args += ["--reference-out", rng.choice([case.slot(), "r.reader.json", "o/r.reader.json"])]
    return args


def _diff(rng: random.Random, case: Case) -> list[str]:
    return ["capture", "diff", case.slot(), case.slot(), *_out(rng, case)]


def _apply(rng: random.Random, case: Case) -> list[str]:
    return ["capture", "apply", case.slot(), case.slot(), *_out(rng, case)]


def _state(command: str) -> Callable[[random.Random, Case], list[str]]:
    def build(rng: random.Random, case: Case) -> list[str]:
        extra = ["--json"] if command == "project" and rng.random() < 0.5 else []
        return ["state", command, case.slot(), *extra]

    return build


def _provenance(rng: random.Random, case: Case) -> list[str]:
    files = [case.slot() for _ in range(rng.randint(1, 3))]
    sums = rng.choice(["SHA256SUMS", case.slot("s/SHA256SUMS"), "o-sums/SHA256SUMS"])
    if sums.startswith("o-sums"):
        (case.dir / "o-sums").symlink_to(case.outside)
    return ["provenance", "add", "--sums", sums, *files]


def _store(rng: random.Random, case: Case) -> None:
    """A DeltaLayer store in the case directory, each of its files of a random kind."""
    (case.dir / ".deltalayer" / "changes").mkdir(parents=True)
    case.slot(f".deltalayer/changes/{DELTA}", rng.choice(["file", "file", "fifo", "out-file"]))
    case.slot(".deltalayer/changes/other.json")
    for name in (".deltalayer/changes.jsonl", "PROJECT.md", "AGENTS.md", ".gitignore"):
        if rng.random() < 0.5:
            case.slot(name)


def _delta(command: str) -> Callable[[random.Random, Case], list[str]]:
    def build(rng: random.Random, case: Case) -> list[str]:
        _store(rng, case)
        ref = rng.choice([DELTA, "other.json", case.slot(), "../PROJECT.md"])
        args = {
            "start": ["start", "--source", "codex", "--started-at", T2, "--change", "x"],
            "update": ["update", "--conversation", ref, "--updated-at", T2, "--change", "y"],
            "show": ["show", "--conversation", ref],
            "freeze": ["freeze", "--conversation", ref],
            "recent": ["recent"],
            "rebuild-context": ["rebuild-context"],
            "init": ["init"],
        }[command]
        return ["delta", "--root", ".", *args]

    return build


HELPERS: dict[str, tuple[str, Callable[[random.Random, Case], list[str]]]] = {
    "capture-manifest": ("capture", _manifest),
    "capture-read": ("capture", _read),
    "capture-diff": ("capture", _diff),
    "capture-apply": ("capture", _apply),
    "state-hash": ("state", _state("hash")),
    "state-project": ("state", _state("project")),
    "provenance-add": ("capture", _provenance),
    "delta-init": ("delta", _delta("init")),
    "delta-start": ("delta", _delta("start")),
    "delta-update": ("delta", _delta("update")),
    "delta-freeze": ("delta", _delta("freeze")),
    "delta-show": ("delta", _delta("show")),
    "delta-recent": ("delta", _delta("recent")),
    "delta-rebuild-context": ("delta", _delta("rebuild-context")),
}


def _signature(scratch: Path) -> list[tuple[str, int, int]]:
    """What is outside the repository: every entry of ``outside/`` and beside the repository."""
    found = []
    for directory, dirs, files in os.walk(scratch):
        if directory == str(scratch):
            dirs[:] = [d for d in dirs if d != "repo"]
        for name in [*dirs, *files]:
            info = os.lstat(os.path.join(directory, name))
            found.append((os.path.join(directory, name), info.st_size, info.st_mtime_ns))
    return sorted(found)


@contextlib.contextmanager
def _captured() -> Iterator[tuple[io.BytesIO, io.BytesIO]]:
    """Standard output and error (text and ``.buffer``) into two byte buffers, for the block."""
    out, err = io.BytesIO(), io.BytesIO()
    saved = sys.stdout, sys.stderr
    wrappers = [io.TextIOWrapper(b, encoding="utf-8", write_through=True) for b in (out, err)]
    sys.stdout, sys.stderr = wrappers
    try:
        yield out, err
    finally:
        sys.stdout, sys.stderr = saved
        for wrapper in wrappers:  # detached: its collection must not close the buffer
            with contextlib.suppress(ValueError):
                wrapper.flush()
            wrapper.detach()


class HelperTask:
    """A scratch repository (``repo/``, with ``[limits] max-file-bytes``) beside ``outside/``,
    and one helper's inputs ``start..stop`` over it."""

    def __init__(self, helper: str, scratch: Path, seed: int, timeout: float) -> None:
        self.helper = helper
        self.seed_name, self.build = HELPERS[helper]
        self.scratch = scratch
        self.seed = seed
        self.timeout = timeout
        shutil.rmtree(scratch, ignore_errors=True)
        self.outside = scratch / "outside"
        self.repo = scratch / "repo"
        self.outside.mkdir(parents=True)
        self._outside_files()
        self.repo.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=self.repo, check=True, env={**os.environ,
                       **GIT_ENV})  # fmt: skip
        (self.repo / ".continuity.toml").write_text(f"[limits]\nmax-file-bytes = {LIMIT}\n")
        self.before = _signature(scratch)
        self.tally: dict[str, Any] = {
            "inputs": 0, "kinds": Counter(), "invalid_inputs": 0, "tracebacks": 0, "hangs": 0,
            "silent_passes": 0, "outside_writes": 0, "outside_reads": 0, "failures": [],
        }  # fmt: skip

    def _outside_files(self) -> None:
        (self.outside / "secret.json").write_bytes(SECRET)
        (self.outside / "capture.json").write_bytes(SECRET)
        (self.outside / "d").mkdir(exist_ok=True)
        (self.outside / "d" / "c.json").write_bytes(SECRET)

    def run(self, start: int, stop: int, progress: Any = None) -> dict[str, Any]:
        previous = signal.signal(signal.SIGALRM, _alarm)
        here = os.getcwd()
        try:
            for index in range(start, stop):
                if progress is not None:
                    progress.value = index
                self.one(index)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
            os.chdir(here)
        return self.tally

    def one(self, index: int) -> None:
        rng = random.Random(f"{self.seed}:{self.helper}:{index}")
        case_dir = self.repo / "case"
        os.chdir(self.repo)
        shutil.rmtree(case_dir, ignore_errors=True)
        case = Case(rng, case_dir, self.outside, SEEDS[self.seed_name])
        argv = self.build(rng, case)
        self.tally["inputs"] += 1
        self.tally["kinds"].update(case.drawn)  # the path kinds this input was made of
        os.chdir(case_dir)
        problem = self._run(argv)
        os.chdir(self.repo)
        if problem is not None:
            kind, detail = problem
            self.tally[kind] += 1
            if len(self.tally["failures"]) < 20:
                self.tally["failures"].append(
                    {
                        "kind": kind,
                        "helper": self.helper,
                        "index": index,
                        "argv": argv,
                        "detail": detail[-1500:],
                    }
                )
        if _signature(self.scratch) != self.before:
            self.tally["outside_writes"] += 1
            if len(self.tally["failures"]) < 20:
                self.tally["failures"].append(
                    {
                        "kind": "outside_writes",
                        "helper": self.helper,
                        "index": index,
                        "argv": argv,
                    }
                )
            self._restore()

    def _restore(self) -> None:
        for entry in self.scratch.iterdir():
            if entry.name != "repo":
                if entry.is_dir() and not entry.is_symlink():
                    shutil.rmtree(entry)
                else:
                    entry.unlink()
        self.outside.mkdir()
        self._outside_files()
        self.before = _signature(self.scratch)

    def _run(self, argv: list[str]) -> tuple[str, str] | None:
        began = time.monotonic()
        with _captured() as (out, err):
            try:
                signal.setitimer(signal.ITIMER_REAL, self.timeout)
                try:
                    code = main(argv)
                finally:
                    signal.setitimer(signal.ITIMER_REAL, 0)
            except Hang:
                return "hangs", f"still running after {time.monotonic() - began:.1f} s"
            except BaseException:  # every escape is what is counted
                return "tracebacks", traceback.format_exc()
        printed = out.getvalue() + err.getvalue()
        if code not in (0, 1, 2) or b"Traceback" in printed:
            return "tracebacks", f"exit {code}: {printed.decode('utf-8', 'replace')}"
        leaked = SECRET_SHA not in argv and SECRET_SHA.encode() in printed  # (not the pin given)
        if MARK.encode() in printed or leaked:
            return "outside_reads", printed.decode("utf-8", "replace")
        return None


def run_task(
    helper: str, start: int, stop: int, scratch: str, seed: int, timeout: float,
    progress: Any = None,
) -> dict[str, Any]:  # fmt: skip
    """Entry point of a worker process: the task's tally as JSON-ready data."""
    began = time.monotonic()
    task = HelperTask(helper, Path(scratch), seed, timeout)
    tally = task.run(start, stop, progress)
    shutil.rmtree(scratch, ignore_errors=True)
    return {**tally, "kinds": dict(tally["kinds"]), "seconds": time.monotonic() - began}
