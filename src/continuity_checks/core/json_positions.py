"""The position scanner of strict JSON reading (:mod:`.strict_json`): one walk of a JSON text
that maps each JSON Pointer to the offset where its value starts, and notes the first duplicate
key and the first non-standard number. Tolerant: it stops quietly at text that is not JSON (the
readers decide what is)."""

from __future__ import annotations

import json
import re

from continuity_checks.core import pointer as jp

_INF = float("inf")

_TOKEN = re.compile(
    r"""[ \t\r\n]*(?:
        (?P<punct>[\[\]{}:,])
      | (?P<string>"(?:[^"\\]|\\.)*")
      | (?P<atom>[^\s\[\]{}:,"]+)
    )""",
    re.VERBOSE | re.DOTALL,
)


class ScanResult:
    """What the position scanner found: each pointer's offset, the first duplicate key and the
    first non-standard number (pointer and offset; None and -1 when there is none)."""

    __slots__ = (
        "constant_offset",
        "constant_pointer",
        "duplicate_offset",
        "duplicate_pointer",
        "positions",
    )

    def __init__(self) -> None:
        self.positions: dict[str, int] = {}
        self.duplicate_pointer: str | None = None
        self.duplicate_offset = -1
        self.constant_pointer: str | None = None
        self.constant_offset = -1


class _Frame:
    """An open object or array of the position scanner."""

    __slots__ = ("index", "is_object", "key", "keys", "pointer")

    def __init__(self, pointer: str, is_object: bool) -> None:
        self.pointer = pointer
        self.is_object = is_object
        self.keys: set[str] = set()
        self.index = 0
        self.key: str | None = None


def _overflows(token: str) -> bool:
    try:
        return float(token) in (_INF, -_INF)
    except ValueError:
        return False


def scan_positions(text: str) -> ScanResult:
    """Map each JSON Pointer to the offset of its value; note the first duplicate key and the
    first NaN/Infinity (or a number too large for a double). Tolerant: stops quietly at text
    that is not JSON."""
    result = ScanResult()
    stack: list[_Frame] = []
    pos = 0
    expect_key = False

    def value_pointer() -> str:
        if not stack:
            return ""
        top = stack[-1]
        return jp.append(top.pointer, top.key if top.is_object else top.index)  # type: ignore[arg-type]

    def on_value(ptr: str, offset: int) -> None:
        result.positions.setdefault(ptr, offset)

    while True:
        match = _TOKEN.match(text, pos)
        if match is None:
            break
        pos = match.end()
        start = match.start(match.lastgroup or 0)
        kind = match.lastgroup
        token = match.group(kind or 0)
        if kind == "punct":
            if token in "[{":
                ptr = value_pointer()
                on_value(ptr, start)
                stack.append(_Frame(ptr, token == "{"))
                expect_key = token == "{"
            elif token in "]}":
                if not stack:
                    break
                stack.pop()
                expect_key = False
            elif token == "," and stack:
                top = stack[-1]
                if top.is_object:
                    expect_key = True
                else:
                    top.index += 1
            # ':' needs no action: the key was recorded when it was read
        elif kind == "string" and expect_key and stack:
            top = stack[-1]
            try:
                key = json.loads(token)
            except ValueError:
                key = token[1:-1]
            if key in top.keys and result.duplicate_pointer is None:
                result.duplicate_pointer = jp.append(top.pointer, key)
                result.duplicate_offset = start
            top.keys.add(key)
            top.key = key
            expect_key = False
        else:
            ptr = value_pointer()
            on_value(ptr, start)
            constant = kind == "atom" and (
                token in ("NaN", "Infinity", "-Infinity") or _overflows(token)
            )
            if constant and result.constant_pointer is None:
                result.constant_pointer = ptr
                result.constant_offset = start
    return result
