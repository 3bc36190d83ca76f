"""A sums file's bytes as GNU ``sha256sum`` writes them, and a provenance manifest's, from the
bytes of the files they list."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def h(data: bytes) -> str:
    """The SHA-256 of ``data``, in lower-case hex."""
    return hashlib.sha256(data).hexdigest()


def sums(*pairs: tuple[bytes, str], eol: str = "\n") -> bytes:
    """One ``<digest>  <path>`` line for each ``(bytes, path)``, in order."""
    return "".join(f"{h(d)}  {p}{eol}" for d, p in pairs).encode()


def manifest(*artifacts: dict[str, Any]) -> bytes:
    """A provenance manifest (version 1) listing ``artifacts``, as ``json.dumps`` indents it."""
    return (json.dumps({"version": 1, "artifacts": list(artifacts)}, indent=2) + "\n").encode()


def art(data: bytes, path: str, **extra: Any) -> dict[str, Any]:
    """A manifest's artifact for the bytes ``data`` at ``path`` (an original unless ``extra``
    says otherwise)."""
    return {"path": path, "sha256": h(data), "size": len(data), "role": "original", **extra}
