"""Strict JSON: any bytes in, a document or a positioned problem out; never an exception."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from continuity_checks.core import strict_json
from tests.conftest import RunCLI, write_tree


@pytest.mark.parametrize(
    ("data", "rule", "line", "column", "pointer"),
    [
        (b'{"a":1,\n"a":2}', "CC005", 2, 1, "/a"),
        (b'{"a":{"b":[1,\n  Infinity]}}', "CC006", 2, 3, "/a/b/1"),
        (b'\xef\xbb\xbf{"a":1}', "CC003", 1, 1, None),
        (b'{"a":\n"caf\xc3"}', "CC002", 2, 5, None),
        (b'{"a":1} x', "CC004", 1, 9, None),
        (b'{"a":"\\udc00"}', "CC009", 1, 6, "/a"),
        (b"[" * 3 + b"]" * 3, "CC007", 1, 3, "/0/0"),
    ],
)
def test_problems_have_positions(
    data: bytes, rule: str, line: int, column: int, pointer: str | None
) -> None:
    problem = strict_json.load(data, max_depth=2)
    assert isinstance(problem, strict_json.Problem)
    assert (problem.rule.id, problem.line, problem.column, problem.pointer) == (
        rule,
        line,
        column,
        pointer,
    )
    assert problem.message.startswith("expected")


def test_positions_of_pointers() -> None:
    doc = strict_json.load(b'{\n  "a/b": {"~k": [10,\n    "x"]},\n  "z": null}')
    assert isinstance(doc, strict_json.Document)
    assert doc.position("/a~1b/~0k/1") == (3, 5)
    assert doc.position("/z") == (4, 8)
    assert doc.position("/missing") == (1, 1)
    assert doc.position("/a~1b/~0k/7") == (2, 17)


def test_first_line_offsets_jsonl_records() -> None:
    doc = strict_json.load(b'{"a": [1, 2]}', first_line=40)
    assert isinstance(doc, strict_json.Document)
    assert doc.position("/a/1") == (40, 11)


@given(st.binary(max_size=200))
def test_any_bytes_never_raise(data: bytes) -> None:
    result = strict_json.load(data, max_depth=8)
    assert isinstance(result, (strict_json.Document, strict_json.Problem))


json_text = st.recursive(
    st.none()
    | st.booleans()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=5),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=4), c, max_size=3),
    max_leaves=10,
).map(lambda v: json.dumps(v, indent=1))


@given(json_text)
def test_valid_json_loads_as_the_standard_library_does(text: str) -> None:
    doc = strict_json.load(text.encode())
    assert isinstance(doc, strict_json.Document)
    assert doc.value == json.loads(text)


@given(st.binary(max_size=120))
def test_cli_turns_any_bytes_into_findings(
    tmp_path_factory: pytest.TempPathFactory, data: bytes
) -> None:
    from continuity_checks import engine
    from continuity_checks.core.config import Config

    root = write_tree(tmp_path_factory.mktemp("p"), {".deltalayer/changes/x.json": data,
                                                      ".deltalayer/changes.jsonl": data})  # fmt: skip
    report = engine.check(root, Config(), under=("",))
    assert all(f.rule.startswith(("CC", "DL")) for f in report.findings)


def test_unreadable_directory_named_like_a_delta(tmp_path: Path, run_json: RunCLI) -> None:
    (tmp_path / ".deltalayer/changes/dir.json").mkdir(parents=True)
    code, report = run_json(
        "check", str(tmp_path / ".deltalayer/changes/dir.json"), "--root", str(tmp_path)
    )
    assert code == 1
    assert report["findings"][0]["rule"] == "CC001"


def test_fifo_named_like_a_delta_does_not_block(tmp_path: Path, run_json: RunCLI) -> None:
    import os

    (tmp_path / ".deltalayer/changes").mkdir(parents=True)
    os.mkfifo(tmp_path / ".deltalayer/changes/pipe.json")
    code, report = run_json("check", "--all", "--root", str(tmp_path))
    assert code == 1
    assert [(f["rule"], f["path"]) for f in report["findings"]][:1] == [
        ("CC001", ".deltalayer/changes/pipe.json")
    ]


def test_large_file_is_read_whole(tmp_path: Path, run_json: RunCLI) -> None:
    changes = ",".join(f'"change {i} matters for the next conversation"' for i in range(5000))
    text = (
        '{"started_at":"2026-09-21","updated_at":"2026-09-21","source":"a","changes":['
        + changes
        + "]}\n"
    )
    assert len(text) > 3 * 64 * 1024
    write_tree(
        tmp_path,
        {
            ".deltalayer/changes/2026-09-21--a.json": text,
            "AGENTS.md": "<!-- deltalayer-v0 -->\n",
            "PROJECT.md": "#\n",
        },
    )
    code, report = run_json("check", "--all", "--root", str(tmp_path))
    assert (code, report["findings"]) == (0, [])


@pytest.mark.parametrize(
    "text", ['{"k": "cut \\ud83d"}', '["\\ude00", "\\ud83d\\ude00"]', '{"\\ud800": 1}\n']
)
def test_lone_surrogates_are_accepted_only_when_asked(text: str) -> None:
    """The one lenience a family may ask for (JavaScript writers): the value JSON.parse gives."""
    data = text.encode()
    refused = strict_json.load(data)
    assert isinstance(refused, strict_json.Problem) and refused.rule.id == "CC009"
    assert strict_json.accepts(data) is None
    doc = strict_json.load(data, lone_surrogates=True)
    assert isinstance(doc, strict_json.Document)
    assert doc.value == json.loads(text)
    assert strict_json.accepts(data, lone_surrogates=True) == (text, doc.value)
    again = strict_json._parse_strictly(text, lone_surrogates=True)
    assert isinstance(again, strict_json.Document) and again.value == doc.value
    assert strict_json.lone_surrogate(doc.value) is not None
    assert strict_json.lone_surrogate(strict_json.well_formed(doc.value)) is None
