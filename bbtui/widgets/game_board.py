"""The game board: a game written position by position round a heat map of the atoms.

It is the Decode screen's ``Board``, without a molecule.  Its box is the
heat map of the atom probabilities: each cell shows the percentage of the
candidates with an atom there (``-`` in none, ``O`` in every one) on a
background that grows hotter with it.  Round the box are the labels the
player has written; ``*`` marks the best next shot when it is not shot yet.

The arrow keys move the cursor round the box as on every board, and typing
writes the result of the cursor's position:

- ``H`` or ``@`` absorbed, ``R`` or ``&`` reflected;
- any other letter or digit an exit label: the same label at two positions
  pairs the two ends of one ray.  Digits typed one after another at the
  same position make one number (``1`` then ``2`` is ``12``), so that the
  traditional numbered exits need no separator;
- backspace erases the last character; delete, space, ``.`` or ``-``
  clear the position.

A label written at one end only *waits* for the other end (highlighted) and
is not a constraint yet (``bbcore.decode.draft_game``).  Every change posts
``DraftChanged``; a label that cannot go there (a third end of a ray) posts
``DraftRefused`` with bbcore's message and changes nothing.  A diagram
pasted on the board is handed on as ``GamePasted``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from math import sqrt

import numpy as np
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.color import Color
from textual.message import Message

from bbcore.config import Config
from bbcore.decoder import shot_table, shots_title
from bbcore.game import DecodeError, Game, draft_game, result_words
from bbcore.geometry import Cell, cell_of
from bbcore.numbering import EMPTY
from bbcore.rays import Ray
from bbcore.shots import NextShot, Ranking, heat_token
from bbtui.widgets.board import Board
from bbtui.widgets.inputs import GamePasted

BEST = "*"
"""The label drawn at the best next shot while it is not shot."""
CLEARING = frozenset(".-")
RESULT_KEYS = frozenset("@&") | CLEARING
"""Characters typed on the board besides letters and digits."""


@dataclass
class DraftChanged(Message):
    """The player wrote or cleared a result: the game to decode now."""

    board: GameBoard
    game: Game
    waiting: tuple[int, ...]


@dataclass
class DraftRefused(Message):
    """A result could not be written; ``reason`` is bbcore's one-line message."""

    board: GameBoard
    reason: str


class GameBoard(Board, inherit_bindings=False):
    """Write a game round the box, over the heat map of its candidates' atoms."""

    DEFAULT_CSS = """
    GameBoard > .board--cold { background: $surface; }
    GameBoard > .board--hot { background: $error; color: $text; }
    GameBoard > .board--waiting { background: $warning-muted; color: $text; text-style: bold; }
    GameBoard > .board--best { color: $text-success; text-style: bold; }
    """

    COMPONENT_CLASSES = Board.COMPONENT_CLASSES | {
        "board--cold",
        "board--hot",
        "board--waiting",
        "board--best",
    }

    BINDINGS = [
        Binding("left", "move(0, -1)", "Position", group=Binding.Group("Position"), show=False),
        Binding("right", "move(0, 1)", "Position", group=Binding.Group("Position"), show=False),
        Binding("up", "move(-1, 0)", "Position", group=Binding.Group("Position"), show=False),
        Binding("down", "move(1, 0)", "Move", key_display="←↑→↓", group=Binding.Group("Position")),
        Binding("backspace", "erase", "Erase", key_display="⌫"),
        Binding("delete,space", "clear_position", "Clear", key_display="del", show=False),
        Binding("number_sign", "toggle_numbers", "Numbers", key_display="#", show=False),
    ]

    caption_width = 26

    def __init__(self, config: Config, *, id: str | None = None) -> None:
        """An empty game of ``config``: no ray shot, no heat map yet."""
        super().__init__(
            config.width,
            EMPTY * config.cells,
            [""] * config.positions,
            title="Game",
            subtitle="H R or a label",
            id=id,
            height=config.height,
        )
        self.config = config
        self.game = Game.empty(config.width, config.height)
        self.waiting: tuple[int, ...] = ()
        # The candidates' atom counts when counted (``show_heat``), and the chance of an atom
        # in each cell (0-based) whatever computed it, 0.0 and 1.0 only where certain.
        self.counts: np.ndarray | None = None
        self.total = 0
        self.chances: np.ndarray | None = None
        self.shots: dict[int, NextShot] = {}
        self.best: int | None = None
        # What was typed at the cursor since it last moved: digits add up to
        # one number, even through a refused intermediate ("1" when 1 is taken).
        self.typed = ""

    @property
    def ray(self) -> Ray | None:
        """No molecule, no ray to draw: the candidates draw the cursor's ray."""
        return None

    @property
    def draft(self) -> list[str]:
        """The labels as written, one per position (``""`` not shot)."""
        assert self.labels is not None
        return list(self.labels)

    # -- what the screen shows on it ---------------------------------------------

    def set_draft(self, labels: Sequence[str]) -> None:
        """Show ``labels`` (one per position) as the written game; DecodeError if malformed."""
        self.game, self.waiting = draft_game(self.config, labels)
        self.labels = list(labels)
        self.typed = ""
        self.styles.width = self.outer_width()
        self.refresh()

    def show_heat(self, counts: np.ndarray | None, total: int) -> None:
        """The heat map: how many of the ``total`` candidates have an atom in each cell."""
        self.counts = None if counts is None else np.asarray(counts).ravel()
        self.total = total
        if counts is None or not total:
            self.show_chances(None)
            return
        counts = np.asarray(counts, dtype=object).ravel()
        self._chances(
            np.array([float(count / total) for count in counts]),
            atoms=[i for i, count in enumerate(counts) if count == total],
            empty=[i for i, count in enumerate(counts) if count == 0],
        )

    def show_chances(
        self, chances: np.ndarray | None, *, atoms: Sequence[int] = (), empty: Sequence[int] = ()
    ) -> None:
        """The heat map from the chance of an atom in each cell (shape (H, W) or flat), with
        the cells certain to hold an atom (``atoms``) or to be empty (``empty``), whatever
        computed them (candidates counted, or a solver's backbone and samples): only those
        are drawn ``O`` and ``-``, every other cell as a percentage 1..99."""
        self.counts, self.total = None, 0
        self._chances(chances, atoms=atoms, empty=empty)

    def _chances(
        self, chances: np.ndarray | None, *, atoms: Sequence[int] = (), empty: Sequence[int] = ()
    ) -> None:
        """Keep and draw the chances (``show_chances``), the counts left as they are."""
        if chances is None:
            self.chances = None
        else:
            shown = np.clip(np.asarray(chances, dtype=float).ravel(), 0.001, 0.999)
            shown[list(atoms)] = 1.0
            shown[list(empty)] = 0.0
            self.chances = shown
        self.refresh()

    def show_shots(self, shots: Sequence[NextShot]) -> None:
        """The ranked next shots: the best one is marked, each one's figures captioned."""
        self.shots = {shot.position: shot for shot in shots}
        self.best = shots[0].position if shots and shots[0].splits else None
        self.refresh()

    # -- typing -------------------------------------------------------------------

    def check_consume_key(self, key: str, character: str | None) -> bool:
        """Letters, digits and ``@ & . -`` are results written on the board, never screen keys:
        Textual then leaves the screen's and the app's letter keys out of the footer."""
        return _writes(character)

    def on_key(self, event: events.Key) -> None:
        """Letters, digits, ``@ & . -`` write the cursor's result; other keys go on.

        A position that holds a label is never overwritten: only digits typed
        in a row there since the cursor came add up to one number; anything
        else is refused with a message (backspace or del clear it first).
        """
        char = event.character
        if not _writes(char):
            return
        assert char is not None
        event.stop()
        event.prevent_default()
        if self.position is None:
            self.post_message(
                DraftRefused(self, "pick a position first: the arrow keys move the cursor round the box")
            )
            return
        if char in CLEARING:
            self.typed = ""
        elif char.isdigit() and self.typed.isdigit():
            self.typed += char
        else:
            held = self.draft[self.position - 1]
            if held:
                self.post_message(
                    DraftRefused(
                        self,
                        f"position {self.position} already holds {held!r}: backspace or del clears it first",
                    )
                )
                return
            self.typed = char
        self.write(self.position, self.typed)

    def on_paste(self, event: events.Paste) -> None:
        """A pasted game (a diagram, a string) is read by the screen."""
        event.stop()
        self.post_message(GamePasted(event.text))

    def action_move(self, d_line: int, d_column: int) -> None:
        """Move the cursor; what is typed next starts a new label."""
        self.typed = ""
        first = self.position is None
        super().action_move(d_line, d_column)
        if first:
            self.refresh_bindings()  # erase and clear need a cursor

    def action_erase(self) -> None:
        """Erase the last character written at the cursor."""
        if self.position is not None:
            self.typed = self.draft[self.position - 1][:-1]
            self.write(self.position, self.typed)

    def action_clear_position(self) -> None:
        """Clear the cursor's position: not shot."""
        if self.position is not None:
            self.typed = ""
            self.write(self.position, "")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Erase and clear need a cursor."""
        if action in ("erase", "clear_position"):
            return self.position is not None
        return True

    def write(self, position: int, label: str) -> None:
        """Write ``label`` at ``position`` (``""`` clears it) and say so, or say why not."""
        labels = self.draft
        if labels[position - 1] == label:
            return
        labels[position - 1] = label
        try:
            game, waiting = draft_game(self.config, labels)
        except DecodeError as error:
            self.post_message(DraftRefused(self, str(error)))
            return
        self.game, self.waiting, self.labels = game, waiting, labels
        self.styles.width = self.outer_width()
        self.refresh()
        self.post_message(DraftChanged(self, game, waiting))

    # -- drawing --------------------------------------------------------------------

    def token_width(self) -> int:
        """Percentages take two columns, whatever the labels."""
        return max(2, super().token_width())

    def shown_labels(self) -> list[str]:
        """The labels written, ``*`` at the best next shot when it is not shot yet."""
        labels = super().shown_labels()
        if self.best is not None and not self.show_numbers and not labels[self.best - 1].strip():
            labels = list(labels)
            labels[self.best - 1] = BEST
        return labels

    def grid_rows(self, path: dict[Cell, str]) -> list[list[str]]:
        """The labels round the box, and the candidates' percentages in it."""
        rows = super().grid_rows(path)
        if self.chances is not None:
            for index, chance in enumerate(self.chances.tolist()):
                line, column = cell_of(self.box_width, index)
                rows[line][column] = heat_token(chance, 1.0)
        return rows

    def cell_style(self, styles: dict[str, Style], index: int, token: str) -> Style:
        """Hotter as more candidates have an atom in the cell."""
        if self.chances is None or not self.chances[index]:
            return styles["board--empty"]
        cold, hot = styles["board--cold"], styles["board--hot"]
        if cold.bgcolor is None or hot.bgcolor is None:
            return hot
        fraction = float(self.chances[index])
        # Most cells hold an atom in a few percent of the candidates: the square
        # root keeps 5% and 25% apart where a linear scale would not.
        background = Color.from_rich_color(cold.bgcolor).blend(
            Color.from_rich_color(hot.bgcolor), sqrt(fraction)
        )
        return hot + Style(bgcolor=background.rich_color, bold=fraction == 1)

    def position_styles(self, ray: Ray | None) -> dict[int, str]:
        """The waiting ends, the best next shot, the cursor and the other end of its ray."""
        marks = {position: "board--waiting" for position in self.waiting}
        if self.best is not None and self.game.result(self.best) is None:
            marks.setdefault(self.best, "board--best")
        if self.position is not None:
            marks[self.position] = "board--cursor"
            other = self.game.result(self.position)
            if isinstance(other, int):
                marks[other] = "board--exit"
        return marks

    def caption(self, ray: Ray | None) -> tuple[str, str]:
        """What the cursor's position shows, and what shooting it would tell."""
        position = self.position
        if position is None:
            return ("arrows: pick a position", "then type H, R or a label")
        label = self.draft[position - 1]
        result = self.game.result(position)
        if position in self.waiting:
            return f"position {position}: {label}", "waits for its other end"
        if result is None:
            shot = self.shots.get(position)
            if shot is None:
                return f"position {position}: not shot", "type H, R or a label"
            best = " best" if position == self.best else ""
            return f"position {position}: not shot{best}", _figures(shot)
        if isinstance(result, int):
            return f"position {position} → {result}", f"label {label}"
        return f"position {position}: {label}", result_words(result)


def _writes(char: str | None) -> bool:
    """Whether a typed character writes a result on the board."""
    return bool(char) and len(char) == 1 and ((char.isascii() and char.isalnum()) or char in RESULT_KEYS)


def _figures(shot: NextShot) -> str:
    """A next shot's two figures in a caption line."""
    left = f"{shot.remaining:,.0f}" if shot.remaining >= 100 else f"{shot.remaining:.2f}"
    return f"{left} left, {shot.information:.2f} bits"


TOP_SHOTS = 5
OUTCOMES_SHOWN = 4


def fit_row(row: str, width: int) -> str:
    """A next shot's row in ``width`` columns: its results cut after the last one that fits,
    with ``, …`` (never in the middle of one, ``R 13,0…``)."""
    if len(row) <= width:
        return row
    count_end = row.find(": ")
    cut = row.rfind(", ", 0, width - len(", …") + len(", "))  # the cut, then ", …", fit
    if count_end < 0 or cut <= count_end:
        return row  # not even one result fits: the label's ellipsis cuts it
    return row[:cut] + ", …"


def shots_text(
    shots: Sequence[NextShot], skipped: str | None, ranking: Ranking, width: int | None = None
) -> Text:
    """The top next shots as a small table (marked ``*`` on the board), or why there is none;
    each row fitted to ``width`` columns when given (``fit_row``)."""
    if skipped:
        return Text(skipped[0].upper() + skipped[1:] + ".")
    if not shots:
        return Text("")
    header, *rows = shot_table(list(shots), TOP_SHOTS, OUTCOMES_SHOWN)
    text = Text(no_wrap=True, overflow="ellipsis")
    # The title on two lines: its rows are cut at the panel's edge, never its words.
    text.append(shots_title(ranking, marked=True).replace(", by ", "\nby ") + "\n", style="bold")
    text.append(header, style="dim")
    for row in rows:
        text.append("\n" + (fit_row(row, width) if width else row))
    return text
