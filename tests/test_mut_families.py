"""A compact store's families (``bbcore.families``): its small pure pieces, in full.

Written for the mutation run of ``bbcore/families.py`` (``bench/mutation.py families``): the
packing of molecule numbers, the images of a family's molecules by each symmetry, the atoms
two molecules do not share, and a spectrum read back as its partner array, each against a
brute force or the spec's definition.  (Reading and writing the rows is checked against the
full store in tests/test_compact.py and tests/test_shrunk.py, which the run names too.)
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np

from bbcore import engine, families, rays
from bbcore.config import Config
from bbcore.explore import explore
from bbcore.families import images_of, max_atoms_apart, numbers_dtype, partner_of, unpack_numbers
from bbcore.geometry import TRANSFORM_NAMES
from bbcore.numbering import atoms_of, binomial_table, number_of
from bbcore.progress import COMPLETE
from bbcore.store import close_database, open_database

A3_B4, A3_B5, A4_B5 = Config(3, 4), Config(3, 5), Config(4, 5)


def test_numbers_are_packed_in_four_bytes_while_they_fit_else_eight():
    small, large = Config(4, 8), Config(7, 13)  # 635,376 and 3.4 x 10^10 molecules
    assert small.nb_mol <= 1 << 32 < large.nb_mol
    assert numbers_dtype(small) == np.dtype("<u4") and numbers_dtype(large) == np.dtype("<u8")
    numbers = np.array([1, 70_000, small.nb_mol], dtype="<u4")
    assert unpack_numbers(small, numbers.tobytes()).tolist() == [1, 70_000, small.nb_mol]
    wide = np.array([1, large.nb_mol], dtype="<u8")
    unpacked = unpack_numbers(large, wide.tobytes())
    assert unpacked.tolist() == [1, large.nb_mol] and unpacked.dtype == np.int64


def test_the_images_of_molecules_by_each_transform_sorted():
    numbers = np.array([200, 3, 57], dtype=np.int64)
    assert images_of(A3_B4, numbers, TRANSFORM_NAMES[0]).tolist() == [3, 57, 200]
    assert images_of(A3_B4, np.empty(0, np.int64), TRANSFORM_NAMES[3]).tolist() == []
    for index, name in enumerate(TRANSFORM_NAMES):
        atoms = np.array([atoms_of(A3_B4, int(k)) for k in numbers], dtype=np.int64)
        table = engine.image_numbers(A3_B4, atoms, binomial_table(A3_B4))
        assert images_of(A3_B4, numbers, name).tolist() == sorted(table[:, index].tolist())
    # the transforms are not all the identity here: some image differs
    assert any(images_of(A3_B4, numbers, name).tolist() != [3, 57, 200] for name in TRANSFORM_NAMES)


def test_the_most_atoms_one_molecule_has_where_another_has_none():
    def brute(numbers):
        boards = [set(atoms_of(A3_B4, k)) for k in numbers]
        return max((len(a - b) for a in boards for b in boards), default=0)

    one = number_of(A3_B4, [0, 1, 2])
    assert max_atoms_apart(A3_B4, np.array([one])) == 0
    assert max_atoms_apart(A3_B4, np.array([], dtype=np.int64)) == 0
    for cells in ([[0, 1, 2], [0, 1, 3]], [[0, 1, 2], [3, 4, 5]], [[0, 1, 2], [0, 4, 5], [0, 1, 5]]):
        numbers = [number_of(A3_B4, c) for c in cells]
        assert max_atoms_apart(A3_B4, np.array(numbers)) == brute(numbers)
    assert max_atoms_apart(A3_B4, np.array([number_of(A3_B4, [0, 1, 2]), number_of(A3_B4, [3, 4, 5])])) == 3


def test_a_spectrum_is_read_back_as_the_engines_partner_array():
    for k in (1, 77, 300, A3_B4.nb_mol):
        atoms = atoms_of(A3_B4, k)
        spectrum = rays.spectrum(A3_B4, atoms)
        partner = engine.trace_batch(A3_B4, np.array([atoms], dtype=np.uint8))[0][0]
        assert partner_of(A3_B4, spectrum).tolist() == partner.astype(np.int64).tolist()
    spectrum = rays.spectrum(A3_B4, atoms_of(A3_B4, 300))  # a@bcdbc@&@&@@&ad
    assert partner_of(A3_B4, spectrum[:-1]) is None  # too short
    assert partner_of(A3_B4, spectrum + "@") is None  # too long
    label = next(c for c in spectrum if c not in "@&")
    assert partner_of(A3_B4, spectrum.replace(label, "@", 1)) is None  # a label once
    other = next(c for c in spectrum if c not in "@&" + label)
    assert partner_of(A3_B4, spectrum.replace(other, label)) is None  # a label four times


OLD_FILE = Path(__file__).parent / "data" / "compact_before_families.sqlite"
"""A4_B5 and A3_B4 explored compact by the release before Families (Spectrums rows, FamilyMolecules)."""


def family_rows(path: Path, name: str) -> list[tuple]:
    with sqlite3.connect(path) as connection:
        return connection.execute(
            "SELECT * FROM Families WHERE config = ? ORDER BY position", (name,)
        ).fetchall()


def rows_of(path: Path, table: str, name: str) -> int:
    with sqlite3.connect(path) as connection:
        return connection.execute(f"SELECT COUNT(*) FROM {table} WHERE config = ?", (name,)).fetchone()[0]


def test_a_migration_in_batches_of_seven_is_whole_and_leaves_the_other_configurations(tmp_path, monkeypatch):
    """``MIGRATE_BATCH`` shrunk to 7 (43 families: six full batches and one of one), in a file
    that also holds a full store's A3_B5 and another old compact configuration: A4_B5 comes out
    as a fresh compact exploration writes it, its progress from 0 to 43, and nothing else moves."""
    old, fresh = tmp_path / "old.sqlite", tmp_path / "fresh.sqlite"
    old.write_bytes(OLD_FILE.read_bytes())
    assert explore(A3_B5, old, store="full") == COMPLETE
    close_database()
    kept = {
        (table, name): rows_of(old, table, name)
        for table in ("Spectrums", "FamilyMolecules")
        for name in ("A3_B5", "A3_B4")
    }
    assert kept[("Spectrums", "A3_B5")] > 0 and kept[("FamilyMolecules", "A3_B4")] > 0
    seen = []
    open_database(old)
    try:
        monkeypatch.setattr(families, "MIGRATE_BATCH", 7)
        assert families.migrate(A4_B5, lambda done, total: seen.append((done, total))) == 43
        assert not families.needs_migration(A4_B5) and families.needs_migration(A3_B4)
    finally:
        close_database()
    assert seen == [(0, 43), *((done, 43) for done in range(7, 43, 7)), (43, 43)]
    assert rows_of(old, "Spectrums", "A4_B5") == rows_of(old, "FamilyMolecules", "A4_B5") == 0
    assert {key: rows_of(old, *key) for key in kept} == kept
    assert explore(A4_B5, fresh, store="compact") == COMPLETE
    close_database()
    assert family_rows(old, "A4_B5") == family_rows(fresh, "A4_B5") and len(family_rows(old, "A4_B5")) == 43


def test_a_typed_spectrum_finds_its_spectral_group_as_the_full_store_has_it(tmp_path):
    """``spectrum_group`` on a compact A3_B5 (8 spectral groups in 2 families) gives every
    ambiguous spectrum the full store's ``Spectrums`` row, with its molecules' max_diff; a
    spectrum of one molecule, or malformed, none."""
    full, compact = tmp_path / "full.sqlite", tmp_path / "compact.sqlite"
    assert explore(A3_B5, full, store="full") == COMPLETE
    close_database()
    with sqlite3.connect(full) as connection:
        rows = connection.execute(
            "SELECT spectrum, nb_mol, transform, canonical_number FROM Spectrums WHERE config = 'A3_B5'"
        ).fetchall()
        members = {
            spectrum: [
                n
                for (n,) in connection.execute(
                    "SELECT number FROM Molecules WHERE config = 'A3_B5' AND spectrum = ? ORDER BY number",
                    (spectrum,),
                )
            ]
            for spectrum, *_ in rows
        }
        unique = connection.execute(
            "SELECT spectrum FROM Molecules WHERE config = 'A3_B5' AND spectrum NOT IN "
            "(SELECT spectrum FROM Spectrums WHERE config = 'A3_B5') LIMIT 1"
        ).fetchone()[0]
    assert len(rows) == 8
    assert explore(A3_B5, compact, store="compact") == COMPLETE
    try:
        for spectrum, nb_mol, transform, canonical in rows:
            group = families.spectrum_group(A3_B5, spectrum)
            numbers = np.array(members[spectrum])
            assert group == families.SpectrumRow(
                spectrum, nb_mol, transform, canonical, max_atoms_apart(A3_B5, numbers)
            )
            assert families.spectrum_numbers(A3_B5, spectrum) == members[spectrum]
        assert families.spectrum_group(A3_B5, unique) is None
        assert families.spectrum_group(A3_B5, unique[:-1]) is None
    finally:
        close_database()


def test_the_shards_counts_are_each_configurations_own(tmp_path):
    """Two compact configurations in one file: each one's counts of spectra and families are
    its own shards' (A3_B5: 8 spectral groups in 2 families), a configuration never explored
    has none, and ``group_count`` counts families unless asked for every spectrum."""
    path = tmp_path / "two.sqlite"
    for config in (A3_B5, A3_B4):
        assert explore(config, path, store="compact") == COMPLETE
    try:
        assert families.spectra_counts(A3_B5) == (8, 2)
        assert families.group_count(A3_B5) == 2 and families.group_count(A3_B5, all_rows=True) == 8
        spectra, count = families.spectra_counts(A3_B4)
        assert (spectra, count) != (8, 2) and 0 < count <= spectra
        assert families.spectra_counts(Config(2, 4)) == (0, 0)
    finally:
        close_database()
