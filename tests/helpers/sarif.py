"""Every SARIF document the tests make, validated against the SARIF 2.1.0 schema
(``tests/data/sarif-2.1.0.schema.json``; where it comes from: ``tests/data/README.md``)."""

from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

SCHEMA = Path(__file__).parents[1] / "data" / "sarif-2.1.0.schema.json"
DIGEST = "1c49a0f2b60444c71bb14878e21e0d882198eff4c539861b133093ad89ed798c"


@cache
def validator() -> jsonschema.protocols.Validator:
    data = SCHEMA.read_bytes()
    assert hashlib.sha256(data).hexdigest() == DIGEST, f"{SCHEMA} is not the recorded schema"
    schema = json.loads(data)
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def assert_valid_sarif(document: str | dict[str, Any]) -> None:
    """Fail with every schema error of ``document`` (SARIF text or its parsed value)."""
    value = json.loads(document) if isinstance(document, str) else document
    errors = sorted(validator().iter_errors(value), key=lambda e: list(e.absolute_path))
    assert not errors, "SARIF rejected by the 2.1.0 schema:\n" + "\n".join(
        f"  /{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors[:20]
    )
