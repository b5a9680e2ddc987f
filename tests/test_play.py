"""A game against the box (``bbcore.play``): shots, marks, points, judged guesses, draws."""

from __future__ import annotations

import pytest

from bbcore import rays
from bbcore.config import Config
from bbcore.game import ABSORBED
from bbcore.numbering import atoms_of
from bbcore.play import Match, PlayError, chosen_match, group_size, hard_match, random_match, ray_result
from bbcore.store import open_database

A2_B4, A3_B4 = Config(2, 4), Config(3, 4)


def test_shots_are_marked_and_scored_as_in_the_game():
    """The spec's worked example, A2_B4 number 2: ``@&ab@&@cbac@&@&@``."""
    match = chosen_match(A2_B4, 2)
    assert match.shoot(1) == ABSORBED and match.shoot(2) == "&" and match.shoot(3) == 10
    assert match.marks[:4] == ("H", "R", "a", "")
    assert match.marks[9] == "a"
    assert (match.rays, match.points) == (3, 1 + 1 + 2)
    with pytest.raises(PlayError, match="position 10 is known: a ray came out there"):
        match.shoot(10)
    with pytest.raises(PlayError, match="position 1 is shot already"):
        match.shoot(1)


def test_a_right_guess_a_wrong_one_and_one_of_the_same_spectral_group():
    match = chosen_match(A2_B4, 2)
    match.shoot(1)
    judged = match.judge(atoms_of(A2_B4, 2))
    assert judged.right and judged.penalty == 0 and match.points == 1 and match.over
    with pytest.raises(PlayError, match="over"):
        match.shoot(4)
    wrong = chosen_match(A2_B4, 2)
    judged = wrong.judge([0, 15])  # one atom right (cell 0), one wrong
    assert not judged.right and judged.wrong == (15,) and wrong.points == 5
    with pytest.raises(PlayError, match="place 2 atoms"):
        chosen_match(A2_B4, 2).judge([0])
    # A3_B4's spectral groups: two molecules with one spectrum.
    spectra: dict[str, int] = {}
    for number in range(1, A3_B4.nb_mol + 1):
        spectrum = rays.spectrum(A3_B4, atoms_of(A3_B4, number))
        if spectrum in spectra:
            break
        spectra[spectrum] = number
    other = spectra[spectrum]
    twin = chosen_match(A3_B4, number)
    judged = twin.judge(atoms_of(A3_B4, other))
    assert judged.right and judged.same_spectrum and judged.group == 2 and twin.points == 0
    assert group_size(A3_B4, atoms_of(A3_B4, number)) == 2


def test_draws_random_seeded_chosen_and_hard(tmp_path):
    open_database(tmp_path / "empty.sqlite")  # nothing explored: the book's hardest only
    assert random_match(A3_B4, 42).number == random_match(A3_B4, 42).number
    assert {random_match(A3_B4, seed).number for seed in range(20)} != {random_match(A3_B4, 0).number}
    with pytest.raises(PlayError, match="molecules 1 to 560"):
        Match(A3_B4, 561, "chosen")
    assert hard_match(A3_B4, [94, 337], seed=1).number in (94, 337)
    with pytest.raises(PlayError, match="no hard molecule"):
        hard_match(A3_B4, [], seed=1)


def test_hard_draws_from_the_spectral_groups_of_an_explored_configuration(store):
    """With no book, an explored configuration's spectral groups are the pool."""
    numbers = {hard_match(A3_B4, [], seed=seed).number for seed in range(10)}
    for number in numbers:
        assert group_size(A3_B4, atoms_of(A3_B4, number)) == 2
    assert not any(hard_match(A2_B4, [7], seed=seed).number != 7 for seed in range(5))  # no group


def test_a_game_of_a_configuration_past_64_bits():
    """A30_B13 (1.7 x 10^33 molecules): drawn, shot and judged, its spectral group too large to count."""
    a30_b13 = Config(30, 13)
    assert random_match(a30_b13, 42).number == random_match(a30_b13, 42).number
    match = chosen_match(a30_b13, a30_b13.nb_mol)  # atoms in the last 30 cells
    assert match.atoms == tuple(range(169 - 30, 169))
    assert match.shoot(1) == ray_result(rays.trace(a30_b13.width, match.atoms, 1))
    judged = match.judge(range(169 - 30, 169))
    assert judged.right and judged.group is None and judged.message == "Right: that is the hidden molecule."
    wrong = chosen_match(a30_b13, a30_b13.nb_mol).judge(range(30))
    assert not wrong.right and len(wrong.wrong) == 30 and "30 atoms misplaced" in wrong.message
