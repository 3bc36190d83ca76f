"""The repository that contains the root, the range to verify, the walk of its commits, and
where files came from.

A ``verify`` run starts three git processes, whatever the number of commits:

- one ``git rev-parse`` that finds the repository from the root (any directory of the work
  tree), tells whether it is a shallow clone and which object format it uses, and resolves the
  range's revisions (and, for an empty base, the remote-tracking tips);
- one ``git log`` of the whole range (:mod:`.log`);
- one persistent ``git cat-file --batch`` for contents (:mod:`.objects`).

A shard (``verify --shard K/N``) adds one ``git rev-list`` that numbers the range's commits, and
its ``git log`` shows only the shard's commits; a family that remembers earlier commits gets
those before the shard in one more ``git log``, ended as soon as it needs no more. How every
process is started is :mod:`.process`'s; what the commit being made holds, :mod:`.staged`'s.
"""

import contextlib
import os
import subprocess
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from pathlib import Path
from types import TracebackType

from continuity_checks.core.git.errors import (
    FETCH_HINT,
    GIT_HINT,
    RANGE_HINT,
    REPOSITORY_HINT,
    UNKNOWN_REF_HINT,
    GitError,
)
from continuity_checks.core.git.log import (
    GITLINK,
    Commit,
    LogRequest,
    RawChange,
    creation_arguments,
    log_arguments,
    parse_log,
    version_arguments,
)
from continuity_checks.core.git.objects import (
    BATCH_BLOBS,
    HEX,
    GitObject,
    ObjectReader,
    TreeEntry,
)
from continuity_checks.core.git.process import (
    chunks,
    first_line,
    log_failed,
    popen,
    stop,
    widen,
)
from continuity_checks.core.git.staged import StagedCommit

#: What a range excludes: one base commit, several (new-branch push: every remote-tracking
#: tip), or nothing (every commit reachable from HEAD).
Base = str | tuple[str, ...] | None

_ZEROS = frozenset({"0" * 40, "0" * 64})
_BATCH_COMMITS = 128
_ID_BYTES = {"sha1": 20, "sha256": 32}


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


class _Answer:
    """What one ``git rev-parse`` tells of the repository (a plain class: made once a run)."""

    __slots__ = ("git_dir", "ids", "object_format", "shallow", "top")

    def __init__(
        self, git_dir: Path, top: Path | None, shallow: bool, object_format: str, ids: list[str]
    ) -> None:
        self.git_dir = git_dir
        self.top = top  # None outside a work tree (a bare repository)
        self.shallow = shallow
        self.object_format = object_format
        self.ids = ids  # the revisions asked for, resolved, then the remote-tracking tips


class Repository(StagedCommit):
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
        super().__init__()
        parsed = parse_range(revision_range) if revision_range is not None else None
        if not os.path.isdir(root):
            raise GitError(f"not a git repository: {root}", REPOSITORY_HINT)
        answer = self._rev_parse(Path(root), None, revision_range, parsed)
        self.git_dir = answer.git_dir
        self.top = answer.top or answer.git_dir
        self.shallow = answer.shallow
        self.object_format = answer.object_format
        self._resolved: dict[str, tuple[Base, str]] = {}
        if revision_range is not None and parsed is not None:
            self._resolved[revision_range] = _range_of(parsed, answer.ids)
        self.objects = ObjectReader(
            self._start_cat_file,
            stop,
            max_blob_bytes,
            _ID_BYTES.get(answer.object_format, 20),
        )

    # --- life cycle -----------------------------------------------------------------------------

    def __enter__(self) -> "Repository":
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
        super().close()

    def _start_cat_file(self) -> subprocess.Popen[bytes]:
        process = self._popen(
            ["cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,  # a failure shows as a "missing" answer or an end
            bufsize=1 << 16,
        )
        widen(process.stdout)
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
        process = popen(command, self._env, cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err = (stream.decode("utf-8", "replace") for stream in process.communicate())
        lines = out.split("\n")
        inside = lines[1:2] == ["true"]
        ids_from = 5 if inside else 4
        if len(lines) <= ids_from or lines[ids_from - 1] not in _ID_BYTES:
            message = first_line(err)
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
            raise GitError(first_line(err) or "git rev-parse failed", GIT_HINT)
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
        import tempfile  # the walk's stderr: history mode only (see docs/design.md)

        with tempfile.TemporaryFile() as stderr:  # a file: git can never block on it
            process = self._popen(
                log_arguments(request, listed=only is not None),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
            )
            try:
                widen(process.stdout)
                assert process.stdin is not None and process.stdout is not None
                try:
                    process.stdin.write(revs)
                    process.stdin.close()
                except OSError:
                    pass  # git ended at once: its status and stderr tell why
                commits = parse_log(chunks(process.stdout), request)
                if prefetch is None:
                    yield from commits
                else:
                    self.objects.start()  # while git log walks the range
                    yield from self._ahead(_batches(commits, prefetch))
                if process.wait() != 0:
                    raise log_failed(stderr)
            finally:
                stop(process)

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

    def count(self, base: Base, head: str) -> int:
        """How many commits :meth:`walk` gives for the range: one more git process, asked only
        when a progress display wants the total."""
        out = self._output(["rev-list", "--count", "--stdin"], stdin=_revs(base, head))
        text = out.decode("ascii", "replace").strip()
        if not text.isdigit():
            raise GitError(f"git rev-list --count gave {text!r}", GIT_HINT)
        return int(text)

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
        arguments = creation_arguments(request, listed=not walk)
        # pipes: git reads the whole request before it writes to stdout, and writes to stderr
        # only the few lines of a complaint before it ends, which the pipe holds unread
        process = self._popen(
            arguments, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        try:
            assert process.stdin is not None and process.stdout is not None
            try:
                text = "".join(line + "\n" for line in lines)
                process.stdin.write(text.encode("utf-8", "surrogateescape"))
                process.stdin.close()
            except OSError:
                pass  # git ended at once: its status and stderr tell why
            remaining = set(wanted)
            # eager: git flushes each commit it finds; stop it once every path is found
            boundary = self._shallow_commits()
            for commit, changes in parse_log(chunks(process.stdout), request, eager=True):
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
                raise log_failed(process.stderr)
        finally:
            stop(process)
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
