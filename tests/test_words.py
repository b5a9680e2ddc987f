"""Messages in words: counts that agree with their noun, a/an as read aloud, separators."""

from __future__ import annotations

import pytest

from bbcore.config import parse_config, validation_error
from bbcore.numbering import atoms_from_string
from bbcore.words import article, plural


def test_counts_agree_with_their_noun_and_have_separators() -> None:
    assert plural(1, "group") == "1 group"
    assert plural(2, "group") == "2 groups"
    assert plural(635_376, "molecule") == "635,376 molecules"
    assert plural(1, "family", "families") == "1 family"
    assert plural(11, "family", "families") == "11 families"


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("8 x 8 box", "an 8 x 8 box"),
        ("4 x 4 box", "a 4 x 4 box"),
        ("11 x 11 box", "an 11 x 11 box"),
        ("13 x 13 box", "a 13 x 13 box"),
        ("A4_B8 molecule", "an A4_B8 molecule"),
        ("molecule", "a molecule"),
        ("atom", "an atom"),
        ("18 x 18 box", "an 18 x 18 box"),
        # capitals spelled out when no lower-case letter follows: an F, a B4, an X-ray
        ("F", "an F"),
        ("B4", "a B4"),
        ("X-ray", "an X-ray"),
        # else as a word: a Molecule, an Atom, a Xenon, an o
        ("Molecule", "a Molecule"),
        ("Atom", "an Atom"),
        ("Xenon", "a Xenon"),
        ("o", "an o"),
    ],
)
def test_a_or_an_as_read_aloud(text: str, said: str) -> None:
    assert article(text) == said


def test_messages_use_them() -> None:
    assert "between 1 and 63 for an 8 x 8 box, got 100" in (validation_error("A100_B8") or "")
    with pytest.raises(ValueError, match="^an A4_B8 molecule is 64 characters"):
        atoms_from_string(parse_config("A4_B8"), "O")
