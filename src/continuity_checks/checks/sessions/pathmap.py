"""Absolute paths written on another machine, read here through the ``path-map`` option."""

from collections.abc import Iterable, Mapping

from continuity_checks.core.frozen import Frozen
from continuity_checks.core.snapshot import Snapshot, Unreadable, confine


class Unresolved(Frozen):
    """Why an absolute path has no place in the checked root (a frozen value)."""

    _fields = ("reason",)
    __slots__ = _fields
    reason: str

    def __init__(self, reason: str) -> None:
        self._set(reason)


class PathMap:
    """Prefix rewrites ``{"/home/alice": "<where it is now>"}``; the longest prefix wins. A
    target is relative to the checked root, or absolute and inside it."""

    def __init__(self, pairs: Mapping[str, str]) -> None:
        self.pairs = sorted(
            ((k.rstrip("/") or "/", v) for k, v in pairs.items()), key=lambda kv: -len(kv[0])
        )

    def with_default(self, prefix: str, target: str) -> "PathMap":
        """This map, or — when nothing is configured — one that maps ``prefix`` to ``target``."""
        return self if self.pairs else PathMap({prefix: target})

    def resolve(self, absolute: str, snapshot: Snapshot) -> str | Unresolved:
        """``absolute`` as a root-relative path (``""`` for the root itself)."""
        for prefix, target in self.pairs:
            if absolute == prefix or absolute.startswith(prefix.rstrip("/") + "/"):
                rest = absolute[len(prefix) :].lstrip("/")
                if target.startswith("/"):
                    root = snapshot.root
                    base = "" if root is None else str(root).rstrip("/")
                    if not base or not (target == base or target.startswith(base + "/")):
                        return Unresolved(
                            f"path-map sends {prefix} to {target}, outside the checked root"
                        )
                    target = target[len(base) :].lstrip("/")
                joined = f"{target}/{rest}" if target and rest else target or rest
                confined = confine(joined)
                if isinstance(confined, Unreadable):
                    return Unresolved(f"path-map sends it to {joined}: {confined.message}")
                return confined
        return Unresolved("no path-map prefix matches it")


def inferred_home(snapshot: Snapshot, home: str, paths: Iterable[str]) -> str | None:
    """The absolute path of ``home`` (the root-relative directory holding a state directory)
    where no default project records it: the start of a project's absolute path whose rest
    names a directory below ``home`` holding ``.openprogram/`` (the longest such rest, of the
    first path in order that has one); None when none does."""
    for path in sorted(paths):
        parts = [p for p in path.split("/") if p]
        if not path.startswith("/") or any(p in (".", "..") for p in parts):
            continue
        for cut in range(len(parts)):
            rest = "/".join(parts[cut:])
            if snapshot.is_dir(f"{home}/{rest}/.openprogram" if home else f"{rest}/.openprogram"):
                return "/" + "/".join(parts[:cut])
    return None
