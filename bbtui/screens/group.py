"""The Group screen: the molecules of one spectral group, side by side.

Every molecule of the group is a board with the shared spectrum around it;
the atoms not common to every molecule are highlighted (``X``).  The ray
cursor of one board moves on all of them, so the same shot can be compared
across the group.  ``n`` and ``p`` move along the list the group was opened
from, without going back to it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Label

from bbcore.config import Config
from bbcore.queries import GroupRow, MoleculeRecord, group_at, group_count, molecules_with_spectrum
from bbcore.render import differing_atoms, max_atoms_differing
from bbcore.words import plural
from bbtui.host import Host, host
from bbtui.widgets.board import Board, BoardGrid, record_board
from bbtui.widgets.stats_table import StatsTable


@dataclass
class GroupList:
    """Which spectral groups a list holds, and in which order (as on the Groups screen)."""

    config: Config
    all_rows: bool = False
    size: int | None = None
    order: str = "canonical"

    def count(self) -> int:
        """How many groups the list holds."""
        return group_count(self.config, all_rows=self.all_rows, size=self.size)

    def at(self, index: int) -> GroupRow | None:
        """The group at 0-based ``index``, or None."""
        return group_at(self.config, index, all_rows=self.all_rows, size=self.size, order=self.order)


GROUP = Binding.Group("Next/prev")


class GroupScreen(Screen):
    """One spectral group: its molecules side by side and their statistics.

    Opened from a list (``groups`` and ``index``: n and p move along it) or
    for one spectrum (``spectrum``: the group of the molecules sharing it).
    """

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", show=False),
        Binding("n", "move(1)", "Group", group=GROUP),
        Binding("p", "move(-1)", "Group", group=GROUP),
        Binding("o", "open_molecule", "Molecule"),
    ]

    def __init__(
        self,
        config: Config,
        *,
        groups: GroupList | None = None,
        index: int = 0,
        spectrum: str | None = None,
        on_move: Callable[[int], None] | None = None,
    ) -> None:
        """Group ``index`` of ``groups``, or the group of ``spectrum``; ``on_move(index)`` follows moves."""
        super().__init__()
        self.config = config
        self.groups = groups
        self.index = index
        self.spectrum = spectrum
        self.on_move = on_move
        self.members: list[MoleculeRecord] = []
        self.count = 0

    @property
    def bb_app(self) -> Host:
        """The app, as the screens see it (``bbtui.host``)."""
        return host(self)

    def compose(self) -> ComposeResult:
        """Summary, boards, statistics."""
        yield Header()
        yield Label("", id="group-summary", classes="summary")
        with VerticalScroll(id="group-body"):
            yield BoardGrid(id="boards")
            yield Label("Statistics (values that differ are highlighted, in board order)", classes="heading")
            yield StatsTable(id="group-stats")
        yield Label("More below: pagedown (or down past the last board).", id="group-more", classes="message")
        yield Footer(compact=True)

    async def on_mount(self) -> None:
        """Show the group."""
        self.title = f"Spectral group of {self.config}"
        self.watch(self.query_one("#group-body"), "scroll_y", self.show_more, init=False)
        await self.show_group(self.index)

    def on_resize(self) -> None:
        """The room changed: is there more below?"""
        self.call_after_refresh(self.show_more)

    def show_more(self, *_: object) -> None:
        """Say that boards or statistics are below the screen's edge, while they are (at 80 x
        24, a group's second row of boards and its statistics are)."""
        body = self.query_one("#group-body", VerticalScroll)
        self.query_one("#group-more").display = body.scroll_y < body.max_scroll_y

    async def show_group(self, index: int) -> None:
        """Read group ``index`` (or the spectrum's group) and its molecules, and draw them.

        ``index``, ``spectrum`` and ``members`` change only once the new boards
        are mounted, so that whoever waits on them sees a whole group.
        """
        spectrum = self.spectrum
        if self.groups is not None:
            row = self.groups.at(index)
            if row is None:
                return
            spectrum = row.spectrum
            self.count = self.groups.count()
            where = (
                f"Group {index + 1:,} of {self.count:,} (family of #{row.canonical_number:,}, "
                f"{row.transform}) · "
            )
        else:
            where = ""
        assert spectrum is not None
        members = molecules_with_spectrum(self.config, spectrum)
        molecules = [m.molecule for m in members]
        self.query_one("#group-summary", Label).update(
            f"{where}{plural(len(members), 'molecule')}, {differ_phrase(max_atoms_differing(molecules))} "
            f"(X)\nspectrum {spectrum}"
        )
        grid = self.query_one("#boards", BoardGrid)
        focused = self.focused
        position = focused.position if isinstance(focused, Board) else None
        marked = differing_atoms(molecules)
        boards = [record_board(m, marked) for m in members]
        await grid.show(boards)
        grid.set_position(position)
        if boards:
            boards[0].focus()
        self.query_one("#group-stats", StatsTable).show(members)
        self.index, self.spectrum, self.members = index, spectrum, members
        self.refresh_bindings()
        self.call_after_refresh(self.show_more)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Next/previous only along a list."""
        if action == "move":
            return self.groups is not None  # at either end it says so (``action_move``)
        return True

    async def action_move(self, step: int) -> None:
        """The next (1) or previous (-1) group of the list."""
        target = self.index + step
        if self.groups is None:
            return
        if not 0 <= target < self.count:
            where = "last" if step > 0 else "first"
            self.notify(f"This is the {where} group of the list ({self.count:,} groups).", title="Groups")
            return
        await self.show_group(target)
        if self.on_move:
            self.on_move(target)

    def action_open_molecule(self) -> None:
        """The Molecule screen of the focused board."""
        focused = self.focused
        if isinstance(focused, Board):
            number = self.members[list(self.query(Board)).index(focused)].number
            self.bb_app.open_molecule(self.config, number)


def differ_phrase(count: int) -> str:
    """``up to 2 atoms differ``, ``1 atom differs``."""
    return "1 atom differs" if count == 1 else f"up to {count:,} atoms differ"
