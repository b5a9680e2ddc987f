"""Decoding a game: which molecules agree with the rays a player has shown.

Glossary (see the spec, ``shared/spec/blackbox.md``, for the rest):

- *game*: the results a player has seen so far, at most one per position;
- *shown ray*: a position with a result: absorbed, reflected, or an exit
  pair (the ray from p came out at q, so the ray from q comes out at p);
- *candidate*: a molecule whose rays agree with every shown ray;
- *next shot*: a position not shot yet, judged by how it would split the
  candidates;
- *draft*: a game being written position by position (``draft_game``), as
  on the TUI's board: an exit label written at one end only *waits* for its
  other end and is not a constraint until then.

Notations (all give the same ``Game``):

- a *spectrum string*: 4W characters in position order, ``@`` or ``H``
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

How candidates are found (both ways give the same answer, by the tests):

- from the ``Molecules`` table of an explored configuration: a full
  spectrum is one lookup of its normalised string in the configuration's spectrum
  index; a partial game is a scan of that index, ``GLOB`` fixing the
  absorbed and reflected positions and putting a letter at exits, and
  ``substr`` giving both ends of each exit pair the same letter (stored
  letters are normalised, a player's are not);
- directly with the engine: the shown rays first rule out cells
  (``excluded_cells``), then every molecule of the cells left, in batches
  in number order, is traced at the shown positions only, one shown ray at
  a time on the molecules still in the running, the ray that keeps fewest
  molecules first.  Memory stays flat whatever the configuration.

``candidates(..., source="auto")`` takes the store for full spectra and
computes partial games, which is quicker than the scan (bench/decode.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from math import comb
from typing import Final, Literal, Protocol

import numpy as np

from bbcore.config import Config
from bbcore.engine import ABSORBED_CODE, REFLECTED_CODE, trace_batch
from bbcore.geometry import cell_of, entry
from bbcore.numbering import (
    ATOM,
    EMPTY,
    Atoms,
    atoms_from_string,
    atoms_of,
    atoms_of_numbers,
    molecule_string,
    number_of,
    numbers_of,
)
from bbcore.rays import trace

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

BATCH: Final = 1 << 15
"""Molecules traced together when computing candidates directly (small batches
reuse the same memory: fresh pages are costly on sandboxed machines)."""
DIRECT_LIMIT: Final = 100_000_000
"""The most molecules a configuration may have to be decoded without the store."""
NEXT_SHOT_BUDGET: Final = 24_000_000
"""Rays (candidates x positions not shot) above which a caller should not rank next shots.

About a second of tracing: enough to rank the first shot of A4_B8, where every
one of its 635,376 molecules is a candidate (20,332,032 rays)."""
_RAYS_PER_BATCH: Final = 1 << 21

Ranking = Literal["remaining", "information"]
Source = Literal["auto", "store", "compute"]
Progress = Callable[[int, int], None]
"""Called with (molecules done, molecules in all) between batches."""


class Stop(Protocol):
    """Anything with ``is_set()``, such as a ``threading.Event``."""

    def is_set(self) -> bool: ...


class DecodeError(ValueError):
    """A malformed game or guess; the message is one line for the user."""


class DecodeCancelled(Exception):
    """The stop event was set during a long computation."""


# ---------------------------------------------------------------------------
# The game


def describe(result: Result | None) -> str:
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
    the atoms drawn in a diagram (any number of them), or None.
    """

    width: int
    results: tuple[Result | None, ...]
    labels: tuple[str, ...]
    guess: tuple[int, ...] | None = None

    @classmethod
    def empty(cls, width: int) -> Game:
        """A game with no ray shot."""
        return cls(width, (None,) * (4 * width), ("",) * (4 * width))

    @property
    def positions(self) -> int:
        """Number of perimeter positions, 4W."""
        return 4 * self.width

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
        return self.width == earlier.width and all(
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
        exit pairs get the first lowercase letter not used as a label.
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
            used = set(labels)
            label = next(ch for ch in "abcdefghijklmnopqrstuvwxyz" if ch not in used)
            results[position - 1], results[result - 1] = result, position
            labels[position - 1] = labels[result - 1] = label
        elif result is not None:
            results[position - 1], labels[position - 1] = result, result
        return replace(self, results=tuple(results), labels=tuple(labels))

    def _check_position(self, position: int) -> None:
        if not isinstance(position, int) or not 1 <= position <= self.positions:
            raise DecodeError(f"position must be in 1..{self.positions}, got {position!r}")


def parse_game(text: str, config: Config) -> Game:
    """Read a game in any notation (spectrum string, tokens, board diagram).

    One non-blank line is a string (no whitespace inside) or tokens; more
    lines are a diagram.  Blank text is a game with no ray shot.  Raises
    DecodeError with a precise one-line message for malformed input.
    """
    lines = [line.expandtabs() for line in text.splitlines()]
    filled = [line for line in lines if line.strip()]
    if not filled:
        return Game.empty(config.width)
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
            f"(one {unit} each), the game has {len(labels)} {unit}s"
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
    return Game(config.width, tuple(results), tuple(kept), guess), tuple(sorted(waiting))


@dataclass
class _Token:
    """A whitespace-delimited word of a diagram line and its character span."""

    text: str
    start: int
    end: int  # exclusive


def _tokens(line: str) -> list[_Token]:
    return [_Token(m.group(), m.start(), m.end()) for m in re.finditer(r"\S+", line)]


def _parse_diagram(lines: list[str], config: Config) -> Game:
    """Read a board diagram (see the module docstring)."""
    w = config.width
    numbered = list(enumerate(lines, 1))
    box = [(i, line) for i, line in numbered if any(t.text in CELL_TOKENS for t in _tokens(line))]
    if not box:
        raise DecodeError("no box found in the diagram: its rows are cells '-' or 'O'")
    first, last = box[0][0], box[-1][0]
    if last - first + 1 != len(box):
        gap = next(i for i, _ in numbered[first - 1 : last] if i not in {j for j, _ in box})
        raise DecodeError(f"line {gap} interrupts the box: every box row has cells '-' or 'O'")
    size = len(box)

    # The cell columns come from the first box row; every row must match them.
    left_labels: list[str] = []
    right_labels: list[str] = []
    guess: list[int] = []
    columns: list[int] | None = None
    for row, (i, line) in enumerate(box):
        tokens = _tokens(line)
        cells = [k for k, t in enumerate(tokens) if t.text in CELL_TOKENS]
        inside = tokens[cells[0] : cells[-1] + 1]
        stray = next((t for t in inside if t.text not in CELL_TOKENS), None)
        if stray is not None:
            raise DecodeError(
                f"line {i}: unknown cell {stray.text!r} in the box "
                f"(a cell is '-' empty or 'O' an atom of your guess)"
            )
        here = [t.start for t in inside]
        if columns is None:
            columns = here
            if len(columns) != size:
                raise DecodeError(
                    f"the box has {size} rows but line {i} has {len(columns)} cells: a box is square"
                )
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
        guess.extend(row * size + c for c, t in enumerate(inside) if t.text == ATOM)
    assert columns is not None
    if size != w:
        raise DecodeError(f"the diagram is a {size} x {size} box, {config.name} is {w} x {w}")

    above = [(i, line) for i, line in numbered[: first - 1] if line.strip()]
    below = [(i, line) for i, line in numbered[last:] if line.strip()]
    balls = [(i, m) for i, line in below if (m := BALLS_RE.match(line))]
    if balls:
        i, match = balls[0]
        if int(match.group(1)) != config.atoms:
            raise DecodeError(
                f"line {i}: the diagram says there are {match.group(1)} balls in the box, "
                f"{config.name} has {config.atoms} atoms"
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

    labels = [""] * (4 * w)
    for k in range(w):
        labels[k] = left_labels[k]  # left side, line k+1
        labels[w + k] = bottom[k]  # bottom side, column k+1
        labels[3 * w - 1 - k] = right_labels[k]  # right side, line k+1
        labels[4 * w - 1 - k] = top[k]  # top side, column k+1
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
    """A guessed molecule given as its number or its W*W-character string."""
    text = text.strip()
    try:
        if text.isdigit():
            return atoms_of(config, int(text))
        return atoms_from_string(config, text)
    except ValueError as error:
        raise DecodeError(f"bad guess {text!r}: {error}") from None


# ---------------------------------------------------------------------------
# Enumerating molecules in number order


def molecule_batches(
    config: Config, size: int = BATCH, cells: Sequence[int] | np.ndarray | None = None
) -> Iterator[np.ndarray]:
    """Atom cells (uint8, shape (k, N), k <= size) of every molecule, in number order.

    With ``cells`` (sorted), only the molecules whose atoms are all among
    them.  Molecules sharing their first atoms are consecutive in number
    order, so a batch is a run of such prefixes completed with numpy.
    """
    allowed = np.arange(config.cells) if cells is None else np.asarray(cells)
    for combination in _combination_batches(len(allowed), config.atoms, size):
        yield allowed[combination].astype(np.uint8)


def _combination_batches(m: int, n: int, size: int) -> Iterator[np.ndarray]:
    """``itertools.combinations(range(m), n)`` as int16 arrays of at most ``size`` rows."""

    def complete(prefixes: list[tuple[int, ...]]) -> np.ndarray:
        rows = np.array(prefixes, dtype=np.int16)
        for j in range(rows.shape[1], n):
            last = rows[:, -1].astype(np.int64)
            counts = m - n + j - last  # the next cell runs from last + 1 to m - n + j
            starts = np.cumsum(counts) - counts
            offsets = np.arange(counts.sum()) - np.repeat(starts, counts)
            new = np.repeat(last, counts) + 1 + offsets
            rows = np.column_stack([np.repeat(rows, counts, axis=0), new.astype(np.int16)])
        return rows

    def walk(prefix: tuple[int, ...]) -> Iterator[np.ndarray]:
        j = len(prefix)
        group: list[tuple[int, ...]] = []
        total = 0
        for cell in range(prefix[-1] + 1 if prefix else 0, m - n + j + 1):
            count = comb(m - 1 - cell, n - j - 1)
            if count > size:
                if group:
                    yield complete(group)
                    group, total = [], 0
                yield from walk(prefix + (cell,))
                continue
            if total + count > size:
                yield complete(group)
                group, total = [], 0
            group.append(prefix + (cell,))
            total += count
        if group:
            yield complete(group)

    if n <= m:
        yield from walk(())


# ---------------------------------------------------------------------------
# Candidates


@dataclass
class Candidates:
    """The molecules that agree with a game.

    ``numbers`` (sorted, int64) and ``atoms`` (uint8, shape (k, N)) are
    None when no ray is shown: then every molecule is a candidate and they
    are not listed.  ``source`` says where they came from: ``"store"``,
    ``"computed"`` or ``"all"``.
    """

    config: Config
    numbers: np.ndarray | None
    atoms: np.ndarray | None
    source: str

    @property
    def every_molecule(self) -> bool:
        """True when no ray is shown: every molecule of the configuration."""
        return self.numbers is None

    @property
    def count(self) -> int:
        """How many molecules agree."""
        return self.config.nb_mol if self.numbers is None else len(self.numbers)

    def molecules(self, limit: int | None = None, start: int = 0) -> list[tuple[int, str]]:
        """(number, molecule string) of ``limit`` candidates (all by default) from
        the ``start``-th one (0-based), in number order."""
        end = self.count if limit is None else min(start + limit, self.count)
        if self.numbers is None or self.atoms is None:
            return [
                (k, molecule_string(self.config, atoms_of(self.config, k))) for k in range(start + 1, end + 1)
            ]
        return [
            (int(k), molecule_string(self.config, a))
            for k, a in zip(self.numbers[start:end], self.atoms[start:end].tolist())
        ]

    def batches(self, size: int) -> Iterator[np.ndarray]:
        """The candidates' atom cells, ``size`` molecules at a time."""
        if self.atoms is None:
            yield from molecule_batches(self.config, size)
        else:
            for i in range(0, len(self.atoms), size):
                yield self.atoms[i : i + size]

    def contains(self, atoms: Iterable[int]) -> bool:
        """Whether the molecule with these atom cells is a candidate."""
        if self.numbers is None:
            return True
        number = number_of(self.config, atoms)
        i = np.searchsorted(self.numbers, number)
        return bool(i < len(self.numbers) and self.numbers[i] == number)


def _check(game: Game, config: Config) -> None:
    if game.width != config.width:
        raise DecodeError(
            f"the game is for a {game.width} x {game.width} box, "
            f"{config.name} is {config.width} x {config.width}"
        )


def _tick(stop: Stop | None, progress: Progress | None, done: int, total: int) -> None:
    if stop is not None and stop.is_set():
        raise DecodeCancelled()
    if progress is not None:
        progress(done, total)


def candidates(
    config: Config,
    game: Game,
    *,
    source: Source = "auto",
    within: Candidates | None = None,
    progress: Progress | None = None,
    stop: Stop | None = None,
) -> Candidates:
    """Every molecule of ``config`` whose rays agree with every shown ray of ``game``.

    ``source``: ``"store"`` reads the explored configuration from the open
    database, ``"compute"`` traces the molecules directly, ``"auto"`` (best)
    reads a full spectrum from the store when ``bbcore.store.db`` is open
    and the configuration explored, and computes otherwise: a partial game
    makes SQLite scan every spectrum of the configuration, which
    bench/decode.py measures 2 to 4 times slower than computing.

    ``within`` narrows earlier candidates (of a game with fewer rays shown)
    instead of starting over.  ``progress`` and ``stop`` are checked between
    batches (DecodeCancelled on stop).
    """
    _check(game, config)
    if not game.shown:
        return Candidates(config, None, None, "all")
    if within is not None and not within.every_molecule:
        assert within.numbers is not None and within.atoms is not None
        keep = _agreeing(config, within.atoms, game.rays())
        return Candidates(config, within.numbers[keep], within.atoms[keep], within.source)
    if source == "auto":
        source = "store" if game.complete and is_explored(config) else "compute"
    if source == "store":
        return _stored_candidates(config, game)
    return _computed_candidates(config, game, progress, stop)


def _agreeing(config: Config, atoms: np.ndarray, rays: list[tuple[int, Result]]) -> np.ndarray:
    """Indexes of the molecules (atom cells) whose rays give every result of ``rays``.

    One ray at a time, on the molecules still in the running: each shown
    ray costs only what the previous ones left.
    """
    keep = np.arange(len(atoms))
    for position, result in rays:
        if len(keep) == 0:
            break
        code = (
            result - 1
            if isinstance(result, int)
            else (ABSORBED_CODE if result == ABSORBED else REFLECTED_CODE)
        )
        partner = trace_batch(config, atoms[keep], np.array([position - 1]))[0][:, 0]
        keep = keep[partner == code]
    return keep


def excluded_cells(config: Config, game: Game) -> list[int]:
    """Cells that no candidate can have an atom in, read from the shown rays' entries.

    A ray that comes out found, at both ends, its first cell and both front
    diagonals empty (else it is absorbed or reflected at the edge), and
    then the second cell of its line empty (else it is absorbed there).  A
    reflected ray found its first cell empty.
    """
    w = config.width
    excluded: set[int] = set()
    for position, result in enumerate(game.results, 1):
        if result is None or result == ABSORBED:
            continue
        (line, column), (dl, dc) = entry(w, position)
        first = (line + dl, column + dc)
        near = (
            [first]
            if result == REFLECTED
            else [
                first,
                (first[0] + dc, first[1] + dl),
                (first[0] - dc, first[1] - dl),
                (first[0] + dl, first[1] + dc),
            ]
        )
        excluded.update((l - 1) * w + c - 1 for l, c in near if 1 <= l <= w and 1 <= c <= w)
    return sorted(excluded)


def _computed_candidates(
    config: Config, game: Game, progress: Progress | None, stop: Stop | None
) -> Candidates:
    allowed = np.setdiff1d(np.arange(config.cells), excluded_cells(config, game))
    total = comb(len(allowed), config.atoms)
    if total > DIRECT_LIMIT:
        raise DecodeError(
            f"{config.name}: {total:,} molecules to try, too many to decode without "
            f"exploring the configuration (the limit is {DIRECT_LIMIT:,})"
        )
    rays = sorted(game.rays(), key=lambda ray: _rarity(config, *ray))
    found: list[np.ndarray] = [np.empty((0, config.atoms), dtype=np.uint8)]
    done = 0
    for atoms in molecule_batches(config, BATCH, allowed):
        _tick(stop, progress, done, total)
        found.append(atoms[_agreeing(config, atoms, rays)])
        done += len(atoms)
    _tick(stop, progress, total, total)
    atoms = np.concatenate(found)
    return Candidates(config, numbers_of(config, atoms.astype(np.int64)), atoms, "computed")


def _rarity(config: Config, position: int, result: Result) -> int:
    """Sort key of the shown rays, the result fewest molecules give first.

    The first ray is traced on every molecule, the next ones only on those
    left: a ray that turned keeps fewest, then a reflection, a ray straight
    across, and an absorption keeps most.
    """
    if isinstance(result, int):
        across = position + result in (3 * config.width + 1, 5 * config.width + 1)
        return 2 if across else 0
    return 1 if result == REFLECTED else 3


def is_explored(config: Config) -> bool:
    """Whether the open database (if any) holds the whole configuration."""
    from bbcore.store import config_row, db

    if db.database is None:
        return False
    row = config_row(config)
    return row is not None and bool(row.complete)


def _stored_candidates(config: Config, game: Game) -> Candidates:
    """Candidates read from the Molecules table of an explored configuration.

    A full spectrum is one lookup in the configuration's spectrum index.  A
    partial one is a scan of that index: ``GLOB`` fixes the absorbed and
    reflected positions and puts a letter at exits, and ``substr`` makes
    both ends of each exit pair carry the same letter, so that only the
    matching rows are read and only their numbers leave SQLite.  The
    configuration is a literal and the index is named, as in
    ``bbcore.queries``: the planner would otherwise scan by primary key.
    """
    from bbcore.store import config_literal, db, has_config_indexes, spectrum_index

    if game.complete:
        conditions, params = ["spectrum = ?"], [game.pattern()]
    else:
        pattern = "".join("?" if r is None else "[a-z]" if isinstance(r, int) else r for r in game.results)
        conditions, params = ["spectrum GLOB ?"], [pattern]
        conditions += [
            f"substr(spectrum, {p}, 1) = substr(spectrum, {q}, 1)"
            for p, q in game.rays()
            if isinstance(q, int)
        ]
    index = f' INDEXED BY "{spectrum_index(config)}"' if has_config_indexes(config) else ""
    sql = (
        f'SELECT number FROM "Molecules"{index} WHERE config = {config_literal(config)} AND '
        + " AND ".join(conditions)
    )
    rows = db.execute_sql(sql, params).fetchall()
    numbers = np.sort(np.array([row[0] for row in rows], dtype=np.int64))
    atoms = atoms_of_numbers(config, numbers).astype(np.uint8)
    return Candidates(config, numbers, atoms, "store")


# ---------------------------------------------------------------------------
# Atom probabilities


def atom_counts(cands: Candidates) -> np.ndarray:
    """For each cell, shape (W, W), how many candidates have an atom there."""
    config = cands.config
    if cands.atoms is None:
        counts = np.full(config.cells, comb(config.cells - 1, config.atoms - 1), dtype=np.int64)
    else:
        counts = np.bincount(cands.atoms.ravel(), minlength=config.cells).astype(np.int64)
    return counts.reshape(config.width, config.width)


def probabilities(cands: Candidates) -> np.ndarray:
    """For each cell, shape (W, W), the fraction of candidates with an atom there.

    Every candidate is taken as equally likely; all zeros when there is no
    candidate.
    """
    counts = atom_counts(cands)
    return counts / cands.count if cands.count else counts.astype(float)


def heat_token(count: int, total: int) -> str:
    """A cell of a heat map: ``-`` never an atom, ``O`` always, else a percentage 1..99."""
    if count == 0:
        return "-"
    if count == total:
        return "O"
    return str(min(99, max(1, round(100 * count / total))))


def doubtful_cells(cands: Candidates) -> list[int]:
    """Cells (0-based) holding an atom in some candidates but not all."""
    counts = atom_counts(cands).ravel()
    return [int(c) for c in np.flatnonzero((counts > 0) & (counts < cands.count))]


# ---------------------------------------------------------------------------
# Next shots


@dataclass(frozen=True)
class NextShot:
    """What shooting one position would tell, over the current candidates.

    ``outcomes`` pairs each possible result with how many candidates give
    it, most frequent first; ``remaining`` is the expected number of
    candidates left after the shot (sum of n^2 / N), ``information`` the
    expected information in bits (the entropy of the outcomes).
    """

    position: int
    outcomes: tuple[tuple[Result, int], ...]
    remaining: float
    information: float

    @property
    def splits(self) -> bool:
        """Whether the shot can tell some candidates apart."""
        return len(self.outcomes) > 1


def shot_cost(cands: Candidates, game: Game) -> int:
    """Rays ``next_shots`` would trace: candidates x positions not shot."""
    return cands.count * len(game.unknown)


def next_shots(
    config: Config,
    game: Game,
    cands: Candidates,
    *,
    by: Ranking = "remaining",
    progress: Progress | None = None,
    stop: Stop | None = None,
) -> list[NextShot]:
    """Every position not shot yet, best first, with its outcomes over the candidates.

    ``by="remaining"`` ranks by the expected number of candidates left
    (fewest first), ``by="information"`` by expected information (most
    first); ties go to the other figure, then to the lower position.
    """
    _check(game, config)
    if by not in ("remaining", "information"):
        raise DecodeError(f"unknown ranking {by!r}: expected 'remaining' or 'information'")
    unknown = np.array(game.unknown, dtype=np.int64) - 1
    if len(unknown) == 0 or cands.count == 0:
        return []
    width = config.positions + 2  # codes -2..4W-1 shifted to 0..4W+1
    counts = np.zeros(len(unknown) * width, dtype=np.int64)
    offsets = (np.arange(len(unknown)) * width)[None, :]
    # With most positions unknown, tracing them all lets the engine fill the
    # far end of each exit from its near end (rays are reversible).
    every = len(unknown) > config.positions // 2
    size = max(1, _RAYS_PER_BATCH // (config.positions if every else len(unknown)))
    done = 0
    for atoms in cands.batches(size):
        _tick(stop, progress, done, cands.count)
        if every:
            partner = trace_batch(config, atoms)[0][:, unknown].astype(np.int64)
        else:
            partner = trace_batch(config, atoms, unknown)[0].astype(np.int64)
        counts += np.bincount((partner + 2 + offsets).ravel(), minlength=len(counts))
        done += len(atoms)
    _tick(stop, progress, done, cands.count)

    total = cands.count
    shots = []
    for i, position in enumerate(unknown + 1):
        row = counts[i * width : (i + 1) * width]
        outcomes = sorted(
            ((_result_of_code(code - 2), int(n)) for code, n in enumerate(row) if n),
            key=lambda o: (-o[1], _outcome_order(o[0])),
        )
        fractions = np.array([n for _, n in outcomes], dtype=float) / total
        shots.append(
            NextShot(
                position=int(position),
                outcomes=tuple(outcomes),
                remaining=float((fractions * fractions).sum() * total),
                information=float(max(0.0, -(fractions * np.log2(fractions)).sum())),
            )
        )
    return rank_shots(shots, by)


def rank_shots(shots: Iterable[NextShot], by: Ranking) -> list[NextShot]:
    """Next shots best first: by fewest expected candidates left (``"remaining"``)
    or by most expected information (``"information"``); ties go to the other
    figure, then to the lower position."""
    if by == "remaining":
        return sorted(shots, key=lambda s: (round(s.remaining, 9), -round(s.information, 9), s.position))
    return sorted(shots, key=lambda s: (-round(s.information, 9), round(s.remaining, 9), s.position))


def ranked_shots(
    config: Config,
    game: Game,
    cands: Candidates,
    *,
    by: Ranking = "remaining",
    progress: Progress | None = None,
    stop: Stop | None = None,
) -> tuple[list[NextShot], str | None]:
    """``next_shots`` when there is something to rank within ``NEXT_SHOT_BUDGET``.

    Returns the ranked shots and None, or no shot and why (one line, for
    the user) when there are too many rays to trace.  With one candidate or
    none, or every position shot, there is nothing to rank and no reason.
    """
    if cands.count <= 1 or not game.unknown:
        return [], None
    if shot_cost(cands, game) > NEXT_SHOT_BUDGET:
        return [], (
            f"next shots not ranked: {cands.count:,} candidates x "
            f"{len(game.unknown)} positions is too many rays to trace; "
            f"shoot a ray or two first"
        )
    return next_shots(config, game, cands, by=by, progress=progress, stop=stop), None


def outcome_text(result: Result, count: int) -> str:
    """One outcome of a next shot: ``H 12``, ``R 3``, ``->7 20``."""
    name = "H" if result == ABSORBED else "R" if result == REFLECTED else f"->{result}"
    return f"{name} {count:,}"


def outcomes_text(shot: NextShot, limit: int) -> str:
    """A next shot's ``limit`` most frequent outcomes: ``H 12, R 3, ... (9 results)``."""
    text = ", ".join(outcome_text(r, n) for r, n in shot.outcomes[:limit])
    if len(shot.outcomes) > limit:
        text += f", ... ({len(shot.outcomes)} results)"
    return text


def _result_of_code(code: int) -> Result:
    if code == ABSORBED_CODE:
        return ABSORBED
    if code == REFLECTED_CODE:
        return REFLECTED
    return code + 1


def _outcome_order(result: Result) -> tuple[int, int]:
    return (0, 0) if result == ABSORBED else (1, 0) if result == REFLECTED else (2, int(result))


def is_ambiguous(cands: Candidates, shots: Iterable[NextShot]) -> bool:
    """Whether several candidates remain and no ray left can tell them apart."""
    return cands.count > 1 and not any(shot.splits for shot in shots)


def ambiguity(cands: Candidates, shots: Sequence[NextShot], skipped: str | None) -> str | None:
    """When the game is ambiguous, a sentence naming the atoms in doubt; else None.

    ``shots`` and ``skipped`` are what ``ranked_shots`` returned: when the
    shots were not ranked, nothing is known.
    """
    if cands.every_molecule or skipped or not is_ambiguous(cands, shots):
        return None
    return (
        f"No ray left can tell these {cands.count:,} molecules apart: the game is "
        f"ambiguous. Atoms in doubt: {cells_text(cands.config, doubtful_cells(cands))}."
    )


def cells_text(config: Config, cells: Iterable[int]) -> str:
    """Cells (0-based indexes) as ``(line, column)`` pairs."""
    return ", ".join("({}, {})".format(*cell_of(config.width, c)) for c in cells)


# ---------------------------------------------------------------------------
# Checking a guess


@dataclass(frozen=True)
class Verdict:
    """Whether a guessed molecule agrees with a game.

    ``contradiction`` is (position, shown result, the guess's result) for
    the first shown ray the guess contradicts; ``others`` how many other
    molecules agree with the game too (None when not known).
    """

    consistent: bool
    contradiction: tuple[int, Result, Result] | None
    others: int | None
    message: str


def check_guess(config: Config, game: Game, guess: Iterable[int], cands: Candidates | None = None) -> Verdict:
    """Check a guessed molecule (atom cells) against every shown ray of ``game``.

    With ``cands`` (the game's candidates), a consistent guess is also told
    whether it is the only molecule that agrees.
    """
    _check(game, config)
    cells = tuple(sorted(set(guess)))
    if len(cells) != config.atoms:
        raise DecodeError(f"the guess has {len(cells)} atoms, {config.name} has {config.atoms}")
    if not all(0 <= c < config.cells for c in cells):
        raise DecodeError(f"a guess's cells are in 0..{config.cells - 1}")
    for position, shown in game.rays():
        ray = trace(config.width, cells, position)
        actual: Result = (
            ABSORBED
            if ray.result == "absorbed"
            else REFLECTED
            if ray.result == "reflected"
            else int(ray.exit or 0)
        )
        if actual != shown:
            return Verdict(
                False,
                (position, shown, actual),
                None,
                f"the guess contradicts position {position}: the game shows "
                f"{describe(shown)}, the guess gives {describe(actual)}",
            )
    if cands is None:
        return Verdict(True, None, None, "the guess agrees with every shown ray")
    others = cands.count - 1
    if others == 0:
        message = "the guess agrees with every shown ray and is the only molecule that does"
    else:
        message = (
            f"the guess agrees with every shown ray, but so do {others:,} other "
            f"molecule{'s' if others > 1 else ''}: it is not proved yet"
        )
    return Verdict(True, None, others, message)
