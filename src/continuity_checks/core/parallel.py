"""Spread independent work over the machine's cores with ``fork``: the children inherit
everything already loaded (families, compiled schemas), so a child costs a few milliseconds.

Used only for large batches in a single-threaded process; elsewhere the work runs in-process.
:func:`split_map` splits a list it is given; :class:`~continuity_checks.core.workers.Workers`
(imported only by a run that uses it) is fed as a stream, in batches, so that nobody holds the
whole list.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


class WorkerFailed(RuntimeError):
    """A worker process ended without a result (killed, or its result could not be pickled):
    its share of the work was not done. Here, not in ``workers``, so that the command line can
    name it without loading that module."""


def usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def idle_cpus() -> int:
    """The usable CPUs that other work leaves idle, by the 1-minute load average (runnable
    processes): at least 1. A busy CI runner shares its CPUs with other jobs; a second worker
    there only takes its time slices from them, and the extra work of splitting (about 12 % more
    CPU for ``check --all``: fork, pickled results, a part that waits for the slower one) is
    then pure cost. Where the load cannot be read, every usable CPU counts as idle."""
    cpus = usable_cpus()
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # pragma: no cover - not Unix
        return cpus
    return max(1, min(cpus, cpus - int(load)))


def split_map(work: Callable[[Sequence[T]], R], items: Sequence[T], jobs: int) -> list[R]:
    """``[work(part) for part in parts]`` with the items split into ``jobs`` contiguous parts,
    all but the first computed in forked children. Falls back to one part where ``fork`` is
    not available. An exception in a child is raised again in the parent."""
    jobs = max(1, min(jobs, len(items)))
    if jobs == 1 or not hasattr(os, "fork"):
        return [work(items)]
    import pickle  # only here: a run that stays in one process (the commit hook) needs none

    size = -(-len(items) // jobs)
    parts = [items[i : i + size] for i in range(0, len(items), size)]
    children: list[tuple[int, int]] = []
    for part in parts[1:]:
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the child, measured through the parent
            os.close(read_end)
            try:
                payload = pickle.dumps((True, work(part)), pickle.HIGHEST_PROTOCOL)
            except BaseException as exc:  # handed to the parent, raised there
                payload = pickle.dumps((False, exc), pickle.HIGHEST_PROTOCOL)
            with os.fdopen(write_end, "wb") as pipe:
                pipe.write(payload)
            os._exit(0)
        os.close(write_end)
        children.append((pid, read_end))
    results = [work(parts[0])]
    for pid, read_end in children:
        with os.fdopen(read_end, "rb") as pipe:
            payload = pipe.read()
        os.waitpid(pid, 0)
        if not payload:
            raise WorkerFailed("a worker process ended without a result")
        ok, value = pickle.loads(payload)
        if not ok:
            raise value
        results.append(value)
    return results
