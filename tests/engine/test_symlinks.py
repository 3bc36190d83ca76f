"""A continuity file, or a directory a family keeps its files in, committed as a symlink (git
mode 120000) is an error in every family, at the commit that does it: in ``continuity verify``
and in the commit hook (``continuity check --staged``). Real repositories, real commits, the
real command line. A regular file at the same path passes, and so does a symlink elsewhere in
the repository that is no continuity file."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from continuity_checks.cli import main
from tests.helpers.captures import CAP, DEC, build
from tests.helpers.git import GitRepo, delta, path_of
from tests.helpers.working_state import COMPACTED, WS, version

Found = list[tuple[str, str]]


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[dict[str, Any]]]:
    """``continuity <args> --format json``: the exit code and the findings."""
    capsys.readouterr()
    code = main([*args, "--format", "json"])
    return code, json.loads(capsys.readouterr().out)["findings"]


def base(repo: GitRepo, files: dict[str, str | bytes]) -> None:
    """The first commit, tagged ``base``."""
    repo.commit("base", {"README.md": "x\n", **files})
    repo.git("tag", "base")


def link(repo: GitRepo, path: str, target: str) -> None:
    """Replace whatever is at ``path`` with a symlink to ``target`` (relative to the link)."""
    full = repo.path / path
    if full.is_dir() and not full.is_symlink():
        repo.git("rm", "-r", "-q", "--cached", "--", path)
        for inner in sorted(full.rglob("*"), reverse=True):
            inner.rmdir() if inner.is_dir() else inner.unlink()
        full.rmdir()
    elif full.exists() or full.is_symlink():
        full.unlink()
    full.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, full)


def staged_then_verified(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], *paths: str
) -> tuple[tuple[int, Found], tuple[int, Found]]:
    """Stage everything; the commit hook's exit code and (rule, path) of its findings made at
    the commit being made; then commit, and the same of ``verify --range base..HEAD`` at it."""
    repo.git("add", "-A")
    code, findings = run(capsys, "check", "--staged", *paths)
    hook = (code, sorted((f["rule"], f["path"]) for f in findings if f["commit"] == "staged"))
    sha = repo.commit("the change")
    code, findings = run(capsys, "verify", "--range", "base..HEAD")
    assert all(f["commit"] == sha for f in findings), findings
    return hook, (code, sorted((f["rule"], f["path"]) for f in findings))


# --- working state ------------------------------------------------------------------------------

OLD_WS = ".dsh/project/WORKING_STATE.old.json"


def test_working_state_replaced_by_a_symlink_to_an_older_copy(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    base(repo, {WS: version(content="a", prune_safe_through_seq=150), "backup/ws.json": COMPACTED})
    link(repo, WS, "../../backup/ws.json")
    hook, verified = staged_then_verified(repo, capsys, WS)
    assert hook == (1, [("WS206", WS)])
    assert verified == (1, [("WS206", WS)])
    # file mode: the one finding for the path, in place of the content the link leads to
    code, findings = run(capsys, "check", "--all")
    assert (code, [(f["rule"], f["path"]) for f in findings]) == (1, [("WS119", WS)])
    assert '"backup/ws.json"' in findings[0]["message"]
    code, findings = run(capsys, "check", WS)
    assert (code, [f["rule"] for f in findings]) == (1, ["WS119"])


def test_the_runtime_directory_committed_as_a_symlink(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    base(repo, {WS: COMPACTED, "elsewhere/project.lock/owner.json": "{}\n"})
    link(repo, ".dsh/runtime", "../elsewhere")
    hook, verified = staged_then_verified(repo, capsys, ".dsh/runtime")
    assert hook[0] == 1 and ("WS206", ".dsh/runtime") in hook[1]
    assert verified == (1, [("WS206", ".dsh/runtime")])


@pytest.mark.parametrize("directory", [".dsh", ".dsh/project"])
def test_a_dsh_directory_committed_as_a_symlink(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], directory: str
) -> None:
    base(repo, {WS: COMPACTED, "copy/project/WORKING_STATE.json": COMPACTED})
    link(repo, directory, "../copy" if directory == ".dsh" else "../copy/project")
    hook, verified = staged_then_verified(repo, capsys)
    assert hook == (1, [("WS206", directory)])
    assert verified == (1, [("WS206", directory)])


def test_working_state_as_a_regular_file_and_other_symlinks_pass(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    base(repo, {WS: COMPACTED, "docs/a.md": "a\n"})
    repo.write({WS: version(content="a", checkpoint_id=None)})
    repo.write({WS: COMPACTED})  # the same regular file again
    link(repo, "docs/b.md", "a.md")
    link(repo, "runtime", "docs")  # a symlinked directory that is not DSH's
    hook, verified = staged_then_verified(repo, capsys)
    assert hook == (0, [])
    assert verified == (0, [])
    assert run(capsys, "check", "--all") == (0, [])


# --- deltas -------------------------------------------------------------------------------------

NAME = "2026-09-21T16-20-00p08-00--agent.json"
FROZEN = "2026-09-20T10-00-00p08-00--codex.frozen.json"
PROJECT = {
    "AGENTS.md": "<!-- deltalayer-conversation-v0.2.1 -->\n## Project Continuity\n",
    "PROJECT.md": "# Project\n",
}
STORE = {
    path_of(NAME): delta(changes=["a"]),
    path_of(FROZEN): delta("2026-09-20T10:00:00+08:00", source="codex"),
}


def test_the_changes_directory_committed_as_a_symlink_then_written_through(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    copies = {f"notes/changes/{path.rpartition('/')[2]}": data for path, data in STORE.items()}
    base(repo, {**PROJECT, **STORE, **copies})
    link(repo, ".deltalayer/changes", "../notes/changes")
    hook, verified = staged_then_verified(repo, capsys)
    # one finding for the cause: the deltas it replaced are not also "deleted" (DL206, DL207)
    assert hook == (1, [("DL212", ".deltalayer/changes")])
    assert verified == (1, [("DL212", ".deltalayer/changes")])
    # the helper does not write through it: the delta it leads to stays as it was
    before = (repo.path / "notes/changes" / NAME).read_bytes()
    code = main(["delta", "update", "--conversation", NAME, "--change", "rewritten"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert ".deltalayer/changes is a symlink" in err
    assert (repo.path / "notes/changes" / NAME).read_bytes() == before


def test_the_store_committed_as_a_symlink(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    base(repo, {**PROJECT, **STORE, "notes/store/changes/x.json": STORE[path_of(NAME)]})
    link(repo, ".deltalayer", "notes/store")
    hook, verified = staged_then_verified(repo, capsys)
    assert hook == (1, [("DL212", ".deltalayer")])
    assert verified == (1, [("DL212", ".deltalayer")])


def test_store_directories_as_directories_and_other_symlinks_pass(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    base(repo, {**PROJECT, **STORE, "notes/changes/a.md": "a\n"})
    link(repo, "changes", "notes/changes")  # not a store's directory
    link(repo, "notes/.deltalayer.md", "changes/a.md")
    repo.write({path_of("2026-09-22T10-00-00p08-00--agent.json"): delta(
        "2026-09-22T10:00:00+08:00")})  # fmt: skip
    hook, verified = staged_then_verified(repo, capsys)
    assert hook == (0, [])
    assert verified == (0, [])


# --- captures -----------------------------------------------------------------------------------


def test_a_published_capture_replaced_by_a_symlink_to_its_own_directory(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    files = build()
    base(repo, {**files, CAP + "capture-v1.json": files[CAP + "capture.json"]})
    link(repo, CAP + "capture.json", "capture-v1.json")
    hook, verified = staged_then_verified(repo, capsys, CAP + "capture.json")
    # one finding for the cause: the published capture is not also "rewritten" (CX201)
    assert hook == (1, [("CX203", CAP + "capture.json")])
    assert verified == (1, [("CX203", CAP + "capture.json")])


def test_a_decision_directory_committed_as_a_symlink(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    files = build()
    copies = {k.replace(DEC, "elsewhere/"): v for k, v in files.items() if k.startswith(DEC)}
    base(repo, {**files, **copies})
    link(repo, DEC.rstrip("/"), "../elsewhere")
    hook, verified = staged_then_verified(repo, capsys)
    assert hook == (1, [("CX203", DEC.rstrip("/"))])
    assert verified == (1, [("CX203", DEC.rstrip("/"))])


def test_symlinks_that_are_no_capture_pass(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    base(repo, {**build(), "web/real.json": "{}\n", "notes/decision-log.md": "x\n"})
    link(repo, "web/manifest.json", "real.json")  # a web app's manifest, no capture beside it
    link(repo, "notes/decision-abcdefgh.md", "decision-log.md")  # not a decision directory
    link(repo, "decision-abc", "notes")  # not LoopX's name for one (8 characters)
    hook, verified = staged_then_verified(repo, capsys)
    assert hook == (0, [])
    assert verified == (0, [])


# --- provenance ---------------------------------------------------------------------------------

ARTIFACT = b"the artifact\n"
SUMS = f"{hashlib.sha256(ARTIFACT).hexdigest()}  data/a.bin\n"


def test_a_sums_file_replaced_by_a_symlink(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    base(repo, {"data/a.bin": ARTIFACT, "SHA256SUMS": SUMS, "old/SHA256SUMS": SUMS})
    link(repo, "SHA256SUMS", "old/SHA256SUMS")
    hook, verified = staged_then_verified(repo, capsys, "SHA256SUMS")
    # its entries are not also "removed" (PV202)
    assert hook == (1, [("PV205", "SHA256SUMS")])
    assert verified == (1, [("PV205", "SHA256SUMS")])


def test_a_sums_file_as_a_regular_file_and_a_symlinked_artifact_dir_pass(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    base(repo, {"data/a.bin": ARTIFACT, "SHA256SUMS": SUMS})
    repo.write({"SHA256SUMS": SUMS, "docs/x.md": "x\n"})
    link(repo, "docs/y.md", "x.md")
    hook, verified = staged_then_verified(repo, capsys)
    assert hook == (0, [])
    assert verified == (0, [])


# --- sessions -----------------------------------------------------------------------------------


def test_a_projects_state_directory_committed_as_a_symlink(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    base(repo, {"state/settings.json": "{}\n"})
    link(repo, ".openprogram", "state")
    hook, verified = staged_then_verified(repo, capsys)
    assert hook == (1, [("SS211", ".openprogram")])
    assert verified == (1, [("SS211", ".openprogram")])


def test_a_memory_directory_as_a_symlink_and_one_that_is_none(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    base(repo, {"old/topics/a.md": "a\n", "docs/a.md": "a\n"})
    link(repo, "memory/topics", "../old/topics")
    link(repo, "docs/topics", "../old/topics")  # no memory workspace's
    hook, verified = staged_then_verified(repo, capsys)
    assert hook == (1, [("SS211", "memory/topics")])
    assert verified == (1, [("SS211", "memory/topics")])


# --- the helpers never write through a symlinked directory -----------------------------------


@pytest.mark.parametrize("inside", [True, False], ids=["inside", "outside"])
def test_capture_manifest_refuses_a_symlinked_capture_directory(
    repo: GitRepo, capsys: pytest.CaptureFixture[str], tmp_path: Path, inside: bool
) -> None:
    real = repo.path / "elsewhere" if inside else tmp_path / "outside"
    real.mkdir()
    (real / "capture.json").write_text(build()[CAP + "capture.json"], encoding="utf-8")
    link(repo, "caps/c9", str(real))
    capsys.readouterr()
    code = main(["capture", "manifest", "caps/c9"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "caps/c9 " in err
    assert not (real / "manifest.json").exists()


def test_capture_output_refuses_a_symlinked_directory(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    files = build()
    base(repo, files)
    link(repo, "out", "caps")
    capsys.readouterr()
    code = main(["capture", "apply", CAP + "cycle-base.json", CAP + "cycle-delta.json",
                 "-o", "out/x.json"])  # fmt: skip
    assert code == 2 and "out is a symlink" in capsys.readouterr().err
    assert not (repo.path / "caps/x.json").exists()


def test_provenance_add_refuses_a_symlinked_directory(
    repo: GitRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    base(repo, {"data/a.bin": ARTIFACT, "real/keep": ""})
    link(repo, "sums", "real")
    capsys.readouterr()
    code = main(["provenance", "add", "data/a.bin", "--sums", "sums/SHA256SUMS"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "sums is a symlink" in err
    assert not (repo.path / "real/SHA256SUMS").exists()
    # into a real directory, it writes
    assert main(["provenance", "add", "data/a.bin", "--sums", "real/SHA256SUMS"]) == 0
