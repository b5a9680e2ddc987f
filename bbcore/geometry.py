"""Perimeter positions and the 8 symmetries of the square.

Coordinates are 1-based (line, column); the box is lines and columns
1..W, and the perimeter cells just outside it have a 0 or W+1 coordinate.
Positions are numbered 1..4W as in the spec: left side top to bottom,
bottom side left to right, right side bottom to top, top side right to left.

A transform ``new(l, c) = old(f(l, c))`` is stored by name; the order of
``TRANSFORMS`` is the spec's tie order (the first name wins for a
symmetric molecule).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from bbcore.config import Config
from bbcore.words import article

Cell = tuple[int, int]
Direction = tuple[int, int]

EAST, NORTH, WEST, SOUTH = (0, 1), (-1, 0), (0, -1), (1, 0)


def _id(w: int, l: int, c: int) -> Cell:
    return l, c


TRANSFORMS: dict[str, Callable[[int, int, int], Cell]] = {
    "id": _id,
    "rot180": lambda w, l, c: (w + 1 - l, w + 1 - c),
    "rot90": lambda w, l, c: (c, w + 1 - l),
    "rot270": lambda w, l, c: (w + 1 - c, l),
    "symm-h": lambda w, l, c: (l, w + 1 - c),
    "symm-v": lambda w, l, c: (w + 1 - l, c),
    "diag-1": lambda w, l, c: (c, l),
    "diag-2": lambda w, l, c: (w + 1 - c, w + 1 - l),
}
TRANSFORM_NAMES: tuple[str, ...] = tuple(TRANSFORMS)


def cell_index(width: int, cell: Cell) -> int:
    """0-based cell index of (line, column) inside the box."""
    return (cell[0] - 1) * width + (cell[1] - 1)


def cell_of(width: int, index: int) -> Cell:
    """(line, column) of a 0-based cell index."""
    return index // width + 1, index % width + 1


def entry(width: int, position: int) -> tuple[Cell, Direction]:
    """The perimeter cell a ray starts from and its inward heading."""
    w = width
    if not 1 <= position <= 4 * w:
        raise ValueError(f"position must be in 1..{4 * w}, got {position}")
    if position <= w:
        return (position, 0), EAST
    if position <= 2 * w:
        return (w + 1, position - w), NORTH
    if position <= 3 * w:
        return (3 * w + 1 - position, w + 1), WEST
    return (0, 4 * w + 1 - position), SOUTH


def position_at(width: int, cell: Cell) -> int:
    """The perimeter position of a cell just outside the box (not a corner)."""
    w = width
    line, column = cell
    if column == 0 and 1 <= line <= w:
        return line
    if line == w + 1 and 1 <= column <= w:
        return w + column
    if column == w + 1 and 1 <= line <= w:
        return 3 * w + 1 - line
    if line == 0 and 1 <= column <= w:
        return 4 * w + 1 - column
    raise ValueError(f"{cell} is not a perimeter cell of {article(f'{w} x {w} box')}")


@cache
def cell_permutation(width: int, transform: str) -> tuple[int, ...]:
    """``perm[old_cell] = new_cell``: where each old atom lands in the image."""
    f = TRANSFORMS[transform]
    perm = [0] * (width * width)
    for new in range(width * width):
        l, c = cell_of(width, new)
        perm[cell_index(width, f(width, l, c))] = new
    return tuple(perm)


@cache
def position_source(width: int, transform: str) -> tuple[int, ...]:
    """``src[P - 1] = p``: new position P sees what old position p saw."""
    f = TRANSFORMS[transform]
    src = []
    for position in range(1, 4 * width + 1):
        (l, c), _ = entry(width, position)
        src.append(position_at(width, f(width, l, c)))
    return tuple(src)


def transform_atoms(config: Config, atoms: tuple[int, ...], transform: str) -> tuple[int, ...]:
    """The atom cells of the image of a molecule under a transform.

    The plain reference for the symmetries: the tests check the engine's
    vectorised images (``engine.image_numbers``) and the spectra of images
    against it.
    """
    perm = cell_permutation(config.width, transform)
    return tuple(sorted(perm[a] for a in atoms))


def is_perimeter(width: int, cell: Cell) -> bool:
    """Whether ``cell`` is a perimeter cell (a position) of a ``width`` x ``width`` box, not a corner."""
    line, column = cell
    on_column_side = column in (0, width + 1) and 1 <= line <= width
    on_line_side = line in (0, width + 1) and 1 <= column <= width
    return on_column_side or on_line_side


def _is_corner(width: int, cell: Cell) -> bool:
    return cell[0] in (0, width + 1) and cell[1] in (0, width + 1)


def move_cursor(width: int, position: int, step: Direction) -> int:
    """The position an arrow key (``step``, a unit (line, column)) leads to from ``position``.

    The cursor walks the ring of positions and never jumps across the box:

    - an arrow along the cursor's side moves it one place along that side,
      and at the end of the side round the corner onto the next side (so
      holding one arrow per side goes round the box in position order);
    - an arrow pointing into the box turns the corner when the cursor is at
      the end of its side next to that corner (from the bottom side's last
      position, Up goes to the right side's first): the arrow's side of the
      box is then the adjacent side;
    - otherwise (into the box mid-side, or out of the box) nothing moves.
    """
    (line, column), _ = entry(width, position)
    target = (line + step[0], column + step[1])
    if is_perimeter(width, target):
        return position_at(width, target)
    if _is_corner(width, target):
        # Round the corner: its other perimeter neighbour.
        for side in ((1, 0), (-1, 0), (0, 1), (0, -1)):
            beyond = (target[0] + side[0], target[1] + side[1])
            if beyond != (line, column) and is_perimeter(width, beyond):
                return position_at(width, beyond)
    if 1 <= target[0] <= width and 1 <= target[1] <= width:
        # Into the box: only next to a corner, round it onto the adjacent side.
        for side in ((1, 0), (-1, 0), (0, 1), (0, -1)):
            if side in (step, (-step[0], -step[1])):
                continue
            if _is_corner(width, (line + side[0], column + side[1])):
                return position_at(width, (target[0] + side[0], target[1] + side[1]))
    return position
