"""The Play and Strategy screens through the pilot: whole games from the keyboard, the
coach, and the book as a tree.

The games are on A3_B4 (560 molecules) in an empty temporary database, so the
book and the coach's candidates are computed; every figure on screen is
compared with ``bbcore``'s own answer.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from games import spectral_pair
from pilot import cursor_to, open_screen, text_of, tree_cursor_to, wait_for
from textual.pilot import Pilot

from bbcore import rays
from bbcore.config import parse_config
from bbcore.decode import candidates
from bbcore.numbering import atoms_of
from bbcore.shots import atom_counts, next_shots
from bbcore.strategy import compute_book, line_text
from bbtui.app import BlackBoxApp
from bbtui.screens.molecule import MoleculeScreen
from bbtui.screens.play import PlayScreen
from bbtui.screens.strategy import StrategyScreen
from bbtui.widgets.game_board import GameBoard
from bbtui.widgets.play_board import PlayBoard

A3_B4 = parse_config("A3_B4")


@pytest.fixture(scope="module")
def book():
    """The A3_B4 book, by remaining, computed directly."""
    return compute_book(A3_B4, source="compute")


def opened(node) -> bool:
    """A node of the Strategy tree opened: its children are there, not "opening..."."""
    return bool(node.children) and node.children[0].data is not None


async def open_play(app: BlackBoxApp, pilot: Pilot, number: int | None = None) -> PlayScreen:
    """The Play screen (shift+p), on molecule ``number`` when given (typed in its input)."""
    screen = await open_screen(app, pilot, "P", PlayScreen)  # escape leaves the Explore screen's input
    await wait_for(pilot, lambda: screen.match is not None)
    if number is not None:
        await pilot.press("slash", *str(number), "enter")
        await wait_for(pilot, lambda: screen.match is not None and screen.match.number == number)
    return screen


def play_board(screen: PlayScreen) -> PlayBoard:
    board = screen.board
    assert board is not None
    return board


async def shoot(pilot: Pilot, screen: PlayScreen, position: int) -> None:
    """Move the perimeter cursor to ``position`` with the arrows (shortest way), then Enter."""
    board = play_board(screen)
    await cursor_to(pilot, board, position)
    await pilot.press("enter")
    assert board.position == position


async def place(pilot: Pilot, screen: PlayScreen, cells: list[int]) -> None:
    """Switch to placing atoms, and put one on each of ``cells`` (arrows, then Enter)."""
    board = play_board(screen)
    if not board.placing:
        await pilot.press("a")
    w = board.box_width
    for cell in cells:
        line, column = divmod(board.cell, w)
        target_line, target_column = divmod(cell, w)
        keys = ["down" if target_line > line else "up"] * abs(target_line - line)
        keys += ["right" if target_column > column else "left"] * abs(target_column - column)
        await pilot.press(*keys, "enter")
        assert board.cell == cell


def ray_points(screen: PlayScreen) -> int:
    match = screen.match
    assert match is not None
    return sum(2 if isinstance(match.game.result(p), int) else 1 for p in match.shots)


async def test_a_win_scores_the_rays_and_compares_with_the_book(tmp_path: Path, book) -> None:
    app = BlackBoxApp(tmp_path / "play.sqlite", A3_B4)
    async with app.run_test(size=(120, 50)) as pilot:
        number = 77
        screen = await open_play(app, pilot, number)
        assert "molecule number 77" in text_of(app, "#play-message")
        for position, _ in book.line(number):
            await shoot(pilot, screen, position)
        match = screen.match
        assert match is not None and match.shots == [p for p, _ in book.line(number)]
        # The results are marked round the box as in the game.
        marks = play_board(screen).labels
        for position, result in book.line(number):
            expected = {"@": "H", "&": "R"}.get(str(result))
            assert (
                marks[position - 1] == expected
                if expected
                else marks[position - 1] == marks[result - 1] != ""
            )
        assert f"rays {len(match.shots)}, points {ray_points(screen)}" in text_of(app, "#play-status")
        await place(pilot, screen, list(match.atoms))
        await pilot.press("s")
        assert match.judgement is not None and match.judgement.right and match.points == ray_points(screen)
        assert text_of(app, "#play-message").startswith("Right: that is the hidden molecule.")
        await wait_for(pilot, lambda: "The book needed" in text_of(app, "#play-verdict"))
        verdict = text_of(app, "#play-verdict")
        rays_used, points_used = int(book.rays[number - 1]), int(book.points[number - 1])
        assert (
            f"The book needed {rays_used} rays and {points_used} points for this molecule; "
            f"you used {rays_used} and {points_used}." in verdict
        )
        assert f"The book's shots: {line_text(book.line(number))}" in verdict
        hidden = screen.query("#play-reveal Board").first()
        assert hidden.molecule == match.molecule and [r.position for r in hidden.drawn_rays] == match.shots
        # The game is over: no more shots.
        await pilot.press("a", "enter")
        assert "over" in text_of(app, "#play-message")


async def test_a_wrong_guess_costs_five_points_an_atom(tmp_path: Path) -> None:
    app = BlackBoxApp(tmp_path / "play.sqlite", A3_B4)
    async with app.run_test(size=(120, 50)) as pilot:
        screen = await open_play(app, pilot, 300)
        match = screen.match
        assert match is not None
        await shoot(pilot, screen, 1)
        await shoot(pilot, screen, 5)
        spent = ray_points(screen)
        hidden = set(match.atoms)
        wrong = [c for c in range(16) if c not in hidden][:2]
        guess = sorted(wrong + list(match.atoms)[:1])
        assert rays.spectrum(A3_B4, guess) != rays.spectrum(A3_B4, match.atoms)
        await place(pilot, screen, guess[:2])
        await pilot.press("s")  # two atoms only: refused, nothing judged
        assert match.judgement is None
        assert text_of(app, "#play-message") == "Place 3 atoms to guess (2 placed): A3_B4 hides 3."
        await place(pilot, screen, guess[2:])
        await pilot.press("s")
        assert match.judgement is not None and not match.judgement.right
        assert match.points == spent + 10
        assert "Wrong: 2 atoms misplaced, 5 points each." in text_of(app, "#play-message")
        assert f"rays 2, points {spent + 10}" in text_of(app, "#play-status")
        guessed = screen.query("#play-reveal Board").last()
        assert guessed.marked == frozenset(wrong)


async def test_a_guess_of_the_same_spectral_group_counts_as_right(tmp_path: Path) -> None:
    hidden, other = spectral_pair(A3_B4)
    app = BlackBoxApp(tmp_path / "play.sqlite", A3_B4)
    async with app.run_test(size=(120, 50)) as pilot:
        screen = await open_play(app, pilot, hidden)
        match = screen.match
        assert match is not None
        await shoot(pilot, screen, 3)
        await place(pilot, screen, list(atoms_of(A3_B4, other)))
        await pilot.press("s")
        assert match.judgement is not None and match.judgement.right and match.judgement.same_spectrum
        assert match.points == ray_points(screen)
        message = text_of(app, "#play-message")
        assert f"your molecule (number {other}) is not the hidden one, but gives the same spectrum" in message
        assert "the 2 molecules of that spectral group count as right" in message


async def test_the_coach_shows_the_heat_map_and_the_best_next_shots(tmp_path: Path) -> None:
    app = BlackBoxApp(tmp_path / "play.sqlite", A3_B4)
    async with app.run_test(size=(140, 50)) as pilot:
        screen = await open_play(app, pilot, 123)
        coach = screen.query_one(GameBoard)
        assert not screen.query_one("#play-coach").display and not screen.coaching
        await pilot.press("c")
        await wait_for(pilot, lambda: coach.counts is not None)
        assert screen.query_one("#play-coach").display
        assert coach.total == 560
        await shoot(pilot, screen, 2)
        match = screen.match
        assert match is not None
        found = candidates(A3_B4, match.game)
        await wait_for(pilot, lambda: coach.total == found.count)
        assert (coach.counts == atom_counts(found).ravel()).all()
        best = next_shots(A3_B4, match.game, found)
        assert coach.best == best[0].position
        text = text_of(app, "#play-coach-text")
        assert f"{found.count:,} molecules agree with these rays." in text
        assert text.splitlines()[3].split()[0] == str(best[0].position)
        await pilot.press("c")
        assert not screen.query_one("#play-coach").display and text_of(app, "#play-coach-text") == ""


async def test_a_random_game_shows_its_seed_and_the_seed_replays_it(tmp_path: Path, book) -> None:
    app = BlackBoxApp(tmp_path / "play.sqlite", A3_B4)
    async with app.run_test(size=(120, 50)) as pilot:
        screen = await open_play(app, pilot)
        await pilot.press("n")
        match = screen.match
        assert match is not None and match.draw == "random" and match.seed is not None
        assert f"seed {match.seed}" in text_of(app, "#play-message")
        await pilot.press("slash", *f"seed {match.seed}", "enter")
        assert screen.match is not match and screen.match.number == match.number
        await pilot.press("h")
        await wait_for(pilot, lambda: screen.match.draw == "hard")
        assert screen.match.number in book.hardest()


async def test_the_strategy_tree_opens_lazily_down_to_a_molecule(tmp_path: Path, book) -> None:
    app = BlackBoxApp(tmp_path / "strategy.sqlite", A3_B4)
    async with app.run_test(size=(140, 50)) as pilot:
        screen = await open_screen(app, pilot, "b", StrategyScreen)
        await wait_for(pilot, lambda: screen.book is not None)
        tree = screen.tree
        first = book.first_shot
        greedy = screen.branch("greedy")  # the tree's first branch; the optimal book's is the second
        await wait_for(pilot, lambda: opened(greedy))
        assert str(greedy.label).startswith(f"greedy by remaining → {first.position} · ")
        assert [str(c.label).split(" →")[0].split(":")[0] for c in greedy.children][0] == (
            f"H {dict(first.outcomes)['@']}"
        )
        # Follow molecule 94 (8 rays, deeper than the stored levels) down to its leaf.
        number = book.hardest()[0]
        node = greedy
        for _, result in book.line(number):
            node.expand()
            await wait_for(pilot, lambda node=node: opened(node))
            node = next(c for c in node.children if screen.book.node(c.data[1]).outcome == result)
        assert screen.book.node(node.data[1]).leaf and str(node.label).endswith(f"molecule #{number}")
        await tree_cursor_to(pilot, tree, node)
        await pilot.press("o")
        await wait_for(pilot, lambda: isinstance(app.screen, MoleculeScreen))
        assert app.screen.number == number
        await pilot.press("escape")
        # The other policy.
        await pilot.press("ctrl+r")
        other = compute_book(A3_B4, "information", source="compute")
        await wait_for(pilot, lambda: screen.book is not None and screen.book.by == "information")
        greedy = screen.branch("greedy")
        await wait_for(pilot, lambda: opened(greedy) and "→" in str(greedy.label))
        assert str(greedy.label).startswith(f"greedy by information → {other.first_shot.position} · ")
        rays_plot = screen.query_one("#strategy-rays")
        assert dict(zip(map(int, rays_plot.labels), rays_plot.values)) == {
            k: other.histogram("rays").get(k, 0) for k in range(min(other.histogram("rays")), 9)
        }
        assert f"#{other.hardest()[0]}" in text_of(app, "#strategy-hardest")


async def test_a_stored_book_is_read_and_a_group_leaf_opens_the_group(
    explored: Path, tmp_path, monkeypatch
) -> None:
    """The Strategy screen reads the stored book (never playing it again), and a leaf of
    two molecules of an explored configuration opens their spectral group."""
    import shutil

    from bbcore.store import db, open_database
    from bbcore.strategy import book as stored_or_computed
    from bbtui.screens.group import GroupScreen

    path = tmp_path / "explored.sqlite"
    shutil.copy(explored, path)
    open_database(path)
    made, computed = stored_or_computed(A3_B4)
    assert computed
    db.close()

    def refused(*args, **kwargs):
        raise AssertionError("the book was played again")

    monkeypatch.setattr("bbcore.strategy.compute_book", refused)
    app = BlackBoxApp(path, A3_B4)
    async with app.run_test(size=(140, 50)) as pilot:
        screen = await open_screen(app, pilot, "b", StrategyScreen)
        await wait_for(pilot, lambda: screen.book is not None)
        assert "stored spectra" in text_of(app, "#strategy-message")
        hidden, other = spectral_pair(A3_B4)
        node = screen.branch("greedy")
        for _, result in made.line(hidden):
            node.expand()
            await wait_for(pilot, lambda node=node: opened(node))
            node = next(c for c in node.children if screen.book.node(c.data[1]).outcome == result)
        assert str(node.label).endswith(f"one spectrum, #{hidden}, #{other}")
        await tree_cursor_to(pilot, screen.tree, node)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, GroupScreen))
        assert app.screen.spectrum == rays.spectrum(A3_B4, atoms_of(A3_B4, hidden))
