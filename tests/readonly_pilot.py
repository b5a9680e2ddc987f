"""A pilot session on a database the user cannot write, run by test_readonly in its own process.

``python tests/readonly_pilot.py DB CONFIG`` opens the app on DB (which the
calling test made unwritable, and runs as a user who cannot write it),
browses CONFIG's spectral groups, opens the first group, the Molecule,
Decode and Statistics screens, tries to explore, and prints one line per
finding for the test to assert on.  It exits 1 with the reason on a failure.
"""

from __future__ import annotations

import asyncio
import sys

from pilot import wait_for
from textual.widgets import DataTable

from bbcore.config import parse_config
from bbtui.app import BlackBoxApp, main
from bbtui.screens.explore import ExploreScreen
from bbtui.screens.group import GroupScreen
from bbtui.screens.groups import GroupsScreen
from bbtui.screens.molecule import MoleculeScreen
from bbtui.screens.statistics import StatisticsScreen


async def session(db: str, config_name: str) -> None:
    app = BlackBoxApp(db, parse_config(config_name))
    notes: list[str] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, ExploreScreen))
        print(f"read_only {app.read_only}")
        print(f"subtitle {app.sub_title}")
        explore_screen = app.screen
        print(f"start_key {explore_screen.check_action('start', ())}")
        print(f"restart_key {explore_screen.check_action('restart', ())}")
        original_notify = app.notify

        def record(message, *args, **kwargs):
            notes.append(str(message))
            return original_notify(message, *args, **kwargs)

        app.notify = record
        await pilot.press("s")
        await wait_for(pilot, lambda: notes, timeout=10)
        print(f"s_says {notes[-1] if notes else ''}")
        print(f"exploring_after_s {app.exploring}")
        await pilot.press("g")
        await wait_for(pilot, lambda: isinstance(app.screen, GroupsScreen))
        table = app.screen.query_one(DataTable)
        await wait_for(pilot, lambda: table.row_count > 0)
        print(f"group_rows {table.row_count}")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, GroupScreen))
        await wait_for(pilot, lambda: len(app.screen.members) > 1)
        print(f"group_members {len(app.screen.members)}")
        await pilot.press("m")
        await wait_for(pilot, lambda: isinstance(app.screen, MoleculeScreen))
        print("molecule_opened yes")
        app.action_statistics()  # the Molecule screen's input has the focus: no letter keys
        await wait_for(pilot, lambda: isinstance(app.screen, StatisticsScreen))
        await app.workers.wait_for_complete()
        await pilot.pause()
        print("statistics_opened yes")
        app.action_decode()
        await wait_for(pilot, lambda: type(app.screen).__name__ == "DecodeScreen", timeout=10)
        await app.workers.wait_for_complete()  # its first decode, before the app closes
        await pilot.pause()
        print(f"decode_opened {type(app.screen).__name__}")
        print(f"errors {[n for n in notes if 'error' in n.lower() and 'read-only' not in n]}")


if __name__ == "__main__":
    if sys.argv[1] == "--main":  # the real entry point, quitting at once
        sys.argv = ["bbtui", *sys.argv[2:]]
        sys.exit(main(sys.argv[1:]))
    asyncio.run(session(sys.argv[1], sys.argv[2]))
