"""Which claimed files a change of a path can break without touching them (history mode).

What the deltas checks read besides a file's own bytes:

- ``AGENTS.md`` is checked for its continuity section only when ``.deltalayer/`` is beside it:
  anything added or removed under ``R/.deltalayer/`` can break ``R/AGENTS.md``, when it makes
  or takes away that directory (told the tree on the other side of the change).
- ``X.json`` and ``X.frozen.json`` side by side are DL111, reported on ``X.json``.
- The tree check reports a missing ``R/PROJECT.md`` or ``R/AGENTS.md`` once per project it sees,
  and it sees a project through any claimed file of it (a *member*: a delta, a stray ``.tmp``,
  ``.deltalayer/changes.jsonl``). One member stands for the project: the next member after the
  changed path in path order (the first one for ``PROJECT.md`` and ``AGENTS.md``), so that the
  same unchanged member is judged in the commit's tree and in its parent's, and its own
  findings, which the commit did not cause, cancel out.
"""

from __future__ import annotations

import bisect

from continuity_checks.checks.deltas import naming
from continuity_checks.core.globs import Globs
from continuity_checks.core.snapshot import Snapshot, Unreadable

STORE = ".deltalayer"
CHANGES = ".deltalayer/changes"
LEGACY = ".deltalayer/changes.jsonl"


def project_of(path: str) -> str | None:
    """The project root (``""`` or ``"dir/"``) of a path under a ``.deltalayer/`` directory,
    or of a ``.deltalayer`` entry itself; None for any other path."""
    head, sep, _ = path.rpartition(".deltalayer/")
    if sep and (not head or head.endswith("/")):
        return head
    if path == STORE or path.endswith("/" + STORE):
        return path[: -len(STORE)]
    return None


class Dependents:
    """The dependents of changed paths, for one run (the members of the last project listed
    are kept: every changed path of a commit is asked about with the same tree)."""

    def __init__(self, exclude: Globs) -> None:
        self.exclude = exclude
        self._kept: tuple[Snapshot, str, list[str]] | None = None

    def __call__(self, path: str, tree: Snapshot, other: Snapshot | None = None) -> list[str]:
        """The dependents of a change of ``path`` in ``tree``; with ``other``, the tree on the
        other side of the change, not an ``AGENTS.md`` whose findings are the same in both."""
        name = path.rpartition("/")[2]
        if name in ("PROJECT.md", "AGENTS.md"):
            beside = path[: -len(name)]
            if not tree.is_dir(beside + STORE):
                return []
            first = self._after(tree, beside, "")
            return [first] if first is not None else []
        root = project_of(path)
        if root is None:
            return []
        found = []
        agents = root + "AGENTS.md"
        has_agents = tree.exists(agents)
        if has_agents and _store_may_differ(tree, other, root):
            found.append(agents)  # checked only when .deltalayer/ is beside it
        if path.startswith(CHANGES + "/", len(root)) and name.endswith(naming.SUFFIX):
            frozen = naming.is_frozen(name)
            twin = naming.unfrozen_name(path) if frozen else naming.frozen_name(path)
            if tree.exists(twin):
                found.append(twin)  # DL111
        if not (has_agents and tree.exists(root + "PROJECT.md")):
            member = self._after(tree, root, path)
            if member is not None:
                found.append(member)
        return found

    def _members(self, tree: Snapshot, root: str) -> list[str]:
        """The claimed files that make ``root`` a project in ``tree``, sorted."""
        kept = self._kept
        if kept is not None and kept[0] is tree and kept[1] == root:
            return kept[2]
        members = [root + LEGACY] if tree.exists(root + LEGACY) else []
        names = tree.list(root + CHANGES)
        if not isinstance(names, Unreadable):
            prefix = root + CHANGES + "/"
            members.extend(prefix + n for n in names if n.endswith((".json", ".tmp")))
        members.sort()
        self._kept = (tree, root, members)
        return members

    def _after(self, tree: Snapshot, root: str, path: str) -> str | None:
        """The first member of ``root`` after ``path`` in path order, else the first one (not
        ``path`` itself, nor one the configuration excludes)."""
        members = self._members(tree, root)
        start = bisect.bisect_right(members, path)
        count = len(members)
        for step in range(count):
            member = members[(start + step) % count]
            if member != path and not self.exclude.match(member):
                return member
        return None


def _store_may_differ(tree: Snapshot, other: Snapshot | None, root: str) -> bool:
    """Whether ``root``'s ``.deltalayer`` may be a directory in one of ``tree`` and ``other``
    (unknown: None) and not in the other; always for a root that is itself in a store
    (``R/.deltalayer/AGENTS.md`` makes ``R`` a project in the tree check)."""
    if other is None or root == STORE + "/" or root.endswith("/" + STORE + "/"):
        return True
    store = root + STORE
    return tree.is_dir(store) != other.is_dir(store)
