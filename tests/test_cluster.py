"""The Dask cluster: a real ``dask scheduler`` and ``dask worker`` processes on 127.0.0.1.

Each cluster is started by the test in sessions of its own and always shut
down, checking that none of its processes is left.  The workers import this
checkout's bbcore (``PYTHONPATH``), as a real cluster's machines would
import the installed one.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from dask_local import LocalDask

from bbcore import cluster as cluster_module
from bbcore.cluster import ClusterError, DaskRunner, cluster_address

ROOT = Path(__file__).resolve().parent.parent
ENV = dict(os.environ, PYTHONPATH=str(ROOT))
pytestmark = [pytest.mark.slow, pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")]


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
