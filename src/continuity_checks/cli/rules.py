"""``continuity rules`` and ``continuity explain RULE``."""

from __future__ import annotations

import click

from continuity_checks.cli.common import fail
from continuity_checks.core.rules import all_rules


@click.command()
@click.option("--family", default=None, help="Only the rules of this family.")
def rules(family: str | None) -> None:
    """List every rule: id, default severity, family and summary."""
    for r in all_rules():
        if family is None or r.family == family:
            click.echo(f"{r.id}  {r.severity.value:<7}  {r.family:<8}  {r.summary}")


@click.command()
@click.argument("rule_id")
def explain(rule_id: str) -> None:
    """Explain one rule: what it checks, why, and what to do."""
    by_id = {r.id: r for r in all_rules()}
    found = by_id.get(rule_id.upper())
    if found is None:
        raise fail(f"unknown rule {rule_id!r}", "`continuity rules` lists every rule id")
    click.echo(f"{found.id}: {found.summary}")
    click.echo(f"family: {found.family}; default severity: {found.severity.value}")
    click.echo("")
    click.echo(found.explanation)
    if found.hint:
        click.echo("")
        click.echo(f"What to do: {found.hint}")
