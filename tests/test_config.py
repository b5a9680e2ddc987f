"""Configurations ``AN_BW``: parsing, range checks and their one-line errors."""

from __future__ import annotations

import pytest

from bbcore.config import Config, ConfigError, parse_config, validation_error


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
    ],
)
def test_bounds_accepted(text, expected):
    """The limits 1 <= N < W*W and 2 <= W <= 13 are inclusive where the spec says."""
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


@pytest.mark.parametrize("text, width", [("A1_B1", "1"), ("A4_B14", "14"), ("A1_B0", "0"), ("a4_b99", "99")])
def test_width_out_of_range(text, width):
    """A width outside 2..13 names the width, the accepted range and the value."""
    message = assert_one_line_error(text, "width", "2", "13", width)
    assert "atoms" not in message


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
        "X4_B8",
        "A 4_B8",
        "A4-B8",
        "four_eight",
    ],
)
def test_malformed(text):
    """Malformed text is rejected with the accepted form and the text itself."""
    message = assert_one_line_error(text, "AN_BW", "A4_B8")
    assert repr(text.strip()) in message


def test_config_error_is_a_value_error():
    """Callers that catch ValueError (argparse types) also catch a bad configuration."""
    assert issubclass(ConfigError, ValueError)
