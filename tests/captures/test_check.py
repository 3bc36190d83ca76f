"""Every CX1xx rule: a fixture it catches (file and pointer) and near-misses it passes, through
the real CLI on a real directory."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from continuity_checks.checks import all_rules
from continuity_checks.checks.captures import model
from tests.conftest import EXAMPLES, RunCLI, write_tree
from tests.helpers.captures import (
    CAP,
    DEC,
    build,
    capture_value,
    edit,
    pretty,
    reader,
    required_value,
    sha,
)

Files = dict[str, str]


def findings_of(report: dict[str, Any]) -> list[tuple[str, str, str | None]]:
    return [(f["rule"], f["path"], f["pointer"]) for f in report["findings"]]


def changed(path: str, change: Callable[[str], str], **parts: Any) -> Files:
    files = build(**parts)
    files[path] = change(files[path])
    return files


def with_json(path: str, change: Callable[[Any], None], **parts: Any) -> Files:
    """The layout with the JSON file at ``path`` changed (and re-serialised) after the digests
    were taken."""

    def apply(text: str) -> str:
        value = json.loads(text)
        change(value)
        return pretty(value)

    return changed(path, apply, **parts)


def setter(pointer: str, value: Any) -> Callable[[Any], None]:
    def change(doc: Any) -> None:
        parts = pointer.split("/")[1:]
        node = doc
        for part in parts[:-1]:
            node = node[int(part)] if isinstance(node, list) else node[part]
        if isinstance(node, list):
            node[int(parts[-1])] = value
        else:
            node[parts[-1]] = value

    return change


def deleter(key: str) -> Callable[[Any], None]:
    return lambda doc: doc.pop(key)


def required_with(change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    value = required_value()
    change(value)
    return value


def capture_with(change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    value = capture_value()
    change(value)
    return value


def _stub_forward(v: dict[str, Any]) -> None:
    v["user_todos"]["open"][0]["context_ref"] = "/later/0"
    v["later"] = [{"todo_id": "todo_voice", "title": "later"}]


def _requirement_added(v: dict[str, Any]) -> None:
    outcome = v["outcomes"][0]
    outcome["requirements"].append({"id": "r2", "description": "Replies keep the thread."})
    outcome["requirements"][1]["agent_review"]["basis_current"] = False  # the basis moved on


def _stub_at_copy(v: dict[str, Any]) -> None:
    items = v["agent_todo_summary"]["first_open_items"]
    items.append(dict(items[0]))
    v["user_todos"]["open"][0]["context_ref"] = "/agent_todo_summary/first_open_items/1"


def _stub_chain(v: dict[str, Any]) -> None:
    v["user_todos"]["again"] = [{"todo_id": "todo_voice", "context_ref": "/user_todos/open/0"}]


def _no_basis(v: dict[str, Any]) -> None:
    del v["outcomes"][0]["requirements"][1]["agent_review"]["basis_digest"]


M = CAP + "manifest.json"
C = CAP + "capture.json"
R = CAP + "first.reader.json"
DM = DEC + "manifest.json"
D = DEC + "delivery.json"
P = DEC + "projection.json"
RC = DEC + "required-context.json"
CD = DEC + "cycle-delta.json"
CB = DEC + "cycle-base.json"
REQ = "/outcomes/0/requirements/1/agent_review"


def _delta_renamed(text: str) -> Files:
    """The decision directory with its cycle delta replaced by ``text`` under another name,
    which the delivery names and pins."""
    files = build()
    del files[CD]
    files[DEC + "d.json"] = text
    delivery = json.loads(files[D])
    delivery["delta"] = {"file": "d.json", "sha256": sha(text)}
    files[D] = pretty(delivery)
    return files


def _capture_renamed(name: str) -> Files:
    """The capture directory (no reader) with its capture moved to ``name`` and the manifest
    naming it there: the digests still match."""
    files = {k: v for k, v in build().items() if k.startswith(CAP) and k != R}
    files[CAP + name] = files.pop(C)
    files[M] = edit(files[M], '"capture_file": "capture.json"', f'"capture_file": "{name}"')
    return files


# (case id, files, expected (rule, path, pointer) findings — exactly these)
BAD: list[tuple[str, Files, list[tuple[str, str, str | None]]]] = [
    ("CX101 unknown key", with_json(M, setter("/extra", 1)), [("CX101", M, "")]),
    ("CX101 uppercase digest", changed(M, lambda t: t.replace(sha(build()[C]), sha(build()[C]).upper())),
     [("CX101", M, "/capture_sha256")]),
    ("CX101 a capture under a name nothing guards", _capture_renamed("data.json"), [("CX101", M, "/capture_file")]),
    ("CX101 a capture in a subdirectory", _capture_renamed("sub/capture.json"), [("CX101", M, "/capture_file")]),
    ("CX101 projection.json outside a decision directory", _capture_renamed("projection.json"),
     [("CX101", M, "/capture_file")]),
    ("CX102 dot-dot", with_json(M, setter("/capture_file", "../c1/capture.json")), [("CX102", M, "/capture_file")]),
    ("CX102 absolute", with_json(R, setter("/capture_file", "/etc/passwd")),
     [("CX110", R, "/capture_file"), ("CX102", R, "/capture_file")]),
    ("CX103 capture gone", {k: v for k, v in build().items() if k not in (C, R)}, [("CX103", M, "/capture_file")]),
    ("CX104 one changed byte in the capture", changed(C, lambda t: edit(t, "turn 3", "turn 4")),
     [("CX104", M, "/capture_sha256"), ("CX111", R, "/capture_sha256")]),
    ("CX104 one changed byte in the manifest digest",
     changed(M, lambda t: edit(t, '"capture_sha256": "' + sha(build()[C])[:1], '"capture_sha256": "' + ("0" if sha(build()[C])[0] != "0" else "1"))),
     [("CX104", M, "/capture_sha256")]),
    ("CX104 pinned file", changed(RC, lambda t: edit(t, '"complete": true', '"complete": false')),
     [("CX104", DM, "/files/required-context.json/sha256"), ("CX121", D, "/required_context_sha256")]),
    ("CX105 size", with_json(M, setter("/capture_bytes", 12)), [("CX105", M, "/capture_bytes")]),
    ("CX105 size written as 12.0", with_json(M, setter("/capture_bytes", 12.0)), [("CX105", M, "/capture_bytes")]),
    ("CX110 empty select", with_json(R, setter("/select", [])), [("CX110", R, "/select")]),
    ("CX111 one changed byte in the reader pin",
     changed(R, lambda t: edit(t, '"sha256:' + sha(build()[C])[:2], '"sha256:' + ("00" if sha(build()[C])[:2] != "00" else "11"))),
     [("CX111", R, "/capture_sha256")]),
    ("CX112 missing pointer", {**build(), CAP + "two.reader.json": pretty(reader(build()[C], ["/goal_id", "/nope/0"]))},
     [("CX112", CAP + "two.reader.json", "/select/1")]),
    ("CX112 leading zero", {**build(), CAP + "two.reader.json": pretty(reader(build()[C], ["/history/01"]))},
     [("CX112", CAP + "two.reader.json", "/select/0")]),
    ("CX112 a capture that is not JSON along the pointers",
     {"raw/capture.json": '{"goal_id": [1, 2}', "raw/x.reader.json": pretty(reader('{"goal_id": [1, 2}', ["/goal_id"]))},
     [("CX112", "raw/x.reader.json", "/select")]),
    ("CX113 selection digest", with_json(R, setter("/selection_sha256", "0" * 64)), [("CX113", R, "/selection_sha256")]),
    ("CX114 command pointers", with_json(R, setter("/command", "continuity capture read --capture-file capture.json "
                                                   f"--capture-sha256 {sha(build()[C])} --select /goal_id")),
     [("CX114", R, "/command")]),
    ("CX114 a listing command for a reference that is no listing",
     changed(R, lambda t: edit(t, '--select /history/2/null"', '--select /history/2/null --list --list-depth 2"')),
     [("CX114", R, "/command")]),
    ("CX115 duplicate pointer (warning)",
     {**build(), CAP + "two.reader.json": pretty(reader(build()[C], ["/goal_id", "/goal_id"]))},
     [("CX115", CAP + "two.reader.json", "/select/1")]),
    ("CX120 mode", with_json(D, setter("/mode", "partial")), [("CX120", D, "/mode")]),
    ("CX120 delta without base", with_json(D, deleter("base")), [("CX120", D, "")]),
    ("CX120 a delta delivery naming a delta file nothing checks", _delta_renamed("not json"),
     [("CX120", D, "/delta/file")]),
    ("CX121 one changed byte in a delivery digest",
     with_json(D, setter("/projection_sha256", "f" * 64)), [("CX121", D, "/projection_sha256")]),
    ("CX122 delta restores another projection", changed(P, lambda t: edit(t, '"g-1"', '"g-2"')),
     [("CX104", DM, "/capture_sha256"), ("CX121", D, "/projection_sha256")]),
    ("CX122 target digest", with_json(CD, setter("/target_sha256", "a" * 64)),
     [("CX121", D, "/delta/sha256"), ("CX122", CD, "/target_sha256")]),
    ("CX123 full with base", with_json(D, setter("/mode", "full")), [("CX123", D, "/base"), ("CX123", D, "/delta")]),
    ("CX124 unknown op", with_json(CD, setter("/operations/0", {"op": "copy", "path": "/a", "from": "/b"})),
     [("CX121", D, "/delta/sha256"), ("CX124", CD, "/operations/0")]),
    ("CX125 base digest", changed(CB, lambda t: edit(t, '"g-0"', '"g-9"')),
     [("CX121", D, "/base/sha256"), ("CX125", CD, "/base_sha256")]),
    ("CX126 reorder not a permutation", with_json(CD, setter("/operations/3/order", [0, 0])),
     [("CX121", D, "/delta/sha256"), ("CX126", CD, "/operations/3/order")]),
    ("CX126 missing parent", with_json(CD, setter("/operations/0/path", "/nope/goal_id")),
     [("CX121", D, "/delta/sha256"), ("CX126", CD, "/operations/0/path")]),
    ("CX130 stub with extra key",
     build(required=required_with(lambda v: v["user_todos"]["open"][0].update(title="x"))),
     [("CX130", RC, "/user_todos/open/0")]),
    ("CX130 a stub behind a \\u escape is still seen",
     changed(RC, lambda t: edit(t, '"context_ref"', '"title": "x", "context\\u005fref"')),
     [("CX104", DM, "/files/required-context.json/sha256"), ("CX121", D, "/required_context_sha256"),
      ("CX130", RC, "/user_todos/open/0")]),
    ("CX131 stub unresolved",
     build(required=required_with(lambda v: v["user_todos"]["open"][0].update(context_ref="/agent_todo_summary/x"))),
     [("CX131", RC, "/user_todos/open/0/context_ref")]),
    ("CX132 stub forward", build(required=required_with(_stub_forward)), [("CX132", RC, "/user_todos/open/0/context_ref")]),
    ("CX132 stub at a later copy of the record", build(required=required_with(_stub_at_copy)),
     [("CX132", RC, "/user_todos/open/0/context_ref")]),
    ("CX133 stub chain", build(required=required_with(_stub_chain)), [("CX133", RC, "/user_todos/again/0/context_ref")]),
    ("CX134 stub todo_id", build(required=required_with(lambda v: v["user_todos"]["open"][0].update(todo_id="t2"))),
     [("CX134", RC, "/user_todos/open/0/context_ref")]),
    ("CX140 status", build(required=required_with(lambda v: v["requirements"][0].update(status="done"))),
     [("CX140", RC, "/requirements/0/status")]),
    ("CX140 a review that misses a requirement",
     build(capture=capture_with(lambda v: v["outcomes"][0]["review"]["items"].pop())),
     [("CX140", C, "/outcomes/0/review/items")]),
    ("CX140 a requirement reviewed twice",
     build(capture=capture_with(lambda v: v["outcomes"][0]["review"]["items"].append(
         dict(v["outcomes"][0]["review"]["items"][0])))),
     [("CX140", C, "/outcomes/0/review/items/2/id")]),
    ("CX140 a review item of no requirement",
     build(capture=capture_with(lambda v: v["outcomes"][0]["review"]["items"].append(
         {"id": "r9", "conclusion": "unmet", "evidence_refs": []}))),
     [("CX140", C, "/outcomes/0/review/items/2/id")]),
    ("CX140 a requirement id twice in an outcome",
     build(capture=capture_with(lambda v: v["outcomes"][0]["requirements"].append(
         {"id": "r0", "description": "Another fact under the same id."}))),
     [("CX140", C, "/outcomes/0/requirements/2/id"), ("CX143", C, REQ + "/basis_digest")]),
    ("CX141 met without evidence",
     build(capture=capture_with(lambda v: v["outcomes"][0]["requirements"][1]["agent_review"].update(evidence_refs=[]))),
     [("CX141", C, REQ + "/evidence_refs")]),
    ("CX141 stored review item",
     build(capture=capture_with(lambda v: v["outcomes"][0]["review"]["items"][1].update(evidence_refs=[]))),
     [("CX141", C, "/outcomes/0/review/items/1/evidence_refs")]),
    ("CX142 self verified",
     build(required=required_with(lambda v: v["requirements"][0]["agent_review"].update(independently_verified=True))),
     [("CX142", RC, "/requirements/0/agent_review/independently_verified")]),
    ("CX143 stale basis",
     build(capture=capture_with(lambda v: v["outcomes"][0].update(objective="Voice and text replies"))),
     [("CX143", C, REQ + "/basis_digest")]),
    ("CX143 no basis digest", build(capture=capture_with(_no_basis)), [("CX143", C, REQ + "/basis_current")]),
    ("CX144 support pointer missing",
     build(required=required_with(lambda v: v["requirements"][0].update(supporting_material_pointer="/outcomes/3"))),
     [("CX144", RC, "/requirements/0/supporting_material_pointer")]),
    ("CX150 no delivery", {k: v for k, v in build().items() if k != D}, [("CX150", P, None)]),
    ("CC005 duplicate key in the capture", changed(C, lambda t: edit(t, '"goal_id": "g-1",', '"goal_id": "g-1", "goal_id": "g-1",')),
     [("CC005", C, "/goal_id"), ("CX104", M, "/capture_sha256"), ("CX111", R, "/capture_sha256")]),
]  # fmt: skip

GOOD: list[tuple[str, Files]] = [
    ("the layout", build()),
    ("null selected, bare pin", with_json(R, setter("/capture_sha256", sha(build()[C])))),
    ("full delivery without base", with_json(D, lambda v: [v.pop("base"), v.pop("delta"), v.update(mode="full")])),
    ("a manifest.json that names no capture is not ours", {"web/manifest.json": '{"name": "app"}\n', "x/manifest.json": "{"}),
    ("OpenProgram's file_backups manifest is not ours",
     {"s/file_backups/t1/manifest.json": '{"backed_at": 1, "files": {}}\n', "s/file_backups/t1/capture.json": "{"}),
    ("a capture.json without a manifest is not ours", {"other/capture.json": "{not json"}),
    ("same title, other facts stay inline",
     build(required=required_with(lambda v: v["agent_todo_summary"]["first_open_items"].append({"todo_id": "todo_voice", "title": "v2"})))),
    ("ids of several outcomes gathered in one view may repeat",
     build(required=required_with(lambda v: v["requirements"].extend(
         [{**v["requirements"][0], "id": "r0"}, {**v["requirements"][0], "id": "r0"}])))),
    ("a stale review need not cover a requirement added after it",
     build(capture=capture_with(_requirement_added))),
    ("a capture named ./capture.json", _capture_renamed("./capture.json")),
    ("the reader's command in LoopX's own form",
     changed(R, lambda t: edit(t, "continuity capture read", "loopx --format json quota context-read"))),
    ("a command written with --option=value words, the last one too",
     changed(R, lambda t: edit(edit(edit(t, "--capture-file capture.json", "--capture-file=capture.json"),
                                    "--select /outcomes", "--select=/outcomes"), "--select /history", "--select=/history"))),
    ("met with supporting material instead of evidence",
     build(required=required_with(lambda v: v["requirements"][0].update(
         agent_review={"conclusion": "met", "basis_current": False, "independently_verified": False})))),
]  # fmt: skip


@pytest.mark.parametrize(("files", "expected"), [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_bad_fixture_is_caught(
    tmp_path: Path, run_json: RunCLI, files: Files, expected: list[tuple[str, str, str | None]]
) -> None:
    write_tree(tmp_path, files)
    code, report = run_json("check", "--all", "--root", str(tmp_path))
    assert sorted(findings_of(report)) == sorted(expected)
    severities = {f["severity"] for f in report["findings"]}
    assert code == (1 if "error" in severities else 0)
    for finding in report["findings"]:
        if finding["pointer"] is not None and finding["rule"].startswith("CX"):
            assert finding["line"] is not None  # located in the file it names


@pytest.mark.parametrize("files", [c[1] for c in GOOD], ids=[c[0] for c in GOOD])
def test_good_fixture_passes(tmp_path: Path, run_json: RunCLI, files: Files) -> None:
    write_tree(tmp_path, files)
    code, report = run_json("check", "--all", "--root", str(tmp_path))
    assert (code, report["findings"]) == (0, [])


def test_other_families_stores_are_theirs(tmp_path: Path, run_json: RunCLI) -> None:
    """A capture-like name inside .deltalayer/ or .dsh/ is the deltas or working-state family's
    file, reported by that family only."""
    files = {
        ".deltalayer/changes/manifest.json": "{",
        "x/.deltalayer/capture.json": "{",
        ".dsh/project/manifest.json": "{",
    }
    write_tree(tmp_path, files)
    code, report = run_json("check", "--all", "--root", str(tmp_path), "--family", "captures")
    assert (code, report["findings"], report["summary"]["files"]) == (0, [], 0)
    _, report = run_json("check", "--all", "--root", str(tmp_path))
    assert not [f for f in report["findings"] if f["rule"].startswith("CX")]
    reported = {f["path"] for f in report["findings"]}
    assert {".deltalayer/changes/manifest.json", ".dsh/project/manifest.json"} <= reported


def test_every_file_rule_has_a_bad_fixture() -> None:
    caught = {rule for _, _, expected in BAD for rule, _, _ in expected}
    file_rules = {r.id for r in all_rules() if r.id.startswith("CX1")}
    assert file_rules - caught == set()


def test_changed_capture_alone_is_held_against_its_neighbours(
    tmp_path: Path, run_json: RunCLI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pre-commit passes only the changed capture: the manifest and readers beside it that
    pin it are checked too, and reported at their own paths."""
    write_tree(tmp_path, changed(C, lambda t: edit(t, "turn 3", "turn 4")))
    monkeypatch.chdir(tmp_path)
    code, report = run_json("check", C)
    assert code == 1
    assert sorted(findings_of(report)) == [
        ("CX104", M, "/capture_sha256"),
        ("CX111", R, "/capture_sha256"),
    ]


def test_canonical_digest_option(tmp_path: Path, run_json: RunCLI) -> None:
    files = {k: v for k, v in build().items() if k.startswith(CAP)}
    value = json.loads(files[C])
    manifest = json.loads(files[M])
    manifest["capture_sha256"] = model.canonical_sha256(value)
    files[M] = pretty(manifest)
    files[R] = pretty(
        {**json.loads(files[R]), "capture_sha256": model.canonical_sha256(value)}
        | {"selection_sha256": model.selection_h1(model.canonical_sha256(value), json.loads(files[R])["select"], None)}
    )  # fmt: skip
    files[R] = pretty({k: v for k, v in json.loads(files[R]).items() if k != "command"})
    write_tree(tmp_path, files)
    _, report = run_json("check", "--all", "--root", str(tmp_path))
    assert ("CX104", M, "/capture_sha256") in findings_of(report)  # raw bytes by default
    (tmp_path / ".continuity.toml").write_text('[captures]\ncapture-digest = "canonical"\n')
    code, report = run_json("check", "--all", "--root", str(tmp_path))
    assert (code, findings_of(report)) == (0, [])


@pytest.mark.parametrize(
    ("hypothesis", "caught"), [("H1", True), ("H2", False), ("shape", False)]
)  # fmt: skip
def test_selection_digest_hypotheses(
    tmp_path: Path, run_json: RunCLI, hypothesis: str, caught: bool
) -> None:
    files = build()
    record = json.loads(files[R])
    document = json.loads(files[C])
    selected = model.results(document, record["select"])
    assert isinstance(selected[0], dict)
    record["selection_sha256"] = model.selection_h2(selected)  # type: ignore[arg-type]
    files[R] = pretty(record)
    write_tree(tmp_path, files)
    (tmp_path / ".continuity.toml").write_text(f'[captures]\nselection-digest = "{hypothesis}"\n')
    _, report = run_json("check", "--all", "--root", str(tmp_path))
    assert (findings_of(report) == [("CX113", R, "/selection_sha256")]) is caught
    assert caught or report["findings"] == []


def test_selection_digest_consistent_across_readers(tmp_path: Path, run_json: RunCLI) -> None:
    files = build()
    record = json.loads(files[R])
    record["selection_sha256"] = "b" * 64
    files[CAP + "second.reader.json"] = pretty({k: v for k, v in record.items()})
    write_tree(tmp_path, files)
    (tmp_path / ".continuity.toml").write_text('[captures]\nselection-digest = "shape"\n')
    _, report = run_json("check", "--all", "--root", str(tmp_path))
    assert findings_of(report) == [("CX113", CAP + "second.reader.json", "/selection_sha256")]
    line = (
        files[CAP + "second.reader.json"].splitlines().index(f'  "selection_sha256": "{"b" * 64}",')
    )
    assert (report["findings"][0]["line"], report["findings"][0]["column"]) == (line + 1, 23)


def test_relaxed_context_refs(tmp_path: Path, run_json: RunCLI) -> None:
    write_tree(tmp_path, build(required=required_with(_stub_chain)))
    (tmp_path / ".continuity.toml").write_text('[captures]\ncontext-ref = "relaxed"\n')
    code, report = run_json("check", "--all", "--root", str(tmp_path))
    assert (code, report["findings"]) == (0, [])


def test_roots_option_limits_what_is_claimed(tmp_path: Path, run_json: RunCLI) -> None:
    write_tree(tmp_path, changed(C, lambda t: edit(t, "turn 3", "turn 4")))
    (tmp_path / ".continuity.toml").write_text('[captures]\nroots = ["elsewhere/**"]\n')
    code, report = run_json("check", "--all", "--root", str(tmp_path))
    assert (code, report["findings"], report["summary"]["files"]) == (0, [], 0)


def test_bad_option_is_a_configuration_error(tmp_path: Path, run_json: RunCLI) -> None:
    (tmp_path / ".continuity.toml").write_text('[captures]\ncapture-digest = "md5"\n')
    from continuity_checks.cli import main

    assert main(["check", "--all", "--root", str(tmp_path)]) == 2


def test_symlinked_capture_leading_outside_is_never_read(tmp_path: Path, run_json: RunCLI) -> None:
    outside = tmp_path / "secret.json"
    outside.write_text('{"secret": 1}\n')
    root = tmp_path / "repo"
    files = build()
    write_tree(root, {k: v for k, v in files.items() if k != C})
    (root / C).symlink_to(outside)
    code, report = run_json("check", "--all", "--root", str(root))
    assert code == 1
    rules = {(f["rule"], f["path"]) for f in report["findings"]}
    assert ("CC001", M) in rules or ("CC001", C) in rules
    assert not any("secret" in f["message"] for f in report["findings"])


def test_examples_are_clean(run_json: RunCLI) -> None:
    code, report = run_json("check", "--all", "--root", str(EXAMPLES / "captures"))
    assert (code, report["findings"]) == (0, [])
    assert report["summary"]["files"] >= 8


def _schema_records() -> list[tuple[str, object]]:
    """Every manifest, reader, delivery and cycle delta of the fixtures and examples, with its
    schema, and every requirement record of the necessary views."""
    by_name = {"manifest.json": "loopx-capture-manifest", "delivery.json": "loopx-delivery",
               "cycle-delta.json": "loopx-cycle-delta"}  # fmt: skip
    texts = [(k, v) for _, files, *_ in [*BAD, *GOOD] for k, v in files.items()]
    texts += [(str(p), p.read_text("utf-8")) for p in (EXAMPLES / "captures").rglob("*.json")]
    found: list[tuple[str, object]] = []
    for path, text in texts:
        name = path.rsplit("/", 1)[-1]
        schema = "loopx-capture-reader" if name.endswith(".reader.json") else by_name.get(name)
        try:
            value = json.loads(text)
        except ValueError:
            continue
        if schema is not None:
            found.append((schema, value))
        elif name == "required-context.json" and isinstance(value, dict):
            found += [("loopx-requirement", r) for r in value.get("requirements", [])]
    return found


@pytest.mark.parametrize(("name", "instance"), _schema_records())
def test_both_schema_engines_agree(name: str, instance: object) -> None:
    import jsonschema

    from continuity_checks.core import schemas

    oracle = jsonschema.Draft202012Validator(
        schemas.load(name), format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    expected = {"".join(f"/{p}" for p in e.absolute_path) for e in oracle.iter_errors(instance)}
    assert {e.pointer for e in schemas.validator(name).errors(instance)} == expected


def _check(root: Path) -> list[tuple[str, str, str | None]]:
    from continuity_checks import engine
    from continuity_checks.core.config import Config

    report = engine.check(root, Config(), under=("",), only=("captures",))
    return [(f.rule, f.path, f.pointer) for f in report.findings if f.severity.value == "error"]


def _flip(text: str, index: int) -> str:
    """``text`` with the character at ``index`` replaced by another of the same kind (a hex
    digit by another hex digit), so that only that one byte changes."""
    old = text[index]
    new = {"0": "1"}.get(old, "0") if old in "0123456789abcdef" else ("x" if old != "x" else "y")
    return text[:index] + new + text[index + 1 :]


def test_one_changed_byte_is_caught_everywhere_it_matters(tmp_path: Path) -> None:
    """Every byte of the capture, every hex digit of every pinned digest, and every byte of
    the shared record in the necessary view: each change alone is an error naming the file that
    pins it (with the pointer of the pin)."""
    files = build()
    capture_digest = sha(files[C])
    cases: list[tuple[str, int, tuple[str, str, str]]] = []
    step = max(1, len(files[C]) // 60)
    cases += [(C, i, ("CX104", M, "/capture_sha256")) for i in range(0, len(files[C]), step)]
    start = files[M].index(capture_digest)
    cases += [(M, start + i, ("CX104", M, "/capture_sha256")) for i in range(64)]
    start = files[R].index(capture_digest)
    cases += [(R, start + i, ("CX111", R, "/capture_sha256")) for i in range(64)]
    start = files[D].index(sha(files[P]))
    cases += [(D, start + i, ("CX121", D, "/projection_sha256")) for i in range(64)]
    shared_at = files[RC].index('"first_open_items"')
    shared_end = files[RC].index("]", shared_at)
    cases += [
        (RC, i, ("CX121", D, "/required_context_sha256")) for i in range(shared_at, shared_end, 7)
    ]
    caught = 0
    for path, index, expected in cases:
        root = tmp_path / f"m{caught}"
        write_tree(root, {**files, path: _flip(files[path], index)})
        assert expected in _check(root), (path, index)
        caught += 1
    assert caught == len(cases) > 250


@pytest.mark.parametrize(
    ("target", "where"),
    [("../c2/capture.json", "caps/c2/capture.json"), ("../../stash/capture.json", "stash/capture.json")],
)  # fmt: skip
def test_a_capture_symlinked_out_of_its_directory_is_cx102(
    tmp_path: Path, run_json: RunCLI, target: str, where: str
) -> None:
    """The target's bytes differ from what the manifest and reader pin (a duplicate key): were
    it hashed, CX104 and CX111 would follow, and were capture.json judged, CC005. The only
    findings are CX102 at the names: it was never hashed, followed or judged."""
    files = {k: v for k, v in build().items() if k.startswith(CAP)}
    write_tree(tmp_path, {**{k: v for k, v in files.items() if k != C}, where: files[C]})
    (tmp_path / C).symlink_to(target)
    (tmp_path / where).write_text(
        files[C].replace('"goal_id": "g-1",', '"goal_id": "g-1", "goal_id": "g-1",')
    )
    code, report = run_json("check", "--all", "--root", str(tmp_path))
    assert (code, sorted(findings_of(report))) == (
        1,
        [("CX102", R, "/capture_file"), ("CX102", M, "/capture_file")],
    )
    assert all(where in f["message"] for f in report["findings"])


def test_a_cycle_base_symlinked_out_of_its_directory_is_cx102(
    tmp_path: Path, run_json: RunCLI
) -> None:
    files = build()
    write_tree(
        tmp_path, {**{k: v for k, v in files.items() if k != CB}, "elsewhere/b.json": files[CB]}
    )
    (tmp_path / CB).symlink_to("../../elsewhere/b.json")
    _, report = run_json("check", "--all", "--root", str(tmp_path))
    found = findings_of(report)
    assert ("CX102", CD, "/base_sha256") in found
    assert {rule for rule, _, _ in found} == {"CX102"}


def test_a_capture_symlinked_inside_its_directory_passes(tmp_path: Path, run_json: RunCLI) -> None:
    files = build()
    write_tree(
        tmp_path, {**{k: v for k, v in files.items() if k != C}, CAP + "capture-v1.json": files[C]}
    )
    (tmp_path / C).symlink_to("capture-v1.json")
    code, report = run_json("check", "--all", "--root", str(tmp_path))
    assert (code, report["findings"]) == (0, [])


def test_the_commit_hook_does_not_import_the_check_modules() -> None:
    """Building the family and asking it to claim paths (what the commit hook does for every
    staged path) imports none of the check modules; a check imports them when it runs."""
    script = """
import sys
from continuity_checks.checks.captures.family import CapturesFamily
from continuity_checks.core.config import Config
family = CapturesFamily(Config())
assert family.claims("caps/c1/manifest.json") == "manifest"
assert family.claims("caps/decision-x/delivery.json") == "delivery"
heavy = [
    "checker", "manifest", "documents", "requirements", "reader", "delivery", "model", "history",
    "rules",
]
import importlib.util
assert all(importlib.util.find_spec("continuity_checks.checks.captures." + m) for m in heavy)
print(sorted(m for m in heavy if "continuity_checks.checks.captures." + m in sys.modules))
print(sorted(m for m in sys.modules if m.startswith("continuity_checks.tools")))
"""
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert result.stdout.split("\n")[:2] == ["[]", "[]"]


@pytest.mark.parametrize("name", [".", "./", "./."])
def test_a_name_of_the_directory_itself_is_said_so(
    tmp_path: Path, run_json: RunCLI, name: str
) -> None:
    """capture_file "." named the directory: CX102 said "found a symlink to caps/c1"."""
    write_tree(tmp_path, with_json(M, setter("/capture_file", name)))
    code, report = run_json("check", "--all", "--root", str(tmp_path))
    assert (code, findings_of(report)) == (1, [("CX102", M, "/capture_file")])
    assert "found the directory itself" in report["findings"][0]["message"]
