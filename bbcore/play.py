"""A game against the box: a hidden molecule, the seeker's rays and guess, the score.

Glossary (see ``bbcore.game`` for games and results):

- *match*: one game against a hidden molecule of a configuration, drawn at
  random (seeded, so that the seed replays it), chosen by number, or
  *hard*: from a spectral group (an ambiguous spectrum) or among the
  strategy book's hardest molecules.  On a range of atom counts
  (``A3-6_B8``) a random game first draws the count, each one equally
  likely, then the molecule; the count is not shown;
- *shot*: a ray the seeker fires from a position not known yet (a position
  is known once shot, or once a ray came out there); the box answers
  absorbed, reflected or the exit;
- *rules*: how a guess is judged and the points counted, as each Black Box
  program does it (``RULES``):

  - ``bbtui``: 1 point for an absorbed or reflected ray, 2 for a ray that
    comes out (a marker at each end), ``POINTS_PER_WRONG_ATOM`` for each atom
    of the guess not in the hidden molecule; a guess giving the hidden
    molecule's spectrum counts as right;
  - ``emacs`` (Emacs' ``blackbox``): the same points, but a guess is right
    only with the exact cells;
  - ``tatham`` (Simon Tatham's Black Box): no points, the rays fired are
    counted; a guess is accepted when it gives the same result for every
    ray as the hidden molecule, and when it is refused one ray that tells
    them apart is named;
  - ``kblackbox`` (KDE's KBlackBox): 3 points for an absorbed or reflected
    ray, 9 for one that comes out; a misplaced ball loses the game.

- *preset*: a board and its rules as a program offers it (``PRESETS``):
  Tatham's presets, KBlackBox's levels, Emacs' default.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from bbcore.config import Config, parse_config
from bbcore.decode import candidates
from bbcore.game import ABSORBED, REFLECTED, DecodeError, Game, Result, result_words
from bbcore.numbering import atoms_of, molecule_string, number_of
from bbcore.rays import Ray, trace
from bbcore.statistics import POINTS_PER_WRONG_ATOM

Draw = Literal["random", "chosen", "hard"]

GuessRule = Literal["same_rays", "exact", "misplaced_loses"]
"""``same_rays``: right when every ray agrees; ``exact``: right only with the hidden cells,
each wrong atom costing points; ``misplaced_loses``: right only with the hidden cells, else lost."""


@dataclass(frozen=True)
class Rules:
    """How a program judges a guess and counts points (see the module)."""

    name: str
    title: str
    guess: GuessRule
    edge_points: int  # an absorbed or reflected ray
    exit_points: int  # a ray that comes out
    wrong_atom_points: int  # each misplaced atom, under the "exact" rule
    scored: bool = True

    def describe(self) -> str:
        """The rules in one line, for the Play screen."""
        if self.guess == "same_rays":
            judged = "a guess is right when it gives the same result for every ray"
        elif self.guess == "exact":
            judged = "a guess is right only on the exact cells"
        else:
            judged = "a guess is right only on the exact cells; a misplaced ball loses"
        points = (
            f"{self.edge_points} point{'s' * (self.edge_points != 1)} per ray absorbed or reflected, "
            f"{self.exit_points} per ray out"
            if self.scored
            else "no points, the rays fired are counted"
        )
        if self.wrong_atom_points:
            judged += f", else {self.wrong_atom_points} points per misplaced atom"
        return f"{self.title}: {points}; {judged}."


BBTUI = Rules("bbtui", "bbtui", "same_rays", 1, 2, POINTS_PER_WRONG_ATOM)
EMACS = Rules("emacs", "Emacs' blackbox", "exact", 1, 2, POINTS_PER_WRONG_ATOM)
TATHAM = Rules("tatham", "Tatham's Black Box", "same_rays", 0, 0, 0, scored=False)
KBLACKBOX = Rules("kblackbox", "KBlackBox", "misplaced_loses", 3, 9, 0)
RULES: dict[str, Rules] = {rules.name: rules for rules in (BBTUI, TATHAM, KBLACKBOX, EMACS)}
"""Every program's rules by name, in the order the Play screen cycles them."""


@dataclass(frozen=True)
class Preset:
    """A board and its rules as a program offers it: ``kblackbox-14x10``."""

    name: str
    rules: Rules
    config: Config

    def describe(self) -> str:
        """``Tatham's Black Box 8 x 8, 3 to 6 balls (not told)``."""
        config = self.config
        balls = (
            f"{config.atoms} balls"
            if config.fixed_count
            else f"{config.atoms} to {config.atoms_max} balls (not told)"
        )
        return f"{self.rules.title} {config.box}, {balls}"


def _presets() -> dict[str, Preset]:
    boards = [
        (TATHAM, "A3_B5"),
        (TATHAM, "A5_B8"),
        (TATHAM, "A3-6_B8"),
        (TATHAM, "A5_B10"),
        (TATHAM, "A4-10_B10"),
        (KBLACKBOX, "A2_B6"),
        (KBLACKBOX, "A4_B8"),
        (KBLACKBOX, "A6_B10"),
        (KBLACKBOX, "A8_B12"),
        (KBLACKBOX, "A11_B14x10"),
        (KBLACKBOX, "A15_B20x12"),
        (EMACS, "A4_B8"),
    ]
    presets = {}
    for rules, text in boards:
        config = parse_config(text)
        count = f"{config.atoms}" if config.fixed_count else f"{config.atoms}-{config.atoms_max}"
        name = f"{rules.name}-{config.width}x{config.height}-{count}"
        presets[name] = Preset(name, rules, config)
    return presets


PRESETS: dict[str, Preset] = _presets()
"""Tatham's presets, KBlackBox's levels and Emacs' default, by name (``tatham-8x8-3-6``)."""


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
    is ``right`` as the match's rules say: the hidden molecule, or (the
    ``same_rays`` rule) a molecule giving its spectrum (``same_spectrum``:
    right without being the hidden one).  ``group`` is how many molecules
    give the hidden spectrum (1 when it is unique, None when they are too
    many to count without exploring: A30_B13, or a range).  ``telling`` is
    a ray that tells a refused guess from the hidden molecule: (position,
    the hidden molecule's result, the guess's).  ``lost``: a misplaced ball
    under KBlackBox's rules.
    """

    guess: tuple[int, ...]
    wrong: tuple[int, ...]
    right: bool
    same_spectrum: bool
    group: int | None
    penalty: int
    message: str
    telling: tuple[int, Result, Result] | None = None
    lost: bool = False


@dataclass
class Match:
    """A game against a hidden molecule: the rays shot so far, then a guess.

    ``number`` is the hidden molecule's among those of ``count`` atoms (on
    a range, the count drawn; 0: the configuration's count).
    """

    config: Config
    number: int
    draw: Draw
    seed: int | None = None
    game: Game = field(init=False)
    shots: list[int] = field(default_factory=list)
    judgement: Judgement | None = None
    revealed: bool = False
    rules: Rules = BBTUI
    count: int = 0

    def __post_init__(self) -> None:
        if not self.count:
            if not self.config.fixed_count:
                raise PlayError(
                    f"{self.config.name} is a range of atom counts: say how many atoms are hidden"
                )
            self.count = self.config.atoms
        if self.count not in self.config.counts:
            raise PlayError(
                f"{self.config.name} hides {self.config.atoms} to {self.config.atoms_max} atoms, "
                f"not {self.count}"
            )
        hidden = self.hidden_config
        if not 1 <= self.number <= hidden.nb_mol:
            raise PlayError(f"{hidden.name} has molecules 1 to {hidden.nb_mol:,}, not {self.number:,}")
        self.game = Game.empty(self.config.width, self.config.height)

    @property
    def hidden_config(self) -> Config:
        """The configuration of the hidden molecule: the box with its own count of atoms."""
        return self.config.with_atoms(self.count)

    @property
    def atoms(self) -> tuple[int, ...]:
        """The hidden molecule's atom cells."""
        return atoms_of(self.hidden_config, self.number)

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
        """Points of the rays, as the rules count them (bbtui's: 1 absorbed or reflected, 2 out)."""
        rules = self.rules
        return sum(
            rules.exit_points if isinstance(self.game.result(p), int) else rules.edge_points
            for p in self.shots
        )

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
        result = ray_result(trace(self.config.width, self.atoms, position, self.config.height))
        self.game = self.game.with_result(position, result)
        self.shots.append(position)
        return result

    def judge(self, guess: Iterable[int]) -> Judgement:
        """Score a guess (atom cells) by the match's rules and end the game."""
        if self.over:
            raise PlayError("the game is over: start a new one")
        config = self.config
        cells = tuple(sorted(set(guess)))
        if len(cells) not in config.counts:
            hides = f"{config.atoms}" if config.fixed_count else f"{config.atoms} to {config.atoms_max}"
            raise PlayError(
                f"place {hides} atoms to guess ({len(cells)} placed): {config.name} hides {hides}"
            )
        hidden = set(self.atoms)
        wrong = tuple(c for c in cells if c not in hidden)
        exact = cells == tuple(sorted(hidden))
        telling = None if exact else telling_ray(config, cells, self.atoms)
        same = telling is None
        group = group_size(self.hidden_config, self.atoms)
        rules = self.rules
        right = exact or (same and rules.guess == "same_rays")
        lost = not exact and rules.guess == "misplaced_loses"
        misplaced = max(len(wrong), len(hidden - set(cells)))
        if exact:
            message = "Right: that is the hidden molecule."
            if group is not None and group > 1 and rules.guess == "same_rays":
                message += (
                    f" Its spectrum is shared by {group} molecules: no ray could tell them apart, "
                    f"and any of them counts as right."
                )
        elif right:
            yours = number_of(config.with_atoms(len(cells)), cells)
            message = (
                f"Right: your molecule (number {yours:,}) is not the hidden one, but gives the same "
                f"spectrum; the {'' if group is None else f'{group} '}molecules of that spectral group "
                f"count as right under the rules of {rules.title}."
            )
        else:
            message = _refusal(rules, misplaced, telling, same)
        penalty = 0 if right else rules.wrong_atom_points * misplaced
        self.judgement = Judgement(
            cells, wrong, right, same and not exact, group, penalty, message, telling, lost
        )
        return self.judgement

    def reveal(self) -> None:
        """Show the hidden molecule: the game ends (a guess, if any, is kept)."""
        self.revealed = True


def _refusal(rules: Rules, misplaced: int, telling: tuple[int, Result, Result] | None, same: bool) -> str:
    """Why a guess is not right, in the words of its rules."""
    balls = f"{misplaced} atom{'s' * (misplaced != 1)} misplaced"
    if rules.guess == "misplaced_loses":
        return f"Lost: {balls}; {rules.title} ends the game on a misplaced ball."
    if rules.guess == "exact":
        same_rays = " (it gives the same rays: Tatham's rules would accept it)" if same else ""
        return f"Wrong: {balls}, {rules.wrong_atom_points} points each{same_rays}."
    assert telling is not None
    position, truth, yours = telling
    told = (
        f"position {position} tells them apart: the box gives {result_words(truth)}, "
        f"your atoms would give {result_words(yours)}"
    )
    if not rules.scored:
        return f"Refused: {told}."
    return f"Wrong: {balls}, {rules.wrong_atom_points} points each. {told[0].upper()}{told[1:]}."


def telling_ray(
    config: Config, guess: Iterable[int], atoms: Iterable[int]
) -> tuple[int, Result, Result] | None:
    """The first position whose ray tells the guess from the molecule with ``atoms``:
    (position, the molecule's result, the guess's); None when every ray agrees."""
    guess, atoms = tuple(guess), tuple(atoms)
    for position in range(1, config.positions + 1):
        truth = ray_result(trace(config.width, atoms, position, config.height))
        yours = ray_result(trace(config.width, guess, position, config.height))
        if truth != yours:
            return position, truth, yours
    return None


def group_size(config: Config, atoms: Iterable[int]) -> int | None:
    """How many molecules give the spectrum of the molecule with these atoms.

    None when they are too many to count without exploring the configuration
    (``decode.DIRECT_LIMIT``): a game of A30_B13 is judged all the same.
    """
    full = Game.empty(config.width, config.height)
    for position in range(1, config.positions + 1):
        if full.result(position) is None:
            full = full.with_result(
                position, ray_result(trace(config.width, tuple(atoms), position, config.height))
            )
    try:
        return candidates(config, full, source="auto").count
    except DecodeError:
        return None


def new_seed() -> int:
    """A fresh seed for a random game (short enough to type again)."""
    return random.SystemRandom().randrange(1, 1_000_000)


def random_match(config: Config, seed: int | None = None, rules: Rules = BBTUI) -> Match:
    """A game against a molecule drawn at random with ``seed`` (a fresh one when None); on a
    range the count first, each count equally likely."""
    seed = new_seed() if seed is None else seed
    rng = random.Random(seed)
    if config.fixed_count:
        return Match(config, rng.randint(1, config.nb_mol), "random", seed, rules=rules)
    count = rng.randint(config.atoms, config.atoms_max)
    return Match(
        config, rng.randint(1, config.with_atoms(count).nb_mol), "random", seed, rules=rules, count=count
    )


def chosen_match(config: Config, number: int, rules: Rules = BBTUI) -> Match:
    """A game against molecule ``number``."""
    if not config.fixed_count:
        raise PlayError(
            f"{config.name} is a range of atom counts: its molecules have no numbers; 'seed N' replays a game"
        )
    return Match(config, number, "chosen", rules=rules)


def hard_match(config: Config, hardest: list[int], seed: int | None = None, rules: Rules = BBTUI) -> Match:
    """A game against a hard molecule: from a spectral group of the store (when the
    configuration is explored and has any) or among the book's ``hardest``, half the
    time each when both exist."""
    from bbcore.queries import config_state, group_count

    if not config.square_fixed:
        raise PlayError(
            f"{config.name} has no hard molecule to draw: no book and no spectral group off the square"
        )
    seed = new_seed() if seed is None else seed
    rng = random.Random(seed)
    pools: list[list[int]] = [hardest] if hardest else []
    if db_is_open() and config_state(config).complete and group_count(config, all_rows=True):
        pools.append(_ambiguous_numbers(config, rng))
    if not pools:
        raise PlayError(f"{config.name} has no hard molecule to draw: no book and no spectral group")
    return Match(config, rng.choice(rng.choice(pools)), "hard", seed, rules=rules)


def db_is_open() -> bool:
    """Whether a database is open (the spectral groups are read there)."""
    from bbcore.store import is_open

    return is_open()


def _ambiguous_numbers(config: Config, rng: random.Random) -> list[int]:
    """The molecules of one spectral group of the store, drawn with ``rng``."""
    from bbcore.queries import group_at, group_count, molecules_with_spectrum

    row = group_at(config, rng.randrange(group_count(config, all_rows=True)), all_rows=True)
    assert row is not None
    return [record.number for record in molecules_with_spectrum(config, row.spectrum)]
