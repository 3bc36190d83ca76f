"""File mode's account of the files it does not check: each one is named in a note with the
reason (no family claims it, its family is not enabled, it lies in a family's territory where
no check reads it, its family does not judge it in this tree, the configuration excludes it).
"N files checked" counts only files a check read."""

from __future__ import annotations

from collections.abc import Sequence

from continuity_checks import checks
from continuity_checks.core.config import Config, ConfigError
from continuity_checks.core.family import Claimed, Declaration, Family, judges_every_claim
from continuity_checks.core.git.log import GITLINK, RawChange
from continuity_checks.core.snapshot import Snapshot
from continuity_checks.engine.router import Claimants

#: Paths named in a note about paths that were not checked, at most.
NOTE_PATHS = 5

#: The reason for a file named on the command line that no family claims, nor any in its
#: territory.
NO_FAMILY = "no family claims them"
EXCLUDED = "excluded by the configuration"


def listed(paths: Sequence[str], count: int) -> str:
    """The first NOTE_PATHS of ``paths``, then how many more of the ``count`` there are."""
    shown = ", ".join(paths[:NOTE_PATHS])
    more = count - NOTE_PATHS
    return shown + (f" and {more} more" if more > 0 else "")


class Unchecked:
    """The files of one file-mode run that no check reads, by reason: at most NOTE_PATHS names
    and a count each, so that a walk of a large tree holds no list of them.

    ``families`` are the run's (``chosen``); a file that a family left out of the run would
    claim is reported as that family's, with where it was left out (``only``: the command
    line; else the configuration's ``families``)."""

    def __init__(
        self,
        config: Config,
        chosen: Sequence[Declaration],
        families: Sequence[Family],
        only: tuple[str, ...] | None,
        snapshot: Snapshot,
    ) -> None:
        self.config = config
        self.chosen = chosen
        self.only = only
        self.snapshot = snapshot
        self.families = families
        #: whether each family may leave a claimed file unjudged (it must then be asked)
        self._asks = [not judges_every_claim(family) for family in families]
        self._left_out: list[tuple[str, Family]] | None = None  # built when first needed
        self._reasons: dict[str, tuple[list[str], int]] = {}

    def add(self, reason: str, path: str) -> None:
        """``path`` is not checked, for ``reason`` (said of them all: "no family claims them")."""
        shown, count = self._reasons.get(reason, ([], 0))
        if len(shown) < NOTE_PATHS:
            shown.append(path)
        self._reasons[reason] = (shown, count + 1)

    def named(self, path: str) -> None:
        """A file given on its own that no family of the run claims."""
        self.add(self.reason(path) or NO_FAMILY, path)

    def walked(self, path: str) -> None:
        """A file met in a directory walked, that no family of the run claims: named only
        when it lies in a family's territory, or a family left out of the run claims it."""
        reason = self.reason(path)
        if reason is not None:
            self.add(reason, path)

    def judged(self, path: str, owners: Claimants) -> Claimants:
        """The ``owners`` of a claimed path whose families judge it in this tree (each family's
        :meth:`~continuity_checks.core.family.Family.unjudged`); a path none of them judges is
        named with the reason its first family gives."""
        asks = self._asks
        for index, _ in owners:
            if asks[index]:
                break
        else:
            return owners  # (a loop, not any() over a generator: asked of every claimed path)
        kept: list[tuple[int, str]] = []
        why = None
        for index, kind in owners:
            reason = self.families[index].unjudged(Claimed(path, kind), self.snapshot)
            if reason is None:
                kept.append((index, kind))
            elif why is None:
                why = reason
        if not kept and why is not None:
            self.add(why, path)
        return tuple(kept)

    def reason(self, path: str) -> str | None:
        """Why no family of the run reads a path none of them claims: a family left out of the
        run claims it, or it lies in a family's territory; None when neither."""
        for name, family in self.left_out():
            if family.claims(path) is not None:
                return f"family {name} is not enabled {self._where()}"
        for family in self.families:
            found = family.unread(path)
            if found is not None:
                return found
        return None

    def left_out(self) -> list[tuple[str, Family]]:
        """The families of this version that the run does not use, built with the run's
        configuration (with the defaults when their options in it are wrong: they are not
        this run's to refuse)."""
        if self._left_out is None:
            names = {d.name for d in self.chosen}
            others = [d for d in checks.declarations() if d.name not in names]
            self._left_out = []
            for declaration in others:
                try:
                    (family,) = checks.build(self.config, [declaration])
                except ConfigError:
                    (family,) = checks.build(Config(), [declaration])
                self._left_out.append((declaration.name, family))
        return self._left_out

    def _where(self) -> str:
        if self.only:
            return f"in this run (--family {' --family '.join(self.only)})"
        chosen = ", ".join(f'"{d.name}"' for d in self.chosen)
        return f"in {self.config.source} (families = [{chosen}])"

    def notes(self) -> list[str]:
        """One note per reason, files no family claims first, then in the order met."""
        order = sorted(self._reasons, key=lambda reason: reason != NO_FAMILY)
        return [f"not checked, {reason}: {listed(*self._reasons[reason])}" for reason in order]


def staged_files(changes: Sequence[RawChange]) -> list[str]:
    """The files of the commit being made that the commit hook passes: every path the index
    adds or changes against ``HEAD`` (pre-commit's staged files), not a deletion nor a
    submodule (its path is a directory of another repository)."""
    return [c.path for c in changes if c.new_blob is not None and c.new_mode != GITLINK]
