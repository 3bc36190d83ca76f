"""What a family is to the engine: which paths it claims and three kinds of checks.

Families share nothing but ``core``. The engine reads each claimed file once and hands it over
as a :class:`FileInput`; in history mode it hands each commit's claimed changes as
:class:`Change` objects whose blob contents are read lazily through one ``git cat-file --batch``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, NamedTuple, Protocol

from continuity_checks.core.config import Config
from continuity_checks.core.findings import Finding
from continuity_checks.core.git.log import Commit as Commit  # re-exported: families use it


class FileInput(NamedTuple):
    """One claimed file of the working tree. ``path`` is root-relative with ``/``."""

    path: str
    kind: str
    root: Path
    data: bytes

    @property
    def abspath(self) -> Path:
        return self.root / self.path


class Claimed(NamedTuple):
    """A path a family claimed, and as what."""

    path: str
    kind: str


@dataclass
class Change:
    """One claimed path that a commit added (``A``), modified (``M``) or deleted (``D``).

    ``old()`` and ``new()`` are the bytes of the two versions: None when the version does not
    exist (``old_blob``/``new_blob`` is None), and also when it does but is larger than
    ``limits.max-file-bytes``: it is not read, and the engine reports CC008 for it.
    """

    path: str
    kind: str
    status: str
    old_blob: str | None
    new_blob: str | None
    _read: Callable[[str], bytes | None] = field(repr=False, compare=False)

    def old(self) -> bytes | None:
        return None if self.old_blob is None else self._read(self.old_blob)

    def new(self) -> bytes | None:
        return None if self.new_blob is None else self._read(self.new_blob)


@dataclass
class CommitContext:
    """Everything a family sees of one commit: its claimed changes, all at once, so that a family
    can pair a deletion with an addition (a freeze is ``D X.json`` + ``A X.frozen.json``)."""

    commit: Commit
    changes: list[Change]


class Family(Protocol):
    """One system's files. Construct with the resolved configuration; a bad option raises
    ``ConfigError`` from ``__init__``."""

    name: ClassVar[str]

    def claims(self, path: str) -> str | None:
        """The kind of continuity file ``path`` is for this family, or ``None``. Path only: the
        same answer in file mode and in history mode."""

    def check_file(self, file: FileInput) -> Iterable[Finding]:
        """Findings for one file on its own (schema, structure, its immediate neighbours)."""

    def check_tree(self, root: Path, claimed: list[Claimed]) -> Iterable[Finding]:
        """Cross-file findings over what was claimed in this run."""

    def check_commit(self, context: CommitContext) -> Iterable[Finding]:
        """History findings for one commit: old and new version of each claimed change."""


FamilyFactory = Callable[[Config], Family]


def option(config: Config, family: str, key: str, default: Any, allowed: Iterable[Any]) -> Any:
    """One family option, checked against its allowed values."""
    value = config.family_options(family).get(key, default)
    allowed = list(allowed)
    if not any(type(value) is type(a) and value == a for a in allowed):
        raise config.error(
            f"{family}.{key}", f"expected one of {', '.join(map(repr, allowed))}, found {value!r}"
        )
    return value


def unknown_options(config: Config, family: str, known: Iterable[str]) -> None:
    known = set(known)
    for key in config.family_options(family):
        if key not in known:
            raise config.error(
                f"{family}.{key}", f"unknown option; expected one of {', '.join(sorted(known))}"
            )
