"""Browsing an explored configuration: groups, a group side by side, decode, molecule.

One A4_B4 exploration (1,820 molecules; 11 spectral groups up to symmetry,
66 with symmetry) is stored once for the module and only read by the apps.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pilot import text_of, wait_for
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, Label

from bbcore.config import Config, parse_config
from bbcore.queries import group_page, molecule_record, molecules_with_spectrum
from bbcore.store import open_database
from bbtui.app import BlackBoxApp
from bbtui.screens.decode import DecodeScreen
from bbtui.screens.group import GroupScreen
from bbtui.screens.groups import GroupsScreen
from bbtui.screens.molecule import MoleculeScreen
from bbtui.widgets.board import Board

A4_B4 = parse_config("A4_B4")


def first_rows(table: DataTable) -> list[str]:
    """The first cell of every row of a table."""
    return [str(table.get_row_at(i)[0]) for i in range(table.row_count)]


# -- groups and group --------------------------------------------------------------


async def test_groups_page_by_page(explored: Path) -> None:
    app = BlackBoxApp(explored, A4_B4)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("g")
        await wait_for(pilot, lambda: isinstance(app.screen, GroupsScreen) and app.screen.page_read)
        screen = app.screen
        assert isinstance(screen, GroupsScreen)
        table = screen.query_one("#groups", DataTable)
        assert text_of(app, "#groups-summary").startswith("11 groups")
        assert first_rows(table) == [str(i) for i in range(1, 12)]  # one page at 80x24

        await pilot.press("a")
        assert text_of(app, "#groups-summary").startswith("66 groups")
        size = screen.page_size
        assert first_rows(table) == [str(i) for i in range(1, size + 1)]
        await pilot.press("n")
        assert first_rows(table)[0] == str(size + 1)
        await pilot.press("l")
        assert first_rows(table)[-1] == "66"
        await pilot.press("p")
        assert first_rows(table)[-1] == str(66 - 66 % size if 66 % size else 66 - size)
        await pilot.press("f")
        assert first_rows(table)[0] == "1"
        await pilot.press("up")  # past the first row: stays on the first page
        assert first_rows(table)[0] == "1"

        await pilot.press("o")  # largest groups first
        assert [table.get_row_at(i)[1] for i in range(8)] == ["3"] * 8
        await pilot.press("s")  # size 2 only
        assert text_of(app, "#groups-summary").startswith("58 groups")
        await pilot.press("s")  # size 3 only
        assert text_of(app, "#groups-summary").startswith("8 groups")
        await pilot.press("s", "a")  # every size, families only
        assert text_of(app, "#groups-summary").startswith("11 groups")


async def test_open_a_group_and_move_to_the_next(explored: Path) -> None:
    app = BlackBoxApp(explored, A4_B4)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("g", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, GroupScreen) and app.screen.members)
        screen = app.screen
        first = group_page(A4_B4, 0, 2)
        assert screen.spectrum == first[0].spectrum
        boards = list(screen.query(Board))
        assert [b.molecule for b in boards] == [m.molecule for m in screen.members]
        assert len(boards) == first[0].nb_mol
        assert all(b.marked for b in boards)  # the molecules differ somewhere
        assert text_of(app, "#group-summary").startswith("Group 1 of 11")

        # The ray cursor, on every board: 1, down to 2, 3, 4, round the corner to 5.  Keys
        # faster than the boards' messages must not leave them echoing positions.
        await pilot.press("down", "down", "down", "down", "down")
        await wait_for(pilot, lambda: {b.position for b in screen.query(Board)} == {5})
        await pilot.pause()  # every message sent so far handled: none echoes an older position
        assert {b.position for b in screen.query(Board)} == {5}

        await pilot.press("n")
        await wait_for(pilot, lambda: screen.index == 1 and screen.spectrum == first[1].spectrum)
        assert text_of(app, "#group-summary").startswith("Group 2 of 11")
        assert len(screen.query(Board)) == first[1].nb_mol
        await pilot.press("p")
        await wait_for(pilot, lambda: screen.index == 0)

        await pilot.press("escape")  # back to the list, the cursor on the group
        assert isinstance(app.screen, GroupsScreen)


# -- decode ------------------------------------------------------------------------


def spectra(config: Config, path: Path) -> tuple[str, str]:
    """A spectrum of exactly one molecule (with letters), and one of several."""
    open_database(path)
    ambiguous = group_page(config, 0, 1)[0].spectrum
    unique = next(
        record.spectrum
        for record in (molecule_record(config, n) for n in range(1, config.nb_mol + 1))
        if "a" in record.spectrum and len(molecules_with_spectrum(config, record.spectrum)) == 1
    )
    return unique, ambiguous


async def decode(app: BlackBoxApp, pilot: Pilot, spectrum: str) -> DecodeScreen:
    """Type a spectrum on the Decode screen and wait for the result."""
    if not isinstance(app.screen, DecodeScreen):
        await pilot.press("escape", "d")  # out of the Explore screen's input, if focused
    screen = app.screen
    assert isinstance(screen, DecodeScreen)
    await wait_for(pilot, lambda: screen.answer is not None)  # the game with no ray shot
    screen.spectrum_input.value = ""
    screen.spectrum_input.focus()
    result = screen.query_one("#decode-result", Label)
    result.update("")
    await pilot.press(*spectrum, "enter")
    await wait_for(pilot, lambda: str(result.render()))
    return screen


async def test_decode_to_one_several_and_no_molecule(explored: Path) -> None:
    unique, ambiguous = spectra(A4_B4, explored)
    app = BlackBoxApp(explored, A4_B4)
    async with app.run_test(size=(100, 30)) as pilot:
        # Letters need not be normalised: swap them all.
        swapped = unique.translate(str.maketrans("abcdefgh", "hgfedcba"))
        screen = await decode(app, pilot, swapped)
        assert text_of(app, "#decode-result") == "Unique: one molecule gives this spectrum."
        boards = list(screen.query("#decode-boards Board"))
        assert len(boards) == 1 and boards[0].labels == list(swapped)  # as the player wrote them
        assert boards[0].molecule == molecules_with_spectrum(A4_B4, unique)[0].molecule

        screen = await decode(app, pilot, ambiguous)
        members = molecules_with_spectrum(A4_B4, ambiguous)
        assert text_of(app, "#decode-result").startswith(f"Ambiguous: {len(members)} molecules")
        assert [b.molecule for b in screen.query("#decode-boards Board")] == [m.molecule for m in members]

        await decode(app, pilot, "@" * 16)
        assert text_of(app, "#decode-result") == "No molecule gives this spectrum."


async def test_decode_an_unexplored_configuration(tmp_path: Path) -> None:
    config = parse_config("A3_B4")
    app = BlackBoxApp(tmp_path / "empty.sqlite", config)  # opens the database
    spectrum = molecule_record(config, 100).spectrum
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await decode(app, pilot, spectrum)
        numbers = [b.border_title for b in screen.query("#decode-boards Board")]
        assert "#100 " in " ".join(numbers) + " "
        assert "computed" in text_of(app, "#decode-message")


@pytest.mark.parametrize(
    ("typed", "message"),
    [
        (
            "@&",
            "wrong number of positions: A4_B4 has 16 positions (one character each), "
            "the game has 2 characters",
        ),
        ("@&ab@&@cbac@&@&*", "unknown character '*' at position 16"),
        ("@&ab@&@cbxc@&@&@", "label 'a' appears only once (position 3)"),
    ],
)
async def test_decode_says_what_is_wrong_as_you_type(explored: Path, typed: str, message: str) -> None:
    app = BlackBoxApp(explored, A4_B4)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("d")
        app.screen.query_one("#decode-spectrum", Input).insert_text_at_cursor(typed)
        await pilot.pause()
        shown = app.screen.query_one("#decode-message", Label)
        assert str(shown.render()).startswith(message)
        assert shown.has_class("error")
        assert not app.screen.query_one("#decode-spectrum").is_valid


# -- molecule ----------------------------------------------------------------------


async def test_molecule_by_number(explored: Path) -> None:
    app = BlackBoxApp(explored, A4_B4)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("m")
        screen = app.screen
        assert isinstance(screen, MoleculeScreen)
        await pilot.press(*"99999")
        assert "numbered 1..1,820" in text_of(app, "#molecule-message")
        await pilot.press(*["backspace"] * 5, *"22", "enter")
        await wait_for(pilot, lambda: screen.record is not None)
        record = molecule_record(A4_B4, 22)
        assert screen.query_one("#molecule-board Board", Board).molecule == record.molecule
        assert record.spectrum in text_of(app, "#molecule-about")
        images = screen.query("#enantiomers Board")
        assert 22 in screen.enantiomer_numbers and len(images) == len(screen.enantiomer_numbers)
        assert len(images) in (1, 2, 4, 8)
        await pilot.press("s")  # molecule 22 heads the first spectral group
        await wait_for(pilot, lambda: isinstance(app.screen, GroupScreen))


# -- snapshot ----------------------------------------------------------------------


def test_group_screen_snapshot(explored: Path, snap_compare) -> None:
    app = BlackBoxApp(explored, A4_B4)

    async def open_group(pilot: Pilot) -> None:
        await pilot.press("g", "enter")
        await wait_for(
            pilot,
            lambda: (
                isinstance(app.screen, GroupScreen)
                and app.screen.members
                and isinstance(app.screen.focused, Board)
            ),
        )
        # Round the box to position 10: a ray that turns.
        await pilot.press(*["down"] * 5, *["right"] * 4, "up")
        await wait_for(pilot, lambda: {b.position for b in app.screen.query(Board)} == {10})
        app.sub_title = "snapshot"  # not the temporary path
        await pilot.pause()
        await pilot.wait_for_scheduled_animations()

    assert snap_compare(app, terminal_size=(80, 24), run_before=open_group)


async def test_molecule_of_a_configuration_past_64_bits(explored: Path) -> None:
    """A30_B13 (1.7 x 10^33 molecules, never stored) beside a real database: its last molecule,
    its enantiomer group and its canonical molecule, computed with Python integers."""
    a30_b13 = parse_config("A30_B13")
    last = a30_b13.nb_mol
    app = BlackBoxApp(explored, A4_B4)
    async with app.run_test(size=(140, 50)) as pilot:
        await pilot.press("m")
        screen = app.screen
        assert isinstance(screen, MoleculeScreen)
        config_input = screen.query_one("#molecule-config", Input)
        config_input.value = ""
        config_input.focus()
        await pilot.press(*"A30_B13", "enter")
        await pilot.press(*str(last + 1))
        assert f"1..{last:,}" in text_of(app, "#molecule-message")
        await pilot.press("backspace", "backspace", *str(last)[-2:], "enter")
        await wait_for(pilot, lambda: screen.record is not None)
        top_rows = "-" * (169 - 30) + "O" * 30  # the last molecule: atoms in the last 30 cells
        assert screen.query_one("#molecule-board Board", Board).molecule == top_rows
        about = text_of(app, "#molecule-about")
        assert f"A30_B13 molecule #{last:,}" in about and "canonical #1, transform rot180" in about
        assert screen.enantiomer_numbers[0] == 1 and screen.enantiomer_numbers[-1] == last
        await pilot.press("c")
        await wait_for(pilot, lambda: screen.number == 1)
        assert screen.query_one("#molecule-board Board", Board).molecule == top_rows[::-1]


async def test_o_opens_the_focused_enantiomer_and_slash_jumps_to_a_number(explored: Path) -> None:
    """On the Molecule screen, ``o`` on one of the enantiomer boards shows that molecule (each of
    the boards, the last too), and ``/`` puts the cursor in the number's input: a number typed
    there and Enter shows it. Escape leaves the input for the board, then the screen."""
    app = BlackBoxApp(explored, A4_B4)
    async with app.run_test(size=(140, 50)) as pilot:
        app.open_molecule(A4_B4, 2)
        await wait_for(
            pilot, lambda: isinstance(app.screen, MoleculeScreen) and app.screen.record is not None
        )
        screen = app.screen
        images = list(screen.enantiomer_numbers)
        assert len(set(images)) == 8  # 8 distinct images: each board names another molecule
        for index in (7, 3):
            start = screen.number
            boards = list(screen.query_one("#enantiomers").children)
            boards[index].focus()
            await pilot.press("o")
            await wait_for(
                pilot, lambda i=index: screen.number == images[i] and screen.record.number == images[i]
            )
            assert screen.number != start or images[index] == start
            assert sorted(screen.enantiomer_numbers) == sorted(images)  # the same enantiomer group
        number_input = screen.query_one("#molecule-number", Input)
        await pilot.press("slash")
        assert screen.focused is number_input
        number_input.value = ""
        await pilot.press(*"123", "enter")
        await wait_for(pilot, lambda: screen.record is not None and screen.record.number == 123)
        await pilot.press("slash", "escape")  # Escape leaves the input for the molecule's board
        assert app.screen is screen and isinstance(screen.focused, Board)
        await pilot.press("escape")  # then the screen
        assert app.screen is not screen
