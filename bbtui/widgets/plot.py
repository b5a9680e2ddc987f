"""A bar chart at the size of the widget, drawn by ``bbcore.plot.chart_text`` (plotext).

The chart is read with ``Text.from_ansi``; the bars are then coloured from
the Textual theme (``plot--bar``), so the plot follows the app's light or
dark theme.  A plot draws only from ``render``, on the app's thread.

``BarPlot.compare`` draws two distributions over the same values instead
(the greedy and the optimal books' rays per molecule): one line per value,
a column of horizontal bars for each, on one scale (``pair_text``), the
second in ``▒`` (and the theme's warning colour) so that they differ
without colour too.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widget import Widget

from bbcore.plot import chart_text

BAR_GLYPHS = r"[█▄▀▌▐]+"
Series = Sequence[tuple[str, Sequence[int]]]
"""Named distributions over the same labels (``BarPlot.compare``)."""
FIRST, SECOND = "█", "▒"
"""The glyphs of the two distributions of ``BarPlot.compare``."""


def pair_text(title: str, labels: Sequence[str], series: Series, width: int) -> str:
    """Two distributions over the same ``labels`` as text ``width`` columns wide: the title,
    a head naming each, then one line per label with a bar and count for each, one scale."""
    (first, ones), (second, twos) = series
    top = max(max(ones, default=0), max(twos, default=0), 1)
    key = max(len(label) for label in labels) if labels else 1
    column = max(8, (width - key - 4) // 2)
    room = max(1, column - len(f" {top:,}") - 1)

    def cell(value: int, glyph: str) -> str:
        bar = glyph * (max(1, round(room * value / top)) if value else 0)
        return f"{bar} {value:,}".ljust(column)[:column]

    lines = [title, f"{'':>{key}} │{first[:column]:<{column}}│{second[:column]}"]
    lines += [
        f"{label:>{key}} │{cell(a, FIRST)}│{cell(b, SECOND)}" for label, a, b in zip(labels, ones, twos)
    ]
    return "\n".join(line.rstrip() for line in lines)


class BarPlot(Widget):
    """A bar chart of counts by value (a distribution), redrawn when resized."""

    DEFAULT_CSS = """
    BarPlot { height: 15; width: 1fr; min-width: 24; }
    BarPlot > .plot--bar { color: $accent; }
    BarPlot > .plot--empty { color: $text-muted; }
    BarPlot > .plot--second { color: $warning; }
    """
    COMPONENT_CLASSES = {"plot--bar", "plot--second", "plot--empty"}

    def __init__(
        self,
        title: str = "",
        labels: Sequence[str] = (),
        values: Sequence[int] = (),
        *,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        """A plot of ``values`` (counts) over ``labels`` (the values counted)."""
        super().__init__(name=name, id=id, classes=classes)
        self.title = title
        self.labels = [str(label) for label in labels]
        self.values = [int(v) for v in values]
        self.note = "(nothing to plot)"
        """What the plot says while it has no bar to draw."""
        self.series: list[tuple[str, list[int]]] = []
        """Two named distributions over ``labels`` (``compare``), else empty."""

    def show(self, title: str, labels: Sequence[object], values: Sequence[int]) -> None:
        """Replace what the plot shows."""
        self.title = title
        self.labels = [str(label) for label in labels]
        self.values = [int(v) for v in values]
        self.note = "(nothing to plot)"
        self.series = []
        self.styles.height = None
        self.refresh()

    def compare(self, title: str, labels: Sequence[object], series: Series) -> None:
        """Two distributions over the same ``labels`` (name and counts each), on one scale,
        the plot as tall as its lines."""
        self.title = title
        self.labels = [str(label) for label in labels]
        self.series = [(name, [int(v) for v in values]) for name, values in series]
        self.values = [a + b for a, b in zip(*(values for _, values in self.series))]
        self.note = "(nothing to plot)"
        self.styles.height = len(self.labels) + 2
        self.refresh(layout=True)

    def wait(self, title: str, note: str) -> None:
        """No bars yet: the title, and what the data waits for (a book being read...)."""
        self.title = title
        self.labels, self.values, self.series = [], [], []
        self.note = note
        self.styles.height = None
        self.refresh(layout=True)

    def render(self) -> Text:
        """The chart at the widget's size, bars in the theme's accent colour."""
        width, height = self.content_size
        if not self.values or max(self.values) <= 0 or width < 10 or height < 5:
            empty = self.get_component_rich_style("plot--empty")
            return Text(f"{self.title}\n{self.note}", style=empty)
        if self.series:
            text = Text(pair_text(self.title, self.labels, self.series, width), end="")
            text.highlight_regex(f"{FIRST}+", self.get_component_rich_style("plot--bar"))
            text.highlight_regex(f"{SECOND}+", self.get_component_rich_style("plot--second"))
            text.no_wrap = True
            return text
        text = Text.from_ansi(chart_text(self.title, self.labels, self.values, width, height), end="")
        text.highlight_regex(BAR_GLYPHS, self.get_component_rich_style("plot--bar"))
        text.no_wrap = True
        return text
