"""The shipped JSON Schemas: loading, compiling once per run, and validating."""

import importlib
import itertools
import json
import os
from functools import cache
from typing import Any

from continuity_checks.core import pointer as jp
from continuity_checks.core import strict_json

PACKAGE = "continuity_checks.schemas"
MAX_ERRORS = 100


def names() -> list[str]:
    """Every shipped schema, by file name without ``.schema.json``."""
    from importlib import resources  # listing a package's files: only `schema list` needs it

    return sorted(
        entry.name.removesuffix(".schema.json")
        for entry in resources.files(PACKAGE).iterdir()
        if entry.name.endswith(".schema.json")
    )


@cache
def text(name: str) -> str:
    # through the package's loader (a wheel on disk, a zip), as pkgutil.get_data reads it
    # (importlib.resources imports tempfile, zipfile and shutil; pkgutil 1.1 M instructions of
    # a commit hook)
    package = importlib.import_module(PACKAGE)
    spec = package.__spec__
    get_data = getattr(spec.loader, "get_data", None) if spec is not None else None
    if package.__file__ is None or get_data is None:  # pragma: no cover - no package data
        raise FileNotFoundError(f"{PACKAGE}/{name}.schema.json")
    data: bytes = get_data(os.path.join(os.path.dirname(package.__file__), f"{name}.schema.json"))
    return data.decode("utf-8")


@cache
def load(name: str) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(text(name))
    return schema


class SchemaError:
    """One error of a document against a schema: where (``pointer``), the schema keyword that
    failed and the validator's message. (A plain class: a ``NamedTuple`` class costs every
    command's start-up about 0.55 M instructions to make.)"""

    __slots__ = ("keyword", "message", "pointer")

    def __init__(self, pointer: str, keyword: str, message: str) -> None:
        self.pointer = pointer
        self.keyword = keyword
        self.message = message


class Validator:
    """A schema compiled once with jsonschema-rs, formats checked."""

    def __init__(self, name: str) -> None:
        import jsonschema_rs

        self.name = name
        self._validator = jsonschema_rs.Draft202012Validator(load(name), validate_formats=True)
        #: whether a cut must look for equal items past the cut (see :func:`_cut`)
        self._unique = '"uniqueItems"' in text(name)

    def is_valid(self, instance: object) -> bool:
        try:
            return bool(self._validator.is_valid(instance))
        except UnicodeEncodeError:  # a lone surrogate, which the engine cannot take
            return bool(self._validator.is_valid(strict_json.well_formed(instance)))

    def errors(self, instance: object, limit: int = MAX_ERRORS) -> list[SchemaError]:
        """The first ``limit`` errors: a document with more has a cause the first ones show, and
        a hostile one (100,000 bad items) must not cost a finding each.

        jsonschema-rs builds every error (and every ``oneOf`` branch's) before the first is
        taken: 20,000 bad items under a ``oneOf`` cost 480,000 error objects and 7 s. So arrays
        longer than ``limit`` items are validated cut to ``limit + 1`` first; the errors found
        in items of the cut copy are errors of the document (an item is judged alone). An error
        about a cut array itself (its length, ``contains``, ``uniqueItems``) or about anything
        that holds one (a ``oneOf`` whose branches differ on the array), or a cut copy that
        passes, sends the whole document to the validator, as before; so does, for a schema
        with ``uniqueItems``, a cut array with an item past the cut equal to another (the cut
        copy cannot show that duplicate, and an error elsewhere would be reported without it).
        """
        try:
            return self._capped_errors(instance, limit)
        except UnicodeEncodeError:  # a lone surrogate: judged as U+FFFD, as a UTF-8 reader sees it
            return self._capped_errors(strict_json.well_formed(instance), limit)

    def _capped_errors(self, instance: object, limit: int) -> list[SchemaError]:
        cut_paths: set[tuple[str | int, ...]] = set()
        cut = _cut(instance, limit + 1, (), cut_paths, self._unique)
        if cut_paths and _UNIQUE_MARK not in cut_paths:
            found = self._errors(cut, limit)
            if found and not any(_above_a_cut(e[3], cut_paths) for e in found):
                return [
                    SchemaError(pointer, keyword, message) for pointer, keyword, message, _ in found
                ]
        return [
            SchemaError(pointer, keyword, message)
            for pointer, keyword, message, _ in self._errors(instance, limit)
        ]

    def _errors(self, instance: object, limit: int) -> list[tuple[str, str, str, list[str | int]]]:
        found = []
        for error in itertools.islice(self._validator.iter_errors(instance), limit):
            keyword = str(error.schema_path[-1]) if error.schema_path else ""
            path = list(error.instance_path)
            found.append((jp.join(path), keyword, str(error.message), path))
        return found


def _above_a_cut(path: list[str | int], cut_paths: set[tuple[str | int, ...]]) -> bool:
    """Whether an error at ``path`` is about a cut array or something that holds one: its
    judgement may depend on the items cut away."""
    depth = len(path)
    return any(cut[:depth] == tuple(path) for cut in cut_paths)


def _cut(
    value: object,
    keep: int,
    path: tuple[str | int, ...],
    cut_paths: set[tuple[str | int, ...]],
    unique: bool = False,
) -> object:
    """``value`` with every array longer than ``keep`` items cut to its first ``keep``; the paths
    of the cut arrays are added to ``cut_paths``. Shares what needs no cut."""
    if isinstance(value, list):
        over = len(value) > keep
        if over:
            cut_paths.add(path)
            if unique and _duplicate_past(value, keep):
                # ``uniqueItems`` judges the whole array: the cut copy would not show a
                # duplicate that the items cut away hold, and another error's report would hide it
                cut_paths.add(_UNIQUE_MARK)
        items = value[:keep] if over else value
        copied = [_cut(item, keep, (*path, i), cut_paths, unique) for i, item in enumerate(items)]
        if over or any(c is not v for c, v in zip(copied, value, strict=False)):
            return copied
        return value
    if isinstance(value, dict):
        copied_map = {k: _cut(v, keep, (*path, k), cut_paths, unique) for k, v in value.items()}
        return copied_map if any(copied_map[k] is not v for k, v in value.items()) else value
    return value


#: in ``cut_paths``: a cut array holds equal items, one of them past the cut (see :func:`_cut`)
_UNIQUE_MARK: tuple[str | int, ...] = ("", -1, "uniqueItems")


def _duplicate_past(items: list[object], keep: int) -> bool:
    """Whether an item past ``keep`` equals another item (as JSON values: ``1`` is ``1.0``,
    ``true`` is not ``1``, objects regardless of key order)."""
    seen: set[object] = set()
    for index, item in enumerate(items):
        key = _json_key(item)
        if key in seen:
            if index >= keep:
                return True
        else:
            seen.add(key)
    return False


def _json_key(value: object) -> object:
    if isinstance(value, bool) or value is None:
        return ("b", value)
    if isinstance(value, int | float):
        return ("n", value)
    if isinstance(value, str):
        return ("s", value)
    if isinstance(value, list):
        return ("l", tuple(_json_key(item) for item in value))
    if isinstance(value, dict):
        return ("o", frozenset((k, _json_key(v)) for k, v in value.items()))
    return ("?", id(value))


@cache
def validator(name: str) -> Validator:
    return Validator(name)
