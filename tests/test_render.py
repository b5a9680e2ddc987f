"""Board diagrams as text, in the spec's style."""

from __future__ import annotations

import pytest

from bbcore.config import Config
from bbcore.render import (
    config_positions_figure,
    diagram_grid,
    differing_atoms,
    max_atoms_differing,
    position_labels,
    render_board,
    side_by_side,
)


def diagram(text: str) -> str:
    """A diagram written in the test between ``|`` margins, as render_board returns it."""
    return "\n".join(line.split("|")[1].rstrip() for line in text.strip().splitlines())


def test_spec_diagram_of_a2_b4_number_2():
    """The spec's worked example diagram, character for character."""
    expected = diagram("""
        |  @ & @ &|
        |@ O - O - @|
        |& - - - - c|
        |a - - - - a|
        |b - - - - b|
        |  @ & @ c|
    """)
    assert render_board(4, "O-O-------------", "@&ab@&@cbac@&@&@") == expected


def test_diagram_of_a2_b4_number_119():
    """Number 119 (rot180 of 2) draws as the spec's diagram turned upside down."""
    expected = diagram("""
        |  c @ & @|
        |a - - - - a|
        |b - - - - b|
        |c - - - - &|
        |@ - O - O @|
        |  & @ & @|
    """)
    assert render_board(4, "-------------O-O", "abc@&@&@@&ba@&@c") == expected


def test_multi_digit_labels_line_up():
    """Every column is as wide as the widest label, so two-digit positions line up."""
    expected = diagram("""
        |   12 11 10|
        | 1  -  -  -  9|
        | 2  -  -  -  8|
        | 3  -  -  -  7|
        |    4  5  6|
    """)
    assert render_board(3, "-" * 9, position_labels(3)) == expected


def test_traditional_notation_with_rays_not_shot():
    """H, R and numbers at both ends of a ray; a blank label is a ray not shot."""
    expected = diagram("""
        |    H 10|
        | H  O  -  2|
        |10  -  O  2|
        |       R|
    """)
    assert render_board(2, "O--O", ["H", "10", "", "R", "2", "2", "10", "H"]) == expected


def test_a4_b8_positions_figure():
    """The A4_B8 position figure: each label above, below or beside its row or column."""
    config = Config(4, 8)
    grid = diagram_grid(8, "-" * 64, position_labels(8))
    assert grid[9][1] == "9" and grid[9][8] == "16"  # bottom, columns 1 and 8
    assert grid[0][8] == "25" and grid[0][1] == "32"  # top, columns 8 and 1
    assert grid[8][9] == "17" and grid[1][9] == "24"  # right, lines 8 and 1
    assert grid[1][0] == "1" and grid[8][0] == "8"  # left, lines 1 and 8
    lines = config_positions_figure(config).splitlines()
    assert len(lines) == 10
    for line, row in zip(lines, grid):
        for k, token in enumerate(row):
            assert line[3 * k : 3 * k + 2].strip() == token.strip(), (line, k)


def test_marked_atoms_and_path():
    """Marked atoms are drawn X, path cells only on empty cells."""
    rendered = render_board(
        3, "O-O-O----", None, marked={2}, path={(1, 2): "*", (2, 2): "+", (1, 1): "*", (3, 1): "|"}
    )
    assert rendered.splitlines()[1:4] == ["  O * X", "  - O -", "  | - -"]
    plain = render_board(3, "O-O-O----", None, path=[(3, 3)])
    assert plain.splitlines()[3] == "  - - *"


def test_blank_labels_are_one_blank_cell():
    """A label of spaces or nothing is a ray not shot: one blank token, as narrow as any."""
    labels = ["H", "   ", "", "R", "2", "2", " ", "H"]
    assert diagram_grid(2, "O--O", labels)[0] == [" ", "H", " ", " "]
    assert diagram_grid(2, "O--O", labels)[2][0] == " "
    assert render_board(2, "O--O", labels) == render_board(2, "O--O", ["H", "", "", "R", "2", "2", "", "H"])
    assert render_board(2, "O--O", labels).splitlines()[1:3] == ["H O - 2", "  - O 2"]


def test_no_trailing_spaces():
    """Lines end at their last label, never with spaces."""
    rendered = render_board(4, "O-O-------------", "@&ab@&@c    @&@&")
    assert all(line == line.rstrip() for line in rendered.splitlines())


def test_side_by_side():
    """Blocks are padded to their width and joined with the gap, wrapped when asked."""
    assert side_by_side(["ab\ncd", "x"]) == "ab    x\ncd"
    assert side_by_side(["ab\ncd", "xyz", "k"], gap=1, max_width=6) == "ab xyz\ncd\n\nk"
    assert side_by_side([]) == ""


def test_side_by_side_fills_each_shelf_to_the_width_exactly():
    """A block goes on the shelf when the shelf's width with it (gaps included) is at most
    ``max_width``: the first shelf and the next ones alike."""
    assert side_by_side(["aa", "bb", "cc", "dd", "ee"], gap=1, max_width=5) == "aa bb\n\ncc dd\n\nee"
    assert side_by_side(["aa", "bb", "cc"], gap=2, max_width=6) == "aa  bb\n\ncc"
    assert side_by_side(["aa", "bb", "cc"], gap=2, max_width=10) == "aa  bb  cc"
    assert side_by_side(["a", "b", "c"], gap=2, max_width=5) == "a  b\n\nc"  # 1 + 2 + 1 + 2 + 1 > 5


def test_side_by_side_keeps_a_block_wider_than_the_width_on_its_own_shelf():
    assert side_by_side(["abcdefgh", "x", "y"], gap=1, max_width=4) == "abcdefgh\n\nx y"
    assert side_by_side(["x", "abcdefgh"], gap=1, max_width=4) == "x\n\nabcdefgh"


def test_side_by_side_pads_short_and_empty_blocks():
    """A shorter block leaves its column blank below it; an empty block takes no width; the last
    line keeps its last character, even a marked atom ``X``."""
    assert side_by_side(["a\nb\nc", "xy", "z\nw"], gap=1) == "a xy z\nb    w\nc"
    assert side_by_side(["ab\nc", "x\ny"], gap=1) == "ab x\nc  y"  # a block's lines left-aligned
    assert side_by_side(["", "x"], gap=2) == "  x"
    boards = [
        render_board(2, "OO", None, marked={1}, height=1),
        render_board(2, "-O", None, marked={1}, height=1),
    ]
    assert side_by_side(boards) == "\n  O X      - X"


@pytest.mark.parametrize(
    "molecules, cells",
    [
        (["OO--", "O-O-"], {1, 2}),
        (["OO--", "OO--"], set()),
        ([], set()),
        (["O--O", "-OO-", "O-O-"], {0, 1, 2, 3}),
    ],
)
def test_differing_atoms(molecules, cells):
    """The cells holding an atom in some molecules of a group but not all."""
    assert differing_atoms(molecules) == cells


def test_max_atoms_differing():
    """The largest number of atoms moved between two molecules of a group."""
    assert max_atoms_differing(["OO--", "O-O-", "--OO"]) == 2
    assert max_atoms_differing(["OO--", "O-O-"]) == 1
    assert max_atoms_differing(["OO--"]) == 0


def test_a_rectangles_positions_figure():
    """A 4 x 3 box (A2_B4x3): 3 rows of 4 cells, its 14 positions numbered around it counterclockwise
    from the top of the left side, as the spec's numbering figure; no position 15.  And a box
    taller than wide."""
    assert position_labels(4, 3) == [str(p) for p in range(1, 15)]
    assert position_labels(8) == [str(p) for p in range(1, 33)]
    assert config_positions_figure(Config(2, 4, 3)) == "\n".join(
        [
            "   14 13 12 11",
            " 1  -  -  -  - 10",
            " 2  -  -  -  -  9",
            " 3  -  -  -  -  8",
            "    4  5  6  7",
        ]
    )
    # taller than wide (2 x 3): more positions than its width's square has
    assert config_positions_figure(Config(2, 2, 3)) == "\n".join(
        ["   10  9", " 1  -  -  8", " 2  -  -  7", " 3  -  -  6", "    4  5"]
    )
