"""The instruction count of one process, by callgrind: what every benchmark here compares."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path


def instructions(
    argv: Sequence[str], env: Mapping[str, str] | None = None, cwd: Path | str | None = None
) -> tuple[int, str]:
    """The instructions of one run of ``argv`` (its own process, not its children) and its
    standard output; exits with valgrind's message when there is no count."""
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv],
        cwd=cwd,
        env=None if env is None else dict(env),
        capture_output=True,
    )
    found = re.search(rb"Collected : (\d+)", done.stderr)
    if found is None:
        raise SystemExit(f"valgrind failed: {done.stderr.decode(errors='replace')[-800:]}")
    return int(found.group(1)), done.stdout.decode(errors="replace")
