"""Canonical JSON as JavaScript writes it.

The expected texts in the tables are written by hand from ECMA-262 (``Number::toString``,
``QuoteJSONString``, ``OrdinaryOwnPropertyKeys``, ``JSON.stringify``'s ``space``); node, when
present, checks a few thousand random values against the real ``JSON.stringify``.
"""

from __future__ import annotations

import enum
import hashlib
import json
import math
import random
import shutil
import struct
import subprocess
from collections import OrderedDict
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from continuity_checks.core import canonical_json as cj
from tests.conftest import CORPUS

# --- numbers -------------------------------------------------------------------------------
# Number::toString with k shortest digits s and the value s * 10**(n - k):
#   k <= n <= 21: s then n - k zeros        0 < n <= 21: a point after n digits
#   -6 < n <= 0: "0." then -n zeros then s   otherwise: d[.ddd]e(+|-)(n - 1)

NUMBERS: list[tuple[int | float, str]] = [
    # zero, both signs
    (0.0, "0"),
    (-0.0, "0"),
    (0, "0"),
    # k <= n <= 21: integers written out, up to just below 1e21
    (1.0, "1"),
    (-1.0, "-1"),
    (100.0, "100"),
    (1e15, "1000000000000000"),
    (1e16, "10000000000000000"),
    (1.5e16, "15000000000000000"),
    (12345678901234567.0, "12345678901234568"),
    (2.0**53, "9007199254740992"),
    (2.0**60, "1152921504606847000"),
    (1e20, "100000000000000000000"),
    (-1e20, "-100000000000000000000"),
    (123456789012345680000.0, "123456789012345680000"),
    (999999999999999900000.0, "999999999999999900000"),  # the double just below 1e21
    # 0 < n <= 21 with more digits than n: a decimal point inside the digits
    (1.5, "1.5"),
    (-2.5, "-2.5"),
    (4.35, "4.35"),
    (123.456, "123.456"),
    (12345.6789, "12345.6789"),
    (1000000000000000.5, "1000000000000000.5"),
    (1.7976931348623157, "1.7976931348623157"),
    # -6 < n <= 0: leading "0." and zeros, down to 1e-6
    (0.1, "0.1"),
    (0.5, "0.5"),
    (0.1 + 0.2, "0.30000000000000004"),
    (0.001, "0.001"),
    (0.0001, "0.0001"),
    (0.00001, "0.00001"),
    (1.2345e-5, "0.000012345"),
    (0.000001, "0.000001"),
    (-0.000001, "-0.000001"),
    (1.5e-6, "0.0000015"),
    # exponent form: n > 21 or n <= -6
    (1e21, "1e+21"),
    (-1e21, "-1e+21"),
    (1.5e21, "1.5e+21"),
    (1e100, "1e+100"),
    (1.5e300, "1.5e+300"),
    (1.7976931348623157e308, "1.7976931348623157e+308"),
    (-1.7976931348623157e308, "-1.7976931348623157e+308"),
    (9.999999999999997e-7, "9.999999999999997e-7"),  # the double just below 1e-6
    (1e-7, "1e-7"),
    (-1e-7, "-1e-7"),
    (1.5e-7, "1.5e-7"),
    (123e-20, "1.23e-18"),
    (1.25e-100, "1.25e-100"),
    (2.2250738585072014e-308, "2.2250738585072014e-308"),  # smallest normal
    (2.225073858507201e-308, "2.225073858507201e-308"),  # largest subnormal
    (1e-310, "1e-310"),
    (5e-324, "5e-324"),  # smallest subnormal
    (-5e-324, "-5e-324"),
    # ints: exact up to 2**53, else the double JavaScript would hold (ties to even)
    (7, "7"),
    (-7, "-7"),
    (2**53, "9007199254740992"),
    (-(2**53), "-9007199254740992"),
    (2**53 + 1, "9007199254740992"),
    (-(2**53 + 1), "-9007199254740992"),
    (2**53 + 3, "9007199254740996"),
    (2**64, "18446744073709552000"),
    (10**20, "100000000000000000000"),
    (10**21, "1e+21"),
    (123456789012345678901234567890, "1.2345678901234568e+29"),
]


@pytest.mark.parametrize(("number", "text"), NUMBERS, ids=[t for _, t in NUMBERS])
def test_numbers_are_written_as_number_to_string(number: int | float, text: str) -> None:
    assert cj.format_number(number) == text
    assert cj.dumps(number) == text
    assert cj.dumps([number]) == f"[{text}]"


@pytest.mark.parametrize("number", [math.nan, math.inf, -math.inf, 10**400, -(10**400)])
def test_numbers_json_cannot_hold_are_refused(number: int | float) -> None:
    with pytest.raises(ValueError):
        cj.format_number(number)
    with pytest.raises(ValueError):
        cj.dumps({"a": [number]})


@pytest.mark.parametrize("value", [True, "1", None, 1j])
def test_format_number_takes_only_numbers(value: Any) -> None:
    with pytest.raises(TypeError):
        cj.format_number(value)


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_every_finite_float_round_trips(x: float) -> None:
    assert float(cj.format_number(x)) == x


# --- strings -------------------------------------------------------------------------------

SHORT_ESCAPES = {0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r"}


@pytest.mark.parametrize("code", range(0x20))
def test_every_control_character_is_escaped(code: int) -> None:
    expected = SHORT_ESCAPES.get(
        code, "\\u00" + "0123456789abcdef"[code >> 4] + "0123456789abcdef"[code & 15]
    )
    assert cj.dumps(chr(code)) == '"' + expected + '"'
    assert cj.dumps("a" + chr(code) + "b") == '"a' + expected + 'b"'


STRINGS: list[tuple[str, str]] = [
    ("", '""'),
    ("abc", '"abc"'),
    ('"', '"\\""'),
    ("\\", '"\\\\"'),
    ('say "hi"\\n', '"say \\"hi\\"\\\\n"'),
    ("\b\f\n\r\t", '"\\b\\f\\n\\r\\t"'),
    ("\x00\x1f\x0b", '"\\u0000\\u001f\\u000b"'),
    ("/", '"/"'),
    ("\x7f", '"\x7f"'),
    ("\x80\x9f", '"\x80\x9f"'),
    ("\u2028\u2029", '"\u2028\u2029"'),
    ("\ufeff", '"\ufeff"'),
    ("café — Кириллица", '"café — Кириллица"'),
    ("\uff61\ue000\uffff", '"\uff61\ue000\uffff"'),
    ("\U0001f600", '"\U0001f600"'),
    ("\U0010ffff", '"\U0010ffff"'),
    # lone surrogates: escaped, lowercase hex
    ("\ud800", '"\\ud800"'),
    ("\udbff", '"\\udbff"'),
    ("\udc00", '"\\udc00"'),
    ("\udfff", '"\\udfff"'),
    ("a\ud83db", '"a\\ud83db"'),
    ("\ude00\ud83d", '"\\ude00\\ud83d"'),
    ("\ud83d\ud83d", '"\\ud83d\\ud83d"'),
    # a high then a low surrogate is a pair in a JavaScript string: one character
    ("\ud83d\ude00", '"\U0001f600"'),
    ("\ud83d\ud83d\ude00", '"\\ud83d\U0001f600"'),
    ("\ud83d\ude00\ude00", '"\U0001f600\\ude00"'),
    ("\ud800\U0001f600\udc00", '"\\ud800\U0001f600\\udc00"'),
    ('\ud800"\n', '"\\ud800\\"\\n"'),
    ("\udbff\udfff", '"\U0010ffff"'),
]


@pytest.mark.parametrize(("text", "json_text"), STRINGS)
def test_strings_are_quoted_as_json_stringify(text: str, json_text: str) -> None:
    assert cj.format_string(text) == json_text
    assert cj.dumps(text) == json_text
    assert cj.dumps({text: text}) == "{" + json_text + ":" + json_text + "}"
    # always valid UTF-8: lone surrogates never reach the encoder
    assert cj.dump_bytes(text).decode("utf-8") == json_text


def test_lone_surrogate_from_json_loads() -> None:
    value = json.loads('{"k": "x\\ud800y", "p": "\\ud83d\\ude00"}')
    assert cj.dump_bytes(value) == b'{"k":"x\\ud800y","p":"\xf0\x9f\x98\x80"}'


# --- keys ----------------------------------------------------------------------------------

KEY_ORDER_CASES: list[tuple[dict[str, Any], str, str, str]] = [
    # (value, utf16, codepoint, insertion)
    (
        {"\uff61": 1, "\U0001f600": 2},
        '{"\U0001f600":2,"\uff61":1}',
        '{"\uff61":1,"\U0001f600":2}',
        '{"\uff61":1,"\U0001f600":2}',
    ),
    (
        {"\U00010000": 1, "\ue000": 2, "\ud7ff": 3},
        '{"\ud7ff":3,"\U00010000":1,"\ue000":2}',
        '{"\ud7ff":3,"\ue000":2,"\U00010000":1}',
        '{"\U00010000":1,"\ue000":2,"\ud7ff":3}',
    ),
    (
        {"a\uffff": 1, "a\U0001f600": 2, "a": 3},
        '{"a":3,"a\U0001f600":2,"a\uffff":1}',
        '{"a":3,"a\uffff":1,"a\U0001f600":2}',
        '{"a\uffff":1,"a\U0001f600":2,"a":3}',
    ),
    # two surrogate code points make one astral key, sorted as that character
    (
        {"\ud83d\ude00": 1, "\uff61": 2},
        '{"\U0001f600":1,"\uff61":2}',
        '{"\uff61":2,"\U0001f600":1}',
        '{"\U0001f600":1,"\uff61":2}',
    ),
    # a lone surrogate sorts as its code unit, below U+E000 either way
    (
        {"\uff61": 1, "\ud800": 2, "\U0001f600": 3},
        '{"\\ud800":2,"\U0001f600":3,"\uff61":1}',
        '{"\\ud800":2,"\uff61":1,"\U0001f600":3}',
        '{"\uff61":1,"\\ud800":2,"\U0001f600":3}',
    ),
    (
        {"b": 1, "B": 2, "a": 3, "_": 4, "": 5, "é": 6},
        '{"":5,"B":2,"_":4,"a":3,"b":1,"é":6}',
        '{"":5,"B":2,"_":4,"a":3,"b":1,"é":6}',
        '{"b":1,"B":2,"a":3,"_":4,"":5,"é":6}',
    ),
    # array-index keys come first in numeric order, whatever the requested order
    (
        {"b": 0, "10": 1, "9": 2, "01": 3, "4294967294": 4, "4294967295": 5, "-1": 6, "1.5": 7},
        '{"9":2,"10":1,"4294967294":4,"-1":6,"01":3,"1.5":7,"4294967295":5,"b":0}',
        '{"9":2,"10":1,"4294967294":4,"-1":6,"01":3,"1.5":7,"4294967295":5,"b":0}',
        '{"9":2,"10":1,"4294967294":4,"b":0,"01":3,"4294967295":5,"-1":6,"1.5":7}',
    ),
    (
        {"x2": 0, "0": 1, "\u0661": 2, "00": 3, "\U0001f600": 4},
        '{"0":1,"00":3,"x2":0,"\u0661":2,"\U0001f600":4}',
        '{"0":1,"00":3,"x2":0,"\u0661":2,"\U0001f600":4}',
        '{"0":1,"x2":0,"\u0661":2,"00":3,"\U0001f600":4}',
    ),
]


@pytest.mark.parametrize(("value", "utf16", "codepoint", "insertion"), KEY_ORDER_CASES)
def test_key_orders(value: dict[str, Any], utf16: str, codepoint: str, insertion: str) -> None:
    assert cj.dumps(value) == utf16
    assert cj.dumps(value, key_order="utf16") == utf16
    assert cj.dumps(value, key_order="codepoint") == codepoint
    assert cj.dumps(value, key_order="insertion") == insertion


def test_keys_are_ordered_at_every_depth() -> None:
    value = {"z": [{"b": 1, "a": {"d": 1, "c": 2}}], "y": {"\uff61": 0, "\U0001f600": 1}}
    assert cj.dumps(value) == '{"y":{"\U0001f600":1,"\uff61":0},"z":[{"a":{"c":2,"d":1},"b":1}]}'
    assert (
        cj.dumps(value, key_order="insertion")
        == '{"z":[{"b":1,"a":{"d":1,"c":2}}],"y":{"\uff61":0,"\U0001f600":1}}'
    )


def test_keys_that_are_one_javascript_string_are_refused() -> None:
    with pytest.raises(ValueError, match="same JavaScript string"):
        cj.dumps({"\ud83d\ude00": 1, "\U0001f600": 2})


@pytest.mark.parametrize("key", [1, None, 1.5, ("a",), b"a"])
def test_keys_must_be_strings(key: Any) -> None:
    with pytest.raises(TypeError, match="keys must be str"):
        cj.dumps({"a": 1, key: 2})


def test_unknown_key_order_is_refused() -> None:
    with pytest.raises(ValueError, match="key_order"):
        cj.dumps({}, key_order="python")  # type: ignore[arg-type]


# --- indent --------------------------------------------------------------------------------

INDENTED: list[tuple[Any, int, str]] = [
    ({}, 2, "{}"),
    ([], 2, "[]"),
    (1.0, 2, "1"),
    ("a", 2, '"a"'),
    ([[]], 2, "[\n  []\n]"),
    ({"a": {}}, 2, '{\n  "a": {}\n}'),
    ([1, 2], 2, "[\n  1,\n  2\n]"),
    (
        {"b": [1, {"c": None, "a": []}], "a": {"x": "y"}},
        2,
        '{\n  "a": {\n    "x": "y"\n  },\n  "b": [\n    1,\n    {\n      "a": [],\n      "c": null\n    }\n  ]\n}',
    ),
    (
        [{"a": [True, False]}],
        4,
        '[\n    {\n        "a": [\n            true,\n            false\n        ]\n    }\n]',
    ),
    ([1, [2]], 1, "[\n 1,\n [\n  2\n ]\n]"),
    # space is clamped to 10, and below 1 means compact
    ([1], 12, "[\n          1\n]"),
    ([1], 10, "[\n          1\n]"),
    ({"a": [1]}, 0, '{"a":[1]}'),
    ({"a": [1]}, -3, '{"a":[1]}'),
]


@pytest.mark.parametrize(("value", "indent", "text"), INDENTED)
def test_indent_is_json_stringify_space(value: Any, indent: int, text: str) -> None:
    assert cj.dumps(value, indent=indent) == text


@pytest.mark.parametrize("indent", ["2", 2.0, True])
def test_indent_must_be_an_int(indent: Any) -> None:
    with pytest.raises(TypeError, match="indent"):
        cj.dumps([1], indent=indent)


# --- values and containers ------------------------------------------------------------------


class Color(enum.IntEnum):
    RED = 1


def test_python_values_map_to_json() -> None:
    value = OrderedDict([("t", (True, False, None)), ("e", Color.RED), ("s", [])])
    assert cj.dumps(value) == '{"e":1,"s":[],"t":[true,false,null]}'
    assert cj.dump_bytes({"é": "€"}) == '{"é":"€"}'.encode()


@pytest.mark.parametrize("value", [{1, 2}, b"x", object(), range(2), {"a": [bytearray()]}])
def test_other_types_are_refused(value: Any) -> None:
    with pytest.raises(TypeError):
        cj.dumps(value)


def test_cycles_are_refused() -> None:
    cyclic: list[Any] = [1]
    cyclic.append([cyclic])
    with pytest.raises(ValueError, match="circular"):
        cj.dumps(cyclic)
    looped: dict[str, Any] = {}
    looped["a"] = {"b": looped}
    with pytest.raises(ValueError, match="circular"):
        cj.dumps(looped)


def test_shared_containers_are_not_cycles() -> None:
    shared = [1]
    assert cj.dumps({"a": shared, "b": [shared, shared]}) == '{"a":[1],"b":[[1],[1]]}'


@pytest.mark.parametrize("depth", [1000, 50_000])
def test_deep_nesting_needs_no_recursion(depth: int) -> None:
    value: Any = 0
    opening: list[str] = []
    for i in range(depth):
        value = [value] if i % 2 else {"k": value}
        opening.append("[" if i % 2 else '{"k":')
    closing = "".join("]" if i % 2 else "}" for i in range(depth))
    assert cj.dumps(value) == "".join(reversed(opening)) + "0" + closing


# --- properties ----------------------------------------------------------------------------


def _is_array_index(key: str) -> bool:
    return key.isascii() and key.isdigit() and str(int(key)) == key and int(key) < 2**32 - 1


# JavaScript hoists array-index keys; Python's json never does, so the comparisons leave them out
_no_surrogates = st.characters(blacklist_categories=["Cs"])
_bmp_keys = st.text(st.characters(max_codepoint=0xFFFF, blacklist_categories=["Cs"]), max_size=6)
_any_keys = st.text(_no_surrogates, max_size=6)
_scalars = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(_no_surrogates)


def _json(keys: st.SearchStrategy[str], scalars: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    keys = keys.filter(lambda k: not _is_array_index(k))
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=5) | st.dictionaries(keys, inner, max_size=5),
        max_leaves=30,
    )


@given(_json(_bmp_keys, _scalars))
def test_without_floats_and_astral_keys_it_is_sorted_python_json(value: Any) -> None:
    # on BMP keys UTF-16 order is code point order, and without floats nothing else differs
    expected = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    assert cj.dumps(value) == expected
    pretty = json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True)
    assert cj.dumps(value, indent=2) == pretty


@given(_json(_any_keys, _scalars))
def test_codepoint_order_is_python_order(value: Any) -> None:
    expected = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    assert cj.dumps(value, key_order="codepoint") == expected
    insertion = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    assert cj.dumps(value, key_order="insertion") == insertion


@given(_json(_any_keys, _scalars | st.floats(allow_nan=False, allow_infinity=False)))
def test_output_parses_back_to_the_value(value: Any) -> None:
    # every JSON number is a double in JavaScript (and 1e+16 is written as an integer)
    assert json.loads(cj.dump_bytes(value), parse_int=float) == value


# --- real data -----------------------------------------------------------------------------

_DSH_STATES = [
    "dsh/evidence/memory-injections/WORKING_STATE.json",
    "dsh/derived/live-log-2026-08-25-qualification-v080.WORKING_STATE.reconstructed.json",
]
_STATE_HASH_FIELDS = [
    "task_id",
    "known",
    "constraints",
    "decisions",
    "evidence",
    "failed_hypotheses",
    "do_not_repeat",
    "open_acceptance",
    "next_action",
]


@pytest.mark.parametrize("path", _DSH_STATES)
def test_dsh_working_state_bytes_and_state_hash(path: str) -> None:
    data = (CORPUS / path).read_bytes()
    state = json.loads(data)
    # DSH writes JSON.stringify(state, null, 2) + "\n" and hashes the compact subset
    if path.startswith("dsh/evidence/"):
        assert cj.dump_bytes(state, indent=2, key_order="insertion") + b"\n" == data
    subset = {name: state[name] for name in _STATE_HASH_FIELDS}
    digest = hashlib.sha256(cj.dump_bytes(subset, key_order="insertion")).hexdigest()
    assert digest == state["checkpoint_meta"]["state_hash"]


# --- node as the reference -----------------------------------------------------------------

NODE = shutil.which("node")

_NODE_SCRIPT = r"""
const codepoint = (a, b) => {
  const x = Array.from(a, (c) => c.codePointAt(0)), y = Array.from(b, (c) => c.codePointAt(0));
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
};
const canon = (v, order) => {
  if (Array.isArray(v)) return v.map((x) => canon(x, order));
  if (v === null || typeof v !== "object") return v;
  const keys = Object.keys(v);
  if (order === "utf16") keys.sort();
  else if (order === "codepoint") keys.sort(codepoint);
  return Object.fromEntries(keys.map((k) => [k, canon(v[k], order)]));
};
let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", () => {
  const out = JSON.parse(input).map(([order, indent, v]) =>
    JSON.stringify(canon(v, order), null, indent === null ? undefined : indent));
  process.stdout.write(JSON.stringify(out));
});
"""

_ALPHABET = (
    ["a", "b", "Z", "_", "-", "0", "1", "9", " ", '"', "\\", "/", "é", "€", "Ж"]
    + [chr(c) for c in (0x00, 0x08, 0x09, 0x0A, 0x0C, 0x0D, 0x1B, 0x1F, 0x7F, 0x85)]
    + ["\u2028", "\u2029", "\ufeff", "\ud7ff", "\ue000", "\uff61", "\uffff"]
    + ["\U00010000", "\U0001f600", "\U0010ffff"]
    + ["\ud800", "\udbff", "\udc00", "\udfff", "\ud83d", "\ude00"]
)
_KEY_POOL = ["__proto__", "0", "7", "10", "01", "4294967294", "4294967295", "-1", "1e3"]


def _random_float(rng: random.Random) -> float:
    choice = rng.randrange(6)
    if choice == 0:
        while True:
            x: float = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
            if math.isfinite(x):
                return x
    if choice == 1:  # subnormals
        subnormal: float = struct.unpack("<d", rng.getrandbits(52).to_bytes(8, "little"))[0]
        return subnormal
    if choice == 2:  # near the boundaries of the four cases
        return (
            rng.choice([1.0, -1.0])
            * rng.choice([1, 5, 9.999999999999999, 1.5])
            * 10.0 ** rng.randint(-9, 23)
        )
    if choice == 3:
        return round(rng.uniform(-1e6, 1e6), rng.randint(0, 8))
    if choice == 4:
        return float(rng.randint(-(2**62), 2**62))
    return rng.random() * 10.0 ** rng.randint(-30, 30)


def _random_int(rng: random.Random) -> int:
    choice = rng.randrange(3)
    if choice == 0:
        return rng.randint(-1000, 1000)
    if choice == 1:
        return 2**53 + rng.randint(-5, 5) * rng.choice([1, -1])
    return rng.randint(-(10**30), 10**30)


def _random_text(rng: random.Random, size: int) -> str:
    return "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(0, size)))


def _random_value(rng: random.Random, depth: int) -> Any:
    kind = rng.randrange(8 if depth < 4 else 6)
    if kind == 0:
        return rng.choice([None, True, False])
    if kind == 1:
        return _random_int(rng)
    if kind in (2, 3):
        return _random_float(rng)
    if kind in (4, 5):
        return _random_text(rng, 8)
    if kind == 6:
        return [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    obj: dict[str, Any] = {}
    for _ in range(rng.randint(0, 5)):
        key = rng.choice(_KEY_POOL) if rng.random() < 0.2 else _random_text(rng, 4)
        obj[key] = _random_value(rng, depth + 1)
    # keep keys that JavaScript would see as one string (joined surrogates) from colliding
    joined = [cj.format_string(k) for k in obj]
    if len(set(joined)) != len(joined):
        return _random_value(rng, depth)
    return obj


@pytest.mark.skipif(NODE is None, reason="node is not on PATH")
def test_node_json_stringify_agrees() -> None:
    rng = random.Random(20240611)
    orders = list(cj.KEY_ORDERS)
    indents = [None, None, None, 2, 0, 4, 11]
    cases = [(rng.choice(orders), rng.choice(indents), _random_value(rng, 0)) for _ in range(2000)]
    # Python's json with ensure_ascii escapes lone surrogates, which JSON.parse turns back into
    # lone code units; its number texts parse in node to the same doubles
    payload = json.dumps(cases, ensure_ascii=True)
    assert NODE is not None
    done = subprocess.run(
        [NODE, "-e", _NODE_SCRIPT],
        input=payload.encode("ascii"),
        capture_output=True,
        check=True,
        timeout=60,
    )
    expected = json.loads(done.stdout)
    assert len(expected) == len(cases)
    for (order, indent, value), js in zip(cases, expected, strict=True):
        assert cj.dumps(value, indent=indent, key_order=order) == js, (order, indent, value)
