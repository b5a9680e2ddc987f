"""A game against the box (``bbcore.play``): shots, marks, points, judged guesses, draws."""

from __future__ import annotations

import pytest
from games import spectral_pair

from bbcore import rays
from bbcore.config import Config
from bbcore.game import ABSORBED
from bbcore.numbering import atoms_of
from bbcore.play import (
    BBTUI,
    EMACS,
    KBLACKBOX,
    PRESETS,
    RULES,
    TATHAM,
    Match,
    PlayError,
    chosen_match,
    group_size,
    hard_match,
    random_match,
    ray_result,
)
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


# -- the rules of each program, and their boards -----------------------------------------


def test_the_presets_of_each_program():
    """Tatham's presets, KBlackBox's levels and Emacs' default, each with its program's rules."""
    boards = {name: (preset.rules.name, preset.config.name) for name, preset in PRESETS.items()}
    assert boards == {
        "tatham-5x5-3": ("tatham", "A3_B5"),
        "tatham-8x8-5": ("tatham", "A5_B8"),
        "tatham-8x8-3-6": ("tatham", "A3-6_B8"),
        "tatham-10x10-5": ("tatham", "A5_B10"),
        "tatham-10x10-4-10": ("tatham", "A4-10_B10"),
        "kblackbox-6x6-2": ("kblackbox", "A2_B6"),
        "kblackbox-8x8-4": ("kblackbox", "A4_B8"),
        "kblackbox-10x10-6": ("kblackbox", "A6_B10"),
        "kblackbox-12x12-8": ("kblackbox", "A8_B12"),
        "kblackbox-14x10-11": ("kblackbox", "A11_B14x10"),
        "kblackbox-20x12-15": ("kblackbox", "A15_B20x12"),
        "emacs-8x8-4": ("emacs", "A4_B8"),
    }
    assert PRESETS["tatham-8x8-3-6"].describe() == "Tatham's Black Box 8 x 8, 3 to 6 balls (not told)"
    assert all(rules.describe().startswith(rules.title) for rules in RULES.values())


def test_points_as_each_program_counts_them():
    """The spec's worked molecule, rays 1 (H), 2 (R) and 3 (out at 10): bbtui and Emacs 1 + 1 + 2,
    KBlackBox 3 + 3 + 9, Tatham none (the rays are counted)."""
    for rules, points in ((BBTUI, 4), (EMACS, 4), (KBLACKBOX, 15), (TATHAM, 0)):
        match = chosen_match(A2_B4, 2, rules)
        for position in (1, 2, 3):
            match.shoot(position)
        assert (match.rays, match.points) == (3, points), rules.name


def test_tatham_accepts_a_guess_no_ray_tells_apart_and_names_one_that_does():
    """A spectral twin is accepted; another molecule is refused with a ray whose results differ
    (checked with the reference tracer)."""
    hidden, twin = spectral_pair(A3_B4)
    accepted = chosen_match(A3_B4, hidden, TATHAM).judge(atoms_of(A3_B4, twin))
    assert accepted.right and accepted.same_spectrum and accepted.telling is None and accepted.penalty == 0
    other = atoms_of(A3_B4, 1)
    refused = chosen_match(A3_B4, hidden, TATHAM).judge(other)
    assert not refused.right and refused.telling is not None and not refused.lost
    position, truth, yours = refused.telling
    assert ray_result(rays.trace(4, atoms_of(A3_B4, hidden), position)) == truth
    assert ray_result(rays.trace(4, other, position)) == yours != truth
    assert f"position {position} tells them apart" in refused.message and refused.message.startswith(
        "Refused"
    )
    for earlier in range(1, position):  # the first such ray
        assert ray_result(rays.trace(4, other, earlier)) == ray_result(
            rays.trace(4, atoms_of(A3_B4, hidden), earlier)
        )


def test_emacs_wants_the_exact_cells_and_kblackbox_loses_on_a_misplaced_ball():
    hidden, twin = spectral_pair(A3_B4)
    emacs = chosen_match(A3_B4, hidden, EMACS)
    judged = emacs.judge(atoms_of(A3_B4, twin))
    misplaced = len(set(atoms_of(A3_B4, twin)) - set(atoms_of(A3_B4, hidden)))
    assert not judged.right and judged.penalty == 5 * misplaced == emacs.points
    assert "Tatham's rules would accept it" in judged.message
    kde = chosen_match(A3_B4, hidden, KBLACKBOX)
    kde.shoot(1)
    lost = kde.judge(atoms_of(A3_B4, twin))
    assert lost.lost and not lost.right and lost.message.startswith("Lost") and kde.points == kde.ray_points
    right = chosen_match(A3_B4, hidden, KBLACKBOX).judge(atoms_of(A3_B4, hidden))
    assert right.right and not right.lost


def test_a_range_hides_a_count_drawn_with_the_seed():
    """Tatham's 8x8 with 3 to 6 balls: each seed draws a count in the range, replayed by the seed;
    a guess of any count in the range is judged by its rays, a count outside refused."""
    config = PRESETS["tatham-8x8-3-6"].config
    drawn = [random_match(config, seed, TATHAM) for seed in range(40)]
    assert {match.count for match in drawn} == {3, 4, 5, 6}
    assert all(len(match.atoms) == match.count for match in drawn)
    again = random_match(config, 7, TATHAM)
    assert (again.count, again.number) == (drawn[7].count, drawn[7].number)
    match = drawn[0]
    assert match.judge(match.atoms).right
    with pytest.raises(PlayError, match="place 3 to 6 atoms"):
        random_match(config, 1, TATHAM).judge([0, 1])
    with pytest.raises(PlayError, match="range of atom counts"):
        chosen_match(config, 5)


def test_a_game_on_kblackbox_20_by_12():
    """The largest KBlackBox level: every ray shot agrees with the reference tracer, exits pair
    up both ways, and the hidden cells win."""
    preset = PRESETS["kblackbox-20x12-15"]
    match = random_match(preset.config, 3, preset.rules)
    assert match.game.positions == 64 and len(match.atoms) == 15
    for position in range(1, 65):
        if match.game.result(position) is None:
            match.shoot(position)
    for position in range(1, 65):
        traced = rays.trace(20, match.atoms, position, 12)
        assert match.game.result(position) == ray_result(traced)
    judged = match.judge(match.atoms)
    assert judged.right and match.points == sum(
        9 if isinstance(match.game.result(p), int) else 3 for p in match.shots
    )
