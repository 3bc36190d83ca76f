"""Every commit leaves the captures consistent: ``continuity verify`` reports at a commit the
errors ``check --all`` finds in its tree and not in its parent's, also in the files that pin
what the commit changed; and the rule that published captures never change compares a file
with its last good version. Real git repositories, the real CLI; ``check --all`` on each
commit's tree and its parent's is the oracle."""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from continuity_checks.checks.captures.family import CapturesFamily
from continuity_checks.core.config import Config
from tests.conftest import RunCLI
from tests.helpers.captures import CAP, DEC, build, capture_value, edit, pretty, sha
from tests.helpers.git import GitRepo, isolate_git
from tests.helpers.untouched import NoTree

Found = tuple[str, str, str]  # rule, path, commit


class History:
    """A repository whose first commit is the base of the range ``verify`` walks."""

    def __init__(self, root: Path, run_json: RunCLI, start: dict[str, str]) -> None:
        self.root = root
        self.run_json = run_json
        self.repo = GitRepo(root / "repo")
        self.base = self.repo.commit("start", {"README.md": "# project\n", **start})

    def verify(self) -> list[Found]:
        code, report = self.run_json(
            "verify", "--root", str(self.repo.path), "--range", f"{self.base}..HEAD"
        )
        self.report = report
        found = sorted((f["rule"], f["path"], f["commit"]) for f in report["findings"])
        assert code == (1 if found else 0)
        self.assert_oracle()
        return found

    def assert_oracle(self) -> None:
        """At each commit of the range, the findings that are not history rules (CX2xx) are
        the errors ``check --all`` finds in the commit's tree and not in its parent's."""
        commits = self.repo.git("rev-list", "--reverse", f"{self.base}..HEAD").split()
        for commit in commits:
            state = Counter(
                (f["rule"], f["path"], f["pointer"], f["message"])
                for f in self.report["findings"]
                if f["commit"] == commit and not f["rule"].startswith("CX2")
            )
            new = self.errors(commit) - self.errors(f"{commit}^")
            assert state == new, commit

    def errors(self, revision: str) -> Counter[tuple[str, str, str | None, str]]:
        """The errors of ``check --all`` on the tree of ``revision``, as the baseline tells
        findings apart (the message too: a pin that now names another digest is new)."""
        tree = self.root / "trees" / revision.replace("^", "-parent")
        if not tree.exists():
            tree.mkdir(parents=True)
            archive = subprocess.run(
                ["git", "archive", revision], cwd=self.repo.path, check=True, capture_output=True
            ).stdout
            subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
        _, report = self.run_json("check", "--all", "--root", str(tree))
        return Counter(
            (f["rule"], f["path"], f["pointer"], f["message"])
            for f in report["findings"]
            if f["severity"] == "error"
        )


@pytest.fixture
def history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_json: RunCLI) -> History:
    isolate_git(monkeypatch, tmp_path / "home")
    return History(tmp_path, run_json, build())


def at(commit: str, *found: tuple[str, str]) -> list[Found]:
    return sorted((rule, path, commit) for rule, path in found)


# --- what a commit leaves in the files that pin what it changed --------------------------------


def test_a_changed_capture_leaves_its_manifest_and_reader_wrong_at_that_commit(
    history: History,
) -> None:
    path = CAP + "capture.json"
    text = (history.repo.path / path).read_text()
    commit = history.repo.commit("edit the capture only", {path: edit(text, "turn 3", "turn 4")})
    assert history.verify() == at(
        commit,
        ("CX201", path),
        ("CX104", CAP + "manifest.json"),
        ("CX111", CAP + "first.reader.json"),
    )


def test_a_deleted_capture_leaves_its_pins_naming_nothing_at_that_commit(history: History) -> None:
    path = CAP + "capture.json"
    commit = history.repo.commit("delete the capture only", delete=[path])
    assert history.verify() == at(
        commit,
        ("CX202", path),
        ("CX103", CAP + "manifest.json"),
        ("CX103", CAP + "first.reader.json"),
    )


def test_a_deleted_delivery_leaves_its_decision_incomplete_at_that_commit(
    history: History,
) -> None:
    path = DEC + "delivery.json"
    commit = history.repo.commit("delete the delivery", delete=[path])
    assert history.verify() == at(commit, ("CX202", path), ("CX150", DEC + "projection.json"))


def test_an_incomplete_decision_is_not_new_where_its_delivery_link_starts_to_lead_somewhere(
    history: History,
) -> None:
    """A decision of a projection and a delivery.json that is a dangling symlink: CX150 (no
    manifest) is already there, so the commit that points the link at a file leaves only
    what the linked file holds."""
    link = history.repo.path / DEC / "delivery.json"
    link.unlink()
    link.symlink_to("missing.json")
    others = [p.name for p in (history.repo.path / DEC).iterdir() if p.name != "delivery.json"]
    gone = [DEC + name for name in others if name != "projection.json"]
    history.repo.commit("dangling delivery, no manifest", delete=gone)
    history.repo.write({"elsewhere.json": "{}\n"})
    link.unlink()
    link.symlink_to("../elsewhere.json")
    history.verify()  # the oracle: every state finding is new in check --all, and only those


def test_a_projection_that_loses_what_the_view_points_at_is_caught_at_the_view(
    history: History,
) -> None:
    """The necessary view's supporting_material_pointer resolves in the projection: a commit
    that changes only the projection breaks the view without touching it."""
    path = DEC + "projection.json"
    text = (history.repo.path / path).read_text()
    commit = history.repo.commit(
        "drop a review note", {path: edit(text, '"note": "the source link is lost"', '"n": 0')}
    )
    found = history.verify()
    assert ("CX144", DEC + "required-context.json", commit) in found
    assert ("CX201", path, commit) in found


def test_a_file_pinned_beside_a_capture_under_a_loopx_name_is_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_json: RunCLI
) -> None:
    """LoopX writes projection.json beside its capture.json, and the manifest pins it there,
    where the family does not claim the name: a commit that rewrites it leaves the pin wrong."""
    isolate_git(monkeypatch, tmp_path / "home")
    files = {k: v for k, v in build().items() if k.startswith(CAP)}
    projection = pretty({"view": "full"})
    manifest = json.loads(files[CAP + "manifest.json"])
    manifest["files"] = {"projection.json": {"sha256": sha(projection), "bytes": len(projection)}}
    files |= {CAP + "manifest.json": pretty(manifest), CAP + "projection.json": projection}
    history = History(tmp_path, run_json, files)
    commit = history.repo.commit(
        "rewrite the full view", {CAP + "projection.json": pretty({"view": "other"})}
    )
    assert history.verify() == at(commit, ("CX104", CAP + "manifest.json"))


def test_under_roots_any_file_a_reader_names_is_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_json: RunCLI
) -> None:
    """With ``[captures] roots`` every file of a root can be named: a reader that pins
    archive.json is wrong once a commit rewrites archive.json alone."""
    isolate_git(monkeypatch, tmp_path / "home")
    files = {k: v for k, v in build().items() if k.startswith(CAP)}
    archive = files[CAP + "capture.json"]
    reader = json.loads(files[CAP + "first.reader.json"])
    del reader["command"]
    files |= {
        CAP + "archive.json": archive,
        CAP + "old.reader.json": pretty({**reader, "capture_file": "archive.json"}),
        ".continuity.toml": '[captures]\nroots = ["caps/*"]\n',
    }
    history = History(tmp_path, run_json, files)
    commit = history.repo.commit(
        "rewrite the archive", {CAP + "archive.json": edit(archive, "turn 3", "turn 4")}
    )
    assert history.verify() == at(commit, ("CX111", CAP + "old.reader.json"))


@pytest.mark.parametrize(
    "path",
    [".deltalayer/changes/a.json", "src/app.py", "web/package.json", "caps/c1/notes.txt",
     "a/.dsh/project/manifest.json", "README.md"],
)  # fmt: skip
def test_a_path_no_capture_file_can_name_is_rejected_without_reading_the_tree(path: str) -> None:
    family = CapturesFamily(Config())
    assert list(family.dependents(path, NoTree(), False)) == []


def test_under_roots_a_path_outside_them_is_rejected_without_reading_the_tree() -> None:
    config = Config(options={"captures": {"roots": ["caps/*"]}})
    family = CapturesFamily(config)
    for path in ("src/manifest.json", "docs/capture.json", "other/decision-ab/delivery.json"):
        assert list(family.dependents(path, NoTree(), False)) == []


# --- the last good version --------------------------------------------------------------------


def _published(history: History) -> tuple[str, str]:
    path = CAP + "capture.json"
    return path, (history.repo.path / path).read_text()


def test_a_rewrite_after_a_truncation_is_held_against_the_published_bytes(
    history: History,
) -> None:
    path, published = _published(history)
    truncated = published[: len(published) // 2]
    broken = history.repo.commit("truncate the capture", {path: truncated})
    rewritten = edit(published, "turn 3", "turn 4")
    commit = history.repo.commit("write other content", {path: rewritten})
    found = history.verify()
    assert ("CX201", path, broken) in found
    assert ("CX201", path, commit) in found
    message = next(
        f["message"]
        for f in history.report["findings"]
        if (f["rule"], f["commit"]) == ("CX201", commit)
    )
    assert f"SHA-256 {sha(published)} became {sha(rewritten)}" in message


def test_a_rewrite_after_its_directory_was_truncated_is_caught(history: History) -> None:
    """The capture and its manifest truncated (B), then the manifest put back and the capture
    rewritten (C): the manifest's last good version names the capture, so C is caught."""
    path, published = _published(history)
    manifest = (history.repo.path / CAP / "manifest.json").read_text()
    history.repo.commit(
        "truncate both", {path: published[:10], CAP + "manifest.json": manifest[:10]}
    )
    commit = history.repo.commit(
        "restore the manifest, rewrite the capture",
        {path: edit(published, "turn 3", "turn 4"), CAP + "manifest.json": manifest},
    )
    assert ("CX201", path, commit) in history.verify()


def test_a_re_add_after_a_deletion_is_a_rewrite_of_the_published_files(history: History) -> None:
    names = [CAP + n for n in ("capture.json", "manifest.json", "first.reader.json")]
    deleted = history.repo.commit("drop the capture", delete=names)
    files = build(capture={**capture_value(), "goal_id": "g-2"})
    commit = history.repo.commit("a new capture in its place", {n: files[n] for n in names})
    assert history.verify() == sorted(
        [*(("CX202", n, deleted) for n in names), *(("CX201", n, commit) for n in names)]
    )


def test_putting_the_published_bytes_back_passes(history: History) -> None:
    path, published = _published(history)
    history.repo.commit("truncate the capture", {path: published[:10]})
    back = history.repo.commit("put it back", {path: published})
    assert [f for f in history.verify() if f[2] == back] == []


def test_a_capture_json_no_manifest_pins_is_not_judged_in_history_either(
    history: History,
) -> None:
    """A ``capture.json`` with no manifest beside it is not LoopX's, and file mode does not
    read it (a note says so): made a dangling symlink, it is no error at that commit either."""
    path = "notes/x/capture.json"
    history.repo.commit("a file of that name", {path: "{}\n"})
    (history.repo.path / path).unlink()
    (history.repo.path / path).symlink_to("missing.json")
    history.repo.commit("now a link to nothing")
    assert history.verify() == []
