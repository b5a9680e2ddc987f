"""Stage 2 of a compact exploration, grouping: each shard's ambiguous spectra, settled exactly.

``group_shard`` is the task a runner runs (``bbcore.runner``): it reads one
shard, sorts it by key, and for each key held by two records or by a
``SHARED`` one traces those enantiomer groups again with their spectra and
keeps the spectra of two molecules or more; it writes them, sorted by
canonical number, to the shard's result folder and returns its counts.
``group`` drives the stage: it records each shard in ``GroupedShards`` and
deletes the shard's records.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bbcore import engine
from bbcore.compact.shards import (
    GROUPING,
    RECORD,
    SHARED,
    TRACED,
    CompactError,
    Step,
    result_folder,
    shard_folder,
)
from bbcore.config import Config
from bbcore.families import numbers_dtype
from bbcore.numbering import atoms_of_numbers
from bbcore.runner import Runner, check_halt
from bbcore.store import GroupedShard

SETTLE_BATCH = 1 << 14
"""Canonical molecules traced again at a time when a shard's groups are settled."""


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


def group(
    config: Config,
    directory: Path,
    shards: int,
    runner: Runner,
    stop: threading.Event,
    report: Callable[[Step], None],
) -> bool:
    """Stage 2, driven: group the shards not recorded yet; True when every shard is grouped.

    The shard files must be where the tracing wrote them (its ``TRACED``
    mark), unless every shard is grouped already.
    """
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
    return len(grouped) == shards


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
