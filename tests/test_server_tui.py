"""The TUI on a server: each main screen shows on a server copy what it shows on its file.

Store parity through Textual's pilot, against a real server
(tests/postgres.py): A4_B6 in each store kind is copied from its file into a
server database (``bbcore copy``), then the same keys are pressed in two
apps, one on the file and one on the server, and every screen on the way
must show the same text: the groups listing (first page, next page, the
last page, by size, every spectral group), a group opened with its boards,
a molecule of it, its spectral group again, and the statistics screen's
three tabs.  Only the header differs (it names the database), so it is
left out.  A server whose readers returned rows in another order, missed a
family or read a profile wrongly shows a different screen here.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from pilot import wait_for
from stores import cli, explore_sources
from textual.app import App
from textual.geometry import Region
from textual.widgets import Header

from bbcore.config import Config
from bbcore.store import STORES, close_database
from bbtui.app import BlackBoxApp
from bbtui.screens.group import GroupScreen
from bbtui.screens.groups import GroupsScreen
from bbtui.screens.molecule import MoleculeScreen
from bbtui.screens.statistics import StatisticsScreen

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the test server runs on Linux")

A4_B6 = Config(4, 6)
SIZE = (120, 35)


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A file per store kind holding A3_B5 and A4_B6 complete (``stores.explore_sources``)."""
    return explore_sources(tmp_path_factory.mktemp("sources"))


def screen_text(app: App) -> list[str]:
    """What the current screen shows, widget by widget, as the terminal draws it; not the header."""
    shown = []
    for widget in app.screen.query("*"):
        if widget.children or not widget.display or not widget.size.area:
            continue
        if any(isinstance(node, Header) for node in widget.ancestors_with_self):
            continue
        lines = widget.render_lines(Region(0, 0, *widget.size))
        shown.append(f"{type(widget).__name__}#{widget.id}:\n" + "\n".join(line.text for line in lines))
    return shown


async def tour(db: Path | str) -> list[list[str]]:
    """The screens a user walks through on A4_B6, each one's text."""
    seen: list[list[str]] = []
    app = BlackBoxApp(db, A4_B6)
    async with app.run_test(size=SIZE) as pilot:

        async def settle(kind: type, pressed: str) -> None:
            await pilot.press(*pressed.split())
            await wait_for(pilot, lambda: isinstance(app.screen, kind))
            await pilot.pause(0.2)
            await pilot.wait_for_scheduled_animations()  # a tab's underline slides
            await wait_for(pilot, lambda: not app.workers._workers or all(w.is_finished for w in app.workers))
            seen.append([f"after {pressed!r} on {kind.__name__}"] + screen_text(app))

        await settle(GroupsScreen, "g")
        assert app.screen.count, "the groups screen lists the spectral groups"
        for keys in ("n", "l", "f", "s", "a", "o"):
            await settle(GroupsScreen, keys)
        await settle(GroupScreen, "enter")
        await settle(GroupScreen, "n")
        await settle(MoleculeScreen, "o")
        await settle(GroupScreen, "s")
        await settle(MoleculeScreen, "o")
        await settle(MoleculeScreen, "n")
        await settle(StatisticsScreen, "t")
        for tab in ("2", "3", "n"):
            await settle(StatisticsScreen, tab)
    close_database()
    return seen


@pytest.mark.parametrize("kind", STORES)
async def test_the_main_screens_show_the_same_on_the_server_as_in_the_file(sources, kind, pg_url):
    status, _, err = cli(sources[kind], "copy", A4_B6.name, pg_url)
    assert status == 0, err
    on_file = await tour(sources[kind])
    on_server = await tour(pg_url)
    assert len(on_server) == len(on_file)
    for file_screen, server_screen in zip(on_file, on_server):
        assert server_screen == file_screen
