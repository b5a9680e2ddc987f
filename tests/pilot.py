"""What the TUI tests share: waiting for a condition, reading what a label shows.

Imported by the TUI test modules (and ``readonly_pilot.py``); it holds no test.
A test waits for the condition it needs, never a fixed time.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from textual.app import App
from textual.pilot import Pilot
from textual.widgets import Label


async def wait_for(pilot: Pilot, condition: Callable[[], object], timeout: float = 60) -> None:
    """Let the app run until ``condition()`` holds (AssertionError after ``timeout`` seconds)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await pilot.pause(0.02)


def text_of(app: App, selector: str) -> str:
    """What a label of the current screen shows."""
    return str(app.screen.query_one(selector, Label).render())
