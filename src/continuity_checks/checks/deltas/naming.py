"""Conversation Delta file names (specs/deltalayer.md §1.1)."""

from __future__ import annotations

import re

SUFFIX = ".json"
FROZEN_SUFFIX = ".frozen.json"
MAX_COLLISION = 9999
LOCK_NAME = ".lock"
"""The lock file of ``continuity delta``, in ``.deltalayer/``: neither ``*.json`` nor ``*.tmp``,
so readers ignore it."""

#: compiled (by ``re``, once) when a source first has a character outside [A-Za-z0-9]
_UNSAFE = r"[^A-Za-z0-9._-]+"
_SUFFIX_NUMBER = re.compile(r"[1-9][0-9]{0,3}")


def source_slug(source: str) -> str:
    """Each run of characters outside ``[A-Za-z0-9._-]`` becomes one ``-``; ends are stripped."""
    if source.isascii() and source.isalnum():
        return source  # only [A-Za-z0-9]: nothing to replace (most sources), without the regex
    return re.sub(_UNSAFE, "-", source).strip("-") or "source"


class SourceSlugs(dict[str, str]):
    """:func:`source_slug` of each source asked, made once: the deltas of a store name few
    sources. At most ``KEPT`` are kept (all dropped at once past it)."""

    KEPT = 1024

    def __missing__(self, source: str) -> str:
        if len(self) >= self.KEPT:
            self.clear()
        slug = self[source] = source_slug(source)
        return slug


def stem(timestamp_slug: str, source: str, slugs: SourceSlugs | None = None) -> str:
    """The file name without suffixes; ``slugs`` (when given) makes each source's slug once."""
    return f"{timestamp_slug}--{source_slug(source) if slugs is None else slugs[source]}"


def candidate(base: str, n: int) -> str:
    """The stem with collision suffix ``n`` (0 means none)."""
    return base if n == 0 else f"{base}--{n}"


def is_frozen(name: str) -> bool:
    return name.endswith(FROZEN_SUFFIX)


def frozen_name(name: str) -> str:
    """``X.json`` → ``X.frozen.json``."""
    return name[: -len(SUFFIX)] + FROZEN_SUFFIX


def unfrozen_name(name: str) -> str:
    """``X.frozen.json`` → ``X.json`` (a file name or a whole path)."""
    return name[: -len(FROZEN_SUFFIX)] + SUFFIX


def base_of(name: str) -> str:
    """The file name without ``.frozen.json`` or ``.json``."""
    return name[: -len(FROZEN_SUFFIX)] if is_frozen(name) else name[: -len(SUFFIX)]


def collision_of(name: str, expected_stem: str) -> int | None:
    """The collision suffix of ``name`` if it is ``expected_stem`` plus an optional ``--N``
    (1..9999) plus ``.json`` or ``.frozen.json``; ``None`` when the name does not match."""
    base = base_of(name)
    if base == expected_stem:
        return 0
    rest = base[len(expected_stem) + 2 :]
    if base.startswith(expected_stem + "--") and _SUFFIX_NUMBER.fullmatch(rest):
        return int(rest)
    return None
