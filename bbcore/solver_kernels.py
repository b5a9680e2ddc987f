"""The solver's compiled path search: ``bbcore.solver``'s ``_PathSearch`` as one numba kernel.

The search is the plain one's (``bbcore.solver._PathSearch``, kept as the
reference and tested against this one over whole small games): the shown
rays traced one after another over the cells the backbone leaves undecided,
branching on a cell where a ray's next move depends on it (an atom first,
then empty), a branch ended where a ray gives another result than the shown
one; a *leaf* is a branch where every shown ray gives its result.

What differs is only how it is run:

- the depth-first search keeps its own stack in arrays (a frame per cell
  branched on: the cell, and the ray's state when it was reached), so that
  the kernel returns after ``budget`` branches with the whole search in its
  arrays, and the caller looks at its stop event and deadline before
  calling it again (a kernel cannot look at a ``threading.Event``);
- the leaves are not kept: each is added into its *group*, the leaves with
  the same atoms set and the same free cells (those every shown ray left
  undecided), as the number of leaves, and per cell how many leaves set it
  to an atom, how many to empty; a group's placements are its leaves times
  a binomial sum, which the caller works out with Python's integers; the
  first ``rows`` leaves are also written out (the caller lists placements
  from them, or draws from them), and a second run (``picks``) writes out
  the leaves drawn by their rank in their group.

The box is padded by one cell each side (``(H + 2) x (W + 2)``, row by row),
the border cells empty: every cell a ray looks at is then an index of it.
A value is -1 (undecided), 0 (empty) or 1 (an atom).
"""

from __future__ import annotations

from typing import Final

import numpy as np

DONE: Final = 0
"""The search is over."""

PAUSED: Final = 1
"""The search ran its ``budget`` of branches and can be resumed."""

GROW: Final = 2
"""A leaf of a new group had no slot left: the caller grows the group arrays and resumes."""

# The search's scalars (``state``), kept between calls.
DEPTH, PLACED, OPEN, RAY, LINE, COLUMN, DL, DC, STARTED, GROUPS, STORED, BRANCHES = range(12)
STATE_SIZE: Final = 12


def path_kernel(
    value,  # int8 (H+2)*(W+2): -1 undecided, 0 empty, 1 an atom; the border 0
    side,  # W + 2
    height,
    width,
    starts,  # int64 (R, 4): each ray's entry cell (line, column) and heading (dl, dc), padded
    expected,  # int64 (R,): the shown codes (-1 absorbed, -2 reflected, else exit position - 1)
    exit_code,  # int64 (H+2)*(W+2): the 0-based position of a border cell
    box_cell,  # int64 (W*H,): the padded index of each box cell
    least,
    most,
    state,  # int64 (STATE_SIZE,)
    stack_cell,  # int64 (W*H + 1,): the padded cell of each frame
    stack_ray,  # int64 (W*H + 1, 6): ray, line, column, dl, dc, started at each frame
    slot,  # int64 (most + 1, W*H + 1): the group of (atoms set, free cells), -1 none yet
    leaves,  # int64 (G,): leaves of each group
    atoms,  # int64 (G, (H+2)*(W+2)): per padded cell, the group's leaves that set an atom there
    empties,  # int64 (G, (H+2)*(W+2)): ... that set it empty
    rows,  # int8 (S, W*H): the first S leaves, 0 free, 1 empty, 2 an atom
    row_group,  # int64 (S,)
    pick_start,  # int64 (G + 1,): the picks of group g are pick_rank[pick_start[g]:pick_start[g+1]]
    pick_rank,  # int64: the ranks of the leaves drawn in their group, ascending per group
    pick_next,  # int64 (G,): the next pick of each group
    pick_rows,  # int8 (P, W*H): the drawn leaves, in pick_rank's order
    counting,  # whether leaves are added to their groups (not on the picking run)
    budget,
):  # pragma: no cover - compiled by numba
    """Run the search until it is over (``DONE``), ``budget`` branches are done (``PAUSED``), or
    a new group finds no slot (``GROW``); everything it needs to go on is in the arrays."""
    depth, placed, open_ = state[DEPTH], state[PLACED], state[OPEN]
    i, line, column, dl, dc = state[RAY], state[LINE], state[COLUMN], state[DL], state[DC]
    started = state[STARTED]
    groups, stored, branches = state[GROUPS], state[STORED], state[BRANCHES]
    rays = len(expected)
    cells = len(box_cell)
    done = 0
    status = DONE
    while True:
        # Trace the current ray until a cell it looks at is undecided, it ends, or all rays gave theirs.
        branch = -1
        failed = False
        if i == rays:
            g = slot[placed, open_]
            if g < 0:
                if groups == len(leaves):
                    status = GROW
                    break
                g = groups
                slot[placed, open_] = g
                groups += 1
            rank = leaves[g]
            leaves[g] += 1
            if counting:
                for d in range(depth):
                    c = stack_cell[d]
                    if value[c] == 1:
                        atoms[g, c] += 1
                    else:
                        empties[g, c] += 1
                if stored < len(rows):
                    for b in range(cells):
                        rows[stored, b] = value[box_cell[b]] + 1
                    row_group[stored] = g
                    stored += 1
            else:
                while pick_next[g] < pick_start[g + 1] and pick_rank[pick_next[g]] == rank:
                    for b in range(cells):
                        pick_rows[pick_next[g], b] = value[box_cell[b]] + 1
                    pick_next[g] += 1
            failed = True  # a leaf: go back for the next branch
        else:
            # As bbcore.rays.trace: the cell ahead, then its two diagonals (left, right).
            while True:
                al, ac = line + dl, column + dc
                a = al * side + ac
                if value[a] == -1:
                    branch = a
                    break
                result = -3
                if value[a] == 1:
                    result = -1
                else:
                    lc = (al + dc) * side + ac + dl
                    if value[lc] == -1:
                        branch = lc
                        break
                    if started == 0 and value[lc] == 1:
                        result = -2
                    else:
                        rc = (al - dc) * side + ac - dl
                        if value[rc] == -1:
                            branch = rc
                            break
                        if started == 0:
                            if value[rc] == 1:
                                result = -2
                            else:
                                line, column, started = al, ac, 1
                                continue
                        elif value[lc] == 1 and value[rc] == 1:
                            result = -2
                        else:
                            if value[lc] == 1:
                                dl, dc = -dc, -dl
                            elif value[rc] == 1:
                                dl, dc = dc, dl
                            line, column = line + dl, column + dc
                            if 1 <= line <= height and 1 <= column <= width:
                                continue
                            result = exit_code[line * side + column]
                if result != expected[i]:
                    failed = True
                    break
                i += 1
                if i == rays:
                    break
                line, column, dl, dc, started = starts[i, 0], starts[i, 1], starts[i, 2], starts[i, 3], 0
        if branch >= 0:
            if done == budget:
                status = PAUSED
                break
            done += 1
            branches += 1
            # A frame: the cell and the ray's state, to come back to with the cell empty.
            stack_cell[depth] = branch
            stack_ray[depth, 0], stack_ray[depth, 1], stack_ray[depth, 2] = i, line, column
            stack_ray[depth, 3], stack_ray[depth, 4], stack_ray[depth, 5] = dl, dc, started
            depth += 1
            if placed < most:
                value[branch] = 1
                placed += 1
                open_ -= 1
                continue
            if placed + open_ - 1 >= least:
                value[branch] = 0
                open_ -= 1
                continue
            value[branch] = 0  # neither value allowed: undone at once below
            open_ -= 1
            failed = True
        if failed:
            # Back to the last frame whose cell can still be made empty.
            resumed = False
            while depth > 0:
                c = stack_cell[depth - 1]
                v = value[c]
                value[c] = -1
                open_ += 1
                placed -= v
                if v == 1 and placed + open_ - 1 >= least:
                    value[c] = 0
                    open_ -= 1
                    f = depth - 1
                    i, line, column = stack_ray[f, 0], stack_ray[f, 1], stack_ray[f, 2]
                    dl, dc, started = stack_ray[f, 3], stack_ray[f, 4], stack_ray[f, 5]
                    resumed = True
                    break
                depth -= 1
            if not resumed:
                status = DONE
                break
    state[DEPTH], state[PLACED], state[OPEN] = depth, placed, open_
    state[RAY], state[LINE], state[COLUMN], state[DL], state[DC] = i, line, column, dl, dc
    state[STARTED], state[GROUPS], state[STORED], state[BRANCHES] = started, groups, stored, branches
    return status


def padded_tables(width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    """The padded index of each box cell, and the 0-based position of each border cell (-3
    elsewhere), for ``path_kernel``."""
    from bbcore import geometry

    side = width + 2
    box_cell = np.array(
        [(line + 1) * side + column + 1 for line in range(height) for column in range(width)], dtype=np.int64
    )
    exit_code = np.full((height + 2) * side, -3, dtype=np.int64)
    for line in range(height + 2):
        for column in range(side):
            inside_lines, inside_columns = 1 <= line <= height, 1 <= column <= width
            if inside_lines != inside_columns:  # a border cell, not a corner
                exit_code[line * side + column] = geometry.position_at(width, (line, column), height) - 1
    return box_cell, exit_code
