"""Exploring a configuration: the entry that checks, locks and picks a pipeline.

``explore(config, db_path, progress=..., stop=...)`` is the library function
the CLI and the TUI drive.  It refuses what cannot run (numbers past 64
bits, an unknown store, a run that cannot finish: ``bbcore.feasibility``),
takes the configuration's lock (``bbcore.lock``), chooses its store (the one
it was started with, else the one asked for, else full up to
``COMPACT_ABOVE`` molecules), and hands the run to that store's pipeline:
``bbcore.full`` (a row per molecule) or ``bbcore.compact.run`` (trace,
group, write).  Both share what lies below them: the resume ranges
(``bbcore.ranges``), the progress report and outcomes (``bbcore.progress``),
where tasks run (``bbcore.runner``).
"""

from __future__ import annotations

import threading
from pathlib import Path

from bbcore.compact.run import explore_compact
from bbcore.compact.trace import range_size as compact_range_size
from bbcore.config import Config, exploring_refusal
from bbcore.feasibility import disk_full_line, refusal
from bbcore.full import RANGE_SIZE, explore_full
from bbcore.lock import exploration_lock
from bbcore.numbering import fits_int64
from bbcore.progress import ALREADY_COMPLETE, ExploreError, RunProgressCallback
from bbcore.runner import Runner
from bbcore.store import (
    COMPACT,
    FULL,
    STORES,
    Configuration,
    config_row,
    ensure_config,
    stored_count,
    unfinished_copy,
    use_database,
)

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

    ``store`` is FULL (a row per molecule: ``bbcore.full``) or COMPACT (``bbcore.compact``);
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
    refused = exploring_refusal(config)
    if refused:
        raise ExploreError(refused)
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
        if unfinished_copy(row):
            raise ExploreError(
                f"a copy of {config.name} into {path} is not finished: run the same 'bbcore copy' "
                f"again to finish it, or 'bbcore reset {config.name}' to delete it"
            )
        mode = _store_mode(config, store)
        if not force:  # before any row is written
            done = stored_count(config) if row else 0
            refused = refusal(config, path, store=mode, workers=workers, done=done)
            if refused:
                raise ExploreError(refused)
        ensure_config(config, mode)
        if mode == COMPACT:
            return explore_compact(
                config,
                path,
                workers,
                progress,
                stop,
                range_size or compact_range_size(config),
                runner,
                shard_root,
            )
        return explore_full(config, path, workers, progress, stop, range_size or RANGE_SIZE)


def full_disk_line(
    config: Config,
    path: Path,
    *,
    command: str | None = None,
    resume: str | None = None,
    folder: Path | None = None,
) -> str:
    """The one line of a run of ``config`` stopped by a full disk (``feasibility.disk_full_line``),
    from what is stored of it: the CLI gives the ``command`` to run again, the TUI its ``resume``;
    ``folder`` is the full one when it is not the database's (a compact run's shard files: ``DiskFull``)."""
    row = config_row(config)
    store = row.store if row is not None else default_store(config)
    return disk_full_line(
        config, path, stored_count(config), store=store, command=command, resume=resume, folder=folder
    )


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
