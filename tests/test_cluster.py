"""The Dask cluster: a real ``dask scheduler`` and ``dask worker`` processes on 127.0.0.1.

Each cluster is started by the test in sessions of its own and always shut
down, checking that none of its processes is left.  The workers import this
checkout's bbcore (``PYTHONPATH``), as a real cluster's machines would
import the installed one.
"""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from bbcore import cluster as cluster_module
from bbcore.cluster import ClusterError, DaskRunner, cluster_address

ROOT = Path(__file__).resolve().parent.parent
ENV = dict(os.environ, PYTHONPATH=str(ROOT))
pytestmark = [pytest.mark.slow, pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")]


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


class LocalDask:
    """``dask scheduler`` and ``workers`` ``dask worker`` processes on 127.0.0.1, one thread each."""

    def __init__(self, folder: Path, workers: int = 2) -> None:
        self.folder = folder
        self.processes: list[subprocess.Popen] = []
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
        self.workers = [self.add_worker(f"w{i}") for i in range(workers)]
        self.wait_for_workers(workers)

    def _start(self, *args: str) -> subprocess.Popen:
        process = subprocess.Popen(
            [sys.executable, "-m", "dask", *args],
            stdout=subprocess.DEVNULL,
            stderr=open(self.folder / f"{args[0]}-{len(self.processes)}.log", "w"),
            env=ENV,
            start_new_session=True,
        )
        self.processes.append(process)
        return process

    def add_worker(self, name: str) -> subprocess.Popen:
        """Start one more worker."""
        return self._start(
            "worker", self.address, "--host", "127.0.0.1", "--nthreads", "1", "--no-nanny",
            "--no-dashboard", "--name", name, "--death-timeout", "60",
            "--local-directory", str(self.folder / name),
        )  # fmt: skip

    def wait_for_workers(self, count: int) -> None:
        """Until ``count`` workers have joined."""
        from distributed import Client

        with Client(self.address, timeout=30, set_as_default=False) as client:
            client.wait_for_workers(count, timeout=60)

    def close(self) -> None:
        """Stop every process (workers first), then check that none of them is left."""
        for process in reversed(self.processes):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in reversed(self.processes):
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(5)
        deadline = time.monotonic() + 10
        while any(session_alive(p.pid) for p in self.processes):
            assert time.monotonic() < deadline, "a Dask process outlived the test"
            time.sleep(0.1)


@pytest.fixture(scope="module")
def dask_cluster(tmp_path_factory):
    """A scheduler and two workers for the module's tests."""
    cluster = LocalDask(tmp_path_factory.mktemp("dask"))
    try:
        yield cluster
    finally:
        cluster.close()


# -- the runner, on plain tasks -----------------------------------------------------


def test_the_runner_returns_every_task_s_result(dask_cluster, tmp_path):
    runner = DaskRunner(dask_cluster.address, tmp_path)
    try:
        assert runner.workers == 2
        stop = threading.Event()
        results = dict(runner.run(math.factorial, iter(range(40)), stop))
        assert results == {n: math.factorial(n) for n in range(40)}
    finally:
        runner.close()


def test_a_task_s_error_stops_the_run(dask_cluster, tmp_path):
    runner = DaskRunner(dask_cluster.address, tmp_path)
    try:
        with pytest.raises(ValueError, match="math domain error"):
            list(runner.run(math.sqrt, iter([4, 9, -1, 16] + list(range(100))), threading.Event()))
    finally:
        runner.close()


def test_a_stop_drops_the_tasks_not_started(dask_cluster, tmp_path):
    runner = DaskRunner(dask_cluster.address, tmp_path)
    stop = threading.Event()
    seen = []
    try:
        for job, result in runner.run(math.factorial, (n for n in range(10**12)), stop):
            seen.append((job, result))
            stop.set()
    finally:
        runner.close()
    assert 1 <= len(seen) <= 4  # what was under way at most (two workers, a window of two each)


def test_an_unreachable_scheduler_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setattr(cluster_module, "CONNECT_SECONDS", 1)
    with pytest.raises(
        ClusterError, match=r"^cannot reach the Dask scheduler at tcp://127.0.0.1:9: "
    ) as error:
        DaskRunner("tcp://127.0.0.1:9", tmp_path)
    assert "\n" not in str(error.value)


def test_the_address_comes_from_the_option_else_the_environment(monkeypatch):
    monkeypatch.delenv("BBTUI_CLUSTER", raising=False)
    assert cluster_address(None) is None
    monkeypatch.setenv("BBTUI_CLUSTER", " tcp://10.0.0.1:8786 ")
    assert cluster_address(None) == "tcp://10.0.0.1:8786"
    assert cluster_address("tcp://127.0.0.1:1") == "tcp://127.0.0.1:1"


def test_a_local_run_never_imports_dask(tmp_path):
    check = (
        "import sys\n"
        "from bbcore.cli import main\n"
        f"status = main(['--db', {str(tmp_path / 'db.sqlite')!r}, 'explore', 'A3_B4'])\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed'))\n"
        "print(status, loaded)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", check], capture_output=True, text=True, env=ENV, timeout=120
    )
    assert result.stdout.splitlines()[-1] == "0 []", result.stderr
