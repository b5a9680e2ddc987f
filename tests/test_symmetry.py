"""The 8 symmetries: transforms, enantiomer groups, canonical numbers and moved spectra."""

from __future__ import annotations

from collections import defaultdict
from itertools import product

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bbcore import rays
from bbcore.config import Config, parse_config
from bbcore.geometry import (
    TRANSFORM_NAMES,
    cell_permutation,
    position_source,
    transform_atoms,
)
from bbcore.numbering import atoms_from_string, atoms_of, number_of

A2_B4 = Config(2, 4)


def moved(spectrum: str, width: int, transform: str) -> str:
    """The spectrum of a molecule's image: positions moved, then normalised (spec)."""
    return rays.normalise("".join(spectrum[p - 1] for p in position_source(width, transform)))


def test_transform_names_in_spec_order():
    """The names are data, in the table's order (the tie order)."""
    assert TRANSFORM_NAMES == (
        "id",
        "rot180",
        "rot90",
        "rot270",
        "symm-h",
        "symm-v",
        "diag-1",
        "diag-2",
    )


# One atom at (line 1, column 2) of a 4 x 4 box: new(l, c) = old(f(l, c)) puts
# the image's atom where f(l, c) = (1, 2), worked out by hand from the table.
ONE_ATOM_IMAGES = {
    "id": (1, 2),
    "rot180": (4, 3),
    "rot90": (3, 1),
    "rot270": (2, 4),
    "symm-h": (1, 3),
    "symm-v": (4, 2),
    "diag-1": (2, 1),
    "diag-2": (3, 4),
}


@pytest.mark.parametrize("transform", TRANSFORM_NAMES)
def test_transform_of_one_atom(transform):
    """Each transform moves an atom where the spec's table says."""
    line, column = ONE_ATOM_IMAGES[transform]
    assert transform_atoms(Config(1, 4), (1,), transform) == ((line - 1) * 4 + column - 1,)


@pytest.mark.parametrize("width", [2, 3, 4, 5, 8])
def test_transforms_form_the_square_group(width):
    """Each transform is a permutation of the cells; together they are closed under composition."""
    perms = {t: cell_permutation(width, t) for t in TRANSFORM_NAMES}
    cells = list(range(width * width))
    assert all(sorted(p) == cells for p in perms.values())
    assert perms["id"] == tuple(cells)
    assert len(set(perms.values())) == 8
    for a, b in product(perms.values(), repeat=2):
        assert tuple(b[a[i]] for i in cells) in perms.values()

    def twice(t: str, u: str) -> tuple[int, ...]:
        return tuple(perms[u][perms[t][i]] for i in cells)

    assert twice("rot90", "rot90") == perms["rot180"]
    assert twice("rot90", "rot270") == perms["id"]
    assert twice("symm-h", "symm-v") == perms["rot180"]
    assert twice("diag-1", "diag-2") == perms["rot180"]


def test_spec_example_rot180():
    """rot180 of A2_B4 number 2 is number 119, and its spectrum is the spec's."""
    atoms = transform_atoms(A2_B4, atoms_of(A2_B4, 2), "rot180")
    assert number_of(A2_B4, atoms) == 119
    assert moved("@&ab@&@cbac@&@&@", 4, "rot180") == "abc@&@&@@&ba@&@c"
    assert rays.spectrum(A2_B4, atoms) == "abc@&@&@@&ba@&@c"


def test_tie_order_for_a_symmetric_molecule(reference, explore):
    """The diagonal pair's image is made by rot90, rot270, symm-h and symm-v: rot90 is kept."""
    diagonal = atoms_from_string(A2_B4, "O--------------O")
    image = atoms_from_string(A2_B4, "---O--------O---")
    makers = [t for t in TRANSFORM_NAMES if transform_atoms(A2_B4, diagonal, t) == image]
    assert makers == ["rot90", "rot270", "symm-h", "symm-v"]
    canonical, image_number = number_of(A2_B4, diagonal), number_of(A2_B4, image)
    record = reference(A2_B4, image_number)
    assert (record[2], record[5]) == (canonical, "rot90")
    rows = [row for row in explore(A2_B4, canonical, canonical + 1) if row[2] == canonical]
    assert [(row[1], row[5]) for row in rows] == [(canonical, "id"), (image_number, "rot90")]


def groups(rows) -> dict[int, list[tuple]]:
    """Records partitioned by canonical number."""
    by_canonical: dict[int, list[tuple]] = defaultdict(list)
    for row in rows:
        by_canonical[row[2]].append(row)
    return by_canonical


def assert_group_rules(config: Config, rows) -> None:
    """The spec's rules for every enantiomer group of a configuration's records."""
    assert sorted(row[1] for row in rows) == list(range(1, config.nb_mol + 1))
    for canonical, members in groups(rows).items():
        first = min(members, key=lambda row: row[1])
        assert first[1] == canonical, "the canonical molecule is the lowest of its group"
        assert first[5] == "id"
        canonical_atoms = atoms_of(config, canonical)
        images = {t: number_of(config, transform_atoms(config, canonical_atoms, t)) for t in TRANSFORM_NAMES}
        assert sorted(row[1] for row in members) == sorted(set(images.values()))
        assert len(members) in (1, 2, 4, 8)
        for row in members:
            tie_winner = next(t for t in TRANSFORM_NAMES if images[t] == row[1])
            assert row[5] == tie_winner, row
            assert atoms_from_string(config, row[3]) == atoms_of(config, row[1])
            assert row[4] == moved(first[4], config.width, row[5]), row
            assert row[6:] == first[6:], "images share the canonical statistics"


@pytest.mark.parametrize("name", ["A1_B2", "A2_B4", "A3_B4", "A2_B5"])
def test_group_rules_on_reference_records(name, whole_reference):
    """Image spectra traced on their own equal the moved canonical spectrum."""
    config = parse_config(name)
    assert_group_rules(config, whole_reference(config))


@pytest.mark.parametrize("name", ["A2_B4", "A3_B4", "A4_B4", "A3_B5", "A2_B7", "A5_B4"])
def test_group_rules_on_engine_rows(name, explore):
    """The engine's groups follow the same rules over whole configurations."""
    config = parse_config(name)
    assert_group_rules(config, explore(config, 1, config.nb_mol + 1))


def test_symmetric_group_sizes_a2_b4(explore):
    """A2_B4's 120 molecules fall into groups of 2, 4 and 8 only, with 2-groups present."""
    rows = explore(A2_B4, 1, 121)
    sizes = sorted(len(members) for members in groups(rows).values())
    assert sum(sizes) == 120
    assert set(sizes) == {2, 4, 8}


@settings(max_examples=100, deadline=None)
@given(data=st.data(), transform=st.sampled_from(TRANSFORM_NAMES))
def test_spectrum_of_image_is_moved_spectrum(random_molecules, data, transform):
    """The spectrum of a transformed molecule is the transformed spectrum; statistics are kept."""
    config, atoms = data.draw(random_molecules)
    original = rays.trace_all(config, atoms)
    image = rays.trace_all(config, transform_atoms(config, atoms, transform))
    expected = moved(rays.spectrum_of_rays(original), config.width, transform)
    assert rays.spectrum_of_rays(image) == expected
    assert rays.statistics_of_rays(image) == rays.statistics_of_rays(original)
