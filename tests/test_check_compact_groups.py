"""``bbcore check`` on a compact store: the edges of the groups phase (``compact_groups.CompactGroups``).

Each damage here is planted with plain ``sqlite3`` in a copy of the shared
clean A3_B5 (``a3_b5_stores``: families 43 and 45, at positions 0 and 1,
two molecules and four spectra each), at an edge one plant per finding
(tests/test_check_damage.py) leaves out: a family numbered as the first or
the last molecule, two families with the same number, the first family of
a size out of place, a repeated molecule inside the first or a later family,
a row whose every value has another type.  Each asserts exit 1 and the
exact lines of the finding that names the damage.  The progress figures and
the molecules counted across blocks are asserted on clean files; two
configurations too large to explore (2.3 billion molecules, packed in 4
bytes; more than 2^53, in 8) pin that ``unpack`` reads the largest numbers
exactly.  Found by the mutation run (``bench/mutation.py check``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from test_check import groupby_names, progress_of
from test_check_damage import FAMILY_43, FAMILY_45, damaged_report, one, packed, raised_findings

from bbcore import check
from bbcore.config import parse_config
from bbcore.explore import explore
from bbcore.families import numbers_dtype
from bbcore.store import COMPACT, close_database

pytestmark = pytest.mark.usefixtures("remembered_reference")

A3_B5 = parse_config("A3_B5")
FIRST_OF_SIZE = "(the first of 2 molecules, after the larger ones)"
"""How a size's first family out of place is named: both A3_B5 families have 2 molecules."""


def lines_of(
    stores: dict[str, Path], tmp_path: Path, capsys, damage: Callable[[sqlite3.Connection], None]
) -> tuple[dict, dict[str, list[str]]]:
    """(the ``--json`` report, each finding's lines) of a damaged copy of the compact A3_B5: exit 1."""
    _, found, lines = damaged_report(stores, tmp_path, COMPACT, damage, (), capsys)
    return found, lines


def renumbered(first: int | None, second: int | None) -> Callable[[sqlite3.Connection], None]:
    """Families 43 and 45 given other canonical numbers (None: kept)."""

    def damage(connection: sqlite3.Connection) -> None:
        if first is not None:
            one(connection, FAMILY_43.format("canonical_number = ?"), first)
        if second is not None:
            one(connection, FAMILY_45.format("canonical_number = ?"), second)

    return damage


def out_of_order(number: str) -> list[str]:
    """The line of the second family (position 1), numbered as the first one, both ``number``."""
    return [
        f"family {number}: position: stored 1 after the family {number} at 0, "
        f"computed 1 after a family numbered below {number}"
    ]


def smallest(*pairs: tuple[str, int]) -> list[str]:
    """The lines of families numbered other than their molecules' smallest canonical number."""
    return [
        f"family {n}: stored {n}, computed {c} (the smallest canonical number of its molecules)"
        for n, c in pairs
    ]


@pytest.mark.parametrize(
    "first, second, position, canonical",
    [
        # the first family numbered 1: no family before it, so in order whatever its number
        (1, None, [], smallest(("1", 43))),
        # the second family numbered as the first: equal numbers are out of order
        (None, 43, out_of_order("43"), smallest(("43", 45))),
        # both numbered 1, the first molecule: two molecules' numbers still, compared
        (1, 1, out_of_order("1"), smallest(("1", 43), ("1", 45))),
        # both numbered 2,300, the last molecule
        (2300, 2300, out_of_order("2,300"), smallest(("2,300", 43), ("2,300", 45))),
    ],
    ids=["first-numbered-1", "second-equal-to-first", "both-1", "both-2300"],
)
def test_families_numbered_as_the_first_or_last_molecule_are_ordered(
    a3_b5_stores: dict[str, Path], tmp_path: Path, capsys, first, second, position, canonical
) -> None:
    """The position order compares two families' numbers whenever both are molecules' (1 to
    2,300 included), the first family's with none: equal numbers are out of order, and the first
    family is in order even numbered 1.  The numbers themselves are named as not the smallest."""
    found, lines = lines_of(a3_b5_stores, tmp_path, capsys, renumbered(first, second))
    assert lines.get("groups.position", []) == position
    assert lines["groups.canonical_number"] == canonical
    assert ("groups.position" in raised_findings(found)) == bool(position)


def test_spectra_before_names_its_stored_and_computed_values(
    a3_b5_stores: dict[str, Path], tmp_path: Path, capsys
) -> None:
    """spectra_before one too many on the second family: the line is exactly the two figures."""
    found, lines = lines_of(
        a3_b5_stores, tmp_path, capsys, lambda c: one(c, FAMILY_45.format("spectra_before = 5"))
    )
    assert raised_findings(found) == {"groups.spectra_before"}
    assert lines["groups.spectra_before"] == ["family 45: spectra_before: stored 5, computed 4"]


@pytest.mark.parametrize(
    "column, value, lines",
    [
        (
            "size_position",
            1,
            [
                "family 45: size_position: stored 1, computed 2 (its size's next)",
                f"family 43: size_position: stored 1, computed 0 {FIRST_OF_SIZE}",
            ],
        ),
        (
            "size_spectra_before",
            1,
            [
                "family 45: size_spectra_before: stored 4, computed 5 (its size's next)",
                f"family 43: size_spectra_before: stored 1, computed 0 {FIRST_OF_SIZE}",
            ],
        ),
    ],
)
def test_the_first_family_of_a_size_out_of_place_is_named(
    a3_b5_stores: dict[str, Path], tmp_path: Path, capsys, column: str, value: int, lines: list[str]
) -> None:
    """Family 43, the first of size 2 (the only size), given ordinal 1: where a size starts is
    checked at the end (after every larger size: none here, so 0), and named so; the next family
    of the size follows the stored one, so it is named too."""
    found, named = lines_of(
        a3_b5_stores, tmp_path, capsys, lambda c: one(c, FAMILY_43.format(f"{column} = ?"), value)
    )
    assert raised_findings(found) == {f"groups.{column}"}
    assert named[f"groups.{column}"] == lines


@pytest.mark.parametrize(
    "family, numbers, line",
    [
        # inside the first family; its last number (43) below the next family's first (45)
        (FAMILY_43, (43, 43), "family 43: numbers: stored [43, 43], computed"),
        # inside a later family
        (FAMILY_45, (45, 45), "family 45: numbers: stored [45, 45], computed"),
    ],
    ids=["first-family", "second-family"],
)
def test_a_molecule_repeated_inside_a_family_is_named(
    a3_b5_stores: dict[str, Path], tmp_path: Path, capsys, family: str, numbers: tuple[int, ...], line: str
) -> None:
    """A family's blob holding one molecule twice: the numbers of each family must increase, in
    whichever family of the block it is, while those of two neighbouring families need not."""
    found, lines = lines_of(
        a3_b5_stores, tmp_path, capsys, lambda c: one(c, family.format("numbers = ?"), packed(*numbers))
    )
    assert lines["groups.numbers"] == [f"{line} 2 or more increasing numbers from 1 to 2,300"]
    assert {"groups.numbers", "groups.nb_mol", "groups.max_diff"} <= raised_findings(found)


MALFORMED_45 = {
    "position": "'p'",
    "canonical_number": "'c'",
    "key": "'k'",
    "nb_mol": "'n'",
    "spectra": "'s'",
    "max_diff": "'m'",
    "spectrum": "X'00'",
    "numbers": "'b'",
    "spectra_before": "'sb'",
    "size_position": "'sp'",
    "size_spectra_before": "'ss'",
}
"""Every value of family 45's row of another type (text for a number, a blob for text, text for a blob)."""


@pytest.mark.parametrize("block", [check.blocks.BLOCK, 1])
def test_a_row_whose_every_value_is_of_another_type_is_named_and_the_others_checked(
    a3_b5_stores: dict[str, Path], tmp_path: Path, capsys, monkeypatch, block: int
) -> None:
    """Family 45's row made of text and blobs: each value is named with the type it should have,
    the row is left out (a block with only it keeps nothing: blocks of 1), and family 43, in its
    block, is still re-traced and checked."""
    monkeypatch.setattr(check.blocks, "BLOCK", block)
    assignments = ", ".join(f"{name} = {value}" for name, value in MALFORMED_45.items())
    found, lines = lines_of(a3_b5_stores, tmp_path, capsys, lambda c: one(c, FAMILY_45.format(assignments)))
    assert lines["groups.malformed"] == [
        f"family at position 'p': {name}: stored {stored}, computed {kind}"
        for name, stored, kind in [
            ("position", "'p'", "an integer"),
            ("canonical_number", "'c'", "an integer"),
            ("key", "'k'", "an integer"),
            ("nb_mol", "'n'", "an integer"),
            ("spectra", "'s'", "an integer"),
            ("max_diff", "'m'", "an integer"),
            ("spectra_before", "'sb'", "an integer"),
            ("size_position", "'sp'", "an integer"),
            ("size_spectra_before", "'ss'", "an integer"),
            ("spectrum", "b'\\x00'", "text"),
            ("numbers", "'b'", "a blob"),
        ]
    ]
    groups = next(c for c in found["checks"] if c["name"] == "groups")
    assert groups["covered"].startswith("1 families (2 molecules re-traced), 4 ambiguous spectra: ")
    assert set(groups["findings"]) == {"groups.malformed", "groups.shard_totals", "groups.shard_sizes"}


def test_the_groups_progress_counts_the_families_read(a3_b5_stores: dict[str, Path], monkeypatch) -> None:
    """Blocks of one family: the bar moves a family at a time out of the 2, reaches them both only
    at the end, and the molecules re-traced are counted over every block."""
    monkeypatch.setattr(check.blocks, "BLOCK", 1)
    report, seen = progress_of(a3_b5_stores[COMPACT], A3_B5)
    assert report.ok
    assert [(done, total) for _, done, total in dict(groupby_names(seen))["groups"]] == [
        (0, 2),
        (1, 2),
        (1, 2),
        (2, 2),
    ]
    groups = next(result for result in report.results if result.name == "groups")
    assert groups.covered.startswith("2 families (4 molecules re-traced), 8 ambiguous spectra: ")


def test_the_groups_progress_of_no_family_is_one_step(tmp_path: Path) -> None:
    """A1_B3 (no ambiguous spectrum, so no family): the bar's total is 1 (the CLI shows 'running',
    then 'done'), not a count of families it would lack."""
    config = parse_config("A1_B3")
    path = tmp_path / "a1b3.sqlite"
    explore(config, path, workers=1, store=COMPACT)
    close_database()
    report, seen = progress_of(path, config)
    assert report.ok
    assert [(done, total) for _, done, total in dict(groupby_names(seen))["groups"]] == [(0, 1), (1, 1)]


@pytest.mark.parametrize(
    "name, numbers",
    [
        # C(36, 13) = 2,310,789,600 molecules, packed in 4 bytes: numbers past 2^31
        ("A13_B6", [[5, 2_000_000_000], [9, 2_310_789_600]]),
        # C(169, 12) = 759,825,846,558,448,488 molecules (above 2^53, a float's exact integers), in 8 bytes
        ("A12_B13", [[2**53 + 1, 2**53 + 3], [2**53 + 5, 759_825_846_558_448_488]]),
    ],
)
def test_unpack_reads_the_largest_numbers_of_a_large_configuration_exactly(name: str, numbers) -> None:
    """A block of two well-formed families of a configuration too large to explore in a test: the
    families' molecules come back as stored, each with its family, none named as damaged."""
    config = parse_config(name)
    assert max(max(family) for family in numbers) <= config.nb_mol
    blobs = [np.array(family, dtype=numbers_dtype(config)).tobytes() for family in numbers]
    canonical = np.array([family[0] for family in numbers], dtype=np.int64)
    result = check.CheckResult("groups")
    block, kept = check.compact_groups.CompactGroups(config).unpack(canonical, blobs, result)
    assert result.ok and result.differences == []
    assert block.numbers.dtype == np.int64
    assert block.numbers.tolist() == [n for family in numbers for n in family]
    assert block.family_of.tolist() == [0, 0, 1, 1] and kept.tolist() == [0, 1]
    assert block.canonical.tolist() == canonical.tolist()
