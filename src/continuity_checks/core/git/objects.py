"""Objects by id or by ``<commit>:<path>``, through one persistent ``git cat-file --batch``,
and the parsing of tree objects.

Requests are written without waiting for their answers, and answers are read in order: the walk
asks for the blobs of a batch of commits while the previous batch is being checked, so that
cat-file works ahead of the rules. Blobs read are kept in a cache bounded by count and bytes,
owned by the reader (and so by the run that opened the repository).
"""

import re
import threading
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from typing import IO, TYPE_CHECKING, NamedTuple

from continuity_checks.core.git.errors import FETCH_HINT, RANGE_HINT, GitError

if TYPE_CHECKING:
    import subprocess

HEX = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")

TREE = "040000"  # the mode of a subtree, as TreeEntry writes it

#: Blob ids one prefetch batch asks for at most.
BATCH_BLOBS = 100
#: Bytes of requests sent and not yet answered, at most (unless one request alone is larger):
#: below 16 KiB, the smallest pipe buffer, so that a write of requests never blocks while
#: cat-file waits for its answers to be read. 200 SHA-256 ids, 317 SHA-1 ids.
_IN_FLIGHT_BYTES = 200 * 65
_CACHE_BYTES = 32 * 1024 * 1024
#: Per entry the cache also holds a key, a bytes object and a dict slot (about 200 bytes): a
#: bound on the count keeps many small blobs from growing it past the byte bound several times.
_CACHE_ITEMS = 4096
_CACHE_ITEM_BYTES = 4 * 1024 * 1024
_DISCARD_CHUNK = 1 << 20
_MISSING = (b" missing\n", b" ambiguous\n")


#: An answer of cat-file: id (``""`` for none), type, size, bytes (None when over the limit).
_Answer = tuple[str, str, int, bytes | None]


class GitObject(NamedTuple):
    """One object: ``type`` is ``blob``, ``tree``, ``commit`` or ``tag``; ``data`` is None when
    ``size`` is over the reader's size limit (the bytes were read from git and dropped)."""

    sha: str
    type: str
    size: int
    data: bytes | None


class TreeEntry(NamedTuple):
    """One entry of a tree object. ``mode`` has six digits (``100644``, ``100755``, ``120000``
    a symlink, ``040000`` a tree, ``160000`` a gitlink); ``name`` is decoded as the log decodes
    paths (bytes that are not UTF-8 as ``\\xNN``), so the two compare equal."""

    mode: str
    name: str
    sha: str


def tree_entries(data: bytes, id_length: int = 20) -> list[TreeEntry]:
    """The entries of a raw tree object: ``<mode> <name>\\0<binary id>`` each, the id
    ``id_length`` bytes long (20 for SHA-1 repositories, 32 for SHA-256)."""
    entries = []
    position, end = 0, len(data)
    try:
        while position < end:
            space = data.index(b" ", position)
            nul = data.index(b"\0", space)
            after = nul + 1 + id_length
            if after > end:
                raise ValueError("truncated id")
            entries.append(
                TreeEntry(
                    data[position:space].decode("ascii").zfill(6),
                    data[space + 1 : nul].decode("utf-8", "backslashreplace"),
                    data[nul + 1 : after].hex(),
                )
            )
            position = after
    except (ValueError, UnicodeDecodeError):
        raise GitError(f"malformed tree object at byte {position}", FETCH_HINT) from None
    return entries


class ObjectReader:
    """Objects through one ``git cat-file --batch``, started on first use by ``start_process``
    and ended by ``stop_process`` in :meth:`close`.

    ``max_bytes``: an object larger than this is never held in memory (its answer is read and
    dropped a chunk at a time); a blob's size is then in :attr:`oversized`.
    """

    def __init__(
        self,
        start_process: "Callable[[], subprocess.Popen[bytes]]",
        stop_process: "Callable[[subprocess.Popen[bytes]], None]",
        max_bytes: int | None = None,
        id_length: int = 20,
    ) -> None:
        self._start_process = start_process
        self._stop_process = stop_process
        self.max_bytes = max_bytes
        self.id_length = id_length
        self.process: subprocess.Popen[bytes] | None = None
        self._in: IO[bytes] | None = None
        self._out: IO[bytes] | None = None
        self._cache: OrderedDict[str, bytes] = OrderedDict()
        self._cached_bytes = 0
        #: Blobs larger than ``max_bytes`` (id -> size): their contents were never kept.
        self.oversized: dict[str, int] = {}
        # requests sent and not answered, oldest first, with the bytes each took on the pipe
        self._asked: deque[tuple[str, int]] = deque()
        self._asked_set: set[str] = set()
        self._asked_bytes = 0
        # one reader of the pipe at a time: a snapshot may be read from several threads (the
        # captures' hashing pool), and an answer read by the wrong thread is lost to the other
        self._lock = threading.RLock()

    def start(self) -> None:
        """Start cat-file now (the walk does, so that it starts while git log works)."""
        if self.process is None:
            self.process = self._start_process()
            self._in, self._out = self.process.stdin, self.process.stdout

    def close(self) -> None:
        process, self.process, self._in, self._out = self.process, None, None, None
        self._asked.clear()  # unanswered requests end with the process
        self._asked_set.clear()
        self._asked_bytes = 0
        if process is not None:
            self._stop_process(process)

    # --- reading --------------------------------------------------------------------------------

    def read_blob(self, sha: str) -> bytes | None:
        """The contents of the blob ``sha``; None when it is larger than ``max_bytes``. A
        GitError when it is not in the repository or not a blob."""
        with self._lock:
            return self._read_blob(sha)

    def _read_blob(self, sha: str) -> bytes | None:
        cached = self._cache.get(sha)
        if cached is not None:
            self._cache.move_to_end(sha)
            return cached
        if sha in self.oversized:
            return None
        if sha not in self._asked_set:  # (what is in flight was checked when it was asked for)
            if not HEX.fullmatch(sha):
                raise GitError(f"not a blob id: {sha!r}", RANGE_HINT)
            self._send([sha])
        _, kind, _, data = self._answer(sha)
        if kind != "blob":
            raise GitError(f"cannot read blob {sha}: not in the repository", FETCH_HINT)
        return data

    def read_object(self, spec: str) -> GitObject | None:
        """The object ``spec`` names: ``<commit-id>:<path>`` (a path at that commit, ``/``
        separated, as the log shows it), or an object id. None when there is no such object.

        cat-file reads one name per line and cannot be asked for a path with a line break, a
        trailing carriage return, or a backslash (the log shows bytes that are not UTF-8 as
        ``\\xNN``, which cat-file would take literally): such a path is looked up through the
        trees instead, one :meth:`tree_entries` per directory, so that every path the log shows
        can be read. A tree larger than ``max_bytes`` on the way ends that lookup with None.
        """
        with self._lock:
            return self._read_object(spec)

    def _read_object(self, spec: str) -> GitObject | None:
        if not spec:
            return None
        if "\\" in spec or "\n" in spec or "\0" in spec or spec.endswith("\r"):
            return self._through_trees(spec)
        cached = self._cache.get(spec)
        if cached is not None:
            self._cache.move_to_end(spec)
            return GitObject(spec, "blob", len(cached), cached)
        size = self.oversized.get(spec)
        if size is not None:
            return GitObject(spec, "blob", size, None)
        if spec not in self._asked_set:
            self._send([spec])
        sha, kind, size, data = self._answer(spec)
        return GitObject(sha, kind, size, data) if sha else None

    def tree_entries(self, data: bytes) -> list[TreeEntry]:
        """:func:`tree_entries` with this repository's id length."""
        return tree_entries(data, self.id_length)

    def request(self, shas: Iterable[str]) -> None:
        """Ask cat-file for the blobs not in memory yet, without waiting for the answers: they
        are read (into the cache) by the next read that needs one of them, or by this method
        when too many requests would be in flight."""
        with self._lock:
            self._request(shas)

    def _request(self, shas: Iterable[str]) -> None:
        wanted = [
            s
            for s in dict.fromkeys(shas)
            if s not in self._cache
            and s not in self._asked_set
            and s not in self.oversized
            and HEX.fullmatch(s)
        ]
        for start in range(0, len(wanted), BATCH_BLOBS):
            self._send(wanted[start : start + BATCH_BLOBS])

    def ask(self, specs: Iterable[str]) -> None:
        """Send the requests for ``specs`` (as :meth:`read_object` takes them) that are not
        answered or in flight yet, without waiting: the reads that follow take their answers in
        one round trip."""
        with self._lock:
            self._ask(specs)

    def _ask(self, specs: Iterable[str]) -> None:
        wanted = [
            s
            for s in dict.fromkeys(specs)
            if s
            and s not in self._cache
            and s not in self._asked_set
            and s not in self.oversized
            and "\\" not in s
            and "\n" not in s
            and "\0" not in s
            and not s.endswith("\r")
        ]
        if wanted:
            self._send(wanted)

    # --- the protocol ---------------------------------------------------------------------------

    def _through_trees(self, spec: str) -> GitObject | None:
        commit, colon, path = spec.partition(":")
        if not colon or not commit or any(c in commit for c in "\\\n\r\0") or "\0" in path:
            return None
        found = self.read_object(commit + "^{tree}")
        for name in path.split("/"):
            if found is None or found.type != "tree" or found.data is None:
                return None
            entry = next((e for e in self.tree_entries(found.data) if e.name == name), None)
            if entry is None:
                return None
            found = self.read_object(entry.sha)
        return found

    def _answer(self, request: str) -> _Answer:
        """Read answers up to the one to ``request`` (earlier ones go to the cache)."""
        while self._asked:
            answer = self._receive()
            if answer[0] == request:
                return answer[1:]
        raise GitError(f"cannot read {request}: git cat-file stopped", FETCH_HINT)

    def _send(self, requests: list[str]) -> None:
        """Write requests, first reading answers while the pipe could not take them all."""
        lines = [r.encode("utf-8", "surrogateescape") + b"\n" for r in requests]
        size = sum(map(len, lines))
        while self._asked and self._asked_bytes + size > _IN_FLIGHT_BYTES:
            self._receive()
        self.start()
        pipe = self._in
        assert pipe is not None
        try:
            pipe.write(b"".join(lines))
            pipe.flush()
        except OSError:
            raise GitError("cannot read objects: git cat-file stopped", FETCH_HINT) from None
        self._asked.extend(zip(requests, map(len, lines), strict=True))
        self._asked_set.update(requests)
        self._asked_bytes += size

    def _receive(self) -> tuple[str, str, str, int, bytes | None]:
        """Read the answer to the oldest request in flight: the request, then the object's id,
        type, size and bytes (None when over the limit); an id of ``""`` when the request names
        no object (missing, ambiguous). Blobs go to the cache. (Plain tuples: prefetched blobs
        go through here one by one, and are only kept.)"""
        request, sent = self._asked.popleft()
        self._asked_set.discard(request)
        self._asked_bytes -= sent
        out = self._out
        assert out is not None  # requests were sent, so the process runs
        try:
            header = out.readline()
            if header.endswith(_MISSING):
                return request, "", "", 0, None
            raw_sha, raw_type, raw_size = header.split()
            sha, size = raw_sha.decode("ascii"), int(raw_size)
            kind = "blob" if raw_type == b"blob" else raw_type.decode("ascii")
            if sha != request and HEX.fullmatch(request):  # an id is answered with itself
                raise ValueError(header)
            limit = self.max_bytes
            if limit is not None and size > limit:
                _discard(out, size + 1)
                if kind == "blob":
                    self.oversized[sha] = size
                return request, sha, kind, size, None
            data = out.read(size + 1)
            if len(data) != size + 1:
                raise ValueError("end of output")
        except (OSError, ValueError):
            raise GitError(
                f"cannot read {request}: unexpected answer from git cat-file", FETCH_HINT
            ) from None
        body = data[:size]
        if kind == "blob":
            self._remember(sha, body)
        return request, sha, kind, size, body

    def _remember(self, sha: str, data: bytes) -> None:
        cache = self._cache
        if len(data) > _CACHE_ITEM_BYTES or sha in cache:
            return
        cache[sha] = data
        self._cached_bytes += len(data)
        while self._cached_bytes > _CACHE_BYTES or len(cache) > _CACHE_ITEMS:
            _, dropped = cache.popitem(last=False)
            self._cached_bytes -= len(dropped)


def _discard(stream: IO[bytes], size: int) -> None:
    """Read and drop ``size`` bytes, a chunk at a time."""
    while size > 0:
        chunk = stream.read(min(size, _DISCARD_CHUNK))
        if not chunk:
            raise ValueError("end of output")
        size -= len(chunk)
