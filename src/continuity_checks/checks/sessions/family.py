"""The sessions family as the engine drives it: what it claims, and its three kinds of checks."""

from __future__ import annotations

from collections.abc import Iterable

from continuity_checks.checks.sessions import DECLARATION, files, history, layout, tree
from continuity_checks.checks.sessions import rules as rules  # registers the SS rules
from continuity_checks.checks.sessions.pathmap import PathMap
from continuity_checks.core.config import Config
from continuity_checks.core.family import Claimed, CommitContext, FileInput, options
from continuity_checks.core.findings import Finding
from continuity_checks.core.snapshot import Snapshot


class SessionsFamily:
    def __init__(self, config: Config) -> None:
        table = options(config, DECLARATION)
        raw = table.get("path-map", {})
        if not isinstance(raw, dict):
            raise config.error(
                "sessions.path-map", f"expected a table of absolute path to path, found {raw!r}"
            )
        for key, value in raw.items():
            if not key.startswith("/") or not isinstance(value, str) or not value:
                raise config.error(
                    f"sessions.path-map.{key}",
                    f"expected an absolute prefix mapped to a non-empty path, found {key!r} = "
                    f"{value!r}",
                )
        self.path_map = PathMap(raw)
        self.max_depth = config.max_depth
        #: what history mode remembers across the commits of one run
        self.history = history.History(self.max_depth)

    def claims(self, path: str) -> str | None:
        return layout.claims(path)

    def check_file(self, file: FileInput) -> Iterable[Finding]:
        if file.kind == layout.NODE:
            return ()  # checked with the rest of its session's DAG in check_tree
        return files.check_file(file, self.max_depth)

    def check_tree(self, snapshot: Snapshot, claimed: list[Claimed]) -> Iterable[Finding]:
        return tree.check_tree(snapshot, claimed, self.max_depth, self.path_map)

    def check_commit(self, context: CommitContext) -> Iterable[Finding]:
        return self.history.check_commit(context)
