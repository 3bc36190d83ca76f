"""The one fan-out over CPUs: how many CPUs this process may use (:func:`usable_cpus`), and
forked worker processes (:class:`Workers`, fed batches as a stream; :func:`split_map`, a list
split in parts). The children of ``fork`` inherit everything already loaded (families,
compiled schemas), so a child costs a few milliseconds. Threads are hashing's
(``core.hashing.sha256_many``), sized by :func:`usable_cpus` too.

Used only for large batches in a single-threaded process; elsewhere the work runs in-process.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Sequence
from typing import IO, Any, Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")

#: whether this platform has ``os.fork`` (not Windows): without it every run stays in one process
CAN_FORK = hasattr(os, "fork")

#: the cgroup v2 file that caps this process's CPU time: ``max`` or ``<quota> <period>``
CPU_MAX = "/sys/fs/cgroup/cpu.max"

_PIPE_BYTES = 1 << 20  # a worker's input pipe: room for several batches (Linux; else the default)
_F_SETPIPE_SZ = 1031


class WorkerFailed(RuntimeError):
    """A worker process ended without a result (killed, or its result could not be pickled):
    its share of the work was not done."""


def usable_cpus() -> int:
    """The CPUs this process may use, at least 1: those of its affinity mask
    (``os.sched_getaffinity``; ``os.cpu_count`` where there is none), at most the cgroup v2
    quota (:func:`quota_cpus`). Not the load average: it counts this tool's own previous run,
    and in a container the whole host's work."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        cpus = os.cpu_count() or 1
    quota = quota_cpus(CPU_MAX)
    return max(1, cpus if quota is None else min(cpus, quota))


def quota_cpus(path: str) -> int | None:
    """The CPUs the cgroup v2 ``cpu.max`` file at ``path`` allows: ``ceil(quota / period)``,
    at least 1; ``None`` for ``max`` (no quota), a missing or unreadable file, or text that is
    neither form."""
    try:
        with open(path, encoding="ascii") as file:
            fields = file.read().split()
    except (OSError, ValueError):
        return None
    if len(fields) != 2 or fields[0] == "max":
        return None
    try:
        quota, period = int(fields[0]), int(fields[1])
    except ValueError:
        return None
    if quota <= 0 or period <= 0:
        return None
    return max(1, -(-quota // period))


def split_map(work: Callable[[Sequence[T]], R], items: Sequence[T], jobs: int) -> list[R]:
    """``[work(part) for part in parts]`` with the items split into ``jobs`` contiguous parts,
    all but the first computed in :class:`Workers`. One part where ``fork`` is not available.
    An exception in a worker is raised again in the parent."""
    jobs = max(1, min(jobs, len(items)))
    if jobs == 1 or not CAN_FORK:
        return [work(items)]
    size = -(-len(items) // jobs)
    parts = [items[i : i + size] for i in range(0, len(items), size)]
    done: list[R] = []  # a worker's own result: it computes one part

    def handle(part: Sequence[T]) -> None:
        done.append(work(part))

    workers: Workers[Sequence[T], R]
    with Workers(len(parts) - 1, handle, lambda: done[0]) as workers:
        for part in parts[1:]:
            workers.send([part])
        first = work(parts[0])
        return [first, *workers.results()]


class Workers(Generic[T, R]):
    """``jobs`` forked worker processes fed over pipes. :meth:`send` hands a batch of items to
    the next worker in turn; each worker calls ``handle`` on every item it gets, in order, and
    when its input ends sends back ``result()`` (pickled) once. The parent closes every input
    before it reads any output (:meth:`results`), and a worker writes nothing before its input
    ends, so neither side can wait on the other with a full pipe. An exception in a worker is
    kept while it reads the rest of its input, then raised again in the parent by
    :meth:`results`. Leaving the ``with`` block without the results (an exception in the
    parent) kills the workers. Needs ``fork`` (:data:`CAN_FORK`)."""

    def __init__(self, jobs: int, handle: Callable[[T], None], result: Callable[[], R]) -> None:
        import pickle  # only here: a run that stays in one process (the commit hook) needs none

        self._pickle = pickle
        self._inputs: list[IO[bytes]] = []
        self._outputs: list[tuple[int, int]] = []  # (pid, read end)
        self._next = 0
        self._done = False
        for _ in range(max(1, jobs)):
            in_read, in_write = os.pipe()
            out_read, out_write = os.pipe()
            try:
                import fcntl

                fcntl.fcntl(in_write, _F_SETPIPE_SZ, _PIPE_BYTES)
            except (ImportError, OSError):  # pragma: no cover - not Linux, or a lower cap
                pass
            pid = os.fork()
            if pid == 0:  # pragma: no cover - runs in the child, measured through the parent
                # the parent's ends of the other workers' pipes, inherited: a worker holding
                # another's input open would keep it from ever seeing the end of its input
                for pipe in self._inputs:
                    os.close(pipe.fileno())
                for _, read_end in self._outputs:
                    os.close(read_end)
                os.close(in_write)
                os.close(out_read)
                status = 1
                try:
                    self._serve(in_read, out_write, handle, result)
                    status = 0
                finally:
                    os._exit(status)
            os.close(in_read)
            os.close(out_write)
            self._inputs.append(os.fdopen(in_write, "wb"))
            self._outputs.append((pid, out_read))

    def _serve(  # pragma: no cover - runs in the child
        self, in_read: int, out_write: int, handle: Callable[[T], None], result: Callable[[], R]
    ) -> None:
        pickle = self._pickle
        failure: BaseException | None = None
        with os.fdopen(in_read, "rb") as source:
            while True:
                try:
                    # one unpickler per batch: a kept one would keep its memo, which the next
                    # batch's pickle (made by a pickler of its own) does not know of
                    batch = pickle.load(source)
                except EOFError:
                    break
                if failure is not None:
                    continue  # read on to the end: the parent must never block writing to us
                try:
                    for item in batch:
                        handle(item)
                except BaseException as exc:  # handed to the parent, raised there
                    failure = exc
        payload: bytes
        try:
            payload = pickle.dumps(
                (True, result()) if failure is None else (False, failure), pickle.HIGHEST_PROTOCOL
            )
        except BaseException as exc:  # a result or exception that cannot be pickled
            described = WorkerFailed(f"a worker process failed: {failure or exc!r}")
            payload = pickle.dumps((False, described), pickle.HIGHEST_PROTOCOL)
        with os.fdopen(out_write, "wb") as sink:
            sink.write(payload)

    def send(self, batch: list[T]) -> None:
        """Hand ``batch`` to the next worker (blocks while that worker's pipe is full)."""
        pipe = self._inputs[self._next]
        self._next = (self._next + 1) % len(self._inputs)
        try:
            self._pickle.dump(batch, pipe, self._pickle.HIGHEST_PROTOCOL)
            pipe.flush()
        except BrokenPipeError:
            raise WorkerFailed("a worker process ended before its input did") from None

    def results(self) -> list[R]:
        """Every worker's result, in the order the workers were started, once all have
        ended. Raises the first worker's exception, if any raised."""
        for pipe in self._inputs:
            pipe.close()
        values: list[Any] = []
        failure: BaseException | None = None
        while self._outputs:
            pid, read_end = self._outputs.pop(0)  # popped: __exit__ must not close it again
            with os.fdopen(read_end, "rb") as pipe:
                payload = pipe.read()
            os.waitpid(pid, 0)
            ok, value = (
                self._pickle.loads(payload)
                if payload
                else (False, WorkerFailed("a worker process ended without a result"))
            )
            if not ok and failure is None:
                failure = value
            values.append(value)
        self._done = True
        if failure is not None:
            raise failure
        return values

    def __enter__(self) -> Workers[T, R]:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._done:
            return
        import signal

        for pipe in self._inputs:
            with contextlib.suppress(OSError):  # a worker gone: what was buffered is lost
                pipe.close()
        for pid, read_end in self._outputs:
            os.close(read_end)
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except OSError:  # pragma: no cover - already gone
                pass
        self._done = True
