"""The Statistics screen, driven by a pilot on a temporary database."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.app import App
from textual.containers import ItemGrid
from textual.widgets import DataTable, Label, Select, TabbedContent

from bbcore.config import Config
from bbcore.explore import explore
from bbcore.plot import round_ticks
from bbcore.statistics import ray_records
from bbcore.store import open_database
from bbtui.screens.statistics import StatisticsScreen
from bbtui.widgets.board import Board
from bbtui.widgets.plot import BarPlot

A4_B4 = Config(4, 4)


@pytest.fixture(scope="module")
def explored(tmp_path_factory) -> Path:
    """A database with A4_B4 complete."""
    path = tmp_path_factory.mktemp("tui_stats") / "x.sqlite"
    explore(A4_B4, path)
    return path


class StatisticsApp(App[None]):
    """The smallest app that shows the screen."""

    def __init__(self, db_path: Path, config: Config) -> None:
        super().__init__()
        open_database(db_path)
        self.config = config

    def on_mount(self) -> None:
        self.push_screen(StatisticsScreen(self.config))


def table_rows(table: DataTable) -> list[list[str]]:
    """The cells of a table as plain text."""
    rows = (table.get_row_at(i) for i in range(table.row_count))
    return [[str(getattr(cell, "plain", cell)) for cell in row] for row in rows]


async def loaded(app: App, pilot) -> StatisticsScreen:
    await app.workers.wait_for_complete()
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, StatisticsScreen)
    return screen


async def test_ambiguity_tab_shows_the_spec_table(explored):
    """The A4_B4 figures with the total line, the share, the risk table."""
    app = StatisticsApp(explored, A4_B4)
    async with app.run_test(size=(140, 50)) as pilot:
        screen = await loaded(app, pilot)
        assert not screen.query_one("#stats-tabs", TabbedContent).loading
        assert table_rows(screen.query_one("#ambiguity-table", DataTable)) == [
            ["2", "9", "58", "116"],
            ["3", "2", "8", "24"],
            ["total", "11", "66", "140"],
        ]
        assert "140 of 1,820 (7.69%)" in str(screen.query_one("#share", Label).render())
        risk = table_rows(screen.query_one("#risk-table", DataTable))
        assert [row[:2] for row in risk] == [["1", "5"], ["2", "10"], ["4", "20"]]
        assert sum(int(row[3]) for row in risk) == 66


async def test_records_tab_draws_each_record_ray(explored):
    """Six boards, each on the record's molecule with the record ray selected and drawn."""
    app = StatisticsApp(explored, A4_B4)
    async with app.run_test(size=(140, 50)) as pilot:
        screen = await loaded(app, pilot)
        await pilot.press("2")
        await pilot.pause()
        assert screen.query_one("#stats-tabs", TabbedContent).active == "records"
        boards = list(screen.query_one("#record-boards", ItemGrid).query(Board))
        records = ray_records(A4_B4)
        assert len(boards) == len(records) == 6
        for board, record in zip(boards, records):
            assert board.molecule == record.molecule
            assert board.ray == record.ray
            assert set(board.ray.path) == set(record.ray.path)
        assert boards[4].border_title == "longest out: 5 cells"
        assert "neither confirms nor refines" in str(screen.query_one("#claim", Label).render())


async def test_distributions_tab_plots(explored):
    """A plot per series of the chosen distribution, and ``n`` moves to the next distribution."""
    app = StatisticsApp(explored, A4_B4)
    async with app.run_test(size=(140, 50)) as pilot:
        screen = await loaded(app, pilot)
        await pilot.press("3")
        await pilot.pause()
        choice = screen.query_one("#distribution-choice", Select)
        assert choice.value == "rays"
        plots = list(screen.query(BarPlot))
        assert [p.title for p in plots] == ["absorbed by rays", "reflected by rays", "out by rays"]
        drawn = plots[0].render().plain
        assert "absorbed by rays" in drawn and "█" in drawn
        await pilot.press("n")
        await pilot.pause()
        assert choice.value == "longest"
        plots = list(screen.query(BarPlot))
        assert [p.title for p in plots][-1] == "any by length"
        assert plots[-1].values == [1, 97, 622, 748, 340, 12]
        rows = table_rows(screen.query_one("#distribution-table", DataTable))
        assert rows[0] == ["0", "3", "1,276", "313", "1"]


async def test_unexplored_configuration_says_so(explored):
    """A configuration not explored: the summary line gives the one-line reason."""
    app = StatisticsApp(explored, Config(3, 4))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await loaded(app, pilot)
        summary = screen.query_one("#stats-summary", Label)
        assert "A3_B4 is not explored" in str(summary.render())
        assert summary.has_class("error")
        await pilot.press("escape")
        assert not isinstance(app.screen, StatisticsScreen)


async def test_real_app_opens_the_screen(explored):
    """In bbtui, ``t`` opens the statistics of the selected configuration; escape goes back."""
    from bbtui.app import BlackBoxApp

    app = BlackBoxApp(explored, A4_B4)
    async with app.run_test(size=(140, 50)) as pilot:
        await pilot.press("t")
        screen = await loaded(app, pilot)
        assert screen.config == A4_B4
        assert table_rows(screen.query_one("#ambiguity-table", DataTable))[-1] == ["total", "11", "66", "140"]
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, StatisticsScreen)


def test_round_ticks():
    """Round y ticks from 0 to at most the maximum, about 4 steps."""
    assert round_ticks(878) == [0, 200, 400, 600, 800]
    assert round_ticks(1820) == [0, 500, 1000, 1500]
    assert round_ticks(3) == [0, 1, 2, 3]
    assert round_ticks(0) == [0]
