"""PV2xx history rules: each caught at its commit with its position, and near-misses passed.

The first tests drive ``check_commit`` with real snapshots of two trees on disk (the parent's and
the commit's) and the listing versions as the commit's changes; the last ones run ``continuity
verify`` on real temporary git repositories.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pytest

from continuity_checks.checks.provenance.family import ProvenanceFamily
from continuity_checks.core.config import Config
from continuity_checks.core.family import Change, Commit, CommitContext
from continuity_checks.core.findings import Finding
from continuity_checks.core.snapshot import CommitTree, WorkTree
from tests.conftest import CORPUS, RunCLI, write_tree
from tests.helpers.git import GitRepo, isolate_git
from tests.helpers.sums import art, h, manifest, sums

SHA = "c0ffee" + "0" * 34
A, B, C = b"alpha\n", b"beta\n", b"gamma\n"


def run_commit(
    tmp_path: Path, before: dict[str, bytes], after: dict[str, bytes], config: Config | None = None
) -> list[Finding]:
    """check_commit for a commit that turns the tree ``before`` into ``after``."""
    family = ProvenanceFamily(config or Config())
    write_tree(tmp_path / "before", before)
    write_tree(tmp_path / "after", after)
    blobs = {h(data): data for data in [*before.values(), *after.values()]}
    changes = []
    for path in sorted(set(before) | set(after)):
        kind = family.claims(path)
        old, new = before.get(path), after.get(path)
        if kind is None or old == new:
            continue
        status = "A" if old is None else "D" if new is None else "M"
        changes.append(
            Change(path, kind, status, old and h(old), new and h(new), blobs.__getitem__)
        )
    context = CommitContext(
        Commit(sha=SHA, parents=("p" * 40,), subject="s", trailers={}),
        changes,
        WorkTree(tmp_path / "before", 1 << 20),
        WorkTree(tmp_path / "after", 1 << 20),
    )
    return list(family.check_commit(context))


def rows(findings: list[Finding]) -> list[tuple[str, str, int | None, str | None]]:
    return sorted((f.rule, f.path, f.line, f.pointer) for f in findings)


BASE = {"a.txt": A, "b.txt": B, "SHA256SUMS": sums((A, "a.txt"), (B, "b.txt"))}


def test_digest_changed_is_pv201_at_its_line(tmp_path: Path) -> None:
    after = {**BASE, "b.txt": C, "SHA256SUMS": sums((A, "a.txt"), (C, "b.txt"))}
    found = run_commit(tmp_path, BASE, after)
    assert rows(found) == [("PV201", "SHA256SUMS", 2, None)]
    assert found[0].commit == SHA and h(B) in found[0].message and h(C) in found[0].message


def test_removed_entry_is_pv202(tmp_path: Path) -> None:
    found = run_commit(tmp_path, BASE, {**BASE, "SHA256SUMS": sums((A, "a.txt"))})
    assert rows(found) == [("PV202", "SHA256SUMS", 2, None)]
    assert "line 2 of the parent's version" in found[0].message
    assert '"b.txt"' in found[0].message


def test_deleted_listing_is_one_pv202(tmp_path: Path) -> None:
    after = {k: v for k, v in BASE.items() if k != "SHA256SUMS"}
    found = run_commit(tmp_path, BASE, after)
    assert rows(found) == [("PV202", "SHA256SUMS", None, None)]
    assert "2 entries" in found[0].message


def test_a_renamed_listing_keeps_its_entries(tmp_path: Path) -> None:
    after = {"a.txt": A, "b.txt": B, "evidence/SHA256SUMS.txt": BASE["SHA256SUMS"]}
    assert run_commit(tmp_path, BASE, after) == []


def test_appending_a_matching_entry_passes(tmp_path: Path) -> None:
    after = {**BASE, "c.txt": C, "SHA256SUMS": BASE["SHA256SUMS"] + sums((C, "c.txt"))}
    assert run_commit(tmp_path, BASE, after) == []


def test_crlf_rewrite_of_the_same_entries_passes(tmp_path: Path) -> None:
    after = {**BASE, "SHA256SUMS": sums((B, "b.txt"), (A, "./a.txt"), eol="\r\n")}
    assert run_commit(tmp_path, BASE, after) == []


def test_new_entries_must_be_true_at_the_commit(tmp_path: Path) -> None:
    after = {**BASE, "c.txt": C,
             "SHA256SUMS": BASE["SHA256SUMS"] + sums((B, "c.txt"), (C, "gone.txt"))}  # fmt: skip
    assert rows(run_commit(tmp_path, BASE, after)) == [
        ("PV103", "SHA256SUMS", 4, None),
        ("PV104", "SHA256SUMS", 3, None),
    ]


def test_an_original_changed_with_its_listing_is_pv203(tmp_path: Path) -> None:
    """The commit edits a.txt and appends c.txt to the listing, keeping a.txt's old line."""
    after = {**BASE, "a.txt": b"edited\n", "c.txt": C,
             "SHA256SUMS": BASE["SHA256SUMS"] + sums((C, "c.txt"))}  # fmt: skip
    found = run_commit(tmp_path, BASE, after)
    assert rows(found) == [("PV203", "SHA256SUMS", 1, None)]
    assert h(A) in found[0].message and h(b"edited\n") in found[0].message


def test_an_original_deleted_with_its_listing_edit_is_pv203(tmp_path: Path) -> None:
    after = {"b.txt": B, "c.txt": C, "SHA256SUMS": BASE["SHA256SUMS"] + sums((C, "c.txt"))}
    assert rows(run_commit(tmp_path, BASE, after)) == [("PV203", "SHA256SUMS", 1, None)]


M = "PROVENANCE.json"
PRIVATE = art(b"secret", "private/raw.csv", in_repository=False)
DERIVED = art(B, "b.txt", role="derived", derived_from="private/raw.csv", derivation="redacted")
MBASE = {"a.txt": A, "b.txt": B, M: manifest(art(A, "a.txt"), PRIVATE, DERIVED)}


def test_manifest_digest_change_is_pv201_at_its_pointer(tmp_path: Path) -> None:
    changed = {**DERIVED, "sha256": h(C), "size": len(C)}
    after = {**MBASE, "b.txt": C, M: manifest(art(A, "a.txt"), PRIVATE, changed)}
    found = run_commit(tmp_path, MBASE, after)
    assert rows(found) == [("PV201", M, 19, "/artifacts/2/sha256")]


def test_manifest_removed_private_original_is_pv202(tmp_path: Path) -> None:
    after = {**MBASE, M: manifest(art(A, "a.txt"), {**DERIVED, "derived_from": "a.txt"})}
    found = run_commit(tmp_path, MBASE, after)
    assert rows(found) == [("PV202", M, 12, "/artifacts/1/sha256")]
    assert "private/raw.csv" in found[0].message


def test_manifest_original_edited_with_the_manifest_is_pv203(tmp_path: Path) -> None:
    after = {**MBASE, "a.txt": C, M: manifest(art(A, "a.txt", description="x"), PRIVATE, DERIVED)}
    assert rows(run_commit(tmp_path, MBASE, after)) == [("PV203", M, 6, "/artifacts/0/sha256")]


def test_manifest_reordered_and_described_passes(tmp_path: Path) -> None:
    after = {
        **MBASE,
        M: manifest(DERIVED, {**PRIVATE, "description": "kept offline"}, art(A, "a.txt")),
    }
    assert run_commit(tmp_path, MBASE, after) == []


def test_a_listing_over_the_size_limit_is_not_compared(tmp_path: Path) -> None:
    """The engine hands None for a version past limits.max-file-bytes (and reports CC008)."""
    family = ProvenanceFamily(Config())
    change = Change("SHA256SUMS", "sums", "M", "old", "new", {"old": BASE["SHA256SUMS"]}.get)
    write_tree(tmp_path, BASE)
    tree = WorkTree(tmp_path, 1 << 20)
    context = CommitContext(
        Commit(sha=SHA, parents=("p" * 40,), subject="s", trailers={}), [change], tree, tree
    )
    assert list(family.check_commit(context)) == []


def test_a_schema_error_is_not_a_removal(tmp_path: Path) -> None:
    """An upper-case digest (PV107 in file mode) still lists the same bytes; a bad size too."""
    upper = {**DERIVED, "sha256": h(B).upper(), "size": "5"}
    after = {**MBASE, M: manifest(art(A, "a.txt"), PRIVATE, upper)}
    assert run_commit(tmp_path, MBASE, after) == []


def test_unparseable_manifest_version_is_left_to_file_mode(tmp_path: Path) -> None:
    assert run_commit(tmp_path, MBASE, {**MBASE, M: b"{broken"}) == []


def test_dsh_removed_sums_entry_is_pv202(tmp_path: Path) -> None:
    """The corpus SHA256SUMS.txt with its WORKING_STATE line removed: PV202 for that entry."""
    rel = "evidence/provenance/SHA256SUMS.txt"
    upstream = (CORPUS / "dsh" / rel).read_bytes()
    lines = upstream.split(b"\r\n")
    kept = b"\r\n".join(line for line in lines if b"WORKING_STATE" not in line)
    found = run_commit(tmp_path, {rel: upstream}, {rel: kept})
    assert rows(found) == [("PV202", rel, 13, None)]
    assert "evidence/memory-injections/WORKING_STATE.json" in found[0].message


# --- real repositories through `continuity verify` -------------------------------------------


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GitRepo:
    isolate_git(monkeypatch, tmp_path / "home")
    return GitRepo(tmp_path / "repo")


def test_verify_reports_a_changed_digest_and_a_removed_entry(
    repo: GitRepo, run_json: RunCLI
) -> None:
    base = repo.commit(
        "base", {"a.txt": A, "b.txt": B, "SHA256SUMS": sums((A, "a.txt"), (B, "b.txt"))}
    )
    rehash = repo.commit("rehash b", {"b.txt": C, "SHA256SUMS": sums((A, "a.txt"), (C, "b.txt"))})
    drop = repo.commit("drop a", {"SHA256SUMS": sums((C, "b.txt"))})
    code, report = run_json(
        "verify", "--range", f"{base}..HEAD", "--root", str(repo.path), "--family", "provenance"
    )
    assert code == 1
    assert [(f["rule"], f["commit"], f["line"]) for f in report["findings"]] == [
        ("PV201", rehash, 2),
        ("PV202", drop, 1),
    ]


def test_verify_reads_unchanged_siblings_at_the_commit(repo: GitRepo, run_json: RunCLI) -> None:
    """The listed file is not changed by the commit that lists it: read from the commit's tree."""
    base = repo.commit("files", {"a.txt": A, "b.txt": B})
    good = repo.commit("list a", {"SHA256SUMS": sums((A, "a.txt"))})
    bad = repo.commit("list b wrongly", {"SHA256SUMS": sums((A, "a.txt"), (C, "b.txt"))})
    code, report = run_json(
        "verify", "--range", f"{base}..HEAD", "--root", str(repo.path), "--family", "provenance"
    )
    assert [(f["rule"], f["commit"], f["line"]) for f in report["findings"]] == [("PV104", bad, 2)]
    assert code == 1 and good != bad


# --- real repositories, read through CommitTree --------------------------------------------------


class CatFile:
    """The object reader a CommitTree needs, over one real ``git cat-file --batch`` process."""

    def __init__(self, path: Path) -> None:
        self.process = subprocess.Popen(
            ["git", "cat-file", "--batch"], cwd=path, stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )

    def read_object(self, spec: str) -> GitObject | None:
        assert self.process.stdin and self.process.stdout
        self.process.stdin.write(spec.encode() + b"\n")
        self.process.stdin.flush()
        header = self.process.stdout.readline().split()
        if header[-1] == b"missing":
            return None
        size = int(header[2])
        data = self.process.stdout.read(size + 1)[:-1]
        return GitObject(header[0].decode(), header[1].decode(), size, data)

    def ask(self, specs: Iterable[str]) -> None:
        pass  # one request at a time

    def close(self) -> None:
        assert self.process.stdin
        self.process.stdin.close()
        self.process.wait()


@dataclass
class GitObject:
    sha: str
    type: str
    size: int
    data: bytes | None


def verify_commit(repo: GitRepo, sha: str) -> list[Finding]:
    """check_commit for one real commit, its trees read through CommitTree."""
    family = ProvenanceFamily(Config())
    objects = CatFile(repo.path)
    parent = repo.git("rev-parse", f"{sha}^")
    raw = repo.git("diff-tree", "-r", "--no-renames", "--raw", "-z", parent, sha).split("\0")
    changes = []
    for meta, path in zip(raw[0:-1:2], raw[1::2], strict=True):
        _, _, old, new, status = meta.lstrip(":").split()
        kind = family.claims(path)
        if kind is not None:
            zero = "0" * 40

            def read(blob: str) -> bytes | None:
                found = objects.read_object(blob)
                return None if found is None else found.data

            changes.append(
                Change(path, kind, status, None if old == zero else old,
                       None if new == zero else new, read)
            )  # fmt: skip
    try:
        context = CommitContext(
            Commit(sha=sha, parents=(parent,), subject="", trailers={}),
            changes,
            CommitTree(objects, parent, 1 << 20),
            CommitTree(objects, sha, 1 << 20),
        )
        return list(family.check_commit(context))
    finally:
        objects.close()


def test_real_commits_through_commit_trees(repo: GitRepo) -> None:
    repo.commit("files", {"a.txt": A, "b.txt": B, "c.txt": C, "SHA256SUMS": sums((A, "a.txt"))})
    listed_b = repo.commit("list b", {"SHA256SUMS": sums((A, "a.txt"), (B, "b.txt"))})
    assert verify_commit(repo, listed_b) == []  # b.txt is an unchanged sibling, read at the commit
    wrong = repo.commit(
        "list c wrongly", {"SHA256SUMS": sums((A, "a.txt"), (B, "b.txt"), (A, "c.txt"))}
    )
    assert rows(verify_commit(repo, wrong)) == [("PV104", "SHA256SUMS", 3, None)]
    edited = repo.commit("edit a and list d", {"a.txt": b"edited\n", "d.txt": C,
                         "SHA256SUMS": sums((A, "a.txt"), (B, "b.txt"), (A, "c.txt"), (C, "d.txt"))})  # fmt: skip
    assert rows(verify_commit(repo, edited)) == [("PV203", "SHA256SUMS", 1, None)]
    rehashed = repo.commit("rehash a", {"SHA256SUMS": sums((b"edited\n", "a.txt"), (B, "b.txt"))})
    assert rows(verify_commit(repo, rehashed)) == [
        ("PV201", "SHA256SUMS", 1, None),
        ("PV202", "SHA256SUMS", 3, None),
        ("PV202", "SHA256SUMS", 4, None),
    ]
    moved = repo.commit("move the listing", {"evidence/SHA256SUMS.txt": sums((b"edited\n", "a.txt"), (B, "b.txt"))},
                        delete=["SHA256SUMS"])  # fmt: skip
    assert verify_commit(repo, moved) == []
    gone = repo.commit("drop b.txt, keep its line", {}, delete=["b.txt"])
    assert verify_commit(repo, gone) == []  # no listing changed: file mode's PV103 at HEAD


def verify(
    run_json: RunCLI, repo: GitRepo, base: str
) -> tuple[int, list[tuple[str, str, int | None]]]:
    code, report = run_json("verify", "--range", f"{base}..HEAD", "--root", str(repo.path))
    return code, [(f["rule"], f["commit"], f["line"]) for f in report["findings"]]


def test_verify_dsh_sums_entry_removed(repo: GitRepo, run_json: RunCLI) -> None:
    """The corpus SHA256SUMS.txt and the four files it lists that the corpus holds, committed;
    then the WORKING_STATE line removed: PV202 at the line where it was."""
    dsh = CORPUS / "dsh"
    rel = "evidence/provenance/SHA256SUMS.txt"
    held = [p.relative_to(dsh).as_posix() for p in (dsh / "evidence").rglob("*") if p.is_file()]
    base = repo.commit("import", {name: (dsh / name).read_bytes() for name in held})
    upstream = (dsh / rel).read_bytes()
    kept = b"".join(
        line for line in upstream.splitlines(keepends=True) if b"WORKING_STATE" not in line
    )
    other = repo.commit("unrelated", {"notes.txt": "x\n"})
    dropped = repo.commit("drop a line", {rel: kept})
    code, found = verify(run_json, repo, base)
    assert (code, found) == (1, [("PV202", dropped, 13)])
    assert other != dropped


def test_verify_original_rewritten_with_the_manifest(repo: GitRepo, run_json: RunCLI) -> None:
    base = repo.commit("evidence", {"a.txt": A, "b.txt": B, M: manifest(art(A, "a.txt"))})
    extended = repo.commit(
        "list b, edit a", {"a.txt": C, M: manifest(art(A, "a.txt"), art(B, "b.txt"))}
    )
    rehashed = repo.commit("rehash a", {M: manifest(art(C, "a.txt"), art(B, "b.txt"))})
    code, found = verify(run_json, repo, base)
    assert (code, found) == (1, [("PV203", extended, 6), ("PV201", rehashed, 6)])


def test_verify_passes_a_growing_listing(repo: GitRepo, run_json: RunCLI) -> None:
    base = repo.commit("a", {"a.txt": A, "SHA256SUMS": sums((A, "a.txt"))})
    repo.commit("b", {"b.txt": B, "SHA256SUMS": sums((A, "a.txt"), (B, "b.txt"), eol="\r\n")})
    repo.commit("move", {"evidence/SHA256SUMS": sums((B, "b.txt"), (A, "a.txt"))},
                delete=["SHA256SUMS"])  # fmt: skip
    assert verify(run_json, repo, base) == (0, [])
