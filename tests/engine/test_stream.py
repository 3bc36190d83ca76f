"""File mode as a stream: the walk's order, sources given more than once, the worker processes
fed over pipes, and memory that does not grow with the number of sessions."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
import tracemalloc
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from continuity_checks import engine
from continuity_checks.checks.deltas.family import DeltasFamily
from continuity_checks.checks.sessions import session
from continuity_checks.core.config import Config, Ignore
from continuity_checks.core.family import FileInput
from continuity_checks.core.globs import Globs
from continuity_checks.core.parallel import WorkerFailed
from continuity_checks.engine import file_mode

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _gen_sessions() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_sessions", BENCHMARKS / "gen_sessions.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _files(root: Path, names: list[str]) -> None:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}")


TRICKY = [
    "a.b", "a-", "a/x", "a/b/c", "a-b/c", "a b/c", "a0", "ab", "a/b.c", "a/b-", "a/b/d/e",
    "é.json", "é/x", "ä", "Z", "z/.hidden", "_", "~", "a/é", "a/e\u0301", "日本/語",
]  # fmt: skip


def test_the_walk_streams_files_in_sorted_order(tmp_path: Path) -> None:
    _files(tmp_path, TRICKY)
    _files(tmp_path, [".git/config", "node_modules/x.json", "a/__pycache__/y"])
    expected = sorted(TRICKY)
    assert list(engine.walk(tmp_path, Globs(()))) == expected
    assert list(engine.walk(tmp_path, Globs(()), "a")) == sorted(p for p in TRICKY if p[:2] == "a/")
    # pruned directories and excluded globs are left out, as before
    pruned = list(engine.walk(tmp_path, Globs(()), prune={"a/b", "é"}))
    assert pruned == [p for p in expected if not p.startswith(("a/b/", "é/"))]
    assert list(engine.walk(tmp_path, Globs(("a/b",)))) == [
        p for p in expected if not p.startswith("a/b/")
    ]


def test_the_walk_does_not_follow_a_symlinked_directory(tmp_path: Path) -> None:
    _files(tmp_path, ["d/x", "outside/y"])
    (tmp_path / "d" / "link").symlink_to(tmp_path / "outside", target_is_directory=True)
    (tmp_path / "d" / "file-link").symlink_to(tmp_path / "outside" / "y")
    assert list(engine.walk(tmp_path, Globs(()), "d")) == ["d/file-link", "d/x"]


def test_a_directory_the_walk_cannot_list_is_a_finding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _files(tmp_path, ["a/x", "b/y", "c/z"])
    scandir = os.scandir

    def refusing(path: Any) -> Any:
        if str(path).endswith("/b"):
            raise PermissionError(13, "Permission denied", str(path))
        return scandir(path)

    monkeypatch.setattr(os, "scandir", refusing)  # root may list anything: refused here
    unlisted: list[Any] = []
    assert list(engine.walk(tmp_path, Globs(()), "", unlisted)) == ["a/x", "c/z"]
    assert [(f.rule, f.path) for f in unlisted] == [("CC001", "b")]


def _deltas(root: Path, names: list[str]) -> None:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text('{"not": "a delta"}\n')


NESTED = [
    "d/.deltalayer/changes/a.json",
    "d/sub/.deltalayer/changes/b.json",
    "d/sub/.deltalayer/changes/f.json",
]


@pytest.mark.parametrize(
    "given",
    [
        ["d", "d/sub", "d/sub/.deltalayer/changes/f.json"],
        ["d/sub/.deltalayer/changes/f.json", "d/sub", "d", "d"],
        ["d/sub", "d/sub/.deltalayer/changes/f.json", "d"],
    ],
)
def test_nested_sources_check_each_file_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: list[str]
) -> None:
    _deltas(tmp_path, NESTED)
    seen: list[str] = []
    original = DeltasFamily.check_file

    def spy(self: DeltasFamily, file: FileInput) -> Any:
        seen.append(file.path)
        return original(self, file)

    monkeypatch.setattr(DeltasFamily, "check_file", spy)
    report = engine.check(tmp_path, Config(), given, only=("deltas",), jobs=1)
    assert sorted(seen) == NESTED
    assert report.files == 3
    assert set(NESTED) <= {f.path for f in report.findings}  # each file judged: not a delta
    # and the same with workers: each file counted once
    parallel = engine.check(tmp_path, Config(), given, only=("deltas",), jobs=2)
    assert parallel.files == 3
    assert parallel.sorted_findings() == report.sorted_findings()


def test_workers_fed_in_many_batches_find_what_one_process_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # two kinds of file (a delta, a temp file) in turn: each batch names both
    names = [
        f"d{i % 3}/.deltalayer/changes/{i:04d}.{'json' if i % 2 else 'tmp'}" for i in range(1500)
    ]
    _deltas(tmp_path, names)
    (tmp_path / "d1/.deltalayer/changes/0007.json").write_text("{not json")
    one = engine.check(tmp_path, Config(), under=("",), only=("deltas",), jobs=1)
    monkeypatch.setattr(file_mode, "BATCH_MAX", 7)  # many batches for each worker, in turn
    for jobs in (2, 3):
        many = engine.check(tmp_path, Config(), under=("",), only=("deltas",), jobs=jobs)
        assert (many.files, many.sorted_findings()) == (one.files, one.sorted_findings())
    assert set(names) <= {f.path for f in one.findings}


def _looked_ahead(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The length of the look-ahead of each run that forks workers (none for a run that stays
    in this process)."""
    seen: list[int] = []
    original = file_mode._before_workers

    def spy(families: Any, ahead: list[Any]) -> None:
        seen.append(len(ahead))
        original(families, ahead)

    monkeypatch.setattr(file_mode, "_before_workers", spy)
    monkeypatch.setattr(file_mode, "PARALLEL_FROM", 100)
    monkeypatch.setattr(file_mode, "LOOK_AHEAD", 8)
    monkeypatch.setattr(file_mode, "BATCH_MAX", 16)
    return seen


def test_a_directory_listing_many_names_forks_after_the_short_look_ahead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _deltas(tmp_path, [f".deltalayer/changes/{i:04d}.json" for i in range(150)])
    (tmp_path / ".deltalayer/changes/0003.json").write_text("{not json")
    one = engine.check(tmp_path, Config(), under=("",), only=("deltas",), jobs=1)
    seen = _looked_ahead(monkeypatch)
    report = engine.check(tmp_path, Config(), under=("",), only=("deltas",))
    assert seen == [8]  # the store's listing shows the rest: no walk of 100 files first
    assert (report.files, report.sorted_findings()) == (one.files, one.sorted_findings())


def test_a_run_below_the_threshold_stays_in_this_process_whatever_it_lists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 60 claimed files in small directories, then 36 in one: fewer than PARALLEL_FROM
    _deltas(tmp_path, [f"p{i:02d}/.deltalayer/changes/{j}.json" for i in range(20) for j in "abc"])
    _deltas(tmp_path, [f"q/.deltalayer/changes/{i:02d}.json" for i in range(36)])
    seen = _looked_ahead(monkeypatch)
    report = engine.check(tmp_path, Config(), under=("",), only=("deltas",))
    assert (report.files, seen) == (96, [])
    # many small directories: the look-ahead counts to PARALLEL_FROM before it forks
    _deltas(tmp_path, [f"r{i:02d}/.deltalayer/changes/{j}.json" for i in range(30) for j in "ab"])
    report = engine.check(tmp_path, Config(), under=("",), only=("deltas",))
    assert (report.files, seen) == (156, [100])


def test_an_exception_in_a_worker_is_raised_in_the_parent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _deltas(tmp_path, [f".deltalayer/changes/{i:03d}.json" for i in range(40)])
    original = DeltasFamily.check_file
    parent = os.getpid()

    def failing(self: DeltasFamily, file: FileInput) -> Any:
        if os.getpid() != parent and file.path.endswith("013.json"):
            raise ValueError(f"cannot check {file.path} in a worker")
        return original(self, file)

    monkeypatch.setattr(DeltasFamily, "check_file", failing)
    monkeypatch.setattr(file_mode, "BATCH_MAX", 4)  # batches in turn: 013 in the second worker's
    with pytest.raises(ValueError, match=r"013\.json in a worker"):
        engine.check(tmp_path, Config(), under=("",), only=("deltas",), jobs=2)


def test_a_worker_that_dies_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _deltas(tmp_path, [f".deltalayer/changes/{i:03d}.json" for i in range(40)])
    parent = os.getpid()

    def dying(self: DeltasFamily, file: FileInput) -> Any:
        if os.getpid() != parent:
            os._exit(3)
        return []

    monkeypatch.setattr(DeltasFamily, "check_file", dying)
    monkeypatch.setattr(file_mode, "BATCH_MAX", 4)
    with pytest.raises(WorkerFailed):
        engine.check(tmp_path, Config(), under=("",), only=("deltas",), jobs=2)


def test_a_session_split_across_batches_is_judged_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gen = _gen_sessions()
    for sid in ("s1", "s2", "s3"):
        gen.session(tmp_path / "sessions" / sid, sid, 24)
    # a dangling predecessor in s2, in a node file that is not the last
    history = tmp_path / "sessions" / "s2" / "history"
    names = sorted(os.listdir(history))
    bad = history / names[5]
    bad.write_text(bad.read_text().replace('"predecessor": "', '"predecessor": "gone'))
    judged = tmp_path / "judged.log"  # appended by every process that judges a session
    original = session.check_session

    def logged(tree: Any, directory: str, *args: Any, **kwargs: Any) -> Any:
        with open(judged, "a") as log:
            log.write(directory + "\n")
        return original(tree, directory, *args, **kwargs)

    monkeypatch.setattr(session, "check_session", logged)
    monkeypatch.setattr(file_mode, "BATCH_MAX", 5)  # each session's 24 node files: 5 batches
    results = {}
    for jobs in (1, 2, 3):
        judged.write_text("")
        report = engine.check(tmp_path, Config(), under=("",), only=("sessions",), jobs=jobs)
        assert sorted(judged.read_text().split()) == [
            "sessions/s1/",
            "sessions/s2/",
            "sessions/s3/",
        ]
        results[jobs] = [(f.rule, f.path) for f in report.sorted_findings()]
    # the session's DAG check (dangling edge) found it, whichever process judged it
    assert results[1] == [("SS117", f"sessions/s2/history/{names[5]}")]
    assert results[1] == results[2] == results[3]


def test_a_session_given_in_pieces_is_judged(tmp_path: Path) -> None:
    """Node files named one by one, the last one missing: the session is judged by the tree
    check (it reads the rest), once, with the finding of a node file not named."""
    gen = _gen_sessions()
    gen.session(tmp_path / "sessions" / "s1", "s1", 8)
    history = tmp_path / "sessions" / "s1" / "history"
    names = sorted(os.listdir(history))
    bad = history / names[-1]
    bad.write_text(bad.read_text().replace('"seq": ', '"seq": 1'))
    given = [f"sessions/s1/history/{n}" for n in names[:3]]
    report = engine.check(tmp_path, Config(), given, only=("sessions",), jobs=1)
    assert report.files == 3
    assert any(f.path == f"sessions/s1/history/{names[-1]}" for f in report.findings)


def _judged_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A file every process that judges a session appends the session's directory to."""
    judged = tmp_path / "judged.log"
    original = session.check_session

    def logged(tree: Any, directory: str, *args: Any, **kwargs: Any) -> Any:
        with open(judged, "a") as log:
            log.write(directory + "\n")
        return original(tree, directory, *args, **kwargs)

    monkeypatch.setattr(session, "check_session", logged)
    return judged


@pytest.mark.parametrize(
    "given",
    [
        # the walk brings s1 without its last node file, which comes after s2's files
        ["sessions", "sessions/s1/history/LAST"],
        # s1's meta.json, then s2, then s1's history/
        ["sessions/s1/meta.json", "sessions/s2", "sessions/s1/history"],
        ["sessions/s1/history/FIRST", "sessions/s2", "sessions/s1/history/LAST"],
        ["sessions/s1/history/LAST", "sessions/s2", "sessions/s1", "sessions"],
    ],
)
def test_a_session_met_again_later_in_the_stream_is_judged_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: list[str]
) -> None:
    gen = _gen_sessions()
    for sid in ("s1", "s2"):
        gen.session(tmp_path / "sessions" / sid, sid, 6)
    names = sorted(os.listdir(tmp_path / "sessions" / "s1" / "history"))
    paths = [g.replace("FIRST", names[0]).replace("LAST", names[-1]) for g in given]
    shutil.rmtree(tmp_path / "sessions" / "s1" / ".git")  # SS102: a finding of the session's own
    judged = _judged_log(tmp_path, monkeypatch)
    config = Config(ignores=(Ignore(frozenset({"SS102"}), ("**",), "the count is what is tested"),))
    for jobs in (1, 2):
        judged.write_text("")
        report = engine.check(tmp_path, config, paths, only=("sessions",), jobs=jobs)
        assert sorted(judged.read_text().split()) == ["sessions/s1/", "sessions/s2/"], jobs
        assert report.suppressed == 1  # one SS102, counted once


def test_a_workspace_met_again_later_in_the_stream_checks_its_block_ids_once(
    tmp_path: Path,
) -> None:
    for name in ("a", "b"):
        topics = tmp_path / name / "memory" / "topics"
        topics.mkdir(parents=True)
        (topics / "one.md").write_text("# One\n\nFirst. ^same\n")
        (topics / "two.md").write_text("# Two\n\nSecond. ^same\n")
    # a's topics, b's, a's again: a's workspace is checked on each visit
    given = ["a/memory/topics/one.md", "b/memory/topics/one.md", "a/memory/topics/two.md"]
    config = Config(ignores=(Ignore(frozenset({"SS142"}), ("**",), "the count is what is tested"),))
    report = engine.check(tmp_path, config, given, only=("sessions",), jobs=1)
    assert report.suppressed == 2  # the repeated block id (SS142): once in a, once in b


def _peak(root: Path) -> int:
    tracemalloc.reset_peak()
    start = tracemalloc.get_traced_memory()[0]
    report = engine.check(root, Config(), under=("",), only=("sessions",), jobs=1)
    assert report.files > 0
    return tracemalloc.get_traced_memory()[1] - start


#: Bytes per session the peak of a run may grow by. The engine's lists of paths cost about
#: 400 bytes per file before the stream (2,800 per session of these 7 files); the stream keeps
#: one directory name per settled session and the listing of sessions/ (about 170 bytes).
PER_SESSION = 600
SMALL, LARGE = 40, 280


def test_memory_does_not_grow_with_the_number_of_sessions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gen = _gen_sessions()
    small, large = tmp_path / "small", tmp_path / "large"
    for root, count in ((small, SMALL), (large, LARGE)):
        for i in range(count):
            gen.session(root / "sessions" / f"s{i:04d}", f"s{i:04d}", 6)
    monkeypatch.setattr(session, "PARALLEL_SESSIONS", sys.maxsize)  # one process: all is seen
    tracemalloc.start()
    try:
        _peak(small)  # imports and compiled schemas: not part of what is measured
        small_peak, large_peak = _peak(small), _peak(large)
    finally:
        tracemalloc.stop()
    print(f"peak {small_peak} B at {SMALL} sessions, {large_peak} B at {LARGE}")
    assert large_peak - small_peak < PER_SESSION * (LARGE - SMALL), (small_peak, large_peak)


def test_a_run_without_a_familys_files_does_not_import_its_tree_check(tmp_path: Path) -> None:
    """The commit hook checking one delta builds every family; the sessions family's tree check
    (and what it imports) is made only at the family's first claimed file."""
    import subprocess

    _deltas(tmp_path, [".deltalayer/changes/a.json"])
    code = (
        "import sys; from pathlib import Path; from continuity_checks import engine; "
        "from continuity_checks.core.config import Config; "
        f"engine.check(Path({str(tmp_path)!r}), Config(), ['.deltalayer/changes/a.json']); "
        "print('\\n'.join(m for m in sys.modules if m.startswith('continuity_checks.checks')))"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(engine.__file__).parents[2])}
    loaded = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout.split()
    assert "continuity_checks.checks.deltas.files" in loaded  # the delta was checked
    assert "continuity_checks.checks.sessions.family" in loaded  # every family was built
    tree_check = {f"continuity_checks.checks.sessions.{m}" for m in ("stream", "session")}
    assert tree_check.isdisjoint(loaded), sorted(tree_check & set(loaded))


def test_a_worker_killed_mid_run_is_a_clear_error_from_the_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A worker that dies (the kernel's OOM killer, a SIGKILL) leaves files unchecked: the run
    ends with exit 2 and says so, not with a traceback (exit 1 reads as "findings")."""
    import signal

    from continuity_checks.cli import main

    _deltas(tmp_path, [f".deltalayer/changes/{i:03d}.json" for i in range(40)])
    parent = os.getpid()

    def killed(self: DeltasFamily, file: FileInput) -> Any:
        if os.getpid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
        return []

    monkeypatch.setattr(DeltasFamily, "check_file", killed)
    monkeypatch.setattr(file_mode, "BATCH_MAX", 4)
    monkeypatch.chdir(tmp_path)
    for command in (["check", "--all"], ["baseline", "check"]):
        capsys.readouterr()
        assert main([*command, "--jobs", "2"]) == 2
        err = capsys.readouterr().err
        assert "a worker process" in err and "--jobs 1" in err, err


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_node_file_from_stdin_is_checked_where_the_walk_meets_it(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    jobs: str,
) -> None:
    """``check - . --stdin-filename <node file>``: the node file's bytes are standard input's.
    Met only after its session was judged (at the session's last node file, reading the
    others from disk), its own findings were held for a judgment that never came: exit 0 on
    a broken node file. Met where the walk finds it, as by the engine before the stream, it is
    held when the session is judged."""
    import io

    from continuity_checks.cli import main

    gen = _gen_sessions()
    gen.session(tmp_path / "sessions" / "s1", "s1", 6)
    gen.session(tmp_path / "sessions" / "s2", "s2", 6)
    name = "sessions/s1/history/" + sorted(os.listdir(tmp_path / "sessions/s1/history"))[2]
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b'{"not": "closed"\n')))
    capsys.readouterr()
    code = main(["check", "-", ".", "--stdin-filename", name, "--jobs", jobs, "--format", "json"])
    found = [(f["rule"], f["path"]) for f in json.loads(capsys.readouterr().out)["findings"]]
    # the session judged with standard input's version: meta.json's head_id names its node
    assert (code, found) == (1, [("CC004", name), ("SS105", "sessions/s1/meta.json")])


def test_a_node_file_from_stdin_is_its_bytes_for_a_session_judged_in_another_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Standard input's node file is held where it is checked; the session's last node file,
    in another process, judges the session reading the others: from disk, the broken bytes
    given on standard input were never judged (exit 0). The work tree reads them instead."""
    gen = _gen_sessions()
    gen.session(tmp_path / "sessions" / "s1", "s1", 8)
    name = "sessions/s1/history/" + sorted(os.listdir(tmp_path / "sessions/s1/history"))[1]
    monkeypatch.setattr(file_mode, "BATCH_MAX", 2)  # the session in batches, to the workers in turn
    for jobs in (1, 2, 3):
        report = engine.check(
            tmp_path,
            Config(),
            ["sessions"],
            stdin=(name, b'{"broken'),
            only=("sessions",),
            jobs=jobs,
        )
        assert ("CC004", name) in [(f.rule, f.path) for f in report.findings], jobs


class _Sent:
    """Stands for the workers: the batches handed on, in order."""

    def __init__(self) -> None:
        self.batches: list[Any] = []

    def send(self, batch: list[Any]) -> None:
        self.batches.extend(batch)


class _Recorded(file_mode.FileChecks):
    """Records the files a worker would check, in order, instead of checking them."""

    def __init__(self) -> None:
        super().__init__((), None, {})  # type: ignore[arg-type]
        self.seen: list[tuple[str, Any]] = []

    def check(self, path: str, owners: Any) -> None:
        self.seen.append((path, owners))


class _Ignored:
    """Stands for the tree checks: every family's is made, and takes any file."""

    def __init__(self) -> None:
        self.made = [self, self]

    def add(self, path: str, kind: str) -> None:
        pass


_OWNERS = (((0, "delta"),), ((0, "temp"),), ((0, "delta"), (1, "notes")))


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["a", "a/b", "c", "", "a/b/c"]),
            st.text("xyz.-é ", min_size=1, max_size=3),
            st.sampled_from(range(len(_OWNERS))),
            st.booleans(),
        ),
        max_size=40,
    ),
    st.integers(1, 9),
    st.integers(1, 9),
)
def test_the_batches_handed_to_the_workers_are_the_stream_in_order(
    files: list[tuple[str, str, int, bool]], most: int, after: int
) -> None:
    """The files a worker unpacks from its batches (paths joined, runs of owners) are the
    stream's, with their owners, in order, whatever the batch sizes: owners equal but not the
    same tuple, names with a space or a non-ASCII letter."""
    items = [
        (f"{d}/{n}" if d else n, _OWNERS[o] if same else tuple(list(_OWNERS[o])))
        for d, n, o, same in files
    ]
    sent, recorded = _Sent(), _Recorded()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(file_mode, "BATCH_MAX", most)
        patch.setattr(file_mode, "BATCH_AFTER", min(after, most))
        count = file_mode.feed(items, _Ignored(), recorded, sent, None)  # type: ignore[arg-type]
    for batch in sent.batches:
        recorded.check_batch(batch)
    assert count == len(items)
    assert recorded.seen == items
    assert all(len(batch[0].split("\0")) <= most for batch in sent.batches)
