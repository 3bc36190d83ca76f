"""The one line a writing helper adds to the repository's ``.gitignore`` for a lock it leaves,
so that ``git add .`` never commits the lock (``delta init``, ``provenance add``). Read and
written through :class:`~continuity_checks.core.confined_files.ConfinedFiles`."""

from __future__ import annotations

import os
from pathlib import Path

from continuity_checks.core import atomic
from continuity_checks.core.confined_files import ConfinedFiles
from continuity_checks.core.strict_json import DEFAULT_MAX_FILE_BYTES

FILE_NAME = ".gitignore"


def _patterns(entry: str) -> frozenset[bytes]:
    """The lines that already name ``entry``: as written, or anchored with a leading ``/``."""
    return frozenset({entry.encode("utf-8"), b"/" + entry.encode("utf-8")})


def names(root: Path, entry: str) -> bool:
    """Whether ``root``'s ``.gitignore`` needs no line for ``entry`` (root-relative): a line
    names it, or ``.gitignore`` is a dangling name (never written through)."""
    path = root / FILE_NAME
    files, real = ConfinedFiles.named(path, DEFAULT_MAX_FILE_BYTES)  # (only looked at)
    try:
        current = files.read(real)
    except FileNotFoundError:
        return os.path.lexists(path)
    wanted = _patterns(entry)
    return any(line.rstrip() in wanted for line in current.split(b"\n"))


def add(root: Path, entry: str) -> str | None:
    """Make git ignore ``entry`` (root-relative): create ``.gitignore`` or append one line.

    Never rewrites the user's lines (the old bytes stay a prefix, CRLF is kept), writes
    through a symlinked ``.gitignore``, and does nothing when a line already names ``entry``.
    Returns the report line, or None when nothing changed. Raises
    :class:`~continuity_checks.core.atomic.LinkRefused` for a ``.gitignore`` that leads
    outside the root, before anything is written."""
    path = root / FILE_NAME
    if names(root, entry):
        return None
    if os.path.lexists(path):
        real, top = os.path.realpath(path), os.path.realpath(root)
        if not real.startswith(os.path.join(top, "")):
            raise atomic.LinkRefused(
                f"{FILE_NAME} leads outside the root (to {real}); the helper writes only inside "
                "the root: replace the symlink with the file itself; nothing was written"
            )
    line = entry.encode("utf-8")
    files = ConfinedFiles(root)
    try:
        current = files.read(path)
    except FileNotFoundError:
        try:
            files.create(path, line + b"\n")
        except FileExistsError:
            return None
        return str(path)
    newline = b"\r\n" if b"\r\n" in current else b"\n"
    prefix = current if not current or current.endswith(b"\n") else current + newline
    files.write(os.path.realpath(path), prefix + line + newline)
    return f"added {entry} to {path}"
