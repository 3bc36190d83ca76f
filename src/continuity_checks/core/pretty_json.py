"""JSON for people: the one writer of the JSON a command prints (reports, helper results) and
of the files the helper commands write for a person to read (manifests, reader references,
cycle deltas, the baseline)."""

from __future__ import annotations

import json


def dumps(value: object) -> str:
    """``value`` as JSON indented by two spaces, non-ASCII characters as they are (not
    ``\\u`` escapes), keys in their order, and one final newline."""
    return json.dumps(value, ensure_ascii=False, indent=2) + "\n"
