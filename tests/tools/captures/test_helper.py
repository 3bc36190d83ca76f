"""``continuity capture``: manifests, verified paged reads, listings, cycle deltas — through the
real CLI, on real files."""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from continuity_checks.checks.captures import cycle_delta, model
from continuity_checks.cli import main
from continuity_checks.core import pointer as jp
from continuity_checks.tools.captures.read import PAGE_BYTES, STDOUT_BYTES
from tests.helpers.captures import capture_value, pretty


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any, bytes]:
    """Run ``continuity capture ...``; exit code, parsed stdout, raw stdout bytes."""
    capsys.readouterr()
    code = main(["capture", *args])
    out = capsys.readouterr().out
    raw = out.encode("utf-8")
    return code, (json.loads(out) if out.strip() else None), raw


def write_capture(directory: Path, value: object) -> tuple[Path, str]:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "capture.json"
    path.write_text(pretty(value), encoding="utf-8")
    return path, hashlib.sha256(path.read_bytes()).hexdigest()


# --- manifest --------------------------------------------------------------------------------


def test_manifest_is_written_once_and_never_over_another_pin(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, digest = write_capture(tmp_path / "c", capture_value())
    code, out, _ = run(capsys, "manifest", str(tmp_path / "c"))
    assert (code, out["written"], out["capture_sha256"]) == (0, True, digest)
    manifest = json.loads((tmp_path / "c" / "manifest.json").read_text())
    assert manifest == {
        "schema_version": 1,
        "capture_file": "capture.json",
        "capture_sha256": digest,
        "capture_bytes": path.stat().st_size,
    }
    code, out, _ = run(capsys, "manifest", str(tmp_path / "c"))
    assert (code, out["written"]) == (0, False)  # the same pin: nothing to do
    before = (tmp_path / "c" / "manifest.json").read_bytes()
    path.write_text(pretty({"other": 1}))
    code, out, _ = run(capsys, "manifest", str(tmp_path / "c"))
    assert (code, out["ok"], out["error_code"]) == (1, False, "MANIFEST_CONFLICT")
    assert (tmp_path / "c" / "manifest.json").read_bytes() == before


def test_manifest_refuses_a_capture_that_is_not_strict_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "capture.json").write_text('{"a": 1, "a": 2}\n')
    code, out, _ = run(capsys, "manifest", str(tmp_path / "c"))
    assert (code, out["error_code"]) == (1, "CAPTURE_UNREADABLE")
    assert not (tmp_path / "c" / "manifest.json").exists()


def test_verify_reports_findings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, _ = write_capture(tmp_path / "c", capture_value())
    assert run(capsys, "manifest", str(tmp_path / "c"))[0] == 0
    code, out, _ = run(capsys, "verify", str(tmp_path))
    assert (code, out["ok"], out["findings"]) == (0, True, [])
    path.write_text(path.read_text().replace("turn 1", "turn 9"))
    code, out, _ = run(capsys, "verify", str(tmp_path))
    assert (code, out["ok"]) == (1, False)
    assert [(f["rule"], f["path"]) for f in out["findings"]] == [("CX104", "c/manifest.json")]
    (tmp_path / ".continuity.toml").write_text('[rules]\nCX104 = "warning"\n')
    code, out, _ = run(capsys, "verify", str(tmp_path))  # the directory's configuration applies
    assert (code, out["ok"], out["warnings"]) == (0, True, 1)
    (tmp_path / ".continuity.toml").write_text('[captures]\ncapture-digest = "md5"\n')
    code, out, _ = run(capsys, "verify", str(tmp_path))
    assert (code, out["error_code"]) == (1, "CONFIG_INVALID")


# --- read ------------------------------------------------------------------------------------


def test_read_checks_the_digest_first_and_returns_nothing_on_mismatch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, digest = write_capture(tmp_path, {"secret": "s3cr3t"})
    wrong = ("0" if digest[0] != "0" else "1") + digest[1:]
    code, out, raw = run(capsys, "read", "--capture-file", str(path), "--capture-sha256", wrong,
                         "--select", "/secret")  # fmt: skip
    assert (code, out["ok"], out["error_code"]) == (1, False, "DIGEST_MISMATCH")
    assert b"s3cr3t" not in raw and "results" not in out


def test_read_results_in_request_order_null_present_missing_rejects_batch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, digest = write_capture(tmp_path, {"a": {"b~/c": [1, None]}, "z": None})
    base = ["read", "--capture-file", str(path), "--capture-sha256", "sha256:" + digest]
    code, out, _ = run(capsys, *base, "--select", "/z", "--select", "/a/b~0~1c/1", "--select", "")
    assert code == 0
    assert out["results"] == [
        {"pointer": "/z", "value": None},
        {"pointer": "/a/b~0~1c/1", "value": None},
        {"pointer": "", "value": {"a": {"b~/c": [1, None]}, "z": None}},
    ]
    assert out["mode"] == "context-read" and out["capture_sha256"] == digest
    assert out["selection_sha256"] == model.selection_h1(digest, ["/z", "/a/b~0~1c/1", ""], None)
    code, out, _ = run(capsys, *base, "--select", "/z", "--select", "/a/b~0~1c/2",
                       "--select", "/a/b~0~1c/01", "--select", "/a/b~0~1c/-")  # fmt: skip
    assert (code, out["error_code"]) == (1, "POINTER_MISSING")
    assert out["pointers"] == ["/a/b~0~1c/2", "/a/b~0~1c/01", "/a/b~0~1c/-"]
    assert "results" not in out
    code, out, _ = run(capsys, *base, "--select", "a")
    assert (code, out["error_code"], out["pointers"]) == (1, "POINTER_INVALID", ["a"])


def _read_all(capsys: pytest.CaptureFixture[str], args: list[str]) -> tuple[str, int, list[int]]:
    """Follow next_command to the end: the concatenated content, the number of pages, and the
    size of every stdout."""
    pages: list[str] = []
    sizes: list[int] = []
    cursor = 0
    while True:
        code, out, raw = run(capsys, *args)
        assert code == 0 and out["ok"], out
        sizes.append(len(raw))
        page = out["page"]
        assert page["cursor"] == cursor  # contiguous
        assert len(page["content"].encode("utf-8")) == page["bytes"] <= PAGE_BYTES
        pages.append(page["content"])
        cursor += page["bytes"]
        if page["complete"]:
            assert out["next_command"] is None and cursor == page["total_bytes"]
            return "".join(pages), len(pages), sizes
        words = shlex.split(out["next_command"])
        assert words[:3] == ["continuity", "capture", "read"]
        assert out["selection_sha256"] in words and out["capture_sha256"] in words
        args = words[2:]


def test_paging_reassembles_exactly_and_respects_both_caps(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # multi-byte characters and quotes (escaped in stdout) to push on both limits
    value = {"items": [{"i": i, "text": '語"x\\' * (i % 50), "ctl": "\u0001"} for i in range(900)]}
    path, digest = write_capture(tmp_path, value)
    select = ["/items", "/items/3/text"]
    args = ["read", "--capture-file", str(path), "--capture-sha256", digest]
    for pointer in select:
        args += ["--select", pointer]
    content, pages, sizes = _read_all(capsys, args)
    expected = model.canonical_bytes(
        [{"pointer": p, "value": jp.resolve(value, p)} for p in select]
    )
    assert content.encode("utf-8") == expected
    assert pages > 5 and max(sizes) <= STDOUT_BYTES


def test_continuation_after_the_capture_changed_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, digest = write_capture(tmp_path, {"big": ["x" * 100] * 400})
    code, out, _ = run(capsys, "read", "--capture-file", str(path), "--capture-sha256", digest,
                       "--select", "/big")  # fmt: skip
    assert code == 0 and out["page"]["complete"] is False
    following = shlex.split(out["next_command"])[2:]
    path.write_text(pretty({"big": ["y" * 100] * 400}))
    code, out, _ = run(capsys, *following)
    assert (code, out["error_code"]) == (1, "DIGEST_MISMATCH")
    path.write_text(pretty({"big": ["x" * 100] * 400}))
    i = following.index("--selection-sha256")
    following[i + 1] = "0" * 64
    code, out, _ = run(capsys, *following)
    assert (code, out["error_code"]) == (1, "SELECTION_MISMATCH")


def test_list_gives_pointer_type_size_members_in_document_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    value = {"providers": {"configured": {"formats": ["a"], "authorization": "k"}, "alt": {}}}
    path, digest = write_capture(tmp_path, value)
    code, out, _ = run(capsys, "list", "--capture-file", str(path), "--capture-sha256", digest,
                       "--select", "/providers", "--list-depth", "2")  # fmt: skip
    assert code == 0
    assert [(e["pointer"], e["type"], e.get("members")) for e in out["results"]] == [
        ("/providers", "object", 2),
        ("/providers/configured", "object", 2),
        ("/providers/configured/formats", "array", 1),
        ("/providers/configured/authorization", "string", None),
        ("/providers/alt", "object", 0),
    ]
    for entry in out["results"]:
        assert entry["size"] == len(model.canonical_bytes(jp.resolve(value, entry["pointer"])))
    same = run(capsys, "read", "--list", "--list-depth", "2", "--capture-file", str(path),
               "--capture-sha256", digest, "--select", "/providers")  # fmt: skip
    assert same[1] == out


def test_reference_out_and_reference_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, digest = write_capture(tmp_path / "c", capture_value())
    assert run(capsys, "manifest", str(tmp_path / "c"))[0] == 0
    reference = tmp_path / "c" / "recovery.reader.json"
    code, out, _ = run(capsys, "read", "--capture-file", str(path), "--capture-sha256", digest,
                       "--select", "/goal_id", "--reference-out", str(reference))  # fmt: skip
    assert code == 0 and reference.exists()
    code, again, _ = run(capsys, "read", "--reference-file", str(reference))
    assert (code, again["results"]) == (0, [{"pointer": "/goal_id", "value": "g-1"}])
    code, other, _ = run(capsys, "read", "--reference-file", str(reference), "--select", "/todos/1")
    assert (code, other["results"][0]["value"]) == (0, {"todo_id": "todo_other", "title": "x"})
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--all", "--root", "."]) == 0  # the reference it wrote passes
    code, out, _ = run(capsys, "read", "--capture-file", str(path), "--capture-sha256", digest,
                       "--select", "/todos", "--reference-out", str(reference))  # fmt: skip
    assert (code, out["error_code"]) == (1, "REFERENCE_REFUSED")  # never rewritten


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
def test_read_stays_small_in_memory_on_a_large_capture(tmp_path: Path) -> None:
    """A 40 MB capture, a small selection: the reading process stays far below the capture's
    size (the capture is mapped and scanned, not parsed). The size limit is raised for it, as a
    user keeping such captures would (the default 16 MiB refuses it, as check does)."""
    (tmp_path / ".continuity.toml").write_text("[limits]\nmax-file-bytes = 67108864\n")
    path = tmp_path / "capture.json"
    filler = json.dumps({"text": "x" * 200, "n": list(range(20))})
    with path.open("w") as handle:
        handle.write('{"history": [')
        count = 40_000_000 // len(filler)
        handle.write(",".join([filler] * count))
        handle.write('], "tail": {"wanted": [1, "二", null]}}\n')
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    # VmHWM is this process's own peak; ru_maxrss would carry the forking parent's across exec
    script = (
        "import sys\n"
        "from continuity_checks.cli import main\n"
        "code = main(sys.argv[1:])\n"
        "status = open('/proc/self/status').read().split('VmHWM:')[1].split()[0]\n"
        "print(status, file=sys.stderr)\n"
        "sys.exit(code)\n"
    )

    def peak_kib(capture: Path, sha: str, *select: str) -> tuple[int, list[Any]]:
        args = ["capture", "read", "--capture-file", str(capture), "--capture-sha256", sha]
        for pointer in select:
            args += ["--select", pointer]
        result = subprocess.run([sys.executable, "-c", script, *args], capture_output=True,
                                text=True, check=False, env={**os.environ},
                                cwd=tmp_path)  # fmt: skip
        assert result.returncode == 0, result.stderr
        values = [r["value"] for r in json.loads(result.stdout)["results"]]
        return int(result.stderr.strip().splitlines()[-1]), values

    small = tmp_path / "small.json"
    small.write_text('{"tail": {"wanted": 1}}')
    floor, _ = peak_kib(small, hashlib.sha256(small.read_bytes()).hexdigest(), "/tail/wanted")
    peak, values = peak_kib(path, digest, "/tail/wanted", f"/history/{count - 1}/n/19")
    assert values == [[1, "二", None], 19]
    # what the 40 MB capture costs above the interpreter's own floor
    assert (peak - floor) * 1024 < 40_000_000 * 0.25, (peak, floor)


# --- diff and apply --------------------------------------------------------------------------


def test_diff_then_apply_restores_byte_for_byte(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base, current = capture_value(), capture_value()
    current["history"].insert(2, {"turn": 99, "text": "新"})
    current["todos"].reverse()
    current["outcomes"][0]["requirements"][0]["status"] = "stale"
    (tmp_path / "cycle-base.json").write_text(pretty(base))
    (tmp_path / "current.json").write_text(pretty(current))
    code, out, _ = run(capsys, "diff", str(tmp_path / "cycle-base.json"), str(tmp_path / "current.json"),
                       "-o", str(tmp_path / "cycle-delta.json"))  # fmt: skip
    assert code == 0 and out["ok"]
    code, out, _ = run(capsys, "apply", str(tmp_path / "cycle-base.json"),
                       str(tmp_path / "cycle-delta.json"), "-o", str(tmp_path / "restored.json"))  # fmt: skip
    assert code == 0
    restored = (tmp_path / "restored.json").read_bytes()
    assert restored == model.canonical_bytes(current)
    assert hashlib.sha256(restored).hexdigest() == out["target_sha256"]
    capsys.readouterr()
    assert (
        main(
            [
                "capture",
                "apply",
                str(tmp_path / "cycle-base.json"),
                str(tmp_path / "cycle-delta.json"),
            ]
        )
        == 0
    )
    assert capsys.readouterr().out.encode("utf-8") == restored  # stdout: the document itself


def test_apply_refuses_a_wrong_base_or_target_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "base.json").write_text(pretty({"a": [1, 2, 3]}))
    (tmp_path / "current.json").write_text(pretty({"a": [3, 2, 1, 4]}))
    assert run(capsys, "diff", str(tmp_path / "base.json"), str(tmp_path / "current.json"),
               "-o", str(tmp_path / "d.json"))[0] == 0  # fmt: skip
    out_path = tmp_path / "out.json"
    (tmp_path / "other.json").write_text(pretty({"a": [1, 2, 3], "b": 0}))
    code, out, _ = run(capsys, "apply", str(tmp_path / "other.json"), str(tmp_path / "d.json"),
                       "-o", str(out_path))  # fmt: skip
    assert (code, out["error_code"], out_path.exists()) == (1, "BASE_MISMATCH", False)
    delta = json.loads((tmp_path / "d.json").read_text())
    delta["target_sha256"] = "0" * 64
    (tmp_path / "d.json").write_text(json.dumps(delta))
    code, out, _ = run(capsys, "apply", str(tmp_path / "base.json"), str(tmp_path / "d.json"),
                       "-o", str(out_path))  # fmt: skip
    assert (code, out["error_code"], out_path.exists()) == (1, "TARGET_MISMATCH", False)


json_scalars = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=6)
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=4), children, max_size=5)
    ),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_values, json_values)
def test_property_apply_of_diff_restores_any_pair(a: object, b: object) -> None:
    operations = cycle_delta.diff(a, b)
    assert model.canonical_bytes(cycle_delta.apply_delta(a, operations)) == model.canonical_bytes(b)


@st.composite
def similar_pairs(draw: st.DrawFn) -> tuple[object, object]:
    """A document and a copy with a few edits: most of the content is shared."""
    # records the size of real ones (a todo, a history turn): an id, a body, a few fields
    record = st.fixed_dictionaries(
        {
            "body": st.text("abcdefgh 語", min_size=60, max_size=120),
            "fields": st.dictionaries(st.text("abcd", min_size=1, max_size=3), json_scalars,
                                      max_size=4),
        }
    )  # fmt: skip
    records = [
        {"id": i, **r} for i, r in enumerate(draw(st.lists(record, min_size=20, max_size=40)))
    ]
    a = {"records": records, "meta": {"turn": 1}}
    b: dict[str, Any] = json.loads(json.dumps(a))
    b["meta"]["turn"] = 2
    for _ in range(draw(st.integers(1, 3))):
        index = draw(st.integers(0, len(b["records"]) - 1))
        action = draw(st.sampled_from(["edit", "drop", "insert", "swap"]))
        if action == "edit":
            b["records"][index]["edited"] = draw(json_scalars)
        elif action == "drop":
            b["records"].pop(index)
        elif action == "insert":
            b["records"].insert(index, {"new": draw(json_scalars)})
        else:
            b["records"][0], b["records"][index] = b["records"][index], b["records"][0]
    return a, b


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(similar_pairs())
def test_property_delta_of_similar_documents_is_much_smaller(pair: tuple[object, object]) -> None:
    a, b = pair
    operations = cycle_delta.diff(a, b)
    assert model.canonical_bytes(cycle_delta.apply_delta(a, operations)) == model.canonical_bytes(b)
    size_b = len(model.canonical_bytes(b))
    assert len(model.canonical_bytes(operations)) < size_b / 3


def test_verify_of_a_decision_directory_agrees_with_check(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`capture verify DIR` runs from the repository's top, as `check DIR` does: inside a
    decision-<id>/ directory its projection.json is the capture (a check rooted there would not
    see the directory's name and miss it)."""
    from tests.conftest import EXAMPLES

    decision = next(EXAMPLES.glob("captures/decision-*"))
    code, out, _ = run(capsys, "verify", str(decision))
    assert (code, out["ok"], out["findings"]) == (0, True, [])
    assert out["files"] == len([p for p in decision.iterdir() if p.is_file()])
