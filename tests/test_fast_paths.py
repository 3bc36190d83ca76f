"""The fast paths of ``check --all`` (issue 12) against the slow ones they stand in for: each
must give the same answer for every input, not only for the valid deltas they were made for."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from continuity_checks.core import strict_json

# --- strict JSON: the compact fast path against the strict decoder ------------------------------

_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**320), max_value=10**320)
    | st.floats()
    | st.text(alphabet=st.characters(codec="utf-8"), max_size=6),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=3), c, max_size=3),
    max_leaves=12,
)


def _outcome(result: strict_json.Document | strict_json.Problem) -> object:
    if isinstance(result, strict_json.Problem):
        return (result.rule.id, result.line, result.column, result.pointer)
    # NaN never gets here (CC006), so == compares values fully
    return (json.dumps(result.value), result.compact)


def _mutations(text: str) -> list[str]:
    """The compact text and near-misses of it: a newline, whitespace, an escape, a repeated
    member (a duplicate key when the text is an object), a second value."""
    out = [text, text + "\n", text + "\n\n", " " + text, text.replace(",", ", ", 1)]
    out.append(text.replace("/", "\\/", 1))
    out.append(text.replace("é", "\\u00e9", 1))
    if text.startswith("{") and len(text) > 2:
        first = text[1 : text.index(",")] if "," in text else text[1:-1]
        out.append(text[:-1] + "," + first + "}")
    out.append(text + text)
    return out


@given(_values, st.integers(min_value=1, max_value=6))
def test_the_compact_fast_path_answers_as_the_strict_path(value: object, depth: int) -> None:
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except ValueError:
        return
    for candidate in _mutations(text):
        fast = strict_json.parse(candidate, max_depth=depth)
        strict = strict_json.parse_strictly(candidate, max_depth=depth)
        assert _outcome(fast) == _outcome(strict), candidate


def test_the_fast_path_refuses_what_the_strict_one_refuses() -> None:
    for text in (
        '{"a":NaN}',
        '{"a":-Infinity}',
        '{"a":1e400}',
        '{"a":1,"a":1}',
        "[" + "9" * 400 + "]",
    ):
        fast, strict = strict_json.parse(text), strict_json.parse_strictly(text)
        assert isinstance(fast, strict_json.Problem), text
        assert _outcome(fast) == _outcome(strict)


def test_compact_text_is_the_compact_encoding() -> None:
    value = {"a": ['é\n"\\\x01', 1.5, -0.0, 10**30, None, True], "b": {}}
    assert strict_json.compact_text(value) == json.dumps(
        value, ensure_ascii=False, separators=(",", ":")
    )
