"""Listings GNU ``sha256sum`` writes are judged as ``sha256sum -c --strict`` judges them.

Each test writes real files with awkward names (a backslash, a newline, a carriage return,
blanks, a leading ``*``) in a real git repository, lets the real ``sha256sum`` list them, and
asserts that ``continuity check`` and ``sha256sum -c --strict`` agree: both pass what GNU wrote,
both fail a changed byte, and what ``continuity provenance add`` writes ``sha256sum -c`` verifies.
"""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest

from continuity_checks.cli import main
from tests.conftest import RunCLI, rules_of
from tests.helpers.git import GitRepo, isolate_git

pytestmark = pytest.mark.skipif(
    shutil.which("sha256sum") is None, reason="needs GNU sha256sum (coreutils)"
)

#: awkward file names: each forces GNU's escaped line or a blank GNU keeps
AWKWARD = [
    "back\\slash",
    "new\nline",
    "cr\rname",
    "both\\n\nkinds",
    "*star",
    " lead",
    "trail ",
    "in ner",
    "tab\tname",
    "end\\",
    "..\\not-a-parent",  # a name on POSIX, but it would climb out where \ separates
    "\\rooted",  # the same: absolute where \ separates
]
SAFE = AWKWARD[:-2]
_ALPHABET = ["a", "b", "\\", "\n", "\r", " ", "*", "\t", "é", "-", "n", "r"]


def random_names(seed: int, count: int) -> list[str]:
    """File names drawn from the characters sha256sum escapes or keeps (no ``/``)."""
    rnd = random.Random(seed)
    names: set[str] = set()
    while len(names) < count:
        name = "".join(rnd.choice(_ALPHABET) for _ in range(rnd.randint(1, 6)))
        # not "-" (standard input to sha256sum), nor a leading \ (absolute where it separates)
        if name not in (".", "..", "-") and not name.startswith("\\"):
            names.add(name)
    return sorted(names)


def gnu(repo: Path, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["sha256sum", *args], cwd=repo, capture_output=True, input=stdin)


def gnu_checks(repo: Path, listing: str) -> bool:
    return gnu(repo, "-c", "--strict", "--", listing).returncode == 0


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    isolate_git(monkeypatch, tmp_path / "home")
    repo = GitRepo(tmp_path / "repo")
    monkeypatch.chdir(repo.path)  # continuity check SHA256SUMS, as a user runs it there
    return repo


def listed_by_gnu(
    repo: GitRepo, names: list[str], *options: str, listing: str = "SHA256SUMS"
) -> None:
    """Write each name's file, let sha256sum list them with ``options``, commit everything."""
    repo.write({name: f"bytes of {name!r}\n" for name in names})
    out = gnu(repo.path, *options, "--", *names)
    assert out.returncode == 0, out.stderr
    repo.commit("evidence", {listing: out.stdout})


@pytest.mark.parametrize(
    "options", [(), ("--binary",), ("--tag",)], ids=["text", "binary", "bsd-tag"]
)
def test_what_sha256sum_writes_for_awkward_names_passes(
    repo: GitRepo, run_json: RunCLI, options: tuple[str, ...]
) -> None:
    """A name with a backslash was CC010 (the listing refused), though sha256sum -c passes it."""
    listed_by_gnu(repo, SAFE, *options)
    assert gnu_checks(repo.path, "SHA256SUMS")
    code, report = run_json("check", "SHA256SUMS")
    assert (code, report["findings"]) == (0, [])


@pytest.mark.parametrize("seed", range(6))
def test_generated_names_agree_with_sha256sum(repo: GitRepo, run_json: RunCLI, seed: int) -> None:
    """Writer semantics: every listing the real sha256sum writes has zero errors, and a changed
    byte fails both tools on the same line."""
    names = random_names(seed, 8)
    listed_by_gnu(repo, names, *(("--binary",) if seed % 2 else ()))
    assert gnu_checks(repo.path, "SHA256SUMS")
    code, report = run_json("check", "SHA256SUMS")
    assert (code, report["findings"]) == (0, [])

    changed = random.Random(seed).choice(names)
    (repo.path / changed).write_bytes(b"changed\n")
    assert not gnu_checks(repo.path, "SHA256SUMS")
    code, report = run_json("check", "SHA256SUMS")
    assert (code, [f["rule"] for f in report["findings"]]) == (1, ["PV104"])
    assert report["findings"][0]["line"] == names.index(changed) + 1


def test_a_name_that_would_climb_out_where_backslash_separates_is_refused(
    repo: GitRepo, run_json: RunCLI
) -> None:
    """``..\\x`` and ``\\x`` name files in the root to GNU on POSIX, but ``../x`` and
    ``/x`` where \\ separates (Windows): CC010, the listing is not read there."""
    listed_by_gnu(repo, ["a", *AWKWARD[-2:]])
    assert gnu_checks(repo.path, "SHA256SUMS")
    code, report = run_json("check", "SHA256SUMS")
    assert code == 1
    assert rules_of(report) == [("CC010", "SHA256SUMS", 2), ("CC010", "SHA256SUMS", 3)]


def test_provenance_add_writes_what_sha256sum_verifies(repo: GitRepo, run_json: RunCLI) -> None:
    """``provenance add`` refused a name with a backslash; its lines are GNU's own."""
    names = SAFE + random_names(7, 6)
    repo.write({name: f"bytes of {name!r}\n" for name in names})
    assert main(["provenance", "add", *names]) == 0
    assert gnu_checks(repo.path, "SHA256SUMS")
    written = (repo.path / "SHA256SUMS").read_bytes()
    assert written == gnu(repo.path, "--", *names).stdout  # byte for byte what GNU writes
    repo.commit("listed")
    code, report = run_json("check", "SHA256SUMS")
    assert (code, report["findings"]) == (0, [])


def test_one_path_twice(repo: GitRepo, run_json: RunCLI) -> None:
    """GNU passes two lines with one digest (PV109, a warning: exit 0) and fails two digests
    (PV105, exit 1); before, both were PV105 errors."""
    listed_by_gnu(repo, ["back\\slash", "plain"])
    lines = (repo.path / "SHA256SUMS").read_bytes().splitlines(keepends=True)
    repo.write({"SHA256SUMS": lines[0] + lines[1] + lines[0]})
    assert gnu_checks(repo.path, "SHA256SUMS")
    code, report = run_json("check", "SHA256SUMS")
    assert (code, rules_of(report)) == (0, [("PV109", "SHA256SUMS", 3)])
    assert report["findings"][0]["severity"] == "warning"

    plain_digest = lines[1][:64]
    repo.write({"SHA256SUMS": lines[0] + lines[1] + b"\\" + plain_digest + b"  back\\\\slash\n"})
    assert not gnu_checks(repo.path, "SHA256SUMS")
    code, report = run_json("check", "SHA256SUMS")
    assert (code, rules_of(report)) == (1, [("PV105", "SHA256SUMS", 3)])


@pytest.mark.parametrize(
    ("extra", "gnu_passes"),
    [(b"\n", True), (b"\r\n", True), (b"  \n", False), (b"\t\n", False), (b" \t \r\n", False)],
    ids=["empty", "empty-crlf", "spaces", "tab", "blanks-crlf"],
)
def test_a_line_of_only_blanks_fails_as_with_strict(
    repo: GitRepo, run_json: RunCLI, extra: bytes, gnu_passes: bool
) -> None:
    """A line of only spaces or tabs passed as blank; sha256sum -c --strict fails it."""
    listed_by_gnu(repo, ["a", "b"])
    data = (repo.path / "SHA256SUMS").read_bytes()
    first, _, rest = data.partition(b"\n")
    repo.write({"SHA256SUMS": first + b"\n" + extra + rest})
    assert gnu_checks(repo.path, "SHA256SUMS") is gnu_passes
    code, report = run_json("check", "SHA256SUMS")
    expected = [] if gnu_passes else [("PV102", "SHA256SUMS", 2)]
    assert (code, rules_of(report)) == (0 if gnu_passes else 1, expected)
