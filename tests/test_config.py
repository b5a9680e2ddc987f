"""Configurations ``AN_BW``, ``AN_BWxH``, ``AN-M_BW``: parsing, range checks and their one-line errors."""

from __future__ import annotations

from math import comb

import pytest

from bbcore.config import Config, ConfigError, exploring_refusal, parse_config, validation_error


@pytest.mark.parametrize("text", ["A4_B8", "a4_b8", "A4_b8", "a4_B8"])
def test_parse_is_case_insensitive(text):
    """Any letter case gives the same configuration, spelled canonically."""
    config = parse_config(text)
    assert config == Config(4, 8)
    assert config.name == "A4_B8"
    assert str(config) == "A4_B8"


def test_config_sizes():
    """Cells, perimeter positions and molecule counts follow from N and W."""
    config = parse_config("A4_B8")
    assert (config.atoms, config.width) == (4, 8)
    assert config.cells == 64
    assert config.positions == 32
    assert config.nb_mol == 635_376
    assert parse_config("A2_B4").nb_mol == 120


@pytest.mark.parametrize(
    "text, expected",
    [
        ("A1_B2", Config(1, 2)),
        ("A3_B2", Config(3, 2)),
        ("A1_B13", Config(1, 13)),
        ("A168_B13", Config(168, 13)),
        ("A24_B5", Config(24, 5)),
        ("A1_B30", Config(1, 30)),
        ("A899_B30", Config(899, 30)),
        ("A1_B2x30", Config(1, 2, 30)),
        ("A59_B30x2", Config(59, 30, 2)),
        ("A1-59_B30x2", Config(1, 30, 2, 59)),
    ],
)
def test_bounds_accepted(text, expected):
    """The limits 1 <= N <= M < W*H and 2 <= W, H <= 30 are inclusive."""
    assert parse_config(text) == expected
    assert validation_error(text) is None


def assert_one_line_error(text: str, *fragments: str) -> str:
    """Parse ``text``, expect a one-line ConfigError containing every fragment."""
    with pytest.raises(ConfigError) as caught:
        parse_config(text)
    message = str(caught.value)
    assert "\n" not in message
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    assert validation_error(text) == message
    return message


@pytest.mark.parametrize("text, width", [("A1_B1", "1"), ("A4_B31", "31"), ("A1_B0", "0"), ("a4_b99", "99")])
def test_width_out_of_range(text, width):
    """A width outside 2..30 names the width, the accepted range and the value."""
    message = assert_one_line_error(text, "width", "2", "30", width)
    assert "atoms" not in message


@pytest.mark.parametrize("text, height", [("A1_B8x1", "1"), ("A4_B8x31", "31"), ("A1-3_B5x40", "40")])
def test_height_out_of_range(text, height):
    """A height outside 2..30 names the height, the accepted range and the value."""
    message = assert_one_line_error(text, "height", "2", "30", height)
    assert "atoms" not in message


def test_rectangles_and_ranges():
    """A rectangle is W wide and H high; a range keeps its least count in ``atoms``; a square
    with a fixed count keeps the name it always had, however it is written."""
    rectangle = parse_config("a11_b14X10")
    assert (rectangle.atoms, rectangle.atoms_max, rectangle.width, rectangle.height) == (11, 11, 14, 10)
    assert rectangle.name == "A11_B14x10" and rectangle.box == "14 x 10"
    assert (rectangle.cells, rectangle.positions) == (140, 48)
    assert not rectangle.square and rectangle.fixed_count and not rectangle.square_fixed
    assert rectangle.nb_mol == comb(140, 11)
    spread = parse_config("A3-6_B8")
    assert (spread.atoms, spread.atoms_max, spread.height) == (3, 6, 8)
    assert spread.name == "A3-6_B8" and not spread.square_fixed and spread.square
    assert spread.nb_mol == sum(comb(64, n) for n in range(3, 7))
    assert spread.with_atoms(5) == Config(5, 8)
    assert parse_config("A4-10_B10x10").name == "A4-10_B10"
    for same in ("A4_B8x8", "A4-4_B8", "A4-4_B8x8"):
        assert parse_config(same) == Config(4, 8) and parse_config(same).name == "A4_B8"
    assert Config(4, 8).square_fixed and Config(4, 8, 8, 4) == Config(4, 8)
    assert parse_config("A4_B6x3") != parse_config("A4_B3x6")


def test_range_upside_down():
    """A range written largest first says so, and how to write it."""
    message = assert_one_line_error("A5-3_B8", "upside down", "5 to 3", "A3-5_B")
    assert "width" not in message


@pytest.mark.parametrize(
    "text, limit, got", [("A3-64_B8", "63", "64"), ("A20_B4x5", "19", "20"), ("A1-24_B6x4", "23", "24")]
)
def test_atoms_fill_the_rectangle(text, limit, got):
    """N (or M) >= W*H names the cells of that box."""
    assert_one_line_error(text, "atoms", f"between 1 and {limit}", f"got {got}")


def test_what_cannot_be_explored():
    """Only squares with a fixed count up to 13 wide are explored; the others say why in one line."""
    assert exploring_refusal(Config(4, 8)) is None
    for text, fragment in (("A4_B8x6", "rectangle"), ("A3-6_B8", "range"), ("A4_B14", "13 x 13")):
        line = exploring_refusal(parse_config(text))
        assert line and "\n" not in line and fragment in line and "decoded" in line


@pytest.mark.parametrize(
    "text, limit, got",
    [("A0_B8", "63", "0"), ("A64_B8", "63", "64"), ("A4_B2", "3", "4"), ("A169_B13", "168", "169")],
)
def test_atoms_out_of_range(text, limit, got):
    """A number of atoms outside 1..W*W-1 names the atoms, the limit for that box and the value."""
    message = assert_one_line_error(text, "atoms", f"between 1 and {limit}", f"got {got}")
    assert "width" not in message


@pytest.mark.parametrize(
    "text",
    [
        "",
        "A4B8",
        "4_8",
        "A4_B",
        "A_B8",
        "B8_A4",
        "A-1_B8",
        "A4.5_B8",
        "A4_B8_C1",
        "A4_B8x",
        "A4_B8x6x2",
        "A4-_B8",
        "A-4_B8",
        "X4_B8",
        "A 4_B8",
        "A4-B8",
        "four_eight",
    ],
)
def test_malformed(text):
    """Malformed text is rejected with the accepted form and the text itself."""
    message = assert_one_line_error(text, "AN_BW", "A4_B8", "AN_BWxH", "AN-M_BW")
    assert repr(text.strip()) in message


def test_config_error_is_a_value_error():
    """Callers that catch ValueError (argparse types) also catch a bad configuration."""
    assert issubclass(ConfigError, ValueError)


def test_the_messages_in_full():
    """The whole line of each refusal a user reads: the part named, the box in words (a/an), the
    count to explore instead, and the widest square explored (13) accepted."""
    assert (
        validation_error("A4_B31") == "invalid configuration 'A4_B31': width must be between 2 and 30, got 31"
    )
    assert (
        validation_error("A4_B8x1")
        == "invalid configuration 'A4_B8x1': height must be between 2 and 30, got 1"
    )
    assert validation_error("A20_B4x5") == (
        "invalid configuration 'A20_B4x5': number of atoms must be between 1 and 19 for a 4 x 5 box, got 20"
    )
    assert "explore one count, such as A3_B8)" in (exploring_refusal(parse_config("A3-6_B8")) or "")
    assert exploring_refusal(Config(4, 13)) is None and exploring_refusal(Config(4, 14))
    assert parse_config("A3-6_B8x6").with_atoms(4) == Config(4, 8, 6)  # the rectangle kept
