"""Runners: where the tasks of a compact exploration run.

A compact exploration (``bbcore.compact``) is two stages of independent
tasks, each a plain module-level function of one picklable job that returns
a small picklable result:

- ``compact.trace.trace_range(TraceJob) -> TraceResult``: trace the canonical
  molecules of a range of numbers, write their ``(key, number)`` records to
  the shard files (one file per shard and range, written under a temporary
  name and renamed), and return the range's statistics profile;
- ``compact.group.group_shard(GroupJob) -> GroupResult``: read one shard's files,
  find the keys held by two or more molecules, settle them exactly by
  tracing their molecules again, write the ambiguous spectra with their
  molecules to the shard's result folder, and return the shard's counts.

Both are idempotent: running a job twice writes the same files and returns
the same result, so a task lost with its worker may simply run again.  The
process that drives the run (``compact.run.run_stages``) is the only one
that writes the SQLite database: it records each result as it arrives.

A runner is anything with the two methods of ``Runner``.  Two live here:
``InlineRunner`` (the calling process, for small configurations and
``--workers 1``) and ``LocalRunner`` (a pool of spawned worker processes).
A distributed runner (Dask) implements the same protocol: it needs only
``run``, and a shared directory for the shard files.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Protocol, TypeVar

Job = TypeVar("Job")
Result = TypeVar("Result")

IN_PROCESS_BELOW = 150_000
"""Configurations smaller than this are explored in the calling process (both
stores): starting worker processes would cost more than it saves."""
POLL_SECONDS = 0.25
"""How often a runner waiting on its tasks looks at the stop event."""


class Runner(Protocol):
    """Runs the tasks of one stage of a compact exploration, and nothing else.

    ``run(stage, jobs, stop)`` calls ``stage(job)`` for every job, possibly
    in other processes or on other machines, and yields ``(job, result)``
    pairs as the tasks finish, in any order.  The contract:

    - ``stage`` is a module-level function (importable by name in a worker)
      and jobs and results are picklable; a job carries everything its task
      needs (configuration, shard directory, numbers), so that workers share
      nothing but the shard directory's files;
    - once ``stop`` is set, no new task starts; tasks under way may finish
      and be yielded, or be dropped (they are idempotent: an unrecorded task
      is simply run again by the next run), and ``run`` returns soon (within
      a task's time) without raising.  Stages call ``check_halt()`` between
      batches: a runner may make it raise ``Halted`` in its tasks once
      ``stop`` is set (the local runners do), and then drops those tasks;
    - a task that raises makes ``run`` raise that exception (after dropping
      the tasks not started); the driver then stops the run, keeping what
      was recorded;
    - a task lost with its worker may be run again (Dask retries it): the
      stages are idempotent, so the results are the same;
    - ``run`` may be called several times (one stage after the other);
      ``close()`` releases the workers and is called once at the end.

    ``workers`` is how many tasks run at once (used to size the queue and
    shown in messages).
    """

    workers: int

    def run(
        self, stage: Callable[[Job], Result], jobs: Iterable[Job], stop: threading.Event
    ) -> Iterator[tuple[Job, Result]]:
        """Yield ``(job, stage(job))`` for each job as its task finishes."""
        ...

    def close(self) -> None:
        """Release the workers (idempotent)."""
        ...


class Halted(Exception):
    """A task given up half-way because the run is pausing: the next run does it again."""


_halt = None
"""What ``check_halt`` watches in this process: the run's stop event (inline), or an
event shared with the driver (a local worker); None where nobody asks tasks to halt."""


def check_halt() -> None:
    """Raise Halted when the run is pausing; stages call it between batches.

    It lets a pause come within a batch's time rather than a task's.  A
    runner that does not support it (Dask) lets tasks run to their end.
    """
    if _halt is not None and _halt.is_set():
        raise Halted


class InlineRunner:
    """Runs every task in the calling process, one after the other."""

    workers = 1

    def run(
        self, stage: Callable[[Job], Result], jobs: Iterable[Job], stop: threading.Event
    ) -> Iterator[tuple[Job, Result]]:
        """Call ``stage`` on each job in turn until ``stop`` is set."""
        global _halt
        _halt = stop
        try:
            for job in jobs:
                if stop.is_set():
                    return
                try:
                    result = stage(job)
                except Halted:
                    return
                yield job, result
        finally:
            _halt = None

    def close(self) -> None:
        """Nothing to release."""


class LocalRunner:
    """Runs tasks in a pool of ``workers`` spawned processes on this machine.

    At most ``workers + 1`` tasks are submitted at a time, so that a stop
    drops the queue at once and the jobs are never all materialised in the
    pool.  Workers ignore Ctrl-C and SIGTERM (the driver pauses the run instead) and
    keep freed memory for reuse (``keep_freed_memory``), and end with the
    process that started them, even on SIGKILL (``bbcore.lifeline``).

    A broken pool after a stop is a pause, not an error.  A spawned worker
    ignores Ctrl-C and SIGTERM only from its initialiser on: it first starts
    Python and imports bbcore, a second or more on a loaded machine.  A
    SIGTERM to the whole process group (``timeout``, a scheduler) or a Ctrl-C
    in that window kills it and breaks the pool: the run used to end "A
    process in the process pool was terminated abruptly", exit 2.  That
    worker had begun no task, and every task that stores rows commits them
    whole or not at all, so once the driver was told to stop, a broken pool
    is the pause it asked for: what is stored is kept, the same command
    resumes.  Without a stop, a broken pool stays an error.  (The full
    store's pool, ``full._run_pool``, does the same.)
    """

    def __init__(self, workers: int | None = None) -> None:
        """A pool of ``workers`` processes (default: every core), started on first use."""
        self.workers = workers or os.cpu_count() or 1
        self._pool: ProcessPoolExecutor | None = None
        self._context = multiprocessing.get_context("spawn")
        self._halt = self._context.Event()

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                self.workers,
                mp_context=self._context,
                initializer=_worker_init,
                initargs=(os.getpid(), self._halt),
            )
        return self._pool

    def run(
        self, stage: Callable[[Job], Result], jobs: Iterable[Job], stop: threading.Event
    ) -> Iterator[tuple[Job, Result]]:
        """Submit jobs as workers free up; yield each finished one."""
        pool = self._executor()
        self._halt.clear()
        queue = iter(jobs)
        running: dict[Future, Job] = {}
        exhausted = False
        try:
            while True:
                while not exhausted and not stop.is_set() and len(running) < self.workers + 1:
                    job = next(queue, None)
                    if job is None:
                        exhausted = True
                        break
                    running[pool.submit(stage, job)] = job
                if not running:
                    return
                if stop.is_set():
                    self._halt.set()
                finished, _ = wait(list(running), timeout=POLL_SECONDS, return_when=FIRST_COMPLETED)
                for future in finished:
                    job = running.pop(future)
                    try:
                        result = future.result()
                    except Halted:
                        continue
                    except BrokenProcessPool:
                        if stop.is_set():  # a pause (see the class)
                            return
                        raise
                    yield job, result
        finally:
            for future in running:
                future.cancel()

    def close(self) -> None:
        """Stop the workers, waiting for the tasks under way."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


def keep_freed_memory() -> None:
    """Ask glibc to reuse freed memory instead of returning it to the kernel.

    Each range allocates arrays of a few MB; by default glibc maps and unmaps
    them every time, and the fresh pages fault in again.  Page faults are
    expensive on sandboxed machines: this halves the engine's time on our
    CI machine (bench/explore.py).  A no-op where glibc is not the allocator.
    """
    import ctypes

    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return
    m_trim_threshold, m_mmap_threshold = -1, -3
    libc.mallopt(m_mmap_threshold, 1 << 30)
    libc.mallopt(m_trim_threshold, 1 << 30)


def _worker_init(parent: int, halt) -> None:
    """A worker ends with its parent (``bbcore.lifeline``), ignores Ctrl-C and SIGTERM, keeps freed memory,
    and watches ``halt`` (``check_halt``)."""
    global _halt
    from bbcore.lifeline import die_with_parent

    die_with_parent(parent)
    _halt = halt
    for number in (signal.SIGINT, signal.SIGTERM):  # the driver pauses the run on either
        signal.signal(number, signal.SIG_IGN)
    keep_freed_memory()
