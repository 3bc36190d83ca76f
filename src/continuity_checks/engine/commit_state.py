"""The state a commit leaves: the errors ``check --all`` would report on a commit's tree and not
on its first parent's, found without checking the whole tree; and which versions are good.

A commit can break only what it changes and what depends on it. So the files judged are the
claimed paths it changes and each family's :meth:`~continuity_checks.core.family.Family.dependents`
of every path it changes (claimed or not), checked as file mode checks them (each file's checks,
then each family's tree check over them). Those checks run on the commit's tree; only when they
find an error do they run on the first parent's tree too, so that an error the parent already had
is not reported again. Errors are compared as the baseline compares them (rule, path, pointer,
message with positions masked), counted: a second occurrence is new.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from continuity_checks.core.config import Config, apply_config
from continuity_checks.core.family import (
    Claimed,
    Commit,
    Family,
    FileInput,
    TreeCheck,
    judges_every_claim,
)
from continuity_checks.core.findings import Finding, Severity
from continuity_checks.core.snapshot import Snapshot, Unreadable
from continuity_checks.engine.mending import rewrite_hint
from continuity_checks.engine.router import KEPT, Owners, Read

if TYPE_CHECKING:
    from continuity_checks.core.git.log import RawChange

#: A claimed path, the families that claim it, its bytes when the caller has them (a changed
#: file's version, read by blob id without resolving its path in the tree), and whether it is
#: judged only for a change that rewrote its bytes (no dependent look-up named it): a tree
#: check that reads no bytes (:meth:`~continuity_checks.core.family.Family.tree_reads_bytes`)
#: finds nothing new in it.
Item = tuple[str, Sequence[tuple[int, str]], "bytes | None", bool]

SYMLINK = "120000"
_REGULAR = ("100644", "100755")


class Left:
    """What a commit leaves: the errors new in its tree (``findings``, without a commit id) and
    the claimed paths that hold an error there (``broken``: not a good version, as
    :meth:`CommitState.good` judges one)."""

    __slots__ = ("broken", "findings")

    def __init__(self) -> None:
        self.findings: list[Finding] = []
        self.broken: set[str] = set()


class CommitState:
    """The state commits leave, judged for one run: its ``families``, which of them claim a
    path (``owners``), what is an error (``config``), and how a blob is read by id
    (``read``)."""

    def __init__(
        self, families: Sequence[Family], owners: Owners, config: Config, read: Read
    ) -> None:
        self.families = families
        self.owners = owners
        self.config = config
        self.read = read
        #: whether each family may leave a claimed file unjudged (it must then be asked)
        self._asks = [not judges_every_claim(family) for family in families]
        #: whether each family's tree check may read a file's bytes (see Item)
        self._reads = [family.tree_reads_bytes() for family in families]
        #: (changed path, edited) -> the families whose dependents of it may name a file
        self._depending: dict[tuple[str, bool], list[Family]] = {}

    def check(self, snapshot: Snapshot, items: Iterable[Item]) -> list[Finding]:
        """File mode over ``items`` in ``snapshot``: each file's checks in order, then each
        family's tree check over the files it claimed (but, by a family whose tree check reads
        no bytes, an item judged for its bytes alone or one it says the tree check can find
        nothing by: :meth:`~continuity_checks.core.family.Family.tree_may_find`); a file its
        families do not judge in ``snapshot``
        (:meth:`~continuity_checks.core.family.Family.unjudged`) is not read, as in file
        mode."""
        families = self.families
        findings: list[Finding] = []
        unread: set[str] = set()
        trees: dict[int, TreeCheck] = {}
        asks, reads = self._asks, self._reads
        for path, claimed, given, bytes_only in items:
            owners = claimed
            for index, _ in claimed:
                if asks[index]:
                    owners = self._judged(snapshot, path, claimed)
                    break
            if not owners:
                continue
            for index, kind in owners:
                if not reads[index] and (
                    bytes_only or not families[index].tree_may_find(path, kind, snapshot)
                ):
                    continue
                made = trees.get(index)
                if made is None:
                    made = trees[index] = families[index].tree(snapshot)
                made.add(path, kind)
            data = snapshot.read(path) if given is None else given
            if isinstance(data, Unreadable):
                findings.append(data.finding())
                unread.add(path)
                continue
            for index, kind in owners:
                findings.extend(families[index].check_file(FileInput(path, kind, data, snapshot)))
        for index in sorted(trees):
            findings.extend(trees[index].finish(unread))
        return findings

    def leaves(self, trees: tuple[Snapshot, Snapshot], changes: Sequence[RawChange]) -> Left:
        """The errors a commit brings into its tree (``trees[1]``) that its first parent's tree
        (``trees[0]``) did not have. ``changes`` is every path the commit changes, claimed or
        not."""
        config = self.config
        before, after = trees
        # the common commit first; its items are changed paths, judged in the parent's tree too
        items: list[Item] = []
        named: dict[int, list[str]] = {}  # the dependents it asked for, by the change's index
        findings = self._rewritten(after, before, changes, named)
        if findings is None:
            new: list[tuple[str, str | None, str]] = []
            edited: list[bool] = []  # whether a change only rewrote the bytes of a regular file
            for c in changes:
                new.append((c.path, c.new_blob, c.new_mode))
                edited.append(c.old_mode in _REGULAR and c.new_mode in _REGULAR)
            items = self._items(after, before, new, edited, named)
            findings = self.check(after, items)
        left = Left()
        if not findings:
            return left  # the common case: nothing to weigh against the configuration
        found = _errors(config, findings)
        if not found:
            return left
        left.broken = {f.path for f in found}
        edited = [c.old_mode in _REGULAR and c.new_mode in _REGULAR for c in changes]
        versions = [(c.path, c.old_blob, c.old_mode) for c in changes]
        old = self._items(before, after, versions, edited)
        # the files judged in the commit's tree are judged in its parent's too, where they exist
        judged = {item[0] for item in old}
        old += [(p, o, None, False) for p, o, _, _ in items if p not in judged and before.exists(p)]
        earlier = self.check(before, old)
        known = Counter(_key(f) for f in _errors(config, earlier))
        for finding in found:
            key = _key(finding)
            if known[key]:
                known[key] -= 1
            else:
                left.findings.append(finding)
        return left

    def _rewritten(
        self,
        tree: Snapshot,
        other: Snapshot,
        changes: Sequence[RawChange],
        named: dict[int, list[str]],
    ) -> list[Finding] | None:
        """``check(tree, _items(tree, other, ...))`` of a commit each of whose changes only
        rewrote the bytes of a regular file, read, claimed by families that judge every claim
        and whose tree checks read no bytes, where no dependent is named: each changed file's
        checks, in order. None for any other commit; the dependents asked for on the way are
        left in ``named`` (by the index of the change), for :meth:`_items`."""
        owners, read, asks, reads = self.owners.of, self.read, self._asks, self._reads
        files: list[tuple[str, list[tuple[int, str]], bytes]] = []
        for position, c in enumerate(changes):
            path = c.path
            if c.old_mode not in _REGULAR or c.new_mode not in _REGULAR:
                return None
            found = named[position] = self._dependents(tree, other, path, True)
            if found:
                return None
            claimed = owners(path)
            if not claimed:
                continue
            for index, _ in claimed:
                if asks[index] or reads[index]:
                    return None
            data = read(c.new_blob) if c.new_blob is not None else None
            if data is None:
                return None  # over the size limit: reported as the general path reports it
            files.append((path, claimed, data))
        findings: list[Finding] = []
        for path, owning, data in files:
            for index, kind in owning:
                findings.extend(self.families[index].check_file(FileInput(path, kind, data, tree)))
        return findings

    def good(self, tree: Snapshot, version: tuple[str, str | None, str]) -> bool:
        """Whether one version of a claimed file, ``(path, blob id or None, git mode)`` in
        ``tree``, is good: present, a regular file (no symlink), read, and without an error at
        its path when file mode checks it there."""
        path, blob, mode = version
        if blob is None or mode == SYMLINK:
            return False
        data = self.read(blob)
        if data is None:
            return False
        findings = self.check(tree, [(path, self.owners.of(path), data, False)])
        return not any(f.path == path for f in _errors(self.config, findings))

    def report(
        self, out: list[Finding], left: Sequence[Finding], commit: Commit, pushed: bool = False
    ) -> None:
        """The errors ``commit`` leaves (``left``), added to ``out`` with its id, except where a
        history finding of this commit at the same path has the same rule or, as its family
        judges (:meth:`~continuity_checks.core.family.Family.same_cause`), names the same
        cause (one cause, once); ``pushed`` as for :func:`rewrite_hint`."""
        if not left:
            return
        mine = [f for f in out if f.commit == commit.sha]
        seen = {(f.rule, f.path) for f in mine}
        families = self.families
        for finding in left:
            if (finding.rule, finding.path) in seen or any(
                family.same_cause(h, finding)
                for h in mine
                if h.path == finding.path
                for family in families
            ):
                continue
            finding = finding._replace(commit=commit.sha)
            out.append(rewrite_hint(finding, commit, pushed=pushed))

    def _items(
        self,
        tree: Snapshot,
        other: Snapshot,
        versions: Sequence[tuple[str, str | None, str]],
        edited: Sequence[bool],
        named: dict[int, list[str]] | None = None,
    ) -> list[Item]:
        """The claimed files of ``tree`` to judge: the changed paths that are there
        (``versions``: each path's blob id and mode in ``tree``), then the dependents of every
        changed path (``edited``: whether its change only rewrote a regular file's bytes) whose
        findings can differ from those in ``other`` (the tree on the other side of the
        commit), each once; ``named``: those already asked for, by the index of the change."""
        owners = self.owners.of
        items: dict[str, Item] = {}
        for (path, blob, mode), bytes_only in zip(versions, edited, strict=True):
            found = owners(path)
            if found and blob is not None:
                # a symlink is read where it leads, as file mode reads it
                data = None if mode == SYMLINK else self.read(blob)
                items[path] = (path, found, data, bytes_only)
        asked = {} if named is None else named
        for index, ((path, _, _), bytes_only) in enumerate(zip(versions, edited, strict=True)):
            dependents = asked.get(index)
            if dependents is None:
                dependents = self._dependents(tree, other, path, bytes_only)
            for dependent in dependents:
                item = items.get(dependent)
                if item is None:
                    if found := owners(dependent):
                        items[dependent] = (dependent, found, None, False)
                elif item[3]:  # named by a look-up: its tree checks run too
                    items[dependent] = (item[0], item[1], item[2], False)
        return list(items.values())

    def _dependents(self, tree: Snapshot, other: Snapshot, path: str, edited: bool) -> list[str]:
        """The dependents in ``tree`` of a change of ``path`` (``edited`` as for
        :meth:`_items`) whose findings can differ from those in ``other``, as the families
        name them."""
        families = self._depending.get((path, edited))
        if families is None:
            families = self._depending_on(path, edited)
        found: list[str] = []
        for family in families:
            found.extend(family.dependents_between(path, tree, other, edited))
        return found

    def _depending_on(self, path: str, edited: bool) -> list[Family]:
        """The families whose dependents of a change of ``path`` may name a file
        (:meth:`~continuity_checks.core.family.Family.may_depend`), asked once per path (up to
        :data:`~continuity_checks.engine.router.KEPT` of them)."""
        key = (path, edited)
        found = self._depending.get(key)
        if found is None:
            found = [family for family in self.families if family.may_depend(path, edited)]
            if len(self._depending) >= KEPT:
                self._depending.clear()
            self._depending[key] = found
        return found

    def _judged(
        self, tree: Snapshot, path: str, owners: Sequence[tuple[int, str]]
    ) -> Sequence[tuple[int, str]]:
        """The ``owners`` of a claimed path that judge it in ``tree``."""
        asks, families = self._asks, self.families
        kept = []
        for index, kind in owners:
            if not asks[index] or families[index].unjudged(Claimed(path, kind), tree) is None:
                kept.append((index, kind))
        return kept


def _errors(config: Config, findings: Iterable[Finding]) -> list[Finding]:
    """The findings that are errors under the configuration (its ignores and severities)."""
    return [f for f in apply_config(config, findings)[0] if f.severity is Severity.ERROR]


def _key(finding: Finding) -> str:
    from continuity_checks.core.baseline import fingerprint

    return fingerprint(finding)
