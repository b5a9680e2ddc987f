"""A real Dask cluster on 127.0.0.1 for the tests and ``bench/cluster.py``.

``LocalDask`` starts ``dask scheduler`` and ``dask worker`` processes (one
thread each, no nanny) in sessions of their own, and ``close()`` stops them
and checks that none of their processes is left.  The workers import this
checkout's bbcore (``PYTHONPATH``), as a real cluster's machines would import
the installed one.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENV = dict(os.environ, PYTHONPATH=str(ROOT))
PR_SET_PDEATHSIG = 1


def session_alive(session: int) -> list[int]:
    """Live (not zombie) processes of a session."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2 :].split()
            if int(fields[3]) == session and fields[0] != "Z":
                found.append(int(entry.name))
    return found


def die_with_this_process() -> None:
    """In the child, before exec: the kernel kills it when the test process dies, even by SIGKILL.

    The fixture stops the cluster in any case; this covers a test run that is
    itself killed (``PR_SET_PDEATHSIG`` survives exec).
    """
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


class LocalDask:
    """``dask scheduler`` and ``workers`` ``dask worker`` processes on 127.0.0.1, one thread each."""

    def __init__(self, folder: Path, workers: int = 2) -> None:
        """Start the scheduler and the workers; return once they have all joined."""
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.processes: list[subprocess.Popen] = []
        self.logs = []
        scheduler_file = folder / "scheduler.json"
        self.scheduler = self._start(
            "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
            "--scheduler-file", str(scheduler_file),
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while not scheduler_file.exists() or not scheduler_file.read_text().strip():
            assert self.scheduler.poll() is None, "the scheduler did not start"
            assert time.monotonic() < deadline, "the scheduler did not write its address"
            time.sleep(0.1)
        time.sleep(0.1)  # the file is written whole, but give it a moment
        self.address = json.loads(scheduler_file.read_text())["address"]
        assert self.address.startswith("tcp://127.0.0.1:")
        self.workers = {f"w{i}": self.add_worker(f"w{i}") for i in range(workers)}
        if workers:
            self.wait_for_workers(workers)

    def _start(self, *args: str, env: dict | None = None, prefix: tuple[str, ...] = ()) -> subprocess.Popen:
        log = open(self.folder / f"{args[0]}-{len(self.processes)}.log", "w")
        self.logs.append(log)
        process = subprocess.Popen(
            [*prefix, sys.executable, "-m", "dask", *args],
            stdout=subprocess.DEVNULL,
            stderr=log,
            env=env or ENV,
            cwd=self.folder,  # python -m puts the folder first on sys.path: only PYTHONPATH decides
            start_new_session=True,
            preexec_fn=die_with_this_process,
        )
        self.processes.append(process)
        return process

    def add_worker(
        self, name: str, env: dict | None = None, prefix: tuple[str, ...] = ()
    ) -> subprocess.Popen:
        """Start one more worker (``env``: its environment; ``prefix``: a command that runs it)."""
        process = self._start(
            "worker", self.address, "--host", "127.0.0.1", "--nthreads", "1", "--no-nanny",
            "--no-dashboard", "--name", name, "--death-timeout", "60",
            "--local-directory", str(self.folder / name), env=env, prefix=prefix,
        )  # fmt: skip
        if hasattr(self, "workers"):
            self.workers[name] = process
        return process

    def kill_worker(self, name: str) -> None:
        """SIGKILL the worker called ``name``: a machine lost mid-run."""
        os.killpg(self.workers[name].pid, signal.SIGKILL)
        self.workers[name].wait(10)

    def wait_for_workers(self, count: int) -> None:
        """Until ``count`` workers have joined."""
        from distributed import Client

        with Client(self.address, timeout=30, set_as_default=False) as client:
            client.wait_for_workers(count, timeout=60)

    def close(self) -> None:
        """Stop the workers, then the scheduler, then check that none of their processes is left.

        Workers first: a worker whose scheduler went first tries to reach it
        again before it stops.
        """
        workers = [p for p in self.processes if p is not self.scheduler]
        for group in (workers, [self.scheduler]):
            for process in group:
                if process.poll() is None:
                    os.killpg(process.pid, signal.SIGTERM)
            for process in group:
                try:
                    process.wait(10)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait(5)
        for log in self.logs:
            log.close()
        deadline = time.monotonic() + 10
        while any(session_alive(p.pid) for p in self.processes):
            assert time.monotonic() < deadline, "a Dask process outlived the test"
            time.sleep(0.1)
