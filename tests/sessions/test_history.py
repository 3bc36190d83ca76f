"""SS2xx history rules: on CommitContext objects built by hand from two directory snapshots (one
bad and one passing commit per rule), and through ``continuity verify`` on the synthetic corpus's
real session and project repositories (rebuilt from their bundles) and mutations of them."""

from __future__ import annotations

import json
import random
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from continuity_checks.checks import all_rules
from continuity_checks.checks.sessions.family import SessionsFamily
from continuity_checks.checks.sessions.history import SHADOW_BASELINE
from continuity_checks.core.config import Config
from continuity_checks.core.family import Change, Commit, CommitContext
from continuity_checks.core.git.log import RawChange
from continuity_checks.core.snapshot import WorkTree
from tests.conftest import RunCLI, Symlink, write_tree
from tests.helpers.sessions import SYNTHETIC, rebuild_corpus, session_nodes

LIMIT = 1 << 24
OP = {"author_name": "OpenProgram", "author_email": "openprogram@local",
      "committer_name": "OpenProgram", "committer_email": "openprogram@local"}  # fmt: skip
AGENT = {"author_name": "OpenProgram Agent", "author_email": "agent@openprogram.local",
         "committer_name": "OpenProgram Agent", "committer_email": "agent@openprogram.local"}  # fmt: skip


def context(
    tmp: Path,
    before: Mapping[str, str | bytes],
    after: Mapping[str, str | bytes],
    subject: str,
    *,
    parents: tuple[str, ...] = ("p" * 40,),
    fields: Mapping[str, str] = OP,
    sha: str = "c" * 40,
) -> tuple[SessionsFamily, CommitContext]:
    family = SessionsFamily(Config())
    return family, make(tmp, family, before, after, subject, parents, fields, sha)


def make(
    tmp: Path,
    family: SessionsFamily,
    before: Mapping[str, str | bytes],
    after: Mapping[str, str | bytes],
    subject: str,
    parents: tuple[str, ...],
    fields: Mapping[str, str],
    sha: str,
) -> CommitContext:
    """The context the engine builds: the claimed changes between two trees, both snapshots."""
    left, right = tmp / f"{sha}-before", tmp / f"{sha}-after"
    left.mkdir(parents=True)
    right.mkdir(parents=True)
    write_tree(left, before)
    write_tree(right, after)
    blobs: dict[str, bytes] = {}

    def blob(side: str, path: str, content: str | bytes | None) -> str | None:
        if content is None:
            return None
        blobs[f"{side}:{path}"] = content.encode() if isinstance(content, str) else content
        return f"{side}:{path}"

    changes, paths = [], []
    for path in sorted(set(before) | set(after)):
        kind = family.claims(path)
        old, new = before.get(path), after.get(path)
        if old == new:
            continue
        status = "A" if old is None else "D" if new is None else "M"
        old_blob, new_blob = blob("b", path, old), blob("a", path, new)
        modes = ("" if old is None else _mode(old), "" if new is None else _mode(new))
        paths.append(RawChange(path, status, old_blob, new_blob, *modes))
        if kind is not None:
            changes.append(Change(path, kind, status, old_blob, new_blob, blobs.get, modes[1]))
    commit = Commit(sha, parents, subject, {}, fields)
    return CommitContext(commit, changes, WorkTree(left, LIMIT), WorkTree(right, LIMIT), paths)


def _mode(content: str | bytes) -> str:
    """git's mode of a tree entry holding ``content``: a :class:`Symlink` is a link."""
    return "120000" if isinstance(content, Symlink) else "100644"


def rules(findings: Any) -> list[str]:
    return sorted(f.rule for f in findings)


NODES = session_nodes()
TURN1 = {p.replace(".openprogram/sessions/local_0a1b2c3d4e/", ""): t for p, t in NODES.items()}
META = json.dumps({"id": "s", "head_id": "1a2b3c4d_reply"})
AFTER1 = {"meta.json": META, "workdir/.gitkeep": "", **TURN1}
USER = "history/0001-u-1a2b3c4d.json"


def turn2(reply: bool = True, **metadata: Any) -> dict[str, str]:
    """A second turn: its user node and (unless ``reply`` is false) the llm node answering it."""
    user = json.loads(TURN1[USER])
    user.update(id="2b", seq=4, predecessor="1a2b3c4d_reply")
    user["metadata"].update(metadata)
    files = {**AFTER1, "history/0004-u-2b.json": json.dumps(user)}
    if reply:
        answer = json.loads(TURN1["history/0002-l-1a2b3c4d_reply.json"])
        answer.update(id="2b_reply", seq=5, predecessor="2b")
        answer["metadata"]["predecessor"] = "2b"
        files["history/0005-l-2b_reply.json"] = json.dumps(answer)
    return files


# (case id, before, after, subject, parents, fields, expected rules)
CASES: list[tuple[str, dict[str, Any], dict[str, Any], str, tuple[str, ...], Mapping[str, str], list[str]]] = [
    ("root session init", {}, {}, "session init", (), OP, []),
    ("SS201 root not session init", {}, AFTER1, "initial", (), OP, ["SS201"]),
    ("SS201 merge", AFTER1, turn2(), "turn: next", ("a" * 40, "b" * 40), OP, ["SS201"]),
    ("first turn", {}, AFTER1, "turn: Fix the crash", ("p" * 40,), OP, []),
    ("SS202 empty commit", AFTER1, AFTER1, "job: j1 done", ("p" * 40,), OP, ["SS202"]),
    ("job commit with a change", AFTER1, {**AFTER1, "jobs.json": "{}"}, "job: j1 done", ("p" * 40,), OP, []),
    ("SS203 identity", {}, AFTER1, "turn: Fix the crash", ("p" * 40,),
     {**OP, "committer_name": "Alice", "committer_email": "alice@example.com"}, ["SS203"]),
    ("SS204 subject", AFTER1, {**AFTER1, "meta.json": META + " "}, "wip", ("p" * 40,), OP, ["SS204"]),
    ("SS204 subject too long", AFTER1, {**AFTER1, "meta.json": META + " "}, "rewind " + "x" * 70,
     ("p" * 40,), OP, ["SS204"]),
    ("rewind", AFTER1, {**AFTER1, "meta.json": META + " "}, "rewind", ("p" * 40,), OP, []),
    ("SS205 invalid node committed", {}, {**AFTER1, USER: '{"id": "1a2b3c4d"}'}, "turn: x", ("p" * 40,),
     OP, ["SS205"]),
    ("SS205 meta committed broken", AFTER1, {**AFTER1, "meta.json": "{"}, "rewind", ("p" * 40,), OP,
     ["SS205"]),
    ("SS206 renamed node", AFTER1, {**{k: v for k, v in AFTER1.items() if k != USER},
                                    "history/0011-u-1a2b3c4d.json": json.dumps({**json.loads(TURN1[USER]), "seq": 11})},
     "rewind", ("p" * 40,), OP, ["SS206"]),
    ("SS206 seq reused", AFTER1, {**AFTER1, "history/0001-u-other.json": json.dumps(
        {**json.loads(TURN1[USER]), "id": "other"})}, "rewind", ("p" * 40,), OP, ["SS206"]),
    ("seq reused after deletion", AFTER1, {**{k: v for k, v in AFTER1.items() if k != USER},
                                           "history/0001-u-other.json": json.dumps({**json.loads(TURN1[USER]), "id": "other"})},
     "rewind", ("p" * 40,), OP, []),
    ("SS207 two turns in one commit", {}, turn2(), "turn: Fix the crash", ("p" * 40,), OP, ["SS207"]),
    ("second turn", AFTER1, turn2(), "turn (error): next", ("p" * 40,), OP, []),
    # [34] the turn a turn commit completes has its llm reply (an error turn has one too)
    ("SS207 turn commit without a reply", AFTER1, turn2(reply=False), "turn: next", ("p" * 40,), OP,
     ["SS207"]),
    # [34] runtime turns (job follow-ups, merge turns, display runtime) are not user turns
    ("runtime turn is not a user turn", AFTER1, turn2(source="job_followup"), "job: j1 done",
     ("p" * 40,), OP, []),
    ("SS211 meta.json as a symlink, not also SS205", AFTER1,
     {**AFTER1, "meta.json": Symlink("workdir/meta.json"), "workdir/meta.json": META}, "rewind", ("p" * 40,),
     OP, ["SS211"]),
    ("SS211 history/ as a symlink, its nodes gone with it", AFTER1,
     {**{k: v for k, v in AFTER1.items() if not k.startswith("history/")}, "history": Symlink("workdir"),
      **{k.replace("history/", "workdir/"): v for k, v in TURN1.items()}}, "rewind", ("p" * 40,), OP,
     ["SS211"]),
    ("a symlink in the session's work directory", AFTER1,
     {**AFTER1, "workdir/link": Symlink(".gitkeep")}, "rewind", ("p" * 40,), OP, []),
]  # fmt: skip


@pytest.mark.parametrize(
    ("case", "before", "after", "subject", "parents", "fields", "expected"), CASES, ids=[c[0] for c in CASES]
)  # fmt: skip
def test_session_commit(
    tmp_path: Path,
    case: str,
    before: dict[str, Any],
    after: dict[str, Any],
    subject: str,
    parents: tuple[str, ...],
    fields: Mapping[str, str],
    expected: list[str],
) -> None:
    family, ctx = context(tmp_path, before, after, subject, parents=parents, fields=fields)
    family.history.session_repo = True  # the repository's root commit said so
    findings = list(family.check_commit(ctx))
    assert rules(findings) == expected, (case, findings)
    assert all(f.commit == ctx.commit.sha for f in findings)


PROJECT_CASES: list[tuple[str, dict[str, Any], dict[str, Any], str, tuple[str, ...], Mapping[str, str], list[str]]] = [
    ("agent baseline first", {}, {"README.md": "x"}, "openprogram: baseline (pre-existing files)", (), AGENT, []),
    ("SS209 baseline later", {"a": "1"}, {"a": "2"}, "openprogram: baseline (pre-existing files)",
     ("p" * 40,), AGENT, ["SS209"]),
    ("agent turn", {"a": "1"}, {"a": "2"}, "[agent local_c4] Document the port", ("p" * 40,), AGENT, []),
    ("SS209 agent free text", {"a": "1"}, {"a": "2"}, "fix things", ("p" * 40,), AGENT, ["SS209"]),
    ("user free text", {"a": "1"}, {"a": "2"}, "fix things", ("p" * 40,),
     {"author_name": "Alice", "author_email": "a@x", "committer_name": "Alice", "committer_email": "a@x"}, []),
    ("archive appended", {"memory/sources/openprogram/_v2/s.md": "a\n"},
     {"memory/sources/openprogram/_v2/s.md": "a\nb\n"}, "memory", ("p" * 40,), OP, []),
    ("SS210 archive rewritten", {"memory/sources/openprogram/_v2/s.md": "a\nb\n"},
     {"memory/sources/openprogram/_v2/s.md": "a\nc\n"}, "memory", ("p" * 40,), OP, ["SS210"]),
    ("SS210 archive deleted", {"memory/sources/openprogram/_v2/s.md": "a\n", "x": "1"}, {"x": "1"},
     "memory", ("p" * 40,), OP, ["SS210"]),
    ("SS208 adds .openprogram", {"a": "1"}, {"a": "1", ".openprogram/.gitignore": "*\n"}, "[agent local_c4] x",
     ("p" * 40,), AGENT, ["SS208"]),
    # [54] legacy archives are claimed by no family: judged from CommitContext.paths
    ("SS210 legacy archive changed", {"memory/sources/D3.md": "a\n"}, {"memory/sources/D3.md": "a\nb\n"},
     "memory", ("p" * 40,), OP, ["SS210"]),
    ("legacy archive added", {"x": "1"}, {"x": "1", "memory/sources/D3.md": "a\n"}, "memory",
     ("p" * 40,), OP, []),
    # a repository that is the memory workspace itself: sources/ at its top
    ("SS210 rewritten in a workspace repository",
     {".scriptorium/workspace-id": "w-0a1b2c3d\n", "sources/openprogram/_v2/s.md": "a\nb\n"},
     {".scriptorium/workspace-id": "w-0a1b2c3d\n", "sources/openprogram/_v2/s.md": "a\nc\n"},
     "memory", ("p" * 40,), OP, ["SS210"]),
    ("appended in a workspace repository",
     {".scriptorium/workspace-id": "w-0a1b2c3d\n", "sources/openprogram/_v2/s.md": "a\n"},
     {".scriptorium/workspace-id": "w-0a1b2c3d\n", "sources/openprogram/_v2/s.md": "a\nb\n"},
     "memory", ("p" * 40,), OP, []),
    ("sources/ of a repository that is no workspace", {"sources/x.md": "a\n"},
     {"sources/x.md": "b\n"}, "docs", ("p" * 40,), OP, []),
    # a file no family claims, only in CommitContext.paths
    ("SS208 adds only settings.json", {"a": "1"}, {"a": "1", ".openprogram/settings.json": "{}"},
     "settings", ("p" * 40,), OP, ["SS208"]),
    ("SS208 changes settings.json", {".openprogram/settings.json": "{}"},
     {".openprogram/settings.json": '{"x": 1}'}, "settings", ("p" * 40,), OP, ["SS208"]),
    ("removing .openprogram", {"a": "1", ".openprogram/settings.json": "{}"}, {"a": "1"},
     "untrack state", ("p" * 40,), OP, []),
    ("a nested .openprogram is no project state", {"a": "1"},
     {"a": "1", "docs/.openprogram/settings.json": "{}"}, "docs", ("p" * 40,), OP, []),
    ("SS211 .openprogram as a symlink", {"a": "1"},
     {"a": "1", "state/settings.json": "{}", ".openprogram": Symlink("state")}, "state", ("p" * 40,), OP,
     ["SS211"]),
    ("SS208, not SS211, for a symlink under .openprogram/", {"a": "1"},
     {"a": "1", ".openprogram/sessions/index.json": Symlink("../../a")}, "state", ("p" * 40,), OP,
     ["SS208"]),
    ("SS211 a memory workspace's sources as a symlink", {"a": "1"},
     {"a": "1", "old/x.md": "x", "memory/sources": Symlink("../old")}, "memory", ("p" * 40,), OP,
     ["SS211"]),
    ("SS211 a session directory of a registry as a symlink",
     {"sessions/index.json": "{}", "sessions/s1/meta.json": META},
     {"sessions/index.json": "{}", "old/s1/meta.json": META, "sessions/s1": Symlink("../old/s1")},
     "move", ("p" * 40,), OP, ["SS211"]),
    ("symlinks OpenProgram keeps nothing at", {"a": "1"},
     {"a": "1", "docs/history": Symlink("../a"), "sessions": Symlink("a"), "projects": Symlink("a")},
     "docs", ("p" * 40,), OP, []),
]  # fmt: skip


@pytest.mark.parametrize(
    ("case", "before", "after", "subject", "parents", "fields", "expected"), PROJECT_CASES,
    ids=[c[0] for c in PROJECT_CASES],
)  # fmt: skip
def test_project_commit(
    tmp_path: Path,
    case: str,
    before: dict[str, Any],
    after: dict[str, Any],
    subject: str,
    parents: tuple[str, ...],
    fields: Mapping[str, str],
    expected: list[str],
) -> None:
    family, ctx = context(tmp_path, before, after, subject, parents=parents, fields=fields)
    assert rules(family.check_commit(ctx)) == expected, case
    assert family.history.session_repo is False


def test_one_commit_per_turn_across_commits(tmp_path: Path) -> None:
    """[34] a turn's first nodes may be carried by another commit (a job finishing mid-turn):
    the turn commit that completes it passes. Two answered turns with no turn commit between
    are caught at the commit that leaves the second one."""
    family = SessionsFamily(Config())
    reply = "history/0002-l-1a2b3c4d_reply.json"
    base = {"meta.json": META, "history/0000-u-ROOT.json": TURN1["history/0000-u-ROOT.json"]}
    user2 = {**json.loads(TURN1[USER]), "id": "2b", "seq": 4, "predecessor": "1a2b3c4d_reply"}
    reply2 = {**json.loads(TURN1[reply]), "id": "2b_reply", "seq": 5, "predecessor": "2b"}
    reply2["metadata"] = {**reply2["metadata"], "predecessor": "2b"}
    second = {"history/0004-u-2b.json": json.dumps(user2),
              "history/0005-l-2b_reply.json": json.dumps(reply2)}  # fmt: skip
    steps: list[tuple[dict[str, str], dict[str, str], str, list[str]]] = [
        ({}, {}, "session init", []),
        ({}, {**base, USER: TURN1[USER]}, "job: j1 done", []),  # the turn's user node, early
        ({**base, USER: TURN1[USER]}, AFTER1, "turn: Fix the crash", []),  # its reply: one turn
        (AFTER1, {**AFTER1, **second}, "job: j2 done", []),  # a whole turn, not yet committed
        ({**AFTER1, **second}, {**AFTER1, **second, "jobs.json": "{}"}, "job: j3 done", []),
    ]  # fmt: skip
    third = {k.replace("2b", "3c").replace("0004", "0006").replace("0005", "0007"):
             v.replace('"2b', '"3c').replace('"seq": 4', '"seq": 6').replace('"seq": 5', '"seq": 7')
             for k, v in second.items()}  # fmt: skip
    third = {k: v.replace('"1a2b3c4d_reply"', '"2b_reply"') for k, v in third.items()}
    steps.append(({**AFTER1, **second}, {**AFTER1, **second, **third}, "job: j4 done", ["SS207"]))
    for number, (before, after, subject, expected) in enumerate(steps):
        parents = () if number == 0 else ("p" * 40,)
        ctx = make(tmp_path, family, before, after, subject, parents, OP, f"{number:040d}")
        assert rules(family.check_commit(ctx)) == expected, (number, subject)


def test_a_range_that_starts_mid_turn_passes(tmp_path: Path) -> None:
    """[34] ``verify BASE..HEAD`` from a commit that carried a turn's user node: the turn
    commit in the range completes a turn begun before it. The next turn commit is judged."""
    family = SessionsFamily(Config())
    early = {**AFTER1}
    del (
        early["history/0002-l-1a2b3c4d_reply.json"],
        early["history/0003-c-1a2b3c4d_reply_t_toolu_1.json"],
    )
    steps = [
        (early, AFTER1, "turn: Fix the crash", []),  # its user node is older than the range
        (AFTER1, {**AFTER1, "jobs.json": "{}"}, "job: j1 done", []),
        ({**AFTER1, "jobs.json": "{}"}, {**AFTER1, "jobs.json": "{ }"}, "turn: nothing new", ["SS207"]),
    ]  # fmt: skip
    for number, (before, after, subject, expected) in enumerate(steps):
        ctx = make(tmp_path, family, before, after, subject, ("p" * 40,), OP, f"{number:040d}")
        assert rules(family.check_commit(ctx)) == expected, (number, subject)


@pytest.mark.parametrize(
    ("case", "after", "expected"),
    [
        ("turn commit without its user", {**AFTER1, "meta.json": META + " "}, ["SS207"]),
        ("turn commit of a runtime turn only", turn2(display="runtime"), ["SS207"]),
        ("turn commit of a user turn", turn2(), []),
    ],
)  # fmt: skip
def test_a_turn_commit_needs_a_user_turn_from_the_root(
    tmp_path: Path, case: str, after: dict[str, Any], expected: list[str]
) -> None:
    """[34] from the root commit on, every turn commit's turn is known: one with no new user
    turn (none at all, or only a runtime turn) is SS207."""
    family = SessionsFamily(Config())
    steps = [({}, {}, "session init", (), []), ({}, AFTER1, "turn: Fix the crash", ("r" * 40,), []),
             (AFTER1, after, "turn: next", ("s" * 40,), expected)]  # fmt: skip
    for number, (before, tree, subject, parents, wanted) in enumerate(steps):
        ctx = make(tmp_path, family, before, tree, subject, parents, OP, f"{number:040d}")
        assert rules(family.check_commit(ctx)) == wanted, (case, number)


def test_every_history_rule_has_a_case() -> None:
    ids = {r.id for r in all_rules() if r.id.startswith("SS2")}
    caught = {rule for case in [*CASES, *PROJECT_CASES] for rule in case[-1]}
    assert ids - caught == set()


# --- the corpus's real histories, through continuity verify -------------------------------------


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    assert SYNTHETIC.is_dir(), f"the OpenProgram corpus is missing: {SYNTHETIC}"
    return rebuild_corpus(tmp_path / "corpus")


def _git(repo: Path, *args: str) -> str:
    result = subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    return result.stdout.decode("utf-8", "replace")


def verify(run_json: RunCLI, repo: Path) -> tuple[int, list[tuple[str, str]]]:
    code, report = run_json("verify", "--range", "HEAD", "--root", str(repo))
    assert report["summary"]["commits"] == len(_git(repo, "rev-list", "HEAD").split())
    return code, [(f["rule"], f["path"]) for f in report["findings"]]


@pytest.mark.parametrize(
    "repo",
    [".openprogram/sessions/local_3f9a1c0d2e", ".openprogram/sessions/local_8b21e47a90",
     "code/wiki-agent/.openprogram/sessions/local_c47d09e5b1", "code/wiki-agent"],
)  # fmt: skip
def test_corpus_histories_pass(corpus: Path, run_json: RunCLI, repo: str) -> None:
    assert verify(run_json, corpus / repo) == (0, [])


OPENPROGRAM = ["-c", "user.name=OpenProgram", "-c", "user.email=openprogram@local"]
AGENT = ["-c", "user.name=OpenProgram Agent", "-c", "user.email=agent@openprogram.local"]
PLAIN = ["-c", "commit.gpgsign=false"]


def test_corpus_mutation_adding_openprogram_to_the_project_is_caught(
    corpus: Path, run_json: RunCLI
) -> None:
    project = corpus / "code/wiki-agent"
    _git(project, "add", "-f", ".openprogram/.gitignore")
    _git(project, *AGENT, *PLAIN, "commit", "-q", "-m", "[agent local_c4] keep state")
    assert verify(run_json, project) == (0, [("SS208", ".openprogram")])  # a warning


def test_a_project_commit_adding_only_settings_json_is_caught(
    corpus: Path, run_json: RunCLI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """[47] settings.json is no file the family claims: the commit is judged from every path it
    changes. The commit hook sees it before the commit is made, ``verify`` after; deleting it
    again is the cure and passes."""
    project = corpus / "code/wiki-agent"
    (project / ".openprogram/settings.json").write_text('{"model": "x"}')
    _git(project, "add", "-f", ".openprogram/settings.json")
    monkeypatch.chdir(project)
    code, report = run_json("check", "--staged")
    found = [(f["rule"], f["path"], f["commit"]) for f in report["findings"]]
    assert (code, found) == (0, [("SS208", ".openprogram", "staged")])
    assert "settings.json" in report["findings"][0]["message"]
    _git(project, *PLAIN, "-c", "user.name=Alice", "-c", "user.email=a@x", "commit", "-q",
         "-m", "keep my settings")  # fmt: skip
    assert verify(run_json, project) == (0, [("SS208", ".openprogram")])
    _git(project, "rm", "-q", "--cached", ".openprogram/settings.json")
    _git(project, *PLAIN, "-c", "user.name=Alice", "-c", "user.email=a@x", "commit", "-q",
         "-m", "untrack the settings")  # fmt: skip
    code, report = run_json("verify", "--range", "HEAD~1..HEAD", "--root", str(project))
    assert (code, report["findings"]) == (0, [])


def test_corpus_mutation_renaming_a_node_in_a_session_is_caught(
    corpus: Path, run_json: RunCLI
) -> None:
    session = corpus / ".openprogram/sessions/local_8b21e47a90"
    _git(session, "mv", "history/0003-u-0ee460370cdc.json", "history/0013-u-0ee460370cdc.json")
    _git(session, *OPENPROGRAM, *PLAIN, "commit", "-q", "-m", "rewind")
    code, found = verify(run_json, session)
    assert code == 1  # the name disagrees with seq 3 (SS205), and the id moved (SS206)
    assert sorted(found) == [("SS205", "history/0013-u-0ee460370cdc.json"),
                             ("SS206", "history/0013-u-0ee460370cdc.json")]  # fmt: skip


def test_corpus_mutation_foreign_commit_in_a_session_is_caught(
    corpus: Path, run_json: RunCLI
) -> None:
    session = corpus / ".openprogram/sessions/local_3f9a1c0d2e"
    _git(session, "add", "-A")  # the post-commit metadata writes, committed by hand
    _git(session, "-c", "user.name=Alice", "-c", "user.email=alice@example.com", *PLAIN,
         "commit", "-q", "-m", "wip")  # fmt: skip
    code, found = verify(run_json, session)
    assert (code, sorted(found)) == (0, [("SS203", "."), ("SS204", ".")])


def test_corpus_mutation_multi_line_message_in_a_session_is_caught(
    corpus: Path, run_json: RunCLI
) -> None:
    """[31] OpenProgram's commit messages are one line: a body after a known subject (which git's
    subject alone does not show) is SS204, the same commit with its subject alone passes."""
    session = corpus / ".openprogram/sessions/local_3f9a1c0d2e"
    _git(session, "add", "-A")  # the post-commit metadata writes
    _git(session, *OPENPROGRAM, *PLAIN, "commit", "-q", "-m", "rewind", "-m", "by hand")
    assert verify(run_json, session) == (0, [("SS204", ".")])
    _git(session, *OPENPROGRAM, *PLAIN, "commit", "-q", "--amend", "-m", "rewind")
    assert verify(run_json, session) == (0, [])


def test_corpus_mutation_empty_commit_in_a_session_is_caught(
    corpus: Path, run_json: RunCLI
) -> None:
    session = corpus / "code/wiki-agent/.openprogram/sessions/local_c47d09e5b1"
    _git(session, *OPENPROGRAM, *PLAIN, "commit", "-q", "--allow-empty", "-m", "job: j1 done")
    assert verify(run_json, session) == (1, [("SS202", ".")])


def test_the_commit_hook_judges_a_session_commit_without_its_message(
    corpus: Path, run_json: RunCLI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``check --staged`` in a session repository: what OpenProgram stages passes (no subject
    exists before the message, so none is judged; the staged nodes' own check warns only that
    their memory workspace is outside the checked root), and a rename of a node is caught."""
    session = corpus / ".openprogram/sessions/local_3f9a1c0d2e"
    monkeypatch.setenv("GIT_AUTHOR_NAME", "OpenProgram")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "openprogram@local")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "OpenProgram")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "openprogram@local")
    monkeypatch.chdir(session)
    _git(session, "add", "-A")  # the post-commit metadata writes
    code, report = run_json("check", "--staged")
    assert code == 0 and {f["rule"] for f in report["findings"]} <= {"SS150"}
    assert all(f["severity"] == "warning" for f in report["findings"])
    other = corpus / ".openprogram/sessions/local_8b21e47a90"
    monkeypatch.chdir(other)
    _git(other, "mv", "history/0003-u-0ee460370cdc.json", "history/0013-u-0ee460370cdc.json")
    code, report = run_json("check", "--staged")
    found = sorted((f["rule"], f["path"], f["commit"]) for f in report["findings"])
    # the renamed node's own check (SS111), as pre-commit passing it would have it, and the
    # history rules on the commit being made
    assert (code, found) == (1, [("SS111", "history/0013-u-0ee460370cdc.json", None),
                                 ("SS205", "history/0013-u-0ee460370cdc.json", "staged"),
                                 ("SS206", "history/0013-u-0ee460370cdc.json", "staged")])  # fmt: skip


def test_a_memory_workspace_repository_keeps_its_sources(tmp_path: Path, run_json: RunCLI) -> None:
    """[54] ``verify`` in a repository that is the memory workspace itself: a v2 archive that
    grows passes; a legacy archive that changes at all is caught."""
    repo = tmp_path / "memory"
    v2, legacy = "sources/openprogram/_v2/s.md", "sources/openprogram/t.md"
    write_tree(repo, {".scriptorium/workspace-id": "w-0a1b2c3d\n", v2: "a\n", legacy: "old\n"})
    _git(repo, "init", "-q")
    for step, files in enumerate([{}, {v2: "a\nb\n"}, {legacy: "old\nnew\n"}]):
        write_tree(repo, files)
        _git(repo, "add", "-A")
        _git(repo, *PLAIN, "-c", "user.name=Alice", "-c", "user.email=a@x", "commit", "-q",
             "-m", f"memory {step}")  # fmt: skip
    assert verify(run_json, repo) == (0, [("SS210", legacy)])


def test_a_project_commit_with_nothing_to_read_is_judged_as_by_every_rule(tmp_path: Path) -> None:
    """The shortcut for a project repository's commits finds what every rule finds
    (``History.judge``), on random commits over the paths, modes, subjects and identities the
    project rules read; the commits drawn include ones those rules report."""
    pool = ["a.txt", "src/main.py", ".openprogram/settings.json", "x/.openprogram/y.json",
            "memory/sources/a.md", "sources/b.md", "memory/sources/_v2/c.md", "memory/topics/t.md",
            ".deltalayer/changes/d.json", "sessions", "w/memory/sources", "y/.openprogram"]  # fmt: skip
    contents: list[str | Symlink] = ["1", "2", Symlink("a.txt")]
    subjects = ["work", "work", "turn: hi", SHADOW_BASELINE, "[agent 0a1b2c3d] fix"]
    agent = {"committer_name": "OpenProgram Agent", "committer_email": "agent@openprogram.local"}
    identities = [
        OP,
        OP,
        {**OP, "committer_name": "Bob", "committer_email": "b@x"},
        {**OP, **agent},
    ]
    draw = random.Random(20261202)
    family, first = context(tmp_path / "first", {}, {"a.txt": "1"}, "init", parents=())
    history = family.history
    assert history.check_commit(first) == []  # a project repository's root commit
    reported = 0
    for case in range(160):
        before = {p: draw.choice(contents) for p in draw.sample(pool, draw.randint(0, 4))}
        after = dict(before)
        for path in draw.sample(sorted(before) or pool, 1) + draw.sample(pool, draw.randint(0, 1)):
            if draw.random() < 0.3:
                after.pop(path, None)
            else:
                after[path] = draw.choice(contents)
        subject, fields = draw.choice(subjects), draw.choice(identities)
        ctx = make(
            tmp_path / str(case), family, before, after, subject, ("p" * 40,), fields, "c" * 40
        )
        assert history.session_repo is False and not history.shadow_repo
        slow, store = history.judge(ctx), history.shadow_repo
        history.shadow_repo = False  # the shadow-git store's subject makes a store of it
        assert (history.check_commit(ctx), history.shadow_repo) == (slow, store)
        history.shadow_repo = False
        reported += bool(slow)
    assert reported >= 10
