"""``continuity delta`` agrees with the checker and with the prototype it replaces.

Each test pins one difference found in a side-by-side run against the DeltaLayer
prototype or against ``continuity verify``. The prototype's code is not part of this repository's
corpus, so the expected texts come from specs/deltalayer.md and the Python behaviour it names
(``read_text`` with universal newlines, ``json.loads``, ``fromisoformat``). Where we keep our own
behaviour on purpose, the test pins it and checks that docs/delta-helper.md says so.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from continuity_checks.core import atomic
from continuity_checks.tools.deltas import DeltaStore, scaffold
from tests.conftest import REPO, RunCLI, write_tree

T1 = "2026-09-21T00:01:00+08:00"
T2 = "2026-09-21T00:02:00+08:00"
T3 = "2026-09-21T00:03:00+08:00"
DOCS = REPO / "docs" / "delta-helper.md"
POSIX_ONLY = pytest.mark.skipif(os.name == "nt", reason="POSIX file names and symlinks")


def changes(root: Path) -> Path:
    return root / ".deltalayer" / "changes"


def docs() -> str:
    return " ".join(DOCS.read_text(encoding="utf-8").split())


# --------------------------------------------------------------- the helper agrees with the checker


def test_update_refuses_an_updated_at_that_goes_back(root: Path, cli: Any) -> None:
    path = cli("start", "--source", "codex", "--started-at", T1).json["_path"]
    assert cli("update", "--conversation", path, "--updated-at", T3, "--change", "a").json
    before = (root / path).read_bytes()
    message = cli("update", "--conversation", path, "--updated-at", T2, "--change", "b").message
    assert message == (
        f"updated_at cannot go back: expected {T3} or later, found {T2} "
        "(continuity verify reports it as DL205)"
    )
    assert (root / path).read_bytes() == before
    # the same instant written differently, and a later time, are fine
    same = "2026-09-20T16:03:00Z"
    assert cli("update", "--conversation", path, "--updated-at", same).json["updated_at"] == (
        "2026-09-20T16:03:00+00:00"
    )
    assert cli("update", "--conversation", path, "--updated-at", "2026-09-22").message.startswith(
        "updated_at cannot go back"  # a date-only time sorts below every full timestamp
    )


def test_update_going_back_is_what_verify_calls_dl205(root: Path) -> None:
    store = DeltaStore(root)
    path = store.start("codex", started_at=T1)["_path"]
    store.update(path, updated_at=T3)
    with pytest.raises(Exception, match="DL205"):
        store.amend(path, lambda old: old, updated_at=T2)


def test_init_creates_a_gitignore_with_the_lock(root: Path, cli: Any) -> None:
    out = cli("init").out.splitlines()
    assert str(root.resolve() / ".gitignore") in out
    assert (root / ".gitignore").read_bytes() == b".deltalayer/.lock\n"
    assert cli("init").out == "already initialized\n"
    assert (root / ".gitignore").read_bytes() == b".deltalayer/.lock\n"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (b"node_modules/\n*.pyc\n", b"node_modules/\n*.pyc\n.deltalayer/.lock\n"),
        (b"node_modules/", b"node_modules/\n.deltalayer/.lock\n"),  # no final newline
        (b"a\r\nb\r\n", b"a\r\nb\r\n.deltalayer/.lock\r\n"),  # CRLF kept
        (b"", b".deltalayer/.lock\n"),
    ],
)
def test_init_appends_the_lock_to_a_gitignore(root: Path, cli: Any, old: bytes, new: bytes) -> None:
    (root / ".gitignore").write_bytes(old)
    out = cli("init").out.splitlines()
    assert f"added .deltalayer/.lock to {root.resolve() / '.gitignore'}" in out
    assert (root / ".gitignore").read_bytes() == new
    cli("init")
    cli("start", "--source", "codex", "--started-at", T1)
    assert (root / ".gitignore").read_bytes() == new  # idempotent, start too


@pytest.mark.parametrize(
    "line",
    [b".deltalayer/.lock", b"/.deltalayer/.lock", b".deltalayer/.lock  ", b".deltalayer/.lock\r"],
)
def test_init_leaves_a_gitignore_that_has_the_lock(root: Path, cli: Any, line: bytes) -> None:
    old = b"# mine\n" + line + b"\nbuild/\n"
    (root / ".gitignore").write_bytes(old)
    cli("init")
    assert (root / ".gitignore").read_bytes() == old


def test_init_writes_the_gitignore_atomically(
    root: Path, cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    (root / ".gitignore").write_bytes(b"x\n")
    written: list[str] = []
    real = atomic.atomic_write

    def spy(path: Any, data: bytes, **kwargs: Any) -> None:
        written.append(Path(path).name)
        real(path, data, **kwargs)

    monkeypatch.setattr(atomic, "atomic_write", spy)
    cli("init")
    assert ".gitignore" in written


@POSIX_ONLY
def test_init_appends_through_a_symlinked_gitignore(root: Path, cli: Any) -> None:
    real = root / "shared-ignore"  # inside the root (outside: tests/tools/deltas/test_confined.py)
    real.write_bytes(b"x\n")
    (root / ".gitignore").symlink_to(real)
    cli("init")
    assert (root / ".gitignore").is_symlink()
    assert real.read_bytes() == b"x\n.deltalayer/.lock\n"


def test_lock_is_ignored_by_git_after_init(root: Path, cli: Any) -> None:
    import subprocess

    subprocess.run(["git", "init", "-q", str(root)], check=True)
    cli("start", "--source", "codex", "--started-at", T1)
    status = subprocess.run(
        ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=all"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert ".deltalayer/.lock" not in status
    assert ".deltalayer/changes/" in status


# ------------------------------------------------------------- the helper agrees with the prototype


@POSIX_ONLY
@pytest.mark.parametrize("length", [238, 243, 248])
def test_long_source_names_are_written(root: Path, cli: Any, length: int) -> None:
    stem = "2026-09-21T00-01-00p08-00--"
    source = "s" * (length - len(stem) - len(".json"))
    item = cli("start", "--source", source, "--started-at", T1, "--change", "a").json
    name = Path(item["_path"]).name
    assert len(name.encode()) == length
    assert cli("update", "--conversation", item["_path"], "--updated-at", T2).json
    assert sorted(p.name for p in changes(root).iterdir()) == [name]


@POSIX_ONLY
def test_a_name_too_long_is_reported_with_the_final_name_not_the_temp(root: Path, cli: Any) -> None:
    stem = "2026-09-21T00-01-00p08-00--"
    source = "s" * (256 - len(stem) - len(".json"))
    message = cli("start", "--source", source, "--started-at", T1).message
    name = stem + source + ".json"
    assert message.startswith("[Errno 36] File name too long: ")
    assert message.endswith(f"{name}'")
    assert ".tmp" not in message
    assert list(changes(root).iterdir()) == []


def test_temp_names_are_short(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    real = os.open

    def spy(path: Any, *args: Any, **kwargs: Any) -> int:
        seen.append(Path(path).name)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", spy)
    target = tmp_path / ("x" * 200 + ".json")
    atomic.atomic_write(target, b"{}\n")
    temps = [name for name in seen if name.endswith(".tmp")]
    assert temps and all(len(name) <= 24 and name.startswith(".") for name in temps)


def test_errors_never_name_the_temp_file(
    root: Path, cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = cli("start", "--source", "codex", "--started-at", T1).json["_path"]
    real_replace = os.replace

    def replace(src: Any, dst: Any) -> None:
        if os.fspath(src).endswith(".tmp"):
            raise OSError(5, "Input/output error", os.fspath(src), None, os.fspath(dst))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    message = cli("update", "--conversation", path, "--updated-at", T2).message
    assert ".tmp" not in message
    assert message == f"[Errno 5] Input/output error: '{(root / path).resolve()}'"


@pytest.mark.parametrize("blank", ["\u3000", "\u00a0\u2003", "\u2028"])
def test_recent_warns_about_a_line_of_non_ascii_whitespace(
    root: Path, cli: Any, blank: str
) -> None:
    cli("init")
    good = '{"time":"2026-09-21","source":"legacy","changes":["good"]}\n'
    (root / ".deltalayer" / "changes.jsonl").write_text(
        good + blank + "\n" + " \t\r\n" + good, encoding="utf-8"
    )
    page = cli("recent").json
    assert [e["_line"] for e in page["events"]] == [4, 1]
    assert page["warnings"] == [
        {"line": 2, "error": "Expecting value: line 1 column 1 (char 0)", "skipped": True}
    ]


def test_recent_warns_about_a_directory_named_json(root: Path, cli: Any) -> None:
    cli("start", "--source", "codex", "--started-at", T1)
    (changes(root) / "x.json").mkdir()
    page = cli("recent").json
    assert len(page["events"]) == 1
    path = changes(root).resolve() / "x.json"
    assert page["warnings"] == [
        {
            "path": ".deltalayer/changes/x.json",
            "error": f"[Errno 21] Is a directory: '{path}'",
            "skipped": True,
        }
    ]


@POSIX_ONLY
def test_recent_warns_about_a_dangling_json_symlink(root: Path, cli: Any) -> None:
    cli("start", "--source", "codex", "--started-at", T1)
    (changes(root) / "gone.json").symlink_to("nowhere.json")
    page = cli("recent").json
    assert len(page["events"]) == 1
    path = changes(root).resolve() / "gone.json"
    assert page["warnings"] == [
        {
            "path": ".deltalayer/changes/gone.json",
            "error": f"[Errno 2] No such file or directory: '{path}'",
            "skipped": True,
        }
    ]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_recent_warns_about_a_fifo_instead_of_blocking(root: Path, cli: Any) -> None:
    cli("start", "--source", "codex", "--started-at", T1)
    os.mkfifo(changes(root) / "pipe.json")
    page = cli("recent").json  # the prototype would block here, reading the pipe
    assert len(page["events"]) == 1
    assert page["warnings"] == [
        {"path": ".deltalayer/changes/pipe.json", "error": "not a regular file", "skipped": True}
    ]
    assert "not a regular file" in docs()


@pytest.mark.parametrize(
    ("data", "error"),
    [
        # the prototype reads a delta as text: CRLF and CR become one newline before json.loads
        (b'{"a": 1,\r\n "b" 2}', "Expecting ':' delimiter: line 2 column 6 (char 14)"),
        (b'{"a": 1,\r "b" 2}', "Expecting ':' delimiter: line 2 column 6 (char 14)"),
        (b'{\r\n\r\n"a" 1}', "Expecting ':' delimiter: line 3 column 5 (char 7)"),
    ],
)
def test_error_positions_in_a_file_with_cr_match_the_prototype(
    root: Path, cli: Any, data: bytes, error: str
) -> None:
    cli("init")
    (changes(root) / "bad.json").write_bytes(data)
    assert cli("recent").json["warnings"] == [
        {"path": ".deltalayer/changes/bad.json", "error": error, "skipped": True}
    ]
    assert cli("show", "--conversation", "bad.json").message == error


@pytest.mark.parametrize(
    ("cursor", "message"),
    [
        ("not a time#line=0", "cursor line must be positive"),
        ("not a time#line=-3", "cursor line must be positive"),
        ("not a time#line=x", "cursor line must be an integer"),
        ("#line=0", "cursor line must be positive"),
        ("2026-09-21T00:00:00#line=0", "cursor line must be positive"),
        ("not a time#line=1", "time must be a valid ISO 8601 date or timestamp"),
    ],
)
def test_a_malformed_line_cursor_is_judged_by_its_line_first(
    root: Path, cli: Any, cursor: str, message: str
) -> None:
    cli("init")
    assert cli("older", "--before", cursor).message == message


def test_option_values_beginning_with_a_dash_are_kept_and_documented(root: Path, cli: Any) -> None:
    item = cli("start", "--source", "codex", "--started-at", T1, "--change", "-x").json
    assert item["changes"] == ["-x"]
    item = cli(
        "update", "--conversation", item["_path"], "--updated-at", T2, "--change", "-5% p99 latency"
    ).json
    assert item["changes"] == ["-5% p99 latency"]
    assert "--change -x" in docs()


@pytest.mark.parametrize(
    "args",
    [
        ("start", "--source", "codex", "--change", "--started-at", T1),
        ("start", "--source", "--change"),
        ("update", "--conversation", "--change"),
        ("update", "--conversation", "x.json", "--updated-at", "--change", "a"),
    ],
)
def test_an_option_name_as_a_value_is_a_usage_error(
    root: Path, cli: Any, args: tuple[str, ...]
) -> None:
    result = cli(*args)
    assert result.code == 2 and result.out == ""
    assert "is an option name" in result.err
    assert not (root / ".deltalayer").exists()


def test_project_template_placeholders_are_ours_and_documented(root: Path, cli: Any) -> None:
    cli("init")
    text = (root / "PROJECT.md").read_text(encoding="utf-8")
    sections = re.findall(r"^## (.+)\n\n<!-- (.+) -->$", text, re.MULTILINE)
    assert [s for s, _ in sections] == [
        "Goal",
        "Current Architecture",
        "Current Stage",
        "Recently Completed",
        "Known Constraints",
        "Open Areas",
    ]
    assert text == scaffold.PROJECT_TEMPLATE
    assert "placeholder comments" in docs()


# ------------------------------------------------------------ DL103 is the helper's own parser


@pytest.mark.parametrize(
    ("time", "normal"),
    [
        ("2026-09-21T00:01:00 +08:00", "2026-09-21T00:01:00+08:00"),
        ("2026-09-21 00:01:00 +0800", "2026-09-21T00:01:00+08:00"),
        ("2026-09-21T00:00:00+00:60", "2026-09-21T00:00:00+01:00"),
    ],
)
def test_times_the_prototype_accepts_are_accepted_by_helper_and_checker(
    root: Path, cli: Any, run_json: RunCLI, time: str, normal: str
) -> None:
    item = cli("start", "--source", "codex", "--started-at", time).json
    assert item["started_at"] == normal
    legacy = json.dumps({"time": time, "source": "legacy", "changes": ["a"]}) + "\n"
    write_tree(root, {".deltalayer/changes.jsonl": legacy})
    page = cli("recent").json
    assert page["warnings"] == []
    assert page["events"][-1]["_cursor"] == f"{normal}#line=1"
    _, report = run_json("check", "--root", str(root), str(root / ".deltalayer/changes.jsonl"))
    assert [f["rule"] for f in report["findings"] if f["rule"] == "DL103"] == []


def test_offset_minutes_past_59_are_normalised_in_the_file_name(root: Path, cli: Any) -> None:
    item = cli("start", "--source", "codex", "--started-at", "2026-09-21T00:00:00+00:60").json
    assert item["_path"] == ".deltalayer/changes/2026-09-21T00-00-00p01-00--codex.json"
