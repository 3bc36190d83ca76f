"""What ``continuity state`` does, on bytes: recompute a WORKING_STATE's ``state_hash`` and render
DSH's bounded projection. The command line reads the file and prints; nothing here touches a
file."""

from __future__ import annotations

from typing import Any

from continuity_checks.checks.working_state import state as dsh
from continuity_checks.core import strict_json
from continuity_checks.core.display import json_type


class StateError(Exception):
    """Input that is not a working state; the message names the place (``line:col: ...``)."""


def load_state(data: bytes) -> dict[str, Any]:
    """A WORKING_STATE object from a file's bytes: a canonical state, a projection, or an
    injection capture (UI labels, header, projection JSON, footer), whose JSON body is used."""
    doc = strict_json.load(data, lone_surrogates=True)
    if isinstance(doc, strict_json.Problem):
        try:
            capture = dsh.capture_body(data.decode("utf-8"))
        except UnicodeDecodeError:
            capture = None
        if capture is None:
            raise StateError(f"{doc.line}:{doc.column}: {doc.message}")
        doc = strict_json.parse(capture.body, first_line=capture.first_line, lone_surrogates=True)
        if isinstance(doc, strict_json.Problem):
            raise StateError(f"{doc.line}:{doc.column}: {doc.message}")
    if not isinstance(doc.value, dict):
        raise StateError(f"1:1: expected a WORKING_STATE object, found {json_type(doc.value)}")
    return doc.value


def state_hash(data: bytes) -> str:
    state = load_state(data)
    missing = [name for name in dsh.HASH_FIELDS if name not in state]
    if missing:
        raise StateError(
            f"1:1: expected the keys {', '.join(dsh.HASH_FIELDS)}; missing {', '.join(missing)}"
        )
    try:
        return dsh.state_hash(state)
    except (ValueError, TypeError) as exc:
        raise StateError(f"1:1: {exc}") from None


def project(data: bytes, soft_max_chars: float, *, body_only: bool = False) -> str:
    """The snapshot DSH injects for the state in ``data`` (or only its JSON with ``body_only``)."""
    state = load_state(data)
    try:
        if body_only:
            return dsh.pretty(dsh.project(state, soft_max_chars))
        return dsh.render(state, soft_max_chars)
    except (ValueError, TypeError) as exc:
        raise StateError(f"1:1: {exc}") from None
