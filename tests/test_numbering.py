"""Molecule numbers <-> atoms <-> molecule strings, in the order of itertools.combinations."""

from __future__ import annotations

import itertools
from math import comb

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bbcore.config import EXPLORE_MAX_WIDTH, MAX_WIDTH, MIN_WIDTH, Config, parse_config
from bbcore.engine import image_numbers
from bbcore.geometry import TRANSFORM_NAMES, transform_atoms
from bbcore.numbering import (
    NumbersTooLarge,
    atoms_from_string,
    atoms_of,
    atoms_of_numbers,
    atoms_of_range,
    binomial_table,
    fits_int64,
    image_numbers_of,
    molecule_batches,
    molecule_string,
    number_of,
    numbers_of,
)

A2_B4 = Config(2, 4)
WHOLE_CONFIGS = ["A1_B2", "A3_B2", "A2_B4", "A3_B4", "A4_B4", "A3_B5", "A8_B4", "A15_B4"]


def nth_combination(config: Config, number: int) -> tuple[int, ...]:
    """Molecule ``number`` by walking itertools.combinations (the spec's definition)."""
    cells = itertools.combinations(range(config.cells), config.atoms)
    return next(itertools.islice(cells, number - 1, None))


@pytest.mark.parametrize(
    "number, molecule",
    [
        (1, "OO--------------"),
        (2, "O-O-------------"),
        (119, "-------------O-O"),
        (120, "--------------OO"),
    ],
)
def test_spec_examples_a2_b4(number, molecule):
    """The spec's A2_B4 examples, in both directions and through the string form."""
    atoms = atoms_of(A2_B4, number)
    assert molecule_string(A2_B4, atoms) == molecule
    assert atoms_from_string(A2_B4, molecule) == atoms
    assert number_of(A2_B4, atoms_from_string(A2_B4, molecule)) == number


@pytest.mark.parametrize(
    "name, count",
    [
        ("A2_B4", 120),
        ("A3_B4", 560),
        ("A4_B4", 1820),
        ("A4_B5", 12650),
        ("A4_B6", 58905),
        ("A4_B8", 635_376),
        ("A5_B10", 75_287_520),
        ("A1_B2", 4),
        ("A3_B2", 4),
    ],
)
def test_molecule_counts(name, count):
    """A configuration has C(W*W, N) molecules (A4_B8: 635,376)."""
    assert parse_config(name).nb_mol == count


@pytest.mark.parametrize("name", WHOLE_CONFIGS)
def test_scalar_round_trip_whole_config(name):
    """Every molecule of a small configuration: number -> atoms -> number, in itertools order."""
    config = parse_config(name)
    expected = list(itertools.combinations(range(config.cells), config.atoms))
    assert len(expected) == config.nb_mol
    for number, atoms in enumerate(expected, start=1):
        assert atoms_of(config, number) == atoms
        assert number_of(config, atoms) == number


@pytest.mark.parametrize("name", WHOLE_CONFIGS)
def test_vectorised_round_trip_whole_config(name):
    """The numpy forms agree with itertools order over a whole configuration."""
    config = parse_config(name)
    expected = np.array(list(itertools.combinations(range(config.cells), config.atoms)))
    numbers = np.arange(1, config.nb_mol + 1)
    np.testing.assert_array_equal(atoms_of_range(config, 1, config.nb_mol + 1), expected)
    np.testing.assert_array_equal(numbers_of(config, expected), numbers)
    shuffled = np.random.default_rng(7).permutation(numbers)
    np.testing.assert_array_equal(atoms_of_numbers(config, shuffled), expected[shuffled - 1])


def test_atoms_of_range_partial():
    """A range start..stop-1 gives exactly those molecules."""
    config = Config(3, 4)
    expected = list(itertools.combinations(range(16), 3))[99:130]
    assert atoms_of_range(config, 100, 131).tolist() == [list(a) for a in expected]


def test_number_of_ignores_atom_order():
    """A molecule is a set of cells: the order they are given in does not matter."""
    assert number_of(A2_B4, (2, 0)) == 2
    assert number_of(A2_B4, [15, 13]) == 119


def spot_numbers(config: Config) -> list[int]:
    """Numbers worth checking: the ends, and where the first atom moves off cell 0."""
    after_first_cell = comb(config.cells - 1, config.atoms - 1)
    return [1, 2, 3, 1000, 54_321, after_first_cell, after_first_cell + 1]


@pytest.mark.parametrize("name", ["A4_B8", "A5_B10"])
def test_spot_checks_against_itertools(name):
    """Large configurations: chosen numbers against itertools, scalar and vectorised."""
    config = parse_config(name)
    for number in spot_numbers(config):
        atoms = nth_combination(config, number)
        assert atoms_of(config, number) == atoms, number
        assert number_of(config, atoms) == number
        assert atoms_of_numbers(config, np.array([number]))[0].tolist() == list(atoms)
        assert numbers_of(config, np.array([atoms]))[0] == number


@pytest.mark.parametrize("name", ["A4_B8", "A5_B10"])
def test_large_config_ends(name):
    """The last molecule has its atoms in the last N cells, and the first after cell 0 is 1..N."""
    config = parse_config(name)
    m, n = config.cells, config.atoms
    assert atoms_of(config, config.nb_mol) == tuple(range(m - n, m))
    assert number_of(config, range(1, n + 1)) == comb(m - 1, n - 1) + 1
    assert atoms_of(config, comb(m - 1, n - 1)) == (0, *range(m - n + 1, m))


@pytest.mark.parametrize("name", ["A4_B8", "A5_B10"])
def test_random_round_trip_large(name):
    """Random numbers of a large configuration: scalar and vectorised forms agree both ways."""
    config = parse_config(name)
    numbers = np.random.default_rng(11).integers(1, config.nb_mol + 1, size=500)
    batch = atoms_of_numbers(config, numbers)
    assert (np.diff(batch, axis=1) > 0).all()
    np.testing.assert_array_equal(numbers_of(config, batch), numbers)
    for number, atoms in zip(numbers.tolist(), batch.tolist()):
        assert list(atoms_of(config, number)) == atoms


@pytest.mark.parametrize("number", [0, -1, 121])
def test_atoms_of_rejects_numbers_out_of_range(number):
    """Numbers outside 1..nb_mol are an error, not a wrapped-around molecule."""
    with pytest.raises(ValueError, match="1..120"):
        atoms_of(A2_B4, number)


@pytest.mark.parametrize("atoms", [(0,), (0, 1, 2), (3, 3), (-1, 2), (0, 16)])
def test_number_of_rejects_bad_atoms(atoms):
    """The wrong count, duplicates or cells outside the box are an error."""
    with pytest.raises(ValueError, match="A2_B4"):
        number_of(A2_B4, atoms)


@pytest.mark.parametrize(
    "molecule",
    ["OO-------------", "OO---------------", "OX--------------", "O---------------", "OOO-------------"],
)
def test_atoms_from_string_rejects_bad_strings(molecule):
    """Wrong length, foreign characters or the wrong number of atoms are an error."""
    with pytest.raises(ValueError, match="A2_B4"):
        atoms_from_string(A2_B4, molecule)


# -- numbers past 64 bits: every valid configuration ------------------------------

HUGE_CONFIGS = [
    Config(n, w)
    for w in range(MIN_WIDTH, EXPLORE_MAX_WIDTH + 1)
    for n in range(1, w * w)
    if comb(w * w, n) >= 2**63
]
"""Every explorable square whose molecule count passes int64 (A14_B13 .. A155_B13, A17_B12, ...)."""
A30_B13, A84_B13 = Config(30, 13), Config(84, 13)


def lexicographic_number(m: int, atoms: tuple[int, ...]) -> int:
    """The spec's number of sorted ``atoms`` among the C(m, n) molecules, counted with math.comb.

    1 + how many combinations come before it: at each atom, those that put a
    smaller cell there, after the same earlier atoms.  Independent of the
    complement trick that ``numbering`` uses.
    """
    n = len(atoms)
    before, previous = 0, -1
    for i, cell in enumerate(atoms):
        before += sum(comb(m - 1 - v, n - 1 - i) for v in range(previous + 1, cell))
        previous = cell
    return before + 1


def test_the_huge_configurations_are_the_ones_past_int64():
    """A84_B13 and A85_B13 have the most molecules of all (C(169, 84), about 4.6 x 10^49)."""
    counts = {c.name: c.nb_mol for c in HUGE_CONFIGS}
    assert "A30_B13" in counts and "A13_B13" not in counts  # C(169, 13) ~ 9.18 x 10^18 < 2^63
    assert max(counts.values()) == counts["A84_B13"] == counts["A85_B13"] == comb(169, 84)
    assert all(not fits_int64(c) for c in HUGE_CONFIGS)


@pytest.mark.parametrize("config", [Config(450, MAX_WIDTH), Config(15, 20, 12), Config(239, 20, 12)])
def test_numbers_of_the_widest_boxes(config):
    """The largest boxes (30 x 30's C(900, 450), about 10^269) number their first and last
    molecules in itertools order, the cells of a rectangle line 1 first."""
    m, n = config.cells, config.atoms
    first, last = tuple(range(n)), tuple(range(m - n, m))
    assert config.nb_mol == comb(m, n) == lexicographic_number(m, last)
    assert atoms_of(config, 1) == first and number_of(config, last) == config.nb_mol
    assert not fits_int64(Config(450, MAX_WIDTH))


@pytest.mark.parametrize(
    "config",
    [A84_B13, Config(85, 13), A30_B13, Config(14, 13), Config(155, 13), Config(17, 12), Config(13, 13)],
)
def test_first_and_last_molecule_of_huge_configurations(config):
    """Molecule 1 is itertools' first combination, molecule C(W*W, N) its last, both ways."""
    m, n = config.cells, config.atoms
    first = next(itertools.combinations(range(m), n))
    last = tuple(range(m - n, m))  # the lexicographically greatest set of n cells
    assert config.nb_mol == comb(m, n) == lexicographic_number(m, last)
    assert atoms_of(config, 1) == first and number_of(config, first) == 1
    assert atoms_of(config, config.nb_mol) == last and number_of(config, last) == config.nb_mol
    with pytest.raises(ValueError, match=f"1..{config.nb_mol:,}, not {config.nb_mol + 1:,}"):
        atoms_of(config, config.nb_mol + 1)


@pytest.mark.parametrize("config", [A84_B13, A30_B13, Config(17, 12)])
def test_huge_configurations_follow_itertools_order(config):
    """The first 500 molecules, and the block of every molecule sharing a prefix deep in the
    order, are numbered consecutively in itertools.combinations order."""
    m, n = config.cells, config.atoms
    for number, atoms in enumerate(itertools.islice(itertools.combinations(range(m), n), 500), start=1):
        assert atoms_of(config, number) == atoms
        assert number_of(config, atoms) == number
    prefix = tuple(range(m - n - 6, m - 9))  # n - 3 atoms; 3 more among the last 9 cells
    block = [prefix + rest for rest in itertools.combinations(range(prefix[-1] + 1, m), 3)]
    start = lexicographic_number(m, block[0])
    assert len(block) == comb(9, 3) and start > 2**63
    for number, atoms in enumerate(block, start=start):
        assert number_of(config, atoms) == number
        assert atoms_of(config, number) == atoms


def test_the_last_molecules_come_in_lexicographic_order():
    """A30_B13's last 300 numbers: strictly increasing atoms, ending on its last cells."""
    config = A30_B13
    tail = [atoms_of(config, number) for number in range(config.nb_mol - 299, config.nb_mol + 1)]
    assert all(a < b for a, b in itertools.pairwise(tail))
    assert tail[-1] == tuple(range(169 - 30, 169))
    assert [lexicographic_number(169, a) for a in tail[::37]] == list(
        range(config.nb_mol - 299, config.nb_mol + 1)
    )[::37]


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_huge_round_trips(data):
    """Random huge configurations: number -> atoms -> number, and atoms -> number -> atoms,
    against the math.comb count."""
    config = data.draw(st.sampled_from(HUGE_CONFIGS), label="config")
    number = data.draw(st.integers(1, config.nb_mol), label="number")
    atoms = atoms_of(config, number)
    assert len(atoms) == config.atoms and list(atoms) == sorted(set(atoms))
    assert 0 <= atoms[0] and atoms[-1] < config.cells
    assert number_of(config, atoms) == number == lexicographic_number(config.cells, atoms)
    cells = tuple(sorted(data.draw(st.permutations(range(config.cells)), label="cells")[: config.atoms]))
    assert atoms_of(config, number_of(config, cells)) == cells


@pytest.mark.parametrize("config", [A84_B13, A30_B13, Config(13, 13)])
def test_batch_paths_refuse_huge_configurations_in_one_line(config):
    """The int64 paths refuse a configuration whose numbers do not fit, in one line."""
    for call in (
        lambda: binomial_table(config),
        lambda: atoms_of_numbers(config, np.array([1])),
        lambda: numbers_of(config, np.array([range(config.atoms)])),
        lambda: atoms_of_range(config, 1, 3),
    ):
        with pytest.raises(
            NumbersTooLarge, match=f"^{config.name} has {config.nb_mol:,} molecules"
        ) as raised:
            call()
        assert "\n" not in str(raised.value)


@pytest.mark.parametrize("name", ["A168_B13", "A167_B13", "A160_B13", "A136_B12"])
def test_batch_paths_take_every_configuration_that_fits(name):
    """Many atoms: C(169, 84) is in the binomial table's columns although A160_B13 has only
    C(169, 9) molecules; the capped table numbers them all the same."""
    config = parse_config(name)
    assert fits_int64(config)
    if config.nb_mol <= 20_000:
        expected = np.array(list(itertools.combinations(range(config.cells), config.atoms)))
        numbers = np.arange(1, config.nb_mol + 1)
    else:
        numbers = np.unique(np.random.default_rng(3).integers(1, config.nb_mol + 1, size=300))
        numbers[[0, -1]] = 1, config.nb_mol
        expected = np.array([atoms_of(config, int(k)) for k in numbers])
    np.testing.assert_array_equal(atoms_of_numbers(config, numbers), expected)
    np.testing.assert_array_equal(numbers_of(config, expected), numbers)


@pytest.mark.parametrize("name", ["A2_B4", "A3_B4", "A4_B5", "A9_B4", "A3_B6"])
def test_image_numbers_of_agrees_with_the_engine(name):
    """The scalar images (any configuration) against ``engine.image_numbers`` over a whole configuration."""
    config = parse_config(name)
    numbers = np.arange(1, config.nb_mol + 1)
    batch = image_numbers(config, atoms_of_numbers(config, numbers), binomial_table(config))
    assert [image_numbers_of(config, int(k)) for k in numbers] == [tuple(row) for row in batch.tolist()]


def test_image_numbers_of_a_huge_molecule():
    """A30_B13's first molecule fills the top rows: its half-turn is the last molecule."""
    images = image_numbers_of(A30_B13, 1)
    assert images[0] == 1 and A30_B13.nb_mol in images
    assert images[TRANSFORM_NAMES.index("rot180")] == A30_B13.nb_mol
    assert all(
        number_of(A30_B13, transform_atoms(A30_B13, atoms_of(A30_B13, 1), t)) == k
        for t, k in zip(TRANSFORM_NAMES, images)
    )


def test_number_of_names_the_cells_it_needs():
    with pytest.raises(ValueError) as error:
        number_of(A2_B4, (0, 16))
    assert str(error.value) == "A2_B4 needs 2 distinct cells in 0..15, got [0, 16]"


def test_binomial_table_holds_every_count_and_refuses_64_bit_overflow():
    """``table[x, i] = C(x, i)`` for x in 0..W*W, i in 0..N; a configuration of 2^62 molecules
    or more (A20_B9 has 4.7 x 10^18) is refused, one just under (A19_B9) is not."""
    config = Config(3, 4)
    table = binomial_table(config)
    assert table.shape == (17, 4) and table.dtype == np.int64
    assert table.tolist() == [[comb(x, i) for i in range(4)] for x in range(17)]
    assert 2**62 <= Config(20, 9).nb_mol < 2**63
    with pytest.raises(
        OverflowError, match="A20_B9 has 4,694,436,188,839,116,720 molecules: too many for 64-bit"
    ):
        binomial_table(Config(20, 9))
    assert binomial_table(Config(19, 9))[81, 19] == comb(81, 19)


@pytest.mark.parametrize("name", ["A1_B2", "A3_B2", "A2_B4", "A4_B4", "A3_B5"])
@pytest.mark.parametrize("size", [1, 2, 7, 100, 10**6])
def test_molecule_batches_are_itertools_combinations_in_batches(name, size):
    """Every molecule once, in number order, as uint8 cells, in batches of at most ``size``
    (and one batch when they all fit)."""
    config = parse_config(name)
    batches = list(molecule_batches(config, size))
    assert all(batch.dtype == np.uint8 and 0 < len(batch) <= size for batch in batches)
    rows = [tuple(row) for batch in batches for row in batch.tolist()]
    assert rows == list(itertools.combinations(range(config.cells), config.atoms))
    if size >= config.nb_mol:
        assert len(batches) == 1
    if size < config.nb_mol:
        assert len(batches) >= config.nb_mol // size
    assert len(list(molecule_batches(config, config.nb_mol))) == 1  # exactly enough room: one batch


@pytest.mark.parametrize("size", [1, 3, 50, 10**6])
def test_molecule_batches_among_some_cells(size):
    """Only the molecules whose atoms are all among ``cells``, in number order."""
    config = Config(3, 5)
    cells = [0, 2, 3, 7, 11, 12, 18, 24]
    rows = [tuple(row) for batch in molecule_batches(config, size, cells) for row in batch.tolist()]
    assert rows == list(itertools.combinations(cells, 3))
    assert [number_of(config, row) for row in rows] == sorted(number_of(config, row) for row in rows)
    exactly = [row.tolist() for batch in molecule_batches(config, size, [4, 9, 20]) for row in batch]
    assert exactly == [[4, 9, 20]]  # as many cells as atoms: one molecule
    assert list(molecule_batches(config, size, [4, 9])) == []  # fewer: none
