"""Resumable, parallel exploration of a configuration.

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

Only one process explores a configuration at a time: an exclusive byte-range
lock (``fcntl``) on ``<database>.lock`` is held for the run and released by
the kernel when the process dies.  Readers keep reading (WAL).

The run is a library function: ``explore(config, db_path, progress=...,
stop=...)``; the CLI and the TUI drive it.  ``stop`` is a threading.Event:
when set, no new range starts, the workers stop after the chunk they are
writing, and the function returns ``PAUSED``.  Progress is read from the
database (the sum of stored intervals) a few times a second.
"""

from __future__ import annotations

import fcntl
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from contextlib import contextmanager
from pathlib import Path

from bbcore import compact, engine, sql, store
from bbcore.config import Config
from bbcore.feasibility import disk_full_line, refusal
from bbcore.lifeline import die_with_parent
from bbcore.numbering import fits_int64
from bbcore.progress import Progress, RunProgressCallback
from bbcore.ranges import fully_stored, missing_ranges
from bbcore.runner import InlineRunner, LocalRunner, Runner, keep_freed_memory
from bbcore.spectra import build_spectrums
from bbcore.store import (
    COMPACT,
    FULL,
    STORES,
    Configuration,
    ExploredRange,
    StoreError,
    config_row,
    db,
    ensure_config,
    now,
    open_database,
    stored_count,
    use_database,
)

COMPLETE, PAUSED, ALREADY_COMPLETE = "complete", "paused", "already complete"
RANGE_SIZE = 8192
"""Molecule numbers per task given to a worker."""
CHUNK_ROWS = 65536
"""Molecules per transaction, about: under half a second of writing.  A
worker's page cache is dropped whenever another worker commits, so each
transaction starts by rereading the key's pages: A4_B8's writes summed to
5.2 s in chunks of 8,192 and 4.0 s in chunks of 65,536 (one run each)."""
IN_PROCESS_BELOW = 150_000
"""Configurations smaller than this are explored in the calling process:
starting worker processes would cost more than it saves."""
WORKER_BUSY_TIMEOUT_MS = 600_000
"""Workers wait for each other's write transactions as long as it takes."""
PROGRESS_EVERY = 0.25
"""Seconds between progress reports during a run."""


class ExploreError(Exception):
    """An exploration that cannot run: the message is one line for the user."""


# -- the lock ----------------------------------------------------------------

_held: set[tuple[str, str]] = set()
_held_guard = threading.Lock()


@contextmanager
def exploration_lock(db_path: Path, config: Config) -> Iterator[None]:
    """Hold the exclusive right to write ``config`` in ``db_path``, or raise ExploreError.

    On a server the lock is the server's own (``server.advisory_lock``),
    shared by explorers on every machine; on a file, an ``fcntl`` lock on
    ``<database>.lock``.
    """
    busy = ExploreError(
        f"{config.name} is being explored by another process on {db_path}; wait for it or stop it first"
    )
    if store.is_server(db_path):
        from bbcore import server

        try:
            with server.advisory_lock(db_path, config, busy):
                yield
        except server.ServerError as error:  # the server could not be reached for the lock
            raise StoreError(str(error)) from None
        return
    key = (str(Path(db_path).resolve()), config.name)
    with _held_guard:
        # fcntl locks do not exclude threads of one process: guard those here.
        if key in _held:
            raise busy
        _held.add(key)
    try:
        fd = os.open(f"{db_path}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as error:
        with _held_guard:
            _held.discard(key)
        raise ExploreError(f"cannot lock {db_path}: {error.strerror}") from None
    offset = config.atoms * 16 + config.width  # one byte per configuration
    try:
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, offset)
        except OSError:
            raise busy from None
        yield
    finally:
        os.close(fd)  # releases the lock
        with _held_guard:
            _held.discard(key)


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
    """
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
    with db.atomic("IMMEDIATE"):
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


def _worker_init(parent: int, halt, write_turn) -> None:
    """Worker initialiser: end with the parent (``bbcore.lifeline``), tune malloc.

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
    keep_freed_memory()


_worker_halt = None
_write_turn = None
_worker_db: str | None = None

WORKER_PRAGMAS = {"busy_timeout": WORKER_BUSY_TIMEOUT_MS, "temp_store": "memory"}
"""A worker's connection, on top of ``store.PRAGMAS``: it waits for the
others' writes as long as it takes, and its staged rows (up to 65,536, about
13 MB) stay in memory: with the default temp_store they spilled past a 2 MB
cache into a temporary file (A4_B8, 12 alternating runs: 0.90x and 0.97x)."""


def _worker_range(db_path: str, config: Config, start: int, stop: int) -> int:
    """``store_range`` in a worker process, which opens the database on its first range.

    Opened here rather than in the initialiser, so that a database the
    worker cannot open is a StoreError sent back with the range, not a
    broken pool.
    """
    global _worker_db
    if _worker_db != db_path:
        open_database(db_path, write=True, pragmas=WORKER_PRAGMAS)
        _worker_db = db_path
    return store_range(config, start, stop, _worker_halt)


# -- the run -------------------------------------------------------------------


COMPACT_ABOVE = 10_000_000
"""Configurations with more molecules than this are explored compact by default."""


def explore(
    config: Config,
    db_path: Path | str | None = None,
    *,
    workers: int | None = None,
    progress: RunProgressCallback | None = None,
    stop: threading.Event | None = None,
    range_size: int | None = None,
    store: str | None = None,
    runner: Runner | None = None,
    shard_root: Path | str | None = None,
    force: bool = False,
) -> str:
    """Explore ``config`` (create or resume) and return COMPLETE, PAUSED or ALREADY_COMPLETE.

    ``store`` is FULL (a row per molecule) or COMPACT (``bbcore.compact``);
    by default a configuration keeps the store it was started with, and a
    new one is full up to ``COMPACT_ABOVE`` molecules, compact above.
    ``workers`` defaults to all cores; small configurations run in-process.
    A compact run's tasks go to ``runner`` when given (a cluster), else to
    a local pool; its shard files to ``shard_root`` (default: next to the
    database).  ``range_size`` overrides the numbers per task (tests).
    A run that cannot finish (``bbcore.feasibility``) is refused before
    anything is written, unless ``force``.
    ``progress`` is called from the calling thread a few times a second and
    at the end.  Raises ExploreError or StoreError with a one-line message.

    ``db`` is opened on ``db_path`` only if it points elsewhere
    (``store.use_database``): the CLI and the TUI open it first, and a run in
    the TUI's worker thread never re-points the database its screens read.
    An in-process run writes through the calling thread's connection; worker
    processes open their own.
    """
    if not fits_int64(config):  # its numbers could not even be stored
        raise ExploreError(f"{config.name} has {config.nb_mol:,} molecules: too many to explore")
    if store is not None and store not in STORES:
        raise ExploreError(f"unknown store {store!r}: choose one of {', '.join(STORES)}")
    path = use_database(db_path)
    stop = stop or threading.Event()
    with exploration_lock(path, config):
        row = config_row(config)
        if row is not None and row.complete:
            return ALREADY_COMPLETE
        mode = _store_mode(config, store)
        if not force:  # before any row is written
            done = stored_count(config) if row else 0
            refused = refusal(config, path, store=mode, workers=workers, done=done)
            if refused:
                raise ExploreError(refused)
        ensure_config(config, mode)
        if mode == COMPACT:
            return _explore_compact(
                config, path, workers, progress, stop, range_size or compact.RANGE_SIZE, runner, shard_root
            )
        return _explore_full(config, path, workers, progress, stop, range_size or RANGE_SIZE)


def full_disk_line(
    config: Config, path: Path, *, command: str | None = None, resume: str | None = None
) -> str:
    """The one line of a run of ``config`` stopped by a full disk (``feasibility.disk_full_line``),
    from what is stored of it: the CLI gives the ``command`` to run again, the TUI its ``resume``."""
    row = config_row(config)
    store = row.store if row is not None else default_store(config)
    return disk_full_line(config, path, stored_count(config), store=store, command=command, resume=resume)


def default_store(config: Config) -> str:
    """The store of a configuration explored for the first time: full up to COMPACT_ABOVE molecules."""
    return COMPACT if config.nb_mol > COMPACT_ABOVE else FULL


def _store_mode(config: Config, requested: str | None) -> str:
    """The store to explore into: the one a configuration was started with, else ``requested``.

    A configuration with nothing stored yet takes the store asked for; one
    started in the other store is refused in one line.
    """
    row = config_row(config)
    started = row is not None and (row.complete or stored_count(config) > 0)
    if not started:
        mode = requested or (row.store if row is not None else default_store(config))
        if row is not None and row.store != mode:
            Configuration.update(store=mode, shards=None).where(Configuration.config == config.name).execute()
        return mode
    if requested is not None and requested != row.store:
        raise ExploreError(
            f"{config.name} was explored with --store {row.store}: reset it first to explore it "
            f"with --store {requested}"
        )
    return row.store


def _explore_full(
    config: Config,
    path: Path,
    workers: int | None,
    progress: RunProgressCallback | None,
    stop: threading.Event,
    range_size: int,
) -> str:
    """A full exploration: every molecule a row (the lock is held)."""
    todo = missing_ranges(config, range_size)
    started, done_before = time.monotonic(), stored_count(config)

    def report(phase: str) -> None:
        if progress:
            done = stored_count(config)
            elapsed = time.monotonic() - started
            rate = (done - done_before) / elapsed if elapsed > 0 else 0.0
            progress(Progress(config.name, done, config.nb_mol, elapsed, rate, phase))

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
            now = time.monotonic()
            rate = done / (now - grouping_started) if now > grouping_started else 0.0
            progress(Progress(config.name, done, total, now - started, rate, "spectrums"))

    finish(config, grouping)
    report("complete")
    return COMPLETE


def finish(config: Config, progress: Callable[[int, int], None] | None = None) -> int:
    """Complete a fully stored configuration: its indexes, its spectral groups, ``complete``.

    The end of every full run, and all of ``bbcore spectrums``.  The caller holds
    the exploration lock.  ``progress`` (molecules grouped, molecules) is
    ``spectra.build_spectrums``'.  Returns how many ambiguous spectra it has.
    """
    count = build_spectrums(config, progress)
    Configuration.update(complete=True, dh2=now()).where(Configuration.config == config.name).execute()
    return count


def _explore_compact(
    config: Config,
    path: Path,
    workers: int | None,
    progress: RunProgressCallback | None,
    stop: threading.Event,
    range_size: int,
    runner: Runner | None,
    shard_root: Path | str | None,
) -> str:
    """A compact exploration (``bbcore.compact``): tracing, then grouping (the lock is held)."""
    row = config_row(config)
    if row.shards is None:
        Configuration.update(shards=compact.shard_count(config)).where(
            Configuration.config == config.name
        ).execute()
    shard_root = _settle_shard_root(config, path, shard_root)
    started, done_before = time.monotonic(), stored_count(config)

    def report(step: compact.Step, phase: str | None = None) -> None:
        if progress:
            elapsed = time.monotonic() - started
            done = step.done - (done_before if step.phase == compact.TRACING else 0)
            rate = done / elapsed if elapsed > 0 and step.phase == compact.TRACING else 0.0
            unit = {compact.TRACING: "molecules", compact.GROUPING: "shards"}.get(step.phase, "families")
            progress(Progress(config.name, step.done, step.total, elapsed, rate, phase or step.phase, unit))

    workers = workers or os.cpu_count() or 1
    keep_freed_memory()
    own_runner = runner is None
    if runner is None:
        small = workers == 1 or config.nb_mol < IN_PROCESS_BELOW
        runner = InlineRunner() if small else LocalRunner(workers)
    try:
        finished = compact.explore_compact(
            config,
            path,
            runner=runner,
            stop=stop,
            report=report,
            range_size=range_size,
            shard_root=shard_root,
        )
    except compact.CompactError as error:
        raise ExploreError(str(error)) from None
    except OSError as error:
        raise ExploreError(f"cannot write the shard files of {config.name}: {error}") from None
    finally:
        if own_runner:
            runner.close()
    report(
        compact.Step(compact.TRACING, stored_count(config), config.nb_mol),
        "complete" if finished else "paused",
    )
    return COMPLETE if finished else PAUSED


def _settle_shard_root(config: Config, path: Path, requested: Path | str | None) -> Path:
    """Where a compact run's shard files go: where it started, else ``requested``, else the default.

    A run that has recorded ranges keeps its shard files where they are:
    resuming it with another ``--shards`` would group without them, so that
    is refused in one line.  The folder is kept in the ``Configurations``
    row (``shard_root``, NULL for the default) for the next run and for
    ``reset``.
    """
    row = config_row(config)
    default = compact.default_shard_root(path).resolve()
    asked = Path(requested).expanduser().resolve() if requested is not None else None
    if stored_count(config) > 0:
        started = Path(row.shard_root) if row.shard_root else default
        if asked is not None and asked != started:
            raise ExploreError(
                f"{config.name} was started with its shard files in {started}: resume it with "
                f"--shards {started}, or reset it"
            )
        return started
    root = asked or default
    stored = None if root == default else str(root)
    if row.shard_root != stored:
        Configuration.update(shard_root=stored).where(Configuration.config == config.name).execute()
    return root


def _run_pool(
    path: Path, config: Config, todo: Iterator[tuple[int, int]], workers: int, stop: threading.Event
) -> Iterator[None]:
    """Store ``todo`` ranges in worker processes, yielding every PROGRESS_EVERY seconds."""
    context = multiprocessing.get_context("spawn")
    halt = context.Event()
    pool = ProcessPoolExecutor(
        workers, mp_context=context, initializer=_worker_init, initargs=(os.getpid(), halt, context.Lock())
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
                running.add(pool.submit(_worker_range, str(path), config, start, stop_))
                pending = next(queue, None)
            if not running:
                break
            finished, running = wait(running, timeout=PROGRESS_EVERY, return_when=FIRST_COMPLETED)
            for future in finished:
                try:
                    future.result()
                except Exception as error:  # a worker's StoreError, pickled back
                    raise StoreError(str(error).splitlines()[0]) from None
            yield
    finally:
        # Queued ranges are dropped; running ones stop after their current chunk.
        halt.set()
        pool.shutdown(wait=True, cancel_futures=True)
