"""Selecting values from JSON bytes without parsing the whole document.

A capture can be far larger than what is selected from it. The scanner walks the bytes from the
root along each pointer, skipping every member it does not need with C-speed regular expressions
(a string, or the next bracket), and parses only the selected values: no Python object is built
for what it skips. It trusts the bytes' syntax (their digest names bytes that `continuity check`
holds to strict JSON); whatever it cannot follow is a ScanError, never a wrong value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from continuity_checks.core import pointer as jp
from continuity_checks.core import strict_json

_WS = re.compile(rb"[ \t\n\r]*")
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_SCALAR = re.compile(rb"[-0-9a-zA-Z.+]+")
_NEXT = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)
_RELEASE_EVERY = 1 << 20  # bytes between calls of the release hook


class ScanError(ValueError):
    """The bytes are not JSON where the scanner had to follow them."""


class _Scanner:
    def __init__(self, data: Any, release: Callable[[int], None] | None) -> None:
        self.data = data
        self.release = release
        self.released = 0

    def _progress(self, pos: int) -> None:
        if self.release is not None and pos - self.released >= _RELEASE_EVERY:
            self.release(pos)
            self.released = pos

    def ws(self, pos: int) -> int:
        match = _WS.match(self.data, pos)
        assert match is not None  # the pattern matches the empty string
        return match.end()

    def expect(self, pos: int, char: bytes) -> int:
        pos = self.ws(pos)
        if self.data[pos : pos + 1] != char:
            raise ScanError(f"expected {char.decode()} at byte {pos}")
        return pos + 1

    def string(self, pos: int) -> tuple[str, int]:
        match = _STRING.match(self.data, pos)
        if match is None:
            raise ScanError(f"expected a string at byte {pos}")
        try:
            text: str = json.loads(match.group().decode("utf-8"))
        except ValueError as exc:
            raise ScanError(f"expected a JSON string at byte {pos}") from exc
        return text, match.end()

    def skip(self, pos: int) -> int:
        """The end of the value that starts at ``pos``."""
        first = self.data[pos : pos + 1]
        if first == b'"':
            return self.string(pos)[1]
        if first not in (b"{", b"["):
            match = _SCALAR.match(self.data, pos)
            if match is None:
                raise ScanError(f"expected a value at byte {pos}")
            return match.end()
        depth = 0
        for match in _NEXT.finditer(self.data, pos):
            token = match.group()
            if token in (b"{", b"["):
                depth += 1
            elif token in (b"}", b"]"):
                depth -= 1
                if depth == 0:
                    return match.end()
            self._progress(match.end())
        raise ScanError(f"expected the end of the value at byte {pos}")

    def find(self, pointer: str) -> tuple[int, int] | None:
        """The byte range of the value at ``pointer``, or None when it is absent."""
        pos = self.ws(0)
        for token in jp.tokens(pointer):
            opener = self.data[pos : pos + 1]
            if opener == b"{":
                pos = self._member(pos + 1, token)
            elif opener == b"[":
                pos = self._element(pos + 1, token)
            else:
                return None
            if pos < 0:
                return None
        return pos, self.skip(pos)

    def _member(self, pos: int, key: str) -> int:
        pos = self.ws(pos)
        if self.data[pos : pos + 1] == b"}":
            return -1
        while True:
            name, pos = self.string(self.ws(pos))
            pos = self.ws(self.expect(pos, b":"))
            if name == key:
                return pos
            pos = self.ws(self.skip(pos))
            if self.data[pos : pos + 1] == b"}":
                return -1
            pos = self.expect(pos, b",")

    def _element(self, pos: int, token: str) -> int:
        wanted = jp.index(token, 0)
        if wanted is None:
            return -1
        pos = self.ws(pos)
        if self.data[pos : pos + 1] == b"]":
            return -1
        index = 0
        while True:
            pos = self.ws(pos)
            if index == wanted:
                return pos
            pos = self.ws(self.skip(pos))
            if self.data[pos : pos + 1] == b"]":
                return -1
            pos = self.expect(pos, b",")
            index += 1


def select(
    data: Any,
    pointers: Sequence[str],
    release: Callable[[int], None] | None = None,
    restart: Callable[[], None] | None = None,
) -> list[Any]:
    """The values at ``pointers`` in the JSON bytes ``data`` (bytes, or any buffer such as a
    mapped file), in order, ``core.pointer.MISSING`` for an absent one. ``release(pos)`` is
    told, every megabyte or so, that the bytes before ``pos`` were passed; ``restart()`` that
    the next pointer starts from the root again. Raises :class:`ScanError` or
    ``core.pointer.PointerError``."""
    scanner = _Scanner(data, release)
    found: list[Any] = []
    for pointer in pointers:
        span = scanner.find(pointer)
        if span is None:
            found.append(jp.MISSING)
        else:
            loaded = strict_json.load(bytes(data[span[0] : span[1]]))
            if isinstance(loaded, strict_json.Problem):
                raise ScanError(f"the value at {pointer!r} is not strict JSON: {loaded.message}")
            found.append(loaded.value)
        scanner.released = 0
        if restart is not None:
            restart()
    return found
