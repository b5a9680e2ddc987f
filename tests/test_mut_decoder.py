"""The decoder's sentences and its answers off the engine's square (``bbcore.decoder``), in full.

Written from the mutation run of ``bbcore/decoder.py`` (``bench/mutation.py decoder``):
what ``bbcore decode`` and the Decode screen print about a decode, each case of
each sentence, and a range of counts on a square (the engine once per count,
added up) against brute force.
"""

from __future__ import annotations

import functools
from collections import Counter

from bbcore import rays
from bbcore.config import Config, parse_config
from bbcore.decoder import Decoder, count_sentence, shots_title, shown_phrase, source_phrase
from bbcore.game import Game, parse_game
from bbcore.numbering import atoms_of

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
