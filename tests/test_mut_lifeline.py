"""Workers that end with their parent (``bbcore.lifeline``), killed with SIGKILL or gone before they started.

Written from the mutation run of ``bbcore/lifeline.py`` (``bench/mutation.py lifeline``).
The run follows only what a test calls in its own process, so each test calls
``die_with_parent`` here too, with a signal that only sets a flag (SIGUSR1), before it
checks real processes: a worker whose parent is killed with SIGKILL ends at once
by the kernel's signal (its watchdog set to poll once an hour), or by its watchdog
alone where the kernel's signal is not to be had (``prctl`` missing, the watchdog's
period shrunk); a worker whose parent is gone before it starts ends with status 70,
or by the signal it asked for.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from proctree import wait_until

from bbcore import lifeline

ROOT = Path(__file__).resolve().parent.parent
PR_GET_PDEATHSIG = 2

PARENT = """
import subprocess, sys
worker = subprocess.Popen([sys.executable, "-c", sys.argv[1], str(__import__("os").getpid())])
print(worker.pid, flush=True)
worker.wait()
"""

WORKER = """
import ctypes, sys, time
from bbcore import lifeline
lifeline.POLL_SECONDS = {poll}
if {no_prctl}:
    def missing(*args, **kwargs):
        raise OSError("no prctl here")
    ctypes.CDLL = missing
lifeline.die_with_parent(int(sys.argv[1]))
print("ready", flush=True)
time.sleep(600)
"""


def env() -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def alive(pid: int) -> bool:
    """Whether a process runs (a zombie, ended but not reaped by whoever adopted it, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


@pytest.fixture
def flagged():
    """SIGUSR1 counted instead of ending the process, and this process's parent-death signal reset after."""
    seen: list[int] = []
    old = signal.signal(signal.SIGUSR1, lambda signum, frame: seen.append(signum))
    yield seen
    ctypes.CDLL(None).prctl(lifeline.PR_SET_PDEATHSIG, 0, 0, 0, 0)
    signal.signal(signal.SIGUSR1, old)


def parent_death_signal() -> int:
    value = ctypes.c_int(-1)
    ctypes.CDLL(None).prctl(PR_GET_PDEATHSIG, ctypes.byref(value), 0, 0, 0)
    return value.value


def orphaned_here(flagged: list[int]) -> None:
    """``die_with_parent`` here, with a parent not ours: SIGUSR1 at once, then from the watchdog."""
    lifeline.die_with_parent(os.getppid() + 1 if os.getppid() + 1 != os.getpid() else 1, signal.SIGUSR1)
    assert parent_death_signal() == signal.SIGUSR1
    # once at once (the parent gone before prctl took effect), once from the watchdog, which then ends
    wait_until(lambda: len(flagged) == 2, 10, "two signals")
    wait_until(
        lambda: "bbcore-lifeline" not in {t.name for t in threading.enumerate()}, 10, "the watchdog to end"
    )
    assert flagged == [signal.SIGUSR1, signal.SIGUSR1]


def killed_parent(poll: float, no_prctl: bool) -> None:
    """Start a parent and its worker, kill the parent with SIGKILL: the worker ends soon after."""
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, WORKER.format(poll=poll, no_prctl=no_prctl)],
        stdout=subprocess.PIPE,
        text=True,
        env=env(),
    )
    worker = int(parent.stdout.readline())
    try:
        assert parent.stdout.readline() == "ready\n"  # its parent is killed once it is watched
        assert alive(worker)
        parent.kill()
        parent.wait()
        wait_until(lambda: not alive(worker), 30, "the worker to end with its parent")
    finally:
        parent.stdout.close()
        if alive(worker):
            os.kill(worker, signal.SIGKILL)


def test_a_worker_ends_by_the_kernels_signal_when_its_parent_is_killed(flagged):
    orphaned_here(flagged)
    killed_parent(poll=3600.0, no_prctl=False)


def test_without_prctl_the_watchdog_ends_the_worker(flagged):
    orphaned_here(flagged)
    killed_parent(poll=0.05, no_prctl=True)


def test_a_worker_whose_parent_is_gone_before_it_starts_ends_at_once(flagged):
    orphaned_here(flagged)
    code = (
        "import os, sys; from bbcore import lifeline; "
        "lifeline.die_with_parent(int(sys.argv[1]){}); import threading; "
        "print('ran on with', *sorted(t.name for t in threading.enumerate()))"
    )
    gone = str(os.getpid() + 1)  # not the worker's parent, which is this process
    ended = subprocess.run(
        [sys.executable, "-c", code.format(""), gone], capture_output=True, text=True, env=env()
    )
    assert (ended.returncode, ended.stdout) == (lifeline.ORPHAN_EXIT_STATUS, "")
    assert lifeline.ORPHAN_EXIT_STATUS == 70
    termed = subprocess.run(
        [sys.executable, "-c", code.format(", 15"), gone], capture_output=True, text=True, env=env()
    )
    assert (termed.returncode, termed.stdout) == (-signal.SIGTERM, "")
    # its own parent: it runs on, and ends when it is done (the watchdog is a daemon thread)
    kept = subprocess.run(
        [sys.executable, "-c", code.format(""), str(os.getpid())],
        capture_output=True,
        text=True,
        env=env(),
        timeout=60,
    )
    assert (kept.returncode, kept.stdout) == (
        0,
        "ran on with MainThread bbcore-lifeline\n",
    )  # named in a dump
