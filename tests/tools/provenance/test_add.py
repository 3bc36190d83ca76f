"""``continuity provenance add``: appends, is idempotent, refuses a second digest changing
nothing, keeps CRLF, escapes odd names, and loses no line when writers run at once."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from continuity_checks.checks.provenance import sums
from continuity_checks.cli import main
from tests.conftest import CORPUS, RunCLI, write_tree


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


HA, HB, HZ = sha(b"alpha\n"), sha(b"beta\n"), sha("ж\n".encode())
HN, HX = sha(b"n\n"), sha(b"x")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["provenance", "add", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    write_tree(tmp_path, {"a.txt": "alpha\n", "dir/b b.txt": "beta\n", "лайв.md": "ж\n"})
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_adds_gnu_lines_that_check_passes(
    tree: Path, capsys: pytest.CaptureFixture[str], run_json: RunCLI
) -> None:
    code, out, _ = run(capsys, "a.txt", "dir/b b.txt", "лайв.md")
    assert code == 0 and out.count("added to SHA256SUMS") == 3
    text = (tree / "SHA256SUMS").read_text(encoding="utf-8")
    assert text == (f"{HA}  a.txt\n{HB}  dir/b b.txt\n{HZ}  лайв.md\n")
    assert run_json("check", "--all", "--root", str(tree)) == (
        0,
        {"format_version": 1, "findings": [], "notes": [],
         "summary": {"files": 1, "commits": 0, "errors": 0, "warnings": 0, "not_shown": 0,
                     "suppressed": 0, "baselined": None}},
    )  # fmt: skip


def test_same_digest_again_is_a_no_op(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "a.txt")[0] == 0
    before = (tree / "SHA256SUMS").read_bytes()
    code, out, _ = run(capsys, "a.txt", "./a.txt")
    assert code == 0 and "already listed" in out
    assert (tree / "SHA256SUMS").read_bytes() == before


def test_another_digest_is_refused_and_nothing_changes(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "a.txt")[0] == 0
    before = (tree / "SHA256SUMS").read_bytes()
    (tree / "a.txt").write_text("changed\n")
    code, out, err = run(capsys, "dir/b b.txt", "a.txt")
    assert code == 1 and out == ""
    assert "refusing" in err and "a.txt is listed on line 1" in err and "not changed" in err
    assert (tree / "SHA256SUMS").read_bytes() == before  # b b.txt was not added either
    assert [p.name for p in tree.iterdir() if p.name.endswith(".tmp")] == []


def test_crlf_file_keeps_crlf_and_gets_a_final_newline(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tree / "SHA256SUMS.txt").write_bytes(f"{HA}  a.txt".encode() + b"\r\n# c\r\nX")
    code, _, err = run(capsys, "--sums", "SHA256SUMS.txt", "лайв.md")
    assert code == 1 and "line 3 is not a checksum line" in err  # a malformed file is refused
    (tree / "SHA256SUMS.txt").write_bytes(f"{HA}  a.txt".encode())
    data = (tree / "SHA256SUMS.txt").read_bytes()
    (tree / "SHA256SUMS.txt").write_bytes(data + b"\r\n" + data)  # a duplicate, yet parseable
    code, _, _ = run(capsys, "--sums", "SHA256SUMS.txt", "лайв.md")
    assert code == 0
    assert (tree / "SHA256SUMS.txt").read_bytes().endswith(f"\r\n{HZ}  лайв.md\r\n".encode())


def test_missing_final_newline_is_completed(tree: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tree / "SHA256SUMS").write_text(f"{HA}  a.txt")
    assert run(capsys, "dir/b b.txt")[0] == 0
    lines = (tree / "SHA256SUMS").read_text().split("\n")
    assert lines[1] == f"{HB}  dir/b b.txt" and lines[2] == ""


def test_odd_names_are_escaped_as_coreutils_does(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tree / "new\nline").write_bytes(b"x")
    assert run(capsys, "new\nline")[0] == 0
    line = (tree / "SHA256SUMS").read_text()
    assert line == f"\\{HX}  new\\nline\n"
    assert sums.parse(line.encode()).entries[0].path == "new\nline"


@pytest.mark.parametrize(
    ("args", "message"),
    [(["../outside"], "inside the repository"),
     (["missing.txt"], "missing.txt"),
     (["dir"], "expected a regular file"),
     (["SHA256SUMS"], "cannot list itself"),
     (["a.txt", "--sums", "nodir/SHA256SUMS"], "existing directory")],
)  # fmt: skip
def test_refusals_are_exit_1_and_write_nothing(
    tree: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code, out, err = run(capsys, *args)
    assert (code, out) == (1, "")
    assert message in err and err.count("\n") == 1
    assert not (tree / "SHA256SUMS").exists()


def test_relative_to_the_sums_file(tree: Path, capsys: pytest.CaptureFixture[str],
                                   run_json: RunCLI) -> None:  # fmt: skip
    (tree / ".continuity.toml").write_text('[provenance]\nrelative-to = "sums-file"\n')
    assert run(capsys, "--sums", "dir/SHA256SUMS", "a.txt", "dir/b b.txt")[0] == 0
    assert (tree / "dir/SHA256SUMS").read_text().splitlines() == [
        f"{HA}  ../a.txt",
        f"{HB}  b b.txt",
    ]
    assert run_json("check", "--all", "--root", str(tree))[0] == 0


def test_adding_to_the_dsh_sums_file(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                     monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    """Upstream's CRLF file gains one CRLF line; its 22 lines stay byte for byte."""
    upstream = (CORPUS / "dsh/evidence/provenance/SHA256SUMS.txt").read_bytes()
    write_tree(
        tmp_path, {"evidence/provenance/SHA256SUMS.txt": upstream, "evidence/new.txt": "n\n"}
    )
    monkeypatch.chdir(tmp_path)
    code, _, _ = run(capsys, "--sums", "evidence/provenance/SHA256SUMS.txt", "evidence/new.txt")
    assert code == 0
    after = (tmp_path / "evidence/provenance/SHA256SUMS.txt").read_bytes()
    assert after == upstream + f"{HN}  evidence/new.txt\r\n".encode()


def test_concurrent_writers_lose_no_line(tmp_path: Path) -> None:
    """Eight processes add sixteen files each to one sums file at the same time."""
    names = [f"f{i:03}" for i in range(128)]
    write_tree(tmp_path, {name: name for name in names})
    env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "continuity_checks", "provenance", "add", *names[i::8]],
            cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        for i in range(8)
    ]  # fmt: skip
    for proc in procs:
        assert proc.wait(timeout=60) == 0, proc.stderr.read() if proc.stderr else ""
    entries = sums.parse((tmp_path / "SHA256SUMS").read_bytes()).entries
    assert sorted(e.path for e in entries) == names
    assert all(e.digest == sha(e.path.encode()) for e in entries)


@pytest.mark.skipif(shutil.which("sha256sum") is None, reason="GNU sha256sum is the oracle")
def test_lines_are_what_gnu_sha256sum_writes_and_reads(
    tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    names = ["a.txt", "dir/b b.txt", "лайв.md", "new\nline", "cr\rname", "x (1).txt"]
    for name in names[3:]:
        (tree / name).write_bytes(name.encode())
    assert run(capsys, *names)[0] == 0
    ours = (tree / "SHA256SUMS").read_bytes()
    gnu = subprocess.run(["sha256sum", *names], cwd=tree, capture_output=True, check=True).stdout
    assert ours == gnu
    check = subprocess.run(["sha256sum", "-c", "SHA256SUMS"], cwd=tree, capture_output=True)
    assert check.returncode == 0, check.stdout + check.stderr
    tagged = subprocess.run(["sha256sum", "--tag", *names], cwd=tree, capture_output=True).stdout
    parsed = sums.parse(tagged)
    assert [(e.path, e.digest) for e in parsed.entries] == [
        (e.path, e.digest) for e in sums.parse(ours).entries
    ]


def test_adds_to_sha256_r_lines_in_their_form(
    tree: Path, capsys: pytest.CaptureFixture[str], run_json: RunCLI
) -> None:
    # after `sha256 -r` lines sha256sum -c reads "<hex>  b" as the path " b": the new line must
    # be single-space too, or the listing pins a file that is not there
    (tree / "SHA256SUMS").write_text(f"{HA} a.txt\n", encoding="utf-8")
    code, out, _ = run(capsys, "dir/b b.txt")
    assert code == 0 and "added" in out
    assert (tree / "SHA256SUMS").read_text(encoding="utf-8") == f"{HA} a.txt\n{HB} dir/b b.txt\n"
    assert run_json("check", "--all", "--root", str(tree))[1]["findings"] == []
    if shutil.which("sha256sum"):
        checked = subprocess.run(["sha256sum", "-c", "--strict", "SHA256SUMS"], cwd=tree)
        assert checked.returncode == 0
