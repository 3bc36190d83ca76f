"""RFC 6901 JSON Pointers: the one parser, and the walks the checks need.

:func:`tokens` is the parser: strict (``~`` is followed by ``0`` or ``1``), it raises
:class:`PointerError` for text that is not a pointer. :func:`resolve` follows a pointer as RFC 6901
says (an array index is a decimal without leading zeros; ``-`` names no element) and tells
"absent" (:data:`MISSING`) from JSON ``null``. Two walks are lenient by name, for a finding's
text and position, where the pointer was made by this program: :func:`value_or_none` and
:func:`nearest`.
"""

from __future__ import annotations

from collections.abc import Container, Iterable
from typing import Any


class PointerError(ValueError):
    """Text that is not an RFC 6901 pointer (``"a/b"``: no leading slash; ``"/~2"``)."""


class Missing:
    """What a pointer that resolves to nothing yields (JSON ``null`` is ``None``, present)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING = Missing()


def escape(token: str | int) -> str:
    """One reference token as it is written in a pointer (``~`` as ``~0``, ``/`` as ``~1``)."""
    return str(token).replace("~", "~0").replace("/", "~1")


def join(parts: Iterable[str | int]) -> str:
    """The pointer of a path of keys and indexes; the empty path is the whole document ``""``."""
    return "".join("/" + escape(p) for p in parts)


def append(pointer: str, token: str | int) -> str:
    """The pointer of member or element ``token`` of the value at ``pointer``."""
    return pointer + "/" + escape(token)


def parent(pointer: str) -> str:
    """The pointer of the value that holds the one at ``pointer`` (``""`` for the root)."""
    return pointer.rpartition("/")[0]


def tokens(pointer: object) -> list[str]:
    """The unescaped reference tokens of an RFC 6901 pointer; :class:`PointerError` if
    ``pointer`` is not one."""
    if not isinstance(pointer, str):
        raise PointerError(f"expected a JSON Pointer string, found {type(pointer).__name__}")
    if not pointer:
        return []
    if not pointer.startswith("/"):
        raise PointerError(f"expected a JSON Pointer that is empty or starts with '/': {pointer!r}")
    raw = pointer[1:].split("/")
    if "~" in pointer:
        for token in raw:
            if "~" in token.replace("~0", "").replace("~1", ""):
                raise PointerError(f"expected ~0 or ~1 after '~' in {pointer!r}")
        return [t.replace("~1", "/").replace("~0", "~") for t in raw]
    return raw


def index(token: str, length: int, *, append: bool = False) -> int | None:
    """The array index ``token`` names: a decimal without leading zeros (it may be past the
    end); ``length`` for ``-`` when ``append`` (the position after the last element); else
    None."""
    if append and token == "-":
        return length
    if not token.isdigit() or not token.isascii() or (len(token) > 1 and token[0] == "0"):
        return None
    return int(token)


def resolve(document: object, pointer: str) -> Any:
    """The value at ``pointer`` in ``document``, or :data:`MISSING`; :class:`PointerError` when
    ``pointer`` is not a pointer. ``-`` names nothing (it is not readable)."""
    node: Any = document
    for token in tokens(pointer):
        if isinstance(node, dict):
            if token not in node:
                return MISSING
            node = node[token]
        elif isinstance(node, list):
            at = index(token, len(node))
            if at is None or at >= len(node):
                return MISSING
            node = node[at]
        else:
            return MISSING
    return node


def value_or_none(document: object, pointer: str) -> object:
    """Lenient :func:`resolve`, for what a finding says it found: the value at ``pointer``, or
    None where the pointer leads nowhere or is not a pointer (absence reads as ``null``)."""
    try:
        found = resolve(document, pointer)
    except PointerError:
        return None
    return None if found is MISSING else found


def nearest(pointer: str, known: Container[str]) -> str:
    """Lenient walk up, for a finding's position: ``pointer`` when ``known`` holds it, else its
    nearest ancestor that ``known`` holds, else ``""`` (the whole document)."""
    while pointer and pointer not in known:
        pointer = parent(pointer)
    return pointer
