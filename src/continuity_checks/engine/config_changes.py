"""The configuration that judges a range, and CC011 for a commit inside it that changes what
judges it: the configuration files, or the baseline in a way that hides more findings."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from continuity_checks import checks
from continuity_checks.core import config as config_files
from continuity_checks.core import core_rules as cc
from continuity_checks.core.config import Config, ConfigError
from continuity_checks.core.findings import Finding

if TYPE_CHECKING:
    from continuity_checks.core.git.log import RawChange
    from continuity_checks.core.git.repository import Base, Repository


def judging_files() -> frozenset[str]:
    """The files a range is judged by (its base's), whose change inside the range is CC011."""
    from continuity_checks.core import baseline as baseline_file

    return frozenset((*config_files.FILES, baseline_file.FILE_NAME))


def base_config(repo: Repository, base: Base) -> Config:
    """The configuration at the range's base: what was accepted before the range. A range that
    starts with a new branch (its base is every remote-tracking tip) takes the first tip's; a
    range without a base (all of history) has none accepted before it: the defaults."""
    commit = base if isinstance(base, str) else (base[0] if base else None)
    if commit is None:
        return Config(source=NO_BASE_CONFIG)
    files: dict[str, bytes] = {}
    for name in config_files.FILES:
        found = repo.read_object(f"{commit}:{name}")
        if found is not None and found.type == "blob" and found.data is not None:
            files[name] = found.data
    return config_files.from_files(files, f"the base {commit[:12]}", checks.known())


#: what judges a range without a base, as CC011 names it
NO_BASE_CONFIG = "the default configuration (the range has no base)"


def config_changes(
    repo: Repository, raw_changes: Sequence[RawChange], commit: str, judged_by: str
) -> list[Finding]:
    """CC011 for each configuration file the commit changes in a way that matters, naming the
    configuration ``judged_by`` (a :attr:`Config.source`) that judges the range instead."""
    from continuity_checks.core import baseline as baseline_file

    findings = []
    for c in raw_changes:
        if c.path == baseline_file.FILE_NAME:
            findings.extend(_baseline_change(repo, c, commit))
            continue
        if c.path not in config_files.FILES:
            continue
        if c.path == "pyproject.toml":
            tables = []
            for blob in (c.old_blob, c.new_blob):
                data = repo.read_blob(blob) if blob else None
                try:
                    tables.append(
                        None if data is None else config_files.table_in(c.path, data, c.path)
                    )
                except ConfigError:
                    tables.append({"(unreadable)": blob})
            if tables[0] == tables[1]:
                continue  # [tool.continuity] is the same: not a configuration change
        findings.append(
            cc.CONFIG_CHANGED.finding(
                c.path,
                f"expected no change of the configuration inside the range, found it "
                f"{_CHANGE_WORD[c.status]} in this commit; the range is judged by {judged_by}",
                commit=commit,
            )
        )
    return findings


_CHANGE_WORD = {"A": "added", "M": "changed", "D": "deleted"}


def _baseline_change(repo: Repository, change: RawChange, commit: str) -> list[Finding]:
    """CC011 for a commit that makes the baseline know more findings: ``check`` reads the work
    tree's baseline, so without this a pull request could break a file and list the break as
    known, and pass. A baseline that only shrinks (fixed findings dropping out) is no news."""
    from continuity_checks.core import baseline as baseline_file

    old = repo.read_blob(change.old_blob) if change.old_blob else None
    new = repo.read_blob(change.new_blob) if change.new_blob else None
    if change.new_blob and new is None:  # over limits.max-file-bytes, not deleted: unknown
        found = "it changed into a file larger than limits.max-file-bytes, not compared"
    else:
        more = baseline_file.grown(old, new)
        if more == 0:
            return []
        found = (
            "it changed into a file that is not a baseline"
            if more is None
            else f"{more} more known finding{'s' if more != 1 else ''} in this commit"
        )
    return [
        cc.CONFIG_CHANGED.finding(
            change.path,
            f"expected the baseline of the base, found {found} (the range is judged by the "
            "base's; check, which reads the work tree's, now hides them)",
            commit=commit,
            hint="review what the baseline now hides (`git diff` of the file in this commit): "
            "a baseline records findings a repository already had, not new ones",
        )
    ]
