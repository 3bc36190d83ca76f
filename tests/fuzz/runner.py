"""One fuzz task: a family's inputs ``start..stop`` in one scratch repository, in process.

Each input is derived from ``(seed, family, index)`` alone, so any input can be replayed
(``python -m tests.fuzz --family F --replay INDEX``). Kinds of input:

- ``file``: a mutated file of the family, checked by ``engine.check`` with what pre-commit would
  pass, and the report rendered in one of the output formats;
- ``config``: a generated ``.continuity.toml`` (valid, mutated or known to be invalid), loaded,
  then a check under it;
- ``history``: a commit of a mutated file in the scratch repository, verified by
  ``engine.verify`` (blind, or breaking a history invariant whose rule must answer);
- ``cli``: a mutated file checked by the real ``continuity check`` in a subprocess.

Counted: tracebacks (any exception but the clean errors of the interface), hangs (an input past
``timeout`` seconds of CPU: SIGPROF in process; a kill after six times that for the CLI), and silent passes (an input known
to be invalid that gains no error, a known-invalid configuration that loads, or a claimed file
the report says it did not check).
"""

from __future__ import annotations

import contextlib
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
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from continuity_checks import checks, engine
from continuity_checks.core import config as config_module
from continuity_checks.core.config import Config, ConfigError
from continuity_checks.core.findings import Report, Severity
from continuity_checks.core.git.errors import GitError
from continuity_checks.report import render
from tests.fuzz import mutations
from tests.fuzz.families import FAMILIES, Family, HistoryCase, Target, donor_bytes

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
FORMATS = ("text", "json", "sarif", "github")
KEPT_FAILURES = 20  # per task: the inputs themselves are saved for replay
GIT_ENV = {
    "GIT_AUTHOR_NAME": "fuzz",
    "GIT_AUTHOR_EMAIL": "fuzz@example.invalid",
    "GIT_COMMITTER_NAME": "fuzz",
    "GIT_COMMITTER_EMAIL": "fuzz@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}


class Hang(BaseException):
    """Raised by SIGPROF: a BaseException, so that no ``except Exception`` of the code under
    test can swallow it."""


class Counted(Exception):
    """An input's hang or traceback, counted by :meth:`Task._guard`: the input ends there."""


def _alarm(_signum: int, _frame: FrameType | None) -> None:
    raise Hang


@dataclass
class Rates:
    history: float = 0.002
    config: float = 0.03
    cli: float = 0.0005
    invalid: float = 0.35
    render: float = 0.2
    """Share of reports rendered (SARIF of a thousand findings costs 40 ms)."""


@dataclass
class Tally:
    inputs: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    invalid_inputs: int = 0
    tracebacks: int = 0
    hangs: int = 0
    silent_passes: int = 0
    outside_writes: int = 0  # (helper commands: tests/fuzz/helpers.py)
    outside_reads: int = 0
    failures: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "inputs": self.inputs,
            "kinds": dict(self.kinds),
            "invalid_inputs": self.invalid_inputs,
            "tracebacks": self.tracebacks,
            "hangs": self.hangs,
            "silent_passes": self.silent_passes,
            "outside_writes": self.outside_writes,
            "outside_reads": self.outside_reads,
            "failures": self.failures,
        }

    def add(self, other: dict[str, Any]) -> None:
        self.inputs += other["inputs"]
        self.kinds.update(other["kinds"])
        self.invalid_inputs += other["invalid_inputs"]
        self.tracebacks += other["tracebacks"]
        self.hangs += other["hangs"]
        self.silent_passes += other["silent_passes"]
        self.outside_writes += other.get("outside_writes", 0)
        self.outside_reads += other.get("outside_reads", 0)
        self.failures.extend(other["failures"][: max(0, KEPT_FAILURES - len(self.failures))])


# -------------------------------------------------------------------------------- configurations

VALID_CONFIGS = [
    '[rules]\nDL104 = "off"\nCX104 = "warning"\n',
    "[limits]\nmax-file-bytes = 200\n",
    "[limits]\nmax-depth = 3\n",
    "[limits]\nmax-findings = 1\nmax-findings-per-file = 1\n",
    'exclude = ["examples/**"]\n',
    'families = ["deltas", "provenance"]\n',
    'families = []\n',
    '[rules]\nWS109 = "off"\nPV104 = "off"\nSS102 = "warning"\n',
    '[provenance]\nrelative-to = "sums-file"\n',
    '[deltas]\nlegacy = "append-only"\n',
]  # fmt: skip
INVALID_CONFIGS = [
    "[limits]\nmax-file-bytes = -1\n",
    '[limits]\nmax-depth = "deep"\n',
    "[limits]\nmax-findings = 0\n",
    "[limits]\nunknown = 1\n",
    '[rules]\nXX999 = "off"\n',
    '[rules]\nDL104 = "loud"\n',
    "exclude = 3\n",
    'families = ["nope"]\n',
    "[[[\n",
    "rules = 1\n",
    "limits = [1]\n",
    'surprise = "key"\n',
    "\xff\xfe".encode("latin-1").decode("latin-1"),
]  # fmt: skip


def config_text(rng: random.Random) -> tuple[bytes, bool]:
    """A configuration's bytes, and whether it is known to be invalid."""
    roll = rng.random()
    if roll < 0.3:
        return rng.choice(INVALID_CONFIGS).encode("latin-1"), True
    text = "".join(rng.sample(VALID_CONFIGS, rng.randint(1, 2))).encode()
    if roll < 0.55 and b"[" in text.split(b"\n", 1)[0] and text.count(b"[") == 1:
        return text, False
    if roll < 0.65:
        return text, False
    return rng.choice(mutations.BLIND)(rng, text) or text, False


# ----------------------------------------------------------------------------------- the task


def _git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", *args], cwd=root, env={**os.environ, **GIT_ENV}, check=True, capture_output=True
    )


def errors(report: Report) -> set[tuple[str, str, str | None, str]]:
    return {
        (f.rule, f.path, f.pointer, f.message)
        for f in report.findings
        if f.severity == Severity.ERROR
    }


class Task:
    """A scratch copy of ``examples/`` in a git repository, and the family's inputs over it."""

    def __init__(
        self,
        family: Family,
        scratch: Path,
        corpus: Path,
        *,
        seed: int,
        timeout: float,
        rates: Rates,
        failures_dir: Path | None,
    ) -> None:
        self.family = family
        self.root = scratch
        self.seed = seed
        self.timeout = timeout
        self.rates = rates
        self.failures_dir = failures_dir
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir(parents=True)
        shutil.copytree(EXAMPLES, scratch / "examples", symlinks=True)
        _git(scratch, "init", "-q", "-b", "main")
        _git(scratch, "add", "-A")
        _git(scratch, "commit", "-q", "-m", "examples")
        self.seeds = {t.path: (scratch / t.path).read_bytes() for t in family.targets}
        self.donors = donor_bytes(corpus, family)
        self.config = self._load_config()
        self.baseline = {t.path: errors(self._check(t.check)) for t in family.targets}
        self.tally = Tally()

    def _load_config(self) -> Config:
        return config_module.load(self.root, checks.known())

    def _check(self, paths: tuple[str, ...], config: Config | None = None) -> Report:
        return engine.check(self.root, config or self.config, list(paths))

    # ---------------------------------------------------------------- bookkeeping

    def _fail(self, kind: str, index: int, what: str, data: bytes | None, detail: str) -> None:
        setattr(self.tally, kind, getattr(self.tally, kind) + 1)
        record = {"kind": kind, "family": self.family.name, "index": index, "input": what,
                  "detail": detail[-4000:]}  # fmt: skip
        if len(self.tally.failures) < KEPT_FAILURES:
            self.tally.failures.append(record)
        if self.failures_dir is not None and data is not None:
            self.failures_dir.mkdir(parents=True, exist_ok=True)
            stem = self.failures_dir / f"{self.family.name}-{index}-{kind}"
            stem.with_suffix(".bin").write_bytes(data)
            stem.with_suffix(".txt").write_text(json.dumps(record, indent=2), encoding="utf-8")

    @contextlib.contextmanager
    def _guard(
        self, index: int, what: str, data: bytes | None, expected: tuple[type[Exception], ...] = ()
    ) -> Iterator[None]:
        """Counts a hang or a traceback in the body as this input's failure and raises
        :class:`Counted`; the ``expected`` exceptions pass through to the caller."""
        try:
            yield
        except expected:
            raise
        except Hang:
            self._fail("hangs", index, what, data, f"over {self.timeout} s")
            raise Counted from None
        except Exception:
            self._fail("tracebacks", index, what, data, traceback.format_exc())
            raise Counted from None

    def _timed(self, call: Any, *args: Any) -> Any:
        # CPU time, not wall time: on a loaded machine a wall-clock budget reports the load (a
        # 0.3 s input went over 10 s while other jobs held both CPUs); a loop burns CPU and is
        # caught, a process blocked without burning CPU is the watchdog's (--hard-timeout)
        signal.setitimer(signal.ITIMER_PROF, self.timeout)
        try:
            return call(*args)
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)

    # ---------------------------------------------------------------- inputs

    def run(self, start: int, stop: int, progress: Any = None) -> Tally:
        before = signal.signal(signal.SIGPROF, _alarm)
        try:
            for index in range(start, stop):
                if progress is not None:
                    progress.value = index
                self.one(index)
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.signal(signal.SIGPROF, before)
        return self.tally

    def one(self, index: int) -> None:
        rng = random.Random(f"{self.seed}:{self.family.name}:{index}")
        roll = rng.random()
        rates = self.rates
        if roll < rates.history:
            kind = "history"
        elif roll < rates.history + rates.config:
            kind = "config"
        elif roll < rates.history + rates.config + rates.cli:
            kind = "cli"
        else:
            kind = "file"
        self.tally.inputs += 1
        self.tally.kinds[kind] += 1
        if kind == "history":
            self._history(rng, index)
        elif kind == "config":
            self._config(rng, index)
        else:
            self._file(rng, index, cli=kind == "cli")

    def _mutant(self, rng: random.Random) -> tuple[Target, bytes, str | None]:
        """A target, its mutated bytes, and the name of the invariant broken (None: blind)."""
        target = rng.choice(self.family.targets)
        seed = self.seeds[target.path]
        if rng.random() < self.rates.invalid:
            choices = dict(target.invalid)
            if target.json:
                choices.update(mutations.INVALID_JSON)
            for name in target.allowed:
                choices.pop(name, None)
            if choices:
                name = rng.choice(sorted(choices))
                data = choices[name](rng, seed)
                if data is not None and data != seed:
                    return target, data, name
        data = seed
        roll = rng.random()
        if roll < 0.1 and self.donors:
            data = rng.choice(self.donors)
        elif roll < 0.2 and self.donors:
            data = mutations.splice(rng, seed, rng.choice(self.donors))
        elif roll < 0.22 and target.json:
            data = mutations.grow(rng, seed) or seed
        for _ in range(rng.choice([1, 1, 1, 2, 3])):
            data = rng.choice(mutations.BLIND)(rng, data) or data
        return target, data, None

    def _file(self, rng: random.Random, index: int, *, cli: bool) -> None:
        target, data, invalid = self._mutant(rng)
        what = f"{target.path} ({invalid or 'blind'})"
        if invalid:
            self.tally.invalid_inputs += 1
        path = self.root / target.path
        path.write_bytes(data)
        try:
            if cli:
                self._cli(target, data, invalid, index, what)
                return
            try:
                with self._guard(index, what, data):
                    report = self._timed(self._check, target.check)
                    if rng.random() < self.rates.render:
                        self._timed(render, report, rng.choice(FORMATS))
            except Counted:
                return
            self._judge(report, target, invalid, index, what, data)
        finally:
            path.write_bytes(self.seeds[target.path])

    def _judge(
        self, report: Report, target: Target, invalid: str | None, index: int, what: str,
        data: bytes,
    ) -> None:  # fmt: skip
        unchecked = [note for note in report.notes if "not checked" in note]
        if unchecked or not report.files:
            detail = f"claimed but not checked: {unchecked or 'no file counted'}"
            self._fail("silent_passes", index, what, data, detail)
            return
        if invalid and not (errors(report) - self.baseline[target.path]):
            shown = sorted(errors(report))[:10]
            self._fail("silent_passes", index, what, data, f"no new error; errors: {shown}")

    def _config(self, rng: random.Random, index: int) -> None:
        text, invalid = config_text(rng)
        what = f".continuity.toml ({'invalid' if invalid else 'valid or blind'})"
        if invalid:
            self.tally.invalid_inputs += 1
        path = self.root / ".continuity.toml"
        path.write_bytes(text)
        target = rng.choice(self.family.targets)
        try:
            try:
                with self._guard(index, what, text, expected=(ConfigError,)):
                    config = self._timed(self._load_config)
            except (ConfigError, Counted):
                return
            if invalid:
                self._fail("silent_passes", index, what, text, "an invalid configuration loaded")
                return
            try:
                with self._guard(index, what, text, expected=(ConfigError,)):
                    report = self._timed(self._check, target.check, config)
                    self._timed(render, report, rng.choice(FORMATS))
            except ConfigError:
                return  # a family's options are checked when the family is built
            except Counted:
                return
            if config.families is not None and self._family_off(config):
                return  # the family is not selected: nothing claims the file, as asked
            if not report.files and not report.notes:
                self._fail("silent_passes", index, what, text, "nothing checked, nothing said")
        finally:
            path.unlink()

    def _family_off(self, config: Config) -> bool:
        name = self.family.name.replace("_", "-")
        return name not in config.families and self.family.name not in config.families

    def _history(self, rng: random.Random, index: int) -> None:
        case: HistoryCase | None = None
        if self.family.history and rng.random() < 0.5:
            case = rng.choice(self.family.history)
            path, seed = case.path, self.seeds[case.path]
            data = case.mutate(rng, seed)
        else:
            target, data, _ = self._mutant(rng)
            path, seed = target.path, self.seeds[target.path]
            if rng.random() < 0.15:
                data = None  # the file deleted
        what = f"commit of {path} ({case.name if case else 'blind'})"
        file = self.root / path
        message = "fuzz"
        if case and case.trailer:
            message += f"\n\nContinuity-Delta: {path.split('/', 2)[2]}"
        if data is None:
            file.unlink()
        else:
            if data == seed:
                return
            file.write_bytes(data)
        if case:
            self.tally.invalid_inputs += 1
        try:
            _git(self.root, "commit", "-q", "-a", "-m", message)
            try:
                with self._guard(index, what, data, expected=(GitError,)):
                    report = self._timed(engine.verify, self.root, self.config, "HEAD~1..HEAD")
                    self._timed(render, report, rng.choice(FORMATS))
            except GitError as exc:
                self._fail("tracebacks", index, what, data, f"GitError on a good range: {exc}")
                return
            except Counted:
                return
            if case and case.rule not in {f.rule for f in report.findings}:
                found = sorted({f.rule for f in report.findings})
                self._fail("silent_passes", index, what, data, f"{case.rule} not in {found}")
        finally:
            file.write_bytes(seed)
            _git(self.root, "add", "-A", "--", path)
            _git(self.root, "commit", "-q", "-m", "restore", "--allow-empty")

    def _cli(self, target: Target, data: bytes, invalid: str | None, index: int, what: str) -> None:
        fmt = random.Random(index).choice(FORMATS)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), *sys.path])}
        command = [sys.executable, "-m", "continuity_checks", "check", "--root", str(self.root),
                   "--format", fmt, *target.check]  # fmt: skip
        try:
            done = subprocess.run(
                command, cwd=self.root, env=env, capture_output=True, timeout=self.timeout * 6
            )
        except subprocess.TimeoutExpired:
            self._fail("hangs", index, what, data, f"CLI over {self.timeout * 6} s")
            return
        err = done.stderr.decode("utf-8", "replace")
        if done.returncode not in (0, 1, 2) or "Traceback" in err:
            self._fail("tracebacks", index, what, data, f"exit {done.returncode}: {err}")
            return
        if fmt in ("json", "sarif") and done.returncode in (0, 1):
            try:
                json.loads(done.stdout.decode("utf-8"))
            except ValueError as exc:
                self._fail("tracebacks", index, what, data, f"{fmt} output not JSON: {exc}")
                return
        if invalid and done.returncode != 1:
            self._fail("silent_passes", index, what, data, f"exit {done.returncode}: {err}")


def run_task(
    family: str,
    start: int,
    stop: int,
    scratch: str,
    corpus: str,
    seed: int,
    timeout: float,
    rates: dict[str, float],
    failures_dir: str | None,
    progress: Any = None,
) -> dict[str, Any]:
    """Entry point of a worker process: the task's tally as JSON-ready data."""
    began = time.monotonic()
    task = Task(
        FAMILIES[family],
        Path(scratch),
        Path(corpus),
        seed=seed,
        timeout=timeout,
        rates=Rates(**rates),
        failures_dir=Path(failures_dir) if failures_dir else None,
    )
    tally = task.run(start, stop, progress)
    shutil.rmtree(scratch, ignore_errors=True)
    return {**tally.to_json(), "seconds": time.monotonic() - began}
