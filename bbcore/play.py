"""A game against the box: a hidden molecule, the seeker's rays and guess, the score.

Glossary (see ``bbcore.game`` for games and results):

- *match*: one game against a hidden molecule of a configuration, drawn at
  random (seeded, so that the seed replays it), chosen by number, or
  *hard*: from a spectral group (an ambiguous spectrum) or among the
  strategy book's hardest molecules;
- *shot*: a ray the seeker fires from a position not known yet (a position
  is known once shot, or once a ray came out there); the box answers
  absorbed, reflected or the exit;
- *score*: points as the game counts them: 1 for an absorbed or reflected
  ray, 2 for a ray that comes out (a marker at each end), and
  ``POINTS_PER_WRONG_ATOM`` for each atom of the guess that is not in the
  hidden molecule.  A guess giving the hidden molecule's spectrum counts as
  right, as Tatham's Black Box scores it: no ray could tell them apart.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from bbcore.config import Config
from bbcore.decode import candidates
from bbcore.game import ABSORBED, REFLECTED, DecodeError, Game, Result
from bbcore.numbering import atoms_of, molecule_string, number_of
from bbcore.rays import Ray, spectrum, trace
from bbcore.statistics import POINTS_PER_WRONG_ATOM

Draw = Literal["random", "chosen", "hard"]


class PlayError(ValueError):
    """A move the rules refuse; the message is one line for the player."""


def ray_result(ray: Ray) -> Result:
    """A traced ray as a game result."""
    if ray.result == "absorbed":
        return ABSORBED
    if ray.result == "reflected":
        return REFLECTED
    assert ray.exit is not None
    return ray.exit


@dataclass(frozen=True)
class Judgement:
    """How a guess scores against the hidden molecule.

    ``wrong`` atoms of the guess are not in the hidden molecule; the guess
    is ``right`` when it is the hidden molecule or gives its spectrum
    (``same_spectrum``); ``group`` is how many molecules give the hidden
    spectrum (1 when it is unique, None when they are too many to count
    without exploring: A30_B13).
    """

    guess: tuple[int, ...]
    wrong: tuple[int, ...]
    right: bool
    same_spectrum: bool
    group: int | None
    penalty: int
    message: str


@dataclass
class Match:
    """A game against a hidden molecule: the rays shot so far, then a guess."""

    config: Config
    number: int
    draw: Draw
    seed: int | None = None
    game: Game = field(init=False)
    shots: list[int] = field(default_factory=list)
    judgement: Judgement | None = None
    revealed: bool = False

    def __post_init__(self) -> None:
        if not 1 <= self.number <= self.config.nb_mol:
            raise PlayError(
                f"{self.config.name} has molecules 1 to {self.config.nb_mol:,}, not {self.number:,}"
            )
        self.game = Game.empty(self.config.width)

    @property
    def atoms(self) -> tuple[int, ...]:
        """The hidden molecule's atom cells."""
        return atoms_of(self.config, self.number)

    @property
    def molecule(self) -> str:
        """The hidden molecule's string."""
        return molecule_string(self.config, self.atoms)

    @property
    def over(self) -> bool:
        """Whether the game has ended: a guess was judged, or the molecule revealed."""
        return self.judgement is not None or self.revealed

    @property
    def marks(self) -> tuple[str, ...]:
        """The results round the box as the game marks them: ``H``, ``R``, a letter at both
        ends of a ray that came out, ``""`` where not known."""
        return tuple({ABSORBED: "H", REFLECTED: "R"}.get(label, label) for label in self.game.labels)

    @property
    def rays(self) -> int:
        """Rays shot."""
        return len(self.shots)

    @property
    def ray_points(self) -> int:
        """Points of the rays: 1 absorbed or reflected, 2 out."""
        return sum(2 if isinstance(self.game.result(p), int) else 1 for p in self.shots)

    @property
    def points(self) -> int:
        """The score so far: the rays' points and the guess's penalty."""
        return self.ray_points + (self.judgement.penalty if self.judgement else 0)

    def shoot(self, position: int) -> Result:
        """Fire the ray from ``position``; PlayError when the game is over or the position known."""
        if self.over:
            raise PlayError("the game is over: start a new one")
        if not 1 <= position <= self.config.positions:
            raise PlayError(f"position must be in 1..{self.config.positions}, got {position}")
        known = self.game.result(position)
        if known is not None:
            where = "shot already" if position in self.shots else "known: a ray came out there"
            raise PlayError(f"position {position} is {where}")
        result = ray_result(trace(self.config.width, self.atoms, position))
        self.game = self.game.with_result(position, result)
        self.shots.append(position)
        return result

    def judge(self, guess: Iterable[int]) -> Judgement:
        """Score a guess (atom cells) and end the game."""
        if self.over:
            raise PlayError("the game is over: start a new one")
        cells = tuple(sorted(set(guess)))
        if len(cells) != self.config.atoms:
            raise PlayError(
                f"place {self.config.atoms} atoms to guess ({len(cells)} placed): "
                f"{self.config.name} hides {self.config.atoms}"
            )
        hidden = set(self.atoms)
        wrong = tuple(c for c in cells if c not in hidden)
        same = not wrong or spectrum(self.config, cells) == spectrum(self.config, self.atoms)
        group = group_size(self.config, self.atoms)
        if not wrong:
            message = "Right: that is the hidden molecule."
            if group is not None and group > 1:
                message += (
                    f" Its spectrum is shared by {group} molecules: no ray could tell them apart, "
                    f"and any of them counts as right."
                )
        elif same:
            message = (
                f"Right: your molecule (number {number_of(self.config, cells):,}) is not the hidden "
                f"one, but gives the same spectrum; the {'' if group is None else f'{group} '}molecules "
                f"of that spectral group count as right, as in Tatham's Black Box."
            )
        else:
            message = (
                f"Wrong: {len(wrong)} atom{'s' * (len(wrong) != 1)} misplaced, "
                f"{POINTS_PER_WRONG_ATOM} points each."
            )
        self.judgement = Judgement(
            cells,
            wrong,
            same,
            same and bool(wrong),
            group,
            0 if same else POINTS_PER_WRONG_ATOM * len(wrong),
            message,
        )
        return self.judgement

    def reveal(self) -> None:
        """Show the hidden molecule: the game ends (a guess, if any, is kept)."""
        self.revealed = True


def group_size(config: Config, atoms: Iterable[int]) -> int | None:
    """How many molecules give the spectrum of the molecule with these atoms.

    None when they are too many to count without exploring the configuration
    (``decode.DIRECT_LIMIT``): a game of A30_B13 is judged all the same.
    """
    full = Game.empty(config.width)
    for position in range(1, config.positions + 1):
        if full.result(position) is None:
            full = full.with_result(position, ray_result(trace(config.width, tuple(atoms), position)))
    try:
        return candidates(config, full, source="auto").count
    except DecodeError:
        return None


def new_seed() -> int:
    """A fresh seed for a random game (short enough to type again)."""
    return random.SystemRandom().randrange(1, 1_000_000)


def random_match(config: Config, seed: int | None = None) -> Match:
    """A game against a molecule drawn at random with ``seed`` (a fresh one when None)."""
    seed = new_seed() if seed is None else seed
    return Match(config, random.Random(seed).randint(1, config.nb_mol), "random", seed)


def chosen_match(config: Config, number: int) -> Match:
    """A game against molecule ``number``."""
    return Match(config, number, "chosen")


def hard_match(config: Config, hardest: list[int], seed: int | None = None) -> Match:
    """A game against a hard molecule: from a spectral group of the store (when the
    configuration is explored and has any) or among the book's ``hardest``, half the
    time each when both exist."""
    from bbcore.queries import config_state, group_count

    seed = new_seed() if seed is None else seed
    rng = random.Random(seed)
    pools: list[list[int]] = [hardest] if hardest else []
    if db_is_open() and config_state(config).complete and group_count(config, all_rows=True):
        pools.append(_ambiguous_numbers(config, rng))
    if not pools:
        raise PlayError(f"{config.name} has no hard molecule to draw: no book and no spectral group")
    return Match(config, rng.choice(rng.choice(pools)), "hard", seed)


def db_is_open() -> bool:
    """Whether a database is open (the spectral groups are read there)."""
    from bbcore.store import db

    return db.database is not None


def _ambiguous_numbers(config: Config, rng: random.Random) -> list[int]:
    """The molecules of one spectral group of the store, drawn with ``rng``."""
    from bbcore.queries import group_at, group_count, molecules_with_spectrum

    row = group_at(config, rng.randrange(group_count(config, all_rows=True)), all_rows=True)
    assert row is not None
    return [record.number for record in molecules_with_spectrum(config, row.spectrum)]
