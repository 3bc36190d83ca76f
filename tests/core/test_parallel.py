"""The one fan-out over CPUs: one CPU policy (the CPUs this process may use: affinity and
cgroup v2 quota, never the load average), one module that forks, one module that starts
threads. The layout rules are pinned by reading the source."""

from __future__ import annotations

import ast
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from continuity_checks import engine
from continuity_checks.checks.deltas.family import DeltasFamily
from continuity_checks.core import parallel
from continuity_checks.core.config import Config
from continuity_checks.core.family import FileInput
from continuity_checks.engine import file_mode
from tests.conftest import REPO

SRC = REPO / "src" / "continuity_checks"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("max 100000\n", None),  # no quota
        ("200000 100000\n", 2),
        ("150000 100000\n", 2),  # a part of a CPU counts as one
        ("100001 100000\n", 2),
        ("50000 100000\n", 1),  # at least one
        ("1 1000000\n", 1),
        ("max\n", None),  # neither form: no quota read into it
        ("", None),
        ("fast 100000\n", None),
        ("0 100000\n", None),
        ("100000 0\n", None),
        ("100000 100000 1\n", None),
    ],
)
def test_the_cgroup_quota_is_ceil_of_quota_over_period(
    tmp_path: Path, text: str, expected: int | None
) -> None:
    cpu_max = tmp_path / "cpu.max"
    cpu_max.write_text(text, encoding="ascii")
    assert parallel.quota_cpus(str(cpu_max)) == expected


def test_no_cgroup_file_is_no_quota(tmp_path: Path) -> None:
    assert parallel.quota_cpus(str(tmp_path / "cpu.max")) is None
    assert parallel.quota_cpus(str(tmp_path)) is None  # a directory: not readable as the file


@pytest.mark.parametrize(
    ("affinity", "cpu_max", "expected"),
    [
        (2, None, 2),
        (8, "max 100000\n", 8),
        (8, "150000 100000\n", 2),  # a container's quota on a large host
        (2, "800000 100000\n", 2),  # a quota above the affinity: the affinity
        (1, "50000 100000\n", 1),
    ],
)
def test_usable_cpus_are_the_affinity_within_the_quota(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    affinity: int,
    cpu_max: str | None,
    expected: int,
) -> None:
    path = tmp_path / "cpu.max"
    if cpu_max is not None:
        path.write_text(cpu_max, encoding="ascii")
    monkeypatch.setattr(parallel, "CPU_MAX", str(path))
    monkeypatch.setattr(parallel.os, "sched_getaffinity", lambda pid: set(range(affinity)))
    monkeypatch.setattr(parallel.os, "getloadavg", lambda: (40.0, 40.0, 40.0))  # not read
    assert parallel.usable_cpus() == expected


def test_the_default_jobs_are_the_usable_cpus_whatever_the_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A load average of 50 (this tool's own previous run, or a whole container host) does not
    keep ``check`` from the CPUs it may use."""
    changes = tmp_path / ".deltalayer" / "changes"
    changes.mkdir(parents=True)
    for i in range(12):
        (changes / f"{i:03d}.json").write_text("{}")
    monkeypatch.setattr(parallel, "CPU_MAX", str(tmp_path / "no-cgroup"), raising=False)
    monkeypatch.setattr(parallel.os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setattr(parallel.os, "getloadavg", lambda: (50.0, 50.0, 50.0))
    monkeypatch.setattr(file_mode, "PARALLEL_FROM", 4)
    monkeypatch.setattr(file_mode, "BATCH_MAX", 2)  # batches to the two workers in turn
    log = tmp_path / "pids.log"  # appended by every process that checks a file
    original = DeltasFamily.check_file

    def logged(self: DeltasFamily, file: FileInput) -> Any:
        with open(log, "a") as out:
            out.write(f"{os.getpid()}\n")
        return original(self, file)

    monkeypatch.setattr(DeltasFamily, "check_file", logged)
    report = engine.check(tmp_path, Config(), under=("",), only=("deltas",))
    assert report.files == 12
    checked_by = set(log.read_text().split())
    assert len(checked_by) == 2  # two workers; this process walks and feeds them
    assert str(os.getpid()) not in checked_by


# --- layout --------------------------------------------------------------------------------------


def _found(match: Callable[[ast.AST], object]) -> list[str]:
    """``module:line`` of every node of the package's source that ``match`` accepts."""
    found = []
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        found.extend(
            f"{path.relative_to(SRC).as_posix()}:{node.lineno}"
            for node in ast.walk(tree)
            if match(node)
        )
    return found


def _names(node: ast.AST) -> set[str]:
    """The names a node spells: a name, an attribute's last part, each part of an import."""
    if isinstance(node, ast.Name):
        return {node.id}
    if isinstance(node, ast.Attribute):
        return {node.attr}
    if isinstance(node, ast.alias):
        return set(node.name.split("."))
    return set()


def _modules(found: list[str]) -> set[str]:
    return {place.partition(":")[0] for place in found}


FORKS = {"fork", "forkpty", "posix_spawn", "multiprocessing", "ProcessPoolExecutor"}
THREADS = {"ThreadPoolExecutor", "ThreadPool", "Thread", "start_new_thread"}
CPU_COUNTS = {"sched_getaffinity", "cpu_count", "process_cpu_count", "getloadavg"}


def test_one_module_forks() -> None:
    """Worker processes are started in one place: ``core/parallel.py``, by one call."""
    found = _found(lambda node: _names(node) & FORKS)
    assert _modules(found) == {"core/parallel.py"}, found
    assert len(found) == 1, found


def test_one_module_starts_threads() -> None:
    """Thread pools are started in one place: hashing's pool, which every caller uses."""
    found = _found(lambda node: _names(node) & THREADS)
    assert _modules(found) == {"core/hashing.py"}, found


def test_one_cpu_policy() -> None:
    """The CPUs a run may use are counted in one place, and never by the load average."""
    found = _found(lambda node: _names(node) & CPU_COUNTS)
    assert _modules(found) == {"core/parallel.py"}, found
    assert not _found(lambda node: "getloadavg" in _names(node))


def test_the_scans_see_each_form(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A call through the module, an imported name and an import are each found."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import os\n"
        "from os import fork\n"
        "from concurrent.futures import ThreadPoolExecutor\n"
        "import multiprocessing.pool\n"
        "os.fork()\n"
        "threading.Thread(target=print)\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(f"{__name__}.SRC", tmp_path)
    assert _found(lambda node: _names(node) & FORKS) == [
        "sample.py:2",
        "sample.py:4",
        "sample.py:5",
    ]
    assert _found(lambda node: _names(node) & THREADS) == ["sample.py:3", "sample.py:6"]
