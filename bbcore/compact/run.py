"""The compact store's pipeline, start to end: its three stages one after the other.

``explore_compact`` is what ``bbcore.explore`` calls once it holds the lock
and has chosen the compact store: it settles the shard count and folder,
picks the runner (``bbcore.runner``), turns each stage's ``Step`` into the
``Progress`` every face reads, and runs ``run_stages``: tracing
(``compact.trace``), grouping (``compact.group``), writing
(``compact.write``), then ``complete`` and the shard folder deleted.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

from bbcore.compact.group import group
from bbcore.compact.shards import (
    GROUPING,
    TRACING,
    CompactError,
    Step,
    config_directory,
    default_shard_root,
    delete_folder,
    shard_count,
)
from bbcore.compact.trace import range_size as default_range_size
from bbcore.compact.trace import trace
from bbcore.compact.write import write_result
from bbcore.config import Config
from bbcore.progress import COMPLETE, PAUSED, DiskFull, ExploreError, RunClock, RunProgressCallback
from bbcore.runner import IN_PROCESS_BELOW, InlineRunner, LocalRunner, Runner, keep_freed_memory
from bbcore.store import Configuration, config_row, is_disk_full, now, stored_count


def explore_compact(
    config: Config,
    path: Path,
    workers: int | None,
    progress: RunProgressCallback | None,
    stop: threading.Event,
    range_size: int,
    runner: Runner | None,
    shard_root: Path | str | None,
) -> str:
    """A compact exploration: tracing, grouping, writing (the lock is held); COMPLETE or PAUSED."""
    row = config_row(config)
    if row.shards is None:
        Configuration.update(shards=shard_count(config)).where(Configuration.config == config.name).execute()
    shard_root = _settle_shard_root(config, path, shard_root)
    clock, done_before = RunClock(config.name), stored_count(config)

    def report(step: Step, phase: str | None = None) -> None:
        if progress:
            own = step.done - done_before if step.phase == TRACING else 0  # only molecules have a rate
            unit = {TRACING: "molecules", GROUPING: "shards"}.get(step.phase, "families")
            progress(clock.progress(step.done, step.total, phase or step.phase, own=own, unit=unit))

    workers = workers or os.cpu_count() or 1
    keep_freed_memory()
    own_runner = runner is None
    if runner is None:
        small = workers == 1 or config.nb_mol < IN_PROCESS_BELOW
        runner = InlineRunner() if small else LocalRunner(workers)
    try:
        finished = run_stages(
            config,
            path,
            runner=runner,
            stop=stop,
            report=report,
            range_size=range_size,
            shard_root=shard_root,
        )
    except CompactError as error:
        raise ExploreError(str(error)) from None
    except OSError as error:
        if is_disk_full(error):  # ENOSPC, or numpy's short write ("N requested and M written")
            directory = config_directory(path, config, shard_root)
            raise DiskFull(f"the disk holding {directory} is full: {error}", directory) from None
        raise ExploreError(f"cannot write the shard files of {config.name}: {error}") from None
    finally:
        if own_runner:
            runner.close()
    report(
        Step(TRACING, stored_count(config), config.nb_mol),
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
    default = default_shard_root(path).resolve()
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


def _part_writers(runner: Runner) -> Runner:
    """The runner that writes the families' parts: worker processes of this machine, as many as the
    run's (at most a core each), since the parts are files beside the database; in this process
    when the run's tasks were."""
    if isinstance(runner, InlineRunner):
        return InlineRunner()
    return LocalRunner(min(runner.workers, os.cpu_count() or 1))


def run_stages(
    config: Config,
    db_path: Path | str,
    *,
    runner: Runner | None = None,
    stop: threading.Event | None = None,
    report: Callable[[Step], None] | None = None,
    range_size: int | None = None,
    shard_root: Path | str | None = None,
) -> bool:
    """Trace, then group, then write what is missing of a compact configuration; True when complete.

    The caller holds the configuration's exploration lock and has created
    its ``Configurations`` row (with its shard count: ``start_compact``).
    ``runner`` runs the tasks (default: in this process) and is closed once
    they are all done, before the writing (closing is idempotent: the caller
    closes it again); ``stop`` pauses
    (returns False with everything recorded kept); ``report`` is called
    after each recorded task.  Only this process writes the database.
    """
    stop = stop or threading.Event()
    runner = runner or InlineRunner()
    report = report or (lambda step: None)
    row = config_row(config)
    if row is None or row.shards is None:
        raise CompactError(f"{config.name} is not a compact exploration")
    directory = config_directory(db_path, config, shard_root)
    if not trace(
        config, directory, row.shards, runner, stop, report, range_size or default_range_size(config)
    ):
        return False
    if not group(config, directory, row.shards, runner, stop, report):
        return False
    runner.close()  # the grouping workers' memory is released first
    writers = _part_writers(runner)
    try:
        if not write_result(directory, config, stop, report, writers):
            return False
    finally:
        writers.close()
    Configuration.update(complete=True, dh2=now()).where(Configuration.config == config.name).execute()
    delete_folder(db_path, directory)
    return True
