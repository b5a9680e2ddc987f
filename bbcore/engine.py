"""The fast batch engine: whole ranges of molecules traced at once with numpy.

Checked against the reference (``bbcore.rays``) by the tests over every
molecule of small configurations.

How it goes fast:

- the box is a flat boolean array with a one-cell border, so a ray's cell,
  "ahead" and front diagonals are integer offsets, and one numpy step moves
  every live ray of every molecule of a batch;
- only canonical molecules are traced; each image's spectrum is the
  canonical spectrum with its positions permuted (spec, "The 8 symmetries");
- a spectrum is kept as a ``partner`` array: for each position the 0-based
  exit position, or ``ABSORBED_CODE`` / ``REFLECTED_CODE``; letters are only
  given when the string is made.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from bbcore.config import Config
from bbcore.geometry import TRANSFORM_NAMES, cell_permutation, entry, position_at, position_source
from bbcore.numbering import atoms_of_range, binomial_table, numbers_of
from bbcore.rays import STAT_FIELDS, RayLoopError

ABSORBED_CODE, REFLECTED_CODE = -1, -2

# Directions as indexes: 0 east, 1 north, 2 west, 3 south.
_DIRS = ((0, 1), (-1, 0), (0, -1), (1, 0))


@dataclass(frozen=True)
class Geometry:
    """Flat-index tables for one width (the box padded by one cell each side)."""

    width: int
    side: int  # W + 2
    step: np.ndarray  # flat offset of each direction
    perp: np.ndarray  # flat offset of each direction's perpendicular (dc, dl)
    turn_left_atom: np.ndarray  # new direction when the atom is at ahead + perp
    turn_right_atom: np.ndarray  # new direction when the atom is at ahead - perp
    start_cell: np.ndarray  # flat perimeter cell of each position (0-based)
    start_dir: np.ndarray
    exit_position: np.ndarray  # 0-based position of each flat cell, -1 inside
    inside: np.ndarray  # bool per flat cell
    box_cell: np.ndarray  # flat cell of each 0-based box cell


@cache
def geometry(width: int) -> Geometry:
    """The flat tables of a width, computed once."""
    side = width + 2
    flat = lambda l, c: l * side + c  # noqa: E731
    dir_index = {d: i for i, d in enumerate(_DIRS)}
    step = np.array([flat(*d) for d in _DIRS], dtype=np.int64)
    perps = [(dc, dl) for dl, dc in _DIRS]
    perp = np.array([flat(*p) for p in perps], dtype=np.int64)
    turn_left_atom = np.array([dir_index[(-p[0], -p[1])] for p in perps], dtype=np.int64)
    turn_right_atom = np.array([dir_index[p] for p in perps], dtype=np.int64)
    starts = [entry(width, p) for p in range(1, 4 * width + 1)]
    start_cell = np.array([flat(*cell) for cell, _ in starts], dtype=np.int64)
    start_dir = np.array([dir_index[d] for _, d in starts], dtype=np.int64)
    exit_position = np.full(side * side, -1, dtype=np.int64)
    inside = np.zeros(side * side, dtype=bool)
    for l in range(side):
        for c in range(side):
            if 1 <= l <= width and 1 <= c <= width:
                inside[flat(l, c)] = True
            elif (l in (0, width + 1)) != (c in (0, width + 1)):
                exit_position[flat(l, c)] = position_at(width, (l, c)) - 1
    box_cell = np.array([flat(i // width + 1, i % width + 1) for i in range(width * width)])
    return Geometry(width, side, step, perp, turn_left_atom, turn_right_atom,
                    start_cell, start_dir, exit_position, inside, box_cell)


def boards(config: Config, atoms: np.ndarray) -> np.ndarray:
    """Padded flat boolean boards, shape (k, (W+2)^2), of molecules as cells (k, N)."""
    geo = geometry(config.width)
    board = np.zeros((len(atoms), geo.side * geo.side), dtype=bool)
    rows = np.repeat(np.arange(len(atoms)), atoms.shape[1])
    board[rows, geo.box_cell[atoms.ravel()]] = True
    return board


def trace_batch(config: Config, atoms: np.ndarray, positions: np.ndarray | None = None):
    """Trace rays of a batch of molecules (cells, shape (k, N)).

    ``positions`` are 0-based (default: all 4W).  Returns three int arrays of
    shape (k, len(positions)): ``partner`` (0-based exit position, or
    ABSORBED_CODE / REFLECTED_CODE), ``length`` and ``turns``.
    """
    geo = geometry(config.width)
    positions = np.arange(config.positions) if positions is None else np.asarray(positions)
    k, npos = len(atoms), len(positions)
    board = boards(config, atoms).ravel()
    area = geo.side * geo.side
    partner = np.empty(k * npos, dtype=np.int64)
    length = np.zeros(k * npos, dtype=np.int64)
    turns = np.zeros(k * npos, dtype=np.int64)

    ray = np.arange(k * npos)  # live rays, as indexes into the outputs
    base = (ray // npos) * area  # offset of each ray's molecule in ``board``
    cell = geo.start_cell[positions][ray % npos]
    direction = geo.start_dir[positions][ray % npos]

    # Entry (rule 1): absorbed at once, or reflected at the edge.
    ahead = cell + geo.step[direction]
    hit = board[base + ahead]
    diag = board[base + ahead + geo.perp[direction]] | board[base + ahead - geo.perp[direction]]
    partner[ray[hit]] = ABSORBED_CODE
    partner[ray[~hit & diag]] = REFLECTED_CODE
    live = ~(hit | diag)
    ray, base, cell, direction = ray[live], base[live], cell[live], direction[live]

    for step in range(1, 2 * config.cells + 1):
        if len(ray) == 0:
            return tuple(a.reshape(k, npos) for a in (partner, length, turns))
        cell = cell + geo.step[direction]
        out = ~geo.inside[cell]
        partner[ray[out]] = geo.exit_position[cell[out]]
        length[ray[out]] = step - 1
        keep = ~out
        ray, base, cell, direction = ray[keep], base[keep], cell[keep], direction[keep]
        ahead = cell + geo.step[direction]
        offset = geo.perp[direction]
        hit = board[base + ahead]
        left = board[base + ahead + offset]
        right = board[base + ahead - offset]
        ended = hit | (left & right)
        partner[ray[ended]] = np.where(hit[ended], ABSORBED_CODE, REFLECTED_CODE)
        length[ray[ended]] = step
        turning = ~ended & (left | right)
        turns[ray[turning]] += 1
        direction = np.where(left, geo.turn_left_atom[direction],
                             np.where(right, geo.turn_right_atom[direction], direction))
        keep = ~ended
        ray, base, cell, direction = ray[keep], base[keep], cell[keep], direction[keep]
    raise RayLoopError(f"{config.name}: {len(ray)} rays did not end")


def letters(partner: np.ndarray) -> np.ndarray:
    """Normalised spectra as uint8 characters, shape (k, 4W), from partner arrays."""
    k, npos = partner.shape
    index = np.arange(npos)
    first = partner > index  # first end of an exit pair (an exit to oneself is impossible)
    letter = np.cumsum(first, axis=1) - 1
    paired = np.take_along_axis(letter, np.where(partner >= 0, partner, 0), axis=1)
    chars = np.where(first, letter, paired) + ord("a")
    chars = np.where(partner == ABSORBED_CODE, ord("@"), chars)
    chars = np.where(partner == REFLECTED_CODE, ord("&"), chars)
    return chars.astype(np.uint8)


def strings(chars: np.ndarray) -> list[str]:
    """Rows of a uint8 character array as Python strings."""
    chars = np.ascontiguousarray(chars, dtype=np.uint8)
    return chars.view(f"S{chars.shape[1]}").ravel().astype(str).tolist()


def molecule_chars(config: Config, atoms: np.ndarray) -> np.ndarray:
    """Molecule strings (``O``/``-``) as uint8 characters, shape (k, W*W)."""
    chars = np.full((len(atoms), config.cells), ord("-"), dtype=np.uint8)
    rows = np.repeat(np.arange(len(atoms)), atoms.shape[1])
    chars[rows, atoms.ravel()] = ord("O")
    return chars


def statistics(partner: np.ndarray, length: np.ndarray, turns: np.ndarray) -> np.ndarray:
    """The 17 statistics (columns in ``STAT_FIELDS`` order) of traced molecules."""
    index = np.arange(partner.shape[1])
    classes = {
        "absorbed": partner == ABSORBED_CODE,
        "reflected": partner == REFLECTED_CODE,
        "out": partner > index,  # an exit pair counted once, at its first end
    }
    columns: dict[str, np.ndarray] = {}
    for name, mask in classes.items():
        columns[f"{name}_number"] = mask.sum(axis=1)
        columns[f"{name}_max_length"] = np.where(mask, length, 0).max(axis=1)
        columns[f"{name}_max_turns"] = np.where(mask, turns, 0).max(axis=1)
        columns[f"{name}_tot_length"] = np.where(mask, length, 0).sum(axis=1)
        columns[f"{name}_tot_turns"] = np.where(mask, turns, 0).sum(axis=1)
    deep = classes["reflected"] & (length > 0)
    columns["reflected_deep"] = deep.sum(axis=1)
    columns["reflected_edge"] = columns["reflected_number"] - columns["reflected_deep"]
    return np.stack([columns[name] for name in STAT_FIELDS], axis=1)


@cache
def _symmetry_tables(width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cell permutations, position sources and their inverses of the 8 transforms."""
    cells = np.array([cell_permutation(width, t) for t in TRANSFORM_NAMES], dtype=np.int64)
    source = np.array([position_source(width, t) for t in TRANSFORM_NAMES], dtype=np.int64) - 1
    inverse = np.argsort(source, axis=1)
    return cells, source, inverse


def image_numbers(config: Config, atoms: np.ndarray, table: np.ndarray) -> np.ndarray:
    """Numbers of the 8 images of each molecule, shape (k, 8), in transform order."""
    cells, _, _ = _symmetry_tables(config.width)
    return np.stack(
        [numbers_of(config, np.sort(cells[t][atoms], axis=1), table) for t in range(8)], axis=1
    )


def image_partner(partner: np.ndarray, width: int, t: int) -> np.ndarray:
    """Partner arrays of the images under transform ``t`` of traced molecules."""
    _, source, inverse = _symmetry_tables(width)
    moved = partner[:, source[t]]
    return np.where(moved >= 0, inverse[t][np.maximum(moved, 0)], moved)


@dataclass
class GroupBatch:
    """Every molecule of the enantiomer groups whose canonical molecule is in a range.

    Rows are ordered by canonical number, then by number; ``transform`` holds
    indexes into ``TRANSFORM_NAMES``.
    """

    config: Config
    start: int
    stop: int
    number: np.ndarray
    canonical_number: np.ndarray
    transform: np.ndarray
    molecule: np.ndarray  # uint8 (k, W*W)
    spectrum: np.ndarray  # uint8 (k, 4W)
    stats: np.ndarray  # int (k, 17)

    def __len__(self) -> int:
        return len(self.number)

    def rows(self, config_name: str | None = None) -> list[tuple]:
        """Plain tuples: config, number, canonical_number, molecule, spectrum, transform, 17 stats."""
        name = config_name or self.config.name
        return list(zip(
            [name] * len(self), self.number.tolist(), self.canonical_number.tolist(),
            strings(self.molecule), strings(self.spectrum),
            [TRANSFORM_NAMES[t] for t in self.transform.tolist()],
            *self.stats.T.tolist(),
        ))


def explore_range(config: Config, start: int, stop: int) -> GroupBatch:
    """All enantiomer groups whose canonical molecule is numbered start..stop-1."""
    table = binomial_table(config)
    atoms = atoms_of_range(config, start, stop)
    images = image_numbers(config, atoms, table)
    own = np.arange(start, stop, dtype=np.int64)
    canonical = images.min(axis=1) == own
    atoms, images, own = atoms[canonical], images[canonical], own[canonical]

    partner, length, turns = trace_batch(config, atoms)
    stats = statistics(partner, length, turns)

    # Keep each distinct image once, with the first transform in table order.
    first = np.ones_like(images, dtype=bool)
    for t in range(1, 8):
        first[:, t] = (images[:, :t] != images[:, t:t + 1]).all(axis=1)
    cells, _, _ = _symmetry_tables(config.width)
    parts = []
    for t in range(8):
        rows = np.flatnonzero(first[:, t])
        image_atoms = np.sort(cells[t][atoms[rows]], axis=1)
        parts.append((rows, np.full(len(rows), t), images[rows, t], image_atoms,
                      letters(image_partner(partner[rows], config.width, t))))
    group = np.concatenate([p[0] for p in parts])
    number = np.concatenate([p[2] for p in parts])
    order = np.lexsort((number, own[group]))
    group, number = group[order], number[order]
    return GroupBatch(
        config=config, start=start, stop=stop,
        number=number,
        canonical_number=own[group],
        transform=np.concatenate([p[1] for p in parts])[order].astype(np.int8),
        molecule=molecule_chars(config, np.concatenate([p[3] for p in parts])[order]),
        spectrum=np.concatenate([p[4] for p in parts])[order],
        stats=stats[group],
    )
