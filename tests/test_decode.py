"""Decoding games: notations, messages, candidates, probabilities, next shots, guesses."""

from __future__ import annotations

import itertools
import math
import threading

import numpy as np
import pytest
from games import EMACS, EMACS_ATOMS

from bbcore import decode, engine, rays
from bbcore.config import parse_config
from bbcore.game import (
    ABSORBED,
    REFLECTED,
    DecodeError,
    Game,
    draft_game,
    labels_text,
    parse_game,
    parse_guess,
    result_words,
)
from bbcore.numbering import (
    _combination_batches,
    atoms_of,
    atoms_of_numbers,
    atoms_of_range,
    molecule_batches,
    molecule_string,
    number_of,
)
from bbcore.render import render_board
from bbcore.shots import (
    ambiguity,
    atom_counts,
    doubtful_cells,
    is_ambiguous,
    next_shots,
    probabilities,
    rank_shots,
    ranked_shots,
)

A1_B2 = parse_config("A1_B2")
A2_B4 = parse_config("A2_B4")
A3_B4 = parse_config("A3_B4")
A3_B5 = parse_config("A3_B5")
A4_B8 = parse_config("A4_B8")

WORKED = "@&ab@&@cbac@&@&@"  # the spec's A2_B4 molecule number 2
WORKED_RESULTS = (
    ABSORBED,
    REFLECTED,
    10,
    9,
    ABSORBED,
    REFLECTED,
    ABSORBED,
    11,
    4,
    3,
    8,
    ABSORBED,
    REFLECTED,
    ABSORBED,
    REFLECTED,
    ABSORBED,
)

# The example of Emacs' blackbox.el (its commentary), pasted with its tabs.


def spectra_of(config, atoms: np.ndarray) -> np.ndarray:
    """Normalised spectra, uint8 (k, 4W), computed by the engine."""
    return engine.letters(engine.trace_batch(config, atoms)[0])


def agreeing_by_brute_force(spectra: np.ndarray, game: Game) -> np.ndarray:
    """Row indexes of the spectra that agree with every shown ray of ``game``."""
    keep = np.ones(len(spectra), dtype=bool)
    for p, result in game.rays():
        column = spectra[:, p - 1]
        if isinstance(result, int):
            keep &= (column == spectra[:, result - 1]) & (column >= ord("a"))
        else:
            keep &= column == ord(result)
    return np.flatnonzero(keep)


def partial(game: Game, positions) -> Game:
    """``game`` with only the results at ``positions`` (and their exit partners)."""
    shown = Game.empty(game.width)
    for p in positions:
        shown = shown.with_result(p, game.result(p))
    return shown


SIEVE = np.array([0, 8, 16, 24])  # one position per side, 0-based


@pytest.fixture(scope="module")
def a4_b8_sieve() -> np.ndarray:
    """The engine's results at 4 positions for every A4_B8 molecule, in number order."""
    return np.concatenate(
        [
            engine.trace_batch(A4_B8, atoms_of_range(A4_B8, start, min(start + 100_000, 635_377)), SIEVE)[0]
            for start in range(1, 635_377, 100_000)
        ]
    )


def spectral_group(sieve: np.ndarray, number: int) -> list[int]:
    """Brute force: every molecule with the full spectrum of ``number``.

    Every molecule is checked at the sieve's 4 positions; only those that
    agree there can share the spectrum, and they are traced at all 32.
    """
    same = np.flatnonzero((sieve == sieve[number - 1]).all(axis=1)) + 1
    spectra = spectra_of(A4_B8, atoms_of_numbers(A4_B8, same))
    target = spectra[np.searchsorted(same, number)]
    return same[(spectra == target).all(axis=1)].tolist()


# -- notations ---------------------------------------------------------------


def test_spectrum_string_reads_every_kind_of_result():
    game = parse_game(WORKED, A2_B4)
    assert game.results == WORKED_RESULTS
    assert game.complete and game.pattern() == WORKED
    assert game.labels == tuple(WORKED)


def test_every_notation_gives_the_same_constraints():
    traditional = {"@": "H", "&": "R", "a": "10", "b": "2", "c": "33"}
    tokens = " ".join(traditional[ch] for ch in WORKED)
    spec_diagram = render_board(4, "O-O-------------", WORKED)
    traditional_diagram = render_board(4, "-" * 16, [traditional[ch] for ch in WORKED])
    games = [
        parse_game(text, A2_B4)
        for text in (
            WORKED,
            WORKED.replace("@", "H").replace("&", "R"),
            tokens,
            spec_diagram,
            traditional_diagram,
            "  \n" + tokens + "\n\n",
        )
    ]
    assert all(game.results == WORKED_RESULTS for game in games)
    assert parse_game(tokens, A2_B4).labels[2] == "10"
    assert games[3].guess == (0, 2) and games[4].guess is None


def test_not_shot_marks_and_blanks_are_the_same():
    texts = [
        "@.a.......a.....",
        "@?a???????a?????",
        "@-a-------a-----",
        "@ . a . . . . . . . a . . . . .",
        "H - 7 - - - - - - - 7 - - - - -",
    ]
    games = [parse_game(t, A2_B4) for t in texts]
    assert all(g.results == games[0].results for g in games)
    assert games[0].shown == (1, 3, 11) and games[0].result(3) == 11
    assert games[0].rays() == [(1, ABSORBED), (3, 11)]


def test_labels_are_case_sensitive_and_only_uppercase_h_r_are_results():
    game = parse_game("hHrRh...r.......", A2_B4)
    assert game.results[:5] == (5, ABSORBED, 9, REFLECTED, 1)


def test_emacs_diagram_is_read_by_column():
    game = parse_game(EMACS, A4_B8)
    w = 8
    expected = Game.empty(w)
    pairs = {1: 3 * w, 4: w + 1, 3 * w - 2: 4 * w - 7, 5: w + 4, 6: 3 * w - 5}
    for p, q in pairs.items():  # rays 1 to 5 of the drawing
        expected = expected.with_result(p, q)
    for p in (8, 2 * w):  # H left of line 8, H under column 8
        expected = expected.with_result(p, ABSORBED)
    expected = expected.with_result(w + 3, ABSORBED)  # H under column 3
    expected = expected.with_result(3 * w - 6, REFLECTED)  # R right of line 7
    expected = expected.with_result(4 * w - 5, REFLECTED)  # R above column 6
    assert game.results == expected.results
    assert game.guess == EMACS_ATOMS
    assert game.labels[0] == "1" and game.labels[4 * w - 6] == "R"


def test_multi_digit_labels_line_up_in_a_diagram():
    labels = ["10", "H", "11", "R", "", "", "10", "12", "", "R", "11", "H", "12", "", "H", ""]
    game = parse_game(render_board(4, "-" * 16, labels), A2_B4)
    assert game.labels == tuple(labels)
    assert game.result(1) == 7 and game.result(3) == 11 and game.result(8) == 13


def test_a_spectrum_of_the_engine_parses_back_to_its_rays():
    atoms = atoms_of(A4_B8, 123456)
    game = parse_game(rays.spectrum(A4_B8, atoms), A4_B8)
    for p in range(1, 33):
        ray = rays.trace(8, atoms, p)
        assert game.result(p) == {"absorbed": ABSORBED, "reflected": REFLECTED}.get(ray.result, ray.exit)


def test_blank_text_is_a_game_with_no_ray_shot():
    assert parse_game(" \n\t\n", A2_B4) == Game.empty(4)


def test_a_game_with_no_ray_shot_is_all_not_shot_marks():
    """Game.empty is the game of a string of 4W not-shot marks, and shows as one."""
    assert Game.empty(4) == parse_game("." * 16, A2_B4)
    assert Game.empty(4).pattern() == "." * 16
    assert Game.empty(4).pattern("?") == "?" * 16


def test_a_partial_game_shows_its_unknown_positions_and_exit_letters():
    game = Game.empty(4).with_result(9, 3).with_result(1, ABSORBED).with_result(16, REFLECTED)
    assert game.pattern() == "@.a.....a......&"
    assert game.pattern("-") == "@-a-----a------&"
    assert game.rays() == [(1, ABSORBED), (3, 9), (16, REFLECTED)]


def test_results_in_words():
    assert [result_words(r) for r in (None, ABSORBED, REFLECTED, 7)] == [
        "not shot",
        "absorbed (H)",
        "reflected (R)",
        "out at position 7",
    ]


def test_an_exit_to_a_position_of_another_pair_clears_that_pair():
    """Pairing 5 with 3, which was paired with 1, leaves 1 not shot: no ray ends at two places."""
    game = Game.empty(4).with_result(1, 3).with_result(5, 3)
    assert game.result(3) == 5 and game.result(5) == 3
    assert game.result(1) is None and game.labels[0] == ""
    assert game.shown == (3, 5)


def test_with_result_pairs_relabels_and_clears():
    game = Game.empty(4).with_result(1, 7)
    assert game.result(1) == 7 and game.result(7) == 1 and game.labels[0] == game.labels[6] == "a"
    game = game.with_result(2, 3).with_result(7, ABSORBED)
    assert game.result(1) is None and game.labels[0] == ""
    assert game.result(7) == ABSORBED and game.labels[1] == game.labels[2] == "b"
    cleared = game.with_result(2, None)
    assert cleared.shown == (7,) and cleared.labels[1] == cleared.labels[2] == ""


def test_a_draft_keeps_a_lone_exit_label_waiting():
    labels = [""] * 16
    labels[0], labels[2], labels[4] = "H", "12", "a"
    game, waiting = draft_game(A2_B4, labels)
    assert game.shown == (1,) and game.result(1) == ABSORBED
    assert waiting == (3, 5) and game.labels[2] == game.labels[4] == ""
    labels[9] = "12"  # the other end of the ray from 3: now a constraint
    game, waiting = draft_game(A2_B4, labels)
    assert game.result(3) == 10 and game.result(10) == 3 and waiting == (5,)
    assert game.labels[2] == game.labels[9] == "12"
    assert game == parse_game(labels_text([lab if lab != "a" else "" for lab in labels]), A2_B4)


def test_a_draft_refuses_what_parse_game_refuses_but_a_lone_label():
    labels = ["a", "a", "a"] + [""] * 13
    with pytest.raises(DecodeError, match=r"label 'a' appears 3 times \(positions 1, 2, 3\)"):
        draft_game(A2_B4, labels)
    with pytest.raises(DecodeError, match=r"unknown label '\*' at position 2"):
        draft_game(A2_B4, ["H", "*"] + [""] * 14)


def test_labels_text_is_a_string_or_tokens_that_parse_back():
    labels = ["H", "", "R", "b"] + [""] * 8 + ["b", "", "", ""]
    assert labels_text(labels) == "H.Rb........b..."
    labels[1] = labels[5] = "12"
    text = labels_text(labels)
    assert text == "H 12 R b . 12 . . . . . . b . . ."
    assert parse_game(text, A2_B4).labels == tuple(labels)


def test_a_game_extends_the_games_with_fewer_of_its_rays():
    full = parse_game(WORKED, A2_B4)
    fewer = partial(full, [1, 3])
    assert full.extends(fewer) and full.extends(Game.empty(4)) and full.extends(full)
    assert not fewer.extends(full)
    assert not Game.empty(4).with_result(1, REFLECTED).extends(fewer)  # 1 was absorbed


# -- every malformed-input message ---------------------------------------------

BAD_GAMES = [
    (
        "@&ab@&@cbac@&@&",
        "wrong number of positions: A2_B4 has 16 positions (one character each), the game has 15 characters",
    ),
    ("@ & a b", "wrong number of positions: A2_B4 has 16 positions (one token each), the game has 4 tokens"),
    ("@&ab@&@cbac@&@!@", "unknown character '!' at position 15"),
    ("H R 1 2 H R H 3 2 1 3 H R H R 4#", "unknown token '4#' at position 16"),
    (
        "@&ab@&@cbac@&@&d",
        "label 'd' appears only once (position 16): an exit label goes at both ends of its ray",
    ),
    (
        "@&ab@&@cbac@&@aa",
        "label 'a' appears 4 times (positions 3, 10, 15, 16): an exit label goes at exactly two positions",
    ),
    ("1 1 12 12 12 . . . . . . . . . . .", "label '12' appears 3 times (positions 3, 4, 5)"),
]


def test_a_game_of_one_character_says_so_in_the_singular():
    with pytest.raises(DecodeError) as error:
        parse_game("?", A2_B4)
    assert str(error.value) == (
        "wrong number of positions: A2_B4 has 16 positions (one character each), the game has 1 character"
    )


@pytest.mark.parametrize("text, message", BAD_GAMES)
def test_malformed_strings_and_tokens_are_named(text, message):
    with pytest.raises(DecodeError) as error:
        parse_game(text, A2_B4)
    assert str(error.value).startswith(message)


GOOD_DIAGRAM = ["  @ & @ &", "@ O - O - @", "& - - - - c", "a - - - - a", "b - - - - b", "  @ & @ c"]


def diagram(*replacements: tuple[int, str]) -> str:
    lines = list(GOOD_DIAGRAM)
    for index, line in replacements:
        lines[index] = line
    return "\n".join(lines)


BAD_DIAGRAMS = [
    (
        diagram((2, "&  - - - - c")),
        "the rows of the diagram do not line up: the cells of line 3 are not under those of line 2",
    ),
    (diagram((2, "& - - - c")), "line 3 has 3 cells, the other lines of the box 4"),
    (diagram((1, "@ O - O @")), "line 2 has 3 cells, the other lines of the box 4: every line of the box"),
    (diagram((1, "")).replace("\n\n", "\n"), "the diagram is a 4 x 3 box (wide x high), A2_B4 is 4 x 4"),
    (diagram((2, "& - x - - c")), "line 3: unknown cell 'x' in the box"),
    (diagram((2, "& - 3 - - c")), "line 3: unknown cell '3' in the box"),
    (
        "\n".join("  " + line for line in diagram((2, "a - - - - c")).splitlines()).replace(
            "  a - -", "& a - -"
        ),
        "line 3: 2 labels left of the box ('&', 'a')",
    ),
    (diagram((0, "   @ & @ &")), "line 1: label '@' is not above a column of the box"),
    (diagram((5, "  @&@ c")), "line 6: label '@&@' spans 2 columns of the box"),
    ("title\n" + diagram(), "line 1: unexpected text above the box"),
    (diagram() + "\n  @ & @ c", "line 7: unexpected text below the box"),
    (
        diagram() + "\nThere are 3 balls in the box",
        "line 7: the diagram says there are 3 balls in the box, A2_B4 has 2 atoms",
    ),
    (diagram((3, "")), "line 4 interrupts the box"),
    (diagram((2, "")), "line 3 interrupts the box: every box row has cells '-' or 'O'"),
    (diagram((2, "& - - - - c d")), "line 3: 2 labels right of the box ('c', 'd')"),
    (diagram((5, "   @ & @ c")), "line 6: label '@' is not below a column of the box"),
    ("@ & @ &\nThere are 2 balls in the box", "no box found in the diagram: its rows are cells '-' or 'O'"),
    (diagram((5, "  @ & ! c")), "unknown label '!' at position 7"),
    (diagram((5, "  @ & a c")), "label 'a' appears 3 times"),
]


@pytest.mark.parametrize("text, message", BAD_DIAGRAMS)
def test_malformed_diagrams_are_named(text, message):
    with pytest.raises(DecodeError) as error:
        parse_game(text, A2_B4)
    assert str(error.value).startswith(message)


def test_the_good_diagram_of_those_tests_parses():
    assert parse_game(diagram() + "\n\nThere are 2 balls in the box", A2_B4).results == WORKED_RESULTS


def test_a_diagram_without_a_label_row_above_or_below_leaves_those_sides_not_shot():
    box_only = parse_game("@ O - O - @\n& - - - - &\na - - - - a\nb - - - - b", A2_B4)
    assert box_only.labels == parse_game("@&ab....ba&@....", A2_B4).labels
    assert box_only.results == parse_game("@&ab....ba&@....", A2_B4).results
    no_top = parse_game("\n".join(GOOD_DIAGRAM[1:]), A2_B4)
    assert no_top.results == WORKED_RESULTS[:12] + (None,) * 4


def test_a_diagram_of_another_size_is_refused():
    with pytest.raises(DecodeError, match=r"^the diagram is a 4 x 4 box \(wide x high\), A4_B8 is 8 x 8$"):
        parse_game(diagram(), A4_B8)


def test_a_ray_cannot_exit_where_it_entered():
    with pytest.raises(
        DecodeError,
        match="^position 5 cannot exit at itself: a ray that comes "
        r"back where it entered is reflected \(R or &\)$",
    ):
        Game.empty(4).with_result(5, 5)
    with pytest.raises(DecodeError, match=r"^position must be in 1\.\.16, got 17$"):
        Game.empty(4).with_result(17, ABSORBED)
    with pytest.raises(DecodeError, match="^unknown result 'x'"):
        Game.empty(4).with_result(1, "x")


def test_a_game_for_another_box_is_refused():
    with pytest.raises(DecodeError, match="^the game is for a 4 x 4 box, A4_B8 is 8 x 8$"):
        decode.candidates(A4_B8, parse_game(WORKED, A2_B4))


def test_bad_guesses_are_named():
    with pytest.raises(DecodeError, match="^bad guess '121': A2_B4 has molecules 1..120"):
        parse_guess("121", A2_B4)
    with pytest.raises(DecodeError, match="^bad guess 'O-O': an A2_B4 molecule is 16 characters"):
        parse_guess("O-O", A2_B4)
    with pytest.raises(DecodeError, match="^the guess has 3 atoms, A2_B4 has 2$"):
        decode.check_guess(A2_B4, Game.empty(4), (0, 1, 2))
    assert parse_guess("2", A2_B4) == parse_guess("O-O-------------", A2_B4)


def test_an_unknown_ranking_is_refused():
    game = parse_game("@...............", A2_B4)
    with pytest.raises(DecodeError, match="^unknown ranking 'best'"):
        next_shots(A2_B4, game, decode.candidates(A2_B4, game), by="best")  # type: ignore[arg-type]


def test_too_many_molecules_to_enumerate_is_refused():
    config = parse_config("A6_B13")
    game = Game.empty(13).with_result(1, ABSORBED)
    with pytest.raises(
        DecodeError,
        match=r"^A6_B13: [\d,]+ molecules to try, too many to decode "
        "without exploring the configuration",
    ):
        decode.candidates(config, game, source="compute")


# -- candidates ----------------------------------------------------------------


@pytest.mark.parametrize("m, n, size", [(7, 3, 4), (6, 1, 2), (5, 5, 1), (9, 4, 1000), (8, 2, 3)])
def test_combination_batches_are_itertools_combinations(m, n, size):
    batches = list(_combination_batches(m, n, size))
    assert all(1 <= len(b) <= size for b in batches)
    assert [tuple(row) for b in batches for row in b.tolist()] == list(itertools.combinations(range(m), n))


def test_molecule_batches_are_every_molecule_in_number_order():
    for config in (A2_B4, A3_B4, parse_config("A2_B5")):
        got = np.concatenate(list(molecule_batches(config, 50)))
        assert (got == atoms_of_range(config, 1, config.nb_mol + 1)).all()
    cells = [1, 4, 5, 9, 12, 15]
    got = np.concatenate(list(molecule_batches(A3_B4, 7, cells)))
    assert [tuple(r) for r in got.tolist()] == list(itertools.combinations(cells, 3))


def test_no_ray_shown_is_every_molecule_unlisted():
    cands = decode.candidates(A4_B8, Game.empty(8))
    assert cands.every_molecule and cands.count == 635_376 and cands.source == "all"
    assert cands.numbers is None
    assert cands.molecules(2) == [(1, "OOOO" + "-" * 60), (2, "OOO-O" + "-" * 59)]
    assert cands.molecules(2, start=635_375) == [(635_376, "-" * 60 + "OOOO")]
    assert np.allclose(probabilities(cands), 4 / 64)
    assert (atom_counts(cands) == math.comb(63, 3)).all()


@pytest.mark.parametrize("config", [A1_B2, A2_B4, A3_B4])
def test_computed_candidates_are_the_brute_force_ones_on_small_boxes(config):
    """Whole small configurations, random games, against the reference rays."""
    all_atoms = [atoms_of(config, k) for k in range(1, config.nb_mol + 1)]
    spectra = np.array([list(rays.spectrum(config, a).encode()) for a in all_atoms], dtype=np.uint8)
    rng = np.random.default_rng(4)
    for _ in range(25):
        number = int(rng.integers(1, config.nb_mol + 1))
        full = parse_game(spectra[number - 1].tobytes().decode(), config)
        shown = rng.choice(config.positions, int(rng.integers(1, config.positions + 1)), replace=False) + 1
        game = partial(full, shown.tolist())
        cands = decode.candidates(config, game, source="compute")
        expected = agreeing_by_brute_force(spectra, game) + 1
        assert cands.numbers.tolist() == expected.tolist()
        assert cands.contains(all_atoms[number - 1])
        assert [molecule_string(config, all_atoms[k - 1]) for k in expected[:3]] == [
            m for _, m in cands.molecules(3)
        ]


def test_all_rays_of_random_a4_b8_molecules_give_their_spectral_group(a4_b8_sieve):
    rng = np.random.default_rng(8)
    sizes = []
    # 117 shares its spectrum with 147687 (found once by exploring, checked by brute force)
    for number in [int(n) for n in rng.integers(1, A4_B8.nb_mol + 1, 2)] + [117, 635_376]:
        game = parse_game(rays.spectrum(A4_B8, atoms_of(A4_B8, number)), A4_B8)
        group = spectral_group(a4_b8_sieve, number)
        cands = decode.candidates(A4_B8, game, source="compute")
        assert cands.numbers.tolist() == group
        sizes.append(len(group))
    assert sizes[2] == 2 and spectral_group(a4_b8_sieve, 117) == [117, 147687]


def test_some_rays_of_random_a4_b8_molecules_give_a_superset(a4_b8_sieve):
    rng = np.random.default_rng(9)
    for shown_count in (5, 12):
        number = int(rng.integers(1, A4_B8.nb_mol + 1))
        full = parse_game(rays.spectrum(A4_B8, atoms_of(A4_B8, number)), A4_B8)
        game = partial(full, (rng.choice(32, shown_count, replace=False) + 1).tolist())
        cands = decode.candidates(A4_B8, game, source="compute")
        assert set(spectral_group(a4_b8_sieve, number)) <= set(cands.numbers.tolist())
        assert cands.contains(atoms_of(A4_B8, number)) and cands.count > 1
        # and every candidate does agree with the shown rays (by the engine's spectra)
        spectra = spectra_of(A4_B8, cands.atoms)
        assert len(agreeing_by_brute_force(spectra, game)) == cands.count


def test_within_narrows_earlier_candidates():
    full = parse_game(rays.spectrum(A3_B4, atoms_of(A3_B4, 200)), A3_B4)
    first = partial(full, [1, 5])
    more = partial(full, [1, 5, 9, 13, 16])
    earlier = decode.candidates(A3_B4, first, source="compute")
    narrowed = decode.candidates(A3_B4, more, within=earlier)
    assert narrowed.numbers.tolist() == decode.candidates(A3_B4, more).numbers.tolist()
    assert narrowed.count < earlier.count
    # A page of the candidates is a slice of them all, in number order.
    every = narrowed.molecules()
    assert narrowed.molecules(3, start=2) == every[2:5]
    assert narrowed.molecules(10, start=len(every) - 1) == every[-1:]


def test_excluded_cells_come_from_exits_and_reflections():
    game = Game.empty(4).with_result(1, 12).with_result(6, REFLECTED).with_result(2, ABSORBED)
    # Position 1 enters line 1 from the left: (1,1) and (1,2), the diagonal (2,1); position
    # 12 enters line 1 from the right: (1,4), (1,3) and (2,4); position 6 enters column 2
    # from the bottom and is reflected: (4,2).  The absorbed ray rules out nothing.
    assert decode.excluded_cells(A2_B4, game) == [0, 1, 2, 3, 4, 7, 13]


def test_excluded_cells_never_hold_an_atom_of_a_molecule_that_agrees():
    """Over whole A3_B4: every molecule that agrees with its own partial games."""
    rng = np.random.default_rng(12)
    for number in range(1, A3_B4.nb_mol + 1, 7):
        atoms = atoms_of(A3_B4, number)
        full = parse_game(rays.spectrum(A3_B4, atoms), A3_B4)
        game = partial(full, (rng.choice(16, 4, replace=False) + 1).tolist())
        assert not set(atoms) & set(decode.excluded_cells(A3_B4, game))


def test_progress_and_stop():
    game = Game.empty(8).with_result(1, ABSORBED)
    calls = []
    exits = Game.empty(8).with_result(1, 24)
    decode.candidates(
        A4_B8, exits, source="compute", progress=lambda done, total: calls.append((done, total))
    )
    total = math.comb(64 - 6, 4)  # (1,1), (1,2), (2,1), (1,7), (1,8), (2,8) ruled out
    assert len(decode.excluded_cells(A4_B8, exits)) == 6
    assert calls[0] == (0, total) and calls[-1] == (total, total) and len(calls) > 2
    stop = threading.Event()
    stop.set()
    with pytest.raises(decode.DecodeCancelled):
        decode.candidates(A4_B8, game, source="compute", stop=stop)


def test_progress_counts_up_and_a_stop_during_the_run_ends_it_at_the_next_batch():
    exits = Game.empty(8).with_result(1, 24)
    calls = []
    decode.candidates(A4_B8, exits, source="compute", progress=lambda done, total: calls.append(done))
    assert calls == sorted(set(calls)) and len(calls) > 3  # each batch adds its molecules
    stop = threading.Event()
    seen = []

    def stop_after_the_first_batch(done: int, total: int) -> None:
        seen.append(done)
        if done > 0:
            stop.set()

    with pytest.raises(decode.DecodeCancelled):
        decode.candidates(A4_B8, exits, source="compute", progress=stop_after_the_first_batch, stop=stop)
    assert seen == calls[:2]


# -- stored and computed agree -------------------------------------------------


@pytest.fixture(scope="module")
def explored_a3_b5(tmp_path_factory):
    """A database where A3_B5 is complete.

    Decoding reads only ``number`` and ``spectrum``, so the other columns are
    placeholders; the spectra come from the engine.
    """
    from bbcore.store import Configuration, Molecule, db, ensure_config, open_database

    path = tmp_path_factory.mktemp("decode") / "a3_b5.sqlite"
    open_database(path)
    atoms = atoms_of_range(A3_B5, 1, A3_B5.nb_mol + 1)
    spectra = [row.tobytes().decode() for row in spectra_of(A3_B5, atoms)]
    rows = [
        {field: 0 for field in rays.STAT_FIELDS}
        | {
            "config": "A3_B5",
            "number": number,
            "canonical_number": number,
            "molecule": molecule_string(A3_B5, cells),
            "spectrum": spectrum,
            "transform": "id",
            "dh1": "",
            "dh2": "",
        }
        for number, cells, spectrum in zip(range(1, A3_B5.nb_mol + 1), atoms.tolist(), spectra)
    ]
    with db.atomic():
        ensure_config(A3_B5)
        Molecule.insert_many(rows).execute()
        Configuration.update(complete=True).where(Configuration.config == "A3_B5").execute()
    return path


def test_stored_and_computed_candidates_are_the_same(explored_a3_b5):
    from bbcore.store import open_database

    open_database(explored_a3_b5)
    assert decode.is_explored(A3_B5) and not decode.is_explored(A3_B4)
    rng = np.random.default_rng(5)
    sizes, sources = [], set()
    for _ in range(12):
        number = int(rng.integers(1, A3_B5.nb_mol + 1))
        full = parse_game(rays.spectrum(A3_B5, atoms_of(A3_B5, number)), A3_B5)
        count = int(rng.choice([1, 3, 6, 20, 20]))
        game = partial(full, (rng.choice(20, count, replace=False) + 1).tolist())
        stored = decode.candidates(A3_B5, game, source="store")
        computed = decode.candidates(A3_B5, game, source="compute")
        assert stored.source == "store" and computed.source == "computed"
        assert stored.numbers.tolist() == computed.numbers.tolist()
        assert (stored.atoms == computed.atoms).all()
        assert stored.molecules() == computed.molecules()  # the boards a user is shown
        auto = decode.candidates(A3_B5, game)  # the store for full spectra only
        assert auto.source == ("store" if game.complete else "computed")
        sources.add(auto.source)
        sizes.append(stored.count)
    assert min(sizes) >= 1 and max(sizes) > 10 and sources == {"store", "computed"}


# -- probabilities and next shots, by hand -------------------------------------
#
# A1_B2: one atom in a 2 x 2 box, molecule k has its atom in cell k - 1.  The ray
# from position 1 (line 1, going east) is absorbed by an atom at (1,1) or, one
# cell in, at (1,2); reflected at the edge by an atom at (2,1); and an atom at
# (2,2) turns it north, out at position 8.  By symmetry every position is alike.


def test_no_ray_shown_on_a1_b2_by_hand():
    cands = decode.candidates(A1_B2, Game.empty(2))
    shots = next_shots(A1_B2, Game.empty(2), cands)
    assert [s.position for s in shots] == list(range(1, 9))
    first = shots[0]
    assert first.outcomes == ((ABSORBED, 2), (REFLECTED, 1), (8, 1))
    assert first.remaining == pytest.approx((4 + 1 + 1) / 4)
    assert first.information == pytest.approx(1.5)
    assert all(s.remaining == pytest.approx(1.5) for s in shots)
    assert np.allclose(probabilities(cands), 0.25)


def test_one_hit_on_a1_b2_by_hand():
    game = parse_game("H.......", A1_B2)
    cands = decode.candidates(A1_B2, game, source="compute")
    assert cands.numbers.tolist() == [1, 2]  # atom at (1,1) or (1,2)
    assert probabilities(cands).tolist() == [[0.5, 0.5], [0.0, 0.0]]
    assert doubtful_cells(cands) == [0, 1]
    shots = {s.position: s for s in next_shots(A1_B2, game, cands)}
    # (1,1) / (1,2): position 2 R / out at 3, 3 H / out at 2, 4 out at 5 / H,
    # 5 out at 4 / R, 6 H / H, 7 R / H, 8 H / R.
    assert dict(shots[2].outcomes) == {REFLECTED: 1, 3: 1}
    assert dict(shots[3].outcomes) == {ABSORBED: 1, 2: 1}
    assert dict(shots[4].outcomes) == {5: 1, ABSORBED: 1}
    assert dict(shots[5].outcomes) == {4: 1, REFLECTED: 1}
    assert shots[6].outcomes == ((ABSORBED, 2),) and not shots[6].splits
    assert dict(shots[7].outcomes) == {REFLECTED: 1, ABSORBED: 1}
    for p in (2, 3, 4, 5, 7, 8):
        assert shots[p].remaining == pytest.approx(1.0)
        assert shots[p].information == pytest.approx(1.0)
    assert shots[6].remaining == pytest.approx(2.0) and shots[6].information == 0.0
    ranked = next_shots(A1_B2, game, cands)
    assert [s.position for s in ranked] == [2, 3, 4, 5, 7, 8, 6]
    assert not is_ambiguous(cands, ranked)


def test_rankings_differ_by_remaining_and_by_information():
    """Expected remaining favours many small outcomes; information too, but not always alike."""
    full = parse_game(rays.spectrum(A3_B4, atoms_of(A3_B4, 300)), A3_B4)
    game = partial(full, [2, 7])
    cands = decode.candidates(A3_B4, game)
    by_remaining = next_shots(A3_B4, game, cands, by="remaining")
    by_information = next_shots(A3_B4, game, cands, by="information")
    assert [s.remaining for s in by_remaining] == sorted(s.remaining for s in by_remaining)
    infos = [s.information for s in by_information]
    assert infos == sorted(infos, reverse=True)
    for shot in by_remaining:
        n = np.array([c for _, c in shot.outcomes], dtype=float)
        assert shot.remaining == pytest.approx((n * n).sum() / cands.count)
        assert sum(c for _, c in shot.outcomes) == cands.count
    assert len(by_remaining) == 16 - len(game.shown)
    assert rank_shots(by_remaining, "information") == by_information
    assert rank_shots(by_information, "remaining") == by_remaining


def test_a_full_ambiguous_spectrum_leaves_atoms_in_doubt():
    spectra = {}
    for k in range(1, A3_B4.nb_mol + 1):
        spectra.setdefault(rays.spectrum(A3_B4, atoms_of(A3_B4, k)), []).append(k)
    spectrum, group = next((s, g) for s, g in spectra.items() if len(g) == 2)
    game = parse_game(spectrum, A3_B4)
    cands = decode.candidates(A3_B4, game)
    assert cands.numbers.tolist() == group
    shots = next_shots(A3_B4, game, cands)
    assert shots == [] and is_ambiguous(cands, shots)
    first, second = (set(atoms_of(A3_B4, k)) for k in group)
    assert doubtful_cells(cands) == sorted(first ^ second)
    doubt = ", ".join(f"({c // 4 + 1}, {c % 4 + 1})" for c in sorted(first ^ second))
    assert ambiguity(cands, shots, None) == (
        f"No ray left can tell these 2 molecules apart: the game is ambiguous. Atoms in doubt: {doubt}."
    )

    # With a ray left to shoot that cannot split them, the game is as ambiguous.
    for position in range(1, 17):
        fewer = partial(game, [p for p in range(1, 17) if p != position])
        if decode.candidates(A3_B4, fewer).numbers.tolist() == group:
            break
    else:
        pytest.fail("every ray of the group tells another molecule apart")
    shots, skipped = ranked_shots(A3_B4, fewer, decode.candidates(A3_B4, fewer))
    assert skipped is None and [s.position for s in shots] == [position]
    assert not shots[0].splits
    assert ambiguity(cands, shots, skipped) == (
        f"No ray left can tell these 2 molecules apart: the game is ambiguous. Atoms in doubt: {doubt}."
    )
    assert ambiguity(cands, [], "next shots not ranked: ...") is None


def test_ranked_shots_say_why_there_are_none():
    every = decode.candidates(A1_B2, Game.empty(2))
    shots, skipped = ranked_shots(A1_B2, Game.empty(2), every)
    assert skipped is None and len(shots) == 8
    a5_b10 = parse_config("A5_B10")
    shots, skipped = ranked_shots(a5_b10, Game.empty(10), decode.candidates(a5_b10, Game.empty(10)))
    assert shots == [] and skipped == (
        "next shots not ranked: 75,287,520 candidates x 40 "
        "positions is too many rays to trace; shoot a ray or "
        "two first"
    )
    solved = parse_game(WORKED, A2_B4)
    assert ranked_shots(A2_B4, solved, decode.candidates(A2_B4, solved)) == ([], None)


# -- checking a guess ------------------------------------------------------------


def test_the_emacs_guess_is_the_only_candidate():
    game = parse_game(EMACS, A4_B8)
    cands = decode.candidates(A4_B8, game, source="compute")
    assert cands.numbers.tolist() == [number_of(A4_B8, EMACS_ATOMS)]
    verdict = decode.check_guess(A4_B8, game, game.guess, cands)
    assert verdict.consistent and verdict.others == 0
    assert verdict.message == ("the guess agrees with every shown ray and is the only molecule that does")


def test_a_wrong_guess_names_a_contradicted_ray():
    game = parse_game(WORKED, A2_B4)
    verdict = decode.check_guess(A2_B4, game, atoms_of(A2_B4, 1))  # OO--...
    assert not verdict.consistent
    position, shown, actual = verdict.contradiction
    assert game.result(position) == shown != actual
    # Positions 1 to 5 agree; from the bottom of column 2, the ray runs into (1,2)
    # instead of being turned back between (1,1) and (1,3).
    assert position == 6
    assert verdict.message == (
        "the guess contradicts position 6: the game shows reflected (R), the guess gives absorbed (H)"
    )


def test_a_guess_checked_without_candidates_only_agrees_or_contradicts():
    game = parse_game(WORKED, A2_B4)
    assert decode.check_guess(A2_B4, game, atoms_of(A2_B4, 2)) == decode.Verdict(
        True, None, None, "the guess agrees with every shown ray"
    )
    wrong = decode.check_guess(A2_B4, game, atoms_of(A2_B4, 1))
    assert wrong.consistent is False and wrong.others is None


def test_a_guess_with_a_cell_outside_the_box_is_refused():
    game = parse_game(WORKED, A2_B4)
    for cells in ((0, 16), (-1, 3)):
        with pytest.raises(DecodeError, match=r"^a guess's cells are in 0\.\.15$"):
            decode.check_guess(A2_B4, game, cells)


def test_one_or_two_other_molecules_agreeing_are_counted_in_words():
    game = parse_game("@@&.............", A2_B4)
    cands = decode.candidates(A2_B4, game)
    verdict = decode.check_guess(A2_B4, game, atoms_of(A2_B4, 4), cands)
    assert verdict.others == 1
    assert (
        verdict.message
        == "the guess agrees with every shown ray, but so do 1 other molecule: it is not proved yet"
    )
    game = parse_game("@&a......a......", A2_B4)
    verdict = decode.check_guess(A2_B4, game, atoms_of(A2_B4, 1), decode.candidates(A2_B4, game))
    assert verdict.message.endswith("but so do 2 other molecules: it is not proved yet")


def test_candidates_contain_exactly_the_molecules_that_agree():
    """Every molecule of A2_B4 asked, against no ray shown (every molecule) and one
    absorption (a list of numbers: a molecule past its last one is not in it)."""
    every = decode.candidates(A2_B4, Game.empty(4))
    some = decode.candidates(A2_B4, parse_game("@...............", A2_B4))
    kept = {int(n) for n, _ in some.molecules()}
    assert 0 < len(kept) < A2_B4.nb_mol and max(kept) < A2_B4.nb_mol
    for number in range(1, A2_B4.nb_mol + 1):
        atoms = atoms_of(A2_B4, number)
        assert every.contains(atoms)
        assert some.contains(atoms) == (number in kept)


def test_a_consistent_guess_that_is_not_proved():
    game = parse_game("@...............", A2_B4)
    cands = decode.candidates(A2_B4, game)
    verdict = decode.check_guess(A2_B4, game, atoms_of(A2_B4, 2), cands)
    assert verdict.consistent and verdict.contradiction is None
    assert verdict.others == cands.count - 1 > 0
    assert verdict.message.endswith(f"but so do {cands.count - 1:,} other molecules: it is not proved yet")
