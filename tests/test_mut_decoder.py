"""The decoder's sentences and its answers off the engine's square (``bbcore.decoder``), in full.

Written from the mutation run of ``bbcore/decoder.py`` (``bench/mutation.py decoder``):
what ``bbcore decode`` and the Decode screen print about a decode, each case of
each sentence, and a range of counts on a square (the engine once per count,
added up) against brute force.
"""

from __future__ import annotations

import functools
import threading
from collections import Counter
from dataclasses import replace
from math import comb

import numpy as np
import pytest
from stores import explored_compact

from bbcore import rays
from bbcore.config import Config, parse_config
from bbcore.decoder import (
    Answer,
    DecodeCancelled,
    Decoder,
    _to_try,
    count_sentence,
    shot_table,
    shots_title,
    shown_phrase,
    source_phrase,
)
from bbcore.game import DecodeError, Game, parse_game
from bbcore.numbering import atoms_of
from bbcore.shots import outcome_text, rank_shots
from bbcore.solver import Box, Count
from bbcore.store import close_database, open_database

A2_B4, A3_B4 = Config(2, 4), Config(3, 4)


@functools.cache
def spectra(config: Config) -> tuple[Game, ...]:
    """Every molecule's full game by the reference tracer, in number order."""
    return tuple(
        parse_game(rays.spectrum(config, atoms_of(config, k)), config) for k in range(1, config.nb_mol + 1)
    )


def agreeing(config: Config, game: Game) -> int:
    """How many molecules of ``config`` give every result of ``game``."""
    return sum(all(full.results[p - 1] == r for p, r in game.rays()) for full in spectra(config))


def test_each_count_sentence_of_the_engine():
    decoder = Decoder(A3_B4, source="compute")
    full = parse_game(rays.spectrum(A3_B4, atoms_of(A3_B4, 200)), A3_B4)
    assert count_sentence(decoder.decode(full)) == "Unique: one molecule gives this spectrum."
    sizes = Counter(full.results for full in spectra(A3_B4))
    ambiguous = next(full for full in spectra(A3_B4) if sizes[full.results] == 2)
    assert count_sentence(decoder.decode(ambiguous)) == "Ambiguous: 2 molecules give this spectrum."
    # every ray reflected: no molecule of three atoms does that
    nothing = Game.empty(4)
    for position in range(1, 17):
        nothing = nothing.with_result(position, "&")
    assert count_sentence(decoder.decode(nothing)) == "No molecule gives this spectrum."
    contradiction = Game.empty(4)
    for position in (1, 2, 3, 4):
        contradiction = contradiction.with_result(position, "&")
    answer = decoder.decode(contradiction)
    assert count_sentence(answer) == "No molecule agrees with these rays."
    assert answer.core == (1, 2)  # the solver names two rays that cannot both hold
    one = partial_with_one(decoder, full)
    assert count_sentence(decoder.decode(one)) == "Solved: one molecule agrees with these rays."
    some = Game.empty(4).with_result(1, "&")
    assert (
        count_sentence(decoder.decode(some)) == f"{agreeing(A3_B4, some):,} molecules agree with these rays."
    )


def partial_with_one(decoder: Decoder, full: Game) -> Game:
    """The first rays of ``full`` that leave one molecule (and not all of them)."""
    game = Game.empty(4)
    for position, result in full.rays():
        game = game.with_result(position, result)
        if decoder.decode(game).count == 1:
            assert not game.complete
            return game
    raise AssertionError("no partial game leaves one molecule")


def test_a_range_of_counts_on_a_square_adds_each_counts_molecules():
    a2_3_b4 = parse_config("A2-3_B4")
    some = Game.empty(4).with_result(1, "&")
    answer = Decoder(a2_3_b4).decode(some)
    assert answer.count == agreeing(A2_B4, some) + agreeing(A3_B4, some) == 105 and answer.exact
    assert count_sentence(answer) == "105 placements agree with these rays."
    assert source_phrase(answer) == "solved: more molecules than the engine lists, or a box it does not trace"
    assert answer.skipped is None and len(answer.shots) == 15  # every position not known yet
    empty = Decoder(a2_3_b4).decode(Game.empty(4))
    assert count_sentence(empty) == "No ray shot: every placement (680) agrees; they are not listed."
    assert empty.count == A2_B4.nb_mol + A3_B4.nb_mol


def test_the_phrases_about_a_decode():
    assert shown_phrase(Game.empty(4).with_result(1, "&")) == "1 ray shown on 1 position"
    assert shown_phrase(Game.empty(4).with_result(1, 2)) == "1 ray shown on 2 positions"
    two = Game.empty(4).with_result(1, "&").with_result(3, "@")
    assert shown_phrase(two) == "2 rays shown on 2 positions"
    assert shots_title("remaining") == "Best next shots, by expected candidates left:"
    assert shots_title("information", marked=True) == "Best next shots (*), by expected information:"


# -- off the engine's square: the brute force over every placement ---------------------------
#
# Written from the second run (bench/mutation_notes.md, ``## decoder.py``): a rectangle, a range
# of counts, a square past ``DIRECT_LIMIT``, each ranking, progress and cancellation at each step.

A2_B4x3 = Config(2, 4, 3)
"""A rectangle with a fixed count: the solver lists its molecules (66)."""
A1_2_B4x3 = Config(1, 4, 3, 2)
"""A rectangle with a range of counts: the solver counts its placements, lists none."""
A1_2_B4 = Config(1, 4, 4, 2)
"""A range of counts on a square: the engine once per count."""


def placements(config: Config, game: Game) -> list[tuple[tuple[int, ...], tuple]]:
    """Every placement of ``config`` (each count allowed, in number order) agreeing with ``game``,
    with its 2(W + H) results, by the reference tracer."""
    found = []
    for n in range(config.atoms, config.atoms_max + 1):
        one = Config(n, config.width, config.height)
        for k in range(1, one.nb_mol + 1):
            atoms = tuple(int(c) for c in atoms_of(one, k))
            results = parse_game(rays.spectrum(one, atoms), one).results
            if all(results[p - 1] == r for p, r in game.rays()):
                found.append((atoms, results))
    return found


def one_ray(config: Config) -> Game:
    """Position 1 absorbed (hit): enough placements agree that the two rankings differ."""
    return Game.empty(config.width, config.height).with_result(1, "@")


def assert_shots_are_the_brute_forces(answer, config: Config, agree: list, by: str) -> None:
    """Every position not shot, with how many placements give each result, ranked ``by``."""
    expected = {p: Counter(results[p - 1] for _, results in agree) for p in answer.game.unknown}
    assert {shot.position: dict(shot.outcomes) for shot in answer.shots} == expected
    for shot in answer.shots:
        assert shot.remaining == pytest.approx(
            sum(n * n for n in expected[shot.position].values()) / len(agree)
        )
    assert answer.shots == rank_shots(answer.shots, by)


def expected_heat(config: Config, agree: list) -> np.ndarray:
    """The atom counts of the agreeing placements, H x W."""
    counts = np.zeros(config.cells, dtype=np.int64)
    for atoms, _ in agree:
        counts[list(atoms)] += 1
    return counts.reshape(config.height, config.width)


def test_the_two_rankings_differ_on_the_games_below():
    """The premise of the tests below: ranked by each figure, their shots come in other orders."""
    for config in (A2_B4x3, A1_2_B4x3, A1_2_B4):
        remaining = Decoder(config).decode(one_ray(config))
        information = Decoder(config).decode(one_ray(config), by="information")
        assert [s.position for s in remaining.shots] != [s.position for s in information.shots], config


@pytest.mark.parametrize("by", ["remaining", "information"])
def test_a_rectangle_with_a_fixed_count_lists_its_molecules_by_the_solver(by):
    game = one_ray(A2_B4x3)
    agree = placements(A2_B4x3, game)
    answer = Decoder(A2_B4x3).decode(game, by=by)
    assert answer.game == game and answer.config == A2_B4x3 and not answer.explored
    found = answer.found
    assert found is not None and found.source == "solver" and found.config == A2_B4x3
    numbers = [
        k for k in range(1, A2_B4x3.nb_mol + 1) if tuple(atoms_of(A2_B4x3, k)) in {a for a, _ in agree}
    ]
    assert found.numbers.tolist() == numbers  # in number order
    assert [tuple(row) for row in found.atoms.tolist()] == [tuple(atoms_of(A2_B4x3, k)) for k in numbers]
    assert answer.count == len(agree) == 32 and answer.exact and answer.core is None
    assert answer.solution is not None and answer.solution.count.value == len(agree)
    assert answer.skipped is None
    assert_shots_are_the_brute_forces(answer, A2_B4x3, agree, by)
    counts, total = answer.heat()
    assert total == len(agree) and np.array_equal(counts, expected_heat(A2_B4x3, agree))
    assert count_sentence(answer) == "32 molecules agree with these rays."
    assert source_phrase(answer) == "solved: more molecules than the engine lists, or a box it does not trace"


@pytest.mark.parametrize("by", ["remaining", "information"])
def test_a_rectangle_with_a_range_of_counts_is_counted_by_the_solver(by):
    game = one_ray(A1_2_B4x3)
    agree = placements(A1_2_B4x3, game)
    answer = Decoder(A1_2_B4x3).decode(game, by=by)
    assert answer.found is None and answer.game == game and answer.config == A1_2_B4x3
    assert not answer.explored and answer.skipped is None and answer.core is None
    assert answer.count == len(agree) == 36 and answer.exact
    assert_shots_are_the_brute_forces(answer, A1_2_B4x3, agree, by)
    # the heat map of two rays: per mille of each cell's probability, the certain cells kept certain
    hidden = parse_game(rays.spectrum(A2_B4x3, (1, 6)), A2_B4x3)
    two = game.with_result(1, hidden.results[0]).with_result(5, hidden.results[4])
    agree_two = placements(A1_2_B4x3, two)
    counts = expected_heat(A1_2_B4x3, agree_two)
    heat, total = Decoder(A1_2_B4x3).decode(two).heat()
    assert total == 1000
    certain = np.where(counts == len(agree_two), 1000, np.where(counts == 0, 0, -1))
    per_mille = np.clip(np.rint(counts * 1000 / len(agree_two)), 1, 999).astype(np.int64)
    assert np.array_equal(heat, np.where(certain >= 0, certain, per_mille))
    assert {1000, 0, -1} <= set(certain.ravel().tolist())
    assert count_sentence(answer) == "36 placements agree with these rays."


def two_rays(config: Config) -> Game:
    """Positions 1 and 5 as atoms at cells 1 and 6 give them: some cells certain, some not."""
    hidden = parse_game(rays.spectrum(Config(2, config.width, config.height), (1, 6)), Config(2, 4, 4))
    return one_ray(config).with_result(1, hidden.results[0]).with_result(5, hidden.results[4])


@pytest.mark.parametrize("by", ["remaining", "information"])
def test_a_range_of_counts_on_a_square_adds_each_counts_shots_and_cells(by):
    game = one_ray(A1_2_B4)
    agree = placements(A1_2_B4, game)
    seen = []
    answer = Decoder(A1_2_B4).decode(game, by=by, progress=lambda done, total: seen.append((done, total)))
    assert answer.found is None and answer.config == A1_2_B4 and answer.game == game
    assert not answer.explored and answer.skipped is None and answer.core is None
    assert answer.count == len(agree) == 52 and answer.exact
    assert_shots_are_the_brute_forces(answer, A1_2_B4, agree, by)
    # each count's molecules traced (16 of one atom, then 120 of two) with their progress
    assert (16, 16) in seen and (120, 120) in seen
    counts = expected_heat(A1_2_B4, agree)
    assert np.allclose(answer.probabilities, counts / len(agree))
    two = two_rays(A1_2_B4)
    agree_two = placements(A1_2_B4, two)
    counts = expected_heat(A1_2_B4, agree_two)
    solved = Decoder(A1_2_B4).decode(two, by=by)
    certain = np.where(counts == len(agree_two), 1, np.where(counts == 0, 0, -1))
    assert np.array_equal(solved.solution.backbone, certain) and {1, 0, -1} <= set(certain.ravel().tolist())
    heat, total = solved.heat()
    per_mille = np.clip(np.rint(counts * 1000 / len(agree_two)), 1, 999).astype(np.int64)
    assert total == 1000 and np.array_equal(
        heat, np.where(certain == 1, 1000, np.where(certain == 0, 0, per_mille))
    )
    assert_shots_are_the_brute_forces(solved, A1_2_B4, agree_two, by)


def test_a_range_on_a_square_ranks_its_shots_up_to_the_budget_exactly(monkeypatch):
    """``NEXT_SHOT_BUDGET`` (rays traced to rank the next shots) shrunk to the game's own cost:
    ranked at it, not one ray under it.  The game leaves no molecule of one atom, so the two
    atoms' count alone meets the budget."""
    game = one_ray(A1_2_B4).with_result(2, "@")  # no one atom absorbs two rows
    agree = placements(A1_2_B4, game)
    assert all(len(atoms) == 2 for atoms, _ in agree) and len(agree) > 1
    cost = len(game.unknown) * len(agree)
    monkeypatch.setattr("bbcore.decoder.NEXT_SHOT_BUDGET", cost)
    answer = Decoder(A1_2_B4).decode(game)
    assert answer.skipped is None
    assert_shots_are_the_brute_forces(answer, A1_2_B4, agree, "remaining")
    monkeypatch.setattr("bbcore.decoder.NEXT_SHOT_BUDGET", cost - 1)
    answer = Decoder(A1_2_B4).decode(game)
    assert answer.shots == [] and answer.count == len(agree)
    assert answer.skipped == f"next shots not ranked: {len(agree):,} candidates is too many rays to trace"


def stop_after(total: int) -> tuple[threading.Event, object]:
    """A cancel event and a progress callback that sets it once a stage reports ``total`` done
    of ``total``: the next stage's first check stops the decode."""
    event = threading.Event()

    def progress(done: int, of: int) -> None:
        if done == of == total:
            event.set()

    return event, progress


def test_a_cancel_after_the_candidates_stops_the_ranking_and_keeps_nothing():
    decoder = Decoder(A3_B4, source="compute")
    game = Game.empty(4).with_result(1, "&")
    cancelled, progress = stop_after(_to_try(A3_B4, game))
    with pytest.raises(DecodeCancelled):
        decoder.decode(game, progress=progress, cancelled=cancelled)
    assert decoder.cached(game) is None


def test_the_ranking_reports_its_progress_after_the_candidates():
    seen = []
    game = Game.empty(4).with_result(1, "&")
    answer = Decoder(A3_B4, source="compute").decode(game, progress=lambda *a: seen.append(a))
    count, to_try = answer.found.count, _to_try(A3_B4, game)
    assert count not in (0, 1, to_try)
    assert seen.index((to_try, to_try)) < seen.index((count, count)) == len(seen) - 1


def test_a_cancel_before_the_solver_names_the_rays_that_cannot_all_hold():
    """No molecule agrees: the solver is asked for the core, and a cancel set after the
    candidates stops it there."""
    decoder = Decoder(A3_B4, source="compute")
    game = Game.empty(4)
    for position in (1, 2, 3, 4):
        game = game.with_result(position, "&")
    cancelled, progress = stop_after(_to_try(A3_B4, game))
    with pytest.raises(DecodeCancelled):
        decoder.decode(game, progress=progress, cancelled=cancelled)
    assert decoder.cached(game) is None


def test_a_cancel_stops_a_range_of_counts_at_each_count_and_at_its_ranking():
    game = one_ray(A1_2_B4)
    for total in (16, 120):  # after the one-atom count's candidates, after the two atoms'
        decoder = Decoder(A1_2_B4)
        cancelled, progress = stop_after(total)
        with pytest.raises(DecodeCancelled):
            decoder.decode(game, progress=progress, cancelled=cancelled)
        assert decoder.cached(game) is None
    cancelled = threading.Event()
    cancelled.set()
    with pytest.raises(DecodeCancelled):
        Decoder(A1_2_B4).decode(game, cancelled=cancelled)


@pytest.mark.parametrize("config", [A2_B4x3, A1_2_B4x3])
def test_a_set_cancel_stops_the_solver(config):
    cancelled = threading.Event()
    cancelled.set()
    decoder = Decoder(config)
    with pytest.raises(DecodeCancelled):
        decoder.decode(one_ray(config), cancelled=cancelled)
    assert decoder.cached(one_ray(config)) is None


# -- the kept answers, ranked each way ----------------------------------------------------------


def test_a_kept_answer_comes_back_ranked_as_asked():
    game = one_ray(A3_B4)
    decoder = Decoder(A3_B4, source="compute")
    first = decoder.decode(game, by="information")
    remaining = rank_shots(first.shots, "remaining")
    assert first.shots == rank_shots(first.shots, "information") != remaining
    assert decoder.cached(game).shots == remaining  # ranked by what is left, unless told
    assert decoder.decode(game).shots == remaining
    assert decoder.decode(game, by="information").shots == first.shots
    assert decoder.cached(game, "information").shots == first.shots
    # an engine's answer lists its candidates: no solver's solution, no core, its configuration
    assert first.solution is None and first.core is None and first.config == A3_B4 and first.game == game


def test_an_engine_answer_says_why_its_shots_are_not_ranked(monkeypatch):
    game = one_ray(A3_B4)
    count = Decoder(A3_B4, source="compute").decode(game).count
    monkeypatch.setattr("bbcore.shots.NEXT_SHOT_BUDGET", 1)
    answer = Decoder(A3_B4, source="compute").decode(game)
    assert answer.shots == [] and answer.skipped == (
        f"next shots not ranked: {count:,} candidates x {len(game.unknown)} positions is too many rays "
        "to trace; shoot a ray or two first"
    )
    solved = Decoder(A2_B4x3).decode(one_ray(A2_B4x3))  # the solver's candidates, ranked by the engine
    assert solved.shots == [] and solved.skipped.startswith("next shots not ranked: 32 candidates x 13")


def test_a_count_too_long_to_estimate_is_a_decode_error(monkeypatch):
    """The path search given no leaf and ApproxMC no second (both shrunk): one line, nothing kept."""
    monkeypatch.setattr("bbcore.solver.PATH_LEAVES", 0)
    monkeypatch.setattr("bbcore.solver.COUNTING_SECONDS", 0.0)
    decoder = Decoder(A1_2_B4x3)
    with pytest.raises(DecodeError) as error:
        decoder.decode(one_ray(A1_2_B4x3))
    assert str(error.value) == (
        "too many placements agree to count them within 0 s (shoot more rays, or give a smaller box)"
    )
    assert decoder.cached(one_ray(A1_2_B4x3)) is None


# -- DIRECT_LIMIT shrunk: the engine up to it, the solver past it ---------------------------------


def test_a_square_past_the_engines_limit_is_solved_and_at_it_computed(monkeypatch):
    game = Game.empty(4).with_result(1, "&").with_result(2, "@")
    to_try = comb(16 - 1, 3)  # a reflection at 1: its first cell is empty; 455 molecules to try
    assert _to_try(A3_B4, game) == to_try
    monkeypatch.setattr("bbcore.decoder.DIRECT_LIMIT", to_try)
    at = Decoder(A3_B4, source="compute").decode(game)
    assert at.found.source == "computed" and at.solution is None
    monkeypatch.setattr("bbcore.decoder.DIRECT_LIMIT", to_try - 1)
    past = Decoder(A3_B4, source="compute").decode(game)
    assert past.found.source == "solver" and past.solution is not None and not past.explored
    assert past.found.numbers.tolist() == at.found.numbers.tolist()
    assert past.shots == at.shots and past.config == A3_B4
    # no ray shown: every molecule, not listed, whatever the limit
    assert Decoder(A3_B4, source="compute").decode(Game.empty(4)).found.every_molecule
    # a game that adds a ray to a kept one is narrowed from it by the engine
    decoder = Decoder(A3_B4, source="compute")
    monkeypatch.setattr("bbcore.decoder.DIRECT_LIMIT", 10**9)
    decoder.decode(game)
    monkeypatch.setattr("bbcore.decoder.DIRECT_LIMIT", 0)
    more = decoder.decode(game.with_result(4, "@"))
    assert more.found.source == "computed" and more.solution is None


def test_past_the_limit_an_explored_store_answers_unless_told_to_compute(store, monkeypatch):
    monkeypatch.setattr("bbcore.decoder.DIRECT_LIMIT", 0)
    game = one_ray(A3_B4)
    read = Decoder(A3_B4).decode(game)
    assert read.found.source == "computed" and read.explored and read.solution is None
    assert source_phrase(read) == "computed: quicker than scanning the store for a partial game"
    solved = Decoder(A3_B4, source="compute").decode(game)
    assert solved.found.source == "solver" and not solved.explored
    assert solved.found.numbers.tolist() == read.found.numbers.tolist()
    # told to read the store, a partial game is read from it too
    forced = Decoder(A3_B4, source="store").decode(game)
    assert forced.found.source == "store" and source_phrase(forced) == "read from the explored A3_B4"
    assert forced.found.numbers.tolist() == read.found.numbers.tolist()


def test_a_compact_store_answers_a_full_spectrum_from_its_family(tmp_path):
    path = explored_compact(tmp_path / "compact.sqlite", A3_B4)
    open_database(path)
    try:
        sizes = Counter(full.results for full in spectra(A3_B4))
        ambiguous = next(full for full in spectra(A3_B4) if sizes[full.results] == 2)
        answer = Decoder(A3_B4).decode(ambiguous)
        numbers = [k for k, full in enumerate(spectra(A3_B4), 1) if full.results == ambiguous.results]
        assert answer.found.source == "store" and answer.found.numbers.tolist() == numbers
        assert source_phrase(answer) == "read from the explored A3_B4"
        computed = Decoder(A3_B4, source="compute").decode(one_ray(A3_B4))
        assert (
            source_phrase(computed)
            == "computed: A3_B4 is a compact store, which keeps only its spectral groups"
        )
    finally:
        close_database()


def test_the_solvers_sentences_name_the_rays_that_cannot_hold_or_the_estimates_bounds():
    game = Game.empty(4, 3)
    for position in (1, 2, 3):
        game = game.with_result(position, "&")
    answer = Decoder(A1_2_B4x3).decode(game)  # a range: the solver lists nothing, names a core
    assert answer.count == 0 and len(answer.core) >= 2
    assert count_sentence(answer) == (
        "No placement agrees with these rays: these cannot all hold together: "
        + ", ".join(str(p) for p in answer.core)
        + "."
    )
    # an estimate, as ApproxMC gives it (minutes on a board people play): its bounds in words
    solution = Decoder(A1_2_B4x3).decode(one_ray(A1_2_B4x3)).solution
    estimated = replace(solution, count=Count(12_345, False, 0.8, 0.8, "ApproxMC"))
    answer = Answer(one_ray(A1_2_B4x3), None, [], None, False, estimated, A1_2_B4x3)
    assert count_sentence(answer) == (
        "About 12,345 placements agree with these rays (estimated: within a factor 1.8 with 80% confidence)."
    )
    assert not answer.exact and answer.count == 12_345


def test_the_shot_table_says_when_a_shot_has_more_results_than_it_shows():
    answer = Decoder(A3_B4, source="compute").decode(one_ray(A3_B4))
    shot = answer.shots[0]
    results = len(shot.outcomes)
    assert results > 1
    shown = ", ".join(outcome_text(r, n) for r, n in shot.outcomes)
    assert shot_table([shot], 1, results)[1].endswith(f"{results:>3}: {shown}")
    fewer = ", ".join(outcome_text(r, n) for r, n in shot.outcomes[:-1])
    assert shot_table([shot], 1, results - 1)[1].endswith(f"{results:>3}: {fewer}, ...")


def test_a_cell_possible_in_two_placements_of_1832_is_not_drawn_empty():
    """``Answer.heat`` of the solver: per mille, a possible cell at least 1 (the faces draw 0 as
    certain empty)."""
    config = Config(1, 6, 6, 4)
    game = Game.empty(6).with_result(4, 15).with_result(12, "@")
    answer = Decoder(config).decode(game)
    assert answer.found is None and answer.count == 1832 and answer.exact
    solution = answer.solution
    heat, total = answer.heat()
    rare = (solution.backbone == -1) & (solution.probabilities < 0.0015)
    assert total == 1000 and rare.sum() >= 1 and (solution.probabilities[rare] > 0).all()
    assert (heat[rare] == 1).all()
    per_mille = np.clip(np.rint(solution.probabilities * 1000), 1, 999).astype(np.int64)
    expected = np.where(solution.backbone == 1, 1000, np.where(solution.backbone == 0, 0, per_mille))
    assert np.array_equal(heat, expected) and heat.dtype == np.int64


def test_past_the_limit_a_set_cancel_stops_the_solver_and_an_unexplored_store_is_solved(
    tmp_path, monkeypatch
):
    game = one_ray(A3_B4)
    monkeypatch.setattr("bbcore.decoder.DIRECT_LIMIT", 0)
    cancelled = threading.Event()
    cancelled.set()
    with pytest.raises(DecodeCancelled):
        Decoder(A3_B4, source="compute").decode(game, cancelled=cancelled)
    open_database(tmp_path / "empty.sqlite")  # A3_B4 not explored there: "auto" solves too
    try:
        answer = Decoder(A3_B4).decode(game)
        assert answer.found.source == "solver" and not answer.explored
    finally:
        close_database()


def test_a_range_on_a_square_whose_count_passes_the_engines_limit_is_solved(monkeypatch):
    """Both limits shrunk (the decoder's choice and the engine's own refusal) to the two atoms'
    C(16, 2) = 120 molecules: at it, the engine once per count; one under, the solver."""
    game = one_ray(A1_2_B4)
    agree = placements(A1_2_B4, game)
    for limit, method in ((120, "engine"), (119, "path search")):
        monkeypatch.setattr("bbcore.decoder.DIRECT_LIMIT", limit)
        monkeypatch.setattr("bbcore.decode.DIRECT_LIMIT", limit)
        answer = Decoder(A1_2_B4).decode(game)
        assert answer.count == len(agree) and answer.solution.count.method == method
        assert_shots_are_the_brute_forces(answer, A1_2_B4, agree, "remaining")


def as_game(width: int, shown: list[tuple[int, object]]) -> Game:
    game = Game.empty(width)
    for position, result in shown:
        game = game.with_result(position, result)
    return game


def test_a_range_on_a_square_with_one_placement_two_or_none(monkeypatch):
    one = as_game(4, [(1, "@"), (2, 7), (3, 10)])  # an atom at cell 3, alone
    answer = Decoder(A1_2_B4).decode(one)
    solution = answer.solution
    assert count_sentence(answer) == "1 placement agrees with these rays."
    assert answer.shots == [] and answer.skipped is None and solution.consistent
    assert solution.count.method == "engine" and solution.margin == 0.0
    assert (solution.box, solution.atoms_min, solution.atoms_max) == (Box(4, 4), 1, 2)
    assert solution.rays == tuple(one.rays())
    two = as_game(4, [(1, "@"), (2, 6), (3, 10)])
    agree = placements(A1_2_B4, two)
    answer = Decoder(A1_2_B4).decode(two)
    assert answer.count == len(agree) == 2 and answer.skipped is None
    assert_shots_are_the_brute_forces(answer, A1_2_B4, agree, "remaining")
    monkeypatch.setattr("bbcore.decoder.NEXT_SHOT_BUDGET", 2 * len(two.unknown) - 1)
    answer = Decoder(A1_2_B4).decode(two)
    assert answer.shots == []
    assert answer.skipped == "next shots not ranked: 2 candidates is too many rays to trace"
    # each count within the budget, their sum one ray past it: not ranked
    game = one_ray(A1_2_B4)
    monkeypatch.setattr("bbcore.decoder.NEXT_SHOT_BUDGET", len(game.unknown) * 52 - 1)
    answer = Decoder(A1_2_B4).decode(game)
    assert answer.shots == []
    assert answer.skipped == "next shots not ranked: 52 candidates is too many rays to trace"
    # none: the solver names the rays that cannot all hold; a cancel set before it stops it
    none = as_game(4, [(1, "&"), (2, "&"), (3, "&")])
    assert placements(A1_2_B4, none) == []
    answer = Decoder(A1_2_B4).decode(none)
    assert answer.count == 0 and answer.core and not answer.solution.consistent
    assert count_sentence(answer).startswith("No placement agrees with these rays: these cannot all hold")
    decoder = Decoder(A1_2_B4)
    cancelled, progress = stop_after(_to_try(Config(2, 4), none))  # after the last count's
    with pytest.raises(DecodeCancelled):
        decoder.decode(none, progress=progress, cancelled=cancelled)
    assert decoder.cached(none) is None


def test_a_cancel_stops_the_next_count_of_a_range_even_with_nothing_to_rank(monkeypatch):
    """No shot ranked (the budget shrunk to 1): the cancel set after the first count's candidates
    is seen by the next count's."""
    monkeypatch.setattr("bbcore.decoder.NEXT_SHOT_BUDGET", 1)
    game = one_ray(A1_2_B4).with_result(2, "@")
    cancelled, progress = stop_after(16)
    with pytest.raises(DecodeCancelled):
        Decoder(A1_2_B4).decode(game, progress=progress, cancelled=cancelled)
