"""Regenerate every screenshot of the documentation site: ``docs/images/*.svg``.

    python docs/screenshots.py [--out DIR]

Each picture is Textual's own SVG export (``App.save_screenshot``) of the real
app driven by its pilot (``App.run_test()``), as the TUI tests drive it, on a
temporary database where A4_B6 (58,905 molecules) is explored with bbcore's
library first, beside A3_B4 explored and A4_B7 paused part way. Nothing is
drawn by hand, so a screen that changes is shown as it is by running this
again (about a minute) and committing the SVGs. ``tests/test_docs.py``
checks that every picture the pages show is one this script writes.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path

from textual.pilot import Pilot

from bbcore.config import Config, parse_config
from bbcore.decode import candidates
from bbcore.explore import explore
from bbcore.game import parse_game
from bbcore.progress import Progress
from bbcore.queries import group_page
from bbcore.store import close_database, open_database
from bbtui.app import BlackBoxApp
from bbtui.screens.decode import DecodeScreen
from bbtui.screens.group import GroupScreen
from bbtui.screens.groups import GroupsScreen
from bbtui.screens.molecule import MoleculeScreen
from bbtui.screens.play import PlayScreen
from bbtui.screens.statistics import StatisticsScreen
from bbtui.screens.strategy import StrategyScreen

# The pilot's helpers have one home, the tests' (waiting for a condition, never a fixed pause).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from pilot import wait_for  # noqa: E402

CONFIG = parse_config("A4_B6")
SIZE = (120, 36)
"""Columns and rows of every screenshot: wide enough for the side-by-side panels."""
IMAGES = Path(__file__).resolve().parent / "images"

Scene = Callable[[BlackBoxApp, Pilot], Awaitable[None]]


def prepare(db_path: Path) -> None:
    """Explore A3_B4 and A4_B6 completely, and A4_B7 up to about a third, then pause it."""
    explore(parse_config("A3_B4"), db_path)
    explore(CONFIG, db_path)
    a4_b7 = parse_config("A4_B7")
    stop = threading.Event()

    def pause_at_a_third(progress: Progress) -> None:
        if progress.fraction >= 1 / 3:
            stop.set()

    explore(a4_b7, db_path, workers=1, progress=pause_at_a_third, stop=stop)
    close_database()


def partial_game(config: Config) -> str:
    """A game of 6 rays from an ambiguous molecule's spectrum, with a few candidates left.

    The rays kept are the first ones round the box; a ray that came out is kept
    with both ends. Among the first spectral groups, the first game leaving 3 to
    12 candidates is taken, so that the Decode screen has a page to show.
    """
    for group in group_page(config, 0, 40):
        spectrum = group.spectrum
        shown: set[int] = set()
        for index, mark in enumerate(spectrum):
            if len(shown) >= 8:
                break
            shown.add(index)
            if mark not in "@&":
                shown.add(spectrum.index(mark, index + 1) if spectrum.index(mark) == index else index)
        game = "".join(mark if index in shown else "." for index, mark in enumerate(spectrum))
        if 3 <= candidates(config, parse_game(game, config)).count <= 12:
            return game
    raise SystemExit(f"screenshots: no partial game of {config} with 3 to 12 candidates")


async def explore_screen(app: BlackBoxApp, pilot: Pilot) -> None:
    """The first screen: the configurations and their state, A4_B6 selected."""
    await pilot.press("escape")  # from the input to the table, so that the footer shows its keys
    await pilot.pause(0.5)


async def groups_screen(app: BlackBoxApp, pilot: Pilot) -> None:
    await pilot.press("escape", "g")
    await wait_for(pilot, lambda: isinstance(app.screen, GroupsScreen) and app.screen.count)


async def group_screen(app: BlackBoxApp, pilot: Pilot) -> None:
    await groups_screen(app, pilot)
    await pilot.press("o", "enter")  # the largest groups first, then the first one opened
    await wait_for(pilot, lambda: isinstance(app.screen, GroupScreen))
    await pilot.press("down", "down", "down")  # the ray from position 3 drawn in every molecule
    await pilot.pause(0.5)


async def molecule_screen(app: BlackBoxApp, pilot: Pilot) -> None:
    number = group_page(CONFIG, 0, 1, order="size")[0].canonical_number
    await pilot.press("escape", "m")
    await wait_for(pilot, lambda: isinstance(app.screen, MoleculeScreen))
    await pilot.press(*str(number), "enter")
    await wait_for(pilot, lambda: str(number) in str(app.screen.query_one("#molecule-about").render()))
    await pilot.pause(0.5)


async def decode_screen(app: BlackBoxApp, pilot: Pilot) -> None:
    game = partial_game(CONFIG)
    await pilot.press("escape", "d")
    screen = app.screen
    assert isinstance(screen, DecodeScreen)
    await wait_for(pilot, lambda: screen.answer is not None)
    await pilot.press(*game, "enter")
    await wait_for(pilot, lambda: "agree" in str(screen.query_one("#decode-result").render()))
    await app.workers.wait_for_complete()
    await pilot.pause(0.5)


async def play_screen(app: BlackBoxApp, pilot: Pilot) -> None:
    """A game on molecule 20,000: rays from positions 1 and 4 shot, the coach on."""
    await pilot.press("escape", "P")
    screen = app.screen
    assert isinstance(screen, PlayScreen)
    await wait_for(pilot, lambda: screen.match is not None)
    await pilot.press("slash", *"20000", "enter")
    await wait_for(pilot, lambda: screen.match is not None and screen.match.number == 20000)
    # The cursor starts off the box: down puts it on position 1, then down follows the left side.
    await pilot.press("down", "enter", *["down"] * 3, "enter", "c")
    await app.workers.wait_for_complete()
    await pilot.pause(0.5)


async def statistics_screen(app: BlackBoxApp, pilot: Pilot) -> None:
    await pilot.press("escape", "t")
    await wait_for(pilot, lambda: isinstance(app.screen, StatisticsScreen))
    await app.workers.wait_for_complete()
    await pilot.pause(0.5)


async def strategy_screen(app: BlackBoxApp, pilot: Pilot) -> None:
    await pilot.press("escape", "b")
    screen = app.screen
    assert isinstance(screen, StrategyScreen)
    await wait_for(pilot, lambda: screen.book is not None, timeout=300)
    root = screen.tree.root  # opened in a thread, as every node
    await wait_for(pilot, lambda: root.children and root.children[0].data is not None, timeout=300)
    await pilot.press("down", "enter")  # the first outcome of the first shot, opened
    first = root.children[0]
    await wait_for(pilot, lambda: first.children and first.children[0].data is not None, timeout=300)
    await app.workers.wait_for_complete()
    await pilot.pause(0.5)


SCENES: dict[str, Scene] = {
    "explore": explore_screen,
    "groups": groups_screen,
    "group": group_screen,
    "molecule": molecule_screen,
    "decode": decode_screen,
    "play": play_screen,
    "statistics": statistics_screen,
    "strategy": strategy_screen,
}
"""Every screenshot, by the name of its file in ``docs/images`` (``NAME.svg``)."""


async def shoot(db_path: Path, name: str, scene: Scene, out: Path) -> Path:
    """Start the app on ``db_path`` with A4_B6 selected, play ``scene``, save ``out/NAME.svg``."""
    app = BlackBoxApp(db_path, CONFIG, workers=1)
    async with app.run_test(size=SIZE) as pilot:
        await scene(app, pilot)
        return Path(app.save_screenshot(f"{name}.svg", str(out)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=IMAGES, help=f"folder of the SVGs (default {IMAGES})")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    # The header shows the database's path: a folder of a fixed name keeps it the same from
    # one run to the next (a random temporary name would change every SVG), made afresh.
    folder = Path(tempfile.gettempdir()) / "bbtui-docs"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    # bbtui keeps its settings (the theme, a run to resume) there too, not in the user's own.
    os.environ["XDG_CONFIG_HOME"] = str(folder)
    try:
        db_path = folder / "blackbox.sqlite"
        prepare(db_path)
        for name, scene in SCENES.items():
            print(asyncio.run(shoot(db_path, name, scene, args.out)))
            open_database(db_path)  # the app closes its connection when it ends
        close_database()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
