"""What a player reads in a game (``bbcore.play``): the rules, the judgements and the refusals, in full.

Written from the mutation run of ``bbcore/play.py`` (``bench/mutation.py play``): the tests
of ``tests/test_play.py`` read fragments of the messages, so a word changed elsewhere in
them went unseen.  A3_B4's molecules 128 and 195 share a spectrum (``games.spectral_pair``).
"""

from __future__ import annotations

import pytest
from games import spectral_pair

from bbcore import rays
from bbcore.config import Config, parse_config
from bbcore.numbering import atoms_of
from bbcore.play import (
    BBTUI,
    EMACS,
    KBLACKBOX,
    PRESETS,
    TATHAM,
    Match,
    PlayError,
    chosen_match,
    group_size,
    hard_match,
    random_match,
    ray_result,
    telling_ray,
)
from bbcore.store import open_database

A3_B4 = Config(3, 4)
OTHER = (0, 1, 2)  # neither: ray 2 tells it from 128 (128's comes out at 3, this one's is reflected)
TELLS = "position 2 tells them apart: the box gives out at position 3, your atoms would give reflected (R)"


def test_each_programs_rules_in_one_line():
    assert BBTUI.describe() == (
        "bbtui: 1 point per ray absorbed or reflected, 2 per ray out; a guess is right when it gives "
        "the same result for every ray, else 5 points per misplaced atom."
    )
    assert TATHAM.describe() == (
        "Tatham's Black Box: no points, the rays fired are counted; a guess is right when it gives "
        "the same result for every ray."
    )
    assert KBLACKBOX.describe() == (
        "KBlackBox: 3 points per ray absorbed or reflected, 9 per ray out; a guess is right only on "
        "the exact cells; a misplaced ball loses."
    )
    assert EMACS.describe() == (
        "Emacs' blackbox: 1 point per ray absorbed or reflected, 2 per ray out; a guess is right only "
        "on the exact cells, else 5 points per misplaced atom."
    )
    assert PRESETS["kblackbox-14x10-11"].describe() == "KBlackBox 14 x 10, 11 balls"


def judged(rules, guess):
    hidden, _ = spectral_pair(A3_B4)
    return chosen_match(A3_B4, hidden, rules).judge(guess)


def test_the_judgements_of_each_program_in_full():
    hidden, twin = spectral_pair(A3_B4)
    assert (hidden, twin) == (128, 195)
    mine, theirs = atoms_of(A3_B4, hidden), atoms_of(A3_B4, twin)
    shared = (
        "Right: that is the hidden molecule. Its spectrum is shared by 2 molecules: no ray could "
        "tell them apart, and any of them counts as right."
    )
    for rules in (BBTUI, TATHAM):
        exact = judged(rules, mine)
        assert (exact.right, exact.same_spectrum, exact.penalty, exact.group, exact.message) == (
            True,
            False,
            0,
            2,
            shared,
        )
        same = judged(rules, theirs)
        assert (same.right, same.same_spectrum, same.penalty, same.lost, same.telling) == (
            True,
            True,
            0,
            False,
            None,
        )
        assert same.message == (
            "Right: your molecule (number 195) is not the hidden one, but gives the same spectrum; the 2 "
            f"molecules of that spectral group count as right under the rules of {rules.title}."
        )
    for rules in (KBLACKBOX, EMACS):
        assert judged(rules, mine).message == "Right: that is the hidden molecule."
    wrong = judged(BBTUI, OTHER)
    assert (wrong.right, wrong.wrong, wrong.penalty, wrong.telling) == (False, (0, 2), 10, (2, 3, "&"))
    assert wrong.message == f"Wrong: 2 atoms misplaced, 5 points each. {TELLS[0].upper()}{TELLS[1:]}."
    refused = judged(TATHAM, OTHER)
    assert (refused.penalty, refused.message) == (0, f"Refused: {TELLS}.")
    assert judged(EMACS, theirs).message == (
        "Wrong: 1 atom misplaced, 5 points each (it gives the same rays: Tatham's rules would accept it)."
    )
    assert judged(EMACS, (0, 5, 15)).message == "Wrong: 3 atoms misplaced, 5 points each."
    assert (judged(EMACS, (0, 5, 15)).penalty, judged(EMACS, theirs).penalty) == (15, 5)
    lost = judged(KBLACKBOX, theirs)
    assert (lost.lost, lost.penalty) == (True, 0)
    assert lost.message == "Lost: 1 atom misplaced; KBlackBox ends the game on a misplaced ball."
    assert (
        judged(KBLACKBOX, OTHER).message
        == "Lost: 2 atoms misplaced; KBlackBox ends the game on a misplaced ball."
    )


def test_a_molecule_alone_in_its_spectrum_is_right_without_more_words():
    match = chosen_match(Config(2, 4), 2)
    assert match.judge(match.atoms).message == "Right: that is the hidden molecule."
    assert match.judgement.group == 1


def test_a_guess_of_another_count_on_a_range_counts_the_atoms_misplaced_either_way():
    config = parse_config("A3-6_B8")
    match = random_match(config, 7, TATHAM)
    hidden = match.atoms
    spare = next(c for c in range(64) if c not in hidden)
    more = Match(config, match.number, "random", rules=EMACS, count=match.count).judge((*hidden, spare))
    assert (more.wrong, more.penalty) == ((spare,), 5) and more.message.startswith("Wrong: 1 atom misplaced")
    if match.count > 3:
        fewer = Match(config, match.number, "random", rules=EMACS, count=match.count).judge(hidden[1:])
        assert (fewer.wrong, fewer.penalty) == ((), 5)


def test_the_refusals_of_a_move_in_full():
    a3_6_b8 = parse_config("A3-6_B8")
    refusals = {
        "A3_B4 has molecules 1 to 560, not 0": lambda: Match(A3_B4, 0, "chosen"),
        "A3-6_B8 is a range of atom counts: say how many atoms are hidden": lambda: Match(
            a3_6_b8, 1, "chosen"
        ),
        "A3-6_B8 hides 3 to 6 atoms, not 7": lambda: Match(a3_6_b8, 1, "chosen", count=7),
        "A3-6_B8 hides 3 to 6 atoms, not 2": lambda: Match(a3_6_b8, 1, "chosen", count=2),
        "position must be in 1..16, got 0": lambda: chosen_match(A3_B4, 5).shoot(0),
        "position must be in 1..16, got 17": lambda: chosen_match(A3_B4, 5).shoot(17),
        "place 3 atoms to guess (1 placed): A3_B4 hides 3": lambda: chosen_match(A3_B4, 5).judge([1]),
        "place 3 atoms to guess (2 placed): A3_B4 hides 3": lambda: chosen_match(A3_B4, 5).judge([1, 2, 2]),
        "A3-6_B8 is a range of atom counts: its molecules have no numbers; 'seed N' replays a game": lambda: (
            chosen_match(a3_6_b8, 5)
        ),
        "A3_B8x6 has no hard molecule to draw: no book and no spectral group off the square": lambda: (
            hard_match(parse_config("A3_B8x6"), [1])
        ),
    }
    for message, move in refusals.items():
        with pytest.raises(PlayError) as refused:
            move()
        assert str(refused.value) == message
    # the ends of the ranges are allowed
    assert Match(A3_B4, 560, "chosen").number == 560 and Match(A3_B4, 1, "chosen").number == 1
    assert Match(a3_6_b8, 1, "chosen", count=6).count == 6 and Match(a3_6_b8, 1, "chosen", count=3).count == 3
    match = chosen_match(A3_B4, 5)
    match.shoot(1), match.shoot(16)
    # revealed: the game is over, for a shot and a guess
    match.reveal()
    assert match.over
    for move in (lambda: match.shoot(2), lambda: match.judge(match.atoms)):
        with pytest.raises(PlayError) as refused:
            move()
        assert str(refused.value) == "the game is over: start a new one"


def test_a_game_shows_its_molecule_and_a_random_game_its_seed():
    match = chosen_match(A3_B4, 5)
    assert match.molecule == "OO----O---------"  # cells 0, 1 and 6
    assert (match.draw, match.seed, match.count, match.rays, match.points) == ("chosen", None, 3, 0, 0)
    drawn = random_match(A3_B4, 42)
    assert (drawn.draw, drawn.seed) == ("random", 42) and 1 <= drawn.number <= 560
    assert 1 <= random_match(A3_B4).seed < 1_000_000


def test_the_ray_that_tells_two_molecules_apart_may_be_the_first_or_the_last():
    # A2_B4's 1 and 18 differ first at position 1; A3_B4's 137 and 281 only at the last, 16
    a2_b4 = Config(2, 4)
    assert telling_ray(a2_b4, atoms_of(a2_b4, 18), atoms_of(a2_b4, 1))[0] == 1
    position, truth, yours = telling_ray(A3_B4, atoms_of(A3_B4, 281), atoms_of(A3_B4, 137))
    assert position == 16 and truth != yours
    assert truth == ray_result(rays.trace(4, atoms_of(A3_B4, 137), 16))
    refused = chosen_match(A3_B4, 137, TATHAM).judge(atoms_of(A3_B4, 281))
    assert not refused.right and refused.message.startswith("Refused: position 16 tells them apart")


def test_a_random_draw_reaches_every_molecule_and_keeps_its_seed_and_rules():
    a1_b2 = Config(1, 2)  # 4 molecules
    assert {random_match(a1_b2, seed).number for seed in range(60)} == {1, 2, 3, 4}
    a1_2_b2 = parse_config("A1-2_B2")  # 4 molecules of one atom, 6 of two
    drawn = [random_match(a1_2_b2, seed, KBLACKBOX) for seed in range(80)]
    assert {(m.count, m.number) for m in drawn} == {(1, n) for n in range(1, 5)} | {
        (2, n) for n in range(1, 7)
    }
    assert all((m.draw, m.seed, m.rules) == ("random", seed, KBLACKBOX) for seed, m in enumerate(drawn))


def test_a_hard_draw_is_replayed_by_its_seed(tmp_path):
    open_database(tmp_path / "empty.sqlite")  # nothing explored: the book's hardest only
    hardest = list(range(100, 300))
    match = hard_match(A3_B4, hardest, rules=EMACS)
    assert (match.draw, match.rules) == ("hard", EMACS) and isinstance(match.seed, int)
    again = [hard_match(A3_B4, hardest, seed=match.seed).number for _ in range(3)]
    assert again == [match.number] * 3
    numbers = [hard_match(A3_B4, hardest, seed=seed).number for seed in range(10)]
    assert numbers == [hard_match(A3_B4, hardest, seed=seed).number for seed in range(10)]
    assert hard_match(A3_B4, hardest, seed=5).seed == 5


def test_hard_draws_reach_every_spectral_group_of_an_explored_configuration(store):
    """A3_B4 has 4 spectral groups of 2 (1 up to symmetry): with no book, each is drawn."""
    drawn = {hard_match(A3_B4, [], seed=seed).number for seed in range(60)}
    groups = {rays.spectrum(A3_B4, atoms_of(A3_B4, number)) for number in drawn}
    assert len(groups) == 4 and len(drawn) == 8


def test_a_rectangles_rays_are_traced_in_its_own_height():
    a3_b5x4 = parse_config("A3_B5x4")  # 18 positions round a box 5 wide and 4 high
    hidden = chosen_match(a3_b5x4, 7).atoms
    assert hidden == (0, 1, 8)
    # ray 3 tells them apart: out at 7 from the hidden atoms, at 11 from (0, 1, 2)
    assert telling_ray(a3_b5x4, (0, 1, 2), hidden) == (3, 7, 11)
    assert telling_ray(a3_b5x4, hidden, (0, 1, 2)) == (3, 11, 7)
    assert group_size(a3_b5x4, hidden) == 1
    judged = chosen_match(a3_b5x4, 7, TATHAM).judge((0, 1, 2))
    assert judged.guess == (0, 1, 2) and judged.telling == (3, 7, 11)


def test_a_spectral_group_counts_every_ray_the_first_included():
    """A3_B4's 140 and 192 differ only at ray 1 (reflected, absorbed): each is alone in its group."""
    first = [ray_result(rays.trace(4, atoms_of(A3_B4, n), 1)) for n in (140, 192)]
    assert first[0] != first[1]
    assert all(
        ray_result(rays.trace(4, atoms_of(A3_B4, 140), p))
        == ray_result(rays.trace(4, atoms_of(A3_B4, 192), p))
        for p in range(2, 17)
    )
    assert group_size(A3_B4, atoms_of(A3_B4, 140)) == group_size(A3_B4, atoms_of(A3_B4, 192)) == 1
