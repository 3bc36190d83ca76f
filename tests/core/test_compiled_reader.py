"""The compiled reader (jiter) against the Python reader it stands in front of: one verdict,
one value, for every input. Each way the two readers could differ is decided explicitly here
(numbers beyond a double, unpaired surrogates, depth, a BOM, invalid UTF-8, big integers), and
the fuzz mutations of every shipped example are read by both."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from continuity_checks.core import core_rules as cc
from continuity_checks.core import strict_json
from tests.fuzz import mutations

ROOT = Path(__file__).resolve().parents[2]


def _outcome(result: strict_json.Document | strict_json.Problem) -> object:
    """A result as comparable data: the rule and position of a refusal, or the value with its
    types (``repr`` tells ``1`` from ``1.0`` and ``-0.0`` from ``0.0``) and the compact proof."""
    if isinstance(result, strict_json.Problem):
        return ("refused", result.rule.id, result.message, result.line, result.column,
                result.pointer)  # fmt: skip
    return ("accepted", repr(result.value), result.text, result.compact)


def _same_verdict(data: bytes, *, max_depth: int = strict_json.DEFAULT_MAX_DEPTH) -> None:
    for surrogates in (False, True):
        both = strict_json.load(data, max_depth=max_depth, lone_surrogates=surrogates)
        python = strict_json._load_strictly(data, max_depth=max_depth, lone_surrogates=surrogates)
        assert _outcome(both) == _outcome(python), (data[:80], surrogates)
        accepted = strict_json.accepts(data, max_depth, lone_surrogates=surrogates)
        if isinstance(python, strict_json.Problem):
            assert accepted is None, data[:80]
        else:
            assert accepted is not None and repr(accepted[1]) == repr(python.value), data[:80]


# --- each difference between the two readers, decided --------------------------------------------

DECIDED = [
    # numbers beyond a double: jiter reads 1e400 as infinity, the rule refuses it
    (b'{"a":1e400}', cc.NON_STANDARD_NUMBER.id),
    (b'{"a":-1e400}', cc.NON_STANDARD_NUMBER.id),
    (b'{"a":[1E400]}', cc.NON_STANDARD_NUMBER.id),
    (b'{"a":[1e+400]}', cc.NON_STANDARD_NUMBER.id),
    (b'{"a":[2.5E+400]}', cc.NON_STANDARD_NUMBER.id),
    (
        b'{"a":1.7976931348623159e308}',
        cc.NON_STANDARD_NUMBER.id,
    ),  # rounds up past the largest double
    (
        b'{"a":1' + b"0" * 250 + b"e60}",
        cc.NON_STANDARD_NUMBER.id,
    ),  # a two-digit exponent on a long integer part
    (b"[" + b"9" * 400 + b"]", cc.NON_STANDARD_NUMBER.id),  # an integer no double holds
    (b"[" + b"9" * 5000 + b"]", cc.SYNTAX.id),  # beyond the interpreter's digit limit
    (b'{"a":1.7976931348623157e308}', None),  # the largest double itself
    (b'{"a":1e-400}', None),  # underflows to 0.0 in both
    (b'{"a":' + b"9" * 300 + b"}", None),  # a big integer that a double still holds
    (b'{"a":1' + b"0" * 250 + b"e-60}", None),
    (b'{"a":-0.0,"b":-0,"c":1E+2,"d":5e-324}', None),
    # unpaired surrogate escapes: jiter refuses every one; the Python reader decides (refused, or
    # accepted when the family's writer is JavaScript)
    (b'{"a":"\\ud83d"}', cc.LONE_SURROGATE.id),
    (b'["\\ude00\\ud83d"]', cc.LONE_SURROGATE.id),
    (b'["\\ud83d\\ude00"]', None),
    # bytes that are not UTF-8 text, and a BOM
    (b"\xef\xbb\xbf{}", cc.BOM.id),
    (b'"\xed\xa0\x80"', cc.INVALID_UTF8.id),  # a surrogate encoded in UTF-8
    (b'"\xc0\x80"', cc.INVALID_UTF8.id),  # an overlong encoding
    (b'"\xf4\x90\x80\x80"', cc.INVALID_UTF8.id),  # beyond U+10FFFF
    # duplicate keys, however spelled
    (b'{"a":1,"\\u0061":2}', cc.DUPLICATE_KEY.id),
    (b'{"":1,"":2}', cc.DUPLICATE_KEY.id),
    (b'{"a":{"a":1},"a":2}', cc.DUPLICATE_KEY.id),
    # non-standard constants and syntax both refuse
    (b"[NaN]", cc.NON_STANDARD_NUMBER.id),
    (b'{"a":-Infinity}', cc.NON_STANDARD_NUMBER.id),
    (b"[1,]", cc.SYNTAX.id),
    (b'"a\tb"', cc.SYNTAX.id),
    (b"\x0c{}", cc.SYNTAX.id),  # only JSON's four whitespace characters
    (b"", cc.SYNTAX.id),
]


@pytest.mark.parametrize(("data", "rule"), DECIDED)
def test_each_difference_is_decided_as_the_python_reader_decides(
    data: bytes, rule: str | None
) -> None:
    result = strict_json.load(data)
    found = result.rule.id if isinstance(result, strict_json.Problem) else None
    assert found == rule
    _same_verdict(data)


@pytest.mark.parametrize("depth", [0, 1, 2, 5, 64, 300])
def test_depth_is_the_configured_limit_not_the_compiled_readers(depth: int) -> None:
    """jiter stops at a nesting of its own (about 200); the configured limit decides."""
    for levels in {0, max(depth - 1, 0), depth, depth + 1, 250}:
        for brackets in (b"[]", b"{}"):
            if brackets == b"{}":
                data = b'{"k":' * levels + b"1" + b"}" * levels
            else:
                data = b"[" * levels + b"1" + b"]" * levels
            _same_verdict(data, max_depth=depth)
    _same_verdict(b'"[[[[[[[[[["', max_depth=2)  # brackets in a string are not nesting


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_floats_read_to_the_same_double(number: float) -> None:
    for text in (repr(number), f"{number:.17e}", f"{number:.3e}", f"{number:.25f}"):
        data = f'{{"a":{text}}}'.encode()
        _same_verdict(data)


@given(st.integers(min_value=-(10**330), max_value=10**330))
def test_integers_read_to_the_same_int(number: int) -> None:
    _same_verdict(f"[{number}]".encode())


@given(st.binary(max_size=64))
def test_any_bytes_get_one_verdict(data: bytes) -> None:
    _same_verdict(data)


@given(st.text(max_size=20))
def test_any_string_gets_one_verdict(text: str) -> None:
    _same_verdict(json.dumps([text], ensure_ascii=False).encode("utf-8", "surrogatepass"))
    _same_verdict(json.dumps({text: 1}).encode())


def _seeds() -> list[bytes]:
    """Every JSON file shipped in ``examples/``: the files of all five families."""
    paths = sorted(p for p in (ROOT / "examples").rglob("*.json") if p.is_file())
    return [p.read_bytes() for p in paths]


# every mutation of the fuzz runner but ``grow`` (megabytes of the same members: the Python
# reader takes seconds on each, and a long file decides nothing a short one does not)
_MUTATIONS = [
    mutations.flip_bits,
    mutations.insert_token,
    mutations.delete_range,
    mutations.duplicate_range,
    mutations.truncate,
    mutations.replace_value,
    mutations.delete_key,
    mutations.retype_string,
    mutations.reformat,
    mutations.invalid_truncation,
    mutations.invalid_utf8,
    mutations.bom,
    mutations.duplicate_key,
    mutations.not_a_number,
    mutations.lone_surrogate,
    mutations.too_deep,
]


def test_the_fuzz_mutations_of_every_example_get_one_verdict() -> None:
    seeds = _seeds()
    assert len(seeds) >= 10
    rng = random.Random(20261202)
    checked = 0
    for data in seeds:
        _same_verdict(data)
        for mutate in _MUTATIONS:
            for _ in range(4):
                mutated = mutate(rng, data)
                if mutated is not None:
                    _same_verdict(mutated)
                    _same_verdict(mutated, max_depth=3)
                    checked += 1
    assert checked > 500


def test_what_the_compiled_reader_accepts_is_what_json_loads_reads() -> None:
    value = {"a": [1, 1.5, -0.0, 10**30, None, True, "é\n\u2028"], "b": {}, "c": math.pi}
    data = json.dumps(value, ensure_ascii=False).encode()
    doc = strict_json.load(data)
    assert isinstance(doc, strict_json.Document)
    assert repr(doc.value) == repr(json.loads(data))
