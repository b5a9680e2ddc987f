"""Which molecule numbers a run still has to compute: the resume ranges.

Every exploration (the full store and the compact one's tracing stage)
records what it has stored as ``ExploredRanges`` rows, intervals
``[start, stop)`` of canonical numbers.  A run, fresh or resumed, computes
exactly the gaps between them, cut into tasks; nothing is listed whole
(A10_B13 has 5 x 10^11 ranges of 8,192), and the intervals are read a page
at a time.  This module sits below both pipelines, so that neither climbs
back to the other for it.
"""

from __future__ import annotations

from collections.abc import Iterator

from bbcore.config import Config
from bbcore.store import ExploredRange

INTERVALS_PAGE = 4096
"""Stored intervals read per query when looking for the missing ones."""


def stored_intervals(config: Config) -> Iterator[tuple[int, int]]:
    """The stored intervals ``(start, stop)`` of canonical numbers, in order, a page at a time.

    Each page is its own query, read whole: rows written between pages
    (always before the last interval read) are neither seen nor skipped.
    """
    after = 0
    while True:
        page = list(
            ExploredRange.select(ExploredRange.start, ExploredRange.stop)
            .where((ExploredRange.config == config.name) & (ExploredRange.start > after))
            .order_by(ExploredRange.start)
            .limit(INTERVALS_PAGE)
            .tuples()
        )
        yield from page
        if len(page) < INTERVALS_PAGE:
            return
        after = page[-1][0]


def missing_ranges(config: Config, size: int) -> Iterator[tuple[int, int]]:
    """The gaps between stored intervals, cut into ranges of at most ``size`` numbers.

    A generator, never a list.  Its truth value says nothing:
    ``fully_stored`` asks whether any is left.
    """
    cursor = 1
    for start, stop in stored_intervals(config):
        if start > cursor:
            yield from ((s, min(s + size, start)) for s in range(cursor, start, size))
        cursor = max(cursor, stop)
    if cursor <= config.nb_mol:
        end = config.nb_mol + 1
        yield from ((s, min(s + size, end)) for s in range(cursor, end, size))


def fully_stored(config: Config) -> bool:
    """Whether every canonical number of ``config`` is in a stored interval."""
    return next(missing_ranges(config, config.nb_mol), None) is None
