"""The Statistics screen: ambiguity report, ray records and distributions of a configuration.

Three tabs, all read from ``bbcore.statistics`` in a thread worker (the
queries scan a whole configuration: about a second on A4_B8):

- *Ambiguity*: the spec's table (spectral groups per size, up to symmetry
  and with symmetry, molecules) with its total line, the share of ambiguous
  molecules, and the groups counted by the most atoms differing between
  their molecules (what a wrong guess costs);
- *Ray records*: for each class of ray, the longest ray and the one with
  most turns, each on the board of the lowest-numbered molecule reaching
  it, the ray drawn (its turns as corners; the arrow keys shoot other rays),
  and the plain statement about the players' "6 turns, 23 cells";
- *Distributions*: molecules by number of rays of each class, by longest
  ray, by most turns, and spectral groups by size, as bar charts (one per
  series) with the table beside them.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Horizontal, ItemGrid, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Label, Select, TabbedContent, TabPane

from bbcore import rays
from bbcore.config import Config
from bbcore.numbering import atoms_from_string
from bbcore.statistics import (
    POINTS_PER_WRONG_ATOM,
    Distribution,
    RayRecord,
    StatisticsError,
    StatisticsReport,
    statistics_report,
)
from bbcore.store import DATABASE_ERRORS, StoreError, db, error_line, opened
from bbtui.widgets.board import Board
from bbtui.widgets.plot import BarPlot
from bbtui.widgets.tables import fit_columns


@dataclass
class StatisticsLoaded(Message):
    """The report of a configuration, read in the worker (or why it could not be)."""

    config: Config
    report: StatisticsReport | None
    spectra: dict[int, str]  # record molecule number -> its spectrum (the board's labels)
    error: str = ""


def number_cell(value: int) -> Text:
    """A count for a table cell: right-aligned, with thousands separators."""
    return Text(f"{value:,}", justify="right")


def fill_table(table: DataTable, labels: tuple[str, ...], rows: list[tuple[Text, ...]]) -> None:
    """Replace a table's columns and rows, each column as wide as its label or widest cell."""
    table.clear(columns=True)
    table.add_columns(*labels)
    table.add_rows(rows)
    fit_columns(table)


def record_title(record: RayRecord) -> str:
    """The board title of a record: which record, and its value."""
    if record.measure == "length":
        return f"longest {record.ray_class}: {record.value} cells"
    return f"most turns, {record.ray_class}: {record.value}"


class StatisticsScreen(Screen):
    """The statistics of one complete configuration."""

    DEFAULT_CSS = """
    StatisticsScreen #stats-tabs { height: 1fr; }
    StatisticsScreen DataTable { height: auto; max-height: 24; width: auto; margin: 0 1 1 1; }
    StatisticsScreen #record-boards { grid-gutter: 0 1; height: auto; padding: 0 1; }
    StatisticsScreen #claim { width: 1fr; height: auto; padding: 0 1 1 1; }
    StatisticsScreen #distribution-choice { width: 72; margin: 0 1; }
    StatisticsScreen #distribution-body { height: auto; }
    StatisticsScreen #plots { height: auto; width: 1fr; grid-size: 2; grid-rows: 15; grid-gutter: 0 1; }
    StatisticsScreen #distribution-table { margin: 0 1; }
    """

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", show=False),
        Binding("1", "tab('ambiguity')", "Ambiguity", group=Binding.Group("Tab")),
        Binding("2", "tab('records')", "Records", group=Binding.Group("Tab")),
        Binding("3", "tab('distributions')", "Distributions", group=Binding.Group("Tab")),
        Binding("n", "next_distribution", "Next plot"),
        Binding("r", "reload", "Reload"),
    ]

    def __init__(self, config: Config) -> None:
        """The statistics of ``config`` (read when the screen is shown)."""
        super().__init__()
        self.config = config
        self.report: StatisticsReport | None = None

    def compose(self) -> ComposeResult:
        """Summary line and the three tabs."""
        yield Header()
        yield Label(f"Reading the statistics of {self.config}...", id="stats-summary", classes="summary")
        with TabbedContent(id="stats-tabs", initial="ambiguity"):
            with TabPane("Ambiguity", id="ambiguity"), VerticalScroll():
                yield Label("Spectral groups by size (the spec's ambiguity report)", classes="heading")
                yield DataTable(id="ambiguity-table", cursor_type="row", zebra_stripes=True)
                yield Label("", id="share", classes="message")
                yield Label(
                    "Spectral groups by the most atoms differing between two of their molecules "
                    f"(a wrong guess costs {POINTS_PER_WRONG_ATOM} points per atom)",
                    classes="heading",
                )
                yield DataTable(id="risk-table", cursor_type="row", zebra_stripes=True)
            with TabPane("Ray records", id="records"), VerticalScroll():
                yield Label("", id="claim")
                yield ItemGrid(id="record-boards", min_column_width=30)
            with TabPane("Distributions", id="distributions"), VerticalScroll():
                yield Select([], id="distribution-choice", allow_blank=True, prompt="Distribution")
                with Horizontal(id="distribution-body"):
                    yield Grid(id="plots")
                    yield DataTable(id="distribution-table", cursor_type="row", zebra_stripes=True)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        """Start reading."""
        self.title = f"Statistics of {self.config}"
        self.action_reload()

    @work(thread=True, exclusive=True, group="statistics")
    def load(self, config: Config) -> None:
        """Read the report in a thread, on the thread's own database connection."""
        try:
            with db.connection_context():
                report = statistics_report(config)
                spectra = {
                    r.number: rays.spectrum(config, atoms_from_string(config, r.molecule))
                    for r in report.records
                }
        except (StatisticsError, StoreError) as error:
            self.post_message(StatisticsLoaded(config, None, {}, str(error)))
            return
        except DATABASE_ERRORS as error:  # a corrupt page: the CLI's line, on screen
            self.post_message(StatisticsLoaded(config, None, {}, error_line(error, opened.path)))
            return
        self.post_message(StatisticsLoaded(config, report, spectra))

    async def on_statistics_loaded(self, message: StatisticsLoaded) -> None:
        """Fill the tabs."""
        summary = self.query_one("#stats-summary", Label)
        self.query_one("#stats-tabs", TabbedContent).loading = False
        if message.report is None:
            summary.update(message.error)
            summary.add_class("error")
            return
        summary.remove_class("error")
        self.report = report = message.report
        ambiguity = report.ambiguity
        total = ambiguity.total
        summary.update(
            f"{self.config}: {self.config.nb_mol:,} molecules, {total.molecules:,} ambiguous "
            f"({100 * ambiguity.share:.2f}%) in {total.groups:,} spectral groups "
            f"({total.families:,} up to symmetry)"
        )
        self.show_ambiguity(report)
        await self.show_records(report, message.spectra)
        self.show_distribution_choice(report.distributions)

    def show_ambiguity(self, report: StatisticsReport) -> None:
        """The spec's table with its total line, the share, the risk table."""
        ambiguity = report.ambiguity
        table = self.query_one("#ambiguity-table", DataTable)
        total = ambiguity.total
        rows = [
            tuple(map(number_cell, (line.size, line.families, line.groups, line.molecules)))
            for line in ambiguity.lines
        ]
        rows.append(
            (Text("total", style="bold"), *map(number_cell, (total.families, total.groups, total.molecules)))
        )
        fill_table(table, ("size", "up to symmetry", "spectra", "molecules"), rows)
        share = (
            f"Ambiguous molecules: {total.molecules:,} of {self.config.nb_mol:,} "
            f"({100 * ambiguity.share:.2f}%); {ambiguity.unique:,} have a spectrum of their own."
            if ambiguity.lines
            else f"{self.config} has no ambiguous spectrum: every molecule can be told apart."
        )
        self.query_one("#share", Label).update(share)
        risk = self.query_one("#risk-table", DataTable)
        fill_table(
            risk,
            ("atoms differing", "points at risk", "up to symmetry", "spectra"),
            [
                tuple(map(number_cell, (line.max_diff, line.points, line.families, line.groups)))
                for line in ambiguity.risk
            ],
        )

    async def show_records(self, report: StatisticsReport, spectra: dict[int, str]) -> None:
        """One board per record, its ray drawn."""
        self.query_one("#claim", Label).update(report.claim)
        grid = self.query_one("#record-boards", ItemGrid)
        await grid.remove_children()
        boards = [
            Board(
                self.config.width,
                r.molecule,
                spectra.get(r.number),
                title=record_title(r),
                subtitle=f"#{r.number:,} · {r.molecules:,} reach it",
                classes="record-board",
            )
            for r in report.records
        ]
        await grid.mount_all(boards)
        for board, record in zip(boards, report.records):
            board.position = record.ray.position

    def show_distribution_choice(self, distributions: tuple[Distribution, ...]) -> None:
        """Fill the choice of distributions and show the one chosen before (a reload), else the first."""
        choice = self.query_one("#distribution-choice", Select)
        before = choice.value
        names = [d.name for d in distributions]
        choice.set_options([(d.title.capitalize(), d.name) for d in distributions])
        if distributions:
            choice.value = before if before in names else names[0]

    def chosen_distribution(self, value: object) -> Distribution | None:
        """The distribution a choice's value names; None for a blank choice (``Select.NULL``,
        as while its options are replaced) or one the report does not hold."""
        if self.report is None:
            return None
        return next((d for d in self.report.distributions if d.name == value), None)

    @on(Select.Changed, "#distribution-choice")
    async def distribution_changed(self, event: Select.Changed) -> None:
        """Show the chosen distribution (a blank choice shows nothing new)."""
        chosen = self.chosen_distribution(event.value)
        if chosen is not None:
            await self.show_distribution(chosen)

    async def show_distribution(self, distribution: Distribution) -> None:
        """One bar chart per series, and the table."""
        plots = self.query_one("#plots", Grid)
        await plots.remove_children()
        keys = [key for key, _ in distribution.rows]
        await plots.mount_all(
            BarPlot(
                f"{series} by {distribution.key_label}",
                keys,
                [count for _, count in distribution.column(series)],
                classes="distribution-plot",
            )
            for series in distribution.series
        )
        table = self.query_one("#distribution-table", DataTable)
        rows = [(number_cell(key), *map(number_cell, counts)) for key, counts in distribution.rows]
        fill_table(table, (distribution.key_label, *distribution.series), rows)

    def action_tab(self, tab: str) -> None:
        """Show a tab."""
        self.query_one("#stats-tabs", TabbedContent).active = tab

    def action_next_distribution(self) -> None:
        """The next distribution (on the Distributions tab)."""
        if self.report is None or not self.report.distributions:
            return
        self.action_tab("distributions")
        names = [d.name for d in self.report.distributions]
        choice = self.query_one("#distribution-choice", Select)
        current = names.index(choice.value) if choice.value in names else -1
        choice.value = names[(current + 1) % len(names)]

    def action_reload(self) -> None:
        """Read the statistics (again, after an exploration finished, say): a few seconds on A4_B8."""
        self.query_one("#stats-summary", Label).update(f"Reading the statistics of {self.config}...")
        self.query_one("#stats-tabs", TabbedContent).loading = True
        self.load(self.config)
