"""The provenance family as the engine drives it: what it claims, and its three kinds of checks."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

# Only what __init__ and claims need is imported here: the commit hook builds every family to
# route the staged paths, and most commits touch none of ours. The check modules (files,
# sums, manifest, history, listed) are imported inside the calls that use them.
from continuity_checks.checks.provenance import DECLARATION
from continuity_checks.checks.provenance import rules as rules  # registers the PV rules
from continuity_checks.core import pointer as jp
from continuity_checks.core import symlinks
from continuity_checks.core.config import Config
from continuity_checks.core.family import (
    Claimed,
    CommitContext,
    Family,
    FileInput,
    Names,
    option,
    options,
    strings_option,
)
from continuity_checks.core.findings import Finding
from continuity_checks.core.globs import Globs, literal_tail
from continuity_checks.core.skipped_dirs import SKIP_DIRS
from continuity_checks.core.snapshot import Snapshot

if TYPE_CHECKING:
    from continuity_checks.checks.provenance.history import HistoryOptions, Pins
    from continuity_checks.core.family import Commit
    from continuity_checks.core.git.log import RawChange

#: what a changed or deleted listed file makes its listing's file check report
_CONSEQUENCES = frozenset({rules.MISSING.id, rules.MISMATCH.id, rules.SIZE.id})
#: an original changed (PV203), or its pin dropped by an exemption that lets it change (PV204)
_CAUSES = frozenset({rules.ORIGINAL_CHANGED.id, rules.ORIGINAL_EXEMPTED.id})

DEFAULT_SUMS = ("SHA256SUMS", "SHA256SUMS.txt", "*.sha256")
#: the default names of a sums file, which are claimed in any case (``sha256sums.txt``) while
#: ``sums-files`` is not configured
ANY_CASE = frozenset({"sha256sums", "sha256sums.txt"})
#: what every case of those names ends with, for the search of a tree: the last two letters
DEFAULT_MANIFESTS = ("PROVENANCE.json", "*.provenance.json")


def _split(patterns: tuple[str, ...]) -> tuple[Globs, Globs]:
    """Patterns without a ``/`` match a file name anywhere (as in .gitignore); the others match
    the whole root-relative path (``**`` spans directories)."""
    return (
        Globs(p for p in patterns if "/" not in p),
        Globs(p for p in patterns if "/" in p),
    )


def _endings(names: Globs, paths: Globs) -> tuple[str, ...] | None:
    """The literal ends of the name patterns (``*.sha256`` ends with ``.sha256``), or None
    when one of them ends with a wildcard or a pattern is a path (``a/**`` covers any name)."""
    if paths:
        return None
    found = []
    for pattern in names.patterns:
        tail = literal_tail(pattern)  # a name pattern: no "/", what follows its last wildcard
        if not tail:
            return None
        found.append(tail)
    return tuple(found)


#: the last letter of each default name of a sums file, in any case
_ANY_CASE_LAST = ("s", "S", "t", "T")


def _any_case(path: str) -> bool:
    """Whether the file name of ``path`` is a default name of a sums file, in any case."""
    return path.endswith(_ANY_CASE_LAST) and path.rpartition("/")[2].lower() in ANY_CASE


class ProvenanceFamily(Family):
    def __init__(self, config: Config) -> None:
        options(config, DECLARATION)
        sums = strings_option(config, DECLARATION.name, "sums-files", DEFAULT_SUMS, "glob strings")
        self.sums_names, self.sums_paths = _split(sums)
        self.any_case = sums == DEFAULT_SUMS
        self.manifest_names, self.manifest_paths = _split(
            strings_option(config, DECLARATION.name, "manifests", DEFAULT_MANIFESTS, "glob strings")
        )
        sums_endings = _endings(self.sums_names, self.sums_paths)
        manifest_endings = _endings(self.manifest_names, self.manifest_paths)
        self.listing_endings = (
            None
            if sums_endings is None or manifest_endings is None
            else sums_endings + manifest_endings
        )
        """What the name of every listing ends with (None when a pattern leaves it open): lets
        history mode skip the directories of a tree that cannot hold one (see history.Pins)."""
        # a default name in any case ends with one of its last letters (see _any_case)
        any_case = _ANY_CASE_LAST if self.any_case else ()
        self._claimable = (
            None
            if self.listing_endings is None
            else Names(frozenset(), self.listing_endings + any_case)
        )
        self.relative_to: str = option(
            config, DECLARATION.name, "relative-to", "root", ("root", "sums-file")
        )
        self.max_depth = config.max_depth
        # the engine hands over no change of an excluded path, so the listings read at the start
        # of a range leave the excluded ones out too (see history.Pins)
        self.exclude = Globs(config.exclude)
        self.pins: Pins | None = None
        """Which originals the listings pin, for this run only: built at the first commit."""
        self._check_commit: (
            Callable[[HistoryOptions, Pins, CommitContext, set[str]], list[Finding]] | None
        )
        self._check_commit = None
        self._history_options: HistoryOptions | None = None
        """What the history checks read (see :meth:`_options`)."""
        self._unlisted_at: str | None = None
        """A commit (or tree) known to hold no listing, before the first that does."""
        self._unlisted_trees: tuple[str | None, ...] = ()
        """The trees of the last commit checked, when both are known to hold no listing."""
        self._other: Pins | None = None
        """The index of a tree the history checks were not handed (see :meth:`dependents`)."""

    def claims(self, path: str) -> str | None:
        endings = self.listing_endings
        if endings is not None and not path.endswith(endings):
            # one test instead of four patterns, for almost every path of a run
            return "sums" if self.any_case and _any_case(path) else None
        name = path.rpartition("/")[2]
        if self.manifest_names.match(name) or self.manifest_paths.match(path):
            return "manifest"
        if self.sums_names.match(name) or self.sums_paths.match(path):
            return "sums"
        return "sums" if self.any_case and _any_case(path) else None

    def claimable(self, directory: str) -> Names | None:
        return self._claimable

    def listings(self, tree: Snapshot) -> Iterator[tuple[str, str]]:
        """Every sums file and manifest in ``tree`` as ``(path, kind)``, found by the snapshot
        (:meth:`Snapshot.find`: without entering :data:`SKIP_DIRS` or a symlinked directory,
        and, in a commit, without parsing a directory whose tree object holds no name a
        listing can end with), and without the paths the configured ``exclude`` leaves out
        (the engine never hands the family their changes, so pins read from them could not be
        kept up to date)."""
        for path in tree.find(SKIP_DIRS, self.listing_endings):
            kind = self.claims(path)
            if kind is not None and not self.exclude.match(path):
                yield path, kind

    def _unlisted(self, tree: Snapshot) -> bool:
        """Whether ``tree`` holds no listing (known from the commit before, or searched)."""
        known = self._unlisted_at is not None and tree.commit == self._unlisted_at
        return known or not any(True for _ in self.listings(tree))

    def check_file(self, file: FileInput) -> Iterable[Finding]:
        # imported here, not at the top: see the comment on the imports
        if file.kind == "manifest":
            from continuity_checks.checks.provenance import manifest

            return manifest.check_manifest(file.path, file.data, file.snapshot, self.max_depth)
        from continuity_checks.checks.provenance import files

        return files.check_sums(file.path, file.data, file.snapshot, self.relative_to)

    def check_tree(self, snapshot: Snapshot, claimed: list[Claimed]) -> Iterable[Finding]:
        return ()

    def dependents(self, path: str, tree: Snapshot, edited: bool) -> Iterable[str]:
        """The listings of ``tree`` that name ``path`` (a sums entry, or an artifact kept in the
        repository): a dictionary look-up in the index the history checks keep of every listing
        (:attr:`history.Pins.named`), read from the whole tree once per run and moved by each
        commit's changed listings. Any listing may name any path (a manifest's paths, and by
        default a sums file's, are relative to the root, not to the listing), so no search
        near ``path`` could find them all. The listings the commit changes are judged by the
        engine anyway; the others name the same paths in the commit's tree and its parent's.
        A listed path is matched as written (``./`` and ``..`` resolved), not through a
        symlinked directory."""
        pins = self.pins
        if pins is None or tree.commit not in (pins.at, pins.parent):
            if tree.commit in self._unlisted_trees:
                return ()
            pins = self._index(tree)
        naming = pins.named.get(path)
        if not naming:
            return ()
        if tree.commit == pins.at:
            return sorted(naming)
        return sorted(n for n in naming if tree.exists(n))  # not one the commit added

    def _index(self, tree: Snapshot) -> Pins:
        """The index of ``tree``'s listings when the history checks have not read it (a tree
        they were not handed): read once, kept for the next question about the same tree."""
        if self._other is None or self._other.at != tree.commit:
            self._other = self._built(tree)
        return self._other

    def same_cause(self, history: Finding, state: Finding) -> bool:
        """Whether ``state`` (a listed file missing, or not matching its digest or size, new in
        the commit's tree) is the consequence of the original ``history`` says the commit
        changed or deleted (PV203), or exempted from its pin while changing it (PV204): the same
        entry of the same listing (its line in a sums file, its artifact in a manifest)."""
        if history.rule not in _CAUSES or state.rule not in _CONSEQUENCES:
            return False
        if history.pointer is None or state.pointer is None:
            return history.line is not None and history.line == state.line
        return jp.parent(history.pointer) == jp.parent(state.pointer)

    def commit_needed(self, commit: Commit, paths: Sequence[RawChange], symlinked: bool) -> bool:
        """Not for a commit whose parent's tree is known to hold no listing (the commit before
        was judged so), as :meth:`check_commit` finds: nothing is pinned, and the commit's own
        tree holds none either (it changes no listing), which is remembered as that method
        would."""
        parent = commit.parents[0] if commit.parents else None
        if self._check_commit is not None or parent is None or parent != self._unlisted_at:
            return True
        self._unlisted_at = commit.sha
        self._unlisted_trees = (parent, commit.sha)
        return False

    def check_commit(self, context: CommitContext) -> Iterable[Finding]:
        # Called for every commit of a range (every_commit): the module is imported at the first
        # call that needs it (see the comment on the imports) and kept on the instance, because
        # an import statement in a function costs about half a microsecond each time it runs, a
        # measurable part of a commit that touches no listed file.
        check = self._check_commit
        # a listing committed as a symlink (PV205)
        links = symlinks.committed(context, self.kept) if context.changes else []
        findings = [symlinks.finding(rules.SYMLINK, link, context) for link in links]
        # No listing changes in this commit. If there is none in the tree before it either,
        # nothing is pinned and nothing this commit does can be PV203, and the tree after it
        # holds none: the next commit starts from there without looking again. (Most
        # repositories, and so most commit hooks, have no listing at all.)
        if check is None and not context.changes and self._unlisted(context.before):
            self._unlisted_at = context.after.commit
            self._unlisted_trees = (context.before.commit, context.after.commit)
            return ()
        if check is None:
            from continuity_checks.checks.provenance import history

            check = self._check_commit = history.check_commit
        pins = self.pins
        if pins is None or pins.at != context.before.commit:
            pins = self.pins = self._built(context.before)
        findings.extend(check(self._options(), pins, context, {link.path for link in links}))
        return findings

    def _options(self) -> HistoryOptions:
        """What the history checks read, made once, at their first use."""
        if self._history_options is None:
            from continuity_checks.checks.provenance.history import HistoryOptions  # see the top

            self._history_options = HistoryOptions(self.relative_to, self.max_depth)
        return self._history_options

    def _built(self, tree: Snapshot) -> Pins:
        """What the listings of ``tree`` pin, read from the whole tree (``history.Pins``)."""
        from continuity_checks.checks.provenance.history import Pins  # see the imports

        return Pins.build(tree, self.listings(tree), self._options())

    def kept(self, path: str) -> str | None:
        """``"a regular file"`` for a sums file or manifest (PV205 when committed as a
        symlink); None for any other path, and for one the configuration excludes."""
        if self.claims(path) is None or self.exclude.match(path):
            return None
        return "a regular file"
