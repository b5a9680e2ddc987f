"""Paging and stepping at the ends, in every screen that pages or steps.

Groups (pages), Group (n/p along the list), Molecule (n/p by number),
Statistics (n through the distributions) and Strategy (the tree's cursor):
a count that is an exact multiple of the page size, the last page's row
numbers, the first and the last item, one step past either end.  Played on
A4_B4 (the shared explored database): 66 spectral groups, 58 of size 2, 11
families; 1,820 molecules.  The expected rows come from ``bbcore.queries``,
whose order ``test_queries_expect.py`` checks against a plain grouping.
"""

from __future__ import annotations

from pathlib import Path

from pilot import open_screen, text_of, wait_for
from textual.pilot import Pilot
from textual.widgets import DataTable, Select

from bbcore.config import parse_config
from bbcore.queries import group_at
from bbtui.app import BlackBoxApp
from bbtui.screens.group import GroupScreen
from bbtui.screens.groups import GroupsScreen
from bbtui.screens.molecule import MoleculeScreen
from bbtui.screens.statistics import StatisticsScreen
from bbtui.screens.strategy import StrategyScreen
from bbtui.widgets.plot import BarPlot

A4_B4 = parse_config("A4_B4")
PAGE = 11  # 66 groups = 6 pages exactly; 58 of size 2 = 5 pages and 3 rows


def rows(screen: GroupsScreen) -> list[tuple[str, str, str]]:
    """Each row's number, canonical number and spectrum."""
    table = screen.query_one("#groups", DataTable)
    return [(str(r[0]), str(r[2]), str(r[5])) for r in (table.get_row_at(i) for i in range(table.row_count))]


def expected_rows(first: int, last: int, **options) -> list[tuple[str, str, str]]:
    """Rows ``first``..``last`` (1-based) of the list, from ``bbcore.queries``."""
    groups = [group_at(A4_B4, i - 1, **options) for i in range(first, last + 1)]
    return [(str(i), f"{g.canonical_number:,}", g.spectrum) for i, g in zip(range(first, last + 1), groups)]


async def groups_of_page(pilot: Pilot, page_size: int) -> GroupsScreen:
    """The Groups screen of A4_B4 in a terminal whose table holds ``page_size`` rows (140
    columns wide: every summary of A4_B4 takes one line, and the page's size stays)."""
    app = pilot.app
    await pilot.press("g")
    await wait_for(pilot, lambda: isinstance(app.screen, GroupsScreen) and app.screen.page_read)
    screen = app.screen
    assert isinstance(screen, GroupsScreen)
    # The first page read: its size is the table's (``count`` is known before, and the page
    # size is 10 until then: a spare taken then was off, and the wait below timed out under load).
    await wait_for(pilot, lambda: screen.table.size.height and screen.page_read)
    spare = app.size.height - screen.page_size  # the lines that are not rows
    await pilot.resize_terminal(app.size.width, page_size + spare)
    await wait_for(pilot, lambda: screen.page_size == page_size)
    return screen


def summary_rows(app) -> str:
    """The summary's rows and page, ``rows 56-66 · page 6/6``."""
    return text_of(app, "#groups-summary").split(" · ", 1)[1]


async def test_groups_pages_at_both_ends_of_an_exact_multiple(explored: Path) -> None:
    app = BlackBoxApp(explored, A4_B4)
    async with app.run_test(size=(140, 24)) as pilot:
        screen = await groups_of_page(pilot, PAGE)
        await pilot.press("a")  # every group: 66 = 6 x 11
        assert text_of(app, "#groups-summary").startswith("66 groups: every spectral group")
        assert summary_rows(app) == "rows 1-11 · page 1/6"
        assert rows(screen) == expected_rows(1, 11, all_rows=True)

        await pilot.press("p")  # one page before the first: stays
        assert summary_rows(app) == "rows 1-11 · page 1/6"
        await pilot.press("up")  # one row before the first: stays on it
        assert (screen.first, screen.table.cursor_row) == (0, 0)

        await pilot.press("l")  # the last page is whole, its cursor on the last group
        assert summary_rows(app) == "rows 56-66 · page 6/6"
        assert rows(screen) == expected_rows(56, 66, all_rows=True)
        assert screen.table.cursor_row == 10
        await pilot.press("n")  # one page past the last: stays, no empty page 7
        assert summary_rows(app) == "rows 56-66 · page 6/6"
        await pilot.press("down")  # one row past the last: stays on it
        assert (screen.first, screen.table.cursor_row) == (55, 10)
        assert rows(screen) == expected_rows(56, 66, all_rows=True)

        await pilot.press("p")
        assert summary_rows(app) == "rows 45-55 · page 5/6"
        assert screen.table.cursor_row == 0
        await pilot.press("up")  # past the page's first row: the page before, on its last row
        assert summary_rows(app) == "rows 34-44 · page 4/6" and screen.table.cursor_row == 10
        await pilot.press("down")  # past the page's last row: the next page, on its first row
        assert summary_rows(app) == "rows 45-55 · page 5/6" and screen.table.cursor_row == 0
        await pilot.press("f")
        assert summary_rows(app) == "rows 1-11 · page 1/6"


async def test_groups_last_page_of_a_remainder(explored: Path) -> None:
    app = BlackBoxApp(explored, A4_B4)
    async with app.run_test(size=(140, 24)) as pilot:
        screen = await groups_of_page(pilot, PAGE)
        await pilot.press("a", "s")  # every group of size 2: 58 = 5 x 11 + 3
        assert text_of(app, "#groups-summary").startswith("58 groups: every spectral group, size 2")
        assert summary_rows(app) == "rows 1-11 · page 1/6"  # another size starts at its first group
        assert rows(screen) == expected_rows(1, 11, all_rows=True, size=2)
        await pilot.press("l")
        assert summary_rows(app) == "rows 56-58 · page 6/6"
        assert rows(screen) == expected_rows(56, 58, all_rows=True, size=2)
        await pilot.press("n", "down")
        assert summary_rows(app) == "rows 56-58 · page 6/6" and screen.table.cursor_row == 2
        await pilot.press("s", "s", "a")  # size 3, every size; families: 11, one page exactly
        assert summary_rows(app) == "rows 1-11 · page 1/1"
        await pilot.press("n", "l")
        assert summary_rows(app) == "rows 1-11 · page 1/1"
        assert rows(screen) == expected_rows(1, 11)


async def test_groups_last_page_of_one_row_and_the_cursor_one_row_from_each_edge(explored: Path) -> None:
    """66 groups in pages of 13: the last page holds one row (an ``l`` that took the page of
    the group before it showed page 5). ``p`` steps back onto the first page. The cursor turns
    the page only past a page's last or first row, never from the row next to it."""
    app = BlackBoxApp(explored, A4_B4)
    async with app.run_test(size=(140, 24)) as pilot:
        screen = await groups_of_page(pilot, 13)
        await pilot.press("a")
        assert summary_rows(app) == "rows 1-13 · page 1/6"
        await pilot.press("l")
        assert summary_rows(app) == "rows 66-66 · page 6/6"
        assert rows(screen) == expected_rows(66, 66, all_rows=True) and screen.table.cursor_row == 0
        for page in (5, 4, 3, 2, 1):
            await pilot.press("p")
            first = (page - 1) * 13 + 1
            assert summary_rows(app) == f"rows {first}-{first + 12} · page {page}/6"
        assert rows(screen) == expected_rows(1, 13, all_rows=True)
        await pilot.press(*["down"] * 11)  # onto the page's second last row
        assert (screen.first, screen.table.cursor_row) == (0, 11)
        await pilot.press("down")  # onto its last row: no turn yet
        assert (screen.first, screen.table.cursor_row) == (0, 12)
        await pilot.press("down")  # past it: the next page, on its first row
        assert (screen.first, screen.table.cursor_row) == (13, 0)
        await pilot.press("down", "up")  # from the second row up: the first row, no turn
        assert (screen.first, screen.table.cursor_row) == (13, 0)
        await pilot.press("up")  # past it: the page before, on its last row
        assert (screen.first, screen.table.cursor_row) == (0, 12)
        assert summary_rows(app) == "rows 1-13 · page 1/6"


async def test_group_steps_stop_at_the_first_and_last_group(explored: Path) -> None:
    """Each end is reached by a step from its neighbour (an ``n`` that stops one short of the
    last, or a ``p`` one short of the first, fails here); a step past it stays, and says so."""
    app = BlackBoxApp(explored, A4_B4)
    async with app.run_test(size=(140, 30)) as pilot:
        await groups_of_page(pilot, PAGE)

        async def step(group: GroupScreen, key: str, index: int) -> None:
            await pilot.press(key)
            await wait_for(pilot, lambda: group.index == index)
            assert group.spectrum == group_at(A4_B4, index, all_rows=True).spectrum
            assert text_of(app, "#group-summary").startswith(f"Group {index + 1} of 66")

        async def stays(group: GroupScreen, key: str, where: str) -> None:
            index = group.index
            app.clear_notifications()
            await pilot.press(key)  # one past the end: stays
            await wait_for(pilot, lambda: app._notifications)
            note = next(iter(app._notifications))
            assert (note.message, note.title) == (
                f"This is the {where} group of the list (66 groups).",
                "Groups",
            )
            assert (group.index, group.spectrum) == (index, group_at(A4_B4, index, all_rows=True).spectrum)

        await pilot.press("a", "l", "enter")  # the last of 66
        await wait_for(pilot, lambda: isinstance(app.screen, GroupScreen) and app.screen.members)
        group = app.screen
        assert group.spectrum == group_at(A4_B4, 65, all_rows=True).spectrum
        assert text_of(app, "#group-summary").startswith("Group 66 of 66")
        await stays(group, "n", "last")
        await step(group, "p", 64)
        await step(group, "n", 65)  # onto the last from its neighbour
        await stays(group, "n", "last")
        await step(group, "p", 64)
        await pilot.press("escape")  # the list followed: its cursor on row 65
        screen = app.screen
        assert isinstance(screen, GroupsScreen)
        await wait_for(pilot, lambda: screen.first + screen.table.cursor_row == 64)

        await pilot.press("f", "enter")  # the first
        await wait_for(pilot, lambda: isinstance(app.screen, GroupScreen) and app.screen.members)
        group = app.screen
        assert text_of(app, "#group-summary").startswith("Group 1 of 66")
        await stays(group, "p", "first")
        await step(group, "n", 1)
        await step(group, "p", 0)  # onto the first from its neighbour
        await stays(group, "p", "first")


def heading(app) -> str:
    """The first line of the molecule shown, ``A4_B4 molecule #1``."""
    return text_of(app, "#molecule-about").splitlines()[0]


async def test_molecule_steps_stop_at_the_first_and_last_molecule(explored: Path) -> None:
    """Each end is reached by a step from its neighbour (an ``n`` that stops one short of the
    last fails here), then one step past it stays."""
    app = BlackBoxApp(explored, A4_B4)
    async with app.run_test(size=(100, 30)) as pilot:
        for start, key, end in ((2, "p", 1), (A4_B4.nb_mol - 1, "n", A4_B4.nb_mol)):
            app.open_molecule(A4_B4, start)
            await wait_for(
                pilot,
                lambda n=start: (
                    isinstance(app.screen, MoleculeScreen)
                    and app.screen.record is not None
                    and app.screen.record.number == n
                ),
            )
            screen = app.screen
            assert heading(app) == f"A4_B4 molecule #{start:,}"
            await pilot.press(key)  # onto the end
            await wait_for(pilot, lambda s=screen, n=end: s.record.number == n)
            assert screen.number == end and heading(app) == f"A4_B4 molecule #{end:,}"
            await pilot.press(key)  # one step past the end: stays
            await pilot.pause()
            assert screen.number == end and screen.record.number == end
            assert heading(app) == f"A4_B4 molecule #{end:,}"
            await pilot.press("escape")


async def test_statistics_next_plot_goes_round_every_distribution(explored: Path) -> None:
    app = BlackBoxApp(explored, A4_B4)
    async with app.run_test(size=(140, 50)) as pilot:
        await pilot.press("escape", "t")
        await wait_for(pilot, lambda: isinstance(app.screen, StatisticsScreen) and app.screen.report)
        screen = app.screen
        distributions = screen.report.distributions
        assert len(distributions) >= 2
        choice = screen.query_one("#distribution-choice", Select)
        shown = [choice.value]
        for _ in distributions:  # n through the last and one step past it: the first again
            await pilot.press("n")
            await pilot.pause()
            shown.append(choice.value)
        names = [d.name for d in distributions]
        assert shown == [*names, names[0]]
        last = distributions[-1]
        await pilot.press(*["n"] * (len(names) - 1))  # back on the last one: its plots drawn
        await wait_for(
            pilot,
            lambda: (
                choice.value == last.name
                and [p.title for p in screen.query(BarPlot)]
                == [f"{s} by {last.key_label}" for s in last.series]
            ),
        )


async def test_strategy_tree_cursor_stops_at_the_root_and_the_last_node(
    tmp_path: Path, policy_summary
) -> None:
    """And the figures and the plots beside the tree are the book's, played out by brute force."""
    app = BlackBoxApp(tmp_path / "book.sqlite", parse_config("A3_B4"))
    async with app.run_test(size=(140, 50)) as pilot:
        screen = await open_screen(app, pilot, "b", StrategyScreen)
        greedy = screen.branch("greedy")  # then the optimal book's branch, the tree's last line
        await wait_for(pilot, lambda: screen.book is not None and greedy.children)
        await wait_for(pilot, lambda: greedy.children[0].data is not None)
        tree = screen.tree
        tree.focus()
        await pilot.press("home", "up")  # one before the root: stays on it
        assert tree.cursor_line == 0 and tree.cursor_node is tree.root
        children = list(greedy.children)
        await pilot.press(*["down"] * (len(children) + 3))  # one past the last line: stays on it
        assert tree.cursor_node is screen.branch("optimal")
        assert sum(screen.book.node(c.data[1]).count for c in children) == 560
        expected = policy_summary(parse_config("A3_B4"), "remaining")
        assert text_of(app, "#strategy-figures").splitlines()[:3] == [
            f"First shot: position {expected['first_shot']}",
            f"rays    mean {expected['rays']['mean']:.3f}, max {expected['rays']['max']}",
            f"points  mean {expected['points']['mean']:.3f}, max {expected['points']['max']}",
        ]
        for what in ("rays", "points"):
            plot = screen.query_one(f"#strategy-{what}", BarPlot)
            histogram = {int(k): n for k, n in expected[what]["histogram"].items()}
            keys = range(min(histogram), max(histogram) + 1)
            assert plot.title == f"molecules by {what}"
            assert [int(k) for k in plot.labels] == list(keys)
            assert list(plot.values) == [histogram.get(k, 0) for k in keys]
