"""The board: one molecule drawn in the spec's diagram style, with a ray cursor.

The layout is ``bbcore.render.diagram_grid``'s, so a board on screen reads
exactly like the CLI's text diagrams: the W x H box (``O`` an atom, ``-`` an
empty cell, ``X`` an atom not common to every molecule of a spectral group)
with one label per perimeter position around it (the spectrum's ``@``,
``&`` and letters, or the position numbers).

A focused board has a perimeter cursor: the arrow keys move it around the
box, along a side and round its corners (``bbcore.geometry.move_cursor``), and
the ray shot from the selected position is drawn cell by cell with
box-drawing characters, so that every turn shows.  The ray comes from
``bbcore.rays.trace``; the board only draws it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rich.style import Style
from rich.text import Text
from textual import on
from textual.binding import Binding
from textual.containers import ItemGrid
from textual.geometry import Region, Spacing
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget

from bbcore.geometry import Cell, entry, move_cursor
from bbcore.queries import MoleculeRecord
from bbcore.rays import Ray, path_headings, spectrum_labels, trace
from bbcore.render import MARKED_ATOM, diagram_grid, position_labels

Side = tuple[int, int]
"""A unit step (line, column): the side of a cell a ray crosses."""

_LINES: dict[frozenset[Side], str] = {
    frozenset({(-1, 0), (1, 0)}): "│",
    frozenset({(0, -1), (0, 1)}): "─",
    frozenset({(1, 0), (0, 1)}): "┌",
    frozenset({(1, 0), (0, -1)}): "┐",
    frozenset({(-1, 0), (0, 1)}): "└",
    frozenset({(-1, 0), (0, -1)}): "┘",
    frozenset({(-1, 0), (1, 0), (0, 1)}): "├",
    frozenset({(-1, 0), (1, 0), (0, -1)}): "┤",
    frozenset({(0, -1), (0, 1), (1, 0)}): "┬",
    frozenset({(0, -1), (0, 1), (-1, 0)}): "┴",
    frozenset({(-1, 0), (1, 0), (0, -1), (0, 1)}): "┼",
}


def path_glyphs(width: int, *rays: Ray, height: int | None = None) -> dict[Cell, str]:
    """The box-drawing character of every cell the rays cross (turns as corners).

    A cell joins the side its ray came from and the side it goes to
    (``bbcore.rays.path_headings``); absorbed or reflected in the box, the
    last cell points at what stopped the ray.  Where rays cross or share a
    cell, the character joins all their sides.
    """
    sides: dict[Cell, set[Side]] = {}
    for ray in rays:
        for cell, (entering, leaving) in zip(ray.path, path_headings(width, ray, height)):
            sides.setdefault(cell, set()).update(((-entering[0], -entering[1]), leaving))
    return {cell: _LINES.get(frozenset(s), "┼") for cell, s in sides.items()}


def ray_caption(ray: Ray) -> tuple[str, str]:
    """Two short lines saying how a ray ended."""
    where = "at the edge" if ray.length == 0 else f"after {ray.length} cell{'s' * (ray.length != 1)}"
    if ray.result == "out":
        turns = f"{ray.turns} turn{'s' * (ray.turns != 1)}"
        return f"ray {ray.position} → {ray.exit}", f"{ray.length} cells, {turns}"
    if ray.result == "absorbed":
        return f"ray {ray.position} absorbed", where
    return f"ray {ray.position} reflected", where


CAPTION_WIDTH = 19
"""Room for the longest caption line, ``100 cells, 10 turns``."""
HINT = ("arrows: shoot a ray", "")


@dataclass
class NumbersToggled(Message):
    """A board switched between spectrum labels and position numbers."""

    board: Board
    show_numbers: bool


@dataclass
class RaySelected(Message):
    """A board's selected position changed (None when the ray is hidden)."""

    board: Board
    position: int | None

    @property
    def control(self) -> Board:
        """The board that sent the message."""
        return self.board


class Board(Widget, can_focus=True):
    """A Black Box diagram with labels around it and a ray cursor."""

    DEFAULT_CSS = """
    Board {
        width: auto;
        height: auto;
        padding: 0 1;
        border: round $foreground 30%;
        border-title-color: $text;
        border-title-style: bold;
        border-subtitle-color: $text-muted;
    }
    Board:focus {
        border: round $accent;
    }
    Board > .board--atom { text-style: bold; }
    Board > .board--marked { background: $warning-muted; color: $text; text-style: bold; }
    Board > .board--empty { color: $text-muted; }
    Board > .board--label { color: $text-secondary; }
    Board > .board--hit { color: $text-error; }
    Board > .board--path { color: $text-primary; text-style: bold; }
    Board > .board--drawn { color: $text-accent; }
    Board > .board--cursor { background: $accent; color: $text; text-style: bold; }
    Board > .board--exit { background: $accent-muted; color: $text; text-style: bold; }
    Board > .board--caption { color: $text-muted; }
    """

    COMPONENT_CLASSES = {
        "board--atom",
        "board--marked",
        "board--empty",
        "board--label",
        "board--hit",
        "board--path",
        "board--drawn",
        "board--cursor",
        "board--exit",
        "board--caption",
    }

    BINDINGS = [
        Binding("left", "move(0, -1)", "Ray", group=Binding.Group("Ray"), show=False),
        Binding("right", "move(0, 1)", "Ray", group=Binding.Group("Ray"), show=False),
        Binding("up", "move(-1, 0)", "Ray", group=Binding.Group("Ray"), show=False),
        Binding("down", "move(1, 0)", "Ray", key_display="←↑→↓", group=Binding.Group("Ray")),
        Binding("x", "clear", "Hide", show=False),
        Binding("number_sign", "toggle_numbers", "Numbers", key_display="#", show=False),
    ]

    position: reactive[int | None] = reactive(None)
    """The selected perimeter position (its ray is drawn), or None."""
    show_numbers: reactive[bool] = reactive(False)
    """Label the perimeter with position numbers instead of the spectrum."""
    caption_width = CAPTION_WIDTH
    """Columns kept for the two caption lines under the diagram."""

    def __init__(
        self,
        width: int,
        molecule: str,
        labels: Sequence[str] | str | None = None,
        *,
        marked: Iterable[int] = (),
        drawn: Iterable[int] = (),
        title: str = "",
        subtitle: str = "",
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
        height: int | None = None,
    ) -> None:
        """A board of a box ``width`` wide and ``height`` high (None: the square);
        ``labels`` one per position (a spectrum).

        ``drawn`` positions have their rays drawn at all times (the rays a
        player has shot, on a candidate of a game), besides the cursor's.
        """
        super().__init__(name=name, id=id, classes=classes)
        self.box_width = width
        self.box_height = height or width
        self.molecule = molecule
        self.labels = list(labels) if labels is not None else None
        self.marked = frozenset(marked)
        self.atoms = tuple(i for i, ch in enumerate(molecule) if ch == "O")
        self.drawn_rays = tuple(trace(width, self.atoms, position, self.box_height) for position in drawn)
        self.border_title = title
        self.border_subtitle = subtitle

    def token_width(self) -> int:
        """Columns of each token of the diagram: the widest label's."""
        return max(1, *(len(label) for label in self.shown_labels()))  # a blank label is drawn " "

    def outer_width(self) -> int:
        """Columns the board takes with its padding and border, for its current labels."""
        diagram = (self.box_width + 2) * (self.token_width() + 1) - 1
        return max(diagram, len(self.border_title or "") + 4, self.caption_width) + 4

    def shown_labels(self) -> list[str]:
        """The labels drawn round the box: the spectrum, or the position numbers."""
        if self.show_numbers or not self.labels:
            return position_labels(self.box_width, self.box_height)
        return self.labels

    def outer_height(self) -> int:
        """Lines the board takes with its border: the diagram and two caption lines."""
        return self.box_height + 6

    def on_mount(self) -> None:
        """A fixed size, so that boards side by side line up, and so that a layout
        need not render every board to measure it."""
        self.styles.width = self.outer_width()
        self.styles.height = self.outer_height()

    def copy_from(self, other: Board) -> None:
        """Show what ``other`` (a board not mounted) shows, keeping this board's cursor
        and label choice: updating a mounted board is much quicker than mounting one."""
        self.box_width, self.molecule, self.atoms = other.box_width, other.molecule, other.atoms
        self.box_height = other.box_height
        self.labels, self.marked, self.drawn_rays = other.labels, other.marked, other.drawn_rays
        self.border_title, self.border_subtitle = other.border_title, other.border_subtitle
        self.styles.width = self.outer_width()
        self.styles.height = self.outer_height()
        self.refresh()

    def watch_show_numbers(self) -> None:
        """Numbers are wider than letters: resize."""
        if self.is_mounted:
            self.styles.width = self.outer_width()

    @property
    def ray(self) -> Ray | None:
        """The ray from the selected position, or None."""
        if self.position is None:
            return None
        return trace(self.box_width, self.atoms, self.position, self.box_height)

    def on_focus(self) -> None:
        """The hint shows on the focused board."""
        self.refresh()

    def on_blur(self) -> None:
        """The hint goes."""
        self.refresh()

    # Only the user's actions post messages, never a value set from outside:
    # boards sharing a cursor would otherwise echo stale positions to each
    # other for ever when keys come faster than the messages.

    def action_move(self, d_line: int, d_column: int) -> None:
        """Move the perimeter cursor (the first press selects position 1)."""
        if self.position is None:
            self.position = 1
        else:
            self.position = move_cursor(self.box_width, self.position, (d_line, d_column), self.box_height)
        self.post_message(RaySelected(self, self.position))
        self.call_after_refresh(self.cursor_in_view)

    def cursor_cell(self) -> Cell | None:
        """The (line, column) of the diagram the cursor is on (a perimeter cell), or None."""
        if self.position is None:
            return None
        return entry(self.box_width, self.position, self.box_height)[0]

    def cursor_in_view(self) -> None:
        """Scroll the nearest scrolling container so that the cursor shows: a box too large
        for the screen (30 x 30 at 80 x 24) follows the cursor round it."""
        cell = self.cursor_cell()
        container = next(
            (
                a
                for a in self.ancestors
                if isinstance(a, Widget) and (a.allow_vertical_scroll or a.allow_horizontal_scroll)
            ),
            None,
        )
        if cell is None or container is None:
            return
        # The board's place in the container's scrolled (virtual) space, parent by parent.
        offset, widget = self.virtual_region.offset, self.parent
        while isinstance(widget, Widget) and widget is not container:
            offset += widget.virtual_region.offset
            widget = widget.parent
        size = self.token_width()
        x = offset.x + self.gutter.left + cell[1] * (size + 1)
        y = offset.y + self.gutter.top + cell[0]
        container.scroll_to_region(
            Region(x, y, size, 1), spacing=Spacing(1, 2, 1, 2), animate=False, immediate=True
        )

    def action_clear(self) -> None:
        """Hide the ray."""
        self.position = None
        self.post_message(RaySelected(self, None))

    def action_toggle_numbers(self) -> None:
        """Switch the labels between the spectrum and the position numbers."""
        self.show_numbers = not self.show_numbers
        self.post_message(NumbersToggled(self, self.show_numbers))

    def render(self) -> Text:
        """The diagram, then two caption lines about the ray."""
        ray = self.ray
        h = self.box_height
        cursor = path_glyphs(self.box_width, ray, height=h) if ray else {}
        path = path_glyphs(self.box_width, *self.drawn_rays, *((ray,) if ray else ()), height=h)
        rows = self.grid_rows(path)
        size = max(self.token_width(), *(len(token) for row in rows for token in row))
        styles = {name: self.get_component_rich_style(name) for name in self.COMPONENT_CLASSES}
        highlighted = self.position_styles(ray)
        text = Text(no_wrap=True, end="")
        for r, row in enumerate(rows):
            if r:
                text.append("\n")
            # Neighbours of the same style make one span, with the space between them
            # (unless a background would fill it): drawing a board costs per span, and
            # a row is mostly alike.
            run, run_style = "", Style()
            for c, token in enumerate(row):
                style = self._token_style(styles, token, r, c, path, cursor, highlighted)
                if c and style == run_style and style.bgcolor is None:
                    run += " " + token.rjust(size)
                    continue
                text.append(run, run_style)
                if c:
                    text.append(" ")
                run, run_style = token.rjust(size), style
            text.append(run, run_style)
        for line in self.caption(ray):
            text.append("\n")
            text.append(line, styles["board--caption"])
        return text

    def grid_rows(self, path: dict[Cell, str]) -> list[list[str]]:
        """The diagram's tokens row by row (``bbcore.render.diagram_grid``), ``path`` drawn."""
        return diagram_grid(
            self.box_width,
            self.molecule,
            self.shown_labels(),
            marked=self.marked,
            path=path,
            height=self.box_height,
        )

    def caption(self, ray: Ray | None) -> tuple[str, str]:
        """The two lines under the diagram: how the cursor's ray ended, or a hint."""
        if ray:
            return ray_caption(ray)
        return HINT if self.has_focus else ("", "")

    def position_styles(self, ray: Ray | None) -> dict[int, str]:
        """Positions to highlight, with their component class: the cursor, and where its ray came out."""
        if self.position is None:
            return {}
        marks = {self.position: "board--cursor"}
        if ray and ray.result == "out" and ray.exit is not None:
            marks[ray.exit] = "board--exit"
        return marks

    def cell_style(self, styles: dict[str, Style], index: int, token: str) -> Style:
        """The style of box cell ``index`` (0-based) drawn as ``token``, when no ray crosses it."""
        if token == MARKED_ATOM:
            return styles["board--marked"]
        return styles["board--atom"] if token == "O" else styles["board--empty"]

    def _token_style(
        self,
        styles: dict[str, Style],
        token: str,
        r: int,
        c: int,
        path: dict[Cell, str],
        cursor: dict[Cell, str],
        highlighted: dict[int, str],
    ) -> Style:
        """The style of the token at grid row ``r``, column ``c``."""
        w, h = self.box_width, self.box_height
        if 1 <= r <= h and 1 <= c <= w:
            if (r, c) in path and token == path[(r, c)]:
                return styles["board--path"] if (r, c) in cursor else styles["board--drawn"]
            return self.cell_style(styles, (r - 1) * w + c - 1, token)
        position = _grid_position(w, h, r, c)
        if position is None:
            return Style()
        if position in highlighted:
            return styles[highlighted[position]]
        return styles["board--hit"] if token.strip() in ("@", "H") else styles["board--label"]


def _grid_position(width: int, height: int, r: int, c: int) -> int | None:
    """The perimeter position drawn at grid row ``r``, column ``c`` (corners: None)."""
    if 1 <= r <= height and c == 0:
        return r
    if 1 <= r <= height and c == width + 1:
        return 2 * height + width + 1 - r
    if r == 0 and 1 <= c <= width:
        return 2 * (width + height) + 1 - c
    if r == height + 1 and 1 <= c <= width:
        return height + c
    return None


class BoardGrid(ItemGrid):
    """Boards side by side, wrapping to the width; one ray position shared by all.

    Moving the ray cursor on one board shows the ray from the same position
    on every other board: in a spectral group the results agree, the paths
    tell the molecules apart.  ``#`` switches every board's labels.
    """

    DEFAULT_CSS = """
    BoardGrid { height: auto; }
    """

    def __init__(self, *boards: Board, id: str | None = None) -> None:
        """A grid of ``boards``."""
        super().__init__(*boards, id=id, stretch_height=False)

    def on_mount(self) -> None:
        """Columns as wide as the boards."""
        self.fit()

    async def show(self, boards: Sequence[Board]) -> None:
        """Replace the boards."""
        await self.remove_children()
        if boards:
            await self.mount_all(boards)
        self.fit()

    async def update(self, boards: Sequence[Board]) -> list[Board]:
        """Show what ``boards`` show, updating the boards already in the grid in place
        (mounting 24 boards took 0.4 s, updating them a few ms); returns the boards shown."""
        shown = list(self.query_children(Board))
        for old, new in zip(shown, boards):
            old.copy_from(new)
        if len(shown) > len(boards):
            await self.remove_children(shown[len(boards) :])
        elif len(boards) > len(shown):
            await self.mount_all(boards[len(shown) :])
        self.fit()
        return list(self.query_children(Board))

    def fit(self) -> None:
        """Every column as wide as the widest board, plus a gap."""
        widths = [board.outer_width() for board in self.query_children(Board)]
        column = max(widths, default=20) + 1
        self.min_column_width = self.max_column_width = column

    def set_position(self, position: int | None) -> None:
        """Show the ray from ``position`` on every board (None hides it)."""
        for board in self.query_children(Board):
            board.position = position

    @on(RaySelected)
    def share_position(self, event: RaySelected) -> None:
        """Show the ray from the same position on every board."""
        self.set_position(event.position)

    @on(NumbersToggled)
    def share_numbers(self, event: NumbersToggled) -> None:
        """Every board shows the same labels; the columns follow their width."""
        for board in self.query_children(Board):
            board.show_numbers = event.show_numbers
        self.fit()


def record_board(
    record: MoleculeRecord,
    marked: Iterable[int] = (),
    labels: Sequence[str] | str | None = None,
    drawn: Iterable[int] = (),
) -> Board:
    """The board of a stored molecule: its spectrum (or ``labels``) around it, number and
    transform above, the rays from ``drawn`` positions drawn."""
    return Board(
        record.config.width,
        record.molecule,
        labels or spectrum_labels(record.spectrum),
        marked=marked,
        drawn=drawn,
        title=f"#{record.number:,} {record.transform}",
        height=record.config.height,
    )
