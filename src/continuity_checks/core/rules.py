"""The rule registry: every rule id, its family, default severity, summary and explanation.

Rule ids never change meaning once released. Families register their rules by importing this
module and calling :func:`rule`; the registry is filled when the family modules are imported.
"""

from typing import NamedTuple

from continuity_checks.core.findings import Finding, Severity


class Rule(NamedTuple):
    id: str
    family: str
    severity: Severity
    summary: str
    explanation: str
    hint: str | None = None

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
    registered = Rule(id, family, severity, summary, " ".join(explanation.split()), hint)
    REGISTRY[id] = registered
    return registered
