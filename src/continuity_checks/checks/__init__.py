"""The family registry. Adding a family is one package and one line here."""

from __future__ import annotations

import importlib

from continuity_checks.core.config import Config
from continuity_checks.core.family import Family

# family name -> "module:class"
FAMILIES = {
    "deltas": "continuity_checks.checks.deltas:DeltasFamily",
}


def _load(target: str) -> type[Family]:
    module, _, attribute = target.partition(":")
    cls: type[Family] = getattr(importlib.import_module(module), attribute)
    return cls


def build(config: Config, only: tuple[str, ...] | None = None) -> list[Family]:
    """The families this run uses, each constructed with its options (may raise ConfigError)."""
    selected = only or config.families or tuple(FAMILIES)
    for name in selected:
        if name not in FAMILIES:
            raise config.error("families", f"family {name!r} is not available in this version")
    return [_load(FAMILIES[name])(config) for name in selected]  # type: ignore[call-arg]


def load_all_rules() -> None:
    """Import every family so that all rules are registered."""
    importlib.import_module("continuity_checks.core.core_rules")
    for target in FAMILIES.values():
        _load(target)
