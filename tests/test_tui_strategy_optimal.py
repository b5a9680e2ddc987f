"""The Strategy screen's optimal book beside the greedy one (``bbcore.optimal``).

- With an optimum stored (computed in the test, A2_B4 and A3_B4), the tree's
  second branch is the optimal book: its nodes are the stored book's, each
  outcome's molecules those the shot gives; the rays plot shows both books'
  molecules by rays over one range; the table lists the molecules on which
  the books differ most, each count being the length of that molecule's line
  in its book.
- ``ctrl+o`` goes to the next objective; with none stored, the branch, the
  figures and the plot say so and give the exact command, and that command
  (run here, the real CLI) makes the screen show the book.
- Reading the optimal book runs in a worker: keys move the cursor while it is
  held.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
from collections import Counter
from contextlib import asynccontextmanager

from pilot import open_screen, text_of, tree_cursor_to, wait_for

from bbcore import store
from bbcore.config import Config
from bbcore.numbering import atoms_of
from bbcore.optimal import optimal
from bbcore.rays import spectrum
from bbcore.strategy import compute_book
from bbtui.app import BlackBoxApp
from bbtui.screens import strategy as screen_module
from bbtui.screens.strategy import StrategyScreen, node_label
from bbtui.widgets.plot import BarPlot
from tests.expect import BBCORE, ROOT

A2_B4 = Config(2, 4)


def store_optimum(path, config: Config, objective: str) -> dict:
    """Search and store an optimum, as ``bbcore strategy CONFIG --optimal OBJECTIVE`` does."""
    store.open_database(path)
    try:
        return optimal(config, objective)[0]
    finally:
        store.close_database()


def rays_plot(app) -> BarPlot:
    return app.screen.query_one("#strategy-rays", BarPlot)


async def test_the_optimal_book_beside_the_greedy_one(tmp_path):
    path = tmp_path / "db.sqlite"
    config = Config(3, 4)
    result = store_optimum(path, config, "rays")
    greedy = compute_book(config, source="compute")
    app = BlackBoxApp(path, config)
    async with app.run_test(size=(140, 60)) as pilot:
        screen = await open_screen(app, pilot, "b", StrategyScreen)
        await wait_for(pilot, lambda: screen.optimal is not None and screen.book is not None)
        await wait_for(pilot, lambda: rays_plot(app).series)
        book = screen.optimal
        # The tree: the greedy branch, then the optimal one, opened at its first shot.
        greedy_branch, optimal_branch = screen.tree.root.children
        assert greedy_branch.data == ("greedy", 0) and optimal_branch.data == ("optimal", 0)
        await wait_for(pilot, lambda: optimal_branch.children and optimal_branch.children[0].data)
        shot = node_label(book, 0).removeprefix("560 molecules")  # the root's: "560 molecules"
        assert str(optimal_branch.label) == f"optimal for rays{shot}"
        assert f"→ {result['optimum']['first_shot']} ·" in str(optimal_branch.label)
        children = book.children(0)
        assert [c.data for c in optimal_branch.children] == [("optimal", c) for c in children]
        assert [str(c.label) for c in optimal_branch.children] == [node_label(book, c) for c in children]
        assert sum(book.node(c).count for c in children) == config.nb_mol
        # Its value is the optimum proved: 193/40 rays a molecule.
        assert result["optimum"]["value"] == "193/40" and int(book.rays.sum()) == 193 * 14
        # The plot: both books' molecules by rays, over one range.
        plot = rays_plot(app)
        mine, other = Counter(greedy.rays.tolist()), Counter(book.rays.tolist())
        keys = list(range(min(*mine, *other), max(*mine, *other) + 1))
        assert [int(k) for k in plot.labels] == keys
        assert plot.series == [
            ("remaining", [mine.get(k, 0) for k in keys]),
            ("optimal rays", [other.get(k, 0) for k in keys]),
        ]
        drawn = str(plot.render())
        assert "remaining" in drawn and "optimal rays" in drawn and "▒" in drawn and "█" in drawn
        # The molecules where the books differ most: the largest gaps, each count the length
        # of the molecule's line in its book.
        table = text_of(app, "#strategy-differences").splitlines()
        assert table[:2] == ["Where the books differ most (rays):", " molecule  remaining  optimal"]
        rows = [[int(word.replace(",", "")) for word in line.split()] for line in table[2:]]
        gaps = sorted((abs(int(a) - int(b)) for a, b in zip(greedy.rays, book.rays)), reverse=True)
        assert [abs(g - o) for _, g, o in rows] == gaps[: len(rows)] and len(rows) == 10
        for number, in_greedy, in_optimal in rows:
            assert len(greedy.line(number)) == in_greedy and len(book.line(number)) == in_optimal
        figures = text_of(app, "#strategy-optimal-figures")
        assert figures.startswith(f"optimal for rays: first shot {result['optimum']['first_shot']}")
        assert f"mean {193 / 40:.3f} (remaining: {greedy.mean('rays'):.3f})" in figures


async def test_with_no_optimum_stored_the_screen_gives_the_command_that_makes_it(tmp_path):
    path = tmp_path / "db.sqlite"
    store_optimum(path, A2_B4, "rays")
    app = BlackBoxApp(path, A2_B4)
    async with app.run_test(size=(140, 60)) as pilot:
        screen = await open_screen(app, pilot, "b", StrategyScreen)
        await wait_for(pilot, lambda: screen.optimal is not None and rays_plot(app).series)
        await pilot.press("ctrl+o")  # worst: none stored
        branch = screen.branch("optimal")
        await wait_for(pilot, lambda: "none stored" in str(branch.label))
        command = f"bbcore strategy A2_B4 --optimal worst --db {path}"
        assert str(branch.label) == "optimal for worst: none stored (the command beside computes it)"
        assert not branch.allow_expand and screen.optimal is None
        said = "".join(text_of(app, "#strategy-optimal-figures").splitlines())  # wrapped
        assert said == f"No optimal book for worst is stored: `{command}` computes it."
        await wait_for(pilot, lambda: not rays_plot(app).series)  # the greedy book's alone
        assert rays_plot(app).title == "molecules by rays"
        # The command given, run as it is: the screen then shows the book.
        made = subprocess.run(
            [*BBCORE, *command.split()[1:], "--json"],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            cwd=ROOT,
            timeout=300,
        )
        assert made.returncode == 0, made.stderr
        assert json.loads(made.stdout)["optimum"]["value"] == "4"
        await pilot.press("ctrl+o")  # points (none), rays, then worst again
        await wait_for(pilot, lambda: screen.objective == "points" and "none stored" in str(branch.label))
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: screen.objective == "rays" and screen.optimal is not None)
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: screen.objective == "worst" and screen.optimal is not None)
        assert screen.optimal.by == "optimal worst" and int(screen.optimal.rays.max()) == 4
        await wait_for(pilot, lambda: str(branch.label).startswith("optimal for worst → "))


async def test_a_points_book_stops_to_guess_and_says_so(tmp_path):
    """A2_B3's optimal book for points stops once over 3 molecules of 2 spectra (it
    guesses): the leaf says so, and Enter on it opens the first of them."""
    path = tmp_path / "db.sqlite"
    config = Config(2, 3)
    store_optimum(path, config, "points")
    app = BlackBoxApp(path, config)
    async with app.run_test(size=(140, 60)) as pilot:
        screen = await open_screen(app, pilot, "b", StrategyScreen)
        await pilot.press("ctrl+o", "ctrl+o")
        await wait_for(pilot, lambda: screen.objective == "points" and screen.optimal is not None)
        book = screen.optimal
        spectra = {
            i: {spectrum(config, atoms_of(config, int(n))) for n in book.numbers(i)}
            for i in range(len(book.nodes))
        }
        guesses = [i for i in range(len(book.nodes)) if book.node(i).leaf and len(spectra[i]) > 1]
        assert len(guesses) == 1 and book.node(guesses[0]).count == 3
        for i in range(len(book.nodes)):
            if book.node(i).leaf and book.node(i).count > 1:
                said = f"stop and guess ({len(spectra[i])} spectra)" if i in guesses else "one spectrum"
                assert f": {said}, #" in node_label(book, i)
        node = screen.branch("optimal")
        for index in book.path(guesses[0])[1:]:
            await wait_for(pilot, lambda node=node: node.children and node.children[0].data is not None)
            node = next(c for c in node.children if c.data == ("optimal", index))
            node.expand()
        assert "stop and guess" in str(node.label)
        screen.tree.focus()
        await tree_cursor_to(pilot, screen.tree, node)
        await pilot.press("o")
        await wait_for(pilot, lambda: app.screen is not screen)
        assert app.screen.number == int(book.numbers(guesses[0])[0])
        listed = ", ".join(str(int(n)) for n in book.numbers(guesses[0]))
        said = [n.message for n in app._notifications]
        assert f"The seeker guesses among 3 molecules here: {listed}." in said


@asynccontextmanager
async def held_at(tmp_path, monkeypatch, name: str):
    """The Strategy screen of A2_B4, its optimal book stored, once a worker has called the screen
    module's ``name``, which it holds until the block sets the gate given (or ends; 60 s at
    most): yields ``(app, pilot, screen, gate)``."""
    gate, called = threading.Event(), threading.Event()
    real = getattr(screen_module, name)

    def hold(*args):
        called.set()
        gate.wait(timeout=60)
        return real(*args)

    monkeypatch.setattr(screen_module, name, hold)
    path = tmp_path / "db.sqlite"
    store_optimum(path, A2_B4, "rays")
    app = BlackBoxApp(path, A2_B4)
    async with app.run_test(size=(140, 60)) as pilot:
        screen = await open_screen(app, pilot, "b", StrategyScreen)
        try:
            await wait_for(pilot, called.is_set)
            yield app, pilot, screen, gate
        finally:
            gate.set()


async def keys_move_the_cursor(pilot, screen: StrategyScreen, waited_for: str) -> None:
    """Down, down, up each move the tree's cursor at once (no key waits for a worker)."""
    tree = screen.tree
    tree.focus()
    line = tree.cursor_line
    for key in ("down", "down", "up"):
        await pilot.press(key)
        assert tree.cursor_line != line, f"the key waited for {waited_for}"
        line = tree.cursor_line


async def test_keys_are_handled_while_the_optimal_book_is_read(tmp_path, monkeypatch):
    async with held_at(tmp_path, monkeypatch, "stored_optimal_book") as (app, pilot, screen, gate):
        await wait_for(pilot, lambda: screen.book is not None and screen.branch("greedy").children)
        assert str(screen.branch("optimal").label) == "optimal for rays: reading..."
        await keys_move_the_cursor(pilot, screen, "the optimal book")
        assert any(w.group == "strategy-optimal" and w.is_running for w in app.workers)
        assert screen.optimal is None
        gate.set()
        await wait_for(pilot, lambda: screen.optimal is not None)


async def test_keys_are_handled_while_the_books_are_compared(tmp_path, monkeypatch):
    """Comparing the optimal book with the greedy one (rays per molecule, where they differ)
    runs in its own worker: keys move the cursor while it is held, and the figures come once
    it is let go."""
    async with held_at(tmp_path, monkeypatch, "differences") as (app, pilot, screen, gate):
        assert text_of(app, "#strategy-differences") == "Comparing the books..."
        await keys_move_the_cursor(pilot, screen, "the comparison")
        assert any(w.group == "strategy-compare" and w.is_running for w in app.workers)
        gate.set()
        await wait_for(pilot, lambda: text_of(app, "#strategy-differences") != "Comparing the books...")
        assert "optimal" in text_of(app, "#strategy-optimal-figures")
