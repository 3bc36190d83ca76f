"""CX2xx: published captures never change and are never deleted — ``continuity verify`` on real
git repositories, through the real CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import RunCLI
from tests.helpers.captures import CAP, DEC, build, edit
from tests.helpers.git import GitRepo, isolate_git


class Verify:
    """``continuity verify`` over everything after the repository's first commit."""

    def __init__(self, repo: GitRepo, run_json: RunCLI) -> None:
        self.repo = repo
        self.run_json = run_json
        self.base = repo.head()

    def __call__(self) -> list[tuple[str, str, str]]:
        code, report = self.run_json(
            "verify", "--root", str(self.repo.path), "--range", f"{self.base}..HEAD"
        )
        found = [(f["rule"], f["path"], f["commit"]) for f in report["findings"]]
        assert code == (1 if found else 0)
        self.report = report
        return found


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    isolate_git(monkeypatch, tmp_path / "home")
    repo = GitRepo(tmp_path / "repo")
    repo.commit("start", {"README.md": "# project\n"})
    return repo


@pytest.fixture
def verify(repo: GitRepo, run_json: RunCLI) -> Verify:
    checker = Verify(repo, run_json)
    repo.commit("publish a capture and a decision", build())
    return checker


def test_new_observations_in_new_directories_pass(repo: GitRepo, verify: Verify) -> None:
    files = build()
    repo.commit("a second observation", {k.replace("c1/", "c2/"): v for k, v in files.items()})
    repo.commit(
        "another reader beside the first",
        {CAP + "second.reader.json": files[CAP + "first.reader.json"]},
    )
    assert verify() == []


# what a rewrite or a deletion leaves broken in the files that pin the changed one: errors that
# `check --all` finds in the commit's tree and not in its parent's, so reported at the commit
# beside the history finding, each at its own file
_REWRITE_LEAVES = {
    CAP + "capture.json": [("CX104", CAP + "manifest.json"), ("CX111", CAP + "first.reader.json")],
    CAP + "manifest.json": [],
    CAP + "first.reader.json": [],
    DEC + "delivery.json": [],
    DEC + "projection.json": [("CX104", DEC + "manifest.json"), ("CX121", DEC + "delivery.json")],
    DEC + "cycle-delta.json": [("CX121", DEC + "delivery.json")],
}
_DELETION_LEAVES = {
    CAP + "capture.json": [("CX103", CAP + "manifest.json"), ("CX103", CAP + "first.reader.json")],
    CAP + "manifest.json": [],
    DEC + "required-context.json": [("CX103", DEC + "delivery.json"),
                                    ("CX103", DEC + "manifest.json")],
}  # fmt: skip


@pytest.mark.parametrize("path", list(_REWRITE_LEAVES))
def test_a_rewrite_is_caught_with_its_commit(repo: GitRepo, verify: Verify, path: str) -> None:
    text = (repo.path / path).read_text()
    sha = repo.commit("rewrite in place", {path: edit(text, "{", "{ ")})
    expected = [("CX201", path), *_REWRITE_LEAVES[path]]
    assert sorted(verify()) == sorted((rule, at, sha) for rule, at in expected)


@pytest.mark.parametrize("path", list(_DELETION_LEAVES))
def test_a_deletion_is_caught_with_its_commit(repo: GitRepo, verify: Verify, path: str) -> None:
    sha = repo.commit("delete", delete=[path])
    expected = [("CX202", path), *_DELETION_LEAVES[path]]
    assert sorted(verify()) == sorted((rule, at, sha) for rule, at in expected)


def test_a_deleted_directory_reports_every_published_file(repo: GitRepo, verify: Verify) -> None:
    sha = repo.commit(
        "drop the capture",
        delete=[CAP + n for n in ("capture.json", "manifest.json", "first.reader.json")],
    )
    assert sorted(verify()) == [
        ("CX202", CAP + n, sha) for n in ("capture.json", "first.reader.json", "manifest.json")
    ]


def test_what_is_not_a_published_capture_may_change(repo: GitRepo, verify: Verify) -> None:
    repo.commit("unrelated files", {"web/manifest.json": '{"name": "app"}\n', "misc/capture.json": "{}\n",
                                    "caps/c9/manifest.json": '{"name": "x"}\n'})  # fmt: skip
    repo.commit("they change", {"web/manifest.json": '{"name": "app2"}\n', "misc/capture.json": "[]\n",
                                "caps/c9/manifest.json": '{"name": "y"}\n'})  # fmt: skip
    repo.commit("and go", delete=["web/manifest.json", "misc/capture.json"])
    # a capture directory's cycle baseline and necessary view move on with the cycle
    repo.commit(
        "cycle files beside a capture",
        {CAP + "cycle-base.json": "{}\n", CAP + "required-context.json": "{}\n"},
    )
    repo.commit(
        "next cycle", {CAP + "cycle-base.json": '{"a": 1}\n', CAP + "required-context.json": "[]\n"}
    )
    assert verify() == []


def test_a_staged_rewrite_is_caught_before_the_commit(
    repo: GitRepo, verify: Verify, monkeypatch: pytest.MonkeyPatch, run_json: RunCLI
) -> None:
    """The commit hook (``continuity check --staged``) applies CX201 to what is staged."""
    path = CAP + "capture.json"
    repo.write({path: edit((repo.path / path).read_text(), "turn 3", "turn 4")})
    repo.git("add", "-A")
    monkeypatch.chdir(repo.path)
    code, report = run_json("check", "--staged", path)
    assert code == 1
    found = {(f["rule"], f["path"], f["commit"]) for f in report["findings"]}
    assert ("CX201", path, "staged") in found
    assert ("CX104", CAP + "manifest.json", None) in found  # and the file checks say why


def _symlinked_capture(repo: GitRepo, target: str, extra: dict[str, str]) -> str:
    """Commit a new capture directory caps/c3/ whose capture.json is a symlink to ``target``."""
    files = {k.replace("c1/", "c3/"): v for k, v in build().items() if k.startswith(CAP)}
    capture = files.pop("caps/c3/capture.json")
    repo.write({**files, **{k: capture for k in extra}})
    (repo.path / "caps/c3/capture.json").symlink_to(target)
    return repo.commit("a capture by symlink")


def test_a_committed_symlink_out_of_the_directory_is_cx203_at_the_link(
    repo: GitRepo, verify: Verify
) -> None:
    # CX203 at the link; the state the commit leaves is also false at each file that names the
    # capture through it (CX102, as check --all reports there), as for a rewritten capture
    sha = _symlinked_capture(repo, "../c2/capture.json", {"caps/c2/capture.json": ""})
    assert verify() == [
        ("CX203", "caps/c3/capture.json", sha),
        ("CX102", "caps/c3/first.reader.json", sha),
        ("CX102", "caps/c3/manifest.json", sha),
    ]
    [finding] = [f for f in verify.report["findings"] if f["rule"] == "CX203"]
    assert finding["message"] == (
        'expected a regular file, found a symlink to "caps/c2/capture.json"'
    )


def test_a_committed_symlink_inside_the_directory_is_cx203_too(
    repo: GitRepo, verify: Verify
) -> None:
    # its bytes live in capture-v1.json, whose later edit changes no capture path
    sha = _symlinked_capture(repo, "capture-v1.json", {"caps/c3/capture-v1.json": ""})
    assert verify() == [("CX203", "caps/c3/capture.json", sha)]


def test_a_name_leading_through_a_symlink_committed_earlier_is_cx102(
    repo: GitRepo, verify: Verify
) -> None:
    _symlinked_capture(repo, "../c2/capture.json", {"caps/c2/capture.json": ""})
    path = "caps/c3/first.reader.json"
    sha = repo.commit("a reader", {path: (repo.path / path).read_text() + " "})
    assert ("CX102", path, sha) in verify()
