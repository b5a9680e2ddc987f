"""The compact exploration: every molecule traced, only the result stored.

A full store (``bbcore.explore``) writes a row per molecule.  A compact one
stores what the readers need and recomputes the rest from molecule numbers:

- the ``Configurations`` row, with ``store = 'compact'`` and its shard count;
- ``Families``: one row per family of ambiguous spectra (its canonical
  number, key, size, spectra, first spectrum and that spectrum's molecules,
  and its ordinals in the groups listing); the spec's ``Spectrums`` rows
  and each spectrum's molecules are derived from it on read
  (``bbcore.families``);
- ``Profiles``: the molecules counted by their 9 profile statistics with the
  lowest number of each (``statistics.statistics_profile`` reads it: the
  distributions and ray records follow), and ``GroupedShards.risk``: the
  spectral groups counted by atoms differing (the risk table);
- ``ExploredRanges`` rows for the traced ranges, as in a full store.

Glossary:

- *key*: a 64-bit hash that every molecule of an enantiomer group shares with
  every molecule whose spectrum is one of that group's spectra or their
  images by symmetry (``engine.spectrum_keys``: the smallest hash of the 8
  images of the spectrum).  Equal spectra always have equal keys; unequal
  ones rarely do, so a key proposes a spectral group and the grouping checks
  it spectrum by spectrum;
- *record*: ``(key, number)`` of one canonical molecule, 16 bytes; the top
  bit of ``number`` (``SHARED``) says that two distinct images of the
  molecule may have the same spectrum (their hashes are equal);
- *shard*: the records whose key ends with the same bits, in one folder of
  files, one file per traced range.

How it runs, in three stages, the first two of independent tasks (``bbcore.runner``):

1. *tracing*: the numbers are cut into ranges; ``trace_range`` traces the
   canonical molecules of a range (one in eight molecules: symmetry maps
   spectra to spectra, so each image's key is its canonical molecule's),
   writes its records to the shard folders and returns the range's profile.
   The driver writes the profile to a file and records the range in
   ``ExploredRanges``, in that order;
2. *grouping*: when every range is traced, the profiles are summed into
   ``Profiles``; then ``group_shard`` reads one shard, sorts it by key, and
   for each key held by two records or by a ``SHARED`` one traces those
   enantiomer groups again with their spectra and keeps the spectra of two
   molecules or more.  It writes them, sorted, to the shard's result folder
   and returns its counts; the driver records the shard in
   ``GroupedShards`` and deletes the shard's records;
3. *writing*: the driver merges the families of every shard by canonical
   number into ``Families`` (``write_result``), computing their ordinals as
   it streams (``families.FamilyWriter``): rows inserted in key order only
   ever extend a B-tree at its end.  The family indexes are built, then the
   configuration is ``complete`` and its shard folder is deleted.

A run stopped at any moment resumes: ranges and shards that are recorded are
not done again, files of a range that was not recorded (a run killed
between writing and recording) are deleted before tracing resumes, and the
writing resumes after the last family stored.  Memory is
bounded by the shard size (``SHARD_RECORDS``) and the range size, disk by the
records (16 bytes per canonical molecule, about 2 bytes per molecule) and
the result (A7_B8: 22.8 bytes a molecule at the peak, the database and the
shards' results).

The shard files live in ``<database>.shards/<config>/`` unless told otherwise,
which every worker must see (a shared folder for a cluster).
"""

from __future__ import annotations

import bisect
import json
import os
import shutil
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

import numpy as np

from bbcore import engine, sql, store
from bbcore.config import Config
from bbcore.families import (  # noqa: F401 (risk_counts, size_counts, spectra_counts: read through here too)
    FamilyColumns,
    FamilyWriter,
    numbers_dtype,
    risk_counts,
    size_counts,
    spectra_counts,
)
from bbcore.numbering import atoms_of_numbers
from bbcore.ranges import missing_ranges
from bbcore.runner import InlineRunner, Runner, check_halt
from bbcore.store import (
    Configuration,
    ExploredRange,
    GroupedShard,
    Profile,
    config_row,
    db,
    now,
    stored_count,
)

RANGE_SIZE = 1 << 18
"""Molecule numbers per tracing task: a few seconds at most (canonical molecules are
dense among low numbers), so that a pause is quick, and few files (one per shard)."""
TRACE_BATCH = 1 << 16
"""Numbers traced at a time within a range, which bounds a task's memory."""
SHARD_RECORDS = 1 << 22
"""Records per shard, about (64 MB): the grouping's memory is a few times this."""
MAX_SHARDS = 1 << 12
"""More shards than this would be mostly empty folders: larger configurations get larger shards."""
SETTLE_BATCH = 1 << 14
"""Canonical molecules traced again at a time when a shard's groups are settled."""
SHARED = np.uint64(1 << 63)
RECORD = np.dtype([("key", "<u8"), ("number", "<u8")])
PROFILE_WIDTH = 11
"""A profile row: the 9 statistics, the molecules, the lowest number."""
PROFILES_AT_ONCE = 16
"""Range profiles summed at a time at the end of the tracing (each has up to ~100,000 rows)."""
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


def shard_count(config: Config, records_per_shard: int = SHARD_RECORDS) -> int:
    """Shards for a configuration: a power of two, about ``records_per_shard`` canonical records each."""
    expected = config.nb_mol // 8 + 1
    shards = 1
    while shards * records_per_shard < expected and shards < MAX_SHARDS:
        shards *= 2
    return shards


def default_shard_root(db_path: Path | str) -> Path:
    """Where shard files go by default: a folder next to the database (a server's: ``server.shard_root``)."""
    if store.is_server(db_path):
        from bbcore import server

        return server.shard_root(db_path)
    return Path(f"{db_path}.shards")


def shard_folder(directory: Path | str, shard: int) -> Path:
    """The folder of one shard."""
    return Path(directory) / f"s{shard:05d}"


def range_name(start: int, stop: int) -> str:
    """The file name of a traced range's records, in every shard folder."""
    return f"{start}-{stop}.keys"


# -- stage 1: tracing a range ---------------------------------------------------------


@dataclass(frozen=True)
class TraceJob:
    """Trace the canonical molecules numbered start..stop-1 into the shards under ``directory``."""

    config: Config
    start: int
    stop: int
    shards: int
    directory: str


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
    molecules = 0
    for low in range(job.start, job.stop, TRACE_BATCH):
        check_halt()
        atoms, own = engine.canonical_molecules(config, low, min(low + TRACE_BATCH, job.stop))
        if not len(own):
            continue
        partner, length, turns = engine.trace_batch(config, atoms)
        key, orbit, shared = engine.spectrum_keys(config, atoms, partner)
        keys.append(key)
        numbers.append(own.astype(np.uint64) | np.where(shared, SHARED, np.uint64(0)))
        profiles.append(_profile(engine.ray_profile(partner, length, turns), orbit, own))
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

    Not its top bits: a key is the smallest of up to 8 hashes, so its top
    bits are mostly zeros (A6_B8's first shard of 4 held 90% of the records).
    """
    return (keys & np.uint64(shards - 1)).astype(np.int64)


def _write_shards(job: TraceJob, records: np.ndarray) -> None:
    """Each shard's part of the records, in its folder (whole or absent)."""
    shard = _shard_of(records["key"], job.shards)
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
    their canonical molecule's statistics.
    """
    rows = np.empty((len(own), PROFILE_WIDTH), dtype=np.int64)
    rows[:, :9] = stats
    rows[:, 9] = orbit
    rows[:, 10] = own
    return merge_profiles([rows])


def merge_profiles(parts: list[np.ndarray]) -> np.ndarray:
    """Profile rows summed by statistics: molecules added, lowest numbers' minimum.

    The 9 statistics are packed in one int64 (mixed radix, the bounds of
    ``statistics.profile_bases``: rays of a class <= 4W, a length or turns
    <= 2 W^2) when it fits (W <= 10): np.unique on one number is about 10
    times quicker than on rows.
    """
    rows = np.concatenate(parts) if parts else np.empty((0, PROFILE_WIDTH), dtype=np.int64)
    if not len(rows):
        return rows
    rays, ray = int(rows[:, :3].max()) + 1, int(rows[:, 3:9].max()) + 1
    if rays**3 * ray**6 < 2**63:
        packed = np.zeros(len(rows), dtype=np.int64)
        for column in range(9):
            packed = packed * (rays if column < 3 else ray) + rows[:, column]
        _, first, inverse = np.unique(packed, return_index=True, return_inverse=True)
    else:
        _, first, inverse = np.unique(rows[:, :9], axis=0, return_index=True, return_inverse=True)
    values = rows[first, :9]
    inverse = inverse.ravel()
    merged = np.empty((len(values), PROFILE_WIDTH), dtype=np.int64)
    merged[:, :9] = values
    merged[:, 9] = 0
    np.add.at(merged[:, 9], inverse, rows[:, 9])
    merged[:, 10] = np.iinfo(np.int64).max
    np.minimum.at(merged[:, 10], inverse, rows[:, 10])
    return merged


# -- stage 2: grouping a shard -----------------------------------------------------------


@dataclass(frozen=True)
class GroupJob:
    """Group the records of one shard under ``directory``."""

    config: Config
    shard: int
    directory: str


@dataclass(frozen=True)
class GroupResult:
    """What grouping a shard gives back: counts only (the spectra are in its result folder).

    ``risk`` counts the shard's spectral groups by the most atoms differing
    between two of their molecules, ``sizes`` by their number of molecules:
    ``{max_diff or size: [families, groups]}``.
    """

    shard: int
    records: int
    spectra: int
    families: int
    risk: dict[int, list[int]]
    sizes: dict[int, list[int]]


def read_shard(directory: Path | str, shard: int) -> np.ndarray:
    """Every record of a shard (the files of its folder)."""
    folder = shard_folder(directory, shard)
    files = sorted(folder.glob("*.keys")) if folder.is_dir() else []
    parts = [np.fromfile(path, dtype=RECORD) for path in files]
    return np.concatenate(parts) if parts else np.empty(0, dtype=RECORD)


def group_shard(job: GroupJob) -> GroupResult:
    """Stage 2: the ambiguous spectra whose key falls in one shard.

    The records are sorted by key; a key held by two records, or by one
    whose images may share a spectrum, is settled by tracing its enantiomer
    groups again with their spectra (``engine.groups_of_canonicals``).
    """
    records = read_shard(job.directory, job.shard)
    keys = records["key"]
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    raw = records["number"][order]
    numbers = (raw & ~SHARED).astype(np.int64)
    shared = (raw & SHARED) != 0
    # runs of equal keys: [starts[i], starts[i + 1])
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]]) if len(keys) else np.empty(0, np.int64)
    bounds = np.r_[starts, len(keys)]
    sizes = np.diff(bounds)
    any_shared = np.add.reduceat(shared.astype(np.int64), starts) > 0 if len(keys) else np.empty(0, bool)
    chosen = np.flatnonzero((sizes > 1) | any_shared)
    parts: list[tuple[np.ndarray, ...]] = []
    batch: list[np.ndarray] = []
    pending = 0
    for run in chosen:
        batch.append(numbers[bounds[run] : bounds[run + 1]])
        pending += int(sizes[run])
        if pending >= SETTLE_BATCH:
            check_halt()
            parts.append(settle(job.config, np.concatenate(batch)))
            batch, pending = [], 0
    if batch:
        parts.append(settle(job.config, np.concatenate(batch)))
    if not parts:
        parts.append(settle(job.config, np.empty(0, dtype=np.int64)))
    joined = (np.concatenate(column) for column in zip(*parts))
    spectra, transform, canonical, max_diff, sizes, numbers = joined
    by_number = np.argsort(records["number"] & ~SHARED, kind="stable")
    canonicals = (records["number"][by_number] & ~SHARED).astype(np.int64)
    family_keys = records["key"][by_number][np.searchsorted(canonicals, canonical[transform == 0])]
    _write_result_folder(job, spectra, transform, canonical, max_diff, sizes, numbers, family_keys)
    families = int(np.count_nonzero(transform == 0))
    counts = _counts_by(max_diff, transform), _counts_by(sizes, transform)
    return GroupResult(job.shard, len(records), len(sizes), families, *counts)


def _counts_by(values: np.ndarray, transform: np.ndarray) -> dict[int, list[int]]:
    """Spectral groups counted by a value of theirs: ``{value: [families, groups]}``."""
    counts = {}
    for value in np.unique(values).tolist():
        alike = values == value
        counts[value] = [int(np.count_nonzero(alike & (transform == 0))), int(np.count_nonzero(alike))]
    return counts


def _write_result_folder(
    job: GroupJob,
    spectra: np.ndarray,
    transform: np.ndarray,
    canonical: np.ndarray,
    max_diff: np.ndarray,
    sizes: np.ndarray,
    numbers: np.ndarray,
    family_keys: np.ndarray,
) -> None:
    """A grouped shard's families, sorted by canonical number for the writing stage, in its folder
    (whole or absent).

    One row a family (its first spectrum, the one of transform 0): c
    (``families.npy``), its key, size, spectra, max_diff and spectrum, and
    the molecules of its first spectrum (``family_numbers.npy``, packed as
    ``numbers_dtype``).  A family's other spectra are derived on read
    (``bbcore.families``), so they are not written.
    """
    config = job.config
    text = np.ascontiguousarray(spectra).view(f"S{config.positions}").ravel()
    offsets = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    firsts = np.flatnonzero(transform == 0)  # in settle's order, as family_keys
    present, counts = np.unique(canonical, return_counts=True)
    by_canonical = np.argsort(canonical[firsts], kind="stable")
    family = firsts[by_canonical]
    members = (np.arange(offsets[i], offsets[i + 1]) for i in family.tolist())
    family_numbers = numbers[np.concatenate([np.empty(0, np.int64), *members])]
    columns = {
        "families": canonical[family].astype(np.int64),
        "family_keys": family_keys[by_canonical].astype(np.uint64),
        "family_sizes": sizes[family].astype(np.int64),
        "family_spectra": counts[np.searchsorted(present, canonical[family])].astype(np.int64),
        "family_max_diff": max_diff[family].astype(np.int64),
        "family_spectrum": text[family],
        "family_numbers": family_numbers.astype(numbers_dtype(config)),
    }
    final = result_folder(job.directory, job.shard)
    temporary = final.with_name(f".{final.name}.{os.getpid()}.part")
    shutil.rmtree(temporary, ignore_errors=True)
    temporary.mkdir(parents=True)
    for name, values in columns.items():
        np.save(temporary / f"{name}.npy", values)
    shutil.rmtree(final, ignore_errors=True)  # left by a run killed before recording the shard
    os.replace(temporary, final)


def result_folder(directory: Path | str, shard: int) -> Path:
    """The folder of a grouped shard's result, until it is written to the database."""
    return Path(directory) / "results" / f"r{shard:05d}"


def settle(config: Config, canonicals: np.ndarray) -> tuple[np.ndarray, ...]:
    """The spectra shared by two molecules or more among these enantiomer groups, exactly.

    Returns the arrays of ``GroupResult`` from ``spectra`` to ``numbers``.
    """
    canonicals = np.sort(canonicals)
    if len(canonicals):
        batch = engine.groups_of_canonicals(config, atoms_of_numbers(config, canonicals), canonicals)
        spectrum, molecule = batch.spectrum, batch.molecule
        number, canonical, transform = batch.number, batch.canonical_number, batch.transform
    else:
        spectrum = np.empty((0, config.positions), dtype=np.uint8)
        molecule = np.empty((0, config.cells), dtype=np.uint8)
        number = canonical = np.empty(0, dtype=np.int64)
        transform = np.empty(0, dtype=np.int8)
    as_bytes = np.ascontiguousarray(spectrum).view(f"S{config.positions}").ravel()
    # by spectrum, then canonical number, then number: a group's first row is its first molecule
    order = np.lexsort((number, canonical, as_bytes))
    ordered = as_bytes[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]]) if len(order) else order
    sizes = np.diff(np.r_[starts, len(order)])
    kept = sizes >= 2
    heads = order[starts[kept]]
    members = order[np.repeat(kept, sizes)]
    group_sizes = sizes[kept].astype(np.int64)
    group_of = np.repeat(np.arange(len(group_sizes)), group_sizes)
    members = members[np.lexsort((number[members], group_of))]  # by number within each group
    atoms = molecule[members] == ATOM_CODE
    max_diff = np.zeros(len(group_sizes), dtype=np.int64)
    firsts = np.r_[0, np.cumsum(group_sizes)[:-1]].astype(np.int64)
    for size in np.unique(group_sizes):
        which = np.flatnonzero(group_sizes == size)
        boards = atoms[(firsts[which][:, None] + np.arange(size)).ravel()].reshape(len(which), size, -1)
        differing = (boards[:, :, None, :] & ~boards[:, None, :, :]).sum(axis=3)
        max_diff[which] = differing.reshape(len(which), -1).max(axis=1)
    return (
        np.ascontiguousarray(spectrum[heads]),
        transform[heads].astype(np.int64),
        canonical[heads].astype(np.int64),
        max_diff,
        group_sizes,
        number[members].astype(np.int64),
    )


ATOM_CODE = ord("O")


# -- the driver ----------------------------------------------------------------------------

TRACING, GROUPING, WRITING = "tracing", "grouping", "writing"
TRACED = "traced"
"""A file in a configuration's shard folder: every range is traced there (grouping needs it)."""


class CompactError(Exception):
    """A compact exploration that cannot go on: one line for the user."""


@dataclass(frozen=True)
class Step:
    """What the driver reports after each recorded task: the phase and how far it is."""

    phase: str  # TRACING (molecules), GROUPING (shards) or WRITING (rows)
    done: int
    total: int


def explore_compact(
    config: Config,
    db_path: Path | str,
    *,
    runner: Runner | None = None,
    stop: threading.Event | None = None,
    report: Callable[[Step], None] | None = None,
    range_size: int = RANGE_SIZE,
    shard_root: Path | str | None = None,
) -> bool:
    """Trace, then group, what is missing of a compact configuration; True when complete.

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
    shards = row.shards
    if not _profiles_stored(config):
        todo = _ranges_todo(config, range_size)
        _forget_unrecorded(directory, config)
        done = stored_count(config)
        report(Step(TRACING, done, config.nb_mol))
        jobs = (TraceJob(config, start, stop_, shards, str(directory)) for start, stop_ in todo)
        for job, result in runner.run(trace_range, jobs, stop):
            _record_range(directory, config, job, result)
            done += result.molecules
            report(Step(TRACING, done, config.nb_mol))
        if stop.is_set() or next(_ranges_todo(config, range_size), None) is not None:
            return False
        _store_profiles(directory, config)
    grouped = {row.shard for row in GroupedShard.select().where(GroupedShard.config == config.name)}
    if len(grouped) < shards and not (directory / TRACED).exists():
        raise CompactError(
            f"the shard files of {config.name} are not in {directory}: explore it with the folder it was "
            "traced into, or reset it"
        )
    report(Step(GROUPING, len(grouped), shards))
    jobs = (GroupJob(config, s, str(directory)) for s in range(shards) if s not in grouped)
    for _, result in runner.run(group_shard, jobs, stop):
        _record_shard(directory, config, result)
        grouped.add(result.shard)
        report(Step(GROUPING, len(grouped), shards))
    if len(grouped) < shards:
        return False
    runner.close()  # only the driver writes: the workers' memory is released first
    if not write_result(directory, config, stop, report):
        return False
    Configuration.update(complete=True, dh2=now()).where(Configuration.config == config.name).execute()
    _delete_folder(db_path, directory)
    return True


def config_directory(db_path: Path | str, config: Config, shard_root: Path | str | None = None) -> Path:
    """The folder of a configuration's shard files."""
    root = Path(shard_root) if shard_root is not None else default_shard_root(db_path)
    return root / config.name


def forget_shards(db_path: Path | str, config: Config, shard_root: Path | str | None = None) -> None:
    """Delete a configuration's shard files (when it is reset)."""
    _delete_folder(db_path, config_directory(db_path, config, shard_root))


def _delete_folder(db_path: Path | str, directory: Path) -> None:
    """Delete a configuration's shard folder, and the default root beside the database once empty
    (a root given with ``--shards`` is the user's: it stays)."""
    shutil.rmtree(directory, ignore_errors=True)
    root = default_shard_root(db_path)
    if directory.parent.resolve() == root.resolve():
        try:
            root.rmdir()
        except OSError:  # other configurations' folders are in it, or it is gone
            pass


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
        np.save(out, result.profile)
    os.replace(temporary, folder / name)
    ExploredRange.insert(
        config=config.name, start=job.start, stop=job.stop, nb_mol=result.molecules, dh1=now()
    ).execute()


def _profiles_stored(config: Config) -> bool:
    """Whether the tracing is over: its profiles are summed in ``Profiles``."""
    return Profile.select().where(Profile.config == config.name).exists()


def _store_profiles(directory: Path, config: Config) -> None:
    """Sum every range's profile into ``Profiles`` (one transaction), then delete the files."""
    folder = directory / "profiles"
    paths = sorted(folder.glob("*.npy")) if folder.is_dir() else []
    total = merge_profiles([])
    for first in range(0, len(paths), PROFILES_AT_ONCE):  # A6_B8's 287 files held 1.2 GB together
        total = merge_profiles([total, *(np.load(path) for path in paths[first : first + PROFILES_AT_ONCE])])
    counted = int(total[:, 9].sum()) if len(total) else 0
    if counted != config.nb_mol:
        raise CompactError(
            f"{config.name}: the traced ranges count {counted:,} molecules, "
            f"not {config.nb_mol:,}; reset it and explore it again"
        )
    (directory / TRACED).touch()
    rows = [(config.name, *row) for row in total.tolist()]
    with db.atomic():  # executemany: peewee's insert_many took 10 s for A6_B8's 326,131 rows
        Profile.delete().where(Profile.config == config.name).execute()
        db.connection().executemany(sql.insert_profiles(PROFILE_FIELDS), rows)
    shutil.rmtree(folder, ignore_errors=True)


def _record_shard(directory: Path, config: Config, result: GroupResult) -> None:
    """Record a grouped shard (its result folder is written), then delete its records."""
    GroupedShard.insert(
        config=config.name,
        shard=result.shard,
        records=result.records,
        spectra=result.spectra,
        families=result.families,
        risk=json.dumps({str(k): v for k, v in sorted(result.risk.items())}),
        sizes=json.dumps({str(k): v for k, v in sorted(result.sizes.items())}),
    ).execute()
    shutil.rmtree(shard_folder(directory, result.shard), ignore_errors=True)


# -- stage 3: writing the result -----------------------------------------------------------


WRITE_ROWS = 1 << 17
"""Rows written per transaction in the writing stage (about a second): a pause waits at most that."""


RESULT_COLUMNS = ("family_keys", "family_sizes", "family_spectra", "family_max_diff", "family_spectrum")
"""A grouped shard's columns of one value a family, beside ``families.npy`` (c) and the molecules."""


def write_result(
    directory: Path, config: Config, stop: threading.Event, report: Callable[[Step], None]
) -> bool:
    """Stage 3: every grouped shard's families into ``Families``, merged by canonical number; True when done.

    The shards' results are merged in increasing c, the order of the table's
    primary key (``position``), so that its B-tree only grows at its end:
    inserting a shard's rows at once, scattered over the whole table, made
    A6_B8's last shard 2.3 times slower than its first.  ``FamilyWriter``
    computes the ordinals as it streams; each ``WRITE_ROWS`` families are
    one transaction, and a resumed run starts after the last position
    stored.  The result files are read a block at a time (``Column``): the
    driver's memory does not grow with the configuration.  The family
    indexes are built at the end, then the configuration is complete.
    """
    shards = config_row(config).shards
    folders = [result_folder(directory, shard) for shard in range(shards)]
    if not all(folder.is_dir() for folder in folders):
        raise CompactError(
            f"the grouped shards of {config.name} are not in {directory}: explore it with the folder it was "
            "grouped into, or reset it"
        )
    if not all((folder / f"{RESULT_COLUMNS[0]}.npy").exists() for folder in folders):
        raise CompactError(
            f"the grouped shards of {config.name} were written by an older bbtui: "
            "reset it and explore it again"
        )
    writer = FamilyWriter(config)
    families = [Column(folder / "families.npy") for folder in folders]
    starts = [0 if writer.last is None else bisect.bisect_right(keys, writer.last) for keys in families]
    report(Step(WRITING, writer.position, writer.total))
    columns = [[Column(folder / f"{name}.npy") for folder in folders] for name in RESULT_COLUMNS]
    members = [Column(folder / "family_numbers.npy") for folder in folders]
    offsets = [
        np.r_[0, np.cumsum(np.load(folder / "family_sizes.npy"))].astype(np.int64) for folder in folders
    ]
    for slices, order, canonical in merged(families, starts, WRITE_ROWS):
        if stop.is_set():
            return False
        keys, sizes, spectra, max_diff, text = (
            np.concatenate([column[s][low:high] for s, low, high in slices])[order] for column in columns
        )
        blobs = []
        for s, low, high in slices:
            first = offsets[s][low]
            numbers = members[s][first : offsets[s][high]]
            blobs += [
                numbers[a - first : b - first].tobytes() for a, b in pairwise(offsets[s][low : high + 1])
            ]
        writer.write(
            FamilyColumns(
                canonical=canonical[order],
                key=keys,
                nb_mol=sizes,
                spectra=spectra,
                max_diff=max_diff,
                spectrum=text.astype(f"U{config.positions}").tolist(),
                numbers=[blobs[i] for i in order.tolist()],
            )
        )
        report(Step(WRITING, writer.position, writer.total))
    if stop.is_set():
        return False
    writer.finish()
    return True


class Column:
    """A column of a shard's result, read from its ``.npy`` file a slice at a time.

    Indexing with a slice reads those elements; with an integer, one
    element (so ``bisect`` can search it).  Nothing is mapped or kept: the
    writing stage's memory stays that of one chunk, whatever the
    configuration (A7_B8's result files hold gigabytes).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        with open(path, "rb") as file:
            version = np.lib.format.read_magic(file)
            read_header = (
                np.lib.format.read_array_header_1_0
                if version == (1, 0)
                else np.lib.format.read_array_header_2_0
            )
            shape, _, self.dtype = read_header(file)
            self.offset = file.tell()
        self.length = shape[0]

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: int | slice):
        if isinstance(index, slice):
            low, high, _ = index.indices(self.length)
            count = max(0, high - low)
            if not count:
                return np.empty(0, dtype=self.dtype)
            return np.fromfile(
                self.path, dtype=self.dtype, count=count, offset=self.offset + low * self.dtype.itemsize
            )
        if index < 0:
            index += self.length
        if not 0 <= index < self.length:
            raise IndexError(index)
        return self[index : index + 1][0]


def merged(
    keys: list, starts: list[int], rows: int
) -> Iterator[tuple[list[tuple[int, int, int]], np.ndarray, np.ndarray]]:
    """Sorted arrays (or ``Column``s) merged into one order, a chunk of about ``rows`` at a time.

    Yields ``(slices, order, joined)``: ``slices`` are ``(array, low,
    high)``, the next elements of some arrays, ``joined`` their
    concatenation and ``order`` sorts it.  Each chunk holds every remaining
    element up to a bound, the smallest of the last elements of the arrays'
    next blocks, so the chunks follow each other in order.  ``starts`` are
    where each array begins (a resumed write).
    """
    position = list(starts)
    block = max(1, rows // max(1, len(keys)))
    while True:
        live = [s for s in range(len(keys)) if position[s] < len(keys[s])]
        if not live:
            return
        windows = {s: keys[s][position[s] : position[s] + block] for s in live}
        ends = [windows[s][-1] for s in live if position[s] + block < len(keys[s])]
        bound = min(ends) if ends else None
        slices, parts = [], []
        for s in live:
            window = windows[s]
            taken = len(window) if bound is None else int(np.searchsorted(window, bound, side="right"))
            if taken:
                slices.append((s, position[s], position[s] + taken))
                parts.append(window[:taken])
                position[s] += taken
        joined = np.concatenate(parts)
        yield slices, np.argsort(joined, kind="stable"), joined
