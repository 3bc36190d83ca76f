"""The state a commit leaves: the errors ``check --all`` would report on a commit's tree and not
on its first parent's, found without checking the whole tree.

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
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from continuity_checks.core.config import Config
from continuity_checks.core.family import Claimed, Family, FileInput, TreeCheck, tree_check
from continuity_checks.core.findings import Finding, Severity
from continuity_checks.core.snapshot import Snapshot, Unreadable

#: Which families claim a path, and as what: (index of the family, kind) each.
Owners = Callable[[str], Sequence[tuple[int, str]]]
#: A claimed path, the families that claim it, and its bytes when the caller has them (a
#: changed file's new version, read by blob id without resolving its path in the tree).
Item = tuple[str, Sequence[tuple[int, str]], "bytes | Unreadable | None"]

_SYMLINK = "120000"


@dataclass
class Left:
    """What a commit leaves: the errors new in its tree (``findings``, without a commit id) and
    the claimed paths that hold an error there (``broken``: not a good version)."""

    findings: list[Finding] = field(default_factory=list)
    broken: set[str] = field(default_factory=set)


def check_items(
    snapshot: Snapshot, families: Sequence[Family], items: Iterable[Item]
) -> tuple[list[Finding], set[str]]:
    """File mode over ``items`` in ``snapshot``: each file's checks in order, then each family's
    tree check over the files it claimed. Also the paths that could not be read."""
    findings: list[Finding] = []
    unread: set[str] = set()
    trees: dict[int, TreeCheck] = {}
    for path, owners, data in items:
        for index, kind in owners:
            made = trees.get(index)
            if made is None:
                made = trees[index] = tree_check(families[index], snapshot)
            made.add(Claimed(path, kind))
        if data is None:
            data = snapshot.read(path)
        if isinstance(data, Unreadable):
            findings.append(data.finding())
            unread.add(path)
            continue
        for index, kind in owners:
            findings.extend(families[index].check_file(FileInput(path, kind, data, snapshot)))
    for index in sorted(trees):
        findings.extend(trees[index].finish(unread))
    return findings, unread


def leaves(
    families: Sequence[Family],
    owners: Owners,
    config: Config,
    before: Snapshot,
    after: Snapshot,
    changed: Sequence[tuple[str, str | None, bytes | Unreadable | None]],
) -> Left:
    """The errors a commit brings into ``after`` that ``before`` (its first parent's tree) did not
    have. ``changed`` is every path the commit changes, claimed or not: ``(path, new mode or None
    when deleted, new bytes when the caller has read them)``."""
    items = _items(families, owners, after, changed)
    found = _errors(config, check_items(after, families, items)[0])
    left = Left()
    if not found:
        return left
    left.broken = {f.path for f in found}
    known = Counter(_key(f) for f in _errors(config, _before(families, owners, before, changed)))
    for finding in found:
        key = _key(finding)
        if known[key]:
            known[key] -= 1
        else:
            left.findings.append(finding)
    return left


def good(
    families: Sequence[Family], owners: Owners, config: Config, tree: Snapshot, path: str
) -> bool:
    """Whether the version of the claimed ``path`` in ``tree`` is good: there, not a symlink,
    and without an error of its own under file mode."""
    if not tree.exists(path) or tree.resolve(path) != path:
        return False
    found, unread = check_items(tree, families, [(path, owners(path), None)])
    return not unread and not any(f.path == path for f in _errors(config, found))


def look_back(
    versions: Sequence[tuple[str, str | None]],
    tree_of: Callable[[str], Snapshot],
    families: Sequence[Family],
    owners: Owners,
    config: Config,
    path: str,
) -> str | None:
    """The newest good version of ``path`` among ``versions`` (``(commit, blob or None)``,
    newest first, as :meth:`~continuity_checks.core.git.Repository.versions` gives them)."""
    for commit, blob in versions:
        if blob is not None and good(families, owners, config, tree_of(commit), path):
            return blob
    return None


def _items(
    families: Sequence[Family],
    owners: Owners,
    tree: Snapshot,
    changed: Sequence[tuple[str, str | None, bytes | Unreadable | None]],
) -> list[Item]:
    """The claimed files of ``tree`` to judge: the changed paths that exist there, then the
    dependents of every changed path, each once."""
    items: dict[str, Item] = {}
    for path, mode, data in changed:
        found = owners(path)
        if found and mode is not None and mode != _SYMLINK:
            items[path] = (path, found, data)
    for path, _, _ in changed:
        for family in families:
            for dependent in family.dependents(path, tree):
                if dependent not in items and (found := owners(dependent)):
                    items[dependent] = (dependent, found, None)
    return list(items.values())


def _before(
    families: Sequence[Family],
    owners: Owners,
    before: Snapshot,
    changed: Sequence[tuple[str, str | None, bytes | Unreadable | None]],
) -> list[Finding]:
    """What the same judgement finds in the first parent's tree (its versions of the changed
    paths, read there)."""
    there = [(path, "100644" if before.exists(path) else None, None) for path, _, _ in changed]
    return check_items(before, families, _items(families, owners, before, there))[0]


def _errors(config: Config, findings: Iterable[Finding]) -> list[Finding]:
    """The findings that are errors under the configuration (its ignores and severities)."""
    from continuity_checks.engine import apply_config

    return [f for f in apply_config(config, findings)[0] if f.severity is Severity.ERROR]


def _key(finding: Finding) -> str:
    from continuity_checks.core.baseline import fingerprint

    return fingerprint(finding)
