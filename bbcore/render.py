"""Board diagrams as text, in the spec's style.

A diagram is the box with one label per perimeter position around it::

       @ & @ &
     @ O - O - @
     & - - - - c
     a - - - - a
     b - - - - b
       @ & @ c

``diagram_grid`` returns the tokens row by row so that a UI can style them;
``render_board`` joins them into text.  Every column is as wide as the
widest label, so multi-digit labels (traditional notation) line up.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from bbcore.config import Config
from bbcore.geometry import Cell
from bbcore.numbering import ATOM, EMPTY

MARKED_ATOM = "X"
"""An atom that is not common to every molecule of a spectral group."""
PATH = "*"
"""A cell crossed by a drawn ray."""
BLANK = " "


def position_labels(width: int, height: int | None = None) -> list[str]:
    """The position numbers 1..2(W+H) as labels (the spec's numbering figure)."""
    return [str(p) for p in range(1, 2 * (width + (height or width)) + 1)]


def diagram_grid(
    width: int,
    molecule: str,
    labels: Sequence[str] | str | None = None,
    *,
    marked: Iterable[int] = (),
    path: dict[Cell, str] | Iterable[Cell] = (),
    height: int | None = None,
) -> list[list[str]]:
    """Rows of tokens: a corner, W labels or cells, a corner; H+2 rows.

    ``molecule`` is the W*H string (H = ``height``, the square's W when
    None); ``labels`` one token per position (a spectrum string works),
    blank when None; ``marked`` cells are drawn as ``X``; ``path`` cells
    (or a cell -> character mapping) are drawn on empty cells.
    """
    w, h = width, height or width
    n = 2 * (w + h)
    labels = [BLANK] * n if labels is None else [lab if lab.strip() else BLANK for lab in labels]
    marked = set(marked)
    path_chars = dict(path) if isinstance(path, dict) else {cell: PATH for cell in path}
    top = [BLANK] + [labels[n - c] for c in range(1, w + 1)] + [BLANK]
    bottom = [BLANK] + [labels[h + c - 1] for c in range(1, w + 1)] + [BLANK]
    rows = [top]
    for line in range(1, h + 1):
        row = [labels[line - 1]]
        for column in range(1, w + 1):
            index = (line - 1) * w + column - 1
            token = molecule[index]
            if token == ATOM and index in marked:
                token = MARKED_ATOM
            elif token == EMPTY and (line, column) in path_chars:
                token = path_chars[(line, column)]
            row.append(token)
        row.append(labels[2 * h + w - line])
        rows.append(row)
    rows.append(bottom)
    return rows


def render_board(
    width: int,
    molecule: str,
    labels: Sequence[str] | str | None = None,
    *,
    marked: Iterable[int] = (),
    path: dict[Cell, str] | Iterable[Cell] = (),
    height: int | None = None,
) -> str:
    """The diagram as text lines (no trailing spaces)."""
    rows = diagram_grid(width, molecule, labels, marked=marked, path=path, height=height)
    size = max(len(token) for row in rows for token in row)
    return "\n".join(" ".join(token.rjust(size) for token in row).rstrip() for row in rows)


def side_by_side(blocks: Sequence[str], *, gap: int = 4, max_width: int = 0) -> str:
    """Text blocks next to each other, wrapped to ``max_width`` columns when > 0."""
    if not blocks:
        return ""
    split = [block.splitlines() for block in blocks]
    widths = [max((len(line) for line in lines), default=0) for lines in split]
    shelves: list[list[int]] = [[]]
    used = 0
    for i, w in enumerate(widths):
        if shelves[-1] and max_width and used + gap + w > max_width:
            shelves.append([])
            used = 0
        used += (gap if shelves[-1] else 0) + w
        shelves[-1].append(i)
    out = []
    for shelf in shelves:
        height = max(len(split[i]) for i in shelf)
        for r in range(height):
            parts = [(split[i][r] if r < len(split[i]) else "").ljust(widths[i]) for i in shelf]
            out.append((" " * gap).join(parts).rstrip())
        out.append("")
    return "\n".join(out).rstrip("\n")


def differing_atoms(molecules: Sequence[str]) -> set[int]:
    """Cells holding an atom in some but not all of the molecules."""
    if not molecules:
        return set()
    cells = range(len(molecules[0]))
    return {i for i in cells if len({m[i] for m in molecules}) > 1}


def max_atoms_differing(molecules: Sequence[str]) -> int:
    """The most atoms that differ between two molecules of a group (half the symmetric difference)."""
    best = 0
    for i, first in enumerate(molecules):
        for second in molecules[i + 1 :]:
            diff = sum(1 for a, b in zip(first, second) if a == ATOM and b != ATOM)
            best = max(best, diff)
    return best


def config_positions_figure(config: Config) -> str:
    """The box of a configuration with its position numbers around it."""
    return render_board(
        config.width, EMPTY * config.cells, position_labels(config.width, config.height), height=config.height
    )
