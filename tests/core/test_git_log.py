"""parse_log on a recorded ``git log``: every way of splitting the output agrees with the
unsplit parse, and the recording is what today's git and arguments produce.

The recording (``tests/data/git-log.bin``) is the output of ``git log`` with
:func:`log_arguments` of :data:`REQUEST` on the repository :func:`build` makes: merges (clean,
evil, unrelated histories), a root commit, empty commits, an empty subject, a subject that is not
UTF-8, paths with spaces, tabs, quotes, non-ASCII and non-UTF-8 bytes, gitlinks, trailers.
Record it again after a change of the format with ``python tests/core/test_git_log.py``.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from continuity_checks.core.git.log import FIELDS, LogRequest, RawChange, log_arguments, parse_log

RECORDED = Path(__file__).parents[1] / "data" / "git-log.bin"
REQUEST = LogRequest(("Continuity-Delta", "Co-authored-by"), frozenset(FIELDS), gitlinks=True)
DELTA = ".deltalayer/changes/a b.json"


class _Builder:
    """Commits with fixed identities and dates, so that every id is the same on every run."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.clock = 1_790_000_000
        home = path.parent / "home"
        home.mkdir(parents=True, exist_ok=True)
        self.env = {
            "PATH": os.environ["PATH"],
            "HOME": str(home),
            "GIT_CONFIG_GLOBAL": str(home / "gitconfig"),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "Zoë Agent",
            "GIT_AUTHOR_EMAIL": "zoe@example.invalid",
            "GIT_COMMITTER_NAME": "Cid Committer",
            "GIT_COMMITTER_EMAIL": "cid@example.invalid",
        }
        path.mkdir(parents=True)
        self.git("init", "-q", "--object-format=sha1")
        self.git("symbolic-ref", "HEAD", "refs/heads/main")

    def git(self, *args: str, stdin: bytes | None = None) -> str:
        self.clock += 60
        env = {
            **self.env,
            "GIT_AUTHOR_DATE": f"{self.clock} +0800",
            "GIT_COMMITTER_DATE": f"{self.clock + 7} -0130",
        }
        result = subprocess.run(
            ["git", "-c", "commit.gpgsign=false", "-c", "core.autocrlf=false", *args],
            cwd=self.path,
            env=env,
            input=stdin,
            capture_output=True,
            check=True,
        )
        return result.stdout.decode("utf-8", "replace").strip()

    def write(self, files: dict[bytes, bytes]) -> None:
        for rel, content in files.items():
            target = os.path.join(bytes(self.path), rel)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "wb") as handle:
                handle.write(content)

    def commit(self, message: bytes, files: dict[bytes, bytes] | None = None) -> None:
        self.write(files or {})
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "--allow-empty-message", "-F", "-", stdin=message)


def build(path: Path) -> Path:
    b = _Builder(path)
    b.commit(
        b"root: odd paths\n\nContinuity-Delta: " + DELTA.encode() + b"\n",
        {
            DELTA.encode(): b"{}\n",
            b"tab\there.json": b"1",
            b'"q".json': b"2",
            "ünïcode ✓.json".encode(): b"3",
            b"bad/\xff\xfe.json": b"4",
            b"x/" * 20 + b"deep": b"5",
        },
    )
    b.commit(
        b"empty, with trailers\n\nBody.\n\n"
        b"Continuity-Delta: one.json\n"
        b"continuity-delta: ./two.json\n"
        b"Co-authored-by: Someone\n  Folded <s@example.invalid>\n"
        b"Signed-off-by: Zoe <zoe@example.invalid>\n"
    )
    b.commit(b"", {b"tab\there.json": b"11"})  # an empty message
    b.commit(b": a subject that starts with a colon \xe2\x9c\x93\n", {b'"q".json': b"22"})
    b.commit(b"not UTF-8: \xff\xfe\n", {b"bad/\xff\xfe.json": b"44"})
    (path / "vendor" / "sub").mkdir(parents=True)  # as an uninitialised submodule leaves it
    target = b.git("rev-parse", "HEAD~1")
    b.git("update-index", "--add", "--cacheinfo", f"160000,{target},vendor/sub")
    b.commit(b"add a gitlink\n")
    b.git(
        "update-index", "--add", "--cacheinfo", f"160000,{b.git('rev-parse', 'HEAD~1')},vendor/sub"
    )
    b.commit(b"move the gitlink\n")
    b.git("checkout", "-q", "-b", "side")
    b.commit(b"side: edit and delete\n", {DELTA.encode(): b"[]\n"})
    b.git("rm", "-q", '"q".json')
    b.commit(b"side: delete\n")
    b.git("checkout", "-q", "main")
    b.commit(b"main: edit\n", {"ünïcode ✓.json".encode(): b"33"})
    b.git("merge", "-q", "--no-ff", "--no-edit", "side")  # clean
    b.git("checkout", "-q", "-b", "side2", "HEAD~1")
    b.commit(b"side2\n", {b"side2 file": b"s"})
    b.git("checkout", "-q", "main")
    b.git("merge", "-q", "--no-ff", "--no-commit", "side2")
    b.write({b"tab\there.json": b"evil"})
    b.commit(b"evil merge\n\nContinuity-Delta: tab\there.json\n")
    b.git("checkout", "-q", "--orphan", "other")
    b.git("rm", "-q", "-r", "-f", ".")
    b.commit(b"other root\n", {b"other/file": b"o", DELTA.encode(): b"other\n"})
    b.git("checkout", "-q", "-f", "main")
    b.git("merge", "-q", "--allow-unrelated-histories", "-X", "theirs", "--no-edit", "other")
    b.commit(b"empty at the end\n")
    return path


def record(path: Path) -> bytes:
    command = ["git", "--no-replace-objects", *log_arguments(REQUEST)]
    result = subprocess.run(command, cwd=path, input=b"HEAD\n", capture_output=True, check=True)
    return result.stdout


def parse(chunks: list[bytes]) -> list[tuple[object, ...]]:
    return [(commit, tuple(changes)) for commit, changes in parse_log(chunks, REQUEST)]


DATA = RECORDED.read_bytes() if RECORDED.exists() else b""
WHOLE = parse([DATA])


def test_the_recording_parses_as_expected() -> None:
    subjects = [c.subject for c, _ in WHOLE]
    assert subjects == [
        "root: odd paths",
        "empty, with trailers",
        "",
        ": a subject that starts with a colon ✓",
        "not UTF-8: ÿþ",  # git takes a message that is not UTF-8 for Latin-1
        "add a gitlink",
        "move the gitlink",
        "main: edit",
        "side: edit and delete",
        "side: delete",
        "Merge branch 'side'",
        "side2",
        "evil merge",
        "other root",
        "Merge branch 'other'",
        "empty at the end",
    ]
    by_subject = {c.subject: (c, [(x.status, x.path) for x in ch]) for c, ch in WHOLE}
    root, changes = by_subject["root: odd paths"]
    assert root.parents == () and root.trailers == {"Continuity-Delta": (DELTA,)}
    assert sorted(changes) == sorted(
        [
            ("A", '"q".json'),
            ("A", DELTA),
            ("A", "bad/\\xff\\xfe.json"),
            ("A", "tab\there.json"),
            ("A", "x/" * 20 + "deep"),
            ("A", "ünïcode ✓.json"),
        ]
    )
    assert root.fields == {
        "author_name": "Zoë Agent",
        "author_email": "zoe@example.invalid",
        "author_date": "2026-09-21T22:17:20+08:00",
        "committer_name": "Cid Committer",
        "committer_email": "cid@example.invalid",
        "committer_date": "2026-09-21T12:47:27-01:30",
        "message": f"root: odd paths\n\nContinuity-Delta: {DELTA}\n",  # the whole message
    }
    empty, changes = by_subject["empty, with trailers"]
    assert changes == []
    assert empty.trailers == {
        "Continuity-Delta": ("one.json", "./two.json"),
        "Co-authored-by": ("Someone Folded <s@example.invalid>",),
    }
    assert by_subject[""][1] == [("M", "tab\there.json")]
    assert by_subject["add a gitlink"][1] == [("A", "vendor/sub")]
    [move] = next(ch for c, ch in WHOLE if c.subject == "move the gitlink")
    assert (move.old_mode, move.new_mode, move.status) == ("160000", "160000", "M")
    merge, changes = by_subject["Merge branch 'side'"]
    assert merge.is_merge and changes == [("D", '"q".json'), ("M", DELTA)]
    assert by_subject["evil merge"][1] == [("A", "side2 file"), ("M", "tab\there.json")]
    assert by_subject["Merge branch 'other'"][1] == [("M", DELTA), ("A", "other/file")]
    assert by_subject["empty at the end"][1] == []


def test_without_gitlinks_they_are_not_reported() -> None:
    plain = LogRequest(REQUEST.trailers, REQUEST.fields)
    commits = {c.subject: ch for c, ch in parse_log([DATA], plain)}
    assert commits["add a gitlink"] == [] and commits["move the gitlink"] == []


def test_every_single_split_agrees_with_the_whole() -> None:
    for cut in range(len(DATA) + 1):
        assert parse([DATA[:cut], DATA[cut:]]) == WHOLE, cut


def test_one_byte_at_a_time() -> None:
    assert parse([DATA[i : i + 1] for i in range(len(DATA))]) == WHOLE


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(DATA)), max_size=40))
def test_any_splits_agree_with_the_whole(cuts: list[int]) -> None:
    points = [0, *sorted(cuts), len(DATA)]
    assert parse([DATA[a:b] for a, b in itertools.pairwise(points)]) == WHOLE


@pytest.mark.skipif(sys.platform == "win32", reason="the recording has POSIX-only file names")
def test_the_recording_is_what_git_writes_today(tmp_path: Path) -> None:
    """The same repository built again, logged with today's arguments, parses the same (git
    may change bytes that do not matter, such as separators; ids and contents do not change)."""
    live = record(build(tmp_path / "repo"))
    assert parse([live]) == WHOLE


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as scratch:
        RECORDED.parent.mkdir(exist_ok=True)
        RECORDED.write_bytes(record(build(Path(scratch) / "repo")))
        print(f"recorded {RECORDED} ({RECORDED.stat().st_size} bytes)")


def _eager(chunks: list[bytes]) -> list[tuple[str, list[RawChange]]]:
    """The eager parse, its pieces of one commit joined again."""
    joined: list[tuple[str, list[RawChange]]] = []
    for commit, changes in parse_log(chunks, REQUEST, eager=True):
        if joined and joined[-1][0] == commit.sha:
            joined[-1][1].extend(changes)
        else:
            joined.append((commit.sha, list(changes)))
    return joined


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(DATA)), max_size=40))
def test_an_eager_parse_gives_every_change_of_the_whole(cuts: list[int]) -> None:
    """Eager (``Repository.added_by``, which stops git early): each change as soon as it has
    arrived, in the same order and with the same commits; commits without changes left out."""
    points = [0, *sorted(cuts), len(DATA)]
    whole = [(c.sha, list(ch)) for c, ch in parse_log([DATA], REQUEST) if ch]
    assert _eager([DATA[a:b] for a, b in itertools.pairwise(points)]) == whole
    assert _eager([DATA[i : i + 1] for i in range(len(DATA))]) == whole
