"""What the phases share: rows streamed a block at a time, and a phase's progress."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from itertools import count

from bbcore.check.report import CheckProgressCallback, CheckResult
from bbcore.store import db, is_server, opened

BLOCK = 1 << 14
"""Rows (families, Spectrums rows, ambiguous molecules) read and computed at a time."""
ROWS_PER_QUERY = 500
"""Numbers per ``IN (...)`` look-up of sampled rows."""


def rows_in_blocks(statement: str, parameters: Sequence = ()) -> Iterator[list[tuple]]:
    """The rows of a query, ``BLOCK`` at a time, from one cursor (nothing more is held).

    On a server, psycopg's own cursor would fetch the whole result first: a
    named (server-side) cursor hands it over a block at a time, and two of
    them stream side by side on one connection (the groups phase merges
    two); ``WITH HOLD``, since the store's connection commits each statement.
    """
    if is_server(opened.path):
        from bbcore.server import placeholders

        cursor = db.connection().cursor(name=f"bbcore_check_{next(_cursors)}", withhold=True)
        cursor.execute(placeholders(statement), tuple(parameters))
    else:
        cursor = db.execute_sql(statement, tuple(parameters))
    try:
        while rows := cursor.fetchmany(BLOCK):
            yield rows
    finally:
        cursor.close()


_cursors = count()
"""Numbers naming the server-side cursors of ``rows_in_blocks``."""


@contextmanager
def without_cycle_collection() -> Iterator[None]:
    """Python's cycle collector paused while rows stream through (restored after).

    Each block makes tens of thousands of row tuples, and every so often the
    collector walked every object alive, numba's included: 15 s of A6_B8's
    38 s groups phase.  The streaming loops make no reference cycles: their
    blocks are freed by reference counting as before.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def quick_phase(name: str, progress: CheckProgressCallback, run: Callable[[], CheckResult]) -> CheckResult:
    """A phase of a few look-ups: its progress is its start and its end."""
    progress(name, 0, 1)
    result = run()
    progress(name, 1, 1)
    return result
