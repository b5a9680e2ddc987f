"""Sorted columns in ``.npy`` files, read a slice at a time and merged into one order.

The compact exploration's writing stage merges its shards' results by
canonical number, and ``bbcore export`` its sorted chunks of spectra, this
way: the memory stays that of one chunk, whatever the configuration.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np


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
    keys: list, starts: list[int], rows: int, stops: list[int] | None = None
) -> Iterator[tuple[list[tuple[int, int, int]], np.ndarray, np.ndarray]]:
    """Sorted arrays (or ``Column``s) merged into one order, a chunk of about ``rows`` at a time.

    Yields ``(slices, order, joined)``: ``slices`` are ``(array, low,
    high)``, the next elements of some arrays, ``joined`` their
    concatenation and ``order`` sorts it.  Each chunk holds every remaining
    element up to a bound, the smallest of the last elements of the arrays'
    next blocks, so the chunks follow each other in order.  ``starts`` are
    where each array begins (a resumed write), ``stops`` where each ends
    (default: its end; a part of the writing stage).
    """
    position = list(starts)
    ends = [len(k) for k in keys] if stops is None else list(stops)
    block = max(1, rows // max(1, len(keys)))
    while True:
        live = [s for s in range(len(keys)) if position[s] < ends[s]]
        if not live:
            return
        windows = {s: keys[s][position[s] : min(position[s] + block, ends[s])] for s in live}
        lasts = [windows[s][-1] for s in live if position[s] + block < ends[s]]
        bound = min(lasts) if lasts else None
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
