"""The entry of an exploration (``bbcore.explore``): its refusals, the store it picks, a full disk's line.

Written from the mutation run of ``bbcore/explore.py`` (``bench/mutation.py explore``):
the store a configuration is explored into (the one it was started with, else the
one asked for, else full up to ``COMPACT_ABOVE`` molecules: that size is shrunk here
so that its edge is crossed on a small configuration), and the one-line refusals.
"""

from __future__ import annotations

import threading

import pytest

from bbcore import explore as explore_module
from bbcore.config import Config
from bbcore.explore import default_store, explore, full_disk_line
from bbcore.progress import ALREADY_COMPLETE, COMPLETE, PAUSED, ExploreError, Progress
from bbcore.store import COMPACT, FULL, config_row, stored_count

A3_B4, A4_B5 = Config(3, 4), Config(4, 5)


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
