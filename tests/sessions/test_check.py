"""Every SS1xx rule: a fixture it catches (with the path and pointer) and the valid layouts it
passes; the synthetic OpenProgram corpus passes, and mutations of it are caught."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from continuity_checks.checks import all_rules
from tests.conftest import EXAMPLES, RunCLI, write_tree
from tests.helpers.session_cases import (
    AGENT_OBJECT,
    BAD,
    BOUND,
    BOUND_ARCHIVE,
    BOUND_REPLY,
    BOUND_SID,
    GOOD,
    OTHER_OBJECT,
    Expected,
    bound_layout,
    found,
    ordered,
    stamped,
)
from tests.helpers.sessions import (
    SYNTHETIC,
    node,
    rebuild_corpus,
    state,
)


def _apply(tmp_path: Path, files: dict[str, Any]) -> Path:
    root = tmp_path / "home"
    write_tree(root, {k: v for k, v in state().items() if k not in files or files[k] is not None})
    write_tree(root, {k: v for k, v in files.items() if v is not None})
    for path, content in files.items():
        if content is None and (root / path).exists():
            (root / path).unlink()
    return root


@pytest.mark.parametrize(("case", "files", "expected"), BAD, ids=[b[0] for b in BAD])
def test_bad_fixture_is_caught(
    tmp_path: Path, run_json: RunCLI, case: str, files: dict[str, Any], expected: Expected
) -> None:
    root = _apply(tmp_path, files)
    code, report = run_json("check", "--family", "sessions", "--all", "--root", str(root))
    assert found(report) == ordered(expected), case
    errors = any(f["severity"] == "error" for f in report["findings"])
    assert code == (1 if errors else 0)
    for finding in report["findings"]:
        if finding["pointer"] is not None and finding["path"].endswith(".json"):
            assert finding["line"] is not None, finding  # positioned in the file


@pytest.mark.parametrize(("case", "files"), GOOD, ids=[g[0] for g in GOOD])
def test_near_miss_passes(
    tmp_path: Path, run_json: RunCLI, case: str, files: dict[str, Any]
) -> None:
    root = _apply(tmp_path, files)
    code, report = run_json("check", "--family", "sessions", "--all", "--root", str(root))
    assert (code, found(report)) == (0, []), case


def test_a_bound_session_marked_as_written_has_its_frames(tmp_path: Path, run_json: RunCLI) -> None:
    """[52] a project-bound session's nodes marked as written to the home workspace (the state
    directory whose locations.json lists it) have frames there."""
    root = _apply(tmp_path, bound_layout(**{BOUND_ARCHIVE: None}))
    code, report = run_json("check", "--family", "sessions", "--all", "--root", str(root))
    pointer = "/metadata/memory_written_scriptorium"
    assert (code, found(report)) == (
        0,
        [("SS141", BOUND + "history/0001-u-1a2b3c4d.json", pointer)],
    )


def test_every_file_rule_has_a_bad_fixture() -> None:
    rules = {r.id for r in all_rules() if r.id.startswith("SS1")}
    caught = {rule for _, _, expected in BAD for rule, _, _ in expected}
    caught |= {rule for _, _, _, expected in LINKED for rule, _, _ in expected}
    assert rules - caught == set()


# --- the synthetic corpus ------------------------------------------------------------------------


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    assert SYNTHETIC.is_dir(), f"the OpenProgram corpus is missing: {SYNTHETIC}"
    return rebuild_corpus(tmp_path)


def test_synthetic_corpus_passes_clean(corpus: Path, run_json: RunCLI) -> None:
    code, report = run_json("check", "--family", "sessions", "--all", "--root", str(corpus))
    assert (code, report["findings"]) == (0, [])
    assert report["summary"]["files"] == 34


def test_state_directory_alone_reports_paths_outside_it(corpus: Path, run_json: RunCLI) -> None:
    code, report = run_json(
        "check", "--family", "sessions", "--all", "--root", str(corpus / ".openprogram")
    )
    assert code == 0
    assert found(report) == [
        ("SS133", "projects/projects.json", "/proj_3939bc8f/path"),
        ("SS133", "sessions/locations.json", "/local_c47d09e5b1"),
    ]


def test_path_map_option_resolves_moved_home(
    corpus: Path, run_json: RunCLI, tmp_path: Path
) -> None:
    # the home directory moved: an explicit map replaces the default one
    (corpus / ".continuity.toml").write_text(
        f'[sessions]\npath-map = {{ "/home/alice" = "{corpus}" }}\n'
    )
    code, report = run_json("check", "--family", "sessions", "--all", "--root", str(corpus))
    assert (code, report["findings"]) == (0, [])
    (corpus / ".continuity.toml").write_text(
        '[sessions]\npath-map = { "/home/alice" = "/elsewhere" }\n'
    )
    code, report = run_json("check", "--family", "sessions", "--all", "--root", str(corpus))
    assert code == 0
    assert {f["rule"] for f in report["findings"]} == {"SS133"}
    assert "outside the checked root" in report["findings"][0]["message"]


def test_path_map_option_is_validated(corpus: Path, run_json: RunCLI) -> None:
    (corpus / ".continuity.toml").write_text('[sessions]\npath-map = { "home/alice" = "." }\n')
    from continuity_checks.cli import main

    assert main(["check", "--family", "sessions", "--all", "--root", str(corpus)]) == 2


def test_one_session_repository_as_the_root(corpus: Path, run_json: RunCLI) -> None:
    session = corpus / "code/wiki-agent/.openprogram/sessions/local_c47d09e5b1"
    code, report = run_json("check", "--family", "sessions", "--all", "--root", str(session))
    # [49] its project_commit names the project repository, outside the root: said, not passed
    assert (code, found(report), report["summary"]["files"]) == (
        0,
        [("SS133", "history/0002-l-eeef4f48_reply.json", "/metadata/project_commit/repo")],
        11,
    )


B = ".openprogram/sessions/local_8b21e47a90/"


def _mutate(corpus: Path, rel: str, change: Any) -> None:
    path = corpus / rel
    value = json.loads(path.read_text("utf-8"))
    change(value)
    path.write_text(json.dumps(value, ensure_ascii=False), "utf-8")


def test_mutations_of_the_corpus_are_caught(corpus: Path, run_json: RunCLI, tmp_path: Path) -> None:
    pristine = tmp_path / "pristine"
    shutil.copytree(corpus, pristine, symlinks=True)
    reply = B + "history/0006-l-3dc740745104_reply.json"
    user = B + "history/0005-u-3dc740745104.json"

    def dangling(v: dict[str, Any]) -> None:
        v["predecessor"] = "000000000000"
        v["metadata"]["predecessor"] = "000000000000"

    def cycle(v: dict[str, Any]) -> None:
        v["predecessor"] = "3dc740745104_reply"

    def reseq(v: dict[str, Any]) -> None:
        v["seq"] = 4

    def nowhere(v: dict[str, Any]) -> None:
        v["head_id"] = "ffffffffffff_reply"

    def rewritten(v: dict[str, Any]) -> None:
        v["metadata"]["project_commit"]["sha"] = "81c3d1dc4e57b3f285e2c367cf0c38f3f69951a5"

    def disagree(v: dict[str, Any]) -> None:
        v["local_8b21e47a90"]["title"] = "Something the meta never said"

    cases: list[tuple[str, Any, str]] = [
        (reply, dangling, "SS117"),
        (user, cycle, "SS118"),
        (B + "history/0006-l-3dc740745104_reply.json", "rename", "SS111"),
        (B + "history/0005-u-3dc740745104.json", reseq, "SS111"),
        (B + "meta.json", nowhere, "SS105"),
        (".openprogram/sessions/index.json", disagree, "SS129"),
        (
            "code/wiki-agent/.openprogram/sessions/local_c47d09e5b1/history/0002-l-eeef4f48_reply.json",
            rewritten,
            "SS149",
        ),
    ]
    for rel, change, rule in cases:
        shutil.rmtree(corpus)
        shutil.copytree(pristine, corpus, symlinks=True)
        if change == "rename":
            (corpus / rel).rename(corpus / rel.replace("0006-l-", "0016-l-"))
        else:
            _mutate(corpus, rel, change)
        code, report = run_json("check", "--family", "sessions", "--all", "--root", str(corpus))
        rules = {f["rule"] for f in report["findings"]}
        assert rule in rules, (rel, rule, report["findings"])
    # a duplicated seq: a copy of a node under another id with the same seq
    shutil.rmtree(corpus)
    shutil.copytree(pristine, corpus, symlinks=True)
    source = corpus / (B + "history/0005-u-3dc740745104.json")
    value = json.loads(source.read_text("utf-8"))
    value["id"] = "99999999"
    (corpus / (B + "history/0005-u-99999999.json")).write_text(json.dumps(value))
    code, report = run_json("check", "--family", "sessions", "--all", "--root", str(corpus))
    assert code == 1 and "SS114" in {f["rule"] for f in report["findings"]}


def test_example_passes_the_quick_start(run_json: RunCLI) -> None:
    code, report = run_json("check", "--family", "sessions", "--all", "--root", str(EXAMPLES))
    assert (code, report["findings"], report["summary"]["files"]) == (0, [], 10)


def test_hook_inside_a_session_repository(
    corpus: Path, run_json: RunCLI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What pre-commit runs in a session repository: the staged files, from its top."""
    session = corpus / ".openprogram/sessions/local_8b21e47a90"
    monkeypatch.chdir(session)
    staged = [
        "meta.json",
        "history/0005-u-3dc740745104.json",
        "history/0006-l-3dc740745104_reply.json",
    ]
    code, report = run_json("check", *staged)
    assert (code, report["findings"], report["summary"]["files"]) == (0, [], 3)
    # one staged node whose predecessor was deleted: the rest of the DAG is read to judge it
    (session / "history/0002-l-64fa3073579f_reply.json").unlink()
    code, report = run_json("check", "history/0005-u-3dc740745104.json")
    assert code == 1
    assert ("SS117", "history/0003-u-0ee460370cdc.json", "/predecessor") in found(report)
    assert ("SS117", "history/0005-u-3dc740745104.json", "/predecessor") in found(report)


# --- [1] a session directory that is a symlink (write_tree makes none: built on the corpus) -------

C = "code/wiki-agent/.openprogram/sessions/local_c47d09e5b1"
# (case, the session directory replaced by a symlink, where its directory goes: inside the
# root (relative to it) or "<outside>", the findings)
LINKED: list[tuple[str, str, str, Expected]] = [
    ("home session moved inside the root", B.rstrip("/"), "archive/local_8b21e47a90",
     [("SS101", B.rstrip("/"), None)]),
    ("home session leading out of the root", B.rstrip("/"), "<outside>",
     # the registries, which name it, say nothing of what cannot be read: SS101 is the cause
     [("SS101", B.rstrip("/"), None)]),
    ("dangling symlink", B.rstrip("/"), "<gone>", [("SS101", B.rstrip("/"), None)]),
    ("project-bound session moved inside the root", C, "code/wiki-agent/state/local_c47d09e5b1",
     [("SS101", C, None)]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("case", "session", "target", "expected"), LINKED, ids=[c[0] for c in LINKED]
)
def test_a_symlinked_session_directory_is_caught(
    corpus: Path, run_json: RunCLI, tmp_path: Path, case: str, session: str, target: str,
    expected: Expected,
) -> None:  # fmt: skip
    """OpenProgram refuses to open a session whose directory is a symlink. The walk does not
    follow the symlink, so the session is found through the sessions directory it sits in."""
    outside = target in ("<outside>", "<gone>")
    moved = tmp_path / "outside" / "session" if outside else corpus / target
    moved.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(corpus / session), str(moved))
    (corpus / session).symlink_to(moved if outside else Path(*[".."] * session.count("/"), target))
    if target == "<gone>":
        shutil.rmtree(moved)
    code, report = run_json("check", "--family", "sessions", "--all", "--root", str(corpus))
    assert (code, found(report)) == (1, ordered(expected)), case
    assert "symlink" in report["findings"][0]["message"]


def test_a_symlinked_directory_above_the_sessions_passes(
    corpus: Path, run_json: RunCLI, tmp_path: Path
) -> None:
    """[1] judges the session's own directory: the state directory kept elsewhere in the tree
    and linked in as .openprogram is no symlinked session."""
    shutil.move(str(corpus / ".openprogram"), str(corpus / "state"))
    (corpus / ".openprogram").symlink_to("state")
    code, report = run_json("check", "--family", "sessions", "--root", str(corpus), str(corpus / B))
    assert (code, report["findings"]) == (0, [])
    assert report["summary"]["files"] > 5  # the session was read through the symlink above it


# --- each node file read once: sessions judged in check_file, in whichever process -------------


def _many_sessions() -> dict[str, Any]:
    """The valid state and three more sessions, each with a misnamed first node, a shape error
    in the middle and a dangling predecessor in its last node file."""
    files: dict[str, Any] = {}
    for sid in ("local_b1", "local_b2", "local_b3"):
        history = f".openprogram/sessions/{sid}/history/"
        files[f".openprogram/sessions/{sid}/.git/HEAD"] = "ref: refs/heads/main\n"
        files[history + "0000-u-ROOT.json"] = node(0, "user", "ROOT", metadata={"display": "root"})[
            1
        ]
        files[history + "0001-u-aaaa.json"] = node(
            1, "user", "zzzz", caller="ROOT", predecessor="ROOT"
        )[1]
        files[history + "0002-l-aaaa_reply.json"] = node(
            2, "llm", "aaaa_reply", predecessor="aaaa", reads="x"
        )[1]
        for seq in range(3, 9):
            files[history + f"{seq:04d}-c-t{seq}.json"] = node(
                seq, "code", f"t{seq}", caller="aaaa_reply"
            )[1]
        files[history + "0009-u-bbbb.json"] = node(
            9, "user", "bbbb", caller="ROOT", predecessor="gone"
        )[1]
    return files  # fmt: skip


def test_each_session_is_judged_once_whatever_the_processes(
    tmp_path: Path, run_json: RunCLI
) -> None:
    """Node files are checked as the engine hands them over and a session is judged when its
    last node file arrives: with the work split over 1, 2 or 5 processes (so that sessions are
    cut between them), every finding appears exactly once, at its position."""
    root = _apply(tmp_path, _many_sessions())
    expected = []
    for sid in ("local_b1", "local_b2", "local_b3"):
        history = f".openprogram/sessions/{sid}/history/"
        expected += [("SS111", history + "0001-u-aaaa.json", "/id"),
                     ("SS112", history + "0002-l-aaaa_reply.json", "/reads"),
                     ("SS117", history + "0009-u-bbbb.json", "/predecessor")]  # fmt: skip
    for jobs in ("1", "2", "5"):
        code, report = run_json(
            "check", "--family", "sessions", "--all", "--root", str(root), "--jobs", jobs
        )
        assert (code, found(report)) == (1, ordered(expected)), jobs
        assert all(f["line"] is not None for f in report["findings"]), jobs


def test_named_node_files_in_any_order_judge_their_session_once(
    tmp_path: Path, run_json: RunCLI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The hook names files in its own order, some of a session only: the session is judged
    once, its other node files read from the tree (their findings reported too)."""
    root = _apply(tmp_path, _many_sessions())
    monkeypatch.chdir(root)
    history = ".openprogram/sessions/local_b2/history/"
    named = [history + "0009-u-bbbb.json", ".openprogram/sessions/local_b1/history/0003-c-t3.json",
             history + "0001-u-aaaa.json"]  # fmt: skip
    code, report = run_json("check", "--family", "sessions", *named)
    b1 = ".openprogram/sessions/local_b1/history/"
    assert (code, found(report)) == (1, ordered([
        ("SS111", b1 + "0001-u-aaaa.json", "/id"), ("SS111", history + "0001-u-aaaa.json", "/id"),
        ("SS112", b1 + "0002-l-aaaa_reply.json", "/reads"),
        ("SS112", history + "0002-l-aaaa_reply.json", "/reads"),
        ("SS117", b1 + "0009-u-bbbb.json", "/predecessor"),
        ("SS117", history + "0009-u-bbbb.json", "/predecessor"),
    ]))  # fmt: skip


# --- the commit hook's start-up ------------------------------------------------------------------

_IMPORTS = """
import sys
from continuity_checks.core.config import Config
from continuity_checks.checks.sessions.family import SessionsFamily

family = SessionsFamily(Config())
assert family.claims(".openprogram/sessions/s/history/0001-u-a.json") == "node"
print(sorted(m for m in sys.modules if m.startswith("continuity_checks.checks.sessions")))
"""


def test_importing_the_family_leaves_the_check_modules_unloaded() -> None:
    """The engine builds every family for every run: the sessions family's module, its
    construction and ``claims`` load only ``layout`` and ``pathmap``, in a fresh interpreter;
    the check modules load when a check first runs."""
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-c", _IMPORTS], capture_output=True, text=True, check=True
    )
    package = "continuity_checks.checks.sessions"
    assert json.loads(result.stdout.replace("'", '"')) == [
        package, f"{package}.family", f"{package}.layout", f"{package}.pathmap"
    ]  # fmt: skip
    from continuity_checks.checks import sessions

    on_disk = {p.stem for p in Path(sessions.__file__).parent.glob("*.py")}
    check_modules = on_disk - {"__init__", "family", "layout", "pathmap"}
    assert {"files", "stream", "session", "registries", "memory", "history", "rules"} <= on_disk
    for check_module in sorted(check_modules):
        assert f"'{package}.{check_module}'" not in result.stdout


def _deltified_project(root: Path) -> dict[str, str]:
    """The project of the bound layout as a real repository whose commits git stores as deltas
    (near-identical long messages, repacked): subject -> the id of a commit stored as a delta."""
    from tests.helpers.sessions import git

    project = root / "code/proj"
    git("init", "-q", cwd=project)
    body = "".join(f"line {k} of a long commit body repeated in every commit\n" for k in range(60))
    for number in range(24):
        (project / "f.txt").write_text(f"{number}\n")
        git("add", "f.txt", cwd=project)
        prefix = BOUND_SID[:8] if number % 2 else "zzzzzzzz"
        git("-c", "user.name=OpenProgram Agent", "-c", "user.email=agent@openprogram.local",
            "-c", "commit.gpgsign=false", "commit", "-q", "-m",
            f"[agent {prefix}] change {number}\n\n{body}", cwd=project)  # fmt: skip
    git("repack", "-q", "-adf", "--window=250", "--depth=50", cwd=project)
    packs = list((project / ".git/objects/pack").glob("*.idx"))
    listing = git("verify-pack", "-v", str(packs[0]), cwd=project)
    deltas = {line.split()[0] for line in listing.splitlines() if " commit " in line
              and len(line.split()) >= 7}  # fmt: skip
    by_prefix: dict[str, str] = {}
    for sha in deltas:
        subject = git("log", "-1", "--format=%s", sha, cwd=project)
        by_prefix.setdefault(subject.split("]")[0] + "]", sha)
    return by_prefix


def test_a_project_commit_stored_as_a_pack_delta_is_read(tmp_path: Path, run_json: RunCLI) -> None:
    """[49] a commit git stores as a delta in a pack is rebuilt through the snapshot, so its
    subject is judged like a loose commit's."""
    root = _apply(tmp_path, bound_layout(**{
        "code/proj/.git/" + AGENT_OBJECT: None, "code/proj/.git/" + OTHER_OBJECT: None}))  # fmt: skip
    deltified = _deltified_project(root)
    good, bad = deltified[f"[agent {BOUND_SID[:8]}]"], deltified["[agent zzzzzzzz]"]
    (root / BOUND_REPLY).write_text(stamped(good))
    code, report = run_json("check", "--family", "sessions", "--all", "--root", str(root))
    assert (code, found(report)) == (0, [])
    (root / BOUND_REPLY).write_text(stamped(bad))
    code, report = run_json("check", "--family", "sessions", "--all", "--root", str(root))
    assert (code, found(report)) == (0, [("SS149", BOUND_REPLY, "/metadata/project_commit/sha")])
    assert "[agent zzzzzzzz] change" in report["findings"][0]["message"]
