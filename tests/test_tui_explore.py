"""The command line and the Explore screen: start, pause, resume, quit mid-run.

Every app here works on a temporary database, and ``BBTUI_DB`` points at a
temporary file so that the user's default database is never touched.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from expect import disk_full_at
from pilot import RangeGate, wait_for
from textual.command import CommandList, CommandPalette
from textual.widgets import DataTable, Label

from bbcore import engine
from bbcore import explore as explore_module
from bbcore import full as full_module
from bbcore.config import parse_config, validation_error
from bbcore.engine import kernels_cached
from bbcore.progress import Progress
from bbtui.app import BlackBoxApp, main
from bbtui.screens.confirm import ConfirmScreen
from bbtui.screens.decode import DecodeScreen
from bbtui.screens.explore import ExploreScreen
from bbtui.screens.groups import GroupsScreen
from bbtui.screens.help import HelpScreen
from bbtui.settings import load_settings, resume_target
from bbtui.widgets.progress import RateMeter, progress_figures

ROOT = Path(__file__).resolve().parent.parent

SMALL_RANGES = 64
"""Range size for the pause tests: A3_B5 (2,300 molecules) in 36 ranges."""


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
        await wait_for(pilot, lambda: app.exploring is None and app.progress is not None)
        assert app.progress.phase == "complete"
        assert app.progress.done == app.progress.total == 560
        await wait_for(pilot, lambda: "g opens them" in str(app.screen.query_one("#phase", Label).render()))
        # No dialog takes the keyboard: the panel says it, and g opens the groups.
        assert isinstance(app.screen, ExploreScreen)
        table = app.screen.query_one("#configs", DataTable)
        assert [column.label.plain for column in table.columns.values()][3:] == [
            "store",
            "families",
            "spectra",
        ]
        assert table.get_row("A3_B4")[2:] == ["complete", "full", "1", "4"]
        assert str(app.screen.query_one("#phase", Label).render()) == (
            "A3_B4 is explored: 4 ambiguous spectra in 1 family; g opens them."
        )
        await pilot.press("n")  # New, as the footer says (the old dialog took it as "Later")
        assert app.screen.focused is app.screen.query_one("#new-config")
        await pilot.press("escape", "g")
        await wait_for(pilot, lambda: isinstance(app.screen, GroupsScreen) and app.screen.page_read)
        groups = app.screen.query_one("#groups", DataTable)
        assert groups.row_count == 1  # A3_B4: one spectral group up to symmetry
        await pilot.press("a")
        assert groups.row_count == 4  # four with symmetry


async def test_a_configuration_typed_right_after_a_run_goes_to_the_input_and_enter_explores_it(
    tmp_path: Path,
) -> None:
    """Enter in the input hands the focus to the table for the run; a configuration typed once
    it has ended still lands in the input (the table ignored it, and its Enter opened the
    finished run's groups), while the screens' keys keep working from the table."""
    app = BlackBoxApp(tmp_path / "bb.sqlite")
    async with app.run_test() as pilot:
        await pilot.pause()
        new_config = app.screen.query_one("#new-config")
        assert app.focused is new_config  # an empty database starts in the input
        await pilot.press(*"A3_B4", "enter")
        await wait_for(pilot, lambda: app.exploring is None and app.progress is not None)
        assert app.focused is app.screen.query_one("#configs", DataTable)
        await pilot.press(*"a3_b5")  # lower case too: the first key takes it to the input
        assert app.focused is new_config and new_config.value == "a3_b5"
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.progress.config == "A3_B5" and app.exploring is None)
        assert app.progress.phase == "complete" and app.progress.done == 2300
        await pilot.press("g")  # from the table, the screens' keys are the app's
        await wait_for(pilot, lambda: isinstance(app.screen, GroupsScreen))
        assert app.screen.config == parse_config("A3_B5")


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
        await wait_for(pilot, lambda: isinstance(app.screen, GroupsScreen) and app.screen.page_read)
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
        await wait_for(pilot, lambda: app.exploring is None and app.progress is not None)
        assert app.progress.phase == "complete" and app.progress.rate > 0  # computed again
    assert len(molecule_rows(path, "A3_B4")) == 560


def config_indexes(path: Path, config: str) -> list[str]:
    """The names of a configuration's own indexes in the file."""
    with sqlite3.connect(path) as connection:
        rows = connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE ?", (f"Molecules_{config}_%",)
        ).fetchall()
    return sorted(name for (name,) in rows)


async def test_restart_says_it_is_deleting_drops_the_indexes_and_a_pause_then_stops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "bb.sqlite"
    explore_module.explore(parse_config("A3_B4"), path)
    assert config_indexes(path, "A3_B4") == ["Molecules_A3_B4_canonical", "Molecules_A3_B4_spectrum"]
    app = BlackBoxApp(path, parse_config("A3_B4"))
    deleting, release = threading.Event(), threading.Event()
    forget = app.forget

    def slow_forget(config):  # the delete of a large configuration takes seconds
        deleting.set()
        release.wait(30)
        forget(config)

    monkeypatch.setattr(app, "forget", slow_forget)
    async with app.run_test() as pilot:
        await pilot.press("r", "y")
        await wait_for(pilot, lambda: deleting.is_set() and app.progress is not None)
        screen = app.screen
        table = screen.query_one("#configs", DataTable)
        await wait_for(pilot, lambda: table.get_row("A3_B4")[2] == "deleting...")  # the panel's clock
        # The phase and the true counts: not "complete 1 4", not "No exploration running".
        assert table.get_row("A3_B4")[2:] == ["deleting...", "full", "-", "-"]
        assert str(screen.query_one("#phase", Label).render()) == "A3_B4: deleting the stored rows..."
        await pilot.press("p")
        assert "the run will not start" in str(screen.query_one("#phase", Label).render())
        release.set()
        await wait_for(pilot, lambda: app.exploring is None)
        await wait_for(pilot, lambda: table.get_row("A3_B4")[2] == "not started")
        assert table.get_row("A3_B4")[1:] == ["560", "not started", "-", "-", "-"]
        assert "A3_B4 is not explored yet" in str(screen.query_one("#phase", Label).render())
    # Restart is bbcore's reset: the rows and the configuration's own indexes are gone.
    assert molecule_rows(path, "A3_B4") == [] and config_indexes(path, "A3_B4") == []


async def test_help_and_the_command_palette(tmp_path: Path) -> None:
    app = BlackBoxApp(tmp_path / "bb.sqlite")
    async with app.run_test() as pilot:
        await pilot.press("escape", "question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert isinstance(app.screen, ExploreScreen)
        await pilot.press("ctrl+p", *"decode")
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, CommandPalette) and app.screen.query_one(CommandList).option_count,
        )
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
        await wait_for(pilot, lambda: app.exploring is None)
        assert app.progress.phase == "complete"
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
    assert resume_target(path) == "A3_B5"  # a run paused with p, or finished, is not kept there

    # As the README says: the next launch on the same file resumes the run by itself.
    again = BlackBoxApp(path, range_size=SMALL_RANGES)
    async with again.run_test() as pilot:
        assert isinstance(again.screen, ExploreScreen)
        await wait_for(pilot, lambda: again.progress is not None and again.exploring is None)
        assert again.progress.phase == "complete" and again.progress.done == config.nb_mol
    assert len(molecule_rows(path, "A3_B5")) == config.nb_mol

    assert resume_target(path) is None  # resumed once: not again


# -- what the panel says while a run starts, the theme kept -----------------------


def report(done: int, elapsed: float, phase: str = "exploring") -> Progress:
    """A progress report of a 635,376-molecule run that had stored nothing before."""
    return Progress("A4_B8", done, 635_376, elapsed, done / elapsed if elapsed else 0.0, phase)


def test_the_engine_loading_is_said_and_no_eta_is_shown_before_the_rate_is_measured() -> None:
    meter = RateMeter(0)
    meter.add(report(0, 0.0))
    meter.add(report(0, 0.6))  # still loading the engine: nothing stored by this run
    assert not meter.storing and meter.rate is None
    assert progress_figures(report(0, 0.6), meter=meter) == (
        "0 / 635,376 molecules · measuring the rate · elapsed 1 s"
    )
    meter.add(report(8_192, 1.2))  # the first range: the measurement starts here
    meter.add(report(48_192, 1.5))
    assert meter.storing and meter.rate is None  # 0.3 s of measurement: not yet
    for step in range(2, 13):
        meter.add(report(8_192 + 40_000 * step, 1.2 + 0.3 * step))
    # 40,000 molecules every 0.3 s, whatever the loading cost before: no ETA of 43 s for 5 s.
    assert meter.rate == pytest.approx(40_000 / 0.3)
    figures = progress_figures(report(488_192, 4.8), meter=meter)
    assert figures.endswith("133,333 mol/s · elapsed 5 s · ETA 1 s")


async def test_the_panel_says_the_engine_is_loading_until_the_first_range_is_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loaded = threading.Event()  # the first range waits: the engine is "loading" until then
    store_range = full_module.store_range

    def slow_first_range(*args, **kwargs):
        loaded.wait(30)
        return store_range(*args, **kwargs)

    monkeypatch.setattr(full_module, "store_range", slow_first_range)
    seen: list[str] = []
    app = BlackBoxApp(tmp_path / "bb.sqlite", range_size=SMALL_RANGES)
    async with app.run_test() as pilot:
        app.start_exploration(parse_config("A3_B5"))
        phase = app.screen.query_one("#phase", Label)
        figures = app.screen.query_one("#figures", Label)
        await wait_for(pilot, lambda: app.progress is not None)
        await wait_for(pilot, lambda: "engine" in str(phase.render()) and "rate" in str(figures.render()))
        seen += [str(phase.render()), str(figures.render())]
        loaded.set()
        await wait_for(pilot, lambda: app.progress is not None and app.progress.done > 0)
        await wait_for(pilot, lambda: "engine" not in str(phase.render()))
        seen.append(str(phase.render()))
        await wait_for(pilot, lambda: app.exploring is None)
    assert seen[0] in ("A3_B5: loading the engine...", "A3_B5: compiling the engine, first run only...")
    assert "measuring the rate" in seen[1] and "ETA" not in seen[1] and "0 mol/s" not in seen[1]
    assert "engine" not in seen[2]  # exploring, building the groups, or explored already


def test_the_engine_knows_whether_a_run_will_compile_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    a3_b5 = parse_config("A3_B5")  # 2,300 molecules: batches above engine.PLAIN_AT_MOST
    engine.explore_range(a3_b5, 1, a3_b5.nb_mol + 1)  # compiled and cached, whichever test ran first
    assert kernels_cached()
    monkeypatch.setattr(engine, "__file__", str(tmp_path / "engine.py"))
    assert not kernels_cached() and not kernels_cached(compact=True)


@pytest.mark.parametrize("where", ["NUMBA_CACHE_DIR", "XDG_CACHE_HOME"])
def test_a_cache_outside_the_module_counts_too(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, where: str
) -> None:
    """numba caches in $NUMBA_CACHE_DIR when set, and in the user's cache folder when the module's
    own is not writable (a read-only install): kernels cached there are loaded, and the run says
    so (only the module's folder was looked in: "compiling the engine" at every run).  The
    folder is numba's own locator's, given the module's path."""
    from numba.core import caching, config

    a3_b5 = parse_config("A3_B5")  # 2,300 molecules: batches above engine.PLAIN_AT_MOST
    engine.explore_range(a3_b5, 1, a3_b5.nb_mol + 1)  # a full run's kernels compiled, cached here
    real = Path(engine.__file__).with_name("__pycache__")
    module = tmp_path / "install" / "engine.py"
    monkeypatch.setattr(engine, "__file__", str(module))
    monkeypatch.setenv(where, str(tmp_path / "cache"))
    if where == "NUMBA_CACHE_DIR":
        monkeypatch.setattr(config, "CACHE_DIR", str(tmp_path / "cache"))
        locator = caching.UserProvidedCacheLocator(engine._trace_kernel, str(module))
    else:
        monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
        locator = caching.UserWideCacheLocator(engine._trace_kernel, str(module))
    folder = Path(locator.get_cache_path())
    assert folder.is_relative_to(tmp_path / "cache")
    assert not kernels_cached()
    folder.mkdir(parents=True)
    for kernel in ("_trace_kernel", "_enantiomer_kernel"):
        for cached in real.glob(f"engine.{kernel}-*.nbi"):
            (folder / cached.name).write_bytes(cached.read_bytes())
    assert kernels_cached()


def test_after_a_compact_run_the_next_one_loads_the_engine(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A compact run compiles (or loads) its kernels, and the next one is told it loads them:
    the enantiomer kernel (a full run's) and a helper named like a kernel (never cached) were
    asked for too, so every compact run said "compiling the engine, first run only", in every
    served session too."""
    cache = tmp_path / "numba"  # a cache of its own: what this run compiled, nothing else
    run = subprocess.run(
        [sys.executable, "-m", "bbcore", "--db", str(tmp_path / "compact.sqlite"), "explore", "A3_B4"]
        + ["--store", "compact"],
        capture_output=True,
        text=True,
        env={**os.environ, "NUMBA_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)},
        timeout=900,
    )
    assert run.returncode == 0, run.stderr
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(cache))
    assert kernels_cached(compact=True)
    assert not kernels_cached()  # a full run's enantiomer kernel was not compiled by it


def test_a_full_run_needs_only_the_kernels_it_calls(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A cache holding the full store's kernels (tracing, enantiomer groups) but not the compact
    store's says a full run loads and a compact one compiles: before, every kernel was asked
    for, and a user of full stores only saw "compiling the engine" at every start."""
    real = Path(engine.__file__).with_name("__pycache__")
    folder = tmp_path / "__pycache__"
    folder.mkdir()
    for kernel in ("_trace_kernel", "_enantiomer_kernel"):
        for cached in real.glob(f"engine.{kernel}-*.nbi"):
            (folder / cached.name).write_bytes(cached.read_bytes())
    monkeypatch.setattr(engine, "__file__", str(tmp_path / "engine.py"))
    assert kernels_cached()
    assert not kernels_cached(compact=True)


async def test_the_theme_is_kept_in_the_settings(tmp_path: Path, temporary_settings: Path) -> None:
    app = BlackBoxApp(tmp_path / "bb.sqlite")
    async with app.run_test() as pilot:
        assert app.theme != "nord"
        app.theme = "nord"
        await pilot.pause()
    assert load_settings()["theme"] == "nord"
    assert (temporary_settings / "bbtui" / "settings.json").exists()
    again = BlackBoxApp(tmp_path / "bb.sqlite")
    async with again.run_test():
        assert again.theme == "nord"


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
        screen = app.screen
        # The panel redraws twice a second.
        await wait_for(
            pilot, lambda: "building the spectral groups" in str(screen.query_one("#phase", Label).render())
        )
        await wait_for(pilot, lambda: "ETA" in str(screen.query_one("#figures", Label).render()))
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


async def test_the_groups_screen_follows_a_run_of_its_configuration(tmp_path: Path, gate: RangeGate) -> None:
    config = parse_config("A3_B5")
    app = BlackBoxApp(tmp_path / "bb.sqlite", config, range_size=SMALL_RANGES)
    async with app.run_test() as pilot:
        gate.armed = True
        app.start_exploration(config)
        await wait_for(pilot, lambda: app.progress is not None and app.progress.done > 0)
        await pilot.press("escape", "g")
        await wait_for(pilot, lambda: isinstance(app.screen, GroupsScreen))
        summary = app.screen.query_one("#groups-summary", Label)
        assert "is not explored yet" in str(summary.render())
        gate.open()
        await wait_for(pilot, lambda: app.exploring is None)
        await pilot.pause(0.2)
        # Not the figure read when the screen opened: the groups, once the run completes.
        assert app.screen.count == 2
        assert str(summary.render()).startswith("2 groups: one row per family")


async def test_a_full_disk_stops_the_run_in_one_line_and_s_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLITE_FULL in the third range's transaction (``expect.disk_full_at``): the panel and the
    notification say where, how much more and that s resumes, as the command line does, not
    "unexpected error"; s then completes the run, equal to a clean one."""
    commit = full_module._commit_chunk
    calls = disk_full_at(monkeypatch, 3)
    config = parse_config("A3_B5")
    path = tmp_path / "bb.sqlite"
    app = BlackBoxApp(path, config, range_size=SMALL_RANGES)
    async with app.run_test(size=(110, 30)) as pilot:
        app.screen.query_one("#new-config").focus()
        await pilot.pause()
        await pilot.press("enter")
        await wait_for(pilot, lambda: calls["n"] >= 3 and app.exploring is None)
        stored = len(molecule_rows(path, "A3_B5"))
        assert 0 < stored < config.nb_mol
        error = app.last_error or ""
        assert error.startswith(f"the disk is full at {tmp_path} (") and error.endswith(
            "then press s to resume"
        )
        assert f"{stored:,} are stored and kept" in error and "unexpected" not in error
        monkeypatch.setattr(full_module, "_commit_chunk", commit)
        await pilot.press("escape", "s")
        await wait_for(pilot, lambda: app.exploring is None and app.progress.phase == "complete")
    reference = tmp_path / "reference.sqlite"
    explore_module.explore(config, reference, range_size=SMALL_RANGES)
    assert molecule_rows(path, "A3_B5") == molecule_rows(reference, "A3_B5")
