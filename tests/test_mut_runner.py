"""The runners of a compact exploration on plain tasks: what ``bbcore.runner.Runner`` promises.

Written for the mutation run of ``bbcore/runner.py`` (issue 33, section 5,
``bench/mutation_notes.md``): the explorations drive the runners only as a
whole (tests/test_processes.py, tests/test_explore.py), so a runner that ran
one task too many after a stop, filled its queue past ``workers + 1``, kept a
halted task's result or took a broken pool after a pause for an error passed
them.  Here each promise of the protocol is checked on its own, with real
spawned workers for ``LocalRunner``.  The stages are this module's functions
(a spawned worker imports them by name).
"""

from __future__ import annotations

import math
import os
import signal
import sys
import threading
import time
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import pytest
from proctree import wait_until

from bbcore import runner
from bbcore.runner import Halted, InlineRunner, LocalRunner, check_halt


def square(job: int) -> int:
    return job * job


STATE = "as imported"
"""Changed by a test in this process: a spawned worker imports this module afresh."""


def state(_: int) -> str:
    return STATE


def halting(job: tuple[Path, float]) -> str:
    """Tell the test it started (a file), then wait for the run's halt and give up (``Halted``);
    "not halted" if none came within ``job[1]`` seconds."""
    folder, patience = job
    (folder / f"started-{os.getpid()}").touch()
    deadline = time.monotonic() + patience
    while time.monotonic() < deadline:
        check_halt()
        time.sleep(0.01)
    return "not halted"


def dying(job: int) -> int:
    """Kill this worker (a worker lost: the pool breaks)."""
    os.kill(os.getpid(), signal.SIGKILL)
    return job


# -- InlineRunner -----------------------------------------------------------------------


def test_inline_runs_every_job_in_order_in_this_process():
    inline = InlineRunner()
    assert inline.workers == 1
    assert list(inline.run(square, iter(range(6)), threading.Event())) == [(n, n * n) for n in range(6)]
    assert list(inline.run(str, iter([7, 8]), threading.Event())) == [(7, "7"), (8, "8")]  # again
    inline.close()


def test_inline_starts_no_job_once_stopped():
    """Stopped before: nothing runs; stopped by the reader after the third result: no fourth."""
    stop = threading.Event()
    stop.set()
    ran: list[int] = []
    assert list(InlineRunner().run(lambda n: ran.append(n), iter(range(5)), stop)) == []
    assert ran == []
    stop = threading.Event()
    got = []
    for _job, result in InlineRunner().run(lambda n: ran.append(n) or n, iter(range(10)), stop):
        got.append(result)
        if len(got) == 3:
            stop.set()
    assert got == [0, 1, 2] and ran == [0, 1, 2]


def test_inline_halt_ends_the_run_and_is_watched_only_during_it():
    """A stage that checks the halt once the run's stop is set is given up (``Halted``): the run
    ends there, without its result and without raising; outside a run, ``check_halt`` is quiet."""
    stop = threading.Event()
    ran: list[int] = []

    def stage(n: int) -> int:
        ran.append(n)
        if n == 2:
            stop.set()
            check_halt()
        return n

    assert list(InlineRunner().run(stage, iter(range(5)), stop)) == [(0, 0), (1, 1)]
    assert ran == [0, 1, 2]
    assert runner._halt is None
    check_halt()  # the stop is still set, but no run is under way


def test_inline_halted_stage_before_the_stop_also_ends_the_run():
    """``Halted`` from a stage ends the run even when the stop is not set (nothing is yielded
    after it)."""

    def stage(n: int) -> int:
        if n == 1:
            raise Halted
        return n

    assert list(InlineRunner().run(stage, iter(range(4)), threading.Event())) == [(0, 0)]


def test_inline_stage_error_is_raised():
    with pytest.raises(ValueError, match="math domain error"):
        list(InlineRunner().run(math.sqrt, iter([4, -1, 9]), threading.Event()))
    assert runner._halt is None


# -- LocalRunner ------------------------------------------------------------------------


def test_local_workers_default_to_the_cores():
    assert LocalRunner().workers == (os.cpu_count() or 1)
    assert LocalRunner(3).workers == 3


def test_local_runs_every_job_and_keeps_its_queue_short():
    """Every job's result, with its own job; at most ``workers + 1`` jobs taken from the queue
    before the first result; two stages on one pool; ``close`` twice, then a new pool."""
    local = LocalRunner(2)
    taken: list[int] = []

    def jobs(count: int):
        for n in range(count):
            taken.append(n)
            yield n

    try:
        results = {}
        for job, result in local.run(square, jobs(9), threading.Event()):
            if not results:
                assert len(taken) == local.workers + 1
            results[job] = result
        assert results == {n: n * n for n in range(9)}
        assert sorted(local.run(str, iter([1, 2]), threading.Event())) == [(1, "1"), (2, "2")]
    finally:
        local.close()
    assert local._pool is None
    local.close()
    try:
        assert list(local.run(square, iter([5]), threading.Event())) == [(5, 25)]
    finally:
        local.close()


def test_local_workers_start_afresh(monkeypatch):
    """Workers are spawned, not forked: they inherit nothing of the driver's state (its open
    database, its threads), only what they import."""
    monkeypatch.setattr(sys.modules[__name__], "STATE", "changed in the driver")
    local = LocalRunner(1)
    try:
        assert list(local.run(state, iter([1]), threading.Event())) == [(1, "as imported")]
    finally:
        local.close()


def test_local_takes_no_job_once_stopped():
    """Stopped after the first result: nothing more is taken from the queue (an endless one
    here), and ``run`` returns."""
    local = LocalRunner(1)
    taken: list[int] = []

    def endless():
        n = 0
        while True:
            taken.append(n)
            yield n
            n += 1

    stop = threading.Event()
    try:
        got = []
        for job, _result in local.run(square, endless(), stop):
            got.append(job)
            if not stop.is_set():
                stop.set()
                before = len(taken)
        assert len(taken) == before == 2  # workers + 1
        assert got and set(got) <= {0, 1}  # the two taken (a set of finished ones: any order)
    finally:
        local.close()


def test_local_stage_error_is_raised():
    local = LocalRunner(1)
    try:
        with pytest.raises(ValueError, match="math domain error"):
            list(local.run(math.sqrt, iter([4, -1, 9, 16]), threading.Event()))
    finally:
        local.close()


def test_local_stop_halts_the_tasks_under_way(tmp_path):
    """A stop set while a task runs reaches it within a poll (``POLL_SECONDS``): its
    ``check_halt`` raises, its result is dropped, and ``run`` returns without raising."""
    local = LocalRunner(1)
    stop = threading.Event()

    def stop_once_started() -> None:
        wait_until(lambda: any(tmp_path.glob("started-*")), 120, "the task to start")
        stop.set()

    setter = threading.Thread(target=stop_once_started)
    setter.start()
    try:
        assert list(local.run(halting, iter([(tmp_path, 30.0), (tmp_path, 30.0)]), stop)) == []
    finally:
        setter.join()
        local.close()
    assert len(list(tmp_path.glob("started-*"))) == 1  # the second job never started


def test_local_halt_is_cleared_for_the_next_run(tmp_path):
    """After a stopped run, the next run's tasks are not halted at once."""
    local = LocalRunner(1)
    stop = threading.Event()
    try:
        for _ in local.run(square, iter(range(3)), stop):
            stop.set()
        local._halt.set()  # as a stopped run leaves it when a task was still running
        assert list(local.run(halting, iter([(tmp_path, 0.5)]), threading.Event())) == [
            ((tmp_path, 0.5), "not halted")
        ]
    finally:
        local.close()


def test_local_broken_pool_is_an_error_unless_stopped():
    """A worker lost (killed): the pool breaks, which is an error; but after a stop it is the
    pause the driver asked for (a worker killed while it started, by the group's SIGTERM)."""
    local = LocalRunner(1)
    try:
        with pytest.raises(BrokenProcessPool):
            list(local.run(dying, iter([1, 2]), threading.Event()))
    finally:
        local.close()
    local = LocalRunner(1)
    stop = threading.Event()

    def stopping():
        yield 1
        stop.set()  # taken while the first job runs: the stop comes before its worker dies
        yield 2

    try:
        assert list(local.run(dying, stopping(), stop)) == []
    finally:
        local.close()
