"""The rule registry: every rule id, its family, default severity, summary and explanation.

Rule ids never change meaning once released. Families register their rules by importing this
module and calling :func:`rule`; the registry is filled when the family modules are imported.
"""

from continuity_checks.core.findings import Finding, Severity


class Rule:
    """One rule of the registry (made once, at registration: a plain class, which costs the
    start-up of every command less to make than a ``NamedTuple``). ``explanation`` is the text
    as written in the source; :attr:`explanation` gives it as one paragraph."""

    __slots__ = ("_explanation", "family", "hint", "id", "severity", "summary")

    def __init__(
        self,
        id: str,
        family: str,
        severity: Severity,
        summary: str,
        explanation: str,
        hint: str | None = None,
    ) -> None:
        self.id = id
        self.family = family
        self.severity = severity
        self.summary = summary
        self._explanation = explanation
        self.hint = hint

    @property
    def explanation(self) -> str:
        """The explanation as one paragraph: each run of whitespace of its text one space (made
        when asked: most runs show no explanation)."""
        return " ".join(self._explanation.split())

    def __repr__(self) -> str:
        return f"Rule({self.id!r}, {self.family!r}, {self.severity!r}, {self.summary!r}, ...)"

    def finding(
        self,
        path: str,
        message: str,
        *,
        line: int | None = None,
        column: int | None = None,
        pointer: str | None = None,
        commit: str | None = None,
        hint: str | None = None,
        unstage: tuple[str, ...] = (),
    ) -> Finding:
        return Finding(
            path=path,
            line=line,
            column=column,
            rule=self.id,
            message=message,
            severity=self.severity,
            pointer=pointer,
            commit=commit,
            hint=hint if hint is not None else self.hint,
            unstage=unstage,
        )


REGISTRY: dict[str, Rule] = {}


def rule(
    id: str,
    family: str,
    summary: str,
    explanation: str,
    *,
    severity: Severity = Severity.ERROR,
    hint: str | None = None,
) -> Rule:
    """Register a rule. A second registration of the same id is a programming error."""
    if id in REGISTRY:
        raise RuntimeError(f"rule {id} registered twice")
    registered = Rule(id, family, severity, summary, explanation, hint)
    REGISTRY[id] = registered
    return registered
