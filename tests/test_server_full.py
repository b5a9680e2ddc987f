"""The full store on a real PostgreSQL server (tests/postgres.py): explored, read, reset, resumed.

Store parity: the same configuration explored into a server and into an
SQLite file gives the same output, command by command (the database's
name aside).  An exploration on the server killed with SIGKILL, or paused
with Ctrl-C, resumes with nothing lost or duplicated.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from itertools import zip_longest
from pathlib import Path

import psycopg
import pytest
from proctree import session_processes, wait_until
from stores import bbcore, figures, same, started

from bbcore import store
from bbcore.config import Config

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sys.platform != "linux", reason="the test server runs on Linux"),
]

PARITY = Config(3, 5)
GROUP = "@&a&@@&@&b@cac@b&@&@"
"""A spectrum of A3_B5 shared by two molecules (an ambiguous spectrum)."""
READERS = {
    "status": ("status",),
    "groups": ("groups", PARITY.name),
    "every group, by size": ("groups", PARITY.name, "--all", "--by-size"),
    "show": ("show", PARITY.name, "7"),
    "show a spectrum": ("show", PARITY.name, "--spectrum", GROUP),
    "report": ("report", PARITY.name),
    "decode a partial game": ("decode", PARITY.name, GROUP[:5] + "-" * 7 + "a" + "-" * 7),
    "decode a spectrum, json": ("decode", PARITY.name, GROUP, "--json"),
    "export the spectra": ("export", PARITY.name, "--table", "spectrums"),
    "export the molecules": ("export", PARITY.name),
    "spectrums again": ("spectrums", PARITY.name),
    "strategy": ("strategy", PARITY.name),
}


@pytest.fixture(scope="module")
def both(pg_server, tmp_path_factory):
    """A3_B5 explored (full store, by the CLI) into a server database and into an SQLite file."""
    home = tmp_path_factory.mktemp("home")
    dbname = pg_server.create_database()
    server, lite = pg_server.url(dbname), str(home / "parity.sqlite")
    explored = {db: bbcore(db, "explore", PARITY.name, "--store", "full", home=home) for db in (server, lite)}
    yield server, lite, home, explored
    pg_server.drop_database(dbname)


def test_a_full_exploration_on_the_server_reports_progress(both):
    server, _, _, explored = both
    result = explored[server]
    assert result.returncode == 0, result.stderr
    assert f"{PARITY.name} complete: 2,300 molecules, 8 ambiguous spectra" in result.stdout
    assert "exploring:" in result.stderr and "spectrums:" in result.stderr
    assert "postgres:***@" in result.stdout


@pytest.mark.parametrize("reader", READERS)
def test_every_reader_says_the_same_on_both_stores(both, reader):
    server, lite, home, _ = both
    on_server = bbcore(server, *READERS[reader], home=home)
    on_file = bbcore(lite, *READERS[reader], home=home)
    assert on_server.returncode == on_file.returncode == 0, (on_server.stderr, on_file.stderr)
    masked = str(store.location(server))
    server_lines = same(on_server.stdout.replace(masked, "DB")).splitlines()
    file_lines = same(on_file.stdout.replace(lite, "DB")).splitlines()
    # the first difference, not pytest's diff of two long outputs (minutes on a CSV)
    pairs = enumerate(zip_longest(server_lines, file_lines))
    differ = next((i for i, (one, other) in pairs if one != other), None)
    assert differ is None, (differ, server_lines[differ : differ + 1], file_lines[differ : differ + 1])


def test_the_librarys_figures_are_the_same_python_values_on_both_stores(both):
    """Sums come back as ints from the server as from SQLite (not as decimal.Decimal)."""
    server, lite, _, _ = both
    assert figures(server, PARITY) == figures(lite, PARITY)


def test_the_server_holds_every_molecule_once_with_its_indexes(both, pg_server):
    server, _, _, _ = both
    with psycopg.connect(server) as connection:
        count, distinct = connection.execute(
            'SELECT COUNT(*), COUNT(DISTINCT number) FROM "Molecules" WHERE config = %s', (PARITY.name,)
        ).fetchone()
        indexes = {
            name
            for (name,) in connection.execute(
                "SELECT indexname FROM pg_indexes WHERE tablename = 'Molecules'"
            )
        }
    assert count == distinct == PARITY.nb_mol
    assert {f"Molecules_{PARITY.name}_spectrum", f"Molecules_{PARITY.name}_canonical"} <= indexes


def test_reset_on_the_server_deletes_the_configuration(pg_url, tmp_path):
    config = Config(2, 4)
    assert bbcore(pg_url, "explore", config.name, home=tmp_path).returncode == 0
    result = bbcore(pg_url, "reset", config.name, "--yes", home=tmp_path)
    assert result.returncode == 0, result.stderr
    assert f"{config.name}: 120 molecules deleted" in result.stdout
    with psycopg.connect(pg_url) as connection:
        assert connection.execute('SELECT COUNT(*) FROM "Molecules"').fetchone() == (0,)
        assert connection.execute(
            "SELECT COUNT(*) FROM pg_indexes WHERE indexname LIKE 'Molecules_A%%'"
        ).fetchone() == (0,)
    assert "no configuration yet" in bbcore(pg_url, "status", home=tmp_path).stdout


# -- stopped, then resumed -------------------------------------------------------------

RESUMED = Config(4, 7)
"""211,876 molecules: worker processes, ranges of 2,048 numbers, a few seconds of writing."""


def _ranges(url: str) -> int:
    try:
        with psycopg.connect(url, connect_timeout=5) as connection:
            return connection.execute(
                'SELECT COUNT(*) FROM "ExploredRanges" WHERE config = %s', (RESUMED.name,)
            ).fetchone()[0]
    except psycopg.Error:
        return 0  # the tables are not there yet


def _start(url: str, home: Path) -> subprocess.Popen:
    return started(url, "explore", RESUMED.name, "--store", "full", "--workers", "2", home=home)


def _assert_whole(url: str) -> None:
    """Every molecule once, ranges that tile 1..nb_mol without overlap, the configuration complete."""
    with psycopg.connect(url) as connection:
        count, distinct = connection.execute(
            'SELECT COUNT(*), COUNT(DISTINCT number) FROM "Molecules" WHERE config = %s', (RESUMED.name,)
        ).fetchone()
        ranges = connection.execute(
            'SELECT start, stop, nb_mol FROM "ExploredRanges" WHERE config = %s ORDER BY start',
            (RESUMED.name,),
        ).fetchall()
        (complete,) = connection.execute(
            'SELECT complete FROM "Configurations" WHERE config = %s', (RESUMED.name,)
        ).fetchone()
    assert count == distinct == RESUMED.nb_mol
    assert sum(nb_mol for _, _, nb_mol in ranges) == RESUMED.nb_mol
    assert all(stop <= next_start for (_, stop, _), (next_start, _, _) in zip(ranges, ranges[1:]))
    assert complete


@pytest.mark.parametrize("how", ["kill -9", "Ctrl-C"])
def test_a_stopped_exploration_on_the_server_resumes_with_nothing_lost_or_duplicated(pg_url, tmp_path, how):
    explorer = _start(pg_url, tmp_path)
    try:
        wait_until(lambda: _ranges(pg_url) >= 3, 120, "a few ranges stored")
        if how == "kill -9":
            os.killpg(explorer.pid, signal.SIGKILL)
        else:
            explorer.send_signal(signal.SIGINT)
        explorer.wait(60)
        wait_until(lambda: not session_processes(explorer.pid), 30, "the explorer and its workers to end")
    finally:
        if explorer.poll() is None:
            os.killpg(explorer.pid, signal.SIGKILL)
            explorer.wait()
    if how == "Ctrl-C":
        assert "paused" in explorer.stdout.read() + explorer.stderr.read()
    stored = _ranges(pg_url)
    assert stored >= 3
    resumed = bbcore(pg_url, "explore", RESUMED.name, home=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert "complete" in resumed.stdout
    _assert_whole(pg_url)
