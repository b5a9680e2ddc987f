"""Configurations: N atoms hidden in a box W cells wide and H cells high.

Glossary (see the spec, ``shared/spec/blackbox.md``, and ``docs/spec.md``):

- *configuration*: the atoms and the box, written ``A4_B8`` (4 atoms in the
  8 x 8 square), ``A11_B14x10`` (11 atoms, 14 wide and 10 high) or, when the
  player is not told how many atoms there are, ``A3-6_B8`` and
  ``A4-10_B10x10``: between 3 and 6 atoms (a *range*, as in Tatham's Black Box);
- *cell*: 0-based index ``(line - 1) * W + (column - 1)``: H lines of W cells;
- *position*: 1-based perimeter number of a ray, 1..2(W+H) (``geometry``).

The accepted values are 2 <= W, H <= 30 and 1 <= N <= M < W*H.  Only a
square with a fixed count and W <= ``EXPLORE_MAX_WIDTH`` can be explored
(its 2W exit letters fit in ``a``..``z``, and the 8 symmetries of the
square are what the store's enantiomer groups are made of); a rectangle or
a range is decoded, shown and played, never explored.

A square with a fixed count keeps its name (``A4_B8``): everything stored
before rectangles existed is found under the same name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from math import comb

from bbcore.words import article

MIN_WIDTH = 2
MAX_WIDTH = 30
"""The widest and highest box (both ways)."""
EXPLORE_MAX_WIDTH = 13
"""The widest square that can be explored: its 2W exit letters fit in a..z."""
CONFIG_FORM = "AN_BW, AN_BWxH or AN-M_BW, e.g. A4_B8"

_CONFIG_RE = re.compile(r"^\s*A(\d+)(?:-(\d+))?_B(\d+)(?:x(\d+))?\s*$", re.IGNORECASE)


class ConfigError(ValueError):
    """A configuration string that is malformed or out of range."""


@dataclass(frozen=True, order=True)
class Config:
    """N atoms (or N to ``atoms_max``) in a box ``width`` cells wide and ``height`` high.

    ``Config(4, 8)`` is the square A4_B8: ``height`` defaults to the width
    and ``atoms_max`` to ``atoms``.
    """

    atoms: int
    width: int
    height: int = 0
    atoms_max: int = 0

    def __post_init__(self) -> None:
        if not self.height:
            object.__setattr__(self, "height", self.width)
        if not self.atoms_max:
            object.__setattr__(self, "atoms_max", self.atoms)

    @property
    def name(self) -> str:
        """The canonical spelling: ``A4_B8``, ``A11_B14x10``, ``A3-6_B8``."""
        count = f"{self.atoms}" if self.fixed_count else f"{self.atoms}-{self.atoms_max}"
        box = f"{self.width}" if self.square else f"{self.width}x{self.height}"
        return f"A{count}_B{box}"

    @property
    def square(self) -> bool:
        """Whether the box is a square (W == H)."""
        return self.width == self.height

    @property
    def fixed_count(self) -> bool:
        """Whether the number of atoms is known (not a range)."""
        return self.atoms == self.atoms_max

    @property
    def square_fixed(self) -> bool:
        """Whether this is a square with a fixed count: the only kind that can be explored
        (and that has the 8 symmetries and a stored name of the spec's form)."""
        return self.square and self.fixed_count

    @property
    def counts(self) -> range:
        """The possible numbers of atoms, ``atoms`` to ``atoms_max``."""
        return range(self.atoms, self.atoms_max + 1)

    def with_atoms(self, atoms: int) -> Config:
        """The same box with exactly ``atoms`` atoms (one count of a range)."""
        return Config(atoms, self.width, self.height)

    @property
    def cells(self) -> int:
        """Number of cells in the box, W*H."""
        return self.width * self.height

    @property
    def positions(self) -> int:
        """Number of perimeter positions, 2(W+H)."""
        return 2 * (self.width + self.height)

    @property
    def box(self) -> str:
        """The box in words: ``8 x 8``, ``14 x 10`` (W wide, H high)."""
        return f"{self.width} x {self.height}"

    @cached_property
    def nb_mol(self) -> int:
        """Number of molecules, C(W*H, N), summed over the counts of a range."""
        return sum(comb(self.cells, n) for n in self.counts)

    def __str__(self) -> str:
        return self.name


def validation_error(text: str) -> str | None:
    """Why ``text`` is not a valid configuration, or None when it is."""
    match = _CONFIG_RE.match(text)
    shown = text.strip()
    if not match:
        return f"invalid configuration {shown!r}: expected {CONFIG_FORM}"
    atoms, atoms_max, width, height = (int(g) if g else None for g in match.groups())
    assert atoms is not None and width is not None
    for what, value in (("width", width), ("height", height)):
        if value is not None and not MIN_WIDTH <= value <= MAX_WIDTH:
            return (
                f"invalid configuration {shown!r}: {what} must be between "
                f"{MIN_WIDTH} and {MAX_WIDTH}, got {value}"
            )
    height = width if height is None else height
    box = article(f"{width} x {height} box")
    cells = width * height
    if atoms_max is not None and atoms_max < atoms:
        return (
            f"invalid configuration {shown!r}: the range of atoms is upside down ({atoms} to {atoms_max}): "
            f"the smaller count goes first, A{atoms_max}-{atoms}_B..."
        )
    for value in (atoms, atoms_max):
        if value is not None and not 1 <= value < cells:
            return (
                f"invalid configuration {shown!r}: number of atoms must be "
                f"between 1 and {cells - 1} for {box}, got {value}"
            )
    return None


def parse_config(text: str) -> Config:
    """Parse ``AN_BW``, ``AN_BWxH``, ``AN-M_BW`` or ``AN-M_BWxH`` (case-insensitive) into a
    Config, or raise ConfigError."""
    error = validation_error(text)
    if error:
        raise ConfigError(error)
    match = _CONFIG_RE.match(text)
    assert match is not None
    atoms, atoms_max, width, height = (int(g) if g else 0 for g in match.groups())
    return Config(atoms, width, height, atoms_max)


def exploring_refusal(config: Config) -> str | None:
    """Why ``config`` cannot be explored (one line), or None when it can.

    Exploring stores every molecule with its enantiomer group under the 8
    symmetries of the square and its spectrum in letters a..z: a rectangle
    has only 4 symmetries, a range no single set of molecules to number,
    and a square wider than ``EXPLORE_MAX_WIDTH`` more exit pairs than
    letters.  They are decoded, shown and played instead.
    """
    if not config.fixed_count:
        return (
            f"{config.name} is a range of atom counts: it can be decoded and played, "
            f"not explored (explore one count, such as {config.with_atoms(config.atoms).name})"
        )
    if not config.square:
        return (
            f"{config.name} is a {config.box} rectangle: it can be decoded, shown and played, "
            f"not explored (only squares are explored)"
        )
    if config.width > EXPLORE_MAX_WIDTH:
        return (
            f"{config.name}: only squares up to {EXPLORE_MAX_WIDTH} x {EXPLORE_MAX_WIDTH} are explored "
            f"(a spectrum's exit letters must fit in a..z); it can be decoded, shown and played"
        )
    return None
