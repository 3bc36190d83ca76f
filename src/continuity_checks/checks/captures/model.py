"""The captures formats as pure functions on values: names that must stay inside their
directory, the digests (capture, selection, basis) and the listing of a document. No I/O: the
checks and the helper commands share these (cycle deltas: ``cycle_delta``; selecting from bytes:
``scan``; pointers: ``core.pointer``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from continuity_checks.core import canonical_json
from continuity_checks.core import pointer as jp
from continuity_checks.core.hashing import parse_digest, sha256_hex

SCHEMA_VERSION = 1


def canonical_bytes(value: object) -> bytes:
    """LoopX's canonical JSON: keys by Unicode code point, no spaces, as JavaScript writes."""
    return canonical_json.dumps(value, key_order="codepoint").encode("utf-8")


def canonical_sha256(value: object) -> str:
    return sha256_hex(canonical_bytes(value))


def inside_name(name: object) -> str | None:
    """Why ``name`` (a path a file names, relative to that file's directory) is refused, or
    None: absolute, a drive, a backslash, a NUL, a ``..`` component or empty. Such a name is
    never opened."""
    if not isinstance(name, str) or not name:
        return "expected a relative file name, found an empty one"
    if "\0" in name or "\\" in name:
        return "expected a relative path with / separators"
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        return "expected a path relative to its directory, found an absolute path"
    if ".." in name.split("/"):
        return "expected a path inside its directory, found a '..' component"
    if all(part in ("", ".") for part in name.split("/")):
        return "expected a file name, found the directory itself"
    return None


def join(directory: str, name: str) -> str:
    """The root-relative path of ``name`` (already accepted by :func:`inside_name`)."""
    parts = [p for p in name.split("/") if p not in ("", ".")]
    return "/".join([directory, *parts]) if directory else "/".join(parts)


def bare(digest: object) -> str | None:
    return parse_digest(digest)


# --- selection digests --------------------------------------------------------------------


def selection_h1(capture_sha256: str, select: Sequence[str], list_depth: int | None) -> str:
    """H1: what was asked. SHA-256 of the canonical JSON of the bare capture digest, the
    pointers in request order and, for a listing, the depth."""
    asked: dict[str, object] = {"capture_sha256": bare(capture_sha256), "select": list(select)}
    if list_depth is not None:
        asked["list_depth"] = list_depth
    return canonical_sha256(asked)


def results(document: object, select: Sequence[str]) -> list[dict[str, Any]] | list[str]:
    """``[{pointer, value}]`` in request order, or the pointers that miss (the whole batch is
    rejected by one miss)."""
    found: list[dict[str, Any]] = []
    missing: list[str] = []
    for pointer in select:
        value = jp.resolve(document, pointer)
        if value is jp.MISSING:
            missing.append(pointer)
        else:
            found.append({"pointer": pointer, "value": value})
    return missing if missing else found


def selection_h2(selected: list[dict[str, Any]]) -> str:
    """H2: what was returned. SHA-256 of the canonical JSON of ``[{pointer, value}]``."""
    return canonical_sha256(selected)


# --- --list ----------------------------------------------------------------------------------

_TYPES = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}


def type_name(value: object) -> str:
    return _TYPES.get(type(value), "number")


def listing(
    node: object, pointer: str, depth: int, *, size: bool = True, origin: str = "node"
) -> Iterator[dict[str, Any]]:
    """``{pointer, type, size, members?}`` for ``node`` (found at ``pointer``) and its
    descendants down to ``depth`` levels, in document order. ``origin`` "node": depth 0 is the
    node itself (listed); "children": the node is not listed and depth N lists the N levels
    below it (the seed's example). ``size`` (the byte length of the subtree's compact
    canonical JSON) is left out when not ``size``."""
    stack: list[tuple[str, Any, int]] = [(pointer, node, 0)]
    while stack:
        here, value, level = stack.pop()
        if level or origin == "node":
            entry: dict[str, Any] = {"pointer": here, "type": type_name(value)}
            if size:
                entry["size"] = len(canonical_bytes(value))
            if isinstance(value, (dict, list)):
                entry["members"] = len(value)
            yield entry
        if level < depth and isinstance(value, (dict, list)):
            children = list(value.items()) if isinstance(value, dict) else list(enumerate(value))
            for key, child in reversed(children):
                stack.append((jp.append(here, key), child, level + 1))


# --- requirement basis -----------------------------------------------------------------------


def basis_digest(outcome: dict[str, Any]) -> str | None:
    """The basis of an outcome's review: SHA-256 of the canonical JSON of its objective and its
    requirements as ``[{id, description}]``; None when the outcome does not carry them."""
    objective = outcome.get("objective")
    requirements = outcome.get("requirements")
    if not isinstance(objective, str) or not isinstance(requirements, list):
        return None
    pairs = []
    for item in requirements:
        if not isinstance(item, dict):
            return None
        pairs.append({"id": item.get("id"), "description": item.get("description")})
    return canonical_sha256({"objective": objective, "requirements": pairs})
