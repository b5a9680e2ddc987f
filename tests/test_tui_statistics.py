"""The Statistics screen, driven by a pilot on a temporary database."""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from pathlib import Path

from pilot import wait_for
from textual.app import App
from textual.containers import ItemGrid
from textual.widgets import DataTable, Label, Select, TabbedContent

from bbcore import rays
from bbcore.config import Config
from bbcore.numbering import atoms_of
from bbcore.plot import round_ticks
from bbcore.statistics import ray_records
from bbcore.store import open_database
from bbtui.screens.statistics import StatisticsScreen
from bbtui.widgets.board import Board
from bbtui.widgets.plot import BarPlot

A4_B4 = Config(4, 4)


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


def brute_risk(brute_rays) -> Counter[int]:
    """A4_B4's spectral groups by the most atoms differing between two of their molecules,
    from the reference spectra of every molecule."""
    by_spectrum: dict[str, list[set[int]]] = defaultdict(list)
    for number, traced in enumerate(brute_rays(A4_B4), start=1):
        by_spectrum[rays.spectrum_of_rays(list(traced))].append(set(atoms_of(A4_B4, number)))
    return Counter(
        max(len(a - b) for a, b in itertools.permutations(members, 2))
        for members in by_spectrum.values()
        if len(members) > 1
    )


async def test_ambiguity_tab_shows_the_spec_table(explored, brute_rays):
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
        assert [row[:2] for row in risk] == [[str(d), str(5 * d)] for d in sorted(brute_risk(brute_rays))]
        assert [int(row[3]) for row in risk] == [n for _, n in sorted(brute_risk(brute_rays).items())]
        assert sum(int(row[3]) for row in risk) == 66


async def test_records_tab_draws_each_record_ray(explored, brute_record):
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
        longest, _, _ = brute_record(A4_B4, "out", "length")
        assert boards[4].border_title == f"longest out: {longest.length} cells"
        assert "neither confirms nor refines" in str(screen.query_one("#claim", Label).render())


async def test_distributions_tab_plots(explored, brute_statistics):
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
        stats = brute_statistics(A4_B4)
        classes = ("absorbed", "reflected", "out")
        longest = Counter(max(s[f"{c}_max_length"] for c in classes) for s in stats)
        assert plots[-1].values == [longest[k] for k in range(max(longest) + 1)]
        rows = table_rows(screen.query_one("#distribution-table", DataTable))
        zero = [sum(s[f"{c}_max_length"] == 0 for s in stats) for c in classes] + [longest[0]]
        assert rows[0] == ["0", *(f"{n:,}" for n in zero)]


async def test_unexplored_configuration_says_so(explored):
    """A configuration not explored: the summary line gives the one-line reason."""
    app = StatisticsApp(explored, Config(3, 5))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await loaded(app, pilot)
        summary = screen.query_one("#stats-summary", Label)
        assert "A3_B5 is not explored" in str(summary.render())
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


async def test_n_from_any_tab_or_a_blank_choice_and_before_any_report(explored):
    """``n`` from the first tab opens the Distributions tab on the next distribution; from a
    blank choice (the Select's prompt, which a user can pick) it shows the first; on a
    configuration with no report it does nothing (and the app stays up)."""
    app = StatisticsApp(explored, A4_B4)
    async with app.run_test(size=(140, 50)) as pilot:
        screen = await loaded(app, pilot)
        assert screen.report is not None
        names = [d.name for d in screen.report.distributions]
        tabs = screen.query_one("#stats-tabs", TabbedContent)
        choice = screen.query_one("#distribution-choice", Select)
        assert (tabs.active, choice.value) == ("ambiguity", names[0])
        await pilot.press("n")
        await pilot.pause()
        assert (tabs.active, choice.value) == ("distributions", names[1])
        choice.clear()  # the blank choice
        await pilot.pause()
        await pilot.press("n")
        await pilot.pause()
        assert choice.value == names[0]
    app = StatisticsApp(explored, Config(3, 5))  # not explored: no report
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await loaded(app, pilot)
        assert screen.report is None
        await pilot.press("n")
        await pilot.pause()
        assert app.is_running and screen.query_one("#stats-tabs", TabbedContent).active == "ambiguity"


async def test_r_says_it_reads_and_shows_the_tabs_loading_until_the_report_is_read(explored):
    app = StatisticsApp(explored, A4_B4)
    async with app.run_test(size=(140, 50)) as pilot:
        screen = await loaded(app, pilot)
        tabs = screen.query_one("#stats-tabs", TabbedContent)
        summary = screen.query_one("#stats-summary", Label)
        assert not tabs.loading
        screen.action_reload()  # read at once: the worker's answer is handled only after a pause
        assert tabs.loading is True
        assert str(summary.render()) == "Reading the statistics of A4_B4..."
        await loaded(app, pilot)
        await wait_for(pilot, lambda: not tabs.loading)
        assert str(summary.render()).startswith("A4_B4: 1,820 molecules")
