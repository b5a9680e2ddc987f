"""The reference ray rules: perimeter positions, rays, spectra and statistics."""

from __future__ import annotations

import textwrap

import pytest
from games import assert_reversible
from hypothesis import given, settings
from hypothesis import strategies as st

from bbcore import rays
from bbcore.config import Config
from bbcore.geometry import EAST, NORTH, SOUTH, WEST, cell_of, entry, move_cursor, position_at
from bbcore.numbering import atoms_of

A2_B4 = Config(2, 4)

# The spec's figure of the A4_B8 positions (two-digit top and bottom labels
# are written downwards, one digit per row).
A4_B8_FIGURE = textwrap.dedent("""\
       3 3 3 2 2 2 2 2
       2 1 0 9 8 7 6 5
     1 - - - - - - - - 24
     2 - - - O - - - - 23
     3 - - O - O - - - 22
     4 - - - O - - - - 21
     5 - - - - - - - - 20
     6 - - - - - - - - 19
     7 - - - - - - - - 18
     8 - - - - - - - - 17
       9 1 1 1 1 1 1 1
         0 1 2 3 4 5 6
""")


def figure_entries(figure: str, width: int) -> dict[int, tuple[tuple[int, int], tuple[int, int]]]:
    """Read a position figure: each position's perimeter cell and inward heading."""
    rows = [row.ljust(80) for row in figure.splitlines()]
    box_rows = rows[2 : 2 + width]
    columns = [x for x, ch in enumerate(box_rows[0]) if ch in "-O"]
    assert len(columns) == width

    def downward(top: str, bottom: str, x: int) -> int:
        return int((top[x] + bottom[x]).strip())

    entries = {}
    for c, x in enumerate(columns, start=1):
        entries[downward(rows[0], rows[1], x)] = ((0, c), SOUTH)
        entries[downward(rows[2 + width], rows[3 + width], x)] = ((width + 1, c), NORTH)
    for line, row in enumerate(box_rows, start=1):
        entries[int(row.split()[0])] = ((line, 0), EAST)
        entries[int(row.split()[-1])] = ((line, width + 1), WEST)
    return entries


def test_spec_position_figure_a4_b8():
    """Every position of the spec's A4_B8 figure enters where the figure puts it."""
    entries = figure_entries(A4_B8_FIGURE, 8)
    assert sorted(entries) == list(range(1, 33))
    for position, expected in entries.items():
        assert entry(8, position) == expected, position
        assert position_at(8, expected[0]) == position


@pytest.mark.parametrize(
    "position, cell, heading",
    [
        (1, (1, 0), EAST),
        (8, (8, 0), EAST),
        (9, (9, 1), NORTH),
        (16, (9, 8), NORTH),
        (17, (8, 9), WEST),
        (24, (1, 9), WEST),
        (25, (0, 8), SOUTH),
        (32, (0, 1), SOUTH),
    ],
)
def test_position_corners_a4_b8(position, cell, heading):
    """The spec's examples: 9 is bottom column 1, 17 right line 8, 24 right line 1, 25 top column 8."""
    assert entry(8, position) == (cell, heading)


@pytest.mark.parametrize("width", range(2, 14))
def test_positions_are_the_perimeter(width):
    """Positions 1..4W are the 4W non-corner cells around the box, each exactly once."""
    perimeter = {
        (l, c)
        for l in range(width + 2)
        for c in range(width + 2)
        if (l in (0, width + 1)) != (c in (0, width + 1))
    }
    cells = [entry(width, p)[0] for p in range(1, 4 * width + 1)]
    assert sorted(cells) == sorted(perimeter)
    assert [position_at(width, cell) for cell in cells] == list(range(1, 4 * width + 1))


@pytest.mark.parametrize("position", [0, 17, -3])
def test_entry_rejects_bad_positions(position):
    """Positions outside 1..4W are an error that says the range."""
    with pytest.raises(ValueError) as error:
        entry(4, position)
    assert str(error.value) == f"position must be in 1..16, got {position}"


@pytest.mark.parametrize("cell", [(0, 0), (5, 5), (2, 2), (0, 5)])
def test_position_at_rejects_corners_and_inside(cell):
    """Corners and cells inside the box have no position."""
    with pytest.raises(ValueError) as error:
        position_at(4, cell)
    assert str(error.value) == f"{cell} is not a perimeter cell of a 4 x 4 box"


# The worked example.


def test_worked_example_reference(reference, worked_example):
    """A2_B4 numbers 2 and 119: every field of the spec's record, from the reference."""
    for number, record in worked_example.items():
        assert reference(A2_B4, number) == record


@pytest.mark.parametrize("number", [2, 119])
def test_worked_example_public_functions(worked_example, number):
    """rays.spectrum and rays.statistics (tracing every ray) give the spec's values."""
    expected = worked_example[number]
    atoms = atoms_of(A2_B4, number)
    assert rays.spectrum(A2_B4, atoms) == expected[4]
    assert rays.statistics(A2_B4, atoms) == dict(zip(rays.STAT_FIELDS, expected[6:]))


def test_worked_example_rays():
    """The spec's account of number 2's rays, ray by ray."""
    traced = rays.trace_all(A2_B4, atoms_of(A2_B4, 2))
    assert [r.position for r in traced] == list(range(1, 17))
    absorbed = sorted(r.length for r in traced if r.result == "absorbed")
    reflected = sorted(r.length for r in traced if r.result == "reflected")
    pairs = sorted((r.length, r.turns) for r in traced if r.result == "out" and r.position < r.exit)
    assert absorbed == [0, 0, 0, 1, 3, 3]
    assert reflected == [0, 0, 0, 3]
    assert pairs == [(3, 1), (4, 0), (4, 0)]
    assert (traced[7].exit, traced[10].exit) == (11, 8)


def test_stat_fields():
    """17 fields: 5 per class of ray, plus the edge/deep split of reflections."""
    expected = {
        f"{kind}_{stat}"
        for kind in ("absorbed", "reflected", "out")
        for stat in ("number", "max_length", "max_turns", "tot_length", "tot_turns")
    }
    expected |= {"reflected_edge", "reflected_deep"}
    assert len(rays.STAT_FIELDS) == 17
    assert set(rays.STAT_FIELDS) == expected
    assert rays.STAT_FIELDS[:5] == (
        "absorbed_number",
        "absorbed_max_length",
        "absorbed_max_turns",
        "absorbed_tot_length",
        "absorbed_tot_turns",
    )


# Each rule on a hand-made box.


def cell(width: int, line: int, column: int) -> int:
    """0-based cell index of (line, column)."""
    return (line - 1) * width + column - 1


def outcome(width: int, atoms: list[int], position: int) -> tuple:
    """A ray's result, exit, length and turns."""
    ray = rays.trace(width, atoms, position)
    return ray.result, ray.exit, ray.length, ray.turns


@pytest.mark.parametrize("width", [2, 5, 13])
def test_empty_box_rays_go_straight_across(width):
    """With no atom in the way, every ray crosses the box to the opposite position."""
    opposite = {p: 3 * width + 1 - p for p in range(1, width + 1)}
    opposite.update({p: 5 * width + 1 - p for p in range(width + 1, 2 * width + 1)})
    opposite.update({q: p for p, q in opposite.items()})
    for position in range(1, 4 * width + 1):
        assert outcome(width, [], position) == ("out", opposite[position], width, 0)


def test_absorbed_at_entry():
    """An atom in the first cell absorbs the ray with length 0."""
    assert outcome(3, [cell(3, 2, 1)], 2) == ("absorbed", None, 0, 0)


def test_reflected_at_edge():
    """An atom on a front diagonal of the entry point reflects the ray at once."""
    assert outcome(3, [cell(3, 2, 1)], 1) == ("reflected", None, 0, 0)
    assert outcome(3, [cell(3, 2, 1)], 3) == ("reflected", None, 0, 0)


def test_absorbed_after_crossing():
    """An atom ahead after i steps absorbs the ray with length i."""
    assert outcome(3, [cell(3, 2, 2)], 2) == ("absorbed", None, 1, 0)
    assert outcome(3, [cell(3, 3, 3)], 7) == ("absorbed", None, 0, 0)
    assert outcome(3, [cell(3, 3, 3)], 3) == ("absorbed", None, 2, 0)


def test_deep_reflection():
    """Atoms on both front diagonals reflect the ray; the reversal is not a turn."""
    atoms = [cell(3, 1, 3), cell(3, 3, 3)]
    assert outcome(3, atoms, 2) == ("reflected", None, 2, 0)


def test_turn_away_from_a_diagonal_atom():
    """One diagonal atom turns the ray 90 degrees away from it, counting one turn."""
    centre = [cell(3, 2, 2)]
    assert outcome(3, centre, 1) == ("out", 12, 1, 1)
    assert outcome(3, centre, 12) == ("out", 1, 1, 1)
    assert outcome(3, centre, 3) == ("out", 4, 1, 1)


def test_one_turn_path():
    """The path lists the cells crossed; the turn is made in the cell that sees the atom."""
    ray = rays.trace(4, [cell(4, 3, 3)], 2)
    assert ray.path == ((2, 1), (2, 2), (1, 2))
    assert (ray.result, ray.exit, ray.length, ray.turns) == ("out", 15, 3, 1)


def test_two_turns():
    """Two diagonal atoms in a row turn the ray twice, each counted."""
    ray = rays.trace(5, [cell(5, 4, 4), cell(5, 1, 2)], 3)
    assert ray.path == ((3, 1), (3, 2), (3, 3), (2, 3), (2, 4), (2, 5))
    assert (ray.result, ray.exit, ray.length, ray.turns) == ("out", 14, 6, 2)


def test_normalise():
    """Letters are renamed in order of first appearance; @ and & are kept."""
    assert rays.normalise("ba@b&a") == "ab@a&b"
    assert rays.normalise("cc@&dd") == "aa@&bb"
    assert rays.normalise("@&ab@&@cbac@&@&@") == "@&ab@&@cbac@&@&@"
    assert rays.normalise("") == ""


# Properties of the rules, on random molecules.


def assert_normalised(spectrum: str) -> None:
    """Each letter appears exactly twice, first appearances in alphabetical order."""
    letters = [ch for ch in spectrum if ch not in "@&"]
    firsts = list(dict.fromkeys(letters))
    assert firsts == [chr(ord("a") + i) for i in range(len(firsts))]
    assert all(letters.count(letter) == 2 for letter in firsts)


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_rays_are_reversible(random_molecules, data):
    """p exits at q iff q exits at p, with the same length and turns."""
    assert_reversible(*data.draw(random_molecules))


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_rays_end_and_never_cross_an_atom(random_molecules, data):
    """Every ray ends; its length is the cells it crossed, none of them an atom."""
    config, atoms = data.draw(random_molecules)
    occupied = {cell_of(config.width, a) for a in atoms}
    for ray in rays.trace_all(config, atoms):
        assert ray.length == len(ray.path) <= 2 * config.cells
        assert ray.turns <= ray.length
        assert not occupied & set(ray.path)
        if ray.result == "out":
            assert ray.exit != ray.position
            assert ray.length >= 1
        else:
            assert ray.exit is None


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_spectrum_matches_rays(random_molecules, data):
    """The spectrum string is normalised and says what each ray did."""
    config, atoms = data.draw(random_molecules)
    traced = rays.trace_all(config, atoms)
    spectrum = rays.spectrum(config, atoms)
    assert len(spectrum) == config.positions
    assert_normalised(spectrum)
    assert rays.normalise(spectrum) == spectrum
    for ray, ch in zip(traced, spectrum):
        if ray.result == "absorbed":
            assert ch == "@"
        elif ray.result == "reflected":
            assert ch == "&"
        else:
            assert spectrum[ray.exit - 1] == ch not in "@&"
    stats = rays.statistics(config, atoms)
    assert stats["absorbed_number"] == spectrum.count("@")
    assert stats["reflected_number"] == spectrum.count("&")
    assert stats["reflected_edge"] + stats["reflected_deep"] == stats["reflected_number"]
    assert 2 * stats["out_number"] + spectrum.count("@") + spectrum.count("&") == config.positions


def test_one_central_atom_statistics_by_hand():
    """One atom in the middle of a 5 x 5 box, counted by hand: the 4 rays of its row and column
    are absorbed after 2 cells; the 8 of the rows and columns beside it turn once and come out
    after 3 cells (4 pairs); the 8 of the edges cross 5 cells (4 pairs); none is reflected, so
    every reflected figure, the maxima too, is 0."""
    stats = rays.statistics(Config(1, 5), (cell(5, 3, 3),))
    assert stats == {
        **dict.fromkeys(rays.STAT_FIELDS, 0),
        "absorbed_number": 4,
        "absorbed_max_length": 2,
        "absorbed_tot_length": 8,
        "out_number": 8,
        "out_max_length": 5,
        "out_max_turns": 1,
        "out_tot_length": 4 * 5 + 4 * 3,
        "out_tot_turns": 4,
    }


def test_a_full_box_has_no_ray_out():
    """Every cell but one full (A3_B2): no ray comes out, so the out figures are all 0."""
    stats = rays.statistics(Config(3, 2), (0, 1, 2))
    assert {k: v for k, v in stats.items() if k.startswith("out_")} == dict.fromkeys(
        [k for k in rays.STAT_FIELDS if k.startswith("out_")], 0
    )
    assert stats["absorbed_number"] + stats["reflected_number"] == 8


RIGHT, LEFT, UP, DOWN = (0, 1), (0, -1), (-1, 0), (1, 0)  # (line, column) steps, written out


def test_path_headings_by_hand():
    """Each cell's heading in and out: a turn is where they differ; an out ray leaves its last
    cell towards its exit, an absorbed one keeps its heading, a ray reflected at the edge has
    no cell."""
    atom = (cell(5, 3, 3),)
    turning = rays.trace(5, atom, 2)  # in along row 2, turns north at (2, 2), out at the top
    assert turning.path == ((2, 1), (2, 2), (1, 2))
    assert rays.path_headings(5, turning) == [(RIGHT, RIGHT), (RIGHT, UP), (UP, UP)]
    absorbed = rays.trace(5, atom, 3)
    assert rays.path_headings(5, absorbed) == [(RIGHT, RIGHT), (RIGHT, RIGHT)]
    across = rays.trace(5, atom, 11)  # from the right along row 5, straight out at the left
    assert rays.path_headings(5, across) == [(LEFT, LEFT)] * 5
    down = rays.trace(5, atom, 16)  # from the top along column 5
    assert rays.path_headings(5, down) == [(DOWN, DOWN)] * 5
    corner = rays.trace(5, (cell(5, 2, 5),), 1)  # along row 1, turns north in its last cell, (1, 4)
    assert corner.path == ((1, 1), (1, 2), (1, 3), (1, 4)) and corner.exit == 17
    assert rays.path_headings(5, corner) == [(RIGHT, RIGHT)] * 3 + [(RIGHT, UP)]
    edge = rays.trace(3, [cell(3, 2, 1)], 1)
    assert edge.result == "reflected" and rays.path_headings(3, edge) == []
    deep = rays.trace(3, [cell(3, 1, 3), cell(3, 3, 3)], 2)  # reflected in (2, 2), back out
    assert deep.path == ((2, 1), (2, 2))
    assert rays.path_headings(3, deep) == [(RIGHT, RIGHT), (RIGHT, RIGHT)]


@pytest.mark.parametrize("width", [2, 3, 5])
def test_the_cursor_walks_the_ring_of_positions(width):
    """Each side's own arrow (down the left side, right along the bottom, up the right side,
    left along the top) goes to the next position, round the corners; the opposite arrow to
    the one before; an arrow out of the box moves nothing; an arrow into the box turns a corner
    only from the end of a side (onto the adjacent side's end), and mid-side moves nothing."""
    last = 4 * width
    sides = [(DOWN, RIGHT), (RIGHT, UP), (UP, LEFT), (LEFT, DOWN)]  # (along, into the box)
    for position in range(1, last + 1):
        along, into = sides[(position - 1) // width]
        index = (position - 1) % width
        after, before = position % last + 1, (position - 2) % last + 1
        assert move_cursor(width, position, along) == after, (position, along)
        assert move_cursor(width, position, (-along[0], -along[1])) == before, position
        assert move_cursor(width, position, (-into[0], -into[1])) == position, position
        inward = after if index == width - 1 else before if index == 0 else position
        assert move_cursor(width, position, into) == inward, position
