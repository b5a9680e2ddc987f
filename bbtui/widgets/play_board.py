"""The play board: the box a player shoots into and places a guess on.

Round the box are the results of the rays shot, marked as in the game:
``H`` absorbed, ``R`` reflected, and the same letter at both ends of a ray
that came out.  In the box are the atoms of the player's guess.  No ray
path is drawn: that would give the molecule away.

Two cursors, one at a time (``placing`` switches):

- shooting: the arrow keys move the perimeter cursor round the box as on
  every board, and Enter fires the ray from there (``ShotFired``);
- placing: the arrow keys move a cell cursor in the box, and Enter or space
  puts an atom there or takes it away (``AtomToggled``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rich.style import Style
from textual.binding import Binding
from textual.message import Message

from bbcore.config import Config
from bbcore.geometry import Cell, cell_of
from bbcore.numbering import ATOM, EMPTY
from bbcore.rays import Ray
from bbtui.widgets.board import Board


@dataclass
class ShotFired(Message):
    """The player fired the ray from ``position``."""

    board: PlayBoard
    position: int


@dataclass
class AtomToggled(Message):
    """The player put an atom on ``cell`` (0-based) or took it away."""

    board: PlayBoard
    cell: int


class PlayBoard(Board, inherit_bindings=False):
    """Shoot rays into a hidden molecule and place a guess."""

    BINDINGS = [
        Binding("left", "move(0, -1)", "Move", group=Binding.Group("Move"), show=False),
        Binding("right", "move(0, 1)", "Move", group=Binding.Group("Move"), show=False),
        Binding("up", "move(-1, 0)", "Move", group=Binding.Group("Move"), show=False),
        Binding("down", "move(1, 0)", "Move", group=Binding.Group("Move"), show=False),
        Binding("enter", "shoot", "Shoot"),
        Binding("enter,space", "place", "Atom"),
        Binding("number_sign", "toggle_numbers", "Numbers", key_display="#", show=False),
    ]

    caption_width = 26

    def __init__(self, config: Config, *, id: str | None = None) -> None:
        """An empty box of ``config``: no ray shot, no atom placed."""
        super().__init__(
            config.width,
            EMPTY * config.cells,
            [""] * config.positions,
            title="Box",
            id=id,
            height=config.height,
        )
        self.config = config
        self.placing = False
        self.cell = 0
        self.guess: frozenset[int] = frozenset()

    @property
    def ray(self) -> Ray | None:
        """No path is drawn while playing."""
        return None

    def show(self, labels: Sequence[str], guess: Iterable[int]) -> None:
        """The results round the box and the atoms of the guess in it."""
        self.labels = list(labels)
        self.guess = frozenset(guess)
        self.molecule = "".join(ATOM if c in self.guess else EMPTY for c in range(self.config.cells))
        self.styles.width = self.outer_width()
        self.refresh()

    def set_placing(self, placing: bool) -> None:
        """Switch between shooting (perimeter cursor) and placing atoms (cell cursor)."""
        self.placing = placing
        self.border_subtitle = "placing atoms" if placing else "shooting"
        self.refresh_bindings()
        self.refresh()

    def action_move(self, d_line: int, d_column: int) -> None:
        """Move the cell cursor when placing (it stops at the walls), else the perimeter cursor."""
        if not self.placing:
            super().action_move(d_line, d_column)
            return
        w, h = self.config.width, self.config.height
        line, column = divmod(self.cell, w)
        line = min(h - 1, max(0, line + d_line))
        column = min(w - 1, max(0, column + d_column))
        self.cell = line * w + column
        self.refresh()
        self.call_after_refresh(self.cursor_in_view)

    def cursor_cell(self) -> Cell | None:
        """The cell cursor's (line, column) while placing, else the perimeter cursor's."""
        if self.placing:
            return cell_of(self.config.width, self.cell)
        return super().cursor_cell()

    def action_shoot(self) -> None:
        """Shoot from the cursor's position (the first press picks position 1)."""
        if self.position is None:
            self.action_move(0, 0)
            return
        self.post_message(ShotFired(self, self.position))

    def action_place(self) -> None:
        """Put an atom on the cursor's cell, or take it away."""
        self.post_message(AtomToggled(self, self.cell))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Enter shoots while shooting and places while placing; the footer shows which."""
        if action == "shoot":
            return not self.placing
        if action == "place":
            return self.placing
        return True

    def cell_style(self, styles: dict[str, Style], index: int, token: str) -> Style:
        """The cell cursor while placing."""
        if self.placing and index == self.cell:
            return styles["board--cursor"]
        return super().cell_style(styles, index, token)

    def position_styles(self, ray: Ray | None) -> dict[int, str]:
        """The perimeter cursor while shooting, and the other end of its ray if it came out."""
        if self.placing or self.position is None:
            return {}
        marks = {self.position: "board--cursor"}
        label = self.labels[self.position - 1] if self.labels else ""
        if label and label not in ("H", "R"):
            for other, same in enumerate(self.labels or [], 1):
                if same == label and other != self.position:
                    marks[other] = "board--exit"
        return marks

    def caption(self, ray: Ray | None) -> tuple[str, str]:
        """What the cursor is on, and what Enter does there."""
        if self.placing:
            line, column = cell_of(self.config.width, self.cell)
            state = "an atom" if self.cell in self.guess else "empty"
            return (
                f"cell ({line}, {column}): {state}",
                f"Enter: atom; {len(self.guess)} "
                + (f"of {self.config.atoms}" if self.config.fixed_count else "placed"),
            )
        if self.position is None:
            return "arrows: pick a position", "Enter shoots"
        label = self.labels[self.position - 1] if self.labels else ""
        if not label:
            return f"position {self.position}", "Enter shoots"
        return f"position {self.position}: {label}", "known"
