"""Every screen, every key: the app survives them all; every footer and heading fits 80 x 24.

The screens are opened on a database where A2_B4, A3_B4 and A4_B4 are
explored.  Each screen is opened as a user would find it (its data
loaded), then every key of its bindings, of the focused widget's and of
the app's is pressed once (``ctrl+q`` aside); the app must still be
running after each.  A key that leaves the screen (escape, another
screen's key) is followed by opening the screen again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest
from pilot import wait_for
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey, FooterLabel

from bbcore.config import parse_config
from bbcore.queries import group_page
from bbtui.app import BlackBoxApp
from bbtui.screens.decode import DecodeScreen
from bbtui.screens.explore import ExploreScreen
from bbtui.screens.group import GroupScreen
from bbtui.screens.groups import GroupsScreen
from bbtui.screens.help import HelpScreen
from bbtui.screens.molecule import MoleculeScreen
from bbtui.screens.play import PlayScreen
from bbtui.screens.statistics import StatisticsScreen
from bbtui.screens.strategy import StrategyScreen
from bbtui.widgets.board import Board

A4_B4 = parse_config("A4_B4")

Opener = Callable[[BlackBoxApp], None]


def open_group(app: BlackBoxApp) -> None:
    """The first spectral group of A4_B4."""
    app.open_group(A4_B4, group_page(A4_B4, 0, 1)[0].spectrum)


SCREENS: dict[str, tuple[type[Screen], Opener]] = {
    "explore": (ExploreScreen, lambda app: app.action_explore()),
    "groups": (GroupsScreen, lambda app: app.action_groups()),
    "group": (GroupScreen, open_group),
    # A game with candidates to page through: the fullest footer of the screen.
    "decode": (DecodeScreen, lambda app: app.push_screen(DecodeScreen(A4_B4, "H" + "." * 15))),
    # Molecule 22 heads a spectral group: the fullest footer of the screen.
    "molecule": (MoleculeScreen, lambda app: app.open_molecule(A4_B4, 22)),
    "statistics": (StatisticsScreen, lambda app: app.action_statistics()),
    "play": (PlayScreen, lambda app: app.action_play()),
    "strategy": (StrategyScreen, lambda app: app.action_strategy()),
    "help": (HelpScreen, lambda app: app.action_help()),
}


async def settle(pilot: Pilot) -> None:
    """Let the screen's workers finish (a statistics report, a book, a decode)."""
    await pilot.pause(0.05)
    await asyncio.wait_for(pilot.app.workers.wait_for_complete(), timeout=60)
    await pilot.pause(0.05)


async def show(pilot: Pilot, kind: type[Screen], opener: Opener) -> Screen:
    """Back to the home screen, then open the screen (its data loaded)."""
    app = pilot.app
    assert isinstance(app, BlackBoxApp)
    while len(app.screen_stack) > 1:
        app.pop_screen()
        await pilot.pause()
    if kind is not ExploreScreen:
        opener(app)
    await wait_for(pilot, lambda: isinstance(app.screen, kind))
    await settle(pilot)
    return app.screen


def keys_of(screen: Screen, *, app_keys: bool) -> list[str]:
    """Every key bound on the screen and on its focused widget and its ancestors, and
    with ``app_keys`` the app's (the same on every screen: pressed from the home screen)."""
    keys: list[str] = []
    nodes = [node for node in (screen.focused, *(screen.focused.ancestors if screen.focused else ()), screen)]
    nodes = [node for node in nodes if node is not screen.app] + ([screen.app] if app_keys else [])
    for node in nodes:
        assert node is not None
        for binding in node._bindings.key_to_bindings.values():
            for one in binding:
                if one.key not in keys:
                    keys.append(one.key)
    for key, active in screen.active_bindings.items():
        if key not in keys and (app_keys or active.node is not screen.app):
            keys.append(key)
    return [key for key in keys if key not in ("ctrl+q", "ctrl+c")]


@pytest.mark.parametrize("name", list(SCREENS))
async def test_every_key_of_every_screen_leaves_the_app_running(explored: Path, name: str) -> None:
    kind, opener = SCREENS[name]
    app = BlackBoxApp(explored, A4_B4)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await show(pilot, kind, opener)
        keys = keys_of(screen, app_keys=kind is ExploreScreen)
        assert keys
        for key in keys:
            if not isinstance(app.screen, kind):
                await show(pilot, kind, opener)
            await pilot.press(key)
            await settle(pilot)
            assert app.is_running and app.return_code is None, f"{name}: {key} stopped the app"


def heading_problems(app: BlackBoxApp) -> list[str]:
    """Headings on screen (wholly in view) that do not show every word: cut at the right edge."""
    screen = app.screen
    lines = [strip.text for strip in screen._compositor.render_strips()]
    problems = []
    for label in screen.query(".heading"):
        region = label.region
        if not label.display or not region.height:
            continue
        lines_in_view = [
            node.region.y <= region.y and region.bottom <= node.region.bottom
            for node in label.ancestors
            if node is not app
        ]
        if not all(lines_in_view):
            continue  # scrolled out of view, or under the footer: its width is what is checked
        shown = " ".join(line[region.x : region.right] for line in lines[region.y : region.bottom])
        missing = [word for word in str(label.render()).split() if word not in shown]
        if missing:
            problems.append(f"{label!r} misses {missing}")
    return problems


def footer_problems(app: BlackBoxApp) -> list[str]:
    """Footer keys not fully visible on the screen: cut off, or beyond its right edge."""
    screen = app.screen
    footer = screen.query_one(Footer)
    lines = screen._compositor.render_strips()
    line = lines[footer.region.y].text
    problems = []
    for item in footer.query("FooterKey, FooterLabel"):
        region = item.region
        if isinstance(item, FooterKey):
            wanted = [item.key_display, item.description]
        else:
            assert isinstance(item, FooterLabel)
            wanted = [str(item.render())]
        shown = line[region.x : region.right] if region.width else ""
        if region.right > app.size.width or not all(w in shown for w in wanted if w):
            problems.append(f"{' '.join(wanted)!r} shows as {shown!r}")
    return problems


@pytest.mark.parametrize("name", list(SCREENS))
async def test_every_footer_key_is_fully_visible_at_80_by_24(explored: Path, name: str) -> None:
    kind, opener = SCREENS[name]
    app = BlackBoxApp(explored, A4_B4)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await show(pilot, kind, opener)
        # With each widget that takes the focus in turn: the footer changes with it.
        seen = set()
        for _ in range(12):
            focused = screen.focused
            if focused in seen:
                break
            seen.add(focused)
            if isinstance(focused, Board) and focused.position is None:
                await pilot.press("down")  # a position chosen: the keys that need one show
                await settle(pilot)
            # The footer is composed again after a refresh: give it a moment.
            for _ in range(40):
                await pilot.pause(0.05)
                if not footer_problems(app):
                    break
            assert footer_problems(app) == [], f"{name}, focus on {focused!r}"
            assert heading_problems(app) == [], name
            await pilot.press("tab")
            await settle(pilot)
