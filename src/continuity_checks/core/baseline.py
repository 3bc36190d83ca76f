"""The baseline file: findings a repository already had when it adopted the tool.

``continuity baseline check|verify`` writes ``.continuity-baseline.json``; ``check`` and
``verify`` read it and hide the findings it lists, counting them, so that only new findings fail
a run. A finding is known by a fingerprint that does not move when unrelated edits shift lines:
see :func:`fingerprint` and docs/formats.md, "Baseline file".
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from continuity_checks.core import pretty_json
from continuity_checks.core.findings import Finding, Report, escaped
from continuity_checks.core.frozen import Frozen

if TYPE_CHECKING:
    from continuity_checks.core.git.repository import Base, Repository

#: The file's name at the top of the repository.
FILE_NAME = ".continuity-baseline.json"
FORMAT_VERSION = 1
#: The two runs a baseline records, one section each: file mode and history mode.
SECTIONS = ("check", "verify")
#: A baseline is a list of fingerprints; anything near this size is not one.
MAX_BYTES = 64 * 1024 * 1024

ENTRY_KEYS = {"fingerprint", "rule", "path", "pointer", "commit", "count", "message"}
_HEX64 = re.compile(r"[0-9a-f]{64}")
# a position quoted in a message ("first on line 12", "column 3"): masked, so that an edit
# elsewhere in the file that moves the finding does not make it new
# (messages are written by this tool, in lower case)
_POSITION = re.compile(r"\b(lines?|columns?|col|char|offset)(\s+)[0-9]+")
_DIGITS = "0123456789"


class BaselineError(Exception):
    """A baseline file that cannot be used: exit 2, naming the file and what is wrong."""


def fingerprint(finding: Finding) -> str:
    """SHA-256 (hex) of the rule, the path, the JSON Pointer, the message with positions masked
    and, in history mode, the commit: never the line or column themselves."""
    # OpenSSL's start-up (hashlib) is paid only by a run that has findings to compare
    from continuity_checks.core.hashing import sha256_hex

    message = finding.message
    if any(digit in message for digit in _DIGITS):  # most messages quote no number
        message = _POSITION.sub(r"\1\2#", message)
    parts = (
        f"v{FORMAT_VERSION}",
        finding.rule,
        finding.path,
        finding.pointer or "",
        message,
        finding.commit or "",
    )
    text = "\0".join(parts)
    try:
        data = text.encode("utf-8", "surrogateescape")  # a name's bytes that are not UTF-8
    except UnicodeEncodeError:  # a lone surrogate from a JSON escape (a key in a pointer)
        data = text.encode("utf-8", "surrogatepass")
    return sha256_hex(data)


class Entry(Frozen):
    """One fingerprint and how many findings of a run carried it."""

    _fields = ("fingerprint", "rule", "path", "pointer", "commit", "count", "message")
    __slots__ = _fields
    fingerprint: str
    rule: str
    path: str
    pointer: str | None
    commit: str | None
    count: int
    message: str

    def __init__(
        self,
        fingerprint: str,
        rule: str,
        path: str,
        pointer: str | None,
        commit: str | None,
        count: int,
        message: str,
    ) -> None:
        self._set(fingerprint, rule, path, pointer, commit, count, message)

    def to_dict(self) -> dict[str, object]:
        return {
            "fingerprint": self.fingerprint,
            "rule": self.rule,
            "path": self.path,
            "pointer": self.pointer,
            "commit": self.commit,
            "count": self.count,
            "message": self.message,
        }


class Baseline(Frozen):
    """The entries of each section (``check``, ``verify``), and where they were read."""

    _fields = ("source", "sections")
    __slots__ = _fields
    source: str
    sections: Mapping[str, tuple[Entry, ...]]

    def __init__(
        self, source: str, sections: Mapping[str, tuple[Entry, ...]] | None = None
    ) -> None:
        self._set(source, {} if sections is None else sections)

    def entries(self, section: str) -> tuple[Entry, ...]:
        return self.sections.get(section, ())


class BaselineSource(NamedTuple):
    """Where ``verify`` reads its baseline: ``path`` in the work tree, or, with ``at_base``,
    the :data:`FILE_NAME` at the top of the range's base commit (like the configuration: a
    commit of the range cannot hide its own findings by listing them). A range without a base
    (all of history) reads ``path``."""

    path: Path
    at_base: bool = False
    named: bool = False  # given with --baseline: read wherever it leads

    def read(self, repo: Repository, base: Base) -> tuple[Baseline | None, str | None]:
        """The baseline of a range with ``base``, and the note that says which one was read
        (or that the range's base has none while the work tree has one); None: nothing to say
        (no baseline anywhere)."""
        commit = base if isinstance(base, str) else (base[0] if base else None)
        if not self.at_base or commit is None:
            known = read(self.path, named=self.named)
            if known is None:
                return None, None
            why = " (the range has no base commit to read one from)" if self.at_base else ""
            name = self.path.name if self.at_base else str(self.path)
            return known, f"baseline read: {name} in the work tree{why}"
        found = repo.read_object(f"{commit}:{FILE_NAME}")
        if found is None or found.type != "blob":
            if not self.path.exists():
                return None, None
            return None, (
                f"baseline read: none (the range's base {commit[:12]} has no {FILE_NAME}; the "
                "work tree's is read only for a range without a base, or with --baseline)"
            )
        source = f"the base {commit[:12]}:{FILE_NAME}"
        if found.data is None:
            raise BaselineError(f"{source}: too large to be a baseline")
        return parse(
            found.data, source
        ), f"baseline read: {FILE_NAME} of the range's base {commit[:12]}"


def entries_of(findings: Iterable[Finding]) -> tuple[Entry, ...]:
    """The entries that record ``findings`` (each distinct finding once), sorted by path, rule
    and fingerprint, so that the file's diff shows what changed."""
    first: dict[str, Finding] = {}
    counts: Counter[str] = Counter()
    for finding in findings:
        key = fingerprint(finding)
        first.setdefault(key, finding)
        counts[key] += 1
    # the fingerprint is of the finding as found; what the file shows a reader is valid UTF-8
    entries = [
        Entry(key, f.rule, escaped(f.path), f.pointer, f.commit, counts[key], escaped(f.message))
        for key, f in first.items()
    ]
    return tuple(sorted(entries, key=lambda e: (e.path, e.rule, e.commit or "", e.fingerprint)))


def grown(old: bytes | None, new: bytes | None) -> int | None:
    """How many more findings the baseline ``new`` knows than ``old`` (both sections; a
    fingerprint's count that went up counts by the difference): what a commit that rewrote the
    file would hide from ``check``. None when ``new`` is not a baseline (or too large to read);
    an ``old`` that is not one counts as empty. A deleted file (``new`` None) hides nothing;
    nor does an entry for the CC011 that an earlier rewrite of the baseline was (else writing
    the baseline again after adopting it would be reported, and so on, at every write)."""
    if new is None:
        return 0
    try:
        after = parse(new, FILE_NAME)
    except BaselineError:
        return None
    try:
        before = parse(old, FILE_NAME) if old is not None else None
    except BaselineError:
        before = None
    more = 0
    for name in SECTIONS:
        had = Counter({e.fingerprint: e.count for e in before.entries(name)} if before else {})
        for entry in after.entries(name):
            if _is_own_report(entry):
                continue  # the report of an earlier rewrite: recording it hides nothing new
            more += max(0, entry.count - had[entry.fingerprint])
    return more


def _is_own_report(entry: Entry) -> bool:
    """The entry records the CC011 of a baseline rewrite, and its fingerprint is that finding's
    (recomputed from the entry's own fields): a hand-written entry that only claims to be one
    can hide anything, so it is not taken at its word."""
    if entry.rule != "CC011" or entry.path != FILE_NAME:
        return False
    claimed = Finding(
        entry.path, None, None, entry.rule, entry.message, pointer=entry.pointer,
        commit=entry.commit,
    )  # fmt: skip
    return fingerprint(claimed) == entry.fingerprint


def hide(report: Report, entries: Sequence[Entry]) -> None:
    """Drop from ``report`` the findings ``entries`` know, at most ``count`` per fingerprint
    (a second occurrence of a known finding is new), and count them in ``report.baselined``."""
    left = Counter({e.fingerprint: e.count for e in entries})
    kept: list[Finding] = []
    hidden = 0
    for finding in report.distinct():
        key = fingerprint(finding)
        if left[key] > 0:
            left[key] -= 1
            hidden += 1
        else:
            kept.append(finding)
    report.findings = kept
    report.baselined = hidden


def render(sections: Mapping[str, Sequence[Entry]]) -> bytes:
    """The file's bytes: deterministic (sorted entries, no time stamps), one entry a line
    group, a final newline."""
    document: dict[str, Any] = {"format_version": FORMAT_VERSION}
    for name in SECTIONS:
        document[name] = [e.to_dict() for e in sections.get(name, ())]
    return pretty_json.dumps(document).encode("utf-8")


def write(path: Path, sections: Mapping[str, Sequence[Entry]]) -> None:
    """Replace ``path`` atomically (a reader sees the old file or the new one, never a part)."""
    from continuity_checks.core import atomic  # only the baseline command writes

    atomic.atomic_write(path, render(sections))


def read(path: Path, *, named: bool = False) -> Baseline | None:
    """The baseline at ``path``; None when there is no file. Raises BaselineError when it
    cannot be read (outside the repository that holds it, not a regular file) or is not a
    baseline. ``named``: given with ``--baseline``, read wherever it leads (docs/decisions.md,
    "Files named on the command line")."""
    from continuity_checks.core.confined_files import ConfinedFiles, Refused

    if named:
        files, at = ConfinedFiles.named(path, MAX_BYTES)
    else:
        files, at = ConfinedFiles.around(path, MAX_BYTES), str(path)
    try:
        data = files.read(at)
    except FileNotFoundError:
        return None
    except Refused as exc:
        raise BaselineError(str(exc)) from None
    except OSError as exc:
        raise BaselineError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    return parse(data, str(path))


def parse(data: bytes, source: str) -> Baseline:
    """The baseline in ``data``; ``source`` names it in errors."""
    if len(data) > MAX_BYTES:
        raise BaselineError(f"{source}: expected at most {MAX_BYTES} bytes, found more")
    try:
        document = json.loads(data.decode("utf-8"), object_pairs_hook=_no_duplicates)
    except (UnicodeDecodeError, ValueError) as exc:
        raise BaselineError(f"{source}: not a JSON baseline: {exc}") from None
    if not isinstance(document, dict):
        raise BaselineError(f"{source}: expected a JSON object")
    if document.get("format_version") != FORMAT_VERSION:
        raise BaselineError(
            f"{source}: format_version: expected {FORMAT_VERSION}, "
            f"found {document.get('format_version')!r}"
        )
    unknown = sorted(set(document) - {"format_version", *SECTIONS})
    if unknown:
        raise BaselineError(f"{source}: {unknown[0]}: unknown key")
    sections: dict[str, tuple[Entry, ...]] = {}
    for name in SECTIONS:
        items = document.get(name, [])
        if not isinstance(items, list):
            raise BaselineError(f"{source}: {name}: expected a list of entries")
        sections[name] = tuple(
            _entry(item, f"{source}: {name}[{i}]") for i, item in enumerate(items)
        )
    return Baseline(source, sections)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"duplicate key {key!r}")
        result[key] = value
    return result


def _entry(item: object, where: str) -> Entry:
    if not isinstance(item, dict):
        raise BaselineError(f"{where}: expected an object")
    unknown = sorted(set(item) - ENTRY_KEYS)
    if unknown:
        raise BaselineError(f"{where}: {unknown[0]}: unknown key")
    key = item.get("fingerprint")
    if not isinstance(key, str) or not _HEX64.fullmatch(key):
        raise BaselineError(f"{where}: fingerprint: expected 64 lowercase hex digits")
    count = item.get("count", 1)
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise BaselineError(f"{where}: count: expected a positive integer, found {count!r}")
    texts: dict[str, str | None] = {}
    for name, required in (("rule", True), ("path", True), ("message", False)):
        value = item.get(name)
        if not isinstance(value, str) and (required or value is not None):
            raise BaselineError(f"{where}: {name}: expected a string")
        texts[name] = value
    for name in ("pointer", "commit"):
        value = item.get(name)
        if value is not None and not isinstance(value, str):
            raise BaselineError(f"{where}: {name}: expected a string or null")
        texts[name] = value
    return Entry(
        key,
        texts["rule"] or "",
        texts["path"] or "",
        texts["pointer"],
        texts["commit"],
        count,
        texts["message"] or "",
    )
