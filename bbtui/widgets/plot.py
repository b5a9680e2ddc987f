"""A bar chart at the size of the widget, drawn by ``bbcore.plot.chart_text`` (plotext).

The chart is read with ``Text.from_ansi``; the bars are then coloured from
the Textual theme (``plot--bar``), so the plot follows the app's light or
dark theme.  A plot draws only from ``render``, on the app's thread.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widget import Widget

from bbcore.plot import chart_text

BAR_GLYPHS = r"[█▄▀▌▐]+"


class BarPlot(Widget):
    """A bar chart of counts by value (a distribution), redrawn when resized."""

    DEFAULT_CSS = """
    BarPlot { height: 15; width: 1fr; min-width: 24; }
    BarPlot > .plot--bar { color: $accent; }
    BarPlot > .plot--empty { color: $text-muted; }
    """
    COMPONENT_CLASSES = {"plot--bar", "plot--empty"}

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

    def show(self, title: str, labels: Sequence[object], values: Sequence[int]) -> None:
        """Replace what the plot shows."""
        self.title = title
        self.labels = [str(label) for label in labels]
        self.values = [int(v) for v in values]
        self.note = "(nothing to plot)"
        self.refresh()

    def wait(self, title: str, note: str) -> None:
        """No bars yet: the title, and what the data waits for (a book being read...)."""
        self.title = title
        self.labels, self.values = [], []
        self.note = note
        self.refresh()

    def render(self) -> Text:
        """The chart at the widget's size, bars in the theme's accent colour."""
        width, height = self.content_size
        if not self.values or max(self.values) <= 0 or width < 10 or height < 5:
            empty = self.get_component_rich_style("plot--empty")
            return Text(f"{self.title}\n{self.note}", style=empty)
        text = Text.from_ansi(chart_text(self.title, self.labels, self.values, width, height), end="")
        text.highlight_regex(BAR_GLYPHS, self.get_component_rich_style("plot--bar"))
        text.no_wrap = True
        return text
