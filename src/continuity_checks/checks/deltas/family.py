"""The deltas family as the engine drives it: what it claims, and its three kinds of checks."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from continuity_checks.checks.deltas import DECLARATION, files
from continuity_checks.checks.deltas import rules as rules  # registers the DL rules
from continuity_checks.core.config import Config
from continuity_checks.core.family import Claimed, CommitContext, FileInput, option, options
from continuity_checks.core.findings import Finding
from continuity_checks.core.globs import matches
from continuity_checks.core.snapshot import Snapshot

if TYPE_CHECKING:
    from continuity_checks.checks.deltas.history import HistoryChecks


class DeltasFamily:
    def __init__(self, config: Config) -> None:
        options(config, DECLARATION)
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
        self._history: HistoryChecks | None = None  # history mode only, made on first use

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

    def check_tree(self, snapshot: Snapshot, claimed: list[Claimed]) -> Iterable[Finding]:
        return files.check_tree(snapshot, claimed)

    def check_commit(self, context: CommitContext) -> Iterable[Finding]:
        if self._history is None:
            # imported here: the commit hook (file mode) never needs the history checks
            from continuity_checks.checks.deltas.history import HistoryChecks

            self._history = HistoryChecks(self)
        return self._history.check_commit(context)
