"""History checks for provenance (``continuity verify``): one commit's changed listings at a time.

A commit that adds, edits or deletes a sums file or manifest is compared with its first parent:

- PV201: a path listed before and after with another digest;
- PV202: a path listed before and listed nowhere among the commit's changed listings after (an
  entry that moves from one listing to another in the same commit, as in a rename of the
  listing, is not removed);
- PV203: an original listed before and after (every sums entry; a manifest artifact with role
  original kept in the repository) whose bytes differ between the two trees — read through
  ``context.before`` / ``context.after``, since the artifact itself is usually not a file this
  family claims;
- PV103 / PV104 at the commit: an entry that is new (or newly hashed) must name a file that
  exists at the commit and matches, so that every listing is written true when it is written.

A version that does not parse (a manifest with a JSON error, a version over the size limit) is
skipped: that is file mode's finding, and history compares only what both sides state. A
manifest artifact the schema refuses for another reason (an upper-case digest, a bad size) is
still listed, so a schema error is never mistaken for a removal.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from continuity_checks.checks.provenance import listed, manifest, sums
from continuity_checks.checks.provenance import rules as pv
from continuity_checks.checks.provenance.listed import named
from continuity_checks.core import core_rules as cc
from continuity_checks.core import strict_json
from continuity_checks.core.family import Change, CommitContext
from continuity_checks.core.findings import Finding
from continuity_checks.core.rules import Rule
from continuity_checks.core.snapshot import Snapshot, Unreadable

if TYPE_CHECKING:
    from continuity_checks.checks.provenance.family import ProvenanceFamily

_NAMED_AT_MOST = 5  # paths named in a finding about a deleted listing


@dataclass(frozen=True)
class Listed:
    """One entry of one version of a listing: the root-relative path it leads to, its digest,
    and where it is written (a line, or a pointer into a manifest)."""

    path: str
    digest: str
    listing: str
    written: str
    original: bool
    stored: bool = True
    """False for a manifest artifact kept outside the repository (``in_repository: false``)."""
    line: int | None = None
    pointer: str | None = None
    doc: strict_json.Document | None = None

    def finding(self, rule: Rule, message: str, commit: str) -> Finding:
        line, column = self.line, None
        if self.doc is not None and self.pointer is not None:
            line, column = self.doc.position(self.pointer)
        return rule.finding(
            self.listing, message, line=line, column=column, pointer=self.pointer, commit=commit
        )


def entries(
    kind: str, listing: str, data: bytes, relative_to: str, max_depth: int
) -> list[Listed] | None:
    """The entries of one version of a listing, or None when the version does not parse.
    Entries whose path leads outside the root are left out (CC010 is file mode's)."""
    found: list[Listed] = []
    if kind == "sums":
        for entry in sums.parse(data).entries:
            resolved = listed.resolve(listing, entry.path, relative_to).resolved
            if isinstance(resolved, str):
                found.append(
                    Listed(resolved, entry.digest, listing, entry.path, True, line=entry.line)
                )
        return found
    doc = strict_json.load(data, max_depth=max_depth)
    if isinstance(doc, strict_json.Problem):
        return None
    for artifact in manifest.listed_artifacts(doc.value):
        target = listed.resolve(listing, artifact.path, "root").resolved
        if artifact.in_repository and isinstance(target, Unreadable):
            continue
        found.append(
            Listed(
                target if isinstance(target, str) else artifact.path,
                artifact.sha256,
                listing,
                artifact.path,
                artifact.role == "original",
                stored=artifact.in_repository,
                pointer=f"{artifact.pointer}/sha256",
                doc=doc,
            )
        )
    return found


def check_commit(family: ProvenanceFamily, context: CommitContext) -> list[Finding]:
    sha = context.commit.sha
    before: dict[str, Listed] = {}
    after: dict[str, Listed] = {}
    deleted: dict[str, list[Listed]] = {}
    for change in context.changes:
        old, new = _versions(family, change)
        if old is None or new is None:
            continue  # a version that does not parse: nothing both sides state
        for entry in old:
            before.setdefault(entry.path, entry)
        for entry in new:
            after.setdefault(entry.path, entry)
        if change.status == "D" and old:
            deleted[change.path] = old
    findings: list[Finding] = []
    removed: dict[str, list[Listed]] = {}
    to_verify: list[Listed] = []
    kept_originals: list[Listed] = []
    for path, old_entry in before.items():
        new_entry = after.get(path)
        if new_entry is None:
            removed.setdefault(old_entry.listing, []).append(old_entry)
        elif new_entry.digest != old_entry.digest:
            findings.append(
                new_entry.finding(
                    pv.DIGEST_CHANGED,
                    f"{named(new_entry.written)}: expected the digest listed before, "
                    f"{old_entry.digest}, found {new_entry.digest}",
                    sha,
                )
            )
            to_verify.append(new_entry)
        elif old_entry.original and new_entry.original and new_entry.stored:
            kept_originals.append(new_entry)
    for listing, gone in removed.items():
        findings.extend(_removed(listing, gone, listing in deleted, sha))
    to_verify += [entry for path, entry in after.items() if path not in before]
    findings.extend(_verify(context.after, to_verify, sha))
    findings.extend(_originals(context.before, context.after, kept_originals, sha))
    return findings


def _versions(
    family: ProvenanceFamily, change: Change
) -> tuple[list[Listed] | None, list[Listed] | None]:
    def of(data: bytes | None) -> list[Listed] | None:
        if data is None:  # a version over the size limit (CC008): what it lists is unknown
            return None
        return entries(change.kind, change.path, data, family.relative_to, family.max_depth)

    old = of(change.old()) if change.old_blob is not None else []
    new = of(change.new()) if change.new_blob is not None else []
    return old, new


def _removed(listing: str, gone: list[Listed], whole: bool, sha: str) -> Iterator[Finding]:
    if whole:  # the listing was deleted: one finding, not one per line
        names = ", ".join(named(e.written) for e in gone[:_NAMED_AT_MOST])
        more = f" and {len(gone) - _NAMED_AT_MOST} more" if len(gone) > _NAMED_AT_MOST else ""
        yield pv.ENTRY_REMOVED.finding(
            listing,
            f"expected the listing to stay, found it deleted with {len(gone)} "
            f"entr{'y' if len(gone) == 1 else 'ies'}: {names}{more}",
            commit=sha,
        )
        return
    for entry in gone:
        # the position is where the parent's version listed it: the entry is gone from this one
        where = f"line {entry.line}" if entry.line is not None else entry.pointer
        yield entry.finding(
            pv.ENTRY_REMOVED,
            f"expected {named(entry.written)} (listed with {entry.digest} at {where} of the "
            "parent's version) to stay listed, found its entry removed",
            sha,
        )


def _verify(after: Snapshot, new_entries: list[Listed], sha: str) -> Iterator[Finding]:
    """New entries name a file that exists at this commit and matches."""
    checked = [e for e in new_entries if e.stored]
    digests = listed.hash_all(after, [e.path for e in checked])
    for entry, digest in zip(checked, digests, strict=True):
        if isinstance(digest, Unreadable):
            if digest.rule is cc.UNREADABLE and not after.exists(entry.path):
                yield entry.finding(
                    pv.MISSING,
                    f"expected the listed file {named(entry.written)} in this commit, "
                    "found no such file",
                    sha,
                )
            else:
                yield digest.finding(entry.listing, line=entry.line, commit=sha)
        elif digest.hex != entry.digest:
            yield entry.finding(
                pv.MISMATCH,
                f"{named(entry.written)}: expected SHA-256 {entry.digest}, found {digest.hex} "
                "in this commit",
                sha,
            )


def _originals(
    before: Snapshot, after: Snapshot, originals: list[Listed], sha: str
) -> Iterator[Finding]:
    """Originals listed on both sides keep their bytes: read at both commits."""
    old = listed.hash_all(before, [e.path for e in originals])
    new = listed.hash_all(after, [e.path for e in originals])
    for entry, was, now in zip(originals, old, new, strict=True):
        if isinstance(was, Unreadable) or (not isinstance(now, Unreadable) and was.hex == now.hex):
            continue  # not there (or unreadable) before: nothing to keep; or kept
        found = "the file deleted" if isinstance(now, Unreadable) else f"SHA-256 {now.hex}"
        yield entry.finding(
            pv.ORIGINAL_CHANGED,
            f"{named(entry.written)}: expected the original's bytes to stay "
            f"(SHA-256 {was.hex}), found {found}",
            sha,
        )
