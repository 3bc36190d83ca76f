"""Git access for history mode (``continuity verify``).

GitPython finds the repository (from any directory inside the work tree), detects a shallow
clone and resolves revisions. The work itself goes through two raw git processes:

- **one** ``git log -z --raw --no-abbrev --no-renames --reverse --topo-order`` for the whole
  range: commit id, parents, the trailer values and subject from ``--format``, and per commit the
  raw diff lines, which carry both blob ids, so no second command per commit is needed;
- **one** persistent ``git cat-file --batch`` that returns blob contents on demand.

Merges are diffed with ``--diff-merges=dense-combined``: only paths whose result differs from
every parent are listed, i.e. what the merge itself changed beyond its parents; the old version of
such a path is the first parent's. A merge that only combines its parents lists nothing.

Both processes are started with :mod:`subprocess` using the git executable GitPython resolved,
because they need a stdin pipe and a stderr that can never fill up and block (GitPython's
``execute`` always pipes stderr), and GitPython's own persistent ``cat-file`` assumes 40-digit
object ids, which SHA-256 repositories do not have.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import tempfile
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from types import TracebackType
from typing import IO, Any, NamedTuple

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

from continuity_checks.core.family import Commit

#: Trailer keys whose values every :class:`Commit` carries (git matches keys case-insensitively).
TRAILER_KEYS = ("Continuity-Delta",)

FETCH_HINT = (
    "fetch the whole history (actions/checkout with fetch-depth: 0, or git fetch --unshallow)"
)
UNKNOWN_REF_HINT = (
    "fetch the missing revision (git fetch origin <branch>; in GitHub Actions use "
    "actions/checkout with fetch-depth: 0), or check its spelling"
)
GIT_HINT = "run `git status` there to see what git objects to"
RANGE_HINT = "give --range BASE..HEAD (e.g. origin/main..HEAD) or a single revision such as HEAD"

_HEX = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
_ZERO = re.compile(r"0{40}(?:0{24})?")
_NO_FILE = "000000"
_GITLINK = "160000"
_TRAILER_SEPARATOR = "\x1f"
_CACHE_BYTES = 32 * 1024 * 1024
_CACHE_ITEM_BYTES = 4 * 1024 * 1024
#: Requests sent to cat-file and not yet answered, at most: 200 x 65 bytes < 16 KiB, the smallest
#: pipe buffer, so a write of requests never blocks while cat-file waits for its answers to be read.
_IN_FLIGHT = 200
_BATCH_BLOBS = _IN_FLIGHT // 2  # one batch is read while the next one's blobs are in flight
_BATCH_COMMITS = 128
_DISCARD_CHUNK = 1 << 20
_PIPE_BYTES = 1 << 20  # the default /proc/sys/fs/pipe-max-size

#: What a range excludes: one base commit, several (new-branch push: every remote-tracking
#: tip), or nothing (every commit reachable from HEAD).
Base = str | tuple[str, ...] | None


class GitError(Exception):
    """A git context that makes verification impossible: exit 2 with ``message`` and ``hint``."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class RawChange(NamedTuple):
    """One path a commit changed: ``A`` added, ``M`` modified, ``D`` deleted (blob ids or None).
    A tuple: one is made for every changed path of every commit of the range."""

    path: str
    status: str
    old_blob: str | None
    new_blob: str | None


def _format() -> str:
    trailers = "".join(
        f"%x00%(trailers:key={key},valueonly,unfold,separator=%x1f)" for key in TRAILER_KEYS
    )
    return f"tformat:%H%x00%P{trailers}%x00%s"


#: Tokens before the raw diff entries of each commit: id, parents, one per trailer key, subject.
_HEADER_TOKENS = 3 + len(TRAILER_KEYS)

LOG_ARGS = (
    "log",
    "-z",
    "--raw",
    "--no-abbrev",
    "--no-renames",
    "--diff-merges=dense-combined",
    "--root",
    "--reverse",
    "--topo-order",
    "--no-color",
    "--no-show-signature",
    "--encoding=UTF-8",
    f"--format={_format()}",
    "--stdin",
)


def parse_range(spec: str) -> tuple[str | None, str]:
    """Split a range into its base and head expressions.

    ``BASE..HEAD`` → (BASE, HEAD); a single revision → (None, it): every reachable commit. An
    empty HEAD means ``HEAD``; an empty or all-zeros BASE (a new branch in a pre-push hook) is
    returned as ``""`` and means "not on any remote-tracking branch".
    """
    text = spec.strip()
    if not text or "..." in text or text.count("..") > 1:
        raise GitError(f"malformed range {spec!r}", RANGE_HINT)
    if ".." not in text:
        base: str | None = None
        head = text
    else:
        base, _, head = text.partition("..")
        base = "" if _ZERO.fullmatch(base) else base
        head = head or "HEAD"
    for rev in (base, head):
        if rev and (rev.startswith("-") or any(c.isspace() or c in "\0" for c in rev)):
            raise GitError(f"malformed range {spec!r}: {rev!r} is not a revision", RANGE_HINT)
    return base, head


#: What git's own discovery honours and GitPython's ``Repo(path)`` does not: left out of the probe.
_DISCOVERY_ENV = ("GIT_DIR", "GIT_WORK_TREE")
_VERIFY = ("--verify", "--quiet")
_PROBE = ("--absolute-git-dir", "--is-shallow-repository", *_VERIFY)


class EarlyLog:
    """A ``git log`` of the range started before GitPython was imported: see :func:`start_early`."""

    def __init__(
        self,
        executable: str,
        git_dir: str,
        revs: list[str],
        process: subprocess.Popen[bytes],
        stderr: IO[bytes],
    ) -> None:
        self.executable = executable
        self.git_dir = git_dir
        self.revs = revs
        self.process = process
        self.stderr = stderr

    def matches(self, executable: str, git_dir: Path, revs: list[str]) -> bool:
        """Whether this is the command the walk would start: same git, repository and range."""
        try:
            same_dir = os.path.samefile(self.git_dir, git_dir)
        except OSError:
            return False
        return same_dir and executable == self.executable and revs == self.revs

    def stop(self) -> None:
        _stop(self.process)
        self.stderr.close()


def start_early(root: Path, spec: str) -> EarlyLog | None:
    """Start the ``git log`` of ``spec`` in the repository that contains ``root`` right away,
    from git's own answers (one ``rev-parse``, two for ``BASE..HEAD``), so that git walks the
    range while GitPython loads (~80 ms). A head start only: GitPython still finds the
    repository and resolves the range, and decides (a shallow clone or an unknown revision is
    still its GitError); :meth:`Repository.walk` uses the process only when both answers name
    the same repository and commits, and otherwise stops it and starts git log again.

    None when git's answers differ from what the walk needs (shallow clone, unknown revision, a
    base meaning "not on a remote-tracking branch") or git cannot be run.
    """
    try:
        base, head = parse_range(spec)
    except GitError:
        return None
    if base == "":
        return None  # the remote-tracking tips: for-each-ref, after GitPython
    executable = os.environ.get("GIT_PYTHON_GIT_EXECUTABLE") or "git"
    env = {k: v for k, v in os.environ.items() if k not in _DISCOVERY_ENV}
    try:
        probe = subprocess.run(
            [executable, "rev-parse", *_PROBE, f"{head}^{{commit}}"],
            cwd=root,
            env=env,
            capture_output=True,
        )
        lines = probe.stdout.decode("utf-8", "replace").splitlines()
        if probe.returncode != 0 or len(lines) != 3 or lines[1] != "false":
            return None
        git_dir, head_sha = lines[0], lines[2]
        revs = [head_sha]
        if base is not None:
            resolved = subprocess.run(
                [executable, f"--git-dir={git_dir}", "rev-parse", *_VERIFY, f"{base}^{{commit}}"],
                capture_output=True,
            )
            revs.append("^" + resolved.stdout.decode("ascii", "replace").strip())
            if resolved.returncode != 0:
                return None
        if not all(_HEX.fullmatch(rev.lstrip("^")) for rev in revs):
            return None
        stderr = tempfile.TemporaryFile()  # noqa: SIM115 - the EarlyLog's, closed by stop()
        try:
            process = _start_log(executable, Path(git_dir), revs, stderr, root)
        except BaseException:
            stderr.close()
            raise
    except OSError:
        return None
    return EarlyLog(executable, git_dir, revs, process, stderr)


def _start_log(
    executable: str, git_dir: Path, revs: list[str], stderr: IO[bytes], cwd: Path
) -> subprocess.Popen[bytes]:
    """``git log`` of ``revs`` (``HEAD``, ``^BASE`` ...), given on its stdin."""
    process = subprocess.Popen(
        [executable, *_global_args(git_dir), *LOG_ARGS],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr,
        cwd=cwd,
    )
    _widen(process.stdout)
    assert process.stdin is not None
    try:
        process.stdin.write("".join(r + "\n" for r in revs).encode("ascii"))
        process.stdin.close()
    except OSError:
        pass  # git ended at once: its status and stderr tell why
    return process


class Repository:
    """The repository that contains ``root``; a context manager that ends its git processes.

    ``early``, from :func:`start_early`, becomes the repository's: the walk adopts it when it
    matches, and it is stopped otherwise (also when this constructor raises).
    """

    def __init__(
        self, root: Path, max_blob_bytes: int | None = None, early: EarlyLog | None = None
    ) -> None:
        self._early = early
        try:
            self._open(root)
        except BaseException:
            if early is not None:
                early.stop()
            raise
        self.log_started_early = False  # whether the walk used ``early``
        self._cat: subprocess.Popen[bytes] | None = None
        self._cat_out: IO[bytes] | None = None
        self._cache: OrderedDict[str, bytes] = OrderedDict()
        self._cached_bytes = 0
        self._max_blob_bytes = max_blob_bytes
        #: Blobs larger than ``max_blob_bytes`` (id -> size): their contents were never kept.
        self.oversized: dict[str, int] = {}
        self._asked: deque[str] = deque()  # requests sent to cat-file, oldest first, not answered
        self._asked_set: set[str] = set()

    def _open(self, root: Path) -> None:
        try:
            import git
        except ImportError as exc:  # GitPython refuses to import without a git executable
            raise GitError(f"git is not available: {exc}", "install git, on PATH") from None
        try:
            self._repo = git.Repo(root, search_parent_directories=True)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            raise GitError(
                f"not a git repository: {root}",
                "run verify inside a git work tree, or pass --root DIR",
            ) from None
        self._executable = str(git.Git.GIT_PYTHON_GIT_EXECUTABLE or "git")
        self._not_found: type[Exception] = git.GitCommandNotFound
        self.git_dir = Path(self._repo.git_dir)
        work_tree = self._repo.working_tree_dir
        self.top = Path(work_tree) if work_tree is not None else self.git_dir

    # --- life cycle -----------------------------------------------------------------------------

    def __enter__(self) -> Repository:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """End the cat-file process and release GitPython's resources."""
        early, self._early = self._early, None
        if early is not None:
            early.stop()
        cat, self._cat, self._cat_out = self._cat, None, None
        self._asked.clear()  # unanswered requests die with the process
        self._asked_set.clear()
        if cat is not None:
            _stop(cat)
        self._repo.close()

    # --- revisions ------------------------------------------------------------------------------

    def _execute(self, *args: str) -> tuple[int, str, str]:
        """One short git command through GitPython's command interface: status, out, err."""
        command = [self._executable, *_global_args(self.git_dir), *args]
        try:
            status, output, stderr = self._repo.git.execute(
                command, with_exceptions=False, with_extended_output=True
            )
        except (OSError, self._not_found) as exc:  # git cannot be started at all
            raise GitError(f"cannot run git: {exc}", "install git, on PATH") from None
        return int(status), str(output), str(stderr)

    def _git(self, *args: str, error: GitError | None = None) -> str:
        """The output of a short git command; a failure becomes ``error``, or a GitError with
        git's own first line of complaint."""
        status, output, stderr = self._execute(*args)
        if status != 0:
            if error is not None:
                raise error
            raise GitError(_first_line(stderr) or f"git {args[0]} failed", GIT_HINT)
        return output

    def is_shallow(self) -> bool:
        return self._git("rev-parse", "--is-shallow-repository").strip() == "true"

    def resolve(self, rev: str, spec: str) -> str:
        """The full id of the commit ``rev`` names."""
        unknown = GitError(f"unknown revision {rev!r} in range {spec!r}", UNKNOWN_REF_HINT)
        sha = self._git("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", error=unknown)
        if not _HEX.fullmatch(sha.strip()):
            raise unknown
        return sha.strip()

    def _check_shallow_and_resolve(self, rev: str, spec: str) -> str:
        """:meth:`is_shallow` (a shallow clone raises) and :meth:`resolve` in one git command:
        ``rev-parse`` answers ``--is-shallow-repository`` first, whether the revision exists or
        not."""
        status, output, stderr = self._execute(
            "rev-parse", "--is-shallow-repository", "--verify", "--quiet", f"{rev}^{{commit}}"
        )
        lines = output.split()
        if not lines and status != 0:
            raise GitError(_first_line(stderr) or "git rev-parse failed", GIT_HINT)
        if lines[:1] == ["true"]:
            raise GitError(
                "shallow clone: commits before the fetched depth are missing, so history cannot "
                "be verified",
                FETCH_HINT,
            )
        if status != 0 or len(lines) != 2 or not _HEX.fullmatch(lines[1]):
            raise GitError(f"unknown revision {rev!r} in range {spec!r}", UNKNOWN_REF_HINT)
        return lines[1]

    def remote_tips(self) -> tuple[str, ...]:
        """The commits every remote-tracking branch points to."""
        output = self._git("for-each-ref", "--format=%(objectname)", "refs/remotes/")
        return tuple(sorted({line for line in output.split() if _HEX.fullmatch(line)}))

    def resolve_range(self, spec: str) -> tuple[Base, str]:
        """The base (see :data:`Base`) and head commit of ``spec``.

        Raises GitError for a malformed range, a shallow clone and an unknown revision.
        """
        base, head = parse_range(spec)
        head_sha = self._check_shallow_and_resolve(head, spec)
        if base is None:
            return None, head_sha
        if base == "":
            return self.remote_tips() or None, head_sha
        return self.resolve(base, spec), head_sha

    # --- the walk -------------------------------------------------------------------------------

    def walk(
        self, base: Base, head: str, prefetch: Callable[[str], object] | None = None
    ) -> Iterator[tuple[Commit, list[RawChange]]]:
        """Every commit of the range, oldest first (parents before children), with its changes.

        With ``prefetch``, commits are read ahead in small batches, and the blob ids of both
        versions of each modified path it accepts (returns a true value for) are sent to
        cat-file one batch ahead: while the caller works on one batch, cat-file is already
        reading the next one's blobs, and :meth:`read_blob` mostly answers from memory. Added
        and deleted files are read on demand.
        """
        revs = [head]
        if isinstance(base, str):
            revs.append("^" + base)
        elif base:
            revs.extend("^" + b for b in base)
        for rev in revs:
            if not _HEX.fullmatch(rev.lstrip("^")):
                raise GitError(f"not a commit id: {rev!r}", RANGE_HINT)
        early, self._early = self._early, None
        if early is not None and early.matches(self._executable, self.git_dir, revs):
            process, stderr = early.process, early.stderr
            self.log_started_early = True
        else:
            if early is not None:
                early.stop()
            stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed by the with below
            process = _start_log(self._executable, self.git_dir, revs, stderr, self.top)
        with stderr:
            try:
                assert process.stdout is not None
                commits = parse_log(_chunks(process.stdout))
                if prefetch is None:
                    yield from commits
                else:
                    self._cat_process()  # starts while git log walks the range
                    yield from self._ahead(_batches(commits, prefetch))
                if process.wait() != 0:
                    stderr.seek(0)
                    message = _first_line(stderr.read().decode("utf-8", "replace"))
                    raise GitError(f"git log failed: {message}", GIT_HINT)
            finally:
                _stop(process)

    def _ahead(
        self, batches: Iterator[tuple[list[tuple[Commit, list[RawChange]]], list[str]]]
    ) -> Iterator[tuple[Commit, list[RawChange]]]:
        """The commits of ``batches``, each batch yielded once its blobs are in memory and the
        next batch's blobs have been asked for."""
        pending: list[tuple[Commit, list[RawChange]]] | None = None
        for batch, blobs in batches:
            self._request(blobs)
            if pending is not None:
                yield from pending
            pending = batch
        if pending is not None:
            yield from pending

    # --- blobs ----------------------------------------------------------------------------------

    def read_blob(self, sha: str) -> bytes | None:
        """The contents of one blob, through the persistent ``git cat-file --batch``; None when
        it is larger than ``max_blob_bytes`` (its size is then in :attr:`oversized`)."""
        cached = self._cache.get(sha)
        if cached is not None:
            self._cache.move_to_end(sha)
            return cached
        if sha in self.oversized:
            return None
        if sha not in self._asked_set:  # (what is in flight was checked when it was asked for)
            if not _HEX.fullmatch(sha):
                raise GitError(f"not a blob id: {sha!r}", RANGE_HINT)
            self._send([sha])
        while self._asked:
            received, data = self._receive()
            if received == sha:
                if data is None and sha not in self.oversized:
                    raise GitError(f"cannot read blob {sha}: not in the repository", FETCH_HINT)
                return data
        raise GitError(f"cannot read blob {sha}: git cat-file stopped", FETCH_HINT)

    def _remember(self, sha: str, data: bytes) -> None:
        if len(data) > _CACHE_ITEM_BYTES:
            return
        self._cache[sha] = data
        self._cached_bytes += len(data)
        while self._cached_bytes > _CACHE_BYTES:
            _, dropped = self._cache.popitem(last=False)
            self._cached_bytes -= len(dropped)

    def _request(self, shas: Iterable[str]) -> None:
        """Ask cat-file for the blobs not in memory yet, without waiting for the answers: they
        are read (into the cache) by the next :meth:`read_blob` that needs one of them, or by
        this method when too many requests would be in flight."""
        wanted = [
            s
            for s in dict.fromkeys(shas)
            if s not in self._cache
            and s not in self._asked_set
            and s not in self.oversized
            and _HEX.fullmatch(s)
        ]
        for start in range(0, len(wanted), _BATCH_BLOBS):
            self._send(wanted[start : start + _BATCH_BLOBS])

    def _send(self, shas: list[str]) -> None:
        """Write requests, first reading answers while the pipe could not take them all."""
        while self._asked and len(self._asked) + len(shas) > _IN_FLIGHT:
            self._receive()
        cat = self._cat_process()
        assert cat.stdin is not None
        try:
            cat.stdin.write("".join(s + "\n" for s in shas).encode("ascii"))
            cat.stdin.flush()
        except OSError:
            raise GitError("cannot read blobs: git cat-file stopped", FETCH_HINT) from None
        self._asked.extend(shas)
        self._asked_set.update(shas)

    def _receive(self) -> tuple[str, bytes | None]:
        """Read the answer to the oldest request in flight: the blob, kept in the cache, or None
        when it names no blob (missing, ambiguous, another kind of object) or is too large."""
        sha = self._asked.popleft()
        self._asked_set.discard(sha)
        out = self._cat_out
        assert out is not None  # requests were sent, so the process runs
        try:
            header = out.readline()
            fields = header.split()
            if len(fields) != 3:
                if fields[:1] == [sha.encode("ascii")]:
                    return sha, None  # "<sha> missing" or "<sha> ambiguous"
                raise GitError(f"cannot read blob {sha}: git cat-file stopped", FETCH_HINT)
            size = int(fields[2])
            if fields[0] != sha.encode("ascii"):
                raise ValueError(header)
            limit = self._max_blob_bytes
            if limit is not None and size > limit:
                _discard(out, size + 1)
                if fields[1] == b"blob":
                    self.oversized[sha] = size
                return sha, None
            data = out.read(size + 1)
        except (OSError, ValueError):
            raise GitError(
                f"cannot read blob {sha}: unexpected answer from git cat-file", FETCH_HINT
            ) from None
        if len(data) != size + 1:
            raise GitError(
                f"cannot read blob {sha}: unexpected answer from git cat-file", FETCH_HINT
            )
        if fields[1] != b"blob":
            return sha, None
        blob = data[:size]
        self._remember(sha, blob)
        return sha, blob

    def _cat_process(self) -> subprocess.Popen[bytes]:
        if self._cat is None:
            self._cat = subprocess.Popen(
                [self._executable, *_global_args(self.git_dir), "cat-file", "--batch"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,  # a failure shows as a "missing" answer or EOF
                cwd=self.top,
                bufsize=1 << 16,
            )
            _widen(self._cat.stdout)
            self._cat_out = self._cat.stdout
        return self._cat


def _widen(stream: IO[bytes] | None) -> None:
    """Let git write up to _PIPE_BYTES ahead of us (Linux; elsewhere the pipe keeps its size):
    with the default 64 KiB, cat-file stops after a few blobs until they are read, and each
    later answer costs a round of wake-ups."""
    set_size = getattr(fcntl, "F_SETPIPE_SZ", None) if fcntl is not None else None
    if stream is None or set_size is None:
        return
    with contextlib.suppress(OSError):
        fcntl.fcntl(stream.fileno(), set_size, _PIPE_BYTES)


def _discard(stream: IO[bytes], size: int) -> None:
    """Read and drop ``size`` bytes, a chunk at a time."""
    while size > 0:
        chunk = stream.read(min(size, _DISCARD_CHUNK))
        if not chunk:
            raise ValueError("end of output")
        size -= len(chunk)


def _global_args(git_dir: Path) -> list[str]:
    """Options before the subcommand: this repository, whatever GIT_DIR the caller exported."""
    return [f"--git-dir={git_dir}"]


def _batches(
    commits: Iterator[tuple[Commit, list[RawChange]]], prefetch: Callable[[str], object]
) -> Iterator[tuple[list[tuple[Commit, list[RawChange]]], list[str]]]:
    """Commits in groups of up to _BATCH_COMMITS, each with the blob ids of both versions of
    the modified paths ``prefetch`` accepts (about _BATCH_BLOBS of them at most)."""
    batch: list[tuple[Commit, list[RawChange]]] = []
    blobs: list[str] = []
    for item in commits:
        batch.append(item)
        for change in item[1]:
            if change.status == "M" and prefetch(change.path):
                blobs += (change.old_blob or "", change.new_blob or "")
        if len(batch) >= _BATCH_COMMITS or len(blobs) >= _BATCH_BLOBS:
            yield batch, blobs
            batch, blobs = [], []
    if batch:
        yield batch, blobs


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def _stop(process: subprocess.Popen[Any]) -> None:
    for stream in (process.stdin, process.stdout):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _chunks(stream: IO[bytes], chunk_size: int = 1 << 16) -> Iterator[bytes]:
    """The output of a process as it arrives."""
    fd = stream.fileno()
    while chunk := os.read(fd, chunk_size):
        yield chunk


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "backslashreplace")


def parse_log(chunks: Iterable[bytes]) -> Iterator[tuple[Commit, list[RawChange]]]:
    """Commits and their raw changes from the output of ``git log -z --raw`` with our format,
    given in chunks of any size.

    The output is a sequence of NUL-terminated tokens. A commit starts with a fixed number of
    header tokens; each raw entry is a token starting with ``:`` (one per parent for a combined
    merge diff) followed by one path token. Empty tokens between commits are separators. The
    complete tokens of a chunk are decoded together (a NUL is never part of a UTF-8 sequence,
    so each token decodes as it would alone); bytes that are not UTF-8 become ``\\xNN``.
    """
    commit: Commit | None = None
    changes: list[RawChange] = []
    tokens: list[str] = []  # complete tokens not used yet
    rest = b""  # the start of a token whose NUL has not arrived yet
    for final, chunk in _with_end(chunks):
        if final:
            tokens += [_text(rest)] if rest else []
            tokens += [""] * _HEADER_TOKENS  # what a truncated output lacks, as git.py always did
        else:
            data = rest + chunk
            cut = data.rfind(b"\0")
            if cut < 0:
                rest = data
                continue
            tokens += _text(data[:cut]).split("\0")
            rest = data[cut + 1 :]
        i, n = 0, len(tokens) - (_HEADER_TOKENS if final else 0)
        while i < n:
            token = tokens[i]
            if token[:1] == "\n":
                token = token.lstrip("\n")
            if commit is not None and token[:1] == ":":
                if i + 2 > len(tokens):
                    break  # the path has not arrived yet
                change = _raw_change(token, tokens[i + 1])
                if change is not None:
                    changes.append(change)
                i += 2
            elif not token:
                i += 1
            elif i + _HEADER_TOKENS > len(tokens):
                break  # the header has not arrived in full yet
            else:
                if commit is not None:
                    yield commit, changes
                commit = _commit(token, tokens[i + 1 : i + _HEADER_TOKENS])
                changes = []
                i += _HEADER_TOKENS
        del tokens[:i]
    if commit is not None:
        yield commit, changes


def _with_end(chunks: Iterable[bytes]) -> Iterator[tuple[bool, bytes]]:
    for chunk in chunks:
        yield False, chunk
    yield True, b""


_new_tuple = tuple.__new__  # a NamedTuple made without its Python-level __new__


def _commit(sha: str, rest: list[str]) -> Commit:
    trailers: dict[str, tuple[str, ...]] = {}
    for key, raw in zip(TRAILER_KEYS, rest[1:-1], strict=True):
        if raw:
            values = tuple(filter(None, map(str.strip, raw.split(_TRAILER_SEPARATOR))))
            if values:
                trailers[key] = values
    return _new_tuple(Commit, (sha, tuple(rest[0].split()), rest[-1], trailers))


_ABSENT = (_NO_FILE, _GITLINK)  # modes of a side that has no file: none, or a submodule


def _raw_change(meta: str, path: str) -> RawChange | None:
    """One raw diff entry: ``:old new oldsha newsha S`` or, for a merge with N parents, N
    colons, N+1 modes, N+1 ids and N status letters. Old is the first parent's version."""
    colons = len(meta) - len(meta.lstrip(":"))
    fields = meta[colons:].split()
    if len(fields) < 2 * colons + 3:
        return None
    old = None if fields[0] in _ABSENT else fields[colons + 1]
    new = None if fields[colons] in _ABSENT else fields[2 * colons + 1]
    if old is None:
        status = "A"
        if new is None:
            return None
    else:
        status = "M" if new is not None else "D"
    return _new_tuple(RawChange, (path, status, old, new))
