"""What the TUI tests share: waiting for a condition, reading what a label shows, a gate
that holds a run mid-way.

Imported by the TUI test modules (and ``readonly_pilot.py``); it holds no test.
A test waits for the condition it needs, never a fixed time.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from typing import TypeVar

from textual.app import App
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import DataTable, Label

from bbcore.geometry import move_cursor


async def wait_for(pilot: Pilot, condition: Callable[[], object], timeout: float = 60) -> None:
    """Let the app run until ``condition()`` holds (AssertionError after ``timeout`` seconds)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await pilot.pause(0.02)


async def tree_cursor_to(pilot: Pilot, tree, node) -> None:
    """Put a tree's cursor on ``node``: a node added or shown a moment ago has no line until
    the tree lays its lines out again, and ``move_cursor`` then puts the cursor nowhere (under
    load one pause was not always enough: the CI saw ``o`` land on no leaf)."""
    deadline = time.monotonic() + 60
    while True:
        tree.move_cursor(node)
        if tree.cursor_node is node:
            return
        assert time.monotonic() < deadline, "the tree never laid out the node's line"
        await pilot.pause(0.02)


def tables_pending(screen: Screen) -> bool:
    """Whether a table has rows whose widths it has not measured yet: it does so when its
    messages run out (Textual's DataTable, on Idle); under load two screenshots in a row
    showed the Groups table's columns cut to their headings' widths."""
    return any(table._require_update_dimensions or table._updated_cells for table in screen.query(DataTable))


AnyScreen = TypeVar("AnyScreen", bound=Screen)


async def open_screen(app: App, pilot: Pilot, key: str, kind: type[AnyScreen]) -> AnyScreen:
    """The screen of kind ``kind`` that ``key`` opens (after escape, which leaves the Explore
    screen's input)."""
    await pilot.press("escape", key)
    screen = app.screen
    assert isinstance(screen, kind)
    return screen


def text_of(app: App, selector: str) -> str:
    """What a label of the current screen shows."""
    return str(app.screen.query_one(selector, Label).render())


class RangeGate:
    """Once armed, the run stores one range, then waits until ``open()``: a key lands mid-run."""

    def __init__(self, store_range: Callable) -> None:
        self.store_range = store_range
        self.armed = False
        self.calls = 0
        self.opened = threading.Event()

    def __call__(self, *args, **kwargs):
        if self.armed:
            self.calls += 1
            if self.calls > 1:
                self.opened.wait(timeout=60)
        return self.store_range(*args, **kwargs)

    def open(self) -> None:
        """Let the run go on."""
        self.opened.set()


ARROWS = {"up": (-1, 0), "down": (1, 0), "left": (0, -1), "right": (0, 1)}
"""The cursor keys and the step each takes on a board's perimeter."""


async def cursor_to(pilot: Pilot, board, position: int) -> None:
    """Move a board's perimeter cursor to ``position`` by the arrows (the shortest way)."""
    if board.position is None:
        await pilot.press("down")
    start = board.position
    assert start is not None
    paths: dict[int, list[str]] = {start: []}
    queue = deque([start])
    while queue:
        here = queue.popleft()
        for key, step in ARROWS.items():
            there = move_cursor(board.box_width, here, step, board.box_height)
            if there not in paths:
                paths[there] = paths[here] + [key]
                queue.append(there)
    await pilot.press(*paths[position])
    assert board.position == position
