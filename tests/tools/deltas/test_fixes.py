"""The deliberate differences of ``continuity delta`` from the DeltaLayer prototype.

One group of tests per fix (docs/delta-helper.md):

1. atomic writes (temp file ``.<random>.tmp`` in the same directory, fsync, os.replace,
   fsync of the directory) under one advisory lock per store, ``.deltalayer/.lock``;
2. concurrent writers lose nothing: 16 processes x 25 ``start`` + ``update`` on one store, and
   many processes updating one file (see ``test_concurrent_updates_of_one_file_*`` for what
   "never lose a write" means there);
3. ``freeze`` cannot race: hard link + unlink never replaces an existing ``X.frozen.json``;
4. an empty ``--started-at``/``--updated-at`` or an empty/blank ``--change`` is an error;
5. ``start`` validates everything before ``init`` touches a file;
6. ``init`` knows the v0.2.1 and v0.2 markers and writes a v0.2.1 section;
7. ``_path`` always uses ``/``.
"""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from continuity_checks.checks.deltas import records
from continuity_checks.core import atomic
from continuity_checks.tools.deltas import DeltaError, DeltaStore, scaffold
from tests.conftest import CORPUS

T1 = "2026-09-21T00:01:00+08:00"
T2 = "2026-09-21T00:02:00+08:00"
NAME = "2026-09-21T00-01-00p08-00--codex.json"
FROZEN = "2026-09-21T00-01-00p08-00--codex.frozen.json"
EMPTY_TIME = "time must be a non-empty ISO 8601 date or timestamp"
EMPTY_CHANGE = "change must be a non-empty string"
TEMP = re.compile(r"^\.[0-9a-f]{12}\.tmp$")  # short, whatever the target's name
POSIX_ONLY = pytest.mark.skipif(os.name == "nt", reason="POSIX process and fsync semantics")


def changes_dir(root: Path) -> Path:
    return root / ".deltalayer" / "changes"


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def spawn(script: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", script, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )


# workers wait for a "go" file so that they really run at the same time
WORKER_PRELUDE = r"""
import json, os, sys, time
from continuity_checks.tools.deltas import DeltaStore, DeltaError
root, worker, count, sync = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
store = DeltaStore(root)
open(os.path.join(sync, f"ready-{worker}"), "w").close()
while not os.path.exists(os.path.join(sync, "go")):
    time.sleep(0.002)
"""


def run_together(script: str, workers: int, count: int, root: Path, sync: Path) -> list[str]:
    """Run ``workers`` copies of ``script`` released at once; return their stdout."""
    sync.mkdir()
    procs = [spawn(script, str(root), str(w), str(count), str(sync)) for w in range(workers)]
    deadline = time.monotonic() + 60
    while len(list(sync.glob("ready-*"))) < workers and time.monotonic() < deadline:
        time.sleep(0.01)
    (sync / "go").touch()
    outputs = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert (proc.returncode, err) == (0, ""), err
        outputs.append(out)
    return outputs


# ------------------------------------------------------------------- 1. atomic writes and locking


def test_update_writes_through_a_synced_temp_file_and_replace(
    root: Path, cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = cli("start", "--source", "codex", "--started-at", T1).json["_path"]
    events: list[tuple[str, ...]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        kind = "dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file"
        events.append(("fsync", kind))
        real_fsync(fd)

    def replace(src: Any, dst: Any) -> None:
        events.append(("replace", os.fspath(src), os.fspath(dst)))
        real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    assert cli("update", "--conversation", path, "--updated-at", T2, "--change", "x").json
    assert [e[:2] for e in events] == [
        ("fsync", "file"),
        ("replace", events[1][1]),
        ("fsync", "dir"),
    ]
    temp, target = Path(events[1][1]), Path(events[1][2])
    assert target == (root / path).resolve()
    assert temp.parent == target.parent  # same directory, so os.replace is atomic
    assert TEMP.match(temp.name)
    assert not temp.name.endswith(".json")
    assert sorted(p.name for p in changes_dir(root).iterdir()) == [NAME]


def test_start_creates_through_a_synced_temp_file_and_a_hard_link(
    root: Path, cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli("init")
    events: list[tuple[str, ...]] = []
    real_fsync, real_link = os.fsync, os.link

    def fsync(fd: int) -> None:
        events.append(("fsync", "dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file"))
        real_fsync(fd)

    def link(src: Any, dst: Any) -> None:
        events.append(("link", Path(src).name, Path(dst).name))
        real_link(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "link", link)
    assert cli("start", "--source", "codex", "--started-at", T1).json
    assert [e[0] for e in events] == ["fsync", "link", "fsync"]
    assert events[0] == ("fsync", "file") and events[2] == ("fsync", "dir")
    assert TEMP.match(events[1][1]) and events[1][2] == NAME
    assert sorted(p.name for p in changes_dir(root).iterdir()) == [NAME]
    assert stat.S_IMODE(os.stat(changes_dir(root) / NAME).st_mode) & 0o077 == 0  # 0600


def test_failed_replace_keeps_old_bytes_and_leaves_no_temp(
    root: Path, cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = cli("start", "--source", "codex", "--started-at", T1, "--change", "a").json["_path"]
    before = (root / path).read_bytes()

    def replace(src: Any, dst: Any) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "replace", replace)
    result = cli("update", "--conversation", path, "--change", "b")
    assert result.message == "[Errno 5] Input/output error"
    assert (root / path).read_bytes() == before
    assert sorted(p.name for p in changes_dir(root).iterdir()) == [NAME]


def test_failed_create_leaves_nothing(
    root: Path, cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli("init")

    def fsync(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", fsync)
    result = cli("start", "--source", "codex", "--started-at", T1)
    assert result.message == "[Errno 28] No space left on device"
    assert list(changes_dir(root).iterdir()) == []


def test_lock_file_is_ignored_by_readers_and_times_out_clearly(root: Path, cli: Any) -> None:
    path = cli("start", "--source", "codex", "--started-at", T1).json["_path"]
    lock = root / ".deltalayer" / ".lock"
    assert lock.is_file()
    assert not lock.name.endswith((".json", ".tmp"))
    assert sorted(p.name for p in (root / ".deltalayer").iterdir()) == [
        ".lock", "changes", "changes.jsonl",
    ]  # fmt: skip
    assert cli("recent").json["warnings"] == []
    store = DeltaStore(root, lock_timeout=0.2)
    with store.lock():
        began = time.monotonic()
        with pytest.raises(atomic.LockTimeout) as caught:
            DeltaStore(root, lock_timeout=0.2).update(path, ["x"])
        assert time.monotonic() - began < 5
        assert isinstance(caught.value, OSError)  # the CLI reports it as "deltalayer: ..."
        assert str(caught.value).startswith(f"could not take the lock {lock}")
        assert cli("show", "--conversation", path).json["changes"] == []  # readers never wait
    assert store.update(path, ["x"])["changes"] == ["x"]


@POSIX_ONLY
def test_killed_writer_never_leaves_a_corrupt_delta(root: Path, tmp_path: Path) -> None:
    store = DeltaStore(root)
    path = store.start("codex", ["v0"], started_at=T1)["_path"]
    script = r"""
import sys
from continuity_checks.tools.deltas import DeltaStore
store = DeltaStore(sys.argv[1])
print("ready", flush=True)
n = 0
while True:
    n += 1
    store.update(sys.argv[2], [f"v{n}", "x" * (n % 5000)])
"""
    for _ in range(3):
        proc = spawn(script, str(root), path)
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        time.sleep(0.3)
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
        value = json.loads((root / path).read_bytes().decode("utf-8"))
        records.validate_delta(value)
        assert value["changes"][0].startswith("v")
        # a temp file may survive a kill; readers ignore it and the next write works
        assert store.recent(5)["warnings"] == []
        assert store.update(path, ["after"])["changes"] == ["after"]


# ------------------------------------------------------------------------- 2. concurrent writers

START_AND_UPDATE = (
    WORKER_PRELUDE
    + r"""
for j in range(count):
    item = store.start("codex", [f"w{worker}-{j} started"], started_at="2026-09-21T00:00:00+08:00")
    store.update(item["_path"], [f"w{worker}-{j} updated"], updated_at="2026-09-21T00:05:00+08:00")
"""
)


def test_16_processes_x_25_start_and_update_lose_nothing(
    root: Path, tmp_path: Path, cli: Any
) -> None:
    workers, count = 16, 25
    run_together(START_AND_UPDATE, workers, count, root, tmp_path / "sync")
    files = sorted(changes_dir(root).iterdir())
    base = "2026-09-21T00-00-00p08-00--codex"
    # same time and source everywhere: every start collided, none overwrote another
    expected_names = {f"{base}.json"} | {f"{base}--{n}.json" for n in range(1, workers * count)}
    assert {p.name for p in files} == expected_names  # 400 files, no *.tmp, nothing else
    seen = set()
    for path in files:
        value = json.loads(path.read_bytes().decode("utf-8"))  # not corrupt
        records.validate_delta(value)
        assert value["updated_at"] == "2026-09-21T00:05:00+08:00"  # its update was applied
        [change] = value["changes"]
        assert change.endswith(" updated")
        seen.add(change)
    assert seen == {f"w{w}-{j} updated" for w in range(workers) for j in range(count)}
    assert not list(root.rglob("*.tmp"))
    page = cli("recent", "--limit", "1000").json
    assert len(page["events"]) == workers * count and page["warnings"] == []


AMEND = (
    WORKER_PRELUDE
    + r"""
ref = ".deltalayer/changes/2026-09-21T00-01-00p08-00--codex.json"
for j in range(count):
    store.amend(ref, lambda old: [*old, f"w{worker}-{j}"])
"""
)

REPLACE = (
    WORKER_PRELUDE
    + r"""
ref = ".deltalayer/changes/2026-09-21T00-01-00p08-00--codex.json"
for j in range(count):
    store.update(ref, [f"w{worker}-{j}"], updated_at="2026-09-21T01:00:00+08:00")
"""
)


def test_concurrent_updates_of_one_file_serialise_read_modify_write(
    root: Path, tmp_path: Path
) -> None:
    """The lock serialises writers: 8 x 20 read-modify-writes keep all 160 changes."""
    store = DeltaStore(root)
    path = store.start("codex", [], started_at=T1)["_path"]
    run_together(AMEND, 8, 20, root, tmp_path / "sync")
    changes = store.show(path)["changes"]
    assert sorted(changes) == sorted(f"w{w}-{j}" for w in range(8) for j in range(20))
    assert not list(root.rglob("*.tmp"))


def test_concurrent_updates_of_one_file_never_expose_a_torn_version(
    root: Path, tmp_path: Path
) -> None:
    """``update`` replaces the list, so the last writer wins; "never lose a write" means
    every state a reader can see, and the final state, is exactly one complete written version."""
    store = DeltaStore(root)
    path = store.start("codex", ["initial"], started_at=T1)["_path"]
    written = {f"w{w}-{j}" for w in range(8) for j in range(20)}
    seen: list[list[str]] = []
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            seen.append(json.loads((root / path).read_bytes().decode("utf-8"))["changes"])

    reader = threading.Thread(target=read)
    reader.start()
    try:
        run_together(REPLACE, 8, 20, root, tmp_path / "sync")
    finally:
        stop.set()
        reader.join()
    assert seen and all(len(v) == 1 and v[0] in written | {"initial"} for v in seen)
    final = store.show(path)
    assert len(final["changes"]) == 1 and final["changes"][0] in written
    assert final["updated_at"] == "2026-09-21T01:00:00+08:00"
    assert not list(root.rglob("*.tmp"))


# -------------------------------------------------------------------------- 3. freeze cannot race


def test_freeze_never_overwrites_an_existing_frozen_file(root: Path, cli: Any) -> None:
    path = cli("start", "--source", "codex", "--started-at", T1, "--change", "a").json["_path"]
    other = b'{"started_at":"2026-09-20","updated_at":"2026-09-20","source":"x","changes":[]}\n'
    (changes_dir(root) / FROZEN).write_bytes(other)
    before = tree(root)
    assert cli("freeze", "--conversation", path).message == (
        f"frozen conversation delta already exists: {FROZEN}"
    )
    assert tree(root) == before


@POSIX_ONLY
def test_freeze_never_replaces_a_dangling_symlink_target(root: Path, cli: Any) -> None:
    path = cli("start", "--source", "codex", "--started-at", T1).json["_path"]
    (changes_dir(root) / FROZEN).symlink_to("nowhere")
    assert cli("freeze", "--conversation", path).message == (
        f"frozen conversation delta already exists: {FROZEN}"
    )
    assert (changes_dir(root) / FROZEN).is_symlink() and (root / path).is_file()


def test_freeze_has_no_check_then_rename_window(
    root: Path, cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Even if the target appears after every existence check, it is not replaced."""
    path = cli("start", "--source", "codex", "--started-at", T1, "--change", "a").json["_path"]
    other = b'{"started_at":"2026-09-20","updated_at":"2026-09-20","source":"x","changes":[]}\n'
    (changes_dir(root) / FROZEN).write_bytes(other)
    before = tree(root)
    real_lexists, real_exists = os.path.lexists, os.path.exists

    def hide(check: Any) -> Any:
        return lambda p: False if Path(p).name == FROZEN else check(p)

    monkeypatch.setattr(os.path, "lexists", hide(real_lexists))
    monkeypatch.setattr(os.path, "exists", hide(real_exists))
    assert cli("freeze", "--conversation", path).message == (
        f"frozen conversation delta already exists: {FROZEN}"
    )
    assert tree(root) == before


def test_rename_no_overwrite(tmp_path: Path) -> None:
    src, dst = tmp_path / "a.json", tmp_path / "a.frozen.json"
    src.write_bytes(b"src")
    dst.write_bytes(b"dst")
    with pytest.raises(FileExistsError):
        atomic.rename_no_overwrite(src, dst)
    assert (src.read_bytes(), dst.read_bytes()) == (b"src", b"dst")
    dst.unlink()
    atomic.rename_no_overwrite(src, dst)
    assert not src.exists() and dst.read_bytes() == b"src"


FREEZE = (
    WORKER_PRELUDE
    + r"""
try:
    print(json.dumps(store.freeze(".deltalayer/changes/2026-09-21T00-01-00p08-00--codex.json")))
except DeltaError as exc:
    print(json.dumps({"error": str(exc)}))
"""
)


def test_concurrent_freezes_freeze_once(root: Path, tmp_path: Path) -> None:
    store = DeltaStore(root)
    store.start("codex", ["a"], started_at=T1)
    data = (changes_dir(root) / NAME).read_bytes()
    outputs = [json.loads(out) for out in run_together(FREEZE, 6, 1, root, tmp_path / "sync")]
    frozen = [out for out in outputs if "error" not in out]
    assert len(frozen) == 1 and frozen[0]["_frozen"] is True
    assert {out["error"] for out in outputs if "error" in out} <= {
        f"conversation delta does not exist: .deltalayer/changes/{NAME}"
    }
    assert sorted(p.name for p in changes_dir(root).iterdir()) == [FROZEN]
    assert (changes_dir(root) / FROZEN).read_bytes() == data


def test_a_freeze_cut_short_after_the_link_is_recognised_and_finished(root: Path, cli: Any) -> None:
    path = cli("start", "--source", "codex", "--started-at", T1, "--change", "a").json["_path"]
    os.link(root / path, changes_dir(root) / FROZEN)  # crash between link and unlink
    page = cli("recent").json
    assert [e["_cursor"] for e in page["events"]] == [f"conversation:{FROZEN}"]  # listed once
    assert cli("update", "--conversation", path, "--change", "b").message == (
        "frozen conversation delta cannot be updated"
    )
    frozen = cli("freeze", "--conversation", path).json
    assert frozen["_path"] == f".deltalayer/changes/{FROZEN}" and frozen["_frozen"] is True
    assert sorted(p.name for p in changes_dir(root).iterdir()) == [FROZEN]


def test_freeze_of_a_frozen_ref_acts_like_show(root: Path, cli: Any) -> None:
    path = cli("start", "--source", "codex", "--started-at", T1).json["_path"]
    frozen = cli("freeze", "--conversation", path).json
    again = cli("freeze", "--conversation", frozen["_path"]).json
    assert again == frozen == cli("show", "--conversation", FROZEN).json


# --------------------------------------------------------------------- 4. empty times and changes


def test_empty_started_at_is_an_error_not_now(root: Path, cli: Any) -> None:
    for value in ("", "   "):
        assert cli("start", "--source", "codex", "--started-at", value).message == EMPTY_TIME
    assert not (root / ".deltalayer").exists()


def test_empty_updated_at_is_an_error_not_now(root: Path, cli: Any) -> None:
    path = cli("start", "--source", "codex", "--started-at", T1).json["_path"]
    before = tree(root)
    for value in ("", " \t"):
        result = cli("update", "--conversation", path, "--updated-at", value, "--change", "x")
        assert result.message == EMPTY_TIME
    assert tree(root) == before
    # absent still means now
    assert cli("update", "--conversation", path).json["updated_at"] != T1


@pytest.mark.parametrize("change", ["", " ", "\t\n"])
def test_empty_change_is_an_error(root: Path, cli: Any, change: str) -> None:
    start = cli(
        "start", "--source", "codex", "--started-at", T1, "--change", "ok", "--change", change
    )
    assert start.message == EMPTY_CHANGE
    assert not (root / ".deltalayer").exists()
    path = cli("start", "--source", "codex", "--started-at", T1).json["_path"]
    before = tree(root)
    assert cli("update", "--conversation", path, "--change", change).message == EMPTY_CHANGE
    assert tree(root) == before


def test_empty_change_is_an_error_in_the_api(root: Path) -> None:
    store = DeltaStore(root)
    with pytest.raises(DeltaError, match=r"^change must be a non-empty string$"):
        store.start("codex", [""], started_at=T1)
    with pytest.raises(DeltaError, match=r"^changes must be an array of strings$"):
        store.start("codex", "not a list", started_at=T1)


# ------------------------------------------------------------------ 5. start validates before init


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--source", ""], "source must be a non-empty string"),
        (["--source", "  "], "source must be a non-empty string"),
        (["--source", "codex", "--started-at", "yesterday"], "time must be a valid ISO 8601 date or timestamp"),
        (["--source", "codex", "--started-at", "2026-09-21T00:00:00"], "timestamp must include a timezone offset"),
        (["--source", "codex", "--started-at", ""], EMPTY_TIME),
        (["--source", "codex", "--change", ""], EMPTY_CHANGE),
    ],
)  # fmt: skip
def test_start_validates_before_init_touches_anything(
    root: Path, cli: Any, args: list[str], message: str
) -> None:
    assert cli("start", *args).message == message
    assert list(root.iterdir()) == []
    agents = b"# Rules\r\nno marker here"
    (root / "AGENTS.md").write_bytes(agents)
    assert cli("start", *args).message == message
    assert tree(root) == {"AGENTS.md": agents}


# -------------------------------------------------------------------------------- 6. init markers


@pytest.mark.parametrize("marker", scaffold.MARKERS)
def test_init_recognises_v021_and_v02_markers(root: Path, cli: Any, marker: str) -> None:
    agents = f"# Rules\n\n{marker}\n## Project Continuity\n".encode()
    (root / "AGENTS.md").write_bytes(agents)
    report = cli("init")
    assert report.code == 0 and "AGENTS.md" not in report.out
    assert (root / "AGENTS.md").read_bytes() == agents
    assert cli("start", "--source", "codex", "--started-at", T1).json
    assert (root / "AGENTS.md").read_bytes() == agents


def test_init_leaves_the_real_v021_agents_md_alone(root: Path, cli: Any) -> None:
    real = CORPUS / "deltalayer/AGENTS.md"
    assert real.is_file(), f"the DeltaLayer corpus is missing: {real}"
    (root / "AGENTS.md").write_bytes(real.read_bytes())
    cli("init")
    assert (root / "AGENTS.md").read_bytes() == real.read_bytes()


def test_init_appends_one_v021_section_to_other_agents_md(root: Path, cli: Any) -> None:
    old = b"# Rules\r\n<!-- deltalayer-v0 -->\r\nold v0 rules"  # CRLF, no final newline
    (root / "AGENTS.md").write_bytes(old)
    assert cli("init").out.splitlines()[-2:] == [
        f"appended continuity section to {(root / 'AGENTS.md').resolve()}",
        str((root / ".gitignore").resolve()),
    ]
    section = scaffold.AGENTS_SECTION.encode()
    assert (root / "AGENTS.md").read_bytes() == old + b"\n\n" + section + b"\n"
    assert cli("init").out == "already initialized\n"
    text = (root / "AGENTS.md").read_text(encoding="utf-8")
    assert text.count("## Project Continuity") == 1
    assert text.count(scaffold.MARKER) == 1


def test_new_agents_md_carries_v021_wording(root: Path, cli: Any) -> None:
    cli("init")
    text = (root / "AGENTS.md").read_text(encoding="utf-8")
    assert text == scaffold.AGENTS_SECTION + "\n"
    assert text.startswith("<!-- deltalayer-conversation-v0.2.1 -->\n## Project Continuity\n")
    assert "Freezing is optional" in text
    assert "changes: []" in text and "PROJECT.md" in text and ".current" in text


@POSIX_ONLY
def test_init_appends_through_a_symlinked_agents_md(root: Path, cli: Any) -> None:
    (root / "CLAUDE.md").write_bytes(b"# Shared rules\n")
    (root / "AGENTS.md").symlink_to("CLAUDE.md")
    cli("init")
    assert (root / "AGENTS.md").is_symlink()
    assert scaffold.MARKER in (root / "CLAUDE.md").read_text(encoding="utf-8")


# ------------------------------------------------------------------------------ 7. "/" in _path


def test_path_uses_forward_slashes_everywhere(root: Path, cli: Any) -> None:
    started = cli("start", "--source", "codex", "--started-at", T1).json
    assert started["_path"] == f".deltalayer/changes/{NAME}"
    (changes_dir(root) / "sub").mkdir()
    (changes_dir(root) / "sub" / "n.json").write_bytes((changes_dir(root) / NAME).read_bytes())
    assert (
        cli("show", "--conversation", "sub/n.json").json["_path"]
        == ".deltalayer/changes/sub/n.json"
    )
    (changes_dir(root) / "bad.json").write_bytes(b"[]")
    (root / ".deltalayer" / "changes.jsonl").write_bytes(
        b'{"time":"2026-09-20","source":"l","changes":[]}\n'
    )
    page = cli("recent").json
    paths = [e["_path"] for e in page["events"]] + [w["path"] for w in page["warnings"]]
    assert paths == [
        f".deltalayer/changes/{NAME}", ".deltalayer/changes.jsonl", ".deltalayer/changes/bad.json",
    ]  # fmt: skip
    frozen = cli("freeze", "--conversation", started["_path"]).json
    assert frozen["_path"] == f".deltalayer/changes/{FROZEN}"
    assert all("\\" not in p for p in [*paths, frozen["_path"]])


# --------------------------------------------------------------------- safety around the fixes


def test_refs_outside_changes_are_refused(root: Path, cli: Any, tmp_path: Path) -> None:
    assert cli("start", "--source", "codex", "--started-at", T1).json
    outside = "conversation path must be inside .deltalayer/changes"
    (tmp_path / "x.json").write_bytes((changes_dir(root) / NAME).read_bytes())
    assert cli("show", "--conversation", "../x.json").message == outside
    assert cli("update", "--conversation", str(tmp_path / "x.json")).message == outside
    assert cli("show", "--conversation", "nope.json").message == (
        "conversation delta does not exist: nope.json"
    )
    if os.name != "nt":
        (changes_dir(root) / "link.json").symlink_to(tmp_path / "x.json")
        assert cli("freeze", "--conversation", "link.json").message == outside
        warnings = cli("recent").json["warnings"]
        assert warnings == [
            {"path": ".deltalayer/changes/link.json", "error": outside, "skipped": True}
        ]


def test_bad_bytes_are_messages_not_tracebacks(root: Path, cli: Any) -> None:
    cli("init")
    bad = {
        "bom.json": b'\xef\xbb\xbf{"started_at":"2026-09-21","updated_at":"2026-09-21","source":"x","changes":[]}',
        "deep.json": b"[" * 100000,
        "digits.json": b"1" * 5000,
        "latin1.json": b'{"source":"\xe9"}',
    }  # fmt: skip
    for name, data in bad.items():
        (changes_dir(root) / name).write_bytes(data)
    page = cli("recent").json
    assert [w["path"].rsplit("/", 1)[1] for w in page["warnings"]] == sorted(bad)
    assert (
        page["warnings"][0]["error"]
        == "Unexpected UTF-8 BOM (decode using utf-8-sig): line 1 column 1 (char 0)"
    )
    for name in bad:
        assert cli("show", "--conversation", name).message
    (root / "PROJECT.md").write_bytes(b"\xff")
    assert cli("rebuild-context").message.startswith("PROJECT.md is not valid UTF-8")


def test_update_refuses_to_write_a_number_beyond_a_double(root: Path, cli: Any) -> None:
    """The helper never writes what the checker rejects: 1e999 would come back as Infinity."""
    started = cli("start", "--source", "codex", "--started-at", T1).json
    path = root / started["_path"]
    original = path.read_bytes().replace(b'"changes"', b'"n":1e999,"changes"')
    path.write_bytes(original)
    result = cli("update", "--conversation", str(path), "--updated-at", T2, "--change", "b")
    assert result.code != 0
    assert "Infinity" in result.err or "beyond a double" in result.err
    assert path.read_bytes() == original  # nothing written


def test_temp_files_a_killed_writer_left_are_removed_under_the_lock(
    root: Path, cli: Any, run_json: Any
) -> None:
    started = cli("start", "--source", "codex", "--started-at", T1).json
    changes = root / ".deltalayer" / "changes"
    left = [changes / ".0123456789ab.tmp", changes / f".{Path(started['_path']).name}.x1y2.tmp"]
    for path in left:
        path.write_bytes(b'{"started_at":')  # torn, as a kill leaves it
    keep = changes / "notes.tmp.txt"  # not a temp file of a writer: left alone
    keep.write_text("mine")
    assert run_json("check", "--all", "--root", str(root))[0] == 1  # DL112 until then
    cli("update", "--conversation", started["_path"], "--updated-at", T2, "--change", "b")
    assert not any(path.exists() for path in left)
    assert keep.read_text() == "mine"
    code, report = run_json("check", "--all", "--root", str(root))
    assert (code, report["findings"]) == (0, [])


def test_a_symlinked_lock_is_refused_and_nothing_is_touched(root: Path, cli: Any) -> None:
    cli("init")
    legacy = root / ".deltalayer" / "changes.jsonl"
    legacy.write_text('{"time":"2026-09-21","source":"h","changes":["a"]}\n')
    lock = root / ".deltalayer" / ".lock"
    if lock.exists() or lock.is_symlink():
        lock.unlink()
    lock.symlink_to("changes.jsonl")
    result = cli("start", "--source", "codex", "--started-at", T1)
    assert result.code == 2 and "symlink" in result.err
    assert legacy.read_text() == '{"time":"2026-09-21","source":"h","changes":["a"]}\n'
    assert list((root / ".deltalayer" / "changes").glob("*.json")) == []
