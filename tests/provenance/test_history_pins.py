"""PV2xx history rules through ``continuity verify`` and the commit hook on real git repositories:
the pins of the listings followed through a range (an original changed or deleted without its
listing, PV203), and a field that exempts an original from its pin (PV204)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from continuity_checks.checks.provenance.family import ProvenanceFamily
from continuity_checks.core.config import Config
from continuity_checks.core.family import Commit, CommitContext
from continuity_checks.core.snapshot import WorkTree
from tests.conftest import REPO, RunCLI, write_tree
from tests.helpers.git import GitRepo, isolate_git
from tests.helpers.sums import art, h, manifest, sums

SHA = "c0ffee" + "0" * 34
A, B, C = b"alpha\n", b"beta\n", b"gamma\n"
M = "PROVENANCE.json"
PRIVATE = art(b"secret", "private/raw.csv", in_repository=False)
DERIVED = art(B, "b.txt", role="derived", derived_from="private/raw.csv", derivation="redacted")
MBASE = {"a.txt": A, "b.txt": B, M: manifest(art(A, "a.txt"), PRIVATE, DERIVED)}


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    isolate_git(monkeypatch, tmp_path / "home")
    return GitRepo(tmp_path / "repo")


# --- PV203 at every commit: an original changed or deleted without its listing ----------------


def findings_of(report: dict[str, Any]) -> list[tuple[str, str, str, int | None, str | None]]:
    return [
        (f["rule"], f["path"], f["commit"], f["line"], f.get("pointer")) for f in report["findings"]
    ]


def verify_range(run_json: RunCLI, repo: GitRepo, base: str, *extra: str) -> tuple[int, Any]:
    return run_json("verify", "--range", f"{base}..HEAD", "--root", str(repo.path), *extra)


def test_verify_an_original_changed_alone_is_pv203_at_its_line(
    repo: GitRepo, run_json: RunCLI
) -> None:
    """The listing was committed before the range: what it pins is read at the range's start."""
    repo.commit("files", {"a.txt": A, "b.txt": B, "SHA256SUMS": sums((A, "a.txt"), (B, "b.txt"))})
    base = repo.commit("unrelated", {"notes.txt": "x\n"})
    repo.commit("unrelated again", {"notes.txt": "y\n"})
    edited = repo.commit("edit b alone", {"b.txt": C})
    code, report = verify_range(run_json, repo, base)
    assert code == 1
    assert findings_of(report) == [("PV203", "SHA256SUMS", edited, 2, None)]
    message = report["findings"][0]["message"]
    assert f"expected the original's bytes to stay (SHA-256 {h(B)}), found SHA-256 {h(C)}" in (
        message
    )


def test_verify_an_original_deleted_alone_is_pv203(repo: GitRepo, run_json: RunCLI) -> None:
    """A deletion is PV203 too (an original's bytes never change; gone is a change): see
    docs/decisions.md."""
    base = repo.commit(
        "files", {"a.txt": A, "b.txt": B, "SHA256SUMS": sums((A, "a.txt"), (B, "b.txt"))}
    )
    deleted = repo.commit("delete a alone", delete=["a.txt"])
    code, report = verify_range(run_json, repo, base)
    assert code == 1
    assert findings_of(report) == [("PV203", "SHA256SUMS", deleted, 1, None)]
    assert "found the file deleted" in report["findings"][0]["message"]


def test_verify_a_manifest_original_changed_alone_is_pv203_at_its_pointer(
    repo: GitRepo, run_json: RunCLI
) -> None:
    """The manifest's own mismatch at the original's entry is the same root cause: PV203
    alone. A derived artifact edited alone is no PV203, but the commit leaves the manifest
    false at its entry."""
    base = repo.commit("evidence", dict(MBASE))
    edited = repo.commit("edit a", {"a.txt": C})
    derived = repo.commit("edit the derived b", {"b.txt": C})
    code, report = verify_range(run_json, repo, base, "--family", "provenance")
    assert code == 1
    assert findings_of(report) == [
        ("PV203", M, edited, 6, "/artifacts/0/sha256"),
        ("PV104", M, derived, 19, "/artifacts/2/sha256"),
        ("PV106", M, derived, 20, "/artifacts/2/size"),
    ]


def test_verify_passes_commits_around_listed_originals(repo: GitRepo, run_json: RunCLI) -> None:
    """Near-misses: unlisted files change, a listed file's mode alone changes, a file is added
    where a listing names a missing one, and with ``relative-to = "sums-file"`` a file of the
    same name beside another listing is not pinned."""
    base = repo.commit(
        "files",
        {
            ".continuity.toml": '[provenance]\nrelative-to = "sums-file"\n',
            "a.txt": A,
            "notes.txt": "n\n",
            "SHA256SUMS": sums((A, "a.txt"), (B, "later.txt")),
            "sub/c.txt": C,
            "sub/SHA256SUMS": sums((C, "c.txt")),
        },
    )
    repo.commit("unlisted", {"notes.txt": "m\n", "c.txt": A})  # c.txt at the root: not pinned
    (repo.path / "a.txt").chmod(0o755)
    repo.commit("mode only")
    repo.commit("the missing file arrives", {"later.txt": B})
    code, report = verify_range(run_json, repo, base, "--family", "provenance")
    assert (code, findings_of(report)) == (0, [])
    edited = repo.commit("edit the nested original", {"sub/c.txt": A})
    code, report = verify_range(run_json, repo, base, "--family", "provenance")
    assert (code, findings_of(report)) == (1, [("PV203", "sub/SHA256SUMS", edited, 1, None)])


def test_verify_pins_follow_the_listings_through_the_range(repo: GitRepo, run_json: RunCLI) -> None:
    """Pins move with the listings: an entry removed with its file is PV202 alone; once gone,
    its file is free; a file listed in the range is pinned from that commit on; an entry moved
    to a renamed listing stays pinned. The empty listing is an error of its own (PV101), so the
    next version is judged from the one before it; the removal it shows is still reported once,
    at the commit that made it."""
    base = repo.commit("files", {"a.txt": A, "b.txt": B, "SHA256SUMS": sums((A, "a.txt"))})
    dropped = repo.commit("drop a with its entry", {"a.txt": C, "SHA256SUMS": b""})
    repo.commit("a is free now", {"a.txt": B})
    repo.commit("list b", {"SHA256SUMS": sums((B, "b.txt"))})
    repo.commit(
        "move the listing", {"evidence/SHA256SUMS": sums((B, "b.txt"))}, delete=["SHA256SUMS"]
    )
    edited = repo.commit("edit b", {"b.txt": A})
    code, report = verify_range(run_json, repo, base, "--family", "provenance")
    assert code == 1
    assert [(r, p, c) for r, p, c, _, _ in findings_of(report)] == [
        ("PV101", "SHA256SUMS", dropped),
        ("PV202", "SHA256SUMS", dropped),
        ("PV203", "evidence/SHA256SUMS", edited),
    ]


def test_verify_rebuilds_the_pins_at_a_merge(repo: GitRepo, run_json: RunCLI) -> None:
    """Each branch lists the file the other edits. Whichever branch is walked first, the other's
    commit is judged by its own parent's listings (its file not listed there), not by what the
    walk saw just before; the merge then brings a change of a listed original into the
    mainline (PV203) and an entry its tree does not match (PV104)."""
    base = repo.commit("files", {"b.txt": B, "c.txt": C})
    repo.git("checkout", "-q", "-b", "side")
    side = repo.commit("list b, edit c", {"side.sha256": sums((B, "b.txt")), "c.txt": A})
    repo.git("checkout", "-q", "main")
    main = repo.commit("list c, edit b", {"main.sha256": sums((C, "c.txt")), "b.txt": A})
    repo.git("merge", "-q", "--no-ff", "--no-edit", "side")
    merge = repo.head()
    code, report = verify_range(run_json, repo, base, "--family", "provenance")
    assert code == 1
    assert sorted((f["rule"], f["path"], f["commit"]) for f in report["findings"]) == [
        ("PV104", "side.sha256", merge),
        ("PV203", "main.sha256", merge),
    ]
    assert side != main


def test_verify_a_broken_listing_keeps_its_pins_and_an_excluded_one_pins_nothing(
    repo: GitRepo, run_json: RunCLI
) -> None:
    """A manifest version that does not parse (its error is reported where it is made) keeps
    pinning what its last version that parsed pinned: an edit of the original in between is
    PV203, and the mended version is compared with the last good one (PV201 for the new
    digest). A listing the configuration excludes is never read, so the file it lists is free
    (the engine hands over none of its changes to keep the map true)."""
    base = repo.commit(
        "files",
        {
            ".continuity.toml": 'exclude = ["vendor/**"]\n',
            "a.txt": A,
            "v.txt": B,
            M: manifest(art(A, "a.txt")),
            "vendor/SHA256SUMS": sums((B, "v.txt")),
        },
    )
    broken = repo.commit("break the manifest", {M: b"{"})
    edited = repo.commit("edit a and v", {"a.txt": C, "v.txt": C})
    mended = repo.commit("mend the manifest", {M: manifest(art(C, "a.txt"))})
    again = repo.commit("edit a again", {"a.txt": A})
    code, report = verify_range(run_json, repo, base, "--family", "provenance")
    assert code == 1
    assert [(f["rule"], f["path"], f["commit"], f["line"]) for f in report["findings"]] == [
        ("CC004", M, broken, 1),
        ("PV203", M, edited, None),  # the tree's version has no entry to point at
        ("PV201", M, mended, 6),
        ("PV203", M, again, 6),
    ]


def test_verify_a_truncated_listing_in_between_does_not_reset_its_pins(
    repo: GitRepo, run_json: RunCLI
) -> None:
    """A lists an original; B leaves the manifest truncated; C restores it without the
    original's entry and rewrites the original: C is judged from A's version (PV202), and the
    parse error is B's."""
    base = repo.commit("files", {"a.txt": A, "b.txt": B})
    repo.commit("list a and b", {M: manifest(art(A, "a.txt"), art(B, "b.txt"))})
    truncated = repo.commit("truncate", {M: manifest(art(A, "a.txt"), art(B, "b.txt"))[:40]})
    restored = repo.commit("restore without a, rewrite a",
                           {M: manifest(art(B, "b.txt")), "a.txt": C})  # fmt: skip
    code, report = verify_range(run_json, repo, base, "--family", "provenance")
    assert code == 1
    assert [(f["rule"], f["commit"], f.get("pointer")) for f in report["findings"]] == [
        ("CC004", truncated, None),
        ("PV202", restored, "/artifacts/0/sha256"),
    ]
    assert '"a.txt"' in report["findings"][1]["message"]


@pytest.mark.parametrize(
    ("change", "found"),
    [
        ({"b.txt": b"BETA\n"}, [("PV104", "/artifacts/2/sha256")]),
        ({"b.txt": C}, [("PV104", "/artifacts/2/sha256"), ("PV106", "/artifacts/2/size")]),
        (None, [("PV103", "/artifacts/2/path")]),
    ],
    ids=["edited", "resized", "deleted"],
)
def test_verify_a_derived_artifact_changed_alone_breaks_its_manifest(
    repo: GitRepo, run_json: RunCLI, change: dict[str, bytes] | None, found: list[tuple[str, str]]
) -> None:
    """A derived artifact may be remade, but with its entry: changed or deleted alone, the
    commit leaves its manifest false, at that commit. The manifest lives in another directory
    than the artifact (the paths of a manifest are relative to the root)."""
    listing = f"evidence/{M}"
    base = repo.commit("evidence", {**{k: v for k, v in MBASE.items() if k != M},
                                    listing: MBASE[M], "n.txt": "x\n"})  # fmt: skip
    repo.commit("unrelated", {"n.txt": "y\n"})
    alone = repo.commit("the derived b alone", change or {}, delete=[] if change else ["b.txt"])
    code, report = verify_range(run_json, repo, base)
    assert code == 1
    assert [(f["rule"], f["path"], f["commit"], f["pointer"]) for f in report["findings"]] == [
        (rule, listing, alone, pointer) for rule, pointer in found
    ]


def test_verify_a_listed_file_arriving_with_other_bytes_is_pv104(
    repo: GitRepo, run_json: RunCLI
) -> None:
    """A sums file names a file that is not there yet (PV103, in the base); the commit that adds
    it with other bytes than listed leaves a mismatch, reported there. The sums file is in a
    directory of its own, naming paths from the root."""
    listing = "evidence/provenance/SHA256SUMS.txt"
    base = repo.commit("listed ahead", {listing: sums((B, "evidence/raw/later.txt"))})
    arrived = repo.commit("it arrives, other bytes", {"evidence/raw/later.txt": C})
    code, report = verify_range(run_json, repo, base)
    assert (code, findings_of(report)) == (1, [("PV104", listing, arrived, 1, None)])


def test_dependents_answer_from_the_index_without_reading_the_tree(tmp_path: Path) -> None:
    """After a commit is checked, which listings name a path is a look-up: the tree is not
    read for a path no listing names, nor searched for one that a listing names."""
    family = ProvenanceFamily(Config())
    before = {**MBASE, "sub/SHA256SUMS": sums((A, "a.txt"))}
    write_tree(tmp_path / "before", before)
    write_tree(tmp_path / "after", before)
    tree = WorkTree(tmp_path / "after", 1 << 20)
    context = CommitContext(
        Commit(sha=SHA, parents=("p" * 40,), subject="s", trailers={}),
        [],
        WorkTree(tmp_path / "before", 1 << 20),
        tree,
    )
    assert list(family.check_commit(context)) == []

    class Untouchable(WorkTree):
        def __getattribute__(self, name: str) -> Any:
            if name in ("read", "list", "exists", "find", "sha256", "is_dir", "size"):
                raise AssertionError(f"the tree was asked: {name}")
            return super().__getattribute__(name)

    untouchable = Untouchable(tmp_path / "after", 1 << 20)
    assert sorted(family.dependents("a.txt", untouchable, False)) == [M, "sub/SHA256SUMS"]
    assert list(family.dependents("b.txt", untouchable, False)) == [M]
    assert (
        list(family.dependents("private/raw.csv", untouchable, False)) == []
    )  # not in the repository
    assert list(family.dependents("notes/other.txt", untouchable, False)) == []


def test_staged_change_of_an_original_is_caught(
    repo: GitRepo, run_json: RunCLI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The commit hook judges the commit being made: an original edited alone, staged."""
    repo.commit("files", {"a.txt": A, "SHA256SUMS": sums((A, "a.txt")), "n.txt": "x\n"})
    monkeypatch.chdir(repo.path)
    repo.write({"n.txt": "y\n"})
    repo.git("add", "-A")
    assert run_json("check", "--staged", "n.txt")[0] == 0  # an unlisted file: passes
    repo.write({"a.txt": B})
    repo.git("add", "-A")
    code, report = run_json("check", "--staged", "a.txt")
    assert code == 1
    assert findings_of(report) == [("PV203", "SHA256SUMS", "staged", 1, None)]
    repo.git("rm", "-q", "--cached", "a.txt")
    code, report = run_json("check", "--staged", "--family", "provenance")
    assert (code, [f["rule"] for f in report["findings"]]) == (1, ["PV203"])
    assert "found the file deleted" in report["findings"][0]["message"]


def test_the_listings_walk_skips_what_the_engine_skips() -> None:
    from continuity_checks.checks.provenance import family
    from continuity_checks.core.skipped_dirs import SKIP_DIRS
    from continuity_checks.engine import discovery

    assert discovery.SKIP_DIRS is family.SKIP_DIRS is SKIP_DIRS  # one list, not two kept equal


@pytest.mark.parametrize(
    ("config", "listing"),
    [
        ("", "deep/er/SHA256SUMS"),
        ("", "deep/er/evidence.sha256"),
        # a pattern that ends with a wildcard: no ending to search for, every directory is read
        ('[provenance]\nsums-files = ["SUMS*"]\n', "deep/er/SUMS-2026"),
    ],
)
def test_the_commit_hook_finds_a_nested_listing_beside_many_files(
    repo: GitRepo, run_json: RunCLI, monkeypatch: pytest.MonkeyPatch, config: str, listing: str
) -> None:
    """The pins of the commit being made come from the listings of HEAD's tree, found without
    parsing the directories that cannot hold one (here 300 files of other names): a listing
    several directories down is still found, and an edit of what it pins is PV203."""
    files: dict[str, str | bytes] = {f"bulk/{n:03d}.txt": f"{n}\n" for n in range(300)}
    files |= {"deep/er/a.txt": A, listing: sums((A, "deep/er/a.txt"))}
    if config:
        files[".continuity.toml"] = config
    repo.commit("listed", files)
    repo.write({"deep/er/a.txt": C, "bulk/007.txt": "edited\n"})
    repo.git("add", "-A")
    monkeypatch.chdir(repo.path)
    code, report = run_json("check", "--staged", "deep/er/a.txt", "--family", "provenance")
    assert code == 1
    assert findings_of(report) == [("PV203", listing, "staged", 1, None)]


def test_a_listing_added_after_commits_without_any_still_pins(
    repo: GitRepo, run_json: RunCLI
) -> None:
    """Commits before the first listing skip the provenance checks (there is nothing to pin);
    the commit that adds one and those after it are checked as always."""
    base = repo.commit("files", {"a.txt": A, "b.txt": B})
    repo.commit("unrelated", {"notes.txt": "x\n"})
    repo.commit("list a", {"SHA256SUMS": sums((A, "a.txt"))})
    repo.commit("unrelated again", {"notes.txt": "y\n"})
    edited = repo.commit("edit a alone", {"a.txt": C})
    code, report = verify_range(run_json, repo, base)
    assert (code, findings_of(report)) == (1, [("PV203", "SHA256SUMS", edited, 1, None)])


def test_the_commit_hook_without_listings_loads_no_provenance_check(repo: GitRepo) -> None:
    """In a repository without a sums file or manifest (most of them) the commit hook finds
    none in HEAD's tree and imports none of the provenance check modules."""
    repo.commit("files", {"a.txt": A})
    repo.write({"a.txt": B})
    repo.git("add", "a.txt")
    script = (
        "import sys\n"
        "from continuity_checks.cli import main\n"
        "code = main(['check', '--staged', 'a.txt', '--family', 'provenance'])\n"
        "heavy = ['history', 'listed', 'sums', 'manifest']\n"
        "prefix = 'continuity_checks.checks.provenance.'\n"
        "print(code, sorted(m for m in heavy if prefix + m in sys.modules))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=repo.path, env=env, capture_output=True, text=True
    )
    assert done.stdout.strip().splitlines()[-1] == "0 []", done.stderr


# --- a field that exempts an original from its pin changes the pin (PV204) -------------------

#: the fields that make a manifest entry of a.txt stop pinning it, and where the finding points
EXEMPTIONS = {
    "kept elsewhere": ({"in_repository": False}, "/artifacts/0/in_repository"),
    "derived": (
        {"role": "derived", "derived_from": "b.txt", "derivation": "copied"},
        "/artifacts/0/role",
    ),
}
PINNED = {"a.txt": A, "b.txt": B, M: manifest(art(A, "a.txt"), art(B, "b.txt"))}


def exempted_manifest(how: str) -> bytes:
    return manifest(art(A, "a.txt", **EXEMPTIONS[how][0]), art(B, "b.txt"))


@pytest.mark.parametrize("how", sorted(EXEMPTIONS))
def test_verify_an_exempted_original_is_pv204_where_its_pin_is_dropped(
    repo: GitRepo, run_json: RunCLI, how: str
) -> None:
    """An original once pinned, then declared kept elsewhere (or derived) by its own entry,
    then rewritten: the commit that declares the exemption changed the pin and is named; the
    rewrite after it is of a file no listing pins."""
    base = repo.commit("evidence", dict(PINNED))
    exempted = repo.commit("exempt a", {M: exempted_manifest(how)})
    rewrite = repo.commit("rewrite a", {"a.txt": C})
    # a derived entry still states a.txt's digest: the rewrite leaves it false (PV104)
    false = [("PV104", M, rewrite, "/artifacts/0/sha256")] if how == "derived" else []
    code, report = verify_range(run_json, repo, base)
    assert code == 1
    assert [(r, p, c, ptr) for r, p, c, _, ptr in findings_of(report)] == [
        ("PV204", M, exempted, EXEMPTIONS[how][1]),
        *false,
    ]
    message = report["findings"][0]["message"]
    assert '"a.txt"' in message and h(A) in message, message
    code, report = run_json("verify", "--range", "HEAD", "--root", str(repo.path))
    assert (code, [(f["rule"], f["commit"]) for f in report["findings"]]) == (
        1,
        [("PV204", exempted), *((rule, sha) for rule, _, sha, _ in false)],
    )


@pytest.mark.parametrize("how", sorted(EXEMPTIONS))
def test_the_commit_hook_catches_the_exemption_of_an_original(
    repo: GitRepo, run_json: RunCLI, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """``check --staged`` at the commit that declares the exemption: the pin's change is the
    commit's finding before it is made."""
    repo.commit("evidence", dict(PINNED))
    repo.write({M: exempted_manifest(how)})
    repo.git("add", "-A")
    monkeypatch.chdir(repo.path)
    code, report = run_json("check", "--staged", M)
    assert code == 1
    assert [(r, p, c, ptr) for r, p, c, _, ptr in findings_of(report)] == [
        ("PV204", M, "staged", EXEMPTIONS[how][1])
    ]


def test_verify_an_exemption_with_the_rewrite_in_one_commit_is_one_pv204(
    repo: GitRepo, run_json: RunCLI
) -> None:
    """The exemption and the rewrite it allows in the same commit: one cause, one finding."""
    base = repo.commit("evidence", dict(PINNED))
    both = repo.commit("exempt and rewrite a", {M: exempted_manifest("kept elsewhere"), "a.txt": C})
    code, report = verify_range(run_json, repo, base)
    assert (code, [(f["rule"], f["commit"]) for f in report["findings"]]) == (1, [("PV204", both)])


@pytest.mark.parametrize("how", sorted(EXEMPTIONS))
def test_verify_a_sums_entry_moved_into_a_manifest_as_exempt_is_pv204(
    repo: GitRepo, run_json: RunCLI, how: str
) -> None:
    """Moving an entry between listings keeps it listed; moving a pinned sums entry into a
    manifest entry that pins nothing drops the pin, at the manifest's entry."""
    base = repo.commit(
        "evidence", {"a.txt": A, "b.txt": B, "SHA256SUMS": sums((A, "a.txt"), (B, "b.txt"))}
    )
    moved = repo.commit("move a", {"SHA256SUMS": sums((B, "b.txt")), M: exempted_manifest(how)})
    rewrite = repo.commit("rewrite a", {"a.txt": C})
    # a derived entry still states a.txt's digest: the rewrite leaves it false (PV104)
    false = [("PV104", M, rewrite, "/artifacts/0/sha256")] if how == "derived" else []
    code, report = verify_range(run_json, repo, base)
    assert code == 1
    assert [(r, p, c, ptr) for r, p, c, _, ptr in findings_of(report)] == [
        ("PV204", M, moved, EXEMPTIONS[how][1]),
        *false,
    ]
    assert "SHA256SUMS" in report["findings"][0]["message"]


def test_verify_passes_pins_that_are_taken_up_not_dropped(repo: GitRepo, run_json: RunCLI) -> None:
    """Near-misses: an entry kept elsewhere that comes into the repository with its bytes, and
    a derived artifact that becomes an original, add pins; an exemption spelled out where it
    was already the case (``"in_repository": true`` written, a description) changes none."""
    base = repo.commit(
        "evidence",
        {"b.txt": B, M: manifest(art(A, "a.txt", in_repository=False), PRIVATE, DERIVED)},
    )
    repo.commit(
        "a arrives, b becomes an original",
        {"a.txt": A, M: manifest(art(A, "a.txt", in_repository=True), PRIVATE, art(B, "b.txt"))},
    )
    repo.commit(
        "described",
        {M: manifest(art(A, "a.txt", description="now here"), PRIVATE, art(B, "b.txt"))},
    )
    code, report = verify_range(run_json, repo, base)
    assert (code, report["findings"]) == (0, [])
    edited = repo.commit("edit b, now pinned", {"b.txt": C})
    code, report = verify_range(run_json, repo, base)
    assert (code, [(f["rule"], f["commit"]) for f in report["findings"]]) == (
        1,
        [("PV203", edited)],
    )


def test_verify_an_entry_brought_into_the_repository_must_be_true(
    repo: GitRepo, run_json: RunCLI
) -> None:
    """An entry kept elsewhere that the commit declares kept in the repository now names a
    file of the commit's tree: the file must be there and match, like a new entry's."""
    base = repo.commit("evidence", {"b.txt": B, M: manifest(art(A, "a.txt", in_repository=False))})
    declared = repo.commit("a is here now", {M: manifest(art(A, "a.txt"))})
    code, report = verify_range(run_json, repo, base)
    assert (code, [(f["rule"], f["commit"]) for f in report["findings"]]) == (
        1,
        [("PV103", declared)],
    )


def test_verify_an_exemption_leaves_the_pins_of_other_listings(
    repo: GitRepo, run_json: RunCLI
) -> None:
    """An entry exempted in one listing while another listing still pins the file: the
    exemption is PV204 at its key, and the rewrite in the same commit is the other listing's
    PV203."""
    base = repo.commit(
        "evidence", {"a.txt": A, "SHA256SUMS": sums((A, "a.txt")), M: manifest(art(A, "a.txt"))}
    )
    both = repo.commit(
        "exempt and rewrite a",
        {"a.txt": C, M: manifest(art(A, "a.txt", in_repository=False))},
    )
    code, report = verify_range(run_json, repo, base)
    assert (code, sorted(findings_of(report))) == (
        1,
        [
            ("PV203", "SHA256SUMS", both, 1, None),
            ("PV204", M, both, 9, "/artifacts/0/in_repository"),
        ],
    )
