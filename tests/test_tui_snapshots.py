"""Every screen as the user sees it, at 80 x 24 and at 120 x 35 (pytest-textual-snapshot).

The screens are opened as in ``test_tui_keys.SCREENS`` on the shared
database where A2_B4, A3_B4 and A4_B4 are explored, with what changes from
run to run held still: the header names no temporary file, Play hides a
chosen molecule (not a random one), the Strategy screen's message gives no
timing and names no temporary file, and the focus rests on a board or a table, never on an input whose
cursor blinks.  ``pytest --snapshot-update`` writes them again after a
change of look that is meant.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pilot import tables_pending, wait_for
from test_tui_keys import SCREENS, settle, show
from textual.pilot import Pilot
from textual.widgets import Input, Label

from bbcore.config import parse_config
from bbtui.app import BlackBoxApp
from bbtui.screens.decode import DecodeScreen
from bbtui.screens.play import PlayScreen
from bbtui.screens.strategy import StrategyScreen

A4_B4 = parse_config("A4_B4")
SIZES = {"80x24": (80, 24), "120x35": (120, 35)}


def hold_strategy_still(app, screen: StrategyScreen) -> None:
    """The Strategy screen's timing, and the database's path in the command that computes an
    optimal book (its length varies with the temporary folder: the side panel took a line more
    or less below the fold, and its scrollbar came and went between runs)."""
    message = screen.query_one("#strategy-message", Label)
    message.update(re.sub(r"\d+\.\d s\)", "0.1 s)", str(message.render())))
    figures = screen.query_one("#strategy-optimal-figures", Label)
    text = str(figures.render())
    if str(app.db_path) in text:
        figures.update(text.replace(str(app.db_path), "snapshot.sqlite"))


async def still(pilot: Pilot) -> None:
    """Hold still what changes from run to run (see the module's docstring)."""
    app = pilot.app
    screen = app.screen
    if isinstance(screen, PlayScreen):
        await pilot.press("slash", *"100", "enter")
        await wait_for(pilot, lambda: screen.match is not None and screen.match.number == 100)
        screen.board.focus()
    if isinstance(screen, DecodeScreen):
        screen.game_board.focus()
    if isinstance(screen.focused, Input):
        screen.set_focus(None)
    app.sub_title = "snapshot"  # not the temporary path
    app.clear_notifications()
    # Until the screen stops changing: a worker's answer may start another (the Strategy tree's
    # branches open in workers, then the books are compared), which ``settle`` alone does not wait
    # for (CI caught the Strategy screen's scrollbar drawn before its last lines came).
    shown = None
    for _ in range(50):
        if isinstance(screen, StrategyScreen):
            hold_strategy_still(app, screen)
        await settle(pilot)
        await pilot.wait_for_scheduled_animations()
        now = app.export_screenshot()
        if now == shown and not tables_pending(screen):
            break
        shown = now


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("name", list(SCREENS))
def test_every_screen_looks_as_it_did(explored: Path, snap_compare, name: str, size: str) -> None:
    kind, opener = SCREENS[name]
    app = BlackBoxApp(explored, A4_B4)

    async def open_screen(pilot: Pilot) -> None:
        await show(pilot, kind, opener)
        await still(pilot)

    assert snap_compare(app, terminal_size=SIZES[size], run_before=open_screen)
