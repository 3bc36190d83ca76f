"""Symlinks committed where a family keeps its files, as history mode sees them.

A symlink's bytes are the path it names. A continuity file or a family's directory committed as
one (git mode ``120000``) moves its content to where the link leads, and a later edit there
changes none of the family's paths: every cross-commit rule of the family is bypassed. A
directory committed as a symlink is a single entry at the directory's own path, which no
family claims, so each family looks for it in every path the commit changes
(``CommitContext.paths``) with :func:`committed`, and words it with :func:`finding`.
"""

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from continuity_checks.core.display import quote
from continuity_checks.core.frozen import Frozen

if TYPE_CHECKING:
    from continuity_checks.core.family import CommitContext
    from continuity_checks.core.findings import Finding
    from continuity_checks.core.rules import Rule

#: git's mode of a symbolic link
SYMLINK = "120000"


class Link(Frozen):
    """A path a commit left as a symlink, and what the family keeps there (``a directory``,
    ``a regular file``: the words of the finding's "expected")."""

    _fields = ("path", "expected")
    __slots__ = _fields
    path: str
    expected: str

    def __init__(self, path: str, expected: str) -> None:
        self._set(path, expected)


def committed(context: "CommitContext", kept: Callable[[str], str | None]) -> list[Link]:
    """Each path the commit adds as a symlink or changes into one, where ``kept`` says what the
    family keeps (None: nothing of the family's)."""
    found = []
    for change in context.paths:
        if change.new_mode == SYMLINK:
            expected = kept(change.path)
            if expected is not None:
                found.append(Link(change.path, expected))
    return found


def beneath(context: "CommitContext", links: Sequence[Link]) -> "CommitContext":
    """``context`` without the claimed changes below a directory the commit left as a symlink:
    their deletions are that symlink's doing, and its finding is the one for them."""
    if not links or not context.changes:
        return context
    under = tuple(link.path + "/" for link in links)
    kept = [change for change in context.changes if not change.path.startswith(under)]
    return context if len(kept) == len(context.changes) else context.with_changes(kept)


def finding(rule: "Rule", link: Link, context: "CommitContext") -> "Finding":
    """``rule``'s finding for ``link`` at the commit, naming where the link leads in its tree."""
    target = context.after.resolve(link.path)
    if isinstance(target, str):
        shown = f"a symlink to {quote(target or '.')}"
    else:
        shown = "a symlink that leads nowhere inside the repository"
    return rule.finding(
        link.path, f"expected {link.expected}, found {shown}", commit=context.commit.sha
    )
