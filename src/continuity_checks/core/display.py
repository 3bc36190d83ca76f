"""How a value from a file appears in a message: its JSON type, and a bounded quotation.

Messages quote what was found; a hostile file must not make them large, so every quotation is
cut to a bound, in one place for every family.
"""

from __future__ import annotations

import json

QUOTE_LIMIT = 80  # characters of a quoted value, the ellipsis included

_NAMES = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}


def json_type(value: object) -> str:
    """``an object``, ``an array``, ``a string``, ``a number``, ``a boolean`` or ``null``."""
    if value is None:
        return "null"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return "a number"
    return _NAMES.get(type(value), type(value).__name__)


def quote(value: object, limit: int = QUOTE_LIMIT) -> str:
    """``value`` as JSON text, cut to ``limit`` characters with an ellipsis. Containers are
    encoded only as far as the bound needs (a 4 MiB array costs no more than a short one)."""
    if isinstance(value, (dict, list)):
        return json_type(value)
    if isinstance(value, str):
        # a string as JSON.stringify writes it: a lone surrogate (WS120) as its \\udXXX escape,
        # never raw, which no report could encode
        from continuity_checks.core.canonical_json import format_string

        text = format_string(value)
    else:
        text = json.dumps(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def show(value: object, limit: int = QUOTE_LIMIT) -> str:
    """The type and the quoted value of a scalar (``a string "x"``), or the type of a container
    (``null`` alone: its type and its value are the same word)."""
    if value is None or isinstance(value, (dict, list)):
        return json_type(value)
    return f"{json_type(value)} {quote(value, limit)}"
