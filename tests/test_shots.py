"""Next shots at their edges: ties in the ranking and in a shot's outcomes, the budget's boundary,
one candidate or none, a stop, and the texts a player reads.

test_decode.py checks the shots against candidates computed other ways; these are the
boundaries and tie-breaks it does not cross (found by ``bench/mutation.py shots``).  A shot
is built from its outcome counts (``shot_of_counts``, indexed by engine code + 2:
reflected, absorbed, then the exits), as the ranking and the strategy book build them.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

from bbcore import shots
from bbcore.config import Config, parse_config
from bbcore.decode import DecodeCancelled, candidates
from bbcore.game import ABSORBED, REFLECTED, Game, parse_game
from bbcore.numbering import atoms_of
from bbcore.rays import spectrum
from bbcore.shots import (
    ambiguity,
    atom_counts,
    heat_token,
    is_ambiguous,
    next_shots,
    outcome_text,
    outcomes_text,
    probabilities,
    rank_shots,
    ranked_shots,
    shot_of_counts,
)

A3_B4 = parse_config("A3_B4")
A4_B4 = parse_config("A4_B4")


def shot(position: int, reflected: int = 0, absorbed: int = 0, *exits: int) -> shots.NextShot:
    """A shot of ``position`` whose outcomes are these counts (exits at positions 1, 2, ...)."""
    return shot_of_counts(position, np.array([reflected, absorbed, *exits], dtype=np.int64))


# -- a shot's outcomes ------------------------------------------------------------------


def test_outcomes_as_frequent_come_hit_then_reflection_then_exits_by_position():
    """Ties in a shot's outcomes go to H, then R, then the exits by position (the engine's codes
    put R before H: the order is the player's, not the codes')."""
    tied = shot(1, 2, 2, 0, 2, 0, 2, 5)  # R 2, H 2, ->2 2, ->4 2, ->5 5
    assert tied.outcomes == ((5, 5), (ABSORBED, 2), (REFLECTED, 2), (2, 2), (4, 2))
    assert shot(1, 3, 3).outcomes == ((ABSORBED, 3), (REFLECTED, 3))
    assert shot(1, 1, 0, 1).outcomes == ((REFLECTED, 1), (1, 1))


# -- the ranking's tie-breaks ------------------------------------------------------------------


def test_equal_remaining_goes_to_more_information_then_to_the_lower_position():
    """{3, 1, 1, 1, 1, 1} and {2, 2, 2, 1, 1}: 8 candidates, 14/8 left either way, but the first
    tells more (2.41 bits, not 2.25); the better one at the higher position, so that the
    position alone would rank them wrong."""
    spread = shot(9, 3, 1, 1, 1, 1, 1)
    even = shot(2, 2, 2, 2, 1, 1)
    assert spread.remaining == even.remaining == 14 / 8
    assert spread.information > even.information
    assert rank_shots([even, spread], "remaining") == [spread, even]
    twin = shot(4, 1, 1, 1, 1, 1, 3)  # the same outcome sizes as ``spread``: a tie to the end
    assert rank_shots([spread, even, twin], "remaining") == [twin, spread, even]
    assert rank_shots([spread, even, twin], "information") == [twin, spread, even]


def test_remaining_is_compared_to_its_decimals_not_rounded_to_a_whole_number():
    """2.17 left ranks before 2.5 (both round to 2): {3, 2, 2, 2, 2, 1} and {4, 3, 1, 1, 1, 1, 1}
    tell exactly as much (the docstring's pair: equal entropy), so the information ranking turns
    on the remaining too; the fewer left at the higher position."""
    fewer = shot(9, 3, 2, 2, 2, 2, 1)
    more = shot(2, 4, 3, 1, 1, 1, 1, 1)
    assert (fewer.remaining, more.remaining) == (26 / 12, 30 / 12)
    assert fewer.information == more.information
    assert rank_shots([more, fewer], "information") == [fewer, more]
    # {5, 5} leaves 5.0 and tells 1 bit, {7, 1, 1, 1} leaves 5.2 but tells 1.36 bits: rounded, the
    # remaining would tie and the information rank the worse one first
    halves, lopsided = shot(9, 5, 5), shot(2, 7, 1, 1, 1)
    assert halves.remaining < lopsided.remaining and halves.information < lopsided.information
    assert rank_shots([lopsided, halves], "remaining") == [halves, lopsided]


# -- next shots over few candidates ------------------------------------------------------------


def test_one_candidate_lists_every_position_unshot_none_splitting_and_no_candidate_none():
    """One candidate: every unknown position, each with the one outcome it gives (the ranking
    skips it: ``ranked_shots``); no candidate: no shot."""
    full = parse_game(spectrum(A3_B4, atoms_of(A3_B4, 300)), A3_B4)
    game = Game.empty(A3_B4.width).with_result(1, full.result(1))  # one ray shown
    found = candidates(A3_B4, game, source="compute")
    one = candidates(A3_B4, full, source="compute")
    assert one.count == 1 and found.count > 1
    listed = next_shots(A3_B4, game, one)
    assert [s.position for s in sorted(listed, key=lambda s: s.position)] == list(game.unknown)
    assert all(not s.splits and s.remaining == 1 for s in listed)
    none = found.__class__(A3_B4, np.empty(0, np.int64), np.empty((0, 3), np.uint8), "computed")
    assert next_shots(A3_B4, game, none) == []
    assert ranked_shots(A3_B4, game, one) == ([], None)
    assert not is_ambiguous(one, listed)
    assert ambiguity(one, listed, None) is None


def test_the_budget_is_the_most_rays_still_ranked(monkeypatch):
    """A cost of exactly ``NEXT_SHOT_BUDGET`` rays is ranked; one ray more is not, and says why."""
    game = Game.empty(A4_B4.width)
    every = candidates(A4_B4, game)
    cost = shots.shot_cost(every, game)
    assert cost == A4_B4.nb_mol * A4_B4.positions
    monkeypatch.setattr(shots, "NEXT_SHOT_BUDGET", cost)
    ranked, skipped = ranked_shots(A4_B4, game, every)
    assert skipped is None and len(ranked) == A4_B4.positions
    monkeypatch.setattr(shots, "NEXT_SHOT_BUDGET", cost - 1)
    assert ranked_shots(A4_B4, game, every) == (
        [],
        "next shots not ranked: 1,820 candidates x 16 positions is too many rays to trace; "
        "shoot a ray or two first",
    )


def test_ranked_shots_pass_the_ranking_progress_and_stop_on():
    game = Game.empty(A4_B4.width)
    every = candidates(A4_B4, game)
    for by in ("remaining", "information"):
        seen: list[tuple[int, int]] = []
        ranked, _ = ranked_shots(A4_B4, game, every, by=by, progress=lambda d, t, s=seen: s.append((d, t)))
        assert ranked == next_shots(A4_B4, game, every, by=by)
        assert seen[0] == (0, 1820) and seen[-1] == (1820, 1820)
        assert all(total == 1820 and 0 <= done <= 1820 for done, total in seen)
        assert [done for done, _ in seen] == sorted(done for done, _ in seen)
    full = parse_game(spectrum(A3_B4, atoms_of(A3_B4, 300)), A3_B4)
    two = Game.empty(A3_B4.width).with_result(2, full.result(2)).with_result(7, full.result(7))
    found = candidates(A3_B4, two, source="compute")
    by_information, _ = ranked_shots(A3_B4, two, found, by="information")
    assert by_information == next_shots(A3_B4, two, found, by="information")
    assert by_information != ranked_shots(A3_B4, two, found)[0]  # the rankings differ here
    stop = threading.Event()
    stop.set()
    with pytest.raises(DecodeCancelled):
        ranked_shots(A4_B4, game, every, stop=stop)
    with pytest.raises(DecodeCancelled):
        next_shots(A4_B4, game, every, stop=stop)


def test_a_stop_set_after_the_last_batch_still_cancels(monkeypatch):
    """The last tick (after every batch) checks the stop too: set during the last batch, the
    ranking is cancelled, not returned."""
    game = Game.empty(A4_B4.width)
    every = candidates(A4_B4, game)
    stop = threading.Event()
    with pytest.raises(DecodeCancelled):
        next_shots(A4_B4, game, every, stop=stop, progress=lambda done, total: done == total or stop.set())


# -- atom counts and probabilities ---------------------------------------------------------


def test_every_molecule_counts_atoms_exactly_in_int64_or_python_integers():
    every = candidates(A4_B4, Game.empty(A4_B4.width))
    counts = atom_counts(every)
    assert counts.dtype == np.int64 and counts.shape == (4, 4)
    assert counts.tolist() == [[455] * 4] * 4  # C(15, 3): the molecules holding a given cell
    huge = Config(60, 13)  # C(169, 60) molecules: past int64
    big = atom_counts(candidates(huge, Game.empty(huge.width)))
    from math import comb

    assert big.dtype == object and big[0, 0] == comb(168, 59)
    assert probabilities(candidates(huge, Game.empty(huge.width)))[0, 0] == pytest.approx(60 / 169)


def test_listed_candidates_count_in_int64_and_no_candidate_has_zero_probabilities():
    full = parse_game(spectrum(A3_B4, atoms_of(A3_B4, 300)), A3_B4)
    game = Game.empty(A3_B4.width).with_result(1, full.result(1))
    found = candidates(A3_B4, game, source="compute")
    assert atom_counts(found).dtype == np.int64
    assert atom_counts(found).sum() == 3 * found.count
    empty = found.__class__(A3_B4, np.empty(0, np.int64), np.empty((0, 3), np.uint8), "computed")
    with np.errstate(all="raise"):  # no division by zero: all zeros, as floats
        zero = probabilities(empty)
    assert zero.dtype == float and not zero.any() and zero.shape == (4, 4)


# -- what a player reads -----------------------------------------------------------------


def test_heat_tokens_keep_never_always_and_one_to_99_apart():
    assert heat_token(0, 1000) == "-"
    assert heat_token(1000, 1000) == "O"
    assert heat_token(1, 1000) == "1"  # 0.1% is not "never"
    assert heat_token(999, 1000) == "99"  # 99.9% is not "always"
    assert heat_token(5, 1000) == "1"  # 0.5% rounds to 0 then up to 1
    assert heat_token(15, 1000) == "2"
    assert heat_token(1, 2) == "50"
    assert heat_token(1, 3) == "33"


def test_outcome_texts_name_each_result_and_cut_after_the_limit():
    assert outcome_text(ABSORBED, 12) == "H 12"
    assert outcome_text(REFLECTED, 3) == "R 3"
    assert outcome_text(7, 1234) == "->7 1,234"
    three = shot(1, 1, 4, 2)  # H 4, ->1 2, R 1
    assert outcomes_text(three, 3) == "H 4, ->1 2, R 1"  # exactly the limit: nothing cut
    assert outcomes_text(three, 4) == "H 4, ->1 2, R 1"
    assert outcomes_text(three, 2) == "H 4, ->1 2, ... (3 results)"
    assert outcomes_text(three, 1) == "H 4, ... (3 results)"


def test_a_stop_ends_the_ranking_at_the_next_batch(monkeypatch):
    """Set while the first batch is traced, a stop cancels before the second: no batch after it."""
    game = Game.empty(A4_B4.width)
    every = candidates(A4_B4, game)
    monkeypatch.setattr(shots, "_RAYS_PER_BATCH", 100 * A4_B4.positions)  # 19 batches of 100
    stop = threading.Event()
    seen: list[int] = []

    def progress(done: int, total: int) -> None:
        seen.append(done)
        stop.set()

    with pytest.raises(DecodeCancelled):
        next_shots(A4_B4, game, every, stop=stop, progress=progress)
    assert seen == [0]
