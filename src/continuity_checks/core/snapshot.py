"""What a family may read: one confined, read-only view of a tree, in both modes.

File mode builds a :class:`WorkTree` over the checked root; history mode builds a
:class:`CommitTree` over a commit's tree (read through the run's one ``git cat-file`` process).
Both answer the same questions with root-relative ``/`` paths, and both refuse the same things:
a path that is absolute or climbs with ``..``, a symlink that leads out of the root, anything
larger than the size limit, anything that is not a regular file where bytes are asked for. A
refusal is an :class:`Unreadable` — a finding waiting for the place to report it — never an
``OSError``, so no file a family reads (a manifest entry, a pointer in a record) can make the
tool read outside the root or raise.
"""

from __future__ import annotations

import os
import posixpath
import stat
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from continuity_checks.core import core_rules as cc
from continuity_checks.core.committed import UNTRACKED, Committed
from continuity_checks.core.lookups import Alike, Known

# the path rules of every snapshot, also imported from here by the families
from continuity_checks.core.paths import Unreadable as Unreadable
from continuity_checks.core.paths import confine as confine

if TYPE_CHECKING:
    from continuity_checks.core import hashing
    from continuity_checks.core.git.objects import GitObject

_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_NONBLOCK", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_OPEN_NOFOLLOW = _OPEN_FLAGS | _NOFOLLOW
_CHUNK = 64 * 1024
_SYMLINK_HOPS = 40  # as the kernel's limit: more is a loop
_SYMLINK = "120000"
_TREE = "040000"
_GITLINK = "160000"


class Snapshot(ABC):
    """A read-only view of one tree. Paths are root-relative with ``/``; every method refuses
    what :func:`confine` refuses. ``commit`` is the commit whose tree this is (history mode);
    ``root`` the absolute directory it is checked in (None: a tree of git objects)."""

    commit: str | None = None
    root: Path | None = None

    def __init__(self, limit: int) -> None:
        self.limit = limit

    @abstractmethod
    def read(self, path: str) -> bytes | Unreadable:
        """The bytes of the regular file at ``path`` (at most ``limit`` of them)."""

    @abstractmethod
    def size(self, path: str) -> int | Unreadable:
        """The size of the regular file at ``path``, without reading it."""

    @abstractmethod
    def sha256(self, path: str) -> hashing.Digest | Unreadable:
        """The SHA-256 of the regular file at ``path``, streamed."""

    @abstractmethod
    def list(self, directory: str) -> list[str] | Unreadable:
        """The names in ``directory``, sorted (``""`` is the root)."""

    @abstractmethod
    def exists(self, path: str) -> bool:
        """Whether there is anything at ``path`` (a file, a directory, a symlink)."""

    @abstractmethod
    def is_dir(self, path: str) -> bool:
        """Whether ``path`` is a directory inside the root."""

    @abstractmethod
    def resolve(self, path: str) -> str | Unreadable:
        """Where ``path`` really is: its root-relative path once every symlink on the way is
        followed (inside the root; one leading out is refused). A file that names another by a
        relative path can check that the target stays where it must (inside its directory)."""

    def find(self, skip: Collection[str], endings: tuple[str, ...] | None) -> Iterator[str]:
        """Every path under the root that is not a directory (a file, a symlink, a submodule)
        and whose name ends with one of ``endings`` in any case (any name, with None), in no
        set order.
        Directories named in ``skip`` are not entered, nor one reached through a symlink (a
        commit records a symlink, never the files seen through it). The whole tree is walked
        here; a snapshot that can rule out a directory from its raw listing does it faster."""
        lowered = None if endings is None else tuple(e.lower() for e in endings)
        for path in self.files_under("", skip):
            if lowered is None or path.rpartition("/")[2].lower().endswith(lowered):
                yield path

    def files_under(self, directory: str, skip: Collection[str] = ()) -> Iterator[str]:
        """Every path under ``directory`` that is not a directory, walked as :meth:`find`
        walks the root (no directory named in ``skip``, none reached through a symlink)."""
        pending = [directory]
        while pending:
            directory = pending.pop()
            names = self.list(directory)
            if isinstance(names, Unreadable):
                continue  # gone, or the empty tree of a root commit's parent
            for name in names:
                path = f"{directory}/{name}" if directory else name
                if self.is_dir(path):
                    if name not in skip and self.resolve(path) == path:
                        pending.append(path)
                else:
                    yield path

    def root_name(self) -> tuple[str, str | None]:
        """The name of the directory this tree is checked in, and where that name leads when it
        is a symlink (absolute; None when it is not one). A tree of git objects has no
        directory of its own: ``("", None)``."""
        return "", None

    def _too_large(self, path: str, size: int | None = None) -> Unreadable:
        found = "more" if size is None else str(size)
        return Unreadable(path, cc.TOO_LARGE, f"expected at most {self.limit} bytes, found {found}")


# --- the work tree ------------------------------------------------------------------------------


DIRS_KEPT = 256  # directories a WorkTree remembers as inside the root (see _dir_inside)


def _marks(endings: tuple[str, ...]) -> tuple[bytes, ...]:
    """What ends a tree entry's name with one of ``endings``, in lower case, none that another
    one ends with: the bytes :meth:`CommitTree.find` looks for in a tree object made lower
    case, one search of it each."""
    lowered = {e.lower().encode() + b"\0" for e in endings}
    return tuple(m for m in lowered if not any(o != m and m.endswith(o) for o in lowered))


class WorkTree(Snapshot):
    """The files under ``root`` as they are on disk (file mode).

    Symlinks are followed only while they stay inside the root: every directory a path passes
    through is checked (a cache this object owns, of the last DIRS_KEPT directories at most:
    files come a directory at a time, and a cache of every directory of a large tree would grow
    with it), and a symlinked file is read only when its target is inside the root. A FIFO
    never blocks a read (non-blocking open, then the file type decides).
    """

    def __init__(
        self,
        root: Path,
        limit: int,
        given: Mapping[str, bytes] | None = None,
        committed: Committed | None = None,
    ) -> None:
        super().__init__(limit)
        # files whose bytes the run was given (standard input's): read as those, by whoever
        # reads them (a family's cross-file check, a session judged in another process)
        self._given = given if given is not None else {}
        # the commit hook's view: files the commit being made will not hold are not there
        self._committed = committed
        self.root: Path = Path(os.path.abspath(root))
        self._prefix = os.path.join(self.root, "")  # the root and a separator: prefix + rel
        self._real_root = os.path.realpath(self.root)
        self._inside: dict[str, bool] = {"": True}

    def root_name(self) -> tuple[str, str | None]:
        # the root as the user named it: abspath keeps a symlink's own name (realpath would not)
        name = os.path.basename(str(self.root))
        return name, os.path.realpath(self.root) if os.path.islink(self.root) else None

    def _within(self, real: str) -> bool:
        return real == self._real_root or real.startswith(self._real_root.rstrip(os.sep) + os.sep)

    def _dir_inside(self, directory: str) -> bool:
        known = self._inside.get(directory)
        if known is None:
            # realpath, not Path.resolve: a symlink loop must not raise (it does on 3.10-3.12)
            known = self._within(os.path.realpath(os.path.join(self.root, directory)))
            if len(self._inside) >= DIRS_KEPT:
                self._inside = {"": True}  # emptied, not evicted one by one: cheaper per hit
            self._inside[directory] = known
        return known

    def _locate(self, path: str) -> str | Unreadable:
        """The absolute path to open for ``path``, once its directories are known to be inside
        the root."""
        rel = confine(path)
        if isinstance(rel, Unreadable):
            return rel
        directory = rel.rpartition("/")[0]
        # the cache's answer without a call (the common case: a directory met before)
        if not (self._inside.get(directory) or self._dir_inside(directory)):
            return Unreadable(
                path,
                cc.UNREADABLE,
                "expected a file inside the checked root, found a path through a symlinked "
                "directory that leads outside it",
            )
        full = self._prefix + rel
        if (
            self._committed is not None
            and rel
            and self._committed.hides(rel)
            and not os.path.isdir(full)
        ):
            return Unreadable(path, cc.UNREADABLE, UNTRACKED)
        return full

    def open_file(self, path: str) -> int | Unreadable:
        full = self._locate(path)
        if isinstance(full, Unreadable):
            return full
        try:
            return os.open(full, _OPEN_NOFOLLOW)
        except OSError as exc:
            return self._not_opened(path, full, exc)

    def _not_opened(self, path: str, full: str, error: OSError) -> int | Unreadable:
        """:meth:`open_file` of ``path`` (at ``full``) where opening it without following a
        symlink failed with ``error``: a symlink inside the root to a regular file is opened,
        anything else refused."""
        try:
            if not os.path.islink(full):
                raise error
            real = os.path.realpath(full)
            if not self._within(real):
                return Unreadable(
                    path,
                    cc.UNREADABLE,
                    "expected a file inside the checked root, found a symlink leading outside it",
                )
            if not os.path.isfile(real):
                reason = "a symlink loop" if os.path.islink(real) else "a dangling symlink"
                if os.path.exists(real):
                    reason = "a symlink to something that is not a regular file"
                return Unreadable(path, cc.UNREADABLE, f"cannot read: {reason}")
            return os.open(real, _OPEN_FLAGS)
        except IsADirectoryError:
            return Unreadable(path, cc.UNREADABLE, "expected a regular file, found a directory")
        except OSError as exc:
            return Unreadable(path, cc.UNREADABLE, f"cannot read: {exc.strerror or exc}")

    def read(self, path: str) -> bytes | Unreadable:
        if self._given:
            given = self._given.get(path)
            if given is not None:
                return given
        fd = self.open_file(path)
        if isinstance(fd, Unreadable):
            return fd
        try:
            data = os.read(fd, _CHUNK)
            # A short first read is the whole of a small regular file (the common case, one
            # system call); a full or empty one needs the file type before reading on.
            if len(data) == _CHUNK or not data:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    return Unreadable(path, cc.UNREADABLE, "expected a regular file")
                chunks = [data]
                size = len(data)
                while data and size <= self.limit:
                    data = os.read(fd, _CHUNK)
                    chunks.append(data)
                    size += len(data)
                data = b"".join(chunks)
        except OSError as exc:
            return Unreadable(path, cc.UNREADABLE, f"cannot read: {exc.strerror or exc}")
        finally:
            os.close(fd)
        if len(data) > self.limit:
            return self._too_large(path)
        return data

    def size(self, path: str) -> int | Unreadable:
        fd = self.open_file(path)
        if isinstance(fd, Unreadable):
            return fd
        try:
            info = os.fstat(fd)
        finally:
            os.close(fd)
        if not stat.S_ISREG(info.st_mode):
            return Unreadable(path, cc.UNREADABLE, "expected a regular file")
        return info.st_size

    def sha256(self, path: str) -> hashing.Digest | Unreadable:
        from continuity_checks.core import hashing  # (hashlib: not for every commit hook)

        fd = self.open_file(path)
        if isinstance(fd, Unreadable):
            return fd
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return Unreadable(path, cc.UNREADABLE, "expected a regular file")
            return hashing.sha256_fd(fd, limit=self.limit)
        except hashing.TooLarge:
            return self._too_large(path)
        except OSError as exc:
            return Unreadable(path, cc.UNREADABLE, f"cannot read: {exc.strerror or exc}")
        finally:
            os.close(fd)

    def list(self, directory: str) -> list[str] | Unreadable:
        rel = confine(directory)
        if isinstance(rel, Unreadable):
            return rel
        if not self._dir_inside(rel):
            return Unreadable(
                directory,
                cc.UNREADABLE,
                "expected a directory inside the checked root, found a symlink leading outside it",
            )
        try:
            return sorted(os.listdir(os.path.join(self.root, rel)))  # (no DirEntry each)
        except OSError as exc:
            return Unreadable(
                directory or ".", cc.UNREADABLE, f"cannot list: {exc.strerror or exc}"
            )

    def exists(self, path: str) -> bool:
        full = self._locate(path)
        return not isinstance(full, Unreadable) and os.path.lexists(full)

    def is_dir(self, path: str) -> bool:
        full = self._locate(path)
        if isinstance(full, Unreadable) or not os.path.isdir(full):
            return False
        return not os.path.islink(full) or self._within(os.path.realpath(full))

    def resolve(self, path: str) -> str | Unreadable:
        full = self._locate(path)
        if isinstance(full, Unreadable):
            return full
        real = os.path.realpath(full)
        if not self._within(real):
            return Unreadable(
                path,
                cc.UNREADABLE,
                "expected a path inside the checked root, found a symlink leading outside it",
            )
        if not os.path.lexists(real):
            return Unreadable(path, cc.UNREADABLE, "not found")
        rel = os.path.relpath(real, self._real_root)
        return "" if rel == "." else rel.replace(os.sep, "/")


# --- a commit's tree ----------------------------------------------------------------------------


class ObjectSource(Protocol):
    """What a :class:`CommitTree` needs of the run's git object reader."""

    def read_object(self, spec: str) -> GitObject | None: ...

    def ask(self, specs: Iterable[str]) -> None:
        """Request ``specs`` ahead of the reads that need them (or do nothing)."""


class CommitTree(Snapshot):
    """The files of one commit (history mode), read through the run's ``git cat-file`` process;
    ``commit`` None is the empty tree (what a root commit's first parent would be).

    Paths are resolved one tree at a time, so a symlink is seen as one (its target is followed
    while it stays inside the root, as in the work tree) and a submodule is not a file. Trees are
    kept for the life of the snapshot; blobs are left to the reader's own bounded cache.
    """

    def __init__(
        self,
        objects: ObjectSource,
        commit: str | None,
        limit: int,
        known: Known | None = None,
        alike: Alike | None = None,
        index: Callable[[str], bool | None] | None = None,
    ) -> None:
        super().__init__(limit)
        self.commit = commit
        self._objects = objects
        self._alike = alike  # what this tree and its parent's (or child's) answer alike
        #: whether this tree has an entry at a path, from the index (None: ask the tree)
        self._index = index
        self._trees: dict[str, dict[str, tuple[str, str]] | Unreadable] = {}
        #: what :meth:`exists` and :meth:`_blob` answered, maybe carried from the parent's tree
        known = known if known is not None and known.at == commit else Known()
        self._known, self._blobs, self._dirs = known.answers, known.blobs, known.dirs
        self._listings, self._misses = known.listings, known.misses

    def _tree(self, directory: str) -> dict[str, tuple[str, str]] | Unreadable:
        """``name -> (mode, id)`` of the directory at ``directory`` (already resolved)."""
        found = self._trees.get(directory)
        if found is not None:
            return found
        if self.commit is None:
            result: dict[str, tuple[str, str]] | Unreadable = Unreadable(
                directory, cc.UNREADABLE, "not in this commit"
            )
        else:
            obj = self._objects.read_object(self._spec(directory))
            if obj is None:
                result = Unreadable(directory, cc.UNREADABLE, "not in this commit")
            elif obj.type != "tree" or obj.data is None:
                result = Unreadable(directory, cc.UNREADABLE, "expected a directory")
            else:
                from continuity_checks.core.git.objects import tree_entries  # history mode only

                entries = tree_entries(obj.data, len(self.commit) // 2)
                result = {e.name: (e.mode, e.sha) for e in entries}
        self._trees[directory] = result
        return result

    def _resolve(self, path: str, follow_last: bool = True) -> tuple[str, str, str] | Unreadable:
        """``(resolved path, mode, object id)`` of ``path``, following symlinks inside the root."""
        rel = confine(path)
        if isinstance(rel, Unreadable):
            return rel
        if not rel:
            if self.commit is None:
                return Unreadable(path, cc.UNREADABLE, "not in this commit")
            return "", _TREE, f"{self.commit}^{{tree}}"
        pending = rel.split("/")
        done: list[str] = []
        hops = 0
        while pending:
            name = pending.pop(0)
            tree = self._tree("/".join(done))
            if isinstance(tree, Unreadable):
                return Unreadable(path, cc.UNREADABLE, "not in this commit")
            entry = tree.get(name)
            if entry is None:
                # past a symlink the path is where it leads, as the work tree reads it
                missing = "cannot read: a dangling symlink" if hops else "not in this commit"
                return Unreadable(path, cc.UNREADABLE, missing)
            mode, sha = entry
            if mode == _SYMLINK and (pending or follow_last):
                hops += 1
                if hops > _SYMLINK_HOPS:
                    return Unreadable(path, cc.UNREADABLE, "cannot read: a symlink loop")
                target = self._objects.read_object(sha)
                if target is None or target.data is None:
                    return Unreadable(path, cc.UNREADABLE, "cannot read: a dangling symlink")
                text = target.data.decode("utf-8", "surrogateescape")
                joined = posixpath.join("/".join(done), text)
                resolved = confine(joined) if not text.startswith("/") else None
                if resolved is None or isinstance(resolved, Unreadable):
                    return Unreadable(
                        path,
                        cc.UNREADABLE,
                        "expected a file inside the checked root, found a symlink leading "
                        "outside it",
                    )
                pending = [p for p in resolved.split("/") if p] + pending
                done = []
                continue
            if pending and mode != _TREE:
                missing = "cannot read: a dangling symlink" if hops else "not in this commit"
                return Unreadable(path, cc.UNREADABLE, missing)
            done.append(name)
            if not pending:
                return "/".join(done), mode, sha
        return Unreadable(path, cc.UNREADABLE, "not in this commit")  # pragma: no cover

    def _blob(self, path: str) -> tuple[str, str] | Unreadable:
        """``(id, mode)`` of the regular file at ``path``."""
        known = self._blobs.get(path)
        if known is None:
            known, literal = self._find_blob(path)
            if literal:  # one found through a symlink changes with what it leads to
                self._blobs[path] = known
        return known

    def _find_blob(self, path: str) -> tuple[tuple[str, str] | Unreadable, bool]:
        """The blob, and whether it was found at ``path`` itself (no symlink on the way)."""
        found = self._resolve(path)
        if isinstance(found, Unreadable):
            return found, False
        resolved, mode, sha = found
        if mode == _TREE:
            return Unreadable(
                path, cc.UNREADABLE, "expected a regular file, found a directory"
            ), False
        if mode == _GITLINK:
            return Unreadable(
                path, cc.UNREADABLE, "expected a regular file, found a submodule"
            ), False
        return (sha, mode), resolved == path

    def read(self, path: str) -> bytes | Unreadable:
        blob = self._blob(path)
        if isinstance(blob, Unreadable):
            return blob
        obj = self._objects.read_object(blob[0])
        if obj is None:
            return Unreadable(path, cc.UNREADABLE, "not in the repository")
        if obj.data is None:
            return self._too_large(path, obj.size)
        return obj.data

    def size(self, path: str) -> int | Unreadable:
        blob = self._blob(path)
        if isinstance(blob, Unreadable):
            return blob
        obj = self._objects.read_object(blob[0])
        return Unreadable(path, cc.UNREADABLE, "not in the repository") if obj is None else obj.size

    def sha256(self, path: str) -> hashing.Digest | Unreadable:
        from continuity_checks.core import hashing

        data = self.read(path)
        if isinstance(data, Unreadable):
            return data
        return hashing.sha256_bytes(data)

    def find(self, skip: Collection[str], endings: tuple[str, ...] | None) -> Iterator[str]:
        """As :meth:`Snapshot.find`, from the tree objects themselves: a directory's raw tree
        is parsed only when it holds a subtree or a name with one of the ``endings`` (a few
        substring searches of its bytes), so that a directory of 100,000 deltas costs a
        search of its tree object, not 100,000 entries made and looked at in Python."""
        if self.commit is None:
            return
        from continuity_checks.core.git.objects import TREE, tree_entries  # history mode only

        marks = None if endings is None else _marks(endings)
        lowered = None if endings is None else tuple(e.lower() for e in endings)
        id_length = len(self.commit) // 2
        pending = [("", f"{self.commit}^{{tree}}")]
        while pending:
            directory, spec = pending.pop()
            obj = self._objects.read_object(spec)
            if obj is None or obj.type != "tree" or obj.data is None:
                continue
            data = obj.data
            # every subtree entry starts with its mode "40000 "; a name may hold it too, and the
            # marks match in any case (a needless parse, never a missed file)
            if marks is not None and b"40000 " not in data:
                folded = data.lower()
                if not any(m in folded for m in marks):
                    continue
            prefix = f"{directory}/" if directory else ""
            for entry in tree_entries(data, id_length):
                if entry.mode == TREE:
                    if entry.name not in skip:
                        pending.append((prefix + entry.name, entry.sha))
                elif lowered is None or entry.name.lower().endswith(lowered):
                    path = prefix + entry.name
                    if entry.mode != _SYMLINK or not self.is_dir(path):
                        yield path  # a symlink to a directory is neither entered nor a file

    def list(self, directory: str) -> list[str] | Unreadable:
        found = self._resolve(directory)
        if isinstance(found, Unreadable):
            return found
        resolved, mode, _ = found
        if mode != _TREE:
            return Unreadable(directory, cc.UNREADABLE, "expected a directory")
        tree = self._tree(resolved)
        return tree if isinstance(tree, Unreadable) else sorted(tree)

    def exists(self, path: str) -> bool:
        """Whether ``path`` names an entry (a symlink itself counts). In a directory not read
        yet, git looks the last name up (``<tree id>:<name>``), so that asking for one name in
        a directory of 100,000 does not parse all of them; a submodule there counts as absent,
        as it holds no file."""
        known = self._known.get(path)
        if known is not None:
            return known
        alike = self._alike if self._alike is not None and self._alike.untouched(path) else None
        known = None if alike is None else alike.answers.get(path)
        if known is None:
            known, literal = self._exists(path)
            if not literal:  # an answer found through a symlink changes with what it leads to
                return known
            if alike is not None:
                alike.answers[path] = known
        self._known[path] = known
        return known

    def _exists(self, path: str) -> tuple[bool, bool]:
        """Whether ``path`` exists, and whether that was found without a symlink on the way."""
        rel = confine(path)
        if isinstance(rel, Unreadable) or self.commit is None:
            return False, False
        names = rel.split("/")
        if rel and rel.rpartition("/")[0] not in self._trees and "\n" not in rel:
            # the directories on the way (none when is_dir knows the path's directory) and the
            # path, in one round trip: git answers when each one is a directory, no symlink
            depth = 0 if self._dirs.get(rel.rpartition("/")[0]) else len(names) - 1
            above = ["/".join(names[:i]) for i in range(depth)]
            itself = [] if self._index is not None else [f"{self.commit}:{rel}"]
            if above:  # the path alone is asked below
                self._objects.ask([*(self._spec(d) for d in above), *itself])
            for directory, name in zip(above, names, strict=False):
                tree = self._tree(directory)
                entry = None if isinstance(tree, Unreadable) else tree.get(name)
                if entry is None:
                    return False, True
                if entry[0] != _TREE:
                    break  # a symlink on the way: resolved below, as the work tree would
            else:
                indexed = None if self._index is None else self._index(rel)
                if indexed is None:
                    indexed = self._listed(rel)
                if indexed is None:
                    indexed = self._objects.read_object(f"{self.commit}:{rel}") is not None
                return indexed, True
        found = self._resolve(path, follow_last=False)
        if isinstance(found, Unreadable):
            return False, False
        return True, found[0] == rel

    def _listed(self, rel: str) -> bool | None:
        """Whether the listing of ``rel``'s directory, a directory reached without a symlink,
        names ``rel`` (listed when the walk's :attr:`Known.LIST_AFTER`-th tree looks a name up
        there); None where git is to be asked: no listing, or a submodule, whose commit git may
        not have."""
        directory, _, name = rel.rpartition("/")
        listing = self._listings.get(directory)
        if listing is None:
            if not self._dirs.get(directory):
                return None
            count, last = self._misses.get(directory, (0, None))
            if last == self.commit:  # asked in this tree already
                return None
            self._misses[directory] = (count + 1, self.commit)
            if count + 1 < Known.LIST_AFTER:
                return None
            tree = self._tree(directory)
            if isinstance(tree, Unreadable):
                return None
            listing = self._listings[directory] = {n: entry[0] for n, entry in tree.items()}
        mode = listing.get(name)
        return None if mode == _GITLINK else mode is not None

    def _spec(self, directory: str) -> str:
        return f"{self.commit}^{{tree}}" if not directory else f"{self.commit}:{directory}"

    def is_dir(self, path: str) -> bool:
        known = self._dirs.get(path)
        if known is None:
            found = self._resolve(path)
            if isinstance(found, Unreadable):
                return False
            known = found[1] == _TREE
            if found[0] == path:  # not through a symlink: see _blob
                self._dirs[path] = known
        return known

    def resolve(self, path: str) -> str | Unreadable:
        found = self._resolve(path)
        return found if isinstance(found, Unreadable) else found[0]
