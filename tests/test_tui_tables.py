"""The app's tables show every cell whole, even when a frame is drawn the moment they are filled.

Textual's DataTable measures new rows and changed cells only when its
messages run out; a frame drawn in between caches the cells at the
columns' old widths (their labels'), and measuring does not redraw them.
Under load, snapshot and server tests caught the groups table with "10" cut
to "1" under "#" and a distribution table with "2,998" cut to "2,9" under
"out".  Here the frame is drawn at once, every time, by hand: each table
is filled, drawn, then left to measure, and drawn again.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from pilot import open_screen
from rich.text import Text
from textual.geometry import Region
from textual.pilot import Pilot
from textual.widgets import DataTable

from bbcore.config import parse_config
from bbcore.explore import explore as explore_configuration
from bbcore.store import COMPACT
from bbtui.app import BlackBoxApp
from bbtui.screens.explore import ExploreScreen
from bbtui.screens.groups import GroupsScreen
from bbtui.screens.statistics import StatisticsScreen
from bbtui.widgets.tables import cell_width

A4_B4 = parse_config("A4_B4")


def drawn(table: DataTable) -> list[str]:
    """The table's lines as the screen draws them now."""
    return [line.text for line in table.render_lines(Region(0, 0, *table.size))]


async def assert_whole(pilot: Pilot, table: DataTable) -> None:
    """Drawn at once (the caller filled it just now), then drawn again once the table measured
    its rows and the screen laid it out: each column as wide as its widest cell, each cell whole."""
    drawn(table)
    await pilot.pause()
    await pilot.pause()
    rows = [table.get_row_at(index) for index in range(table.row_count)]
    for index, column in enumerate(table.ordered_columns):
        widest = max([column.label.cell_len, *(cell_width(row[index]) for row in rows)])
        assert column.get_render_width(table) - 2 * table.cell_padding == widest, column.label
    header, *lines = drawn(table)
    for row, line in zip(rows, lines):
        for cell in row:
            assert f" {getattr(cell, 'plain', cell)} " in line, line


async def test_the_groups_table_is_whole_when_drawn_as_it_is_filled(explored: Path) -> None:
    app = BlackBoxApp(explored, A4_B4)
    async with app.run_test(size=(100, 14)) as pilot:  # a page of fewer than 10 rows
        screen = await open_screen(app, pilot, "g", GroupsScreen)
        assert screen.page_size < 10 < screen.count
        screen.load(screen.page_size)  # the second page: "#" takes two digits from its row 10
        await assert_whole(pilot, screen.table)
        assert "10" in [str(row[0]) for row in map(screen.table.get_row_at, range(screen.table.row_count))]


async def test_the_statistics_tables_are_whole_when_drawn_as_they_are_filled(explored: Path) -> None:
    app = BlackBoxApp(explored, A4_B4)
    async with app.run_test(size=(140, 50)) as pilot:
        screen = await open_screen(app, pilot, "t", StatisticsScreen)
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert screen.report is not None
        screen.show_ambiguity(screen.report)
        await assert_whole(pilot, screen.query_one("#ambiguity-table", DataTable))
        screen.show_ambiguity(screen.report)
        await assert_whole(pilot, screen.query_one("#risk-table", DataTable))
        await pilot.press("3")
        for distribution in screen.report.distributions:
            await screen.show_distribution(distribution)  # returns as soon as the table is filled
            await assert_whole(pilot, screen.query_one("#distribution-table", DataTable))


async def test_the_configurations_table_is_whole_when_drawn_as_it_is_filled(
    explored: Path, tmp_path: Path
) -> None:
    db = tmp_path / "copy.sqlite"
    shutil.copy(explored, db)
    app = BlackBoxApp(db, A4_B4)
    async with app.run_test(size=(120, 30)) as pilot:
        screen = app.screen
        assert isinstance(screen, ExploreScreen)
        assert "compact" not in str(drawn(screen.table))
        explore_configuration(parse_config("A2_B5"), db, workers=1, store=COMPACT)
        screen.refresh_table()  # a row of a compact store: wider than the "store" column was
        await assert_whole(pilot, screen.table)
        assert "compact" in str(drawn(screen.table))


def test_a_cell_is_as_wide_as_the_table_draws_it() -> None:
    """A string is markup, as the table reads it; wide characters take two cells; a number
    takes its digits."""
    assert cell_width("[b]10[/b]") == 2
    assert cell_width("界") == 2
    assert cell_width(Text("2,998", justify="right")) == 5
    assert cell_width(1234) == 4
