"""Nothing on any screen is cut off at 80 x 24: every text fits the room it is given.

Each screen of ``test_tui_keys.SCREENS`` is opened as a user finds it, with
its fullest content (a game with candidates on Decode, a molecule with a
spectral group on Molecule, the coach on Play, the book's tree opened on
Strategy), and every widget in view is checked:

- a widget reaches past the right edge of one of its containers (a label
  wider than the screen, a board beyond the edge);
- a label's line that does not wrap is longer than its width (unless it ends
  in an ellipsis, which says so);
- an input's placeholder is longer than the input's room;
- a tree or a table is wider than its region (its rows cut at the edge);
- a footer key is not wholly shown (``test_tui_keys.footer_problems``);
- the header's title (the screen, the database's path) is longer than the room
  between the header's icon and its right edge.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text
from test_tui_keys import SCREENS, footer_problems, settle, show
from textual.app import App
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import DataTable, Header, Input, Label, Static, Tree

from bbcore.config import parse_config
from bbtui.app import BlackBoxApp
from bbtui.screens.molecule import MoleculeScreen
from bbtui.screens.play import PlayScreen
from bbtui.screens.strategy import StrategyScreen

A4_B4 = parse_config("A4_B4")


def label_lines(widget: Static, width: int) -> list[Text]:
    """The lines a label shows at ``width`` columns: wrapped, unless its text or style
    says not to."""
    rendered = widget.render()
    text = rendered if isinstance(rendered, Text) else Text(str(rendered))
    if text.no_wrap or widget.styles.text_wrap == "nowrap":
        return text.split(allow_blank=True)
    return list(text.wrap(Console(width=max(width, 1)), max(width, 1)))


def cut_off(screen: Screen) -> list[str]:
    """Every text of ``screen`` wider than the room it is given (see the module's docstring)."""
    app = screen.app
    problems: list[str] = []
    for widget in screen.query("*"):
        if not isinstance(widget, Widget) or not widget.display or not widget.region.width:
            continue
        region = widget.region
        for container in [node for node in widget.ancestors if isinstance(node, Widget)]:
            if container.styles.overflow_x in ("auto", "scroll") and container is not screen:
                break  # a container that scrolls sideways shows the rest
            if region.right > container.region.right:
                problems.append(f"{widget!r} reaches column {region.right}, past {container!r}")
                break
        width = widget.content_region.width
        renderable = getattr(widget.render(), "_renderable", None)  # a RichVisual's
        if isinstance(widget, Static) and isinstance(renderable, Table) and width:
            # a rich table (of statistics): its columns squeezed to fit are cut
            console = Console(width=width)
            needed = Measurement.get(console, console.options, renderable).maximum
            if needed > width:
                problems.append(f"{widget!r} needs {needed} columns, has {width}")
        if isinstance(widget, Label | Static) and not isinstance(widget, Input):
            ellipsis = widget.styles.text_overflow == "ellipsis"
            for line in label_lines(widget, width):
                if line.cell_len > width and not ellipsis:
                    problems.append(f"{widget!r}: {line.plain!r} is cut at {width} columns")
        if isinstance(widget, Input) and len(widget.placeholder) > width:  # shown when it is empty
            problems.append(f"{widget!r}: placeholder {widget.placeholder!r} is cut at {width}")
        if isinstance(widget, Tree | DataTable) and widget.virtual_size.width > width:
            problems.append(f"{widget!r} is {widget.virtual_size.width} columns wide in {width}")
    for header in screen.query(Header):  # the title between the header's icon and clock
        title, room = header.format_title(), header.query_one("HeaderTitle").content_region.width
        if title.cell_length > room:
            problems.append(f"the header's {title.plain!r} is cut at {room} columns")
    return problems + footer_problems(app)  # type: ignore[arg-type]


async def fullest(pilot: Pilot, screen: Screen) -> None:
    """Give the screen its fullest content: the coach on Play, the tree opened on Strategy."""
    if isinstance(screen, PlayScreen):
        await pilot.press("c")
        await settle(pilot)
    if isinstance(screen, StrategyScreen):
        tree = screen.tree
        tree.focus()
        for _ in range(4):  # down the first branch, four levels
            await pilot.press("down", "enter")
            await settle(pilot)
        tree.move_cursor(tree.root)
    if isinstance(screen, MoleculeScreen):
        screen.query_one("#molecule-board").query_one("Board").focus()
    await pilot.pause()


async def problems_at(app: App, pilot: Pilot, size: tuple[int, int]) -> list[str]:
    """What is cut off on the current screen at ``size``."""
    await pilot.resize_terminal(*size)
    await settle(pilot)
    return cut_off(app.screen)


@pytest.mark.parametrize("name", list(SCREENS))
async def test_no_text_is_cut_off_at_80_by_24(explored: Path, tmp_path: Path, name: str) -> None:
    kind, opener = SCREENS[name]
    # A database deep in folders: the header's path is longer than its room at 80 columns.
    path = tmp_path / "a-folder-of-databases-with-a-long-name" / "and-another-one-inside" / "small.sqlite"
    path.parent.mkdir(parents=True)
    shutil.copy(explored, path)
    app = BlackBoxApp(path, A4_B4)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await show(pilot, kind, opener)
        await fullest(pilot, screen)
        assert await problems_at(app, pilot, (80, 24)) == []
        assert await problems_at(app, pilot, (120, 35)) == []
