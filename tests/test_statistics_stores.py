"""The statistics a compact store reports against a full one's, and the profile's bounds at their
edges: what tests/test_statistics.py (full stores) does not cross (found by
``bench/mutation.py statistics``)."""

from __future__ import annotations

from pathlib import Path

from bbcore import rays, statistics
from bbcore.config import Config
from bbcore.explore import explore
from bbcore.numbering import atoms_of
from bbcore.progress import COMPLETE
from bbcore.statistics import PROFILE_COLUMNS, Distribution, profile_bases
from bbcore.store import COMPACT, close_database, open_database

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


def test_a_compact_store_reports_what_the_full_one_does(explored: Path, tmp_path: Path):
    small = tmp_path / "compact.sqlite"
    assert explore(A4_B4, small, store=COMPACT, workers=1) == COMPLETE
    close_database()
    risks, report, sizes, table = reported(small)
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
