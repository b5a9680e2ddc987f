"""What the outside trials of issue #33 hit with the keyboard, key for key (its section 2).

Each test presses the keys the issue names, then asserts on what the screen
shows, at the terminal size the finding was made at.  Every app works on a
temporary database or on the shared explored one (A2_B4, A3_B4, A4_B4).
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from pilot import text_of, wait_for
from test_tui_newcomer import footer_keys, open_decode

from bbcore import decoder as decoder_module
from bbcore.config import parse_config
from bbtui.app import BlackBoxApp
from bbtui.screens.decode import DecodeScreen
from bbtui.screens.help import HelpScreen
from bbtui.widgets.game_board import GameBoard

A3_B4 = parse_config("A3_B4")
A4_B4 = parse_config("A4_B4")
GAME = "H..............."  # A3_B4: 16 positions, the first absorbed


# -- Decode: the help's key, the focus after it, the error while it loads -------------


async def test_decode_names_f1_where_question_mark_is_typed(tmp_path: Path) -> None:
    app = BlackBoxApp(tmp_path / "bb.sqlite", A3_B4)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_decode(app, pilot)
        assert screen.focused is screen.spectrum_input
        assert footer_keys(app).get("F1") == "Help" and "?" not in footer_keys(app)
        await pilot.press("question_mark")  # a position not shot: typed, and one character
        assert screen.spectrum_input.value == "?"
        assert text_of(app, "#decode-message").endswith("the game has 1 character")
        await pilot.press("backspace")  # the hint names the key that opens the help here
        assert "(F1 explains the notation)" in text_of(app, "#decode-message")
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert app.screen is screen and screen.focused is screen.spectrum_input
        await pilot.press("escape")  # on the board, ? is the help again
        assert isinstance(screen.focused, GameBoard)
        assert footer_keys(app).get("?") == "Help" and "F1" not in footer_keys(app)


async def test_closing_the_help_on_decode_keeps_the_focus_and_the_game(tmp_path: Path) -> None:
    app = BlackBoxApp(tmp_path / "bb.sqlite", A3_B4)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_decode(app, pilot)
        await pilot.press(*GAME, "enter")
        await wait_for(pilot, lambda: screen.answer is not None and screen.answer.game.shown)
        assert isinstance(screen.focused, GameBoard)
        await pilot.press("escape")  # the screen's keys: the footer says "esc Back"
        assert screen.focused is None and footer_keys(app)["esc"] == "Back"
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert app.screen is screen
        assert screen.focused is None  # where it was: the screen's keys, not the game input
        await pilot.press("slash", "x")  # back in the game input, a key adds to the game
        assert screen.spectrum_input.value == GAME + "x"


async def test_an_error_typed_while_decode_loads_stays_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The first decode (every molecule, as the screen loads) waits at a gate.
    gate = threading.Event()
    decode = decoder_module.Decoder.decode

    def gated(self, *args, **kwargs):
        gate.wait(60)
        return decode(self, *args, **kwargs)

    monkeypatch.setattr(decoder_module.Decoder, "decode", gated)
    app = BlackBoxApp(tmp_path / "bb.sqlite", A3_B4)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("escape", "d")
        screen = app.screen
        assert isinstance(screen, DecodeScreen)
        await wait_for(pilot, lambda: screen.focused is screen.spectrum_input)
        await pilot.press(*"H.R", "enter")  # three positions of 16
        error = (
            "wrong number of positions: A3_B4 has 16 positions (one character each), "
            "the game has 3 characters"
        )
        assert text_of(app, "#decode-message") == error
        assert screen.answer is None
        gate.set()
        await wait_for(pilot, lambda: screen.answer is not None)
        await pilot.pause()
        assert screen.spectrum_input.value == "H.R"
        assert text_of(app, "#decode-message") == error
        assert screen.query_one("#decode-message").has_class("error")
