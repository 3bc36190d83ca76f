"""The captures family as the engine drives it: what it claims, and its three kinds of checks."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

# Only what __init__ and claims need is imported here. The commit hook builds every family and
# asks each to claim the staged paths; most commits stage no capture file, so the check modules
# (manifest, reader, delivery, documents, model, history, the schemas they compile) are imported
# inside check_file, check_tree and check_commit, the first time one runs
# (tests/captures/test_check.py holds this).
from continuity_checks.checks.captures import DECLARATION, layout
from continuity_checks.core import strict_json, symlinks
from continuity_checks.core.config import Config
from continuity_checks.core.family import (
    Claimed,
    CommitContext,
    Family,
    FileInput,
    Names,
    options,
    strings_option,
)
from continuity_checks.core.findings import Finding
from continuity_checks.core.globs import Globs
from continuity_checks.core.parallel import usable_cpus
from continuity_checks.core.snapshot import Snapshot, Unreadable

if TYPE_CHECKING:
    from continuity_checks.checks.captures.reader import Reader
    from continuity_checks.core import hashing
    from continuity_checks.core.family import Commit
    from continuity_checks.core.git.log import RawChange

# names claimed in any capture directory, and those claimed only in a decision-<id>/ directory
# (projection.json and delivery.json are too common as names to claim anywhere)
_ANYWHERE = {
    layout.CAPTURE: "capture",
    layout.REQUIRED: "required-context",
    layout.CYCLE_BASE: "cycle-base",
    layout.CYCLE_DELTA: "cycle-delta",
}
_DECISION_ONLY = {layout.PROJECTION: "capture", layout.DELIVERY: "delivery"}
# what CapturesFamily.claims may claim in a directory (CapturesFamily.claimable): nothing, in
# another family's store or outside the configured roots; else by these names
_NONE = Names(frozenset(), ())
_OUTSIDE_DECISION = Names(frozenset({layout.MANIFEST, *_ANYWHERE}), (".reader.json",))
_IN_DECISION = Names(_OUTSIDE_DECISION.names | frozenset(_DECISION_ONLY), (".reader.json",))


class CapturesFamily(Family):
    def __init__(self, config: Config) -> None:
        options(config, DECLARATION)
        self.roots = Globs(strings_option(config, "captures", "roots", (), "directory globs"))
        self.settings = layout.settings(config)

    def claims(self, path: str) -> str | None:
        directory, _, name = path.rpartition("/")
        # the deltas and working-state families' stores: every file is theirs (tested first:
        # most paths of a large run are deltas)
        if _in_store(directory):
            return None
        if self.roots and not self.roots.match(directory):
            return None
        if name == layout.MANIFEST:
            # OpenProgram's session backups (file_backups/<turn>/manifest.json) belong to the
            # sessions family: decided by the path's shape, since claims sees nothing else
            return None if layout.is_backup_dir(directory) else "manifest"
        if name.endswith(".reader.json") and len(name) > len(".reader.json"):
            return "reader"
        kind = _ANYWHERE.get(name)
        if kind is None and layout.is_decision_dir(directory):
            kind = _DECISION_ONLY.get(name)
        return kind

    def claimable(self, directory: str) -> Names | None:
        if _in_store(directory) or (self.roots and not self.roots.match(directory)):
            return _NONE
        if layout.is_decision_dir(directory):
            return _IN_DECISION
        return _OUTSIDE_DECISION

    def unread(self, path: str) -> str | None:
        """A file of a decision directory, or of a configured root, that the family does not
        claim: no check of LoopX's files reads it."""
        directory = path.rpartition("/")[0]
        if _in_store(directory):
            return None
        if layout.is_decision_dir(directory) or (self.roots and self.roots.match(directory)):
            return "in a LoopX capture directory, where no check reads them"
        return None

    def unjudged(self, item: Claimed, snapshot: Snapshot) -> str | None:
        """A ``capture.json`` outside a decision directory is LoopX's only beside a
        ``manifest.json`` (anything else of that name is not known to be ours): unjudged
        otherwise."""
        directory, _, name = item.path.rpartition("/")
        if item.kind != "capture" or name != layout.CAPTURE or layout.is_decision_dir(directory):
            return None
        from continuity_checks.checks.captures.manifest import has_manifest  # see the top

        if layout.is_backup_dir(directory):
            return "in OpenProgram's file backups, copies of the user's files"
        if has_manifest(snapshot, directory):
            return None
        return (
            "no manifest.json beside them, and a capture.json is LoopX's only beside the "
            "manifest that pins it (`continuity capture manifest DIR` writes one)"
        )

    def check_file(self, file: FileInput) -> Iterable[Finding]:
        if file.kind in _HASHING:
            return []  # held against their captures in check_tree, all captures hashed at once
        return self._check(file.path, file.kind, file.data, file.snapshot)[0]

    def _check(
        self, path: str, kind: str, data: bytes, snapshot: Snapshot
    ) -> tuple[list[Finding], Reader | None]:
        # each kind's check module, the first time a file of that kind is checked (see the top)
        settings = self.settings
        if kind == "manifest":
            from continuity_checks.checks.captures.manifest import check_manifest

            return check_manifest(path, data, snapshot, settings, self._is_capture), None
        if kind == "reader":
            from continuity_checks.checks.captures.reader import check_reader

            return check_reader(path, data, snapshot, settings)
        if kind == "delivery":
            from continuity_checks.checks.captures.delivery import check_delivery

            return check_delivery(path, data, snapshot, settings), None
        if kind == "cycle-delta":
            from continuity_checks.checks.captures.delivery import check_cycle_delta

            return check_cycle_delta(path, data, snapshot, settings), None
        from continuity_checks.checks.captures.documents import check_document

        return check_document(path, kind, data, snapshot, settings), None

    def _is_capture(self, path: str) -> bool:
        return self.claims(path) == "capture"

    def check_tree(self, snapshot: Snapshot, claimed: list[Claimed]) -> Iterable[Finding]:
        """What one file cannot show. Manifests and reader references are held against their
        captures here, with every capture hashed once (several on a thread pool). Each
        directory a claimed file is in is checked whole: its family files that were not claimed
        in this run (pre-commit passes only the changed ones) are checked too, so a changed
        capture is held against the manifest and reader references beside it (the documents
        those pin are not parsed again: a change to one shows at its pins). Then: a decision
        directory holds its delivery and manifest, and one capture and selection have one
        selection digest across the readers."""
        from continuity_checks.checks.captures import rules as cx

        findings: list[Finding] = []
        done = {c.path for c in claimed}
        todo: list[tuple[str, str, bytes]] = []  # what is checked here: (path, kind, bytes)
        listings: dict[str, list[str]] = {}
        for item in claimed:
            if item.kind in _HASHING:
                data = snapshot.read(item.path)
                if not isinstance(data, Unreadable):  # the engine reported it already
                    todo.append((item.path, item.kind, data))
        for directory in sorted({posixpath.dirname(c.path) for c in claimed}):
            names = snapshot.list(directory)
            if isinstance(names, Unreadable):
                continue
            listings[directory] = names
            for name in names:
                path = f"{directory}/{name}" if directory else name
                kind = self.claims(path)
                if kind is None or kind in _PINNED or path in done:
                    continue
                data = snapshot.read(path)
                if not isinstance(data, Unreadable):  # not a regular file: nothing asked about
                    todo.append((path, kind, data))
        hashed = _Hashed(snapshot, _captures_of(todo, snapshot))
        readers: list[Reader] = []
        for path, kind, data in todo:
            found, reader = self._check(path, kind, data, hashed)
            findings.extend(found)
            if reader is not None:
                readers.append(reader)
        for directory, names in listings.items():
            if layout.is_decision_dir(directory) and layout.PROJECTION in names:
                for needed in (layout.DELIVERY, layout.MANIFEST):
                    if needed not in names:
                        findings.append(
                            cx.DECISION_INCOMPLETE.finding(
                                f"{directory}/{layout.PROJECTION}",
                                f"expected {needed} beside projection.json in {directory}/, "
                                "found none",
                            )
                        )
        findings.extend(_selection_consistency(readers))
        return findings

    def may_depend(self, path: str, edited: bool) -> bool:
        directory, _, name = path.rpartition("/")
        return self._may_be_named(path, directory, name)

    def dependents(self, path: str, tree: Snapshot, edited: bool) -> Iterable[str]:
        """The family files of ``path``'s directory in ``tree`` whose checks read ``path``: the
        kinds checked whole with their directory (manifests, readers, deliveries, cycle deltas,
        which name its other files), the ``capture.json`` a manifest makes ours, the necessary
        view whose supporting pointers resolve in the capture, and a decision's projection,
        where the directory's completeness is reported. Decided from the path
        alone, without reading ``tree``, for a path that no file of the family can name."""
        directory, _, name = path.rpartition("/")
        if not self._may_be_named(path, directory, name):
            return ()
        names = tree.list(directory)
        if isinstance(names, Unreadable):
            return ()  # the directory is gone: nothing is left in it to break
        decision = layout.is_decision_dir(directory)
        wanted: set[str] = set()
        if name == layout.MANIFEST and not decision:
            wanted.add(layout.CAPTURE)
        if name == (layout.PROJECTION if decision else layout.CAPTURE):
            wanted.add(layout.REQUIRED)
        prefix = f"{directory}/" if directory else ""
        found = [
            prefix + entry
            for entry in names
            if (entry in wanted or self.claims(prefix + entry) not in _UNREAD)
            and not tree.is_dir(prefix + entry)
        ]
        projection = prefix + layout.PROJECTION
        if decision and layout.PROJECTION in names and projection not in found:
            # the directory's completeness is reported there, also when the files found are
            # unreadable in one of the two trees (a tree check skips an unread file)
            found.append(projection)
        return found

    def _may_be_named(self, path: str, directory: str, name: str) -> bool:
        """Whether a file of the family can name ``path`` (a string test): one it claims; under
        ``roots``, any file of a root; else a name of the family's files (LoopX writes
        ``projection.json`` and ``delivery.json`` beside a capture too) or any file of a
        decision directory."""
        if _in_store(directory):
            return False
        if self.claims(path) is not None:
            return True
        if self.roots:
            return self.roots.match(directory)
        return name in _LOOSE or layout.is_decision_dir(directory)

    def commit_needed(self, commit: Commit, paths: Sequence[RawChange], symlinked: bool) -> bool:
        """Every commit is asked for only for the symlinks it leaves: one that leaves none and
        changes none of the family's files gives the history rules nothing."""
        return symlinked

    def check_commit(self, context: CommitContext) -> Iterable[Finding]:
        # called for every commit (every_commit): a decision directory committed as a symlink
        # is a path no family claims (CX203)
        links = symlinks.committed(context, lambda path: self.kept(path, context))
        findings: list[Finding] = []
        if links:
            from continuity_checks.checks.captures import rules as cx  # see the top

            findings = [symlinks.finding(cx.SYMLINK, link, context) for link in links]
            context = symlinks.beneath(context, links)
        if context.changes:
            from continuity_checks.checks.captures import history  # not at start-up: see the top

            linked = {link.path for link in links}
            findings.extend(history.check_commit(context, self.claims, linked))
        return findings

    def kept(self, path: str, context: CommitContext) -> str | None:
        """What LoopX keeps at ``path`` that must not be a symlink (CX203): a capture file, or a
        ``decision-<id>`` directory. A ``manifest.json`` only beside a capture (a web app's
        manifest is none of ours): in a decision directory, or where either side of the commit
        has a capture.json; a ``capture.json`` only where file mode judges it (beside a manifest,
        on either side)."""
        name = path.rpartition("/")[2]
        if re.fullmatch(_DECISION_DIR, name):
            inside = self.claims(f"{path}/{layout.DELIVERY}")
            return "a directory" if inside is not None else None
        kind = self.claims(path)
        if kind is None:
            return None
        if kind == "manifest":
            directory = path.rpartition("/")[0]
            capture = posixpath.join(directory, layout.CAPTURE)
            if not layout.is_decision_dir(directory) and not any(
                side.exists(capture) for side in (context.after, context.before)
            ):
                return None
        if kind == "capture" and all(
            self.unjudged(Claimed(path, kind), side) for side in (context.after, context.before)
        ):
            return None
        return "a regular file"


#: the name LoopX gives a decision directory (mkdtemp's suffix: 8 of [a-z0-9_]); compiled (by
#: ``re``, once) when a commit first changes a path whose kind is asked
_DECISION_DIR = r"decision-[a-z0-9_]{8}"


def _in_store(directory: str) -> bool:
    """Whether ``directory`` is inside a ``.deltalayer/`` or ``.dsh/`` store (another
    family's, whatever the names in it)."""
    if ".deltalayer" in directory or ".dsh" in directory:
        framed = f"/{directory}/"
        return "/.deltalayer/" in framed or "/.dsh/" in framed
    return False


# names of the family's files that it does not claim everywhere, which a manifest beside a
# capture can still pin (LoopX's own example writes them beside its capture.json)
_LOOSE = frozenset(_DECISION_ONLY)
_HASHING = frozenset({"manifest", "reader"})  # the kinds that hash a capture
# documents that other files pin by digest: a change to one is caught at the files that pin it,
# so a neighbour of a claimed file is not parsed again (a capture can be large)
_PINNED = frozenset({"capture", "required-context", "cycle-base"})
# what a directory's own check does not read again: the pinned documents, and what is not ours
_UNREAD = _PINNED | {None}


def _captures_of(todo: list[tuple[str, str, bytes]], snapshot: Snapshot) -> list[str]:
    """The captures the manifests and readers of ``todo`` name (only those that stay inside
    their directory and exist: the checks report the others)."""
    from continuity_checks.checks.captures import checker, model

    found = []
    for path, kind, data in todo:
        if kind not in _HASHING:
            continue
        parsed = strict_json.accepts(data)
        if parsed is None or not isinstance(parsed[1], dict):
            continue
        name = parsed[1].get("capture_file")
        if model.inside_name(name) is None:
            assert isinstance(name, str)
            target = model.join(posixpath.dirname(path), name)
            directory = posixpath.dirname(path)
            if snapshot.exists(target) and checker.escape(snapshot, directory, target) is None:
                found.append(target)  # one that leaves its directory is never hashed
    return sorted(set(found))


class _Hashed(Snapshot):
    """The run's snapshot, with the digests of ``paths`` computed ahead: each file once, and
    several at a time where there are CPUs for it (hashing releases the interpreter lock)."""

    def __init__(self, inner: Snapshot, paths: list[str]) -> None:
        super().__init__(inner.limit)
        self.inner = inner
        self.commit = inner.commit
        if len(paths) > 1:
            # imported here: most runs (the one-file commit hook) hash no capture at all
            from continuity_checks.core.snapshot_digests import sha256_all

            digests = sha256_all(inner, paths, workers=usable_cpus())
            self.digests = dict(zip(paths, digests, strict=True))
        else:
            self.digests = {path: inner.sha256(path) for path in paths}

    def read(self, path: str) -> bytes | Unreadable:
        return self.inner.read(path)

    def size(self, path: str) -> int | Unreadable:
        return self.inner.size(path)

    def sha256(self, path: str) -> hashing.Digest | Unreadable:
        found = self.digests.get(path)
        return found if found is not None else self.inner.sha256(path)

    def list(self, directory: str) -> list[str] | Unreadable:
        return self.inner.list(directory)

    def exists(self, path: str) -> bool:
        return self.inner.exists(path)

    def is_dir(self, path: str) -> bool:
        return self.inner.is_dir(path)

    def resolve(self, path: str) -> str | Unreadable:
        return self.inner.resolve(path)


def _selection_consistency(readers: list[Reader]) -> list[Finding]:
    from continuity_checks.checks.captures import rules as cx

    first: dict[tuple[object, ...], Reader] = {}
    findings = []
    for reader in sorted(readers, key=lambda r: r.path):
        key = (reader.capture, reader.capture_sha256, reader.select, reader.list_depth)
        seen = first.setdefault(key, reader)
        if seen.selection_sha256 != reader.selection_sha256:
            findings.append(
                cx.SELECTION_DIGEST.finding(
                    reader.path,
                    f"expected the selection digest of {seen.path} for the same capture and "
                    f"selection, {seen.selection_sha256}; found {reader.selection_sha256}",
                    line=reader.position[0],
                    column=reader.position[1],
                    pointer="/selection_sha256",
                )
            )
    return findings
