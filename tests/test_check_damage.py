"""``bbcore check``: every finding of the checker's own registry is planted in a real file, and named.

``check.FINDINGS`` lists what ``check`` can find, each with the stores it
applies to.  ``PLANTS`` holds, for every (finding, store), a damage made with
plain ``sqlite3`` in a copy of a clean A3_B5 file (2,300 molecules, 8
spectral groups in 2 families), as someone editing a file by hand, or a bad
disk, would; the exact set of findings the damage must raise; and a piece of
the line that must name it.  A finding added to the registry without a plant
here fails ``test_every_finding_has_a_planted_damage``.  ``EDGES`` holds more
damage of some findings, at the edges one plant leaves out (a blob's length,
the first and last molecule, a symmetric group, a name that is no transform),
found by the mutation run (``bench/mutation.py check``).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from bbcore import check
from bbcore.cli import main
from bbcore.compact.trace import PROFILE_FIELDS
from bbcore.config import parse_config
from bbcore.families import numbers_dtype
from bbcore.numbering import atoms_of
from bbcore.store import COMPACT, FULL, MOLECULE_COLUMNS

A3_B5 = parse_config("A3_B5")
pytestmark = pytest.mark.usefixtures("remembered_reference")
REFERENCE = set(
    check.reference_sample(check.sample_numbers(A3_B5, check.SAMPLE, check.SEED), 1000, check.SEED)
)
"""The molecules the reference sample re-traces by default (the engine's sample is every molecule)."""
NOT_REFERENCE = sorted(set(range(1, A3_B5.nb_mol + 1)) - REFERENCE)
FAMILY_43_SPECTRUM = "@&a&@@&@&b@cac@b&@&@"
"""The first spectrum of the family of molecule 43 (molecules 43 and 752)."""
ROT90_43 = "a&@&@@&b&@@&@&a@cbc@"
"""Its image by rot90 (canonical number 43, transform rot90)."""
DIAG1_43 = "@&@&a@bcb@a&@&@@&c&@"
"""Its image by diag-1, whose molecules the reference sample re-traces (molecule 175)."""


@dataclass(frozen=True)
class Plant:
    """A damage: it changes the file, and returns a piece of the line that must name it."""

    damage: Callable[[sqlite3.Connection], str | dict[str, str]]  # one piece, or one per finding
    findings: frozenset[str]  # every finding the damaged file must raise, no more
    args: tuple[str, ...] = ()


PLANTS: dict[tuple[str, str], Plant] = {}


def plant(keys: list[tuple[str, str]], findings: set[str], args: tuple[str, ...] = ()):
    """Register a damage as the plant of these (finding, store)."""

    def register(damage: Callable[[sqlite3.Connection], str]) -> Callable:
        for key in keys:
            assert key not in PLANTS, key
            PLANTS[key] = Plant(damage, frozenset(findings), args)
        return damage

    return register


def both(finding: str) -> list[tuple[str, str]]:
    return [(finding, FULL), (finding, COMPACT)]


def one(connection: sqlite3.Connection, statement: str, *parameters) -> None:
    """Run a statement that must change exactly one row."""
    assert connection.execute(statement, parameters).rowcount == 1, statement


def stored_value(connection: sqlite3.Connection, column: str, number: int):
    return connection.execute(
        f"SELECT {column} FROM Molecules WHERE config = 'A3_B5' AND number = ?", (number,)
    ).fetchone()[0]


# -- the file and the configuration ------------------------------------------------------


@plant([("integrity.damage", FULL)], {"integrity.damage"})
def index_disagrees_with_its_table(connection: sqlite3.Connection) -> str:
    """The Spectrums index's definition edited: its entries no longer match the table's rows.

    ``quick_check`` passes this file; only ``integrity_check`` sees it (the
    reason ``check`` runs the latter).
    """
    connection.execute("PRAGMA writable_schema = ON")
    one(
        connection,
        'UPDATE sqlite_schema SET sql = \'CREATE INDEX "spectrum_config_transform_nb_mol" ON "Spectrums" '
        '("config", "nb_mol", "transform")\' WHERE name = \'spectrum_config_transform_nb_mol\'',
    )
    return (
        "integrity_check: stored 'row 1 missing from index spectrum_config_transform_nb_mol', computed 'ok'"
    )


@plant([("integrity.damage", COMPACT)], {"integrity.damage"})
def family_index_disagrees_with_its_table(connection: sqlite3.Connection) -> str:
    """The Families size index said to be on spectra_before: its entries no longer match the rows."""
    connection.execute("PRAGMA writable_schema = ON")
    one(
        connection,
        'UPDATE sqlite_schema SET sql = \'CREATE INDEX "Families_A3_B5_size" ON "Families" '
        "(spectra_before) WHERE config = ''A3_B5''' WHERE name = 'Families_A3_B5_size'",
    )
    return "integrity_check: stored 'row 2 missing from index Families_A3_B5_size', computed 'ok'"


@plant(both("configuration.nb_mol"), {"configuration.nb_mol"})
def configuration_nb_mol(connection: sqlite3.Connection) -> str:
    one(connection, "UPDATE Configurations SET nb_mol = 2299 WHERE config = 'A3_B5'")
    return "nb_mol: stored 2,299, computed 2,300"


@plant(both("configuration.atoms"), {"configuration.atoms"})
def configuration_atoms(connection: sqlite3.Connection) -> str:
    one(connection, "UPDATE Configurations SET nb_atoms = 4 WHERE config = 'A3_B5'")
    return "nb_atoms: stored 4, computed 3"


@plant(both("configuration.width"), {"configuration.width"})
def configuration_width(connection: sqlite3.Connection) -> str:
    one(connection, "UPDATE Configurations SET width = 6 WHERE config = 'A3_B5'")
    return "width: stored 6, computed 5"


@plant(both("configuration.ranges_molecules"), {"configuration.ranges_molecules"})
def ranges_miscounted(connection: sqlite3.Connection) -> str:
    one(connection, "UPDATE ExploredRanges SET nb_mol = nb_mol + 1 WHERE config = 'A3_B5'")
    return "molecules in ExploredRanges: stored 2,301, computed 2,300"


@plant(both("configuration.ranges_hole"), {"configuration.ranges_hole"})
def ranges_leave_a_hole(connection: sqlite3.Connection) -> str:
    """The one range cut in two, a molecule short of touching: a hole of one molecule, 1,000."""
    one(connection, "UPDATE ExploredRanges SET stop = 1000, nb_mol = 999 WHERE config = 'A3_B5'")
    one(connection, "INSERT INTO ExploredRanges VALUES ('A3_B5', 1001, 2301, 1301, 'x')")
    return "ExploredRanges: stored nothing from 1,000 to 1,000, computed every number"


@plant(both("configuration.ranges_overlap"), {"configuration.ranges_overlap"})
def ranges_overlap(connection: sqlite3.Connection) -> str:
    one(connection, "INSERT INTO ExploredRanges VALUES ('A3_B5', 100, 200, 0, 'x')")
    return (
        "ExploredRanges: stored 100 to 199 overlapping the range before it (to 2,300),"
        " computed each number once"
    )


@plant(both("configuration.ranges_beyond"), {"configuration.ranges_beyond"})
def ranges_beyond(connection: sqlite3.Connection) -> str:
    one(connection, "UPDATE ExploredRanges SET stop = 2306 WHERE config = 'A3_B5'")
    return "ExploredRanges: stored a range to 2,305, computed numbers to 2,300"


# -- a full store ------------------------------------------------------------------------


@plant(
    [("count.rows", FULL), ("families.missing", FULL), ("engine.absent", FULL)],
    {"count.rows", "families.missing", "engine.absent"},
)
def deleted_molecule(connection: sqlite3.Connection) -> dict[str, str]:
    """Molecule 1,500 (a spectrum of its own, not in the reference sample) deleted."""
    assert 1500 not in REFERENCE
    one(connection, "DELETE FROM Molecules WHERE config = 'A3_B5' AND number = 1500")
    return {
        "count.rows": "molecule rows: stored 2,299, computed 2,300",
        "families.missing": "molecule 1,500: row: stored absent, computed a member of the group of 145",
        "engine.absent": "molecule 1,500: row: stored absent, computed present",
    }


@plant(
    [("reference.absent", FULL)],
    {"count.rows", "families.missing", "engine.absent", "reference.absent"},
)
def deleted_reference_molecule(connection: sqlite3.Connection) -> str:
    number = min(REFERENCE - {43, 752})
    one(connection, "DELETE FROM Molecules WHERE config = 'A3_B5' AND number = ?", number)
    return f"molecule {number:,}: row: stored absent, computed present"


@plant([("families.stray", FULL)], {"count.rows", "families.stray"})
def stray_molecule(connection: sqlite3.Connection) -> str:
    """A copy of molecule 1,500's row numbered 2,301 (a spectrum of its own): no molecule has that number."""
    columns = ", ".join(MOLECULE_COLUMNS)
    own = {"number": "2301", "spectrum": "'stray'"}
    copied = ", ".join(own.get(c, c) for c in MOLECULE_COLUMNS)
    one(
        connection,
        f"INSERT INTO Molecules ({columns}) "
        f"SELECT {copied} FROM Molecules WHERE config = 'A3_B5' AND number = 1500",
    )
    return "molecule 2,301: number: stored a row, computed none: numbers go from 1 to 2,300"


@plant([("groups.index", FULL)], {"groups.index"})
def spectrum_index_dropped(connection: sqlite3.Connection) -> str:
    connection.execute('DROP INDEX "Molecules_A3_B5_spectrum"')
    return 'spectrum index: stored missing, computed "Molecules_A3_B5_spectrum"'


@plant([("families.index", FULL)], {"families.index"})
def canonical_index_dropped(connection: sqlite3.Connection) -> str:
    connection.execute('DROP INDEX "Molecules_A3_B5_canonical"')
    return 'canonical_number index: stored missing, computed "Molecules_A3_B5_canonical"'


@plant([("groups.missing_row", FULL)], {"groups.missing_row"})
def full_spectrum_row_deleted(connection: sqlite3.Connection) -> str:
    one(connection, "DELETE FROM Spectrums WHERE config = 'A3_B5' AND spectrum = ?", ROT90_43)
    return f"spectrum {ROT90_43}: stored no Spectrums row, computed nb_mol 2"


@plant([("groups.extra_row", FULL)], {"groups.extra_row"})
def full_spectrum_row_added(connection: sqlite3.Connection) -> str:
    """A Spectrums row for molecule 5's spectrum, which no other molecule has."""
    spectrum = stored_value(connection, "spectrum", 5)
    one(connection, "INSERT INTO Spectrums VALUES ('A3_B5', ?, 2, 'id', 5)", spectrum)
    return f"spectrum {spectrum}: stored nb_mol 2, computed fewer than 2 molecules have it"


@plant([("groups.nb_mol", FULL)], {"groups.nb_mol"})
def full_wrong_nb_mol(connection: sqlite3.Connection) -> str:
    one(
        connection,
        "UPDATE Spectrums SET nb_mol = 3 WHERE config = 'A3_B5' AND spectrum = ?",
        FAMILY_43_SPECTRUM,
    )
    return f"spectrum {FAMILY_43_SPECTRUM}: nb_mol: stored 3, computed 2"


@plant([("groups.transform", FULL)], {"groups.transform"})
def full_wrong_group_transform(connection: sqlite3.Connection) -> str:
    one(
        connection,
        "UPDATE Spectrums SET transform = 'rot270' WHERE config = 'A3_B5' AND spectrum = ?",
        ROT90_43,
    )
    return f"spectrum {ROT90_43}: transform: stored rot270, computed rot90"


@plant([("groups.canonical_number", FULL)], {"groups.canonical_number"})
def full_wrong_group_canonical(connection: sqlite3.Connection) -> str:
    one(
        connection,
        "UPDATE Spectrums SET canonical_number = 44 WHERE config = 'A3_B5' AND spectrum = ?",
        ROT90_43,
    )
    return f"spectrum {ROT90_43}: canonical_number: stored 44, computed 43"


def not_reference(number: int) -> int:
    """The first molecule from ``number`` on that the reference sample leaves out."""
    return next(n for n in NOT_REFERENCE if n >= number)


@plant([("families.canonical_number", FULL)], {"families.canonical_number", "engine.column"})
def molecule_canonical_number(connection: sqlite3.Connection) -> str:
    number = not_reference(1200)
    canonical = stored_value(connection, "canonical_number", number)
    one(
        connection,
        "UPDATE Molecules SET canonical_number = 150 WHERE config = 'A3_B5' AND number = ?",
        number,
    )
    return f"molecule {number:,}: canonical_number: stored 150, computed {canonical:,}"


@plant([("families.transform", FULL)], {"families.transform", "engine.column"})
def molecule_transform(connection: sqlite3.Connection) -> str:
    number = not_reference(1000)
    stored = stored_value(connection, "transform", number)
    other = "rot180" if stored != "rot180" else "rot90"
    one(connection, "UPDATE Molecules SET transform = ? WHERE config = 'A3_B5' AND number = ?", other, number)
    return f"molecule {number:,}: transform: stored '{other}', computed '{stored}'"


@plant([("families.board", FULL)], {"families.board", "engine.column"})
def molecule_board(connection: sqlite3.Connection) -> str:
    number = not_reference(600)
    board = stored_value(connection, "molecule", number)
    other = board[1:] + board[0] if board[0] != board[-1] else board[::-1]
    assert other != board
    one(connection, "UPDATE Molecules SET molecule = ? WHERE config = 'A3_B5' AND number = ?", other, number)
    return f"molecule {number:,}: molecule: stored '{other}', computed '{board}'"


@plant(
    [("families.spectrum", FULL), ("reference.column", FULL)],
    {"families.spectrum", "engine.column", "reference.column"},
)
def molecule_spectrum(connection: sqlite3.Connection) -> str:
    """Molecule 1,000's spectrum with its first absorption made a reflection (well formed, its own)."""
    assert 1000 in REFERENCE
    before = stored_value(connection, "spectrum", 1000)
    after = before.replace("@", "&", 1)
    one(connection, "UPDATE Molecules SET spectrum = ? WHERE config = 'A3_B5' AND number = 1000", after)
    return f"molecule 1,000: spectrum: stored '{after}', computed '{before}'"


@plant([("families.malformed", FULL)], {"families.malformed", "engine.column"})
def molecule_malformed_spectrum(connection: sqlite3.Connection) -> str:
    number = not_reference(5)
    one(connection, "UPDATE Molecules SET spectrum = 'zz' WHERE config = 'A3_B5' AND number = ?", number)
    return f"molecule {number}: spectrum: stored 'zz', computed a well-formed spectrum"


@plant([("engine.column", FULL)], {"engine.column"})
def changed_statistic(connection: sqlite3.Connection) -> str:
    """A statistic that only re-tracing sees (the families phase reads no statistic)."""
    number = not_reference(777)
    one(
        connection,
        "UPDATE Molecules SET out_tot_length = out_tot_length + 1 WHERE config = 'A3_B5' AND number = ?",
        number,
    )
    return f"molecule {number}: out_tot_length: stored"


# -- a compact store ---------------------------------------------------------------------


def packed(*numbers: int) -> bytes:
    """Molecule numbers as ``Families.numbers`` packs them for A3_B5."""
    return np.array(numbers, dtype=numbers_dtype(A3_B5)).tobytes()


FAMILY_43 = "UPDATE Families SET {} WHERE config = 'A3_B5' AND canonical_number = 43"
"""A change of family 43 (position 0, molecules 43 and 752, 4 spectra, size_position 0)."""
FAMILY_45 = "UPDATE Families SET {} WHERE config = 'A3_B5' AND canonical_number = 45"
"""A change of family 45 (position 1, molecules 45 and 275, 4 spectra, size_position 1)."""


@plant([("count.molecule_rows", COMPACT)], {"count.molecule_rows"})
def compact_with_a_molecule_row(connection: sqlite3.Connection) -> str:
    values = {"config": "A3_B5", "number": 1, "canonical_number": 1, "molecule": "O" * 3 + "-" * 22}
    row = [
        values.get(c, "@" * 20 if c == "spectrum" else "id" if c == "transform" else 0)
        for c in MOLECULE_COLUMNS
    ]
    one(
        connection,
        f"INSERT INTO Molecules ({', '.join(MOLECULE_COLUMNS)}) VALUES ({', '.join('?' * len(row))})",
        *row,
    )
    return "molecule rows of a compact store: stored 1, computed 0"


PROFILE_OF_MOST = "(SELECT rowid FROM Profiles WHERE config = 'A3_B5' ORDER BY molecules DESC LIMIT 1)"


@plant([("count.profiles", COMPACT)], {"count.profiles"})
def profiles_miscounted(connection: sqlite3.Connection) -> str:
    one(connection, f"UPDATE Profiles SET molecules = molecules + 1 WHERE rowid = {PROFILE_OF_MOST}")
    return "molecules in Profiles: stored 2,301, computed 2,300"


@plant([("engine.profiles_counted", COMPACT)], {"count.profiles", "engine.profiles_counted"}, ("--all",))
def profiles_miscounted_all(connection: sqlite3.Connection) -> str:
    profiles_miscounted(connection)
    return "(molecules, lowest): stored ("


@plant([("engine.profile", COMPACT)], {"engine.profile"})
def profile_lowest_too_high(connection: sqlite3.Connection) -> str:
    """A profile whose lowest molecule the reference sample leaves out, its lowest made higher."""
    rows = connection.execute(
        "SELECT rowid, lowest FROM Profiles WHERE config = 'A3_B5' ORDER BY lowest"
    ).fetchall()
    rowid, lowest = next((r, low) for r, low in rows if low not in REFERENCE)
    one(connection, "UPDATE Profiles SET lowest = lowest + 1 WHERE rowid = ?", rowid)
    return f"molecule {lowest:,}: Profiles ("


@plant([("reference.profile", COMPACT)], {"engine.profile", "reference.profile"})
def profile_lowest_too_high_in_reference(connection: sqlite3.Connection) -> str:
    rows = connection.execute(
        "SELECT rowid, lowest FROM Profiles WHERE config = 'A3_B5' ORDER BY lowest"
    ).fetchall()
    rowid, lowest = next((r, low) for r, low in rows if low in REFERENCE)
    one(connection, "UPDATE Profiles SET lowest = lowest + 1 WHERE rowid = ?", rowid)
    return f"molecule {lowest:,}: Profiles ("


@plant([("groups.index", COMPACT)], {"groups.index"})
def family_key_index_dropped(connection: sqlite3.Connection) -> str:
    """The key index dropped: the samples still find their families (a scan), the check names it."""
    connection.execute('DROP INDEX "Families_A3_B5_key"')
    return 'family index: stored missing, computed "Families_A3_B5_key"'


@plant(
    [("groups.nb_mol", COMPACT)],
    {"groups.nb_mol", "groups.shard_sizes"},
)
def compact_wrong_nb_mol(connection: sqlite3.Connection) -> str:
    """Family 43 said to have 3 molecules: first in the size order still, so its ordinals hold."""
    one(connection, FAMILY_43.format("nb_mol = 3"))
    return "family 43: nb_mol: stored 3, computed 2"


@plant([("groups.spectra", COMPACT)], {"groups.spectra"})
def compact_wrong_spectra(connection: sqlite3.Connection) -> str:
    one(connection, FAMILY_43.format("spectra = 3"))
    return "family 43: spectra: stored 3, computed 4"


@plant([("groups.spectrum", COMPACT)], {"groups.spectrum"})
def compact_wrong_spectrum(connection: sqlite3.Connection) -> str:
    """Family 43's first spectrum said to be its rot90 image (a spectrum of the family, not c's own)."""
    one(connection, FAMILY_43.format("spectrum = ?"), ROT90_43)
    return f"family 43: spectrum: stored '{ROT90_43}', computed '{FAMILY_43_SPECTRUM}' (molecule 43's"


@plant([("groups.key", COMPACT)], {"groups.key"})
def compact_wrong_key(connection: sqlite3.Connection) -> str:
    """Family 43's key changed: a typed spectrum of it would find nothing (nor do the samples)."""
    (key,) = connection.execute("SELECT key FROM Families WHERE canonical_number = 43").fetchone()
    one(connection, FAMILY_43.format("key = ?"), key + 1)
    return f"family 43: key: stored {key + 1:,}, computed {key:,}"


@plant([("groups.max_diff", COMPACT)], {"groups.max_diff"})
def compact_wrong_max_diff(connection: sqlite3.Connection) -> str:
    one(connection, FAMILY_43.format("max_diff = 2"))
    return "family 43: max_diff: stored 2, computed 1"


@plant([("groups.position", COMPACT)], {"groups.position"})
def compact_position_gap(connection: sqlite3.Connection) -> str:
    one(connection, FAMILY_45.format("position = 2"))
    return "family 45: position: stored 2 after the family 43 at 0, computed 1"


@plant([("groups.spectra_before", COMPACT)], {"groups.spectra_before"})
def compact_wrong_spectra_before(connection: sqlite3.Connection) -> str:
    one(connection, FAMILY_45.format("spectra_before = 5"))
    return "family 45: spectra_before: stored 5, computed 4"


@plant([("groups.size_position", COMPACT)], {"groups.size_position"})
def compact_wrong_size_position(connection: sqlite3.Connection) -> str:
    one(connection, FAMILY_45.format("size_position = 2"))
    return "family 45: size_position: stored 2, computed 1 (its size's next)"


@plant([("groups.size_spectra_before", COMPACT)], {"groups.size_spectra_before"})
def compact_wrong_size_spectra_before(connection: sqlite3.Connection) -> str:
    one(connection, FAMILY_45.format("size_spectra_before = 3"))
    return "family 45: size_spectra_before: stored 3, computed 4 (its size's next)"


@plant(
    [("engine.not_in_group", COMPACT), ("reference.not_in_group", COMPACT)],
    {"groups.nb_mol", "groups.numbers", "groups.max_diff", "engine.not_in_group", "reference.not_in_group"},
)
def compact_molecule_left_out(connection: sqlite3.Connection) -> dict[str, str]:
    """Molecule 43 left out of its family: the family has one molecule, and 43 is in none of its groups."""
    one(connection, FAMILY_43.format("numbers = ?"), packed(752))
    return {
        "engine.not_in_group": f"molecule 43: group of spectrum {FAMILY_43_SPECTRUM}: stored not among",
        "reference.not_in_group": f"molecule 175: group of spectrum {DIAG1_43}: stored not among",
    }


@plant([("groups.canonical_number", COMPACT)], {"groups.canonical_number", "groups.position"})
def compact_wrong_family_canonical(connection: sqlite3.Connection) -> str:
    """Family 43 said to be family 752 (its other molecule: the same spectrum, the same images).

    Then it is out of order too: family 45 follows it at position 1.
    """
    one(connection, FAMILY_43.format("canonical_number = 752"))
    return "family 752: stored 752, computed 43 (the smallest canonical number of its molecules)"


@plant([("groups.malformed", COMPACT)], {"groups.malformed", "groups.shard_totals", "groups.shard_sizes"})
def compact_text_for_a_number(connection: sqlite3.Connection) -> str:
    """Family 45's max_diff made text: the row is named and left out (so the shards count one more)."""
    one(connection, FAMILY_45.format("max_diff = 'one'"))
    return "family at position 1: max_diff: stored 'one', computed an integer"


@plant([("groups.numbers", COMPACT)], {"groups.numbers"})
def compact_family_blob_damaged(connection: sqlite3.Connection) -> str:
    """Family 43's molecules with a number past the last molecule appended."""
    one(connection, FAMILY_43.format("numbers = ?"), packed(43, 752, 5000))
    return "family 43: numbers: stored [43, 752, 5,000], computed 2 or more increasing numbers from 1"


@plant(
    [("groups.member", COMPACT)],
    {"groups.member", "groups.max_diff", "engine.not_in_group", "reference.not_in_group"},
)
def compact_family_member_replaced(connection: sqlite3.Connection) -> str:
    """Family 43's molecule 43 replaced by 44, which has another spectrum."""
    one(connection, FAMILY_43.format("numbers = ?"), packed(44, 752))
    return f"molecule 44: spectrum (in the family of 43): stored '{FAMILY_43_SPECTRUM}' (molecule 43's)"


@plant([("groups.shard_sizes", COMPACT)], {"groups.shard_sizes"})
def compact_shard_sizes(connection: sqlite3.Connection) -> str:
    one(connection, "UPDATE GroupedShards SET sizes = ? WHERE config = 'A3_B5'", '{"2": [2, 9]}')
    return "GroupedShards.sizes (families, spectra): stored {2: (2, 9)}, computed {2: (2, 8)}"


@plant([("groups.shard_totals", COMPACT)], {"groups.shard_totals"})
def compact_shard_totals(connection: sqlite3.Connection) -> str:
    one(connection, "UPDATE GroupedShards SET spectra = spectra + 1 WHERE config = 'A3_B5'")
    return "GroupedShards (spectra, families): stored (9, 2), computed (8, 2) in the families"


@plant(
    [("count.malformed", COMPACT)],
    {"count.malformed", "count.profiles", "engine.profile", "reference.profile"},
)
def profile_text_for_a_number(connection: sqlite3.Connection) -> str:
    """The profile of most molecules given a text lowest: named and left out (so its molecules are
    counted no more, and have no profile row)."""
    one(connection, f"UPDATE Profiles SET lowest = 'one' WHERE rowid = {PROFILE_OF_MOST}")
    return ": lowest: stored 'one', computed an integer"


@plant([("count.repeated", COMPACT)], {"count.repeated"})
def profile_row_repeated(connection: sqlite3.Connection) -> str:
    """The profile of most molecules in a second row, of no molecule, read after the first."""
    names = ", ".join((*PROFILE_FIELDS, "lowest"))
    one(
        connection,
        f"INSERT INTO Profiles (config, {names}, molecules) "
        f"SELECT config, {names}, 0 FROM Profiles WHERE rowid = {PROFILE_OF_MOST}",
    )
    return ": stored 2 rows, computed 1 row"


# -- more damage of a finding: the edges one plant per finding leaves out -----------------------


@dataclass(frozen=True)
class Edge:
    """A damage beyond ``PLANTS``' one per finding, in one store.

    ``damage`` returns, per finding, a piece of a line that names it, several
    pieces (a tuple: each in some line), or the finding's every line (a list);
    ``covered.<check>``: the start of what that check's line says it covered.
    """

    store: str
    damage: Callable[[sqlite3.Connection], dict[str, str | tuple[str, ...] | list[str]]]
    findings: frozenset[str]
    args: tuple[str, ...] = ()


EDGES: dict[str, Edge] = {}


def edge(store: str, findings: set[str], args: tuple[str, ...] = ()):
    """Register a damage under its function's name."""

    def register(damage: Callable) -> Callable:
        EDGES[damage.__name__] = Edge(store, damage, frozenset(findings), args)
        return damage

    return register


@edge(FULL, {"configuration.ranges_hole"})
def ranges_stop_a_molecule_short_of_the_last(connection: sqlite3.Connection) -> dict:
    """The hole at the end: the one range stops before the last molecule (its count kept)."""
    one(connection, "UPDATE ExploredRanges SET stop = 2300 WHERE config = 'A3_B5'")
    return {
        "configuration.ranges_hole": [
            "ExploredRanges: stored nothing from 2,300 to 2,300, computed every number"
        ]
    }


@edge(FULL, {"configuration.ranges_beyond"})
def ranges_go_one_molecule_past_the_last(connection: sqlite3.Connection) -> dict:
    """A range one molecule too long (its count kept)."""
    one(connection, "UPDATE ExploredRanges SET stop = 2302 WHERE config = 'A3_B5'")
    return {
        "configuration.ranges_beyond": ["ExploredRanges: stored a range to 2,301, computed numbers to 2,300"]
    }


ITEM = numbers_dtype(A3_B5).itemsize
"""Bytes per number in a ``Families.numbers`` blob of A3_B5."""
BROKEN_45 = (FAMILY_45.format("numbers = ?"), packed(45, 275) + b"\0")
"""Family 45's blob with a byte too many: its block is unpacked a family at a time."""
BROKEN_45_LINE = f"family 45: numbers: stored {2 * ITEM + 1} bytes, computed a multiple of {ITEM}"


def member_of_a_group_of(size: int, connection: sqlite3.Connection) -> tuple[int, int]:
    """(number, canonical number) of a member of an enantiomer group of ``size``: the first that is
    not the canonical molecule and that the reference sample leaves out."""
    rows = connection.execute(
        "SELECT number, canonical_number FROM Molecules WHERE config = 'A3_B5' AND canonical_number IN "
        "(SELECT canonical_number FROM Molecules WHERE config = 'A3_B5' "
        "GROUP BY canonical_number HAVING COUNT(*) = ?) ORDER BY number",
        (size,),
    ).fetchall()
    return next((n, c) for n, c in rows if n != c and n not in REFERENCE)


@edge(COMPACT, {"groups.numbers"})
def family_blob_with_a_byte_too_many(connection: sqlite3.Connection) -> dict:
    one(connection, BROKEN_45[0], BROKEN_45[1])
    return {"groups.numbers": [BROKEN_45_LINE]}


@edge(COMPACT, {"groups.numbers"})
def family_blob_with_a_repeat(connection: sqlite3.Connection) -> dict:
    one(connection, FAMILY_43.format("numbers = ?"), packed(43, 43, 752))
    return {
        "groups.numbers": [
            "family 43: numbers: stored [43, 43, 752], computed 2 or more increasing numbers from 1 to 2,300"
        ]
    }


@edge(COMPACT, {"groups.numbers"})
def family_blob_of_six_numbers_listed_whole(connection: sqlite3.Connection) -> dict:
    one(connection, FAMILY_43.format("numbers = ?"), packed(43, 752, 2301, 2302, 2303, 2304))
    return {"groups.numbers": "stored [43, 752, 2,301, 2,302, 2,303, 2,304], computed"}


@edge(COMPACT, {"groups.numbers"})
def family_blob_of_seven_numbers_listed_by_six(connection: sqlite3.Connection) -> dict:
    one(connection, FAMILY_43.format("numbers = ?"), packed(43, 752, 2301, 2302, 2303, 2304, 2305))
    return {"groups.numbers": "stored [43, 752, 2,301, 2,302, 2,303, 2,304, ...], computed"}


@edge(
    COMPACT,
    {"groups.numbers", "groups.member", "groups.canonical_number", "groups.nb_mol", "groups.max_diff"},
)
def damaged_block_checks_its_families_to_the_first_and_last_molecule(connection: sqlite3.Connection) -> dict:
    """Family 45's blob broken, and family 43 given molecules 1, 2 and 2,300 (other spectra).

    Those three are molecules (from 1 to C(W², N)), increasing, so they are
    re-traced and named as members with another spectrum; only family 45's
    blob is named as damaged.
    """
    one(connection, BROKEN_45[0], BROKEN_45[1])
    one(connection, FAMILY_43.format("numbers = ?"), packed(1, 2, 43, 752, 2300))
    member = f"spectrum (in the family of 43): stored '{FAMILY_43_SPECTRUM}' (molecule 43's)"
    return {
        "groups.numbers": [BROKEN_45_LINE],
        "groups.member": tuple(f"molecule {n}: {member}" for n in ("1", "2", "2,300")),
    }


@edge(COMPACT, {"groups.canonical_number"})
def family_numbered_zero(connection: sqlite3.Connection) -> dict:
    """The first family numbered 0: its number is wrong, not its position (0, the first)."""
    one(connection, FAMILY_43.format("canonical_number = 0"))
    return {"groups.canonical_number": ["family 0: stored 0, computed a number from 1 to 2,300"]}


@edge(COMPACT, {"groups.canonical_number"})
def second_family_numbered_zero(connection: sqlite3.Connection) -> dict:
    """Family 45 (position 1) numbered 0: no molecule's number, so in no order with family 43's."""
    one(connection, FAMILY_45.format("canonical_number = 0"))
    return {"groups.canonical_number": ["family 0: stored 0, computed a number from 1 to 2,300"]}


@edge(COMPACT, {"groups.canonical_number", "groups.position"})
def families_out_of_order(connection: sqlite3.Connection) -> dict:
    """Family 43 renumbered 752 (the plant of groups.canonical_number): family 45 follows a larger number."""
    compact_wrong_family_canonical(connection)
    return {
        "groups.position": [
            "family 45: position: stored 1 after the family 752 at 0, "
            "computed 1 after a family numbered below 45"
        ]
    }


@edge(COMPACT, {"groups.position"})
def first_family_not_at_zero(connection: sqlite3.Connection) -> dict:
    """Both families a position later: the first family is not at 0 (family 45 follows it right)."""
    one(connection, FAMILY_45.format("position = 2"))
    one(connection, FAMILY_43.format("position = 1"))
    return {"groups.position": ["family 43: position: stored 1 as the first family, computed 0"]}


@edge(COMPACT, {"groups.canonical_number"})
def every_family_of_a_block_numbered_as_no_molecule(connection: sqlite3.Connection) -> dict:
    """Both families left out (0 and 2,301 are no molecules): a block with nothing to re-trace."""
    one(connection, FAMILY_43.format("canonical_number = 0"))
    one(connection, FAMILY_45.format("canonical_number = 2301"))
    return {
        "covered.groups": "2 families (0 molecules re-traced), ",
        "groups.canonical_number": [
            "family 0: stored 0, computed a number from 1 to 2,300",
            "family 2,301: stored 2,301, computed a number from 1 to 2,300",
        ],
    }


FAMILY_RENUMBERED = {
    "engine.not_in_group",
    "groups.canonical_number",
    "groups.key",
    "groups.member",
    "groups.numbers",
    "groups.position",
    "groups.shard_sizes",
    "groups.shard_totals",
    "groups.spectra",
    "groups.spectrum",
    "reference.not_in_group",
}
"""A family given another molecule's number: its spectrum and key are that molecule's, its members not."""


@edge(COMPACT, FAMILY_RENUMBERED | {"groups.spectra_before", "groups.size_spectra_before"})
def family_numbered_as_the_last_molecule(connection: sqlite3.Connection) -> dict:
    """In a block unpacked family by family: 2,300 is a molecule, only not this family's smallest."""
    one(connection, BROKEN_45[0], BROKEN_45[1])
    one(connection, FAMILY_43.format("canonical_number = 2300"))
    return {
        "groups.canonical_number": [
            "family 2,300: stored 2,300, computed 43 (the smallest canonical number of its molecules)"
        ]
    }


@edge(COMPACT, FAMILY_RENUMBERED)
def family_numbered_as_the_first_molecule(connection: sqlite3.Connection) -> dict:
    one(connection, FAMILY_43.format("numbers = ?"), packed(43, 752) + b"\0")
    one(connection, FAMILY_45.format("canonical_number = 1"))
    return {
        "groups.canonical_number": [
            "family 1: stored 1, computed 45 (the smallest canonical number of its molecules)"
        ]
    }


@edge(
    COMPACT, {"count.profiles", "engine.profile", "engine.profiles_counted", "reference.profile"}, ("--all",)
)
def profile_row_deleted(connection: sqlite3.Connection) -> dict:
    """The Profiles row of the first profile deleted: with --all, the profile counted has no row."""
    row = connection.execute(
        f"SELECT {', '.join(PROFILE_FIELDS)}, molecules, lowest FROM Profiles WHERE rowid = 1"
    ).fetchone()
    one(connection, "DELETE FROM Profiles WHERE rowid = 1")
    profile, molecules, lowest = row[:-2], row[-2], row[-1]
    return {
        "engine.profiles_counted": [
            f"Profiles {profile} (molecules, lowest): stored no row, computed ({molecules}, {lowest})"
        ]
    }


@edge(COMPACT, {"count.profiles", "engine.profiles_counted"}, ("--all",))
def profile_row_of_no_molecule(connection: sqlite3.Connection) -> dict:
    nines = ", ".join(["9"] * len(PROFILE_FIELDS))
    one(connection, f"INSERT INTO Profiles SELECT config, {nines}, 1, 1 FROM Profiles WHERE rowid = 1")
    profile = tuple([9] * len(PROFILE_FIELDS))
    return {
        "engine.profiles_counted": [
            f"Profiles {profile} (molecules, lowest): stored (1, 1), computed no molecule"
        ]
    }


@edge(FULL, {"families.transform", "engine.column"})
def molecule_transform_of_no_name(connection: sqlite3.Connection) -> dict:
    """A transform that is no transform's name, on a molecule whose own is rot180 (the second)."""
    number = next(
        n
        for (n,) in connection.execute(
            "SELECT number FROM Molecules WHERE config = 'A3_B5' AND transform = 'rot180' ORDER BY number"
        )
        if n not in REFERENCE
    )
    one(
        connection,
        "UPDATE Molecules SET transform = 'sideways' WHERE config = 'A3_B5' AND number = ?",
        number,
    )
    return {"families.transform": f"molecule {number:,}: transform: stored 'sideways', computed 'rot180'"}


@edge(FULL, {"count.rows", "families.missing", "engine.absent"})
def symmetric_molecule_deleted(connection: sqlite3.Connection) -> dict:
    """A member of a group of 4 (a molecule with a symmetry: its images repeat) deleted: named once."""
    number, canonical = member_of_a_group_of(4, connection)
    one(connection, "DELETE FROM Molecules WHERE config = 'A3_B5' AND number = ?", number)
    return {
        "families.missing": [
            f"molecule {number:,}: row: stored absent, computed a member of the group of {canonical:,}"
        ]
    }


@edge(FULL, {"count.rows", "families.missing", "engine.absent"})
def half_turn_symmetric_molecule_deleted(connection: sqlite3.Connection) -> dict:
    """Molecule 692 (cells 2, 12 and 22: its own half-turn image, the canonical one of a group of 2)
    deleted: named once, though two of the 8 transforms give it."""
    assert 692 not in REFERENCE and tuple(atoms_of(A3_B5, 692)) == (2, 12, 22)
    one(connection, "DELETE FROM Molecules WHERE config = 'A3_B5' AND number = 692")
    return {"families.missing": ["molecule 692: row: stored absent, computed a member of the group of 692"]}


@edge(FULL, {"families.canonical_number", "engine.column"})
def molecule_canonical_numbers_outside_every_batch(connection: sqlite3.Connection) -> dict:
    """Two molecules' canonical numbers made 0 and 2,301 (no molecule's): read by no batch of the
    families phase, found by its look-up of the numbers outside, and named."""
    first, second = not_reference(300), not_reference(1800)
    lines = []
    for number, outside in ((first, 0), (second, 2301)):
        canonical = stored_value(connection, "canonical_number", number)
        one(
            connection,
            "UPDATE Molecules SET canonical_number = ? WHERE config = 'A3_B5' AND number = ?",
            outside,
            number,
        )
        lines.append(f"molecule {number:,}: canonical_number: stored {outside:,}, computed {canonical:,}")
    return {"families.canonical_number": lines}


@edge(FULL, {"groups.missing_row"})
def middle_spectrum_row_deleted(connection: sqlite3.Connection) -> dict:
    """The Spectrums row of the 4th of the 8 ambiguous spectra (by spectrum) deleted: named, and
    the groups after it still compared (and counted) as usual."""
    (spectrum,) = connection.execute(
        "SELECT spectrum FROM Spectrums WHERE config = 'A3_B5' ORDER BY spectrum LIMIT 1 OFFSET 3"
    ).fetchone()
    one(connection, "DELETE FROM Spectrums WHERE config = 'A3_B5' AND spectrum = ?", spectrum)
    return {
        "covered.groups": "8 ambiguous spectra: ",
        "groups.missing_row": [f"spectrum {spectrum}: stored no Spectrums row, computed nb_mol 2"],
    }


@edge(FULL, {"count.rows", "families.stray"})
def two_stray_molecules_in_one_batch(connection: sqlite3.Connection) -> dict:
    """Two copies of molecule 1,500's row, numbered 2,301 and 2,302 (spectra of their own): both in
    the families phase's one batch (A3_B5's 2,300 numbers), read one after the other, both named."""
    columns = ", ".join(MOLECULE_COLUMNS)
    for number in (2301, 2302):
        own = {"number": str(number), "spectrum": f"'stray {number}'"}
        copied = ", ".join(own.get(c, c) for c in MOLECULE_COLUMNS)
        one(
            connection,
            f"INSERT INTO Molecules ({columns}) "
            f"SELECT {copied} FROM Molecules WHERE config = 'A3_B5' AND number = 1500",
        )
    return {
        "count.rows": ["molecule rows: stored 2,302, computed 2,300"],
        "families.stray": [
            f"molecule {n}: number: stored a row, computed none: numbers go from 1 to 2,300"
            for n in ("2,301", "2,302")
        ],
    }


# -- the tests ---------------------------------------------------------------------------


@pytest.fixture
def clean(a3_b5_stores: dict[str, Path]) -> dict[str, Path]:
    """A3_B5 explored once in each store."""
    return a3_b5_stores


def report(path: Path, capsys, *args: str) -> tuple[int, dict]:
    code = main(["--db", str(path), "check", "A3_B5", "--json", *args])
    return code, json.loads(capsys.readouterr().out)


def test_every_finding_has_a_planted_damage() -> None:
    """A new finding (or a new store for one) without a plant here fails."""
    registered = {(finding.name, store) for finding in check.FINDINGS.values() for store in finding.stores}
    assert set(PLANTS) == registered
    assert {finding.phase for finding in check.FINDINGS.values()} <= set(check.PHASES)
    assert all(finding.description for finding in check.FINDINGS.values())


RETRACED = "2,300 molecules (all) re-traced by the engine: "
SAMPLED = "1,000 molecules, a seeded sample re-traced by the reference rays.py: "
COVERED = {
    FULL: {
        "configuration": "C(25, 3) = 2,300 molecules, atoms, width, ranges",
        "count": "2,300 molecule rows",
        "groups": "8 ambiguous spectra: nb_mol, transform, canonical number",
        "families": "2,300 molecules: canonical, transform, board, spectrum by symmetry, members",
        "engine": RETRACED + "canonical, transform, board, spectrum, 17 statistics",
        "reference": SAMPLED + "canonical, transform, board, spectrum, 17 statistics",
    },
    COMPACT: {
        "configuration": "C(25, 3) = 2,300 molecules, atoms, width, ranges",
        "count": "2,300 molecules in the profiles, no molecule rows",
        "groups": "2 families (4 molecules re-traced), 8 ambiguous spectra: molecules, nb_mol, spectra, "
        "spectrum, key, canonical number, max_diff, ordinals; counts by size",
        "engine": RETRACED + "in the stored spectral groups, profile statistics",
        "reference": SAMPLED + "in the stored spectral groups, profile statistics",
    },
}
"""What each line of the report says it covered, for the clean A3_B5 (the file's size aside)."""


@pytest.mark.parametrize("store", [FULL, COMPACT])
def test_a_clean_file_passes(clean: dict[str, Path], store: str, capsys) -> None:
    code, found = report(clean[store], capsys)
    assert code == 0 and found["ok"] is True
    names = check.CHECKS if store == FULL else check.COMPACT_CHECKS
    assert [c["name"] for c in found["checks"]] == list(names)
    assert all(c["ok"] and c["differences"] == 0 and c["findings"] == [] for c in found["checks"])
    covered = {c["name"]: c["covered"] for c in found["checks"]}
    integrity = covered.pop("integrity")
    assert integrity.startswith("SQLite's integrity_check of the whole file (")
    assert integrity.endswith(" MB, every configuration)")
    assert covered == COVERED[store]


def damaged_report(
    clean: dict[str, Path], tmp_path: Path, store: str, damage: Callable, args: tuple[str, ...], capsys
) -> tuple[object, dict, dict[str, list[str]]]:
    """(what ``damage`` returned, the ``--json`` report, the lines of each finding) of a damaged copy."""
    path = tmp_path / "damaged.sqlite"
    shutil.copy(clean[store], path)
    connection = sqlite3.connect(path)
    named = damage(connection)
    connection.commit()
    connection.close()
    code, found = report(path, capsys, *args)
    assert code == 1 and found["ok"] is False
    lines: dict[str, list[str]] = {}
    for c in found["checks"]:
        for difference in c["first"]:
            lines.setdefault(difference["finding"], []).append(check.Difference(**difference).line())
    return named, found, lines


def raised_findings(found: dict) -> set[str]:
    return {name for c in found["checks"] for name in c["findings"]}


@pytest.mark.parametrize("finding, store", sorted(PLANTS), ids=[f"{f}-{s}" for f, s in sorted(PLANTS)])
def test_a_planted_damage_is_found_and_named(
    clean: dict[str, Path], tmp_path: Path, finding: str, store: str, capsys
) -> None:
    planted = PLANTS[(finding, store)]
    named, found, lines = damaged_report(clean, tmp_path, store, planted.damage, planted.args, capsys)
    assert raised_findings(found) == planted.findings
    if isinstance(named, dict):
        named = named[finding]
    assert any(named in line for line in lines[finding]), lines[finding]


@pytest.mark.parametrize("name", sorted(EDGES))
def test_more_damage_of_a_finding_is_found_and_named(
    clean: dict[str, Path], tmp_path: Path, name: str, capsys
) -> None:
    planted = EDGES[name]
    named, found, lines = damaged_report(clean, tmp_path, planted.store, planted.damage, planted.args, capsys)
    assert raised_findings(found) == planted.findings
    covered = {c["name"]: c["covered"] for c in found["checks"]}
    for finding, expected in named.items():
        if finding.startswith("covered."):
            assert covered[finding.removeprefix("covered.")].startswith(expected)
        elif isinstance(expected, list):
            assert lines[finding] == expected
        else:
            pieces = expected if isinstance(expected, tuple) else (expected,)
            for piece in pieces:
                assert any(piece in line for line in lines[finding]), (piece, lines[finding])


def test_all_says_every_profile_was_counted(clean: dict[str, Path], capsys) -> None:
    code, found = report(clean[COMPACT], capsys, "--all")
    engine = next(c for c in found["checks"] if c["name"] == "engine")
    assert code == 0 and engine["covered"] == COVERED[COMPACT]["engine"] + "; every profile counted"


def test_the_integrity_damage_passes_quick_check(clean: dict[str, Path], tmp_path: Path) -> None:
    """Why ``check`` runs integrity_check: quick_check does not compare an index with its table."""
    path = tmp_path / "index.sqlite"
    shutil.copy(clean[FULL], path)
    connection = sqlite3.connect(path)
    index_disagrees_with_its_table(connection)
    connection.commit()
    connection.close()
    connection = sqlite3.connect(path)
    assert connection.execute("PRAGMA quick_check").fetchall() == [("ok",)]
    assert connection.execute("PRAGMA integrity_check").fetchall() != [("ok",)]
    connection.close()


def test_no_integrity_skips_the_file_check(clean: dict[str, Path], tmp_path: Path, capsys) -> None:
    """``--no-integrity``: the integrity line says it was skipped; the other phases still run."""
    path = tmp_path / "index.sqlite"
    shutil.copy(clean[COMPACT], path)
    connection = sqlite3.connect(path)
    family_index_disagrees_with_its_table(connection)
    connection.commit()
    connection.close()
    code, found = report(path, capsys, "--no-integrity")
    assert code == 0
    assert found["checks"][0]["name"] == "integrity"
    assert found["checks"][0]["covered"].startswith("skipped (--no-integrity)")
    code, found = report(path, capsys)
    assert code == 1 and found["checks"][0]["findings"] == ["integrity.damage"]
