"""The sessions layout's memory-file expressions, compiled when first used, answer as the same
expressions compiled at once."""

from __future__ import annotations

import re

import pytest

from continuity_checks.checks.sessions import layout

PATHS = [
    "memory/sources/_v2/a.md",
    ".openprogram/memory/sources/openprogram/_v2/s1.md",
    "x/memory/sources/a/b/_v2/c.md",
    "memory/sources/_v2/a/b.md",
    "memory/topics/t.md",
    "a/memory/topics/p/q.md",
    "memory/topics/t.txt",
    "memory/timeline/2026.jsonl",
    "memory/graph/g.jsonl",
    "memory/graph/sub/g.jsonl",
    "notmemory/topics/t.md",
    "memory/timeline/.jsonl",
    "",
]


@pytest.mark.parametrize("name", ["_ARCHIVE", "_TOPIC", "_RECORDS"])
def test_a_lazy_expression_searches_as_the_compiled_one(name: str) -> None:
    expression = getattr(layout, name)
    compiled = re.compile(expression.pattern)
    for path in PATHS:
        found, expected = expression.search(path), compiled.search(path)
        assert (found and found.span()) == (expected and expected.span()), path
    assert expression._compiled is not None and expression._compiled.pattern == compiled.pattern
