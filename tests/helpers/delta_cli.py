"""The `continuity delta` command as the delta tests drive it: a store in a temporary directory
and the real CLI in-process. Import ``root`` and ``cli`` into a test module to use them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from continuity_checks.cli import main

PREFIX = "deltalayer: "


@dataclass
class Result:
    code: int
    out: str
    err: str

    @property
    def json(self) -> Any:
        assert (self.code, self.err) == (0, ""), self.err
        return json.loads(self.out)

    @property
    def message(self) -> str:
        """The one-line error of a refused command (exit 2, nothing on stdout)."""
        assert self.code == 2 and self.out == "", (self.code, self.out, self.err)
        assert self.err.startswith(PREFIX) and self.err.count("\n") == 1, self.err
        return self.err[len(PREFIX) : -1]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "R"
    path.mkdir()
    return path


@pytest.fixture
def cli(root: Path, capsys: pytest.CaptureFixture[str]) -> Any:
    def run(*args: str) -> Result:
        capsys.readouterr()
        code = main(["delta", "--root", str(root), *args])
        out, err = capsys.readouterr()
        return Result(code, out, err)

    return run
