"""Glob patterns over repository-relative ``/`` paths: ``*`` stays in one segment, ``**`` spans,
and a pattern that names a directory covers everything below it."""

from __future__ import annotations

import re
from collections.abc import Iterable


def translate(pattern: str) -> str:
    """The regular expression (for ``fullmatch``) of one glob pattern."""
    out: list[str] = []
    i = 0
    pattern = pattern.strip("/")
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        else:
            out.append(re.escape(c))
        i += 1
    # a pattern that names a directory also covers everything below it
    return "".join(out) + "(?:/.*)?"


class Globs:
    """Patterns compiled once, into one regular expression: the object is owned by whoever
    asks (a run, a family), so nothing outlives it. False when there are no patterns."""

    def __init__(self, patterns: Iterable[str] = ()) -> None:
        self.patterns = tuple(patterns)
        joined = "|".join(f"(?:{translate(p)})" for p in self.patterns)
        self._regex = re.compile(joined, re.DOTALL) if self.patterns else None

    def __bool__(self) -> bool:
        return self._regex is not None

    def __repr__(self) -> str:
        return f"Globs({list(self.patterns)!r})"

    def match(self, path: str) -> bool:
        """Whether any pattern matches the whole of ``path``."""
        return self._regex is not None and self._regex.fullmatch(path) is not None
