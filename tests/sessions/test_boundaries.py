"""The sessions checks where what they need lies at an edge: the checked root itself [1], the
commit being made [34], a history range that starts after the fact [47], objects in another
pack [49], a state directory elsewhere in the tree or outside it [52], and the memory workspace
as its own repository [54]. Real directories, real git repositories, the real CLI."""

from __future__ import annotations

import hashlib
import json
import os
import struct
import subprocess
import zlib
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RunCLI, write_tree
from tests.helpers.session_cases import (
    BOUND,
    BOUND_REPLY,
    BOUND_SID,
    bound_layout,
    found,
    stamped,
)
from tests.helpers.sessions import (
    ARCHIVE,
    SESSION,
    SID,
    SYNTHETIC,
    rebuild_corpus,
    state,
)

OPENPROGRAM = ["-c", "user.name=OpenProgram", "-c", "user.email=openprogram@local"]
AGENT = ["-c", "user.name=OpenProgram Agent", "-c", "user.email=agent@openprogram.local"]
MEMORY = ["-c", "user.name=OpenProgram Memory", "-c", "user.email=memory@openprogram.local"]
PLAIN = ["-c", "commit.gpgsign=false"]


def _git(repo: Path, *args: str) -> str:
    result = subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    return result.stdout.decode("utf-8", "replace").strip()


def check(run_json: RunCLI, root: Path) -> tuple[int, list[tuple[str, str, str | None]]]:
    code, report = run_json("check", "--family", "sessions", "--all", "--root", str(root))
    return code, found(report)


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    assert SYNTHETIC.is_dir(), f"the OpenProgram corpus is missing: {SYNTHETIC}"
    return rebuild_corpus(tmp_path / "corpus")


@pytest.fixture(scope="module")
def read_only_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One rebuilt corpus for the tests that only read it (rebuilding clones four bundles)."""
    assert SYNTHETIC.is_dir(), f"the OpenProgram corpus is missing: {SYNTHETIC}"
    return rebuild_corpus(tmp_path_factory.mktemp("corpus"))


# --- [1] the checked root itself -----------------------------------------------------------------


def test_a_session_root_named_through_a_symlink_in_sessions_is_caught(
    tmp_path: Path, run_json: RunCLI
) -> None:
    """[1] OpenProgram opens <sessions>/<sid>; a symlink there is refused, also when it is the
    directory the user points the tool at. A symlink elsewhere is only how the user named it:
    the session's directory (and its name, for SS104) is the one it leads to."""
    home = write_tree(tmp_path / "home", state())
    real = home / SESSION.rstrip("/")
    assert check(run_json, real)[1] == [
        # the root session's memory lies outside it: said, not passed (see [52] below)
        ("SS150", "history/0001-u-1a2b3c4d.json", "/metadata/memory_written_scriptorium")
    ]
    (tmp_path / "elsewhere/sessions").mkdir(parents=True)
    linked = tmp_path / "elsewhere/sessions" / SID
    linked.symlink_to(real)
    assert check(run_json, linked) == (1, [("SS101", ".", None)])
    named = tmp_path / "shortcut"
    named.symlink_to(real)
    assert check(run_json, named)[1] == check(run_json, real)[1]  # no SS104 for "shortcut"


def test_a_session_named_with_a_backslash_is_caught(tmp_path: Path, run_json: RunCLI) -> None:
    """[1] a "\\" in a session's name: SS101 for the directory, at the root and below it."""
    bad = "local_0a\\1b"
    files = {k.replace(SID, bad): v for k, v in state().items() if k.startswith(SESSION)}
    home = write_tree(tmp_path / "home", {**state(), **files})
    code, findings = check(run_json, home)
    assert code == 1
    assert (".openprogram/sessions/" + bad, "SS101") in {(f[1], f[0]) for f in findings}
    code, findings = check(run_json, home / ".openprogram/sessions" / bad)
    assert (code, findings[0][:2]) == (1, ("SS101", "."))


# --- [34] one commit per turn, at commit time ----------------------------------------------------


def _second_turn(session: Path, user_id: str, seq: int, predecessor: str) -> None:
    """A turn written as OpenProgram writes it: a user node and the llm node answering it."""
    first = json.loads((session / "history/0001-u-64fa3073579f.json").read_text("utf-8"))
    first.update(id=user_id, seq=seq, predecessor=predecessor, output=f"turn {user_id}")
    reply = json.loads((session / "history/0002-l-64fa3073579f_reply.json").read_text("utf-8"))
    reply.update(id=f"{user_id}_reply", seq=seq + 1, predecessor=user_id)
    reply["metadata"]["predecessor"] = user_id
    for node in (first, reply):
        letter = node["role"][0]
        name = f"history/{node['seq']:04d}-{letter}-{node['id']}.json"
        (session / name).write_text(json.dumps(node, ensure_ascii=False), "utf-8")


def test_two_turns_in_the_commit_being_made_are_caught(
    corpus: Path, run_json: RunCLI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """[34] the commit hook has no subject yet, but two user turns in one commit are wrong
    whatever it will say; one turn passes."""
    session = corpus / ".openprogram/sessions/local_8b21e47a90"
    monkeypatch.chdir(session)
    for role in ("AUTHOR", "COMMITTER"):  # the identity OpenProgram configures in the repository
        monkeypatch.setenv(f"GIT_{role}_NAME", "OpenProgram")
        monkeypatch.setenv(f"GIT_{role}_EMAIL", "openprogram@local")
    _second_turn(session, "aaaaaaaaaaaa", 7, "3dc740745104_reply")
    _git(session, "add", "-A")
    code, report = run_json("check", "--staged")
    assert (code, report["findings"]) == (0, [])
    _second_turn(session, "bbbbbbbbbbbb", 9, "aaaaaaaaaaaa_reply")
    _git(session, "add", "-A")
    code, report = run_json("check", "--staged")
    staged = [(f["rule"], f["path"], f["commit"]) for f in report["findings"]]
    assert (code, staged) == (0, [("SS207", ".", "staged")])
    assert "aaaaaaaaaaaa" in report["findings"][0]["message"]
    # verify says the same of the commit once made, and more: its subject says one turn
    _git(session, *OPENPROGRAM, *PLAIN, "commit", "-q", "-m", "turn: two at once")
    code, report = run_json("verify", "--range", "HEAD~1..HEAD", "--root", str(session))
    assert [(f["rule"], f["path"]) for f in report["findings"]] == [("SS207", ".")]


# --- [47] state committed before the range, or before the commit being made ---------------------


def test_state_committed_before_the_range_is_still_reported(
    corpus: Path, run_json: RunCLI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """[47] no commit's tree holds .openprogram/: a range that starts after the commit that
    brought it in, and the commit being made on top of it, are reported at their first commit;
    once it is removed, both pass."""
    project = corpus / "code/wiki-agent"
    (project / ".openprogram/settings.json").write_text('{"model": "x"}')
    _git(project, "add", "-f", ".openprogram/settings.json")
    _git(project, *AGENT, *PLAIN, "commit", "-q", "-m", "[agent local_c4] keep settings")
    (project / "README.md").write_text("# wiki-agent\n\nNow with a port.\n")
    _git(project, "add", "README.md")
    _git(project, *PLAIN, "-c", "user.name=Alice", "-c", "user.email=a@x", "commit", "-q",
         "-m", "readme")  # fmt: skip
    code, report = run_json("verify", "--range", "HEAD~1..HEAD", "--root", str(project))
    head = _git(project, "rev-parse", "HEAD")
    assert [(f["rule"], f["path"], f["commit"]) for f in report["findings"]] == [
        ("SS208", ".openprogram", head)
    ]
    assert "still holds" in report["findings"][0]["message"]
    monkeypatch.chdir(project)
    (project / "docs/usage.md").write_text("usage\n")
    _git(project, "add", "docs/usage.md")
    code, report = run_json("check", "--staged")
    assert [(f["rule"], f["commit"]) for f in report["findings"]] == [("SS208", "staged")]
    _git(project, "rm", "-q", "--cached", ".openprogram/settings.json")
    code, report = run_json("check", "--staged")
    assert (code, report["findings"]) == (0, [])
    _git(project, *PLAIN, "-c", "user.name=Alice", "-c", "user.email=a@x", "commit", "-q",
         "-m", "untrack settings")  # fmt: skip
    code, report = run_json("verify", "--range", "HEAD~1..HEAD", "--root", str(project))
    assert (code, report["findings"]) == (0, [])


def test_the_corpus_project_range_without_state_passes(
    read_only_corpus: Path, run_json: RunCLI
) -> None:
    project = read_only_corpus / "code/wiki-agent"
    code, report = run_json("verify", "--range", "HEAD~1..HEAD", "--root", str(project))
    assert (code, report["findings"], report["summary"]["commits"]) == (0, [], 1)


# --- [49] a commit stored as a delta against an object of another pack ---------------------------


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _header(kind: int, size: int) -> bytes:
    out = bytearray([(kind << 4) | (size & 0x0F) | (0x80 if size > 15 else 0)])
    size >>= 4
    while size:
        out.append((size & 0x7F) | (0x80 if size > 127 else 0))
        size >>= 7
    return bytes(out)


def _pack(entries: list[tuple[bytes, int, bytes, bytes | None]]) -> tuple[bytes, bytes]:
    """A version-2 pack and its index, written here: (object id, kind, payload, REF_DELTA base
    id or None). The pack holds exactly what it is given (a base may be elsewhere: thin)."""
    body = bytearray(b"PACK" + struct.pack(">II", 2, len(entries)))
    offsets: dict[bytes, tuple[int, int]] = {}
    for sha, kind, payload, base in entries:
        start = len(body)
        raw = _header(kind, len(payload)) + (base or b"") + zlib.compress(payload)
        body += raw
        offsets[sha] = (start, zlib.crc32(raw))
    checksum = hashlib.sha1(bytes(body)).digest()
    pack = bytes(body) + checksum
    names = sorted(offsets)
    fanout = [sum(1 for n in names if n[0] <= b) for b in range(256)]
    index = b"\xfftOc" + struct.pack(">I", 2) + struct.pack(">256I", *fanout)
    index += b"".join(names)
    index += b"".join(struct.pack(">I", offsets[n][1]) for n in names)
    index += b"".join(struct.pack(">I", offsets[n][0]) for n in names)
    index += checksum
    return pack, index + hashlib.sha1(index).digest()


def _commit(subject: str, identity: str = "OpenProgram Agent <agent@openprogram.local>") -> bytes:
    return (
        f"tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor {identity} 1795983624 +0000\n"
        f"committer {identity} 1795983624 +0000\n\n{subject}\n"
    ).encode()


def _object_id(body: bytes) -> bytes:
    return hashlib.sha1(b"commit " + str(len(body)).encode() + b"\0" + body).digest()


def _delta(base: bytes, target: bytes) -> bytes:
    """git's delta format, inserts only: the base's size, the target's, then the target's bytes
    in runs of at most 127."""
    runs = b"".join(bytes([len(target[i : i + 127])]) + target[i : i + 127]
                    for i in range(0, len(target), 127))  # fmt: skip
    return _varint(len(base)) + _varint(len(target)) + runs


@pytest.mark.parametrize(
    ("subject", "base_kept", "expected"),
    [
        (f"[agent {BOUND_SID[:8]}] Fix the crash, packed", True, []),
        ("[agent zzzzzzzz] Fix the crash, packed", True, [("SS149", BOUND_REPLY, "/metadata/project_commit/sha")]),
        (f"[agent {BOUND_SID[:8]}] Fix the crash, packed", False,
         [("SS149", BOUND_REPLY, "/metadata/project_commit/sha")]),
    ],
    ids=["base in another pack", "base in another pack, wrong subject", "base nowhere"],
)  # fmt: skip
def test_a_commit_deltified_against_another_pack_is_read(
    tmp_path: Path, run_json: RunCLI, subject: str, base_kept: bool, expected: list[Any]
) -> None:
    """[49] a REF_DELTA whose base is in another pack of the repository is rebuilt from there;
    an object that cannot be rebuilt into a commit is reported, not taken on trust."""
    base = _commit("[agent zzzzzzzz] an earlier commit the delta starts from")
    target = _commit(subject)
    base_id, target_id = _object_id(base), _object_id(target)
    objects = "code/proj/.git/objects/pack/"
    first_pack, first_index = _pack([(base_id, 1, base, None)])
    second_pack, second_index = _pack([(target_id, 7, _delta(base, target), base_id)])
    files: dict[str, Any] = {
        objects + "pack-b.pack": second_pack,
        objects + "pack-b.idx": second_index,
        BOUND_REPLY: stamped(target_id.hex()),
    }
    if base_kept:
        files |= {objects + "pack-a.pack": first_pack, objects + "pack-a.idx": first_index}
    root = write_tree(tmp_path, {**state(), **bound_layout(**files)})
    assert check(run_json, root) == (0, expected)


def test_a_commit_in_a_pack_over_the_size_limit_is_said_unread(
    tmp_path: Path, run_json: RunCLI
) -> None:
    """[49] a pack larger than limits.max-file-bytes is not read: the commit it holds (here the
    base of a delta) cannot be judged, and the finding says which file and why."""
    base = _commit("[agent zzzzzzzz] an earlier commit the delta starts from")
    target = _commit(f"[agent {BOUND_SID[:8]}] Fix the crash, packed")
    base_id, target_id = _object_id(base), _object_id(target)
    noise = os.urandom(60_000)  # incompressible: the pack is larger than the limit below
    noise_id = hashlib.sha1(b"blob " + str(len(noise)).encode() + b"\0" + noise).digest()
    first_pack, first_index = _pack([(base_id, 1, base, None), (noise_id, 3, noise, None)])
    second_pack, second_index = _pack([(target_id, 7, _delta(base, target), base_id)])
    objects = "code/proj/.git/objects/pack/"
    root = write_tree(tmp_path, {**state(), **bound_layout(**{
        objects + "pack-a.pack": first_pack, objects + "pack-a.idx": first_index,
        objects + "pack-b.pack": second_pack, objects + "pack-b.idx": second_index,
        BOUND_REPLY: stamped(target_id.hex()),
        ".continuity.toml": "[limits]\nmax-file-bytes = 50000\n"})})  # fmt: skip
    code, report = run_json("check", "--family", "sessions", "--all", "--root", str(root))
    assert (code, found(report)) == (0, [("SS149", BOUND_REPLY, "/metadata/project_commit/sha")])
    assert "pack-a.pack" in report["findings"][0]["message"]
    assert "cannot be read here" in report["findings"][0]["message"]


# --- [52] the state directory that keeps a bound session ----------------------------------------


def _below(prefix: str, files: dict[str, Any]) -> dict[str, Any]:
    return {prefix + path: content for path, content in files.items()}


def test_a_state_directory_below_the_root_judges_its_bound_sessions(
    tmp_path: Path, run_json: RunCLI
) -> None:
    """[52] the home directory is one level down (a backup of several homes): the state directory
    that lists the bound session is found between the project and the root, and its memory
    judges the session's markers."""
    home = {**state(), **bound_layout()}
    root = write_tree(tmp_path / "backup", _below("alice/", home))
    assert check(run_json, root) == (0, [])
    frames = home[ARCHIVE.replace(SID, BOUND_SID)]
    kept = frames[: frames.index('<a id="', 10 + frames.index("record-lines"))]
    (root / "alice" / ARCHIVE.replace(SID, BOUND_SID)).write_text(kept)
    marked = f"alice/{BOUND}history/0002-l-1a2b3c4d_reply.json"
    reply = json.loads((root / marked).read_text())
    reply["metadata"]["memory_written_scriptorium"] = "w-0a1b2c3d"
    (root / marked).write_text(json.dumps(reply))
    assert ("SS141", marked, "/metadata/memory_written_scriptorium") in check(run_json, root)[1]


def test_a_project_checked_on_its_own_says_its_markers_are_not_judged(
    tmp_path: Path, run_json: RunCLI
) -> None:
    """[52] with --root <project> the state directory is outside the root: SS150 once for the
    session, not a silent pass; the same project inside its home passes."""
    root = write_tree(tmp_path, {**state(), **bound_layout()})
    assert check(run_json, root) == (0, [])
    code, findings = check(run_json, root / "code/proj")
    node = f".openprogram/sessions/{BOUND_SID}/history/0001-u-1a2b3c4d.json"
    assert (code, [f for f in findings if f[0] == "SS150"]) == (
        0, [("SS150", node, "/metadata/memory_written_scriptorium")]
    )  # fmt: skip


# --- [54] the memory workspace as its own repository ---------------------------------------------


@pytest.mark.parametrize("layout", ["topics/ beside sources/", "committed as OpenProgram Memory"])
def test_the_memory_workspace_repository_keeps_sources_append_only(
    tmp_path: Path, run_json: RunCLI, layout: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """[54] OpenProgram makes <state>/memory/ a repository of its own, its runtime directory
    (.scriptorium/) excluded from commits by .git/info/exclude: the workspace is known by its
    layout or its identity. An append passes; a rewrite is SS210."""
    repo = tmp_path / "memory"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / ".git/info").mkdir(exist_ok=True)
    (repo / ".git/info/exclude").write_text("/.scriptorium*\n/.nativemem*\n")
    who = MEMORY if layout.startswith("committed") else [*MEMORY[:2], "-c", "user.email=m@x"]
    files = {".scriptorium/workspace-id": "w-0a1b2c3d\n", "sources/openprogram/_v2/s.md": "a\n"}
    if layout.startswith("topics"):
        files["topics/core.md"] = "# core\n"
    write_tree(repo, files)

    def commit(text: str, message: str) -> None:
        (repo / "sources/openprogram/_v2/s.md").write_text(text)
        _git(repo, "add", "-A")
        _git(repo, *who, *PLAIN, "commit", "-q", "-m", message)

    commit("a\n", "memory: initialize history")
    assert "scriptorium" not in _git(repo, "ls-files")
    commit("a\nb\n", "Update memory")
    code, report = run_json("verify", "--range", "HEAD", "--root", str(repo))
    assert (code, report["findings"]) == (0, [])
    # the commit hook sees the rewrite before it is committed (the identity from the repository)
    for key, value in (
        ("user.name", who[1].split("=", 1)[1]),
        ("user.email", who[3].split("=", 1)[1]),
    ):
        _git(repo, "config", key, value)
    monkeypatch.chdir(repo)
    (repo / "sources/openprogram/_v2/s.md").write_text("a\nc\n")
    _git(repo, "add", "-A")
    code, report = run_json("check", "--staged")
    assert [(f["rule"], f["commit"]) for f in report["findings"]] == [("SS210", "staged")]
    commit("a\nc\n", "Update memory")
    code, report = run_json("verify", "--range", "HEAD", "--root", str(repo))
    assert [(f["rule"], f["path"]) for f in report["findings"]] == [
        ("SS210", "sources/openprogram/_v2/s.md")
    ]


def test_a_plain_repository_with_sources_is_not_a_workspace(
    tmp_path: Path, run_json: RunCLI
) -> None:
    """[54] sources/ alone, committed by someone else, is any project's folder: not judged."""
    repo = tmp_path / "project"
    repo.mkdir()
    _git(repo, "init", "-q")
    for text in ("a\n", "b\n"):
        write_tree(repo, {"sources/notes.md": text})
        _git(repo, "add", "-A")
        _git(
            repo, "-c", "user.name=Alice", "-c", "user.email=a@x", *PLAIN, "commit", "-q", "-m", "x"
        )
    code, report = run_json("verify", "--range", "HEAD", "--root", str(repo))
    assert (code, report["findings"]) == (0, [])


# --- the synthetic corpus: each run of docs/sessions.md's table ----------------------------------

SESSION_A = ".openprogram/sessions/local_3f9a1c0d2e"
SESSION_B = ".openprogram/sessions/local_8b21e47a90"
SESSION_C = "code/wiki-agent/.openprogram/sessions/local_c47d09e5b1"


@pytest.mark.parametrize(
    ("root", "files", "warnings"),
    [
        (".", 34, []),
        (".openprogram", 22, [("SS133", "projects/projects.json", "/proj_3939bc8f/path"),
                              ("SS133", "sessions/locations.json", "/local_c47d09e5b1")]),
        ("code/wiki-agent", 12, []),
        (SESSION_A, 9, [("SS150", "history/0001-u-14144109.json", "/metadata/memory_written_scriptorium")]),
        (SESSION_B, 8, []),
        (SESSION_C, 11, [("SS133", "history/0002-l-eeef4f48_reply.json", "/metadata/project_commit/repo")]),
    ],
)  # fmt: skip
def test_corpus_runs_report_exactly_the_listed_warnings(
    read_only_corpus: Path, run_json: RunCLI, root: str, files: int, warnings: list[Any]
) -> None:
    target = read_only_corpus / root
    code, report = run_json("check", "--family", "sessions", "--all", "--root", str(target))
    assert (code, found(report), report["summary"]["files"]) == (0, warnings, files)
    assert all(f["severity"] == "warning" for f in report["findings"])
