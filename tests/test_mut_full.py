"""The full store's pipeline at its edges: an orphan's chunks, where the work runs, what it reports.

Written for the mutation run of ``bbcore/full.py`` (issue 33, section 5,
``bench/mutation_notes.md``), beside tests/test_explore.py (whole runs, pause,
SIGKILL and resume) and tests/test_shrunk.py (``CHUNK_ROWS`` shrunk).  Its
workers' own functions (``_worker_init``, ``_worker_range``, ``_stage``) run
in spawned processes, which mutmut does not follow: the notes list the bugs
planted there by hand and the tests that caught each.
"""

from __future__ import annotations

import multiprocessing
import sqlite3
import threading
from pathlib import Path

import pytest

from bbcore import full
from bbcore.config import Config
from bbcore.explore import explore
from bbcore.progress import COMPLETE, PAUSED
from bbcore.store import close_database, open_database, stored_count

A3_B5 = Config(3, 5)
"""2,300 molecules."""


def rows(path: Path) -> list[tuple]:
    """Every molecule row of A3_B5 (its timestamps left out), by number."""
    with sqlite3.connect(path) as connection:
        return connection.execute(
            "SELECT number, canonical_number, molecule, spectrum, transform FROM Molecules "
            "WHERE config = 'A3_B5' ORDER BY number"
        ).fetchall()


def intervals(path: Path) -> list[tuple[int, int, int]]:
    with sqlite3.connect(path) as connection:
        return connection.execute(
            "SELECT start, stop, nb_mol FROM ExploredRanges WHERE config = 'A3_B5' ORDER BY start"
        ).fetchall()


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> list[tuple]:
    path = tmp_path_factory.mktemp("reference") / "reference.sqlite"
    assert explore(A3_B5, path, workers=1) == COMPLETE
    close_database()
    return rows(path)


def test_an_orphan_s_range_over_stored_chunks_writes_only_what_is_missing(tmp_path, monkeypatch, reference):
    """A range computed again over intervals already stored (an orphaned worker of a killed run):
    each chunk that overlaps a stored interval is skipped whole, the others are written, and the
    run then completes with every molecule once."""
    monkeypatch.setattr(full, "CHUNK_ROWS", 50)
    path = tmp_path / "db.sqlite"
    stop = threading.Event()

    def progress(p) -> None:
        if p.done > 600:
            stop.set()

    assert explore(A3_B5, path, workers=1, stop=stop, progress=progress, range_size=400) == PAUSED
    open_database(path)
    before = intervals(path)
    stored = stored_count(A3_B5)
    assert 600 < stored < A3_B5.nb_mol
    written = full.store_range(A3_B5, 1, A3_B5.nb_mol + 1)
    after = intervals(path)
    assert stored_count(A3_B5) == stored + written
    assert set(before) <= set(after)  # the stored intervals untouched
    assert all(a[1] <= b[0] for a, b in zip(after, after[1:]))  # none overlaps another
    assert sum(n for _, _, n in after) == stored + written and 0 < written < A3_B5.nb_mol - stored + 1
    assert full.store_range(A3_B5, 1, A3_B5.nb_mol + 1) == 0  # everything overlaps now
    close_database()
    assert explore(A3_B5, path, workers=1) == COMPLETE
    assert rows(path) == reference


def test_a_halt_before_a_range_writes_nothing(tmp_path):
    path = tmp_path / "db.sqlite"
    stop = threading.Event()
    stop.set()
    assert explore(A3_B5, path, workers=1, stop=stop) == PAUSED
    open_database(path)
    halt = threading.Event()
    halt.set()
    assert full.store_range(A3_B5, 1, 500, halt) == 0
    assert stored_count(A3_B5) == 0 and intervals(path) == []
    assert full.store_range(A3_B5, 1, 500, threading.Event()) > 0
    close_database()


@pytest.mark.parametrize(("below", "pool"), [(A3_B5.nb_mol + 1, False), (A3_B5.nb_mol, True)])
def test_below_in_process_below_no_worker_starts(tmp_path, monkeypatch, below, pool, reference):
    """Below ``IN_PROCESS_BELOW`` molecules a run with two workers runs in this process (no
    child process); at it exactly, in a pool; both store the same rows."""
    monkeypatch.setattr(full, "IN_PROCESS_BELOW", below)
    children: list[int] = []

    def progress(_) -> None:
        children.append(len(multiprocessing.active_children()))

    path = tmp_path / "db.sqlite"
    assert explore(A3_B5, path, workers=2, progress=progress, range_size=500) == COMPLETE
    close_database()
    assert (max(children) > 0) == pool
    assert rows(path) == reference


def test_finish_counts_the_ambiguous_spectra(tmp_path):
    """``finish`` (all of ``bbcore spectrums``) returns how many spectra two molecules or more
    share: the Spectrums rows it writes; the configuration is then complete."""
    path = tmp_path / "db.sqlite"
    stop = threading.Event()

    def progress(p) -> None:  # paused once every molecule is stored, before the grouping
        if p.phase == "exploring" and p.done == A3_B5.nb_mol:
            stop.set()

    assert explore(A3_B5, path, workers=1, stop=stop, progress=progress) == PAUSED
    open_database(path)
    try:
        from bbcore.store import config_row

        assert stored_count(A3_B5) == A3_B5.nb_mol and not config_row(A3_B5).complete
        count = full.finish(A3_B5)
        with sqlite3.connect(path) as connection:
            query = "SELECT COUNT(*) FROM Spectrums WHERE config = 'A3_B5'"
            (spectra,) = connection.execute(query).fetchone()
            shared = connection.execute(
                "SELECT COUNT(*) FROM (SELECT spectrum FROM Molecules WHERE config = 'A3_B5' "
                "GROUP BY spectrum HAVING COUNT(*) > 1)"
            ).fetchone()[0]
        assert count == spectra == shared > 0
        assert config_row(A3_B5).complete
    finally:
        close_database()
