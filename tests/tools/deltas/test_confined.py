"""``continuity delta`` never writes outside the root, nor through a symlinked store: a
``.deltalayer/`` or ``changes/`` that is a symlink (wherever it leads), an ``AGENTS.md`` or
``.gitignore`` whose target is outside, or a ``.lock`` symlink, is a clear exit-2 error before
anything is written; nothing outside changes, nothing inside is lost."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from continuity_checks.tools.deltas import scaffold

pytestmark = pytest.mark.skipif(os.name == "nt", reason="symlinks need privileges on Windows")

T1 = "2026-09-21T00:01:00+08:00"
T2 = "2026-09-21T00:02:00+08:00"
NAME = "2026-09-21T00-01-00p08-00--codex.json"
DELTA = (
    b'{"started_at":"2026-09-21T00:01:00+08:00","updated_at":"2026-09-21T00:01:00+08:00",'
    b'"source":"codex","changes":["a"]}\n'
)
WRITES = (
    ("init",),
    ("start", "--source", "codex", "--started-at", T1),
    ("update", "--conversation", NAME, "--updated-at", T2, "--change", "b"),
    ("freeze", "--conversation", NAME),
)


def snapshot(*dirs: Path) -> dict[str, bytes | str]:
    """Every entry under ``dirs`` (symlinks as their target), to compare before and after."""
    seen: dict[str, bytes | str] = {}
    for top in dirs:
        for path in [top, *top.rglob("*")]:
            key = str(path)
            if path.is_symlink():
                seen[key] = "-> " + os.readlink(path)
            elif path.is_file():
                seen[key] = path.read_bytes()
            elif path.is_dir():
                seen[key] = "dir"
    return seen


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    path = tmp_path / "outside"
    path.mkdir()
    return path


def refused(result: Any, name: str) -> None:
    assert result.code == 2, result
    assert f"{name} leads outside the root" in result.err and "nothing was written" in result.err
    assert "Traceback" not in result.err


@pytest.mark.parametrize("args", WRITES, ids=lambda a: a[0])
def test_a_symlinked_deltalayer_outside_the_root_is_refused(
    root: Path, cli: Any, outside: Path, args: tuple[str, ...]
) -> None:
    (outside / "changes").mkdir()
    (outside / "changes" / NAME).write_bytes(DELTA)
    (root / ".deltalayer").symlink_to(outside)
    before = snapshot(root, outside)
    refused(cli(*args), ".deltalayer")
    assert snapshot(root, outside) == before


@pytest.mark.parametrize("args", WRITES, ids=lambda a: a[0])
def test_a_symlinked_changes_directory_outside_the_root_is_refused(
    root: Path, cli: Any, outside: Path, args: tuple[str, ...]
) -> None:
    (outside / NAME).write_bytes(DELTA)
    (root / ".deltalayer").mkdir()
    (root / ".deltalayer" / "changes").symlink_to(outside)
    before = snapshot(root, outside)
    refused(cli(*args), ".deltalayer/changes")
    assert snapshot(root, outside) == before


@pytest.mark.parametrize("args", WRITES, ids=lambda a: a[0])
@pytest.mark.parametrize("linked", [".deltalayer", ".deltalayer/changes"])
def test_a_symlinked_store_directory_inside_the_root_is_refused_too(
    root: Path, cli: Any, args: tuple[str, ...], linked: str
) -> None:
    # the store's files would live where no check of the deltas family looks (DL212)
    (root / "state" / "changes").mkdir(parents=True)
    (root / "state" / "changes" / NAME).write_bytes(DELTA)
    if linked == ".deltalayer":
        (root / ".deltalayer").symlink_to("state")
    else:
        (root / ".deltalayer").mkdir()
        (root / ".deltalayer" / "changes").symlink_to("../state/changes")
    before = snapshot(root)
    result = cli(*args)
    assert result.code == 2 and "Traceback" not in result.err
    assert result.err.count("\n") == 1
    assert f"{linked} is a symlink" in result.err and "nothing was written" in result.err
    assert snapshot(root) == before
    # reading through it is not writing: show still answers
    assert cli("show", "--conversation", NAME).code == 0


@pytest.mark.parametrize("command", ["init", "start"])
def test_init_never_appends_to_an_agents_md_outside_the_root(
    root: Path, cli: Any, outside: Path, command: str
) -> None:
    (outside / "AGENTS.md").write_bytes(b"# Shared rules\n")
    (root / "AGENTS.md").symlink_to(outside / "AGENTS.md")
    before = snapshot(root, outside)
    args = ("--source", "codex", "--started-at", T1) if command == "start" else ()
    refused(cli(command, *args), "AGENTS.md")
    assert snapshot(root, outside) == before  # no PROJECT.md, no changes.jsonl, no lock either


def test_an_agents_md_outside_that_needs_nothing_does_not_stop_the_helper(
    root: Path, cli: Any, outside: Path
) -> None:
    text = b"# Shared rules\n\n" + scaffold.AGENTS_SECTION.encode() + b"\n"
    (outside / "AGENTS.md").write_bytes(text)
    (root / "AGENTS.md").symlink_to(outside / "AGENTS.md")
    assert cli("start", "--source", "codex", "--started-at", T1).code == 0
    assert (outside / "AGENTS.md").read_bytes() == text


def test_init_never_appends_to_a_gitignore_outside_the_root(
    root: Path, cli: Any, outside: Path
) -> None:
    (outside / "ignore").write_bytes(b"*.pyc\n")
    (root / ".gitignore").symlink_to(outside / "ignore")
    before = snapshot(root, outside)
    refused(cli("init"), ".gitignore")
    assert snapshot(root, outside) == before


@pytest.mark.parametrize("args", WRITES[1:], ids=lambda a: a[0])
def test_a_lock_symlink_to_a_file_outside_is_refused_and_the_file_kept(
    root: Path, cli: Any, outside: Path, args: tuple[str, ...]
) -> None:
    (root / ".deltalayer" / "changes").mkdir(parents=True)
    (root / ".deltalayer" / "changes" / NAME).write_bytes(DELTA)
    (outside / "victim").write_bytes(b"precious\n")
    (root / ".deltalayer" / ".lock").symlink_to(outside / "victim")
    before = snapshot(root, outside)
    result = cli(*args)
    assert result.code == 2 and "is a symlink" in result.err and "Traceback" not in result.err
    assert snapshot(root, outside) == before
