"""A Python snippet run in a fresh interpreter that imports this checkout's package."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO


def run_python(code: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``python -c code`` with ``src/`` on ``PYTHONPATH``, in ``cwd``: its exit code and its
    output as text."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True
    )
