"""The helper commands read and write as safely as the checker reads: nothing outside the
repository that holds the path (through a symlinked directory or a symlinked file), no FIFO
that blocks, no device read without end, nothing past ``limits.max-file-bytes``; each refusal
is exit 2 naming the path. The default configuration and baseline leading outside the
repository are refused too; files named with ``--config`` and ``--baseline`` are read where
they lead (docs/decisions.md, "Files named on the command line").

A FIFO is opened under a deadline (SIGALRM), a device in a child process with a timeout and a
memory cap, so that a regression fails (a hang, an endless read) instead of stopping the
suite."""

from __future__ import annotations

import ast
import contextlib
import hashlib
import json
import os
import resource
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from continuity_checks.cli import main
from tests.conftest import REPO, Symlink, write_tree
from tests.helpers.git import GitRepo, isolate_git

pytestmark = pytest.mark.skipif(os.name == "nt", reason="symlinks and FIFOs: POSIX")

SECRET = '{"secret": "outside"}\n'
SECRET_SHA = hashlib.sha256(SECRET.encode()).hexdigest()
STATE = json.dumps(
    {
        "task_id": "t",
        "known": [],
        "constraints": [],
        "decisions": [],
        "evidence": [],
        "failed_hypotheses": [],
        "do_not_repeat": [],
        "open_acceptance": [],
        "next_action": "n",
    }
)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository with ``linked`` (a directory symlink) and ``secret.json`` (a file symlink)
    leading to ``../outside``, and two small JSON files; the current directory."""
    isolate_git(monkeypatch, tmp_path / "home")
    outside = tmp_path / "outside"
    write_tree(outside, {"capture.json": SECRET, "secret.json": SECRET})
    top = GitRepo(tmp_path / "repo").path
    write_tree(
        top,
        {
            "base.json": '{"a": 1}\n',
            "cur.json": '{"a": 2}\n',
            "state.json": STATE,
            "linked": Symlink(str(outside)),
            "c/capture.json": Symlink(str(outside / "capture.json")),
        },
    )
    monkeypatch.chdir(top)
    return top


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


OUTSIDE_ROOT = "leading outside it"
LINKED_DIR = "through a symlinked directory that leads outside it"
READ = "--capture-sha256", SECRET_SHA, "--select", "/secret"

# (the command, what the one-line refusal on stderr says): each printed or hashed the outside
# file before (exit 0, or exit 1/2 after reading it)
OUTSIDE = [
    (("capture", "read", "--capture-file", "linked/capture.json", *READ), LINKED_DIR),
    (("capture", "read", "--capture-file", "c/capture.json", *READ), OUTSIDE_ROOT),
    (("capture", "diff", "base.json", "linked/secret.json"), LINKED_DIR),
    (("capture", "diff", "c/capture.json", "cur.json"), OUTSIDE_ROOT),
    (("capture", "apply", "base.json", "linked/secret.json"), LINKED_DIR),
    (("capture", "manifest", "c"), OUTSIDE_ROOT),
    (("state", "hash", "linked/secret.json"), LINKED_DIR),
    (("state", "project", "c/capture.json"), OUTSIDE_ROOT),
]


@pytest.mark.parametrize(
    ("args", "reason"), OUTSIDE, ids=lambda a: " ".join(a[:3]) if isinstance(a, tuple) else ""
)
def test_nothing_outside_the_root_is_read(
    repo: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...], reason: str
) -> None:
    code, out, err = run(capsys, *args)
    assert (code, out) == (2, "")
    assert reason in err and err.count("\n") == 1, err
    assert 'outside"' not in err and not (repo / "c" / "manifest.json").exists()


@pytest.mark.parametrize(
    "args",
    [
        ("capture", "manifest", "linked"),
        ("capture", "diff", "base.json", "cur.json", "-o", "linked/d.json"),
        ("capture", "apply", "base.json", "d.json", "-o", "linked/x.json"),
    ],
    ids=lambda a: a[1],
)
def test_nothing_is_written_through_a_directory_symlink_leading_outside(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...]
) -> None:
    assert run(capsys, "capture", "diff", "base.json", "cur.json", "-o", "d.json")[0] == 0
    code, out, err = run(capsys, *args)
    assert (code, out) == (2, "")
    assert "linked leads outside the root" in err, err
    assert sorted(p.name for p in (tmp_path / "outside").iterdir()) == [
        "capture.json",
        "secret.json",
    ]


def test_a_file_past_the_size_limit_is_refused(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / ".continuity.toml").write_text("[limits]\nmax-file-bytes = 64\n")
    (repo / "big.json").write_text(json.dumps({"a": "x" * 100}))
    for args in (("capture", "diff", "base.json", "big.json"), ("state", "hash", "big.json")):
        code, out, err = run(capsys, *args)
        assert (code, out) == (2, "")
        assert "big.json: expected at most 64 bytes, found 109" in err, err


def test_what_the_helpers_write_still_passes(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "state", "hash", "state.json")
    assert code == 0 and len(out.strip()) == 64
    assert run(capsys, "capture", "diff", "base.json", "cur.json", "-o", "d.json")[0] == 0
    code, out, _ = run(capsys, "capture", "apply", "base.json", "d.json")
    assert (code, json.loads(out)) == (0, {"a": 2})


# --- the files a run trusts ---------------------------------------------------------------

BASELINE_ALL = "baseline"


BAD_DELTA = (
    ".deltalayer/changes/2026-09-21T00-01-00p08-00--codex.json",
    '{"started_at":"2026-09-21T00:01:00+08:00","updated_at":"2026-09-21T00:01:00+08:00",'
    '"changes":[]}\n',
)


def _baseline_hiding_everything(repo: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A baseline (written outside the repository) that lists the one error of ``repo``: a
    delta without its source (DL102)."""
    write_tree(repo, dict([BAD_DELTA]))
    code, _, _ = run(capsys, "check", "--all")
    assert code == 1
    hidden = repo.parent / "outside" / "hidden.json"
    assert run(capsys, "baseline", "check", "--output", str(hidden))[0] == 0
    return hidden


def test_a_default_baseline_leading_outside_is_refused(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hidden = _baseline_hiding_everything(repo, capsys)
    (repo / ".continuity-baseline.json").symlink_to(hidden)
    GitRepo(repo).commit("everything")
    for command in ("check", "verify"):
        args = ("--all",) if command == "check" else ("--range", "HEAD")
        code, out, err = run(capsys, command, *args)
        assert code == 2, (command, out, err)
        assert ".continuity-baseline.json" in err and OUTSIDE_ROOT in err


def test_a_baseline_named_on_the_command_line_is_read_where_it_leads(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hidden = _baseline_hiding_everything(repo, capsys)
    (repo / "named.json").symlink_to(hidden)
    assert run(capsys, "check", "--all", "--baseline", "named.json")[0] == 0


CONFIG_OFF = '[rules]\nDL102 = "off"\n'


@pytest.mark.parametrize("name", [".continuity.toml", "pyproject.toml"])
def test_a_default_configuration_leading_outside_is_refused(
    repo: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    write_tree(repo, dict([BAD_DELTA]))
    table = CONFIG_OFF if name == ".continuity.toml" else "[tool.continuity.rules]\nDL102='off'\n"
    (repo.parent / "outside" / "shared.toml").write_text(table)
    (repo / name).symlink_to(repo.parent / "outside" / "shared.toml")
    code, out, err = run(capsys, "check", "--all")
    assert code == 2, (out, err)
    assert name in err and OUTSIDE_ROOT in err


def test_a_configuration_named_on_the_command_line_is_read_where_it_leads(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_tree(repo, dict([BAD_DELTA]))
    assert run(capsys, "check", "--all")[0] == 1
    (repo.parent / "outside" / "shared.toml").write_text(CONFIG_OFF)
    assert run(capsys, "check", "--all", "--config", "../outside/shared.toml")[0] == 0


# --- FIFOs and devices ---------------------------------------------------------------------

TIMEOUT = 30  # seconds, far above a refusal's time: only a hang reaches it
MEMORY = 1 << 30  # an endless read of a device fails on this cap instead of filling memory


class Hang(BaseException):
    """The command was still running at the deadline (a BaseException: no handler takes it)."""


@contextlib.contextmanager
def deadline(seconds: int) -> Iterator[None]:
    """Interrupt a call blocked in the kernel (opening a FIFO) after ``seconds``."""

    def expire(signum: int, frame: object) -> None:
        raise Hang(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


FIFOS = [
    pytest.param(("state", "hash", "fifo.json"), "fifo.json: expected a regular file, found a FIFO", id="state hash"),
    pytest.param(("state", "project", "fifo.json"), "fifo.json: expected a regular file, found a FIFO", id="state project"),
    pytest.param(("capture", "diff", "fifo.json", "cur.json"), "fifo.json: expected a regular file", id="capture diff"),
    pytest.param(("capture", "apply", "base.json", "fifo.json"), "fifo.json: expected a regular file", id="capture apply"),
    pytest.param(("capture", "manifest", "fifo"), "capture.json: expected a regular file, found a FIFO", id="capture manifest"),
    pytest.param(("capture", "diff", "base.json", "cur.json", "-o", "fifo.json"), "found a FIFO", id="capture diff -o"),
    pytest.param(("capture", "read", "--capture-file", "fifo.json", *READ), "found a FIFO", id="capture read"),
    pytest.param(("delta", "rebuild-context"), "PROJECT.md: expected a regular file, found a FIFO", id="delta rebuild-context"),
]  # fmt: skip


@pytest.mark.parametrize(("args", "reason"), FIFOS)
def test_a_fifo_is_refused_at_once(
    repo: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...], reason: str
) -> None:
    os.mkfifo(repo / "fifo.json")
    (repo / "fifo").mkdir()
    os.mkfifo(repo / "fifo" / "capture.json")
    os.mkfifo(repo / "PROJECT.md")
    with deadline(TIMEOUT):
        code, out, err = run(capsys, *args)
    assert (code, out) == (2, ""), err
    assert reason in err and err.count("\n") == 1, err


def test_a_fifo_legacy_history_is_a_warning_not_a_hang(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / ".deltalayer").mkdir()
    os.mkfifo(repo / ".deltalayer" / "changes.jsonl")
    with deadline(TIMEOUT):
        code, out, err = run(capsys, "delta", "recent")
    assert (code, err) == (0, "")
    assert json.loads(out)["warnings"][0]["error"].endswith(
        "changes.jsonl: expected a regular file, found a FIFO; nothing was read from or "
        "written to it"
    )


def _capped() -> None:  # pragma: no cover - runs in the child
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


DEVICES = [
    pytest.param(("state", "hash", "zero.json"), "zero.json: expected a file inside the checked root", id="a symlink to /dev/zero"),
    pytest.param(("state", "hash", "/dev/zero"), "/dev/zero: expected a regular file, found a character device", id="/dev/zero"),
    pytest.param(("capture", "diff", "/dev/urandom", "cur.json"), "found a character device", id="/dev/urandom"),
]  # fmt: skip


@pytest.mark.parametrize(("args", "reason"), DEVICES)
def test_a_device_is_refused_unread(repo: Path, args: tuple[str, ...], reason: str) -> None:
    """In a child process with a memory cap: a regression reads the device without end."""
    (repo / "zero.json").symlink_to("/dev/zero")
    result = subprocess.run(
        [sys.executable, "-m", "continuity_checks", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        preexec_fn=_capped,
        check=False,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
    )
    assert (result.returncode, result.stdout) == (2, ""), result.stderr
    assert reason in result.stderr and "Traceback" not in result.stderr, result.stderr


# --- the one door --------------------------------------------------------------------------

SOURCE = REPO / "src" / "continuity_checks"
#: Every module of the helper commands: the tools, and their command lines.
HELPER_MODULES = (
    *sorted(p.relative_to(SOURCE).as_posix() for p in (SOURCE / "tools").rglob("*.py")),
    "cli/capture.py",
    "cli/state.py",
    "cli/provenance.py",
    "cli/delta.py",
)
PATH_METHODS = {"read_bytes", "read_text", "write_bytes", "write_text", "open"}


def direct_opens(path: Path) -> list[str]:
    """Each ``open()``, ``os.open`` and ``<path>.read_*/write_*/open`` call in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id == "open":
            found.append(f"{node.lineno}: open()")
        elif isinstance(func, ast.Attribute) and func.attr in PATH_METHODS:
            owner = ast.unparse(func.value)
            found.append(f"{node.lineno}: {owner}.{func.attr}()")
    return found


@pytest.mark.parametrize("module", HELPER_MODULES)
def test_helpers_open_files_only_through_confined_files(module: str) -> None:
    assert direct_opens(SOURCE / module) == [], (
        f"{module} opens files itself: read and write through core.confined_files"
    )


def test_the_door_test_sees_a_direct_open(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("import os\nopen('a')\nos.open('b', 0)\np.read_bytes()\nx.write_text('')\n")
    assert direct_opens(sample) == [
        "2: open()",
        "3: os.open()",
        "4: p.read_bytes()",
        "5: x.write_text()",
    ]
