"""The Groups screen: the spectral groups of a configuration, page by page.

A spectral group is a spectrum shared by two or more molecules.  By default
the list has one row per family of symmetric groups (the ``id`` rows of
``Spectrums``); ``a`` shows every group.  Pages are read from the database
as they are shown (``bbcore.queries.group_page``), one screenful at a time.
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Label

from bbcore.config import Config
from bbcore.progress import Progress
from bbcore.queries import config_state, group_count, group_page, group_sizes
from bbcore.words import plural
from bbtui.host import Host, host, unwatch_app
from bbtui.screens.group import GroupList, GroupScreen
from bbtui.widgets.tables import fit_columns

PAGE = Binding.Group("Page")


class GroupTable(DataTable):
    """The page's rows; moving past the first or last row turns the page."""

    class Edge(Message):
        """The cursor tried to leave the page: ``step`` is -1 (up) or +1 (down)."""

        def __init__(self, step: int) -> None:
            super().__init__()
            self.step = step

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Enter with no row yet (``g`` then Enter at once) is the screen's: it opens the first
        group once the page is read (``GroupsScreen.action_select_early``)."""
        if action == "select_cursor":
            return self.row_count > 0
        return super().check_action(action, parameters)

    def action_cursor_down(self) -> None:
        """Down; past the last row, the next page."""
        if self.row_count and self.cursor_row >= self.row_count - 1:
            self.post_message(self.Edge(1))
        else:
            super().action_cursor_down()

    def action_cursor_up(self) -> None:
        """Up; past the first row, the previous page."""
        if self.row_count and self.cursor_row <= 0:
            self.post_message(self.Edge(-1))
        else:
            super().action_cursor_up()


class GroupsScreen(Screen):
    """The spectral groups of one configuration."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", show=False),
        Binding("n", "page(1)", "Page", group=PAGE, key_display="n"),
        Binding("p", "page(-1)", "Page", group=PAGE, key_display="p"),
        Binding("f", "first", "Page", group=PAGE, key_display="f"),
        Binding("l", "last", "Page", group=PAGE, key_display="l"),
        # Priority: the focused table would take them (its cursor to the page's last row).
        Binding("pagedown", "page(1)", "Next page", show=False, priority=True),
        Binding("pageup", "page(-1)", "Previous page", show=False, priority=True),
        Binding("o", "order", "Order"),
        Binding("s", "size", "Size"),
        Binding("a", "all_rows", "All/families"),
        # Enter before the table has the focus or a row (right after g): the table's own otherwise.
        Binding("enter", "select_early", "Open", show=False),
    ]

    def __init__(self, config: Config) -> None:
        """The groups of ``config``."""
        super().__init__()
        self.config = config
        self.groups = GroupList(config)
        self.first = 0
        self.page_size = 10
        self.count = 0
        self.summary_lines: int | None = None  # the summary's height (``reserve_summary``)
        self.waits = 0  # refreshes waited for the layout before reading a page (``fit_page``)
        self.refits = 0  # pages fitted again since the last fit because the rows in view changed
        self.page_read = False  # a page read yet (``load``)
        self.select_when_read = False  # Enter came before it: open its first group then

    @property
    def bb_app(self) -> Host:
        """The app, as the screens see it (``bbtui.host``)."""
        return host(self)

    @property
    def table(self) -> GroupTable:
        """The page's table."""
        return self.query_one(GroupTable)

    def compose(self) -> ComposeResult:
        """A summary line and the table."""
        yield Header()
        yield Label("", id="groups-summary", classes="summary")
        yield GroupTable(id="groups", cursor_type="row", zebra_stripes=True)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        """Columns, then the first page once the table's height is known."""
        self.title = f"Spectral groups of {self.config}"
        for key, label in (
            ("index", "#"),
            ("size", "mol"),
            ("canonical", "canonical"),
            ("transform", "transform"),
            ("diff", "diff"),
            ("spectrum", "spectrum"),
        ):
            self.table.add_column(label, key=key)
        # The first page once the table's height is known: a page read before would show a
        # page count that jumps as soon as it is (1/479, then 1/504).
        self.call_after_refresh(self.fit_page)
        self.watch(self.app, "progress", self.progress_changed, init=False)

    def on_unmount(self) -> None:
        """Closed: drop the watchers of the app, which would keep this screen alive."""
        unwatch_app(self, self)

    def progress_changed(self, progress: Progress | None) -> None:
        """A run of this configuration: the summary says where it stands now (the header's
        figure, not the one read when the screen opened), and its groups once complete."""
        if progress is None or progress.config != self.config.name or self.count:
            return
        if progress.phase == "complete":
            self.load(0)
        else:
            self.show_summary(0)

    def on_resize(self) -> None:
        """A page is one screenful of rows."""
        self.call_after_refresh(self.fit_page)

    def on_screen_resume(self) -> None:
        """Back from a group: the group list may have moved there."""
        self.fit_page()

    def rows_in_view(self) -> int:
        """The rows the table shows at once: its height less its heading, and less the
        horizontal scrollbar when the rows are wider than the screen (60 x 20, 40 x 12)."""
        table = self.table
        return table.scrollable_content_region.height - (table.header_height if table.show_header else 0)

    def fit_page(self, *, refit: bool = False) -> None:
        """Size the page to the table and show the page holding the cursor's group."""
        if not refit:
            self.refits = 0
        groups = self.groups
        self.count = group_count(self.config, all_rows=groups.all_rows, size=groups.size)
        changed = self.reserve_summary()
        if (not self.table.size.height or changed or self.summary_pending()) and self.waits < 20:
            # Not laid out yet, or the summary's room changed: no page is read before the
            # table's height is final (a page count read before jumps: 1/479, then 1/504);
            # a few refreshes at most (then the page is read, and check_fit corrects it).
            if self.is_current:
                self.waits += 1
                self.call_after_refresh(self.fit_page, refit=refit)
            return
        self.waits = 0
        if not self.table.size.height:
            return
        self.page_size = max(1, self.rows_in_view())
        cursor = self.first + max(self.table.cursor_row, 0)
        self.load(cursor - cursor % self.page_size, cursor)
        self.call_after_refresh(self.check_fit)

    def check_fit(self) -> None:
        """The page just shown changed the room (a scrollbar came or went, the summary took
        another line): fit it again, twice at most (never back and forth for ever)."""
        if self.table.size.height and self.rows_in_view() != self.page_size and self.refits < 2:
            self.refits += 1
            self.fit_page(refit=True)

    def load(self, first: int, cursor: int | None = None) -> None:
        """Read and show the page starting at group ``first``; put the cursor on ``cursor``."""
        groups = self.groups
        self.count = group_count(self.config, all_rows=groups.all_rows, size=groups.size)
        last_first = max(0, (self.count - 1) // self.page_size * self.page_size)
        self.first = min(max(0, first), last_first)
        page = group_page(
            self.config,
            self.first // self.page_size,
            self.page_size,
            all_rows=groups.all_rows,
            size=groups.size,
            order=groups.order,
        )
        self.page_read = True
        table = self.table
        table.clear()
        for i, row in enumerate(page):
            index = self.first + i
            table.add_row(
                f"{index + 1:,}",
                f"{row.nb_mol:,}",
                f"{row.canonical_number:,}",
                row.transform,
                str(row.max_diff),
                row.spectrum,
                key=str(index),
            )
        fit_columns(table)
        if page:
            target = (cursor if cursor is not None else self.first) - self.first
            table.move_cursor(row=min(max(target, 0), len(page) - 1), animate=False)
            if self.select_when_read:
                table.action_select_cursor()
        self.select_when_read = False
        self.show_summary(len(page))
        if self.reserve_summary():  # another filter: the summary takes another number of lines
            self.call_after_refresh(self.fit_page)

    def reserve_summary(self) -> bool:
        """Give the summary the lines its widest text takes (the last rows and page, numbers
        as wide as they come), so that turning pages or fitting them never changes its
        height, nor so the table's; True when that changed it."""
        summary = self.query_one("#groups-summary", Label)
        lines: int | None = None
        width = summary.content_region.width
        if self.count and width:
            widest = Text(self.summary_text(self.count - 1, 1, 1))
            lines = len(widest.wrap(self.app.console, width))
        if lines != self.summary_lines:
            self.summary_lines = lines
            summary.styles.height = lines if lines else "auto"
            return True
        return False

    def summary_pending(self) -> bool:
        """The summary's reserved lines are not laid out yet."""
        lines = self.summary_lines
        return lines is not None and self.query_one("#groups-summary", Label).size.height != lines

    def summary_text(self, first: int, shown: int, page_size: int) -> str:
        """The summary of a list holding groups (``self.count``): the page of ``page_size``
        starting at group ``first``, ``shown`` rows of it."""
        groups = self.groups
        kind = "every spectral group" if groups.all_rows else "one row per family of symmetric groups"
        size = f"size {groups.size}" if groups.size is not None else "all sizes"
        pages = (self.count + page_size - 1) // page_size
        page = first // page_size + 1
        return (
            f"{plural(self.count, 'group')}: {kind}, {size}, by {groups.order} · "
            f"rows {first + 1:,}-{first + shown:,} · page {page:,}/{pages:,}"
        )

    def show_summary(self, shown: int) -> None:
        """What the list holds and how it is filtered and ordered."""
        summary = self.query_one("#groups-summary", Label)
        groups = self.groups
        if self.count == 0:
            state = config_state(self.config)
            if not state.complete:
                summary.update(
                    f"{self.config} is not explored yet ({state.label}): its spectral "
                    f"groups are built when its exploration completes (e, then s)."
                )
            elif groups.size is not None:
                summary.update(f"No spectral group of {groups.size} molecules (s changes the size).")
            else:
                summary.update(f"{self.config} has no spectral group: every spectrum is unique.")
            return
        summary.update(self.summary_text(self.first, shown, self.page_size))

    def action_page(self, step: int) -> None:
        """The next (1) or previous (-1) page; past either end nothing moves (not even the cursor)."""
        first = self.first + step * self.page_size
        if 0 <= first < self.count:
            self.load(first)

    def action_first(self) -> None:
        """The first page."""
        self.load(0)

    def action_last(self) -> None:
        """The last page."""
        self.load(self.count - 1, self.count - 1)

    @on(GroupTable.Edge)
    def turn_page(self, event: GroupTable.Edge) -> None:
        """The cursor went past the page: turn it, keeping the cursor moving."""
        if event.step > 0 and self.first + self.page_size < self.count:
            self.load(self.first + self.page_size, self.first + self.page_size)
        elif event.step < 0 and self.first > 0:
            self.load(self.first - self.page_size, self.first - 1)

    def refilter(self) -> None:
        """The first page of the list as just filtered or ordered, refitted once it is drawn: its
        rows may be wider or narrower (a scrollbar comes or goes), its summary take other lines."""
        self.load(0)
        self.refits = 0
        self.call_after_refresh(self.check_fit)

    def action_order(self) -> None:
        """Order by canonical number, or by size (largest groups first)."""
        self.groups.order = "size" if self.groups.order == "canonical" else "canonical"
        self.refilter()

    def action_size(self) -> None:
        """Show only the groups of one size; each press takes the next size, then all."""
        sizes = group_sizes(self.config)
        current = self.groups.size
        later = [s for s in sizes if current is None or s > current]
        self.groups.size = later[0] if later else None
        self.refilter()

    def action_all_rows(self) -> None:
        """Every spectral group, or one row per family of symmetric groups."""
        self.groups.all_rows = not self.groups.all_rows
        self.refilter()

    def action_select_early(self) -> None:
        """Enter before the first page is read, or before the table has the focus: the group
        under the cursor opens as soon as there is one (a key typed right after ``g`` is not
        lost); nothing when no group is stored."""
        if not self.page_read:
            self.select_when_read = True
        elif self.table.row_count:
            self.table.action_select_cursor()

    @on(DataTable.RowSelected, "#groups")
    def open_group(self, event: DataTable.RowSelected) -> None:
        """Enter opens the group under the cursor."""
        if event.row_key.value is not None:
            index = int(event.row_key.value)
            self.app.push_screen(
                GroupScreen(self.config, groups=self.groups, index=index, on_move=self.follow)
            )

    def follow(self, index: int) -> None:
        """The group screen moved to group ``index``: keep the cursor on it."""
        self.load(index - index % self.page_size, index)
