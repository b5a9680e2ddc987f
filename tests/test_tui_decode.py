"""The Decode screen: a game built on the board, the heat map, next shots, pages, guesses.

Most apps here decode A3_B4 (560 molecules) on an empty temporary database,
so the candidates are computed; one test explores A3_B4 to check where the
candidates come from.  Every figure on screen is compared with
``bbcore.decode``'s own answer for the same game.
"""

from __future__ import annotations

from math import comb
from pathlib import Path

import numpy as np
import pytest
from games import EMACS, EMACS_ATOMS
from pilot import open_screen, text_of, wait_for
from rich.text import Text
from textual import events
from textual.pilot import Pilot
from textual.widgets import Input

from bbcore import decode, rays
from bbcore.config import Config, parse_config
from bbcore.game import ABSORBED, Game, draft_game, labels_text, parse_game
from bbcore.numbering import atoms_of, molecule_string
from bbcore.shots import atom_counts, next_shots
from bbtui.app import BlackBoxApp
from bbtui.screens import decode as decode_screen
from bbtui.screens.decode import PAGE, DecodeScreen
from bbtui.widgets.board import Board, ray_caption
from bbtui.widgets.game_board import GameBoard

A3_B4 = parse_config("A3_B4")
A4_B8 = parse_config("A4_B8")


async def open_decode(app: BlackBoxApp, pilot: Pilot) -> DecodeScreen:
    """The Decode screen, once its game with no ray shot is decoded."""
    screen = await open_screen(app, pilot, "d", DecodeScreen)
    await wait_for(pilot, lambda: screen.answer is not None)
    return screen


async def settled(pilot: Pilot, screen: DecodeScreen) -> None:
    """Wait until the game written is the game decoded and shown."""
    await wait_for(pilot, lambda: screen.answer is not None and screen.answer.game == screen.game)
    await pilot.pause()


def board_text(board: Board) -> str:
    """What a board shows, as plain text."""
    rendered = board.render()
    assert isinstance(rendered, Text)
    return rendered.plain


def game_board(screen: DecodeScreen) -> GameBoard:
    """The screen's game board."""
    board = screen.game_board
    assert board is not None
    return board


def candidate_boards(screen: DecodeScreen) -> list[Board]:
    """The candidate boards shown."""
    return list(screen.query("#decode-boards Board"))


async def move_to(pilot: Pilot, board: GameBoard, position: int) -> None:
    """Move the game board's cursor round the box (anticlockwise, as the positions go)."""
    w = board.box_width
    for _ in range(4 * w + 1):
        if board.position == position:
            return
        side = 0 if board.position is None else (board.position - 1) // w
        await pilot.press(("down", "right", "up", "left")[side])
    raise AssertionError(f"the cursor did not reach position {position}")


def spectrum_of(config: Config, number: int) -> str:
    """A molecule's spectrum, by the reference rules."""
    return rays.spectrum(config, atoms_of(config, number))


# -- no ray shot -------------------------------------------------------------------


async def test_no_ray_shot_is_every_molecule_a_flat_heat_map_and_the_best_first_shots(
    tmp_path: Path, a4_b8_first_shot: tuple[float, float]
) -> None:
    app = BlackBoxApp(tmp_path / "empty.sqlite", A4_B8)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_decode(app, pilot)
        assert text_of(app, "#decode-result") == (
            "No ray shot: every molecule of A4_B8 (635,376) agrees; they are not listed."
        )
        assert candidate_boards(screen) == [] and text_of(app, "#decode-page") == ""
        board = game_board(screen)
        assert board.counts is not None and (board.counts == comb(63, 3)).all()
        assert board_text(board).splitlines()[1].split() == ["6"] * 8  # 4/64 = 6%
        # The first shot is ranked over every molecule: one cell in from a corner.
        shots = text_of(app, "#decode-shots").splitlines()
        assert shots[:2] == ["Best next shots (*)", "by expected candidates left:"]
        remaining, information = a4_b8_first_shot
        assert shots[3].split()[:4] == ["2", f"{remaining:,.2f}", f"{information:.3f}", "27:"]
        assert board.best == 2 and "*" in board_text(board).splitlines()[2]


async def test_a_configuration_too_large_to_rank_says_so_and_goes_to_the_solver(tmp_path: Path) -> None:
    app = BlackBoxApp(tmp_path / "empty.sqlite", parse_config("A5_B13"))
    async with app.run_test(size=(120, 40)) as pilot:
        await open_decode(app, pilot)
        assert text_of(app, "#decode-shots").startswith(
            f"Next shots not ranked: {comb(169, 5):,} candidates x 52 positions is too many rays"
        )
        # Past the engine's limit the solver decodes in the worker (no longer refused) and counts
        # exactly (its path search: quicker than a "Decoding" line stays up); leaving the app
        # cancels what still runs (bbcore.solver checks the worker's event and ends its counter).
        await pilot.press("escape", "down", "H")
        await wait_for(pilot, lambda: "molecules (solved" in text_of(app, "#decode-message"))
        assert not app.screen.query_one("#decode-message").has_class("error")


# -- building a game on the board ---------------------------------------------------


async def test_results_typed_on_the_board_are_decoded_as_you_go(tmp_path: Path) -> None:
    full = parse_game(spectrum_of(A3_B4, 200), A3_B4)
    app = BlackBoxApp(tmp_path / "empty.sqlite", A3_B4)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_decode(app, pilot)
        board = game_board(screen)
        await pilot.press("escape")  # from the game input to the board
        assert screen.focused is board
        await pilot.press("H")
        assert text_of(app, "#decode-message").startswith("pick a position first")
        await pilot.press("down")  # the cursor starts at position 1
        assert board.position == 1

        result = full.result(1)
        typed = "H" if result == ABSORBED else "R" if result == "&" else "7"
        assert typed != "7", "molecule 200 absorbs or reflects the ray from position 1"
        await pilot.press(typed)
        await settled(pilot, screen)
        game = Game.empty(4).with_result(1, result)
        assert screen.game.results == game.results and screen.game.labels[0] == typed
        assert screen.spectrum_input.value == typed + "." * 15
        expected = decode.candidates(A3_B4, game)
        assert screen.found is not None
        assert screen.found.numbers.tolist() == expected.numbers.tolist()
        assert (board.counts == atom_counts(expected).ravel()).all()
        assert text_of(app, "#decode-result") == f"{expected.count} molecules agree with these rays."
        assert text_of(app, "#decode-message").endswith("(computed: A3_B4 is not explored).")

        # An exit: its label at one end waits, at the other end pairs them.
        p, q = next((p, r) for p, r in enumerate(full.results, 1) if isinstance(r, int) and p > 1)
        await move_to(pilot, board, p)
        await pilot.press("k")
        assert board.waiting == (p,) and screen.game.results == game.results  # not a constraint yet
        assert f"Label 'k' at position {p} waits for its other end" in text_of(app, "#decode-message")
        assert "waits for its other end" in board_text(board)
        await move_to(pilot, board, q)
        await pilot.press("k")
        await settled(pilot, screen)
        game = game.with_result(p, q)
        assert screen.game.results == game.results and board.waiting == ()
        assert screen.found.numbers.tolist() == decode.candidates(A3_B4, game).numbers.tolist()
        assert 200 in screen.found.numbers.tolist()
        assert board_text(board).splitlines()[-2] == f"position {q} → {p}"

        # A third end is refused and changes nothing; backspace and del undo.
        await move_to(pilot, board, next(r for r in range(2, 17) if r not in (p, q)))
        await pilot.press("k")
        assert text_of(app, "#decode-message").startswith("label 'k' appears 3 times")
        assert screen.game.results == game.results
        await move_to(pilot, board, q)
        await pilot.press("backspace")
        assert board.waiting == (p,)
        await settled(pilot, screen)
        assert screen.game.results == Game.empty(4).with_result(1, result).results
        await pilot.press("k", "delete")
        assert board.draft[q - 1] == "" and board.waiting == (p,)


async def test_digits_typed_in_a_row_make_one_label(tmp_path: Path) -> None:
    app = BlackBoxApp(tmp_path / "empty.sqlite", A3_B4)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_decode(app, pilot)
        board = game_board(screen)
        await pilot.press("escape", "down", "1", "2")  # position 1: label 12
        assert board.draft[0] == "12"
        await pilot.press("up", *["right"] * 4)  # round the top-left corner, along the top to 12
        assert board.position == 12
        await pilot.press("1")
        assert board.waiting == (1, 12)
        await pilot.press("2")
        assert board.waiting == () and screen.game.result(1) == 12
        assert screen.spectrum_input.value.split() == ["12"] + ["."] * 10 + ["12"] + ["."] * 4
        await settled(pilot, screen)
        await pilot.press("down", "3")  # moving the cursor starts a new label
        assert board.draft[10] == "3"


async def test_the_cursor_draws_its_ray_on_every_candidate_with_the_shown_rays(tmp_path: Path) -> None:
    full = parse_game(spectrum_of(A3_B4, 300), A3_B4)
    game = Game.empty(4)
    for position in (2, 5, 9, 14):
        game = game.with_result(position, full.result(position))
    app = BlackBoxApp(tmp_path / "empty.sqlite", A3_B4)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_decode(app, pilot)
        screen.spectrum_input.value = labels_text(game.labels)
        await pilot.press("enter")
        await settled(pilot, screen)
        assert screen.game.results == game.results and screen.focused is game_board(screen)
        boards = candidate_boards(screen)
        assert [b.molecule for b in boards] == [m for _, m in screen.found.molecules(PAGE)]
        shown = [position for position, _ in game.rays()]
        assert all([ray.position for ray in b.drawn_rays] == shown for b in boards)
        assert all(b.labels == list(game.labels) for b in boards)
        await pilot.press("down")
        assert {b.position for b in boards} == {1}
        for b in boards:
            assert board_text(b).splitlines()[-2:] == list(ray_caption(rays.trace(4, b.atoms, 1)))
        assert "the shown rays drawn (ctrl+t)" in text_of(app, "#decode-page")
        await pilot.press("ctrl+t")  # only the cursor's ray
        assert all(b.drawn_rays == () for b in candidate_boards(screen))
        assert "the cursor's ray drawn (ctrl+t)" in text_of(app, "#decode-page")
        await pilot.press("ctrl+t")
        assert all(len(b.drawn_rays) == 4 for b in candidate_boards(screen))


def footer_keys(app: BlackBoxApp) -> dict[str, str]:
    """The keys the footer shows now, with their descriptions."""
    return {
        key: active.binding.description
        for key, active in app.screen.active_bindings.items()
        if active.binding.show and active.enabled
    }


async def test_on_the_game_board_letters_are_labels_and_the_footer_shows_only_keys_that_work(
    tmp_path: Path,
) -> None:
    app = BlackBoxApp(tmp_path / "empty.sqlite", A3_B4)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_decode(app, pilot)
        board = game_board(screen)
        # In the game input, "/" (to the game input) would be typed: not in the footer.
        assert screen.focused is screen.spectrum_input
        assert "slash" not in footer_keys(app)
        await pilot.press("escape", "down")
        assert screen.focused is board
        keys = footer_keys(app)
        # No letter or digit is offered as a screen key while they write labels.
        assert not [key for key in keys if len(key) == 1 and key.isalnum()], keys
        assert {"slash", "backspace", "ctrl+r"} <= set(keys)
        for key in "egmtoP":  # the keys the footer used to advertise here
            await pilot.press("down" if key == "o" else "delete")
            await pilot.press(key)
            assert isinstance(app.screen, DecodeScreen)
            assert board.draft[board.position - 1] == key
        await pilot.press("slash")  # shown, so it does what it says
        assert screen.focused is screen.spectrum_input


async def test_a_labelled_position_is_never_silently_replaced(tmp_path: Path) -> None:
    app = BlackBoxApp(tmp_path / "empty.sqlite", A3_B4)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_decode(app, pilot)
        board = game_board(screen)
        await pilot.press("escape", "down", "H")
        await settled(pilot, screen)
        await pilot.press("R")
        assert board.draft[0] == "H" and screen.game.result(1) == ABSORBED
        assert text_of(app, "#decode-message") == (
            "position 1 already holds 'H': backspace or del clears it first"
        )
        await pilot.press("down", "up")  # away and back: still refused
        await pilot.press("k")
        assert board.draft[0] == "H"
        await pilot.press("delete", "R")  # cleared first, then written
        await settled(pilot, screen)
        assert board.draft[0] == "R"


async def test_decode_messages_do_not_outlive_their_cause(tmp_path: Path) -> None:
    app = BlackBoxApp(tmp_path / "empty.sqlite", A3_B4)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_decode(app, pilot)
        board = game_board(screen)
        # The player's labels d and e stay d and e in the message (not renamed a and b).
        await pilot.press("escape", "down", "d")
        await move_to(pilot, board, 8)
        await pilot.press("d")
        await move_to(pilot, board, 2)
        await pilot.press("e")
        await move_to(pilot, board, 7)
        await pilot.press("e")
        await settled(pilot, screen)
        assert text_of(app, "#decode-message").startswith("de....ed........: ")
        # A refusal is an error until the next valid action.
        await move_to(pilot, board, 3)
        await pilot.press("d")
        assert text_of(app, "#decode-message").startswith("label 'd' appears 3 times")
        await pilot.press("down")
        assert text_of(app, "#decode-message").startswith("de....ed........: ")
        await pilot.press("d")
        assert "appears 3 times" in text_of(app, "#decode-message")
        await pilot.press("H")
        await settled(pilot, screen)
        assert "appears 3 times" not in text_of(app, "#decode-message")


# -- next shots, ambiguity, guesses ---------------------------------------------------


async def test_next_shots_are_ranked_either_way(tmp_path: Path) -> None:
    full = parse_game(spectrum_of(A3_B4, 300), A3_B4)
    game = Game.empty(4).with_result(2, full.result(2)).with_result(7, full.result(7))
    cands = decode.candidates(A3_B4, game)
    app = BlackBoxApp(
        tmp_path / "empty.sqlite",
        A3_B4,
    )
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_decode(app, pilot)
        screen.read_game(labels_text(game.labels))
        await settled(pilot, screen)
        for ranking in ("remaining", "information"):
            expected = next_shots(A3_B4, game, cands, by=ranking)
            lines = text_of(app, "#decode-shots").splitlines()
            title = "expected candidates left" if ranking == "remaining" else "expected information"
            assert lines[:2] == ["Best next shots (*)", f"by {title}:"]
            assert [int(line.split()[0]) for line in lines[3:]] == [s.position for s in expected[:5]]
            first = lines[3].split()
            assert first[1:3] == [f"{expected[0].remaining:,.2f}", f"{expected[0].information:.3f}"]
            assert game_board(screen).best == expected[0].position
            await pilot.press("ctrl+r")


async def test_an_ambiguous_game_names_the_atoms_in_doubt(tmp_path: Path) -> None:
    groups: dict[str, list[int]] = {}
    for number in range(1, A3_B4.nb_mol + 1):
        groups.setdefault(spectrum_of(A3_B4, number), []).append(number)
    spectrum, group = next((s, g) for s, g in groups.items() if len(g) == 2)
    app = BlackBoxApp(tmp_path / "empty.sqlite", A3_B4)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_decode(app, pilot)
        screen.read_game(spectrum)
        await settled(pilot, screen)
        assert text_of(app, "#decode-result") == "Ambiguous: 2 molecules give this spectrum."
        first, second = (set(atoms_of(A3_B4, k)) for k in group)
        doubt = ", ".join(f"({c // 4 + 1}, {c % 4 + 1})" for c in sorted(first ^ second))
        assert text_of(app, "#decode-verdict") == (
            f"No ray left can tell these 2 molecules apart: the game is ambiguous. Atoms in doubt: {doubt}."
        )
        assert [b.molecule for b in candidate_boards(screen)] == [
            molecule_string(A3_B4, atoms_of(A3_B4, k)) for k in group
        ]
        assert all(b.marked == first ^ second for b in candidate_boards(screen))
        # Every ray of a full spectrum would cover the box: only the cursor's is drawn.
        assert all(b.drawn_rays == () for b in candidate_boards(screen))


async def test_a_guess_is_checked_against_the_shown_rays(tmp_path: Path) -> None:
    full = parse_game(spectrum_of(A3_B4, 300), A3_B4)
    game = Game.empty(4).with_result(2, full.result(2))
    app = BlackBoxApp(tmp_path / "empty.sqlite", A3_B4)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_decode(app, pilot)
        screen.read_game(labels_text(game.labels))
        await settled(pilot, screen)
        count = screen.found.count
        guess = screen.query_one("#decode-guess", Input)
        guess.focus()
        await pilot.press(*"300")
        assert text_of(app, "#decode-verdict") == (
            f"Guess: the guess agrees with every shown ray, but so do {count - 1:,} other "
            f"molecules: it is not proved yet."
        )
        wrong = next(k for k in range(1, A3_B4.nb_mol + 1) if k not in screen.found.numbers)
        guess.value = str(wrong)
        await pilot.pause()
        assert text_of(app, "#decode-verdict").startswith("Guess: the guess contradicts position 2")
        guess.value = "O" * 16
        await pilot.pause()
        assert text_of(app, "#decode-message").startswith("bad guess")


async def test_a_pasted_diagram_is_read_with_its_guess(tmp_path: Path) -> None:
    app = BlackBoxApp(tmp_path / "empty.sqlite", A4_B8)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_decode(app, pilot)
        screen.spectrum_input.post_message(events.Paste(EMACS))
        await wait_for(pilot, lambda: screen.game is not None and screen.game.shown)
        await settled(pilot, screen)
        assert screen.game == parse_game(EMACS, A4_B8)
        assert game_board(screen).draft[:4] == ["1", "", "", "2"]
        assert screen.spectrum_input.value == labels_text(screen.game.labels)
        assert text_of(app, "#decode-result") == "Solved: one molecule agrees with these rays."
        assert text_of(app, "#decode-verdict") == (
            "Guess: the guess agrees with every shown ray and is the only molecule that does."
        )
        assert screen.query_one("#decode-guess", Input).value == molecule_string(A4_B8, EMACS_ATOMS)


async def test_without_a_configuration_the_screen_asks_for_one(tmp_path: Path) -> None:
    app = BlackBoxApp(tmp_path / "empty.sqlite")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("escape", "d")
        screen = app.screen
        assert isinstance(screen, DecodeScreen) and screen.game_board is None
        assert text_of(app, "#decode-message").startswith("Choose a configuration")
        await pilot.press(*"A3_B")
        assert text_of(app, "#decode-message").startswith("invalid configuration 'A3_B'")
        await pilot.press("4", "enter")
        await wait_for(pilot, lambda: screen.answer is not None)
        assert screen.config == A3_B4 and screen.focused is screen.spectrum_input
        assert text_of(app, "#decode-result").startswith("No ray shot: every molecule of A3_B4 (560)")


async def test_a_new_configuration_keeps_a_game_that_fits_and_drops_one_that_does_not(tmp_path: Path) -> None:
    app = BlackBoxApp(tmp_path / "empty.sqlite", A3_B4)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_decode(app, pilot)
        screen.read_game("H" + "." * 15)
        await settled(pilot, screen)
        config_input = screen.query_one("#decode-config", Input)
        config_input.value = "A2_B4"  # the same box: the game is decoded for 2 atoms
        await wait_for(pilot, lambda: screen.config == parse_config("A2_B4"))
        await settled(pilot, screen)
        assert screen.game.results == parse_game("H" + "." * 15, screen.config).results
        assert screen.found.count == decode.candidates(screen.config, screen.game).count
        assert game_board(screen).draft[0] == "H"
        config_input.value = "A2_B5"  # another box: the game goes
        await wait_for(pilot, lambda: screen.config == parse_config("A2_B5"))
        await settled(pilot, screen)
        assert screen.spectrum_input.value == "" and not screen.game.shown
        assert game_board(screen).box_width == 5 and screen.found.every_molecule


# -- pages and where the candidates come from ---------------------------------------


@pytest.mark.parametrize("size", [PAGE, 7, 137])
async def test_every_candidate_can_be_paged_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: int
) -> None:
    """At the screen's page size, shrunk to 7 (many more page edges crossed), and to 137: the
    274 candidates in two whole pages, the last one exactly full (no empty page after it)."""
    monkeypatch.setattr(decode_screen, "PAGE", size)
    PAGE = size  # noqa: N806 (the module's constant, as the screen reads it now)
    game = Game.empty(4).with_result(1, ABSORBED)
    expected = decode.candidates(A3_B4, game)
    assert expected.count >= 2 * PAGE
    last = (expected.count - 1) // PAGE
    app = BlackBoxApp(tmp_path / "empty.sqlite", A3_B4)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_decode(app, pilot)
        screen.read_game("H" + "." * 15)
        await settled(pilot, screen)
        await pilot.press("escape")  # out of the game input, where < and > are typed
        assert text_of(app, "#decode-page").startswith(
            f"Candidates 1-{PAGE} of {expected.count} (page 1 of {last + 1}: < > turn pages)"
        )
        seen: list[str] = []
        for page in range(last + 1):
            assert screen.page == page
            seen += [b.molecule for b in candidate_boards(screen)]
            await pilot.press("greater_than_sign")
        assert screen.page == last  # no page after the last
        assert seen == [m for _, m in expected.molecules()]
        await pilot.press("less_than_sign")
        assert screen.page == last - 1
        assert [b.border_title for b in candidate_boards(screen)][0] == (
            f"#{expected.numbers[(last - 1) * PAGE]:,}"
        )


async def test_a_full_spectrum_comes_from_the_store_and_a_partial_game_is_computed(
    explored: Path,
) -> None:
    spectrum = spectrum_of(A3_B4, 123)
    app = BlackBoxApp(explored, A3_B4)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_decode(app, pilot)
        screen.read_game(spectrum)
        await settled(pilot, screen)
        assert screen.found.source == "store" and 123 in screen.found.numbers
        assert "(read from the explored A3_B4)" in text_of(app, "#decode-message")
        partial = spectrum[:6] + "." * 10
        partial = labels_text(draft_game(A3_B4, list(partial))[0].labels)
        screen.read_game(partial)
        await settled(pilot, screen)
        assert screen.found.source == "computed"
        assert "(computed: quicker than scanning the store for a partial game)" in text_of(
            app, "#decode-message"
        )
        computed = decode.candidates(A3_B4, parse_game(partial, A3_B4), source="store")
        assert np.array_equal(screen.found.numbers, computed.numbers)


async def test_at_80_columns_a_whole_game_and_the_sentences_show(tmp_path: Path) -> None:
    app = BlackBoxApp(tmp_path / "empty.sqlite", A4_B8)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_decode(app, pilot)
        game = "@.ab.d&..&..g..@..d.ba..&..g..&."
        screen.spectrum_input.value = game
        screen.spectrum_input.cursor_position = 0
        await pilot.pause()
        # The game input shows all 32 results, not only the tail.
        assert screen.spectrum_input.content_size.width >= len(game)
        await pilot.press("enter")
        await settled(pilot, screen)
        await pilot.press("ctrl+r")  # the other ranking's title

        def shown() -> str:
            return " ".join(strip.text for strip in screen._compositor.render_strips())

        await wait_for(pilot, lambda: "by expected information:" in shown())
        shown = shown()
        for selector in ("#decode-result", "#decode-message"):
            for word in text_of(app, selector).split():
                assert word in shown, (selector, word)
        assert "Best next shots (*)" in shown and "by expected information:" in shown
