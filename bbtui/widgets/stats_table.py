"""The 17 ray statistics of one or more molecules, as a compact table.

One line per class of ray (absorbed, reflected, out pairs), one column per
figure.  With several molecules (a spectral group, an enantiomer group) a
figure they share is shown once; one that differs shows every molecule's
value, highlighted, in the molecules' order.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from bbcore.queries import MoleculeRecord

COLUMNS = ("number", "edge", "deep", "max_length", "max_turns", "tot_length", "tot_turns")
HEADINGS = ("rays", "edge", "deep", "max\nlen", "max\nturns", "tot\nlen", "tot\nturns")
"""On two lines: the columns as narrow as their figures (at 80 columns a group's "tot turns" was cut)."""
CLASSES = (("absorbed", "absorbed"), ("reflected", "reflected"), ("out", "out pairs"))


class StatsTable(Static):
    """The statistics of some molecules; figures that differ are highlighted."""

    DEFAULT_CSS = """
    StatsTable { height: auto; width: auto; }
    StatsTable > .stats--differs { background: $warning-muted; color: $text; text-style: bold; }
    StatsTable > .stats--heading { color: $text-muted; }
    """
    COMPONENT_CLASSES = {"stats--differs", "stats--heading"}

    def __init__(self, records: Sequence[MoleculeRecord] = (), *, id: str | None = None) -> None:
        """Show the statistics of ``records``."""
        super().__init__(id=id)
        self.records = list(records)

    def on_mount(self) -> None:
        """Draw the table (it needs the theme's styles)."""
        self.show(self.records)

    def show(self, records: Sequence[MoleculeRecord]) -> None:
        """Replace the molecules shown."""
        self.records = list(records)
        if not self.records:
            self.update("")
            return
        differs = self.get_component_rich_style("stats--differs")
        heading = self.get_component_rich_style("stats--heading")
        table = Table(box=None, padding=(0, 1), show_edge=False, header_style=heading)
        table.add_column("")
        for name in HEADINGS:
            table.add_column(name, justify="right")
        for key, title in CLASSES:
            cells: list[Text | str] = [Text(title, style=heading)]
            for column in COLUMNS:
                field = f"{key}_{column}"
                if key != "reflected" and column in ("edge", "deep"):
                    cells.append("")
                    continue
                if column in ("edge", "deep"):
                    field = f"reflected_{column}"
                values = [record.stats[field] for record in self.records]
                if len(set(values)) == 1:
                    cells.append(str(values[0]))
                else:
                    cells.append(Text("/".join(map(str, values)), style=differs))
            table.add_row(*cells)
        self.update(table)
