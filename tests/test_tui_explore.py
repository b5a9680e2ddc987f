"""The command line and the Explore screen: start, pause, resume, quit mid-run.

Every app here works on a temporary database, and ``BBTUI_DB`` points at a
temporary file so that the user's default database is never touched.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Label

from bbcore import explore as explore_module
from bbcore.config import parse_config, validation_error
from bbtui.app import BlackBoxApp, main
from bbtui.screens.confirm import ConfirmScreen
from bbtui.screens.decode import DecodeScreen
from bbtui.screens.explore import ExploreScreen
from bbtui.screens.groups import GroupsScreen
from bbtui.screens.help import HelpScreen

SMALL_RANGES = 64
"""Range size for the pause tests: A3_B5 (2,300 molecules) in 36 ranges."""


@pytest.fixture(autouse=True)
def temporary_default_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Whatever the app opens by default is a temporary file."""
    path = tmp_path / "default.sqlite"
    monkeypatch.setenv("BBTUI_DB", str(path))
    return path


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


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> RangeGate:
    """``bbcore.explore.store_range`` behind a gate (in-process runs only)."""
    gate = RangeGate(explore_module.store_range)
    monkeypatch.setattr(explore_module, "store_range", gate)
    return gate


async def wait_for(pilot: Pilot, condition: Callable[[], object], timeout: float = 60) -> None:
    """Let the app run until ``condition()`` holds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await pilot.pause(0.02)


def molecule_rows(path: Path, config: str) -> list[tuple]:
    """Every stored molecule of a configuration, timestamps left out."""
    with sqlite3.connect(path) as connection:
        columns = [
            row[1]
            for row in connection.execute('PRAGMA table_info("Molecules")')
            if row[1] not in ("dh1", "dh2")
        ]
        return connection.execute(
            f'SELECT {", ".join(columns)} FROM "Molecules" WHERE config = ? ORDER BY number', (config,)
        ).fetchall()


# -- command line ---------------------------------------------------------------


def test_help_lists_the_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert "--db PATH" in out and "CONFIG" in out


@pytest.mark.parametrize("kind", ["missing folder", "not a database", "bad config"])
def test_bad_arguments_fail_before_the_ui(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if kind == "missing folder":
        argv = ["--db", str(tmp_path / "nowhere" / "x.sqlite")]
    elif kind == "not a database":
        (tmp_path / "notes.txt").write_text("hello\n")
        argv = ["--db", str(tmp_path / "notes.txt")]
    else:
        argv = ["--db", str(tmp_path / "x.sqlite"), "A4_B1"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("bbtui: ") and err.count("\n") == 1


# -- explore ---------------------------------------------------------------------


async def test_invalid_configuration_says_why(tmp_path: Path) -> None:
    app = BlackBoxApp(tmp_path / "bb.sqlite")
    async with app.run_test() as pilot:
        app.screen.query_one("#new-config").focus()
        await pilot.pause()
        await pilot.press(*"A4_B1")
        await pilot.pause()
        message = app.screen.query_one("#config-message", Label)
        assert str(message.render()) == validation_error("A4_B1")
        assert message.has_class("error")
        await pilot.press("backspace", "4")
        await pilot.pause()
        assert "1,820 molecules" in str(message.render())


async def test_explore_to_completion_then_open_the_groups(tmp_path: Path) -> None:
    app = BlackBoxApp(tmp_path / "bb.sqlite")
    async with app.run_test() as pilot:
        app.screen.query_one("#new-config").focus()
        await pilot.pause()
        await pilot.press(*"a3_b4", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert app.progress is not None and app.progress.phase == "complete"
        assert app.progress.done == app.progress.total == 560
        table = app.screen_stack[0].query_one("#configs", DataTable)
        assert table.get_row("A3_B4")[2:] == ["complete", "1", "4"]
        await pilot.press("y")
        await wait_for(pilot, lambda: isinstance(app.screen, GroupsScreen) and app.screen.count)
        groups = app.screen.query_one("#groups", DataTable)
        assert groups.row_count == 1  # A3_B4: one spectral group up to symmetry
        await pilot.press("a")
        assert groups.row_count == 4  # four with symmetry


async def test_the_configuration_given_at_launch_is_kept_when_it_is_not_in_the_table(tmp_path: Path) -> None:
    path = tmp_path / "bb.sqlite"
    explore_module.explore(parse_config("A3_B4"), path)
    app = BlackBoxApp(path, parse_config("A4_B4"))
    async with app.run_test() as pilot:
        await pilot.pause()
        new_config = app.screen.query_one("#new-config")
        assert new_config.value == "A4_B4" and new_config.has_focus  # Enter explores it
        assert app.config == parse_config("A4_B4")
        await pilot.press("escape")  # back to the table: nothing picked yet
        await pilot.pause()
        assert app.config == parse_config("A4_B4")
        await pilot.press("enter")  # the user picks the row: it becomes current
        await wait_for(pilot, lambda: isinstance(app.screen, GroupsScreen) and app.screen.count)
        assert app.config == parse_config("A3_B4")


async def test_restart_asks_first_then_explores_from_scratch(tmp_path: Path) -> None:
    path = tmp_path / "bb.sqlite"
    explore_module.explore(parse_config("A3_B4"), path)
    app = BlackBoxApp(path, parse_config("A3_B4"))
    async with app.run_test() as pilot:
        await pilot.press("r")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")  # no: nothing happens
        assert app.exploring is None and len(molecule_rows(path, "A3_B4")) == 560
        await pilot.press("r", "y")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen) and app.progress is not None)
        assert app.progress.phase == "complete" and app.progress.rate > 0  # computed again
        await pilot.press("n")
    assert len(molecule_rows(path, "A3_B4")) == 560


async def test_help_and_the_command_palette(tmp_path: Path) -> None:
    app = BlackBoxApp(tmp_path / "bb.sqlite")
    async with app.run_test() as pilot:
        await pilot.press("escape", "question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert isinstance(app.screen, ExploreScreen)
        await pilot.press("ctrl+p", *"decode")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, DecodeScreen))


async def test_pause_keeps_progress_and_resume_equals_an_uninterrupted_run(
    tmp_path: Path, gate: RangeGate
) -> None:
    config = parse_config("A3_B5")
    reference = tmp_path / "reference.sqlite"
    explore_module.explore(config, reference, range_size=SMALL_RANGES)
    gate.armed = True
    path = tmp_path / "bb.sqlite"
    app = BlackBoxApp(path, config, range_size=SMALL_RANGES)
    async with app.run_test() as pilot:
        app.screen.query_one("#new-config").focus()
        await pilot.pause()
        await pilot.press("enter")  # the input holds the configuration given on the command line
        await wait_for(pilot, lambda: app.progress is not None and app.progress.done > 0)
        await pilot.press("escape", "p")
        gate.open()
        await wait_for(pilot, lambda: app.exploring is None)
        assert app.progress is not None and app.progress.phase == "paused"
        paused = app.progress.done
        assert 0 < paused < config.nb_mol
        assert len(molecule_rows(path, "A3_B5")) == paused
        table = app.screen.query_one("#configs", DataTable)
        assert table.get_row("A3_B5")[2] == f"{100 * paused / config.nb_mol:.1f}%"

        await pilot.press("s")
        await wait_for(pilot, lambda: app.exploring is None and isinstance(app.screen, ConfirmScreen))
        assert app.progress.phase == "complete"
        await pilot.press("n")
    assert molecule_rows(path, "A3_B5") == molecule_rows(reference, "A3_B5")


async def test_quit_mid_run_pauses_and_the_next_launch_resumes(tmp_path: Path, gate: RangeGate) -> None:
    config = parse_config("A3_B5")
    gate.armed = True
    path = tmp_path / "bb.sqlite"
    app = BlackBoxApp(path, range_size=SMALL_RANGES)
    async with app.run_test() as pilot:
        app.start_exploration(config)
        await wait_for(pilot, lambda: app.progress is not None and app.progress.done > 0)
        await pilot.press("ctrl+q")
        gate.open()
        await wait_for(pilot, lambda: not app.is_running)
    stored = len(molecule_rows(path, "A3_B5"))
    assert 0 < stored < config.nb_mol

    again = BlackBoxApp(path, range_size=SMALL_RANGES)
    async with again.run_test() as pilot:
        assert isinstance(again.screen, ExploreScreen)
        table = again.screen.query_one("#configs", DataTable)
        assert table.get_row("A3_B5")[2] == f"{100 * stored / config.nb_mol:.1f}%"
        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(again.screen, ConfirmScreen))
        assert again.progress is not None and again.progress.phase == "complete"
        assert again.progress.done == config.nb_mol
        await pilot.press("n")


async def test_a_resume_into_grouping_shows_the_grouping_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every molecule stored, the groups not built: the panel shows the grouping's own rate and ETA."""
    from bbcore import spectra

    path = tmp_path / "bb.sqlite"
    explore_module.explore(parse_config("A4_B5"), path)
    with sqlite3.connect(path) as connection:  # as a run killed while grouping leaves it
        connection.execute('DROP INDEX "Molecules_A4_B5_spectrum"')
        connection.execute('DROP INDEX "Molecules_A4_B5_canonical"')
        connection.execute("DELETE FROM Spectrums")
        connection.execute("UPDATE Configurations SET complete = 0")
    monkeypatch.setattr(spectra, "OPS_PER_TICK", 500)
    monkeypatch.setattr(spectra, "REPORT_EVERY", 0.0)
    held, release = threading.Event(), threading.Event()
    tick = spectra.GroupingMeter.tick

    def hold_midway(meter) -> int:
        if meter.current == "query" and not release.is_set():
            held.set()
            release.wait(timeout=60)
        return tick(meter)

    monkeypatch.setattr(spectra.GroupingMeter, "tick", hold_midway)
    app = BlackBoxApp(path, parse_config("A4_B5"))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("s")
        await wait_for(pilot, lambda: held.is_set() and app.progress is not None and app.progress.done > 0)
        await pilot.pause(0.6)  # the panel redraws twice a second
        progress = app.progress
        assert progress.phase == "spectrums" and 0 < progress.done < progress.total == 12650
        assert progress.rate > 0 and progress.eta is not None
        screen = app.screen
        assert "building the spectral groups" in str(screen.query_one("#phase", Label).render())
        figures = str(screen.query_one("#figures", Label).render())
        assert "mol/s" in figures and "ETA" in figures and "ETA ?" not in figures, figures
        release.set()
        await wait_for(pilot, lambda: app.exploring is None)
        assert app.progress.phase == "complete"
