"""The captures formats as pure functions on values: pointers that tell "absent" from "null",
names that must stay inside their directory, the digests (capture, selection, basis) and the
cycle-delta vocabulary (apply and diff). No I/O: the checks and the helper commands share these.
"""

from __future__ import annotations

import copy
import difflib
import hashlib
import json
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from continuity_checks.core import canonical_json, strict_json
from continuity_checks.core import pointer as jp
from continuity_checks.core.hashing import parse_digest

SCHEMA_VERSION = 1


class Missing:
    """What a pointer that resolves to nothing yields (JSON ``null`` is ``None``, present)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING = Missing()


class PointerError(ValueError):
    """A pointer that is not RFC 6901 text (``"a/b"``: no leading slash)."""


def canonical_bytes(value: object) -> bytes:
    """LoopX's canonical JSON: keys by Unicode code point, no spaces, as JavaScript writes."""
    return canonical_json.dumps(value, key_order="codepoint").encode("utf-8")


def canonical_sha256(value: object) -> str:
    return hashlib.sha256(canonical_bytes(value)).hexdigest()


def tokens(pointer: object) -> list[str]:
    """The reference tokens of an RFC 6901 pointer; :class:`PointerError` if it is not one."""
    if not isinstance(pointer, str):
        raise PointerError(f"expected a JSON Pointer string, found {type(pointer).__name__}")
    if pointer and not pointer.startswith("/"):
        raise PointerError(f"expected a JSON Pointer that is empty or starts with '/': {pointer!r}")
    for raw in pointer.split("/")[1:]:
        # "~" must be followed by 0 or 1
        if "~" in raw.replace("~0", "").replace("~1", ""):
            raise PointerError(f"expected ~0 or ~1 after '~' in {pointer!r}")
    return jp.split(pointer)


def _index(token: str, length: int, *, append: bool = False) -> int | None:
    """The array index ``token`` names (``length`` for ``-`` when ``append``), else None."""
    if append and token == "-":
        return length
    if not token.isdigit() or not token.isascii() or (len(token) > 1 and token[0] == "0"):
        return None
    return int(token)


def resolve(document: object, pointer: str) -> Any:
    """The value at ``pointer`` in ``document``, or :data:`MISSING`. Array indexes are
    decimals without leading zeros; ``-`` names nothing (it is not readable)."""
    node: Any = document
    for token in tokens(pointer):
        if isinstance(node, dict):
            if token not in node:
                return MISSING
            node = node[token]
        elif isinstance(node, list):
            index = _index(token, len(node))
            if index is None or index >= len(node):
                return MISSING
            node = node[index]
        else:
            return MISSING
    return node


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
        value = resolve(document, pointer)
        if value is MISSING:
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


# --- cycle deltas ----------------------------------------------------------------------------

OPERATIONS = ("add", "replace", "remove", "move", "reorder", "ref")
# the delta-ops option: ours (spec §7), or RFC 6902's own, in case LoopX's real encoding is that
VOCABULARIES = {
    "loopx": OPERATIONS,
    "rfc6902": ("add", "remove", "replace", "move", "copy", "test"),
}


class DeltaError(ValueError):
    """An operation that cannot apply: its index and the pointer of the offending member."""

    def __init__(self, index: int, member: str, message: str) -> None:
        super().__init__(message)
        self.index = index
        self.pointer = f"/operations/{index}/{member}" if member else f"/operations/{index}"


def _parent(doc: Any, path: str, index: int, member: str = "path") -> tuple[Any, str]:
    try:
        parts = tokens(path)
    except PointerError as exc:
        raise DeltaError(index, member, str(exc)) from None
    if not parts:
        raise DeltaError(index, member, "expected a pointer below the root here")
    parent = resolve(doc, jp.join(parts[:-1]))  # "-" names no array element on the way
    if parent is MISSING or not isinstance(parent, (dict, list)):
        raise DeltaError(index, member, f"expected an object or array at the parent of {path!r}")
    return parent, parts[-1]


def _insert(doc: Any, path: str, value: Any, index: int, *, append: bool) -> Any:
    if path == "":
        return value
    parent, last = _parent(doc, path, index)
    if isinstance(parent, dict):
        parent[last] = value
        return doc
    position = _index(last, len(parent), append=append)
    if last == "-" and not append:
        raise DeltaError(index, "path", "'-' is allowed only as the last token of an add")
    if position is None or position > len(parent):
        raise DeltaError(index, "path", f"expected an array position 0..{len(parent)}: {path!r}")
    parent.insert(position, value)
    return doc


def _remove(doc: Any, path: str, index: int, member: str = "path") -> tuple[Any, Any]:
    """(the document, the removed value)."""
    parent, last = _parent(doc, path, index, member)
    if isinstance(parent, dict):
        if last not in parent:
            raise DeltaError(index, member, f"expected a member at {path!r}, found none")
        return doc, parent.pop(last)
    position = _index(last, len(parent))
    if position is None or position >= len(parent):
        raise DeltaError(index, member, f"expected an array element at {path!r}, found none")
    return doc, parent.pop(position)


def apply_delta(base: Any, operations: Sequence[Any], vocabulary: str = "loopx") -> Any:
    """The document ``operations`` make of ``base`` (which is not modified). Raises
    :class:`DeltaError` for an operation that cannot apply, or that is not in ``vocabulary``
    (:data:`VOCABULARIES`). ``ref`` copies from the base as given, never from the partly
    patched document, so the result does not depend on where in the sequence a ref stands;
    RFC 6902's ``copy`` copies from the partly patched document, as that RFC says."""
    allowed = VOCABULARIES[vocabulary]
    doc = copy.deepcopy(base)
    for index, op in enumerate(operations):
        if not isinstance(op, dict) or op.get("op") not in allowed:
            raise DeltaError(index, "op", f"expected an operation, one of {', '.join(allowed)}")
        kind = op["op"]
        path = op.get("path")
        if not isinstance(path, str):
            raise DeltaError(index, "path", "expected a pointer string")
        if kind == "add":
            if "value" not in op:
                raise DeltaError(index, "", "expected a value to add")
            doc = _insert(doc, path, copy.deepcopy(op["value"]), index, append=True)
        elif kind == "replace":
            if "value" not in op:
                raise DeltaError(index, "", "expected a replacement value")
            if path == "":
                doc = copy.deepcopy(op["value"])
                continue
            doc, _ = _remove(doc, path, index)
            doc = _insert(doc, path, copy.deepcopy(op["value"]), index, append=False)
        elif kind == "remove":
            doc, _ = _remove(doc, path, index)
        elif kind == "move":
            source = op.get("from")
            if not isinstance(source, str):
                raise DeltaError(index, "from", "expected a pointer string")
            if path.startswith(source + "/"):
                raise DeltaError(index, "path", "expected a target outside the moved member")
            doc, value = _remove(doc, source, index, "from")
            doc = _insert(doc, path, value, index, append=False)
        elif kind == "reorder":
            target = _resolve_op(doc, path, index, "path")
            order = op.get("order")
            if not isinstance(target, list):
                raise DeltaError(index, "path", f"expected an array at {path!r}")
            if (
                not isinstance(order, list)
                or not all(type(i) is int for i in order)
                or sorted(order) != list(range(len(target)))
            ):
                raise DeltaError(index, "order", f"expected a permutation of 0..{len(target) - 1}")
            target[:] = [target[i] for i in order]
        elif kind == "copy":
            source = op.get("from")
            if not isinstance(source, str):
                raise DeltaError(index, "from", "expected a pointer string")
            value = _resolve_op(doc, source, index, "from")
            doc = _insert(doc, path, copy.deepcopy(value), index, append=True)
        elif kind == "test":
            if "value" not in op:
                raise DeltaError(index, "", "expected a value to test against")
            found = _resolve_op(doc, path, index, "path")
            if canonical_bytes(found) != canonical_bytes(op["value"]):
                raise DeltaError(index, "value", f"expected the value at {path!r} to equal it")
        else:  # ref
            source = op.get("from")
            if not isinstance(source, str):
                raise DeltaError(index, "from", "expected a pointer string")
            value = _resolve_op(base, source, index, "from")
            doc = _insert(doc, path, copy.deepcopy(value), index, append=False)
    return doc


def _resolve_op(doc: Any, path: str, index: int, member: str) -> Any:
    try:
        value = resolve(doc, path)
    except PointerError as exc:
        raise DeltaError(index, member, str(exc)) from None
    if value is MISSING:
        raise DeltaError(index, member, f"expected {path!r} to resolve, found nothing there")
    return value


_REF_MIN_BYTES = 48  # a ref is worth writing only for subtrees larger than the ref itself


class _Differ:
    """Builds the operations that turn ``base`` into ``target``.

    Objects are compared member by member; arrays are aligned on their elements' canonical
    bytes (difflib's matching blocks) and edited from the end, so that the indexes of the
    elements still to be edited do not shift. An array that is a permutation of the base's
    becomes one ``reorder``. A new value that equals a subtree of the base is written as a
    ``ref`` to it instead of in full.
    """

    def __init__(self, base: Any, refs: bool = True) -> None:
        self.operations: list[dict[str, Any]] = []
        self.subtrees: dict[bytes, str] = {}
        self.refs = refs  # False: RFC 6902's vocabulary, no ref and no reorder
        if refs:
            self._index(base, "")

    def _index(self, value: Any, pointer: str) -> bytes:
        data = canonical_bytes(value)
        if isinstance(value, (dict, list)):
            if len(data) >= _REF_MIN_BYTES:
                self.subtrees.setdefault(data, pointer)
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, child in items:
                if isinstance(child, (dict, list)):
                    self._index(child, jp.append(pointer, key))
        return data

    def _value_op(self, op: str, path: str, value: Any) -> None:
        source = (
            self.subtrees.get(canonical_bytes(value))
            if self.refs and isinstance(value, (dict, list))
            else None
        )
        if source is not None and op == "add":
            self.operations.append({"op": "ref", "path": path, "from": source})
        elif source is not None:  # replace with a base subtree: remove, then ref in its place
            self.operations.append({"op": "remove", "path": path})
            self.operations.append({"op": "ref", "path": path, "from": source})
        else:
            self.operations.append({"op": op, "path": path, "value": value})

    def diff(self, a: Any, b: Any, path: str, origin: str = "") -> None:
        """Operations for ``a`` (the base subtree at ``origin``) to become ``b`` at ``path`` of
        the document being patched."""
        if type(a) is type(b) and isinstance(a, dict):
            for key in a:
                if key not in b:
                    self.operations.append({"op": "remove", "path": jp.append(path, key)})
            for key, value in b.items():
                if key in a:
                    self.diff(a[key], value, jp.append(path, key), jp.append(origin, key))
                else:
                    self._value_op("add", jp.append(path, key), value)
        elif type(a) is type(b) and isinstance(a, list):
            self._diff_list(a, b, path, origin)
        elif type(a) is not type(b) or a != b or canonical_bytes(a) != canonical_bytes(b):
            if path == "":
                self.operations.append({"op": "replace", "path": "", "value": b})
            else:
                self._value_op("replace", path, b)

    def _diff_list(self, a: list[Any], b: list[Any], path: str, origin: str) -> None:
        keys_a = [canonical_bytes(x) for x in a]
        keys_b = [canonical_bytes(x) for x in b]
        if keys_a == keys_b:
            return
        if len(a) == len(b) and sorted(keys_a) == sorted(keys_b):
            positions: dict[bytes, list[int]] = {}
            for i, key in enumerate(keys_a):
                positions.setdefault(key, []).append(i)
            order = [positions[key].pop(0) for key in keys_b]
            if self.refs:
                self.operations.append({"op": "reorder", "path": path, "order": order})
            else:  # RFC 6902 has no reorder: the array in its new order
                self.operations.append({"op": "replace", "path": path, "value": b})
            return
        members = _Members(a) if len(a) * len(b) <= _MOVE_SEARCH_LIMIT else None
        matcher = difflib.SequenceMatcher(None, keys_a, keys_b, autojunk=False)
        for tag, i1, i2, j1, j2 in reversed(matcher.get_opcodes()):
            if tag == "equal":
                continue
            paired = min(i2 - i1, j2 - j1)
            for i in range(i2 - 1, i1 + paired - 1, -1):  # surplus base elements, from the end
                self.operations.append({"op": "remove", "path": jp.append(path, i)})
            for k in range(paired - 1, -1, -1):
                here = jp.append(path, i1 + k)
                source = i1 + k if members is None else members.closest(b[j1 + k], i1 + k)
                if source != i1 + k:
                    # the element moved here from elsewhere in the base, and changed: copy the
                    # base's subtree, then apply this turn's changes on top of it
                    self.operations.append({"op": "remove", "path": here})
                    if self.refs:
                        self.operations.append(
                            {"op": "ref", "path": here, "from": jp.append(origin, source)}
                        )
                    else:  # RFC 6902 copies from the patched document, not the base: inline
                        self.operations.append({"op": "add", "path": here, "value": a[source]})
                self.diff(a[source], b[j1 + k], here, jp.append(origin, source))
            for k in range(paired, j2 - j1):  # new elements, after the paired ones
                self._value_op("add", jp.append(path, i1 + k), b[j1 + k])


_MOVE_SEARCH_LIMIT = 250_000  # element pairs compared to find where a changed element came from
_MOVE_MARGIN = 64  # bytes more in common before a copy from elsewhere beats editing in place


class _Members:
    """The objects of a base array, member by member, to find the one a new element shares the
    most with (an object that moved and changed)."""

    def __init__(self, elements: list[Any]) -> None:
        self.elements = [
            {k: canonical_bytes(v) for k, v in e.items()} if isinstance(e, dict) else None
            for e in elements
        ]

    def closest(self, value: Any, default: int) -> int:
        if not isinstance(value, dict):
            return default
        wanted = {k: canonical_bytes(v) for k, v in value.items()}

        def shared(index: int) -> int:
            members = self.elements[index]
            if members is None:
                return 0
            return sum(len(b) + len(k) for k, b in wanted.items() if members.get(k) == b)

        best, best_score = default, shared(default) + _MOVE_MARGIN
        for index in range(len(self.elements)):
            score = shared(index)
            if score > best_score:
                best, best_score = index, score
        return best


def diff(base: Any, target: Any, vocabulary: str = "loopx") -> list[dict[str, Any]]:
    """Operations in ``vocabulary`` that turn ``base`` into ``target`` (checked: applying them
    restores ``target`` in canonical bytes)."""
    differ = _Differ(base, refs=vocabulary == "loopx")
    differ.diff(base, target, "")
    operations = differ.operations
    try:
        restored = apply_delta(base, operations, vocabulary)
        exact = canonical_bytes(restored) == canonical_bytes(target)
    except DeltaError:
        exact = False
    if not exact:
        # the differ's own guarantee failed: a full replacement is always exact
        operations = [{"op": "replace", "path": "", "value": target}]
    return operations


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --- selecting without parsing the whole document -------------------------------------------
#
# A capture can be far larger than what is selected from it. The scanner walks the bytes from
# the root along each pointer, skipping every member it does not need with C-speed regular
# expressions (a string, or the next bracket), and parses only the selected values: no Python
# object is built for what it skips. It trusts the bytes' syntax (their digest names bytes that
# `continuity check` holds to strict JSON); whatever it cannot follow is a ScanError, never a
# wrong value.

_WS = re.compile(rb"[ \t\n\r]*")
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_SCALAR = re.compile(rb"[-0-9a-zA-Z.+]+")
_NEXT = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)
_RELEASE_EVERY = 1 << 20  # bytes between calls of the release hook


class ScanError(ValueError):
    """The bytes are not JSON where the scanner had to follow them."""


class _Scanner:
    def __init__(self, data: Any, release: Callable[[int], None] | None) -> None:
        self.data = data
        self.release = release
        self.released = 0

    def _progress(self, pos: int) -> None:
        if self.release is not None and pos - self.released >= _RELEASE_EVERY:
            self.release(pos)
            self.released = pos

    def ws(self, pos: int) -> int:
        match = _WS.match(self.data, pos)
        assert match is not None  # the pattern matches the empty string
        return match.end()

    def expect(self, pos: int, char: bytes) -> int:
        pos = self.ws(pos)
        if self.data[pos : pos + 1] != char:
            raise ScanError(f"expected {char.decode()} at byte {pos}")
        return pos + 1

    def string(self, pos: int) -> tuple[str, int]:
        match = _STRING.match(self.data, pos)
        if match is None:
            raise ScanError(f"expected a string at byte {pos}")
        try:
            text: str = json.loads(match.group().decode("utf-8"))
        except ValueError as exc:
            raise ScanError(f"expected a JSON string at byte {pos}") from exc
        return text, match.end()

    def skip(self, pos: int) -> int:
        """The end of the value that starts at ``pos``."""
        first = self.data[pos : pos + 1]
        if first == b'"':
            return self.string(pos)[1]
        if first not in (b"{", b"["):
            match = _SCALAR.match(self.data, pos)
            if match is None:
                raise ScanError(f"expected a value at byte {pos}")
            return match.end()
        depth = 0
        for match in _NEXT.finditer(self.data, pos):
            token = match.group()
            if token in (b"{", b"["):
                depth += 1
            elif token in (b"}", b"]"):
                depth -= 1
                if depth == 0:
                    return match.end()
            self._progress(match.end())
        raise ScanError(f"expected the end of the value at byte {pos}")

    def find(self, pointer: str) -> tuple[int, int] | None:
        """The byte range of the value at ``pointer``, or None when it is absent."""
        pos = self.ws(0)
        for token in tokens(pointer):
            opener = self.data[pos : pos + 1]
            if opener == b"{":
                pos = self._member(pos + 1, token)
            elif opener == b"[":
                pos = self._element(pos + 1, token)
            else:
                return None
            if pos < 0:
                return None
        return pos, self.skip(pos)

    def _member(self, pos: int, key: str) -> int:
        pos = self.ws(pos)
        if self.data[pos : pos + 1] == b"}":
            return -1
        while True:
            name, pos = self.string(self.ws(pos))
            pos = self.ws(self.expect(pos, b":"))
            if name == key:
                return pos
            pos = self.ws(self.skip(pos))
            if self.data[pos : pos + 1] == b"}":
                return -1
            pos = self.expect(pos, b",")

    def _element(self, pos: int, token: str) -> int:
        wanted = _index(token, 0)
        if wanted is None:
            return -1
        pos = self.ws(pos)
        if self.data[pos : pos + 1] == b"]":
            return -1
        index = 0
        while True:
            pos = self.ws(pos)
            if index == wanted:
                return pos
            pos = self.ws(self.skip(pos))
            if self.data[pos : pos + 1] == b"]":
                return -1
            pos = self.expect(pos, b",")
            index += 1


def select(
    data: Any,
    pointers: Sequence[str],
    release: Callable[[int], None] | None = None,
    restart: Callable[[], None] | None = None,
) -> list[Any]:
    """The values at ``pointers`` in the JSON bytes ``data`` (bytes, or any buffer such as a
    mapped file), in order, :data:`MISSING` for an absent one. ``release(pos)`` is told, every
    megabyte or so, that the bytes before ``pos`` were passed; ``restart()`` that the next
    pointer starts from the root again. Raises :class:`ScanError` or :class:`PointerError`."""
    scanner = _Scanner(data, release)
    found: list[Any] = []
    for pointer in pointers:
        span = scanner.find(pointer)
        if span is None:
            found.append(MISSING)
        else:
            loaded = strict_json.load(bytes(data[span[0] : span[1]]))
            if isinstance(loaded, strict_json.Problem):
                raise ScanError(f"the value at {pointer!r} is not strict JSON: {loaded.message}")
            found.append(loaded.value)
        scanner.released = 0
        if restart is not None:
            restart()
    return found
