"""File mode's one loop over its stream of claimed files: each file goes to its families' tree
checks in this process, in stream order, and is handed on to be read and checked, here
(:class:`InProcess`) or in batches spread over worker processes (:class:`Spread`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Protocol

from continuity_checks.core.family import Claimed, Family, FileInput, TreeCheck
from continuity_checks.core.findings import Finding
from continuity_checks.core.snapshot import Snapshot, Unreadable
from continuity_checks.engine.owners import Claimants

if TYPE_CHECKING:
    from continuity_checks.core.workers import Workers

#: A claimed path and the families that claim it and judge it.
Item = tuple[str, Claimants]

#: Called as work proceeds: units done so far, and the total when it is known. The engine
#: knows no terminal; the command line decides whether and how to show it.
Progress = Callable[[int, "int | None"], None]

BATCH_AFTER = 64  # items: a batch for a worker ends at the next change of directory from here
BATCH_MAX = 1024  # items: and here in any case


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

    def check(self, item: Item) -> None:
        """Reads one claimed file and runs its families' file checks on it."""
        path, owners = item
        data = self.given[path] if path in self.given else self.snapshot.read(path)
        if isinstance(data, Unreadable):
            self.findings.append(data.finding())
            self.unread.append(path)
            return
        families, snapshot = self.families, self.snapshot
        for index, kind in owners:
            self.findings.extend(families[index].check_file(FileInput(path, kind, data, snapshot)))

    def result(self) -> tuple[list[Finding], list[str]]:
        return self.findings, self.unread


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


class Sink(Protocol):
    """Where the loop hands each claimed file on, after its tree checks have it."""

    def put(self, item: Item, count: int) -> None:
        """Item number ``count`` (from 1) of the stream."""

    def close(self) -> None:
        """The stream has ended."""


def feed(items: Iterable[Item], trees: Trees, sink: Sink) -> int:
    """The one loop: each claimed file to its families' tree checks, then to ``sink``, in
    stream order; the number of files."""
    made = trees.made
    count = 0
    for item in items:
        count += 1
        path, owners = item
        for index, kind in owners:
            (made[index] or trees.make(index)).add(Claimed(path, kind))
        sink.put(item, count)
    sink.close()
    return count


class InProcess:
    """Checks each file as it comes, in this process."""

    def __init__(self, files: FileChecks, progress: Progress | None) -> None:
        self.files = files
        self.progress = progress

    def put(self, item: Item, count: int) -> None:
        if self.progress is not None:
            self.progress(count - 1, None)
        self.files.check(item)

    def close(self) -> None:
        pass


class Spread:
    """Hands the files on in batches, in turn to this process and to ``jobs - 1`` workers: this
    process walks and feeds the tree checks too, but its share keeps it from idling while a
    worker's pipe is full. A batch ends at a change of directory where it can: a session's
    node files go to one process together (see the sessions family's ``Gather``)."""

    def __init__(
        self,
        files: FileChecks,
        workers: Workers[Item, tuple[list[Finding], list[str]]],
        jobs: int,
        progress: Progress | None,
    ) -> None:
        self.files = files
        self.workers = workers
        self.jobs = jobs
        self.progress = progress
        self.turn = 0
        self.batch: list[Item] = []
        self.directory = ""

    def put(self, item: Item, count: int) -> None:
        path = item[0]
        here = path[: path.rfind("/") + 1]
        batch = self.batch
        if len(batch) >= BATCH_MAX or (len(batch) >= BATCH_AFTER and here != self.directory):
            self.hand_on()
            if self.progress is not None:
                self.progress(count - 1, None)
        self.batch.append(item)
        self.directory = here

    def close(self) -> None:
        if self.batch:
            self.hand_on()

    def hand_on(self) -> None:
        """The batch to the process whose turn it is; a new batch begins."""
        if self.turn == 0:
            for item in self.batch:
                self.files.check(item)
        else:
            self.workers.send(self.batch)
        self.batch = []
        self.turn = (self.turn + 1) % self.jobs
