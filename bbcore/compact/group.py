"""Stage 2 of a compact exploration, grouping: each shard's ambiguous spectra, settled exactly.

``group_shard`` is the task a runner runs (``bbcore.runner``): it reads one
shard, sorts it by key, and for each key held by two records or by a
``SHARED`` one traces those enantiomer groups again with their spectra and
keeps the spectra of two molecules or more (a key whose molecules are all
asymmetric, the ``LOWEST`` bits of their records, by one image each); it writes them, sorted by
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
    TRACED,
    CompactError,
    Step,
    record_numbers,
    result_folder,
    shard_folder,
)
from bbcore.config import Config
from bbcore.families import numbers_dtype
from bbcore.numbering import atoms_of_numbers
from bbcore.runner import Runner, check_halt
from bbcore.store import GroupedShard, write_transaction

SETTLE_BATCH = 1 << 16
"""Canonical molecules traced again at a time when a shard's groups are settled (whole keys):
about 0.1 s, so that a pause is quick."""


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
    """Stage 2: the families of ambiguous spectra whose key falls in one shard.

    The records are sorted by key; the canonical molecules of a key held by
    two records, or by one whose images may share a spectrum, are traced
    again and their enantiomer groups grouped by spectrum exactly
    (``engine.families_of_runs``): the keys whose molecules are all
    asymmetric by the image of each one's ``LOWEST`` transform alone, the
    others by all their images.  ``SETTLE_BATCH`` molecules at a time
    (whole keys), so that a pause comes within a batch's time.
    """
    records = read_shard(job.directory, job.shard)
    order = np.argsort(records["key"])  # the order within a key does not matter: every result is sorted
    keys = records["key"][order]
    numbers, shared, lowest = record_numbers(job.config, records["number"][order])
    # runs of equal keys: [starts[i], starts[i + 1])
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]]) if len(keys) else np.empty(0, np.int64)
    sizes = np.diff(np.r_[starts, len(keys)])
    any_shared = np.logical_or.reduceat(shared, starts) if len(keys) else np.empty(0, bool)
    asymmetric = np.logical_and.reduceat(lowest >= 0, starts) if len(keys) else np.empty(0, bool)
    chosen = (sizes > 1) | any_shared
    runs = Runs(starts, sizes, keys, numbers, lowest)
    parts = _settle(job.config, runs, np.flatnonzero(chosen & asymmetric), asymmetric=True)
    parts += _settle(job.config, runs, np.flatnonzero(chosen & ~asymmetric), asymmetric=False)
    columns = _result_columns(job.config, parts)
    _write_result_folder(job, columns)
    spectra, max_diff, family_sizes = (
        columns["family_spectra"],
        columns["family_max_diff"],
        columns["family_sizes"],
    )
    counts = _counts_by(max_diff, spectra), _counts_by(family_sizes, spectra)
    return GroupResult(job.shard, len(records), int(spectra.sum()), len(spectra), *counts)


@dataclass(frozen=True)
class Runs:
    """A shard's records sorted by key, and its runs of equal keys ``[starts[i], starts[i] + sizes[i])``."""

    starts: np.ndarray
    sizes: np.ndarray
    keys: np.ndarray
    numbers: np.ndarray
    lowest: np.ndarray


def _settle(
    config: Config, runs: Runs, chosen: np.ndarray, asymmetric: bool
) -> list[tuple[engine.Families, np.ndarray, np.ndarray]]:
    """The families of the ``chosen`` runs, ``SETTLE_BATCH`` molecules at a time (whole runs): each
    batch's families, their canonical numbers and keys.  ``asymmetric`` runs are grouped by their
    ``lowest`` transforms' images (``engine.families_of_runs``).

    With no such run the kernel is still called, on nothing: a compact run compiles (or loads)
    both kernels whatever its configuration, so that the next run is told truly that it loads
    them (``engine.kernels_cached``; A3_B4 has no key of asymmetric molecules).
    """
    if not len(chosen):
        none = np.empty(0, np.int64)
        engine.families_of_runs(
            config,
            np.empty((0, config.atoms), np.int64),
            none,
            np.zeros(1, np.int64),
            lowest=none if asymmetric else None,
        )
        return []
    lengths = runs.sizes[chosen]
    bounds = np.r_[0, np.cumsum(lengths)].astype(np.int64)  # the chosen runs, end to end
    rows = np.repeat(runs.starts[chosen] - bounds[:-1], lengths) + np.arange(bounds[-1])
    canonicals = runs.numbers[rows]
    run_keys = runs.keys[runs.starts[chosen]]
    parts = []
    first = 0
    while first < len(chosen):
        last = max(first + 1, int(np.searchsorted(bounds, bounds[first] + SETTLE_BATCH, side="right")) - 1)
        check_halt()
        low, high = bounds[first], bounds[last]
        batch = canonicals[low:high]
        found = engine.families_of_runs(
            config,
            atoms_of_numbers(config, batch),
            batch,
            bounds[first : last + 1] - low,
            lowest=runs.lowest[rows[low:high]] if asymmetric else None,
        )
        run_of = np.repeat(np.arange(first, last), lengths[first:last])
        parts.append((found, batch[found.row], run_keys[run_of[found.row]]))
        first = last
    return parts


def _counts_by(values: np.ndarray, spectra: np.ndarray) -> dict[int, list[int]]:
    """Families and their spectral groups counted by a value of theirs: ``{value: [families, groups]}``."""
    present, inverse, families = np.unique(values, return_inverse=True, return_counts=True)
    groups = np.bincount(inverse.ravel(), weights=spectra, minlength=len(present)).astype(np.int64)
    return {int(v): [int(f), int(g)] for v, f, g in zip(present.tolist(), families.tolist(), groups.tolist())}


def _result_columns(config: Config, parts: list[tuple[engine.Families, np.ndarray, np.ndarray]]) -> dict:
    """A grouped shard's families, sorted by canonical number for the writing stage.

    One row a family (its first spectrum: its canonical molecule's own): c
    (``families``), its key, size, spectra, max_diff and spectrum, and the
    molecules of its first spectrum (``family_numbers``, packed as
    ``numbers_dtype``).  A family's other spectra are derived on read
    (``bbcore.families``), so they are not written.
    """
    if not parts:
        found = engine.Families(*(np.empty(0, np.int64),) * 6, np.empty((0, config.positions), np.uint8))
        parts = [(found, np.empty(0, np.int64), np.empty(0, np.uint64))]
    canonical = np.concatenate([c for _, c, _ in parts])
    order = np.argsort(canonical, kind="stable")
    joined = {
        name: np.concatenate([getattr(f, name) for f, _, _ in parts])
        for name in ("size", "spectra", "max_diff")
    }
    ends = np.concatenate([f.ends + offset for (f, _, _), offset in zip(parts, _offsets(parts))])
    members = np.concatenate([f.members for f, _, _ in parts])
    starts = np.r_[0, ends][:-1]
    sizes = joined["size"][order]
    # each family's molecules, in canonical order: its first molecule's place, then the next ones
    take = np.repeat(starts[order] - np.r_[0, np.cumsum(sizes)][:-1], sizes) + np.arange(sizes.sum())
    text = np.ascontiguousarray(np.concatenate([f.spectrum for f, _, _ in parts]))
    return {
        "families": canonical[order].astype(np.int64),
        "family_keys": np.concatenate([k for _, _, k in parts])[order].astype(np.uint64),
        "family_sizes": sizes.astype(np.int64),
        "family_spectra": joined["spectra"][order].astype(np.int64),
        "family_max_diff": joined["max_diff"][order].astype(np.int64),
        "family_spectrum": text.view(f"S{config.positions}").ravel()[order],
        "family_numbers": members[take.astype(np.int64)].astype(numbers_dtype(config)),
    }


def _offsets(parts) -> list[int]:
    """Where each part's molecules start in the parts' molecules end to end."""
    return np.r_[0, np.cumsum([len(f.members) for f, _, _ in parts])][:-1].tolist()


def _write_result_folder(job: GroupJob, columns: dict[str, np.ndarray]) -> None:
    """A grouped shard's result columns in its folder (whole or absent)."""
    final = result_folder(job.directory, job.shard)
    temporary = final.with_name(f".{final.name}.{os.getpid()}.part")
    shutil.rmtree(temporary, ignore_errors=True)
    temporary.mkdir(parents=True)
    for name, values in columns.items():
        np.save(temporary / f"{name}.npy", values)
    shutil.rmtree(final, ignore_errors=True)  # left by a run killed before recording the shard
    os.replace(temporary, final)


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
    with write_transaction(config):  # stops the run if its lock was lost (``server.check_lock``)
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
