"""bbcore.plot: bar charts drawn on plotext's one public figure, one at a time."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor

from bbcore.plot import ANSI_RE, chart_text, plain_chart, round_ticks, tick_label


def chart(n: int) -> tuple[str, list[str], list[int]]:
    """Chart ``n``: its own title, number of bars and counts."""
    labels = [str(k) for k in range(2 + n % 9)]
    return f"chart {n}", labels, [(k * 37 + n * 11) % 500 + 1 for k in range(len(labels))]


CHARTS = [chart(n) for n in range(12)]


def test_a_chart_has_its_title_ticks_and_a_bar_per_value() -> None:
    text = plain_chart("molecules by rays", [2, 3, 4], [10, 40, 20], 40, 12)
    lines = text.splitlines()
    assert len(lines) == 12 and "molecules by rays" in lines[0]
    assert "40┤" in text and " 0┤" in text  # round ticks, up to the largest count
    assert lines[-1].split() == ["2", "3", "4"]
    tallest = [line.count("█") for line in lines]
    assert max(tallest) > 0


def test_charts_drawn_from_several_threads_are_each_their_own() -> None:
    # plotext's figure is module-level: without the lock, one thread's bars or title
    # end up in another thread's chart.
    alone = [chart_text(title, labels, values, 50, 14) for title, labels, values in CHARTS]
    with ThreadPoolExecutor(4) as pool:
        for _ in range(10):
            together = list(pool.map(lambda chart: chart_text(*chart, 50, 14), CHARTS))
            assert together == alone


def test_round_ticks_are_one_two_or_five_times_a_power_of_ten_about_four_steps() -> None:
    """From 0 to the largest count, about 4 steps of a round size; of two as close, the larger."""
    assert round_ticks(0) == [0] and round_ticks(-3) == [0]
    assert round_ticks(1) == [0, 1]
    assert round_ticks(7) == [0, 2, 4, 6]
    assert round_ticks(12) == [0, 5, 10]  # steps of 2 (6) and 5 (2) both 2 from 4: the larger
    assert round_ticks(15) == [0, 5, 10, 15]
    assert round_ticks(39) == [0, 10, 20, 30]
    assert round_ticks(40) == [0, 10, 20, 30, 40]
    assert round_ticks(500) == [0, 100, 200, 300, 400, 500]
    assert round_ticks(58_905) == [0, 10_000, 20_000, 30_000, 40_000, 50_000]  # A4_B6's molecules
    assert round_ticks(100, count=10) == list(range(0, 101, 10))


def test_tick_labels_are_short_counts() -> None:
    assert [tick_label(v) for v in (0, 950, 9_999, 10_000, 12_000, 999_000)] == [
        "0",
        "950",
        "9999",
        "10k",
        "12k",
        "999k",
    ]
    assert [tick_label(v) for v in (1_000_000, 1_500_000, 25_000_000)] == ["1M", "1.5M", "25M"]


def test_a_chart_fills_its_size_without_colour() -> None:
    """``width`` x ``height`` cells exactly (the frame spans the width), in the colourless theme:
    no escape code but plotext's resets."""
    for width, height in ((40, 12), (30, 10), (64, 20)):
        text = chart_text("sizes", ["2", "3", "4", "5"], [7, 310, 12, 1], width, height)
        assert set(ANSI_RE.findall(text)) == {"\x1b[0m"}
        lines = plain_chart("sizes", [2, 3, 4, 5], [7, 310, 12, 1], width, height).splitlines()
        assert len(lines) == height and max(len(line) for line in lines) == width


def axis_labels(text: str) -> list[str]:
    """The y axis's tick labels, top to bottom."""
    return [line.split("┤")[0].strip() for line in text.splitlines() if "┤" in line]


def test_the_y_axis_shows_the_round_ticks_as_short_counts() -> None:
    for values in ([20_000, 5_000], [58_905], [3, 7, 1, 5], [1_500_000, 2]):
        text = plain_chart("counts", list(range(len(values))), values, 40, 14)
        assert axis_labels(text) == [tick_label(t) for t in reversed(round_ticks(max(values)))], values


def test_bars_span_the_plot_each_above_its_label() -> None:
    """On the 0 line, one run of bars a value (60 columns keep them apart): the first starts at
    the axis, the last ends at the frame, and each label stands under its own bar; the tallest bar
    reaches the top tick."""
    for labels, values in (
        (["2", "3", "4"], [10, 40, 20]),
        (["7"], [1_007]),
        (["a", "b", "c", "d"], [3, 7, 1, 5]),
    ):
        lines = plain_chart("bars", labels, values, 60, 12).splitlines()
        zero = next(line for line in lines if line.lstrip().startswith("0┤"))
        axis = zero.index("┤")
        runs = [(m.start(), m.end()) for m in re.finditer("█+", zero)]
        assert len(runs) == len(values)
        assert runs[0][0] == axis + 1 and runs[-1][1] == zero.index("│", axis)
        under = lines[-1]
        for (start, end), label in zip(runs, labels):
            assert start <= under.index(label) < end, (labels, label)
        top = next(line for line in lines if "┤" in line)
        tallest = runs[values.index(max(values))]
        assert set(top[tallest[0] : tallest[1]]) == {"█"}
