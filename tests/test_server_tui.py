"""The TUI on a server: each main screen shows on a server copy what it shows on its file.

Store parity through Textual's pilot, against a real server
(tests/postgres.py): A4_B6 in each store kind is copied from its file into a
server database (``bbcore copy``), then the same keys are pressed in two
apps, one on the file and one on the server, and every screen on the way
must show the same text: the groups listing (first page, next page, the
last page, by size, every spectral group), a group opened with its boards,
a molecule of it, its spectral group again, and the statistics screen's
three tabs.  Only the header differs (it names the database), so it is
left out.  A server whose readers returned rows in another order, missed a
family or read a profile wrongly shows a different screen here.

An exploration started from the Explore screen on a server (full store and
compact store) shows its progress, pauses with p, resumes with s, completes,
and leaves what the same exploration leaves in a file: the readers print the
same, the table lists it complete.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest
from pilot import tables_pending, wait_for
from stores import cli, explore_sources, same
from textual.app import App
from textual.geometry import Region
from textual.message import Message
from textual.widgets import DataTable, Header, Label

from bbcore.config import Config
from bbcore.explore import explore
from bbcore.store import COMPACT, FULL, STORES, close_database
from bbtui.app import BlackBoxApp
from bbtui.messages import ExplorationProgress
from bbtui.screens.group import GroupScreen
from bbtui.screens.groups import GroupsScreen
from bbtui.screens.molecule import MoleculeScreen
from bbtui.screens.statistics import StatisticsScreen

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the test server runs on Linux")

A4_B6 = Config(4, 6)
SIZE = (120, 35)


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A file per store kind holding A3_B5 and A4_B6 complete (``stores.explore_sources``)."""
    return explore_sources(tmp_path_factory.mktemp("sources"))


def screen_text(app: App) -> list[str]:
    """What the current screen shows, widget by widget, as the terminal draws it; not the header."""
    shown = []
    for widget in app.screen.query("*"):
        if widget.children or not widget.display or not widget.size.area:
            continue
        if any(isinstance(node, Header) for node in widget.ancestors_with_self):
            continue
        lines = widget.render_lines(Region(0, 0, *widget.size))
        shown.append(f"{type(widget).__name__}#{widget.id}:\n" + "\n".join(line.text for line in lines))
    return shown


async def tour(db: Path | str) -> list[list[str]]:
    """The screens a user walks through on A4_B6, each one's text."""
    seen: list[list[str]] = []
    app = BlackBoxApp(db, A4_B6)
    async with app.run_test(size=SIZE) as pilot:

        async def settle(kind: type, pressed: str) -> None:
            await pilot.press(*pressed.split())
            await wait_for(pilot, lambda: isinstance(app.screen, kind))
            await pilot.pause(0.2)
            await pilot.wait_for_scheduled_animations()  # a tab's underline slides
            await wait_for(pilot, lambda: not app.workers._workers or all(w.is_finished for w in app.workers))
            # the screen as it stays: a table filled or laid out after its worker ended (a loaded machine
            # caught a distribution table's column one width narrower) is read once it stops changing
            # and a table's columns are measured on Idle: read once none is pending (a loaded CI run
            # read the Statistics distribution's table before, its columns at their headings' widths)
            await wait_for(pilot, lambda: not tables_pending(app.screen))
            shown = screen_text(app)
            for _ in range(50):
                await pilot.pause(0.1)
                again = screen_text(app)
                if again == shown and not tables_pending(app.screen):
                    break
                shown = again
            seen.append([f"after {pressed!r} on {kind.__name__}"] + shown)

        await settle(GroupsScreen, "g")
        assert app.screen.count, "the groups screen lists the spectral groups"
        for keys in ("n", "l", "f", "s", "a", "o"):
            await settle(GroupsScreen, keys)
        await settle(GroupScreen, "enter")
        await settle(GroupScreen, "n")
        await settle(MoleculeScreen, "o")
        await settle(GroupScreen, "s")
        await settle(MoleculeScreen, "o")
        await settle(MoleculeScreen, "n")
        await settle(StatisticsScreen, "t")
        for tab in ("2", "3", "n"):
            await settle(StatisticsScreen, tab)
    close_database()
    return seen


@pytest.mark.parametrize("kind", STORES)
async def test_the_main_screens_show_the_same_on_the_server_as_in_the_file(sources, kind, pg_url):
    status, _, err = cli(sources[kind], "copy", A4_B6.name, pg_url)
    assert status == 0, err
    on_file = await tour(sources[kind])
    on_server = await tour(pg_url)
    assert len(on_server) == len(on_file)
    for file_screen, server_screen in zip(on_file, on_server):
        assert server_screen == file_screen


# -- an exploration started from the Explore screen ---------------------------------------------

RUNS = {FULL: (Config(3, 5), 64), COMPACT: (Config(4, 6), 700)}
"""(configuration, numbers a task) of a run in each store: in this process, A3_B5 full in 36
ranges, A4_B6 compact in 85 tracing tasks."""


class GatedApp(BlackBoxApp):
    """The app, whose exploration waits after its first stored range until ``gate`` is set.

    The run reports each stored range from its worker thread
    (``ExplorationProgress``); once the first one with something stored is
    posted, the worker waits there, so that p lands mid-run, however fast
    the machine.  Every report is kept (``seen``): a newer one replaces one
    not handled yet.
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.gate = threading.Event()
        self.seen: list[tuple[str, int]] = []

    def post_message(self, message: Message) -> bool:
        posted = super().post_message(message)
        if isinstance(message, ExplorationProgress):
            self.seen.append((message.progress.phase, message.progress.done))
            if message.progress.done and threading.current_thread() is not threading.main_thread():
                self.gate.wait(60)
        return posted


def readers(db: Path | str, config: Config) -> dict[tuple[str, ...], str]:
    """What the readers print of ``config``: report, groups in both orders, its status line."""
    found = {}
    for args in (("report", config.name), ("groups", config.name), ("groups", config.name, "--by-size")):
        status, out, err = cli(db, *args)
        assert status == 0, (args, err)
        found[args] = same(out)
    status, out, _ = cli(db, "status")
    found[("status",)] = [line for line in out.splitlines() if line.startswith(f"{config.name} ")]
    close_database()
    return found


@pytest.mark.parametrize("kind", STORES)
async def test_an_exploration_started_from_the_tui_on_a_server_pauses_resumes_and_completes(
    pg_url, tmp_path, monkeypatch, kind
):
    config, range_size = RUNS[kind]
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # a compact run's shard files
    in_file = tmp_path / "file.sqlite"
    assert explore(config, in_file, store=kind, range_size=range_size) == "complete"
    close_database()
    app = GatedApp(pg_url, config, range_size=range_size)
    async with app.run_test(size=(120, 35)) as pilot:
        await pilot.press("escape", *(["c", "c"] if kind == COMPACT else ["c"]))  # the store of new runs
        assert f"New runs store: {kind}" in str(app.screen.query_one("#store-choice", Label).render())
        app.screen.query_one("#new-config").focus()
        await pilot.pause()
        await pilot.press("enter")  # the input holds the configuration given at launch
        await wait_for(pilot, lambda: app.progress is not None and app.progress.done > 0)
        assert app.exploring == config and config.name in app.sub_title  # the header follows the run
        await pilot.press("escape", "p")
        app.gate.set()
        await wait_for(pilot, lambda: app.exploring is None)
        assert app.progress is not None and app.progress.phase == "paused"
        paused = app.progress.done
        assert 0 < paused < app.progress.total
        table = app.screen.query_one("#configs", DataTable)
        await wait_for(pilot, lambda: config.name in table.rows)
        assert table.get_row(config.name)[2].endswith("%")  # partly explored, as status says
        await pilot.press("s")
        await wait_for(pilot, lambda: app.exploring is None and app.progress.phase != "paused", 120)
        assert app.progress.phase == "complete", app.last_error
        await wait_for(pilot, lambda: table.get_row(config.name)[2:4] == ["complete", kind])
    close_database()
    done = [count for phase, count in app.seen if phase in ("exploring", "tracing")]
    assert len(set(done)) > 2 and done == sorted(done), "the progress went up, report by report"
    assert readers(pg_url, config) == readers(in_file, config)
