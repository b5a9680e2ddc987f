"""What the outside trials of issue #33 hit with the keyboard, key for key (its section 2).

Each test presses the keys the issue names, then asserts on what the screen
shows, at the terminal size the finding was made at.  Every app works on a
temporary database or on the shared explored one (A2_B4, A3_B4, A4_B4).
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from pilot import RangeGate, open_screen, text_of, wait_for
from test_tui_decode import board_text
from test_tui_explore import SMALL_RANGES
from test_tui_newcomer import footer_keys, notes, open_decode
from test_tui_paging import PAGE, expected_rows, groups_of_page, rows, summary_rows
from test_tui_play import open_play, play_board
from textual.containers import VerticalScroll
from textual.widgets import Input

from bbcore import decoder as decoder_module
from bbcore.config import parse_config
from bbcore.queries import group_at
from bbtui import app as app_module
from bbtui.app import BlackBoxApp
from bbtui.screens.decode import DecodeScreen
from bbtui.screens.group import GroupScreen
from bbtui.screens.groups import GroupsScreen
from bbtui.screens.help import HelpScreen
from bbtui.widgets.game_board import GameBoard, fit_row

A3_B4 = parse_config("A3_B4")
A4_B4 = parse_config("A4_B4")
A5_B5 = parse_config("A5_B5")
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
        screen = await open_screen(app, pilot, "d", DecodeScreen)
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


# -- Groups: the page keys, the rows in view, the page count, the commas ---------------


async def test_groups_pagedown_and_pageup_turn_pages(explored: Path) -> None:
    app = BlackBoxApp(explored, A4_B4)
    async with app.run_test(size=(140, 24)) as pilot:
        screen = await groups_of_page(pilot, PAGE)
        await pilot.press("a")  # every group: 66 = 6 pages of 11
        assert screen.focused is screen.table
        await pilot.press("pagedown")
        assert summary_rows(app) == "rows 12-22 · page 2/6"
        await pilot.press("pagedown")  # a second one turns the page again
        assert summary_rows(app) == "rows 23-33 · page 3/6"
        assert rows(screen) == expected_rows(23, 33, all_rows=True)
        await pilot.press("pageup")
        assert summary_rows(app) == "rows 12-22 · page 2/6"


def rows_on_screen(screen: GroupsScreen) -> list[str]:
    """The group numbers of the rows drawn on screen (the ``#`` column), top to bottom."""
    table = screen.table
    lines = screen._compositor.render_strips()
    numbers = []
    for y in range(table.region.y + table.header_height, table.region.bottom):
        words = lines[y].text.split()
        if words and words[0].replace(",", "").isdigit():
            numbers.append(words[0])
    return numbers


@pytest.mark.parametrize("size", [(60, 20), (40, 12), (100, 24)])
async def test_groups_rows_counted_are_the_rows_shown(explored: Path, size: tuple[int, int]) -> None:
    app = BlackBoxApp(explored, A4_B4)
    async with app.run_test(size=size) as pilot:
        await pilot.press("g")
        await wait_for(pilot, lambda: isinstance(app.screen, GroupsScreen) and app.screen.page_read)
        screen = app.screen
        assert isinstance(screen, GroupsScreen)
        await pilot.press("a")
        for key in ("", "n", "l"):  # the first page, the next, the last
            if key:
                await pilot.press(key)

            def counted() -> list[str]:
                first, last = summary_rows(app).split(" · ")[0].removeprefix("rows ").split("-")
                return [f"{n:,}" for n in range(int(first), int(last) + 1)]

            # the page settles once the layout has (a loaded machine took more than two frames)
            try:
                await wait_for(pilot, lambda: rows_on_screen(screen) == counted(), timeout=10)
            except AssertionError:
                pass
            assert rows_on_screen(screen) == counted(), (size, key, summary_rows(app))
        if size == (40, 12):  # the rows are wider than the screen: a scrollbar takes a line
            assert screen.table.show_horizontal_scrollbar


async def test_groups_page_count_never_jumps_on_first_open(
    a5_b5: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    said: list[str] = []
    show_summary = GroupsScreen.show_summary

    def recorded(self: GroupsScreen, shown: int) -> None:
        show_summary(self, shown)
        said.append(text_of(self.app, "#groups-summary"))

    monkeypatch.setattr(GroupsScreen, "show_summary", recorded)
    app = BlackBoxApp(a5_b5, A5_B5)  # 672 families: the page count depends on the page's size
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("g")
        await wait_for(pilot, lambda: isinstance(app.screen, GroupsScreen) and app.screen.page_read)
        await pilot.pause()
        await pilot.pause()
    pages = {line.rsplit("page ", 1)[1] for line in said}
    assert len(pages) == 1, said


async def test_groups_numbers_have_their_commas(a5_b5: Path) -> None:
    app = BlackBoxApp(a5_b5, A5_B5)
    async with app.run_test(size=(100, 24)) as pilot:
        await pilot.press("g")
        await wait_for(pilot, lambda: isinstance(app.screen, GroupsScreen) and app.screen.page_read)
        screen = app.screen
        assert isinstance(screen, GroupsScreen)
        await pilot.press("a", "l")  # every group, the last page
        assert screen.count == 5055
        last = screen.table.get_row_at(screen.table.row_count - 1)
        assert last[0] == "5,055"
        assert f"{group_at(A5_B5, 5054, all_rows=True).canonical_number:,}" == last[2]


# -- Play: the coach's caption, the first Enter ---------------------------------------------


async def test_play_coach_says_where_to_shoot_and_the_first_enter_says_what_it_did(tmp_path: Path) -> None:
    app = BlackBoxApp(tmp_path / "play.sqlite", A3_B4)
    async with app.run_test(size=(120, 35)) as pilot:
        screen = await open_play(app, pilot, 123)
        board = play_board(screen)
        assert board.position is None and screen.focused is board
        await pilot.press("c")
        coach = screen.query_one(GameBoard)
        await wait_for(pilot, lambda: coach.counts is not None)
        caption = board_text(coach).splitlines()[-2:]
        assert "type" not in " ".join(caption)  # nothing is typed in Play: Decode's caption
        assert caption[1].strip() == "shoot on the box: Enter"
        await pilot.press("enter")  # before any arrow: picks position 1, and says so
        assert board.position == 1 and screen.match is not None and not screen.match.shots
        assert text_of(app, "#play-message") == "Position 1 picked: Enter shoots it; the arrows pick another."
        await pilot.press("enter")
        assert screen.match.shots == [1]


# -- Explore: the toasts and the panel, read-only sessions -------------------------------------


def toasts_over(app: BlackBoxApp, selector: str) -> list[str]:
    """The toasts on screen that cover part of the widget ``selector``."""
    region = app.screen.query_one(selector).region
    return [str(toast.render()) for toast in app.screen.query("Toast") if toast.region.overlaps(region)]


async def test_the_end_of_a_run_never_covers_the_exploration_panel(tmp_path: Path, gate: RangeGate) -> None:
    app = BlackBoxApp(tmp_path / "bb.sqlite", range_size=SMALL_RANGES)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:  # toasts drawn
        await pilot.press(*"A3_B4", "enter")  # to completion
        await wait_for(pilot, lambda: "g opens them" in text_of(app, "#phase"))
        await pilot.pause()
        assert toasts_over(app, "ExplorationPanel") == []
        gate.armed = True
        await pilot.press("n", *"A3_B5", "enter")  # paused mid-way
        await wait_for(pilot, lambda: app.progress is not None and app.progress.done > 0)
        await pilot.press("p")
        gate.open()
        await wait_for(pilot, lambda: "A3_B5: paused, s resumes" in text_of(app, "#phase"))
        await pilot.pause()
        assert toasts_over(app, "ExplorationPanel") == []
        gate.opened.clear()  # the gate holds the run again
        gate.calls = 0
        await pilot.press("s")  # resumed, then paused from another screen: the toast says it there
        await wait_for(pilot, lambda: app.exploring is not None and gate.calls > 1)
        await pilot.press("d")
        app.pause_exploration()
        gate.open()
        await wait_for(pilot, lambda: app.exploring is None)
        assert "A3_B5 paused: press s on the Explore screen (e) to resume." in notes(app)
        await wait_for(pilot, lambda: app.screen.query("Toast"))  # drawn, here, in this test


async def test_a_read_only_session_never_says_enter_explores_and_never_stacks_a_toast(explored: Path) -> None:
    app = BlackBoxApp(explored, read_only=True)
    async with app.run_test(size=(80, 24)) as pilot:
        new_config = app.screen.query_one("#new-config", Input)
        assert "explores" not in new_config.placeholder
        await pilot.press("n", *"A4_B4")  # explored: Enter selects it
        assert text_of(app, "#config-message").endswith("Enter selects it, g opens its groups.")
        await pilot.press(*["backspace"] * 5, *"A3_B5")  # not explored, and it cannot be here
        assert text_of(app, "#config-message").endswith("Read-only: it is not explored here.")
        await pilot.press(*["backspace"] * 5)
        assert "explores" not in text_of(app, "#config-message")
        await pilot.press("escape", "r")
        await wait_for(pilot, lambda: notes(app))
        await pilot.press("r", "s")
        await pilot.pause()
        assert len(notes(app)) == 1 and "read-only" in notes(app)[0]


async def test_the_footer_drops_pause_once_the_run_is_complete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The run is complete, but it has not ended yet (its workers close): it waits at a gate.
    gate = threading.Event()
    explore = app_module.explore

    def gated(*args, **kwargs):
        outcome = explore(*args, **kwargs)
        gate.wait(60)
        return outcome

    monkeypatch.setattr(app_module, "explore", gated)
    app = BlackBoxApp(tmp_path / "bb.sqlite", range_size=SMALL_RANGES)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press(*"A2_B4", "enter")
        await wait_for(pilot, lambda: app.exploring is not None)
        await wait_for(pilot, lambda: app.progress is not None and app.progress.phase == "complete")
        await pilot.pause()
        assert app.exploring is not None  # still under way, as the trial saw it
        assert "p" not in footer_keys(app)
        gate.set()
        await wait_for(pilot, lambda: app.exploring is None)


async def test_a_group_says_when_more_is_below(explored: Path) -> None:
    app = BlackBoxApp(explored, A4_B4)
    async with app.run_test(size=(80, 20)) as pilot:
        await pilot.press("escape", "g")
        await wait_for(pilot, lambda: isinstance(app.screen, GroupsScreen) and app.screen.page_read)
        await pilot.press(*["down"] * 6, "enter")  # group 7: 3 molecules, then their statistics
        await wait_for(pilot, lambda: isinstance(app.screen, GroupScreen) and app.screen.members)
        screen = app.screen
        more = screen.query_one("#group-more")
        body = screen.query_one("#group-body", VerticalScroll)
        await wait_for(pilot, lambda: body.max_scroll_y > 0 and more.display)
        assert text_of(app, "#group-more").startswith("More below: pagedown")
        body.scroll_end(animate=False)
        await wait_for(pilot, lambda: not more.display)  # the bottom: nothing more below
        await pilot.resize_terminal(120, 50)  # all of it in view
        await wait_for(pilot, lambda: body.max_scroll_y == 0)
        await pilot.pause()
        assert not more.display


def test_a_next_shot_row_is_cut_between_results_never_inside_one() -> None:
    row = "   5      326.68   2.013    6: H 513, R 13,024, 3 98, 7 55, ..."
    assert fit_row(row, len(row)) == row
    for width in range(len("   5      326.68   2.013    6: H 513, …"), len(row)):
        fitted = fit_row(row, width)
        assert len(fitted) <= width and fitted.endswith(", …")
        assert row.startswith(fitted[: -len(", …")] + ", ")  # whole results, then the mark
    two = "   5      326.68   2.013    6: H 513, R 13,024, …"
    assert fit_row(row, len(two)) == fit_row(row, len(two) + 3) == two
    assert fit_row(row, 20) == row  # not even the first result fits: left to the label's ellipsis
