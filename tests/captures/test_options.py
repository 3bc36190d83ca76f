"""The spec's §9 alternatives as ``[captures]`` options: each value through the real CLI
(``continuity check`` and ``continuity capture …``, which read the options of the current
directory's configuration), the default first."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from continuity_checks.checks.captures import cycle_delta, model
from continuity_checks.cli import main
from continuity_checks.core import pointer as jp
from tests.conftest import RunCLI, write_tree
from tests.helpers.captures import CAP, build, pretty

PROVIDERS = {"providers": {"configured": {"formats": ["a"], "authorization": "k"}, "alt": {}}}


def configure(root: Path, **options: str) -> None:
    lines = "".join(f'{key} = "{value}"\n' for key, value in options.items())
    (root / ".continuity.toml").write_text("[captures]\n" + lines)


def capture(capsys: pytest.CaptureFixture[str], root: Path, *args: str) -> tuple[int, Any]:
    """``continuity capture …`` run from ``root`` (whose configuration it follows)."""
    capsys.readouterr()
    code = main(["capture", *args])
    out = capsys.readouterr().out
    return code, (json.loads(out) if out.strip().startswith("{") else out)


def write_capture(root: Path, value: object) -> tuple[str, str]:
    path = root / "c" / "capture.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(pretty(value), encoding="utf-8")
    return str(path), hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


# --- list-size -------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [None, "canonical", "off"])
def test_list_size(here: Path, capsys: pytest.CaptureFixture[str], value: str | None) -> None:
    if value is not None:
        configure(here, **{"list-size": value})
    path, digest = write_capture(here, PROVIDERS)
    code, out = capture(capsys, here, "list", "--capture-file", path, "--capture-sha256", digest,
                        "--select", "/providers", "--list-depth", "1")  # fmt: skip
    assert code == 0 and len(out["results"]) == 3
    for entry in out["results"]:
        if value == "off":
            assert "size" not in entry and set(entry) == {"pointer", "type", "members"}
        else:
            node = jp.resolve(PROVIDERS, entry["pointer"])
            assert entry["size"] == len(model.canonical_bytes(node))


# --- list-depth-origin -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, ["/providers", "/providers/configured", "/providers/alt"]),
        ("node", ["/providers", "/providers/configured", "/providers/alt"]),
        ("children", ["/providers/configured", "/providers/configured/formats",
                      "/providers/configured/authorization", "/providers/alt"]),
    ],
)  # fmt: skip
def test_list_depth_origin(
    here: Path, capsys: pytest.CaptureFixture[str], value: str | None, expected: list[str]
) -> None:
    """The seed's example: ``--select /providers --list-depth 2`` shows the services and their
    fields, and no line for /providers itself ("children"); the spec's choice lists it."""
    if value is not None:
        configure(here, **{"list-depth-origin": value})
    path, digest = write_capture(here, PROVIDERS)
    depth = "2" if value == "children" else "1"
    code, out = capture(capsys, here, "read", "--list", "--list-depth", depth, "--capture-file",
                        path, "--capture-sha256", digest, "--select", "/providers")  # fmt: skip
    assert code == 0
    assert [e["pointer"] for e in out["results"]] == expected


def test_list_depth_zero_lists_nothing_under_children(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    configure(here, **{"list-depth-origin": "children"})
    path, digest = write_capture(here, PROVIDERS)
    code, out = capture(capsys, here, "list", "--list-depth", "0", "--capture-file", path,
                        "--capture-sha256", digest, "--select", "/providers")  # fmt: skip
    assert (code, out["error_code"]) == (1, "USAGE")


# --- duplicate-pointers ----------------------------------------------------------------------


def _duplicated_reader(root: Path) -> None:
    files = {k: v for k, v in build().items() if k.startswith(CAP)}
    record = json.loads(files[CAP + "first.reader.json"])
    select = [*record["select"], record["select"][0]]
    record["select"] = select
    record["selection_sha256"] = model.selection_h1(record["capture_sha256"], select, None)
    digest = model.bare(record["capture_sha256"])
    record["command"] = (
        f"continuity capture read --capture-file capture.json --capture-sha256 {digest} "
        + " ".join(f"--select {p}" for p in select)
    )
    files[CAP + "first.reader.json"] = pretty(record)
    write_tree(root, files)


@pytest.mark.parametrize(
    ("value", "code", "severity"), [(None, 0, "warning"), ("flag", 0, "warning"), ("reject", 1, "error")]
)  # fmt: skip
def test_duplicate_pointers_in_a_reader(
    here: Path, run_json: RunCLI, value: str | None, code: int, severity: str
) -> None:
    _duplicated_reader(here)
    if value is not None:
        configure(here, **{"duplicate-pointers": value})
    found, report = run_json("check", "--all", "--root", ".")
    assert found == code
    assert [(f["rule"], f["pointer"], f["severity"]) for f in report["findings"]] == [
        ("CX115", "/select/2", severity)
    ]


@pytest.mark.parametrize("value", [None, "flag", "reject"])
def test_duplicate_pointers_in_a_read(
    here: Path, capsys: pytest.CaptureFixture[str], value: str | None
) -> None:
    if value is not None:
        configure(here, **{"duplicate-pointers": value})
    path, digest = write_capture(here, PROVIDERS)
    code, out = capture(capsys, here, "read", "--capture-file", path, "--capture-sha256", digest,
                        "--select", "/providers/alt", "--select", "/providers/alt")  # fmt: skip
    if value == "reject":
        assert (code, out["error_code"], out["pointers"]) == (
            1,
            "POINTER_DUPLICATE",
            ["/providers/alt"],
        )
        assert "results" not in out
    else:
        assert (code, [r["pointer"] for r in out["results"]]) == (0, ["/providers/alt"] * 2)


# --- delta-ops -------------------------------------------------------------------------------

BASE = {"order": [1, 2, 3, 4], "kept": {"text": "a subtree long enough to be worth a ref", "n": 1}}
CURRENT = {"order": [4, 3, 2, 1], "kept": BASE["kept"], "again": BASE["kept"]}


def _cycle(root: Path, vocabulary: str) -> dict[str, str]:
    """A directory holding a cycle base and the delta ``cycle_delta.diff`` writes in ``vocabulary``."""
    base_text = pretty(BASE)
    delta = {
        "schema_version": 1,
        "base_sha256": hashlib.sha256(base_text.encode()).hexdigest(),
        "target_sha256": model.canonical_sha256(CURRENT),
        "operations": cycle_delta.diff(BASE, CURRENT, vocabulary),
    }
    files = {"cyc/cycle-base.json": base_text, "cyc/cycle-delta.json": pretty(delta)}
    write_tree(root, files)
    return files


def test_the_two_vocabularies_differ() -> None:
    assert {op["op"] for op in cycle_delta.diff(BASE, CURRENT)} == {"reorder", "ref"}
    ops = cycle_delta.diff(BASE, CURRENT, "rfc6902")
    assert {op["op"] for op in ops} <= set(cycle_delta.VOCABULARIES["rfc6902"])
    assert model.canonical_bytes(cycle_delta.apply_delta(BASE, ops, "rfc6902")) == (
        model.canonical_bytes(CURRENT)
    )


@pytest.mark.parametrize(
    ("value", "written", "findings"),
    [
        (None, "loopx", []),
        ("loopx", "loopx", []),
        ("rfc6902", "rfc6902", []),
        ("loopx", "rfc6902", []),  # the RFC delta above happens to use add/replace only
        ("rfc6902", "loopx", [("CX124", "/operations/0"), ("CX124", "/operations/1")]),
    ],
)  # fmt: skip
def test_delta_ops_in_check(
    here: Path,
    run_json: RunCLI,
    value: str | None,
    written: str,
    findings: list[tuple[str, str]],
) -> None:
    _cycle(here, written)
    if value is not None:
        configure(here, **{"delta-ops": value})
    code, report = run_json("check", "--all", "--root", ".")
    assert sorted((f["rule"], f["pointer"]) for f in report["findings"]) == findings
    assert code == (1 if findings else 0)


def test_rfc6902_copy_and_test_in_check(here: Path, run_json: RunCLI) -> None:
    files = _cycle(here, "rfc6902")
    delta = json.loads(files["cyc/cycle-delta.json"])
    delta["operations"] = [
        {"op": "test", "path": "/kept/n", "value": 1},
        {"op": "copy", "from": "/kept", "path": "/again"},
        {"op": "replace", "path": "/order", "value": [4, 3, 2, 1]},
    ]
    write_tree(here, {"cyc/cycle-delta.json": pretty(delta)})
    configure(here, **{"delta-ops": "rfc6902"})
    code, report = run_json("check", "--all", "--root", ".")
    assert (code, report["findings"]) == (0, [])
    delta["operations"][0]["value"] = 2  # a failing test: the delta does not apply
    write_tree(here, {"cyc/cycle-delta.json": pretty(delta)})
    code, report = run_json("check", "--all", "--root", ".")
    assert [(f["rule"], f["pointer"]) for f in report["findings"]] == [
        ("CX126", "/operations/0/value")
    ]


@pytest.mark.parametrize("value", [None, "loopx", "rfc6902"])
def test_delta_ops_in_diff_and_apply(
    here: Path, capsys: pytest.CaptureFixture[str], value: str | None
) -> None:
    if value is not None:
        configure(here, **{"delta-ops": value})
    (here / "base.json").write_text(pretty(BASE))
    (here / "current.json").write_text(pretty(CURRENT))
    code, out = capture(capsys, here, "diff", "base.json", "current.json", "-o", "d.json")
    assert code == 0
    ops = {op["op"] for op in json.loads((here / "d.json").read_text())["operations"]}
    assert ops <= set(cycle_delta.VOCABULARIES[value or "loopx"])
    assert ("reorder" in ops) is (value != "rfc6902")
    code, out = capture(capsys, here, "apply", "base.json", "d.json", "-o", "restored.json")
    assert code == 0
    assert (here / "restored.json").read_bytes() == model.canonical_bytes(CURRENT)
    if value != "rfc6902":  # a reorder and a ref are not RFC 6902: refused, nothing written
        configure(here, **{"delta-ops": "rfc6902"})
        code, out = capture(capsys, here, "apply", "base.json", "d.json", "-o", "again.json")
        assert (code, out["error_code"], (here / "again.json").exists()) == (
            1,
            "DELTA_INVALID",
            False,
        )


json_scalars = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=6)
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=4), children, max_size=5)
    ),
    max_leaves=30,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_values, json_values)
def test_property_rfc6902_diff_restores_any_pair(a: object, b: object) -> None:
    operations = cycle_delta.diff(a, b, "rfc6902")
    assert {op["op"] for op in operations} <= set(cycle_delta.VOCABULARIES["rfc6902"])
    restored = cycle_delta.apply_delta(a, operations, "rfc6902")
    assert model.canonical_bytes(restored) == model.canonical_bytes(b)


# --- configuration errors ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "key", ["list-size", "list-depth-origin", "duplicate-pointers", "delta-ops"]
)
def test_a_bad_value_is_refused(here: Path, capsys: pytest.CaptureFixture[str], key: str) -> None:
    configure(here, **{key: "maybe"})
    assert main(["check", "--all", "--root", "."]) == 2
    path, digest = write_capture(here, PROVIDERS)
    code, out = capture(capsys, here, "read", "--capture-file", path, "--capture-sha256", digest,
                        "--select", "/providers")  # fmt: skip
    assert (code, out["error_code"]) == (1, "CONFIG_INVALID")
    assert key in out["error"]
