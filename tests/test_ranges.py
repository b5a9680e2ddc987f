"""Resume at its boundaries: what is left to explore, given the stored intervals.

``missing_ranges`` is what a resumed run computes; a hole it misses is a
molecule never stored, a range it gives twice is a molecule stored twice.
Each test writes real ``ExploredRanges`` rows into a temporary database and
compares the answer with the missing molecules counted one by one.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bbcore.config import Config
from bbcore.ranges import INTERVALS_PAGE, fully_stored, missing_ranges, stored_intervals
from bbcore.store import ExploredRange, db, ensure_config, open_database

SMALL = Config(3, 4)  # 560 molecules
LARGE = Config(4, 6)  # 58,905 molecules: room for two pages of intervals with holes between


def store_intervals(config: Config, intervals: Iterable[tuple[int, int]]) -> None:
    """Replace the configuration's ``ExploredRanges`` rows by ``intervals`` (start, stop)."""
    ensure_config(config)
    with db.atomic():
        ExploredRange.delete().where(ExploredRange.config == config.name).execute()
        rows = [
            {"config": config.name, "start": start, "stop": stop, "nb_mol": stop - start}
            for start, stop in intervals
        ]
        for i in range(0, len(rows), 500):
            ExploredRange.insert_many(rows[i : i + 500]).execute()


def expected_missing(
    config: Config, intervals: Iterable[tuple[int, int]], size: int
) -> list[tuple[int, int]]:
    """The molecules in no interval: runs of consecutive numbers, cut every ``size`` from a run's start."""
    stored = set()
    for start, stop in intervals:
        stored.update(range(start, stop))
    runs: list[list[int]] = []
    for number in range(1, config.nb_mol + 1):
        if number in stored:
            continue
        if runs and runs[-1][1] == number:
            runs[-1][1] = number + 1
        else:
            runs.append([number, number + 1])
    return [(s, min(s + size, stop)) for start, stop in runs for s in range(start, stop, size)]


@pytest.fixture
def database(tmp_path: Path) -> Path:
    """A fresh database file, opened."""
    return open_database(tmp_path / "ranges.sqlite")


def missing(config: Config, intervals: list[tuple[int, int]], size: int = 100) -> list[tuple[int, int]]:
    """Store ``intervals`` and read back what is left, checking it against the count one by one."""
    store_intervals(config, intervals)
    found = list(missing_ranges(config, size))
    assert found == expected_missing(config, intervals, size)
    assert fully_stored(config) == (not found)
    return found


def test_nothing_stored_leaves_every_molecule(database):
    assert missing(SMALL, []) == [(s, min(s + 100, 561)) for s in range(1, 561, 100)]
    assert list(missing_ranges(SMALL, 8192)) == [(1, 561)]  # one range of a full run's size
    assert not fully_stored(SMALL)


def test_a_configuration_never_seen_is_all_missing(database):
    assert list(missing_ranges(Config(2, 4), 50)) == [(1, 51), (51, 101), (101, 121)]


def test_everything_stored_leaves_nothing(database):
    assert missing(SMALL, [(1, 561)]) == []
    assert missing(SMALL, [(1, 200), (200, 561)]) == []
    assert fully_stored(SMALL)


@pytest.mark.parametrize(
    ("intervals", "left"),
    [
        ([(1, 300)], [(300, 400), (400, 500), (500, 561)]),  # touches the first molecule
        ([(300, 561)], [(1, 101), (101, 201), (201, 300)]),  # touches the last molecule
        ([(1, 2)], [(2, 102), (102, 202), (202, 302), (302, 402), (402, 502), (502, 561)]),
        ([(560, 561)], [(1, 101), (101, 201), (201, 301), (301, 401), (401, 501), (501, 560)]),
    ],
)
def test_ranges_touching_the_first_or_last_molecule(database, intervals, left):
    assert missing(SMALL, intervals) == left


@pytest.mark.parametrize(
    ("intervals", "hole"),
    [
        ([(2, 561)], (1, 2)),  # the first molecule
        ([(1, 280), (281, 561)], (280, 281)),  # one in the middle
        ([(1, 560)], (560, 561)),  # the last molecule
    ],
)
def test_a_hole_of_one_molecule(database, intervals, hole):
    assert missing(SMALL, intervals) == [hole]
    assert not fully_stored(SMALL)


def test_adjacent_ranges_leave_no_gap_between_them(database):
    assert missing(SMALL, [(1, 10), (10, 20), (20, 21), (30, 40), (40, 561)]) == [(21, 30)]


@pytest.mark.parametrize(
    "intervals",
    [
        [(1, 300), (200, 561)],  # overlapping
        [(1, 561), (5, 10)],  # one inside another
        [(1, 300), (250, 280), (270, 561)],  # a later one reaching past an inner one
    ],
)
def test_overlapping_ranges_count_once(database, intervals):
    assert missing(SMALL, intervals) == []


def test_overlapping_ranges_with_holes(database):
    assert missing(SMALL, [(1, 100), (50, 80), (90, 150), (160, 170), (165, 200)]) == [
        (150, 160),
        (200, 300),
        (300, 400),
        (400, 500),
        (500, 561),
    ]


def test_ranges_are_cut_at_the_size_asked(database):
    assert missing(SMALL, [(1, 10), (15, 561)], size=2) == [(10, 12), (12, 14), (14, 15)]
    assert missing(SMALL, [(1, 10), (15, 561)], size=1) == [(10, 11), (11, 12), (12, 13), (13, 14), (14, 15)]


@pytest.mark.parametrize(
    "count",
    [INTERVALS_PAGE - 1, INTERVALS_PAGE, INTERVALS_PAGE + 1, 2 * INTERVALS_PAGE, 2 * INTERVALS_PAGE + 1],
)
def test_intervals_read_a_page_at_a_time_miss_none_and_repeat_none(database, count):
    """Intervals of one molecule with a hole of one after each: every hole is found, around
    the pages' ends too, and the stored intervals come back once each, in order."""
    intervals = [(2 * i + 1, 2 * i + 2) for i in range(count)]
    store_intervals(LARGE, intervals)
    assert list(stored_intervals(LARGE)) == intervals
    left = missing(LARGE, intervals, 8192)
    assert left[: count - 1] == [(2 * i + 2, 2 * i + 3) for i in range(count - 1)]
    assert left[count - 1] == (2 * count, 2 * count + 8192)


def test_a_page_ending_on_the_last_stored_interval_finds_the_rest(database):
    """Exactly one page of intervals covering everything but the last molecule."""
    step = LARGE.nb_mol // INTERVALS_PAGE
    intervals = [(1 + i * step, 1 + (i + 1) * step) for i in range(INTERVALS_PAGE - 1)]
    intervals.append((intervals[-1][1], LARGE.nb_mol))
    assert missing(LARGE, intervals, 8192) == [(LARGE.nb_mol, LARGE.nb_mol + 1)]


def test_other_configurations_ranges_do_not_count(database):
    store_intervals(Config(2, 4), [(1, 121)])
    store_intervals(SMALL, [(1, 100)])
    assert list(missing_ranges(SMALL, 1000)) == [(100, 561)]
    assert fully_stored(Config(2, 4))


@st.composite
def interval_sets(draw, nb_mol: int, overlapping: bool) -> list[tuple[int, int]]:
    """Stored intervals over 1..nb_mol: disjoint (adjacent or not) or, if ``overlapping``, any."""
    if overlapping:
        starts = draw(st.sets(st.integers(1, nb_mol), max_size=30))
        return [(s, draw(st.integers(s + 1, nb_mol + 1))) for s in sorted(starts)]
    cuts = sorted(draw(st.sets(st.integers(1, nb_mol + 1), min_size=0, max_size=40)))
    pairs = list(zip(cuts, cuts[1:]))
    return [pair for pair in pairs if draw(st.booleans())]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), size=st.integers(1, 600), overlapping=st.booleans())
def test_stored_and_missing_cover_every_molecule_exactly_once(database, data, size, overlapping):
    config = SMALL
    intervals = data.draw(interval_sets(config.nb_mol, overlapping))
    store_intervals(config, intervals)
    left = list(missing_ranges(config, size))
    stored = set()
    for start, stop in intervals:
        stored.update(range(start, stop))
    counted = [0] * (config.nb_mol + 1)
    for number in stored:
        counted[number] += 1
    for start, stop in left:
        assert 1 <= start < stop <= config.nb_mol + 1
        assert stop - start <= size
        for number in range(start, stop):
            counted[number] += 1
    assert counted[1:] == [1] * config.nb_mol
    assert left == sorted(left)
    assert fully_stored(config) == (len(stored) == config.nb_mol)


def test_adjacent_intervals_across_a_page_boundary_are_all_read(database):
    """Intervals of one molecule, each starting where the last stopped, over more than a page:
    the next page starts after the last interval's start, not its stop, so the interval that
    starts exactly where a page's last one stops is read, not taken for a hole."""
    count = INTERVALS_PAGE + 2
    intervals = [(i, i + 1) for i in range(1, count + 1)]
    store_intervals(LARGE, intervals)
    assert list(stored_intervals(LARGE)) == intervals
    assert missing(LARGE, intervals, LARGE.nb_mol)[0] == (count + 1, LARGE.nb_mol + 1)
