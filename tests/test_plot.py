"""bbcore.plot: bar charts drawn on plotext's one public figure, one at a time."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from bbcore.plot import chart_text, plain_chart


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
