"""Closed screens are freed: a screen that watched the app does not outlive its closing.

Textual drops a closed screen's watcher of the app only when the attribute
watched next changes (``app.progress``: during an exploration), and the
watcher's bound method held the screen, everything it showed with it: a
random-key run left 70 Groups screens alive with a stack depth of 1.  Each
screen here is opened and closed 50 times; then the screens of its kind
still alive (``gc``) and the app's watchers are counted (the Strategy
screen 10 times: 2 s a cycle on a busy machine).  The last Strategy screens
closed may stay alive, held by their finished workers' contexts until the
next worker runs: two at most (the book's worker and the optimal book's, which
may finish last on different screens: 2 after 10 cycles as after 25), where
the leak was one a cycle.
"""

from __future__ import annotations

import gc

import pytest
from pilot import wait_for

from bbcore.config import Config
from bbtui.app import BlackBoxApp
from bbtui.screens.groups import GroupsScreen
from bbtui.screens.strategy import StrategyScreen

A3_B4 = Config(3, 4)


def alive(kind: type) -> int:
    """Instances of ``kind`` still alive once every cycle of garbage is collected."""
    gc.collect()
    return sum(1 for thing in gc.get_objects() if type(thing) is kind)


def app_watchers(app: BlackBoxApp) -> int:
    """The watchers other nodes set on the app (Textual's ``__watchers``)."""
    return sum(len(pairs) for pairs in getattr(app, "__watchers", {}).values())


@pytest.mark.parametrize(
    ("key", "kind", "cycles", "kept"), [("g", GroupsScreen, 50, 0), ("b", StrategyScreen, 10, 2)]
)
async def test_a_screen_opened_and_closed_many_times_is_freed(explored, key, kind, cycles, kept) -> None:
    app = BlackBoxApp(explored, A3_B4, read_only=True)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("escape")
        await wait_for(pilot, lambda: app_watchers(app) > 0)  # the Explore screen's
        watchers = app_watchers(app)
        for _ in range(cycles):
            await pilot.press(key)
            await wait_for(pilot, lambda: isinstance(app.screen, kind))
            await pilot.pause()
            await pilot.press("escape")
            await wait_for(pilot, lambda: not isinstance(app.screen, kind))
        await pilot.pause()
        assert len(app.screen_stack) == 1
        counted = alive(kind)
        print(f"{kind.__name__}: {counted} alive after {cycles} cycles, app watchers {app_watchers(app)}")
        assert counted <= kept
        assert app_watchers(app) == watchers
