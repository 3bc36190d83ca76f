"""The family registry. Adding a family is one package (with a ``DECLARATION`` in its
``__init__``) and one line in :data:`PACKAGES`."""

from __future__ import annotations

import importlib

from continuity_checks.core.config import Config, Known
from continuity_checks.core.family import Declaration, Family
from continuity_checks.core.rules import REGISTRY, Rule

PACKAGES = (
    "continuity_checks.checks.deltas",
    "continuity_checks.checks.captures",
    "continuity_checks.checks.working_state",
    "continuity_checks.checks.provenance",
    "continuity_checks.checks.sessions",
)


def declarations() -> tuple[Declaration, ...]:
    """Every family's declaration, in registry order (imports only the small packages)."""
    found = tuple(importlib.import_module(p).DECLARATION for p in PACKAGES)
    names = [d.name for d in found]
    prefixes = [d.prefix for d in found]
    if len(set(names)) != len(names) or len(set(prefixes)) != len(prefixes):
        raise RuntimeError("two families share a name or a rule prefix")
    return found


def names() -> tuple[str, ...]:
    return tuple(d.name for d in declarations())


def _load(target: str) -> type[Family]:
    module, _, attribute = target.partition(":")
    cls: type[Family] = getattr(importlib.import_module(module), attribute)
    return cls


def selected(config: Config, only: tuple[str, ...] | None = None) -> list[Declaration]:
    """The declarations of the families this run uses: ``only`` (the command line), else the
    configured ones, else all."""
    by_name = {d.name: d for d in declarations()}
    wanted = only or config.families or tuple(by_name)
    for name in wanted:
        if name not in by_name:
            raise config.error("families", f"family {name!r} is not available in this version")
    return [by_name[name] for name in wanted]


def build(config: Config, chosen: list[Declaration]) -> list[Family]:
    """Each chosen family constructed with its options (may raise ConfigError)."""
    return [_load(d.family)(config) for d in chosen]  # type: ignore[call-arg]


def load_rules(prefix: str | None = None) -> None:
    """Register the core rules and every family's (or only the family with ``prefix``)."""
    importlib.import_module("continuity_checks.core.core_rules")
    for declaration in declarations():
        if prefix is None or declaration.prefix == prefix:
            importlib.import_module(declaration.rules)


def rule_exists(rule_id: str) -> bool:
    """Whether ``rule_id`` is a rule of this version (loads only the family it belongs to)."""
    load_rules("" if rule_id[:2] == "CC" else rule_id[:2])
    found = REGISTRY.get(rule_id)
    return found is not None and found.family in {"core", *names()}


def all_rules() -> list[Rule]:
    """Every rule, sorted by id, with every family's rules loaded."""
    load_rules()
    families = {"core", *names()}
    return [REGISTRY[k] for k in sorted(REGISTRY) if REGISTRY[k].family in families]


def known() -> Known:
    """What a configuration of this version may name."""
    return Known(families=names(), rule=rule_exists)
