"""The compact writing stage (``compact/write.py``), pinned where the mutation run found it loose
(issue 33, section 5; sixth session, mutwrite).

tests/test_write_parts.py compares the parts with the driver writing every row itself; these
tests hold what that comparison cannot see: each size constant crossed at its edges (the
families a part holds, the parts a worker gets, the sizes summed a block at a time, the
families merged a batch at a time within a part), parts that come back out of order, and what
a part reports.  Their notes: ``bench/mutation_notes.md`` ("Sixth session: mutwrite").
"""

from __future__ import annotations

import itertools
import shutil
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import numpy as np
import pytest
from test_compact import start_compact
from test_write_parts import A4_B6, family_rows, grouped

from bbcore.compact import write
from bbcore.compact.run import run_stages
from bbcore.compact.shards import config_directory
from bbcore.config import Config
from bbcore.explore import explore
from bbcore.families import FamilyOrdinals
from bbcore.progress import COMPLETE
from bbcore.runner import InlineRunner
from bbcore.store import close_database, open_database


@pytest.fixture(scope="module")
def paused(tmp_path_factory) -> Path:
    """A4_B6 grouped into 4 shards and paused as its writing begins (read here, copied to write)."""
    return grouped(tmp_path_factory.mktemp("paused"), "paused")


def copy_of(paused: Path, folder: Path) -> Path:
    """A copy of the paused store, its database and its shard folder, in ``folder``."""
    path = folder / paused.name
    shutil.copy(paused, path)
    shutil.copytree(f"{paused}.shards", f"{path}.shards")
    return path


@pytest.fixture(scope="module")
def driver_rows(tmp_path_factory, paused) -> list[tuple]:
    """A4_B6's 100 families written by the driver itself (no runner), at the real sizes."""
    path = copy_of(paused, tmp_path_factory.mktemp("driver"))
    open_database(path)
    directory = config_directory(path, A4_B6)
    assert write.write_result(directory, A4_B6, threading.Event(), lambda step: None, None)
    close_database()
    return family_rows(path, A4_B6)


def result_columns(directory: Path) -> list[write.Column]:
    """Each grouped shard's ``families.npy`` (its canonical numbers), by shard."""
    return [write.Column(f / "families.npy") for f in sorted((directory / "results").iterdir())]


def shard_sizes(directory: Path) -> list[np.ndarray]:
    """Each grouped shard's family sizes, by shard."""
    return [np.load(f / "family_sizes.npy") for f in sorted((directory / "results").iterdir())]


# -- the sizes of the parts -----------------------------------------------------------------------


def test_a_part_holds_parts_per_worker_shares_within_its_least_and_its_most(monkeypatch):
    """``part_size`` at each edge of its three constants, shrunk: the share of
    ``PARTS_PER_WORKER`` parts a worker (rounded up), raised to ``PART_AT_LEAST``, cut to
    ``PART_FAMILIES``, and one family at least."""
    monkeypatch.setattr(write, "PARTS_PER_WORKER", 3)
    monkeypatch.setattr(write, "PART_AT_LEAST", 1)
    monkeypatch.setattr(write, "PART_FAMILIES", 1000)
    assert [write.part_size(n, 2) for n in (6, 7, 12, 13)] == [1, 2, 2, 3]  # ceil(n / 6)
    assert write.part_size(13, 1) == 5 and write.part_size(13, 0) == 5  # no workers: one's share
    monkeypatch.setattr(write, "PART_AT_LEAST", 0)
    assert write.part_size(0, 2) == 1  # nothing to write: a part of one family all the same
    monkeypatch.setattr(write, "PART_AT_LEAST", 5)
    assert [write.part_size(n, 2) for n in (1, 30, 31)] == [5, 5, 6]  # the least binds up to 30
    monkeypatch.setattr(write, "PART_FAMILIES", 6)
    assert [write.part_size(n, 2) for n in (36, 37, 10_000)] == [6, 6, 6]  # the most binds past 36
    monkeypatch.setattr(write, "PART_FAMILIES", 5)
    assert write.part_size(100, 2) == 5  # the most wins over the least


@pytest.mark.parametrize("per_worker, workers", [(1, 1), (1, 3), (2, 2), (25, 1), (100, 1)])
def test_the_plan_cuts_what_is_left_into_parts_per_worker_parts_a_worker(
    paused, monkeypatch, per_worker, workers
):
    """``PARTS_PER_WORKER`` shrunk to a few: the plan of a writing begun or resumed holds
    every family left once, in parts of at most ``part_size(left, workers)`` families (the
    merge's chunks: a part may hold fewer, and holds up to a family a shard when the size is
    below the shards), as many parts as that asks at least."""
    monkeypatch.setattr(write, "PARTS_PER_WORKER", per_worker)
    monkeypatch.setattr(write, "PART_AT_LEAST", 1)
    open_database(paused)
    try:
        directory = config_directory(paused, A4_B6)
        columns = result_columns(directory)
        ordinals = FamilyOrdinals.stored(A4_B6)
        for starts in ([0, 0, 0, 0], [7, 0, 5, 11]):
            left = sum(len(c) - s for c, s in zip(columns, starts))
            most = max(write.part_size(left, workers), len(columns))  # a family a shard at least
            jobs = list(write.plan_parts(directory, A4_B6, columns, starts, ordinals, workers))
            held = [sum(high - low for low, high in job.bounds) for job in jobs]
            assert sum(held) == left and all(0 < h <= most for h in held)
            assert len(jobs) >= -(-left // most)
            assert [low for low, _ in jobs[0].bounds] == starts
    finally:
        close_database()


# -- the sizes summed a block at a time ---------------------------------------------------------


@pytest.mark.parametrize("block", [1, 2, 3, 4, 7, 8, 9, 1 << 22])
def test_the_molecules_before_a_family_are_its_shards_sizes_summed_in_blocks(paused, monkeypatch, block):
    """``member_offsets`` with ``SUM_BLOCK`` shrunk: starts at 0, under a block, on a block's
    edge (a multiple), one past it, and at a shard's end, each the sum of the sizes before it."""
    directory = config_directory(paused, A4_B6)
    sizes = shard_sizes(directory)
    monkeypatch.setattr(write, "SUM_BLOCK", block)
    for starts in ([0] * 4, [1, 2, 3, 4], [8, 9, 7, 16], [len(s) for s in sizes]):
        wanted = [int(s[:start].sum()) for s, start in zip(sizes, starts)]
        assert write.member_offsets(directory, starts) == wanted


# -- the families merged a batch at a time within a part ------------------------------------------


@pytest.mark.parametrize("rows, part", [(1, 10), (3, 10), (8, 8), (9, 8), (16, 100)])
def test_a_part_merged_a_few_families_at_a_time_is_the_same(
    tmp_path, paused, driver_rows, monkeypatch, rows, part
):
    """``WRITE_ROWS`` shrunk inside the parts: each part merges its families a batch at a time
    (a batch of one, a last batch short, a batch as large as the part and one larger), and its
    molecules are read on from where the last batch stopped: the same rows as the driver
    alone at the real sizes."""
    monkeypatch.setattr(write, "WRITE_ROWS", rows)
    monkeypatch.setattr(write, "PART_FAMILIES", part)
    monkeypatch.setattr(write, "PART_AT_LEAST", part)
    path = copy_of(paused, tmp_path)
    open_database(path)
    directory = config_directory(path, A4_B6)
    assert write.write_result(directory, A4_B6, threading.Event(), lambda step: None, InlineRunner())
    close_database()
    assert family_rows(path, A4_B6) == driver_rows


# -- a part on its own ----------------------------------------------------------------------------


def test_a_part_says_how_many_families_it_wrote_and_the_last_ones_number(
    tmp_path, paused, driver_rows, monkeypatch
):
    """Each part's result is its families and the canonical number of its last one, and it reads
    its molecules from where the plan says they start, not by summing the sizes before it."""
    monkeypatch.setattr(write, "WRITE_ROWS", 4)  # several batches a part
    monkeypatch.setattr(write, "PART_FAMILIES", 30)
    monkeypatch.setattr(write, "PART_AT_LEAST", 30)
    path = copy_of(paused, tmp_path)
    open_database(path)
    try:
        directory = config_directory(path, A4_B6)
        (directory / write.PARTS).mkdir(exist_ok=True)
        jobs = list(
            write.plan_parts(
                directory, A4_B6, result_columns(directory), [0] * 4, FamilyOrdinals.stored(A4_B6), 1
            )
        )

        def refused(*args):
            raise AssertionError("a part summed the sizes before it")

        monkeypatch.setattr(write, "member_offsets", refused)
        results = [write.write_part(job) for job in jobs]
    finally:
        close_database()
    first = 0
    for result in results:
        assert result.families > 0
        assert result.last == driver_rows[first + result.families - 1][2]  # canonical_number
        first += result.families
    assert first == 100


# -- parts that come back out of order ------------------------------------------------------------


class LastFirstRunner:
    """A runner of ``runner.Runner``'s protocol that runs the tasks in this process, each group of
    ``workers`` jobs its last one first: the order a pool yields parts when the later ones end
    first (the protocol allows any order).  Once ``stop`` is set, no task starts."""

    workers = 3

    def run(self, stage: Callable, jobs: Iterable, stop: threading.Event) -> Iterator[tuple[object, object]]:
        """Yield ``(job, stage(job))``, each group of jobs last first, until ``stop`` is set."""
        jobs = iter(jobs)
        while group := list(itertools.islice(jobs, self.workers)):
            for job in (group[-1], *group[:-1]):
                if stop.is_set():
                    return
                yield job, stage(job)

    def close(self) -> None:
        """Nothing to release."""


def test_parts_that_end_out_of_order_are_copied_in_order(tmp_path, paused, driver_rows, monkeypatch):
    monkeypatch.setattr(write, "PART_FAMILIES", 7)
    monkeypatch.setattr(write, "PART_AT_LEAST", 7)
    path = copy_of(paused, tmp_path)
    open_database(path)
    steps = []
    directory = config_directory(path, A4_B6)
    assert write.write_result(directory, A4_B6, threading.Event(), steps.append, LastFirstRunner())
    close_database()
    assert family_rows(path, A4_B6) == driver_rows
    done = [step.done for step in steps]
    assert done == sorted(done) and done[0] == 0 and done[-1] == 100
    assert not (directory / write.PARTS).exists()


def test_a_pause_drops_the_parts_written_after_one_not_written(tmp_path, paused, driver_rows, monkeypatch):
    """Paused once the first part is copied, with the third part written and the second not: the
    third's file is deleted (it would be copied out of order), the first part's rows stay, and
    the run resumes to the rows of a run never paused."""
    monkeypatch.setattr(write, "PART_FAMILIES", 7)
    monkeypatch.setattr(write, "PART_AT_LEAST", 7)
    path = copy_of(paused, tmp_path)
    open_database(path)
    directory = config_directory(path, A4_B6)
    stop = threading.Event()

    def report(step):
        if step.done > 0:
            stop.set()

    assert not write.write_result(directory, A4_B6, stop, report, LastFirstRunner())
    close_database()
    written = family_rows(path, A4_B6)
    assert 0 < len(written) <= 7 and written == driver_rows[: len(written)]
    assert list((directory / write.PARTS).iterdir()) == []
    assert explore(A4_B6, path, store="compact", range_size=700) == COMPLETE
    close_database()
    assert family_rows(path, A4_B6) == driver_rows


class LosingRunner:
    """A runner that loses the last task without being stopped (a worker gone, its task not run
    again): it breaks the protocol, and the writing must not say it is done."""

    workers = 1

    def run(self, stage: Callable, jobs: Iterable, stop: threading.Event) -> Iterator[tuple[object, object]]:
        """Yield ``(job, stage(job))`` for every job but the last."""
        jobs = list(jobs)
        for job in jobs[:-1]:
            yield job, stage(job)

    def close(self) -> None:
        """Nothing to release."""


def family_indexes(path: Path) -> list[str]:
    """The names of the family indexes of the file."""
    with sqlite3.connect(path) as connection:
        return [
            row[0]
            for row in connection.execute(
                "SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'Families_%'"
            )
        ]


def test_a_part_lost_without_a_stop_leaves_the_writing_unfinished(tmp_path, paused, driver_rows, monkeypatch):
    """Every part copied but the last, and no stop asked: not done, no family index, the rows
    copied kept in order; the next run writes the last part."""
    monkeypatch.setattr(write, "PART_FAMILIES", 30)
    monkeypatch.setattr(write, "PART_AT_LEAST", 30)
    path = copy_of(paused, tmp_path)
    open_database(path)
    directory = config_directory(path, A4_B6)
    assert not write.write_result(directory, A4_B6, threading.Event(), lambda step: None, LosingRunner())
    close_database()
    written = family_rows(path, A4_B6)
    assert 0 < len(written) < 100 and written == driver_rows[: len(written)]
    assert family_indexes(path) == []
    assert explore(A4_B6, path, store="compact", range_size=700) == COMPLETE
    close_database()
    assert family_rows(path, A4_B6) == driver_rows and family_indexes(path) != []


# -- the driver writing every row itself (a server's way) -----------------------------------------


def test_the_driver_alone_reports_each_batch_it_writes(tmp_path, paused, driver_rows, monkeypatch):
    """Without a runner, each batch of ``WRITE_ROWS`` families written is a report of the writing
    phase, counting the families written of all 100."""
    monkeypatch.setattr(write, "WRITE_ROWS", 30)
    path = copy_of(paused, tmp_path)
    open_database(path)
    steps = []
    directory = config_directory(path, A4_B6)
    assert write.write_result(directory, A4_B6, threading.Event(), steps.append, None)
    close_database()
    assert family_rows(path, A4_B6) == driver_rows
    assert {(step.phase, step.total) for step in steps} == {("writing", 100)}
    done = [step.done for step in steps]
    assert done[0] == 0 and done[-1] == 100 and len(done) >= 4 and done == sorted(set(done))


def test_the_driver_alone_paused_at_its_last_batch_builds_no_index(
    tmp_path, paused, driver_rows, monkeypatch
):
    """A pause asked as the driver writes its last batch (the report of all 100 written): not
    done and no family index; resumed, the run completes with the same rows."""
    monkeypatch.setattr(write, "WRITE_ROWS", 30)
    path = copy_of(paused, tmp_path)
    open_database(path)
    stop = threading.Event()

    def report(step):
        if step.done == step.total:
            stop.set()

    directory = config_directory(path, A4_B6)
    assert not write.write_result(directory, A4_B6, stop, report, None)
    close_database()
    assert family_rows(path, A4_B6) == driver_rows and family_indexes(path) == []
    assert explore(A4_B6, path, store="compact", range_size=700) == COMPLETE
    close_database()
    assert family_rows(path, A4_B6) == driver_rows and family_indexes(path) != []


# -- compact/run.py's run_stages, called on its own -----------------------------------------------


def test_the_stages_alone_trace_in_default_ranges_beside_the_database_and_write_in_parts(
    tmp_path, monkeypatch
):
    """``run_stages`` without a range size, a shard folder or a runner (``explore`` gives the
    first two): the ranges are the configuration's default, the shard files go beside the
    database, and the families are written in parts there (A4_B4's 11, 4 a part); the same
    rows as ``explore``'s, and the folder gone at the end."""
    monkeypatch.setattr(write, "PART_FAMILIES", 4)
    monkeypatch.setattr(write, "PART_AT_LEAST", 4)
    config, path, clean = Config(4, 4), tmp_path / "alone.sqlite", tmp_path / "clean.sqlite"
    start_compact(path, config, 2)
    parts = Path(f"{path}.shards") / config.name / write.PARTS
    seen = []

    def report(step):
        if step.phase == "writing":
            seen.append(parts.is_dir())

    assert run_stages(config, path, report=report)
    close_database()
    assert seen.count(True) >= 2 and not Path(f"{path}.shards").exists()
    start_compact(clean, config, 2)
    assert explore(config, clean, store="compact") == COMPLETE
    close_database()
    assert family_rows(path, config) == family_rows(clean, config) != []
