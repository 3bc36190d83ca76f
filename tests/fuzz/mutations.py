"""Mutations of a file's bytes. Two kinds:

- *blind* mutations (bit flips, splices, random JSON values...) have no oracle: the checker must
  only answer without a traceback or a hang;
- *invalid* mutations break a property that every continuity file has, decided here without the
  checker's code (the standard library's ``json`` and plain byte tests): the checker must report
  an error the unmutated file did not have, or it passed something it never checked.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable
from typing import Any

Mutation = Callable[[random.Random, bytes], "bytes | None"]

INTERESTING = [
    b'"', b"{", b"}", b"[", b"]", b",", b":", b"\\", b"\x00", b"\xff", b"\xc3", b"\n", b"\r\n",
    b" ", b"0", b"-", b"1e999", b"NaN", b"-Infinity", b'\\u0000', b"\\ud800", b"../", b"/",
    b"\\u001c", b"\xc2\x85", b"\xef\xbb\xbf", b"null", b"true", b'""', b"{}", b"[]", b"\t",
    b"1" * 400, b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe2\x80\xa8",
]  # fmt: skip

ODD_STRINGS = [
    "", " ", "\u001c", "\u001f", "\u0085", "\u00a0", "\u2028", "\ufeff", "\x00", "\ud800",
    "a" * 5000, "../../etc/passwd", "/abs", "C:\\x", "é", "\U0001f600", "\n", "null",
    "2026-09-21T00:01:00+08:00", "2026-02-30", "9999-12-31T23:59:60Z", "x" * 81,
]  # fmt: skip


def parse(data: bytes) -> Any:
    """The document as the standard library reads it (NaN and Infinity refused), or raise."""

    def refuse(name: str) -> Any:
        raise ValueError(name)

    return json.loads(data.decode("utf-8"), parse_constant=refuse)


def is_json(data: bytes) -> bool:
    try:
        parse(data)
    except (ValueError, RecursionError):
        return False
    return True


def dump(rng: random.Random, value: Any) -> bytes:
    """Serialised in one of the shapes writers use (compact, indented, ASCII or not)."""
    indent = rng.choice([None, None, 2, 1, "\t"])
    separators = (",", ":") if indent is None and rng.random() < 0.5 else None
    text = json.dumps(value, indent=indent, separators=separators, ensure_ascii=rng.random() < 0.3)
    return (text + ("\n" if rng.random() < 0.8 else "")).encode("utf-8", "surrogatepass")


def random_value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(10 if depth < 3 else 6)
    if kind == 0:
        return None
    if kind == 1:
        return rng.choice([True, False])
    if kind == 2:
        return rng.choice([0, -1, 1, 2**53 + 1, 10**30, -(10**400), 7])
    if kind == 3:
        return rng.choice([0.5, -0.0, 1e308, 5e-324, 1e-7])
    if kind in (4, 5):
        return rng.choice(ODD_STRINGS)
    if kind in (6, 7):
        return [random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    keys = ["id", "source", "changes", "schema_version", "path", "sha256", rng.choice(ODD_STRINGS)]
    return {rng.choice(keys): random_value(rng, depth + 1) for _ in range(rng.randrange(4))}


def _places(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every node's path (keys and indices), the root first."""
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found.extend(_places(item, (*path, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.extend(_places(item, (*path, index)))
    return found


def _set(doc: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    parent = doc
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = new
    return doc


# ------------------------------------------------------------------------------ blind mutations


def flip_bits(rng: random.Random, data: bytes) -> bytes:
    buf = bytearray(data or b" ")
    for _ in range(rng.randint(1, 4)):
        buf[rng.randrange(len(buf))] ^= 1 << rng.randrange(8)
    return bytes(buf)


def insert_token(rng: random.Random, data: bytes) -> bytes:
    at = rng.randint(0, len(data))
    return data[:at] + rng.choice(INTERESTING) + data[at:]


def delete_range(rng: random.Random, data: bytes) -> bytes:
    if not data:
        return data
    start = rng.randrange(len(data))
    return data[:start] + data[start + rng.randint(1, 64) :]


def duplicate_range(rng: random.Random, data: bytes) -> bytes:
    if not data:
        return data
    start = rng.randrange(len(data))
    piece = data[start : start + rng.randint(1, 200)]
    return data[:start] + piece * rng.randint(2, 5) + data[start:]


def truncate(rng: random.Random, data: bytes) -> bytes:
    return data[: rng.randint(0, len(data))]


def replace_value(rng: random.Random, data: bytes) -> bytes | None:
    try:
        doc = parse(data)
    except (ValueError, RecursionError):
        return None
    path = rng.choice(_places(doc))
    return dump(rng, _set(doc, path, random_value(rng)))


def delete_key(rng: random.Random, data: bytes) -> bytes | None:
    try:
        doc = parse(data)
    except (ValueError, RecursionError):
        return None
    places = [p for p in _places(doc) if p]
    if not places:
        return None
    path = rng.choice(places)
    parent = doc
    for step in path[:-1]:
        parent = parent[step]
    del parent[path[-1]]
    return dump(rng, doc)


def retype_string(rng: random.Random, data: bytes) -> bytes | None:
    """A string value becomes an odd string (blank by one definition or another, long, ...)."""
    try:
        doc = parse(data)
    except (ValueError, RecursionError):
        return None
    strings = [p for p in _places(doc) if p and isinstance(_get(doc, p), str)]
    if not strings:
        return None
    return dump(rng, _set(doc, rng.choice(strings), rng.choice(ODD_STRINGS)))


def _get(doc: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        doc = doc[step]
    return doc


def reformat(rng: random.Random, data: bytes) -> bytes | None:
    try:
        return dump(rng, parse(data))
    except (ValueError, RecursionError):
        return None


def grow(rng: random.Random, data: bytes) -> bytes | None:
    """A long array of bad items in place of one value (bounded output, bounded time)."""
    try:
        doc = parse(data)
    except (ValueError, RecursionError):
        return None
    items = [rng.choice([42, None, "", {"x": 1}])] * rng.choice([500, 5000, 20000])
    return dump(rng, _set(doc, rng.choice(_places(doc)), items))


BLIND: list[Mutation] = [
    flip_bits, insert_token, delete_range, duplicate_range, truncate,
    replace_value, replace_value, delete_key, retype_string, retype_string, reformat,
]  # fmt: skip


def splice(rng: random.Random, data: bytes, other: bytes) -> bytes:
    return data[: rng.randint(0, len(data))] + other[rng.randint(0, len(other)) :]


# ----------------------------------------------------------------------------- invalid mutations


def invalid_truncation(rng: random.Random, data: bytes) -> bytes | None:
    """A cut that the standard library cannot parse (CC004 or CC002)."""
    if len(data) < 2:
        return None
    for _ in range(5):
        cut = data[: rng.randint(1, len(data) - 1)]
        if cut.strip() and not is_json(cut):
            return cut
    return None


def invalid_utf8(rng: random.Random, data: bytes) -> bytes:
    at = rng.randint(0, len(data))
    return data[:at] + rng.choice([b"\xff", b"\xc0\x80", b"\xed\xa0\x80", b"\x80"]) + data[at:]


def bom(rng: random.Random, data: bytes) -> bytes:
    return b"\xef\xbb\xbf" + data


def duplicate_key(rng: random.Random, data: bytes) -> bytes | None:
    """The first object's first key, once more (the standard library keeps the last silently)."""
    try:
        doc = parse(data)
    except (ValueError, RecursionError):
        return None
    objects = [p for p in _places(doc) if isinstance(_get(doc, p), dict) and _get(doc, p)]
    if not objects:
        return None
    path = rng.choice(objects)
    target = _get(doc, path)
    key = rng.choice(list(target))
    # serialise the object with the key twice: a marker replaced in the text
    marker = "\u0000fuzz-dup\u0000"
    doc = _set(doc, path, {marker: None, **target})
    text = json.dumps(doc, ensure_ascii=False)
    twice = json.dumps(key) + ": " + json.dumps(target[key], ensure_ascii=False)
    return text.replace(json.dumps(marker) + ": null", twice, 1).encode("utf-8", "surrogatepass")


def not_a_number(rng: random.Random, data: bytes) -> bytes | None:
    try:
        doc = parse(data)
    except (ValueError, RecursionError):
        return None
    value = rng.choice([math.nan, math.inf, -math.inf])
    text = json.dumps(_set(doc, rng.choice(_places(doc)), value), allow_nan=True)
    if rng.random() < 0.3:
        text = text.replace("Infinity", "1e999").replace("NaN", "-1e400")
    return text.encode("utf-8")


def lone_surrogate(rng: random.Random, data: bytes) -> bytes | None:
    try:
        doc = parse(data)
    except (ValueError, RecursionError):
        return None
    return json.dumps(_set(doc, rng.choice(_places(doc)), "a\udc80b")).encode("ascii")


def too_deep(rng: random.Random, data: bytes) -> bytes | None:
    try:
        doc = parse(data)
    except (ValueError, RecursionError):
        return None
    depth = rng.choice([1100, 5000, 100_000])
    text = json.dumps(_set(doc, rng.choice(_places(doc)), "\u0000deep\u0000"))
    return text.replace('"\\u0000deep\\u0000"', "[" * depth + "]" * depth).encode("utf-8")


INVALID_JSON: dict[str, Mutation] = {
    "truncated": invalid_truncation,
    "invalid-utf8": invalid_utf8,
    "bom": bom,
    "duplicate-key": duplicate_key,
    "nan": not_a_number,
    "lone-surrogate": lone_surrogate,
    "too-deep": too_deep,
}
