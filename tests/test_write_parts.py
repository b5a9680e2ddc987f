"""The compact writing stage in parts (``compact.write``): worker files copied in order equal the
driver writing every row itself, whatever the parts' size, stopped or killed at any part.

The parts are shrunk to a few families (``PART_FAMILIES``, ``PART_AT_LEAST``: read in the driver,
so they hold with worker processes too) so that A4_B6's 100 families are many parts, the last one
short.
"""

from __future__ import annotations

import shutil
import sqlite3
import threading
from pathlib import Path

import numpy as np
import pytest
from test_compact import start_compact

from bbcore import families
from bbcore.compact import write
from bbcore.compact.run import run_stages
from bbcore.compact.shards import CompactError, config_directory
from bbcore.config import Config
from bbcore.explore import explore
from bbcore.progress import COMPLETE, PAUSED
from bbcore.runner import InlineRunner, LocalRunner
from bbcore.store import close_database, open_database

A4_B6 = Config(4, 6)
"""100 families."""


def family_rows(path: Path, config: Config) -> list[tuple]:
    """Every ``Families`` row of a configuration, by position."""
    with sqlite3.connect(path) as connection:
        return connection.execute(
            "SELECT * FROM Families WHERE config = ? ORDER BY position", (config.name,)
        ).fetchall()


def grouped(tmp_path: Path, name: str, config: Config = A4_B6) -> Path:
    """A compact run of ``config`` paused as its writing begins (4 shards)."""
    path = tmp_path / f"{name}.sqlite"
    start_compact(path, config, 4)
    stop = threading.Event()

    def progress(report):
        if report.phase == "writing":
            stop.set()

    assert explore(config, path, store="compact", range_size=700, progress=progress, stop=stop) == PAUSED
    close_database()
    return path


@pytest.fixture(scope="module")
def serial(tmp_path_factory) -> list[tuple]:
    """A4_B6's families written by the driver itself, a transaction every 8 families."""
    path = grouped(tmp_path_factory.mktemp("serial"), "serial")
    open_database(path)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(write, "WRITE_ROWS", 8)
        directory = config_directory(path, A4_B6)
        assert write.write_result(directory, A4_B6, threading.Event(), lambda step: None, None)
    close_database()
    return family_rows(path, A4_B6)


@pytest.mark.parametrize("size", [1, 7, 8, 99, 100, 101])
def test_parts_of_any_size_write_the_same_rows_as_the_driver_alone(tmp_path, serial, monkeypatch, size):
    monkeypatch.setattr(write, "PART_FAMILIES", size)
    monkeypatch.setattr(write, "PART_AT_LEAST", size)
    path = grouped(tmp_path, "parts")
    open_database(path)
    steps = []
    directory = config_directory(path, A4_B6)
    assert write.write_result(directory, A4_B6, threading.Event(), steps.append, InlineRunner())
    close_database()
    assert family_rows(path, A4_B6) == serial
    assert len(serial) == 100
    done = [s.done for s in steps]
    assert done[0] == 0 and done[-1] == 100 and all(s.total == 100 for s in steps)
    assert done == sorted(set(done))  # a step a part copied
    assert len(done) - 1 >= (2 if size < 100 else 1)
    assert not (directory / write.PARTS).exists()


def test_parts_written_by_worker_processes_equal_the_driver_alone(tmp_path, serial, monkeypatch):
    monkeypatch.setattr(write, "PART_FAMILIES", 9)
    monkeypatch.setattr(write, "PART_AT_LEAST", 9)
    path = grouped(tmp_path, "workers")
    open_database(path)
    runner = LocalRunner(2)
    try:
        directory = config_directory(path, A4_B6)
        assert write.write_result(directory, A4_B6, threading.Event(), lambda step: None, runner)
    finally:
        runner.close()
        close_database()
    assert family_rows(path, A4_B6) == serial


def test_plan_covers_every_family_once_with_the_ordinals_at_each_part_start(tmp_path, serial, monkeypatch):
    path = grouped(tmp_path, "plan")
    open_database(path)
    try:
        directory = config_directory(path, A4_B6)
        columns = [write.Column(f / "families.npy") for f in sorted((directory / "results").iterdir())]
        ordinals = families.FamilyOrdinals.stored(A4_B6)
        monkeypatch.setattr(write, "PART_AT_LEAST", 1)
        monkeypatch.setattr(write, "SUM_BLOCK", 3)  # the sizes before a resumed start, summed in blocks
        jobs = list(write.plan_parts(directory, A4_B6, columns, [0] * 4, ordinals, 2))
        resumed = list(write.plan_parts(directory, A4_B6, columns, [7, 0, 5, 11], ordinals, 2))
        sizes = [np.load(f / "family_sizes.npy") for f in sorted((directory / "results").iterdir())]
    finally:
        close_database()
    assert write.part_size(100, 2) == 13  # 4 parts a worker
    assert len(jobs) >= 6 and [job.index for job in jobs] == list(range(len(jobs)))
    assert [low for low, _ in jobs[0].bounds] == [0] * 4
    assert [high for _, high in jobs[-1].bounds] == [len(c) for c in columns]
    for before, after in zip(jobs, jobs[1:]):
        assert [high for _, high in before.bounds] == [low for low, _ in after.bounds]
    first = 0
    for job in jobs:  # each part starts where the driver alone would be: position, spectra, by size
        at = job.ordinals
        assert at.position == first
        assert at.spectra_before == sum(row[5] for row in serial[:first])
        for size in {row[4] for row in serial}:
            before = [row for row in serial[:first] if row[4] == size]
            assert at.seen_families.get(size, 0) == len(before)
            assert at.seen_spectra.get(size, 0) == sum(row[5] for row in before)
        first += sum(high - low for low, high in job.bounds)
    assert first == 100
    for job in jobs + resumed:  # and where its molecules start in each shard's members
        assert list(job.firsts) == [int(sizes[s][:low].sum()) for s, (low, _) in enumerate(job.bounds)]
    assert resumed[0].firsts[0] > 0 and resumed[0].firsts[1] == 0


def test_a_part_reads_only_its_own_families(tmp_path, serial, monkeypatch):
    """No shard's file is loaded whole (A8_B8's family sizes are 624 MB a part otherwise): the
    rows come from the slices that the parts hold."""
    monkeypatch.setattr(write, "PART_FAMILIES", 9)
    monkeypatch.setattr(write, "PART_AT_LEAST", 9)
    path = grouped(tmp_path, "slices")

    def refused(*args, **kwargs):
        raise AssertionError(f"a whole file loaded: {args[0]}")

    monkeypatch.setattr(np, "load", refused)
    open_database(path)
    directory = config_directory(path, A4_B6)
    assert write.write_result(directory, A4_B6, threading.Event(), lambda step: None, InlineRunner())
    close_database()
    assert family_rows(path, A4_B6) == serial


def test_a_pause_between_parts_resumes_to_the_same_rows(tmp_path, serial, monkeypatch):
    monkeypatch.setattr(write, "PART_FAMILIES", 8)
    monkeypatch.setattr(write, "PART_AT_LEAST", 8)
    path = grouped(tmp_path, "paused")
    open_database(path)
    directory = config_directory(path, A4_B6)
    stop = threading.Event()

    def report(step):
        if step.done >= 20:
            stop.set()

    assert not write.write_result(directory, A4_B6, stop, report, InlineRunner())
    close_database()
    written = family_rows(path, A4_B6)
    assert 20 <= len(written) < 100 and written == serial[: len(written)]
    assert [p.name for p in (directory / write.PARTS).iterdir()] == []  # nothing written and not copied
    assert explore(A4_B6, path, store="compact", range_size=700) == COMPLETE
    close_database()
    assert family_rows(path, A4_B6) == serial


def test_a_writing_begun_by_the_driver_alone_resumes_in_parts(tmp_path, serial, monkeypatch):
    """An older release wrote about 8 families a transaction and stopped after 24 or so: the parts
    go on from the next family, their ordinals counted from the rows stored."""
    monkeypatch.setattr(write, "WRITE_ROWS", 8)
    path = grouped(tmp_path, "older")
    open_database(path)
    directory = config_directory(path, A4_B6)
    stop = threading.Event()
    assert not write.write_result(directory, A4_B6, stop, lambda step: step.done >= 24 and stop.set(), None)
    begun = family_rows(path, A4_B6)
    assert 24 <= len(begun) < 40 and begun == serial[: len(begun)]
    monkeypatch.setattr(write, "PART_FAMILIES", 10)
    monkeypatch.setattr(write, "PART_AT_LEAST", 10)
    assert write.write_result(directory, A4_B6, threading.Event(), lambda step: None, InlineRunner())
    close_database()
    assert family_rows(path, A4_B6) == serial


def test_parts_left_by_a_stopped_run_are_written_again(tmp_path, serial, monkeypatch):
    monkeypatch.setattr(write, "PART_FAMILIES", 30)
    monkeypatch.setattr(write, "PART_AT_LEAST", 30)
    path = grouped(tmp_path, "stale")
    directory = config_directory(path, A4_B6)
    stale = directory / write.PARTS
    stale.mkdir(exist_ok=True)  # the paused run made it
    shutil.copy(path, write.part_path(directory, 0))  # not a part at all: it must not be copied
    (stale / ".p00001.sqlite.123.part").write_bytes(b"half")
    assert explore(A4_B6, path, store="compact", range_size=700) == COMPLETE
    close_database()
    assert family_rows(path, A4_B6) == serial
    assert not directory.exists()


def test_a_part_that_lost_rows_is_refused_in_one_line_and_nothing_is_copied(tmp_path, monkeypatch):
    monkeypatch.setattr(write, "PART_FAMILIES", 50)
    monkeypatch.setattr(write, "PART_AT_LEAST", 50)
    path = grouped(tmp_path, "lost")
    open_database(path)
    try:
        directory = config_directory(path, A4_B6)
        columns = [write.Column(f / "families.npy") for f in sorted((directory / "results").iterdir())]
        (schema,) = (
            sqlite3.connect(path).execute("SELECT sql FROM sqlite_master WHERE name = 'Families'").fetchone()
        )
        ordinals = families.FamilyOrdinals.stored(A4_B6)
        (directory / write.PARTS).mkdir(exist_ok=True)
        job = next(write.plan_parts(directory, A4_B6, columns, [0] * 4, ordinals, 1))
        result = write.write_part(job)
        with sqlite3.connect(write.part_path(directory, 0)) as part:
            part.execute("DELETE FROM Families WHERE position = 3")
        with pytest.raises(
            CompactError,
            match=rf"part 0 of the families holds {result.families - 1} rows, not {result.families};",
        ):
            write._copy_part(A4_B6, job, result)
    finally:
        close_database()
    assert family_rows(path, A4_B6) == []


def test_a_whole_run_with_workers_writes_in_parts_and_equals_one_inline(tmp_path, serial, monkeypatch):
    """``run_stages`` with worker processes: the grouping's pool is closed, a new one writes the parts."""
    monkeypatch.setattr(write, "PART_FAMILIES", 16)
    monkeypatch.setattr(write, "PART_AT_LEAST", 16)
    path = tmp_path / "whole.sqlite"
    start_compact(path, A4_B6, 4)
    open_database(path)
    runner = LocalRunner(2)
    try:
        assert run_stages(A4_B6, path, runner=runner, range_size=700)
    finally:
        runner.close()
        close_database()
    assert family_rows(path, A4_B6) == serial
