"""The compact exploration's stages, each pinned where the mutation run found it loose (issue 33, section 5).

``tests/test_compact.py`` compares whole compact stores with full ones; these tests hold
the pieces that comparison cannot see: how ranges are cut, how profiles are summed (on
both of ``merge_profiles``' paths), which shard a record goes to, which files a resumed
run forgets.  Their notes: ``bench/mutation_notes.md`` (``compact/trace.py`` and after).
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import shutil
import subprocess
import threading
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from stores import figures

from bbcore import engine, runner
from bbcore.columns import Column, merged
from bbcore.compact import group as group_stage
from bbcore.compact import run as compact_run
from bbcore.compact import shards, trace
from bbcore.compact.group import read_shard
from bbcore.compact.shards import (
    TRACED,
    CompactError,
    config_directory,
    record_numbers,
    result_folder,
    shard_folder,
)
from bbcore.config import Config
from bbcore.explore import explore
from bbcore.progress import COMPLETE, PAUSED, DiskFull, ExploreError
from bbcore.store import (
    ExploredRange,
    GroupedShard,
    Profile,
    close_database,
    config_row,
    ensure_config,
    now,
    open_database,
    stored_count,
)

A4_B4 = Config(4, 4)
"""1,820 molecules, 228 canonical ones."""


# -- compact/trace.py -------------------------------------------------------------------------


def test_a_range_is_a_power_of_two_from_the_fewest_numbers_to_the_most():
    """Real configurations: A5_B8 keeps ranges of 2^18 (its docstring), A6_B8's 74,974,368
    molecules take 2^19 (2^19 x 2 x 128 is past them), A7_B8 reaches 2^22 and A8_B8 is held there."""
    assert trace.range_size(Config(5, 8)) == 1 << 18
    assert trace.range_size(Config(6, 8)) == 1 << 19
    assert trace.range_size(Config(7, 8)) == 1 << 22
    assert trace.range_size(Config(8, 8)) == 1 << 22
    assert trace.range_size(A4_B4) == trace.RANGE_SIZE  # a small configuration: the fewest


def test_a_range_doubles_exactly_while_the_configuration_keeps_enough_tasks(monkeypatch):
    """At its edges, shrunk: A4_B4's 1,820 molecules in at least 910 tasks take ranges of 2
    (2 x 2 x 910 is 1,820 exactly), in 911 ranges of 1; the most is reached, never passed."""
    monkeypatch.setattr(trace, "RANGE_SIZE", 1)
    monkeypatch.setattr(trace, "LARGEST_RANGE", 1 << 12)
    monkeypatch.setattr(trace, "RANGES_AT_LEAST", 910)
    assert trace.range_size(A4_B4) == 2
    monkeypatch.setattr(trace, "RANGES_AT_LEAST", 911)
    assert trace.range_size(A4_B4) == 1
    monkeypatch.setattr(trace, "RANGES_AT_LEAST", 1)
    assert trace.range_size(A4_B4) == 1024  # 1,024 <= 1,820 < 2,048
    monkeypatch.setattr(trace, "LARGEST_RANGE", 1024)
    assert trace.range_size(A4_B4) == 1024  # the most, exactly
    monkeypatch.setattr(trace, "LARGEST_RANGE", 512)
    assert trace.range_size(A4_B4) == 512  # held at the most


def summed(rows: np.ndarray) -> list[list[int]]:
    """Profile rows summed the plain way: by the 9 statistics, molecules added, lowest kept, sorted."""
    sums: dict[tuple, list[int]] = defaultdict(lambda: [0, None])
    for row in rows.tolist():
        entry = sums[tuple(row[:9])]
        entry[0] += row[9]
        entry[1] = row[10] if entry[1] is None else min(entry[1], row[10])
    return [[*stats, molecules, lowest] for stats, (molecules, lowest) in sorted(sums.items())]


@pytest.mark.parametrize("largest", [3, 40, 5_000])
def test_profiles_are_summed_by_their_statistics_on_either_path(largest):
    """``merge_profiles`` against the plain sum, split in parts anyhow: small statistics (packed
    in one int64) and large ones (5,000 rays of a class and lengths: past 2^63, sorted as
    rows); the rows come out in increasing statistics, each once."""
    generator = np.random.default_rng(largest)
    rows = np.empty((600, trace.PROFILE_WIDTH), dtype=np.int64)
    rows[:, :9] = generator.integers(0, 3, size=(600, 9))  # many rows share their statistics
    rows[:, :9] *= generator.integers(1, largest + 1, size=9)  # a column's values spread to ``largest``
    rows[:, 9] = generator.integers(1, 9, size=600)
    rows[:, 10] = generator.permutation(600) + 1
    expected = summed(rows)
    assert len(expected) < 600  # some merged
    for cuts in ([], [1], [17, 300, 301], [599]):
        parts = np.split(rows, cuts)
        merged = trace.merge_profiles(parts)
        assert merged.tolist() == expected and merged.dtype == np.int64  # counts, not floats
    assert trace.merge_profiles([trace.merge_profiles(np.split(rows, [250])), rows[:0]]).tolist() == expected


@pytest.mark.parametrize(("rays", "lengths"), [(3 << 19, 1), (1 << 21, 0)])
def test_profiles_past_the_packings_bound_by_one_statistic_alone_are_summed_as_rows(rays, lengths):
    """Classes of up to 1.5 million or 2^21 rays, lengths of 0 or 1, or none: rays^3 x ray^6 is
    past 2^63 (2^63 and a little, for the second: below 2^64), so the packing would wrap,
    although rays x ray^6 is far below it; summed as rows, in order."""
    generator = np.random.default_rng(21)
    rows = np.zeros((500, trace.PROFILE_WIDTH), dtype=np.int64)
    rows[:, :3] = generator.integers(0, 4, size=(500, 3)) * rays // 3
    rows[:, 3:9] = generator.integers(0, lengths + 1, size=(500, 6))
    rows[:, 9] = 1
    rows[:, 10] = np.arange(500) + 1
    packed = (int(rows[:, :3].max()) + 1) ** 3 * (int(rows[:, 3:9].max()) + 1) ** 6
    assert 2**63 <= packed and (lengths or packed < 2**64)
    assert trace.merge_profiles([rows]).tolist() == summed(rows)


def test_profiles_packed_past_a_floats_precision_stay_apart():
    """Packed in 2^54 (classes of up to 2^18 - 1 rays, no length), profiles one ray apart stay
    apart: the packing is integer (a float holds 53 bits, so they would round together)."""
    rows = np.zeros((8, trace.PROFILE_WIDTH), dtype=np.int64)
    rows[:, :2] = (1 << 18) - 1
    rows[:, 2] = np.arange(8)
    rows[:, 9] = 1
    rows[:, 10] = np.arange(8) + 1
    assert trace.merge_profiles([rows[::-1]]).tolist() == rows.tolist()


@pytest.mark.parametrize("columns", [range(0, 3), range(3, 6), range(2, 5), range(6, 9)])
def test_profiles_differing_in_three_statistics_only_stay_apart(columns):
    """Every row of values 0 to 2, 0 to 5, 0 to 2 in three neighbouring statistics, the others 0:
    the two radixes of the packing differ (one is 1 where no ray of a class, or no length, is
    seen), and a statistic packed with the other's radix would land two profiles on one number."""
    combos = np.array(list(itertools.product(range(3), range(6), range(3))), dtype=np.int64)
    rows = np.zeros((2 * len(combos), trace.PROFILE_WIDTH), dtype=np.int64)
    rows[:, list(columns)] = np.r_[combos, combos]
    rows[:, 9] = np.arange(len(rows)) + 1
    rows[:, 10] = np.arange(len(rows))[::-1] + 1
    assert trace.merge_profiles([rows]).tolist() == summed(rows)


def test_profiles_of_nothing_are_no_row():
    """No row, of counts (int64: the start of every sum of range profiles)."""
    assert trace.merge_profiles([]).shape == (0, trace.PROFILE_WIDTH)
    assert trace.merge_profiles([]).dtype == np.int64
    assert trace.merge_profiles([np.empty((0, trace.PROFILE_WIDTH), dtype=np.int64)]).shape == (
        0,
        trace.PROFILE_WIDTH,
    )


def canonical_records(config: Config, start: int, stop: int) -> dict[int, tuple[int, bool, int]]:
    """``{canonical number: (key, shared, lowest)}`` of the canonical molecules numbered start..stop-1."""
    atoms, own = engine.canonical_molecules(config, start, stop)
    partner, _, _ = engine.trace_batch(config, atoms)
    keys, _, shared, lowest = engine.spectrum_keys(config, atoms, partner)
    return {int(n): (int(k), bool(s), int(t)) for n, k, s, t in zip(own, keys, shared, lowest)}


@pytest.mark.parametrize("config", [A4_B4, Config(11, 13), Config(12, 13)])
def test_a_records_number_field_gives_back_its_parts(config):
    """A record's number, ``SHARED`` and ``LOWEST`` come back as written, up to the configuration's
    last number; past ``1 << LOWEST_SHIFT`` molecules (A12_B13) there is no room for ``LOWEST``:
    the numbers come back whole, every molecule not asymmetric (the general kernel)."""
    assert Config(11, 13).nb_mol < 1 << shards.LOWEST_SHIFT <= Config(12, 13).nb_mol < 1 << 63
    numbers = np.array([1, 2, config.nb_mol - 1, config.nb_mol], dtype=np.int64)
    shared = np.array([False, True, False, True])
    lowest = np.array([-1, 0, 7, -1])
    found = shards.record_numbers(config, shards.record_number_bits(config, numbers, shared, lowest))
    room = config.nb_mol < 1 << shards.LOWEST_SHIFT
    expected = lowest if room else np.full(4, -1)
    assert [a.tolist() for a in found] == [numbers.tolist(), shared.tolist(), expected.tolist()]


@pytest.mark.parametrize(("start", "stop", "batch"), [(1, 1821, 1 << 16), (1, 1821, 7), (100, 901, 13)])
def test_a_traced_range_writes_each_record_once_in_the_shard_of_its_keys_low_bits(
    tmp_path, monkeypatch, start, stop, batch
):
    """``trace_range`` on A4_B4 in 4 shards, traced ``TRACE_BATCH`` numbers at a time: each canonical
    molecule of the range once, its key, ``SHARED`` and ``LOWEST`` bits, in the shard of its key's two low
    bits, in a file named after the range (no part left); its molecules and profile count every
    molecule of those enantiomer groups."""
    monkeypatch.setattr(trace, "TRACE_BATCH", batch)
    monkeypatch.setattr(trace, "PROFILE_ROWS", 5)  # summed now and then
    job = trace.TraceJob(A4_B4, start, stop, 4, str(tmp_path))
    result = trace.trace_range(job)
    expected = canonical_records(A4_B4, start, stop)
    found: dict[int, tuple[int, bool, int]] = {}
    for shard in range(4):
        assert [p.name for p in shard_folder(tmp_path, shard).iterdir()] == [f"{start}-{stop}.keys"]
        records = read_shard(tmp_path, shard)
        assert ((records["key"] & np.uint64(3)) == shard).all()
        numbers, shared, lowest = record_numbers(A4_B4, records["number"])
        for key, number, bit, transform in zip(
            records["key"].tolist(), *(a.tolist() for a in (numbers, shared, lowest))
        ):
            assert number not in found
            found[number] = (key, bit, transform)
    assert found == expected
    assert {bit for _, bit, _ in found.values()} == {False, True}  # both kinds crossed
    assert {t for _, _, t in found.values()} >= {-1, 0, 7}
    assert result.records == len(expected)
    atoms, own = engine.canonical_molecules(A4_B4, start, stop)
    orbit = engine.spectrum_keys(A4_B4, atoms, engine.trace_batch(A4_B4, atoms)[0]).orbit
    assert result.molecules == int(orbit.sum()) == int(result.profile[:, 9].sum())
    assert result.profile[:, 10].min() == min(expected)
    if (start, stop) == (1, 1821):
        assert result.molecules == A4_B4.nb_mol


def test_a_resumed_tracing_forgets_the_files_of_ranges_it_did_not_record(tmp_path):
    """A run killed between writing a range's files and recording it left them: they go (records
    in each shard, the profile, and half-written ``.part`` files), the recorded range's stay."""
    directory = tmp_path / "A4_B4"
    kept = [
        directory / "s00000" / "1-101.keys",
        directory / "s00003" / "1-101.keys",
        directory / "profiles" / "1-101.npy",
    ]
    gone = [
        directory / "s00000" / "101-201.keys",
        directory / "s00003" / ".101-201.keys.77.part",
        directory / "profiles" / "101-201.npy",
        directory / "profiles" / ".101-201.npy.part",
    ]
    for path in kept + gone:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x")
    (directory / TRACED).touch()  # not a folder: left alone
    open_database(tmp_path / "db.sqlite")
    try:
        ensure_config(A4_B4, "compact")
        ExploredRange.insert(config=A4_B4.name, start=1, stop=101, nb_mol=5, dh1=now()).execute()
        ExploredRange.insert(
            config="A3_B4", start=101, stop=201, nb_mol=5, dh1=now()
        ).execute()  # not A4_B4's
        trace._forget_unrecorded(directory, A4_B4)
        trace._forget_unrecorded(tmp_path / "nowhere", A4_B4)  # no folder yet: nothing to forget
    finally:
        close_database()
    assert [path.exists() for path in kept + gone] == [True] * len(kept) + [False] * len(gone)
    assert (directory / TRACED).exists()


def tracing_reports(path, **options) -> tuple[list[tuple[int, int]], str]:
    """(done, total) of each tracing report of a compact A4_B4 run, and its end."""
    reports = []
    explore(A4_B4, path, store="compact", workers=1, progress=reports.append, **options)
    return [(r.done, r.total) for r in reports if r.phase == "tracing"], reports[-1].phase


def test_tracing_reports_count_the_molecules_of_each_recorded_range_from_those_stored(tmp_path):
    """A4_B4 in 19 ranges of 100: a report before the first range, then one a range, each counting
    the molecules of the ranges recorded (from 0, or from those a paused run stored) up to all
    1,820 of them."""
    path = tmp_path / "db.sqlite"
    stop = threading.Event()
    first, end = tracing_reports(path, range_size=100)
    assert end == "complete" and first[0] == (0, 1820) and first[-1] == (1820, 1820)
    assert len(first) == 1 + 19 and first == sorted(first) and first[1][0] > 0
    other = tmp_path / "paused.sqlite"
    reports = []

    def pause_after_three(report) -> None:
        reports.append(report)
        if report.phase == "tracing" and len(reports) == 4:
            stop.set()

    stop.clear()
    assert (
        explore(
            A4_B4, other, store="compact", workers=1, range_size=100, stop=stop, progress=pause_after_three
        )
        == PAUSED
    )
    stored = reports[3].done
    assert 0 < stored < 1820
    resumed, end = tracing_reports(other, range_size=100)
    assert end == "complete" and resumed[0] == (stored, 1820) and resumed[-1] == (1820, 1820)
    assert len(resumed) == 1 + 19 - 3


def test_a_pause_asked_as_the_last_range_is_traced_pauses_before_its_profiles_are_summed(tmp_path):
    """The last range's report asks a pause: the run pauses with every range recorded and the
    profiles not summed yet (nothing past the tracing), and resumed it completes."""
    path, stop = tmp_path / "db.sqlite", threading.Event()

    def progress(report) -> None:
        if report.phase == "tracing" and report.done == report.total:
            stop.set()

    assert (
        explore(A4_B4, path, store="compact", workers=1, range_size=500, stop=stop, progress=progress)
        == PAUSED
    )
    open_database(path)
    try:
        assert stored_count(A4_B4) == A4_B4.nb_mol and not trace.profiles_stored(A4_B4)
    finally:
        close_database()
    assert explore(A4_B4, path, store="compact") == COMPLETE


# -- compact/group.py -------------------------------------------------------------------------


def grouping_reports(path, stop: threading.Event | None = None, pause_at: int | None = None):
    """A4_B4 explored compact (8 shards: ``SHARD_RECORDS`` shrunk by the caller), paused once
    ``pause_at`` shards are grouped; its end and (done, total) of each grouping report."""
    reports: list = []

    def progress(report) -> None:
        reports.append(report)
        if pause_at is not None and report.phase == "grouping" and report.done == pause_at:
            stop.set()

    end = explore(A4_B4, path, store="compact", workers=1, stop=stop, progress=progress)
    return end, [(r.done, r.total) for r in reports if r.phase == "grouping"]


def test_a_paused_grouping_keeps_its_grouped_shards_and_groups_only_the_others(tmp_path, monkeypatch):
    """In 8 shards, a pause after 3: those 3 recorded, their records deleted and their results
    kept, the 5 others' records kept; resumed, the reports count on from 3 shards of 8 to 8 and
    the store is the one of a run never paused."""
    monkeypatch.setattr(shards, "SHARD_RECORDS", 29)  # 228 expected records: 8 shards of 29
    path, clean = tmp_path / "paused.sqlite", tmp_path / "clean.sqlite"
    end, first = grouping_reports(path, threading.Event(), pause_at=3)
    assert end == PAUSED and first == [(0, 8), (1, 8), (2, 8), (3, 8)]
    directory = config_directory(path, A4_B4)
    open_database(path)
    try:
        assert sorted(row.shard for row in GroupedShard.select()) == [0, 1, 2]
    finally:
        close_database()
    assert [shard_folder(directory, s).exists() for s in range(8)] == [False] * 3 + [True] * 5
    assert [result_folder(directory, s).exists() for s in range(8)] == [True] * 3 + [False] * 5
    end, resumed = grouping_reports(path)
    assert end == COMPLETE and resumed == [(n, 8) for n in range(3, 9)]
    assert grouping_reports(clean) == (COMPLETE, [(n, 8) for n in range(9)])
    assert figures(path, A4_B4) == figures(clean, A4_B4)
    open_database(path)
    try:  # each shard's count of records: its canonical molecules, 252 in all
        records = {row.shard: row.records for row in GroupedShard.select()}
    finally:
        close_database()
    keys = [key for key, _, _ in canonical_records(A4_B4, 1, A4_B4.nb_mol + 1).values()]
    assert records == {s: sum(1 for key in keys if key % 8 == s) for s in range(8)}
    assert sum(records.values()) == 252


def test_grouping_without_the_traced_shard_files_says_where_they_were_looked_for(tmp_path):
    """Resumed once its shard folder is gone (deleted by hand, or a disk not mounted), the grouping
    stops in one line that names the configuration and the folder and says what to do, and
    groups nothing."""
    path, stop = tmp_path / "db.sqlite", threading.Event()
    assert grouping_reports(path, stop, pause_at=0)[0] == PAUSED
    directory = config_directory(path, A4_B4)
    assert (directory / TRACED).exists()
    shutil.rmtree(directory)
    with pytest.raises(ExploreError) as error:
        explore(A4_B4, path, store="compact", workers=1)
    assert str(error.value) == (
        f"the shard files of A4_B4 are not in {directory}: explore it with the folder it was traced "
        "into, or reset it"
    )
    open_database(path)
    try:
        assert not GroupedShard.select().exists()
    finally:
        close_database()


def test_a_grouped_shards_counts_are_its_families_and_their_spectral_groups(tmp_path):
    """A shard's counts by risk (most atoms differing) and by size: for each value, the families that
    have it and the sum of their spectral groups (a family holds one or several), read back here
    from the shard's result columns (fifth session: ``_counts_by`` weighted by nothing survived)."""
    trace.trace_range(trace.TraceJob(A4_B4, 1, A4_B4.nb_mol + 1, 1, str(tmp_path)))
    result = group_stage.group_shard(group_stage.GroupJob(A4_B4, 0, str(tmp_path)))
    folder = result_folder(tmp_path, 0)
    spectra, sizes, risks = (
        np.load(folder / f"family_{name}.npy").tolist() for name in ("spectra", "sizes", "max_diff")
    )
    assert max(spectra) > 1  # so that families and spectral groups differ
    for counted, values in ((result.sizes, sizes), (result.risk, risks)):
        expected = defaultdict(lambda: [0, 0])
        for value, groups in zip(values, spectra):
            expected[value][0] += 1
            expected[value][1] += groups
        assert counted == dict(expected)
    assert (result.families, result.spectra, result.records) == (len(spectra), sum(spectra), 252)


def test_a_shard_grouped_again_in_the_process_that_failed_writing_it_replaces_its_part(tmp_path):
    """A grouping that failed while writing its result (a full disk) leaves its ``.part`` folder,
    named by its process: the same process grouping it again (an in-process run resumed in the
    same session) starts it afresh (fifth session: the stale part not removed survived)."""
    trace.trace_range(trace.TraceJob(A4_B4, 1, A4_B4.nb_mol + 1, 1, str(tmp_path)))
    final = result_folder(tmp_path, 0)
    part = final.with_name(f".{final.name}.{os.getpid()}.part")
    part.mkdir(parents=True)
    (part / "family_keys.npy").write_bytes(b"cut short")
    group_stage.group_shard(group_stage.GroupJob(A4_B4, 0, str(tmp_path)))
    assert not part.exists() and np.load(final / "family_keys.npy").dtype == np.uint64


def test_a_run_paused_after_its_grouping_resumes_without_the_traced_mark(tmp_path):
    """Once every shard is grouped, the shard files are no longer read: a resumed run whose
    ``traced`` mark is gone writes its families all the same (fifth session: ``<`` made ``<=``
    survived)."""
    path, stop = tmp_path / "db.sqlite", threading.Event()

    def pause_at_writing(report) -> None:
        if report.phase == "writing":
            stop.set()

    assert explore(A4_B4, path, store="compact", workers=1, stop=stop, progress=pause_at_writing) == PAUSED
    directory = config_directory(path, A4_B4)
    (directory / TRACED).unlink()
    assert explore(A4_B4, path, workers=1) == COMPLETE


def test_a_shard_with_no_record_is_grouped_as_none(tmp_path):
    """A shard no record fell into (a small configuration in many shards) has no file: it reads as
    no record and groups into nothing (fifth session: ``np.empty(1)`` for it survived)."""
    assert len(read_shard(tmp_path, 3)) == 0
    result = group_stage.group_shard(group_stage.GroupJob(A4_B4, 3, str(tmp_path)))
    assert (result.records, result.spectra, result.families, result.risk, result.sizes) == (0, 0, 0, {}, {})


# -- columns.py -------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [(1, 0), (2, 0), (3, 0)])
def test_a_column_reads_any_npy_header_and_refuses_past_either_end(tmp_path, version):
    """A column saved with each header version numpy writes (2.0 and 3.0 for large headers):
    its length, each element from either end, slices clipped to the column, and an index past
    either end refused as a list's is."""
    values = np.arange(10, 17, dtype=np.int64) * 3
    path = tmp_path / "c.npy"
    with open(path, "wb") as out:
        np.lib.format.write_array(out, values, version=version)
    column = Column(path)
    assert len(column) == 7 and column.dtype == values.dtype
    assert [column[i] for i in range(-7, 7)] == values.tolist() * 2
    for low, high in ((0, 7), (2, 5), (5, 99), (-3, None), (None, -2), (6, 7), (7, 9), (4, 2)):
        assert column[low:high].tolist() == values[low:high].tolist(), (low, high)
    assert column[3:3].dtype == values.dtype
    for index in (7, 8, -8):
        with pytest.raises(IndexError):
            column[index]


@pytest.mark.parametrize(("rows", "arrays"), [(1, 3), (2, 3), (3, 3), (7, 3), (40, 2)])
def test_a_merge_holds_about_its_rows_at_a_time(tmp_path, rows, arrays):
    """Each chunk of a merge holds at most ``rows`` elements (one of each array when there are
    more arrays than rows), every element once and in order."""
    columns, everything = [], []
    for i in range(arrays):
        values = np.arange(i, 60 * arrays, arrays, dtype=np.int64)  # interleaved: every chunk takes from all
        np.save(tmp_path / f"{i}.npy", values)
        columns.append(Column(tmp_path / f"{i}.npy"))
        everything += values.tolist()
    out, chunks = [], 0
    for slices, order, joined in merged(columns, [0] * arrays, rows):
        assert 0 < len(joined) <= max(rows, arrays)
        assert joined.tolist() == [v for s, low, high in slices for v in columns[s][low:high].tolist()]
        out += joined[order].tolist()
        chunks += 1
    assert out == sorted(everything)
    assert chunks >= len(everything) // max(rows, arrays)


# -- a pause within a task ----------------------------------------------------------------------


def test_a_pausing_run_halts_a_task_before_its_first_batch_and_writes_nothing(tmp_path, monkeypatch):
    """While the run is pausing (the event ``check_halt`` watches is set), a tracing task and a
    grouping task halt before their first batch: no shard file, no result folder (the next run
    does the task again)."""
    halt = threading.Event()
    monkeypatch.setattr(runner, "_halt", halt)
    job = trace.TraceJob(A4_B4, 1, A4_B4.nb_mol + 1, 2, str(tmp_path))
    trace.trace_range(job)  # not pausing: traced
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s00000", "s00001"]
    halt.set()
    other = tmp_path / "other"
    with pytest.raises(runner.Halted):
        trace.trace_range(trace.TraceJob(A4_B4, 1, A4_B4.nb_mol + 1, 2, str(other)))
    with pytest.raises(runner.Halted):
        group_stage.group_shard(group_stage.GroupJob(A4_B4, 0, str(tmp_path)))
    assert not other.exists() and not (tmp_path / "results").exists()
    halt.clear()
    assert group_stage.group_shard(group_stage.GroupJob(A4_B4, 0, str(tmp_path))).records > 0
    assert result_folder(tmp_path, 0).is_dir()


# -- compact/run.py -----------------------------------------------------------------------------


def test_a_compact_runs_reports_rate_only_the_molecules_it_traced_itself(tmp_path):
    """Resumed after a pause, each tracing report's rate counts the molecules this run traced (not
    those stored before it), the grouping's and writing's have no rate (shards and families
    are not molecules), and the last report says complete with every molecule stored."""
    path, stop, first = tmp_path / "db.sqlite", threading.Event(), []

    def pause_after_two(report) -> None:
        first.append(report)
        if report.phase == "tracing" and report.done > 0 and len(first) == 3:
            stop.set()

    assert (
        explore(A4_B4, path, store="compact", workers=1, range_size=100, stop=stop, progress=pause_after_two)
        == PAUSED
    )
    assert first[-1].phase == "paused" and first[-1].unit == "molecules"
    stored = first[-1].done
    assert stored == first[-2].done > 0
    reports = []
    assert explore(A4_B4, path, workers=1, range_size=100, progress=reports.append) == COMPLETE
    tracing = [r for r in reports if r.phase == "tracing"]
    assert tracing[0].done == stored and tracing[0].rate == 0
    for report in tracing + reports[-1:]:
        assert round(report.rate * report.elapsed) == report.done - stored, report
    others = [r for r in reports if r.phase in ("grouping", "writing")]
    assert others and all(r.rate == 0 for r in others)
    last = reports[-1]
    assert (last.phase, last.unit, last.done, last.total) == ("complete", "molecules", 1820, 1820)


def test_a_compact_run_names_its_configuration_and_leaves_the_others_rows_alone(tmp_path):
    """Every report of a compact run names its configuration; settling its shard count and folder
    touches its own row only: a full store beside it keeps neither (fifth session: ``RunClock(None)``
    and the updates ``where(None)`` survived)."""
    path, reports = tmp_path / "db.sqlite", []
    assert explore(Config(3, 4), path, workers=1) == COMPLETE
    given = tmp_path / "shards"
    assert (
        explore(A4_B4, path, store="compact", workers=1, progress=reports.append, shard_root=given)
        == COMPLETE
    )
    assert reports and {r.config for r in reports} == {"A4_B4"}
    open_database(path)
    try:
        assert config_row(Config(3, 4)).shards is None and config_row(A4_B4).shards is not None
        assert config_row(Config(3, 4)).shard_root is None and config_row(A4_B4).shard_root == str(given)
    finally:
        close_database()


def test_a_paused_compact_run_leaves_no_worker_process_behind(tmp_path, monkeypatch):
    """The workers a compact run starts for itself end with it, paused too (fifth session: the run
    not closing the runner it made survived)."""
    monkeypatch.setattr(compact_run, "IN_PROCESS_BELOW", 0)  # worker processes, even on A4_B4
    path, stop = tmp_path / "db.sqlite", threading.Event()

    def pause(report) -> None:
        if report.phase == "tracing" and report.done > 0:
            stop.set()

    assert (
        explore(A4_B4, path, store="compact", workers=2, range_size=100, stop=stop, progress=pause) == PAUSED
    )
    assert multiprocessing.active_children() == []


@pytest.mark.parametrize(
    ("workers", "below", "processes"),
    [
        (1, 0, 0),
        (2, 0, 2),
        (3, 0, 3),
        (2, A4_B4.nb_mol, 2),
        (2, A4_B4.nb_mol + 1, 0),
        (None, 0, cpus if (cpus := os.cpu_count() or 1) > 1 else 0),
    ],
)
def test_a_compact_run_starts_worker_processes_unless_one_worker_or_a_small_configuration(
    tmp_path, monkeypatch, workers, below, processes
):
    """One worker asked for, or fewer molecules than ``IN_PROCESS_BELOW``: the run stays in this
    process; else it starts its workers, as many as asked or one a CPU (fifth session: the choice
    and the count survived, since the stores are the same either way)."""
    monkeypatch.setattr(compact_run, "IN_PROCESS_BELOW", below)
    seen = [0]

    def look(report) -> None:
        seen.append(len(multiprocessing.active_children()))

    path = tmp_path / "db.sqlite"
    assert explore(A4_B4, path, store="compact", workers=workers, range_size=100, progress=look) == COMPLETE
    assert max(seen) == processes


def test_shard_files_on_a_full_disk_say_which_folder_is_full(tmp_path):
    """The shard files on a tmpfs of one page: the run stops with DiskFull naming the configuration's
    shard folder (fifth session: ``is_disk_full(None)``, the folder None or the database's dropped
    survived; tests/test_disk_full.py runs it through the command line, out of mutmut's sight)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    small = tmp_path / "small"
    small.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4k", "tmpfs", str(small)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        with pytest.raises(DiskFull) as full:
            explore(A4_B4, tmp_path / "db.sqlite", store="compact", workers=1, shard_root=small)
        directory = config_directory(tmp_path / "db.sqlite", A4_B4, small)
        assert full.value.folder == directory == small / "A4_B4"
        assert str(full.value).startswith(f"the disk holding {directory} is full: ")
    finally:
        subprocess.run(["umount", "--lazy", str(small)], check=False)


def test_a_compact_run_keeps_its_shard_folder_and_refuses_another_once_started(tmp_path):
    """The shard folder given to a new run is kept in its row (none for the default beside the
    database); once ranges are stored, another folder is refused in one line naming the one it
    started with, and the same folder, given or not, resumes it; once complete, its folder is
    deleted, and the default root beside the database with it (a folder given stays)."""
    path, given, other = tmp_path / "db.sqlite", tmp_path / "given", tmp_path / "other"
    stop = threading.Event()
    stop_at_once = lambda report: report.done > 0 and stop.set()  # noqa: E731
    for config, root in ((A4_B4, given), (Config(3, 4), None)):
        stop.clear()
        options = {"shard_root": root} if root else {}
        assert (
            explore(
                config,
                path,
                store="compact",
                workers=1,
                range_size=100,
                stop=stop,
                progress=stop_at_once,
                **options,
            )
            == PAUSED
        )
    open_database(path)
    try:
        assert config_row(A4_B4).shard_root == str(given.resolve())
        assert config_row(Config(3, 4)).shard_root is None
    finally:
        close_database()
    for config, started in ((A4_B4, given.resolve()), (Config(3, 4), Path(f"{path}.shards").resolve())):
        with pytest.raises(ExploreError) as refused:
            explore(config, path, workers=1, shard_root=other)
        assert str(refused.value) == (
            f"{config.name} was started with its shard files in {started}: resume it with "
            f"--shards {started}, or reset it"
        )
    assert explore(A4_B4, path, workers=1) == COMPLETE  # its folder, not given again
    assert given.is_dir() and not (given / "A4_B4").exists()
    assert explore(Config(3, 4), path, workers=1, shard_root=Path(f"{path}.shards")) == COMPLETE
    assert not Path(f"{path}.shards").exists() and not other.exists()


def test_one_molecule_stored_is_enough_to_keep_the_shard_folder(tmp_path):
    """A run whose ranges hold a single molecule has started: another folder is refused."""
    path, stop = tmp_path / "db.sqlite", threading.Event()
    paused = explore(
        A4_B4,
        path,
        store="compact",
        workers=1,
        range_size=100,
        stop=stop,
        progress=lambda report: report.done > 0 and stop.set(),
        shard_root=tmp_path / "given",
    )
    assert paused == PAUSED
    open_database(path)
    try:
        ranges = ExploredRange.select().where(ExploredRange.config == A4_B4.name)
        first = ranges.order_by(ExploredRange.start).first()
        ExploredRange.delete().where(
            (ExploredRange.config == A4_B4.name) & (ExploredRange.start != first.start)
        ).execute()
        ExploredRange.update(nb_mol=1).where(ExploredRange.config == A4_B4.name).execute()
        assert stored_count(A4_B4) == 1
        with pytest.raises(ExploreError, match="was started with its shard files in "):
            compact_run._settle_shard_root(A4_B4, path, tmp_path / "other")
    finally:
        close_database()


def test_shard_files_that_cannot_be_written_are_one_line(tmp_path):
    """A shard folder under a file: the run stops with one line naming the configuration and the
    system's reason, not a traceback."""
    blocker = tmp_path / "a file"
    blocker.write_text("")
    with pytest.raises(ExploreError) as error:
        explore(A4_B4, tmp_path / "db.sqlite", store="compact", workers=1, shard_root=blocker / "shards")
    assert str(error.value).startswith("cannot write the shard files of A4_B4: [Errno 20] Not a directory: ")


def test_the_stages_refuse_a_configuration_that_is_not_compact(tmp_path):
    open_database(tmp_path / "db.sqlite")
    try:
        with pytest.raises(CompactError, match="^A4_B4 is not a compact exploration$"):
            compact_run.run_stages(A4_B4, tmp_path / "db.sqlite")
        ensure_config(A4_B4, "full")
        with pytest.raises(CompactError, match="^A4_B4 is not a compact exploration$"):
            compact_run.run_stages(A4_B4, tmp_path / "db.sqlite")
    finally:
        close_database()


# -- compact/shards.py --------------------------------------------------------------------------


def test_a_paused_runs_shard_files_are_laid_out_as_a_resumed_one_reads_them(tmp_path, monkeypatch):
    """In 2 shards, paused once one is grouped: beside the database, ``DATABASE.shards/CONFIG/``
    (docs/larger.md) holds the keying and traced marks, the other shard's records (``s00001/1-1821.keys``)
    and the grouped one's result (``results/r00000``): the names an older run's files have, which
    the next release resumes.  ``reset`` deletes the configuration's folder, and the root with
    it once no other configuration's is in it."""
    monkeypatch.setattr(shards, "SHARD_RECORDS", 114)  # 228 expected records: 2 shards
    path, stop = tmp_path / "db.sqlite", threading.Event()
    assert grouping_reports(path, stop, pause_at=1)[0] == PAUSED
    root = tmp_path / "db.sqlite.shards"
    assert shards.default_shard_root(path) == root
    assert shards.config_directory(path, A4_B4) == root / "A4_B4"
    assert shards.config_directory(path, A4_B4, tmp_path / "given") == tmp_path / "given" / "A4_B4"
    found = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and p.suffix != ".npy")
    assert found == ["A4_B4/keying", "A4_B4/s00001/1-1821.keys", "A4_B4/traced"]
    assert (root / "A4_B4" / "keying").read_text() == "lexical\n"
    assert (root / "A4_B4" / "results" / "r00000" / "families.npy").is_file()
    other = root / "A3_B4"
    other.mkdir()
    shards.forget_shards(path, A4_B4)
    assert not (root / "A4_B4").exists() and root.is_dir()  # A3_B4's folder is still in it
    shards.forget_shards(path, Config(3, 4))
    assert not root.exists()
    shards.forget_shards(path, Config(2, 4))  # reset of a configuration with no shard folder (full)
    given = tmp_path / "given"
    (given / "A4_B4").mkdir(parents=True)
    shards.forget_shards(path, A4_B4, given)
    assert not (given / "A4_B4").exists() and given.is_dir()  # a folder given with --shards stays


def test_a_shard_grouped_again_replaces_the_result_a_killed_run_left(tmp_path):
    """A run killed after writing a shard's result but before recording it groups the shard again
    when resumed: the new result replaces the old folder whole (no error, no part of it left)."""
    trace.trace_range(trace.TraceJob(A4_B4, 1, A4_B4.nb_mol + 1, 1, str(tmp_path)))
    job = group_stage.GroupJob(A4_B4, 0, str(tmp_path))
    first = group_stage.group_shard(job)
    folder = result_folder(tmp_path, 0)
    names = sorted(p.name for p in folder.iterdir())
    (folder / "left by an older run.npy").write_bytes(b"")
    assert group_stage.group_shard(job) == first
    assert sorted(p.name for p in folder.iterdir()) == names
    assert [p.name for p in folder.parent.iterdir()] == ["r00000"]  # no temporary folder left


def test_a_range_with_no_canonical_molecule_recorded_first_keeps_its_profile(tmp_path):
    """With workers, a range holding no canonical molecule (A4_B4's 1,701 to 1,800) finishes
    quickly and may be recorded before any shard file is written: its (empty) profile is kept
    in a folder made for it, and the range recorded."""
    directory = tmp_path / "shards" / "A4_B4"
    job = trace.TraceJob(A4_B4, 1701, 1801, 1, str(directory))
    result = trace.trace_range(job)
    assert (result.records, result.molecules, len(result.profile)) == (0, 0, 0)
    assert not directory.exists()
    open_database(tmp_path / "db.sqlite")
    try:
        ensure_config(A4_B4, "compact")
        trace._record_range(directory, A4_B4, job, result)
        assert [(r.start, r.stop, r.nb_mol) for r in ExploredRange.select()] == [(1701, 1801, 0)]
    finally:
        close_database()
    assert [p.name for p in (directory / "profiles").iterdir()] == ["1701-1801.npy"]


def test_a_ranges_profile_file_holds_26_bytes_a_row_and_reads_back_as_traced(tmp_path):
    """A traced range's profile in its file (``PROFILE_FILE``), read back exactly, its lowest
    numbers past 2^32 too (they are kept from the range's start); a profile with a value too large
    for it, and one in the int64 rows of older releases, are read back as they are."""
    traced = trace.trace_range(trace.TraceJob(A4_B4, 1, 1821, 1, str(tmp_path / "records"))).profile
    assert len(traced) > 100
    far = traced.copy()
    far[:, 10] += (1 << 34) - 1
    wide = traced.copy()
    wide[-1, 3] = 1 << 16
    cases = [(traced, 1, 1821, True), (far, 1 << 34, (1 << 34) + 1820, True), (wide, 1, 1821, False)]
    for profile, start, stop, packed in cases:
        path = tmp_path / f"{start}-{stop}.npy"
        np.save(path, trace.profile_file(profile, start))
        assert np.load(path).nbytes == (26 if packed else 88) * len(profile)
        back = trace.read_profile(path)
        assert back.dtype == np.int64 and np.array_equal(back, profile)
    np.save(tmp_path / "1-1821.npy", traced)  # an older release's file
    assert np.array_equal(trace.read_profile(tmp_path / "1-1821.npy"), traced)


def test_profiles_that_do_not_count_every_molecule_stop_the_run_in_one_line(tmp_path):
    """Profile files lost (a shard folder damaged, emptied by hand): summing them stops with one
    line naming the configuration, the count found and the one expected, and what to do;
    nothing is stored and the files are kept."""
    whole = trace.trace_range(trace.TraceJob(A4_B4, 1, A4_B4.nb_mol + 1, 1, str(tmp_path / "records")))
    directory = tmp_path / "A4_B4"
    (directory / "profiles").mkdir(parents=True)
    open_database(tmp_path / "db.sqlite")
    try:
        ensure_config(A4_B4, "compact")
        messages = []
        for rows in (whole.profile[:0], whole.profile[1:]):  # none left, or one profile row lost
            if len(rows):
                np.save(directory / "profiles" / "1-1821.npy", rows)
            with pytest.raises(CompactError) as error:
                trace._store_profiles(directory, A4_B4)
            messages.append(str(error.value))
        assert not trace.profiles_stored(A4_B4) and not (directory / TRACED).exists()
    finally:
        close_database()
    lost = A4_B4.nb_mol - int(whole.profile[0, 9])
    assert messages == [
        f"A4_B4: the traced ranges count {n:,} molecules, not 1,820; reset it and explore it again"
        for n in (0, lost)
    ]
    assert (directory / "profiles" / "1-1821.npy").exists()


def test_a_ranges_profile_rows_are_summed_as_soon_as_they_reach_profile_rows(tmp_path, monkeypatch):
    """A task's memory: its profile rows are summed (``merge_profiles``, the real one, counted
    here) once the rows held since the last sum reach ``PROFILE_ROWS``, exactly there, and not
    before: A4_B4 traced 7 numbers at a time, the bound that of the first batch's rows."""
    batches = [
        len(engine.canonical_molecules(A4_B4, low, min(low + 7, 1821))[1]) for low in range(1, 1821, 7)
    ]
    bound = batches[0]
    expected, pending = 0, 0
    for rows in batches:
        pending += rows
        if rows and pending >= bound:
            expected, pending = expected + 1, 0
    sums = []
    real = trace.merge_profiles
    monkeypatch.setattr(trace, "merge_profiles", lambda parts: sums.append(len(parts)) or real(parts))
    monkeypatch.setattr(trace, "TRACE_BATCH", 7)
    monkeypatch.setattr(trace, "PROFILE_ROWS", bound)
    result = trace.trace_range(trace.TraceJob(A4_B4, 1, 1821, 1, str(tmp_path)))
    assert len(sums) == expected + 1  # and the last, of what is left
    assert result.molecules == A4_B4.nb_mol


def stored_profiles(path) -> list[tuple]:
    """Every Profiles row of a file: (config, the 9 statistics, molecules, lowest), sorted."""
    fields = ("config", *trace.PROFILE_FIELDS, "molecules", "lowest")
    open_database(path)
    try:
        return sorted(tuple(getattr(row, f) for f in fields) for row in Profile.select())
    finally:
        close_database()


def test_a_configurations_profiles_are_stored_beside_the_others(tmp_path):
    """Two configurations explored compact into one file: the second's profiles are stored without
    touching the first's."""
    path = tmp_path / "db.sqlite"
    assert explore(Config(3, 4), path, store="compact", workers=1) == COMPLETE
    before = stored_profiles(path)
    assert explore(A4_B4, path, store="compact", workers=1) == COMPLETE
    rows = stored_profiles(path)
    assert [row for row in rows if row[0] == "A3_B4"] == before
    assert sum(row[-2] for row in rows if row[0] == "A4_B4") == A4_B4.nb_mol


def test_a_batchs_profile_rows_are_integers():
    """A batch's profile rows are int64 (a board of width 8 packs its statistics past 2^53, where
    float rows would round two profiles together): the statistics, the orbit and the number."""
    stats = np.array([[32, 0, 1, 128, 0, 3, 127, 0, 5]], dtype=np.int64)
    rows = trace._profile(stats, np.array([8]), np.array([(1 << 60) + 1]))
    assert rows.dtype == np.int64 and rows.tolist() == [[32, 0, 1, 128, 0, 3, 127, 0, 5, 8, (1 << 60) + 1]]
