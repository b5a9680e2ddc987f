"""Screens that do not pile up: going to a screen already open goes back to it.

From a spectral group ``o`` opens a molecule; from that molecule ``s``
opens its spectral group.  Each used to push a new screen: 60 rounds left
123 screens and 122 escapes to press.  Now, as in a browser's history, a
molecule or a group already open is gone back to, and escape retraces the
way.  Played on A4_B4 (the shared explored database).
"""

from __future__ import annotations

from pathlib import Path

from pilot import wait_for
from textual.pilot import Pilot
from textual.widgets import Markdown

from bbcore.config import parse_config
from bbcore.queries import group_page, molecules_with_spectrum
from bbcore.store import open_database
from bbtui.app import BlackBoxApp
from bbtui.screens.explore import ExploreScreen
from bbtui.screens.group import GroupScreen
from bbtui.screens.groups import GroupsScreen
from bbtui.screens.help import HelpScreen
from bbtui.screens.molecule import MoleculeScreen
from bbtui.widgets.board import Board

A4_B4 = parse_config("A4_B4")
ROUNDS = 4
"""Rounds of o then s: each of the group's molecules (2 in the first group) opened twice, the
second time after its screen was closed.  Pushing a screen each time (the bug) shows at the first
round (a stack of 5); 60 rounds, as in the issue, took 90 s of the CI's 28 minutes."""


async def on_group(pilot: Pilot, spectrum: str) -> GroupScreen:
    """Wait for the group screen of ``spectrum``, its boards drawn."""
    app = pilot.app
    await wait_for(
        pilot,
        lambda: (
            isinstance(app.screen, GroupScreen)
            and app.screen.spectrum == spectrum
            and len(app.screen.query(Board)) == len(app.screen.members) > 0
        ),
    )
    return app.screen


async def on_molecule(pilot: Pilot, number: int) -> MoleculeScreen:
    """Wait for the molecule screen of ``number``, drawn."""
    app = pilot.app
    await wait_for(
        pilot,
        lambda: (
            isinstance(app.screen, MoleculeScreen)
            and app.screen.number == number
            and app.screen.record is not None
            and app.screen.record.number == number
        ),
    )
    return app.screen


async def test_rounds_of_group_and_molecule_stay_shallow(explored: Path) -> None:
    """o then s, ROUNDS times, each round on another molecule of the group: the stack never grows
    past Explore, Groups, Group, Molecule, and two escapes reach the groups."""
    open_database(explored)
    first = group_page(A4_B4, 0, 1)[0]
    members = [m.number for m in molecules_with_spectrum(A4_B4, first.spectrum)]
    assert len(members) >= 2
    app = BlackBoxApp(explored, A4_B4)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("g")
        await wait_for(pilot, lambda: isinstance(app.screen, GroupsScreen) and app.screen.page_read)
        await pilot.press("enter")
        group = await on_group(pilot, first.spectrum)
        depths = []
        for round_ in range(ROUNDS):
            which = round_ % len(members)
            list(group.query(Board))[which].focus()
            await pilot.press("o")
            await on_molecule(pilot, members[which])
            depths.append(len(app.screen_stack))
            await pilot.press("s")
            group = await on_group(pilot, first.spectrum)
            depths.append(len(app.screen_stack))
        assert max(depths) == 4, depths
        assert [type(s) for s in app.screen_stack] == [ExploreScreen, GroupsScreen, GroupScreen]

        list(group.query(Board))[0].focus()
        await pilot.press("o")  # end on a molecule: two escapes to the groups
        await on_molecule(pilot, members[0])
        await pilot.press("escape")
        await on_group(pilot, first.spectrum)
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, GroupsScreen))
        assert len(app.screen_stack) == 2


async def test_a_molecule_and_its_group_opened_directly_take_turns(explored: Path) -> None:
    """From the Molecule screen (``m``, not a list): s opens its group, o on the same molecule
    goes back to the molecule's screen, and 3 rounds leave Explore, Molecule, Group at most (the
    screen pushed anew, the bug, shows at the first round: 10 rounds were 24 s under load)."""
    open_database(explored)
    first = group_page(A4_B4, 0, 1)[0]
    number = molecules_with_spectrum(A4_B4, first.spectrum)[0].number
    app = BlackBoxApp(explored, A4_B4)
    async with app.run_test(size=(100, 30)) as pilot:
        app.open_molecule(A4_B4, number)
        molecule = await on_molecule(pilot, number)
        depths = []
        for _ in range(3):
            await pilot.press("s")
            group = await on_group(pilot, first.spectrum)
            depths.append(len(app.screen_stack))
            list(group.query(Board))[0].focus()
            await pilot.press("o")
            assert await on_molecule(pilot, number) is molecule  # the same screen, gone back to
            depths.append(len(app.screen_stack))
        assert max(depths) == 3
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, ExploreScreen))


async def test_another_molecule_is_a_new_screen_and_escape_comes_back(explored: Path) -> None:
    """Only a screen showing the same molecule or group is gone back to: another one is pushed."""
    open_database(explored)
    first = group_page(A4_B4, 0, 1)[0]
    one, two = (m.number for m in molecules_with_spectrum(A4_B4, first.spectrum)[:2])
    app = BlackBoxApp(explored, A4_B4)
    async with app.run_test(size=(100, 30)) as pilot:
        app.open_molecule(A4_B4, one)
        await on_molecule(pilot, one)
        await pilot.press("s")
        group = await on_group(pilot, first.spectrum)
        list(group.query(Board))[1].focus()
        await pilot.press("o")
        await on_molecule(pilot, two)
        assert [type(s) for s in app.screen_stack] == [
            ExploreScreen,
            MoleculeScreen,
            GroupScreen,
            MoleculeScreen,
        ]
        await pilot.press("escape")
        await on_group(pilot, first.spectrum)
        await pilot.press("escape")
        await on_molecule(pilot, one)


async def test_the_help_says_what_escape_does(explored: Path) -> None:
    app = BlackBoxApp(explored, A4_B4)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        text = " ".join(app.screen.query_one(Markdown).source.split())
        assert "`escape` back to the screen before (out of an input first)" in text
        assert "going to a screen that is already open" in text and "goes back to it" in text
