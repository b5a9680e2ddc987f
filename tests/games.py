"""Games and molecules the tests share (bbcore's, the CLI's and the TUI's): it holds no test."""

from __future__ import annotations

from bbcore import rays
from bbcore.config import Config
from bbcore.numbering import atoms_of

# A game as Emacs' M-x blackbox draws it: 4 atoms in an 8 x 8 box, and where they are.
EMACS = (
    "\t\t             R   3\n"
    "\t\t 1 - - - - - - - - 1\n"
    "\t\t   - - - - - - - -\n"
    "\t\t   - O - - - - - - 3\n"
    "\t\t 2 - - - - O - O -\n"
    "\t\t 4 - - - - - - - -\n"
    "\t\t 5 - - - - - - - - 5\n"
    "\t\t   - - - - - - - - R\n"
    "\t\t H - - - - - - - O\n"
    "\t\t   2   H 4       H\n"
    "\n"
    "There are 4 balls in the box\n"
)
EMACS_ATOMS = (17, 28, 30, 63)  # (3, 2), (4, 5), (4, 7), (8, 8)


def spectral_pair(config: Config) -> tuple[int, int]:
    """The first two molecules of ``config`` sharing one spectrum (found with the reference tracer)."""
    seen: dict[str, int] = {}
    for number in range(1, config.nb_mol + 1):
        spectrum = rays.spectrum(config, atoms_of(config, number))
        if spectrum in seen:
            return seen[spectrum], number
        seen[spectrum] = number
    raise AssertionError(f"{config.name} has no spectral group")


def assert_reversible(config: Config, atoms: tuple[int, ...]) -> None:
    """Every ray of a molecule that comes out at q from p comes out at p from q, with the same
    length and turns and its path reversed (on any box, square or not)."""
    traced = rays.trace_all(config, atoms)
    for ray in traced:
        if ray.result != "out":
            continue
        back = traced[ray.exit - 1]
        assert back.result == "out"
        assert (back.exit, back.length, back.turns) == (ray.position, ray.length, ray.turns)
        assert back.path == ray.path[::-1]
