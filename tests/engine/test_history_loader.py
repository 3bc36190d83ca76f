"""History mode internals: its loader agrees with strict_json, the deltas' parse shared with
the file check, and the blob size limit."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from continuity_checks.checks.deltas import timestamps
from continuity_checks.checks.deltas.files import check_file
from continuity_checks.checks.deltas.history import Parsed, Times
from continuity_checks.checks.deltas.timestamps import Timestamp, TimestampError
from continuity_checks.core import strict_json
from continuity_checks.core.family import FileInput
from continuity_checks.core.git.repository import Repository
from continuity_checks.core.snapshot import CommitTree
from tests.conftest import CORPUS, RunCLI
from tests.helpers.git import LEGACY, GitRepo, delta, isolate_git, path_of


def agree(data: bytes, max_depth: int = strict_json.DEFAULT_MAX_DEPTH) -> None:
    """strict_json.accepts (history mode's loader) accepts exactly what strict_json.load
    accepts, with equal values."""
    strict = strict_json.load(data, max_depth=max_depth)
    expected = strict.value if isinstance(strict, strict_json.Document) else None
    loaded = strict_json.accepts(data, max_depth)
    assert (None if loaded is None else loaded[1]) == expected, (data, strict)


SHARED_INPUTS = [
    b'{"a":1}',
    b'{"a":1}\n',
    b'  {"a": [1, {"b": "x"}]}  ',
    b'{"a":1,\n"a":2}',
    b'{"a":{"b":1,"b":2}}',
    b'{"a":{"b":[1,\n  Infinity]}}',
    b'{"a":NaN}',
    b'{"a":-Infinity}',
    b'\xef\xbb\xbf{"a":1}',
    b'{"a":\n"caf\xc3"}',
    b'{"a":1} x',
    b'{"a":"\\udc00"}',
    b'{"\\ud800":1}',
    b'{"a":"\\ud83d\\ude00 \\u00e9"}',
    b'{"a":"\\\\u"}',
    b'{"a":"quote \\" and [[[[ {{{{ in text"}',
    b'{"a":[[1]]}',
    b'{"a":[[[1]]]}',
    b'{"a":{"b":{}}}',
    b'{"a":' + b"1" * 5000 + b"}",
    b"[1, 2]",
    b'"text"',
    b"null",
    b"",
    b"{",
    b'{"a":' + b"[" * 3000 + b"]" * 3000 + b"}",
    delta().encode(),
    delta(changes=["a"], updated="2026-09-21T16:00:00+08:00").encode(),
    b'{"started_at":"2026-09-21T16:20:00+08:00","source":"agent","changes":[],"seq":1}\n',
]


@pytest.mark.parametrize("data", SHARED_INPUTS)
def test_loader_agrees_with_strict_json(data: bytes) -> None:
    agree(data, max_depth=3)
    agree(data)


@given(st.binary(max_size=200))
def test_loader_agrees_on_any_bytes(data: bytes) -> None:
    agree(data, max_depth=4)


json_objects = st.dictionaries(
    st.text(max_size=4),
    st.recursive(
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(max_size=6),
        lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=4), c, max_size=3),
        max_leaves=12,
    ),
    max_size=4,
)


@given(json_objects, st.booleans(), st.integers(min_value=1, max_value=5))
def test_loader_agrees_on_objects(value: dict[str, Any], ascii_only: bool, depth: int) -> None:
    agree(json.dumps(value, ensure_ascii=ascii_only).encode(), max_depth=depth)


def test_loader_agrees_on_the_corpus() -> None:
    files = sorted(CORPUS.rglob("*.json"))
    assert files
    for path in files:
        agree(path.read_bytes())


# --- one parse per version, shared by the history rules and the file check --------------------


def same_answer(
    a: strict_json.Document | strict_json.Problem, b: strict_json.Document | strict_json.Problem
) -> bool:
    if isinstance(a, strict_json.Problem) or isinstance(b, strict_json.Problem):
        return a == b
    return (a.text, a.value, a.compact, a.first_line) == (b.text, b.value, b.compact, b.first_line)


EMPTY = CommitTree(None, None, 1000)  # type: ignore[arg-type]  # a delta's check reads no tree


@given(st.lists(st.sampled_from(SHARED_INPUTS) | st.binary(max_size=60), max_size=12))
def test_shared_parse_is_strict_json_load(inputs: list[bytes]) -> None:
    """Parsed.load answers each input as strict_json.load does, whether parsed or kept, and
    the file check of a delta finds the same with the shared parse as without."""
    parsed = Parsed(max_depth=3)
    for data in inputs:
        expected = strict_json.load(data, max_depth=3)
        assert same_answer(parsed.load(data), expected), data
        assert len(parsed._kept) <= Parsed.KEPT
        file = FileInput(path_of("2026-09-21T16-20-00p08-00--agent.json"), "delta", data, EMPTY)
        assert check_file(file, 3, parsed.load) == check_file(file, 3)


def test_shared_parse_keeps_no_large_version() -> None:
    parsed = Parsed(max_depth=3)
    data = b'{"a":"' + b"x" * Parsed.ITEM_LIMIT + b'"}'
    assert isinstance(parsed.load(data), strict_json.Document)
    assert not parsed._kept


#: times as writers store them, and as they do not: normal, offsets, fractions, a date alone,
#: "Z", naive, out of range, not a time, empty, not a string
TIMES: list[object] = [
    "2026-09-21T16:20:00+08:00",
    "2026-09-21T16:20:05+08:00",
    "2026-09-21T08:20:00+00:00",
    "2026-09-21T16:20:00.123456+08:00",
    "2026-09-21T16:20:00.000000+08:00",
    "2026-09-21T16:20:00-00:00",
    "2026-09-21T16:20:00Z",
    " 2026-09-21T16:20:00+08:00 ",
    "2026-09-21",
    "20260921",
    "2026-09-21T16:20:00",
    "2026-02-30T16:20:00+08:00",
    "2026-09-21T25:20:00+08:00",
    "yesterday",
    "",
    None,
    17,
]


def same_time(parse: Callable[[object], Timestamp], raw: object) -> tuple[object, ...]:
    try:
        found = parse(raw)
    except TimestampError as exc:
        return ("error", str(exc))
    return (found.value, found.isoformat(), found.sort_key(), found.slug())


@given(st.lists(st.sampled_from(TIMES) | st.text(max_size=30), max_size=12))
def test_shared_times_are_timestamps_parse(raws: list[object]) -> None:
    """Times.parse answers each value as timestamps.parse does (the same time, or the same
    error), whether parsed or kept, and the file check of a delta finds the same with the
    shared times and parse as without."""
    times, parsed = Times(), Parsed(max_depth=64)
    for started, updated in zip(raws, [*raws[1:], *raws[:1]], strict=True):
        for raw in (started, updated):
            assert same_time(times.parse, raw) == same_time(timestamps.parse, raw), raw
        assert len(times._kept) <= Times.KEPT
        data = json.dumps({**json.loads(delta()), "started_at": started, "updated_at": updated})
        file = FileInput(
            path_of("2026-09-21T16-20-00p08-00--agent.json"), "delta", data.encode(), EMPTY
        )
        shared = check_file(file, 64, parsed.load, None, times.parse)
        assert shared == check_file(file, 64), data


# --- the size limit ----------------------------------------------------------------------------

A = path_of("2026-09-21T16-20-00p08-00--agent.json")
A_FROZEN = path_of("2026-09-21T16-20-00p08-00--agent.frozen.json")


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    isolate_git(monkeypatch, tmp_path / "home")
    monkeypatch.chdir(tmp_path)
    r = GitRepo(tmp_path / "repo")
    r.commit("base", {A: delta(changes=["first"]), LEGACY: '{"a":1}\n', "README.md": "x\n"})
    r.git("tag", "base")
    return r


def limit_config(tmp_path: Path, limit: int, extra: str = "") -> str:
    path = tmp_path / "continuity.toml"
    path.write_text(f"[limits]\nmax-file-bytes = {limit}\n{extra}", encoding="utf-8")
    return str(path)


def test_blob_past_the_limit_is_not_read(repo: GitRepo) -> None:
    big = repo.commit("big", {"big.txt": "x" * 5000})
    with Repository(repo.path, max_blob_bytes=1000) as r:
        [(commit, [change])] = list(r.walk(*r.resolve_range("HEAD~1..HEAD"), prefetch=bool))
        assert commit.sha == big and change.new_blob is not None
        assert r.read_blob(change.new_blob) is None
        assert r.oversized == {change.new_blob: 5000}
        assert r.read_blob(change.new_blob) is None  # not asked again
    with Repository(repo.path, max_blob_bytes=5000) as r:
        assert r.read_blob(change.new_blob) == b"x" * 5000


def test_oversized_versions_are_cc008_once(repo: GitRepo, run_json: RunCLI, tmp_path: Path) -> None:
    """A delta grows past the limit: CC008 once per version, at the commit that made it (not
    again where it is the old version); the content rules skip what they cannot read."""
    padding = ["p" * 300]
    grown = repo.commit(
        "grow", {A: delta(updated="2026-09-21T17:00:00+08:00", changes=padding)}, trailers=[A]
    )
    still = repo.commit(
        "still big",
        {A: delta(updated="2026-09-21T16:00:00+08:00", changes=[*padding, "x"])},
        trailers=[A],
    )
    repo.commit("shrink", {A: delta(updated="2026-09-21T18:00:00+08:00")}, trailers=[A])
    code, report = run_json(
        "verify", "--root", str(repo.path), "--range", "base..HEAD", "--config",
        limit_config(tmp_path, 300),
    )  # fmt: skip
    assert code == 1
    assert sorted((f["rule"], f["path"], f["commit"]) for f in report["findings"]) == sorted(
        [("CC008", A, grown), ("CC008", A, still)]
    )
    assert all(
        f["message"].startswith("expected at most 300 bytes, found 4")
        and f["message"].endswith("in the new version (not read)")
        for f in report["findings"]
    )
    # the same history with room for every version: the updated_at going back is seen
    code, report = run_json("verify", "--root", str(repo.path), "--range", "base..HEAD")
    assert [f["rule"] for f in report["findings"]] == ["DL205"]


def test_oversized_frozen_and_legacy_changes_still_fail(
    repo: GitRepo, run_json: RunCLI, tmp_path: Path
) -> None:
    frozen = repo.commit(
        "freeze", {A_FROZEN: (repo.path / A).read_bytes()}, delete=[A], trailers=[A]
    )
    edit = repo.commit("edit frozen", {A_FROZEN: "y" * 500, LEGACY: '{"a":1}\n' + "z" * 500})
    config = limit_config(tmp_path, 300)
    code, report = run_json(
        "verify", "--root", str(repo.path), "--range", "base..HEAD", "--config", config
    )
    assert code == 1
    found = sorted((f["rule"], f["path"], f["commit"], f["line"]) for f in report["findings"])
    assert found == sorted(
        [
            ("CC008", A_FROZEN, edit, None),
            ("CC008", LEGACY, edit, None),
            ("DL207", A_FROZEN, edit, None),
            ("DL209", LEGACY, edit, None),
        ]
    )
    assert frozen != edit
    append_only = limit_config(tmp_path, 300, '[deltas]\nlegacy = "append-only"\n')
    _, report = run_json(
        "verify", "--root", str(repo.path), "--range", "base..HEAD", "--config", append_only
    )
    assert sorted(f["rule"] for f in report["findings"]) == ["CC008", "CC008", "DL207"]


def test_many_blobs_in_flight(repo: GitRepo) -> None:
    """More claimed changes than requests may be in flight, and reads out of order."""
    files = {path_of(f"2026-09-21T16-20-00p08-00--n{i:03d}.json"): f"{i}\n" for i in range(260)}
    repo.commit("many", files)
    repo.commit("all again", {p: c + "more\n" for p, c in files.items()})
    with Repository(repo.path) as r:
        [(_, changes)] = list(r.walk(*r.resolve_range("HEAD~1..HEAD"), prefetch=bool))
        assert len(changes) == 260
        for change in reversed(changes):
            assert change.old_blob is not None and change.new_blob is not None
            expected = files[change.path].encode()
            assert r.read_blob(change.new_blob) == expected + b"more\n"
            assert r.read_blob(change.old_blob) == expected
