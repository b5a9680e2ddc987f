"""The full store's pipeline: a resumable, parallel exploration, every molecule a row.

The molecule numbers 1..nb_mol are cut into ranges.  A range's work is
every enantiomer group whose canonical molecule is numbered in it.  Its
molecules are written in chunks of about ``CHUNK_ROWS``, cut between groups:
each chunk, with the ``ExploredRanges`` row naming the interval of canonical
numbers it covers, is one ``BEGIN IMMEDIATE`` transaction.  So a run can be
stopped at any moment (Ctrl-C, ``kill -9``, power loss): every group is
stored whole or not at all, and the next run computes exactly the intervals
that are missing (``bbcore.ranges``).  Before writing, a chunk checks that
no stored interval overlaps it, so that no interval is ever stored twice
(workers also end with their parent, even on SIGKILL: ``bbcore.lifeline``).
Chunks, not ranges, bound a transaction because canonical molecules are
dense among low numbers (a range of 8,192 numbers of A4_B8 can hold 59,000
molecules) and absent among high ones.

Ranges are computed in worker processes (``spawn``, all cores by default),
and each worker writes its own transactions.  A worker binds its rows into
a temporary table of its own connection first, then takes the write turn
(a lock shared by the workers) only to copy them inside SQLite: the
workers trace rays and bind rows at the same time, and the file's single
writer is never the bottleneck.  Ranges are independent: a distributed
engine could take them as they are.

When every range is stored, the configuration gets its spectrum and
canonical_number indexes (``store.create_config_indexes``), then its
spectral groups (``spectra.build_spectrums``), then ``complete``.

``bbcore.explore.explore`` picks this pipeline for a full store, holding the
configuration's lock (``bbcore.lock``) for the run; readers keep reading
(WAL).  ``stop`` is a threading.Event: when set, no new range starts, the
workers stop after the chunk they are writing, and ``explore_full`` returns
``PAUSED``.  Progress is read from the database (the sum of stored
intervals) a few times a second.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from bbcore import engine, server, sql, store
from bbcore.config import Config
from bbcore.lifeline import die_with_parent
from bbcore.progress import COMPLETE, PAUSED, RunClock, RunProgressCallback
from bbcore.ranges import fully_stored, missing_ranges
from bbcore.runner import IN_PROCESS_BELOW, keep_freed_memory
from bbcore.spectra import build_spectrums
from bbcore.store import (
    Configuration,
    ExploredRange,
    Interrupted,
    StoreError,
    db,
    interrupted_when,
    now,
    open_database,
    stored_count,
)

RANGE_SIZE = 8192
"""Molecule numbers per task given to a worker."""
CHUNK_ROWS = 65536
"""Molecules per transaction, about: under half a second of writing.  A
worker's page cache is dropped whenever another worker commits, so each
transaction starts by rereading the key's pages: A4_B8's writes summed to
5.2 s in chunks of 8,192 and 4.0 s in chunks of 65,536 (one run each)."""
WORKER_BUSY_TIMEOUT_MS = 600_000
"""Workers wait for each other's write transactions as long as it takes."""
PROGRESS_EVERY = 0.25
"""Seconds between progress reports during a run."""


# -- one range, in a worker ----------------------------------------------------

INSERT_MOLECULES = sql.insert_molecules(store.MOLECULE_COLUMNS)
INSERT_STAGED = sql.insert_molecules(store.MOLECULE_COLUMNS, f'temp."{sql.STAGE}"')
CREATE_STAGE = sql.create_stage(store.MOLECULE_COLUMNS)
COPY_STAGED = sql.copy_stage(store.MOLECULE_COLUMNS)


def store_range(config: Config, start: int, stop: int, halt: threading.Event | None = None) -> int:
    """Compute one range and store it chunk by chunk in ``db``; returns molecules written.

    ``halt`` (set to pause) is checked between chunks: what is written is
    whole groups, and the rest of the range stays missing.
    """
    stamp = now()
    batch = engine.explore_range(config, start, stop)
    rows = batch.rows(stamp, stamp)
    canonical = batch.canonical_number
    written, first, low = 0, 0, start
    while first < len(rows) or low < stop:
        if halt is not None and halt.is_set():
            break
        last = min(first + CHUNK_ROWS, len(rows))
        while 0 < last < len(rows) and canonical[last] == canonical[last - 1]:
            last += 1  # a group is never cut
        high = int(canonical[last]) if last < len(rows) else stop
        written += _store_chunk(config, low, high, rows[first:last], stamp)
        first, low = last, high
    return written


def _store_chunk(config: Config, low: int, high: int, rows: list[tuple], stamp: str) -> int:
    """Write the groups with canonical numbers low..high-1 in one transaction.

    peewee's per-row query building costs more than SQLite itself here: its
    own connection's executemany does the writing, in the same transaction.
    A server takes the rows by COPY (``store.copy_rows``), from every worker
    at once: it needs no write turn.
    """
    if store.is_server(store.opened.path):
        copy = lambda: store.copy_rows("Molecules", store.MOLECULE_COLUMNS, rows)  # noqa: E731
        return _commit_chunk(config, low, high, len(rows), stamp, copy)
    connection = db.connection()
    if _write_turn is None:
        return _commit_chunk(
            config, low, high, len(rows), stamp, lambda: connection.executemany(INSERT_MOLECULES, rows)
        )
    _stage(connection, rows)
    try:
        with _write_turn:
            return _commit_chunk(config, low, high, len(rows), stamp, lambda: connection.execute(COPY_STAGED))
    finally:
        connection.execute(sql.CLEAR_STAGE)


def _commit_chunk(
    config: Config, low: int, high: int, count: int, stamp: str, write: Callable[[], object]
) -> int:
    """``write()`` the chunk's molecules and record its interval, in one transaction."""
    with store.write_transaction(config):
        overlap = (
            ExploredRange.select()
            .where(
                (ExploredRange.config == config.name)
                & (ExploredRange.start < high)
                & (ExploredRange.stop > low)
            )
            .exists()
        )
        if overlap:  # stored by an orphaned worker of a killed run
            return 0
        write()
        ExploredRange.insert(config=config.name, start=low, stop=high, nb_mol=count, dh1=stamp).execute()
    return count


def _stage(connection, rows: list[tuple]) -> None:
    """Bind a worker's rows into its connection's temporary table, before its write turn.

    Binding 25 Python values a row is most of what executemany costs; done
    here, the workers do it at the same time, and the write turn only copies
    rows inside SQLite.  A4_B8 (5 fresh runs each, alternating): 7.14 s
    direct, 6.60 s staged (0.92x).  In a single process, staging is pure
    extra work (A4_B6: 1.12x), so only workers stage.
    """
    connection.execute(CREATE_STAGE)
    with db.atomic():  # writes the temporary database only: no lock on the file
        connection.executemany(INSERT_STAGED, rows)


def _worker_init(parent: int, halt, write_turn, locks: dict) -> None:
    """Worker initialiser: end with the parent (``bbcore.lifeline``), tune malloc.

    ``locks`` are the exploration lock sessions the parent holds on a
    server (``server.held_locks``): each chunk's transaction checks that the
    run's is still held (``store.write_transaction``).

    Workers ignore Ctrl-C and SIGTERM: the parent receives it and pauses the
    run, which lets the ranges under way finish and be stored (a worker killed
    by ``timeout``'s SIGTERM to the whole group left multiprocessing's
    "leaked semaphore" warnings).  ``write_turn`` is a lock
    the workers take around each write transaction: SQLite's own busy handler
    polls, sleeping up to 100 ms between tries, and a worker woke long after
    the other had committed (the writer sat idle for a third of an A4_B8 run).
    """
    global _worker_halt, _write_turn
    die_with_parent(parent)
    for number in (signal.SIGINT, signal.SIGTERM):  # a whole process group gets them (Ctrl-C, timeout)
        signal.signal(number, signal.SIG_IGN)
    _worker_halt = halt
    _write_turn = write_turn
    server.adopt_locks(locks)
    keep_freed_memory()


_worker_halt = None
_write_turn = None
_worker_db: Path | None = None  # or a server.ServerURL: never its str(), which masks the password

WORKER_PRAGMAS = {"busy_timeout": WORKER_BUSY_TIMEOUT_MS, "temp_store": "memory"}
"""A worker's connection, on top of ``store.PRAGMAS``: it waits for the
others' writes as long as it takes, and its staged rows (up to 65,536, about
13 MB) stay in memory: with the default temp_store they spilled past a 2 MB
cache into a temporary file (A4_B8, 12 alternating runs: 0.90x and 0.97x)."""


def _worker_range(db_path: Path, config: Config, start: int, stop: int) -> int:
    """``store_range`` in a worker process, which opens the database on its first range.

    Opened here rather than in the initialiser, so that a database the
    worker cannot open is a StoreError sent back with the range, not a
    broken pool.  A server's failure (a lost connection, its disk full) is
    sent back as its one line (``store.error_line``): psycopg's error loses
    its SQLSTATE on the way back to the parent.
    """
    global _worker_db
    if _worker_db != db_path:
        open_database(db_path, write=True, pragmas=WORKER_PRAGMAS)
        _worker_db = db_path
    try:
        return store_range(config, start, stop, _worker_halt)
    except store.DATABASE_ERRORS as error:
        if not store.is_server(db_path):
            if store.is_disk_full(error):  # not the failed rollback that followed it (issue 32, D5)
                raise sqlite3.OperationalError(store.DISK_FULL[0]) from None
            raise  # SQLite's own words reach the parent
        raise StoreError(store.error_line(error, db_path)) from None


# -- the run -------------------------------------------------------------------


def explore_full(
    config: Config,
    path: Path,
    workers: int | None,
    progress: RunProgressCallback | None,
    stop: threading.Event,
    range_size: int,
) -> str:
    """A full exploration: every molecule a row (the lock is held)."""
    todo = missing_ranges(config, range_size)
    clock, done_before = RunClock(config.name), stored_count(config)

    def report(phase: str) -> None:
        if progress:
            done = stored_count(config)
            progress(clock.progress(done, config.nb_mol, phase, own=done - done_before))

    if not fully_stored(config):  # a resume with every range stored goes straight to grouping
        report("exploring")
    workers = workers or os.cpu_count() or 1
    keep_freed_memory()
    if workers == 1 or config.nb_mol < IN_PROCESS_BELOW:
        for start, stop_ in todo:
            if stop.is_set():
                break
            store_range(config, start, stop_, stop)
            report("exploring")
    else:
        for _ in _run_pool(path, config, todo, workers, stop):
            report("exploring")
    if not fully_stored(config):
        report("paused")
        return PAUSED
    grouping_started = time.monotonic()

    def grouping(done: int, total: int) -> None:
        # The grouping phase's own progress, fresh run or resume alike: molecules
        # through the grouping (estimated), at the phase's own rate.  Called from
        # SQLite's progress handler: it must not query the database.
        if progress:
            progress(clock.progress(done, total, "spectrums", since=grouping_started))

    try:
        finish(config, grouping, stop)
    except Interrupted:  # paused in the middle of a statement: it was rolled back
        report("paused")
        return PAUSED
    report("complete")
    return COMPLETE


def finish(
    config: Config,
    progress: Callable[[int, int], None] | None = None,
    stop: threading.Event | None = None,
) -> int:
    """Complete a fully stored configuration: its indexes, its spectral groups, ``complete``.

    The end of every full run, and all of ``bbcore spectrums``.  The caller holds
    the exploration lock.  ``progress`` (molecules grouped, molecules) is
    ``spectra.build_spectrums``'.  Returns how many ambiguous spectra it has.
    Setting ``stop`` stops the statement under way at once (an index
    build, the grouping query: ``store.interrupted_when``), which raises
    ``store.Interrupted``: nothing of it is kept, and the next run does it again.
    """
    with interrupted_when(stop):
        count = build_spectrums(config, progress)
        Configuration.update(complete=True, dh2=now()).where(Configuration.config == config.name).execute()
    return count


def _run_pool(
    path: Path, config: Config, todo: Iterator[tuple[int, int]], workers: int, stop: threading.Event
) -> Iterator[None]:
    """Store ``todo`` ranges in worker processes, yielding every PROGRESS_EVERY seconds."""
    context = multiprocessing.get_context("spawn")
    halt = context.Event()
    pool = ProcessPoolExecutor(
        workers,
        mp_context=context,
        initializer=_worker_init,
        initargs=(os.getpid(), halt, context.Lock(), server.held_locks()),
    )
    running: set[Future] = set()
    queue = iter(todo)  # taken as needed, never listed
    pending = next(queue, None)
    try:
        while pending is not None or running:
            if stop.is_set():
                halt.set()
            while pending is not None and len(running) < workers + 1 and not stop.is_set():
                start, stop_ = pending
                running.add(pool.submit(_worker_range, path, config, start, stop_))
                pending = next(queue, None)
            if not running:
                break
            finished, running = wait(running, timeout=PROGRESS_EVERY, return_when=FIRST_COMPLETED)
            for future in finished:
                try:
                    future.result()
                except BrokenProcessPool:
                    if stop.is_set():  # a pause: a worker still starting (``runner.LocalRunner``)
                        return
                    raise
                except Exception as error:  # a worker's StoreError, pickled back
                    if store.is_disk_full(error):
                        raise  # the faces say so in their own line (``explore.full_disk_line``)
                    raise StoreError(str(error).splitlines()[0]) from None
            yield
    finally:
        # Queued ranges are dropped; running ones stop after their current chunk.
        halt.set()
        pool.shutdown(wait=True, cancel_futures=True)
