"""The fast numpy engine equals the reference, molecule for molecule."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bbcore import engine, rays
from bbcore.config import Config, parse_config
from bbcore.geometry import TRANSFORM_NAMES, transform_atoms
from bbcore.numbering import atoms_of, number_of

WHOLE_CONFIGS = [
    "A2_B4",
    "A3_B4",
    "A4_B4",
    "A3_B5",
    pytest.param("A4_B5", marks=pytest.mark.slow),
]


def mismatches(rows: list[tuple], expected: list[tuple]) -> list[tuple]:
    """(engine row, reference record) pairs that differ, for a readable failure."""
    return [(row, record) for row, record in zip(rows, expected) if row != record]


def test_worked_example_engine(worked_example, explore):
    """A2_B4 numbers 2 and 119: every field of the spec's record, from the engine."""
    rows = {row[1]: row for row in explore(Config(2, 4), 1, 121)}
    for number, record in worked_example.items():
        assert rows[number] == record


@pytest.mark.parametrize("name", WHOLE_CONFIGS)
def test_engine_equals_reference_on_every_molecule(name, whole_reference, explore):
    """Every molecule exactly once, each field equal to the reference record."""
    config = parse_config(name)
    rows = sorted(explore(config, 1, config.nb_mol + 1), key=lambda row: row[1])
    assert [row[1] for row in rows] == list(range(1, config.nb_mol + 1))
    bad = mismatches(rows, list(whole_reference(config)))
    assert not bad, f"{len(bad)} molecules differ, first: {bad[:3]}"


def test_ranges_split_anywhere_give_the_same_rows(explore):
    """Cutting 1..nb_mol into arbitrary ranges gives the same rows, each molecule once."""
    config = Config(4, 4)
    whole = explore(config, 1, config.nb_mol + 1)
    cuts = [1, 2, 7, 100, 101, 555, 1200, config.nb_mol + 1]
    pieces = [row for a, b in zip(cuts, cuts[1:]) for row in explore(config, a, b)]
    assert pieces == whole


def test_range_rows_are_the_groups_of_its_canonical_molecules(whole_reference, explore):
    """A range holds exactly the groups whose canonical molecule is in it, ordered."""
    config = Config(3, 4)
    rows = explore(config, 40, 90)
    assert rows == sorted(rows, key=lambda row: (row[2], row[1]))
    expected = sorted((record[2], record[1]) for record in whole_reference(config) if 40 <= record[2] < 90)
    assert [(row[2], row[1]) for row in rows] == expected


def test_range_without_canonical_molecule_is_empty():
    """119 and 120 of A2_B4 are images of smaller molecules: nothing to compute."""
    batch = engine.explore_range(Config(2, 4), 119, 121)
    assert len(batch) == 0
    assert list(batch.rows()) == []


def group_of(config: Config, number: int) -> tuple[int, list[int]]:
    """The canonical number and the sorted numbers of a molecule's enantiomer group."""
    atoms = atoms_of(config, number)
    numbers = sorted({number_of(config, transform_atoms(config, atoms, t)) for t in TRANSFORM_NAMES})
    return numbers[0], numbers


@pytest.mark.parametrize("name, seed", [("A4_B8", 48), ("A5_B10", 510)])
def test_engine_groups_on_random_molecules(name, seed, reference, explore):
    """Random molecules of large configurations: their whole group from a range around it."""
    config = parse_config(name)
    rng = random.Random(seed)
    checked = 0
    for _ in range(25):
        canonical, group = group_of(config, rng.randint(1, config.nb_mol))
        start = max(1, canonical - rng.randint(0, 3))
        stop = min(config.nb_mol + 1, canonical + 1 + rng.randint(0, 3))
        rows = explore(config, start, stop)
        mine = [row for row in rows if row[2] == canonical]
        assert [row[1] for row in mine] == group
        for row in mine:
            assert row == reference(config, row[1])
        checked += len(mine)
    assert checked >= 100


def assert_traced_like_reference(config: Config, atoms: np.ndarray) -> None:
    """trace_batch (and letters) agree ray by ray with the reference on every molecule."""
    partner, length, turns = engine.trace_batch(config, atoms)
    spectra = [bytes(row).decode() for row in engine.letters(partner)]
    codes = {"absorbed": engine.ABSORBED_CODE, "reflected": engine.REFLECTED_CODE}
    for k, molecule in enumerate(atoms.tolist()):
        traced = rays.trace_all(config, molecule)
        assert partner[k].tolist() == [codes.get(r.result, (r.exit or 0) - 1) for r in traced]
        assert length[k].tolist() == [r.length for r in traced], molecule
        assert turns[k].tolist() == [r.turns for r in traced], molecule
        assert spectra[k] == rays.spectrum_of_rays(traced), molecule


@pytest.mark.parametrize("name, seed", [("A4_B8", 8), ("A5_B10", 10)])
def test_trace_batch_on_random_molecules(name, seed):
    """200 random molecules: every ray's exit, length and turns equal the reference."""
    config = parse_config(name)
    rng = np.random.default_rng(seed)
    atoms = np.sort(
        np.array([rng.choice(config.cells, config.atoms, replace=False) for _ in range(200)]), axis=1
    )
    assert_traced_like_reference(config, atoms)


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_trace_batch_on_random_configurations(random_molecules, data):
    """Any width 2..10 and any number of atoms: every ray equals the reference."""
    config, atoms = data.draw(random_molecules)
    assert_traced_like_reference(config, np.array([atoms]))


NUMBERED = 2**62
"""Numbers the engine's numbering handles (int64)."""


@st.composite
def numbered_molecules(draw) -> tuple[Config, int]:
    """A random configuration of any width 2..13 whose numbers fit the engine, and a molecule number."""
    width = draw(st.integers(2, 13))
    # The numbering's binomial table holds C(m, k) for k up to N: all must fit.
    cells = width * width
    sizes = [n for n in range(1, cells) if math.comb(cells, min(n, cells // 2)) < NUMBERED]
    config = Config(draw(st.sampled_from(sizes)), width)
    return config, draw(st.integers(1, config.nb_mol))


@settings(max_examples=60, deadline=None)
@given(drawn=numbered_molecules())
def test_engine_rows_on_random_configurations_up_to_w13(reference, drawn):
    """The engine's whole row of a molecule (canonical number, transform, board, spectrum, the
    17 statistics) equals the reference record, for widths up to 13."""
    config, number = drawn
    batch = engine.molecules_of_numbers(config, np.array([number]))
    assert batch.rows() == [reference(config, number)]


@pytest.mark.parametrize("name", ["A3_B4", "A4_B4", "A3_B5", "A2_B6"])
def test_ray_profile_equals_the_reference_statistics(name):
    """Every molecule: the 9 profile statistics of a compact store equal the reference's."""
    from bbcore.compact.trace import PROFILE_FIELDS

    config = parse_config(name)
    atoms = np.array([atoms_of(config, n) for n in range(1, config.nb_mol + 1)], dtype=np.int64)
    profile = engine.ray_profile(*engine.trace_batch(config, atoms))
    expected = [
        [rays.statistics_of_rays(rays.trace_all(config, molecule))[field] for field in PROFILE_FIELDS]
        for molecule in atoms.tolist()
    ]
    assert profile.tolist() == expected
