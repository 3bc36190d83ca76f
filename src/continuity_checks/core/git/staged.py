"""What the commit being made holds, as the commit hook sees it: ``HEAD`` and ``MERGE_HEAD``,
what the index changes against ``HEAD``, look-ups of paths in the index, the tree the index
writes, and who would make the commit now."""

from __future__ import annotations

import os
import re
import subprocess
import threading
from datetime import datetime, timedelta, timezone

from continuity_checks.core.git.errors import GIT_HINT, GitError
from continuity_checks.core.git.log import GITLINK, NO_FILE, RawChange, raw_change
from continuity_checks.core.git.objects import HEX
from continuity_checks.core.git.process import Git, stop

#: ``git var GIT_AUTHOR_IDENT``: ``Name <email> 1764540000 +0100``
_IDENT = re.compile(r"(?P<name>.*) <(?P<email>[^<>]*)> (?P<seconds>-?\d+) (?P<offset>[+-]\d{4})")

#: The size of a tree object (bytes) from which :meth:`StagedCommit.index_has` answers from the
#: index: about 1,500 entries, where git's look-up of one name starts to cost more than the index's.
LARGE_TREE = 64 * 1024
#: The empty blob's id (SHA-1, SHA-256): also what the index records for an intent-to-add entry.
EMPTY_BLOBS = frozenset(
    {
        "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391",
        "473a0f4c3be8a93681a267e3b1e9a7dcda1185436fe141f7749120a303721813",
    }
)


class StagedCommit(Git):
    """The commit being made in one repository (see :class:`Git`). The index look-ups go
    through one ``git cat-file --batch-check`` process, started when first needed; ``close``
    ends it."""

    def __init__(self) -> None:
        super().__init__()
        self._index_check: subprocess.Popen[bytes] | None = None  # see in_index
        self._index_pid = 0
        self._index_lock = threading.Lock()

    def close(self) -> None:
        """End the index look-up process."""
        if self._index_check is not None and self._index_pid == os.getpid():
            stop(self._index_check)
        self._index_check = None

    def head(self) -> str | None:
        """The commit ``HEAD`` names, or None on a branch with no commit yet: asked of the index
        look-up process (``HEAD^{commit}``), which the hook starts anyway."""
        answer = self._index_entry("HEAD^{commit}", spec=True)
        fields = [] if answer is None else answer.decode("ascii", "replace").split()
        if len(fields) == 3 and fields[1] == "commit" and HEX.fullmatch(fields[0]):
            return fields[0]
        return None

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
