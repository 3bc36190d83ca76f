"""LoopX cycle deltas as pure functions on values: the operations that turn a base document
into a target (:func:`diff`) and their application (:func:`apply_delta`), in LoopX's vocabulary
or RFC 6902's."""

from __future__ import annotations

import copy
import difflib
from collections.abc import Sequence
from typing import Any

from continuity_checks.checks.captures.model import canonical_bytes
from continuity_checks.core import pointer as jp

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
        parts = jp.tokens(path)
    except jp.PointerError as exc:
        raise DeltaError(index, member, str(exc)) from None
    if not parts:
        raise DeltaError(index, member, "expected a pointer below the root here")
    parent = jp.resolve(doc, jp.join(parts[:-1]))  # "-" names no array element on the way
    if parent is jp.MISSING or not isinstance(parent, (dict, list)):
        raise DeltaError(index, member, f"expected an object or array at the parent of {path!r}")
    return parent, parts[-1]


def _insert(doc: Any, path: str, value: Any, index: int, *, append: bool) -> Any:
    if path == "":
        return value
    parent, last = _parent(doc, path, index)
    if isinstance(parent, dict):
        parent[last] = value
        return doc
    position = jp.index(last, len(parent), append=append)
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
    position = jp.index(last, len(parent))
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
        value = jp.resolve(doc, path)
    except jp.PointerError as exc:
        raise DeltaError(index, member, str(exc)) from None
    if value is jp.MISSING:
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
