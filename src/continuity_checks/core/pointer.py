"""RFC 6901 JSON Pointers."""

from __future__ import annotations

from collections.abc import Iterable


def escape(token: str | int) -> str:
    return str(token).replace("~", "~0").replace("/", "~1")


def unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def join(parts: Iterable[str | int]) -> str:
    """The pointer of a path of keys and indexes; the empty path is the whole document ``""``."""
    return "".join("/" + escape(p) for p in parts)


def append(pointer: str, token: str | int) -> str:
    return pointer + "/" + escape(token)


def parent(pointer: str) -> str:
    return pointer.rsplit("/", 1)[0] if pointer else ""


def split(pointer: str) -> list[str]:
    if not pointer:
        return []
    if not pointer.startswith("/"):
        raise ValueError(f"JSON Pointer must be empty or start with '/': {pointer!r}")
    return [unescape(t) for t in pointer[1:].split("/")]


def resolve(value: object, parts: Iterable[str]) -> object:
    """The value at ``parts`` (as :func:`split` gives them) inside ``value``; None when the path
    leads nowhere (a missing key, an index out of range, a step into a scalar)."""
    for part in parts:
        if isinstance(value, dict):
            value = value.get(part)
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return None
    return value
