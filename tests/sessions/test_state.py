"""The state a commit leaves, for the sessions family, through ``continuity verify`` on real
repositories: an error the commit makes in a file it does not touch is reported at that
commit (``SessionsFamily.dependents``), a session repository's commit is judged like a
checkout of it, and the history rules compare a file with its last good version."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from continuity_checks.checks.sessions.family import SessionsFamily
from continuity_checks.core.config import Config
from continuity_checks.core.findings import Severity
from continuity_checks.core.snapshot import WorkTree
from tests.conftest import EXAMPLES, RunCLI
from tests.helpers.git import GitRepo, isolate_git
from tests.helpers.sessions import (
    ARCHIVE,
    ARCHIVE_TEXT,
    SESSION,
    SYNTHETIC,
    frame,
    rebuild_corpus,
    state,
)

PLAIN = ["-c", "commit.gpgsign=false"]
SESSION_A = ".openprogram/sessions/local_3f9a1c0d2e"
#: OpenProgram's identity in a session repository, as git reads it from the environment
_IDENTITY = {
    f"GIT_{role}_{key}": value
    for role in ("AUTHOR", "COMMITTER")
    for key, value in (("NAME", "OpenProgram"), ("EMAIL", "openprogram@local"))
}
STORED = ARCHIVE.removeprefix(".openprogram/")  # in a repository of the state directory


@pytest.fixture
def corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    assert SYNTHETIC.is_dir(), f"the OpenProgram corpus is missing: {SYNTHETIC}"
    isolate_git(monkeypatch, tmp_path / "home")
    return rebuild_corpus(tmp_path / "corpus")


def _git(repo: Path, *args: str) -> str:
    result = subprocess.run(["git", *PLAIN, *args], cwd=repo, check=True, capture_output=True)
    return result.stdout.decode("utf-8", "replace").strip()


def _session(corpus: Path, rel: str = SESSION_A) -> Path:
    """The corpus session repository at ``rel``, its post-commit metadata writes put aside
    (invariant 35: the work tree may be ahead of HEAD)."""
    repo = corpus / rel
    _git(repo, "stash", "-q", "--include-untracked")
    return repo


def _commit(repo: Path, subject: str, *, delete: tuple[str, ...] = ()) -> str:
    """Commit what is staged, and the deletion of ``delete``, as OpenProgram does."""
    for rel in delete:
        _git(repo, "rm", "-q", "--", rel)
    env = {**os.environ, **_IDENTITY}
    subprocess.run(["git", *PLAIN, "commit", "-q", "-m", subject], cwd=repo, check=True, env=env)
    return _git(repo, "rev-parse", "HEAD")


def _verify(
    run_json: RunCLI, root: Path, revisions: str = "HEAD"
) -> tuple[int, list[tuple[str, str, str]]]:
    code, report = run_json("verify", "--range", revisions, "--root", str(root))
    return code, sorted((f["rule"], f["path"], f["commit"]) for f in report["findings"])


def test_deleting_a_node_another_names_as_predecessor_is_caught_at_that_commit(
    corpus: Path, run_json: RunCLI
) -> None:
    """The reply's file is untouched; the commit that deletes the user node it answers leaves
    its predecessor dangling (SS117), which ``check --all`` on the commit's tree reports."""
    session = _session(corpus)
    sha = _commit(session, "rewind", delete=("history/0005-u-1b87267a.json",))
    assert _verify(run_json, session) == (
        1,
        [("SS117", "history/0006-l-1b87267a_reply.json", sha)],
    )
    _, report = run_json("check", "--all", "--root", str(session))
    assert [(f["rule"], f["path"]) for f in report["findings"] if f["severity"] == "error"] == [
        ("SS117", "history/0006-l-1b87267a_reply.json")
    ]


def test_the_commit_hook_catches_deleting_a_node_another_names_as_predecessor(
    corpus: Path, run_json: RunCLI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``check --staged`` judges the commit being made as ``verify`` judges a commit: the staged
    deletion leaves the reply's predecessor dangling (SS117) in a file that is not staged."""
    session = _session(corpus)
    _git(session, "rm", "-q", "--", "history/0005-u-1b87267a.json")
    for variable, value in _IDENTITY.items():
        monkeypatch.setenv(variable, value)
    monkeypatch.chdir(session)
    code, report = run_json("check", "--staged")
    found = [(f["rule"], f["path"], f["commit"]) for f in report["findings"]]
    assert (code, found) == (1, [("SS117", "history/0006-l-1b87267a_reply.json", "staged")])


def test_deleting_the_head_node_is_caught_in_the_untouched_meta_json(
    corpus: Path, run_json: RunCLI
) -> None:
    """meta.json's head_id names a node the commit deletes (with the tool node it called):
    SS105 at meta.json, which the commit does not touch."""
    session = _session(corpus)
    sha = _commit(
        session,
        "rewind",
        delete=(
            "history/0006-l-1b87267a_reply.json",
            "history/0007-c-1b87267a_reply_t_toolu_a6983be04373df535b914508.json",
        ),
    )
    assert _verify(run_json, session) == (1, [("SS105", "meta.json", sha)])


def test_a_later_commit_does_not_report_the_dangling_edge_again(
    corpus: Path, run_json: RunCLI
) -> None:
    """The error is the deleting commit's: a later commit of the same session that leaves it as
    it is (a change of meta.json) is not reported for it."""
    session = _session(corpus)
    sha = _commit(session, "rewind", delete=("history/0005-u-1b87267a.json",))
    meta = json.loads((session / "meta.json").read_text())
    meta["title"] = "renamed"
    (session / "meta.json").write_text(json.dumps(meta))
    _git(session, "add", "meta.json")
    _commit(session, "rewind")
    assert _verify(run_json, session) == (
        1,
        [("SS117", "history/0006-l-1b87267a_reply.json", sha)],
    )


@pytest.mark.parametrize("raised", [False, True])
def test_a_raised_registry_rule_makes_the_index_a_dependent_of_meta_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_json: RunCLI, raised: bool
) -> None:
    """The registries compare their entries with each session's meta.json in warnings (SS129):
    where the configuration makes SS129 an error, a commit that changes only the title in
    meta.json leaves an error in the untouched index.json, as ``check --all`` says; by default
    it leaves none."""
    isolate_git(monkeypatch, tmp_path / "home")
    files = _state_repository()
    if raised:
        files[".continuity.toml"] = '[rules]\nSS129 = "error"\n'
    repo = GitRepo(tmp_path / "alice")
    repo.commit("state", files)
    meta_path = SESSION.removeprefix(".openprogram/") + "meta.json"
    meta = json.loads(files[meta_path])
    meta["title"] = "another title"
    sha = repo.commit("retitle", {meta_path: json.dumps(meta)})
    index = "sessions/index.json"
    _, report = run_json("check", "--all", "--root", str(repo.path))
    errors = [(f["rule"], f["path"]) for f in report["findings"] if f["severity"] == "error"]
    assert (("SS129", index) in errors) is raised
    expected = (1, [("SS129", index, sha)]) if raised else (0, [])
    assert _verify(run_json, repo.path, "HEAD~1..HEAD") == expected


def _state_repository() -> dict[str, str | bytes]:
    """A state directory kept in a git repository of its own (``~/.openprogram`` tracked): the
    helpers' home directory's ``.openprogram/``, without its session's ``.git`` (git tracks
    none; the session's SS102 is in every commit's tree, so no commit brings it)."""
    return {
        path.removeprefix(".openprogram/"): content
        for path, content in state().items()
        if path.startswith(".openprogram/") and "/.git/" not in path
    }


def test_dependents_reject_other_paths_without_reading_the_tree(tmp_path: Path) -> None:
    """Paths of other families, and session paths no check of another file reads, cost a string
    test: the tree is never asked."""

    class Untouchable(WorkTree):
        def __getattribute__(self, name: str) -> object:
            if name in ("read", "list", "exists", "is_dir", "resolve", "find"):
                raise AssertionError(f"the tree was asked: {name}")
            return super().__getattribute__(name)

    family = SessionsFamily(Config())
    tree = Untouchable(tmp_path, 1 << 20)
    for path in (".deltalayer/changes/a.json", "src/app.py", "README.md", ".dsh/project/x.json"):
        assert list(family.dependents(path, tree, False)) == []
    assert Config().severity.get("SS129") is not Severity.ERROR


def _archive_steps() -> tuple[str, str, str]:
    """A v2 archive (A), the same truncated inside its last frame (B: incomplete, SS139), and
    B completed with another reply than A's (C: B is a prefix of C, A is not)."""
    good = ARCHIVE_TEXT
    reply = frame("1a2b3c4d_reply", ["Done."], "runtime%2Fagent%252Fmain")
    other = frame("1a2b3c4d_reply", ["Not done."], "runtime%2Fagent%252Fmain")
    assert good.endswith(reply)
    cut = reply.index("<!-- record-lines")
    assert other[:cut] == reply[:cut]
    truncated = good[: len(good) - len(reply) + cut]
    return good, truncated, truncated + other[cut:]


def test_an_archive_is_compared_with_its_last_good_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_json: RunCLI
) -> None:
    """[54] A v2 archive committed (A), truncated (B: broken, and not a prefix of A), then
    rewritten so that B is a prefix of it but A is not (C): SS210 at C against A, not passed
    against the broken B; B's own errors at B."""
    isolate_git(monkeypatch, tmp_path / "home")
    good, truncated, other = _archive_steps()
    repo = GitRepo(tmp_path / "alice")
    repo.commit("archive", {**_state_repository(), STORED: good})
    b = repo.commit("truncated", {STORED: truncated})
    c = repo.commit("rewritten", {STORED: other})
    code, found = _verify(run_json, repo.path, "HEAD~2..HEAD")
    assert (code, found) == (
        1,
        sorted([("SS139", STORED, b), ("SS210", STORED, b), ("SS210", STORED, c)]),
    )


def test_an_archive_restored_to_its_last_good_version_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_json: RunCLI
) -> None:
    """The cure of a truncated archive is to put its bytes back: nothing to report for it."""
    isolate_git(monkeypatch, tmp_path / "home")
    good, truncated, _ = _archive_steps()
    repo = GitRepo(tmp_path / "alice")
    repo.commit("archive", {**_state_repository(), STORED: good})
    b = repo.commit("truncated", {STORED: truncated})
    repo.commit("restored", {STORED: good})
    assert _verify(run_json, repo.path, "HEAD~2..HEAD") == (
        1,
        [("SS139", STORED, b), ("SS210", STORED, b)],
    )


def test_a_node_deleted_and_brought_back_is_judged_as_new_to_the_session(
    corpus: Path, run_json: RunCLI
) -> None:
    """[33] A node deleted (its seq then taken by another node) and brought back, its metadata
    rewritten, by a later commit: the engine calls the return a modification of its last good
    version, and the node's seq must still be free (SS206; the state says SS114 at the other
    node). Deleting it left the reply's predecessor dangling (SS117)."""
    session = _session(corpus)
    user = "history/0005-u-1b87267a.json"
    value = json.loads((session / user).read_bytes())
    taker = "history/0005-u-99999999.json"
    (session / taker).write_text(json.dumps({**value, "id": "99999999", "output": "Other"}))
    _git(session, "add", taker)
    first = _commit(session, "rewind", delete=(user,))
    (session / user).write_text(json.dumps({**value, "metadata": {"rewound": True}}))
    _git(session, "add", user)
    sha = _commit(session, "rewind")
    assert _verify(run_json, session, "HEAD~2..HEAD") == (
        1,
        [
            ("SS114", taker, sha),
            ("SS117", "history/0006-l-1b87267a_reply.json", first),
            ("SS206", user, sha),
        ],
    )


def test_deleting_the_last_registry_makes_the_state_directory_a_project_at_that_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_json: RunCLI
) -> None:
    """The registries tell a state directory from a project's ``.openprogram/``: the commit
    that deletes the last of them leaves a project holding sessions without its .gitignore
    (SS138, in a file the commit never touched), in verify and in the commit hook."""
    isolate_git(monkeypatch, tmp_path / "home")
    r = GitRepo(tmp_path / "repo")
    shutil.copytree(EXAMPLES / "openprogram" / ".openprogram", r.path / ".openprogram")
    base = r.commit("home state", {".continuity.toml": '[rules]\nSS102 = "off"\n'})
    r.commit("index gone", delete=[".openprogram/sessions/index.json",
                                   ".openprogram/sessions/locations.json"])  # fmt: skip
    r.git("rm", "-q", "--", ".openprogram/projects/projects.json")
    code, staged = run_json("check", "--staged", "--root", str(r.path))
    assert (code, [(f["rule"], f["path"]) for f in staged["findings"] if f["severity"] == "error"]) \
        == (1, [("SS138", ".openprogram/.gitignore")])  # fmt: skip
    last = r.commit("projects gone")
    code, found = _verify(run_json, r.path, f"{base}..HEAD")
    assert code == 1 and ("SS138", ".openprogram/.gitignore", last) in found, found


def test_a_topic_linking_through_a_symlinked_archive_does_not_change_with_its_target(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_json: RunCLI
) -> None:
    """An archive committed as a symlink (SS211) is judged as a symlink in the topics that link
    to it, and not by what it leads to: a later commit that changes the file it leads to, or
    makes it appear, brings no new error, as ``check --all`` and ``verify`` both say."""
    isolate_git(monkeypatch, tmp_path / "home")
    r = GitRepo(tmp_path / "repo")
    shutil.copytree(EXAMPLES / "openprogram" / ".openprogram", r.path / ".openprogram")
    archive = ".openprogram/memory/sources/openprogram/_v2/local_0a1b2c3d4e.md"
    text = (r.path / archive).read_text()
    base = r.commit("home state", {".continuity.toml": '[rules]\nSS102 = "off"\n'})
    (r.path / archive).unlink()
    (r.path / archive).symlink_to("../../../../../elsewhere.md")
    linked = r.commit("archive as a link", {"elsewhere.md": text})
    changed = r.commit("what it leads to changes", {"elsewhere.md": "nothing\n"})
    (r.path / "elsewhere.md").unlink()
    r.git("rm", "-q", "--cached", "elsewhere.md")
    (r.path / "source.md").write_text(text)
    (r.path / archive).unlink()
    (r.path / archive).symlink_to("../../../../../later.md")
    dangling = r.commit("linked to nothing yet", {"source.md": text})
    appears = r.commit("what it leads to appears", {"later.md": text})

    def errors(sha: str) -> set[tuple[str, str, str]]:
        r.git("checkout", "-q", sha)
        _, report = run_json("check", "--all", "--root", str(r.path))
        return {(f["rule"], f["path"], f["message"]) for f in report["findings"]
                if f["severity"] == "error"}  # fmt: skip

    assert errors(changed) == errors(linked) != errors(base)
    assert errors(appears) <= errors(dangling)  # nothing new where the target appears
    r.git("checkout", "-q", "main")
    code, found = _verify(run_json, r.path, f"{base}..HEAD")
    assert code == 1 and {commit for _, _, commit in found} <= {linked, dangling}, found
