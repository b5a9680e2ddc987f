"""The statistics a compact store reports against a full one's, and the profile's bounds at their
edges: what tests/test_statistics.py (full stores) does not cross (found by
``bench/mutation.py statistics``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bbcore import rays, sql, statistics
from bbcore.config import Config
from bbcore.explore import explore
from bbcore.numbering import atoms_of
from bbcore.progress import COMPLETE
from bbcore.statistics import PROFILE_COLUMNS, Distribution, profile_bases
from bbcore.store import COMPACT, FULL, close_database, db, open_database

A4_B4 = Config(4, 4)


def reported(path: Path) -> tuple:
    """A4_B4's risk lines, ambiguity report and size distribution read from ``path``."""
    open_database(path, write=False)
    try:
        table = statistics.ambiguity_table(A4_B4)
        sizes = statistics.size_distribution(A4_B4)
        assert statistics.size_distribution(A4_B4, table) == sizes  # the table given or read
        return statistics.risk_lines(A4_B4), statistics.ambiguity_report(A4_B4), sizes, table
    finally:
        close_database()


@pytest.fixture(scope="module")
def compact(tmp_path_factory) -> Path:
    """A4_B4 explored in a compact store."""
    path = tmp_path_factory.mktemp("compact") / "compact.sqlite"
    assert explore(A4_B4, path, store=COMPACT, workers=1) == COMPLETE
    close_database()
    return path


def test_a_compact_store_reports_what_the_full_one_does(explored: Path, compact: Path):
    risks, report, sizes, table = reported(compact)
    assert (risks, report, sizes) == reported(explored)[:3]
    assert sum(line.groups for line in risks) == 66 and sum(line.families for line in risks) == 11
    assert [line.max_diff for line in risks] == sorted({line.max_diff for line in risks})
    assert sizes == Distribution(
        "sizes",
        "spectral groups by size",
        "size",
        ("families", "groups", "molecules"),
        tuple((x.size, (x.families, x.groups, x.molecules)) for x in table),
    )
    assert [key for key, _ in sizes.rows] == [2, 3]


def test_the_profile_bases_are_one_more_than_the_largest_value_a_column_takes():
    """4W + 1 for a count of rays (a full box absorbs all 4W), 2W^2 + 1 for a length or turns."""
    bases = dict(zip(PROFILE_COLUMNS, profile_bases(A4_B4)))
    assert {c: b for c, b in bases.items() if c.endswith("_number")} == {
        "absorbed_number": 17,
        "reflected_number": 17,
        "out_number": 17,
    }
    assert {b for c, b in bases.items() if not c.endswith("_number")} == {33}
    full = Config(16, 4)  # every cell an atom: every one of the 16 rays absorbed
    stats = rays.statistics(full, atoms_of(full, 1))
    assert stats["absorbed_number"] == 16 == bases["absorbed_number"] - 1


def read(path: Path, what):
    """``what()`` with the database at ``path`` open for reading."""
    open_database(path, write=False)
    try:
        return what()
    finally:
        close_database()


def test_a_compact_store_profiles_and_counts_what_the_full_one_does(explored: Path, compact: Path):
    """The profile rows, their counts, the records and the distributions of a compact store (its
    ``Profiles`` table) are the full store's (a GROUP BY over its molecules)."""

    def profiled():
        profile = statistics.statistics_profile(A4_B4)
        rows = sorted(
            (tuple(row.values[c] for c in PROFILE_COLUMNS), row.molecules, row.lowest) for row in profile
        )
        part = [row for row in profile if row.values["out_number"] == 6]
        return rows, statistics.profile_counts(A4_B4), statistics.profile_counts(A4_B4, part), part

    rows, counts, counted_part, part = read(compact, profiled)
    full_rows, full_counts, _, _ = read(explored, profiled)
    assert rows == full_rows
    assert counts.grouped.keys() == full_counts.grouped.keys() == {"rays", "longest", "turns"}
    for name, grouped in counts.grouped.items():
        assert np.array_equal(grouped, full_counts.grouped[name]), name
    assert sum(molecules for _, molecules, _ in rows) == A4_B4.nb_mol
    # a profile given is counted, not the store's
    assert counted_part.grouped["rays"][:, -2].sum() == sum(row.molecules for row in part) < A4_B4.nb_mol
    report = read(compact, lambda: statistics.statistics_report(A4_B4))
    assert report == read(explored, lambda: statistics.statistics_report(A4_B4))
    assert len(report.records) == 6


@pytest.mark.parametrize("width", [10, 11], ids=["A1_B10 packed", "A1_B11 not packed"])
def test_a_profile_at_its_bounds_reads_back_exactly(tmp_path: Path, width: int):
    """Every statistic at the largest value ``profile_bases`` allows, on both sides of the 63-bit
    edge: A1_B10's nine columns packed in one integer fit, A1_B11's would not (and are grouped
    as nine)."""
    config = Config(1, width)
    path = tmp_path / "bounds.sqlite"
    assert explore(config, path, store=FULL, workers=1) == COMPLETE
    bounds = {c: base - 1 for c, base in zip(PROFILE_COLUMNS, profile_bases(config))}
    open_database(path)
    try:
        assignments = ", ".join(f"{c} = ?" for c in PROFILE_COLUMNS)
        db.execute_sql(
            f"UPDATE {sql.MOLECULES} SET {assignments} WHERE config = ? AND number = ?",
            (*bounds.values(), config.name, 7),
        )
        profile = statistics.statistics_profile(config)
    finally:
        close_database()
    assert [(row.molecules, row.lowest) for row in profile if row.values == bounds] == [(1, 7)]
    assert all(type(v) is int for row in profile for v in row.values.values())
    assert sum(row.molecules for row in profile) == config.nb_mol


@pytest.mark.parametrize("width", [11, 13])
def test_a_compact_profile_at_its_bounds_is_counted_exactly(tmp_path: Path, width: int):
    """A compact store's ``Profiles`` row with every statistic at its bound: read as two packed
    integers (the rays and lengths, then the turns), each of which fits 63 bits up to A1_B13,
    where the nine in one would not; the counts and the records show the bounds."""
    config = Config(1, width)
    path = tmp_path / "bounds.sqlite"
    assert explore(config, path, store=COMPACT, workers=1) == COMPLETE
    bounds = {c: base - 1 for c, base in zip(PROFILE_COLUMNS, profile_bases(config))}
    open_database(path)
    try:
        assignments = ", ".join(f"{c} = ?" for c in PROFILE_COLUMNS)
        db.execute_sql(
            f'UPDATE "Profiles" SET {assignments}, molecules = 3 WHERE config = ? AND lowest = 1',
            (*bounds.values(), config.name),
        )
        counts = statistics.profile_counts(config)
    finally:
        close_database()
    for name in ("rays", "longest", "turns"):
        columns = statistics.distribution_columns(name)
        rows = [tuple(row) for row in counts.grouped[name].tolist()]
        assert (*(bounds[c] for c in columns), 1, 1, 1, 3, 1) in rows, name
        assert counts.grouped[name].dtype == np.int64
    records = counts.records()
    assert {key: value for key, (value, _, _) in records.items()} == {
        (ray_class, measure): bounds[f"{ray_class}_max_{measure}"]
        for ray_class in statistics.RAY_CLASSES
        for measure in statistics.MEASURES
    }
