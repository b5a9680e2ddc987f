"""Benchmark: what a resumed run computes first, the missing ranges (``bbcore.explore.missing_ranges``).

    python bench/ranges.py                      # A10_B13 empty, then 20,000 stored intervals of A6_B8
    python bench/ranges.py --runs 15 --intervals 50000

Two questions, each timed ``--runs`` times in a fresh temporary database:

- the first three ranges of A10_B13 (5 x 10^11 ranges of 8,192) with
  nothing stored: ranges are generated lazily, so this must take
  milliseconds, never grow with the configuration (the test suite asserts
  the ranges, this script the time: tests never assert a duration);
- every missing range of A6_B8 with ``--intervals`` one-molecule intervals
  stored, a hole after each: the intervals are read ``INTERVALS_PAGE`` at a
  time, so the time grows with the intervals, never with the molecules.

It prints the medians and the slowest run, and each median as a multiple
of a fixed piece of SQLite work timed in the same run (the machines are
shared: the ratio says more than the seconds).
"""

from __future__ import annotations

import argparse
import itertools
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bbcore.config import parse_config  # noqa: E402
from bbcore.full import RANGE_SIZE  # noqa: E402
from bbcore.ranges import INTERVALS_PAGE, fully_stored, missing_ranges  # noqa: E402
from bbcore.store import ExploredRange, close_database, db, ensure_config, open_database  # noqa: E402

HUGE = parse_config("A10_B13")
PAGED = parse_config("A6_B8")


def sqlite_reference() -> float:
    """Median milliseconds of inserting and summing 100,000 rows in an in-memory SQLite table."""
    times = []
    for _ in range(7):
        start = time.perf_counter()
        connection = sqlite3.connect(":memory:")
        connection.execute("CREATE TABLE t (a INTEGER PRIMARY KEY, b INTEGER)")
        connection.executemany("INSERT INTO t VALUES (?, ?)", ((i, i * 7) for i in range(100_000)))
        connection.execute("SELECT SUM(b) FROM t").fetchone()
        connection.close()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def timed(function, runs: int) -> list[float]:
    """Milliseconds of each of ``runs`` calls."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        function()
        times.append((time.perf_counter() - start) * 1000)
    return times


def first_ranges() -> None:
    """The first three ranges of A10_B13, nothing stored."""
    first = list(itertools.islice(missing_ranges(HUGE, RANGE_SIZE), 3))
    assert first == [(1, 8193), (8193, 16385), (16385, 24577)]
    assert not fully_stored(HUGE)


def store_intervals(count: int) -> None:
    """``count`` one-molecule intervals of A6_B8 with a hole after each."""
    ensure_config(PAGED)
    rows = [{"config": PAGED.name, "start": 2 * i + 1, "stop": 2 * i + 2, "nb_mol": 1} for i in range(count)]
    with db.atomic():
        for i in range(0, len(rows), 500):
            ExploredRange.insert_many(rows[i : i + 500]).execute()


def report(what: str, times: list[float], reference: float) -> None:
    """One line: median, slowest, median over the reference."""
    median = statistics.median(times)
    print(f"{what:<48s} median {median:9.2f} ms   max {max(times):9.2f} ms   {median / reference:7.3f} x ref")


def main() -> None:
    """Time both questions and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--intervals", type=int, default=20_000)
    args = parser.parse_args()
    reference = sqlite_reference()
    print(f"reference: 100,000 rows into SQLite and summed, median {reference:.2f} ms")
    with tempfile.TemporaryDirectory() as folder:
        open_database(Path(folder) / "ranges.sqlite")
        report("A10_B13, nothing stored: first 3 ranges", timed(first_ranges, args.runs), reference)
        store_intervals(args.intervals)
        holes = args.intervals + 1

        def every_range() -> None:
            assert sum(1 for _ in missing_ranges(PAGED, RANGE_SIZE)) >= holes

        pages = -(-args.intervals // INTERVALS_PAGE)
        report(
            f"A6_B8, {args.intervals:,} intervals ({pages} pages): every range",
            timed(every_range, args.runs),
            reference,
        )
        close_database()


if __name__ == "__main__":
    main()
