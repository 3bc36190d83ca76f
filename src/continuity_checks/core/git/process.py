"""git's processes: the environment every one of them runs in, starting and ending them, and
reading what they write. :class:`Git` runs the commands of one repository.

Every process runs with replace refs and grafts turned off, so that no ref or file in the
repository can show a run other commits than the ones it asks for, and with ``--git-dir``
given, so that a ``GIT_DIR`` a git hook exported cannot redirect it.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from continuity_checks.core.git.errors import GIT_HINT, INSTALL_HINT, GitError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

GIT = "git"
_PIPE_BYTES = 1 << 20  # the default /proc/sys/fs/pipe-max-size

#: Variables that point git at a repository, or at files of one, that a git hook may have
#: exported for another purpose: the repository is the one that contains the root, as found.
_REPOSITORY_ENV = frozenset(
    {
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_COMMON_DIR",
        "GIT_INDEX_FILE",
        "GIT_PREFIX",
        "GIT_SHALLOW_FILE",
        "GIT_GRAFT_FILE",
    }
)


def environment() -> dict[str, str]:
    """The environment of every git process of a run."""
    env = {k: v for k, v in os.environ.items() if k not in _REPOSITORY_ENV}
    # Grafts (.git/info/grafts) rewrite parents as replace refs do; a graft file that cannot be
    # opened means none, and unlike an empty one it draws no deprecation notice.
    env["GIT_GRAFT_FILE"] = ""
    return env


class Git:
    """The git commands of one repository: ``git --git-dir=<git_dir> <args>``, run at ``top``
    (the top of the work tree, or the git directory), in :func:`environment`. A subclass sets
    ``git_dir`` and ``top`` once it has found the repository."""

    git_dir: Path
    #: Where git's processes run: the top of the work tree, or the git directory.
    top: Path

    def __init__(self) -> None:
        self._env = environment()
        # the index of the commit being made, when git names it (``git commit -a`` and ``git
        # commit <paths>`` hand their hooks a temporary one): what ``staged`` compares
        self._index = os.environ.get("GIT_INDEX_FILE") or None

    def _popen(
        self, args: list[str], *, index: bool = False, **kwargs: Any
    ) -> subprocess.Popen[bytes]:
        """``git <args>`` in this repository; with ``index``, on the index of the commit being
        made (``GIT_INDEX_FILE`` as git handed it to the hook: a relative one is relative to
        the top of the work tree, where git runs), else on none that the environment names."""
        env = self._env
        if index and self._index is not None:
            env = {**env, "GIT_INDEX_FILE": self._index}
        return popen([f"--git-dir={self.git_dir}", *args], env, self.top, **kwargs)

    def _output(
        self,
        args: list[str],
        *,
        check: bool = True,
        stdin: bytes | None = None,
        index: bool = False,
    ) -> bytes:
        """The output of one short git command (given ``stdin``; ``index``: see :meth:`_popen`);
        with ``check``, its first line of complaint as a GitError when it fails."""
        process = self._popen(
            args,
            index=index,
            stdin=subprocess.PIPE if stdin is not None else None,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        out, err = process.communicate(stdin)
        if check and process.returncode != 0:
            message = first_line(err.decode("utf-8", "replace"))
            raise GitError(message or f"git {args[0]} failed", GIT_HINT)
        return out


def popen(
    args: list[str], env: dict[str, str], cwd: Path, **kwargs: Any
) -> subprocess.Popen[bytes]:
    """Start ``git <args>``, with replace refs off (git passes that on to any git it starts)."""
    try:
        return subprocess.Popen([GIT, "--no-replace-objects", *args], env=env, cwd=cwd, **kwargs)
    except OSError as exc:
        raise GitError(f"cannot run git: {exc}", INSTALL_HINT) from None


def widen(stream: IO[bytes] | None) -> None:
    """Let git write up to _PIPE_BYTES ahead of us (Linux; elsewhere the pipe keeps its size):
    with the default 64 KiB, cat-file stops after a few blobs until they are read, and each
    later answer costs a round of wake-ups."""
    set_size = getattr(fcntl, "F_SETPIPE_SZ", None) if fcntl is not None else None
    if stream is None or set_size is None:
        return
    with contextlib.suppress(OSError):
        fcntl.fcntl(stream.fileno(), set_size, _PIPE_BYTES)


def stop(process: subprocess.Popen[Any]) -> None:
    """Close our ends of its pipes (git then ends on its own), wait, and kill it if it does not."""
    for stream in (process.stdin, process.stdout, process.stderr):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def log_failed(stderr: IO[bytes] | None) -> GitError:
    """The error of a ``git log`` that exited non-zero: the first line it wrote to stderr (a
    file, read from its start, or a pipe)."""
    if stderr is None:
        return GitError("git log failed", GIT_HINT)
    if stderr.seekable():
        stderr.seek(0)
    message = first_line(stderr.read().decode("utf-8", "replace"))
    return GitError(f"git log failed: {message}", GIT_HINT)


def first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def chunks(stream: IO[bytes], chunk_size: int = 1 << 16) -> Iterator[bytes]:
    """The output of a process as it arrives."""
    fd = stream.fileno()
    while chunk := os.read(fd, chunk_size):
        yield chunk
