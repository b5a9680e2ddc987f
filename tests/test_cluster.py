"""The Dask cluster: a real ``dask scheduler`` and ``dask worker`` processes on 127.0.0.1.

Each cluster is started by the test in sessions of its own and always shut
down, checking that none of its processes is left.  The workers import this
checkout's bbcore (``PYTHONPATH``), as a real cluster's machines would
import the installed one.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from dask_local import LocalDask
from expect import bbcore, one_line_error

from bbcore import cluster as cluster_module
from bbcore.cluster import ClusterError, DaskRunner, cluster_address
from bbcore.config import Config
from bbcore.explore import explore
from bbcore.progress import COMPLETE, PAUSED, ExploreError
from bbcore.store import Configuration, open_database

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


@pytest.mark.parametrize(
    "option, words",
    [
        (("--store", "full"), ("compact store only", "--store full")),
        (("--workers", "2"), ("leave out --workers",)),
    ],
)
def test_options_a_cluster_cannot_take_are_one_line(tmp_path, option, words):
    """Refused before connecting (nothing listens at the address) and before anything is written."""
    db = tmp_path / "bb.sqlite"
    result = bbcore("--db", str(db), "explore", "A4_B5", "--cluster", "tcp://127.0.0.1:9", *option)
    one_line_error(result.returncode, result.stderr, *words)
    open_database(db)
    assert not Configuration.select().exists()


def test_workers_must_run_this_bbcore(tmp_path):
    cluster = LocalDask(tmp_path / "dask", workers=0)
    try:
        # A worker importing another bbcore version (a copy with its version changed).
        other = tmp_path / "other"
        shutil.copytree(ROOT / "bbcore", other / "bbcore", ignore=shutil.ignore_patterns("__pycache__"))
        init = other / "bbcore" / "__init__.py"
        init.write_text(re.sub(r'__version__ = "[^"]*"', '__version__ = "0.0.0-other"', init.read_text()))
        cluster.add_worker("stale", env=dict(ENV, PYTHONPATH=str(other)))
        cluster.wait_for_workers(1)
        with pytest.raises(
            ClusterError, match=r"runs bbcore 0\.0\.0-other, this is .*: install the same version"
        ):
            DaskRunner(cluster.address, tmp_path / "shared")
    finally:
        cluster.close()


def private_view(folder: Path) -> tuple[str, ...] | None:
    """A command prefix that runs a process with a view of its own of ``folder`` (an empty
    tmpfs over it, in a mount namespace of its own), or None where this machine allows none.

    Root can make a mount namespace; any other user can where the kernel allows user
    namespaces (``--map-root-user``), as most Linux distributions and CI runners do.
    """
    unshare = shutil.which("unshare")
    if unshare is None:
        return None
    mount = ("sh", "-c", f'mount -t tmpfs none "{folder}" && exec "$@"', "sh")
    for namespaces in (("--mount",), ("--user", "--map-root-user", "--mount")):
        prefix = (unshare, *namespaces, "--propagation", "private", *mount)
        if subprocess.run([*prefix, "true"], capture_output=True, timeout=60).returncode == 0:
            return prefix
    return None


def test_workers_must_see_the_shard_folder(tmp_path):
    """A worker on a machine where the folder is another one: its own mount namespace, a
    private tmpfs over the shard folder.  Where no namespace can be made, the test skips on a
    developer's machine and fails in CI (``CI`` set), so that CI never quietly does less."""
    shared = tmp_path / "shared"
    shared.mkdir()
    prefix = private_view(shared)
    if prefix is None:
        reason = "needs unshare and a mount namespace (root, or user namespaces) to hide the folder"
        if os.environ.get("CI"):
            pytest.fail(f"CI must run every test: {reason}")
        pytest.skip(reason)
    cluster = LocalDask(tmp_path / "dask", workers=0)
    try:
        cluster.add_worker("elsewhere", prefix=prefix)
        cluster.wait_for_workers(1)
        with pytest.raises(ClusterError, match=f"does not see {shared}: give --shards a folder that every"):
            DaskRunner(cluster.address, shared)
    finally:
        cluster.close()


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


# -- compact explorations on the cluster ----------------------------------------------

CONFIG = Config(4, 7)
"""211,876 molecules."""
SMALL_RANGES = 8192
"""26 tracing tasks for A4_B7 (the default range holds it whole)."""
TABLES = ("Configurations", "Families", "Profiles", "GroupedShards", "ExploredRanges")


def compact_tables(path: Path, ranges: bool = True) -> dict[str, list[tuple]]:
    """Every row of CONFIG in the compact store's tables, timestamps left out, sorted."""
    with sqlite3.connect(path) as connection:
        found = {}
        for table in TABLES if ranges else TABLES[:-1]:
            columns = [
                r[1]
                for r in connection.execute(f'PRAGMA table_info("{table}")')
                if r[1] not in ("dh1", "dh2", "shard_root")
            ]
            rows = connection.execute(
                f'SELECT {", ".join(columns)} FROM "{table}" WHERE config = ?', (CONFIG.name,)
            ).fetchall()
            found[table] = sorted(rows)
        found["molecules traced"] = connection.execute(
            'SELECT SUM(nb_mol) FROM "ExploredRanges" WHERE config = ?', (CONFIG.name,)
        ).fetchall()
        return found


def traced(path: Path) -> int:
    """Molecules of CONFIG recorded as traced so far (0 before the tables exist)."""
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5) as connection:
            row = connection.execute(
                'SELECT SUM(nb_mol) FROM "ExploredRanges" WHERE config = ?', (CONFIG.name,)
            ).fetchone()
            return row[0] or 0
    except sqlite3.Error:
        return 0


@pytest.fixture(scope="module")
def local_run(tmp_path_factory) -> Path:
    """CONFIG explored compact by the local pool."""
    path = tmp_path_factory.mktemp("local") / "local.sqlite"
    assert explore(CONFIG, path, store="compact") == COMPLETE
    assert compact_tables(path)["Families"]
    return path


def bbcore_explore(path: Path, *args: str) -> subprocess.Popen:
    """``bbcore explore CONFIG`` in a fresh process."""
    return subprocess.Popen(
        [sys.executable, "-m", "bbcore", "--db", str(path), "explore", CONFIG.name, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
    )


def test_explore_through_the_cluster_equals_the_local_run(dask_cluster, local_run, tmp_path):
    path, shards = tmp_path / "db.sqlite", tmp_path / "shared"
    process = bbcore_explore(path, "--cluster", dask_cluster.address, "--shards", str(shards))
    out, err = process.communicate(timeout=300)
    assert process.returncode == 0, err
    assert out.startswith(f"{CONFIG.name} complete: 211,876 molecules, 1,372 ambiguous spectra")
    assert f"2 worker threads on the Dask scheduler at {dask_cluster.address}" in err
    assert compact_tables(path) == compact_tables(local_run)
    assert not (shards / CONFIG.name).exists()  # shards are deleted once grouped


def test_the_address_may_come_from_the_environment(dask_cluster, local_run, tmp_path):
    path = tmp_path / "db.sqlite"
    result = subprocess.run(
        [sys.executable, "-m", "bbcore", "--db", str(path), "explore", CONFIG.name],
        capture_output=True,
        text=True,
        env=dict(ENV, BBTUI_CLUSTER=dask_cluster.address),
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "worker threads on the Dask scheduler" in result.stderr
    assert compact_tables(path) == compact_tables(local_run)


def test_small_tasks_paused_and_resumed_on_the_cluster_equal_the_local_run(dask_cluster, local_run, tmp_path):
    path = tmp_path / "db.sqlite"
    stop = threading.Event()

    def pause_after_a_few(progress):
        if progress.phase == "tracing" and progress.done > 20_000:
            stop.set()

    runner = DaskRunner(dask_cluster.address, tmp_path / "shared")
    try:
        first = explore(
            CONFIG, path, store="compact", runner=runner, shard_root=tmp_path / "shared",
            range_size=SMALL_RANGES, stop=stop, progress=pause_after_a_few,
        )  # fmt: skip
        assert first == PAUSED
        traced = compact_tables(path)["molecules traced"][0][0]
        assert 20_000 < traced < CONFIG.nb_mol
        again = explore(CONFIG, path, runner=runner, shard_root=tmp_path / "shared", range_size=SMALL_RANGES)
        assert again == COMPLETE
    finally:
        runner.close()
    assert compact_tables(path, ranges=False) == compact_tables(local_run, ranges=False)
    assert compact_tables(path)["molecules traced"] == [(CONFIG.nb_mol,)]


def test_a_worker_killed_mid_run_changes_nothing(local_run, tmp_path):
    cluster = LocalDask(tmp_path / "dask")
    try:
        path, shards = tmp_path / "db.sqlite", tmp_path / "shared"
        process = bbcore_explore(path, "--cluster", cluster.address, "--shards", str(shards))
        from distributed import Client

        with Client(cluster.address, set_as_default=False) as client:
            deadline = time.monotonic() + 120
            while True:  # the first tracing task, on a worker still loading the engine
                busy = [address for address, keys in client.processing().items() if keys]
                if busy:
                    break
                assert process.poll() is None and time.monotonic() < deadline, "no task seen"
                time.sleep(0.01)
            name = client.scheduler_info()["workers"][busy[0]]["name"]
            cluster.kill_worker(name)
            assert process.poll() is None  # killed mid-run
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0, err
        assert "complete" in out
        assert compact_tables(path) == compact_tables(local_run)
    finally:
        cluster.close()


def test_a_compact_run_resumes_with_the_shard_folder_it_started_with(local_run, tmp_path):
    path, first, other = tmp_path / "db.sqlite", tmp_path / "first", tmp_path / "other"
    stop = threading.Event()

    def pause_after_a_few(progress):
        if progress.phase == "tracing" and progress.done > 20_000:
            stop.set()

    paused = explore(
        CONFIG, path, store="compact", shard_root=first, range_size=SMALL_RANGES, workers=1,
        stop=stop, progress=pause_after_a_few,
    )  # fmt: skip
    assert paused == PAUSED and any(first.rglob("*.keys"))
    with pytest.raises(
        ExploreError, match=f"started with its shard files in {first}: resume it with --shards"
    ):
        explore(CONFIG, path, shard_root=other, range_size=SMALL_RANGES)
    assert not other.exists()
    assert explore(CONFIG, path, range_size=SMALL_RANGES) == COMPLETE  # where it started
    assert compact_tables(path, ranges=False) == compact_tables(local_run, ranges=False)
    assert not (first / CONFIG.name).exists()


def test_reset_deletes_the_shard_files_where_they_are(tmp_path):
    path, shards = tmp_path / "db.sqlite", tmp_path / "shared"
    stop = threading.Event()
    explore(
        CONFIG, path, store="compact", shard_root=shards, range_size=SMALL_RANGES, workers=1, stop=stop,
        progress=lambda p: p.done > 20_000 and stop.set(),
    )  # fmt: skip
    assert any((shards / CONFIG.name).rglob("*.keys"))
    result = subprocess.run(
        [sys.executable, "-m", "bbcore", "--db", str(path), "reset", CONFIG.name, "--yes"],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert not (shards / CONFIG.name).exists()


def test_a_lost_scheduler_is_one_line_and_the_run_resumes_on_another(local_run, tmp_path, monkeypatch):
    monkeypatch.setattr(cluster_module, "CONNECT_SECONDS", 2)
    path, shards = tmp_path / "db.sqlite", tmp_path / "shared"
    cluster = LocalDask(tmp_path / "dask")
    outcome = {}

    def run() -> None:
        runner = DaskRunner(cluster.address, shards)
        try:
            outcome["status"] = explore(
                CONFIG, path, store="compact", runner=runner, shard_root=shards, range_size=SMALL_RANGES
            )
        except ExploreError as error:
            outcome["error"] = str(error)
        finally:
            runner.close()

    thread = threading.Thread(target=run)
    try:
        thread.start()
        deadline = time.monotonic() + 120
        while not traced(path):
            assert thread.is_alive() and time.monotonic() < deadline, outcome
            time.sleep(0.02)
        os.killpg(cluster.scheduler.pid, signal.SIGKILL)
        thread.join(60)
        assert not thread.is_alive()
    finally:
        cluster.close()
    assert outcome["error"] == (
        f"lost the Dask scheduler at {cluster.address}: what was recorded is kept, and the same command "
        "resumes once the scheduler is back"
    )
    again = LocalDask(tmp_path / "again")
    # The first run's thread pointed bbcore's database here; this thread's own
    # connection may still be on the module's local run: reopen it here.
    open_database(path)
    try:
        runner = DaskRunner(again.address, shards)
        try:
            assert explore(CONFIG, path, runner=runner, range_size=SMALL_RANGES) == COMPLETE
        finally:
            runner.close()
    finally:
        again.close()
    assert compact_tables(path, ranges=False) == compact_tables(local_run, ranges=False)


# -- the TUI ---------------------------------------------------------------------------


async def test_the_tui_explores_on_the_cluster(dask_cluster, local_run, tmp_path, monkeypatch):
    from bbtui.app import BlackBoxApp

    monkeypatch.setenv("BBTUI_DB", str(tmp_path / "default.sqlite"))
    path = tmp_path / "bb.sqlite"
    app = BlackBoxApp(path, cluster=dask_cluster.address)
    async with app.run_test() as pilot:
        app.start_exploration(CONFIG)
        deadline = time.monotonic() + 300
        while app.exploring is not None or app.progress is None:
            assert time.monotonic() < deadline
            await pilot.pause(0.05)
        assert app.last_error is None and app.progress.phase == "complete"
    assert compact_tables(path) == compact_tables(local_run)


async def test_the_tui_says_when_the_cluster_cannot_be_reached(tmp_path, monkeypatch):
    from bbtui.app import BlackBoxApp

    monkeypatch.setattr(cluster_module, "CONNECT_SECONDS", 1)
    monkeypatch.setenv("BBTUI_DB", str(tmp_path / "default.sqlite"))
    app = BlackBoxApp(tmp_path / "bb.sqlite", cluster="tcp://127.0.0.1:9")
    async with app.run_test() as pilot:
        app.start_exploration(Config(3, 4))
        deadline = time.monotonic() + 60
        while app.exploring is not None:
            assert time.monotonic() < deadline
            await pilot.pause(0.05)
        assert app.last_error.startswith("cannot reach the Dask scheduler at tcp://127.0.0.1:9: ")
        assert "\n" not in app.last_error
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert not app.is_running


def test_without_dask_installed_cluster_is_one_line(tmp_path):
    # dask and distributed made unimportable, as on an install without the extra.
    check = (
        "import sys\n"
        "sys.modules['distributed'] = None\n"
        "sys.modules['dask'] = None\n"
        "from bbcore.cli import main\n"
        f"sys.exit(main(['--db', {str(tmp_path / 'db.sqlite')!r}, 'explore', 'A3_B4', "
        "'--cluster', 'tcp://127.0.0.1:9']))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", check], capture_output=True, text=True, env=ENV, timeout=120
    )
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == (
        "bbcore: error: --cluster needs dask and distributed: pip install 'bbtui[cluster]' (or '.[cluster]')"
    )
    assert "Traceback" not in result.stderr


def test_an_unreachable_scheduler_from_the_cli_is_one_line(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "bbcore", "--db", str(tmp_path / "db.sqlite"), "explore", "A3_B4"],
        capture_output=True,
        text=True,
        env=dict(ENV, BBTUI_CLUSTER="tcp://127.0.0.1:9"),
        timeout=120,
    )
    assert result.returncode == 2
    last = result.stderr.splitlines()[-1]
    assert last.startswith("bbcore: error: cannot reach the Dask scheduler at tcp://127.0.0.1:9: ")
    assert "Traceback" not in result.stderr
