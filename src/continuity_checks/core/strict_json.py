"""Strict JSON reading with positions: the one reader of the JSON files the families check.

Which to call for what:

==============================  =================================================================
``load(data)``                  a file's bytes: a :class:`Document`, or the :class:`Problem` that
                                refuses them (a BOM, invalid UTF-8, anything ``parse`` refuses)
``parse(text)``                 text already decoded: a :class:`Document` or a :class:`Problem`
``accepts(data)``               ``(text, value)`` when ``load`` would accept the bytes, else None:
                                no positions or messages, for history mode's many versions
``Document``                    what ``load`` and ``parse`` give: the value, its text, the
                                line and column of a pointer into it (``position``)
``Problem``                     why they refuse: the rule, a message, a position, ``finding()``
``located(rule, doc, ...)``     a finding at the line and column of a pointer into a Document
``lone_surrogate(value)``       the pointer of the first unpaired surrogate in a value, or None
``well_formed(value)``          the value with unpaired surrogates as U+FFFD (for the schema engine)
``DEFAULT_MAX_DEPTH``,          the limits when the configuration sets none
``DEFAULT_MAX_FILE_BYTES``
==============================  =================================================================

``load``, ``parse`` and ``accepts`` never raise for any input. Two readers give one verdict:
the compiled one (``jiter``, which refuses duplicate keys and non-standard constants itself) reads
every file first, and the checks it does not make (depth, numbers beyond a double) follow only
where the bytes could break them. Whatever it refuses goes to the Python reader (the standard
library's C decoder with hooks for duplicate keys, constants and numbers), which decides and
explains: the rule, the line and column, the pointer. Positions are only computed when a finding
needs one: a small scanner walks the text once and maps every JSON Pointer to the offset where
its value starts.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Callable

import jiter

from continuity_checks.core import core_rules as cc
from continuity_checks.core import pointer as jp
from continuity_checks.core.findings import Finding
from continuity_checks.core.rules import Rule

DEFAULT_MAX_DEPTH = 64
DEFAULT_MAX_FILE_BYTES = 16 * 1024 * 1024

_UTF8_BOM = b"\xef\xbb\xbf"


class _DuplicateKey(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


class _NonStandard(Exception):
    def __init__(self, name: str) -> None:
        self.name = name


def _pairs(pairs: list[tuple[str, object]]) -> dict[str, object]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return result


def _constant(name: str) -> object:
    raise _NonStandard(name)


def _finite(text: str) -> float:
    """A JSON number with a fraction or exponent. One beyond the range of a double (``1e400``)
    would become infinity: every writer then emits ``Infinity``, which is not JSON."""
    value = float(text)
    if value in (_INF, -_INF):
        raise _NonStandard(text)
    return value


def _integer(text: str) -> int:
    """A JSON integer. One beyond the range of a double (309 digits and more) is read by every
    JavaScript writer as infinity and has no canonical JSON form (RFC 8785): CC006 like 1e400."""
    value = int(text)
    if len(text) >= _DOUBLE_DIGITS and float(text) in (_INF, -_INF):
        raise _NonStandard(text if len(text) <= 24 else f"{text[:20]}… ({len(text)} digits)")
    return value


_DOUBLE_DIGITS = 309  # the fewest digits of an integer beyond the largest double (1.8e308)
_STRIDE = 300  # < _DOUBLE_DIGITS: a run of 309 digits covers a multiple of it
_DIGITS = frozenset("0123456789")


def _long_digit_run(text: str) -> bool:
    """Whether ``text`` has a run of at least 309 digits (where an integer beyond a double would
    be). Looks only at every 300th character and around the digits found there: a regular
    expression over every position cost as much as the parse itself."""
    size = len(text)
    for middle in range(_STRIDE - 1, size, _STRIDE):
        if text[middle] not in _DIGITS:
            continue
        start = middle
        while start > 0 and middle - start < _DOUBLE_DIGITS and text[start - 1] in _DIGITS:
            start -= 1
        end = middle + 1
        while end < size and end - start < _DOUBLE_DIGITS and text[end] in _DIGITS:
            end += 1
        if end - start >= _DOUBLE_DIGITS:
            return True
    return False


_INF = float("inf")
_SPACE = " \t\n\r"  # JSON's whitespace
_decoder = json.JSONDecoder(object_pairs_hook=_pairs, parse_constant=_constant, parse_float=_finite)
# the same with a look at every integer: a Python call per integer, so only for a text that has
# a run of 309 digits somewhere (most never do)
_long_int_decoder = json.JSONDecoder(
    object_pairs_hook=_pairs, parse_constant=_constant, parse_float=_finite, parse_int=_integer
)
# the strict decoder's C scanner: one value from an index, with the hooks above
_scan: Callable[[str, int], tuple[object, int]] = _decoder.scan_once  # type: ignore[attr-defined]
_scan_long_ints: Callable[[str, int], tuple[object, int]] = _long_int_decoder.scan_once  # type: ignore[attr-defined]
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


class Document:
    """A parsed JSON value and the text it came from.

    Made from the text, or from its UTF-8 bytes (``load``'s), which are decoded when ``text`` is
    first asked for: the checks of a valid file may never ask. ``first_line`` is the line of the
    text's first character in its file (JSONL records); ``compact`` says the text is the
    compact encoding of the value (``_COMPACT``), optionally followed by one newline (computed
    on the first request, as the positions are); ``outside`` is the text's bytes outside its
    strings (``_outside_strings``) when the reader made them already.
    """

    __slots__ = (
        "_compact",
        "_data",
        "_line_starts",
        "_outside",
        "_positions",
        "_text",
        "first_line",
        "value",
    )

    def __init__(
        self, text: str | bytes, value: object, first_line: int = 1, outside: bytes | None = None
    ):
        if isinstance(text, bytes):
            self._text: str | None = None
            self._data = text
        else:
            self._text = text
            self._data = b""  # encoded if the compact proof is asked for
        self.value = value
        self.first_line = first_line
        self._outside = outside
        self._compact: bool | None = None
        self._positions: dict[str, int] | None = None
        self._line_starts: list[int] | None = None

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = self._data.decode("utf-8")  # the reader accepted them: valid UTF-8
        return self._text

    @property
    def compact(self) -> bool:
        if self._compact is None:
            # a text given as such may hold lone surrogates: as bytes of their own, never ASCII
            data = self._data or self.text.encode("utf-8", "surrogatepass")
            self._compact = _is_compact(data, self)
        return self._compact

    def line_col(self, offset: int) -> tuple[int, int]:
        if self._line_starts is None:
            self._line_starts = [0] + [m.end() for m in re.finditer("\n", self.text)]
        index = bisect.bisect_right(self._line_starts, offset) - 1
        return self.first_line + index, offset - self._line_starts[index] + 1

    def position(self, pointer: str) -> tuple[int, int]:
        """Line and column of the value at ``pointer``, or of its nearest existing ancestor."""
        if self._positions is None:
            # the position scanner: only a finding's position needs it
            from continuity_checks.core.json_positions import scan_positions

            self._positions = scan_positions(self.text).positions
        return self.line_col(self._positions.get(jp.nearest(pointer, self._positions), 0))


def _is_compact(data: bytes, doc: Document) -> bool:
    """Whether ``doc``'s text, whose UTF-8 encoding is ``data``, is the compact encoding of its
    value (``_COMPACT``), optionally followed by one newline. Every test here is of ASCII
    characters, which UTF-8 writes as one byte each and as no byte of any other character.
    Without a backslash every string in the text is written as the encoding writes it, so only
    what lies between the strings and the numbers can differ; the rest (escapes, floats,
    ``-0``) is encoded and compared."""
    between = doc._outside if doc._outside is not None else _outside_strings(data)
    if between is None:  # a backslash
        return _is_encoded(doc.text, doc.value)
    rest = between.lstrip(_PUNCTUATION_AND_DIGITS)
    # no space, no literal, no float, no sign, but a final newline: the common case, in one
    # test (a newline that ends the text is outside every string)
    if not rest or (rest == b"\n" and data[-1] == _NEWLINE):
        return True
    if data[-1] == _NEWLINE:
        between = between[:-1]
    if b" " in between or b"\n" in between or b"\t" in between or b"\r" in between:
        return False
    # letters between strings: true, false, null and exponents (a float, as is a "." )
    floats = b"." in between or b"E" in between
    if floats or b"-0" in between or between.count(b"e") != _literal_es(between):
        return _is_encoded(doc.text, doc.value)
    return True


def _outside_strings(data: bytes) -> bytes | None:
    """The bytes of the JSON text ``data`` outside its strings (their quotes left out), or None
    when it holds a backslash (an escaped quote ends no string)."""
    if _BACKSLASH in data:  # a byte by its value: ``in`` with bytes first tries it as a number
        return None
    return b"".join(data.split(b'"')[::2])  # with no escapes, every quote opens or closes


def _is_encoded(text: str, value: object) -> bool:
    """Whether ``text`` is ``_COMPACT``'s encoding of ``value``, optionally followed by one
    newline."""
    return _COMPACT.encode(value) == (text[:-1] if text.endswith("\n") else text)


_PUNCTUATION_AND_DIGITS = b"[]{},:0123456789"
_STRUCTURE = b"[]{},: \t\n\r"  # JSON's punctuation and whitespace
_BACKSLASH = ord("\\")
_NEWLINE = ord("\n")


def _literal_es(between: bytes) -> int:
    """The number of e's that ``true`` and ``false`` put in ``between``."""
    return between.count(b"true") + between.count(b"false")


def located(rule: Rule, doc: Document, path: str, pointer: str, message: str) -> Finding:
    """A finding in the file ``path`` at the position of ``pointer`` in ``doc``."""
    line, column = doc.position(pointer)
    return rule.finding(path, message, line=line, column=column, pointer=pointer)


class Problem:
    """Why bytes could not become a Document: the rule they break and where."""

    __slots__ = ("column", "line", "message", "pointer", "rule")

    def __init__(
        self, rule: Rule, message: str, line: int, column: int, pointer: str | None = None
    ) -> None:
        self.rule = rule
        self.message = message
        self.line = line
        self.column = column
        self.pointer = pointer

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Problem):
            return NotImplemented
        return self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]  # mutable, as Document

    def __repr__(self) -> str:
        rule, message, line, column, pointer = self._fields()
        return f"Problem({rule.id}, {message!r}, {line}, {column}, {pointer!r})"

    def _fields(self) -> tuple[Rule, str, int, int, str | None]:
        return self.rule, self.message, self.line, self.column, self.pointer

    def finding(self, path: str) -> Finding:
        return self.rule.finding(
            path, self.message, line=self.line, column=self.column, pointer=self.pointer
        )


def load(
    data: bytes,
    *,
    max_depth: int = DEFAULT_MAX_DEPTH,
    first_line: int = 1,
    lone_surrogates: bool = False,
    compact_proof: bool = False,
) -> Document | Problem:
    """Decode and parse ``data`` strictly. Never raises for any input. ``lone_surrogates``
    accepts an unpaired surrogate escape (``"\\ud83d"``) as JavaScript's ``JSON.parse`` does,
    for files whose writer is JavaScript (``JSON.stringify`` writes one so). ``compact_proof``:
    the caller asks for ``Document.compact``; the bytes outside the strings, which that proof
    reads, are cut once here, and spare the walk of the value where they show it holds no
    number and cannot nest past ``max_depth``."""
    outside = _outside_strings(data) if compact_proof else None
    value = _compiled(data, max_depth, outside)
    if value is not _UNDECIDED:
        return Document(data, value, first_line, outside)
    return _load_strictly(
        data, max_depth=max_depth, first_line=first_line, lone_surrogates=lone_surrogates
    )


def _load_strictly(
    data: bytes,
    *,
    max_depth: int = DEFAULT_MAX_DEPTH,
    first_line: int = 1,
    lone_surrogates: bool = False,
) -> Document | Problem:
    """:func:`load` by the Python reader alone: the same answer for every input (the tests hold
    them together), with the rule and the position of a refusal."""
    if data.startswith(_UTF8_BOM):
        return Problem(cc.BOM, "expected JSON text, found a UTF-8 byte order mark", first_line, 1)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = first_line + data.count(b"\n", 0, exc.start)
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        column = len(data[line_start : exc.start].decode("utf-8", "replace")) + 1
        return Problem(
            cc.INVALID_UTF8,
            f"expected UTF-8, found byte 0x{data[exc.start]:02X} that starts no valid sequence",
            line,
            column,
        )
    return _parse_strictly(
        text, max_depth=max_depth, first_line=first_line, lone_surrogates=lone_surrogates
    )


# --- the compiled reader ----------------------------------------------------------------------

_UNDECIDED = object()  # what _compiled gives when the Python reader must decide
_LARGEST_PLAIN_INT = 2**1000  # below the largest double: an int under it is always finite


def _compiled(data: bytes, max_depth: int, outside: bytes | None = None) -> object:
    """The value of ``data`` when the compiled reader accepts it and no rule it does not check
    (depth, numbers beyond a double) refuses it; else ``_UNDECIDED``. It accepts no input the
    Python reader refuses (the differential tests hold them together) and refuses some it
    accepts (unpaired surrogate escapes, nesting deeper than its own limit). ``outside``: the
    bytes of ``data`` outside its strings (``_outside_strings``), when known."""
    try:
        value = jiter.from_json(data, allow_inf_nan=False, catch_duplicate_keys=True)
    except ValueError:
        return _UNDECIDED
    if outside is not None and len(outside) <= max_depth and not outside.strip(_STRUCTURE):
        # only punctuation and whitespace outside the strings: no number (its digits would be
        # there), and no more levels of nesting than brackets there
        return value
    try:
        if type(value) is dict or type(value) is list:
            plain = max_depth >= 1 and _plain_members(value, max_depth - 1)
        else:
            plain = _plain_members([value], 0)
    except RecursionError:  # nesting beyond the interpreter's limit: the Python reader says so
        return _UNDECIDED
    return value if plain else _UNDECIDED


def _plain_members(node: dict[str, object] | list[object], depth_left: int) -> bool:
    """Whether the members of ``node`` nest at most ``depth_left`` more levels and every number
    among them is a finite float or an int well inside a double (jiter reads ``1e400`` as
    infinity and a 400-digit integer as an int: the Python reader decides those)."""
    for member in node.values() if type(node) is dict else node:
        kind = type(member)
        if kind is str:
            continue
        if kind is dict or kind is list:
            if depth_left < 1 or not _plain_members(member, depth_left - 1):  # type: ignore[arg-type]
                return False
        elif kind is float:
            if member in (_INF, -_INF):
                return False
        elif kind is int and not -_LARGEST_PLAIN_INT < member < _LARGEST_PLAIN_INT:  # type: ignore[operator]
            return False
    return True


class _TooDeep(Exception):
    def __init__(self, pointer: str) -> None:
        self.pointer = pointer


class _Surrogate(Exception):
    def __init__(self, pointer: str) -> None:
        self.pointer = pointer


def _strict_value(text: str, max_depth: int, lone_surrogates: bool = False) -> object:
    """The value of ``text`` under every rule of strict JSON, or the exception that says which
    rule it breaks: the one definition of strict, shared by :func:`accepts` and :func:`parse`.
    ``lone_surrogates`` lifts the one rule about unpaired surrogate escapes.

    Raises ``json.JSONDecodeError`` (syntax), ``ValueError`` (a number Python refuses),
    ``RecursionError``, :class:`_DuplicateKey`, :class:`_NonStandard`, :class:`_TooDeep` and
    :class:`_Surrogate`.
    """
    # what json.JSONDecoder.decode does, without its per-call regular expressions
    start = len(text) - len(text.lstrip(_SPACE))
    long_digits = len(text) >= _DOUBLE_DIGITS and _long_digit_run(text)
    try:
        value, end = (_scan_long_ints if long_digits else _scan)(text, start)
    except StopIteration as stop:
        raise json.JSONDecodeError("Expecting value", text, stop.value) from None
    if end != len(text) and text[end:].strip(_SPACE):
        end += len(text[end:]) - len(text[end:].lstrip(_SPACE))
        raise json.JSONDecodeError("Extra data", text, end)
    if text.count("[") + text.count("{") > max_depth:
        deep = _too_deep(value, max_depth)
        if deep is not None:
            raise _TooDeep(deep)
    if not lone_surrogates and "\\u" in text:  # a lone surrogate can only come from an escape
        bad = lone_surrogate(value)
        if bad is not None:
            raise _Surrogate(bad)
    return value


def accepts(
    data: bytes, max_depth: int = DEFAULT_MAX_DEPTH, *, lone_surrogates: bool = False
) -> tuple[str, object] | None:
    """The text and value of ``data`` when :func:`load` would accept it, else None: the same
    rules without positions or messages, for callers that only need to know (history mode
    reads thousands of versions)."""
    value = _compiled(data, max_depth)
    if value is not _UNDECIDED:
        return data.decode("utf-8"), value
    if data.startswith(_UTF8_BOM):
        return None
    try:
        text = data.decode("utf-8")
        return text, _strict_value(text, max_depth, lone_surrogates)
    except (
        ValueError,
        RecursionError,
        _DuplicateKey,
        _NonStandard,
        _TooDeep,
        _Surrogate,
    ):
        return None


def parse(
    text: str,
    *,
    max_depth: int = DEFAULT_MAX_DEPTH,
    first_line: int = 1,
    lone_surrogates: bool = False,
) -> Document | Problem:
    """Parse already decoded text strictly. Never raises for any input."""
    try:
        value = _compiled(text.encode("utf-8"), max_depth)
    except UnicodeEncodeError:  # a surrogate in the text: the Python reader says where
        value = _UNDECIDED
    if value is not _UNDECIDED:
        return Document(text, value, first_line)
    return _parse_strictly(
        text, max_depth=max_depth, first_line=first_line, lone_surrogates=lone_surrogates
    )


def _one_line(text: str) -> bool:
    """Whether ``text`` has no line break but a final one, as a compact encoding (a string's
    line break is escaped in it)."""
    return text.find("\n", 0, len(text) - 1) < 0


def _parse_strictly(
    text: str,
    *,
    max_depth: int = DEFAULT_MAX_DEPTH,
    first_line: int = 1,
    lone_surrogates: bool = False,
) -> Document | Problem:
    """:func:`parse` by the Python reader alone: the strict decoder's hooks on every object and
    number. The same answer as :func:`parse` for every text (the tests hold them together)."""
    # the position scanner: only a refusal it explains needs it
    from continuity_checks.core.json_positions import scan_positions

    doc = Document(text, None, first_line)
    try:
        doc.value = _strict_value(text, max_depth, lone_surrogates)
    except json.JSONDecodeError as exc:
        line, column = doc.line_col(exc.pos)
        return Problem(cc.SYNTAX, f"expected JSON, found an error: {exc.msg}", line, column)
    except ValueError as exc:  # e.g. an integer longer than the interpreter's digit limit
        return Problem(
            cc.SYNTAX, f"expected JSON, found a value Python refuses: {exc}", *doc.line_col(0)
        )
    except _DuplicateKey as exc:
        result = scan_positions(text)
        line, column = doc.line_col(result.duplicate_offset if result.duplicate_offset >= 0 else 0)
        return Problem(
            cc.DUPLICATE_KEY,
            f"expected each key once in an object, found {exc.key!r} again",
            line,
            column,
            result.duplicate_pointer,
        )
    except _NonStandard as exc:
        result = scan_positions(text)
        line, column = doc.line_col(max(result.constant_offset, 0))
        return Problem(
            cc.NON_STANDARD_NUMBER,
            f"expected a finite JSON number, found {exc.name}",
            line,
            column,
            result.constant_pointer,
        )
    except RecursionError:
        return Problem(
            cc.TOO_DEEP,
            f"expected nesting of at most {max_depth} levels, found deeper",
            *doc.line_col(0),
        )
    except _TooDeep as exc:
        line, column = doc.position(exc.pointer)
        return Problem(
            cc.TOO_DEEP,
            f"expected nesting of at most {max_depth} levels, found deeper",
            line,
            column,
            exc.pointer,
        )
    except _Surrogate as exc:
        line, column = doc.position(exc.pointer)
        return Problem(
            cc.LONE_SURROGATE,
            "expected a string of Unicode characters, found an unpaired surrogate escape",
            line,
            column,
            exc.pointer,
        )
    return doc


def _too_deep(value: object, max_depth: int) -> str | None:
    stack: list[tuple[object, str, int]] = [(value, "", 0)]
    while stack:
        node, ptr, depth = stack.pop()
        if isinstance(node, dict):
            if depth + 1 > max_depth:
                return ptr
            stack.extend((v, jp.append(ptr, k), depth + 1) for k, v in node.items())
        elif isinstance(node, list):
            if depth + 1 > max_depth:
                return ptr
            stack.extend((v, jp.append(ptr, i), depth + 1) for i, v in enumerate(node))
    return None


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def lone_surrogate(value: object) -> str | None:
    """The pointer of the first string in document order (or of the object whose key) holding
    an unpaired surrogate in ``value``, or None when every string is Unicode text."""
    stack: list[tuple[object, str]] = [(value, "")]
    while stack:
        node, ptr = stack.pop()
        if isinstance(node, str):
            if _has_surrogate(node):
                return ptr
        elif isinstance(node, dict):
            if any(_has_surrogate(k) for k in node):
                return ptr
            stack.extend((v, jp.append(ptr, k)) for k, v in reversed(node.items()))
        elif isinstance(node, list):
            stack.extend((node[i], jp.append(ptr, i)) for i in range(len(node) - 1, -1, -1))
    return None


def well_formed(value: object) -> object:
    """``value`` with every unpaired surrogate in its strings and keys replaced by U+FFFD (what
    a UTF-8 encoder of JavaScript writes for one), for consumers that need Unicode text (the
    schema engine); ``value`` itself when it has none."""
    if lone_surrogate(value) is None:
        return value

    def text(string: str) -> str:
        return string.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")

    def copy(node: object) -> object:
        if isinstance(node, str):
            return text(node)
        if isinstance(node, dict):
            return {text(k): copy(v) for k, v in node.items()}
        if isinstance(node, list):
            return [copy(v) for v in node]
        return node

    return copy(value)
