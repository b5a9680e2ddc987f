"""The ``bbcore`` commands that run and inspect explorations.

``explore``, ``reset``, ``spectrums``, ``migrate``, ``status``, ``show`` and ``groups``.
Progress goes to stderr: one line redrawn in place on a terminal, a line
every 10% otherwise (logs, CI).  Ctrl-C or SIGTERM during ``explore``
pauses: the ranges under way are stored, then the command says how far it
got and exits with status 130; running it again resumes.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path

from bbcore import families, queries
from bbcore.cli.common import (
    CLIError,
    ProgressPrinter,
    WholeNumber,
    add_command,
    add_config_argument,
    copy_unfinished,
    format_table,
    open_store,
    require_stored,
)
from bbcore.cluster import CLUSTER_ENV, cluster_address
from bbcore.compact.shards import default_shard_root, forget_shards
from bbcore.config import Config, exploring_refusal
from bbcore.explore import explore, full_disk_line
from bbcore.feasibility import cores
from bbcore.full import finish
from bbcore.lock import exploration_lock
from bbcore.progress import ALREADY_COMPLETE, COMPLETE, DiskFull, ExploreError, RunClock
from bbcore.ranges import fully_stored
from bbcore.store import (
    COMPACT,
    DATABASE_ERRORS,
    FULL,
    STORES,
    Configuration,
    is_compact,
    is_disk_full,
    reset_config,
    stored_count,
)
from bbcore.words import plural


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add explore, reset, spectrums and status."""
    p = add_command(
        subparsers,
        "explore",
        description="Compute and store every molecule of a configuration, "
        "then its spectral groups. Ctrl-C pauses; run again to resume. "
        "A run estimated to take over a day, or more disk than is free, is refused before it starts.",
    )
    add_config_argument(p)
    p.add_argument(
        "--workers",
        type=WholeNumber(1, None),  # checked against the cores by run_explore, for a local run only
        default=None,
        metavar="N",
        help=f"worker processes, 1 to this machine's cores ({cores()}; the default); "
        "not with --cluster, whose workers are its own",
    )
    p.add_argument(
        "--store",
        choices=STORES,
        default=None,
        help="full: a row per molecule; compact: only the spectral groups and the report's figures, "
        "molecules computed from their numbers (default: full up to 10 million molecules, compact above; "
        "a configuration keeps the store it was started with)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="explore even when the estimate says it cannot finish (over a day, or more disk than is free)",
    )
    p.add_argument(
        "--cluster",
        metavar="ADDRESS",
        default=None,
        help="run the compact exploration's tasks on the Dask scheduler at ADDRESS, "
        f"e.g. tcp://10.0.0.5:8786 (default: ${CLUSTER_ENV}; needs the 'cluster' extra)",
    )
    p.add_argument(
        "--shards",
        metavar="DIR",
        type=Path,
        default=None,
        help="folder for a compact exploration's shard files, which every cluster worker must see "
        "(default: DATABASE.shards next to the database)",
    )
    p.set_defaults(handler=run_explore)

    p = add_command(
        subparsers,
        "reset",
        description="Delete every stored row of a configuration.",
    )
    add_config_argument(p)
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    p.set_defaults(handler=run_reset)

    p = add_command(
        subparsers,
        "spectrums",
        description="Build the spectral groups (table Spectrums) of a configuration whose molecules "
        "are all stored, again from its Molecules rows, and mark it complete. An exploration does "
        "this by itself; this command mends a file whose groups were lost or built by an older bbcore.",
    )
    add_config_argument(p)
    p.set_defaults(handler=run_spectrums)

    p = add_command(
        subparsers,
        "migrate",
        description="Move every compact configuration of the file that an older bbtui stored "
        "(one Spectrums row per ambiguous spectrum, and FamilyMolecules) into Families, one row "
        "per family, in place, with progress; their readers refuse them until then. Stopped at "
        "any moment, it resumes where it stopped when run again.",
    )
    p.set_defaults(handler=run_migrate)

    p = add_command(
        subparsers,
        "status",
        description="List the configurations the database knows: molecules stored of the total, "
        "the state (a percentage while partly explored, complete, not started) and, once complete, "
        "the ambiguous spectra and their families.",
    )
    p.set_defaults(handler=run_status)


PAUSE_SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""What pauses a run: Ctrl-C, and SIGTERM (``timeout``, systemd, a batch scheduler), the same
way: the ranges under way are stored, the workers stop (they ignore both signals:
``bbcore.explore``'s and ``bbcore.runner``'s worker initialisers), one line, status 130.
A second Ctrl-C aborts; a second SIGTERM does not (``timeout`` sends two at once: one to
the command, one to its process group), SIGKILL does, safely (every range is a transaction)."""


def run_explore(args: argparse.Namespace) -> int:
    """Explore (or resume) a configuration; Ctrl-C or SIGTERM pauses it."""
    config: Config = args.config
    refused = exploring_refusal(config)  # before the database is made
    if refused:
        raise CLIError(refused)
    if args.workers is not None and args.workers > cores() and cluster_address(args.cluster) is None:
        raise CLIError(
            f"--workers {args.workers}: this machine has {plural(cores(), 'core')}, "
            f"so a run takes 1 to {cores()} worker processes (all of them without --workers)"
        )
    path = open_store(args, create=True, write=True)
    stop = threading.Event()
    printer = ProgressPrinter()

    def pause(signum, frame) -> None:
        if stop.is_set():
            if signum == signal.SIGINT:
                raise KeyboardInterrupt
            return  # timeout sends SIGTERM to the command and to its group: the same request twice
        stop.set()
        if signum == signal.SIGINT:
            sys.stderr.write("\npausing: storing what is under way (Ctrl-C again to abort)\n")
        else:
            sys.stderr.write("\nSIGTERM: pausing: storing what is under way (Ctrl-C or SIGKILL aborts)\n")

    runner = connect_cluster(args, path)
    previous = {number: signal.signal(number, pause) for number in PAUSE_SIGNALS}
    try:
        status = explore(
            config,
            path,
            workers=runner.workers if runner else args.workers,
            progress=printer,
            stop=stop,
            force=args.force,
            store=COMPACT if runner else args.store,
            runner=runner,
            shard_root=args.shards,
        )
    except DiskFull as error:  # a compact run's shard files
        command = f"bbcore --db {path} explore {config.name}"
        raise CLIError(full_disk_line(config, path, command=command, folder=error.folder)) from None
    except ExploreError as error:
        raise CLIError(str(error)) from None
    except DATABASE_ERRORS as error:
        if not is_disk_full(error):
            raise
        command = f"bbcore --db {path} explore {config.name}"
        raise CLIError(full_disk_line(config, path, command=command)) from None
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        printer.close()
        if runner is not None:
            runner.close()
    if status == ALREADY_COMPLETE:
        print(f"{config.name} is already complete in {path}: nothing to do")
        return 0
    if status == COMPLETE:
        state = queries.config_state(config)
        print(
            f"{config.name} complete: {state.done:,} molecules, {state.ambiguous:,} ambiguous "
            f"spectra ({plural(state.families, 'family', 'families')} up to symmetry) in {path}"
        )
        return 0
    traced = "traced" if is_compact(config) else "stored"
    print(
        f"{config.name} paused at {stored_count(config):,}/{config.nb_mol:,} molecules {traced}; "
        f"run 'bbcore explore {config.name}' again to resume"
    )
    return 130


def connect_cluster(args: argparse.Namespace, path: Path):
    """The DaskRunner of ``--cluster`` (or ``$BBTUI_CLUSTER``), connected; None without one.

    A cluster runs the compact store only, on its own workers: ``--store
    full`` or ``--workers`` with it is an error.  ``bbcore.cluster`` imports
    dask only here, when a cluster is asked for.
    """
    from bbcore.cluster import DaskRunner

    address = cluster_address(args.cluster)
    if address is None:
        return None
    if getattr(args, "store", None) == FULL:
        raise CLIError("--cluster runs the compact store only: leave out --store full")
    if getattr(args, "workers", None) is not None:
        raise CLIError(
            "--workers sizes the local pool; a cluster has its own workers (dask worker --nworkers): "
            "leave out --workers"
        )
    row = Configuration.get_or_none(Configuration.config == args.config.name)
    shard_root = args.shards or (row and row.shard_root) or default_shard_root(path)
    sys.stderr.write(f"connecting to the Dask scheduler at {address}...\n")
    try:
        runner = DaskRunner(address, shard_root)
    except ExploreError as error:  # a ClusterError: one line
        raise CLIError(str(error)) from None
    sys.stderr.write(
        f"{runner.workers} worker threads on the Dask scheduler at {address}; shard files in {shard_root}\n"
    )
    return runner


def run_reset(args: argparse.Namespace) -> int:
    """Delete a configuration's rows, after confirmation on a terminal."""
    config: Config = args.config
    path = open_store(args, write=True)
    if Configuration.get_or_none(Configuration.config == config.name) is None:
        raise CLIError(f"{config.name} is not in {path}: nothing to reset")
    if not args.yes:
        if not sys.stdin.isatty():
            raise CLIError("refusing to delete without confirmation: pass --yes")
        answer = input(
            f"Delete all {stored_count(config):,} stored molecules of {config.name} from {path}? [y/N] "
        )
        if answer.strip().lower() not in ("y", "yes"):
            print("nothing deleted")
            return 1
    try:
        with exploration_lock(path, config):
            shard_root = Configuration.get_by_id(config.name).shard_root  # None: the default
            deleted = reset_config(config)
            forget_shards(path, config, shard_root)
    except ExploreError as error:
        raise CLIError(str(error)) from None
    print(f"{config.name}: {deleted:,} molecules deleted")
    return 0


def run_spectrums(args: argparse.Namespace) -> int:
    """Rebuild the Spectrums rows of a fully stored configuration."""
    config: Config = args.config
    path = open_store(args, write=True)
    require_stored(config)
    if is_compact(config):
        raise CLIError(
            f"{config.name} is a compact store: 'bbcore explore {config.name}' makes its spectral groups"
        )
    try:
        with exploration_lock(path, config):
            if not fully_stored(config):
                raise CLIError(
                    f"{config.name} is not fully explored: run 'bbcore explore {config.name}' first"
                )
            printer, clock = ProgressPrinter(), RunClock(config.name)

            def grouping(done: int, total: int) -> None:
                printer(clock.progress(done, total, "spectrums"))

            try:
                count = finish(config, grouping)
            finally:
                printer.close()
    except ExploreError as error:
        raise CLIError(str(error)) from None
    print(f"{config.name}: {count:,} ambiguous spectra")
    return 0


def run_migrate(args: argparse.Namespace) -> int:
    """Migrate every compact configuration stored by an older bbtui."""
    path = open_store(args, write=True)
    configs = [c for c in (state.config for state in queries.config_states()) if families.needs_migration(c)]
    if not configs:
        print(f"{path}: nothing to migrate")
        return 0
    for config in configs:
        try:
            with exploration_lock(path, config):
                count = _migrate(config)
        except ExploreError as error:
            raise CLIError(str(error)) from None
        print(f"{config.name}: {plural(count, 'family', 'families')} migrated")
    return 0


def _migrate(config: Config) -> int:
    """Migrate one configuration, its progress on stderr (``families.migrate``)."""
    printer, clock = ProgressPrinter(), RunClock(config.name)

    def moved(done: int, total: int) -> None:
        printer(clock.progress(done, total, "migrating", unit="families"))

    try:
        return families.migrate(config, moved)
    finally:
        printer.close()


def run_status(args: argparse.Namespace) -> int:
    """A table of the configurations in the database."""
    path = open_store(args)
    states = queries.config_states()
    print(f"database: {path}")
    if not states:
        print("no configuration yet: try 'bbcore explore A4_B6'")
        return 0
    rows = [
        (
            s.config.name,
            f"{s.total:,}",
            f"{s.done:,}",
            s.label,
            s.store,
            f"{s.families:,}" if s.complete else "",
            f"{s.ambiguous:,}" if s.complete else "",
        )
        for s in states
    ]
    # families (spectral groups up to symmetry) and spectra (with symmetry), as the report names them
    print(format_table(("config", "molecules", "stored", "state", "store", "families", "spectra"), rows))
    for state in states:
        if state.copying:
            print(copy_unfinished(state.config))
    return 0
