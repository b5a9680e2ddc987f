"""What the newcomers of issues #20 and #21 hit with the keyboard, key for key.

Each test presses the keys the issue names, then asserts on what the screen
shows (at 80 x 24 where the finding was about the screen's room).  Every app
works on a temporary database.
"""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest
from pilot import RangeGate, open_screen, text_of, wait_for
from test_tui_explore import SMALL_RANGES
from textual.app import App
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import DataTable, Input, Label

from bbcore import strategy
from bbcore.config import parse_config
from bbcore.queries import group_at, group_count
from bbtui import app as app_module
from bbtui.app import BlackBoxApp
from bbtui.screens.decode import DecodeScreen
from bbtui.screens.group import GroupScreen
from bbtui.screens.groups import GroupsScreen
from bbtui.screens.help import HelpScreen
from bbtui.screens.play import PlayScreen
from bbtui.screens.strategy import StrategyScreen
from bbtui.widgets.board import Board
from bbtui.widgets.game_board import GameBoard
from bbtui.widgets.plot import BarPlot

A3_B4 = parse_config("A3_B4")
A4_B4 = parse_config("A4_B4")


def notes(app: App) -> list[str]:
    """The notifications on screen, oldest first."""
    return [notification.message for notification in app._notifications]


def footer_keys(app: App) -> dict[str, str]:
    """The keys the footer shows now (key display: description)."""
    shown = {}
    for key, active in app.screen.active_bindings.items():
        binding = active.binding
        if binding.show and active.enabled:
            shown[binding.key_display or key] = binding.description
    return shown


def wholly_in_view(widget: Widget) -> bool:
    """Whether every line of ``widget`` is on screen: inside each scrolling ancestor's region."""
    region = widget.region
    return bool(region.height) and all(
        node.region.y <= region.y and region.bottom <= node.region.bottom
        for node in widget.ancestors
        if isinstance(node, Widget)
    )


async def open_decode(app: BlackBoxApp, pilot: Pilot) -> DecodeScreen:
    """``Esc d``: the Decode screen, its game with no ray shot decoded."""
    screen = await open_screen(app, pilot, "d", DecodeScreen)
    await wait_for(pilot, lambda: screen.answer is not None)
    return screen


# -- #21.5 a stale error -----------------------------------------------------------


async def test_decode_a_configuration_typed_back_clears_its_error(tmp_path: Path) -> None:
    app = BlackBoxApp(tmp_path / "bb.sqlite", A3_B4)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_decode(app, pilot)
        before = text_of(app, "#decode-message")
        await pilot.press("shift+tab")
        assert screen.focused is screen.query_one("#decode-config")
        await pilot.press("X", "backspace", *"A3_B4")  # the focus selects the text: X replaces it
        assert screen.query_one("#decode-config", Input).value == "A3_B4"
        message = screen.query_one("#decode-message", Label)
        assert not message.has_class("error")
        assert text_of(app, "#decode-message") == before
        await pilot.press("enter")  # on to the game
        assert screen.focused is screen.spectrum_input


async def test_play_a_configuration_typed_back_clears_its_error(tmp_path: Path) -> None:
    app = BlackBoxApp(tmp_path / "bb.sqlite", A3_B4)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_screen(app, pilot, "P", PlayScreen)
        await wait_for(pilot, lambda: screen.match is not None)
        before = text_of(app, "#play-message")
        for _ in range(5):
            if screen.focused is screen.query_one("#play-config"):
                break
            await pilot.press("shift+tab")
        assert screen.focused is screen.query_one("#play-config")
        await pilot.press("X", "backspace", *"A3_B4")
        assert screen.query_one("#play-config", Input).value == "A3_B4"
        assert not screen.query_one("#play-message", Label).has_class("error")
        assert text_of(app, "#play-message") == before


# -- #21.6 the key a message names works from where the user is ---------------------


async def test_s_resumes_a_new_configuration_paused_while_the_cursor_was_elsewhere(
    explored: Path, tmp_path: Path, gate: RangeGate
) -> None:
    path = tmp_path / "bb.sqlite"
    shutil.copy(explored, path)
    gate.armed = True
    app = BlackBoxApp(path, A4_B4, range_size=SMALL_RANGES)
    async with app.run_test(size=(80, 24)) as pilot:
        table = app.screen.query_one("#configs", DataTable)
        await wait_for(pilot, lambda: table.row_count == 3)
        await pilot.press("n", *"A3_B5", "enter")
        await wait_for(pilot, lambda: app.progress is not None and app.progress.done > 0)
        await pilot.press("p")
        gate.open()
        await wait_for(pilot, lambda: app.exploring is None)
        assert app.progress is not None and app.progress.phase == "paused"
        # The panel says it (a toast covered the panel for seconds: issue #33).
        await wait_for(pilot, lambda: "A3_B5: paused, s resumes" in text_of(app, "#phase"))
        # The cursor is on the run that was paused, and s is in the footer.
        assert table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value == "A3_B5"
        assert footer_keys(app).get("s") == "Start"
        await pilot.press("s")
        await wait_for(pilot, lambda: app.exploring is None and app.progress.phase == "complete")
        assert table.get_row("A3_B5")[2] == "complete"


async def test_p_with_nothing_running_says_so(explored: Path) -> None:
    app = BlackBoxApp(explored, A4_B4)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("p")
        await pilot.pause()
        assert any(note.startswith("Nothing to pause: no exploration is running.") for note in notes(app))


@pytest.mark.parametrize("how", ["table", "key"])
async def test_enter_before_the_groups_first_page_opens_its_first_group(explored: Path, how: str) -> None:
    """``g`` then Enter at once: the Enter that comes before the first page is read (to the
    table, or to the screen before the table has the focus) is not lost."""
    app = BlackBoxApp(explored, A4_B4)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = GroupsScreen(A4_B4)
        await app.push_screen(screen)
        if how == "table":
            screen.table.focus()
            assert not screen.table.row_count  # the page is read once the table's height is known
            assert not screen.table.check_action("select_cursor", ())  # so Enter goes to the screen
        else:
            screen.set_focus(None)  # as before the table takes the focus
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, GroupScreen) and app.screen.members)
        assert app.screen.index == 0 and app.screen.spectrum == group_at(A4_B4, 0).spectrum


async def test_n_on_the_last_group_says_so(explored: Path) -> None:
    app = BlackBoxApp(explored, A4_B4)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("g", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, GroupScreen) and app.screen.members)
        screen = app.screen
        count = group_count(A4_B4)
        for index in range(1, count):
            await pilot.press("n")
            await wait_for(pilot, lambda index=index: screen.index == index)
        await pilot.press("n")
        await pilot.pause()
        assert screen.index == count - 1
        assert f"This is the last group of the list ({count} groups)." in notes(app)


# -- #21.7 Play: the verdict where the eye is ---------------------------------------


@pytest.mark.parametrize("keys", [["r"], ["a", "enter", "right", "enter", "right", "enter", "s"]])
async def test_play_shows_the_reveal_in_view_at_80_by_24(tmp_path: Path, keys: list[str]) -> None:
    app = BlackBoxApp(tmp_path / "bb.sqlite", parse_config("A3_B6"))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_screen(app, pilot, "P", PlayScreen)
        await wait_for(pilot, lambda: screen.match is not None)
        await pilot.press(*keys)
        verdict = screen.query_one("#play-verdict", Label)
        await wait_for(pilot, lambda: "The book needed" in str(verdict.render()), timeout=120)
        await wait_for(pilot, lambda: screen.query("#play-reveal Board"))
        hidden = screen.query("#play-reveal Board").first()
        await wait_for(pilot, lambda: wholly_in_view(verdict) and wholly_in_view(hidden))


async def test_play_coach_fits_at_80_columns(tmp_path: Path) -> None:
    app = BlackBoxApp(tmp_path / "bb.sqlite", parse_config("A4_B8"))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_screen(app, pilot, "P", PlayScreen)
        await wait_for(pilot, lambda: screen.match is not None)
        await pilot.press("c")
        coach = screen.query_one("#play-coach GameBoard", GameBoard)
        await wait_for(pilot, lambda: coach.counts is not None, timeout=120)
        await pilot.pause()
        assert coach.region.width == coach.outer_width()
        assert coach.region.right <= 80  # the whole board, its border included


# -- #21.9 and #20: one focus model on Decode --------------------------------------


async def test_decode_esc_steps_out_one_level_and_the_footer_says_where(tmp_path: Path) -> None:
    app = BlackBoxApp(tmp_path / "bb.sqlite", A3_B4)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_decode(app, pilot)
        assert screen.focused is screen.spectrum_input
        await pilot.press("slash")  # to the game input: never typed into it
        assert screen.spectrum_input.value == "" and screen.focused is screen.spectrum_input
        assert footer_keys(app)["esc"] == "Board"
        await pilot.press("escape")
        assert isinstance(screen.focused, GameBoard)
        assert footer_keys(app)["esc"] == "Keys"
        await pilot.press("escape")  # the screen's keys: every letter is a key
        assert screen.focused is None
        assert footer_keys(app)["esc"] == "Back"
        assert "every letter is a key" in text_of(app, "#decode-message")
        await pilot.press("escape")  # and from there, back
        assert not isinstance(app.screen, DecodeScreen)
        screen = await open_decode(app, pilot)
        await pilot.press("escape", "escape", "P")  # a screen key, no longer a label
        assert isinstance(app.screen, PlayScreen)


async def test_decode_tab_follows_the_screen_configuration_game_guess(explored: Path) -> None:
    app = BlackBoxApp(explored, A4_B4)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_decode(app, pilot)
        await pilot.press(*"H...............", "enter")  # decoded: on to the board
        await wait_for(pilot, lambda: screen.answer is not None and screen.answer.game.shown)
        assert isinstance(screen.focused, GameBoard)
        await pilot.press("tab")
        assert isinstance(screen.focused, Board) and screen.focused is not screen.game_board  # a candidate
        for _ in range(40):  # through the candidates, round to the top
            if isinstance(screen.focused, Input):
                break
            await pilot.press("tab")
        assert screen.focused.id == "decode-config"
        ids = []
        for _ in range(3):
            ids.append(screen.focused.id)
            await pilot.press("tab")
        assert ids == ["decode-config", "decode-spectrum", "decode-guess"]
        assert isinstance(screen.focused, GameBoard)
        await pilot.press("shift+tab")
        assert screen.focused.id == "decode-guess"


async def test_a_game_typed_in_the_guess_input_says_where_games_go(tmp_path: Path) -> None:
    app = BlackBoxApp(tmp_path / "bb.sqlite", A3_B4)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_decode(app, pilot)
        await pilot.press("tab", *"H...............")
        assert screen.focused.id == "decode-guess"
        assert text_of(app, "#decode-message").endswith("(that is a game: / goes to the game input)")


# -- #21.10 ? on the first screen ------------------------------------------------------


async def test_question_mark_in_the_first_screen_input_opens_the_help(tmp_path: Path) -> None:
    app = BlackBoxApp(tmp_path / "bb.sqlite")
    async with app.run_test(size=(80, 24)) as pilot:
        new_config = app.screen.query_one("#new-config", Input)
        assert app.screen.focused is new_config
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        assert new_config.value == ""


# -- #21.11 the smaller ones -------------------------------------------------------------


async def test_after_an_invalid_game_the_last_answer_is_not_shown_as_its_answer(tmp_path: Path) -> None:
    app = BlackBoxApp(tmp_path / "bb.sqlite", A3_B4)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_decode(app, pilot)
        await pilot.press(*"H...............", "enter")
        await wait_for(pilot, lambda: screen.answer is not None and screen.answer.game.shown)
        assert text_of(app, "#decode-result").startswith(("Ambiguous", "Unique", "No molecule")) or (
            "molecules" in text_of(app, "#decode-result")
        )
        await pilot.press("slash", "end", "*")
        assert text_of(app, "#decode-result") == (
            "Not decoded: the game typed has an error. Below, the last game decoded (H...............)."
        )


async def test_the_engine_compiles_once_per_run_of_the_app(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As if numba's cache were elsewhere (a read-only install): the first run says it compiles.
    monkeypatch.setattr(app_module, "kernels_cached", lambda compact=False: False)
    app = BlackBoxApp(tmp_path / "bb.sqlite", range_size=SMALL_RANGES)
    loading = []
    async with app.run_test() as pilot:
        for name in ("A2_B4", "A3_B4", "A2_B5"):
            app.start_exploration(parse_config(name))
            loading.append(app.loading)
            await wait_for(pilot, lambda: app.exploring is None)
    assert loading == [
        "compiling the engine, first run only",
        "loading the engine",
        "loading the engine",
    ]


# -- #20 Strategy: the plots say what the book waits for --------------------------------


async def test_strategy_plots_show_the_book_progress_not_nothing_to_plot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The spectra are read, then the run waits at the gate: the tree is being played.
    gate = threading.Event()
    spectra_codes = strategy.spectra_codes

    def gated(*args, **kwargs):
        codes = spectra_codes(*args, **kwargs)
        gate.wait(60)
        return codes

    monkeypatch.setattr(strategy, "spectra_codes", gated)
    config = parse_config("A4_B5")
    app = BlackBoxApp(tmp_path / "bb.sqlite", config)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await open_screen(app, pilot, "b", StrategyScreen)
        plots = list(screen.query(BarPlot))
        assert [str(plot.render()).split("\n")[0] for plot in plots] == [
            "molecules by rays",
            "molecules by points",
        ]
        assert not any("nothing to plot" in str(plot.render()) for plot in plots)
        playing = f"playing the remaining book over {config.nb_mol:,} molecules..."
        await wait_for(pilot, lambda: all(playing in str(plot.render()) for plot in plots))
        gate.set()
        await wait_for(pilot, lambda: screen.book is not None)
        await pilot.pause()
        assert not any("nothing to plot" in str(plot.render()) for plot in plots)
