"""The ``git log`` of a range: its arguments, built from what the families ask for, and the
streaming parser of its output.

One pass gives everything history mode needs of every commit: id, parents, the trailers and
fields asked for, the subject, and the raw diff against the first parent, whose lines carry both
object ids of each change (so contents are fetched by id, with no lookup per commit).
"""

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

from continuity_checks.core.frozen import Frozen
from continuity_checks.core.git.errors import GIT_HINT, GitError

#: Commit fields a family may ask for, and git's placeholder for each: names and addresses as
#: recorded in the commit (no ``.mailmap``), dates in strict ISO 8601.
FIELDS: Mapping[str, str] = MappingProxyType(
    {
        "author_name": "%an",
        "author_email": "%ae",
        "author_date": "%aI",
        "committer_name": "%cn",
        "committer_email": "%ce",
        "committer_date": "%cI",
        "message": "%B",  # the whole message, for a family that requires a single line
    }
)

NO_FILE = "000000"  # the mode of a side that does not exist
GITLINK = "160000"  # a submodule or nested repository: its id names a commit of another repository

#: Trailer keys are spliced into ``--format``: letters, digits and dashes only, as real keys are.
_TRAILER_KEY = r"[A-Za-z0-9][A-Za-z0-9-]*"
_TRAILER_SEPARATOR = "\x1f"
_EMPTY: Mapping[str, Any] = MappingProxyType({})


class Commit(NamedTuple):
    """One commit of the range. ``trailers`` maps each trailer key the log was asked for (as
    asked) to its values, for the keys that have any; ``fields`` holds the commit fields asked
    for (:data:`FIELDS`)."""

    sha: str
    parents: tuple[str, ...]
    subject: str
    trailers: Mapping[str, tuple[str, ...]] = _EMPTY
    fields: Mapping[str, str] = _EMPTY

    @property
    def is_merge(self) -> bool:
        return len(self.parents) > 1


class RawChange(NamedTuple):
    """One path a commit changed against its first parent: ``A`` added, ``M`` modified (also a
    type change), ``D`` deleted.

    ``old_blob``/``new_blob`` are the object ids of the two sides and ``old_mode``/``new_mode``
    git's modes; an absent side has None and ``""``. A gitlink (mode 160000) is reported only
    when the log was asked for gitlinks; its id then names a commit of another repository, which
    cannot be read here. Otherwise a gitlink side counts as absent, so a path that is a gitlink
    on both sides is not reported at all.
    """

    path: str
    status: str
    old_blob: str | None
    new_blob: str | None
    old_mode: str
    new_mode: str


class LogRequest(Frozen):
    """What the log must carry for each commit, beyond id, parents, subject and changes:
    ``trailers``, keys whose values each commit carries (git matches keys case-insensitively);
    ``fields``, names from :data:`FIELDS`; ``gitlinks``, whether gitlink entries (submodules,
    nested repositories) are reported. A key that is not a trailer key, or is given twice, and
    an unknown field raise ``ValueError``."""

    _fields = (
        "trailers",
        "fields",
        "gitlinks",
    )
    __slots__ = _fields
    trailers: tuple[str, ...]
    fields: frozenset[str]
    gitlinks: bool

    def __init__(
        self,
        trailers: tuple[str, ...] = (),
        fields: frozenset[str] = frozenset(),
        gitlinks: bool = False,
    ) -> None:
        seen: set[str] = set()
        for key in trailers:
            if not re.fullmatch(_TRAILER_KEY, key) or key.lower() in seen:
                raise ValueError(f"not a trailer key, or given twice: {key!r}")
            seen.add(key.lower())
        unknown = set(fields) - set(FIELDS)
        if unknown:
            raise ValueError(f"unknown commit fields {sorted(unknown)}; known: {sorted(FIELDS)}")
        self._set(trailers, fields, gitlinks)

    def union(self, other: "LogRequest") -> "LogRequest":
        """A request that gives what either asks for (several families share one log)."""
        known = {key.lower() for key in self.trailers}
        extra = tuple(k for k in other.trailers if k.lower() not in known)
        return LogRequest(
            self.trailers + extra, self.fields | other.fields, self.gitlinks or other.gitlinks
        )

    def format(self) -> str:
        """The ``--format`` value: NUL-separated tokens, the subject last (it has no NUL)."""
        trailers = [f"%(trailers:key={k},valueonly,unfold,separator=%x1f)" for k in self.trailers]
        fields = [FIELDS[name] for name in sorted(self.fields)]
        return "tformat:" + "%x00".join(["%H", "%P", *trailers, *fields, "%s"])


# every path's bytes (``-z``), full blob ids, and a rename as a deletion and an addition
_RAW = ("-z", "--raw", "--no-abbrev", "--no-renames")


def _plain(request: LogRequest) -> list[str]:
    """The options that keep user configuration out of the output, the format, and revisions
    read from stdin."""
    return [
        "--no-color",
        "--no-show-signature",
        "--no-mailmap",
        "--encoding=UTF-8",
        f"--format={request.format()}",
        "--stdin",
    ]


def log_arguments(request: LogRequest, listed: bool = False) -> list[str]:
    """The ``git log`` command after git's global options; the revisions go to its stdin.

    Oldest first, parents before children; with ``listed``, the stdin lists the very commits
    to show, in the order to show them (a shard of a range), and git walks nothing; ``-z`` so
    that any byte of a path survives;
    ``--no-renames`` so that a rename is a deletion and an addition (a freeze is one); merges
    diffed against their first parent only, so that a merge answers for everything it brings
    into the mainline; the rest keeps user configuration out of the output.
    """
    return [
        "log",
        *_RAW,
        "--diff-merges=first-parent",
        "--root",
        *(["--no-walk=unsorted"] if listed else ["--reverse", "--topo-order"]),
        *_plain(request),
    ]


def creation_arguments(request: LogRequest, listed: bool = False) -> list[str]:
    """The ``git log`` that finds, for paths named on its stdin (after the revisions and a
    ``--`` line), the commits that added them: newest first (git's default order, so that the
    reader can stop at the last path found without git walking all of history first), each
    commit's additions of those paths as raw entries. History simplification follows a merge's
    parent that already had the file, so an addition made on a side branch is found at the
    commit that made it, not at the merge that brought it in (``--diff-merges=first-parent``
    would show the merge's addition against its first parent, and keep the merge). A merge
    shows no changes, so a file that a merge added itself (neither parent had it) is not
    found. With ``listed``, only the commits named on stdin, in that order, not their
    ancestors."""
    return [
        "--literal-pathspecs",  # a path is a path, never a glob or a pathspec magic
        "log",
        *(["--no-walk=unsorted"] if listed else []),
        *_RAW,
        "--diff-filter=A",
        *_plain(request),
    ]


def version_arguments(limit: int) -> list[str]:
    """The ``git log`` that lists, newest first, the last ``limit`` commits (reachable from the
    revision on its stdin) that changed the path named after its ``--`` line, each with its raw
    change of that path."""
    return ["--literal-pathspecs", "log", f"--max-count={limit}", *_RAW, *_plain(LogRequest())]


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "backslashreplace")


def parse_log(
    chunks: Iterable[bytes], request: LogRequest | None = None, *, eager: bool = False
) -> Iterator[tuple[Commit, list[RawChange]]]:
    """Commits and their raw changes from the output of ``git log`` with
    :func:`log_arguments` (``request``, the same as for the arguments), given in chunks of any
    size.

    With ``eager``, the changes of a commit are yielded as soon as they have arrived (the same
    commit may come again with more of them), so that a reader who has what it needs can stop
    git before the next commit's header arrives; commits without changes are not yielded.

    The output is a sequence of NUL-terminated tokens. A commit starts with a fixed number of
    header tokens (its id first); each raw entry is a token starting with ``:`` followed by one
    path token; empty tokens between commits are separators. The complete tokens of a chunk are
    decoded together (a NUL is never part of a UTF-8 sequence, so each token decodes as it would
    alone); bytes that are not UTF-8 become ``\\xNN``.
    """
    request = request or LogRequest()
    header = 3 + len(request.trailers) + len(request.fields)
    make_commit = _commit_maker(request)
    absent = (NO_FILE,) if request.gitlinks else (NO_FILE, GITLINK)
    commit: Commit | None = None
    changes: list[RawChange] = []
    tokens: list[str] = []  # complete tokens not used yet
    rest = b""  # the start of a token whose NUL has not arrived yet
    for final, chunk in _with_end(chunks):
        if final:
            tokens += [_text(rest)] if rest else []
            tokens += [""] * header  # a truncated header (git failed: walk raises) completes
        else:
            data = rest + chunk
            cut = data.rfind(b"\0")
            if cut < 0:
                rest = data
                continue
            tokens += _text(data[:cut]).split("\0")
            rest = data[cut + 1 :]
        i, n = 0, len(tokens) - (header if final else 0)
        while i < n:
            token = tokens[i]
            if token[:1] == "\n":  # the line break git puts between a header and its entries
                token = token.lstrip("\n")
            if commit is not None and token[:1] == ":":
                if i + 2 > len(tokens):
                    break  # the path has not arrived yet
                change = raw_change(token, tokens[i + 1], absent)
                if change is not None:
                    changes.append(change)
                i += 2
            elif not token:
                i += 1
            elif i + header > len(tokens):
                break  # the header has not arrived in full yet
            else:
                if commit is not None and (changes or not eager):
                    yield commit, changes
                commit = make_commit(token, tokens, i + 1)
                changes = []
                i += header
        del tokens[:i]
        if eager and commit is not None and changes:
            yield commit, changes
            changes = []
    if commit is not None and (changes or not eager):
        yield commit, changes


def _with_end(chunks: Iterable[bytes]) -> Iterator[tuple[bool, bytes]]:
    for chunk in chunks:
        yield False, chunk
    yield True, b""


def _commit_maker(request: LogRequest) -> Callable[[str, list[str], int], Commit]:
    """A function making a :class:`Commit` from its id and the header tokens that follow it."""
    keys = request.trailers
    names = sorted(request.fields)
    n_keys, n_names = len(keys), len(names)

    def make(sha: str, tokens: list[str], start: int) -> Commit:
        trailers = _EMPTY
        if n_keys:
            found: dict[str, tuple[str, ...]] = {}
            for key, raw in zip(keys, tokens[start + 1 : start + 1 + n_keys], strict=True):
                if raw:
                    values = tuple(filter(None, map(str.strip, raw.split(_TRAILER_SEPARATOR))))
                    if values:
                        found[key] = values
            if found:
                trailers = found
        fields = _EMPTY
        if n_names:
            first = start + 1 + n_keys
            fields = dict(zip(names, tokens[first : first + n_names], strict=True))
        subject = tokens[start + 1 + n_keys + n_names]
        return Commit(sha, tuple(tokens[start].split()), subject, trailers, fields)

    return make


def raw_change(meta: str, path: str, absent: tuple[str, ...]) -> RawChange | None:
    """One raw diff entry, ``:<old mode> <new mode> <old id> <new id> <status>``; None when
    neither side is a file that was asked for. Anything else is not what the arguments ask git
    for: an error, never a change skipped in silence."""
    fields = meta.split()
    if len(fields) != 5 or fields[0][:1] != ":" or fields[0][1:2] == ":":
        raise GitError(f"unexpected output from git log: {meta!r}", GIT_HINT)
    old_mode = fields[0][1:]
    new_mode = fields[1]
    old: str | None = fields[2]
    new: str | None = fields[3]
    if old_mode in absent:
        old, old_mode = None, ""
    if new_mode in absent:
        new, new_mode = None, ""
    if old is None:
        if new is None:
            return None
        status = "A"
    else:
        status = "M" if new is not None else "D"
    return RawChange(path, status, old, new, old_mode, new_mode)
