"""A bar chart drawn by plotext, at the size of the widget.

plotext 6 draws on a figure object (``plot_class``); ``figure.build()``
returns a matrix whose ``string()`` is the chart as text with ANSI colours.
The chart is built with the ``colorless`` theme and read with
``Text.from_ansi``; the bars are then coloured from the Textual theme
(``plot--bar``), so the plot follows the app's light or dark theme.

Each ``BarPlot`` has its own plotext figure (plotext's module-level figure
is shared global state), and draws only from ``render``, on the app's
thread.  The y axis gets a few round integer ticks: the values are counts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from plotext import terminal as plotext_terminal
from plotext._plotter.plot import plot_class
from rich.text import Text
from textual.widget import Widget

BAR_GLYPHS = r"[█▄▀▌▐]+"


def round_ticks(maximum: int, count: int = 4) -> list[int]:
    """Round tick values (1, 2 or 5 times a power of ten) from 0 up to ``maximum``, about ``count`` steps."""
    if maximum <= 0:
        return [0]
    power = 10 ** max(0, math.floor(math.log10(maximum / count)))
    steps = [m * power for m in (1, 2, 5, 10, 20)]
    step = min(steps, key=lambda s: (abs(maximum // s - count), -s))
    return list(range(0, maximum + 1, step))


def tick_label(value: int) -> str:
    """A short count: 950, 12k, 1.5M."""
    if value >= 1_000_000:
        return f"{value / 1_000_000:g}M"
    if value >= 10_000:
        return f"{value / 1000:g}k"
    return str(value)


def chart_text(title: str, labels: Sequence[str], values: Sequence[int], width: int, height: int) -> str:
    """The bar chart as plotext draws it (ANSI text), ``width`` x ``height`` cells."""
    figure = plot_class(plotext_terminal)
    figure.plot_size(width, height)
    figure.theme("colorless")
    figure.title(title)
    figure.draw(figure.bar(list(labels), list(values)))
    ticks = round_ticks(max(values))
    figure.ruler("y").ticks(ticks, labels=[tick_label(t) for t in ticks])
    figure.ruler("y").lim(0, max(values))
    return figure.build().string()


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

    def show(self, title: str, labels: Sequence[object], values: Sequence[int]) -> None:
        """Replace what the plot shows."""
        self.title = title
        self.labels = [str(label) for label in labels]
        self.values = [int(v) for v in values]
        self.refresh()

    def render(self) -> Text:
        """The chart at the widget's size, bars in the theme's accent colour."""
        width, height = self.content_size
        if not self.values or max(self.values) <= 0 or width < 10 or height < 5:
            empty = self.get_component_rich_style("plot--empty")
            return Text(f"{self.title}\n(nothing to plot)", style=empty)
        text = Text.from_ansi(chart_text(self.title, self.labels, self.values, width, height), end="")
        text.highlight_regex(BAR_GLYPHS, self.get_component_rich_style("plot--bar"))
        text.no_wrap = True
        return text
