"""The shipped JSON Schemas: loading, compiling once per run, and validating."""

from __future__ import annotations

import itertools
import json
import pkgutil
from dataclasses import dataclass
from functools import cache
from typing import Any

from continuity_checks.core import pointer as jp

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
    # through the package's loader (a wheel on disk, a zip): pkgutil costs a fraction of
    # importlib.resources' imports (tempfile, zipfile, shutil), about 7 ms of a commit hook
    data = pkgutil.get_data(PACKAGE, f"{name}.schema.json")
    if data is None:  # pragma: no cover - a loader that cannot read package data
        raise FileNotFoundError(f"{PACKAGE}/{name}.schema.json")
    return data.decode("utf-8")


@cache
def load(name: str) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads(text(name))
    return schema


@dataclass(frozen=True)
class SchemaError:
    pointer: str
    keyword: str
    message: str


class Validator:
    """A schema compiled once with jsonschema-rs, formats checked."""

    def __init__(self, name: str) -> None:
        import jsonschema_rs

        self.name = name
        self._validator = jsonschema_rs.Draft202012Validator(load(name), validate_formats=True)

    def is_valid(self, instance: object) -> bool:
        return bool(self._validator.is_valid(instance))

    def errors(self, instance: object, limit: int = MAX_ERRORS) -> list[SchemaError]:
        """The first ``limit`` errors: a document with more has a cause the first ones show, and
        a hostile one (100,000 bad items) must not cost a finding each."""
        found = []
        for error in itertools.islice(self._validator.iter_errors(instance), limit):
            keyword = str(error.schema_path[-1]) if error.schema_path else ""
            found.append(SchemaError(jp.join(error.instance_path), keyword, str(error.message)))
        return found


@cache
def validator(name: str) -> Validator:
    return Validator(name)
