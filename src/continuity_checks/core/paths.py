"""Root-relative paths as every snapshot takes them: :func:`confine` makes a path normal or
refuses it, and :class:`Unreadable` is the refusal (of a path, or of what lies at it), a
finding waiting for the place to report it."""

from continuity_checks.core import core_rules as cc
from continuity_checks.core.findings import Finding
from continuity_checks.core.frozen import Frozen
from continuity_checks.core.rules import Rule


class Unreadable(Frozen):
    """Why a snapshot could not answer for ``path``: a finding waiting for its place (a frozen
    value).

    :meth:`finding` reports it at ``path`` itself, or at the file that referred to it (a
    manifest, a record with a pointer), naming ``path`` in the message.
    """

    _fields = ("path", "rule", "message")
    __slots__ = _fields
    path: str
    rule: Rule
    message: str

    def __init__(self, path: str, rule: Rule, message: str) -> None:
        self._set(path, rule, message)

    def finding(
        self,
        at: str | None = None,
        *,
        line: int | None = None,
        column: int | None = None,
        pointer: str | None = None,
        commit: str | None = None,
    ) -> Finding:
        if at is None or at == self.path:
            return self.rule.finding(
                self.path, self.message, line=line, column=column, pointer=pointer, commit=commit
            )
        return self.rule.finding(
            at,
            f"{self.path}: {self.message}",
            line=line,
            column=column,
            pointer=pointer,
            commit=commit,
        )


def confine(path: str) -> str | Unreadable:
    """``path`` as a normal root-relative ``/`` path, or why it is not one: absolute, a drive,
    a NUL, or a ``..`` that climbs out of the root, where ``\\`` counts as a separator too (as
    it is on Windows). Otherwise a backslash is a character of a name, as it is for git and
    for GNU ``sha256sum`` (``a\\b`` is one file). ``.`` and empty components are dropped
    (``./a//b`` is ``a/b``); ``""`` and ``.`` mean the root itself."""
    framed = f"/{path}/"  # a name that is empty, "." or ".." lies between two "/" here
    if (
        "//" not in framed
        and "/./" not in framed
        and "/../" not in framed
        and "\0" not in path
        and "\\" not in path
        and path[1:2] != ":"
    ):
        return path  # already normal: the common case, without rebuilding it
    return _normalised(path)


def _normalised(path: str) -> str | Unreadable:
    """:func:`confine` of any path, normal or not, by its names."""
    names = path.split("/")
    if "\0" in path:
        return Unreadable(path, cc.OUTSIDE_ROOT, "expected a relative path without a NUL")
    if path.startswith(("/", "\\")) or (len(path) > 1 and path[1] == ":"):
        return Unreadable(path, cc.OUTSIDE_ROOT, "expected a path relative to the root")
    if "\\" in path and _climbs(path.replace("\\", "/")):
        return Unreadable(path, cc.OUTSIDE_ROOT, "expected a path inside the root")
    parts: list[str] = []
    for part in names:
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return Unreadable(path, cc.OUTSIDE_ROOT, "expected a path inside the root")
            parts.pop()
        else:
            parts.append(part)
    return "/".join(parts)


def _climbs(path: str) -> bool:
    """Whether the ``/`` path ``path`` goes above its start at some ``..``."""
    depth = 0
    for part in path.split("/"):
        if part == "..":
            depth -= 1
            if depth < 0:
                return True
        elif part not in ("", "."):
            depth += 1
    return False
