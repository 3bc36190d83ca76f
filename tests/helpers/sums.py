"""A sums file's bytes as GNU ``sha256sum`` writes them, from the bytes of the files it lists."""

from __future__ import annotations

import hashlib


def h(data: bytes) -> str:
    """The SHA-256 of ``data``, in lower-case hex."""
    return hashlib.sha256(data).hexdigest()


def sums(*pairs: tuple[bytes, str], eol: str = "\n") -> bytes:
    """One ``<digest>  <path>`` line for each ``(bytes, path)``, in order."""
    return "".join(f"{h(d)}  {p}{eol}" for d, p in pairs).encode()
