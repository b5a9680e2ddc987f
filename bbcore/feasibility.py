"""Refuse what cannot finish: an exploration's time and disk, estimated before any work starts.

``bbcore explore A10_B13`` (4 x 10^15 molecules) once grew memory at 400 MB/s
until the machine killed it.  Now ``bbcore.explore.explore`` first
estimates, from the molecule count alone, how long the run would take and
how much disk it would fill, and refuses (one line, nothing written, no
``Configurations`` row) when either is beyond reach:

- the time is over ``MAX_SECONDS`` (a day), at the measured rate of the
  store mode times the workers (the local processes, or a cluster's
  threads);
- the disk is over the space free on the database's file system.

``--force`` (``explore(..., force=True)``) runs it anyway: the run is
resumable, so a user who means it can spread it over several sessions.
The TUI refuses with the same line and has no force: that is for the
command line.  A run being resumed is estimated on the molecules it has
left.

The rates are figures measured on the 2-core development machine (a full
store's ``FULL_RATE``; a compact store's time and disk by stage, from its
ambiguous share: ``compact_seconds``, ``compact_disk``, their errors against
the measured runs in docs/larger.md): an estimate only decides whether to start, and
the run's own progress gives the real ETA.
"""

from __future__ import annotations

import math
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from bbcore.config import Config, exploring_refusal
from bbcore.store import is_server
from bbcore.words import plural

MAX_SECONDS = 24 * 3600
"""Runs estimated longer than this are refused unless forced."""

FULL_RATE = 15_000
"""Molecules per second per worker of a full store, end to end (tracing, storing, grouping):
A6_B8 (75 M molecules) took 29.6 min to store and 11 min to group and index on 2 cores, 30,800
molecules/s end to end, 15,400 a worker; smaller configurations go faster (A4_B8 130,700/s, A5_B8
110,000/s on the same 2 cores) because the rate falls as the file grows, so the large
configuration's rate is the one to plan with."""

COMPACT_TRACE_SECONDS = 3.0e-9
"""A compact run's tracing: seconds per molecule per worker, per squared cell of the box's width
(a molecule traces its 4W rays, each crossing up to about W cells: a width sweep on 2 quiet cores,
2026-12-02, gave 2.40e-9 for A7_B8 and 2.46e-9 for A6_B10, and the quiet runs beside the C
baseline 3.44e-9 for A7_B8 and 3.26e-9 for A8_B8, the machine slower then: docs/larger.md,
"The estimate")."""

COMPACT_GROUP_SECONDS = 2.6e-7
"""A compact run's grouping: seconds per ambiguous molecule per worker (A8_B8: 406 s on 2 quiet
workers for its 3.07 G ambiguous molecules, 2.64e-7; A7_B8: 2.2e-7; the keys of the others are
settled without tracing)."""

COMPACT_WRITE_SECONDS = 1.3e-7
"""A compact run's writing and family indexes: seconds per ambiguous molecule, on the driver's one
core whatever the workers (A7_B8: 1.31e-7, 35 s for 270 M; A8_B8: 1.03e-7)."""

COMPACT_DISK_PER_MOLECULE, COMPACT_DISK_PER_AMBIGUOUS = 4.0, 2.5
"""A compact run's peak disk: bytes per molecule, plus bytes per ambiguous molecule.  The records
(16 bytes per canonical molecule: 2 a molecule) and the ranges' profile files are there for every
molecule; the shards' results and the database grow with the ambiguous ones.  Fitted as an upper
envelope of the peaks measured (docs/larger.md, "The estimate"): never under one of them (A8_B8's
25.0 GB, sampled every 0.2 s on 2026-12-02, set the second figure), at most 55% over (A6_B10)."""

AMBIGUOUS_MOLECULES = {
    (3, 5): 16,
    (3, 6): 24,
    (3, 7): 32,
    (3, 8): 40,
    (3, 10): 56,
    (4, 5): 665,
    (4, 6): 1_636,
    (4, 7): 2_868,
    (4, 8): 4_532,
    (4, 9): 6_676,
    (4, 10): 9_348,
    (5, 5): 13_194,
    (5, 6): 61_952,
    (5, 7): 176_735,
    (5, 8): 397_964,
    (5, 9): 773_819,
    (5, 10): 1_363_052,
    (6, 6): 846_628,
    (6, 7): 4_176_912,
    (6, 8): 14_409_146,
    (6, 10): 92_115_864,
    (7, 7): 49_920_112,
    (7, 8): 270_332_216,
    (7, 10): 3_403_357_640,
    (8, 8): 3_071_387_164,
}
"""(atoms, width): the ambiguous molecules of the square configurations explored whole (the
"Ambiguous molecules" line of ``bbcore report``): the grouping's and the writing's work, and the
disk of the results, go with them."""


def ambiguous_share(config: Config) -> float:
    """The share of ``config``'s molecules that are ambiguous: measured (``AMBIGUOUS_MOLECULES``),
    else extrapolated, else 1 (the most there can be).

    With as many atoms, the share falls as the box widens, by a ratio a step (4 atoms: 0.53, 0.49,
    0.53, 0.56, 0.60 from width 5 to 10).  So a width not measured takes the share of the widest
    measured below it, times the ratio measured there (from the width before), once per cell of
    width more.  Each recorded configuration with two narrower ones recorded, predicted from those
    alone, is within -15% and +18% of its share (``tests/test_feasibility.py``).  With no ratio
    measured there, the share is the widest's below; with no width measured at or below it, 1.
    """
    atoms, width = config.atoms, config.width
    below = sorted(w for (n, w) in AMBIGUOUS_MOLECULES if n == atoms and w <= width)
    if not below:
        return 1.0

    def share(w: int) -> float:
        return AMBIGUOUS_MOLECULES[atoms, w] / Config(atoms, w).nb_mol

    widest = below[-1]
    ratio = share(widest) / share(widest - 1) if widest - 1 in below else 1.0
    return min(1.0, share(widest) * ratio ** (width - widest))


FULL_BYTES_BASE, FULL_BYTES_PER_POSITION = 60, 7.5
"""Bytes of database per molecule in the full store: a row holds the
molecule and its spectrum (one character a position) and the spectrum
index repeats it.  Measured, file size over molecules: A4_B8 (32
positions) 290 B, A6_B8 303 B, A3_B13 (52 positions) 438 B; the model
gives 300, 300 and 450."""

FULL_INDEX_BYTES_BASE, FULL_INDEX_BYTES_PER_POSITION = 20, 1
"""Of ``FULL_BYTES_*``, the bytes per molecule of a configuration's two indexes (its spectrum
and canonical number: ``store.create_config_indexes``), built once its molecules are all
stored.  Measured (``dbstat``): A4_B7 (28 positions) 48.4 B, A3_B10 (40 positions) 60.4 B;
the model gives 48 and 60.  A build needs them about twice at its peak: an index goes into
the WAL (one transaction), then into the file (A4_B7's 10.3 MB of indexes needed between 14
and 17 MB more than its rows, on a tmpfs)."""

COMPACT_TRACE_BYTES = 2
"""Of a compact run's peak disk, what the tracing writes (16 bytes of record per canonical
molecule); the rest is the grouping's and the database's, written after the last molecule is
traced."""


def compact_disk(config: Config, molecules: int) -> int:
    """The peak disk of a compact run of ``config`` with ``molecules`` of it left."""
    per_molecule = COMPACT_DISK_PER_MOLECULE + COMPACT_DISK_PER_AMBIGUOUS * ambiguous_share(config)
    return int(molecules * per_molecule)


def compact_seconds(config: Config, molecules: int, workers: int) -> float:
    """The time of a compact run of ``config`` with ``molecules`` of it left, on ``workers``:
    tracing and grouping shared by the workers, writing on one core."""
    ambiguous = molecules * ambiguous_share(config)
    shared = molecules * COMPACT_TRACE_SECONDS * config.width**2 + ambiguous * COMPACT_GROUP_SECONDS
    return shared / workers + ambiguous * COMPACT_WRITE_SECONDS


def full_bytes(config: Config) -> float:
    """A full store's bytes per molecule: its row and its indexes."""
    return FULL_BYTES_BASE + FULL_BYTES_PER_POSITION * config.positions


@dataclass(frozen=True)
class Estimate:
    """What a run of ``molecules`` would cost with ``workers`` in the ``store`` mode."""

    config: Config
    store: str
    workers: int
    molecules: int
    seconds: float
    disk: int  # bytes

    def describe(self) -> str:
        """``about 2,300 years and 1.2 PB of disk``."""
        return f"about {duration(self.seconds)} and {size(self.disk)} of disk"


def cores() -> int:
    """This machine's cores: a local run's default workers, and the most it takes
    (``bbcore explore --workers``: more processes than cores only share them)."""
    return os.cpu_count() or 1


def estimate(config: Config, store: str = "full", workers: int | None = None, done: int = 0) -> Estimate:
    """The time and disk of exploring what is left of ``config`` (``done`` molecules are stored)."""
    workers = workers or cores()
    molecules = max(config.nb_mol - done, 0)
    if store == "full":
        seconds, disk = molecules / (FULL_RATE * workers), int(molecules * full_bytes(config))
    else:
        seconds, disk = compact_seconds(config, molecules, workers), compact_disk(config, molecules)
    return Estimate(config, store, workers, molecules, seconds, disk)


def free_space(path: Path) -> int:
    """Bytes free for us on the file system of ``path`` (its nearest existing folder)."""
    folder = Path(path).resolve()
    while not folder.exists() or not folder.is_dir():
        folder = folder.parent
    return shutil.disk_usage(folder).free


def refusal(
    config: Config,
    db_path: Path,
    *,
    store: str = "full",
    workers: int | None = None,
    done: int = 0,
    brief: bool = False,
) -> str | None:
    """One line saying why exploring ``config`` cannot finish, or None when it can.

    The command line's line gives the figures and ends with what to do
    about it (``--force``); ``brief`` is the TUI's, which fits 80 columns.
    """
    refused = exploring_refusal(config)
    if refused:
        return refused
    cost = estimate(config, store, workers, done)
    # A server's disk is not ours to measure: only the time is judged (the server says when it is full).
    free = cost.disk if is_server(db_path) else free_space(db_path)
    over_time, over_disk = cost.seconds > MAX_SECONDS, cost.disk > free
    if not (over_time or over_disk):
        return None
    if brief:
        why = ["over a day"] if over_time else []
        why += [f"{size(free)} free"] if over_disk else []
        return (
            f"{config.name} cannot finish: about {duration(cost.seconds)} and {size(cost.disk)} "
            f"({', '.join(why)})"
        )
    reasons = [f"over the limit of {duration(MAX_SECONDS)}"] if over_time else []
    reasons += [f"{size(free)} free at {Path(db_path).resolve().parent}"] if over_disk else []
    return (
        f"{config.name} cannot finish here: {cost.molecules:,} molecules would take "
        f"{cost.describe()} with {plural(cost.workers, 'worker')} ({' and '.join(reasons)}); "
        "--force runs it anyway"
    )


def duration(seconds: float) -> str:
    """A rough duration: ``40 s``, ``12 min``, ``5.2 hours``, ``3 days``, ``2,300 years``.

    Seconds are rounded up, so that an estimate never promises ``0 s`` (issue #21:
    10^20 workers once made A10_B13 "about 0 s"): under a second is ``1 s``.
    """
    for unit, length in (("years", 365.25 * 86400), ("days", 86400), ("hours", 3600), ("min", 60)):
        if seconds >= 2 * length:
            value = seconds / length
            return f"{value:,.0f} {unit}" if value >= 10 else f"{value:.1f} {unit}"
    return f"{max(math.ceil(seconds), 1)} s"


def size(count: int) -> str:
    """Bytes, in decimal units: ``950 MB``, ``1.2 PB``."""
    value = float(count)
    for unit in ("B", "kB", "MB", "GB", "TB", "PB", "EB", "ZB"):
        if value < 1000 or unit == "ZB":
            return f"{value:,.0f} {unit}" if value >= 10 or unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    raise AssertionError("unreachable")


def bytes_left(config: Config, store: str, done: int) -> tuple[int, str]:
    """About how many bytes the rest of a run of ``config`` writes, ``done`` molecules stored, and
    what for (``disk_full_line``): the molecules left, and what finishes the run, which comes after
    the last of them (a full store's indexes, a compact store's grouping and database rows)."""
    left = max(config.nb_mol - done, 0)
    if store == "full":
        index = FULL_INDEX_BYTES_BASE + FULL_INDEX_BYTES_PER_POSITION * config.positions
        rows = full_bytes(config) - index
        needed, finish = int(left * rows + 2 * config.nb_mol * index), "its indexes"
    else:
        after = compact_disk(config, config.nb_mol) - COMPACT_TRACE_BYTES * config.nb_mol
        needed = left * COMPACT_TRACE_BYTES + after
        finish = "its grouping and the database's rows"
    return needed, (f"its {left:,} molecules left and {finish}" if left else finish)


def disk_full_line(
    config: Config,
    db_path: Path,
    done: int,
    *,
    store: str = "full",
    command: str | None = None,
    resume: str | None = None,
    folder: Path | None = None,
) -> str:
    """The one line saying that the disk filled during a run of ``config``: where (``folder``, else the
    database's), roughly
    how much more the rest of the run needs (``bytes_left`` in its ``store``), and that the
    same run resumes (``command`` to run again, or ``resume``: the TUI's "press s").  What
    was stored is whole: every range is one transaction.  On a server (``db_path`` a URL)
    the disk is the server's: it is not ours to measure, and it is freed there."""
    needed, what = bytes_left(config, store, done)
    kept = f"{done:,} are" if done < config.nb_mol else f"All {done:,} molecules are"
    again = resume or (f"run '{command}' again to resume" if command else "start it again to resume")
    if is_server(db_path) and folder is None:
        return (
            f"the server's disk is full ({db_path}): {config.name} needs about {size(needed)} more "
            f"(an estimate) for {what}. {kept} stored and kept; "
            f"free some space on the server, then {again}"
        )
    if folder is not None:  # a compact run's shard files (``progress.DiskFull``)
        return (
            f"the disk is full at {folder} ({size(free_space(folder))} free): {config.name} needs about "
            f"{size(needed)} more (an estimate) for its shard files and the rest of its run. "
            f"{done:,} molecules are traced and kept; free some space there, then {again}"
        )
    folder = Path(db_path).resolve().parent
    return (
        f"the disk is full at {folder} ({size(free_space(folder))} free): {config.name} needs about "
        f"{size(needed)} more (an estimate) for {what}. {kept} "
        f"stored and kept; free some space or move {Path(db_path).name} to a larger disk, then {again}"
    )
