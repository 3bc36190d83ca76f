"""What a person at a terminal sees: progress on standard error and colour, only on a terminal
(a pseudo-terminal here), never in CI, under pre-commit, with another format, with -q or in a
pipe; -q prints only errors."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import select
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from continuity_checks.cli import main
from continuity_checks.cli.terminal import ProgressLine, show_progress, use_color
from tests.conftest import REPO, write_tree
from tests.helpers.git import GitRepo, delta, isolate_git, path_of

ERASE = "\r\033[K"
RED = "\033[31m"
BAD = {
    ".deltalayer/changes/bad-name.json": delta(),  # DL110, an error
    "AGENTS.md": "no section\n",  # DL130, a warning
}
TERMINAL_ENV = ("CI", "PRE_COMMIT", "NO_COLOR", "FORCE_COLOR", "TERM")


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def run_on_pty(
    args: list[str], cwd: Path, *, stdout_on_pty: bool = False, columns: int = 0, **env: str
) -> tuple[int, str, str]:
    """Run ``continuity`` with standard error (and, if asked, standard output) on a
    pseudo-terminal; the other stream is a pipe. Returns the exit code, stdout and stderr."""
    environ = {k: v for k, v in os.environ.items() if k not in TERMINAL_ENV}
    environ |= {"PYTHONPATH": str(REPO / "src"), "TERM": "xterm", **env}
    master, slave = pty.openpty()
    if columns:
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    process = subprocess.Popen(
        [sys.executable, "-m", "continuity_checks", *args],
        cwd=cwd,
        env=environ,
        stdin=subprocess.DEVNULL,
        stdout=slave if stdout_on_pty else subprocess.PIPE,
        stderr=slave,
    )
    os.close(slave)
    # both streams read as they come, so that neither can fill up and stall the other
    chunks: list[bytes] = []
    out_chunks: list[bytes] = []
    sources = {master: chunks}
    if process.stdout is not None:
        sources[process.stdout.fileno()] = out_chunks
    while sources:
        ready, _, _ = select.select(list(sources), [], [], 60)
        if not ready:
            break
        for fd in ready:
            try:
                data = os.read(fd, 1 << 16)
            except OSError:  # EIO: every writer closed the terminal
                data = b""
            if data:
                sources[fd].append(data)
            else:
                del sources[fd]
    out = b"".join(out_chunks)
    code = process.wait(timeout=60)
    os.close(master)
    if process.stdout is not None:
        process.stdout.close()
    # the terminal turns \n into \r\n: undo it, keeping the lone \r of the progress line
    on_pty = b"".join(chunks).decode("utf-8").replace("\r\n", "\n")
    if stdout_on_pty:
        return code, on_pty, ""
    return code, out.decode("utf-8"), on_pty


@pytest.fixture
def history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    isolate_git(monkeypatch, tmp_path / "home")
    repo = GitRepo(tmp_path / "repo")
    for n in range(4):
        repo.commit(f"c{n}", {path_of(f"2026-09-2{n}T16-20-00p08-00--agent.json"): delta(
            f"2026-09-2{n}T16:20:00+08:00")})  # fmt: skip
    return repo


def test_verify_shows_progress_on_a_terminal_and_erases_it(history: GitRepo) -> None:
    args = ["verify", "--range", "HEAD"]
    code, out, err = run_on_pty(args, history.path)
    assert (code, out) == (0, "4 commits checked: no problems\n")
    assert "verify: " in err and "/4 commits" in err
    assert err.endswith(ERASE)  # nothing left on the line the report follows


def test_the_progress_line_fits_the_terminal(history: GitRepo) -> None:
    code, _, err = run_on_pty(["verify", "--range", "HEAD"], history.path, columns=12)
    drawn = [text for text in err.split(ERASE) if text]
    assert code == 0 and drawn and all(len(text) <= 11 for text in drawn), drawn


def test_check_all_shows_files_done(tmp_path: Path) -> None:
    write_tree(tmp_path, BAD)
    code, out, err = run_on_pty(["check", "--all"], tmp_path)
    assert code == 1 and "DL110" in out
    assert "check: " in err and " files" in err and err.endswith(ERASE)


@pytest.mark.parametrize(
    ("extra", "env"),
    [
        ([], {"CI": "true"}),
        ([], {"PRE_COMMIT": "1"}),
        (["--format", "json"], {}),
    ],  # -q and TERM=dumb: test_show_progress_decision
)
def test_no_progress_in_ci_under_pre_commit_for_programs_or_quiet(
    history: GitRepo, extra: list[str], env: dict[str, str]
) -> None:
    code, out, err = run_on_pty(["verify", "--range", "HEAD", *extra], history.path, **env)
    assert code == 0 and out  # the report, on stdout
    assert err == ""


def test_no_progress_when_stderr_is_not_a_terminal(
    history: GitRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in TERMINAL_ENV:
        monkeypatch.delenv(name, raising=False)
    assert main(["verify", "--range", "HEAD", "--root", str(history.path)]) == 0
    assert capsys.readouterr().err == ""


def test_show_progress_decision() -> None:
    tty, pipe = Terminal(), io.StringIO()
    assert show_progress(tty, "text", False, {})
    assert not show_progress(pipe, "text", False, {})
    assert not show_progress(tty, "sarif", False, {})
    assert not show_progress(tty, "text", True, {})
    assert not show_progress(tty, "text", False, {"CI": "1"})
    assert not show_progress(tty, "text", False, {"PRE_COMMIT": "1"})
    assert show_progress(tty, "text", False, {"CI": ""})  # set but empty: not CI
    assert not show_progress(tty, "text", False, {"TERM": "dumb"})


def test_progress_line_counts_rate_and_time_left(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = iter([100.0, 100.0, 102.0, 102.05, 104.0])
    monkeypatch.setattr("continuity_checks.cli.terminal.time.monotonic", lambda: next(clock))
    stream = Terminal()
    line = ProgressLine(stream, "verify", "commit")  # started at 100
    line(0, 1000)  # drawn at once
    line(500, None)  # two seconds later: 250/s, 2 s left; the total is remembered
    line(501, None)  # 50 ms later: not redrawn
    line(1000, None)
    line.close()
    assert stream.getvalue().split(ERASE) == [
        "",
        "verify: 0/1,000 commits",
        "verify: 500/1,000 commits, 250/s, 2s left",
        "verify: 1,000/1,000 commits, 250/s",
        "",
    ]


# --- colour -------------------------------------------------------------------------------------


def test_colour_on_a_terminal_and_not_with_no_color(tmp_path: Path) -> None:
    write_tree(tmp_path, BAD)
    code, out, _ = run_on_pty(["check", "--all"], tmp_path, stdout_on_pty=True)
    assert code == 1 and RED in out
    for args, env in ((["--no-color"], {}), ([], {"NO_COLOR": "1"})):
        code, out, _ = run_on_pty(["check", "--all", *args], tmp_path, stdout_on_pty=True, **env)
        assert code == 1 and "DL110" in out and "\033[" not in out.replace(ERASE, "")


def test_force_color_in_a_pipe(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_tree(tmp_path, BAD)
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert main(["check", "--all", "--root", str(tmp_path)]) == 1
    assert RED in capsys.readouterr().out
    assert main(["check", "--all", "--root", str(tmp_path), "--no-color"]) == 1
    assert "\033[" not in capsys.readouterr().out
    assert main(["check", "--all", "--root", str(tmp_path), "--format", "json"]) == 1
    assert "\033[" not in capsys.readouterr().out  # colour is for the text format only


def test_use_color_decision() -> None:
    tty, pipe = Terminal(), io.StringIO()
    assert use_color(tty, environ={})
    assert not use_color(pipe, environ={})
    assert not use_color(tty, environ={"NO_COLOR": "1"})
    assert use_color(tty, environ={"NO_COLOR": ""})  # empty is unset (no-color.org)
    assert use_color(pipe, environ={"FORCE_COLOR": "1"})
    assert use_color(pipe, environ={"FORCE_COLOR": "0"})  # any value but empty (force-color.org)
    assert not use_color(pipe, environ={"FORCE_COLOR": ""})
    assert use_color(tty, environ={"FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert not use_color(tty, True, environ={"FORCE_COLOR": "1"})  # --no-color wins
    assert not use_color(tty, environ={"TERM": "dumb"})


# --- quiet --------------------------------------------------------------------------------------


def test_quiet_prints_only_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_tree(tmp_path, {**BAD, "notes.txt": "x\n"})
    root = str(tmp_path)
    assert main(["check", "--all", "--root", root, str(tmp_path / "notes.txt")]) == 1
    full = capsys.readouterr().out
    assert "DL130" in full and "not checked" in full and "checked:" in full
    assert main(["check", "--all", "--root", root, str(tmp_path / "notes.txt"), "-q"]) == 1
    quiet = capsys.readouterr()
    assert quiet.out.splitlines()[0].startswith(".deltalayer/changes/bad-name.json: DL110 ")
    assert "DL130" not in quiet.out and "not checked" not in quiet.out
    assert "checked:" not in quiet.out and quiet.err == ""
    # a clean run prints nothing at all; the document formats stay whole
    write_tree(tmp_path / "clean", {"AGENTS.md": "x\n"})
    assert main(["check", "--all", "--root", str(tmp_path / "clean"), "-q"]) == 0
    assert capsys.readouterr().out == ""
    assert main(["check", "--all", "--root", root, "-q", "--format", "json"]) == 1
    assert '"DL130"' in capsys.readouterr().out


def test_baseline_verify_shows_progress_too(history: GitRepo) -> None:
    code, out, err = run_on_pty(["baseline", "verify"], history.path)
    assert code == 0 and "verify section: 0 known findings in 4 commits" in out
    assert "baseline verify: " in err and "/4 commits" in err and err.endswith(ERASE)
    code, out, err = run_on_pty(["baseline", "verify"], history.path, CI="1")
    assert code == 0 and err == ""


def test_a_shard_counts_its_own_commits(history: GitRepo) -> None:
    code, out, err = run_on_pty(["verify", "--range", "HEAD", "--shard", "1/2"], history.path)
    assert code == 0 and "2 commits checked" in out
    assert "/2 commits" in err and "/4 commits" not in err
