"""Perimeter positions and the symmetries of the box.

Coordinates are 1-based (line, column); the box is H lines of W columns
(a square when H == W), and the perimeter cells just outside it have a 0,
H+1 or W+1 coordinate.  Positions are numbered 1..2(W+H), extending the
spec's square numbering: left side lines 1..H, bottom side columns 1..W,
right side lines H up to 1, top side columns W back to 1.  When W == H
it is exactly the spec's 1..4W.

Every function takes the box as ``width`` and an optional ``height``
(None: the square ``width`` x ``width``), so that a square's callers keep
passing one number.

A transform ``new(l, c) = old(f(l, c))`` is stored by name; the order of
``TRANSFORMS`` is the spec's tie order (the first name wins for a
symmetric molecule).  A square has all 8; a rectangle (W != H) only the 4
that map the box onto itself (``id``, ``rot180``, ``symm-h``, ``symm-v``:
``box_transforms``): a quarter turn or a diagonal flip makes it H wide and
W high, another box.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from bbcore.config import Config
from bbcore.words import article

Cell = tuple[int, int]
Direction = tuple[int, int]

EAST, NORTH, WEST, SOUTH = (0, 1), (-1, 0), (0, -1), (1, 0)


def _id(w: int, h: int, l: int, c: int) -> Cell:
    return l, c


# (w, h, l, c) -> the old cell; w and h are the box's (equal where a transform turns it).
TRANSFORMS: dict[str, Callable[[int, int, int, int], Cell]] = {
    "id": _id,
    "rot180": lambda w, h, l, c: (h + 1 - l, w + 1 - c),
    "rot90": lambda w, h, l, c: (c, w + 1 - l),
    "rot270": lambda w, h, l, c: (w + 1 - c, l),
    "symm-h": lambda w, h, l, c: (l, w + 1 - c),
    "symm-v": lambda w, h, l, c: (h + 1 - l, c),
    "diag-1": lambda w, h, l, c: (c, l),
    "diag-2": lambda w, h, l, c: (w + 1 - c, w + 1 - l),
}
TRANSFORM_NAMES: tuple[str, ...] = tuple(TRANSFORMS)
RECTANGLE_TRANSFORMS: tuple[str, ...] = ("id", "rot180", "symm-h", "symm-v")
"""The transforms that map a W x H box (W != H) onto itself, in the spec's order."""


def box_transforms(width: int, height: int | None = None) -> tuple[str, ...]:
    """The transforms of a box onto itself: all 8 for a square, 4 for a rectangle."""
    return TRANSFORM_NAMES if height is None or height == width else RECTANGLE_TRANSFORMS


def _height(width: int, height: int | None) -> int:
    return width if height is None else height


def cell_index(width: int, cell: Cell) -> int:
    """0-based cell index of (line, column) inside the box."""
    return (cell[0] - 1) * width + (cell[1] - 1)


def cell_of(width: int, index: int) -> Cell:
    """(line, column) of a 0-based cell index."""
    return index // width + 1, index % width + 1


def entry(width: int, position: int, height: int | None = None) -> tuple[Cell, Direction]:
    """The perimeter cell a ray starts from and its inward heading."""
    w, h = width, _height(width, height)
    if not 1 <= position <= 2 * (w + h):
        raise ValueError(f"position must be in 1..{2 * (w + h)}, got {position}")
    if position <= h:
        return (position, 0), EAST
    if position <= h + w:
        return (h + 1, position - h), NORTH
    if position <= 2 * h + w:
        return (2 * h + w + 1 - position, w + 1), WEST
    return (0, 2 * (w + h) + 1 - position), SOUTH


def position_at(width: int, cell: Cell, height: int | None = None) -> int:
    """The perimeter position of a cell just outside the box (not a corner)."""
    w, h = width, _height(width, height)
    line, column = cell
    if column == 0 and 1 <= line <= h:
        return line
    if line == h + 1 and 1 <= column <= w:
        return h + column
    if column == w + 1 and 1 <= line <= h:
        return 2 * h + w + 1 - line
    if line == 0 and 1 <= column <= w:
        return 2 * (w + h) + 1 - column
    raise ValueError(f"{cell} is not a perimeter cell of {article(f'{w} x {h} box')}")


def _transform(width: int, height: int, transform: str) -> Callable[[int, int], Cell]:
    """The transform's ``old(l, c)`` on this box; ValueError when it does not map the box onto itself."""
    if transform not in box_transforms(width, height):
        raise ValueError(f"{transform} does not map {article(f'{width} x {height} box')} onto itself")
    f = TRANSFORMS[transform]
    return lambda l, c: f(width, height, l, c)


@cache
def cell_permutation(width: int, transform: str, height: int | None = None) -> tuple[int, ...]:
    """``perm[old_cell] = new_cell``: where each old atom lands in the image."""
    h = _height(width, height)
    f = _transform(width, h, transform)
    perm = [0] * (width * h)
    for new in range(width * h):
        l, c = cell_of(width, new)
        perm[cell_index(width, f(l, c))] = new
    return tuple(perm)


@cache
def position_source(width: int, transform: str, height: int | None = None) -> tuple[int, ...]:
    """``src[P - 1] = p``: new position P sees what old position p saw."""
    h = _height(width, height)
    f = _transform(width, h, transform)
    src = []
    for position in range(1, 2 * (width + h) + 1):
        (l, c), _ = entry(width, position, h)
        src.append(position_at(width, f(l, c), h))
    return tuple(src)


def transform_atoms(config: Config, atoms: tuple[int, ...], transform: str) -> tuple[int, ...]:
    """The atom cells of the image of a molecule under a transform.

    The plain reference for the symmetries: the tests check the engine's
    vectorised images (``engine.image_numbers``) and the spectra of images
    against it.
    """
    perm = cell_permutation(config.width, transform, config.height)
    return tuple(sorted(perm[a] for a in atoms))


def is_perimeter(width: int, cell: Cell, height: int | None = None) -> bool:
    """Whether ``cell`` is a perimeter cell (a position) of the box, not a corner."""
    h = _height(width, height)
    line, column = cell
    on_column_side = column in (0, width + 1) and 1 <= line <= h
    on_line_side = line in (0, h + 1) and 1 <= column <= width
    return on_column_side or on_line_side


def _is_corner(width: int, height: int, cell: Cell) -> bool:
    return cell[0] in (0, height + 1) and cell[1] in (0, width + 1)


def move_cursor(width: int, position: int, step: Direction, height: int | None = None) -> int:
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
    h = _height(width, height)
    (line, column), _ = entry(width, position, h)
    target = (line + step[0], column + step[1])
    if is_perimeter(width, target, h):
        return position_at(width, target, h)
    if _is_corner(width, h, target):
        # Round the corner: its other perimeter neighbour.
        for side in ((1, 0), (-1, 0), (0, 1), (0, -1)):
            beyond = (target[0] + side[0], target[1] + side[1])
            if beyond != (line, column) and is_perimeter(width, beyond, h):
                return position_at(width, beyond, h)
    if 1 <= target[0] <= h and 1 <= target[1] <= width:
        # Into the box: only next to a corner, round it onto the adjacent side.
        for side in ((1, 0), (-1, 0), (0, 1), (0, -1)):
            if side in (step, (-step[0], -step[1])):
                continue
            if _is_corner(width, h, (line + side[0], column + side[1])):
                return position_at(width, (target[0] + side[0], target[1] + side[1]), h)
    return position
