"""DeltaLayer (v0.2.1): Conversation Deltas, legacy changes.jsonl, AGENTS.md and PROJECT.md."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import ClassVar

from continuity_checks.checks.deltas import files
from continuity_checks.checks.deltas import rules as rules  # registers the DL rules
from continuity_checks.core.config import Config
from continuity_checks.core.family import (
    Claimed,
    CommitContext,
    FileInput,
    option,
    unknown_options,
)
from continuity_checks.core.findings import Finding
from continuity_checks.core.globs import matches

OPTIONS = ("legacy", "ownership", "allow-delete", "legacy-files")


class DeltasFamily:
    name: ClassVar[str] = "deltas"

    def __init__(self, config: Config) -> None:
        unknown_options(config, "deltas", OPTIONS)
        self.legacy_mode: str = option(
            config, "deltas", "legacy", "read-only", ("read-only", "append-only")
        )
        self.ownership: str = option(
            config,
            "deltas",
            "ownership",
            "trailer-or-single",
            ("trailer-or-single", "trailer", "off"),
        )
        self.allow_delete: bool = option(config, "deltas", "allow-delete", False, (False, True))
        legacy_files = config.family_options("deltas").get("legacy-files", [])
        if not isinstance(legacy_files, list) or not all(isinstance(g, str) for g in legacy_files):
            raise config.error(
                "deltas.legacy-files", f"expected a list of glob strings, found {legacy_files!r}"
            )
        self.legacy_files = tuple(legacy_files)
        self.max_depth = config.max_depth
        self._check_commit: Callable[[DeltasFamily, CommitContext], list[Finding]] | None = None

    def claims(self, path: str) -> str | None:
        head, _, name = path.rpartition("/")
        if head == ".deltalayer/changes" or head.endswith("/.deltalayer/changes"):
            if name.endswith(".json"):
                return "delta"
            if name.endswith(".tmp"):
                return "temp"
        elif name == "changes.jsonl" and (head == ".deltalayer" or head.endswith("/.deltalayer")):
            return "legacy"
        if self.legacy_files and matches(path, self.legacy_files):
            return "legacy"
        if name == "AGENTS.md":
            return "agents"
        return None

    def check_file(self, file: FileInput) -> Iterable[Finding]:
        return files.check_file(file, self.max_depth)

    def check_tree(self, root: Path, claimed: list[Claimed]) -> Iterable[Finding]:
        return files.check_tree(root, claimed)

    def check_commit(self, context: CommitContext) -> Iterable[Finding]:
        check = self._check_commit
        if check is None:
            from continuity_checks.checks.deltas import history  # history mode only

            check = self._check_commit = history.check_commit
        return check(self, context)
