"""The engine: collect files, route each to its family, run the checks, fill a Report."""

from __future__ import annotations

import contextlib
import gc
import os
import stat
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from continuity_checks import checks
from continuity_checks.core import core_rules as cc
from continuity_checks.core.config import Config
from continuity_checks.core.family import Change, Claimed, CommitContext, Family, FileInput
from continuity_checks.core.findings import Finding, Report
from continuity_checks.core.globs import matches
from continuity_checks.core.parallel import split_map, usable_cpus

if TYPE_CHECKING:
    from continuity_checks.core.git import RawChange

_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_NONBLOCK", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CHUNK = 64 * 1024
PARALLEL_FROM = 2000  # files; below this a second process costs more than it saves

_Partial = tuple[list[Finding], list[list[Claimed]]]
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
        if exclude:
            found.extend(prefix + f for f in filenames if not matches(prefix + f, exclude))
        else:
            found.extend(prefix + f for f in filenames)
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
    """The bytes of one file, read in as few ``os.read`` calls as it takes; a finding instead
    when that is not possible or not allowed (too large, not a regular file, a symlink leading
    outside the root). Never blocks on a FIFO, never reads past the limit."""
    full = os.path.join(root, path)
    try:
        try:
            fd = os.open(full, _OPEN_FLAGS | _NOFOLLOW)
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
            fd = os.open(real, _OPEN_FLAGS)
        try:
            data = os.read(fd, _CHUNK)
            if len(data) == _CHUNK or not data:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    return cc.UNREADABLE.finding(path, "expected a regular file")
                chunks = [data]
                size = len(data)
                while data and size <= limit:
                    data = os.read(fd, _CHUNK)
                    chunks.append(data)
                    size += len(data)
                data = b"".join(chunks)
        finally:
            os.close(fd)
    except IsADirectoryError:
        return cc.UNREADABLE.finding(path, "expected a regular file, found a directory")
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
    jobs: int | None = None,
) -> Report:
    """File mode: check the given paths (or every file with ``all_files``). ``jobs`` processes
    share a large batch (default: one per usable CPU from PARALLEL_FROM files on)."""
    root = Path(os.path.abspath(root))
    families = checks.build(config, only)
    if all_files:
        candidates = walk(root, config.exclude)
    else:
        candidates = []
        for given in paths:
            rel = relative(root, given)
            if rel is not None and not matches(rel, config.exclude):
                candidates.append(rel)
    work: list[tuple[str, tuple[tuple[int, str], ...]]] = []
    for path in dict.fromkeys(candidates):
        owners = tuple(
            (index, kind)
            for index, family in enumerate(families)
            if (kind := family.claims(path)) is not None
        )
        if owners:
            work.append((path, owners))

    def check_files(part: Sequence[tuple[str, tuple[tuple[int, str], ...]]]) -> _Partial:
        findings: list[Finding] = []
        claimed: list[list[Claimed]] = [[] for _ in families]
        for path, owners in part:
            data = read(root, path, config.max_file_bytes)
            if isinstance(data, Finding):
                findings.append(data)
                continue
            for index, kind in owners:
                claimed[index].append(Claimed(path, kind))
                findings.extend(families[index].check_file(FileInput(path, kind, root, data)))
        return findings, claimed

    if jobs is None:
        jobs = usable_cpus() if len(work) >= PARALLEL_FROM else 1
    findings: list[Finding] = []
    claimed: list[list[Claimed]] = [[] for _ in families]
    for part_findings, part_claimed in split_map(check_files, work, jobs):
        findings.extend(part_findings)
        for index, items in enumerate(part_claimed):
            claimed[index].extend(items)
    for index, family in enumerate(families):
        if claimed[index]:
            findings.extend(family.check_tree(root, claimed[index]))
    return Report(findings=apply_severity(config, findings), files=len(work))


def verify(
    root: Path,
    config: Config,
    revision_range: str,
    *,
    only: tuple[str, ...] | None = None,
) -> Report:
    """History mode: check every commit of ``BASE..HEAD``. Raises ``GitError`` (exit 2) for a
    shallow clone, an unknown ref or a directory that is not a repository.

    A version larger than ``limits.max-file-bytes`` is not read into memory: the family gets
    None for it, and the run reports CC008 once per blob, at the first commit that needed it.
    """
    from continuity_checks.core.git import LogRequest, Repository

    families = checks.build(config, only)
    root = Path(os.path.abspath(root))
    request = LogRequest(trailers=("Continuity-Delta",))  # what the deltas family reads of a commit
    report = Report()
    findings: list[Finding] = []
    exclude = config.exclude
    # Which families claim a path, and as what: asked once per path, not once per commit.
    owners_of: dict[str, list[tuple[Family, str]]] = {}

    def owners(path: str) -> list[tuple[Family, str]]:
        found = owners_of.get(path)
        if found is None:
            found = []
            if not (exclude and matches(path, exclude)):
                found = [(f, kind) for f in families if (kind := f.claims(path)) is not None]
            if len(owners_of) >= _OWNERS_KEPT:
                owners_of.clear()
            owners_of[path] = found
        return found

    with (
        Repository(root, config.max_file_bytes, revision_range=revision_range) as repo,
        _few_collections(),
    ):
        base, head = repo.resolve_range(revision_range)
        too_large: list[str] = []  # blobs a family asked for and got None: over the limit
        reported: set[str] = set()

        def read(sha: str) -> bytes | None:
            data = repo.read_blob(sha)
            if data is None:
                too_large.append(sha)
            return data

        # the walk fetches ahead the blobs of the paths some family claims
        for commit, raw_changes in repo.walk(base, head, prefetch=owners, request=request):
            report.commits += 1
            if not raw_changes:
                continue
            if len(families) == 1:  # the common case, without sorting changes by family
                family = families[0]
                changes = [
                    Change(c.path, kind, c.status, c.old_blob, c.new_blob, read)
                    for c in raw_changes
                    for _, kind in owners(c.path)
                ]
                if changes:
                    findings.extend(family.check_commit(CommitContext(commit, changes)))
            else:
                by_family: dict[str, list[Change]] = {}
                for c in raw_changes:
                    for family, kind in owners(c.path):
                        change = Change(c.path, kind, c.status, c.old_blob, c.new_blob, read)
                        by_family.setdefault(family.name, []).append(change)
                for family in families:
                    changes = by_family.get(family.name, [])
                    if changes:
                        findings.extend(family.check_commit(CommitContext(commit, changes)))
            if too_large:
                findings.extend(
                    _oversized(too_large, reported, raw_changes, repo.oversized, config, commit.sha)
                )
                too_large.clear()
    if report.commits == 0:
        report.notes.append(f"no commits in {revision_range}: nothing to verify")
    report.findings = apply_severity(config, findings)
    return report


_OWNERS_KEPT = 1 << 16
_YOUNG_COLLECTION = 10_000  # allocations between young collections during the walk (default 700)


@contextlib.contextmanager
def _few_collections() -> Iterator[None]:
    """The collector's settings for the walk of a range. What exists before it (configuration,
    families, compiled schemas) lives to the end of the run: frozen, it is out of the
    collector's way, so that the many short-lived containers of the walk (parsed versions,
    commits) do not make it traverse all of it again and again. And fewer young collections,
    since the walk makes almost no reference cycles. Both are undone when the walk ends."""
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(max(thresholds[0], _YOUNG_COLLECTION), *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()


def _oversized(
    blobs: list[str],
    reported: set[str],
    changes: Sequence[RawChange],
    sizes: dict[str, int],
    config: Config,
    commit: str,
) -> list[Finding]:
    """CC008 for each blob of ``blobs`` not reported before, at the path that holds it."""
    findings = []
    for sha in dict.fromkeys(blobs):
        if sha in reported:
            continue
        reported.add(sha)
        for c in changes:
            if sha in (c.old_blob, c.new_blob):
                version = "new" if sha == c.new_blob else "old"
                findings.append(
                    cc.TOO_LARGE.finding(
                        c.path,
                        f"expected at most {config.max_file_bytes} bytes, found {sizes[sha]} "
                        f"in the {version} version (not read)",
                        commit=commit,
                    )
                )
                break
    return findings
