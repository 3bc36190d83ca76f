"""What the writing helpers write passes ``check --all`` and ``verify`` in a real repository,
from its top or from a subdirectory, under a configuration with non-default options; where a
helper refuses, it says why and leaves every byte as it was (the audit in docs/reliability.md)."""

from __future__ import annotations

import hashlib
import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from continuity_checks.cli import main
from tests.helpers.git import GitRepo, isolate_git


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    isolate_git(monkeypatch, tmp_path / "home")
    r = GitRepo(tmp_path / "the repo")
    r.commit("root")
    return r


def run(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, cwd: Path, *args: str
) -> tuple[int, str, str]:
    """The real CLI, in-process, from ``cwd``."""
    monkeypatch.chdir(cwd)
    capsys.readouterr()
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def clean(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, repo: GitRepo, base: str
) -> None:
    """``check --all`` and ``verify`` over ``base..HEAD`` both report nothing, exit 0."""
    for args in (("check", "--all"), ("verify", "--range", f"{base}..HEAD")):
        code, out, _ = run(capsys, monkeypatch, repo.path, *args, "--format", "json")
        report: dict[str, Any] = json.loads(out)
        assert (code, report["findings"]) == (0, []), args


# --- deltas: an update never writes an updated_at that goes back -----------------------------


def test_delta_update_refuses_a_now_before_the_stored_updated_at(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    base = repo.head()
    code, out, _ = run(capsys, monkeypatch, repo.path, "delta", "start", "--source", "codex",
                       "--started-at", "2999-01-01T00:00:00Z", "--change", "x")  # fmt: skip
    assert code == 0
    path = json.loads(out)["_path"]
    repo.commit("start", trailers=[path])
    before = (repo.path / path).read_bytes()
    code, out, err = run(capsys, monkeypatch, repo.path, "delta", "update",
                         "--conversation", path, "--change", "y")  # fmt: skip
    assert (code, out) == (2, "")
    assert err.startswith("deltalayer: updated_at cannot go back") and "--updated-at" in err
    assert (repo.path / path).read_bytes() == before
    code, _, _ = run(capsys, monkeypatch, repo.path, "delta", "update", "--conversation", path,
                     "--change", "y", "--updated-at", "2999-01-01T00:00:01Z")  # fmt: skip
    assert code == 0
    repo.commit("update", trailers=[path])
    clean(capsys, monkeypatch, repo, base)


def test_delta_update_refuses_an_updated_at_before_started_at(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # a datetime sorts after every date-only value (DL205's order), but 2024 is before 2026 (DL109)
    code, out, _ = run(capsys, monkeypatch, repo.path, "delta", "start", "--source", "codex",
                       "--started-at", "2026-09-21")  # fmt: skip
    path = json.loads(out)["_path"]
    before = (repo.path / path).read_bytes()
    code, out, err = run(capsys, monkeypatch, repo.path, "delta", "update", "--conversation",
                         path, "--updated-at", "2024-02-29T23:59:59-12:00")  # fmt: skip
    assert (code, out) == (2, "") and "cannot precede started_at" in err and "DL109" in err
    assert (repo.path / path).read_bytes() == before


# --- captures: the configuration of the repository, from any directory of it ----------------


def test_capture_manifest_follows_the_configured_digest(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo.commit("cfg", {".continuity.toml": '[captures]\ncapture-digest = "canonical"\n'})
    base = repo.head()
    repo.write({"caps/t 1/capture.json": '{\n  "a": [1, "é🤖"]\n}\n'})
    code, out, _ = run(capsys, monkeypatch, repo.path / "caps", "capture", "manifest", "t 1")
    assert code == 0 and json.loads(out)["written"] is True
    repo.commit("capture")
    clean(capsys, monkeypatch, repo, base)


def test_capture_manifest_refuses_a_digest_the_configuration_rejects(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo.write({"caps/capture.json": '{"a": 1}\n'})
    code, out, _ = run(
        capsys, monkeypatch, repo.path, "capture", "manifest", "caps", "--digest", "canonical"
    )
    assert code == 1 and json.loads(out)["error_code"] == "DIGEST_NOT_CONFIGURED"
    assert not (repo.path / "caps" / "manifest.json").exists()


def test_capture_diff_from_a_subdirectory_follows_the_repository_configuration(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo.commit("cfg", {".continuity.toml": '[captures]\ndelta-ops = "rfc6902"\n'})
    base = repo.head()
    repo.write(
        {
            "caps/c/cycle-base.json": '{"a": [{"k": 1}, {"k": 2}, {"k": 3}]}\n',
            "caps/c/projection.json": '{"a": [{"k": 3}, {"k": 2}, {"k": 1}]}\n',
        }
    )
    where = repo.path / "caps" / "c"
    code, _, _ = run(capsys, monkeypatch, where, "capture", "diff", "cycle-base.json",
                     "projection.json", "-o", "cycle-delta.json")  # fmt: skip
    assert code == 0
    ops = {op["op"] for op in json.loads((where / "cycle-delta.json").read_text())["operations"]}
    assert "reorder" not in ops
    code, _, _ = run(capsys, monkeypatch, where, "capture", "apply", "cycle-base.json",
                     "cycle-delta.json", "-o", "restored.json")  # fmt: skip
    assert code == 0
    (where / "restored.json").unlink()
    repo.commit("delta")
    clean(capsys, monkeypatch, repo, base)


def test_capture_read_pins_the_configured_digest(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # the manifest's digest reads the capture, and the reference written pins what check expects
    repo.commit("cfg", {".continuity.toml": '[captures]\ncapture-digest = "canonical"\n'})
    base = repo.head()
    repo.write({"caps/t/capture.json": '{\n  "a": [1, {"x": "é"}]\n}\n'})
    where = repo.path / "caps" / "t"
    assert run(capsys, monkeypatch, where, "capture", "manifest", ".")[0] == 0
    pinned = json.loads((where / "manifest.json").read_text())["capture_sha256"]
    code, out, _ = run(capsys, monkeypatch, where, "capture", "read", "--capture-file",
                       "capture.json", "--capture-sha256", pinned, "--select", "/a/1",
                       "--reference-out", "mine.reader.json")  # fmt: skip
    assert code == 0 and json.loads(out)["results"] == [{"pointer": "/a/1", "value": {"x": "é"}}]
    repo.commit("capture")
    clean(capsys, monkeypatch, repo, base)


# --- provenance: add writes only a sums file that check reads ---------------------------------


@pytest.mark.parametrize(
    ("sums", "config", "why"),
    [
        ("checksums.txt", "", "not a sums file continuity check reads"),
        ("PROVENANCE.json", "", "a provenance manifest"),
        ("out/SHA256SUMS", 'exclude = ["out/**"]\n', "excluded"),
        ("SHA256SUMS", 'families = ["deltas"]\n', "provenance family is not checked"),
    ],
)
def test_provenance_add_refuses_a_sums_file_check_would_never_read(
    repo: GitRepo,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    sums: str,
    config: str,
    why: str,
) -> None:
    # before, the lines were written (exit 0) and nothing ever checked them, or broke a manifest
    repo.commit("files", {"a.txt": "alpha\n", "out/keep": "", ".continuity.toml": config})
    code, out, err = run(capsys, monkeypatch, repo.path, "provenance", "add", "a.txt",
                         "--sums", sums)  # fmt: skip
    assert (code, out) == (1, "") and why in err and "Traceback" not in err
    assert not (repo.path / sums).exists()


def test_provenance_add_with_configured_sums_files_round_trips(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = '[provenance]\nsums-files = ["checksums.txt"]\nrelative-to = "sums-file"\n'
    repo.commit("cfg", {".continuity.toml": config, "d ir/é 🤖.txt": "x\n"})
    base = repo.head()
    where = repo.path / "d ir"
    code, out, _ = run(capsys, monkeypatch, where, "provenance", "add", "é 🤖.txt",
                       "--sums", "checksums.txt")  # fmt: skip
    assert code == 0 and out.startswith("added to d ir/checksums.txt: ")
    repo.commit("listed")
    clean(capsys, monkeypatch, repo, base)


# --- captures: nothing is vouched for that no check reads -------------------------------------


def test_capture_helpers_refuse_what_check_would_never_read(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # before: the manifest and the reference were written outside roots (exit 0), and verify
    # passed a changed capture there (files 0, ok true, exit 0)
    repo.commit("cfg", {".continuity.toml": '[captures]\nroots = ["caps"]\n'})
    repo.write({"other/t/capture.json": '{"a": 1}\n'})
    where = repo.path / "other" / "t"
    code, out, _ = run(capsys, monkeypatch, where, "capture", "manifest", ".")
    assert code == 1 and json.loads(out)["error_code"] == "NOT_CHECKED"
    assert not (where / "manifest.json").exists()
    digest = hashlib.sha256((where / "capture.json").read_bytes()).hexdigest()
    code, out, _ = run(capsys, monkeypatch, where, "capture", "read", "--capture-file",
                       "capture.json", "--capture-sha256", digest, "--select", "/a",
                       "--reference-out", "mine.reader.json")  # fmt: skip
    assert code == 1 and json.loads(out)["error_code"] == "REFERENCE_REFUSED"
    assert not (where / "mine.reader.json").exists()
    repo.write({"other/t/manifest.json": json.dumps({"schema_version": 1,
                "capture_file": "capture.json", "capture_sha256": "0" * 64, "capture_bytes": 9})})  # fmt: skip
    code, out, _ = run(capsys, monkeypatch, repo.path, "capture", "verify", "other")
    assert code == 1 and json.loads(out)["error_code"] == "NOTHING_CHECKED"
    code, out, _ = run(capsys, monkeypatch, repo.path, "capture", "verify", ".")
    assert code == 1 and json.loads(out)["error_code"] == "NOTHING_CHECKED"


def test_capture_read_with_the_same_reference_out_twice(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # the same read run again (a retried script) reads: before, it was REFERENCE_REFUSED (exit
    # 1, no results) although the reference it would write was there, byte for byte
    base = repo.head()
    repo.write({"caps/t/capture.json": '{"a": [1, "é"]}\n'})
    where = repo.path / "caps" / "t"
    assert run(capsys, monkeypatch, where, "capture", "manifest", ".")[0] == 0
    digest = hashlib.sha256((where / "capture.json").read_bytes()).hexdigest()
    read = ("capture", "read", "--capture-file", "capture.json", "--capture-sha256", digest,
            "--select", "/a/1", "--reference-out", "r.reader.json")  # fmt: skip
    assert run(capsys, monkeypatch, where, *read)[0] == 0
    written = (where / "r.reader.json").read_bytes()
    code, out, _ = run(capsys, monkeypatch, where, *read)
    assert code == 0 and json.loads(out)["results"] == [{"pointer": "/a/1", "value": "é"}]
    assert (where / "r.reader.json").read_bytes() == written
    code, out, _ = run(capsys, monkeypatch, where, *read[:-3], "/a/0", *read[-2:])
    assert code == 1 and json.loads(out)["error_code"] == "REFERENCE_REFUSED"
    assert (where / "r.reader.json").read_bytes() == written
    repo.commit("capture")
    clean(capsys, monkeypatch, repo, base)


# --- captures: a pointer may hold any character (RFC 6901), a line break too -----------------


@pytest.mark.parametrize("key", ["new\nline", "sep\u2028", "cr\r"])
def test_capture_diff_and_reference_with_a_line_break_in_a_key(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, key: str
) -> None:
    # before: the schemas' pointer pattern (/.*) stopped at a line break, so the delta diff wrote
    # was CX124 and apply refused it (DELTA_INVALID), the reference read wrote CX1xx
    base = repo.head()
    where = repo.path / "caps" / "c"
    repo.write(
        {
            "caps/c/cycle-base.json": json.dumps({key: 1, "k": [1, 2]}),
            "caps/c/current.json": json.dumps({key: 2, "k": [2, 1]}),
            "caps/c/capture.json": json.dumps({key: {"x": 1}}) + "\n",
        }
    )
    code, _, _ = run(capsys, monkeypatch, where, "capture", "diff", "cycle-base.json",
                     "current.json", "-o", "cycle-delta.json")  # fmt: skip
    assert code == 0
    code, out, _ = run(capsys, monkeypatch, where, "capture", "apply", "cycle-base.json",
                       "cycle-delta.json")  # fmt: skip
    assert code == 0 and json.loads(out) == {key: 2, "k": [2, 1]}
    assert run(capsys, monkeypatch, where, "capture", "manifest", ".")[0] == 0
    digest = hashlib.sha256((where / "capture.json").read_bytes()).hexdigest()
    code, out, _ = run(capsys, monkeypatch, where, "capture", "read", "--capture-file",
                       "capture.json", "--capture-sha256", digest, "--select", f"/{key}",
                       "--reference-out", "r.reader.json")  # fmt: skip
    assert code == 0 and json.loads(out)["results"][0]["value"] == {"x": 1}
    code, out, _ = run(capsys, monkeypatch, where, "capture", "read",
                       "--reference-file", "r.reader.json")  # fmt: skip
    assert code == 0 and json.loads(out)["results"][0]["value"] == {"x": 1}
    repo.commit("captures")
    clean(capsys, monkeypatch, repo, base)


@pytest.mark.parametrize("out", ["missing/dir/out.json", "a directory"])
def test_capture_diff_and_apply_to_an_unwritable_output_refuse_in_json(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, out: str
) -> None:
    # before: exit 2, nothing on stdout, "cannot write the report" (it was not the report)
    repo.write({"b.json": '{"a": 1}', "c.json": '{"a": 2}', "a directory/keep": ""})
    assert run(capsys, monkeypatch, repo.path, "capture", "diff", "b.json", "c.json",
               "-o", "d.json")[0] == 0  # fmt: skip
    for args in (("diff", "b.json", "c.json"), ("apply", "b.json", "d.json")):
        code, text, err = run(capsys, monkeypatch, repo.path, "capture", *args, "-o", out)
        report = json.loads(text)
        assert (code, report["error_code"], err) == (1, "OUTPUT_UNWRITABLE", "")
        assert out in report["error"]


@pytest.mark.parametrize("hypothesis", ["H1", "H2", "shape"])
def test_capture_read_writes_the_configured_selection_digest(
    repo: GitRepo,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    hypothesis: str,
) -> None:
    # before: read always wrote H1, so under selection-digest = "H2" the reference was CX113
    config = f'[captures]\nselection-digest = "{hypothesis}"\n'
    repo.commit("cfg", {".continuity.toml": config})
    base = repo.head()
    repo.write({"caps/t/capture.json": json.dumps({"a": ["x" * 9000, "y" * 9000], "b": 1})})
    where = repo.path / "caps" / "t"
    digest = hashlib.sha256((where / "capture.json").read_bytes()).hexdigest()
    code, out, _ = run(capsys, monkeypatch, where, "capture", "read", "--capture-file",
                       "capture.json", "--capture-sha256", digest, "--select", "/a",
                       "--select", "/b", "--reference-out", "r.reader.json")  # fmt: skip
    first = json.loads(out)
    assert code == 0 and first["page"]["complete"] is False
    assert run(capsys, monkeypatch, where, "capture", "manifest", ".")[0] == 0
    # the continuation agrees with its first page
    code, out, _ = run(capsys, monkeypatch, where, *shlex.split(first["next_command"])[1:])
    assert code == 0 and json.loads(out)["page"]["complete"] is True
    repo.commit("capture")
    clean(capsys, monkeypatch, repo, base)


def test_delta_update_refuses_a_delta_with_a_key_twice(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # before: json.loads kept the last "source", the update wrote the file without the first
    # one, exit 0: a value of the user's file lost (check reports the file, CC005)
    path = ".deltalayer/changes/2026-09-21--a.json"
    text = '{"started_at":"2026-09-21","updated_at":"2026-09-21","source":"a","changes":[],'
    repo.write({path: text + '"source":"b"}\n'})
    before = (repo.path / path).read_bytes()
    code, out, err = run(capsys, monkeypatch, repo.path, "delta", "update",
                         "--conversation", path, "--change", "x")  # fmt: skip
    assert (code, out) == (2, "") and "CC005" in err and "nothing was written" in err
    assert (repo.path / path).read_bytes() == before


# --- a seeded sequence of every writing helper (bigger runs: docs/reliability.md) --------------

TEXTS = ["plain", "héllo 🤖", 'q"uote \\ back', "new\nline", "sep\u2028x", "-dash", "x" * 3000]
NON_DEFAULT = (
    '[captures]\ncapture-digest = "canonical"\ndelta-ops = "rfc6902"\nselection-digest = "H2"\n'
    '[provenance]\nrelative-to = "sums-file"\n[deltas]\nownership = "trailer"\n'
)


@pytest.mark.parametrize("config", ["", NON_DEFAULT])
def test_a_seeded_sequence_of_helpers_passes_check_and_verify(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, config: str
) -> None:
    import random

    rng = random.Random(7)
    repo.commit("cfg", {".continuity.toml": config})
    base = repo.head()
    sub = repo.path / "sub dir"
    sub.mkdir()
    mine: list[str] = []
    for step in range(14):
        trailers: list[str] = []
        kind = ("delta", "capture", "cycle", "provenance")[step % 4]
        cwd = rng.choice([repo.path, sub])
        if kind == "delta" and mine and rng.random() < 0.6:
            path = rng.choice(mine)
            args = ["update", "--conversation", path, "--change", rng.choice(TEXTS)]
            if rng.random() < 0.3:
                args = ["freeze", "--conversation", path]
                mine.remove(path)
            code, out, err = run(capsys, monkeypatch, cwd, "delta", "--root", str(repo.path), *args)
            trailers = [path]
        elif kind == "delta":
            code, out, err = run(capsys, monkeypatch, cwd, "delta", "--root", str(repo.path),
                                 "start", "--source", "ci agent", "--change", rng.choice(TEXTS))  # fmt: skip
            mine.append(json.loads(out)["_path"])
            trailers = mine[-1:]
        elif kind == "capture":
            where = repo.path / "caps" / f"t é {step}"
            repo.write({f"caps/t é {step}/capture.json": json.dumps({rng.choice(TEXTS): [step]})})
            code, out, err = run(capsys, monkeypatch, where, "capture", "manifest", ".")
            pin = json.loads(out)["capture_sha256"]
            code, out, err = run(capsys, monkeypatch, where, "capture", "read", "--capture-file",
                                 "capture.json", "--capture-sha256", pin, "--select", "",
                                 "--reference-out", "r.reader.json")  # fmt: skip
        elif kind == "cycle":
            where = repo.path / "caps" / f"c {step}"
            first = {rng.choice(TEXTS): [1, 2, 3], "k": {"a": step}}
            repo.write({f"caps/c {step}/cycle-base.json": json.dumps(first),
                        f"caps/c {step}/now.json": json.dumps({**first, "k": [3, 2, 1]})})  # fmt: skip
            code, out, err = run(capsys, monkeypatch, where, "capture", "diff", "cycle-base.json",
                                 "now.json", "-o", "cycle-delta.json")  # fmt: skip
        else:
            name = str(step) + rng.choice([" é 🤖", " new\nline", " a"]) + ".bin"
            repo.write({f"sub dir/{name}": rng.randbytes(20)})
            code, out, err = run(capsys, monkeypatch, sub, "provenance", "add", name,
                                 "--sums", "SHA256SUMS")  # fmt: skip
        assert code == 0, (step, kind, out, err)
        repo.commit(f"step {step}", trailers=trailers)
    clean(capsys, monkeypatch, repo, base)


def test_delta_path_of_a_store_below_the_top_names_it_in_a_trailer(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # `delta --root pkg` prints _path from pkg (as the prototype does); committed as the
    # Continuity-Delta trailer it was DL201 (a delta none of the trailers names), exit 1
    repo.commit("cfg", {".continuity.toml": '[deltas]\nownership = "trailer"\n'})
    base = repo.head()
    code, out, _ = run(capsys, monkeypatch, repo.path, "delta", "--root", "pkg", "start",
                       "--source", "codex", "--change", "x")  # fmt: skip
    path = json.loads(out)["_path"]
    assert path.startswith(".deltalayer/changes/")
    repo.commit("start", trailers=[path])
    code, _, _ = run(capsys, monkeypatch, repo.path / "pkg", "delta", "update",
                     "--conversation", path, "--change", "y")  # fmt: skip
    assert code == 0
    repo.commit("update", trailers=[path])
    clean(capsys, monkeypatch, repo, base)
    # it names the delta of that name, as a bare name does: another delta stays foreign
    code, out, _ = run(capsys, monkeypatch, repo.path, "delta", "--root", "other", "start",
                       "--source", "another", "--change", "z")  # fmt: skip
    other = "other/" + json.loads(out)["_path"]
    repo.commit("start other", trailers=[other])
    code, _, _ = run(capsys, monkeypatch, repo.path, "delta", "--root", "other", "update",
                     "--conversation", other.removeprefix("other/"), "--change", "w")  # fmt: skip
    repo.commit("takeover", trailers=[path])
    code, out, _ = run(capsys, monkeypatch, repo.path, "verify", "--range", "HEAD~1..HEAD")
    assert code == 1 and "DL201" in out


def test_capture_diff_refuses_a_cycle_delta_away_from_its_base(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # before: written, exit 0, and check rejected it (CX103: no cycle-base.json beside it)
    repo.write({"base.json": '{"a": 1}', "cur.json": '{"a": 2}', "caps/x/keep": ""})
    code, out, _ = run(capsys, monkeypatch, repo.path, "capture", "diff", "base.json",
                       "cur.json", "-o", "caps/x/cycle-delta.json")  # fmt: skip
    assert code == 1 and json.loads(out)["error_code"] == "BASE_NOT_BESIDE"
    assert not (repo.path / "caps" / "x" / "cycle-delta.json").exists()
    # the same bytes beside it are its base
    repo.write({"caps/x/cycle-base.json": '{"a": 1}'})
    code, out, _ = run(capsys, monkeypatch, repo.path, "capture", "diff", "base.json",
                       "cur.json", "-o", "caps/x/cycle-delta.json")  # fmt: skip
    assert code == 0
    code, out, _ = run(capsys, monkeypatch, repo.path, "check", "--all", "--format", "json")
    assert (code, json.loads(out)["findings"]) == (0, [])


def test_capture_diff_and_apply_never_rewrite_a_published_capture(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # before: -o replaced the file, exit 0, and verify reported the commit (CX201)
    decision = repo.path / "caps" / "decision-k3j2x9q0"
    repo.write(
        {
            "caps/decision-k3j2x9q0/cycle-base.json": '{"a": 1}',
            "caps/decision-k3j2x9q0/now.json": '{"a": 2}',
            "caps/decision-k3j2x9q0/projection.json": '{"a": 0}',
            "caps/t/capture.json": '{"a": 1}\n',
        }
    )
    assert run(capsys, monkeypatch, decision, "capture", "diff", "cycle-base.json", "now.json",
               "-o", "cycle-delta.json")[0] == 0  # fmt: skip
    assert run(capsys, monkeypatch, repo.path, "capture", "manifest", "caps/t")[0] == 0
    again = run(capsys, monkeypatch, decision, "capture", "diff", "cycle-base.json", "now.json",
                "-o", "cycle-delta.json")  # fmt: skip
    assert again[0] == 0  # the same bytes again: nothing is rewritten
    (decision / "now.json").write_text('{"a": 3}')
    before = (decision / "cycle-delta.json").read_bytes()
    for where, args in (
        (decision, ("diff", "cycle-base.json", "now.json", "-o", "cycle-delta.json")),
        (decision, ("apply", "cycle-base.json", "cycle-delta.json", "-o", "projection.json")),
        (repo.path / "caps" / "t", ("apply", "../decision-k3j2x9q0/cycle-base.json",
                                    "../decision-k3j2x9q0/cycle-delta.json", "-o", "capture.json")),
    ):  # fmt: skip
        code, out, _ = run(capsys, monkeypatch, where, "capture", *args)
        assert code == 1 and json.loads(out)["error_code"] == "OUTPUT_PUBLISHED", args
    assert (decision / "cycle-delta.json").read_bytes() == before
    assert (decision / "projection.json").read_text() == '{"a": 0}'
    assert (repo.path / "caps" / "t" / "capture.json").read_text() == '{"a": 1}\n'
