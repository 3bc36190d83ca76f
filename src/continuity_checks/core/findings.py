"""The one result model: a Finding, and the Report that collects them."""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum

from continuity_checks.core.frozen import Frozen


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"


class Finding(Frozen):
    """One problem at one place (a value: compared, hashed and never changed; a changed copy is
    :meth:`_replace`'s).

    ``path`` is relative to the checked root with ``/`` separators; ``line`` and ``column`` are
    1-based where the parser can tell; ``pointer`` is an RFC 6901 pointer into the JSON document;
    ``commit`` is set in history mode. ``unstage`` names the paths a commit hook's user leaves
    out of the commit being made to undo what the finding reports, when that is not ``path``
    (a listed original whose listing holds the finding; the other deltas of a commit that
    changes several).
    """

    _fields = (
        "path",
        "line",
        "column",
        "rule",
        "message",
        "severity",
        "pointer",
        "commit",
        "hint",
        "unstage",
    )
    __slots__ = _fields
    path: str
    line: int | None
    column: int | None
    rule: str
    message: str
    severity: Severity
    pointer: str | None
    commit: str | None
    hint: str | None
    unstage: tuple[str, ...]

    def __init__(
        self,
        path: str,
        line: int | None,
        column: int | None,
        rule: str,
        message: str,
        severity: Severity = Severity.ERROR,
        pointer: str | None = None,
        commit: str | None = None,
        hint: str | None = None,
        unstage: tuple[str, ...] = (),
    ) -> None:
        # Frozen._set spelled out: a run can make a finding per file, and this is twice as fast
        set_ = object.__setattr__
        set_(self, "path", path)
        set_(self, "line", line)
        set_(self, "column", column)
        set_(self, "rule", rule)
        set_(self, "message", message)
        set_(self, "severity", severity)
        set_(self, "pointer", pointer)
        set_(self, "commit", commit)
        set_(self, "hint", hint)
        set_(self, "unstage", unstage)

    def sort_key(self, commit_order: Mapping[str, int]) -> tuple[int, str, int, int, str, str, str]:
        """Commits in history order (oldest first; findings without a commit first), then place,
        rule and message."""
        return (
            commit_order.get(self.commit, -1) if self.commit else -1,
            self.path,
            self.line or 0,
            self.column or 0,
            self.rule,
            self.pointer or "",
            self.message,
        )

    def with_severity(self, severity: Severity) -> Finding:
        return self._replace(severity=severity)

    def to_dict(self) -> dict[str, object]:
        return {
            "rule": self.rule,
            "severity": self.severity.value,
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "pointer": self.pointer,
            "commit": self.commit,
            "message": self.message,
            "hint": self.hint,
        }


class Report:
    """Everything one run found, plus what it looked at."""

    __slots__ = (
        "baselined",
        "commit_order",
        "commits",
        "files",
        "findings",
        "max_per_file",
        "max_total",
        "notes",
        "suppressed",
        "unit",
    )

    def __init__(
        self,
        findings: list[Finding] | None = None,
        files: int = 0,
        commits: int = 0,
        notes: list[str] | None = None,
        unit: str = "file",
        commit_order: Mapping[str, int] | None = None,
        max_per_file: int = 100,
        max_total: int = 1000,
        suppressed: int = 0,
        baselined: int | None = None,
    ) -> None:
        self.findings: list[Finding] = [] if findings is None else findings
        self.files = files
        self.commits = commits
        self.notes: list[str] = [] if notes is None else notes
        #: what the run counted: files (``check``) or commits (``verify``)
        self.unit = unit
        #: commit id -> its place in the walked range, oldest first (history mode)
        self.commit_order: Mapping[str, int] = {} if commit_order is None else commit_order
        #: findings shown at most, for one path and in all (limits.max-findings-per-file, -findings)
        self.max_per_file = max_per_file
        self.max_total = max_total
        #: findings a ``[[ignore]]`` entry of the configuration suppressed (counted, not shown)
        self.suppressed = suppressed
        #: findings the baseline file knew, hidden from this report (None: no baseline was read)
        self.baselined = baselined

    def _unique(self) -> dict[tuple[object, ...], Finding]:
        """Each finding once (by place, rule, message, commit, severity and hint), keyed by its
        sort key; not sorted: counting needs no order."""
        order = self.commit_order
        return {(f.sort_key(order), f.commit or "", f.severity, f.hint): f for f in self.findings}

    def distinct(self) -> list[Finding]:
        """Every finding once, in the order of :meth:`sorted_findings`, without its caps."""
        unique = self._unique()
        return [unique[key] for key in sorted(unique, key=lambda k: (k[0], k[1]))]

    def sorted_findings(self, *, printable: bool = True) -> list[Finding]:
        """The findings to show, each once, in a deterministic order (history order of commits,
        then path, position, rule and message): at most ``max_per_file`` for one path and
        ``max_total`` in all (:attr:`not_shown` counts the others). ``printable`` False keeps
        their text as found (a path's undecodable bytes: for a reporter that encodes them)."""
        unique = self._unique()
        shown: list[Finding] = []
        per_path: dict[str, int] = {}
        for key in sorted(unique, key=lambda k: (k[0], k[1])):
            finding = unique[key]
            count = per_path.get(finding.path, 0)
            if count >= self.max_per_file or len(shown) >= self.max_total:
                continue
            per_path[finding.path] = count + 1
            shown.append(printable_finding(finding) if printable else finding)
        return shown

    @property
    def not_shown(self) -> int:
        """How many findings the caps leave out: whatever the order, the first ``max_per_file``
        of each path are shown, up to ``max_total`` in all."""
        per_path: dict[str, int] = {}
        for finding in self._unique().values():
            per_path[finding.path] = per_path.get(finding.path, 0) + 1
        total = sum(per_path.values())
        shown = min(self.max_total, sum(min(n, self.max_per_file) for n in per_path.values()))
        return total - shown

    @property
    def errors(self) -> int:
        return sum(1 for f in self._unique().values() if f.severity is Severity.ERROR)

    @property
    def warnings(self) -> int:
        return sum(1 for f in self._unique().values() if f.severity is Severity.WARNING)

    @property
    def exit_code(self) -> int:
        return 1 if self.errors else 0


def escaped(text: str) -> str:
    """``text`` as valid Unicode: a file name's bytes that are not UTF-8 (kept by the file system
    layer as lone surrogates) become ``\\xNN``, as git shows them, so every report format stays
    valid UTF-8 (JSON and SARIF readers refuse anything else)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        try:
            data = text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:  # a surrogate that no byte stands for: \udXXX
            return text.encode("utf-8", "backslashreplace").decode("utf-8")
        return data.decode("utf-8", "backslashreplace")
    return text


def printable_finding(finding: Finding) -> Finding:
    """``finding`` with its path, message and hint :func:`escaped`."""
    path, message, hint = escaped(finding.path), escaped(finding.message), finding.hint
    hint = escaped(hint) if hint is not None else None
    if (path, message, hint) == (finding.path, finding.message, finding.hint):
        return finding
    return finding._replace(path=path, message=message, hint=hint)
