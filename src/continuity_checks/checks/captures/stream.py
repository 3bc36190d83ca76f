"""Selecting by JSON Pointer without parsing the whole capture (helper commands only).

A capture can be far larger than what an agent selects from it. The file is mapped, not read:
the scanner walks from the root along each pointer, skipping every member it does not need
with two C-speed regular expressions (a string, or the next bracket), and parses only the
selected values. Pages it has passed are handed back to the kernel as it goes, so memory stays
near the size of the selection, not of the capture.

The scanner trusts the bytes' syntax: ``read`` checks the capture's digest first, and the digest
names bytes that ``continuity check`` holds to strict JSON. Malformed bytes still never make it
return a wrong value silently: whatever it cannot follow is a :class:`ScanError`.
"""

from __future__ import annotations

import json
import mmap
import os
import re
from typing import Any

from continuity_checks.checks.captures.model import MISSING, tokens
from continuity_checks.core import strict_json

_WS = re.compile(rb"[ \t\n\r]*")
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_SCALAR = re.compile(rb"[-0-9a-zA-Z.+]+")
_NEXT = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)
_DROP_EVERY = 2 << 20  # bytes scanned between handing pages back
_PAGE = mmap.PAGESIZE


class ScanError(ValueError):
    """The bytes are not JSON where the scanner had to follow them."""


class _Scanner:
    def __init__(self, data: mmap.mmap | bytes) -> None:
        self.data = data
        self.dropped = 0

    def _drop(self, upto: int) -> None:
        """Give back the pages before ``upto`` (they are re-read from the file if needed)."""
        if not isinstance(self.data, mmap.mmap) or not hasattr(mmap, "MADV_DONTNEED"):
            return
        end = (upto // _PAGE) * _PAGE
        if end - self.dropped >= _DROP_EVERY:
            self.data.madvise(mmap.MADV_DONTNEED, self.dropped, end - self.dropped)
            self.dropped = end

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
        return json.loads(match.group().decode("utf-8")), match.end()

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
                    self._drop(match.end())
                    return match.end()
            if match.end() - self.dropped > 2 * _DROP_EVERY:
                self._drop(match.end())
        raise ScanError(f"expected the end of the value at byte {pos}")

    def find(self, pointer: str) -> tuple[int, int] | None:
        """The byte range of the value at ``pointer``, or None when it is absent."""
        pos = self.ws(0)
        for token in tokens(pointer):
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
        if not token.isdigit() or not token.isascii() or (len(token) > 1 and token[0] == "0"):
            return -1
        wanted = int(token)
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


def select(path: str, pointers: list[str]) -> list[Any]:
    """The values at ``pointers`` in the JSON file at ``path``, in order (:data:`MISSING` for
    an absent one). Raises :class:`ScanError` for bytes it cannot follow, ``PointerError`` for
    a pointer that is not RFC 6901 text, ``OSError`` for a file it cannot read."""
    for pointer in pointers:
        tokens(pointer)  # every pointer's syntax before any work
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    try:
        size = os.fstat(fd).st_size
        if size == 0:
            raise ScanError("expected a JSON value, found an empty file")
        with mmap.mmap(fd, 0, access=mmap.ACCESS_READ) as data:
            scanner = _Scanner(data)
            found: list[Any] = []
            for pointer in pointers:
                span = scanner.find(pointer)
                if span is None:
                    found.append(MISSING)
                    continue
                loaded = strict_json.load(data[span[0] : span[1]])
                if isinstance(loaded, strict_json.Problem):
                    raise ScanError(
                        f"the value at {pointer!r} is not strict JSON: {loaded.message}"
                    )
                found.append(loaded.value)
                scanner.dropped = 0  # the next pointer starts from the root again
            return found
    finally:
        os.close(fd)
