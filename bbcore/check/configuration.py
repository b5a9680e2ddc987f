"""The configuration phase (the Configurations row, the explored ranges) and a full store's count.

Each is a few look-ups (``blocks.quick_phase``); a compact store's count is
its judge's (``bbcore.check.compact_judge``).
"""

from __future__ import annotations

from math import comb

from bbcore import sql
from bbcore.check.report import CheckResult, Difference
from bbcore.config import Config
from bbcore.store import Configuration, ExploredRange, db


def check_configuration(config: Config, row: Configuration) -> CheckResult:
    """The Configurations row and the stored ranges against C(W², N)."""
    expected = comb(config.width**2, config.atoms)
    result = CheckResult(
        "configuration",
        f"C({config.width**2}, {config.atoms}) = {expected:,} molecules, atoms, width, ranges",
    )
    for finding, what, stored, computed in (
        ("configuration.nb_mol", "nb_mol", row.nb_mol, expected),
        ("configuration.atoms", "nb_atoms", row.nb_atoms, config.atoms),
        ("configuration.width", "width", row.width, config.width),
    ):
        if stored != computed:
            result.add(Difference(finding, None, what, f"{stored:,}", f"{computed:,}"))
    ranges = (
        ExploredRange.select(ExploredRange.start, ExploredRange.stop, ExploredRange.nb_mol)
        .where(ExploredRange.config == config.name)
        .order_by(ExploredRange.start)
        .tuples()
    )
    cursor, molecules = 1, 0
    for start, stop, nb_mol in ranges.iterator():
        molecules += nb_mol
        if start > cursor:
            result.add(
                Difference(
                    "configuration.ranges_hole",
                    None,
                    "ExploredRanges",
                    f"nothing from {cursor:,} to {start - 1:,}",
                    "every number",
                )
            )
        elif start < cursor:
            result.add(
                Difference(
                    "configuration.ranges_overlap",
                    None,
                    "ExploredRanges",
                    f"{start:,} to {stop - 1:,} overlapping the range before it (to {cursor - 1:,})",
                    "each number once",
                )
            )
        if stop > expected + 1:
            result.add(
                Difference(
                    "configuration.ranges_beyond",
                    None,
                    "ExploredRanges",
                    f"a range to {stop - 1:,}",
                    f"numbers to {expected:,}",
                )
            )
        cursor = max(cursor, stop)
    if cursor < expected + 1:
        result.add(
            Difference(
                "configuration.ranges_hole",
                None,
                "ExploredRanges",
                f"nothing from {cursor:,} to {expected:,}",
                "every number",
            )
        )
    if molecules != expected:
        result.add(
            Difference(
                "configuration.ranges_molecules",
                None,
                "molecules in ExploredRanges",
                f"{molecules:,}",
                f"{expected:,}",
            )
        )
    return result


def check_count(config: Config) -> CheckResult:
    """The number of molecules stored."""
    result = CheckResult("count", f"{config.nb_mol:,} molecule rows")
    (stored,) = db.execute_sql(sql.COUNT_MOLECULES, (config.name,)).fetchone()
    if stored != config.nb_mol:
        result.add(Difference("count.rows", None, "molecule rows", f"{stored:,}", f"{config.nb_mol:,}"))
    return result
