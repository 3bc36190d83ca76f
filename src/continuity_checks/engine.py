"""The engine: collect files, route each to its family, run the checks, fill a Report."""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import itertools
import os
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from continuity_checks import checks, commit_state, last_good, territory
from continuity_checks.core import config as config_files
from continuity_checks.core import core_rules as cc
from continuity_checks.core.committed import Committed
from continuity_checks.core.config import Config, ConfigError, apply_config
from continuity_checks.core.family import (
    STAGED,
    Change,
    Claimed,
    Commit,
    CommitContext,
    Declaration,
    Family,
    FileInput,
    TreeCheck,
    tree_check,
)
from continuity_checks.core.findings import Finding, Report
from continuity_checks.core.globs import Globs
from continuity_checks.core.lookups import Alike, Known
from continuity_checks.core.parallel import idle_cpus
from continuity_checks.core.snapshot import Snapshot, Unreadable, WorkTree
from continuity_checks.mending import rewrite_hint

if TYPE_CHECKING:
    from continuity_checks.core.baseline import Baseline, BaselineSource
    from continuity_checks.core.git.log import LogRequest, RawChange
    from continuity_checks.core.git.repository import Base, Repository
    from continuity_checks.core.shard import Shard

PARALLEL_FROM = 2000  # files; below this a second process costs more than it saves

SKIP_DIRS = {".git", ".hg", ".svn", ".nox", ".tox", ".venv", "node_modules", "__pycache__"}


#: Called as work proceeds: units done so far, and the total when it is known. The engine
#: knows no terminal; the command line decides whether and how to show it.
Progress = Callable[[int, "int | None"], None]


def walk(
    root: Path,
    exclude: Globs,
    under: str = "",
    unlisted: list[Finding] | None = None,
    prune: Collection[str] = (),
) -> Iterator[str]:
    """Every file under ``root/under`` as a root-relative ``/`` path, as a stream in sorted
    order (the order of ``sorted()`` over all of them): inside a directory, files sort by their
    name and subdirectories by their name and a ``/``, so the depth-first order is the global
    order (every path under ``d/`` sorts between the same two neighbours of ``d/``). Only the
    listings of the directories on the way down are held. Symlinked directories are not
    followed, so nothing outside the root is reached; subdirectories named in ``prune``
    (root-relative) are not entered. A directory that cannot be listed is a CC001 finding in
    ``unlisted``, never a silent gap."""

    def cannot_list(error: OSError) -> None:
        if unlisted is not None and error.filename is not None:
            rel = os.path.relpath(error.filename, root).replace(os.sep, "/")
            unlisted.append(
                cc.UNREADABLE.finding(
                    rel, f"expected a directory to check, cannot list it: {error.strerror}"
                )
            )

    excluding = bool(exclude)

    def listing(directory: str, prefix: str) -> list[str] | None:
        """The names to visit in ``directory``, sorted; a subdirectory's with a ``/``."""
        names: list[str] = []
        try:
            with os.scandir(directory) as entries:
                for entry in entries:
                    name = entry.name
                    try:
                        is_dir = entry.is_dir()
                    except OSError:
                        is_dir = False
                    if not is_dir:
                        if not (excluding and exclude.match(prefix + name)):
                            names.append(name)
                        continue
                    try:
                        if entry.is_symlink():
                            continue
                    except OSError:
                        pass  # listed as a directory: its own listing says what is wrong
                    path = prefix + name
                    if name in SKIP_DIRS or exclude.match(path) or path in prune:
                        continue
                    names.append(name + "/")
        except OSError as error:
            cannot_list(error)  # as os.walk: a directory that fails part-way is left out whole
            return None
        names.sort()
        return names

    start = os.path.join(root, under) if under else str(root)
    rel = os.path.relpath(start, root).replace(os.sep, "/")
    top = "" if rel == "." else rel + "/"
    names = listing(start, top)
    if names is None:
        return
    stack: list[tuple[str, str, Iterator[str]]] = [(start, top, iter(names))]
    while stack:
        directory, prefix, entries = stack[-1]
        for name in entries:
            if name[-1] != "/":
                yield prefix + name
                continue
            inner = os.path.join(directory, name[:-1])
            found = listing(inner, prefix + name)
            if found:
                stack.append((inner, prefix + name, iter(found)))
                break
        else:
            stack.pop()


def relative(root: Path, given: str) -> str | None:
    """``given`` (relative to the working directory, or absolute) as a root-relative ``/`` path
    (``""`` for the root itself), or ``None`` when it lies outside the root."""
    absolute = Path(os.path.abspath(given))
    try:
        rel = absolute.relative_to(root).as_posix()
    except ValueError:
        return None
    return "" if rel == "." else rel


#: A claimed path and the families that claim it: (index of the family, kind) each.
Owners = territory.Owners
_Item = tuple[str, Owners]

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
    processes read and check the files, this one and ``jobs - 1`` workers (default: one per
    idle CPU when the run has PARALLEL_FROM files or more, see
    :func:`~continuity_checks.core.parallel.idle_cpus`).
    ``baseline``: the findings its ``check`` section knows are hidden and counted.
    ``progress`` is told the files handled as the run goes (their total only at the end).

    The files are a stream (:func:`_claimed`): nothing here holds a list of them. Each claimed
    file goes to its families' :class:`~continuity_checks.core.family.TreeCheck` in this
    process, in stream order, and is read and checked here or in a worker."""
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
    # the commit hook reads what the commit will hold: pre-commit leaves untracked files in
    # the work tree, and a sibling read from there (a capture its staged manifest pins) is
    # not in the commit; what --all walks is the work tree, as asked
    committed = None
    if repo is not None and not under:
        files = [path for path in paths if not os.path.isdir(os.path.join(root, path))]
        folders = [path for path in paths if path not in files]
        committed = Committed(repo.in_index, [*files, *((stdin[0],) if stdin else ())], folders)
    snapshot = WorkTree(root, config.max_file_bytes, given, committed)
    exclude = Globs(config.exclude)
    unchecked = territory.Unchecked(config, chosen, families, only, snapshot)
    # the sources in order: directories to walk (--all's, then those among paths) and files
    sources: list[tuple[str, bool]] = [(directory, True) for directory in under]
    for path in paths:
        if exclude.match(path):  # a file or a whole directory: named in the note, not skipped
            unchecked.add(territory.EXCLUDED, path)
        elif snapshot.is_dir(path) and not any(f.claims(path) for f in families):
            sources.append((path, True))
        else:
            sources.append((path, False))
    if stdin is not None:
        name, data = stdin
        given[name] = data
        sources.append((name, False))

    unlisted: list[Finding] = []  # directories that could not be listed
    items = _claimed(root, sources, families, exclude, unlisted, unchecked)
    # a bounded look ahead decides whether workers pay: a run that ends before PARALLEL_FROM
    # claimed files stays in this process
    ahead = [] if jobs == 1 else list(itertools.islice(items, PARALLEL_FROM))
    if jobs is None:
        jobs = idle_cpus() if len(ahead) >= PARALLEL_FROM else 1
    elif jobs > 1:
        jobs = max(1, min(jobs, len(ahead)))
    ahead.reverse()  # popped from the end: each is dropped once handed on

    def stream() -> Iterator[_Item]:
        while ahead:
            yield ahead.pop()
        yield from items

    # each family's tree check, made at its first claimed file: a run with none of a family's
    # files (the commit hook) does not import the family's tree check modules
    trees: list[TreeCheck | None] = [None] * len(families)

    def tree(index: int) -> TreeCheck:
        made = trees[index]
        if made is None:
            made = trees[index] = tree_check(families[index], snapshot)
        return made

    local = _Checked()  # this process's findings, or a worker's

    def check_one(item: _Item) -> None:
        path, owners = item
        data = given[path] if path in given else snapshot.read(path)
        if isinstance(data, Unreadable):
            local.findings.append(data.finding())
            local.unread.append(path)
            return
        for index, kind in owners:
            local.findings.extend(families[index].check_file(FileInput(path, kind, data, snapshot)))

    findings: list[Finding] = []
    unread: set[str] = set()
    count = 0
    if jobs == 1 or not hasattr(os, "fork"):
        for item in stream() if ahead else items:
            if progress is not None:
                progress(count, None)
            count += 1
            path, owners = item
            for index, kind in owners:
                (trees[index] or tree(index)).add(Claimed(path, kind))
            check_one(item)
        findings, unread = local.findings, set(local.unread)
    else:
        from continuity_checks.core.workers import Workers  # not for the commit hook

        # this process takes its turn with jobs - 1 workers: it walks and feeds the tree checks
        # too, but its share keeps it from idling while a worker's pipe is full
        with Workers(jobs - 1, check_one, local.result) as workers:
            turn = 0

            def hand_on(batch: list[_Item]) -> None:
                nonlocal turn
                if turn == 0:
                    for item in batch:
                        check_one(item)
                else:
                    workers.send(batch)
                turn = (turn + 1) % jobs

            batch: list[_Item] = []
            directory = ""
            for item in stream():
                count += 1
                path, owners = item
                for index, kind in owners:
                    (trees[index] or tree(index)).add(Claimed(path, kind))
                # a batch ends at a change of directory where it can: a session's node files
                # go to one process together (see the sessions family's Gather)
                here = path[: path.rfind("/") + 1]
                if len(batch) >= BATCH_MAX or (len(batch) >= BATCH_AFTER and here != directory):
                    hand_on(batch)
                    batch = []
                    if progress is not None:
                        progress(count - 1, None)
                batch.append(item)
                directory = here
            if batch:
                hand_on(batch)
            findings, unread = local.findings, set(local.unread)
            for part_findings, part_unread in workers.results():
                findings.extend(part_findings)
                unread.update(part_unread)
    findings[:0] = unlisted
    for made in trees:
        if made is not None:
            findings.extend(made.finish(unread))
    if progress is not None:
        progress(count, count)
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


class _Checked:
    """What reading and checking files found, in one process: the findings, and the claimed
    paths that could not be read (the tree checks leave them out, as the family never saw
    them)."""

    def __init__(self) -> None:
        self.findings: list[Finding] = []
        self.unread: list[str] = []

    def result(self) -> tuple[list[Finding], list[str]]:
        return self.findings, self.unread


def _claimed(
    root: Path,
    sources: Sequence[tuple[str, bool]],
    families: Sequence[Family],
    exclude: Globs,
    unlisted: list[Finding],
    unchecked: territory.Unchecked,
) -> Iterator[_Item]:
    """The claimed files of ``sources`` (``(path, is a directory to walk)``, in order), each once
    and with the families that claim it and judge it, at its first place among the sources.
    Without a set of all paths: a file named on its own comes where a walk meets it or at its
    own place in the sources, whichever is first, a directory walked is not walked again, and a
    walk does not enter a directory that is a source of its own. What is not checked goes to
    ``unchecked``: files named that no family claims, files walked in a family's territory."""
    explicit = frozenset(path for path, is_dir in sources if not is_dir)
    roots = frozenset(path for path, is_dir in sources if is_dir)

    numbered = tuple(enumerate(families))
    # sources handled, and files named on their own that a walk met: as many as were given
    done: set[str] = set()
    for source, is_dir in sources:
        if source in done:
            continue
        done.add(source)
        paths: Iterable[str] = (
            (source,) if not is_dir else walk(root, exclude, source, unlisted, roots)
        )
        for path in paths:
            if is_dir and path in explicit:
                # where the walk meets it (its first place among the sources, as before the
                # stream): a node file of a session must come before the session's last, or
                # its findings are held for a judgment that was made already (and standard
                # input's bytes for it would be read from disk instead)
                if path in done:
                    continue
                done.add(path)
            found = tuple((i, kind) for i, f in numbered if (kind := f.claims(path)) is not None)
            if not found:
                if is_dir and path not in explicit:
                    unchecked.walked(path)
                else:
                    unchecked.named(path)
            elif found := unchecked.judged(path, found):
                yield path, found


def check_staged(
    repo: Repository,
    config: Config,
    chosen: Sequence[Declaration],
    families: Sequence[Family],
    staged: Sequence[RawChange] | None = None,
) -> list[Finding]:
    """The prospective commit (what the index changes against ``HEAD``, with the index's tree
    as the commit's and ``HEAD``'s as its parent's), judged as ``verify`` judges a commit: the
    history rules, each claimed change from the last good version of its path (looked for
    back through ``HEAD``'s history: :func:`~continuity_checks.last_good.before_head`), and the
    errors the commit leaves (:mod:`~continuity_checks.commit_state`). Findings carry the
    commit id ``staged``. ``staged``: what the index changes, when the caller read it already."""
    from continuity_checks.core.git.log import GITLINK
    from continuity_checks.core.snapshot import CommitTree

    limit = config.max_file_bytes
    findings: list[Finding] = []
    exclude = Globs(config.exclude)
    if staged is None:
        staged = repo.staged(any(d.gitlinks for d in chosen))
    raw_changes = [c for c in staged if not exclude.match(c.path)]
    if not raw_changes and not any(d.every_commit for d in chosen):
        return findings

    def owners(path: str) -> list[tuple[int, str]]:
        if exclude.match(path):
            return []
        return [(i, kind) for i, f in enumerate(families) if (kind := f.claims(path)) is not None]

    def is_good(tree: Snapshot, version: tuple[str, str | None, str]) -> bool:
        return commit_state.good(families, owners, config, tree, version, repo.read_blob)

    head = repo.head()
    fields: dict[str, str] = {}
    asked = frozenset().union(*(d.fields for d in chosen))
    if asked:
        for who, (name, email, date) in repo.identities().items():
            fields |= {f"{who}_name": name, f"{who}_email": email, f"{who}_date": date}
    # a commit that concludes a merge has MERGE_HEAD's commits as its other parents
    merging = repo.merge_heads() if head else ()
    commit = Commit(STAGED, (head, *merging) if head else (), "", {}, fields)
    # the look-ups of a path the commit leaves alone are answered once for both trees, and
    # what exists in the commit's tree by the index (git inflates no large tree object)
    alike = Alike((c.path, c.old_mode, c.new_mode) for c in raw_changes)

    written = repo.write_tree()

    def in_written(path: str) -> bool | None:
        return repo.index_has(path, written)

    def in_head(path: str) -> bool | None:
        return repo.index_has(path, written) if alike.untouched(path) else None

    trees = (
        CommitTree(repo, head, limit, None, alike, in_head),
        CommitTree(repo, written, limit, None, alike, in_written),
    )
    others = tuple(CommitTree(repo, p, limit) for p in merging)
    changes: list[list[Change]] = [[] for _ in families]
    for c in raw_changes:
        found = owners(c.path)
        if not found:
            continue
        old = c.old_blob
        if head and c.new_blob and not is_good(trees[0], (c.path, c.old_blob, c.old_mode)):
            absent = c.old_blob is None
            good, cut = last_good.before_head(repo, head, c.path, is_good, limit, absent)
            if cut:
                findings.append(last_good.cut_short(c.path))
            else:
                old = good
        status = "A" if old is None else ("D" if c.new_blob is None else "M")
        gitlink = GITLINK in (c.old_mode, c.new_mode)
        for index, kind in found:
            if not gitlink or chosen[index].gitlinks:
                changes[index].append(
                    Change(c.path, kind, status, old, c.new_blob, repo.read_blob, c.new_mode)
                )
    for index, family in enumerate(families):
        if changes[index] or chosen[index].every_commit:
            context = CommitContext(commit, changes[index], *trees, raw_changes, others)
            for finding in family.check_commit(context):
                findings.append(rewrite_hint(finding, commit))
    left = commit_state.leaves(families, owners, config, trees, raw_changes, repo.read_blob)
    _add_left(findings, left.findings, commit, _causes(families))
    findings.extend(_finish(repo, chosen, families, (head,) if head else ()))
    return findings


#: A family's judgement that a history finding names the cause of a state finding.
SameCause = Callable[[Finding, Finding], bool]


def _causes(families: Sequence[Family]) -> list[SameCause]:
    """The ``same_cause`` of each family that has one (:class:`SharesCauses`)."""
    return [same for f in families if (same := getattr(f, "same_cause", None)) is not None]


def _add_left(
    out: list[Finding],
    left: Sequence[Finding],
    commit: Commit,
    causes: Sequence[SameCause],
    pushed: bool = False,
) -> None:
    """The errors ``commit`` leaves, added to ``out`` with its id, except where a history
    finding of this commit at the same path has the same rule or, as its family judges, names
    the same cause (one cause, once); ``pushed`` as for :func:`rewrite_hint`."""
    if not left:
        return
    mine = [f for f in out if f.commit == commit.sha]
    seen = {(f.rule, f.path) for f in mine}
    for finding in left:
        if (finding.rule, finding.path) in seen or any(
            same(h, finding) for h in mine if h.path == finding.path for same in causes
        ):
            continue
        finding = dataclasses.replace(finding, commit=commit.sha)
        out.append(rewrite_hint(finding, commit, pushed=pushed))


def verify(
    root: Path,
    config: Config,
    revision_range: str,
    *,
    only: tuple[str, ...] | None = None,
    config_at_base: bool = False,
    shard: Shard | None = None,
    baseline: BaselineSource | None = None,
    progress: Progress | None = None,
    pushed: bool = False,
) -> Report:
    """History mode: check every commit of ``BASE..HEAD``, oldest first. Raises ``GitError``
    (exit 2) for a shallow clone, an unknown ref or a directory that is not a repository.

    Each family gets the commits that change its paths (every commit, if it declares so), with
    the commit fields and trailers it declared, and the trees on both sides of the commit. A
    version larger than ``limits.max-file-bytes`` is not read into memory: the family gets None
    for it, and the run reports CC008 once per blob, at the first commit that needed it.

    With ``config_at_base``, the range is judged by the configuration at its base commit, or by
    the defaults when it has no base (see :func:`base_config`), not by ``config``; a commit of
    the range that changes the configuration is CC011.

    With ``shard``, only that slice of the range's commits is checked (see :func:`_walk`).

    ``baseline``: the findings the ``verify`` section of that baseline knows are hidden and
    counted (read at the base like the configuration, when the source says so; raises
    BaselineError for a file that is not a baseline). ``progress`` is told the commits walked
    (and their number: a shard's, or the range's, counted by one more git process only when
    progress is asked for). ``pushed``: the range's commits are already pushed (a run in CI),
    which changes how the hints say to mend them (:func:`rewrite_hint`).
    """
    from continuity_checks.core.git.repository import Repository

    root = Path(os.path.abspath(root))
    with Repository(root, config.max_file_bytes, revision_range=revision_range) as repo:
        base, head = repo.resolve_range(revision_range)
        if config_at_base:
            config = base_config(repo, base)
            repo.objects.max_bytes = config.max_file_bytes
        known, read = baseline.read(repo, base) if baseline is not None else (None, None)
        report = _walk(repo, base, head, config, revision_range, only, shard, progress, pushed)
    if read is not None:
        report.notes.append(read)  # which baseline judged the range, or that none did
    if known is not None:
        from continuity_checks.core.baseline import hide

        hide(report, known.entries("verify"))
    return report


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


def _config_changes(
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


def _walk(
    repo: Repository,
    base: Base,
    head: str,
    config: Config,
    revision_range: str,
    only: tuple[str, ...] | None,
    shard: Shard | None = None,
    progress: Progress | None = None,
    pushed: bool = False,
) -> Report:
    """Check the commits of the range, or of its ``shard``.

    A shard is checked as the whole run would check its commits. Each commit is judged against
    its own first parent's tree, read from the object store, whichever shard holds the parent;
    so a family that compares a commit with its parent (a delta's previous version, a prune
    boundary, the pins of the listings, built again from the parent's tree at a shard's first
    commit) needs nothing from the other shards. A family whose judgement also depends on
    commits before the parent (``Declaration.history_state``) first replays the range's
    commits before the shard, its findings dropped, until it says it no longer needs them.
    """
    from continuity_checks.core import baseline as baseline_file
    from continuity_checks.core.git.log import GITLINK, LogRequest
    from continuity_checks.core.snapshot import CommitTree

    # the files a range is judged by (its base's), whose change inside the range is CC011
    judging_files = frozenset((*config_files.FILES, baseline_file.FILE_NAME))
    chosen = checks.selected(config, only)
    families = checks.build(config, chosen)
    request = LogRequest(
        trailers=tuple(dict.fromkeys(key for d in chosen for key in d.trailers)),
        fields=frozenset().union(*(d.fields for d in chosen)),
        gitlinks=any(d.gitlinks for d in chosen),
    )
    every_commit = [d.every_commit for d in chosen]
    see_gitlinks = [d.gitlinks for d in chosen]
    report = Report(
        unit="commit", max_per_file=config.max_findings_per_file, max_total=config.max_findings
    )
    findings: list[Finding] = []
    exclude = Globs(config.exclude)
    limit = config.max_file_bytes
    # Which families claim a path, and as what: asked once per path, not once per commit.
    owners_of: dict[str, list[tuple[int, str]]] = {}

    def owners(path: str) -> list[tuple[int, str]]:
        found = owners_of.get(path)
        if found is None:
            found = []
            if not exclude.match(path):
                found = [
                    (index, kind)
                    for index, family in enumerate(families)
                    if (kind := family.claims(path)) is not None
                ]
            if len(owners_of) >= _OWNERS_KEPT:
                owners_of.clear()
            owners_of[path] = found
        return found

    too_large: list[str] = []  # blobs a family asked for and got None: over the limit
    reported: set[str] = set()

    def read(sha: str) -> bytes | None:
        data = repo.read_blob(sha)
        if data is None:
            too_large.append(sha)
        return data

    # the last good version of each claimed path whose version at some commit was not good
    # (broken, a symlink, deleted): (path, that version) -> the good one before it, or None
    remembered: dict[tuple[str, str | None], str | None] = {}
    causes = _causes(families)  # what tells a state finding of a history finding's cause

    def judge(
        commit: Commit, raw_changes: list[RawChange], wanted: Sequence[int], out: list[Finding]
    ) -> None:
        """The findings of the families ``wanted`` on one commit, added to ``out``: each claimed
        change from the last good version of its path."""
        changes: list[list[Change]] = [[] for _ in families]
        for c in raw_changes:
            gitlink = GITLINK in (c.old_mode, c.new_mode)
            found = owners(c.path)
            if not found:
                continue
            old, status = last_good.judged_from(remembered, c)
            for index, kind in found:
                if not gitlink or see_gitlinks[index]:
                    changes[index].append(
                        Change(c.path, kind, status, old, c.new_blob, read, c.new_mode)
                    )
        trees: tuple[CommitTree, CommitTree] | None = None
        others: tuple[CommitTree, ...] = ()  # a merge's other parents
        for index in wanted:
            if not (changes[index] or every_commit[index]):
                continue
            if trees is None:
                trees = commit_trees(commit, raw_changes)
                others = tuple(CommitTree(repo, p, limit) for p in commit.parents[1:])
            context = CommitContext(commit, changes[index], *trees, raw_changes, others)
            for finding in families[index].check_commit(context):
                out.append(rewrite_hint(finding, commit, pushed=pushed))

    def is_good(tree: Snapshot, version: tuple[str, str | None, str]) -> bool:
        return commit_state.good(families, owners, config, tree, version, read)

    def judged_as(path: str) -> Callable[[Snapshot, str, str], bool]:
        return lambda tree, blob, mode: is_good(tree, (path, blob, mode))

    inherited: set[str] = set()  # the claimed paths a shard has met: see inherit()
    deleted: frozenset[str] | None = None  # the paths the earlier shards delete, when asked

    def inherit(commit: Commit, raw_changes: list[RawChange]) -> None:
        """At a shard's first change of each claimed path whose version from before the shard
        is not good: the last good version the whole run would remember, looked for among the
        versions the earlier shards' commits made (one from before the range counts as good,
        as the whole run takes it)."""
        nonlocal deleted
        in_range = None
        for c in raw_changes:
            if c.path in inherited or not owners(c.path):
                continue
            inherited.add(c.path)
            if c.old_blob is None:
                if deleted is None:
                    deleted = repo.deleted_in(earlier)
                if c.path not in deleted:
                    continue  # an addition of a path no earlier shard deleted: a creation
            elif is_good(commit_trees(commit, raw_changes)[0], (c.path, c.old_blob, c.old_mode)):
                continue
            in_range = in_range if in_range is not None else frozenset(earlier)
            remembered[(c.path, c.old_blob)] = last_good.look_back(
                repo.versions(commit.parents[0], c.path, last_good.SHARD_LOOK_BACK),
                lambda sha: CommitTree(repo, sha, limit),
                judged_as(c.path),
                in_range.__contains__,
            )[0]

    known = Known()  # what exists in the tree of the commit walked last
    made: dict[str, tuple[CommitTree, CommitTree]] = {}  # the trees of the commit walked now

    def commit_trees(commit: Commit, raw_changes: list[RawChange]) -> tuple[CommitTree, CommitTree]:
        """The commit's first parent's tree and its own, made once per commit."""
        trees = made.get(commit.sha)
        if trees is None:
            made.clear()
            parent = commit.parents[0] if commit.parents else None
            changes = [(c.path, c.old_mode, c.new_mode) for c in raw_changes]
            carried = known.after(commit.sha, parent, changes)
            alike = Alike(changes)
            trees = (
                CommitTree(repo, parent, limit, None, alike),
                CommitTree(repo, commit.sha, limit, carried, alike),
            )
            made[commit.sha] = trees
        return trees

    def state(commit: Commit, raw_changes: list[RawChange], out: list[Finding]) -> None:
        """The errors the commit leaves in its tree, added to ``out`` (each once: not where a
        history rule already reported the same rule at the same path), and what it leaves
        for :func:`last_good`."""
        trees = commit_trees(commit, raw_changes)
        left = commit_state.leaves(families, owners, config, trees, raw_changes, read)
        _add_left(out, left.findings, commit, causes, pushed)
        last_good.remember(remembered, raw_changes, left.broken, owners)

    everyone = range(len(families))
    # the commits of the range in order, 20 bytes each (32 in a SHA-256 repository): what the
    # report needs to sort findings by commit, without a string and a dict entry per commit
    # (about 160 bytes) for a range of 100,000
    order = bytearray()
    with _few_collections():
        only_commits: list[str] | None = None
        earlier: list[str] = []  # a shard's commits before it, for what families look up
        if shard is not None:
            ids = repo.commits(base, head)
            start, end = shard.bounds(len(ids))
            only_commits = ids[start:end]
            report.notes.append(
                f"shard {shard} of {revision_range}: commits {start + 1} to {end} of {len(ids)}"
                if end > start
                else f"shard {shard} of {revision_range}: no commits ({len(ids)} in the range)"
            )
            earlier = ids[:start]
            _replay(repo, earlier, chosen, families, request, judge)
            too_large.clear()  # what the replay could not read is the earlier shards' to report
        if progress is not None:
            total = len(only_commits) if only_commits is not None else repo.count(base, head)
            progress(0, total)
        # the walk fetches ahead the blobs of the paths some family claims
        walked = repo.walk(base, head, prefetch=owners, request=request, only=only_commits)
        for commit, raw_changes in walked:
            report.commits += 1
            order += bytes.fromhex(commit.sha)
            if progress is not None:
                progress(report.commits, None)
            for c in raw_changes:
                if c.path in judging_files:
                    findings.extend(_config_changes(repo, raw_changes, commit.sha, config.source))
                    break
            if earlier:
                inherit(commit, raw_changes)
            judge(commit, raw_changes, everyone, findings)
            if too_large:
                findings.extend(
                    _oversized(too_large, reported, raw_changes, repo.oversized, config, commit.sha)
                )
                too_large.clear()
            state(commit, raw_changes, findings)
            too_large.clear()  # what only the state read: it reported them itself
    # what came before the range (or the shard): the base (every remote-tracking tip of a new
    # branch), or nothing (the range is all of history, so the head); and a shard's earlier
    # commits, where the whole run would have seen a delta created. A shard of all of history
    # has everything before it in ``earlier``: the head would also reach the later shards'
    # commits, and a delta created again there would pass for the creator of an earlier one
    if isinstance(base, str):
        before = [base]
    elif base or shard is None:
        before = list(base or (head,))
    else:
        before = []
    findings.extend(_finish(repo, chosen, families, before, earlier, pushed))
    report.commit_order = CommitOrder(
        order, len(head) // 2, {f.commit for f in findings if f.commit}
    )
    if report.commits == 0 and shard is None:
        report.notes.append(f"no commits in {revision_range}: nothing to verify")
    report.findings, report.suppressed = apply_config(config, findings)
    return report


def _finish(
    repo: Repository,
    chosen: Sequence[Declaration],
    families: Sequence[Family],
    before: Sequence[str],
    earlier: Sequence[str] = (),
    pushed: bool = False,
) -> list[Finding]:
    """The findings families make after the last commit (``finish_commits``), with where
    files came from before the run: one ``git log`` per family that asks, and for a shard one
    more, first, over the range's ``earlier`` commits alone, in the order the whole run walked
    them. There a path's first addition is its creation when the range's base lacks it: the
    whole run judged a later one, after a deletion, from the version before the deletion (the
    last good version), as a change of that delta. A path the base holds was created before
    the range, and an addition inside it is such a change too."""
    from continuity_checks.core.git.log import LogRequest
    from continuity_checks.core.snapshot import CommitTree

    bases = [CommitTree(repo, sha, 0) for sha in before if earlier]

    findings: list[Finding] = []
    for declaration, family in zip(chosen, families, strict=True):
        finish = getattr(family, "finish_commits", None)
        if finish is None:
            continue
        request = LogRequest(fields=declaration.fields)

        def origins(paths: Iterable[str], request: LogRequest = request) -> dict[str, Commit]:
            wanted = list(paths)
            found = repo.added_by(earlier, wanted, request, walk=False) if earlier else {}
            for path in [p for p in found if any(tree.exists(p) for tree in bases)]:
                del found[path]
            rest = [p for p in wanted if p not in found]
            if rest and before:
                found.update(repo.added_by(before, rest, request))
            return found

        for commit, finding in finish(origins):
            findings.append(rewrite_hint(finding, commit, pushed=pushed))
    return findings


def _replay(
    repo: Repository,
    earlier: Sequence[str],
    chosen: Sequence[Declaration],
    families: Sequence[Family],
    request: LogRequest,
    judge: Callable[[Commit, list[RawChange], Sequence[int], list[Finding]], None],
) -> None:
    """Before a shard: the range's ``earlier`` commits, for the families whose judgement
    depends on more than the parent's tree, their findings dropped (the earlier shards report
    them). Each such family may end its replay early: once ``history_needed()`` is false (a
    sessions family that found a project repository, not a session repository), the commits
    left cannot change how it judges the shard."""
    stateful = [i for i, d in enumerate(chosen) if d.history_state]
    if not earlier or not stateful:
        return

    def needed(index: int) -> bool:
        ask = getattr(families[index], "history_needed", None)
        return True if ask is None else bool(ask())

    walked = repo.walk(None, "", request=request, only=earlier)
    try:
        for commit, raw_changes in walked:
            judge(commit, raw_changes, stateful, [])  # the earlier shards report these
            stateful = [i for i in stateful if needed(i)]
            if not stateful:
                break
    finally:
        walked.close()  # ends git log when the replay stops early


class CommitOrder(Mapping[str, int]):
    """Each walked commit's place in the range (1 for the oldest), from the binary ids of the
    walk (``width`` bytes each): 20 bytes a commit instead of a string and a dict entry (about
    160 bytes), for ranges of 100,000 commits. The places of ``wanted`` (the commits that have
    findings, what sorting asks for) are looked up once, in one pass; any other is found by a
    search of the ids."""

    def __init__(self, ids: bytearray, width: int, wanted: set[str]) -> None:
        self._ids = ids
        self._width = width
        self._known: dict[str, int] = {}
        binary: dict[bytes, str] = {}
        for sha in wanted:
            if len(sha) == 2 * width and HEX_DIGITS.issuperset(sha):
                binary[bytes.fromhex(sha)] = sha
        if binary:
            view = memoryview(self._ids)
            for place, start in enumerate(range(0, len(self._ids), width), start=1):
                found = binary.get(view[start : start + width].tobytes())
                if found is not None:
                    self._known[found] = place

    def __getitem__(self, sha: str) -> int:
        place = self._known.get(sha)
        if place is not None:
            return place
        if len(sha) == 2 * self._width and HEX_DIGITS.issuperset(sha):
            key, at = bytes.fromhex(sha), 0
            while (at := self._ids.find(key, at)) >= 0:
                if at % self._width == 0:
                    return at // self._width + 1
                at += 1
        raise KeyError(sha)

    def __iter__(self) -> Iterator[str]:
        width = self._width
        for start in range(0, len(self._ids), width):
            yield self._ids[start : start + width].hex()

    def __len__(self) -> int:
        return len(self._ids) // self._width if self._width else 0


HEX_DIGITS = frozenset("0123456789abcdef")


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
