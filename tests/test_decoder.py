"""The Decoder the CLI and the TUI drive: source choice, narrowing, the answer cache, cancellation."""

from __future__ import annotations

import functools
import threading
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bbcore import decode, rays
from bbcore.config import parse_config
from bbcore.decoder import Decoder, count_sentence, shot_table, source_phrase
from bbcore.game import ABSORBED, Game, parse_game
from bbcore.numbering import atoms_of
from bbcore.shots import next_shots, outcome_text, ranked_shots

A3_B4 = parse_config("A3_B4")
A4_B8 = parse_config("A4_B8")


def partial(full: Game, positions: list[int]) -> Game:
    """``full`` with only the rays entering at ``positions`` (and their other ends)."""
    game = Game.empty(full.width)
    for position in positions:
        result = full.results[position - 1]
        game = game.with_result(position, result)
    return game


def brute_force(config, game: Game) -> list[int]:
    """The numbers of every molecule whose reference rays give every shown result."""
    return [
        k
        for k in range(1, config.nb_mol + 1)
        if all(
            parse_game(rays.spectrum(config, atoms_of(config, k)), config).results[p - 1] == r
            for p, r in game.rays()
        )
    ]


FULL = parse_game(rays.spectrum(A3_B4, atoms_of(A3_B4, 200)), A3_B4)


def test_a_game_that_adds_rays_is_narrowed_from_the_kept_answer(monkeypatch):
    decoder = Decoder(A3_B4, source="compute")
    first = decoder.decode(partial(FULL, [1]))
    seen = []
    original = decode.candidates

    def spy(config, game, **kwargs):
        seen.append(kwargs["within"])
        return original(config, game, **kwargs)

    monkeypatch.setattr("bbcore.decoder.candidates", spy)
    more = partial(FULL, [1, 5, 9])
    answer = decoder.decode(more)
    assert seen == [first.found]
    assert answer.found.numbers.tolist() == brute_force(A3_B4, more)
    shots, skipped = ranked_shots(A3_B4, more, decode.candidates(A3_B4, more))
    assert answer.shots == shots and answer.skipped == skipped


def test_a_kept_answer_comes_back_without_decoding_and_the_oldest_goes(monkeypatch):
    decoder = Decoder(A3_B4, source="compute", kept=2)
    games = [partial(FULL, [p]) for p in (1, 5, 9)]
    answers = [decoder.decode(game) for game in games]
    monkeypatch.setattr("bbcore.decoder.candidates", lambda *a, **k: pytest.fail("decoded again"))
    assert decoder.decode(games[2]) == answers[2]
    assert decoder.cached(games[1]) == answers[1]
    assert decoder.cached(games[0]) is None  # the least recently used of three, with two kept
    # Ranked the other way, a kept answer has the same shots in the other order.
    other = decoder.cached(games[1], "information")
    assert other is not None and set(other.shots) == set(answers[1].shots)
    assert other.shots[0].information == max(s.information for s in answers[1].shots)


def test_a_set_cancelled_event_stops_a_decode_and_keeps_nothing():
    decoder = Decoder(A4_B8, source="compute")
    game = Game.empty(8).with_result(1, ABSORBED)
    cancelled = threading.Event()
    cancelled.set()
    with pytest.raises(decode.DecodeCancelled):
        decoder.decode(game, cancelled=cancelled)
    assert decoder.cached(game) is None


def test_a_cancel_during_a_long_decode_stops_it_at_the_next_batch():
    """As a Textual worker's cancelled_event, set while the decode runs."""
    decoder = Decoder(A4_B8, source="compute")
    cancelled = threading.Event()
    batches = []

    def progress(done: int, total: int) -> None:
        batches.append(done)
        if len(batches) == 2:
            cancelled.set()

    with pytest.raises(decode.DecodeCancelled):
        decoder.decode(Game.empty(8).with_result(1, ABSORBED), progress=progress, cancelled=cancelled)
    assert len(batches) == 2 and 0 < batches[1] <= decode.BATCH


def test_the_source_is_chosen_once_for_every_user(store):
    """auto: a full spectrum from the store, a partial game computed; compute never reads the store."""
    stored = Decoder(A3_B4).decode(FULL)
    assert stored.found.source == "store" and stored.explored
    assert source_phrase(stored) == "read from the explored A3_B4"
    computed = Decoder(A3_B4).decode(partial(FULL, [1, 5]))
    assert computed.found.source == "computed" and computed.explored
    assert source_phrase(computed) == "computed: quicker than scanning the store for a partial game"
    forced = Decoder(A3_B4, source="compute").decode(FULL)
    assert forced.found.source == "computed" and not forced.explored
    assert source_phrase(forced) == "computed: A3_B4 is not explored"
    assert forced.found.numbers.tolist() == stored.found.numbers.tolist() == brute_force(A3_B4, FULL)


def test_count_sentences():
    decoder = Decoder(A3_B4, source="compute")
    empty = decoder.decode(Game.empty(4))
    assert count_sentence(empty) == (
        f"No ray shot: every molecule of A3_B4 ({A3_B4.nb_mol:,}) agrees; they are not listed."
    )
    count = len(brute_force(A3_B4, FULL))
    full = decoder.decode(FULL)
    expected = "Unique: one molecule gives this spectrum." if count == 1 else f"Ambiguous: {count:,}"
    assert count_sentence(full).startswith(expected)
    some = partial(FULL, [1])
    assert (
        count_sentence(decoder.decode(some))
        == f"{len(brute_force(A3_B4, some)):,} molecules agree with these rays."
    )


def test_the_shot_table_lines_up_its_figures():
    answer = Decoder(A3_B4, source="compute").decode(partial(FULL, [1]))
    lines = shot_table(answer.shots, 3, 2)
    assert lines[0] == " pos        left    bits  results"
    assert len(lines) == 4
    for line, shot in zip(lines[1:], answer.shots):
        position, left, bits = line.split()[:3]
        assert (int(position), float(left.replace(",", "")), float(bits)) == (
            shot.position,
            round(shot.remaining, 2),
            round(shot.information, 3),
        )
        # How many results, before the most frequent ones (a narrow screen cuts the tail only).
        count, _, outcomes = line.split(None, 3)[3].partition(": ")
        assert int(count) == len(shot.outcomes)
        more = ", ..." if len(shot.outcomes) > 2 else ""
        assert outcomes == ", ".join(outcome_text(r, n) for r, n in shot.outcomes[:2]) + more


@functools.cache
def reference_results(name: str) -> tuple[tuple, ...]:
    """Every molecule's 4W results by the reference tracer, in number order."""
    config = parse_config(name)
    return tuple(
        parse_game(rays.spectrum(config, atoms_of(config, k)), config).results
        for k in range(1, config.nb_mol + 1)
    )


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_next_shot_outcomes_are_the_brute_force_counts(data):
    """On random partial games of a hidden molecule: the candidates, and for every position not
    shot, how many candidates give each result, equal a brute force over every molecule."""
    name = data.draw(st.sampled_from(["A1_B3", "A2_B3", "A2_B4", "A3_B4"]))
    config = parse_config(name)
    results = reference_results(name)
    hidden = data.draw(st.integers(1, config.nb_mol))
    shot = data.draw(st.sets(st.integers(1, config.positions), max_size=config.positions))
    game = Game.empty(config.width)
    for position in sorted(shot):
        game = game.with_result(position, results[hidden - 1][position - 1])
    agree = [k for k, r in enumerate(results, 1) if all(r[p - 1] == s for p, s in game.rays())]
    answer = Decoder(config, source="compute").decode(game)
    assert answer.found.count == len(agree)
    assert answer.found.every_molecule or answer.found.numbers.tolist() == agree
    shots = next_shots(config, game, answer.found)
    assert sorted(s.position for s in shots) == (sorted(game.unknown) if len(agree) else [])
    for next_shot in shots:
        expected = Counter(results[k - 1][next_shot.position - 1] for k in agree)
        assert dict(next_shot.outcomes) == expected
        assert next_shot.remaining == pytest.approx(sum(n * n for n in expected.values()) / len(agree))
