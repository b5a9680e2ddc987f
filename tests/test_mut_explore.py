"""The entry of an exploration (``bbcore.explore``): its refusals, the store it picks, a full disk's line.

Written from the mutation run of ``bbcore/explore.py`` (``bench/mutation.py explore``):
the store a configuration is explored into (the one it was started with, else the
one asked for, else full up to ``COMPACT_ABOVE`` molecules: that size is shrunk here
so that its edge is crossed on a small configuration), and the one-line refusals.
"""

from __future__ import annotations

import multiprocessing
import os
import threading

import pytest

from bbcore import explore as explore_module
from bbcore import feasibility, full
from bbcore.compact import run as compact_run
from bbcore.config import Config, parse_config
from bbcore.explore import default_store, explore, full_disk_line
from bbcore.progress import ALREADY_COMPLETE, COMPLETE, PAUSED, ExploreError, Progress
from bbcore.store import COMPACT, COPYING, FULL, Configuration, config_row, db, open_database, stored_count
from bbcore.words import plural

A3_B4, A4_B4, A4_B5 = Config(3, 4), Config(4, 4), Config(4, 5)


def test_what_cannot_be_explored_is_refused_in_one_line(tmp_path):
    path = tmp_path / "db.sqlite"
    a30_b13 = Config(30, 13)
    with pytest.raises(ExploreError) as refused:
        explore(a30_b13, path)
    assert str(refused.value) == f"A30_B13 has {a30_b13.nb_mol:,} molecules: too many to explore"
    with pytest.raises(ExploreError) as refused:
        explore(A3_B4, path, store="fast")
    assert str(refused.value) == "unknown store 'fast': choose one of full, compact"
    assert not path.exists()  # refused before the database is opened


def test_a_new_configuration_is_full_up_to_compact_above_molecules_and_compact_past_it(tmp_path, monkeypatch):
    assert (default_store(Config(4, 9)), default_store(Config(5, 9))) == (FULL, COMPACT)  # 1.7 M, 25.6 M
    # shrunk so that A3_B4 (560 molecules) is on either side of the edge
    monkeypatch.setattr(explore_module, "COMPACT_ABOVE", 560)
    assert explore(A3_B4, tmp_path / "full.sqlite", workers=1) == COMPLETE
    assert config_row(A3_B4).store == FULL
    monkeypatch.setattr(explore_module, "COMPACT_ABOVE", 559)
    assert explore(A3_B4, tmp_path / "compact.sqlite", workers=1) == COMPLETE
    assert config_row(A3_B4).store == COMPACT


def test_a_configuration_paused_before_any_row_takes_the_store_asked_for_next(tmp_path):
    path = tmp_path / "db.sqlite"
    stopped = threading.Event()
    stopped.set()
    assert explore(A3_B4, path, workers=1, stop=stopped) == PAUSED
    assert (config_row(A3_B4).store, stored_count(A3_B4)) == (FULL, 0)
    assert explore(A3_B4, path, workers=1, store=COMPACT) == COMPLETE
    row = config_row(A3_B4)
    assert (row.store, row.complete, row.shards) == (COMPACT, True, 1)
    # once complete, asking again (in either store) changes nothing
    assert explore(A3_B4, path, store=FULL) == ALREADY_COMPLETE
    assert config_row(A3_B4).store == COMPACT


def test_a_configuration_started_in_one_store_is_refused_the_other_and_resumes_in_its_own(tmp_path):
    path = tmp_path / "db.sqlite"
    stop = threading.Event()

    def stop_once_rows_are_stored(progress: Progress) -> None:
        if progress.done:
            stop.set()

    assert (
        explore(A4_B5, path, workers=1, range_size=200, stop=stop, progress=stop_once_rows_are_stored)
        == PAUSED
    )
    stored = stored_count(A4_B5)
    assert 0 < stored < A4_B5.nb_mol
    with pytest.raises(ExploreError) as refused:
        explore(A4_B5, path, store=COMPACT)
    assert str(refused.value) == (
        "A4_B5 was explored with --store full: reset it first to explore it with --store compact"
    )
    assert stored_count(A4_B5) == stored
    assert explore(A4_B5, path, workers=1, store=FULL) == COMPLETE  # the store it has: resumed
    assert explore(A4_B5, path, workers=1) == ALREADY_COMPLETE


def test_a_full_disk_line_names_what_the_rest_of_the_run_needs_in_its_store(tmp_path):
    path = tmp_path / "db.sqlite"
    open_database(path)  # the line reads what is stored: this database, not an earlier test's
    # not explored yet: the store it would get (full up to COMPACT_ABOVE: indexes; compact: grouping)
    full = full_disk_line(Config(4, 9), path, command="bbcore explore A4_B9")
    assert "A4_B9 needs about" in full and "its 1,663,740 molecules left and its indexes" in full
    assert "0 are stored and kept" in full and "run 'bbcore explore A4_B9' again to resume" in full
    compact = full_disk_line(Config(5, 9), path, resume="press s to resume")
    assert "its 25,621,596 molecules left and its grouping" in compact and compact.endswith(
        "press s to resume"
    )
    # explored compact although small: its own store's needs, and all its molecules kept
    assert explore(A3_B4, path, workers=1, store=COMPACT) == COMPLETE
    line = full_disk_line(A3_B4, path, command="bbcore explore A3_B4")
    assert "for its grouping and the database's rows" in line and "All 560 molecules are stored" in line
    shards = full_disk_line(A3_B4, path, command="bbcore explore A3_B4", folder=tmp_path)
    assert shards.startswith(f"the disk is full at {tmp_path} (") and "shard files" in shards


def test_a_rectangle_a_range_and_a_square_past_13_are_refused_before_anything_is_written(tmp_path):
    path = tmp_path / "db.sqlite"
    for name, words in (
        ("A3_B5x4", "A3_B5x4 is a 5 x 4 rectangle: it can be decoded, shown and played, not explored"),
        ("A3-4_B5", "A3-4_B5 is a range of atom counts: it can be decoded and played, not explored"),
        ("A2_B14", "A2_B14: only squares up to 13 x 13 are explored"),
    ):
        with pytest.raises(ExploreError) as refused:
            explore(parse_config(name), path)
        assert str(refused.value).startswith(words)
    assert not path.exists()


def paused_with_rows(config: Config, path, range_size: int = 200, **options) -> int:
    """Explore ``config`` until some rows are stored, then pause; how many are stored."""
    stop = threading.Event()

    def stop_once_rows_are_stored(progress: Progress) -> None:
        if progress.done:
            stop.set()

    assert (
        explore(
            config,
            path,
            workers=1,
            range_size=range_size,
            stop=stop,
            progress=stop_once_rows_are_stored,
            **options,
        )
        == PAUSED
    )
    return stored_count(config)


def test_a_run_that_cannot_finish_is_refused_with_its_figures_unless_forced(tmp_path, monkeypatch):
    """``feasibility.MAX_SECONDS`` shrunk to a nanosecond: every run is over it."""
    path = tmp_path / "db.sqlite"
    stored = paused_with_rows(A4_B5, path)
    monkeypatch.setattr(feasibility, "MAX_SECONDS", 1e-9)
    cores = os.cpu_count()
    for options, molecules, workers in (
        ({}, A4_B5.nb_mol - stored, cores),
        ({"workers": 3}, A4_B5.nb_mol - stored, 3),
    ):
        with pytest.raises(ExploreError) as refused:
            explore(A4_B5, path, **options)
        assert str(refused.value).startswith(
            f"A4_B5 cannot finish here: {molecules:,} molecules would take about "
        )
        assert str(refused.value).endswith(
            f" with {plural(workers, 'worker')} (over the limit of 1 s); --force runs it anyway"
        )
    assert stored_count(A4_B5) == stored  # nothing written
    # the store asked for is the one judged: a compact store's disk is a fraction of a full one's
    lines = {}
    for store in (FULL, COMPACT):
        with pytest.raises(ExploreError) as refused:
            explore(A3_B4, path, store=store)
        lines[store] = str(refused.value)
    assert lines[FULL].startswith("A3_B4 cannot finish here: 560 molecules would take")
    assert lines[FULL] != lines[COMPACT] and "101 kB of disk" in lines[FULL]
    assert explore(A4_B5, path, workers=1, force=True) == COMPLETE


def test_a_copy_stopped_before_its_end_is_not_explored_over(tmp_path):
    path = tmp_path / "db.sqlite"
    stored = paused_with_rows(A4_B5, path)
    # what a 'bbcore copy' stopped midway leaves: its rows, and the row marked as copying
    Configuration.update(dh2=COPYING).where(Configuration.config == A4_B5.name).execute()
    with pytest.raises(ExploreError) as refused:
        explore(A4_B5, path)
    assert str(refused.value) == (
        f"a copy of A4_B5 into {path} is not finished: run the same 'bbcore copy' again to finish it, "
        "or 'bbcore reset A4_B5' to delete it"
    )
    assert stored_count(A4_B5) == stored


def test_a_configuration_paused_before_any_row_keeps_the_store_it_was_given(tmp_path):
    path = tmp_path / "db.sqlite"
    stopped = threading.Event()
    stopped.set()
    assert explore(A3_B4, path, workers=1, store=COMPACT, stop=stopped) == PAUSED
    assert explore(A4_B4, path, workers=1, store=COMPACT, stop=stopped) == PAUSED
    assert explore(A3_B4, path, workers=1) == COMPLETE  # not the default (full): the one it was given
    assert config_row(A3_B4).store == COMPACT
    # switching one configuration's store leaves the others' alone
    assert explore(A4_B4, path, workers=1, store=FULL, stop=stopped) == PAUSED
    assert (config_row(A4_B4).store, config_row(A4_B4).shards) == (FULL, None)
    assert (config_row(A3_B4).store, config_row(A3_B4).shards) == (COMPACT, 1)


def test_a_compact_run_takes_its_ranges_folder_progress_and_pause_from_the_caller(tmp_path, monkeypatch):
    path = tmp_path / "db.sqlite"
    monkeypatch.chdir(tmp_path)
    assert 0 < paused_with_rows(A4_B5, path, range_size=512, store=COMPACT) < A4_B5.nb_mol
    ranges = db.execute_sql("SELECT start, stop FROM ExploredRanges WHERE config = 'A4_B5'").fetchall()
    assert ranges and all(stop - start == 512 for start, stop in ranges)  # ranges of the size asked for
    assert (tmp_path / "db.sqlite.shards").is_dir()  # shard files next to the database
    assert not [p for p in tmp_path.iterdir() if not p.name.startswith("db.sqlite")]  # nothing elsewhere
    shards = tmp_path / "elsewhere"
    other = tmp_path / "other.sqlite"
    paused_with_rows(A4_B4, other, range_size=256, store=COMPACT, shard_root=shards)
    assert shards.is_dir() and not (tmp_path / "other.sqlite.shards").exists()


def worker_processes_seen(config: Config, path, workers: int, store: str = FULL) -> bool:
    """Whether worker processes were alive while ``config`` was explored with ``workers``."""
    seen = []

    def progress(_: Progress) -> None:
        seen.append(bool(multiprocessing.active_children()))

    assert explore(config, path, workers=workers, store=store, progress=progress) == COMPLETE
    return any(seen)


def test_the_workers_asked_for_trace(tmp_path, monkeypatch):
    """``IN_PROCESS_BELOW`` shrunk to 0: every configuration is large enough for worker processes."""
    monkeypatch.setattr(full, "IN_PROCESS_BELOW", 0)
    monkeypatch.setattr(compact_run, "IN_PROCESS_BELOW", 0)
    path = tmp_path / "db.sqlite"
    assert not worker_processes_seen(A3_B4, path, 1)
    assert not worker_processes_seen(A4_B4, tmp_path / "compact.sqlite", 1, COMPACT)
    assert worker_processes_seen(A4_B4, path, 2)
