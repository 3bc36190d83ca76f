"""DSH's WORKING_STATE computations, as its JavaScript host does them: the ``state_hash``, the
string-list normalisation and the bounded field-aware projection injected into later turns.

Everything here is pure (values in, values out): the file checks, the history checks and the
``continuity state`` helper commands share it. Lengths are JavaScript string lengths (UTF-16 code
units) and JSON text is :mod:`continuity_checks.core.canonical_json`, so that what we compute is
what DSH computed, byte for byte.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from continuity_checks.core import canonical_json

SCHEMA_VERSION = 7
FULL_STATE_PATH = ".dsh/project/WORKING_STATE.json"
DEFAULT_SOFT_MAX_CHARS = 12000

#: the eight model-facing string lists, in the order the writer produces them
SEMANTIC_FIELDS = (
    "known",
    "constraints",
    "decisions",
    "evidence",
    "failed_hypotheses",
    "do_not_repeat",
    "open_acceptance",
    "next_action",
)
#: the keys of the ``state_hash`` object, in DSH's order
HASH_FIELDS = ("task_id", *SEMANTIC_FIELDS)
#: the eleven top-level keys of a schema_version 7 file, in the writer's order
TOP_LEVEL_KEYS = ("schema_version", "task_id", *SEMANTIC_FIELDS, "checkpoint_meta")
#: copied complete into every projection, never truncated
CRITICAL_FIELDS = (
    "constraints",
    "failed_hypotheses",
    "do_not_repeat",
    "open_acceptance",
    "next_action",
)
#: the budgeted fields, in the order their shares are taken
BULK_FIELDS = ("decisions", "evidence", "known")

INVESTIGATIVE_HEADER = "QWEN-V4 DURABLE INVESTIGATIVE WORKING STATE (host-injected):"
INVESTIGATIVE_FOOTER = (
    "Raw hidden reasoning is not durable memory. Use this state only as accumulated "
    "problem-solving facts; ordinary conversation remains in the normal visible history."
)
#: the task-path renderer's header starts like this (it then names the authoritative file)
TASK_HEADER_PREFIX = "QWEN-V4 DURABLE WORKING STATE SNAPSHOT"

# What JavaScript's String.prototype.trim() removes: WhiteSpace and LineTerminator of ECMA-262,
# that is TAB VT FF SP NBSP ZWNBSP (U+FEFF), the Zs category, LF CR LS PS. Python's str.strip()
# differs both ways: it keeps U+FEFF and strips U+001C-U+001F and U+0085.
_JS_SPACE = (
    "\t\n\x0b\x0c\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_LEADING = re.compile(f"^[{_JS_SPACE}]+")
_TRAILING = re.compile(f"[{_JS_SPACE}]+$")


_SPACE_SET = frozenset(_JS_SPACE)


def is_trimmed(text: str) -> bool:
    """Whether ``text`` is non-empty and ``text.trim()`` would leave it as it is."""
    return bool(text) and text[0] not in _SPACE_SET and text[-1] not in _SPACE_SET


def js_trim(text: str) -> str:
    """``text.trim()`` as JavaScript does it."""
    return _TRAILING.sub("", _LEADING.sub("", text))


def js_string(value: object) -> str:
    """``String(value)`` for a JSON value (DSH stringifies every list item before trimming)."""
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return canonical_json.format_number(value)
    if isinstance(value, list):
        # Array.prototype.toString: the items joined by commas, null (and undefined) as ""
        return ",".join("" if item is None else js_string(item) for item in value)
    return "[object Object]"


def js_length(text: str) -> int:
    """The length JavaScript reports for ``text``: UTF-16 code units."""
    if text.isascii():
        return len(text)
    # a character above U+FFFF is two code units; a lone surrogate is one, as in JavaScript
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def uniq(values: object) -> list[str]:
    """DSH's list normalisation: stringify, trim, drop empties, keep the first of duplicates.
    A value that is not an array counts as empty (``(values ?? []).map`` on null)."""
    if not isinstance(values, list):
        return []
    return list(dict.fromkeys(t for v in values if (t := js_trim(js_string(v)))))


def hash_object(state: Mapping[str, Any]) -> dict[str, Any]:
    """The object DSH hashes: the nine semantic keys in its order. A key the state lacks is
    left out, as ``JSON.stringify`` leaves out an ``undefined`` property."""
    return {name: state[name] for name in HASH_FIELDS if name in state}


def state_hash(state: Mapping[str, Any]) -> str:
    """The ``state_hash`` DSH records for ``state``: SHA-256 of ``JSON.stringify`` (compact, keys
    in DSH's order, UTF-8) of :func:`hash_object`. Raises ``ValueError`` for a value JavaScript
    would not write as itself (see canonical_json)."""
    from continuity_checks.core.hashing import sha256_hex  # hashlib only where a hash is made

    text = canonical_json.dump_bytes(hash_object(state), key_order="insertion")
    return sha256_hex(text)


def pretty(value: object) -> str:
    """``JSON.stringify(value, null, 2)``: how DSH writes its files (plus a final newline)."""
    return canonical_json.dumps(value, indent=2, key_order="insertion")


def file_bytes(state: object) -> bytes:
    """The exact bytes DSH's atomic writer puts on disk for ``state``."""
    return (pretty(state) + "\n").encode("utf-8")


# --- the bounded projection ---------------------------------------------------------------------


def _json_length(value: object) -> int:
    return js_length(canonical_json.dumps(value, key_order="insertion"))


class Selection(NamedTuple):
    items: list[str]
    omitted: int


def recent_within_budget(values: object, budget: float) -> Selection:
    """The newest items of a list that fit ``budget`` characters as a JSON array: a contiguous
    suffix (selection stops at the first item that does not fit; it never skips ahead)."""
    items = uniq(values)
    if budget <= 4 or not items:
        return Selection([], len(items))
    chosen: list[str] = []
    used = 2  # the brackets
    for item in reversed(items):
        cost = _json_length(item) + (1 if chosen else 0)
        if used + cost > budget:
            break
        chosen.append(item)
        used += cost
    chosen.reverse()
    return Selection(chosen, len(items) - len(chosen))


class Budget(NamedTuple):
    """How a projection's budget was spent (for messages and for the spec's worked numbers)."""

    critical_cost: int
    bulk: float
    shares: dict[str, float]


def budget(
    state: Mapping[str, Any], soft_max_chars: float, pending_evidence: Sequence[Any] = ()
) -> Budget:
    """How DSH splits ``soft_max_chars`` (any positive number, as its runtime policy takes one:
    a fractional budget leaves the known share fractional, as in JavaScript)."""
    critical = _critical(state, pending_evidence)
    critical_cost = _json_length(critical) + 1000
    bulk = max(0, soft_max_chars - critical_cost)
    # floor(0.34 * bulk) as JavaScript computes it: a double product, then the floor
    third = int(bulk * 0.34 // 1)
    known = max(0, bulk - int(bulk * 0.68 // 1))
    return Budget(critical_cost, bulk, {"decisions": third, "evidence": third, "known": known})


def _critical(state: Mapping[str, Any], pending_evidence: Sequence[Any]) -> dict[str, Any]:
    # `safe.constraints ?? []`: copied as they are (not normalised), null and absent become []
    critical: dict[str, Any] = {}
    for name in CRITICAL_FIELDS:
        value = state.get(name)
        critical[name] = [] if value is None else value
    critical["pending_evidence"] = list(pending_evidence)
    return critical


def project(
    state: Mapping[str, Any],
    soft_max_chars: float = DEFAULT_SOFT_MAX_CHARS,
    pending_evidence: Sequence[Any] = (),
) -> dict[str, Any]:
    """DSH's field-aware bounded projection of ``state`` (``projectWorkingState``)."""
    spent = budget(state, soft_max_chars, pending_evidence)
    selections = {
        name: recent_within_budget(state.get(name), spent.shares[name]) for name in BULK_FIELDS
    }
    projection: dict[str, Any] = {"task_id": state.get("task_id")}
    projection.update(_critical(state, pending_evidence))
    for name in BULK_FIELDS:
        projection[name] = selections[name].items
    projection["projection_meta"] = {
        "field_aware": True,
        "soft_max_chars": soft_max_chars,
        "omitted": {name: selections[name].omitted for name in BULK_FIELDS},
        "full_state_path": FULL_STATE_PATH,
        "critical_fields_preserved": list(CRITICAL_FIELDS),
    }
    return projection


def render(state: Mapping[str, Any], soft_max_chars: float = DEFAULT_SOFT_MAX_CHARS) -> str:
    """The investigative-state snapshot DSH injects (``renderUniversalStateSnapshot``): header,
    the projection as 2-space JSON, footer, joined by ``\\n``."""
    body = pretty(project(state, soft_max_chars))
    return "\n".join((INVESTIGATIVE_HEADER, body, INVESTIGATIVE_FOOTER))


# --- captured injections ------------------------------------------------------------------------


class Capture(NamedTuple):
    """The JSON body of a captured injection: its text, and the line it starts on (1-based)."""

    body: str
    first_line: int


def capture_body(text: str) -> Capture | None:
    """The projection JSON inside a captured injection message (UI labels, a header line, the
    2-space JSON, a footer line), or the whole text when it is bare JSON. None when the text
    holds no header followed by a JSON object. Line ends in the body are ``\n``: a capture
    copied from a Windows UI has CRLF, which JSON.stringify never writes."""
    stripped = text.lstrip()
    if stripped.startswith("{"):
        return Capture(text, 1)
    lines = text.split("\n")
    for index, line in enumerate(lines):
        head = line.rstrip("\r")
        if head == INVESTIGATIVE_HEADER or head.startswith(TASK_HEADER_PREFIX):
            start = index + 1
            if start >= len(lines) or lines[start].rstrip("\r") != "{":
                return None
            # the body ends at the first line that is exactly "}" (2-space JSON closes there)
            for end in range(start + 1, len(lines)):
                if lines[end].rstrip("\r") == "}":
                    body = "\n".join(part.rstrip("\r") for part in lines[start : end + 1])
                    return Capture(body, start + 1)
            return None
    return None
