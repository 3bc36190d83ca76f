"""What every ``continuity capture`` command returns and prints, and the confined, strict reads
they share.

Each command returns ``(exit code, payload)``: 0 and ``ok: true`` on success, 1 and
``ok: false`` with a stable ``error_code`` on a refusal (in the style of LoopX's own failure
payloads). Nothing is written on a refusal. Every file is read and written through
:class:`~continuity_checks.core.confined_files.ConfinedFiles`, confined to the repository that
holds it: a path it refuses (outside the root, not a regular file, past the size limit) raises
``Refused``, which the command line reports with exit 2.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from continuity_checks.checks.captures import layout
from continuity_checks.core import strict_json
from continuity_checks.core.confined_files import ConfinedFiles

Result = tuple[int, dict[str, Any]]
Raw = tuple[int, "dict[str, Any] | bytes"]


def output(payload: dict[str, Any]) -> str:
    """The one line a command prints: compact JSON, non-ASCII as is (what the caps measure)."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")) + "\n"


def refuse(mode: str, code: str, message: str, **extra: Any) -> Result:
    """The refusal payload of the command ``mode``, with exit code 1."""
    return 1, {"ok": False, "mode": mode, "error_code": code, "error": message, **extra}


def confined(path: str, settings: layout.Settings) -> ConfinedFiles:
    """The files of the repository that holds ``path``, read within the configured limit."""
    return ConfinedFiles.around(path, settings.max_file_bytes)


def load_json(path: str, settings: layout.Settings) -> Any:
    """The strict JSON value of the file at ``path``; ValueError with the reason."""
    return parse_json(path, confined(path, settings).read(path))


def refuse_output(out: str | None, settings: layout.Settings) -> None:
    """Refuse (``Refused``) an output the helper may never write, before anything is read;
    one it merely cannot write is left to the write, which answers in JSON."""
    if out is not None:
        with contextlib.suppress(OSError):
            confined(out, settings).writable(out)


def parse_json(path: str, data: bytes) -> Any:
    """The strict JSON value of ``data``, the bytes of ``path``; ValueError with the reason."""
    loaded = strict_json.load(data)
    if isinstance(loaded, strict_json.Problem):
        raise ValueError(f"{path}:{loaded.line}:{loaded.column}: {loaded.message}")
    return loaded.value
