"""Exploration: complete runs, pause and resume, SIGKILL and resume, the lock."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from bbcore import full as full_module
from bbcore import lock
from bbcore import spectra as spectra_module
from bbcore.config import Config
from bbcore.explore import explore
from bbcore.progress import ALREADY_COMPLETE, COMPLETE, PAUSED, ExploreError
from bbcore.queries import group_page, molecule_record, molecules_with_spectrum
from bbcore.spectra import ambiguity_table
from bbcore.store import db, open_database, reset_config, stored_count

ROOT = Path(__file__).resolve().parent.parent
COLUMNS = "config, number, canonical_number, molecule, spectrum, transform, " + ", ".join(
    __import__("bbcore.rays", fromlist=["STAT_FIELDS"]).STAT_FIELDS
)


def table_rows(path: Path, config: str) -> dict[str, list[tuple]]:
    """Every row of a configuration in the three tables, timestamps left out."""
    with sqlite3.connect(path) as connection:
        return {
            "molecules": connection.execute(
                f"SELECT {COLUMNS} FROM Molecules WHERE config = ? ORDER BY number", (config,)
            ).fetchall(),
            "spectrums": connection.execute(
                "SELECT config, spectrum, nb_mol, transform, canonical_number FROM Spectrums "
                "WHERE config = ? ORDER BY spectrum",
                (config,),
            ).fetchall(),
            "configurations": connection.execute(
                "SELECT config, nb_mol, nb_atoms, width, complete FROM Configurations WHERE config = ?",
                (config,),
            ).fetchall(),
        }


@pytest.fixture(scope="module")
def reference_a4_b5(tmp_path_factory) -> dict[str, list[tuple]]:
    """An uninterrupted in-process exploration of A4_B5 (12,650 molecules)."""
    path = tmp_path_factory.mktemp("ref") / "ref.sqlite"
    assert explore(Config(4, 5), path) == COMPLETE
    return table_rows(path, "A4_B5")


def test_small_configurations_give_the_spec_reports(tmp_path):
    path = tmp_path / "db.sqlite"
    assert explore(Config(2, 4), path) == COMPLETE
    assert explore(Config(3, 4), path) == COMPLETE
    assert explore(Config(4, 4), path) == COMPLETE
    assert ambiguity_table(Config(2, 4)) == []
    assert [(x.size, x.families, x.groups, x.molecules) for x in ambiguity_table(Config(3, 4))] == [
        (2, 1, 4, 8)
    ]
    assert [(x.size, x.families, x.groups, x.molecules) for x in ambiguity_table(Config(4, 4))] == [
        (2, 9, 58, 116),
        (3, 2, 8, 24),
    ]
    for name, count in (("A2_B4", 120), ("A3_B4", 560), ("A4_B4", 1820)):
        rows = table_rows(path, name)["molecules"]
        assert [r[1] for r in rows] == list(range(1, count + 1))


def test_a_complete_configuration_is_not_explored_again(tmp_path):
    path = tmp_path / "db.sqlite"
    assert explore(Config(3, 4), path) == COMPLETE
    assert explore(Config(3, 4), path) == ALREADY_COMPLETE


def test_progress_is_reported_up_to_complete(tmp_path):
    seen = []
    explore(Config(4, 5), tmp_path / "db.sqlite", progress=seen.append, range_size=1000)
    assert seen[0].done == 0 and seen[0].phase == "exploring"
    phases = [p.phase for p in seen]
    assert phases == sorted(phases, key=["exploring", "spectrums", "complete"].index)
    for phase in ("exploring", "spectrums"):  # each phase counts its own molecules, from 0 up
        done = [p.done for p in seen if p.phase == phase]
        assert done == sorted(done) and done[-1] == 12650
    assert seen[-1].phase == "complete" and seen[-1].done == seen[-1].total == 12650


def test_pause_keeps_work_and_resume_equals_an_uninterrupted_run(tmp_path, reference_a4_b5):
    path = tmp_path / "db.sqlite"
    stop = threading.Event()
    seen = []

    def progress(p):
        seen.append(p)
        if p.done > 3000:
            stop.set()

    assert explore(Config(4, 5), path, progress=progress, stop=stop, range_size=500) == PAUSED
    stored = len(table_rows(path, "A4_B5")["molecules"])
    assert 3000 < stored < 12650
    assert seen[-1].phase == "paused" and seen[-1].done == stored
    assert explore(Config(4, 5), path, range_size=500) == COMPLETE
    assert table_rows(path, "A4_B5") == reference_a4_b5


def test_worker_processes_store_the_same_rows_as_one_process(tmp_path, reference_a4_b5, monkeypatch):
    # Workers stage their rows and take turns to copy them: the result is the same.
    monkeypatch.setattr(full_module, "IN_PROCESS_BELOW", 0)
    path = tmp_path / "db.sqlite"
    assert explore(Config(4, 5), path, workers=2, range_size=700) == COMPLETE
    assert table_rows(path, "A4_B5") == reference_a4_b5


CHILD = """
import sys
from bbcore.config import Config
from bbcore.explore import explore
explore(Config(4, 5), sys.argv[1], workers=int(sys.argv[2]), range_size=200,
        progress=lambda p: print(p.done, flush=True))
"""


@pytest.mark.parametrize("workers", [1, 2])
def test_sigkill_mid_run_then_resume_equals_an_uninterrupted_run(
    tmp_path, reference_a4_b5, workers, monkeypatch
):
    path = tmp_path / "db.sqlite"
    # Force the worker pool even on a small configuration.
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    child = CHILD.replace(
        "from bbcore.explore import explore",
        "import bbcore.full; bbcore.full.IN_PROCESS_BELOW = 0; from bbcore.explore import explore",
    )
    process = subprocess.Popen(
        [sys.executable, "-c", child, str(path), str(workers)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    for line in process.stdout:
        if int(line) > 2000:
            break
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    partial = table_rows(path, "A4_B5")["molecules"]
    assert 0 < len(partial) < 12650
    numbers = [r[1] for r in partial]
    assert len(numbers) == len(set(numbers))
    # Every stored group is whole: each canonical molecule's images are all there.
    canonicals = {r[2] for r in partial}
    assert sum(1 for r in reference_a4_b5["molecules"] if r[2] in canonicals) == len(partial)
    assert explore(Config(4, 5), path, range_size=200) == COMPLETE
    assert table_rows(path, "A4_B5") == reference_a4_b5


def test_a_second_explorer_is_refused_while_readers_keep_reading(tmp_path):
    path = tmp_path / "db.sqlite"
    explore(Config(3, 4), path)
    holder = threading.Event()
    release = threading.Event()

    def hold_lock():
        with lock.exploration_lock(path, Config(4, 5)):
            holder.set()
            release.wait(10)

    thread = threading.Thread(target=hold_lock)
    thread.start()
    holder.wait(5)
    try:
        with pytest.raises(ExploreError, match="being explored by another process"):
            explore(Config(4, 5), path)
        # Another process is refused too (fcntl lock), with one line on stderr.
        result = subprocess.run(
            [sys.executable, "-m", "bbcore", "--db", str(path), "explore", "A4_B5"],
            capture_output=True,
            text=True,
            env=dict(os.environ, PYTHONPATH=str(ROOT)),
        )
        assert result.returncode != 0
        assert result.stderr.count("\n") == 1 and "being explored" in result.stderr
        # Readers are not blocked.
        with sqlite3.connect(path) as connection:
            assert connection.execute("SELECT COUNT(*) FROM Molecules").fetchone() == (560,)
    finally:
        release.set()
        thread.join()
    assert explore(Config(4, 5), path) == COMPLETE


def test_too_large_a_configuration_is_refused(tmp_path):
    with pytest.raises(ExploreError, match="too many"):
        explore(Config(60, 13), tmp_path / "db.sqlite")


def test_store_reports_a_file_that_is_not_a_database(tmp_path):
    from bbcore.store import StoreError

    bogus = tmp_path / "notes.txt"
    bogus.write_text("hello\n")
    with pytest.raises(StoreError, match="not a bbtui database"):
        open_database(bogus)
    assert bogus.read_text() == "hello\n"


def test_a_pause_takes_effect_before_the_next_range(tmp_path):
    """A pause asked after a stored range stops the run there: nothing more is written."""
    path = tmp_path / "db.sqlite"
    stop = threading.Event()
    asked: list[int] = []

    def progress(p):
        if p.done > 1000 and not stop.is_set():
            asked.append(p.done)
            stop.set()

    assert explore(Config(4, 5), path, progress=progress, stop=stop, range_size=500) == PAUSED
    assert asked and stored_count(Config(4, 5)) == asked[0] < Config(4, 5).nb_mol


def index_names(path: Path) -> set[str]:
    """The names of the indexes in a database file (SQLite's own left out)."""
    with sqlite3.connect(path) as connection:
        return {
            name
            for (name,) in connection.execute(
                "SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_%'"
            )
        }


def test_spectrum_and_canonical_indexes_come_with_completion_and_go_with_reset(tmp_path):
    path = tmp_path / "db.sqlite"
    stop = threading.Event()
    explore(Config(4, 5), path, stop=stop, range_size=500, progress=lambda p: p.done > 3000 and stop.set())
    assert not {n for n in index_names(path) if n.startswith("Molecules_A4_B5")}
    # A configuration being explored is still looked up by spectrum, by a scan.
    some = molecules_with_spectrum(Config(4, 5), molecule_record(Config(4, 5), 1).spectrum)
    assert 1 in [m.number for m in some]
    assert explore(Config(4, 5), path, range_size=500) == COMPLETE
    assert explore(Config(3, 4), path) == COMPLETE
    assert {
        "Molecules_A4_B5_spectrum",
        "Molecules_A4_B5_canonical",
        "Molecules_A3_B4_spectrum",
        "Molecules_A3_B4_canonical",
    } <= index_names(path)
    reset_config(Config(4, 5))
    assert not {n for n in index_names(path) if n.startswith("Molecules_A4_B5")}
    assert {"Molecules_A3_B4_spectrum", "Molecules_A3_B4_canonical"} <= index_names(path)


def test_spectrum_look_ups_use_the_configuration_index(tmp_path):
    path = tmp_path / "db.sqlite"
    explore(Config(3, 4), path)
    config = Config(3, 4)
    sql = (
        'SELECT * FROM "Molecules" INDEXED BY "Molecules_A3_B4_spectrum" '
        "WHERE config = 'A3_B4' AND spectrum = ? ORDER BY number"
    )
    with sqlite3.connect(path) as connection:
        plan = " ".join(row[-1] for row in connection.execute(f"EXPLAIN QUERY PLAN {sql}", ("x",)))
    assert "USING INDEX Molecules_A3_B4_spectrum" in plan
    group = molecules_with_spectrum(config, "@&@&@&@&@&@&@&@&")
    assert group == []
    spectrum = group_page(config, 0)[0].spectrum
    assert [m.spectrum for m in molecules_with_spectrum(config, spectrum)] == [spectrum] * 2


def test_a_database_with_whole_table_indexes_is_upgraded(tmp_path):
    path = tmp_path / "db.sqlite"
    explore(Config(3, 4), path)
    db.close()
    with sqlite3.connect(path) as connection:  # as databases were made before
        connection.execute('DROP INDEX "Molecules_A3_B4_spectrum"')
        connection.execute('DROP INDEX "Molecules_A3_B4_canonical"')
        connection.execute('CREATE INDEX molecule_config_spectrum ON "Molecules" (config, spectrum)')
        connection.execute(
            'CREATE INDEX molecule_config_canonical_number ON "Molecules" (config, canonical_number)'
        )
    open_database(path)
    assert {"Molecules_A3_B4_spectrum", "Molecules_A3_B4_canonical"} <= index_names(path)
    assert not index_names(path) & {"molecule_config_spectrum", "molecule_config_canonical_number"}
    assert ambiguity_table(Config(3, 4))[0].groups == 4


def test_a_run_writes_through_the_database_already_open(tmp_path, monkeypatch):
    """explore() from another thread (the TUI's worker) does not re-point ``db``."""
    path = tmp_path / "db.sqlite"
    open_database(path)
    reader = db.connection()

    def refuse(*args, **kwargs):
        raise AssertionError("explore re-opened the database")

    monkeypatch.setattr(full_module, "open_database", refuse)
    monkeypatch.setattr("bbcore.store.open_database", refuse)
    outcome: list[str] = []
    worker = threading.Thread(target=lambda: outcome.append(explore(Config(3, 4), path)))
    worker.start()
    worker.join()
    assert outcome == [COMPLETE]
    assert db.connection() is reader  # this thread's connection was not closed under it
    assert reader.execute("SELECT COUNT(*) FROM Molecules").fetchone() == (Config(3, 4).nb_mol,)


def test_a_worker_opens_the_database_with_its_own_pragmas(tmp_path, monkeypatch):
    """The worker's pragmas are an argument of its opening; the shared PRAGMAS stay as they are."""
    from bbcore import store

    path = tmp_path / "db.sqlite"
    open_database(path)
    pragmas = dict(store.PRAGMAS)
    monkeypatch.setattr(full_module, "_worker_db", None)
    assert full_module._worker_range(str(path), Config(3, 4), 1, 50) > 0
    assert db.execute_sql("PRAGMA busy_timeout").fetchone() == (full_module.WORKER_BUSY_TIMEOUT_MS,)
    assert db.execute_sql("PRAGMA temp_store").fetchone() == (2,)  # memory
    assert store.PRAGMAS == pragmas
    open_database(path)
    assert db.execute_sql("PRAGMA busy_timeout").fetchone() == (store.BUSY_TIMEOUT_MS,)


GROUPING_CHILD = """
import sys, time
import bbcore.spectra as spectra
from bbcore.config import Config
from bbcore.explore import explore
spectra.OPS_PER_TICK, spectra.REPORT_EVERY = 500, 0.0
tick = spectra.GroupingMeter.tick
def slow_tick(meter):
    if meter.current.endswith(sys.argv[2]):
        print("grouping", meter.current, flush=True)
        time.sleep(120)  # killed here, inside the statement
    return tick(meter)
spectra.GroupingMeter.tick = slow_tick
explore(Config(4, 5), sys.argv[1], workers=1)
"""


@pytest.mark.parametrize("step", ["_spectrum", "_canonical", "query"])
def test_sigkill_while_grouping_then_resume_reports_grouping_and_equals_a_clean_run(
    tmp_path, reference_a4_b5, step, monkeypatch
):
    """Killed inside an index build or the groups' query; the resume groups with its own progress."""
    clean = tmp_path / "clean.sqlite"
    assert explore(Config(4, 5), clean) == COMPLETE
    path = tmp_path / "db.sqlite"
    process = subprocess.Popen(
        [sys.executable, "-c", GROUPING_CHILD, str(path), step],
        stdout=subprocess.PIPE,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        start_new_session=True,
    )
    line = process.stdout.readline()
    assert line.startswith("grouping") and line.strip().endswith(step), line
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    process.stdout.close()
    assert len(table_rows(path, "A4_B5")["molecules"]) == 12650  # every molecule stored, not complete
    assert table_rows(path, "A4_B5")["configurations"][0][-1] == 0

    monkeypatch.setattr(spectra_module, "OPS_PER_TICK", 500)
    monkeypatch.setattr(spectra_module, "REPORT_EVERY", 0.0)
    seen = []
    assert explore(Config(4, 5), path, progress=seen.append) == COMPLETE
    assert table_rows(path, "A4_B5") == reference_a4_b5
    assert index_names(path) == index_names(clean)
    grouping = [p for p in seen if p.phase == "spectrums"]
    assert "exploring" not in {p.phase for p in seen}  # nothing was left to explore
    assert grouping[-1].done == grouping[-1].total == 12650
    moving = [p for p in grouping if 0 < p.done < p.total]
    assert moving, [p.done for p in grouping]  # progress inside the phase, not only at its ends
    assert all(p.rate > 0 and p.eta is not None for p in moving)
    assert [p.done for p in grouping] == sorted(p.done for p in grouping)
