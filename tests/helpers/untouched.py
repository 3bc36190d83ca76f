"""A snapshot for tests of what a check may not look at."""

from __future__ import annotations

from typing import Any

from continuity_checks.core.snapshot import Snapshot


class NoTree(Snapshot):
    """A tree that fails the test when anything in it is looked at."""

    def __init__(self) -> None:
        super().__init__(1 << 20)

    def read(self, path: str) -> Any:
        raise AssertionError(f"read {path}")

    def size(self, path: str) -> Any:
        raise AssertionError(f"size of {path}")

    def sha256(self, path: str) -> Any:
        raise AssertionError(f"hashed {path}")

    def list(self, directory: str) -> Any:
        raise AssertionError(f"listed {directory}")

    def exists(self, path: str) -> bool:
        raise AssertionError(f"looked up {path}")

    def is_dir(self, path: str) -> bool:
        raise AssertionError(f"looked up {path}")

    def resolve(self, path: str) -> Any:
        raise AssertionError(f"resolved {path}")
