"""RFC 6901 JSON Pointers (core.pointer): the strict parser and resolver, and the two walks that
are lenient by name (a finding's "found" value, a finding's position)."""

from __future__ import annotations

from typing import Any

import pytest

from continuity_checks.core import pointer as jp
from continuity_checks.core import strict_json

DOC: dict[str, Any] = {
    "a/b": 1,
    "m~n": 2,
    "": 3,
    "list": [10, None, [20]],
    "null": None,
    "01": "a key, not an index",
}

#: (pointer, its tokens, what it resolves to in DOC)
GOOD: list[tuple[str, list[str], object]] = [
    ("", [], DOC),
    ("/a~1b", ["a/b"], 1),
    ("/m~0n", ["m~n"], 2),
    ("/", [""], 3),
    ("/list/0", ["list", "0"], 10),
    ("/list/1", ["list", "1"], None),  # null is present
    ("/list/2/0", ["list", "2", "0"], 20),
    ("/list/01", ["list", "01"], jp.MISSING),  # a leading zero is no index
    ("/list/3", ["list", "3"], jp.MISSING),  # past the end
    ("/list/-", ["list", "-"], jp.MISSING),  # "-" names no element to read
    ("/list/\u0663", ["list", "\u0663"], jp.MISSING),  # only ASCII digits
    ("/list/-1", ["list", "-1"], jp.MISSING),
    ("/01", ["01"], "a key, not an index"),  # an object's key is any string
    ("/null", ["null"], None),
    ("/null/x", ["null", "x"], jp.MISSING),  # a step into a scalar
    ("/nope", ["nope"], jp.MISSING),
    ("/~01", ["~1"], jp.MISSING),  # ~0 then 1, not ~ then 01
]

#: text that is not a pointer, and the start of what PointerError says
BAD: list[tuple[object, str]] = [
    ("a/b", "expected a JSON Pointer that is empty or starts with '/'"),
    ("#/a", "expected a JSON Pointer that is empty or starts with '/'"),
    ("/a~2", "expected ~0 or ~1 after '~'"),
    ("/a~", "expected ~0 or ~1 after '~'"),
    ("/~~0", "expected ~0 or ~1 after '~'"),
    (7, "expected a JSON Pointer string, found int"),
    (None, "expected a JSON Pointer string, found NoneType"),
]


@pytest.mark.parametrize(("pointer", "parts", "value"), GOOD)
def test_tokens_and_resolve(pointer: str, parts: list[str], value: object) -> None:
    assert jp.tokens(pointer) == parts
    assert jp.join(parts) == pointer
    found = jp.resolve(DOC, pointer)
    assert found is value if value is jp.MISSING else found == value
    assert jp.value_or_none(DOC, pointer) == (None if value is jp.MISSING else value)


@pytest.mark.parametrize(("pointer", "message"), BAD)
def test_what_is_not_a_pointer_is_refused(pointer: object, message: str) -> None:
    with pytest.raises(jp.PointerError) as raised:
        jp.tokens(pointer)
    assert str(raised.value).startswith(message)
    if isinstance(pointer, str):
        with pytest.raises(jp.PointerError):
            jp.resolve(DOC, pointer)
        assert jp.value_or_none(DOC, pointer) is None  # lenient by name


@pytest.mark.parametrize(
    ("token", "length", "append", "index"),
    [("0", 3, False, 0), ("12", 3, False, 12), ("00", 3, False, None), ("-", 3, False, None),
     ("-", 3, True, 3), ("1e2", 3, False, None), ("", 3, False, None), (" 1", 3, False, None)],
)  # fmt: skip
def test_array_index(token: str, length: int, append: bool, index: int | None) -> None:
    assert jp.index(token, length, append=append) == index


def test_escape_join_append_parent_round_trip() -> None:
    keys = ["a/b", "m~n", "", "~1", 3]
    pointer = jp.join(keys)
    assert pointer == "/a~1b/m~0n//~01/3"
    assert jp.tokens(pointer) == [str(k) for k in keys]
    assert jp.append(jp.join(keys[:-1]), 3) == pointer
    assert jp.parent(pointer) == jp.join(keys[:-1])
    assert jp.parent("/a") == "" and jp.parent("") == ""


@pytest.mark.parametrize(
    ("pointer", "known", "nearest"),
    [("/a/b/c", {"", "/a", "/a/b"}, "/a/b"), ("/a/b", {"", "/a/b"}, "/a/b"),
     ("/x/y", {"/a"}, ""), ("", set(), "")],
)  # fmt: skip
def test_nearest_known_ancestor(pointer: str, known: set[str], nearest: str) -> None:
    assert jp.nearest(pointer, known) == nearest


def test_a_finding_lands_on_the_nearest_value_that_exists() -> None:
    """The lenient walk up, as the strict reader uses it for a finding's line and column."""
    doc = strict_json.parse('{\n  "a": {\n    "b": [1,\n      2]\n  }\n}\n')
    assert isinstance(doc, strict_json.Document)
    assert doc.position("/a/b/1") == (4, 7)
    assert doc.position("/a/b/9/deeper") == (3, 10)  # the array that is there
    assert doc.position("/zzz") == (1, 1)  # the whole document
