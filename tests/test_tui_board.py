"""The board widget's geometry: the perimeter cursor and the drawn ray paths."""

from __future__ import annotations

import pytest

from bbcore.geometry import move_cursor
from bbcore.rays import trace
from bbcore.render import render_board
from bbtui.widgets.board import path_glyphs, ray_caption

CORNERS = set("┌┐└┘")


@pytest.mark.parametrize("width", [2, 4, 8])
def test_the_cursor_goes_round_the_box(width: int) -> None:
    # Down the left side, right along the bottom, up the right side, left along the top.
    steps = [(1, 0)] * width + [(0, 1)] * width + [(-1, 0)] * width + [(0, -1)] * width
    position, seen = 1, [1]
    for step in steps:
        position = move_cursor(width, position, step)
        seen.append(position)
    # Round the corners the cursor stays on the perimeter: every position, then 1 again.
    assert sorted(set(seen)) == list(range(1, 4 * width + 1))
    assert seen[-1] == 1


def test_arrows_inward_turn_a_near_corner_and_never_cross_the_box() -> None:
    # The jumps: from 16 (bottom side, last) Up went to 25, from 3 Right to 22.
    assert move_cursor(8, 16, (-1, 0)) == 17  # up, round the corner onto the right side
    assert move_cursor(8, 3, (0, 1)) == 3  # into the box mid-side: nothing moves
    assert move_cursor(8, 1, (0, 1)) == 32  # left side, top: right onto the top side
    assert move_cursor(8, 9, (-1, 0)) == 8  # bottom side, first: up onto the left side
    assert move_cursor(4, 3, (0, -1)) == 3  # outward: nothing
    assert move_cursor(4, 16, (-1, 0)) == 16


@pytest.mark.parametrize("width", [2, 3, 4, 8, 13])
def test_every_arrow_from_every_position_stays_next_door(width: int) -> None:
    """Along the ring of positions, an arrow moves the cursor one place at most."""
    ring = 4 * width
    for position in range(1, ring + 1):
        for step in ((1, 0), (-1, 0), (0, 1), (0, -1)):
            there = move_cursor(width, position, step)
            assert 1 <= there <= ring
            assert (there - position) % ring in (0, 1, ring - 1), (position, step, there)


def test_a_turning_ray_is_drawn_with_a_corner() -> None:
    atoms = (6,)  # one atom at line 2, column 3 of a 4 x 4 box
    ray = trace(4, atoms, 3)  # enters line 3 eastward, turns south before the atom
    assert (ray.result, ray.exit, ray.turns) == ("out", 6, 1)
    board = render_board(4, "------O---------", None, path=path_glyphs(4, ray))
    assert board.splitlines()[3:5] == ["  ─ ┐ - -", "  - │ - -"]
    assert ray_caption(ray) == ("ray 3 → 6", "3 cells, 1 turn")


@pytest.mark.parametrize("atoms", [(0, 5, 10), (1, 6, 9), (2, 7, 13)])
def test_every_ray_draws_its_cells_and_turns(atoms: tuple[int, ...]) -> None:
    for position in range(1, 17):
        ray = trace(4, atoms, position)
        glyphs = path_glyphs(4, ray)
        assert set(glyphs) == set(ray.path)
        if len(set(ray.path)) == len(ray.path):  # no cell crossed twice
            assert sum(glyph in CORNERS for glyph in glyphs.values()) == ray.turns


def test_rays_drawn_together_join_where_they_cross() -> None:
    # No atom: the ray from 2 crosses line 2 eastward, the ray from 7 climbs column 3.
    across, up = trace(4, (), 2), trace(4, (), 7)
    glyphs = path_glyphs(4, across, up)
    assert glyphs[(2, 3)] == "┼"
    assert set(glyphs) == set(across.path) | set(up.path)
    assert {cell: glyphs[cell] for cell in across.path if cell != (2, 3)} == {
        cell: "─" for cell in across.path if cell != (2, 3)
    }
