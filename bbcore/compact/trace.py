"""Stage 1 of a compact exploration, tracing: every canonical molecule's record in the shard files.

``trace_range`` is the task a runner runs (``bbcore.runner``): it traces the
canonical molecules of a range of numbers, writes their records to the shard
folders and returns the range's profile.  ``trace`` drives the stage: it
gives the runner the ranges not recorded yet, keeps each range's profile in
a file and records the range in ``ExploredRanges``, in that order, and once
every range is traced sums the profiles into ``Profiles``.
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bbcore import engine, sql
from bbcore.compact.shards import (
    RECORD,
    TRACED,
    TRACING,
    CompactError,
    Step,
    range_name,
    range_start,
    record_number_bits,
    shard_folder,
)
from bbcore.config import Config
from bbcore.ranges import missing_ranges
from bbcore.runner import Runner, check_halt
from bbcore.store import ExploredRange, Profile, insert_rows, now, stored_count, write_transaction

KEYING = "keying"
"""A file in a configuration's shard folder: how its records are keyed (``run_keying``)."""
RANGE_SIZE = 1 << 18
"""The fewest molecule numbers per tracing task (``range_size``)."""
LARGEST_RANGE = 1 << 22
"""The most molecule numbers per tracing task: a few seconds (a pause comes within a
``TRACE_BATCH``), and a profile of a few hundred thousand rows."""
RANGES_AT_LEAST = 128
"""Tracing tasks a configuration is cut into, at least, while ranges are larger than
``RANGE_SIZE``: enough for every worker to stay busy to the end."""


def range_size(config: Config) -> int:
    """Molecule numbers per tracing task: a power of two from ``RANGE_SIZE`` to ``LARGEST_RANGE``,
    about ``nb_mol / RANGES_AT_LEAST``.

    Each task writes a file per shard, a profile and a row, and each profile
    is summed at the end: A7_B8 in ranges of 2^18 was 2,370 tasks of 0.05 s,
    and summing their profiles took minutes.  A5_B8 keeps 30 tasks of 2^18.
    """
    size = RANGE_SIZE
    while size < LARGEST_RANGE and size * 2 * RANGES_AT_LEAST <= config.nb_mol:
        size *= 2
    return size


TRACE_BATCH = 1 << 16
"""Numbers traced at a time within a range, which bounds a task's memory."""

PROFILE_WIDTH = 11
"""A profile row: the 9 statistics, the molecules, the lowest number."""
PROFILE_ROWS = 1 << 19
"""Profile rows of a range held before they are summed: its memory, about 50 MB."""
PROFILES_AT_ONCE = 16
"""Range profiles summed at a time at the end of the tracing (each has up to ~100,000 rows)."""
PROFILE_FILE = np.dtype([("statistics", np.uint16, (9,)), ("molecules", np.uint32), ("lowest", np.uint32)])
"""A range's profile row on disk, 26 bytes instead of 88: its statistics (rays of a class <= 4W, a
length or turns <= 2W^2: under 2^16 up to W = 180), its molecules (at most 8 per number of a range
of at most ``LARGEST_RANGE``) and its lowest number less the range's start (in the range).  The
profile files were about a third of the tracing's disk (A7_B10: 0.98 bytes a molecule beside the
records' 2), kept until every range is traced."""
PROFILE_FIELDS = (
    "absorbed_number",
    "reflected_number",
    "out_number",
    "absorbed_max_length",
    "reflected_max_length",
    "out_max_length",
    "absorbed_max_turns",
    "reflected_max_turns",
    "out_max_turns",
)
"""``statistics.PROFILE_COLUMNS``, in the order ``engine.ray_profile`` gives them."""


@dataclass(frozen=True)
class TraceJob:
    """Trace the canonical molecules numbered start..stop-1 into the shards under ``directory``."""

    config: Config
    start: int
    stop: int
    shards: int
    directory: str
    keying: str = engine.LEXICAL  # the run's (``run_keying``)


@dataclass(frozen=True)
class TraceResult:
    """What a traced range gives back: its molecules, records and profile."""

    molecules: int  # every molecule of the range's enantiomer groups
    records: int  # canonical molecules
    profile: np.ndarray  # (p, PROFILE_WIDTH) int64


def trace_range(job: TraceJob) -> TraceResult:
    """Stage 1: trace a range, write its records to the shard files, return its profile.

    Each shard's file is written under a temporary name and renamed, so a
    file is whole or absent; running the job again writes the same files.
    """
    config = job.config
    keys, numbers, profiles = [], [], []
    molecules = pending = 0
    for low in range(job.start, job.stop, TRACE_BATCH):
        check_halt()
        atoms, own = engine.canonical_molecules(config, low, min(low + TRACE_BATCH, job.stop))
        if not len(own):
            continue
        partner, length, turns = engine.trace_batch(config, atoms)
        key, orbit, shared, lowest = engine.spectrum_keys(config, atoms, partner, job.keying)
        keys.append(key)
        numbers.append(record_number_bits(config, own, shared, lowest))
        profiles.append(_profile(engine.ray_profile(partner, length, turns), orbit, own))
        pending += len(own)
        if pending >= PROFILE_ROWS:  # summed now and then: a dense range's rows held 350 MB
            profiles, pending = [merge_profiles(profiles)], 0
        molecules += int(orbit.sum(dtype=np.int64))
    records = np.empty(sum(len(k) for k in keys), dtype=RECORD)
    if keys:
        records["key"] = np.concatenate(keys)
        records["number"] = np.concatenate(numbers)
    _write_shards(job, records)
    profile = merge_profiles(profiles)
    return TraceResult(molecules, len(records), profile)


def _shard_of(keys: np.ndarray, shards: int) -> np.ndarray:
    """The shard of each key: its low bits.

    Not its top bits: a key of a run begun before 2026-12-02 is the smallest
    of up to 8 hashes, so its top bits are mostly zeros (A6_B8's first shard
    of 4 held 90% of the records).
    """
    return (keys & np.uint64(shards - 1)).astype(np.int64)


def _write_shards(job: TraceJob, records: np.ndarray) -> None:
    """Each shard's part of the records, in its folder (whole or absent)."""
    shard = _shard_of(records["key"], job.shards).astype(np.uint16)  # MAX_SHARDS: a radix sort
    order = np.argsort(shard, kind="stable")
    present, firsts = np.unique(shard[order], return_index=True)
    bounds = np.r_[firsts, len(order)]
    name = range_name(job.start, job.stop)
    for s, first, last in zip(present.tolist(), bounds[:-1], bounds[1:]):
        part = records[order[first:last]]
        folder = shard_folder(job.directory, s)
        folder.mkdir(parents=True, exist_ok=True)
        temporary = folder / f".{name}.{os.getpid()}.part"
        with open(temporary, "wb") as out:
            part.tofile(out)
        os.replace(temporary, folder / name)


def _profile(stats: np.ndarray, orbit: np.ndarray, own: np.ndarray) -> np.ndarray:
    """Profile rows of traced canonical molecules: each counts its whole enantiomer group.

    A group's lowest number is its canonical molecule's, and images share
    their canonical molecule's statistics.  Summed every ``PROFILE_ROWS``
    rows (``merge_profiles``), not every batch: a batch's molecules rarely
    share all 9 statistics, so summing each batch only sorted the rows twice.
    """
    rows = np.empty((len(own), PROFILE_WIDTH), dtype=np.int64)
    rows[:, :9] = stats
    rows[:, 9] = orbit
    rows[:, 10] = own
    return rows


def merge_profiles(parts: list[np.ndarray]) -> np.ndarray:
    """Profile rows summed by statistics: molecules added, lowest numbers' minimum.

    The 9 statistics are packed in one int64 (mixed radix, the bounds of
    ``statistics.profile_bases``: rays of a class <= 4W, a length or turns
    <= 2 W^2) when it fits (W <= 10): sorting one number is about 10
    times quicker than rows.  The rows come out in increasing statistics.
    """
    rows = np.concatenate(parts) if parts else np.empty((0, PROFILE_WIDTH), dtype=np.int64)
    if not len(rows):
        return rows
    rays, ray = int(rows[:, :3].max()) + 1, int(rows[:, 3:9].max()) + 1
    if rays**3 * ray**6 < 2**63:
        packed = np.zeros(len(rows), dtype=np.int64)
        for column in range(9):
            packed = packed * (rays if column < 3 else ray) + rows[:, column]
        order = np.argsort(packed, kind="stable")  # timsort: the parts are sorted runs already
        packed = packed[order]
        starts = np.flatnonzero(np.r_[True, packed[1:] != packed[:-1]])
    else:
        _, first, inverse = np.unique(rows[:, :9], axis=0, return_index=True, return_inverse=True)
        order = np.argsort(inverse.ravel(), kind="stable")
        starts = np.searchsorted(inverse.ravel()[order], np.arange(len(first)))
    # each profile's rows side by side: one reduceat, not np.add.at (10 times slower)
    ordered = rows[order]
    merged = np.empty((len(starts), PROFILE_WIDTH), dtype=np.int64)
    merged[:, :9] = ordered[starts, :9]
    merged[:, 9] = np.add.reduceat(ordered[:, 9], starts)
    merged[:, 10] = np.minimum.reduceat(ordered[:, 10], starts)
    return merged


def sum_profiles(paths: list[Path]) -> np.ndarray:
    """Every profile file of ``paths`` summed (``merge_profiles``), ``PROFILES_AT_ONCE`` files at a
    time (A6_B8's 287 held 1.2 GB as int64 rows), as a binary counter: two sums of as many files are
    merged, so each row is merged about log2(files / ``PROFILES_AT_ONCE``) times.  Folding each batch
    into one running total merged the whole total once a batch: A7_B10's 3,817 files took minutes."""
    sums: list[tuple[int, np.ndarray]] = []  # (level, the sum of PROFILES_AT_ONCE x 2^level files)
    for first in range(0, len(paths), PROFILES_AT_ONCE):
        part = merge_profiles([read_profile(path) for path in paths[first : first + PROFILES_AT_ONCE]])
        level = 0
        while sums and sums[-1][0] == level:
            part = merge_profiles([sums.pop()[1], part])
            level += 1
        sums.append((level, part))
    total = merge_profiles([])
    while sums:  # the smallest first: at most two sums as large as the total at once
        total = merge_profiles([sums.pop()[1], total])
    return total


def trace(
    config: Config,
    directory: Path,
    shards: int,
    runner: Runner,
    stop: threading.Event,
    report: Callable[[Step], None],
    range_size: int,
) -> bool:
    """Stage 1, driven: trace the ranges not recorded yet, then sum their profiles; True when done.

    A run whose profiles are stored is past this stage (nothing to do).
    Files of ranges written but not recorded are deleted first.
    """
    if profiles_stored(config):
        return True
    todo = _ranges_todo(config, range_size)
    _forget_unrecorded(directory, config)
    keying = run_keying(directory, config)
    done = stored_count(config)
    report(Step(TRACING, done, config.nb_mol))
    jobs = (TraceJob(config, start, stop_, shards, str(directory), keying) for start, stop_ in todo)
    for job, result in runner.run(trace_range, jobs, stop):
        _record_range(directory, config, job, result)
        done += result.molecules
        report(Step(TRACING, done, config.nb_mol))
    if stop.is_set() or next(_ranges_todo(config, range_size), None) is not None:
        return False
    _store_profiles(directory, config)
    return True


def run_keying(directory: Path, config: Config) -> str:
    """How a run's records are keyed (``engine.KEYINGS``): what its ``KEYING`` file says.

    A run without that file and with ranges traced began before 2026-12-02
    (``engine.HASHED``): it keeps that keying to the end, since one spectrum
    keyed two ways would be two runs of records and its spectral group
    missed.  A run with nothing traced yet takes ``engine.LEXICAL`` and
    writes it down first.
    """
    path = directory / KEYING
    try:
        keying = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        keying = engine.HASHED if _recorded(config) else engine.LEXICAL
        directory.mkdir(parents=True, exist_ok=True)
        temporary = directory / f".{KEYING}.part"
        temporary.write_text(keying + "\n", encoding="ascii")
        os.replace(temporary, path)
        return keying
    except UnicodeDecodeError:
        keying = "not text"
    if keying not in engine.KEYINGS:
        raise CompactError(
            f"{path} says the records are keyed {keying!r}, which this bbtui does not know "
            f"(it knows {', '.join(engine.KEYINGS)}): a newer bbtui began this run; resume it with that one"
        )
    return keying


def _recorded(config: Config) -> list[tuple[int, int]]:
    """The traced ranges, sorted."""
    return sorted(
        (r.start, r.stop)
        for r in ExploredRange.select(ExploredRange.start, ExploredRange.stop).where(
            ExploredRange.config == config.name
        )
    )


def _ranges_todo(config: Config, size: int) -> Iterator[tuple[int, int]]:
    """The ranges not traced yet, cut into ranges of at most ``size`` numbers, lazily."""
    return missing_ranges(config, size)


def _forget_unrecorded(directory: Path, config: Config) -> None:
    """Delete files of ranges that were written but not recorded (a run killed in between)."""
    recorded = {range_name(start, stop) for start, stop in _recorded(config)}
    folders = [folder for folder in directory.iterdir() if folder.is_dir()] if directory.is_dir() else []
    for folder in folders:
        for path in folder.iterdir():
            if path.name.removesuffix(".npy").removesuffix(".keys") + ".keys" not in recorded:
                path.unlink(missing_ok=True)


def _record_range(directory: Path, config: Config, job: TraceJob, result: TraceResult) -> None:
    """Keep a traced range's profile in a file, then record the range."""
    folder = directory / "profiles"
    folder.mkdir(parents=True, exist_ok=True)
    name = range_name(job.start, job.stop).removesuffix(".keys") + ".npy"
    temporary = folder / f".{name}.part"
    with open(temporary, "wb") as out:
        np.save(out, profile_file(result.profile, job.start))
    os.replace(temporary, folder / name)
    with write_transaction(config):  # stops the run if its lock was lost (``server.check_lock``)
        ExploredRange.insert(
            config=config.name, start=job.start, stop=job.stop, nb_mol=result.molecules, dh1=now()
        ).execute()


def profile_file(profile: np.ndarray, start: int) -> np.ndarray:
    """A range's profile rows as its file holds them (``PROFILE_FILE``), the range starting at
    ``start``; as they are (int64) where a value does not fit."""
    if not len(profile):
        return profile
    statistics, molecules, lowest = profile[:, :9], profile[:, 9], profile[:, 10] - start
    fits = all(
        0 <= column.min() and column.max() < bound
        for column, bound in ((statistics, 1 << 16), (molecules, 1 << 32), (lowest, 1 << 32))
    )
    if not fits:
        return profile
    rows = np.empty(len(profile), dtype=PROFILE_FILE)
    rows["statistics"], rows["molecules"], rows["lowest"] = statistics, molecules, lowest
    return rows


def read_profile(path: Path) -> np.ndarray:
    """A range's profile rows from its file (``profile_file``'s, or int64 rows as older releases
    wrote them, which a run they began still has): int64, ``PROFILE_WIDTH`` a row."""
    rows = np.load(path)
    if rows.dtype.names is None:
        return rows
    start = range_start(path.name)
    profile = np.empty((len(rows), PROFILE_WIDTH), dtype=np.int64)
    profile[:, :9] = rows["statistics"]
    profile[:, 9] = rows["molecules"]
    profile[:, 10] = rows["lowest"].astype(np.int64) + start
    return profile


def profiles_stored(config: Config) -> bool:
    """Whether the tracing is over: its profiles are summed in ``Profiles``."""
    return Profile.select().where(Profile.config == config.name).exists()


def _store_profiles(directory: Path, config: Config) -> None:
    """Sum every range's profile into ``Profiles`` (one transaction), then delete the files."""
    folder = directory / "profiles"
    paths = sorted(folder.glob("*.npy")) if folder.is_dir() else []
    total = sum_profiles(paths)
    counted = int(total[:, 9].sum()) if len(total) else 0
    if counted != config.nb_mol:
        raise CompactError(
            f"{config.name}: the traced ranges count {counted:,} molecules, "
            f"not {config.nb_mol:,}; reset it and explore it again"
        )
    (directory / TRACED).touch()
    # as Python rows a part at a time: A7_B10's whole list of tuples took gigabytes
    parts = np.array_split(total, len(total) // PROFILE_ROWS + 1)
    rows = ((config.name, *row) for part in parts for row in part.tolist())
    columns = ("config", *PROFILE_FIELDS, "molecules", "lowest")
    with write_transaction(config):  # not peewee's insert_many: it took 10 s for A6_B8's 326,131 rows
        Profile.delete().where(Profile.config == config.name).execute()
        insert_rows("Profiles", columns, rows, sql.insert_profiles(PROFILE_FIELDS))
    shutil.rmtree(folder, ignore_errors=True)
