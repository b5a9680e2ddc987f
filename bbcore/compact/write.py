"""Stage 3 of a compact exploration, writing: every grouped shard's families into ``Families``.

The shards' results are merged by canonical number (``bbcore.columns``), and
each family gets its ordinals as the merge streams (``families.FamilyOrdinals``).

On SQLite the merged order is cut into *parts* of about ``PART_FAMILIES``
families.  ``write_part`` is the task a runner runs: it writes one part's rows
into a SQLite file of its own, beside the shard folders; the driver copies
each part into ``Families`` in order, in one transaction (``INSERT ...
SELECT`` from the attached file, about a third of the CPU of binding the
same rows), then deletes the file.  So both cores prepare and insert rows,
and only the copy and the family indexes are the driver's.  On a server
the driver writes the rows itself (``families.FamilyWriter``: COPY).
"""

from __future__ import annotations

import bisect
import math
import os
import shutil
import sqlite3
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

import numpy as np

from bbcore import sql
from bbcore.columns import Column, merged
from bbcore.compact.shards import WRITING, CompactError, Step, result_folder
from bbcore.config import Config
from bbcore.families import (
    FamilyColumns,
    FamilyOrdinals,
    FamilyWriter,
    build_family_indexes,
    family_rows,
)
from bbcore.runner import Runner, check_halt
from bbcore.store import config_row, db, write_transaction

WRITE_ROWS = 1 << 17
"""Families merged at a time (and, on a server, written per transaction: about a second, so a
pause waits at most that)."""
PART_FAMILIES = 1 << 20
"""The most families a part holds (SQLite): A7_B8's 9.9 M families are 10 parts, each a few seconds
of a worker and a file of about 150 MB."""
PARTS_PER_WORKER = 4
"""Parts per worker at least (while a part holds ``PART_AT_LEAST`` families): the driver copies
one part while the workers write the next ones, and the last parts end together."""
PART_AT_LEAST = 1 << 14
"""The fewest families a part holds, unless there are fewer to write."""

RESULT_COLUMNS = ("family_keys", "family_sizes", "family_spectra", "family_max_diff", "family_spectrum")
"""A grouped shard's columns of one value a family, beside ``families.npy`` (c) and the molecules."""

PARTS = "parts"
"""The folder, in a configuration's shard folder, of the parts being written."""
PART_COLUMNS = sql.FAMILY_COLUMNS[1:]
"""A part's columns: a ``Families`` row without its configuration (the copy names it)."""
PART_TABLE = f"CREATE TABLE {sql.FAMILIES} ({', '.join(PART_COLUMNS)})"
"""A part's table: a rowid table without types or keys, the rows in the order inserted.  Inserting
A7_B8's first part (1.04 M families) into it took 4.7-5.2 s against 6.5-6.8 s into a copy of
``Families`` (``WITHOUT ROWID``, keyed), and the copy gives every value ``Families``' affinity."""
PART_INSERT = f"INSERT INTO {sql.FAMILIES} VALUES ({', '.join('?' * len(PART_COLUMNS))})"

Bounds = tuple[tuple[int, int], ...]
"""Each grouped shard's families ``[low, high)`` (in its result files) that a part holds."""


@dataclass(frozen=True)
class PartJob:
    """Write the families of ``bounds`` into part number ``index``'s file, from ``ordinals`` on."""

    config: Config
    directory: str
    index: int
    bounds: Bounds
    ordinals: FamilyOrdinals
    firsts: tuple[int, ...]
    """Each grouped shard's offset, in its ``family_numbers.npy``, of the molecules of its first
    family in the part (``member_offsets``)."""


@dataclass(frozen=True)
class PartResult:
    """What a written part holds: its families, and the last one's canonical number."""

    families: int
    last: int


def write_result(
    directory: Path,
    config: Config,
    stop: threading.Event,
    report: Callable[[Step], None],
    runner: Runner | None = None,
) -> bool:
    """Stage 3: every grouped shard's families into ``Families``, merged by canonical number; True when done.

    The shards' results are merged in increasing c, the order of the table's
    primary key (``position``), so that its B-tree only grows at its end:
    inserting a shard's rows at once, scattered over the whole table, made
    A6_B8's last shard 2.3 times slower than its first.  The ordinals are
    computed as the merge streams (``FamilyOrdinals``); a resumed run starts
    after the last position stored.  The result files are read a block at a
    time (``Column``): memory does not grow with the configuration.  With a
    ``runner`` on SQLite, parts are written by its workers and copied in
    order (``write_part``); else the driver writes ``WRITE_ROWS`` families
    a transaction.  The family indexes are built at the end.
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
    if runner is not None and not sql.dialect.server:
        done = _write_parts(directory, config, runner, stop, report, families, starts, writer.ordinals)
    else:
        for columns in family_batches(directory, config, families, starts):
            if stop.is_set():
                return False
            writer.write(columns)
            report(Step(WRITING, writer.position, writer.total))
        done = True
    if not done or stop.is_set():
        return False
    build_family_indexes(config)
    return True


SIZES = RESULT_COLUMNS.index("family_sizes")
SUM_BLOCK = 1 << 22
"""Family sizes summed at a time (``member_offsets``): 32 MB."""


def member_offsets(directory: Path | str, starts: list[int]) -> list[int]:
    """Each grouped shard's offset, in its ``family_numbers.npy``, of the molecules of its family
    number ``starts[shard]``: the sizes before it, summed a block at a time."""
    offsets = []
    for shard, start in enumerate(starts):
        sizes = Column(result_folder(directory, shard) / f"{RESULT_COLUMNS[SIZES]}.npy")
        offsets.append(
            sum(int(sizes[low : min(low + SUM_BLOCK, start)].sum()) for low in range(0, start, SUM_BLOCK))
        )
    return offsets


def family_batches(
    directory: Path | str,
    config: Config,
    families: list[Column],
    starts: list[int],
    stops: list[int] | None = None,
    firsts: list[int] | None = None,
) -> Iterator[FamilyColumns]:
    """The grouped shards' families from ``starts`` to ``stops``, merged by c, ``WRITE_ROWS`` at a time.

    ``firsts`` are each shard's ``member_offsets`` at ``starts`` (computed
    when not given); each slice's sizes then say where its molecules end, so
    nothing is read but the families written.
    """
    folders = [result_folder(directory, shard) for shard in range(len(families))]
    columns = [[Column(folder / f"{name}.npy") for folder in folders] for name in RESULT_COLUMNS]
    members = [Column(folder / "family_numbers.npy") for folder in folders]
    at = member_offsets(directory, starts) if firsts is None else list(firsts)
    for slices, order, canonical in merged(families, starts, WRITE_ROWS, stops):
        read = [[column[s][low:high] for s, low, high in slices] for column in columns]
        keys, sizes, spectra, max_diff, text = (np.concatenate(parts)[order] for parts in read)
        blobs = []
        for (s, _, _), counts in zip(slices, read[SIZES]):
            ends = np.r_[0, np.cumsum(counts, dtype=np.int64)]
            numbers = members[s][at[s] : at[s] + int(ends[-1])]
            at[s] += int(ends[-1])
            # one bytes object a shard, sliced: a numpy slice and its tobytes() a family took 4 times longer
            raw, width = numbers.tobytes(), numbers.itemsize
            blobs += [raw[a:b] for a, b in pairwise((ends * width).tolist())]
        yield FamilyColumns(
            canonical=canonical[order],
            key=keys,
            nb_mol=sizes,
            spectra=spectra,
            max_diff=max_diff,
            spectrum=text.astype(f"U{config.positions}").tolist(),
            numbers=[blobs[i] for i in order.tolist()],
        )


# -- in parts, on SQLite -------------------------------------------------------------------------


def part_path(directory: Path | str, index: int) -> Path:
    """The file of a written part."""
    return Path(directory) / PARTS / f"p{index:05d}.sqlite"


def part_size(families: int, workers: int) -> int:
    """Families per part: ``PARTS_PER_WORKER`` parts a worker, within ``PART_AT_LEAST`` and
    ``PART_FAMILIES`` (read at the call: the tests shrink them)."""
    wanted = math.ceil(families / (PARTS_PER_WORKER * max(1, workers)))
    return max(1, min(PART_FAMILIES, max(PART_AT_LEAST, wanted)))


def plan_parts(
    directory: Path | str,
    config: Config,
    families: list[Column],
    starts: list[int],
    ordinals: FamilyOrdinals,
    workers: int,
) -> Iterator[PartJob]:
    """The parts of the families left to write, in order, each with its ordinals' counts at its start.

    The merge by c is walked a part at a time, reading each family's c, size
    and spectra once: the parts are consecutive ranges of the merged order,
    each with where its molecules start in each shard's members.
    """
    folders = [result_folder(directory, shard) for shard in range(len(families))]
    sizes = [Column(folder / "family_sizes.npy") for folder in folders]
    spectra = [Column(folder / "family_spectra.npy") for folder in folders]
    left = sum(len(keys) - start for keys, start in zip(families, starts))
    position = list(starts)
    firsts = member_offsets(directory, starts)
    counts = ordinals.copy()
    for index, (slices, _, _) in enumerate(merged(families, starts, part_size(left, workers))):
        at_start, members_at_start = counts.copy(), tuple(firsts)
        ends = list(position)
        for s, low, high in slices:
            these = sizes[s][low:high]
            counts.advance(these, spectra[s][low:high])
            firsts[s] += int(these.sum())
            ends[s] = high
        yield PartJob(config, str(directory), index, tuple(zip(position, ends)), at_start, members_at_start)
        position = ends


def write_part(job: PartJob) -> PartResult:
    """Write one part's families, with their ordinals, into its own SQLite file (whole or absent).

    The file has no journal and is not synced: a part killed half-way is a
    temporary file that the next run deletes and writes again.
    """
    final = part_path(job.directory, job.index)
    temporary = final.with_name(f".{final.name}.{os.getpid()}.part")
    temporary.unlink(missing_ok=True)
    ordinals = job.ordinals.copy()
    families = [Column(result_folder(job.directory, s) / "families.npy") for s in range(len(job.bounds))]
    connection = sqlite3.connect(temporary, isolation_level=None)
    written, last = 0, -1
    try:
        connection.execute("PRAGMA journal_mode = OFF")
        connection.execute("PRAGMA synchronous = OFF")
        connection.execute(PART_TABLE)
        connection.execute("BEGIN")
        starts, stops = [low for low, _ in job.bounds], [high for _, high in job.bounds]
        for columns in family_batches(job.directory, job.config, families, starts, stops, list(job.firsts)):
            check_halt()
            connection.executemany(PART_INSERT, family_rows(ordinals, columns))
            written += len(columns.canonical)
            last = int(columns.canonical[-1])
        connection.execute("COMMIT")
    finally:
        connection.close()
    os.replace(temporary, final)
    return PartResult(written, last)


def _write_parts(
    directory: Path,
    config: Config,
    runner: Runner,
    stop: threading.Event,
    report: Callable[[Step], None],
    families: list[Column],
    starts: list[int],
    ordinals: FamilyOrdinals,
) -> bool:
    """The families left to write, in parts written by ``runner``'s workers and copied in order.

    Parts written but not copied by a run that stopped are written again:
    their folder is emptied first.
    """
    folder = Path(directory) / PARTS
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    jobs = plan_parts(directory, config, families, starts, ordinals, runner.workers)
    written: dict[int, tuple[PartJob, PartResult]] = {}
    copied = 0
    position, total = ordinals.position, ordinals.layout.families
    for job, result in runner.run(write_part, jobs, stop):
        written[job.index] = job, result
        while copied in written:
            job, result = written.pop(copied)
            _copy_part(config, job, result)
            copied += 1
            position += result.families
            report(Step(WRITING, position, total))
    for index in written:  # written after a part that was not (a pause)
        part_path(directory, index).unlink(missing_ok=True)
    if stop.is_set() or position != total:
        return False
    shutil.rmtree(folder, ignore_errors=True)
    return True


def _copy_part(config: Config, job: PartJob, result: PartResult) -> None:
    """Copy a written part into ``Families`` (one transaction), then delete its file."""
    path = part_path(job.directory, job.index)
    db.execute_sql("ATTACH DATABASE ? AS part", (str(path),))
    try:
        with write_transaction(config):
            copied = db.execute_sql(_copy_statement(config))
            if copied.rowcount != result.families:
                raise CompactError(
                    f"{config.name}: part {job.index} of the families holds {copied.rowcount:,} rows, "
                    f"not {result.families:,}; explore it again to write it again"
                )
    finally:
        db.execute_sql("DETACH DATABASE part")
    path.unlink()


def _copy_statement(config: Config) -> str:
    """The copy of an attached part into ``Families``, in the order its rows were written."""
    columns = ", ".join(PART_COLUMNS)
    return (
        f"INSERT INTO main.{sql.FAMILIES} ({', '.join(sql.FAMILY_COLUMNS)}) "
        f"SELECT {sql.config_literal(config)}, {columns} FROM part.{sql.FAMILIES} ORDER BY rowid"
    )
