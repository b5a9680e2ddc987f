"""Games: the rays a player has shown, and the notations they are written in.

Glossary (the rules are in ``docs/spec.md``):

- *game*: the results a player has seen so far, at most one per position;
- *shown ray*: a position with a result: absorbed, reflected, or an exit
  pair (the ray from p came out at q, so the ray from q comes out at p);
- *draft*: a game being written position by position (``draft_game``), as
  on the TUI's board: an exit label written at one end only *waits* for its
  other end and is not a constraint until then.

Notations (all give the same ``Game``):

- a *spectrum string*: 2(W+H) characters in position order (4W on a square), ``@`` or ``H``
  absorbed, ``&`` or ``R`` reflected, ``.`` ``?`` or ``-`` not shot, any
  other letter or digit a label put at both ends of a ray that came out;
- *tokens*: the same, whitespace-separated, one per position, so that labels
  can be multi-digit numbers (``1 H 12 . R ...``);
- a *board diagram*: the box drawn with ``-`` (empty) and ``O`` cells and
  one label (or a blank, or ``.``/``?``) per position around it, in the
  spec's style or the traditional one of Emacs' blackbox; an optional line
  ``There are 4 balls in the box`` may follow.  Atoms drawn in the box are
  the player's guess, never a constraint.  Labels are read by column, so a
  blank means "not shot"; a label belongs to the box column it overlaps.

Uppercase ``H`` and ``R`` always mean hit and reflection; every other
letter is a label and labels are case-sensitive (``h`` is a label, as in a
normalised spectrum of 8 exit pairs).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Final

from bbcore.config import Config
from bbcore.numbering import (
    ATOM,
    EMPTY,
    Atoms,
    atoms_from_string,
    atoms_of,
)
from bbcore.words import article, plural

ABSORBED: Final = "@"


REFLECTED: Final = "&"


Result = str | int
"""A shown result: ``ABSORBED``, ``REFLECTED`` or the 1-based exit position."""


ABSORBED_INPUT = frozenset("@H")


REFLECTED_INPUT = frozenset("&R")


NOT_SHOT_INPUT = frozenset(".?-")


LABEL_RE = re.compile(r"[A-Za-z0-9]+")


BALLS_RE = re.compile(r"^\s*there\s+(?:are|is)\s+(\d+)\s+balls?\s+in\s+the\s+box\.?\s*$", re.I)


CELL_TOKENS = frozenset((ATOM, EMPTY))


class DecodeError(ValueError):
    """A malformed game or guess; the message is one line for the user."""


def result_words(result: Result | None) -> str:
    """A result in words, for messages."""
    if result is None:
        return "not shot"
    if result == ABSORBED:
        return "absorbed (H)"
    if result == REFLECTED:
        return "reflected (R)"
    return f"out at position {result}"


@dataclass(frozen=True)
class Game:
    """The rays a player has shown: at most one result per perimeter position.

    ``results[p - 1]`` is ``ABSORBED``, ``REFLECTED``, the exit position of
    the ray from p, or None when p was not shot; exit pairs are symmetric.
    ``labels[p - 1]`` is what the player wrote there (``""`` when not shot),
    kept to draw the game as they wrote it.  ``guess`` holds the cells of
    the atoms drawn in a diagram (any number of them), or None.  The box
    is ``width`` wide and ``height`` high (0: the square).
    """

    width: int
    results: tuple[Result | None, ...]
    labels: tuple[str, ...]
    guess: tuple[int, ...] | None = None
    height: int = 0

    def __post_init__(self) -> None:
        if not self.height:
            object.__setattr__(self, "height", self.width)

    @classmethod
    def empty(cls, width: int, height: int | None = None) -> Game:
        """A game with no ray shot."""
        positions = 2 * (width + (height or width))
        return cls(width, (None,) * positions, ("",) * positions, height=height or width)

    @property
    def positions(self) -> int:
        """Number of perimeter positions, 2(W+H)."""
        return 2 * (self.width + self.height)

    @property
    def box(self) -> str:
        """The box in words: ``8 x 8``, ``14 x 10`` (W wide, H high)."""
        return f"{self.width} x {self.height}"

    @property
    def shown(self) -> tuple[int, ...]:
        """Positions with a result, in order."""
        return tuple(p for p, r in enumerate(self.results, 1) if r is not None)

    @property
    def unknown(self) -> tuple[int, ...]:
        """Positions not shot yet, in order."""
        return tuple(p for p, r in enumerate(self.results, 1) if r is None)

    @property
    def complete(self) -> bool:
        """Whether every position has a result (the whole spectrum is known)."""
        return all(r is not None for r in self.results)

    def result(self, position: int) -> Result | None:
        """The result shown at a 1-based position, None when not shot."""
        return self.results[position - 1]

    def extends(self, earlier: Game) -> bool:
        """Whether every ray shown in ``earlier`` is shown here with the same result.

        Then this game's candidates are among ``earlier``'s (see ``candidates(within=...)``).
        """
        return (self.width, self.height) == (earlier.width, earlier.height) and all(
            old is None or old == new for old, new in zip(earlier.results, self.results)
        )

    def rays(self) -> list[tuple[int, Result]]:
        """The shown rays, one per exit pair (at its first end), in position order."""
        return [
            (p, r)
            for p, r in enumerate(self.results, 1)
            if r is not None and (not isinstance(r, int) or p < r)
        ]

    def pattern(self, unknown: str = ".") -> str:
        """The game as a spectrum string: exit letters normalised, ``unknown`` where not shot.

        When the game is complete this is the normalised spectrum that every
        candidate has.
        """
        chars: list[str] = []
        letter: dict[int, str] = {}
        for p, r in enumerate(self.results, 1):
            if r is None:
                chars.append(unknown)
            elif isinstance(r, int):
                key = min(p, r)
                if key not in letter:
                    letter[key] = chr(ord("a") + len(letter))
                chars.append(letter[key])
            else:
                chars.append(r)
        return "".join(chars)

    def with_result(self, position: int, result: Result | None) -> Game:
        """This game with ``position`` set to ``result`` (None clears it).

        An exit sets both ends of the pair; whatever the two positions showed
        before is cleared first (with the other end of an old pair).  New
        exit pairs get the first lowercase letter not used as a label, past 26 pairs
        the first number not used (the token notation).
        """
        self._check_position(position)
        results = list(self.results)
        labels = list(self.labels)
        touched = [position] + ([result] if isinstance(result, int) else [])
        if isinstance(result, int):
            self._check_position(result)
            if result == position:
                raise DecodeError(
                    f"position {position} cannot exit at itself: a ray that comes back "
                    f"where it entered is reflected (R or &)"
                )
        elif result not in (ABSORBED, REFLECTED, None):
            raise DecodeError(
                f"unknown result {result!r}: expected {ABSORBED!r}, {REFLECTED!r}, an exit position or None"
            )
        for p in touched:
            old = results[p - 1]
            if isinstance(old, int):
                results[old - 1], labels[old - 1] = None, ""
            results[p - 1], labels[p - 1] = None, ""
        if isinstance(result, int):
            label = _free_label(set(labels))
            results[position - 1], results[result - 1] = result, position
            labels[position - 1] = labels[result - 1] = label
        elif result is not None:
            results[position - 1], labels[position - 1] = result, result
        return replace(self, results=tuple(results), labels=tuple(labels))

    def _check_position(self, position: int) -> None:
        if not isinstance(position, int) or not 1 <= position <= self.positions:
            raise DecodeError(f"position must be in 1..{self.positions}, got {position!r}")


def _free_label(used: set[str]) -> str:
    """The first lowercase letter not in ``used``, past z the first number not in it."""
    letter = next((ch for ch in "abcdefghijklmnopqrstuvwxyz" if ch not in used), None)
    if letter is not None:
        return letter
    return next(str(k) for k in range(1, len(used) + 2) if str(k) not in used)


def parse_game(text: str, config: Config) -> Game:
    """Read a game in any notation (spectrum string, tokens, board diagram).

    One non-blank line is a string (no whitespace inside) or tokens; more
    lines are a diagram.  Blank text is a game with no ray shot.  Raises
    DecodeError with a precise one-line message for malformed input.
    """
    lines = [line.expandtabs() for line in text.splitlines()]
    filled = [line for line in lines if line.strip()]
    if not filled:
        return Game.empty(config.width, config.height)
    if len(filled) == 1 and not BALLS_RE.match(filled[0]):
        words = filled[0].split()
        if len(words) == 1:
            return _game_from_labels(config, list(words[0]), "character")
        return _game_from_labels(config, words, "token")
    return _parse_diagram(lines, config)


def _game_from_labels(
    config: Config, labels: Sequence[str], unit: str, guess: tuple[int, ...] | None = None
) -> Game:
    """A game from one label per position (``""`` or ``.?-`` for not shot)."""
    return _read_labels(config, labels, unit, guess, waiting_ok=False)[0]


def draft_game(config: Config, labels: Sequence[str]) -> tuple[Game, tuple[int, ...]]:
    """A game being written one position at a time, and the positions still waiting.

    ``labels`` has one label per position, as on paper: ``""`` not shot,
    ``H``/``@``, ``R``/``&``, or an exit label.  An exit label written at
    one position only waits for its other end: it is not a constraint yet,
    and its position is returned in the second item.  Anything else that
    ``parse_game`` refuses (an unknown label, a label at three positions)
    raises DecodeError.
    """
    return _read_labels(config, labels, "label", None, waiting_ok=True)


def labels_text(labels: Sequence[str]) -> str:
    """One label per position as a game string: one character each when they all
    fit (``.`` not shot), else whitespace-separated tokens (multi-digit labels)."""
    if all(len(label) <= 1 for label in labels):
        return "".join(label or "." for label in labels)
    return " ".join(label or "." for label in labels)


def _read_labels(
    config: Config, labels: Sequence[str], unit: str, guess: tuple[int, ...] | None, *, waiting_ok: bool
) -> tuple[Game, tuple[int, ...]]:
    """The game of one label per position, and the positions whose exit label
    appears once (an error unless ``waiting_ok``)."""
    n = config.positions
    if len(labels) != n:
        raise DecodeError(
            f"wrong number of positions: {config.name} has {n} positions "
            f"(one {unit} each), the game has {plural(len(labels), unit)}"
        )
    results: list[Result | None] = [None] * n
    kept: list[str] = [""] * n
    ends: dict[str, list[int]] = {}
    for p, label in enumerate(labels, 1):
        if label == "" or label in NOT_SHOT_INPUT:
            continue
        kept[p - 1] = label
        if label in ABSORBED_INPUT:
            results[p - 1] = ABSORBED
        elif label in REFLECTED_INPUT:
            results[p - 1] = REFLECTED
        elif LABEL_RE.fullmatch(label):
            ends.setdefault(label, []).append(p)
        else:
            raise DecodeError(
                f"unknown {unit} {label!r} at position {p}: expected @ or H (absorbed), "
                f"& or R (reflected), . ? or - (not shot), or a letter or digit label"
            )
    waiting: list[int] = []
    for label, where in ends.items():
        if len(where) == 1 and waiting_ok:
            waiting.append(where[0])
            kept[where[0] - 1] = ""
            continue
        if len(where) == 1:
            raise DecodeError(
                f"label {label!r} appears only once (position {where[0]}): "
                f"an exit label goes at both ends of its ray"
            )
        if len(where) > 2:
            raise DecodeError(
                f"label {label!r} appears {len(where)} times (positions "
                f"{', '.join(map(str, where))}): an exit label goes at exactly two positions"
            )
        p, q = where
        results[p - 1], results[q - 1] = q, p
    return Game(config.width, tuple(results), tuple(kept), guess, config.height), tuple(sorted(waiting))


@dataclass
class _Token:
    """A whitespace-delimited word of a diagram line and its character span."""

    text: str
    start: int
    end: int  # exclusive


def _tokens(line: str) -> list[_Token]:
    return [_Token(m.group(), m.start(), m.end()) for m in re.finditer(r"\S+", line)]


def _inside(tokens: list[_Token]) -> list[_Token]:
    """The tokens of a box line from its first cell to its last (labels left out)."""
    cells = [k for k, t in enumerate(tokens) if t.text in CELL_TOKENS]
    return tokens[cells[0] : cells[-1] + 1]


def _parse_diagram(lines: list[str], config: Config) -> Game:
    """Read a board diagram (see the module docstring)."""
    w, h = config.width, config.height
    numbered = list(enumerate(lines, 1))
    box = [(i, line) for i, line in numbered if any(t.text in CELL_TOKENS for t in _tokens(line))]
    if not box:
        raise DecodeError("no box found in the diagram: its rows are cells '-' or 'O'")
    first, last = box[0][0], box[-1][0]
    if last - first + 1 != len(box):
        gap = next(i for i, _ in numbered[first - 1 : last] if i not in {j for j, _ in box})
        raise DecodeError(f"line {gap} interrupts the box: every box row has cells '-' or 'O'")
    size = len(box)  # the box's height

    # Every line of the box has the same number of cells: the odd one out is named.
    counts = [len(_inside(_tokens(line))) for _, line in box]
    common = Counter(counts).most_common(1)[0][0]
    odd = next(((i, n) for (i, _), n in zip(box, counts) if n != common), None)
    if odd is not None:
        raise DecodeError(
            f"line {odd[0]} has {odd[1]} cells, the other lines of the box {common}: "
            f"every line of the box has the same number of cells"
        )
    # The cell columns come from the first box row; every row must match them.
    left_labels: list[str] = []
    right_labels: list[str] = []
    guess: list[int] = []
    columns: list[int] | None = None
    for row, (i, line) in enumerate(box):
        tokens = _tokens(line)
        cells = [k for k, t in enumerate(tokens) if t.text in CELL_TOKENS]
        inside = _inside(tokens)
        stray = next((t for t in inside if t.text not in CELL_TOKENS), None)
        if stray is not None:
            raise DecodeError(
                f"line {i}: unknown cell {stray.text!r} in the box "
                f"(a cell is '-' empty or 'O' an atom of your guess)"
            )
        here = [t.start for t in inside]
        if columns is None:
            columns = here
        elif here != columns:
            raise DecodeError(
                f"the rows of the diagram do not line up: the cells of line {i} are not "
                f"under those of line {first}"
            )
        for side, part in (("left", tokens[: cells[0]]), ("right", tokens[cells[-1] + 1 :])):
            if len(part) > 1:
                raise DecodeError(
                    f"line {i}: {len(part)} labels {side} of the box "
                    f"({', '.join(repr(t.text) for t in part)}): one label per position"
                )
            (left_labels if side == "left" else right_labels).append(part[0].text if part else "")
        guess.extend(row * len(columns) + c for c, t in enumerate(inside) if t.text == ATOM)
    assert columns is not None
    if (len(columns), size) != (w, h):
        drawn = article(f"{len(columns)} x {size} box")
        raise DecodeError(f"the diagram is {drawn} (wide x high), {config.name} is {config.box}")

    above = [(i, line) for i, line in numbered[: first - 1] if line.strip()]
    below = [(i, line) for i, line in numbered[last:] if line.strip()]
    balls = [(i, m) for i, line in below if (m := BALLS_RE.match(line))]
    if balls:
        i, match = balls[0]
        if int(match.group(1)) not in config.counts:
            hides = f"{config.atoms}" if config.fixed_count else f"{config.atoms} to {config.atoms_max}"
            raise DecodeError(
                f"line {i}: the diagram says there are {match.group(1)} balls in the box, "
                f"{config.name} has {hides} atoms"
            )
        below = [(j, line) for j, line in below if j != i]
    # The label rows are the lines next to the box; name the first line too many.
    for where, extra in (("above", above[:-1]), ("below", below[1:])):
        if extra:
            raise DecodeError(
                f"line {extra[0][0]}: unexpected text {where} the box: one line of labels goes {where} it"
            )
    top = _label_row(above[-1] if above else None, columns, "above")
    bottom = _label_row(below[0] if below else None, columns, "below")

    labels = [""] * config.positions
    for k in range(h):
        labels[k] = left_labels[k]  # left side, line k+1
        labels[2 * h + w - 1 - k] = right_labels[k]  # right side, line k+1
    for k in range(w):
        labels[h + k] = bottom[k]  # bottom side, column k+1
        labels[2 * (w + h) - 1 - k] = top[k]  # top side, column k+1
    return _game_from_labels(config, labels, "label", tuple(guess) if guess else None)


def _label_row(numbered_line: tuple[int, str] | None, columns: list[int], where: str) -> list[str]:
    """The labels of the row above or below the box, one per box column ("" when blank)."""
    labels = [""] * len(columns)
    if numbered_line is None:
        return labels
    i, line = numbered_line
    for token in _tokens(line):
        covered = [k for k, c in enumerate(columns) if token.start <= c < token.end]
        if not covered:
            raise DecodeError(
                f"line {i}: label {token.text!r} is not {where} a column of the box "
                f"(the rows of the diagram do not line up)"
            )
        if len(covered) > 1:
            raise DecodeError(
                f"line {i}: label {token.text!r} spans {len(covered)} columns of the box; "
                f"separate the labels with spaces"
            )
        labels[covered[0]] = token.text
    return labels


def parse_guess(text: str, config: Config) -> Atoms:
    """A guessed molecule given as its number or its W*H-character string."""
    text = text.strip()
    try:
        if text.isdigit():
            return atoms_of(config, int(text))
        return atoms_from_string(config, text)
    except ValueError as error:
        raise DecodeError(f"bad guess {text!r}: {error}") from None
