"""The repository that contains the root, the range to verify, and the life of git's processes.

A ``verify`` run starts three git processes, whatever the number of commits:

- one ``git rev-parse`` that finds the repository from the root (any directory of the work
  tree), tells whether it is a shallow clone and which object format it uses, and resolves the
  range's revisions (and, for an empty base, the remote-tracking tips);
- one ``git log`` of the whole range (:mod:`.log`);
- one persistent ``git cat-file --batch`` for contents (:mod:`.objects`).

A shard (``verify --shard K/N``) adds one ``git rev-list`` that numbers the range's commits, and
its ``git log`` shows only the shard's commits; a family that remembers earlier commits gets
those before the shard in one more ``git log``, ended as soon as it needs no more.

Every process runs with replace refs and grafts turned off, so that no ref or file in the
repository can show verify other commits than the ones the range holds, and with
``--git-dir`` given, so that a ``GIT_DIR`` a git hook exported cannot redirect it.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import tempfile
import threading
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import TracebackType
from typing import IO, Any, NamedTuple

from continuity_checks.core.git.errors import (
    FETCH_HINT,
    GIT_HINT,
    INSTALL_HINT,
    RANGE_HINT,
    REPOSITORY_HINT,
    UNKNOWN_REF_HINT,
    GitError,
)
from continuity_checks.core.git.log import (
    GITLINK,
    NO_FILE,
    Commit,
    LogRequest,
    RawChange,
    creation_arguments,
    log_arguments,
    parse_log,
    raw_change,
    version_arguments,
)
from continuity_checks.core.git.objects import (
    BATCH_BLOBS,
    HEX,
    GitObject,
    ObjectReader,
    TreeEntry,
)

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

#: What a range excludes: one base commit, several (new-branch push: every remote-tracking
#: tip), or nothing (every commit reachable from HEAD).
Base = str | tuple[str, ...] | None

GIT = "git"
_ZEROS = frozenset({"0" * 40, "0" * 64})
_BATCH_COMMITS = 128
_PIPE_BYTES = 1 << 20  # the default /proc/sys/fs/pipe-max-size
_ID_BYTES = {"sha1": 20, "sha256": 32}
#: ``git var GIT_AUTHOR_IDENT``: ``Name <email> 1764540000 +0100``
_IDENT = re.compile(r"(?P<name>.*) <(?P<email>[^<>]*)> (?P<seconds>-?\d+) (?P<offset>[+-]\d{4})")

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
        base = "" if base in _ZEROS else base
        head = head or "HEAD"
    for rev in (base, head):
        if rev and (rev.startswith("-") or any(c.isspace() or c in "\0" for c in rev)):
            raise GitError(f"malformed range {spec!r}: {rev!r} is not a revision", RANGE_HINT)
    return base, head


def environment() -> dict[str, str]:
    """The environment of every git process of a run."""
    env = {k: v for k, v in os.environ.items() if k not in _REPOSITORY_ENV}
    # Grafts (.git/info/grafts) rewrite parents as replace refs do; a graft file that cannot be
    # opened means none, and unlike an empty one it draws no deprecation notice.
    env["GIT_GRAFT_FILE"] = ""
    return env


class _Answer(NamedTuple):
    git_dir: Path
    top: Path | None  # None outside a work tree (a bare repository)
    shallow: bool
    object_format: str
    ids: list[str]  # the revisions asked for, resolved, then the remote-tracking tips


class Repository:
    """The repository that contains ``root``; a context manager that ends its git processes.

    With ``revision_range``, finding the repository and resolving the range are one git command,
    and :meth:`resolve_range` of that range answers from it. ``max_blob_bytes``: versions larger
    than this are never read into memory (see :class:`ObjectReader`).
    """

    def __init__(
        self,
        root: Path,
        max_blob_bytes: int | None = None,
        *,
        revision_range: str | None = None,
    ) -> None:
        self._env = environment()
        # the index of the commit being made, when git names it (``git commit -a`` and ``git
        # commit <paths>`` hand their hooks a temporary one): what ``staged`` compares
        self._index = os.environ.get("GIT_INDEX_FILE") or None
        self._index_check: subprocess.Popen[bytes] | None = None  # see in_index
        self._index_pid = 0
        self._index_lock = threading.Lock()
        parsed = parse_range(revision_range) if revision_range is not None else None
        if not os.path.isdir(root):
            raise GitError(f"not a git repository: {root}", REPOSITORY_HINT)
        answer = self._rev_parse(Path(root), None, revision_range, parsed)
        self.git_dir = answer.git_dir
        #: Where git's processes run: the top of the work tree, or the git directory.
        self.top = answer.top or answer.git_dir
        self.shallow = answer.shallow
        self.object_format = answer.object_format
        self._resolved: dict[str, tuple[Base, str]] = {}
        if revision_range is not None and parsed is not None:
            self._resolved[revision_range] = _range_of(parsed, answer.ids)
        self.objects = ObjectReader(
            self._start_cat_file,
            _stop,
            max_blob_bytes,
            _ID_BYTES.get(answer.object_format, 20),
        )

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
        """End the cat-file processes (a walk ends its git log itself)."""
        self.objects.close()
        if self._index_check is not None and self._index_pid == os.getpid():
            _stop(self._index_check)
        self._index_check = None

    def _popen(
        self, args: list[str], *, index: bool = False, **kwargs: Any
    ) -> subprocess.Popen[bytes]:
        """``git <args>`` in this repository; with ``index``, on the index of the commit being
        made (``GIT_INDEX_FILE`` as git handed it to the hook: a relative one is relative to
        the top of the work tree, where git runs), else on none that the environment names."""
        env = self._env
        if index and self._index is not None:
            env = {**env, "GIT_INDEX_FILE": self._index}
        return _popen([f"--git-dir={self.git_dir}", *args], env, self.top, **kwargs)

    def _start_cat_file(self) -> subprocess.Popen[bytes]:
        process = self._popen(
            ["cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,  # a failure shows as a "missing" answer or an end
            bufsize=1 << 16,
        )
        _widen(process.stdout)
        return process

    # --- the range ------------------------------------------------------------------------------

    def resolve_range(self, spec: str) -> tuple[Base, str]:
        """The base (see :data:`Base`) and head commit of ``spec``.

        Raises GitError for a malformed range, a shallow clone and an unknown revision.
        """
        resolved = self._resolved.get(spec)
        if resolved is None:
            parsed = parse_range(spec)
            answer = self._rev_parse(self.top, self.git_dir, spec, parsed)
            resolved = self._resolved[spec] = _range_of(parsed, answer.ids)
        return resolved

    def _rev_parse(
        self,
        cwd: Path,
        git_dir: Path | None,
        spec: str | None,
        parsed: tuple[str | None, str] | None,
    ) -> _Answer:
        """One ``git rev-parse``: the repository (found from ``cwd`` unless ``git_dir`` is
        given), then the range's commits. Its errors in their order of precedence: not a
        repository, a shallow clone (git answers that before it looks at the revisions), an
        unknown revision."""
        revisions: list[str] = []
        remotes = False
        if parsed is not None:
            base, head = parsed
            revisions.append(head)
            if base:
                revisions.append(base)
            remotes = base == ""
        command = [
            *([f"--git-dir={git_dir}"] if git_dir is not None else []),
            "rev-parse",
            "--absolute-git-dir",
            "--is-inside-work-tree",
            "--show-cdup",  # printed inside a work tree only
            "--is-shallow-repository",
            "--show-object-format",
            *(f"{rev}^{{commit}}" for rev in revisions),
            *(["--remotes"] if remotes else []),
            "--",  # an unknown revision is an error, never taken for a path
        ]
        process = _popen(command, self._env, cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err = (stream.decode("utf-8", "replace") for stream in process.communicate())
        lines = out.split("\n")
        inside = lines[1:2] == ["true"]
        ids_from = 5 if inside else 4
        if len(lines) <= ids_from or lines[ids_from - 1] not in _ID_BYTES:
            message = _first_line(err)
            if "not a git repository" in message:
                raise GitError(f"not a git repository: {cwd}", REPOSITORY_HINT)
            raise GitError(message or "git rev-parse failed", GIT_HINT)
        shallow = lines[ids_from - 2] == "true"
        if shallow and parsed is not None:
            raise GitError(
                "shallow clone: commits before the fetched depth are missing, so history cannot "
                "be verified",
                FETCH_HINT,
            )
        ids = [line for line in lines[ids_from:] if line and line != "--"]
        for index, rev in enumerate(revisions):
            if index >= len(ids) or not HEX.fullmatch(ids[index]):
                raise GitError(f"unknown revision {rev!r} in range {spec!r}", UNKNOWN_REF_HINT)
        if process.returncode != 0 or lines[-2:] != ["--", ""]:
            raise GitError(_first_line(err) or "git rev-parse failed", GIT_HINT)
        top = None
        if inside:
            top = Path(os.path.normpath(os.path.join(os.path.realpath(cwd), lines[2])))
        return _Answer(Path(lines[0]), top, shallow, lines[ids_from - 1], ids)

    # --- the walk -------------------------------------------------------------------------------

    def commits(self, base: Base, head: str) -> list[str]:
        """The ids of the range's commits in the order :meth:`walk` gives them (one
        ``git rev-list``, no diffs): what a shard of the range is cut from."""
        out = self._output(
            ["rev-list", "--reverse", "--topo-order", "--stdin"], stdin=_revs(base, head)
        )
        ids = out.decode("ascii", "replace").split()
        if not all(HEX.fullmatch(sha) for sha in ids):
            raise GitError("unexpected output from git rev-list", GIT_HINT)
        return ids

    def walk(
        self,
        base: Base,
        head: str,
        prefetch: Callable[[str], object] | None = None,
        request: LogRequest | None = None,
        *,
        only: Sequence[str] | None = None,
    ) -> Generator[tuple[Commit, list[RawChange]], None, None]:
        """Every commit of the range, oldest first (parents before children), with its changes
        against its first parent; commits without changes too. ``request``: the trailers and
        fields each commit carries, and whether gitlinks are reported. With ``only``, exactly
        those commits (ids of the range, in its order, from :meth:`commits`) instead.

        With ``prefetch``, commits are read ahead in small batches, and the blob ids of both
        versions of each modified path it accepts (returns a true value for) are sent to
        cat-file one batch ahead: while the caller works on one batch, cat-file is already
        reading the next one's blobs, and :meth:`read_blob` mostly answers from memory. Added
        and deleted files are read on demand.
        """
        request = request or LogRequest()
        if only is not None:
            if not only:
                return
            revs = b"".join(sha.encode("ascii") + b"\n" for sha in only)
        else:
            revs = _revs(base, head)
        with tempfile.TemporaryFile() as stderr:  # a file: git can never block on it
            process = self._popen(
                log_arguments(request, listed=only is not None),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
            )
            try:
                _widen(process.stdout)
                assert process.stdin is not None and process.stdout is not None
                try:
                    process.stdin.write(revs)
                    process.stdin.close()
                except OSError:
                    pass  # git ended at once: its status and stderr tell why
                commits = parse_log(_chunks(process.stdout), request)
                if prefetch is None:
                    yield from commits
                else:
                    self.objects.start()  # while git log walks the range
                    yield from self._ahead(_batches(commits, prefetch))
                if process.wait() != 0:
                    raise _log_failed(stderr)
            finally:
                _stop(process)

    def _ahead(
        self, batches: Iterator[tuple[list[tuple[Commit, list[RawChange]]], list[str]]]
    ) -> Iterator[tuple[Commit, list[RawChange]]]:
        """The commits of ``batches``, each batch yielded once its blobs are in memory and the
        next batch's blobs have been asked for."""
        pending: list[tuple[Commit, list[RawChange]]] | None = None
        for batch, blobs in batches:
            self.objects.request(blobs)
            if pending is not None:
                yield from pending
            pending = batch
        if pending is not None:
            yield from pending

    # --- where files came from ----------------------------------------------------------------

    def added_by(
        self,
        revisions: Sequence[str],
        paths: Iterable[str],
        request: LogRequest | None = None,
        *,
        walk: bool = True,
    ) -> dict[str, Commit]:
        """For each of ``paths``, the newest commit reachable from ``revisions`` that added it
        (with the trailers and fields of ``request``): one ``git log`` for all of them. Without
        ``walk``, only the ``revisions`` themselves, the first of them that added it. A path
        that no such commit added is left out; so is a path that cannot be named on git's
        stdin (a line break in it, or bytes that are not UTF-8, which the log shows as
        ``\\xNN``): the caller decides what an unknown origin means."""
        request = request or LogRequest()
        wanted = sorted({p for p in paths if p and "\n" not in p and "\\" not in p})
        found: dict[str, Commit] = {}
        revs = [r for r in revisions if HEX.fullmatch(r)]
        if not wanted or not revs:
            return found
        lines = [*revs, "--", *wanted]
        with tempfile.TemporaryFile() as stdin, tempfile.TemporaryFile() as stderr:
            # the request through a file: git reads all of it before it writes, and a pipe
            # written while git's output is unread could block both sides
            stdin.write("".join(line + "\n" for line in lines).encode("utf-8", "surrogateescape"))
            stdin.seek(0)
            arguments = creation_arguments(request, listed=not walk)
            process = self._popen(arguments, stdin=stdin, stdout=subprocess.PIPE, stderr=stderr)
            try:
                assert process.stdout is not None
                remaining = set(wanted)
                # eager: git flushes each commit it finds; stop it once every path is found
                boundary = self._shallow_commits()
                for commit, changes in parse_log(_chunks(process.stdout), request, eager=True):
                    if commit.sha in boundary:
                        # a shallow clone's oldest commits show every file as added, their
                        # parents being missing: who created those files cannot be told here
                        continue
                    for change in changes:
                        if change.status == "A" and change.path in remaining:
                            found[change.path] = commit
                            remaining.discard(change.path)
                    if not remaining:
                        # the rest of history is not needed, and git would walk all of it
                        # before it next writes (and meets the closed pipe): end it now
                        process.kill()
                        return found
                if process.wait() != 0:
                    raise _log_failed(stderr)
            finally:
                _stop(process)
        return found

    def versions(
        self, revision: str, path: str, limit: int, within: int | None = None
    ) -> list[tuple[str, str | None, str]]:
        """The versions ``path`` had in the last ``limit`` commits reachable from ``revision``
        that changed it, newest first: ``(commit, blob id or None where it deleted it, git
        mode)``; with ``within``, only among the last ``within`` commits (git walks all of
        history for a path that never existed, which one more process bounds). One git process
        (two with ``within``); none for a path git's stdin cannot name."""
        if not HEX.fullmatch(revision) or not path or "\n" in path or "\\" in path:
            return []
        revisions = revision
        if within is not None:
            skipped = self._output(["rev-list", "--max-count=1", f"--skip={within}", revision])
            boundary = skipped.decode("ascii", "replace").strip()
            if HEX.fullmatch(boundary):
                revisions = f"{revision}\n^{boundary}"
        stdin = f"{revisions}\n--\n{path}\n".encode("utf-8", "surrogateescape")
        out = self._output(version_arguments(limit), stdin=stdin)
        return [
            (commit.sha, change.new_blob, change.new_mode)
            for commit, changes in parse_log([out])
            for change in changes
            if change.path == path
        ]

    def deleted_in(self, commits: Sequence[str]) -> frozenset[str]:
        """The paths that ``commits`` delete against their first parents (one ``git log`` over
        just those commits)."""
        if not commits:
            return frozenset()
        args = ["log", "--no-walk=unsorted", "--stdin", "-z", "--format=", "--name-only"]
        args += ["--no-renames", "--diff-filter=D", "--diff-merges=first-parent"]
        out = self._output(args, stdin="".join(f"{c}\n" for c in commits).encode("ascii"))
        return frozenset(
            name.decode("utf-8", "surrogateescape") for name in out.split(b"\0") if name.strip()
        )

    def _shallow_commits(self) -> frozenset[str]:
        """The commits whose parents a shallow clone lacks (git lists them in the ``shallow``
        file of the common git directory); none in a complete repository."""
        if not self.shallow:
            return frozenset()
        common = self.git_dir
        with contextlib.suppress(OSError):
            link = (self.git_dir / "commondir").read_text("utf-8").strip()
            common = self.git_dir / link  # a linked worktree's: the main repository's
        try:
            text = (common / "shallow").read_text("ascii", "replace")
        except OSError:
            return frozenset()
        return frozenset(line for line in text.split() if HEX.fullmatch(line))

    # --- what is staged (the commit hook) -------------------------------------------------------

    def count(self, base: Base, head: str) -> int:
        """How many commits :meth:`walk` gives for the range: one more git process, asked only
        when a progress display wants the total."""
        out = self._output(["rev-list", "--count", "--stdin"], stdin=_revs(base, head))
        text = out.decode("ascii", "replace").strip()
        if not text.isdigit():
            raise GitError(f"git rev-list --count gave {text!r}", GIT_HINT)
        return int(text)

    def head(self) -> str | None:
        """The commit ``HEAD`` names, or None on a branch with no commit yet."""
        out = self._output(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], check=False)
        sha = out.decode("ascii", "replace").strip()
        return sha if HEX.fullmatch(sha) else None

    def merge_heads(self) -> tuple[str, ...]:
        """The other parents of the commit being made when it concludes a merge (git keeps
        them in ``MERGE_HEAD``, one a line); empty otherwise. Read from the file: no process."""
        try:
            text = (self.git_dir / "MERGE_HEAD").read_text("ascii", "replace")
        except OSError:
            return ()
        return tuple(line for line in text.split() if HEX.fullmatch(line))

    def staged(self, gitlinks: bool = False) -> list[RawChange]:
        """What the index changes against ``HEAD`` (against nothing before the first commit): the
        prospective commit, as raw entries like a commit's in :meth:`walk`."""
        out = self._output(
            ["diff", "--cached", "--raw", "-z", "--no-renames", "--no-abbrev"], index=True
        )
        absent = (NO_FILE,) if gitlinks else (NO_FILE, GITLINK)
        tokens = out.decode("utf-8", "backslashreplace").split("\0")
        changes = []
        for meta, path in zip(tokens[0::2], tokens[1::2], strict=False):
            if meta.startswith(":") and (change := raw_change(meta, path, absent)) is not None:
                changes.append(change)
        return changes

    def in_index(self, path: str) -> bool | None:
        """Whether the index of the commit being made (see :meth:`_popen`) holds the file
        ``path``: one ``git cat-file --batch-check`` process asked ``:0:<path>``, started when
        first needed (again in a forked worker: a process is never shared). None when it
        cannot tell: a line break in the path (cat-file reads one name a line), or no answer."""
        answer = self._index_entry(path)
        return None if answer is None else not answer.endswith(b" missing\n")

    def index_has(self, path: str, tree: str) -> bool | None:
        """Whether ``tree``, the tree the index writes (:meth:`write_tree`), has an entry at
        ``path`` (a file, a symlink or a directory; a submodule counts as none), from the index
        when the directory that would hold it is large (git would inflate its whole tree object
        to look one name up); None when that directory is small, or when the index cannot tell
        (an empty blob: an intent-to-add entry, which the written tree leaves out, looks the
        same): the tree answers then."""
        directory = path.rpartition("/")[0]
        if not directory or "\n" in directory:
            return None
        size = self._index_entry(f"{tree}:{directory}", spec=True)
        fields = [] if size is None else size.split()
        if len(fields) != 3 or fields[1] != b"tree" or not fields[2].isdigit():
            return None
        if int(fields[2]) < LARGE_TREE:
            return None
        answer = self._index_entry(path)
        if answer is None:
            return None
        fields = answer.split()
        if fields[-1] == b"missing":
            # no file there: a directory when the index holds a path under it
            listed = self._output(
                ["ls-files", "-z", "--", ":(literal)" + path + "/"], check=False, index=True
            )
            return bool(listed)
        if len(fields) != 3 or fields[0].decode("ascii", "replace") in EMPTY_BLOBS:
            return None
        return fields[1] == b"blob"

    def _index_entry(self, path: str, spec: bool = False) -> bytes | None:
        """git's answer line to ``:0:<path>`` (to ``path`` itself with ``spec``); None when it
        cannot tell."""
        if "\n" in path or path.endswith("\r"):
            return None
        with self._index_lock:  # one question and its answer at a time (see ObjectReader)
            return self._in_index(path if spec else ":0:" + path)

    def _in_index(self, spec: str) -> bytes | None:
        if self._index_check is None or self._index_pid != os.getpid():
            self._index_check = self._popen(
                ["cat-file", "--batch-check"],
                index=True,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
            self._index_pid = os.getpid()
        process = self._index_check
        assert process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write(spec.encode("utf-8", "surrogateescape") + b"\n")
            process.stdin.flush()
            answer = process.stdout.readline()
        except OSError:
            return None
        return answer or None

    def write_tree(self) -> str:
        """The id of the tree the index holds (written into the object store, as ``git commit``
        would): the prospective commit's tree. A GitError while a merge is unresolved."""
        tree = self._output(["write-tree"], index=True).decode("ascii", "replace").strip()
        if not HEX.fullmatch(tree):
            raise GitError(f"git write-tree gave {tree!r}", GIT_HINT)
        return tree

    def identities(self) -> dict[str, tuple[str, str, str]]:
        """``author`` and ``committer`` -> name, email and time (strict ISO 8601) of a commit
        made now, as git works them out from its configuration and environment: both from one
        ``git var -l``."""
        found: dict[str, tuple[str, str, str]] = {}
        for line in self._output(["var", "-l"]).decode("utf-8", "replace").splitlines():
            key, _, ident = line.partition("=")
            who = {"GIT_AUTHOR_IDENT": "author", "GIT_COMMITTER_IDENT": "committer"}.get(key)
            if who is None:
                continue
            match = _IDENT.fullmatch(ident.strip())
            if match is None:
                raise GitError(f"git var gave {key}={ident.strip()!r}", GIT_HINT)
            offset = match["offset"]
            sign = -1 if offset[0] == "-" else 1
            zone = timezone(sign * timedelta(hours=int(offset[1:3]), minutes=int(offset[3:5])))
            when = datetime.fromtimestamp(int(match["seconds"]), zone).isoformat()
            found[who] = (match["name"], match["email"], when)
        for who in ("author", "committer"):
            if who not in found:
                raise GitError(
                    f"git cannot tell the {who} of a commit made now",
                    "set user.name and user.email (git config), as git commit needs them",
                )
        return found

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
            message = _first_line(err.decode("utf-8", "replace"))
            raise GitError(message or f"git {args[0]} failed", GIT_HINT)
        return out

    # --- objects (see ObjectReader) -------------------------------------------------------------

    @property
    def oversized(self) -> dict[str, int]:
        """Blobs larger than ``max_blob_bytes`` (id -> size): their contents were never kept."""
        return self.objects.oversized

    def read_blob(self, sha: str) -> bytes | None:
        return self.objects.read_blob(sha)

    def read_object(self, spec: str) -> GitObject | None:
        return self.objects.read_object(spec)

    def ask(self, specs: Iterable[str]) -> None:
        self.objects.ask(specs)

    def tree_entries(self, data: bytes) -> list[TreeEntry]:
        return self.objects.tree_entries(data)


#: The size of a tree object (bytes) from which :meth:`Repository.index_has` answers from the
#: index: about 1,500 entries, where git's look-up of one name starts to cost more than the index's.
LARGE_TREE = 64 * 1024
#: The empty blob's id (SHA-1, SHA-256): also what the index records for an intent-to-add entry.
EMPTY_BLOBS = frozenset(
    {
        "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391",
        "473a0f4c3be8a93681a267e3b1e9a7dcda1185436fe141f7749120a303721813",
    }
)


def _revs(base: Base, head: str) -> bytes:
    """The range as ``git log --stdin`` and ``git rev-list --stdin`` read it: the head, and
    each base excluded."""
    revs = [head]
    if isinstance(base, str):
        revs.append("^" + base)
    elif base:
        revs.extend("^" + b for b in base)
    for rev in revs:
        if not HEX.fullmatch(rev.lstrip("^")):
            raise GitError(f"not a commit id: {rev!r}", RANGE_HINT)
    return "".join(r + "\n" for r in revs).encode("ascii")


def _range_of(parsed: tuple[str | None, str], ids: list[str]) -> tuple[Base, str]:
    base, _ = parsed
    if base is None:
        return None, ids[0]
    if base == "":
        tips = tuple(sorted({i for i in ids[1:] if HEX.fullmatch(i)}))
        return tips or None, ids[0]
    return ids[1], ids[0]


def _popen(
    args: list[str], env: dict[str, str], cwd: Path, **kwargs: Any
) -> subprocess.Popen[bytes]:
    """Start ``git <args>``, with replace refs off (git passes that on to any git it starts)."""
    try:
        return subprocess.Popen([GIT, "--no-replace-objects", *args], env=env, cwd=cwd, **kwargs)
    except OSError as exc:
        raise GitError(f"cannot run git: {exc}", INSTALL_HINT) from None


def _widen(stream: IO[bytes] | None) -> None:
    """Let git write up to _PIPE_BYTES ahead of us (Linux; elsewhere the pipe keeps its size):
    with the default 64 KiB, cat-file stops after a few blobs until they are read, and each
    later answer costs a round of wake-ups."""
    set_size = getattr(fcntl, "F_SETPIPE_SZ", None) if fcntl is not None else None
    if stream is None or set_size is None:
        return
    with contextlib.suppress(OSError):
        fcntl.fcntl(stream.fileno(), set_size, _PIPE_BYTES)


def _stop(process: subprocess.Popen[Any]) -> None:
    """Close our ends of its pipes (git then ends on its own), wait, and kill it if it does not."""
    for stream in (process.stdin, process.stdout):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _batches(
    commits: Iterator[tuple[Commit, list[RawChange]]], prefetch: Callable[[str], object]
) -> Iterator[tuple[list[tuple[Commit, list[RawChange]]], list[str]]]:
    """Commits in groups of up to _BATCH_COMMITS, each with the blob ids of both versions of
    the modified files ``prefetch`` accepts (about BATCH_BLOBS of them at most); a gitlink's
    ids name commits of another repository, not blobs."""
    batch: list[tuple[Commit, list[RawChange]]] = []
    blobs: list[str] = []
    for item in commits:
        batch.append(item)
        for change in item[1]:
            if (
                change.status == "M"
                and prefetch(change.path)
                and GITLINK not in (change.old_mode, change.new_mode)
            ):
                blobs += (change.old_blob or "", change.new_blob or "")
        if len(batch) >= _BATCH_COMMITS or len(blobs) >= BATCH_BLOBS:
            yield batch, blobs
            batch, blobs = [], []
    if batch:
        yield batch, blobs


def _log_failed(stderr: IO[bytes]) -> GitError:
    """The error of a ``git log`` that exited non-zero: the first line it wrote to stderr."""
    stderr.seek(0)
    message = _first_line(stderr.read().decode("utf-8", "replace"))
    return GitError(f"git log failed: {message}", GIT_HINT)


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def _chunks(stream: IO[bytes], chunk_size: int = 1 << 16) -> Iterator[bytes]:
    """The output of a process as it arrives."""
    fd = stream.fileno()
    while chunk := os.read(fd, chunk_size):
        yield chunk
