"""Configurations ``AN_BW``: N atoms hidden in a W x W box.

Glossary (see the spec, ``shared/spec/blackbox.md``):

- *configuration*: the pair (atoms, width), written ``A4_B8``;
- *cell*: 0-based index ``(line - 1) * W + (column - 1)`` of a square;
- *position*: 1-based perimeter number of a ray, 1..4W.

The accepted range is 1 <= N < W*W and 2 <= W <= 13: with W <= 13 the
2W exit-pair letters of a spectrum always fit in ``a``..``z``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from math import comb

from bbcore.words import article

MIN_WIDTH = 2
MAX_WIDTH = 13
CONFIG_FORM = "AN_BW, e.g. A4_B8 (N atoms in a W x W box)"

_CONFIG_RE = re.compile(r"^\s*A(\d+)_B(\d+)\s*$", re.IGNORECASE)


class ConfigError(ValueError):
    """A configuration string that is malformed or out of range."""


@dataclass(frozen=True, order=True)
class Config:
    """N atoms in a W x W box."""

    atoms: int
    width: int

    @property
    def name(self) -> str:
        """The canonical spelling, ``A4_B8``."""
        return f"A{self.atoms}_B{self.width}"

    @property
    def cells(self) -> int:
        """Number of cells in the box, W*W."""
        return self.width * self.width

    @property
    def positions(self) -> int:
        """Number of perimeter positions, 4W."""
        return 4 * self.width

    @cached_property
    def nb_mol(self) -> int:
        """Number of molecules, C(W*W, N)."""
        return comb(self.cells, self.atoms)

    def __str__(self) -> str:
        return self.name


def validation_error(text: str) -> str | None:
    """Why ``text`` is not a valid configuration, or None when it is."""
    match = _CONFIG_RE.match(text)
    if not match:
        return f"invalid configuration {text.strip()!r}: expected {CONFIG_FORM}"
    atoms, width = int(match.group(1)), int(match.group(2))
    if not MIN_WIDTH <= width <= MAX_WIDTH:
        return (
            f"invalid configuration {text.strip()!r}: width must be between "
            f"{MIN_WIDTH} and {MAX_WIDTH}, got {width}"
        )
    if not 1 <= atoms < width * width:
        return (
            f"invalid configuration {text.strip()!r}: number of atoms must be "
            f"between 1 and {width * width - 1} for {article(f'{width} x {width} box')}, got {atoms}"
        )
    return None


def parse_config(text: str) -> Config:
    """Parse ``AN_BW`` (case-insensitive) into a Config, or raise ConfigError."""
    error = validation_error(text)
    if error:
        raise ConfigError(error)
    match = _CONFIG_RE.match(text)
    assert match is not None
    return Config(int(match.group(1)), int(match.group(2)))
