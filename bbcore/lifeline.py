"""Worker processes that end with their parent, even when it is killed with SIGKILL.

A ``kill -9`` of ``bbcore explore`` (or of ``bbtui``) gives its process no
chance to stop its workers.  ``multiprocessing`` does not stop them either:
a spawned worker holds both ends of the pool's call queue, so it never
reads an end of file, and it waited there for ever, holding about 200 MB
and the database open; the resource tracker, whose pipe every worker keeps
open, stayed with them.  So every worker calls ``die_with_parent`` first:

- on Linux, ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` has the kernel kill the
  worker the moment its parent goes.  (The kernel watches the parent
  *thread* that started the worker: ``bbcore.explore`` starts its workers
  from the thread that runs the exploration, which outlives them.)
- everywhere, a daemon thread compares ``os.getppid()`` with the parent's
  id every ``POLL_SECONDS`` and ends the process when it changes (the
  orphan was adopted by init or a subreaper).  This covers systems without
  ``prctl`` and the moment before it took effect.

Once the workers are gone, the resource tracker reads an end of file on its
pipe and exits by itself.  A worker ends with ``os._exit``: no clean-up
runs, which is safe because every write is an SQLite transaction (a
transaction cut short is rolled back by the next connection).
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time

POLL_SECONDS = 0.5
"""How often the watchdog thread checks that the parent is alive."""
PR_SET_PDEATHSIG = 1
"""From ``<linux/prctl.h>``."""
ORPHAN_EXIT_STATUS = 70
"""Exit status of a worker that ended because its parent was gone."""


def die_with_parent(parent: int, signum: int = signal.SIGKILL) -> None:
    """End this process when process ``parent`` ends (call it first thing in a worker).

    ``parent`` is the pid the worker was started by, passed down as an
    argument: ``os.getppid()`` read in the worker could already be init's.
    ``signum`` is what this process gets then: SIGKILL (a worker), or a
    signal it ends cleanly on (SIGTERM: a session's app of ``bbtui --serve``
    pauses its run and quits, as on ctrl+q, when the server is killed).
    """
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0)
        except (OSError, AttributeError):
            pass  # the watchdog below still works
    if os.getppid() != parent:  # gone before prctl took effect
        _orphaned(signum)
    threading.Thread(target=_watch, args=(parent, signum), name="bbcore-lifeline", daemon=True).start()


def _watch(parent: int, signum: int) -> None:
    """Poll the parent id; end the process once it is no longer ``parent``."""
    while os.getppid() == parent:
        time.sleep(POLL_SECONDS)
    _orphaned(signum)


def _orphaned(signum: int) -> None:
    """End at once (SIGKILL), or send this process ``signum`` to end by itself."""
    if signum == signal.SIGKILL:
        os._exit(ORPHAN_EXIT_STATUS)
    os.kill(os.getpid(), signum)
