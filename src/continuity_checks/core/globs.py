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


def literal_tail(pattern: str) -> str:
    """The text after the pattern's last wildcard (all of it without one): every path the
    pattern matches holds it (``**/*.projection.json``: ``.projection.json``). The ``/`` of a
    ``**/`` is not in it: ``**/a`` matches ``a``."""
    pattern = pattern.strip("/")
    end = max(pattern.rfind("*"), pattern.rfind("?")) + 1
    if end >= 2 and pattern[end - 2 : end] == "**" and pattern.startswith("/", end):
        end += 1
    return pattern[end:]


class Globs:
    """Patterns compiled once, into one regular expression, when a path first needs it (most
    paths are answered by the literal tails): the object is owned by whoever asks (a run, a
    family), so nothing outlives it. False when there are no patterns."""

    def __init__(self, patterns: Iterable[str] = ()) -> None:
        self.patterns = tuple(patterns)
        self._regex: re.Pattern[str] | None = None
        # a path that holds none of the patterns' literal tails matches none of them: a
        # substring test instead of the expression for most paths (None: a pattern ends in a
        # wildcard, every path must go to the expression)
        tails = tuple(dict.fromkeys(literal_tail(p) for p in self.patterns))
        self._tails: tuple[str, ...] | None = None if "" in tails else tails

    def __bool__(self) -> bool:
        return bool(self.patterns)

    def __repr__(self) -> str:
        return f"Globs({list(self.patterns)!r})"

    def match(self, path: str) -> bool:
        """Whether any pattern matches the whole of ``path``."""
        if not self.patterns:
            return False
        if self._tails is not None:
            for tail in self._tails:
                if tail in path:
                    break
            else:
                return False
        regex = self._regex
        if regex is None:
            joined = "|".join(f"(?:{translate(p)})" for p in self.patterns)
            regex = self._regex = re.compile(joined, re.DOTALL)
        return regex.fullmatch(path) is not None
