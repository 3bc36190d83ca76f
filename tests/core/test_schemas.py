"""The shipped schemas: valid 2020-12 schemas, stable ids, and both engines agree on every fixture."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from continuity_checks.checks.deltas import timestamps
from continuity_checks.core import schemas, strict_json
from tests.conftest import CORPUS, EXAMPLES
from tests.helpers.delta_cases import BAD, GOOD_CASES
from tests.helpers.working_state import BAD as WS_BAD
from tests.helpers.working_state import GOOD_CASES as WS_GOOD

DELTA, LEGACY = "deltalayer-conversation-delta", "deltalayer-legacy-record"
#: the DSH schemas, by the file name they apply to
DSH = {
    "WORKING_STATE.json": "dsh-working-state",
    "state.json": "dsh-project-state",
    "RUNTIME_POLICY.json": "dsh-runtime-policy",
    "EXECUTION_POLICY.json": "dsh-execution-policy",
    "ACTIVE_REQUIREMENTS.json": "dsh-active-requirements",
    "SOURCE_INDEX.json": "dsh-source-index",
}


def test_shipped_schemas_are_valid_draft_2020_12() -> None:
    assert {DELTA, LEGACY, "provenance-manifest", *DSH.values()} <= set(schemas.names())
    for name in schemas.names():
        schema = schemas.load(name)
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert schema["$id"].startswith("urn:continuity-checks:schema:")


def test_timestamp_pattern_is_the_grammar() -> None:
    for name in (DELTA, LEGACY):
        assert schemas.load(name)["$defs"]["timestamp"]["pattern"] == timestamps.PATTERN


def _rfc3339(instance: object) -> bool:
    """RFC 3339 date-time for the oracle: python-jsonschema checks the format only with the
    optional rfc3339-validator package installed, and passes every string without it."""
    if not isinstance(instance, str):
        return True
    if not re.fullmatch(r"\d{4}-\d\d-\d\d[Tt]\d\d:\d\d:\d\d(\.\d+)?([Zz]|[+-]\d\d:\d\d)", instance):
        return False
    try:
        datetime.fromisoformat(instance.upper().replace("Z", "+00:00"))
    except ValueError:
        return ":60" in instance  # a leap second, which RFC 3339 allows and Python does not
    return True


# a checker of its own: jsonschema's shared FORMAT_CHECKER is left as it is
ORACLE_FORMATS = jsonschema.FormatChecker(formats=())
ORACLE_FORMATS.checkers = {**jsonschema.Draft202012Validator.FORMAT_CHECKER.checkers}
ORACLE_FORMATS.checks("date-time")(_rfc3339)


def oracle_errors(name: str, instance: object) -> set[str]:
    validator = jsonschema.Draft202012Validator(schemas.load(name), format_checker=ORACLE_FORMATS)
    return {"".join(f"/{p}" for p in e.absolute_path) for e in validator.iter_errors(instance)}


def rs_errors(name: str, instance: object) -> set[str]:
    return {e.pointer for e in schemas.validator(name).errors(instance)}


def records() -> list[tuple[str, object]]:
    """Every JSON record of the fixtures, examples and corpus, with the schema it claims."""
    found: list[tuple[str, object]] = []
    texts: list[tuple[str, str]] = []
    for _, files, *_ in [*BAD, *GOOD_CASES]:
        texts += [
            (k, v if isinstance(v, str) else v.decode("utf-8", "replace")) for k, v in files.items()
        ]
    for root in (EXAMPLES, CORPUS / "deltalayer"):
        texts += [(str(p), p.read_text("utf-8")) for p in root.rglob("*") if p.suffix in (".json", ".jsonl")
                  and (".deltalayer" in p.parts or p.suffix == ".jsonl")]  # fmt: skip
    for path, text in texts:
        name = LEGACY if path.endswith(".jsonl") else DELTA
        for line in text.splitlines() if name == LEGACY else [text]:
            doc = strict_json.parse(line)  # what the loader lets through reaches the schema
            if isinstance(doc, strict_json.Document):
                found.append((name, doc.value))
    dsh_texts = [
        (k, v if isinstance(v, str) else v.decode("utf-8", "replace"))
        for _, files, *_ in [*WS_BAD, *WS_GOOD]
        for k, v in files.items()
    ]
    dsh_texts += [(str(p), p.read_text("utf-8")) for p in (CORPUS / "dsh").rglob("*.json")]
    dsh_texts += [
        (str(p), p.read_text("utf-8")) for p in EXAMPLES.rglob("*.json") if ".dsh" in p.parts
    ]
    for path, text in dsh_texts:
        base = path.rsplit("/", 1)[-1]
        dsh_name = DSH.get("WORKING_STATE.json" if "WORKING_STATE" in base else base)
        doc = strict_json.parse(text)
        if dsh_name is not None and isinstance(doc, strict_json.Document):
            found.append((dsh_name, doc.value))
    return found


RECORDS = records()


def test_fixture_set_is_substantial() -> None:
    # the test tables and examples alone, plus the 65 corpus records when the corpus is beside us
    assert len(RECORDS) > (100 if (CORPUS / "deltalayer").is_dir() else 40)


@pytest.mark.parametrize(("name", "instance"), RECORDS)
def test_engines_agree_on_every_fixture(name: str, instance: object) -> None:
    assert rs_errors(name, instance) == oracle_errors(name, instance)
    assert schemas.validator(name).is_valid(instance) == (not oracle_errors(name, instance))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=8,
)


@given(
    st.fixed_dictionaries(
        {},
        optional={
            "started_at": st.sampled_from(["2026-09-21", "2026-09-21T16:00:00+08:00", "x", ""])
            | json_values,
            "updated_at": st.sampled_from(["2026-09-21T16:00:00Z"]) | json_values,
            "source": st.sampled_from(["agent", " ", ""]) | json_values,
            "changes": st.lists(st.sampled_from(["a", "", " "]) | json_values, max_size=3)
            | json_values,
            "conversation_id": json_values,
        },
    )
)
def test_engines_agree_on_generated_records(instance: dict[str, object]) -> None:
    assert rs_errors(DELTA, instance) == oracle_errors(DELTA, instance)


def test_schema_files_are_package_data() -> None:
    import continuity_checks

    folder = Path(continuity_checks.__file__).parent / "schemas"
    # both sides sorted as file names ("a-b.schema.json" sorts before "a.schema.json")
    assert sorted(p.name for p in folder.glob("*.schema.json")) == sorted(
        f"{n}.schema.json" for n in schemas.names()
    )
