"""The Play and Decode screens on boxes W wide and H high: KBlackBox's 20 x 12 level at 80 x 24.

Every result on screen is compared with the reference tracer's
(``bbcore.rays``) or the decoder's own answer for the same game.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pilot import cursor_to, open_screen, text_of, wait_for
from textual.widget import Widget
from textual.widgets import Input

from bbcore import rays
from bbcore.config import Config, parse_config
from bbcore.game import labels_text
from bbcore.numbering import atoms_of, molecule_string
from bbcore.play import KBLACKBOX, ray_result
from bbtui.app import BlackBoxApp
from bbtui.screens.decode import DecodeScreen
from bbtui.screens.play import PlayScreen
from bbtui.widgets.board import Board
from bbtui.widgets.game_board import GameBoard
from bbtui.widgets.play_board import PlayBoard

SMALL = (80, 24)


def in_view(widget: Widget, body: Widget, line: int, column: int) -> bool:
    """Whether the diagram's (line, column) token of a board shows inside the scrolling body."""
    size = widget.token_width()
    x = widget.content_region.x + column * (size + 1)
    y = widget.content_region.y + line
    return body.content_region.contains(x, y) and body.content_region.contains(x + size - 1, y)


async def test_play_kblackbox_20_by_12_at_80_by_24(tmp_path: Path) -> None:
    """The preset typed in the input plays KBlackBox's rules; shots down the left side and along
    the bottom give the reference tracer's results, with the body scrolled to keep the cursor in
    view; the hidden cells placed by the arrows win, and the points are KBlackBox's."""
    app = BlackBoxApp(tmp_path / "play.sqlite", parse_config("A2_B4"))
    async with app.run_test(size=SMALL) as pilot:
        screen = await open_screen(app, pilot, "P", PlayScreen)
        await wait_for(pilot, lambda: screen.match is not None)
        config_input = screen.query_one("#play-config", Input)
        config_input.value = "kblackbox-20x12-15"
        await wait_for(pilot, lambda: screen.match is not None and screen.match.config == Config(15, 20, 12))
        match = screen.match
        assert match.rules is KBLACKBOX and (match.config.width, match.config.height) == (20, 12)
        assert "rules: KBlackBox" in text_of(app, "#play-status")
        assert "KBlackBox 20 x 12, 15 balls" in text_of(app, "#play-message")
        board = screen.board
        assert isinstance(board, PlayBoard) and (board.box_width, board.box_height) == (20, 12)
        board.focus()
        body = screen.query_one("#play-body")
        for position in (1, 12, 13, 20, 32, 40):
            if match.game.result(position) is not None:
                continue
            await cursor_to(pilot, board, position)
            await pilot.press("enter")
            await wait_for(pilot, lambda p=position: match.game.result(p) is not None)
            await pilot.pause()
            assert match.game.result(position) == ray_result(rays.trace(20, match.atoms, position, 12))
            line, column = board.cursor_cell()
            assert in_view(board, body, line, column), position
        assert match.points == sum(9 if isinstance(match.game.result(p), int) else 3 for p in match.shots)
        await pilot.press("a")
        for cell in match.atoms:
            line, column = divmod(board.cell, 20)
            target_line, target_column = divmod(cell, 20)
            keys = ["down" if target_line > line else "up"] * abs(target_line - line)
            keys += ["right" if target_column > column else "left"] * abs(target_column - column)
            await pilot.press(*keys, "enter")
            assert board.cell == cell
        await pilot.press("s")
        await wait_for(pilot, lambda: match.judgement is not None)
        assert match.judgement.right and "Right: that is the hidden molecule" in text_of(app, "#play-message")
        assert "No strategy book here" in text_of(app, "#play-verdict")


async def test_decode_a_20_by_12_spectrum_at_80_by_24(tmp_path: Path) -> None:
    """A full spectrum of A2_B20x12 (its 30-odd exit pairs written as numbered tokens) decodes to
    its one molecule: the heat map shows its two atoms certain, the candidate's board is drawn
    W x H, and moving the game board's cursor to the far right scrolls the body sideways."""
    config = Config(2, 20, 12)
    atoms = (45, 214)
    spectrum = rays.spectrum(config, atoms)
    tokens = labels_text(rays.spectrum_labels(spectrum))
    assert " " in tokens  # past 26 exit pairs: the token notation
    app = BlackBoxApp(tmp_path / "decode.sqlite", config)
    async with app.run_test(size=SMALL) as pilot:
        screen = await open_screen(app, pilot, "d", DecodeScreen)
        await wait_for(pilot, lambda: screen.answer is not None)
        screen.spectrum_input.value = tokens
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.answer is not None and screen.answer.game.complete, timeout=120)
        assert screen.answer.found.numbers.tolist() == [screen.answer.found.numbers[0]]
        assert atoms_of(config, int(screen.answer.found.numbers[0])) == atoms
        board = screen.game_board
        assert isinstance(board, GameBoard) and (board.box_width, board.box_height) == (20, 12)
        rows = board.grid_rows({})
        certain = [
            (line - 1) * 20 + column - 1
            for line in range(1, 13)
            for column in range(1, 21)
            if rows[line][column] == "O"
        ]
        assert certain == list(atoms)
        await wait_for(pilot, lambda: bool(screen.query_one("#decode-boards").query(Board)))
        candidate = screen.query_one("#decode-boards").query(Board).first()
        assert candidate.molecule == molecule_string(config, atoms) and candidate.box_height == 12
        board.focus()
        body = screen.query_one("#decode-body")
        await cursor_to(pilot, board, 12 + 20)  # the bottom side's last position, far right
        await pilot.pause()
        line, column = board.cursor_cell()
        assert in_view(board, body, line, column)


async def test_a_30_by_30_box_scrolls_to_follow_the_cursor(tmp_path: Path) -> None:
    """A1_B30's board (2-digit labels once 26 exits are marked) is wider and higher than 80 x 24:
    the body scrolls both ways so that the cursor, and the cell cursor while placing, stay in view."""
    app = BlackBoxApp(tmp_path / "play.sqlite", parse_config("A1_B30"))
    async with app.run_test(size=SMALL) as pilot:
        screen = await open_screen(app, pilot, "P", PlayScreen)
        await wait_for(pilot, lambda: screen.match is not None)
        match = screen.match
        board = screen.board
        assert board is not None
        board.focus()
        body = screen.query_one("#play-body")
        for position in range(1, 41):  # the left side and a third of the bottom, mostly straight across
            if match.game.result(position) is None:
                await cursor_to(pilot, board, position)
                await pilot.press("enter")
                await wait_for(pilot, lambda p=position: match.game.result(p) is not None)
        assert board.token_width() == 2  # past 26 exit pairs, numbered up to 10 and more
        seen = set()
        for position in (31, 45, 60, 61, 75, 90, 91, 105, 120):
            await cursor_to(pilot, board, position)
            await pilot.pause()
            line, column = board.cursor_cell()
            assert in_view(board, body, line, column), position
            seen.add((body.scroll_x > 0, body.scroll_y > 0))
        assert (True, True) in seen and (True, False) in seen  # scrolled right and down, then back up
        await pilot.press("a")
        for key in ["down"] * 29 + ["right"] * 29:
            await pilot.press(key)
        await pilot.pause()
        assert board.cell == 899 and in_view(board, body, 30, 30)


async def test_rules_cycle_and_a_range_preset_hides_its_count(tmp_path: Path) -> None:
    """``v`` goes through bbtui's, Tatham's, KBlackBox's and Emacs' rules, each named; Tatham's
    8x8 with 3 to 6 balls, typed in the new-game input, does not show the count drawn."""
    app = BlackBoxApp(tmp_path / "play.sqlite", parse_config("A2_B4"))
    async with app.run_test(size=SMALL) as pilot:
        screen = await open_screen(app, pilot, "P", PlayScreen)
        await wait_for(pilot, lambda: screen.match is not None)
        seen = []
        for _ in range(4):
            await pilot.press("v")
            await wait_for(pilot, lambda: screen.match.rules is screen.rules)
            seen.append(screen.match.rules.name)
            assert f"rules: {screen.rules.title}" in text_of(app, "#play-status")
        assert seen == ["tatham", "kblackbox", "emacs", "bbtui"]
        await pilot.press("slash", *"tatham-8x8-3-6", "enter")
        await wait_for(pilot, lambda: screen.match.config == parse_config("A3-6_B8"))
        match = screen.match
        assert match.rules.name == "tatham" and match.count in range(3, 7)
        status = text_of(app, "#play-status")
        assert "3 to 6 atoms hidden" in status and f"of {match.count}" not in status
        assert "rays 0" in status and "points" not in status


async def test_the_solvers_first_decode_says_it_compiles(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A decode that needs the solver when its kernel is neither compiled in this process nor
    cached on disk says so (it compiled for about 10 s with "Decoding ..." alone); once
    compiled, the next decode does not say it again."""
    from bbcore import engine, solver, solver_kernels

    path_kernel = engine.kernel_identity(solver_kernels.path_kernel)
    monkeypatch.setattr(engine, "_COMPILED", {k: v for k, v in engine._COMPILED.items() if k != path_kernel})
    monkeypatch.setattr(engine, "__file__", str(tmp_path / "engine.py"))  # no cache found beside it
    assert not solver.kernels_ready()
    config = Config(2, 6, 4)  # a rectangle: only the solver decodes it
    app = BlackBoxApp(tmp_path / "decode.sqlite", config)
    async with app.run_test(size=SMALL) as pilot:
        screen = await open_screen(app, pilot, "d", DecodeScreen)
        await wait_for(pilot, lambda: screen.answer is not None)
        said: list[str] = []
        real_say = screen.say  # watched, not replaced: every line still goes to the screen
        monkeypatch.setattr(
            screen, "say", lambda text, error=False: (said.append(text), real_say(text, error=error))
        )
        for atoms in ((3, 17), (0, 23)):
            said.clear()
            labels = labels_text(rays.spectrum_labels(rays.spectrum(config, atoms)))
            screen.spectrum_input.value = labels
            screen.spectrum_input.focus()
            await pilot.press("enter")
            await wait_for(pilot, lambda labels=labels: any(line.startswith(f"{labels}: ") for line in said))
            compiling = [line for line in said if "compiling the solver" in line]
            assert compiling == (
                [f"Decoding {labels}: compiling the solver, first time only (about 10 s)..."]
                if atoms == (3, 17)
                else []
            )
    assert solver.kernels_ready()
