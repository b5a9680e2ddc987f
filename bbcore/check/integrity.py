"""The integrity phase: SQLite's integrity_check of the whole file, with its progress."""

from __future__ import annotations

import time

from bbcore import sql
from bbcore.check.report import CheckProgressCallback, CheckResult, Difference
from bbcore.store import db

OPS_PER_TICK = 10_000
"""SQLite virtual-machine instructions between two calls of the progress handler."""
METER_INTERVAL = 0.1
"""Seconds between two progress reports of a long statement (the handler is called far more often)."""
INTEGRITY_OPS_PER_PAGE = 1000
"""integrity_check's instructions per page: A6_B8 compact (166,196 pages) 813, A4_B8 full (44,946) 1,019.
The larger: the bar may jump ahead at the end, it never waits at 99%."""


class SqliteMeter:
    """Progress of one long SQLite statement, from the instructions it runs.

    SQLite cannot say how far a statement is, but it calls a progress
    handler every ``OPS_PER_TICK`` virtual-machine instructions, and a
    statement runs a nearly constant number of them per page or row
    (measured: ``INTEGRITY_OPS_PER_PAGE``): the instructions run, over
    those expected, give the share done.  It never reports the whole before
    the statement is over (``bbcore.spectra.GroupingMeter`` does the same
    for the index builds).  The handler only counts and reports.
    """

    def __init__(self, name: str, expected_ops: int, progress: CheckProgressCallback, total: int) -> None:
        self.name, self.expected, self.progress, self.total = name, max(expected_ops, 1), progress, total
        self.ops = 0
        self.last = 0.0

    def __enter__(self) -> SqliteMeter:
        self.progress(self.name, 0, self.total)
        db.connection().set_progress_handler(self.tick, OPS_PER_TICK)
        return self

    def __exit__(self, *exc) -> None:
        db.connection().set_progress_handler(None, 0)

    def tick(self) -> int:
        self.ops += OPS_PER_TICK
        now = time.monotonic()
        if now - self.last >= METER_INTERVAL:
            self.last = now
            share = min(self.ops / self.expected, 0.99)
            self.progress(self.name, int(share * self.total), self.total)
        return 0


def file_size() -> int:
    """The database file's size in bytes (its pages)."""
    (pages,) = db.execute_sql(sql.PAGE_COUNT).fetchone()
    (size,) = db.execute_sql(sql.PAGE_SIZE).fetchone()
    return int(pages) * int(size)


def megabytes(size: int) -> str:
    """A file size for a person: ``680 MB``, ``0.6 MB``."""
    return f"{size / 1e6:,.0f} MB" if size >= 10e6 else f"{size / 1e6:.1f} MB"


def check_integrity(progress: CheckProgressCallback) -> CheckResult:
    """SQLite's ``integrity_check`` of the whole file (every configuration in it).

    Why ``integrity_check`` and not ``quick_check``: ``quick_check`` reads
    every page and b-tree but does not compare the indexes with their
    tables, which is O(N log N) more work.  Measured (2 cores, load 8 to
    14): A6_B8's compact file (681 MB) quick_check 2.4 s, integrity_check
    11.8 s; A4_B8's full file (184 MB) 1.7 s and 7.3 s.  An index that disagrees
    with its table (a file edited by hand, or with ``writable_schema``)
    passes quick_check and every other phase here, while the readers that
    go through that index (groups by size, decoding) answer wrongly: only
    integrity_check finds it, and its cost stays within the phases' own.
    It reads the whole file, every configuration in it: ``--no-integrity``
    skips it when the file was checked already.  The progress counts pages.
    """
    result = CheckResult(
        "integrity",
        f"SQLite's integrity_check of the whole file ({megabytes(file_size())}, every configuration)",
    )
    (pages,) = db.execute_sql(sql.PAGE_COUNT).fetchone()
    with SqliteMeter("integrity", INTEGRITY_OPS_PER_PAGE * int(pages), progress, int(pages)):
        lines = [line for (line,) in db.execute_sql(sql.INTEGRITY_CHECK)]
    if lines != ["ok"]:
        for line in lines:
            result.add(Difference("integrity.damage", None, "integrity_check", repr(line), "'ok'"))
    progress("integrity", int(pages), int(pages))
    return result


def skipped_integrity() -> CheckResult:
    """The integrity line of a check run with ``--no-integrity`` (no progress: nothing runs)."""
    return CheckResult("integrity", "skipped (--no-integrity): the file's own integrity was not checked")


def server_integrity() -> CheckResult:
    """The integrity line on a server: SQLite's integrity_check has no equivalent there.

    A server keeps its own storage (write-ahead log, checksums when enabled);
    its administrator checks it with PostgreSQL's tools (``pg_amcheck``, which
    needs the amcheck extension and a superuser).  Every other phase reads
    the rows themselves and runs as on a file.
    """
    return CheckResult(
        "integrity", "not run on a server: SQLite's integrity_check has no equivalent (see pg_amcheck)"
    )
