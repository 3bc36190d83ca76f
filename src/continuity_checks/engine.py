"""The engine: collect files, route each to its family, run the checks, fill a Report."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path

from continuity_checks import checks
from continuity_checks.core import core_rules as cc
from continuity_checks.core.config import Config
from continuity_checks.core.family import Change, Claimed, CommitContext, FileInput
from continuity_checks.core.findings import Finding, Report
from continuity_checks.core.globs import matches

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
_BINARY = getattr(os, "O_BINARY", 0)
SKIP_DIRS = {".git", ".hg", ".svn", ".nox", ".tox", ".venv", "node_modules", "__pycache__"}


def apply_severity(config: Config, findings: Iterable[Finding]) -> list[Finding]:
    """Per-rule overrides from the configuration; ``off`` drops the finding."""
    result = []
    for finding in findings:
        if finding.rule in config.severity:
            level = config.severity[finding.rule]
            if level is None:
                continue
            finding = finding.with_severity(level)
        result.append(finding)
    return result


def walk(root: Path, exclude: Sequence[str]) -> list[str]:
    """Every file under ``root`` as a sorted root-relative ``/`` path. Symlinked directories are
    not followed, so nothing outside the root is reached."""
    found: list[str] = []
    for directory, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(directory, root).replace(os.sep, "/")
        prefix = "" if rel_dir == "." else rel_dir + "/"
        dirnames[:] = sorted(
            d for d in dirnames if d not in SKIP_DIRS and not matches(prefix + d, exclude)
        )
        found.extend(prefix + f for f in filenames if not matches(prefix + f, exclude))
    return sorted(found)


def relative(root: Path, given: str) -> str | None:
    """``given`` (relative to the working directory, or absolute) as a root-relative ``/`` path,
    or ``None`` when it lies outside the root."""
    absolute = Path(os.path.abspath(given))
    try:
        return absolute.relative_to(root).as_posix()
    except ValueError:
        return None


def read(root: Path, path: str, limit: int) -> bytes | Finding:
    """The bytes of one file with one ``os.read``; a finding instead when that is not possible
    or not allowed (too large, not a regular file, a symlink leading outside the root)."""
    full = os.path.join(root, path)
    try:
        try:
            fd = os.open(full, os.O_RDONLY | _NOFOLLOW)
        except OSError as exc:
            if not os.path.islink(full):
                raise
            real = Path(full).resolve()
            if not real.is_relative_to(root.resolve()):
                return cc.UNREADABLE.finding(
                    path,
                    "expected a file inside the checked root, found a symlink leading outside it",
                )
            if not real.is_file():
                return cc.UNREADABLE.finding(path, f"cannot read: {exc.strerror or exc}")
            fd = os.open(real, os.O_RDONLY | _BINARY)
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                return cc.UNREADABLE.finding(path, "expected a regular file")
            if info.st_size > limit:
                return cc.TOO_LARGE.finding(
                    path, f"expected at most {limit} bytes, found {info.st_size}"
                )
            data = os.read(fd, info.st_size + 1)
            while len(data) <= info.st_size:  # short reads on some file systems
                more = os.read(fd, info.st_size + 1 - len(data))
                if not more:
                    break
                data += more
        finally:
            os.close(fd)
    except OSError as exc:
        return cc.UNREADABLE.finding(path, f"cannot read: {exc.strerror or exc}")
    if len(data) > limit:
        return cc.TOO_LARGE.finding(path, f"expected at most {limit} bytes, found more")
    return data


def check(
    root: Path,
    config: Config,
    paths: Sequence[str] = (),
    *,
    all_files: bool = False,
    only: tuple[str, ...] | None = None,
) -> Report:
    """File mode: check the given paths (or every file with ``all_files``)."""
    root = Path(os.path.abspath(root))
    families = checks.build(config, only)
    report = Report()
    if all_files:
        candidates = walk(root, config.exclude)
    else:
        candidates = []
        for given in paths:
            rel = relative(root, given)
            if rel is not None and not matches(rel, config.exclude):
                candidates.append(rel)
    claimed: dict[str, list[Claimed]] = {f.name: [] for f in families}
    findings: list[Finding] = []
    for path in dict.fromkeys(candidates):
        owners = [(f, kind) for f in families if (kind := f.claims(path)) is not None]
        if not owners:
            continue
        report.files += 1
        data = read(root, path, config.max_file_bytes)
        if isinstance(data, Finding):
            findings.append(data)
            continue
        for family, kind in owners:
            claimed[family.name].append(Claimed(path, kind))
            findings.extend(family.check_file(FileInput(path, kind, root, data)))
    for family in families:
        if claimed[family.name]:
            findings.extend(family.check_tree(root, claimed[family.name]))
    report.findings = apply_severity(config, findings)
    return report


def verify(
    root: Path,
    config: Config,
    revision_range: str,
    *,
    only: tuple[str, ...] | None = None,
) -> Report:
    """History mode: check every commit of ``BASE..HEAD``. Raises ``GitError`` (exit 2) for a
    shallow clone, an unknown ref or a directory that is not a repository."""
    from continuity_checks.core.git import Repository

    families = checks.build(config, only)
    report = Report()
    findings: list[Finding] = []
    with Repository(Path(os.path.abspath(root))) as repo:
        base, head = repo.resolve_range(revision_range)

        def claimed(path: str) -> bool:  # whose blobs the walk fetches ahead, in batches
            return not matches(path, config.exclude) and any(f.claims(path) for f in families)

        for commit, raw_changes in repo.walk(base, head, prefetch=claimed):
            report.commits += 1
            for family in families:
                changes = [
                    Change(c.path, kind, c.status, c.old_blob, c.new_blob, repo.read_blob)
                    for c in raw_changes
                    if not matches(c.path, config.exclude)
                    and (kind := family.claims(c.path)) is not None
                ]
                if changes:
                    findings.extend(family.check_commit(CommitContext(commit, changes)))
    if report.commits == 0:
        report.notes.append(f"no commits in {revision_range}: nothing to verify")
    report.findings = apply_severity(config, findings)
    return report
