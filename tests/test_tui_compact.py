"""The TUI on a compact store: started from the Explore screen, and every screen as on a full store."""

from __future__ import annotations

from pathlib import Path

import pytest
from pilot import wait_for
from textual.message import Message
from textual.widgets import DataTable, Label

from bbcore.config import Config
from bbcore.explore import explore
from bbcore.queries import group_page
from bbcore.store import open_database
from bbtui.app import BlackBoxApp
from bbtui.messages import ExplorationProgress
from bbtui.screens.group import GroupScreen
from bbtui.screens.groups import GroupsScreen
from bbtui.screens.molecule import MoleculeScreen
from bbtui.screens.statistics import StatisticsScreen
from bbtui.widgets.board import Board

A4_B5 = Config(4, 5)


@pytest.fixture(autouse=True)
def temporary_default_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever the app opens by default is a temporary file."""
    monkeypatch.setenv("BBTUI_DB", str(tmp_path / "default.sqlite"))


def cells(table: DataTable) -> list[list[str]]:
    """The cells of a table as plain text."""
    rows = (table.get_row_at(i) for i in range(table.row_count))
    return [[str(getattr(cell, "plain", cell)) for cell in row] for row in rows]


class RecordingApp(BlackBoxApp):
    """The app, keeping every phase its exploration worker reported.

    Recorded where the worker posts them: a progress message that is not
    handled yet is replaced by the next one (``ExplorationProgress.can_replace``),
    so a phase as short as A4_B5's grouping may never reach the handler.
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.phases: list[str] = []

    def post_message(self, message: Message) -> bool:
        """Record the phase of a progress report, then post it as the app does."""
        if isinstance(message, ExplorationProgress):
            self.phases.append(message.progress.phase)
        return super().post_message(message)


async def test_a_compact_run_started_from_the_explore_screen(tmp_path: Path) -> None:
    path = tmp_path / "bb.sqlite"
    app = RecordingApp(path)
    async with app.run_test(size=(110, 30)) as pilot:
        await pilot.press("escape")  # from the input to the table, where c is a key
        await pilot.press("c", "c")
        assert "New runs store: compact" in str(app.screen.query_one("#store-choice", Label).render())
        app.screen.query_one("#new-config").focus()
        await pilot.pause()
        await pilot.press(*"a4_b5", "enter")
        table = app.screen.query_one("#configs", DataTable)
        await wait_for(pilot, lambda: app.exploring is None and "A4_B5" in table.rows)
        await wait_for(pilot, lambda: table.get_row("A4_B5")[2:4] == ["complete", "compact"])
        assert app.progress is not None and app.progress.phase == "complete"
        phases = [app.phases.index(phase) for phase in ("tracing", "grouping", "writing", "complete")]
        assert phases == sorted(phases)
        await pilot.press("escape", "g")
        await wait_for(pilot, lambda: isinstance(app.screen, GroupsScreen) and app.screen.page_read)


@pytest.fixture(scope="module")
def both(tmp_path_factory) -> dict[str, Path]:
    """A4_B5 explored into a full and a compact database."""
    folder = tmp_path_factory.mktemp("both")
    paths = {"full": folder / "full.sqlite", "compact": folder / "compact.sqlite"}
    for store, path in paths.items():
        explore(A4_B5, path, store=store)
    return paths


async def what_the_screens_show(path: Path) -> dict[str, object]:
    """Groups, a group, a molecule, the statistics and a decode, as the screens show them."""
    open_database(path)
    shown: dict[str, object] = {}
    app = BlackBoxApp(path, A4_B5)
    async with app.run_test(size=(140, 50)) as pilot:
        await pilot.press("g")
        await wait_for(pilot, lambda: isinstance(app.screen, GroupsScreen) and app.screen.page_read)
        await pilot.press("a")
        shown["groups"] = cells(app.screen.query_one("#groups", DataTable))
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, GroupScreen) and app.screen.members)
        shown["group"] = [b.molecule for b in app.screen.query(Board)]
        shown["members"] = [m.number for m in app.screen.members]
        await pilot.press("escape", "escape")
        await pilot.press("m")
        assert isinstance(app.screen, MoleculeScreen)
        await pilot.press(*"4321", "enter")
        screen = app.screen
        await wait_for(pilot, lambda: screen.record is not None)
        shown["molecule"] = (screen.record, screen.enantiomer_numbers)
        await pilot.press("escape")
        await pilot.press("t")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert isinstance(app.screen, StatisticsScreen)
        for table in ("#ambiguity-table", "#risk-table", "#distribution-table"):
            shown[table] = cells(app.screen.query_one(table, DataTable))
        await pilot.press("escape")
    return shown


async def test_every_screen_shows_the_same_on_both_stores(both: dict[str, Path]) -> None:
    full = await what_the_screens_show(both["full"])
    small = await what_the_screens_show(both["compact"])
    assert full["groups"] and full["group"]
    assert small == full
    open_database(both["compact"])
    assert group_page(A4_B5, 0, 3)  # read from the compact store
