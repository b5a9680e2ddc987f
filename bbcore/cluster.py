"""A compact exploration's tasks on a Dask cluster: ``bbcore explore CONFIG --cluster tcp://HOST:PORT``.

The two stages of a compact exploration (``bbcore.compact``: tracing ranges,
grouping shards) are independent tasks behind the ``bbcore.runner.Runner``
protocol.  ``DaskRunner`` sends them to a Dask distributed scheduler: each
range becomes a tracing task, each shard a grouping task.  The workers write
and read the shard files in a folder that every one of them sees (``--shards
DIR``, by default ``<database>.shards`` next to the database); only the small
results (a range's profile, a shard's ambiguous spectra) come back, and this
process, the client, writes the SQLite database as a local run does.

- **Lost workers.** When a worker dies, the scheduler gives its tasks to
  the others (up to ``distributed.scheduler.allowed-failures`` times, 3 by
  default, before it calls the task bad); a task that raises is retried
  ``RETRIES`` times (a shared file system's hiccup).  Tasks are idempotent
  (a range's files are written under a temporary name and renamed; a shard
  is only read), so a task run twice gives the same result.
- **Bounded.** At most ``WINDOW`` tasks a worker thread are submitted at a
  time, taken lazily from the jobs: A10_B13's ranges are never listed, and
  a pause drops the queue at once.  Tasks already running when the run
  stops finish on their workers and their results are dropped; the next run
  does them again (a late one writes the very files the next run writes).
- **Checked first.** Before any task, every worker must import this bbcore
  at this version and see the shard folder (a file written here is looked
  for there), else one line says which worker does not.
- **A lost scheduler** ends the run in one line (after ``CONNECT_SECONDS``
  of trying to reconnect); what was recorded is kept and the same command
  resumes.
- **Optional.** dask and distributed are the extra ``cluster``
  (``pip install '.[cluster]'``) and are imported only here, only when a
  cluster is asked for: a local run never imports them.

The address is ``--cluster`` or, when absent, ``$BBTUI_CLUSTER``.
"""

from __future__ import annotations

import logging
import os
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import bbcore
from bbcore.progress import ExploreError

Job = TypeVar("Job")
Result = TypeVar("Result")

CLUSTER_ENV = "BBTUI_CLUSTER"
CONNECT_SECONDS = 10
"""How long to try reaching the scheduler."""
WORKERS_SECONDS = 30
"""How long to wait for a first worker to join the scheduler."""
RETRIES = 2
"""Retries of a task that raised (a worker that died does not count: see above)."""
WINDOW = 2
"""Tasks submitted at a time, per worker thread of the cluster."""
POLL_SECONDS = 0.25
"""How often ``run`` looks at the stop event while tasks are under way."""


class ClusterError(ExploreError):
    """A cluster that cannot run the exploration: the message is one line for the user."""


def cluster_address(option: str | None) -> str | None:
    """The scheduler's address: the ``--cluster`` option, else ``$BBTUI_CLUSTER``, else None."""
    address = (option if option is not None else os.environ.get(CLUSTER_ENV, "")).strip()
    return address or None


def check_worker(marker: str) -> tuple[str, bool]:
    """On a worker: this bbcore's version, and whether the client's marker file is visible here."""
    return bbcore.__version__, os.path.exists(marker)


def _one_line(error: BaseException) -> str:
    """An exception as one line."""
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


class DaskRunner:
    """Runs a compact exploration's tasks on the Dask scheduler at ``address``.

    ``shard_root`` is the folder the shard files go to, which every worker
    must see.  Raises ClusterError (one line) when dask is not installed, the
    scheduler cannot be reached, no worker joins, or a worker cannot see the
    folder or import this bbcore.
    """

    def __init__(self, address: str, shard_root: Path | str) -> None:
        try:
            from distributed import Client
        except ImportError:
            raise ClusterError(
                "--cluster needs dask and distributed: pip install 'bbtui[cluster]' (or '.[cluster]')"
            ) from None
        self.address = address
        # The client's own log lines (a lost connection, its retries) would go to
        # stderr, under the progress line or into the TUI's screen: its failures
        # come back to the caller as ClusterError instead.
        for name in ["distributed", *logging.root.manager.loggerDict]:
            if name.split(".")[0] == "distributed":  # its loggers have levels of their own
                logging.getLogger(name).setLevel(logging.CRITICAL)
        try:
            self.client = Client(address, timeout=CONNECT_SECONDS, set_as_default=False)
        except (OSError, TimeoutError, ValueError, TypeError) as error:
            raise ClusterError(f"cannot reach the Dask scheduler at {address}: {_one_line(error)}") from None
        try:
            try:
                self.client.wait_for_workers(1, timeout=WORKERS_SECONDS)
            except TimeoutError:
                raise ClusterError(
                    f"no Dask worker joined the scheduler at {address} within {WORKERS_SECONDS} s: "
                    f"start some with 'dask worker {address}'"
                ) from None
            self._check_workers(Path(shard_root))
            self.workers = sum(self.client.nthreads().values())
        except BaseException:
            self.client.close()
            raise

    def _check_workers(self, shard_root: Path) -> None:
        """Every worker runs this bbcore and sees ``shard_root``, else ClusterError."""
        shard_root.mkdir(parents=True, exist_ok=True)
        marker = shard_root / f".bbcore-{uuid.uuid4().hex}"
        marker.write_text("bbcore: a marker the workers look for; delete at will\n")
        try:
            answers = self.client.run(check_worker, str(marker.resolve()), on_error="return")
        finally:
            marker.unlink(missing_ok=True)
        for worker, answer in sorted(answers.items()):
            if isinstance(answer, BaseException):
                raise ClusterError(
                    f"Dask worker {worker} cannot run bbcore's tasks (install this bbcore there): "
                    f"{_one_line(answer)}"
                )
            version, sees = answer
            if version != bbcore.__version__:
                raise ClusterError(
                    f"Dask worker {worker} runs bbcore {version}, this is {bbcore.__version__}: "
                    "install the same version on every worker"
                )
            if not sees:
                raise ClusterError(
                    f"Dask worker {worker} does not see {shard_root.resolve()}: give --shards a "
                    "folder that every worker shares (the same path on each machine)"
                )

    def run(
        self, stage: Callable[[Job], Result], jobs: Iterable[Job], stop: threading.Event
    ) -> Iterator[tuple[Job, Result]]:
        """Submit jobs as tasks, a window at a time; yield ``(job, result)`` as they finish.

        A task's exception is raised here (the tasks not started are
        cancelled first); a task whose workers kept dying raises
        ``distributed.KilledWorker``, reported as one line.
        """
        queue = iter(jobs)
        running: dict[Any, Job] = {}
        finished = threading.Event()
        window = max(1, WINDOW * self.workers)
        exhausted = False
        prefix = f"bbcore-{getattr(stage, '__name__', 'task')}-{uuid.uuid4().hex[:8]}"
        count = 0
        try:
            while True:
                while not exhausted and not stop.is_set() and len(running) < window:
                    job = next(queue, None)
                    if job is None:
                        exhausted = True
                        break
                    count += 1
                    try:
                        future = self.client.submit(
                            stage, job, key=f"{prefix}-{count}", pure=False, retries=RETRIES
                        )
                    except Exception:
                        if self.client.status != "running":
                            raise self._lost() from None
                        raise
                    future.add_done_callback(lambda _: finished.set())
                    running[future] = job
                if not running or (stop.is_set() and not any(f.done() for f in running)):
                    return
                finished.wait(POLL_SECONDS)
                finished.clear()
                for future in [f for f in running if f.done()]:
                    job = running.pop(future)
                    yield job, self._result(future)
        finally:
            if running and self.client.status == "running":
                self.client.cancel(list(running))

    def _result(self, future: Any) -> Any:
        """A finished task's result; its error as ClusterError when the cluster itself failed."""
        from distributed import KilledWorker
        from distributed.comm.core import CommClosedError
        from distributed.utils import CancelledError

        try:
            return future.result()
        except KilledWorker as error:
            raise ClusterError(
                f"a task was lost with its worker too many times: {_one_line(error)}"
            ) from None
        except (CancelledError, CommClosedError):  # asyncio's CancelledError is no Exception
            raise self._lost() from None

    def _lost(self) -> ClusterError:
        """The error of a scheduler gone mid-run."""
        return ClusterError(
            f"lost the Dask scheduler at {self.address}: what was recorded is kept, and the same "
            "command resumes once the scheduler is back"
        )

    def close(self) -> None:
        """Disconnect from the scheduler (the workers stay, for the next run)."""
        self.client.close()
