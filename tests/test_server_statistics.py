"""The grouping on a server whose statistics are stale, and a pause in the middle of a statement.

Issue 32, D1: a full-store run on a server that already held other
configurations sat for more than 10 minutes in the grouping query, planned
from statistics taken before the new configuration's rows existed (a nested
loop running the GROUP BY again for every molecule), and Ctrl-C or SIGTERM
printed "pausing" but went on waiting for it.  Here, against the real test
server (tests/postgres.py):

- a server holding another configuration, its statistics taken and
  autovacuum off (so that they stay as stale as they are before autovacuum
  comes round), explores a new one under a time bound that the file meets
  with a wide margin (the bound is the subprocess's timeout: no duration
  is asserted);
- the grouping query's plan for a configuration the statistics have never
  seen is no nested loop (EXPLAIN);
- a SIGTERM while the run waits in a statement ends the run paused at once,
  and the next run completes it with the same spectral groups;
- a file that has planner statistics (someone ran ANALYZE on it) gets the
  new configuration's, and a pause stops its grouping too.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading

import psycopg
import pytest
from proctree import wait_until
from stores import bbcore, started

from bbcore import full, sql, store
from bbcore.config import Config
from bbcore.explore import explore
from bbcore.progress import COMPLETE

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sys.platform != "linux", reason="the test server runs on Linux"),
]

BESIDE = Config(3, 6)
"""7,140 molecules: what the server holds, and has statistics of, before."""
NEW = Config(4, 6)
"""58,905 molecules, 1,636 of them in 764 spectral groups: a few seconds in a file."""
BOUND_SECONDS = 240
"""The new configuration's whole run, as a subprocess's timeout: the file takes a few seconds
(and the server, its statistics refreshed, as many); the stale plan ran for over 10 minutes."""


def _stale(url: str) -> None:
    """Statistics of what the server holds now, kept as they are: autovacuum off on Molecules."""
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute('ALTER TABLE "Molecules" SET (autovacuum_enabled = off)')
        connection.execute('ANALYZE "Molecules"')


def _analyzed(url: str):
    """When the statistics of Molecules were last taken by an ANALYZE statement."""
    with psycopg.connect(url) as connection:
        return connection.execute(
            "SELECT last_analyze FROM pg_stat_user_tables WHERE relname = 'Molecules'"
        ).fetchone()[0]


def _spectrums(url: str, config: Config) -> list[tuple]:
    with psycopg.connect(url) as connection:
        return connection.execute(
            'SELECT spectrum, nb_mol, transform, canonical_number FROM "Spectrums" '
            "WHERE config = %s ORDER BY spectrum",
            (config.name,),
        ).fetchall()


def _explore(db: str, home, config: Config) -> subprocess.CompletedProcess:
    """``bbcore explore CONFIG --store full`` in its own session, killed with its workers at the bound."""
    run = started(db, "explore", config.name, "--store", "full", home=home)
    try:
        out, err = run.communicate(timeout=BOUND_SECONDS)
    except subprocess.TimeoutExpired:
        os.killpg(run.pid, signal.SIGKILL)
        run.communicate()
        pytest.fail(f"{config.name} did not finish in {BOUND_SECONDS} s (the file takes a few)")
    return subprocess.CompletedProcess(run.args, run.returncode, out, err)


def test_a_new_configuration_beside_stale_statistics_finishes_as_in_a_file(pg_url, tmp_path):
    first = bbcore(pg_url, "explore", BESIDE.name, "--store", "full", home=tmp_path)
    assert first.returncode == 0, first.stderr
    _stale(pg_url)
    before = _analyzed(pg_url)
    run = _explore(pg_url, tmp_path, NEW)
    assert run.returncode == 0, run.stderr
    assert _analyzed(pg_url) > before  # the run refreshed them itself (autovacuum is off)
    lite = tmp_path / "same.sqlite"
    in_file = _explore(str(lite), tmp_path, NEW)
    assert in_file.returncode == 0, in_file.stderr
    with sqlite3.connect(lite) as connection:
        expected = connection.execute(
            "SELECT spectrum, nb_mol, transform, canonical_number FROM Spectrums "
            "WHERE config = ? ORDER BY spectrum",
            (NEW.name,),
        ).fetchall()
    assert len(expected) == 764
    assert _spectrums(pg_url, NEW) == expected


def test_the_grouping_query_is_no_nested_loop_for_rows_the_statistics_never_saw(pg_url, tmp_path):
    """Rows of a configuration absent from the statistics (estimated at 1 row): the plan of
    ``sql.ambiguous_molecules`` must still read them once, not once per molecule."""
    first = bbcore(pg_url, "explore", BESIDE.name, "--store", "full", home=tmp_path)
    assert first.returncode == 0, first.stderr
    _stale(pg_url)
    unseen = Config(9, 9)  # a name the statistics have never seen, holding A3_B6's rows
    with psycopg.connect(pg_url, autocommit=True) as connection:
        connection.execute(
            'INSERT INTO "Molecules" SELECT %s, number, canonical_number, molecule, spectrum, transform, '
            + ", ".join(store.MOLECULE_COLUMNS[6:])
            + ' FROM "Molecules" WHERE config = %s',
            (unseen.name, BESIDE.name),
        )
        for statement in sql.create_indexes(unseen):
            connection.execute(statement)
        previous = sql.dialect
        sql.use(sql.SERVER)
        try:
            query = sql.ambiguous_molecules(unseen)
        finally:
            sql.use(previous)
        plan = "\n".join(row[0] for row in connection.execute(f"EXPLAIN {query}"))
        assert "Nested Loop" not in plan, plan
        rows = connection.execute(query).fetchall()
    assert len(rows) == 24  # A3_B6's 12 ambiguous spectra, of 2 molecules each
    assert [row[0] for row in rows] == sorted(row[0] for row in rows)


def _waiting_on_a_lock(url: str) -> bool:
    with psycopg.connect(url, autocommit=True) as connection:
        return connection.execute(
            "SELECT EXISTS (SELECT FROM pg_stat_activity WHERE application_name = 'bbtui' "
            "AND datname = current_database() AND wait_event_type = 'Lock')"
        ).fetchone()[0]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "ctrl-c"])
def test_a_sigterm_during_a_server_statement_pauses_at_once_and_the_run_resumes(pg_url, tmp_path, signum):
    """The run of a configuration killed in its grouping resumes there; a table lock held by
    another session makes its first statement on Molecules wait as long as the lock is held
    (a long statement, for as long as the test needs), and the SIGTERM (or Ctrl-C's SIGINT, to
    the whole group as a terminal sends it) must end it."""
    done = bbcore(pg_url, "explore", NEW.name, "--store", "full", home=tmp_path)
    assert done.returncode == 0, done.stderr
    expected = _spectrums(pg_url, NEW)
    with psycopg.connect(pg_url, autocommit=True) as connection:  # as after a kill -9 in the grouping
        connection.execute('UPDATE "Configurations" SET complete = false WHERE config = %s', (NEW.name,))
        connection.execute('DELETE FROM "Spectrums" WHERE config = %s', (NEW.name,))
        for statement in sql.drop_indexes(NEW):
            connection.execute(statement)
    blocker = psycopg.connect(pg_url)
    try:
        blocker.execute('LOCK TABLE "Molecules" IN ACCESS EXCLUSIVE MODE')
        run = started(pg_url, "explore", NEW.name, home=tmp_path)
        try:
            wait_until(lambda: _waiting_on_a_lock(pg_url), 120, "the run waiting in a statement")
            os.killpg(run.pid, signum)
            out, err = run.communicate(timeout=60)
        finally:
            if run.poll() is None:
                os.killpg(run.pid, signal.SIGKILL)
                run.communicate()
    finally:
        blocker.rollback()
        blocker.close()
    assert run.returncode == 130, err
    assert f"{NEW.name} paused at {NEW.nb_mol:,}/{NEW.nb_mol:,}" in out, out + err
    assert "Traceback" not in err
    assert _spectrums(pg_url, NEW) == []
    resumed = bbcore(pg_url, "explore", NEW.name, home=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{NEW.name} complete" in resumed.stdout
    assert _spectrums(pg_url, NEW) == expected


# -- the file --------------------------------------------------------------------------


def test_a_file_with_statistics_gets_the_new_configurations(tmp_path):
    path = tmp_path / "analyzed.sqlite"
    assert explore(BESIDE, path, workers=1) == COMPLETE
    with sqlite3.connect(path) as connection:
        connection.execute("ANALYZE")
    assert explore(NEW, path, workers=1) == COMPLETE
    store.close_database()
    with sqlite3.connect(path) as connection:
        stats = dict(connection.execute("SELECT idx, stat FROM sqlite_stat1 WHERE tbl = 'Molecules'"))
    for index in (sql.spectrum_index(NEW), sql.canonical_index(NEW)):  # estimated (store.ANALYSIS_LIMIT)
        assert abs(int(stats[index].split()[0]) - NEW.nb_mol) < NEW.nb_mol // 4, stats


def test_a_file_without_statistics_is_left_without(tmp_path):
    """bbtui's queries on a file are planned without statistics (``bbcore.sql``): none are made."""
    path = tmp_path / "plain.sqlite"
    assert explore(BESIDE, path, workers=1) == COMPLETE
    store.close_database()
    with sqlite3.connect(path) as connection:
        tables = {name for (name,) in connection.execute("SELECT name FROM sqlite_master")}
    assert "sqlite_stat1" not in tables


def test_a_pause_stops_a_files_grouping_and_the_run_resumes(tmp_path):
    path = tmp_path / "paused.sqlite"
    assert explore(NEW, path, workers=1) == COMPLETE
    expected = list(store.Spectrum.select().where(store.Spectrum.config == NEW.name).tuples())
    store.db.execute_sql('UPDATE "Configurations" SET complete = 0')  # as after a kill -9 in the grouping
    store.db.execute_sql('DELETE FROM "Spectrums"')
    for statement in sql.drop_indexes(NEW):
        store.db.execute_sql(statement)
    stop = threading.Event()
    stop.set()  # before the grouping's first statement, which must not run to its end
    with pytest.raises(store.Interrupted):
        full.finish(NEW, stop=stop)
    assert not store.config_row(NEW).complete
    assert store.Spectrum.select().count() == 0
    assert not store.has_config_indexes(NEW)
    assert explore(NEW, path, workers=1) == COMPLETE
    assert list(store.Spectrum.select().where(store.Spectrum.config == NEW.name).tuples()) == expected
