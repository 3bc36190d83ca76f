"""File mode (``check``): collect the claimed files, route each to its families, run the
checks, fill a Report; with ``staged``, also judge the commit being made.

One loop (:func:`feed`) over the stream of claimed files: each file goes to its families' tree
checks in this process, in stream order, and is read and checked here, or in batches handed to
worker processes in turn while this one walks on."""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from continuity_checks import checks
from continuity_checks.core.committed import Committed
from continuity_checks.core.config import Config, apply_config
from continuity_checks.core.family import Family, FileInput, TreeCheck
from continuity_checks.core.findings import Finding, Report
from continuity_checks.core.globs import Globs
from continuity_checks.core.parallel import CAN_FORK, Workers, usable_cpus
from continuity_checks.core.snapshot import Snapshot, Unreadable, WorkTree
from continuity_checks.engine import territory
from continuity_checks.engine.discovery import Backlog, Item, claimed, sources
from continuity_checks.engine.staged import check_staged

if TYPE_CHECKING:
    from continuity_checks.core.baseline import Baseline
    from continuity_checks.core.git.repository import Repository
    from continuity_checks.engine.router import Claimants

    #: A batch of claimed files for a worker (:func:`packed`).
    Batch = tuple[str, list[tuple[int, Claimants]]]

#: Called as work proceeds: units done so far, and the total when it is known. The engine
#: knows no terminal; the command line decides whether and how to show it.
Progress = Callable[[int, "int | None"], None]

PARALLEL_FROM = 2000  # files; below this a second process costs more than it saves
LOOK_AHEAD = 64  # files: then the walk's listing may show PARALLEL_FROM to come
BATCH_AFTER = 64  # items: a batch for a worker ends at the next change of directory from here
BATCH_MAX = 1024  # items: and here in any case


def check(
    root: Path,
    config: Config,
    paths: Sequence[str] = (),
    *,
    under: Sequence[str] = (),
    stdin: tuple[str, bytes] | None = None,
    staged: bool = False,
    only: tuple[str, ...] | None = None,
    jobs: int | None = None,
    baseline: Baseline | None = None,
    progress: Progress | None = None,
) -> Report:
    """File mode. ``paths`` are root-relative: files, and directories that stand for every file
    under them; ``under`` are root-relative directories whose every file is checked (``--all``);
    ``stdin`` is one file's name and bytes, read from standard input. Files of ``paths`` that no
    family claims are named in a note. With ``staged``, the history rules also judge what is
    staged against ``HEAD``, as the commit it will be (see :func:`check_staged`). ``jobs``
    is how many processes read and check the files: this one alone at 1, else ``jobs``
    workers fed by this one, which walks the tree and runs the tree checks (default: one per
    usable CPU when the run has PARALLEL_FROM files or more, see
    :func:`~continuity_checks.core.parallel.usable_cpus`).
    ``baseline``: the findings its ``check`` section knows are hidden and counted.
    ``progress`` is told the files handled as the run goes (their total only at the end).

    The files are a stream (:func:`~continuity_checks.engine.discovery.claimed`): nothing here
    holds a list of them. Each claimed file goes to its families'
    :class:`~continuity_checks.core.family.TreeCheck` in this process, in stream order, and is
    read and checked here or in a worker."""
    root = Path(os.path.abspath(root))
    with contextlib.ExitStack() as stack:
        repo = None
        if staged:
            from continuity_checks.core.git.repository import Repository

            repo = stack.enter_context(Repository(root, config.max_file_bytes))
        return _check(root, config, paths, under, stdin, repo, only, jobs, baseline, progress)


def _check(
    root: Path,
    config: Config,
    paths: Sequence[str],
    under: Sequence[str],
    stdin: tuple[str, bytes] | None,
    repo: Repository | None,
    only: tuple[str, ...] | None,
    jobs: int | None,
    baseline: Baseline | None,
    progress: Progress | None,
) -> Report:
    """:func:`check`, with the repository of the commit being made when ``staged`` (``repo``)."""
    chosen = checks.selected(config, only)
    families = checks.build(config, chosen)
    staged_changes = None
    if repo is not None and not paths and not under and stdin is None:
        # no names: the whole commit being made, every file the commit hook would pass
        staged_changes = repo.staged(any(d.gitlinks for d in chosen))
        paths = territory.staged_files(staged_changes)
    given: dict[str, bytes] = {}  # standard input's file: its bytes for every reader
    committed = _committed(root, repo, paths, under, stdin)
    snapshot = WorkTree(root, config.max_file_bytes, given, committed)
    exclude = Globs(config.exclude)
    unchecked = territory.Unchecked(config, chosen, families, only, snapshot)
    found = sources(under, paths, exclude, snapshot, families, unchecked)
    if stdin is not None:
        name, data = stdin
        given[name] = data
        found.append((name, False))

    unlisted: list[Finding] = []  # directories that could not be listed
    backlog = Backlog()
    items = claimed(root, found, families, exclude, unlisted, unchecked, backlog)
    count, findings = _run(items, backlog, families, snapshot, given, unlisted, jobs, progress)
    if repo is not None:
        # what file mode found in the files given is not repeated as left by the commit
        given_keys = {(f.rule, f.path, f.pointer, f.message) for f in findings}
        findings.extend(
            f
            for f in check_staged(repo, config, chosen, families, staged_changes)
            if (f.rule, f.path, f.pointer, f.message) not in given_keys
        )
    kept, suppressed = apply_config(config, findings)
    report = Report(
        findings=kept,
        files=count,
        notes=unchecked.notes(),
        max_per_file=config.max_findings_per_file,
        max_total=config.max_findings,
        suppressed=suppressed,
    )
    if baseline is not None:
        from continuity_checks.core.baseline import hide

        hide(report, baseline.entries("check"))
    return report


def _committed(
    root: Path,
    repo: Repository | None,
    paths: Sequence[str],
    under: Sequence[str],
    stdin: tuple[str, bytes] | None,
) -> Committed | None:
    """What the commit hook reads of the files it names: what the commit will hold.
    pre-commit leaves untracked files in the work tree, and a sibling read from there (a
    capture its staged manifest pins) is not in the commit; what ``--all`` walks is the work
    tree, as asked."""
    if repo is None or under:
        return None
    files = [path for path in paths if not os.path.isdir(os.path.join(root, path))]
    folders = [path for path in paths if path not in files]
    return Committed(repo.in_index, [*files, *((stdin[0],) if stdin else ())], folders)


def _run(
    items: Iterator[Item],
    backlog: Backlog,
    families: Sequence[Family],
    snapshot: Snapshot,
    given: dict[str, bytes],
    unlisted: list[Finding],
    jobs: int | None,
    progress: Progress | None,
) -> tuple[int, list[Finding]]:
    """Reads and checks the claimed files of ``items``, here or in ``jobs`` workers, and runs
    the tree checks here: the number of files, and the findings (the directories that could
    not be listed, which the stream put in ``unlisted``, first). ``backlog`` follows the
    stream's walk (:func:`_look_ahead`)."""
    ahead, large = ([], False) if jobs == 1 else _look_ahead(items, backlog)
    if jobs is None:
        jobs = usable_cpus() if large else 1
    elif jobs > 1 and not large:
        jobs = max(1, min(jobs, len(ahead)))
    ahead.reverse()  # popped from the end: each is dropped once handed on
    stream = _drained(ahead, items) if ahead else items
    trees = Trees(families, snapshot)
    files = FileChecks(families, snapshot, given)
    if jobs == 1 or not CAN_FORK:
        count = feed(stream, trees, files, None, progress)
        findings, unread = files.findings, set(files.unread)
    else:
        _before_workers(families, ahead)
        with Workers(jobs, files.check_batch, files.result) as workers:
            count = feed(stream, trees, files, workers, progress)
            findings, unread = files.findings, set(files.unread)
            for part_findings, part_unread in workers.results():
                findings.extend(part_findings)
                unread.update(part_unread)
    findings[:0] = unlisted
    findings.extend(trees.finish(unread))
    if progress is not None:
        progress(count, count)
    return count, findings


def _look_ahead(items: Iterator[Item], backlog: Backlog) -> tuple[list[Item], bool]:
    """The first claimed files of ``items``, and whether the run has PARALLEL_FROM or more
    (whether workers pay): LOOK_AHEAD files when the directory being walked then lists
    PARALLEL_FROM names or more with them (:class:`Backlog`: an estimate from above, for the
    large store of one directory), else up to PARALLEL_FROM, counted. A run that ends before
    stays in this process."""
    ahead = list(itertools.islice(items, LOOK_AHEAD))
    if len(ahead) < LOOK_AHEAD or len(ahead) + backlog.listed() >= PARALLEL_FROM:
        return ahead, len(ahead) >= PARALLEL_FROM or len(ahead) == LOOK_AHEAD
    ahead.extend(itertools.islice(items, PARALLEL_FROM - LOOK_AHEAD))
    return ahead, len(ahead) >= PARALLEL_FROM


def _before_workers(families: Sequence[Family], ahead: list[Item]) -> None:
    """Each family with files among ``ahead`` (the look-ahead) loads what its workers would
    each load on their own (:meth:`~continuity_checks.core.family.Family.before_workers`,
    with the kinds of its files there), in this process before the fork."""
    kinds: dict[int, set[str]] = {}
    for owners in {owners for _, owners in ahead}:  # few: the files of a kind share them
        for index, kind in owners:
            kinds.setdefault(index, set()).add(kind)
    for index in sorted(kinds):
        families[index].before_workers(kinds[index])


def _drained(ahead: list[Item], rest: Iterator[Item]) -> Iterator[Item]:
    """The items of ``ahead`` (reversed: each popped, so dropped once handed on), then
    ``rest``."""
    while ahead:
        yield ahead.pop()
    yield from rest


class FileChecks:
    """Reads and checks claimed files, in one process (this one, or a worker): the findings,
    and the claimed paths that could not be read (the tree checks leave them out, as the
    family never saw them). ``given`` holds bytes read elsewhere (standard input's file)."""

    def __init__(
        self, families: Sequence[Family], snapshot: Snapshot, given: dict[str, bytes]
    ) -> None:
        self.families = families
        self.snapshot = snapshot
        self.given = given
        self.findings: list[Finding] = []
        self.unread: list[str] = []

    def check(self, path: str, owners: Claimants) -> None:
        """Reads one claimed file and runs its families' file checks on it."""
        given = self.given  # empty but for standard input's file: its test hashes no path
        data = given[path] if given and path in given else self.snapshot.read(path)
        if isinstance(data, Unreadable):
            self.findings.append(data.finding())
            self.unread.append(path)
            return
        families, snapshot = self.families, self.snapshot
        for index, kind in owners:
            self.findings.extend(families[index].check_file(FileInput(path, kind, data, snapshot)))

    def check_batch(self, batch: Batch) -> None:
        """:meth:`check` on each file of ``batch`` (:func:`packed`), in order."""
        joined, runs = batch
        paths = joined.split("\0")
        ends = [start for start, _ in runs[1:]]
        ends.append(len(paths))
        check = self.check
        for (start, owners), end in zip(runs, ends, strict=True):
            for path in paths[start:end]:
                check(path, owners)

    def result(self) -> tuple[list[Finding], list[str]]:
        return self.findings, self.unread


def packed(paths: list[str], runs: list[tuple[int, Claimants]]) -> Batch:
    """A batch of claimed files for a worker: their ``paths`` joined by NUL (which no file
    name, argument or git path holds), and where each run of files with the same owners
    starts (``runs``): one string and a few tuples to pickle, not a tuple for each file."""
    return "\0".join(paths), runs


class Trees:
    """Each family's tree check of one run, made at the family's first claimed file: a run
    with none of a family's files (the commit hook) does not import its tree check modules."""

    def __init__(self, families: Sequence[Family], snapshot: Snapshot) -> None:
        self.families = families
        self.snapshot = snapshot
        self.made: list[TreeCheck | None] = [None] * len(families)

    def make(self, index: int) -> TreeCheck:
        made = self.made[index]
        if made is None:
            made = self.made[index] = self.families[index].tree(self.snapshot)
        return made

    def finish(self, unread: set[str]) -> list[Finding]:
        """The findings of every tree check made, in the order of the families."""
        findings: list[Finding] = []
        for made in self.made:
            if made is not None:
                findings.extend(made.finish(unread))
        return findings


def feed(
    items: Iterable[Item],
    trees: Trees,
    files: FileChecks,
    workers: Workers[Batch, tuple[list[Finding], list[str]]] | None,
    progress: Progress | None,
) -> int:
    """The one loop over the stream of claimed files, for a run in one process and a run with
    workers alike: each file goes to its families' tree checks, in stream order, then is read
    and checked here (``files``), or joins the batch handed to the next of ``workers`` when it
    ends (at a change of directory where it can: a session's node files go to one process
    together, see the sessions family's ``Gather``). The number of files."""
    made, check = trees.made, files.check
    paths: list[str] = []
    runs: list[tuple[int, Claimants]] = []  # where the files of each owners start in paths
    last: Claimants | None = None
    directory = ""
    count = 0
    for path, owners in items:
        count += 1
        for index, kind in owners:
            (made[index] or trees.make(index)).add(path, kind)
        if workers is None:
            if progress is not None:
                progress(count - 1, None)
            check(path, owners)
            continue
        here = path[: path.rfind("/") + 1]
        if len(paths) >= BATCH_MAX or (len(paths) >= BATCH_AFTER and here != directory):
            workers.send([packed(paths, runs)])
            paths, runs, last = [], [], None
            if progress is not None:
                progress(count - 1, None)
        if owners is not last and owners != last:  # (most often the one tuple of a kind)
            runs.append((len(paths), owners))
            last = owners
        paths.append(path)
        directory = here
    if paths and workers is not None:
        workers.send([packed(paths, runs)])
    return count
