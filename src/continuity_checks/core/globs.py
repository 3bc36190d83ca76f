"""Glob patterns over repository-relative ``/`` paths: ``*`` stays in one segment, ``**`` spans."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache


@lru_cache(maxsize=256)
def compile_glob(pattern: str) -> re.Pattern[str]:
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
    return re.compile("".join(out) + "(?:/.*)?", re.DOTALL)


def matches(path: str, patterns: Sequence[str]) -> bool:
    return any(compile_glob(p).fullmatch(path) for p in patterns)
