"""What the three stages of a compact exploration share: records, shard files and folders, phases.

A *record* is ``(key, number)`` of one canonical molecule (``RECORD``; the
number's top bits are ``SHARED`` and ``LOWEST``, ``record_numbers`` reads
them); a *shard* is the records whose key
ends with the same bits, in one folder of files, one file per traced range
(``shard_folder``, ``range_name``); a grouped shard's result waits in its own
folder (``result_folder``) until the writing stage stores it.  Tracing writes
the shard files, grouping reads them and writes the results, writing reads
those: the names live here, below all three (``bbcore.compact``).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bbcore import server
from bbcore.config import Config
from bbcore.store import is_server

SHARD_RECORDS = 1 << 22
"""Records per shard, about (64 MB): the grouping's memory is a few times this."""
MAX_SHARDS = 1 << 12
"""More shards than this would be mostly empty folders: larger configurations get larger shards."""

SHARED = np.uint64(1 << 63)
"""A record's top bit: two distinct images of the molecule have the same spectrum (``engine.spectrum_keys``'
``shared``; records keyed by hash, before 2026-12-02: the same hash, maybe the same spectrum)."""
LOWEST_SHIFT = 59
"""Where a record's ``LOWEST`` bits start: numbers below ``1 << LOWEST_SHIFT`` have room for them."""
LOWEST = np.uint64(0xF << LOWEST_SHIFT)
"""A record's bits 59 to 62: 1 + the transform whose image gives the key when the molecule is
asymmetric (8 distinct images, ``SHARED`` not set: ``engine.spectrum_keys``' ``lowest``), else 0 (also
in records written before 2026-12-02, and when numbers leave no room): its runs are grouped by the
general kernel (``engine.families_of_runs``)."""
NUMBER = np.uint64((1 << LOWEST_SHIFT) - 1)
RECORD = np.dtype([("key", "<u8"), ("number", "<u8")])


def _records_lowest(config: Config) -> bool:
    """Whether a configuration's records hold ``LOWEST``: its numbers leave room for it."""
    return config.nb_mol < 1 << LOWEST_SHIFT


def record_number_bits(
    config: Config, numbers: np.ndarray, shared: np.ndarray, lowest: np.ndarray
) -> np.ndarray:
    """The ``number`` field of canonical molecules' records: the number, ``SHARED`` and ``LOWEST``."""
    bits = numbers.astype(np.uint64) | np.where(shared, SHARED, np.uint64(0))
    if _records_lowest(config):
        bits |= (lowest.astype(np.int64) + 1).astype(np.uint64) << np.uint64(LOWEST_SHIFT)
    return bits


def record_numbers(config: Config, raw: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A record ``number`` field's parts: the molecules' numbers (int64), ``SHARED`` (bool) and
    ``lowest`` (int64, -1 when not asymmetric or not recorded)."""
    if not _records_lowest(config):
        return (raw & ~SHARED).astype(np.int64), (raw & SHARED) != 0, np.full(len(raw), -1, np.int64)
    numbers = (raw & NUMBER).astype(np.int64)
    lowest = ((raw & LOWEST) >> np.uint64(LOWEST_SHIFT)).astype(np.int64) - 1
    return numbers, (raw & SHARED) != 0, lowest


def shard_count(config: Config, records_per_shard: int | None = None) -> int:
    """Shards for a configuration: a power of two, about ``records_per_shard`` canonical records
    each (``SHARD_RECORDS``, read at the call: tests/test_shrunk.py shrinks it)."""
    expected = config.nb_mol // 8 + 1
    per_shard = SHARD_RECORDS if records_per_shard is None else records_per_shard
    shards = 1
    while shards * per_shard < expected and shards < MAX_SHARDS:
        shards *= 2
    return shards


def default_shard_root(db_path: Path | str) -> Path:
    """Where shard files go by default: a folder next to the database (a server's: ``server.shard_root``)."""
    if is_server(db_path):
        return server.shard_root(db_path)
    return Path(f"{db_path}.shards")


def shard_folder(directory: Path | str, shard: int) -> Path:
    """The folder of one shard."""
    return Path(directory) / f"s{shard:05d}"


def range_name(start: int, stop: int) -> str:
    """The file name of a traced range's records, in every shard folder."""
    return f"{start}-{stop}.keys"


def range_start(name: str) -> int:
    """The first number of a traced range, from the name of one of its files (``range_name``)."""
    return int(name.split("-", 1)[0])


def result_folder(directory: Path | str, shard: int) -> Path:
    """The folder of a grouped shard's result, until it is written to the database."""
    return Path(directory) / "results" / f"r{shard:05d}"


def config_directory(db_path: Path | str, config: Config, shard_root: Path | str | None = None) -> Path:
    """The folder of a configuration's shard files."""
    root = Path(shard_root) if shard_root is not None else default_shard_root(db_path)
    return root / config.name


def forget_shards(db_path: Path | str, config: Config, shard_root: Path | str | None = None) -> None:
    """Delete a configuration's shard files (when it is reset)."""
    delete_folder(db_path, config_directory(db_path, config, shard_root))


def delete_folder(db_path: Path | str, directory: Path) -> None:
    """Delete a configuration's shard folder, and the default root beside the database once empty
    (a root given with ``--shards`` is the user's: it stays)."""
    shutil.rmtree(directory, ignore_errors=True)
    root = default_shard_root(db_path)
    if directory.parent.resolve() == root.resolve():
        try:
            root.rmdir()
        except OSError:  # other configurations' folders are in it, or it is gone
            pass


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
