"""Reading a commit of another repository (a project's, the shadow store's) through the
snapshot: a loose object, or one in a pack found through its version-2 index, stored whole or
as a delta (``OFS_DELTA`` against an earlier object of its pack, ``REF_DELTA`` against an object
named by id, looked up in its own pack first, then loose and in the repository's other packs),
rebuilt here up to a bounded chain length."""

from __future__ import annotations

import re
import struct
import zlib
from typing import NamedTuple

from continuity_checks.core.snapshot import Snapshot, Unreadable

SHA = re.compile(r"^[0-9a-f]{40}$")
_IDX_MAGIC = b"\xfftOc"
_COMMIT = 1


class Found(NamedTuple):
    """An object of the id asked for; its text when it is a commit that could be read, else
    None, and then why when a file it needs could not be read here (too large, unreadable)."""

    text: str | None
    unread: str | None = None


def git_dir(snapshot: Snapshot, repo: str) -> str | None:
    """The ``.git`` directory of the work tree at ``repo`` (root-relative), or None."""
    candidate = f"{repo}/.git" if repo else ".git"
    return candidate if snapshot.is_dir(candidate) else None


def find_commit(snapshot: Snapshot, gitdir: str, sha: str) -> Found | None:
    """The commit ``sha`` of the repository at ``gitdir``: None when no object has that id,
    ``Found(None)`` when one does but is no commit git could read (corrupt, or not a commit)."""
    objects = Objects(snapshot, gitdir)
    binary = bytes.fromhex(sha)
    if not objects.exists(binary):
        return None
    found = objects.read(binary, MAX_CHAIN)
    if found is None or found[0] != _COMMIT:
        return Found(None, objects.unread)
    return Found(found[1].decode("utf-8", "replace"))


class Objects:
    """One repository's objects as the snapshot shows them: loose, and in its packs (each pack
    and its index read once, when first needed)."""

    def __init__(self, snapshot: Snapshot, gitdir: str) -> None:
        self.snapshot = snapshot
        self.gitdir = gitdir
        self._packs: list[tuple[str, bytes]] | None = None
        self._data: dict[str, bytes | None] = {}
        #: the first file that was there but could not be read (a pack over the size limit)
        self.unread: str | None = None

    def _read(self, path: str) -> bytes | None:
        data = self.snapshot.read(path)
        if isinstance(data, Unreadable):
            if self.unread is None and self.snapshot.exists(path):
                self.unread = f"{path}: {data.message}"
            return None
        return data

    def _loose(self, binary: bytes) -> bytes | None:
        sha = binary.hex()
        path = f"{self.gitdir}/objects/{sha[:2]}/{sha[2:]}"
        return self._read(path) if self.snapshot.exists(path) else None

    def packs(self) -> list[tuple[str, bytes]]:
        """The version-2 pack indexes: (pack name without extension, index bytes)."""
        if self._packs is None:
            self._packs = []
            listing = self.snapshot.list(f"{self.gitdir}/objects/pack")
            for name in [] if isinstance(listing, Unreadable) else sorted(listing):
                if name.endswith(".idx"):
                    index = self._read(f"{self.gitdir}/objects/pack/{name}")
                    if index is not None:
                        self._packs.append((name[:-4], index))
        return self._packs

    def pack(self, name: str) -> bytes | None:
        if name not in self._data:
            self._data[name] = self._read(f"{self.gitdir}/objects/pack/{name}.pack")
        return self._data[name]

    def exists(self, binary: bytes) -> bool:
        return self._loose(binary) is not None or any(
            _offset(index, binary) is not None for _, index in self.packs()
        )

    def read(self, binary: bytes, chain: int) -> tuple[int, bytes] | None:
        """The type and bytes of the object ``binary``, wherever it is stored."""
        loose = self._loose(binary)
        if loose is not None:
            try:
                raw = zlib.decompress(loose)
            except zlib.error:
                return None
            header, _, body = raw.partition(b"\0")
            kind = _LOOSE_KINDS.get(header.split(b" ", 1)[0])
            return None if kind is None else (kind, body)
        for name, index in self.packs():
            offset = _offset(index, binary)
            if offset is not None:
                pack = self.pack(name)
                return None if pack is None else _object(self, pack, index, offset, chain)
        return None


_LOOSE_KINDS = {b"commit": 1, b"tree": 2, b"blob": 3, b"tag": 4}


def _offset(index: bytes | Unreadable, binary: bytes) -> int | None:
    """The pack offset of ``binary`` in a version-2 pack index, or None."""
    if isinstance(index, Unreadable) or len(index) < 8 + 1024 or index[:4] != _IDX_MAGIC:
        return None
    fanout = struct.unpack_from(">256I", index, 8)
    count = fanout[255]
    low = fanout[binary[0] - 1] if binary[0] else 0
    high = fanout[binary[0]]
    names = 8 + 1024
    if len(index) < names + count * 28:
        return None
    while low < high:
        middle = (low + high) // 2
        found = index[names + middle * 20 : names + middle * 20 + 20]
        if found == binary:
            offsets = names + count * 24
            value: int = struct.unpack_from(">I", index, offsets + middle * 4)[0]
            if value & 0x80000000:
                large = offsets + count * 4 + (value & 0x7FFFFFFF) * 8
                if len(index) < large + 8:
                    return None
                value = struct.unpack_from(">Q", index, large)[0]
            return value
        if found < binary:
            low = middle + 1
        else:
            high = middle
    return None


_OFS_DELTA, _REF_DELTA = 6, 7
MAX_CHAIN = 64  # delta bases followed at most (git's own default depth is 50)


def _object(
    objects: Objects, pack: bytes, index: bytes, offset: int, chain: int
) -> tuple[int, bytes] | None:
    """The type and bytes of the object at ``offset``, its delta chain applied; None for
    anything malformed, a base that is nowhere, or a chain longer than ``chain``."""
    if offset >= len(pack) or chain < 0:
        return None
    byte = pack[offset]
    kind = (byte >> 4) & 7
    position = offset + 1
    while byte & 0x80 and position < len(pack):
        byte = pack[position]
        position += 1
    base: tuple[int, bytes] | None = None
    if kind == _OFS_DELTA:
        if position >= len(pack):
            return None
        byte = pack[position]
        position += 1
        distance = byte & 0x7F
        while byte & 0x80 and position < len(pack):
            byte = pack[position]
            position += 1
            distance = ((distance + 1) << 7) | (byte & 0x7F)
        if distance <= 0 or distance > offset:
            return None
        base = _object(objects, pack, index, offset - distance, chain - 1)
    elif kind == _REF_DELTA:
        named = pack[position : position + 20]
        base_offset = _offset(index, named)
        position += 20
        if base_offset is not None:
            base = _object(objects, pack, index, base_offset, chain - 1)
        elif chain > 0:  # a base stored loose or in another pack of the repository
            base = objects.read(named, chain - 1)
    try:
        data = zlib.decompressobj().decompress(pack[position:])
    except zlib.error:
        return None
    if kind in (_OFS_DELTA, _REF_DELTA):
        if base is None:
            return None
        try:
            patched = _apply(base[1], data)
        except IndexError:  # an instruction cut short
            return None
        return None if patched is None else (base[0], patched)
    return kind, data


def _varint(data: bytes, position: int) -> tuple[int, int]:
    value = shift = 0
    while position < len(data):
        byte = data[position]
        position += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            break
    return value, position


def _apply(source: bytes, delta: bytes) -> bytes | None:
    """git's delta format: the source and target sizes, then copy (from the source) and insert
    (literal bytes) instructions."""
    size, position = _varint(delta, 0)
    if size != len(source):
        return None
    target_size, position = _varint(delta, position)
    out = bytearray()
    while position < len(delta):
        command = delta[position]
        position += 1
        if command & 0x80:
            start = length = 0
            for bit in range(4):
                if command & (1 << bit):
                    start |= delta[position] << (8 * bit)
                    position += 1
            for bit in range(3):
                if command & (0x10 << bit):
                    length |= delta[position] << (8 * bit)
                    position += 1
            length = length or 0x10000
            if start + length > len(source):
                return None
            out += source[start : start + length]
        elif command:
            out += delta[position : position + command]
            position += command
        else:
            return None  # reserved
    return bytes(out) if len(out) == target_size else None


def subject_and_identities(text: str) -> tuple[str, list[str]]:
    """The subject and the ``author``/``committer`` identities (``Name <email>``) of a commit."""
    header, _, message = text.partition("\n\n")
    identities = []
    for line in header.split("\n"):
        if line.startswith(("author ", "committer ")):
            identity = line.split(" ", 1)[1]
            identities.append(identity[: identity.rfind(">") + 1])
    return message.split("\n", 1)[0], identities
