"""Explorations on a real server (tests/postgres.py) that are not alone: readers, another explorer,
a dropped connection, a full disk.

- **Readers during a run**: while ``bbcore explore`` writes into the server
  (a few seconds, full store and compact store), ``bbcore status``,
  ``groups`` and ``report`` and the library's ``config_state`` read it over
  and over: none fails (exit 0, or the documented "not completely explored"
  line), and each sees only committed data: the stored count never goes
  down nor past the configuration's molecules, and a configuration reads
  complete only once it is, with its final result.
- **Two explorers of different configurations** on the same server, at the
  same time (a full one and a compact one), both finish, each with the
  result an SQLite file gets.  (A second explorer of the *same*
  configuration is refused: ``test_server.py``.)
- **The connection dropped mid-run**: another connection ends the
  explorer's backends (``pg_terminate_backend``); the explorer says so in
  one line, exit 2, and the same command resumes to the result of a run
  that was never stopped.
- **The lock's connection lost alone**: only the backend holding the
  exploration lock (the advisory lock in ``pg_locks``) is ended; the server
  releases the lock while the run's other connections live on.  The run
  notices before its next transaction of rows and stops in one line, exit
  2, and the same command resumes to the same result.
- **The server's disk full**: the tables live in a tablespace on a small
  tmpfs mounted for the test; the server's own "No space left on device"
  (SQLSTATE 53100, disk_full) stops the run in one line, exit 2, and once
  the file system is grown the same command resumes to the same result.
  (Where no file system can be mounted, a trigger raises disk_full instead:
  ``FullDiskTrigger``.)

Every run is compared with the same exploration into an SQLite file (the
``reference`` fixture): the rows of every table (timestamps aside) and what
the readers print.
"""

from __future__ import annotations

import hashlib
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from functools import cache
from pathlib import Path

import psycopg
import pytest
from postgres import NOBODY
from proctree import session_processes, wait_until
from stores import bbcore, same, started

from bbcore import queries, server
from bbcore.config import Config
from bbcore.explore import explore
from bbcore.progress import COMPLETE
from bbcore.store import COMPACT, FULL, STORES, StoreError, close_database, open_database

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sys.platform != "linux", reason="the test server runs on Linux"),
]

RUNS = {FULL: Config(4, 7), COMPACT: Config(5, 7)}
"""A run of a few seconds in each store: A4_B7 full (211,876 molecules, 2 worker processes, ranges of
8,192 numbers), A5_B7 compact (1,906,884 molecules, 8 tracing tasks in worker processes)."""

TABLES = {
    FULL: {
        "Molecules": (
            "SELECT number, canonical_number, molecule, spectrum, transform, absorbed_number, "
            "reflected_number, out_number, out_tot_length, out_tot_turns "
            'FROM "Molecules" WHERE config = ? ORDER BY number'
        ),
        "Spectrums": 'SELECT * FROM "Spectrums" WHERE config = ? ORDER BY spectrum',
    },
    COMPACT: {
        "Families": 'SELECT * FROM "Families" WHERE config = ? ORDER BY position',
        "Profiles": 'SELECT * FROM "Profiles" WHERE config = ? ORDER BY 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12',
        "GroupedShards": (
            'SELECT shard, records, spectra, families, risk, sizes FROM "GroupedShards" '
            "WHERE config = ? ORDER BY 1"
        ),
    },
}
"""What each store keeps of a configuration, timestamps left out, in one order on both stores."""


def digest(db: str | Path, kind: str) -> dict[str, tuple[int, str]]:
    """Each table's rows of ``RUNS[kind]`` in ``db`` (file or server): (how many, a hash of them all)."""
    config = RUNS[kind]
    found = {}
    if server.is_url(str(db)):
        connection = psycopg.connect(str(db))
        placeholder = "%s"
    else:
        connection = sqlite3.connect(db)
        placeholder = "?"
    try:
        for table, query in TABLES[kind].items():
            rows = connection.execute(query.replace("?", placeholder), (config.name,)).fetchall()
            found[table] = (
                len(rows),
                hashlib.sha256(repr([tuple(row) for row in rows]).encode()).hexdigest(),
            )
    finally:
        connection.close()
    return found


def printed(db: str | Path, kind: str) -> dict[tuple[str, ...], str]:
    """What the readers print of ``RUNS[kind]``: its status line, report, groups in both orders.

    Each in a fresh ``bbcore`` process with the clean environment of ``stores.bbcore``, as the
    readers during a run are: in this process the report's width followed whatever terminal
    size the worker's earlier tests left (CI once compared 2 ray panels a row with 3)."""
    name = RUNS[kind].name
    found = {}
    with tempfile.TemporaryDirectory() as home:
        for args in (("report", name), ("groups", name), ("groups", name, "--by-size")):
            result = bbcore(db, *args, home=Path(home))
            assert result.returncode == 0, (args, result.stderr)
            found[args] = same(result.stdout)
        result = bbcore(db, "status", home=Path(home))
    assert result.returncode == 0, result.stderr
    # its line, words only: the columns' widths follow the other configurations of the database
    found[("status",)] = " ".join(
        next(x for x in result.stdout.splitlines() if x.startswith(f"{name} ")).split()
    )
    return found


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    """Both RUNS explored into an SQLite file, each in its store, never stopped."""
    path = tmp_path_factory.mktemp("reference") / "reference.sqlite"
    for kind, config in RUNS.items():
        assert explore(config, path, store=kind) == COMPLETE
    close_database()
    return path


@cache
def expected(reference: Path, kind: str) -> tuple[dict, dict]:
    """The reference file's rows and readers' output of ``RUNS[kind]`` (read once)."""
    return digest(reference, kind), printed(reference, kind)


def assert_same_result(url: str, reference: Path, kind: str) -> None:
    """The server holds what the file holds of ``RUNS[kind]``, and its readers print the same."""
    rows, output = expected(reference, kind)
    assert digest(url, kind) == rows
    assert printed(url, kind) == output


def explorer(url: str, kind: str, home: Path) -> subprocess.Popen:
    """``bbcore explore`` of ``RUNS[kind]`` in its store, started."""
    return started(url, "explore", RUNS[kind].name, "--store", kind, home=home)


def ranges(url: str, config: Config) -> int:
    """The ExploredRanges rows of ``config`` committed on the server (0 before the tables exist)."""
    try:
        with psycopg.connect(url, connect_timeout=5) as connection:
            query = 'SELECT COUNT(*) FROM "ExploredRanges" WHERE config = %s'
            return connection.execute(query, (config.name,)).fetchone()[0]
    except psycopg.Error:
        return 0


def ended(process: subprocess.Popen, seconds: float = 300) -> tuple[str, str]:
    """Wait for a started command and its workers to end; what it printed."""
    try:
        out, err = process.communicate(timeout=seconds)
        wait_until(lambda: not session_processes(process.pid), 30, "the explorer's workers to end")
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    return out, err


def assert_one_error_line(process: subprocess.Popen, err: str, *words: str) -> str:
    """Exit 2 and one error line on stderr (after the progress lines), naming ``words``, no traceback."""
    assert process.returncode == 2, (process.returncode, err)
    assert "Traceback" not in err, err
    errors = [line for line in err.splitlines() if line.startswith("bbcore: error:")]
    assert len(errors) == 1 and err.strip().splitlines()[-1] == errors[0], err
    for word in words:
        assert word in errors[0], errors[0]
    return errors[0]


# -- readers during a run ------------------------------------------------------------------


def library_reader(config: Config, final: tuple, stop: threading.Event, seen: list, failures: list) -> None:
    """In a thread, as fast as it goes: the library's ``config_state`` and, once that says complete, the
    last page of spectral groups by size (a compact store's is its last family written), compared with
    the final ones (``final``: the state and that page); ``seen`` gets each state, ``failures`` each
    difference or error."""
    last = (final[0].families - 1) // PAGE
    try:
        while not stop.is_set():
            state = queries.config_state(config)
            seen.append(state)
            if state.complete:
                page = queries.group_page(config, last, PAGE, order="size")
                if (state, page) != final:
                    failures.append(f"complete but not the final result: {state}, {len(page)} groups")
    except Exception as error:  # noqa: BLE001 - a reader's failure is the test's finding
        failures.append(repr(error))


PAGE = 20


@pytest.mark.parametrize("kind", STORES)
def test_readers_during_a_run_see_only_committed_data(pg_url, reference, tmp_path, kind):
    config = RUNS[kind]
    final = expected(reference, kind)[1]
    open_database(reference, write=False)
    state = queries.config_state(config)
    final_state = (state, queries.group_page(config, (state.families - 1) // PAGE, PAGE, order="size"))
    close_database()
    run = explorer(pg_url, kind, tmp_path)
    seen: list = []  # the states the library's reader saw, in order
    failures: list[str] = []
    stop = threading.Event()
    reader = None
    stored: list[int] = []  # the molecules status said were stored, in order
    outputs = {"complete": 0, "refused": 0, "under way": 0}
    commands = [("status",), ("groups", config.name), ("report", config.name)]
    try:
        turn = 0
        while run.poll() is None:
            if reader is None:
                try:  # the library's reader, once the first writer made the tables
                    open_database(pg_url, write=False)
                except StoreError as error:
                    assert "no bbtui tables yet" in str(error), error
                else:
                    reader = threading.Thread(
                        target=library_reader, args=(config, final_state, stop, seen, failures)
                    )
                    reader.start()
            args = commands[turn % len(commands)]
            turn += 1
            result = bbcore(pg_url, *args, home=tmp_path)
            assert "Traceback" not in result.stderr, result.stderr
            if args == ("status",):
                if "no bbtui tables yet" in result.stderr or "no configuration yet" in result.stdout:
                    continue  # before the first writer made the tables, or its row
                assert result.returncode == 0, result.stderr
                line = next((x for x in result.stdout.splitlines() if x.startswith(f"{config.name} ")), None)
                if line is None:
                    continue
                stored.append(int(line.split()[2].replace(",", "")))
                assert stored[-1] <= config.nb_mol
                if "complete" in line.split():
                    assert stored[-1] == config.nb_mol and " ".join(line.split()) == final[("status",)]
                else:
                    outputs["under way"] += stored[-1] > 0
            elif result.returncode == 0:  # a reader sees the result only once it is complete, all of it
                assert same(result.stdout) == final[args], args
                outputs["complete"] += 1
            else:  # one line: not explored yet, or not completely
                assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
                outputs["refused"] += "not completely explored" in result.stderr
    finally:
        stop.set()
        if reader is not None:
            reader.join(60)
        close_database()
        out, err = ended(run)
    assert run.returncode == 0, err
    assert not failures, failures[:3]
    done = [state.done for state in seen]
    assert done == sorted(done) and stored == sorted(stored), (
        "a reader saw fewer molecules than one before it"
    )
    assert max(done + stored) <= config.nb_mol
    assert any(0 < state.done and not state.complete for state in seen), "the library never saw the run"
    # The subprocess readers ran during the run (each of their answers was checked above); which
    # states they caught depends on the machine's load (a loaded machine starts a process in seconds,
    # and once caught none under way), so the mid-run state is required of the library's reader, which
    # reads as fast as it goes (above).
    assert turn >= 1 and sum(outputs.values()) + len(stored) >= 1, outputs
    assert all(state.done == config.nb_mol for state in seen if state.complete)
    assert_same_result(pg_url, reference, kind)


# -- two explorers of different configurations ---------------------------------------------------


def test_two_explorers_of_different_configurations_both_finish(pg_url, reference, tmp_path):
    runs = {kind: explorer(pg_url, kind, tmp_path) for kind in STORES}
    overlapped = False
    try:
        deadline = time.monotonic() + 300
        while all(run.poll() is None for run in runs.values()) and time.monotonic() < deadline:
            if all(ranges(pg_url, RUNS[kind]) > 0 for kind in STORES):
                overlapped = all(run.poll() is None for run in runs.values())
                if overlapped:
                    break
            time.sleep(0.05)
    finally:
        results = {kind: ended(run) for kind, run in runs.items()}
    assert overlapped, "the two runs never wrote at the same time"
    for kind, run in runs.items():
        assert run.returncode == 0, results[kind][1]
        assert f"{RUNS[kind].name} complete" in results[kind][0]
    for kind in STORES:
        assert_same_result(pg_url, reference, kind)


# -- the connection dropped mid-run ---------------------------------------------------------------

TERMINATE = (
    "SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity "
    "WHERE datname = %s AND application_name LIKE 'bbtui%%' AND pid <> pg_backend_pid()"
)
"""End every backend of bbtui's on a database (the explorer's connections, its lock's, its workers')."""


def run_cut_mid_way(pg_server, pg_url, tmp_path, kind, cut) -> tuple[subprocess.Popen, str, str]:
    """An exploration of ``kind`` on the server, ``cut(admin connection)`` once it has stored a few
    ranges; the run, its output and its errors once it has ended."""
    run = explorer(pg_url, kind, tmp_path)
    try:
        wait_until(lambda: ranges(pg_url, RUNS[kind]) >= 2, 120, "a few ranges stored")
        with pg_server.admin() as connection:
            cut(connection)
    finally:
        out, err = ended(run)
    return run, out, err


def assert_it_resumes(pg_url, reference, tmp_path, kind) -> None:
    """Explore run again finishes the configuration, and the store equals the reference."""
    config = RUNS[kind]
    resumed = bbcore(pg_url, "explore", config.name, home=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{config.name} complete" in resumed.stdout
    assert_same_result(pg_url, reference, kind)


@pytest.mark.parametrize("kind", STORES)
def test_a_dropped_connection_stops_the_run_in_one_line_and_it_resumes(
    pg_server, pg_url, reference, tmp_path, kind
):
    def terminate_every_backend(connection) -> None:
        (ended_backends,) = connection.execute(TERMINATE, (server.ServerURL(pg_url).dbname,)).fetchone()
        assert ended_backends >= 2  # the explorer's and its lock's at least

    run, out, err = run_cut_mid_way(pg_server, pg_url, tmp_path, kind, terminate_every_backend)
    line = assert_one_error_line(run, err, "the connection to", "was lost", "run it again to resume")
    assert pg_server.password not in out + err and "postgres:***@" in line
    assert ranges(pg_url, RUNS[kind]) >= 2
    assert_it_resumes(pg_url, reference, tmp_path, kind)


LOCK_BACKEND = (
    "SELECT l.pid, a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
    "WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 AND a.datname = %s "
    "AND ((l.classid::bigint << 32) | l.objid::bigint) = %s"
)
"""The backend holding a configuration's exploration lock (an advisory lock) on a database."""


@pytest.mark.parametrize("kind", STORES)
def test_the_lock_connection_lost_alone_stops_the_run_in_one_line_and_it_resumes(
    pg_server, pg_url, reference, tmp_path, kind
):
    config = RUNS[kind]
    dbname = server.ServerURL(pg_url).dbname

    def terminate_the_lock_backend(connection) -> None:
        holders = connection.execute(LOCK_BACKEND, (dbname, server.lock_key(config))).fetchall()
        assert [name for _, name in holders] == ["bbtui lock"], holders
        # only the lock's connection ends: the server releases the lock, the run's other connections go on
        assert connection.execute("SELECT pg_terminate_backend(%s)", (holders[0][0],)).fetchone()[0]

    run, out, err = run_cut_mid_way(pg_server, pg_url, tmp_path, kind, terminate_the_lock_backend)
    line = assert_one_error_line(
        run, err, "the connection to", "was lost", f"lock of {config.name}", "run it again to resume"
    )
    assert pg_server.password not in out + err and "postgres:***@" in line
    assert f"{config.name} complete" not in out
    with pg_server.admin() as connection:
        assert not connection.execute(LOCK_BACKEND, (dbname, server.lock_key(config))).fetchall()
    assert_it_resumes(pg_url, reference, tmp_path, kind)


# -- the server's disk full -----------------------------------------------------------------------


class SmallDisk:
    """A tmpfs mounted in the server's folder, as the tablespace of a test database's tables.

    A real file system that fills: the server's writes then fail as they do
    on a full disk (``could not extend file ...: No space left on device``,
    SQLSTATE 53100).  ``fill`` shrinks it to what the tables hold now and a
    little more; ``free`` grows it, as freeing space does.
    """

    def __init__(self, pg_server, name: str) -> None:
        self.folder = pg_server.folder / name
        self.mounted = False

    def mount(self) -> bool:
        """Mount it (2 MB); False where this process may not mount (not root, a container's rule)."""
        if os.geteuid() != 0:
            return False
        self.folder.mkdir()
        options = f"size=2m,uid={NOBODY},gid={NOBODY},mode=0700"
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(self.folder)], capture_output=True, text=True
        )
        self.mounted = done.returncode == 0
        return self.mounted

    def fill(self, url: str) -> None:
        stats = os.statvfs(self.folder)
        used = (stats.f_blocks - stats.f_bfree) * stats.f_frsize
        self._resize(f"{used // 1024 + 256}k")  # the empty tables and 256 kB: far less than a run needs

    def free(self, url: str) -> None:
        self._resize("256m")

    def _resize(self, size: str) -> None:
        done = subprocess.run(
            ["mount", "-o", f"remount,size={size}", str(self.folder)], capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr

    def unmount(self) -> None:
        if self.mounted:
            subprocess.run(["umount", "--lazy", str(self.folder)], check=False)
            self.mounted = False
        if self.folder.exists():
            self.folder.rmdir()


class FullDiskTrigger:
    """Where no file system can be mounted: the server raises disk_full itself, from a trigger.

    A fallback, less real than ``SmallDisk`` (the server's own error code,
    ``RAISE ... USING ERRCODE = 'disk_full'``, not its storage failing): a
    trigger on ExploredRanges, which both stores write a row of at each
    range, refuses the third range while ``bbtui_test_disk.is_full`` is set.
    """

    TRIGGER = (
        "CREATE TABLE bbtui_test_disk (is_full boolean NOT NULL); INSERT INTO bbtui_test_disk VALUES (false);"
        "CREATE FUNCTION bbtui_test_full() RETURNS trigger AS $$ BEGIN "
        'IF (SELECT is_full FROM bbtui_test_disk) AND (SELECT COUNT(*) FROM "ExploredRanges") >= 2 THEN '
        "RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = 'disk_full'; "
        "END IF; RETURN NEW; END $$ LANGUAGE plpgsql;"
        'CREATE TRIGGER bbtui_test_full BEFORE INSERT ON "ExploredRanges" '
        "FOR EACH ROW EXECUTE FUNCTION bbtui_test_full();"
    )

    def install(self, url: str) -> None:
        with psycopg.connect(url, autocommit=True) as connection:
            connection.execute(self.TRIGGER)

    def fill(self, url: str) -> None:
        with psycopg.connect(url, autocommit=True) as connection:
            connection.execute("UPDATE bbtui_test_disk SET is_full = true")

    def free(self, url: str) -> None:
        with psycopg.connect(url, autocommit=True) as connection:
            connection.execute("UPDATE bbtui_test_disk SET is_full = false")


@pytest.fixture
def full_disk(pg_server):
    """A fresh database whose tables (made by its first writer) live on a small tmpfs: (URL, disk).

    The tmpfs needs root (the suite runs as root where the server runs as
    nobody); where it cannot be mounted, the disk is ``FullDiskTrigger``.
    The mount, the tablespace and the database are removed whatever the
    test did.
    """
    unique = f"{os.getpid()}_{time.monotonic_ns()}"
    disk, tablespace, dbname = SmallDisk(pg_server, f"small-{unique}"), f"small_{unique}", None
    try:
        mounted = disk.mount()
        if mounted:
            with pg_server.admin() as connection:
                connection.execute(f"CREATE TABLESPACE {tablespace} LOCATION '{disk.folder}'")
        dbname = pg_server.create_database()
        if mounted:
            with pg_server.admin() as connection:
                connection.execute(f"ALTER DATABASE {dbname} SET default_tablespace = {tablespace}")
        url = pg_server.url(dbname)
        open_database(url)  # the first writer: the tables, on the small disk
        close_database()
        if not mounted:
            disk = FullDiskTrigger()
            disk.install(url)
        yield url, disk
    finally:
        if dbname is not None:
            pg_server.drop_database(dbname)
        with pg_server.admin() as connection:
            connection.execute(f"DROP TABLESPACE IF EXISTS {tablespace}")
        if isinstance(disk, SmallDisk):
            disk.unmount()


@pytest.mark.parametrize("kind", STORES)
def test_the_servers_disk_full_stops_the_run_in_one_line_and_it_resumes(full_disk, reference, tmp_path, kind):
    url, disk = full_disk
    disk.fill(url)
    run = explorer(url, kind, tmp_path)
    out, err = ended(run)
    line = assert_one_error_line(run, err, "the server's disk is full", "free some space", "resume")
    assert "postgres:***@" in line
    disk.free(url)
    assert_it_resumes(url, reference, tmp_path, kind)
