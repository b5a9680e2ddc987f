"""Stage 3 of a compact exploration, writing: every grouped shard's families into ``Families``.

Only the driver's process runs it: the shards' results are merged by
canonical number (``bbcore.columns``) and ``families.FamilyWriter`` writes
the rows with their ordinals, then the family indexes.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path

import numpy as np

from bbcore.columns import Column, merged
from bbcore.compact.shards import WRITING, CompactError, Step, result_folder
from bbcore.config import Config
from bbcore.families import FamilyColumns, FamilyWriter
from bbcore.store import config_row

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
