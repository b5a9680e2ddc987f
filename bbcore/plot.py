"""Bar charts as text, drawn by plotext: the TUI's plots and the CLI's.

plotext 6's public API is one figure, ``plotext.figure`` (module-level
state, as in matplotlib's pyplot): each chart clears it, draws on it and
reads ``figure.build().string()``, the chart as text, under a lock so that
two threads never draw on it at once.  The ``colorless`` theme; the y axis
gets a few round integer ticks, since the values are counts.  plotext is
imported by the first chart: importing it took 0.5 s, and every ``bbcore``
command imports this module.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Sequence

FIGURE_LOCK = threading.Lock()
"""plotext's one public figure is shared: one chart is drawn on it at a time."""
ANSI_RE = re.compile(r"\x1b\[[0-9;]*m")


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
    import plotext  # half a second to import: only a chart pays for it, not every command's start

    ticks = round_ticks(max(values))
    with FIGURE_LOCK:
        figure = plotext.figure
        figure.clear()
        figure.plot_size(width, height)
        figure.theme("colorless")
        figure.title(title)
        figure.draw(figure.bar(list(labels), list(values)))
        figure.ruler("y").ticks(ticks, labels=[tick_label(t) for t in ticks])
        figure.ruler("y").lim(0, max(values))
        return figure.build().string()


def plain_chart(title: str, labels: Sequence[object], values: Sequence[int], width: int, height: int) -> str:
    """The bar chart as plain text (no escape codes), for the command line."""
    text = chart_text(title, [str(label) for label in labels], values, width, height)
    return "\n".join(line.rstrip() for line in ANSI_RE.sub("", text).splitlines())
