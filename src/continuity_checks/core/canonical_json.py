"""JSON text exactly as JavaScript's ``JSON.stringify`` writes it, for re-computing JS hashes.

Some continuity files carry SHA-256 digests that their JavaScript writers computed over
``JSON.stringify`` output: DSH's ``state_hash`` (compact, keys in the writer's order) and LoopX's
canonical digests (keys sorted, then compact). To re-compute such a digest in Python the bytes
must be the same, and ``json.dumps`` differs from ``JSON.stringify`` in four places:

- **Numbers.** JavaScript has one number type and writes it with ``Number::toString`` (ECMA-262):
  the shortest digits that round-trip, placed by the exponent. Python writes
  ``1.0``, ``1e-05`` and ``1e+16`` where JavaScript writes ``1``, ``0.00001`` and
  ``10000000000000000``. :func:`format_number` takes Python's shortest round-trip digits
  (``repr``, the same digits ECMAScript asks for) and places the decimal point by the
  ECMAScript rules. ``-0`` is written ``0``.
- **Big integers.** Python ints are exact; a JavaScript writer only ever had a double. An int
  with ``abs(i) <= 2**53`` is exactly a double and is written as is; a larger one is first
  rounded to the nearest double (ties to even, as ``JSON.parse`` and ``Number()`` round), so
  ``2**53 + 1`` is written ``9007199254740992`` and ``10**21`` is written ``1e+21``.
- **Lone surrogates.** A Python str can hold a surrogate code point (``json.loads('"\\ud800"')``).
  Since ES2019 ``JSON.stringify`` writes a lone surrogate as a ``\\udxxx`` escape (lowercase
  hex) so that its output is always well-formed; Python would write the raw surrogate, which is
  not even encodable as UTF-8. A high surrogate followed by a low one is a pair in a JavaScript
  string (its strings are UTF-16 code units), so two such code points in a Python str are
  written as the one character they form, as JavaScript would.
- **Key order.** ``JSON.stringify`` itself never sorts; it writes an object's own properties in
  JavaScript's property order, which is the order the properties were created, *except* that
  keys that are array indices (``"0"``, ``"7"``, ``"42"``: the canonical decimal form of an
  integer ``0 <= i <= 2**32 - 2``) come first, in ascending numeric order. Canonicalisers that
  sort keys build a new object from the sorted keys (``Object.fromEntries``) and stringify that,
  so the array-index rule applies after any sort. ``key_order`` chooses the creation order:

  - ``"utf16"`` (default): ``Array.prototype.sort()`` with no comparator, which compares strings
    by UTF-16 code units. This is not Python's order: a character above U+FFFF is a surrogate
    pair (``0xD800``–``0xDBFF`` first) and so sorts *before* U+E000–U+FFFF in JavaScript and
    after them in Python (``"\\U0001f600" < "\\uff61"`` in JavaScript, ``>`` in Python).
  - ``"codepoint"``: by Unicode code point, as Python's ``sorted`` does; LoopX's canonical form
    sorts this way with its own comparator.
  - ``"insertion"``: the dict's order, for writers that do not sort (DSH builds its ``state_hash``
    object field by field).

Everything else matches ``json.dumps(..., ensure_ascii=False, separators=(",", ":"))``: non-ASCII
(including U+2028, U+2029 and DEL) is written raw, ``"`` ``\\`` and the control characters get
``\\"`` ``\\\\`` ``\\b`` ``\\f`` ``\\n`` ``\\r`` ``\\t`` or ``\\u00xx``. ``indent`` is the ``space``
argument of ``JSON.stringify`` (``JSON.stringify(v, null, 2)``): clamped to 10, no effect below 1,
``": "`` after keys, empty containers stay ``{}`` and ``[]``.

Two deliberate departures, both where JavaScript would silently write something that no longer
means the value: NaN, the infinities and ints beyond the double range raise ``ValueError``
(``JSON.stringify`` writes ``null``; the strict loader rejects the ``NaN`` and ``Infinity``
literals, and LoopX's canonicaliser also refuses non-finite numbers), and a dict whose keys
become the same JavaScript string once surrogate pairs are joined raises ``ValueError`` (a
JavaScript object cannot hold both).
Containers are ``dict`` (str keys only, else ``TypeError``), ``list`` and ``tuple``; a cycle
raises ``ValueError``. The encoder keeps its own stack, so nesting depth is bounded by memory,
not by Python's recursion limit.
"""

from __future__ import annotations

import json.encoder
import math
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Literal

KeyOrder = Literal["utf16", "codepoint", "insertion"]
KEY_ORDERS: tuple[KeyOrder, ...] = ("utf16", "codepoint", "insertion")

MAX_SAFE_INTEGER = 2**53
"""Ints up to this magnitude are exactly a double, so JavaScript would hold the same value."""

_MAX_ARRAY_INDEX = 2**32 - 2
_MAX_INDENT = 10

# what JSON.stringify escapes, plus surrogates, which need a look at their neighbour
_SPECIAL = re.compile('[\x00-\x1f"\\\\\ud800-\udfff]')
_SURROGATE = re.compile("[\ud800-\udfff]")
_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
_DIGIT = re.compile("[0-9]")
_ARRAY_INDEX = re.compile("0|[1-9][0-9]{0,9}")

_ESCAPES = {chr(c): f"\\u{c:04x}" for c in range(0x20)}
_ESCAPES.update({"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"})
_ESCAPES.update({'"': '\\"', "\\": "\\\\"})

_END = object()
_CONTAINERS = (dict, list, tuple)

# json's string encoder for ensure_ascii=False (C when available) escapes exactly what JavaScript
# escapes, the same way (lowercase \u00xx); only surrogates need the slower path below
_quote: Callable[[str], str] = json.encoder.encode_basestring


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    # anything not in the table is a lone surrogate: pairs were joined before
    return _ESCAPES.get(char) or f"\\u{ord(char):04x}"


def _join_pair(match: re.Match[str]) -> str:
    pair = match.group()
    return chr(0x10000 + ((ord(pair[0]) - 0xD800) << 10) + (ord(pair[1]) - 0xDC00))


def _join_pairs(text: str) -> str:
    """``text`` as the code points a JavaScript string of the same code units holds."""
    return _PAIR.sub(_join_pair, text) if _SURROGATE.search(text) else text


def format_string(text: str) -> str:
    """``JSON.stringify(text)``: quoted, escaped as ES2019 does, non-ASCII written raw."""
    if text.isascii() or _SURROGATE.search(text) is None:
        # without surrogates Python's escaping is JavaScript's, and the C version is fast
        return _quote(text)
    return '"' + _SPECIAL.sub(_escape, _join_pairs(text)) + '"'


def _format_double(x: float) -> str:
    if not math.isfinite(x):
        raise ValueError(f"{x!r} is not a finite number; JSON has no representation for it")
    if x == 0:
        return "0"
    text = repr(x)
    mantissa, e, exponent = text.partition("e")
    if not e:
        # repr uses fixed notation for 1e-4 <= |x| < 1e16, where ECMAScript does too (its
        # exponent form starts below 1e-6 and from 1e21) and the digits are the same
        return text[:-2] if text.endswith(".0") else text
    sign = ""
    if mantissa.startswith("-"):
        sign, mantissa = "-", mantissa[1:]
    # in exponent form repr writes d[.ddd] with no trailing zeros: the shortest digits
    digits = mantissa.replace(".", "")
    k = len(digits)
    n = int(exponent) + 1  # the value is 0.digits * 10**n
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * -n + digits
    fraction = "." + digits[1:] if k > 1 else ""
    return f"{sign}{digits[0]}{fraction}e{'+' if n > 0 else '-'}{abs(n - 1)}"


def format_number(x: int | float) -> str:
    """``Number.prototype.toString()`` of the double JavaScript would hold for ``x``.

    Raises ``ValueError`` for NaN, the infinities and ints that round beyond the largest
    double, ``TypeError`` for anything that is not an int or a float (bool included).
    """
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise TypeError(f"expected an int or a float, not {type(x).__name__}")
    if isinstance(x, int):
        if -MAX_SAFE_INTEGER <= x <= MAX_SAFE_INTEGER:
            return int.__repr__(x)
        try:
            x = float(x)
        except OverflowError:
            raise ValueError(
                "integer is beyond the largest double; JavaScript would hold Infinity"
            ) from None
    return _format_double(float(x))


def _scalar(value: object) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (int, float)):
        return format_number(value)
    if isinstance(value, str):
        return format_string(value)
    raise TypeError(f"{type(value).__name__} is not a JSON value")


def _is_array_index(key: str) -> bool:
    return _ARRAY_INDEX.fullmatch(key) is not None and int(key) <= _MAX_ARRAY_INDEX


def _ordered_items(obj: dict[Any, Any], key_order: KeyOrder) -> Iterable[tuple[str, Any]]:
    """The members of ``obj`` in the order ``JSON.stringify`` would write them."""
    try:
        joined = "".join(obj)
    except TypeError:
        bad = next(key for key in obj if not isinstance(key, str))
        raise TypeError(f"object keys must be str, not {type(bad).__name__}: {bad!r}") from None
    items: Iterable[tuple[str, Any]]
    if joined.isascii():
        # one code unit per character: all three orders agree with Python's on ASCII
        items = obj.items() if key_order == "insertion" else sorted(obj.items())
    else:
        items = _ordered_unicode_items(obj, joined, key_order)
    if _DIGIT.search(joined) is None:
        return items
    items = list(items)
    indexes = [item for item in items if _is_array_index(item[0])]
    if not indexes:
        return items
    indexes.sort(key=lambda item: int(item[0]))
    return indexes + [item for item in items if not _is_array_index(item[0])]


def _ordered_unicode_items(
    obj: dict[str, Any], joined: str, key_order: KeyOrder
) -> list[tuple[str, Any]]:
    items = list(obj.items())
    surrogates = _SURROGATE.search(joined) is not None
    if surrogates:
        items = [(_join_pairs(key), value) for key, value in items]
        if len({key for key, _ in items}) != len(items):
            raise ValueError(
                "two keys are the same JavaScript string once surrogate pairs are joined"
            )
    # joined pairs are astral characters now
    if key_order == "utf16" and (surrogates or _ASTRAL.search(joined)):
        # big-endian UTF-16 bytes compare in code-unit order; surrogatepass keeps lone ones
        items.sort(key=lambda item: item[0].encode("utf-16-be", "surrogatepass"))
    elif key_order != "insertion":
        items.sort(key=lambda item: item[0])
    return items


def _check_options(indent: int | None, key_order: str) -> str:
    if key_order not in KEY_ORDERS:
        raise ValueError(f"key_order must be one of {', '.join(KEY_ORDERS)}, not {key_order!r}")
    if indent is None:
        return ""
    if isinstance(indent, bool) or not isinstance(indent, int):
        raise TypeError(f"indent must be an int or None, not {type(indent).__name__}")
    return " " * min(indent, _MAX_INDENT) if indent >= 1 else ""


def dumps(value: object, *, indent: int | None = None, key_order: KeyOrder = "utf16") -> str:
    """The JSON text ``JSON.stringify`` writes for ``value`` (see the module docstring).

    ``indent`` is ``JSON.stringify``'s numeric ``space`` argument; ``key_order`` is the order
    in which the JavaScript writer created each object's properties.
    """
    gap = _check_options(indent, key_order)
    node: Any = value
    colon = ": " if gap else ":"
    out: list[str] = []
    emit = out.append
    # the innermost open container lives in locals; `frames` keeps the ones around it
    frames: list[tuple[Iterator[Any], bool, str, str, int]] = []
    open_ids: set[int] = set()
    items: Iterator[Any] = iter(())
    is_object = False
    separator = close = ""
    current = 0
    while True:
        kind = type(node)
        if kind is str:
            emit(format_string(node))
        elif kind is int and -MAX_SAFE_INTEGER <= node <= MAX_SAFE_INTEGER:
            emit(int.__repr__(node))
        elif kind is float:
            emit(_format_double(node))
        elif kind is dict or kind is list or kind is tuple or isinstance(node, _CONTAINERS):
            is_dict = isinstance(node, dict)
            if not node:
                emit("{}" if is_dict else "[]")
            else:
                if id(node) in open_ids:
                    raise ValueError("circular reference: a container contains itself")
                frames.append((items, is_object, separator, close, current))
                current = id(node)
                open_ids.add(current)
                is_object = is_dict
                items = iter(_ordered_items(node, key_order) if is_dict else node)
                depth = len(frames)
                inner = "\n" + gap * depth if gap else ""
                separator = "," + inner
                close = ("\n" + gap * (depth - 1) if gap else "") + ("}" if is_dict else "]")
                first = next(items)
                if is_dict:
                    emit("{" + inner + format_string(first[0]) + colon)
                    node = first[1]
                else:
                    emit("[" + inner)
                    node = first
                continue
        else:
            emit(_scalar(node))
        while frames:
            item: Any = next(items, _END)
            if item is _END:
                emit(close)
                open_ids.discard(current)
                items, is_object, separator, close, current = frames.pop()
                continue
            if is_object:
                emit(separator + format_string(item[0]) + colon)
                node = item[1]
            else:
                emit(separator)
                node = item
            break
        else:
            return "".join(out)


def dump_bytes(value: object, *, indent: int | None = None, key_order: KeyOrder = "utf16") -> bytes:
    """:func:`dumps` as UTF-8: the bytes a JavaScript writer hashes (always valid UTF-8)."""
    return dumps(value, indent=indent, key_order=key_order).encode("utf-8")
