"""History checks for provenance (``continuity verify``): one commit's changed listings at a time.

A commit that adds, edits or deletes a sums file or manifest is compared with its first parent:

- PV201: a path listed before and after with another digest;
- PV202: a path listed before and listed nowhere among the commit's changed listings after (an
  entry that moves from one listing to another in the same commit, as in a rename of the
  listing, is not removed);
- PV203: an original listed before and after (every sums entry; a manifest artifact with role
  original kept in the repository) whose bytes differ between the two trees, or that the commit
  deletes — at every commit, not only at one that edits a listing. The family declares
  ``every_commit`` and keeps, in its instance, which originals the listings pin (:class:`Pins`):
  read once from the tree before the first commit it sees, then updated from each commit's
  changed listings. A commit is then checked by looking up each path it changes
  (``context.paths``) in that map, so a commit that touches no listed file costs a few
  dictionary look-ups;
- PV204: an original pinned before whose entry the commit turns into one that pins nothing (a
  manifest artifact declared kept outside the repository, or given another role, in place or
  by moving a sums entry into such a manifest entry): a self-declared exemption is a change of
  the pin, judged at the commit that declares it;
- PV103 / PV104 at the commit: an entry that is new (or newly hashed, or newly pinned) must name
  a file that exists at the commit and matches, so that every listing is written true when it
  is written.

A version that does not parse (a manifest with a JSON error, a version over the size limit) is
skipped: that is file mode's finding, and history compares only what both sides state; its
listing keeps pinning what its last version that parsed pinned. A change is compared with the
version the engine hands (``Change.old()``: the last good one when the parent's held an error or
was deleted); what the parent's version already showed against that same version was reported at
its own commit and is not reported again. A manifest artifact the schema refuses for another
reason (an upper-case digest, a bad size) is still listed, so a schema error is never mistaken for
a removal.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, NamedTuple

from continuity_checks.checks.provenance import listed, manifest, sums
from continuity_checks.checks.provenance import rules as pv
from continuity_checks.checks.provenance.listed import named
from continuity_checks.core import core_rules as cc
from continuity_checks.core import pointer as jp
from continuity_checks.core import strict_json
from continuity_checks.core.display import quote
from continuity_checks.core.family import Change, CommitContext
from continuity_checks.core.findings import Finding
from continuity_checks.core.rules import Rule
from continuity_checks.core.snapshot import Snapshot, Unreadable

if TYPE_CHECKING:
    from continuity_checks.core.git.log import RawChange

_NAMED_AT_MOST = 5  # paths named in a finding about a deleted listing
_SYMLINK = "120000"


class HistoryOptions(NamedTuple):
    """The options the history checks read, built once by the family from its configuration."""

    #: ``provenance.relative-to``: what a sums file's paths are relative to (``root`` or
    #: ``sums-file``)
    relative_to: str
    #: ``limits.max-depth``, for parsing each manifest
    max_depth: int


class Listed(NamedTuple):
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
    role: str = "original"
    """The manifest artifact's role as written (a sums entry is always an original)."""

    @property
    def pinned(self) -> bool:
        """Whether the entry pins its file's bytes: an original kept in the repository."""
        return self.original and self.stored

    def exemption(self) -> tuple[str | None, str]:
        """Where and how an entry that pins nothing says so: the pointer to the manifest key
        that exempts it, and that key as written."""
        artifact = jp.parent(self.pointer) if self.pointer is not None else None
        if not self.stored:
            return _under(artifact, "in_repository"), '"in_repository": false'
        return _under(artifact, "role"), f"the role {quote(self.role)}"

    def finding(
        self, rule: Rule, message: str, commit: str, unstage: tuple[str, ...] = ()
    ) -> Finding:
        line, column = self.line, None
        if self.doc is not None and self.pointer is not None:
            line, column = self.doc.position(self.pointer)
        return rule.finding(
            self.listing,
            message,
            line=line,
            column=column,
            pointer=self.pointer,
            commit=commit,
            unstage=unstage,
        )


def _under(pointer: str | None, key: str) -> str | None:
    return None if pointer is None else f"{pointer}/{key}"


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
                role=artifact.role,
            )
        )
    return found


class Pins:
    """Which originals the listings pin, at one commit: for each listing its original entries
    kept in the repository, and for each pinned path the entries that pin it.

    Built from a whole tree once (:meth:`build`), then moved from commit to commit by the
    listings each commit changes (:meth:`update`). ``at`` is the commit (or tree) it describes:
    for a commit whose first parent is another one (a merge's side, the start of a second
    range) the family builds it again from that parent's tree.
    """

    __slots__ = ("at", "by_path", "listings", "named", "parent", "read")

    def __init__(self, at: str | None) -> None:
        self.at = at
        self.listings: dict[str, list[Listed]] = {}
        self.by_path: dict[str, dict[str, Listed]] = {}
        #: Every path a listing's file check reads (an entry kept in the repository, any role)
        #: and the listings that name it: what ``ProvenanceFamily.dependents`` answers from.
        self.named: dict[str, set[str]] = {}
        #: The paths of :attr:`named` that each listing names.
        self.read: dict[str, list[str]] = {}
        #: The tree :attr:`at` was moved from (the first parent of the last commit checked).
        self.parent: str | None = None

    @classmethod
    def build(
        cls, tree: Snapshot, listings: Iterable[tuple[str, str]], options: HistoryOptions
    ) -> Pins:
        """What ``listings`` (``(path, kind)`` of every listing of ``tree``) pin in ``tree``."""
        pins = cls(tree.commit)
        for path, kind in listings:
            data = tree.read(path)
            if isinstance(data, Unreadable):
                continue  # over the size limit: what it pins is unknown (CC008 is file mode's)
            found = entries(kind, path, data, options.relative_to, options.max_depth)
            if found is not None:
                pins.update(path, found)
        return pins

    def update(self, listing: str, found: list[Listed]) -> None:
        """``listing`` now pins what ``found`` lists (nothing, for a deleted listing)."""
        for path in self.read.pop(listing, ()):
            naming = self.named[path]
            naming.discard(listing)
            if not naming:
                del self.named[path]
        paths = list(dict.fromkeys(e.path for e in found if e.stored))
        if paths:
            self.read[listing] = paths
            for path in paths:
                self.named.setdefault(path, set()).add(listing)
        for entry in self.listings.pop(listing, ()):
            pinned = self.by_path.get(entry.path)
            if pinned is not None:
                pinned.pop(listing, None)
                if not pinned:
                    del self.by_path[entry.path]
        kept = [e for e in found if e.pinned]
        if kept:
            self.listings[listing] = kept
            for entry in kept:
                self.by_path.setdefault(entry.path, {}).setdefault(listing, entry)

    def keep(self, listing: str) -> None:
        """``listing``'s new version does not parse: it pins what it pinned, with no position
        (the positions were in a version the tree no longer holds)."""
        kept = [
            e._replace(line=None, pointer=None, doc=None) for e in self.listings.get(listing, ())
        ]
        if kept:
            self.listings[listing] = kept
            for entry in reversed(kept):  # the first entry of a path is the one that pins it
                self.by_path[entry.path][listing] = entry


def check_commit(
    options: HistoryOptions, pins: Pins, context: CommitContext, linked: Collection[str] = ()
) -> list[Finding]:
    """The findings of one commit, with ``pins`` read at its parent and moved to the commit;
    ``linked`` are the listings it left as symlinks (PV205): they pin nothing from there on,
    and their entries are not also removed (PV202)."""
    # the originals this commit changes or deletes, as the listings pinned them at the parent
    touched = _touched(pins, context.paths) if pins.by_path else []
    pins.parent, pins.at = context.before.commit, context.after.commit
    if not context.changes and not touched:
        return []  # the commit touches no listing and no listed original: the usual case
    sha = context.commit.sha
    before: dict[str, Listed] = {}
    after: dict[str, Listed] = {}
    deleted: dict[str, list[Listed]] = {}
    answered: dict[str, str | None] = {}
    for change in context.changes:
        if change.path in linked:
            pins.update(change.path, [])
            continue
        old, new = _versions(options, change)
        # a version that cannot be read or parsed states nothing: its listing keeps pinning
        # what its last version that parsed pinned (a tree read at a range's or a shard's first
        # commit has no earlier version: there it pins nothing)
        if new is not None or change.new_blob is None:
            pins.update(change.path, new or [])
        else:
            pins.keep(change.path)
        if old is None or new is None:
            continue  # a version that does not parse: nothing both sides state
        answered.update(_answered(options, change, context, old))
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
    exempted: list[tuple[Listed, Listed]] = []
    for path, old_entry in before.items():
        new_entry = after.get(path)
        if new_entry is None:
            if answered.get(path, old_entry.digest) is not None:
                removed.setdefault(old_entry.listing, []).append(old_entry)
        elif new_entry.digest != old_entry.digest:
            if answered.get(path) == new_entry.digest:
                continue  # the parent's version made this change: reported at its commit
            findings.append(
                new_entry.finding(
                    pv.DIGEST_CHANGED,
                    f"{named(new_entry.written)}: expected the digest listed before, "
                    f"{old_entry.digest}, found {new_entry.digest}",
                    sha,
                )
            )
            to_verify.append(new_entry)
        elif old_entry.pinned and not new_entry.pinned:
            exempted.append((old_entry, new_entry))
        elif new_entry.pinned and not old_entry.pinned:
            to_verify.append(new_entry)  # a pin taken up is true at its commit, as a new entry
        elif new_entry.pinned:
            kept_originals.append(new_entry)
    for listing, gone in removed.items():
        findings.extend(_removed(listing, gone, listing in deleted, sha))
    findings.extend(_exempted(exempted, sha))
    to_verify += [
        entry
        for path, entry in after.items()
        if path not in before and answered.get(path) != entry.digest
    ]
    findings.extend(_verify(context.after, to_verify, sha, options.relative_to))
    findings.extend(_originals(context.before, context.after, kept_originals, sha))
    seen = {entry.path for entry in kept_originals}
    findings.extend(_pinned(context, pins, [c for c in touched if c[0].path not in seen]))
    return findings


def _answered(
    options: HistoryOptions, change: Change, context: CommitContext, good: list[Listed]
) -> dict[str, str | None]:
    """What earlier commits reported, when ``change`` is judged from the listing's last good
    version (``good``, its entries) and not from its parent's: the engine hands the last good one
    after a version that held an error or was deleted, and each such version was judged from the
    same last good one at its own commit. So each path of either version, with its digest in the
    parent's version (None: not listed there), is a removal, digest or entry already reported.
    Empty when the change is judged from the parent's version, or the parent's does not parse
    (it stated nothing, so nothing was reported)."""
    parent = next((c for c in context.paths if c.path == change.path), None)
    if parent is None or parent.old_blob == change.old_blob or parent.old_mode == _SYMLINK:
        return {}
    stated: list[Listed] | None = []  # a deleted listing: every entry's removal was reported
    if parent.old_blob is not None:
        data = context.before.read(change.path)
        stated = None
        if not isinstance(data, Unreadable):
            kind, path = change.kind, change.path
            stated = entries(kind, path, data, options.relative_to, options.max_depth)
    if stated is None:
        return {}
    answered: dict[str, str | None] = dict.fromkeys(e.path for e in good)
    for entry in reversed(stated):  # the first entry of a path is the one compared
        answered[entry.path] = entry.digest
    return answered


def _touched(pins: Pins, paths: Sequence[RawChange]) -> list[tuple[RawChange, dict[str, Listed]]]:
    """The changes of listed originals among ``paths``, each with the entries that pinned it at
    the parent. An added path was not there to keep; a change of mode alone keeps the bytes."""
    by_path = pins.by_path
    return [
        (c, dict(by_path[c.path]))
        for c in paths
        if c.path in by_path and c.old_blob is not None and c.old_blob != c.new_blob
    ]


def _pinned(
    context: CommitContext, pins: Pins, touched: list[tuple[RawChange, dict[str, Listed]]]
) -> Iterator[Finding]:
    """PV203 for each original the commit changes or deletes while a listing still pins it
    with the digest it had at the parent. An original whose entry the commit removes or
    re-hashes is PV202 or PV201 (the listing changed too), reported above."""
    sha = context.commit.sha
    for change, was_pinned in touched:
        digests = {entry.digest for entry in was_pinned.values()}
        still = [e for e in pins.by_path.get(change.path, {}).values() if e.digest in digests]
        if not still:
            continue
        entry = still[0]
        was = context.before.sha256(change.path)
        expected = f"SHA-256 {was.hex if not isinstance(was, Unreadable) else entry.digest}"
        if change.new_blob is None:
            found = "the file deleted"
        else:
            now = context.after.sha256(change.path)
            # the blob ids differ, so the bytes did: say how, even when they cannot be hashed
            found = f"SHA-256 {now.hex}" if not isinstance(now, Unreadable) else now.message
        yield entry.finding(
            pv.ORIGINAL_CHANGED,
            f"{named(entry.written)}: expected the original's bytes to stay ({expected}), "
            f"found {found}",
            sha,
            unstage=(change.path,),  # the commit changed the original, not its listing
        )


def _versions(
    options: HistoryOptions, change: Change
) -> tuple[list[Listed] | None, list[Listed] | None]:
    def of(data: bytes | None) -> list[Listed] | None:
        if data is None:  # a version over the size limit (CC008): what it lists is unknown
            return None
        return entries(change.kind, change.path, data, options.relative_to, options.max_depth)

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


def _exempted(exempted: list[tuple[Listed, Listed]], sha: str) -> Iterator[Finding]:
    """PV204 for each pinned original whose entry the commit turns into one that pins nothing
    (kept elsewhere, or not an original), at the key that exempts it."""
    for old, new in exempted:
        pointer, how = new.exemption()
        line, column = new.doc.position(pointer) if new.doc and pointer else (None, None)
        where = f"line {old.line}" if old.line is not None else old.pointer
        yield pv.ORIGINAL_EXEMPTED.finding(
            new.listing,
            f"expected the original {named(new.written)} (pinned with {old.digest} at {where} "
            f"of the parent's {old.listing}) to stay pinned, found its entry exempted by "
            f"{how}: its bytes would no longer be checked",
            line=line,
            column=column,
            pointer=pointer,
            commit=sha,
        )


def _verify(
    after: Snapshot, new_entries: list[Listed], sha: str, relative_to: str
) -> Iterator[Finding]:
    """New entries name a file that exists at this commit and matches."""
    checked = [e for e in new_entries if e.stored]
    digests = listed.hash_all(after, [e.path for e in checked])
    for entry, digest in zip(checked, digests, strict=True):
        if isinstance(digest, Unreadable):
            if digest.rule is cc.UNREADABLE and not after.exists(entry.path):
                found = entry.finding(
                    pv.MISSING,
                    f"expected the listed file {named(entry.written)} in this commit, "
                    "found no such file",
                    sha,
                )
                if entry.pointer is None:  # a sums entry: relative-to applies to it
                    how = listed.read_otherwise(after, entry.listing, entry.written, relative_to)
                    found = found._replace(hint=how or found.hint)
                yield found
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
