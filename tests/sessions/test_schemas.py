"""The OpenProgram schemas: valid 2020-12 with stable ids, and jsonschema-rs agrees with the
jsonschema oracle on every fixture, corpus file and mutation of them."""

from __future__ import annotations

import json

import jsonschema
import pytest

from continuity_checks.checks.sessions import layout
from continuity_checks.core import schemas, strict_json
from tests.helpers.session_cases import BAD, GOOD, bound_layout
from tests.helpers.sessions import SYNTHETIC, state

NAMES = {
    layout.NODE: "openprogram-history-node",
    layout.META: "openprogram-session-meta",
    layout.INDEX: "openprogram-sessions-index",
    layout.LOCATIONS: "openprogram-locations",
    layout.PROJECTS: "openprogram-projects",
    layout.BACKUP: "openprogram-file-backup-manifest",
}


def test_schemas_are_valid_and_named() -> None:
    for name in NAMES.values():
        schema = schemas.load(name)
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["$id"] == f"urn:continuity-checks:schema:openprogram:{name[12:]}:0"
        assert name in schemas.names()


def instances() -> list[tuple[str, object]]:
    texts: list[tuple[str, str]] = []
    for files in [state(), bound_layout(), *(b[1] for b in BAD), *(g[1] for g in GOOD)]:
        texts += [(p, t if isinstance(t, str) else t.decode("utf-8", "replace"))
                  for p, t in files.items() if isinstance(t, (str, bytes))]  # fmt: skip
    if SYNTHETIC.is_dir():
        texts += [(str(p), p.read_text("utf-8")) for p in SYNTHETIC.rglob("*.json")]
    found = []
    for path, text in texts:
        kind = layout.claims(path.split("synthetic/home/alice/")[-1])
        if kind in NAMES:
            doc = strict_json.parse(text)
            if isinstance(doc, strict_json.Document):
                found.append((NAMES[kind], doc.value))
                if isinstance(doc.value, dict):  # and each top-level value swapped for a wrong type
                    for key in list(doc.value)[:12]:
                        found.append((NAMES[kind], {**doc.value, key: [1, {"x": None}]}))
    return found


INSTANCES = instances()


def test_fixture_set_is_substantial() -> None:
    assert len(INSTANCES) > 400
    assert {name for name, _ in INSTANCES} == set(NAMES.values())


def oracle(name: str, instance: object) -> set[str]:
    validator = jsonschema.Draft202012Validator(
        schemas.load(name), format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    return {"".join(f"/{p}" for p in e.absolute_path) for e in validator.iter_errors(instance)}


@pytest.mark.parametrize(("name", "instance"), INSTANCES)
def test_engines_agree(name: str, instance: object) -> None:
    expected = oracle(name, instance)
    assert {e.pointer for e in schemas.validator(name).errors(instance)} == expected
    assert schemas.validator(name).is_valid(instance) == (not expected)


def test_corpus_files_are_valid() -> None:
    assert SYNTHETIC.is_dir(), f"the OpenProgram corpus is missing: {SYNTHETIC}"
    checked = 0
    for path in SYNTHETIC.rglob("*.json"):
        kind = layout.claims(str(path).split("synthetic/home/alice/")[-1])
        if kind in NAMES:
            assert oracle(NAMES[kind], json.loads(path.read_text("utf-8"))) == set(), path
            checked += 1
    assert checked == 20
