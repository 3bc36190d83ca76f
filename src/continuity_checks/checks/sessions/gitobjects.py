"""Reading a commit of another repository (a project's, the shadow store's) through the
snapshot: a loose object, or one in a pack found through its version-2 index. Only commits
stored whole are decoded (a deltified one is known to exist, its text is not rebuilt)."""

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
    """A commit that exists; its text when it could be read (None: deltified in a pack)."""

    text: str | None


def git_dir(snapshot: Snapshot, repo: str) -> str | None:
    """The ``.git`` directory of the work tree at ``repo`` (root-relative), or None."""
    candidate = f"{repo}/.git" if repo else ".git"
    return candidate if snapshot.is_dir(candidate) else None


def find_commit(snapshot: Snapshot, gitdir: str, sha: str) -> Found | None:
    loose = snapshot.read(f"{gitdir}/objects/{sha[:2]}/{sha[2:]}")
    if not isinstance(loose, Unreadable):
        try:
            raw = zlib.decompress(loose)
        except zlib.error:
            return Found(None)
        header, _, body = raw.partition(b"\0")
        return Found(body.decode("utf-8", "replace") if header.startswith(b"commit ") else None)
    packs = snapshot.list(f"{gitdir}/objects/pack")
    if isinstance(packs, Unreadable):
        return None
    binary = bytes.fromhex(sha)
    for name in packs:
        if not name.endswith(".idx"):
            continue
        offset = _offset(snapshot.read(f"{gitdir}/objects/pack/{name}"), binary)
        if offset is not None:
            pack = snapshot.read(f"{gitdir}/objects/pack/{name[:-4]}.pack")
            return Found(None if isinstance(pack, Unreadable) else _commit_text(pack, offset))
    return None


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


def _commit_text(pack: bytes, offset: int) -> str | None:
    if offset >= len(pack):
        return None
    byte = pack[offset]
    kind = (byte >> 4) & 7
    position = offset + 1
    while byte & 0x80 and position < len(pack):
        byte = pack[position]
        position += 1
    if kind != _COMMIT:
        return None
    try:
        return zlib.decompressobj().decompress(pack[position:]).decode("utf-8", "replace")
    except zlib.error:
        return None


def subject_and_identities(text: str) -> tuple[str, list[str]]:
    """The subject and the ``author``/``committer`` identities (``Name <email>``) of a commit."""
    header, _, message = text.partition("\n\n")
    identities = []
    for line in header.split("\n"):
        if line.startswith(("author ", "committer ")):
            identity = line.split(" ", 1)[1]
            identities.append(identity[: identity.rfind(">") + 1])
    return message.split("\n", 1)[0], identities
