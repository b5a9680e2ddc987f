"""Molecule numbers, atom positions and molecule strings.

A molecule is a sorted tuple of 0-based cells (``Atoms``).  Molecules of a
configuration are numbered from 1 in the order of
``itertools.combinations(range(W*H), N)`` (a square: W*W); the number is
computed directly with the combinatorial number system, never by scanning.
A range of atom counts (``A3-6_B8``) has no numbers of its own: each count
is numbered as its own configuration (``Config.with_atoms``).

The trick: the lexicographic rank of ``c`` equals ``C(M, N) - 1`` minus the
co-lexicographic rank of its complement ``d_i = M - 1 - c_{N-1-i}``, and a
co-lexicographic rank is just ``sum C(d_i, i + 1)``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from math import comb

import numpy as np

from bbcore.config import Config
from bbcore.geometry import box_transforms, transform_atoms
from bbcore.words import article

Atoms = tuple[int, ...]
"""A molecule as its sorted 0-based atom cells."""

ATOM, EMPTY = "O", "-"


def number_of(config: Config, atoms: Iterable[int]) -> int:
    """The 1-based number of the molecule with these atom cells."""
    _fixed(config)
    cells = sorted(atoms)
    m, n = config.cells, config.atoms
    if len(cells) != n or len(set(cells)) != n or not all(0 <= c < m for c in cells):
        raise ValueError(f"{config.name} needs {n} distinct cells in 0..{m - 1}, got {cells}")
    colex = sum(comb(m - 1 - c, n - i) for i, c in enumerate(cells))
    return comb(m, n) - colex


def atoms_of(config: Config, number: int) -> Atoms:
    """The atom cells of molecule ``number`` (1-based)."""
    _fixed(config)
    m, n = config.cells, config.atoms
    if not 1 <= number <= config.nb_mol:
        raise ValueError(f"{config.name} has molecules 1..{config.nb_mol:,}, not {number:,}")
    rank = config.nb_mol - number  # co-lexicographic rank of the complement
    complement = []
    x = m - 1
    for i in range(n, 0, -1):
        while comb(x, i) > rank:
            x -= 1
        complement.append(x)
        rank -= comb(x, i)
        x -= 1
    return tuple(m - 1 - d for d in complement)


def image_numbers_of(config: Config, number: int) -> tuple[int, ...]:
    """The numbers of the images of molecule ``number`` under the box's transforms (the 8 of
    a square, the 4 of a rectangle: ``geometry.box_transforms``), in the spec's order.

    Python integers, so any configuration: one molecule's enantiomer group,
    canonical number and transform (``min``, ``index``) without the int64
    batch path (``engine.image_numbers``, checked against this).
    """
    atoms = atoms_of(config, number)
    transforms = box_transforms(config.width, config.height)
    return tuple(number_of(config, transform_atoms(config, atoms, t)) for t in transforms)


def _fixed(config: Config) -> None:
    """ValueError (one line) for a range of atom counts, which has no molecule numbers."""
    if not config.fixed_count:
        raise ValueError(
            f"{config.name} is a range of atom counts: molecules are numbered within one count, "
            f"such as {config.with_atoms(config.atoms).name}"
        )


def molecule_string(config: Config, atoms: Iterable[int]) -> str:
    """The W*W-character string of a molecule: ``O`` atom, ``-`` empty."""
    board = [EMPTY] * config.cells
    for cell in atoms:
        board[cell] = ATOM
    return "".join(board)


def atoms_from_string(config: Config, molecule: str) -> Atoms:
    """The atom cells of a molecule string (``O`` atom, ``-`` empty)."""
    if len(molecule) != config.cells or set(molecule) - {ATOM, EMPTY}:
        raise ValueError(f"{article(config.name)} molecule is {config.cells} characters of 'O' and '-'")
    atoms = tuple(i for i, ch in enumerate(molecule) if ch == ATOM)
    if len(atoms) != config.atoms:
        raise ValueError(f"{article(config.name)} molecule has {config.atoms} atoms, not {len(atoms)}")
    return atoms


# Vectorised versions for the fast engine: int64 arrays, for configurations
# whose molecule count fits (``fits_int64``).  The scalar functions above take
# Python integers, so every configuration has its numbers (A84_B13 has about
# 4.6 x 10^49 molecules); the batch paths refuse the others in one line.

INT64_LIMIT = 2**62
"""Configurations with fewer molecules than this are numbered in int64 batches:
numbers, ranks and their sums stay clear of 2^63 - 1."""


class NumbersTooLarge(OverflowError):
    """Batch work asked of a configuration whose numbers do not fit int64: one line for the user."""


def fits_int64(config: Config) -> bool:
    """Whether the molecule numbers of ``config`` fit the int64 batch paths."""
    return config.nb_mol < INT64_LIMIT


def binomial_table(config: Config) -> np.ndarray:
    """``table[x, i] = C(x, i)`` for x in 0..W*W and i in 0..N, as int64, capped at C(W*W, N).

    Only entries below the molecule count are ever looked up (the terms of a
    rank, and the searches for one), so the cap changes no answer; it keeps
    configurations with many atoms (A160_B13: C(169, 84) ~ 4.6 x 10^49 in column
    84, but only C(169, 9) ~ 2.5 x 10^14 molecules) inside int64.
    """
    m, n = config.cells, config.atoms
    if not fits_int64(config):
        raise NumbersTooLarge(
            f"{config.name} has {config.nb_mol:,} molecules: too many for 64-bit numbers "
            f"(batch work needs fewer than 2^62)"
        )
    cap = config.nb_mol
    return np.array([[min(comb(x, i), cap) for i in range(n + 1)] for x in range(m + 1)], dtype=np.int64)


def numbers_of(config: Config, atoms: np.ndarray, table: np.ndarray | None = None) -> np.ndarray:
    """Numbers of a batch of molecules given as sorted cells, shape (k, N)."""
    table = binomial_table(config) if table is None else table
    m, n = config.cells, config.atoms
    colex = np.zeros(len(atoms), dtype=np.int64)
    for i in range(n):
        colex += table[m - 1 - atoms[:, i], n - i]
    return config.nb_mol - colex


def atoms_of_numbers(config: Config, numbers: np.ndarray, table: np.ndarray | None = None) -> np.ndarray:
    """Sorted atom cells, shape (k, N), of a batch of molecule numbers."""
    table = binomial_table(config) if table is None else table
    m, n = config.cells, config.atoms
    rank = config.nb_mol - np.asarray(numbers, dtype=np.int64)
    atoms = np.empty((len(rank), n), dtype=np.int64)
    for k, i in enumerate(range(n, 0, -1)):
        # largest x with C(x, i) <= rank; column i is non-decreasing in x
        x = np.searchsorted(table[:, i], rank, side="right") - 1
        atoms[:, k] = m - 1 - x
        rank = rank - table[x, i]
    return atoms


def atoms_of_range(config: Config, start: int, stop: int) -> np.ndarray:
    """Atom cells, shape (stop - start, N), of molecules numbered start..stop-1."""
    return atoms_of_numbers(config, np.arange(start, stop, dtype=np.int64))


def molecule_batches(
    config: Config, size: int = 1 << 15, cells: Sequence[int] | np.ndarray | None = None
) -> Iterator[np.ndarray]:
    """Atom cells (uint8, uint16 past 256 cells; shape (k, N), k <= size) of every molecule,
    in number order.

    With ``cells`` (sorted), only the molecules whose atoms are all among
    them.  Molecules sharing their first atoms are consecutive in number
    order, so a batch is a run of such prefixes completed with numpy.
    """
    allowed = np.arange(config.cells) if cells is None else np.asarray(cells)
    for combination in _combination_batches(len(allowed), config.atoms, size):
        yield allowed[combination].astype(np.uint8 if config.cells <= 256 else np.uint16)


def _combination_batches(m: int, n: int, size: int) -> Iterator[np.ndarray]:
    """``itertools.combinations(range(m), n)`` as int16 arrays of at most ``size`` rows."""

    def complete(prefixes: list[tuple[int, ...]]) -> np.ndarray:
        rows = np.array(prefixes, dtype=np.int16)
        for j in range(rows.shape[1], n):
            last = rows[:, -1].astype(np.int64)
            counts = m - n + j - last  # the next cell runs from last + 1 to m - n + j
            starts = np.cumsum(counts) - counts
            offsets = np.arange(counts.sum()) - np.repeat(starts, counts)
            new = np.repeat(last, counts) + 1 + offsets
            rows = np.column_stack([np.repeat(rows, counts, axis=0), new.astype(np.int16)])
        return rows

    def walk(prefix: tuple[int, ...]) -> Iterator[np.ndarray]:
        j = len(prefix)
        group: list[tuple[int, ...]] = []
        total = 0
        for cell in range(prefix[-1] + 1 if prefix else 0, m - n + j + 1):
            count = comb(m - 1 - cell, n - j - 1)
            if count > size:
                if group:
                    yield complete(group)
                    group, total = [], 0
                yield from walk(prefix + (cell,))
                continue
            if total + count > size:
                yield complete(group)
                group, total = [], 0
            group.append(prefix + (cell,))
            total += count
        if group:
            yield complete(group)

    if n <= m:
        yield from walk(())
