"""bbtui: the Textual face of the Black Box explorer.

``bbtui [--db PATH] [--cluster ADDRESS] [CONFIG]`` opens the app on a database
(``--db``, else ``$BBTUI_DB``, else ``~/.local/share/bbtui/blackbox.sqlite``),
with CONFIG (``A4_B8``) selected; with ``--cluster`` (or ``$BBTUI_CLUSTER``)
its runs go to that Dask scheduler (``bbcore.cluster``).  The app owns the one exploration that may run at a
time: a thread worker drives ``bbcore.explore.explore`` with a stop event
and posts its progress as messages, so every screen stays usable during a
run and ``ctrl+q`` pauses the run cleanly before quitting.  A database this user
cannot write (a shared or published file, a read-only mount) opens
read-only: every browsing screen works, the exploration keys are off, the
header says why, and a start says in one line what to do.  ``--read-only``
opens any file so.  A read-only session reads the stored strategy books and
computes none (it could not keep them: docs/strategy.md).  ``bbtui --serve``
serves the app to web browsers, each tab an app of its own (``bbtui.serve``).

Screens: Explore (the home screen), Groups, Group, Decode, Molecule,
Statistics, Play, Strategy and Help; the global keys and the command
palette open them.  ``p`` pauses or turns pages on five screens, so Play is
``P`` (shift+p) everywhere; the Strategy book is ``b``.
"""

from __future__ import annotations

import argparse
import gc
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable
from multiprocessing import resource_tracker
from pathlib import Path

from textual import events, work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.cache import LRUCache
from textual.content import Content
from textual.geometry import Size
from textual.message import Message
from textual.messages import ExitApp
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Header

from bbcore import __version__
from bbcore.cli.common import database_arg, positive_int
from bbcore.cluster import cluster_address
from bbcore.compact.shards import default_shard_root, forget_shards
from bbcore.config import Config, ConfigError, parse_config
from bbcore.decode import Stop
from bbcore.engine import kernels_cached
from bbcore.explore import default_store, explore, full_disk_line
from bbcore.feasibility import refusal
from bbcore.lifeline import die_with_parent
from bbcore.lock import exploration_lock
from bbcore.progress import DiskFull, ExploreError, Progress
from bbcore.queries import config_state
from bbcore.shots import Ranking
from bbcore.store import (
    COMPACT,
    StoreError,
    close_database,
    config_row,
    default_description,
    ensure_config,
    is_disk_full,
    is_read_only,
    is_server,
    open_database,
    read_only_message,
    reset_config,
)
from bbcore.strategy import StrategyBook, StrategyError, book, stored_book
from bbcore.words import plural
from bbtui.host import unwatch_app
from bbtui.messages import ExplorationEnded, ExplorationProgress
from bbtui.screens.decode import DecodeScreen
from bbtui.screens.explore import ExploreScreen
from bbtui.screens.group import GroupScreen
from bbtui.screens.groups import GroupsScreen
from bbtui.screens.help import HelpScreen
from bbtui.screens.molecule import MoleculeScreen
from bbtui.screens.play import PlayScreen
from bbtui.screens.statistics import StatisticsScreen
from bbtui.screens.strategy import StrategyScreen
from bbtui.settings import load_settings, resume_target, save_settings, set_resume
from bbtui.terminal import clamped_size
from bbtui.widgets.progress import RateMeter

BOOKS_KEPT = 2
"""Strategy books the app keeps (``BlackBoxApp.books``): both policies of one configuration."""

HEADER_SIDES = 8 + 10
"""Columns of the header's icon (left) and of its clock's room (right), beside its title."""


class BlackBoxApp(App[None]):
    """Explore Black Box configurations, browse their spectral groups, decode spectra."""

    CSS_PATH = Path(__file__).with_name("bbtui.tcss")  # absolute: subclasses live elsewhere
    TITLE = "bbtui"

    BINDINGS = [
        Binding("question_mark", "help", "Help", key_display="?", priority=True),
        Binding("f1", "help", "Help", show=False),
        # The screens' keys work everywhere (but where a widget types them) and are
        # listed in the help and the command palette; the footer keeps its room
        # for the keys of the screen shown.
        Binding("e", "explore", "Explore", show=False),
        Binding("g", "groups", "Groups", show=False),
        Binding("d", "decode", "Decode", show=False),
        Binding("m", "molecule", "Molecule", show=False),
        Binding("t", "statistics", "Stats", show=False),
        # p pauses or turns pages on five screens: Play is shift+p everywhere.
        Binding("P", "play", "Play", key_display="P", show=False),
        Binding("b", "strategy", "Book", show=False),
        Binding("ctrl+q", "quit", "Quit", priority=True),
    ]

    config: reactive[Config | None] = reactive(None)
    """The configuration the screens work on (selected on the Explore screen)."""
    exploring: reactive[Config | None] = reactive(None)
    """The configuration being explored, or None."""
    progress: reactive[Progress | None] = reactive(None)
    """The latest progress report of the current or last run."""

    def __init__(
        self,
        db_path: Path | str | None = None,
        config: Config | None = None,
        *,
        workers: int | None = None,
        range_size: int | None = None,
        cluster: str | None = None,
        read_only: bool = False,
    ) -> None:
        """Open the database (StoreError if unusable) and select ``config``.

        ``workers`` and ``range_size`` are passed to ``bbcore.explore``; a
        database must always be explored with the same range size.
        ``cluster`` is a Dask scheduler's address (``bbcore.cluster``): runs
        then go there, in the compact store, as ``bbcore explore --cluster``.
        ``read_only`` opens even a writable file read-only (``bbtui --read-only``,
        every session of ``bbtui --serve --read-only``): nothing is explored,
        reset or computed for a book.
        """
        super().__init__()
        self.db_path = open_database(db_path, write=False if read_only else None)
        # Large explorations spawn worker processes, and multiprocessing starts its
        # resource tracker with our stderr: start it now, while stderr is still the
        # terminal's, not Textual's capture (whose fileno() is -1).
        resource_tracker.ensure_running()
        self.explore_workers = workers
        self.range_size = range_size
        self.cluster = cluster
        self.set_reactive(BlackBoxApp.config, config)
        self.stop_event = threading.Event()
        self.progress_at = time.monotonic()
        self.last_error: str | None = None
        self.quitting = False
        self.quit_now = False
        self.books: LRUCache[tuple[Config, str], StrategyBook] = LRUCache(BOOKS_KEPT)
        """Strategy books read or computed, by (configuration, policy), shared by the screens:
        the last ``BOOKS_KEPT`` only (an A5_B8 book takes 300 to 600 MB)."""
        self.read_only = is_read_only()
        """A file this user cannot write opens read-only: browsing works, exploring is off."""
        self.read_only_asked = read_only
        """Read-only because asked (``--read-only``), not because of the file."""
        self.sub_title = self.home_subtitle()
        self.meter = RateMeter()
        """The running exploration's smoothed rate (``bbtui.widgets.progress``)."""
        self.loading = "loading the engine"
        """What the run does before its first range is stored."""
        self.engine_loaded = False
        """A run of this process reached its first range: the kernels are compiled, whatever
        numba's cache on disk says."""
        self.explored_note: str | None = None
        """The last run's completion, said on the Explore screen's panel until the next run."""
        theme = load_settings().get("theme")
        if isinstance(theme, str) and theme in self.available_themes:
            self.theme = theme

    def watch_theme(self, theme: str) -> None:
        """Keep the theme chosen for the next launch (``bbtui.settings``); a read-only session
        (``--read-only``, a visitor of ``bbtui --serve --read-only``) keeps it to itself."""
        if not self.read_only_asked and load_settings().get("theme") != theme:
            save_settings(theme=theme)

    def format_title(self, title: str, sub_title: str) -> Content:
        """The header's line, fitted between its icon and its clock's room (``HEADER_SIDES``):
        a long file path loses its middle (``…``), never its end, which the header cut."""
        room = self.size.width - HEADER_SIDES - len(title) - len(" — ")
        if len(sub_title) > room > 8:
            tail = (room - 1) * 2 // 3
            sub_title = f"{sub_title[: room - 1 - tail]}…{sub_title[-tail:]}"
        return super().format_title(title, sub_title)

    def post_message(self, message: Message) -> bool:
        """A served app's terminal size within ``terminal.MAX_COLUMNS`` x ``MAX_ROWS``.

        The server clamps the sizes it reads (``bbtui.serve``), but Textual's
        web driver also reads an in-band resize report typed as keys
        (``ESC [ 48 ; H ; W ; h ; w t``), even cut across messages, and posts
        that size here: it is clamped too.  A terminal's own size is its own.
        """
        if isinstance(message, events.Resize) and self.is_web:
            size = clamped_size(message.size.width, message.size.height)
            if size is not None and size != tuple(message.size):
                message = events.Resize(Size(*size), Size(*size))
        return super().post_message(message)

    def on_resize(self) -> None:
        """The header's line is fitted again (Textual formats it only when a title changes)."""
        if not self.screen_stack:
            return  # a browser's first size comes before any screen (bbtui --serve)
        for header in self.screen.query(Header):
            for title in header.query("HeaderTitle"):
                title.update(header.format_title())

    def on_mount(self) -> None:
        """Resume the run under way when the app was last quit on this database."""
        # The screens closed so far are freed: the watchers their widgets set on the app go.
        self.screen_change_signal.subscribe(self, lambda screen: unwatch_app(self))
        name = resume_target(self.db_path)
        if name is None or self.read_only:
            return
        set_resume(self.db_path, None)
        try:
            config = parse_config(name)
        except ConfigError:
            return
        state = config_state(config)
        if state.complete or not state.done:
            return
        self.notify(
            f"Resuming {config}, under way when bbtui was quit ({state.done:,} of "
            f"{state.total:,} molecules stored). p pauses it.",
            title="Exploration",
        )
        self.start_exploration(config)

    def home_subtitle(self) -> str:
        """The header's second part when nothing runs: the file, and why exploring is off."""
        if self.read_only_asked:
            return f"read-only session: exploring and computing books off · {self.db_path}"
        if self.read_only and is_server(self.db_path):
            return f"{self.db_path} · read-only role: exploring off (use a writer role)"
        if self.read_only:
            return f"{self.db_path} · read-only: exploring off (copy it, or --db another file)"
        return str(self.db_path)

    def refuse_read_only(self) -> bool:
        """Say in one line why nothing can be explored in a read-only file; True if refused."""
        if self.read_only:
            why = (
                f"This session opened {self.db_path} read-only (--read-only): exploring, resetting "
                "and computing a strategy book are off."
                if self.read_only_asked
                else read_only_message(self.db_path)
            )
            if not any(note.message == why for note in self._notifications):  # never stacked
                self.notify(why, title="Read-only", severity="error", timeout=10)
        return self.read_only

    def strategy_book(
        self,
        config: Config,
        by: Ranking,
        progress: Callable[[int, int], None] | None = None,
        played: Callable[[int, int], None] | None = None,
        stop: Stop | None = None,
    ) -> StrategyBook:
        """The stored book of ``config``, else computed (and stored); in a worker thread.

        ``progress``, ``played`` and ``stop`` are ``strategy.book``'s, while it computes
        (``stop``: the worker's ``cancelled_event``, so that leaving the screen or
        quitting stops it within a few hundredths of a second).

        A read-only session (``--read-only``, a file this user cannot write, a
        reader role) only reads: the book it computed could not be stored, so
        it would take a core for seconds to minutes and up to 600 MB at every
        opening (a reader's A6_B7 book took 500 MB), and a served visitor must
        not start that.  StrategyError says so when none is stored.
        """
        if self.read_only:
            found = stored_book(config, by)
            if found is None:
                why = (
                    "this read-only session (--read-only) does not compute one"
                    if self.read_only_asked
                    else "this database is read-only here, so a book computed now could not be "
                    "kept: a read-only session does not compute one (bbcore strategy "
                    f"{config} with write access stores it)"
                )
                raise StrategyError(f"no {by} book of {config} is stored, and {why}")
            return found
        return book(config, by, progress=progress, played=played, stop=stop)[0]

    def watch_config(self) -> None:
        """The Groups key depends on the configuration."""
        self.refresh_bindings()

    def get_default_screen(self) -> Screen:
        """The Explore screen is the home screen, at the bottom of the stack."""
        return ExploreScreen()

    # -- screens -------------------------------------------------------------

    def show_screen(
        self,
        kind: type[Screen],
        make: Callable[[], Screen],
        same: Callable[[Screen], bool] = lambda screen: True,
    ) -> None:
        """Go back to a screen of ``kind`` already open (``same``), else push ``make()``."""
        for index, screen in enumerate(self.screen_stack):
            if isinstance(screen, kind) and same(screen):
                while len(self.screen_stack) > index + 1:
                    self.pop_screen()
                return
        self.push_screen(make())

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Hide the key of the screen already shown; groups need a configuration."""
        screens = {
            "explore": ExploreScreen,
            "decode": DecodeScreen,
            "molecule": MoleculeScreen,
            "statistics": StatisticsScreen,
            "play": PlayScreen,
        }
        if action in screens:
            return not isinstance(self.screen, screens[action])
        if action == "groups":
            return not isinstance(self.screen, GroupsScreen) and (self.config is not None or None)
        if action == "strategy":
            return not isinstance(self.screen, StrategyScreen) and (self.config is not None or None)
        return True

    def action_help(self) -> None:
        """Open the help screen (or close it)."""
        if isinstance(self.screen, HelpScreen):
            self.pop_screen()
        else:
            self.push_screen(HelpScreen())

    def action_explore(self) -> None:
        """Back to the Explore screen."""
        self.show_screen(ExploreScreen, ExploreScreen)

    def action_groups(self) -> None:
        """The spectral groups of the current configuration."""
        config = self.config
        if config is None:
            self.notify("Choose a configuration first (Explore screen).", severity="warning")
            return
        self.show_screen(
            GroupsScreen,
            lambda: GroupsScreen(config),
            lambda screen: getattr(screen, "config", None) == config,
        )

    def action_decode(self) -> None:
        """The Decode screen."""
        self.show_screen(DecodeScreen, lambda: DecodeScreen(self.config))

    def action_molecule(self) -> None:
        """The Molecule screen."""
        self.show_screen(MoleculeScreen, lambda: MoleculeScreen(self.config))

    def action_statistics(self) -> None:
        """The statistics of the current configuration."""
        config = self.config
        if config is None:
            self.notify("Choose a configuration first (Explore screen).", severity="warning")
            return
        self.show_screen(
            StatisticsScreen,
            lambda: StatisticsScreen(config),
            lambda screen: getattr(screen, "config", None) == config,
        )

    def action_play(self) -> None:
        """The Play screen."""
        self.show_screen(PlayScreen, lambda: PlayScreen(self.config))

    def action_strategy(self) -> None:
        """The strategy book of the current configuration."""
        config = self.config
        if config is None:
            self.notify("Choose a configuration first (Explore screen).", severity="warning")
            return
        self.show_screen(
            StrategyScreen,
            lambda: StrategyScreen(config),
            lambda screen: getattr(screen, "config", None) == config,
        )

    def open_molecule(self, config: Config, number: int) -> None:
        """The Molecule screen on molecule ``number`` of ``config``: back to it if it is open.

        Like a browser's history: a group's ``o`` and a molecule's ``s`` take
        turns without piling up screens, and escape retraces the way.
        """
        self.show_screen(
            MoleculeScreen,
            lambda: MoleculeScreen(config, number),
            lambda screen: (
                getattr(screen, "config", None) == config and getattr(screen, "number", None) == number
            ),
        )

    def open_group(self, config: Config, spectrum: str) -> None:
        """The molecules of ``config`` sharing ``spectrum``, side by side: back to a screen
        showing that group if one is open (a list's group screen on it too)."""
        self.show_screen(
            GroupScreen,
            lambda: GroupScreen(config, spectrum=spectrum),
            lambda screen: (
                getattr(screen, "config", None) == config and getattr(screen, "spectrum", None) == spectrum
            ),
        )

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """The screens in the command palette, then Textual's own commands."""
        yield SystemCommand(
            "Explore", "Configurations: start, pause, resume an exploration", self.action_explore
        )
        yield SystemCommand(
            "Spectral groups", "The ambiguous spectra of the current configuration", self.action_groups
        )
        yield SystemCommand("Decode", "Find the molecules that give a spectrum", self.action_decode)
        yield SystemCommand(
            "Molecule", "One molecule by number: board, spectrum, enantiomers", self.action_molecule
        )
        yield SystemCommand(
            "Statistics",
            "Ambiguity report, ray records and distributions of the current configuration",
            self.action_statistics,
        )
        yield SystemCommand("Play", "A game against the box, with the book as coach", self.action_play)
        yield SystemCommand(
            "Strategy book",
            "The best-next-shot strategy over every molecule, as a tree",
            self.action_strategy,
        )
        yield SystemCommand("Help", "The notation and the keys", self.action_help)
        yield from super().get_system_commands(screen)

    # -- the exploration -----------------------------------------------------

    def start_exploration(self, config: Config, *, restart: bool = False, store: str | None = None) -> None:
        """Explore ``config`` (resuming it), from scratch when ``restart``.

        ``store`` (full or compact, None for the default) applies to a run
        that starts from nothing; a configuration being resumed keeps its own.
        """
        if self.refuse_read_only():
            return
        if self.exploring is not None:
            self.notify(f"{self.exploring} is being explored: pause it first (p).", severity="warning")
            return
        state = config_state(config)
        if not restart and (state.done or state.complete):
            store = None
        refused = self.exploration_refusal(config, restart=restart, store=store)
        if refused:
            self.notify(refused, title="Exploration", severity="error", timeout=15)
            return
        self.config = config
        self.stop_event = threading.Event()
        self.last_error = None
        self.explored_note = None
        self.meter = RateMeter(0 if restart else config_state(config).done)
        compact = self.run_store(config, restart=restart, store=store) == COMPACT
        compiled = self.engine_loaded or kernels_cached(compact)
        self.loading = "loading the engine" if compiled else "compiling the engine, first run only"
        self.exploring = config
        self.progress = None
        self.run_exploration(config, self.stop_event, restart, store)

    def exploration_refusal(
        self, config: Config, *, restart: bool = False, store: str | None = None
    ) -> str | None:
        """Why exploring ``config`` here cannot finish (one line), or None (``bbcore.feasibility``).

        The library refuses too; asking first keeps the line out of the
        run's error path and lets the Explore screen say it as you type.
        The TUI has no force: that is ``bbcore explore CONFIG --force``.
        """
        state = config_state(config)
        started = not restart and (state.done > 0 or state.complete)
        return refusal(
            config,
            self.db_path,
            store=self.run_store(config, restart=restart, store=store),
            workers=self.explore_workers,
            done=state.done if started else 0,
            brief=True,
        )

    def run_store(self, config: Config, *, restart: bool = False, store: str | None = None) -> str:
        """The store a run of ``config`` writes: compact on a cluster, the one a started
        configuration keeps, else ``store`` or the default for its size."""
        if self.cluster:
            return COMPACT
        state = config_state(config)
        started = not restart and (state.done > 0 or state.complete)
        return state.store if started else store or default_store(config)

    def pause_exploration(self) -> None:
        """Ask the run to pause: the ranges under way are stored first (under a second)."""
        if self.exploring is not None:
            self.stop_event.set()

    @work(thread=True, exclusive=True, group="exploration")
    def run_exploration(
        self, config: Config, stop: threading.Event, restart: bool, store: str | None = None
    ) -> None:
        """Drive ``bbcore.explore`` in a thread; report through messages."""
        runner = None
        try:
            if restart:
                done = config_state(config).done
                report = Progress(config.name, done, config.nb_mol, 0.0, 0.0, "deleting")
                self.post_message(ExplorationProgress(report))
                self.forget(config)
                if stop.is_set():  # paused while deleting: listed as not started, s starts it
                    ensure_config(config)
                    self.post_message(ExplorationEnded(config, "deleted"))
                    return
            if self.cluster:
                from bbcore.cluster import DaskRunner  # dask only when a cluster is asked for

                runner = DaskRunner(self.cluster, self.shard_root(config))
            outcome = explore(
                config,
                self.db_path,
                workers=runner.workers if runner else self.explore_workers,
                stop=stop,
                range_size=None if runner else self.range_size,
                store=COMPACT if runner else store,
                runner=runner,
                progress=lambda p: self.post_message(ExplorationProgress(p)),
            )
        except DiskFull as error:  # a compact run's shard files: the command line's one line
            line = full_disk_line(config, self.db_path, resume="press s to resume", folder=error.folder)
            self.post_message(ExplorationEnded(config, "full", line))
        except (ExploreError, StoreError) as error:
            self.post_message(ExplorationEnded(config, "error", str(error)))
        except Exception as error:
            if is_disk_full(error):  # SQLITE_FULL or ENOSPC: the command line's one line
                line = full_disk_line(config, self.db_path, resume="press s to resume")
                self.post_message(ExplorationEnded(config, "full", line))
            else:  # a bug: say so, and keep the app (and the other screens) alive
                self.log.error(f"exploration of {config} failed: {error!r}")
                self.post_message(ExplorationEnded(config, "error", f"unexpected error: {error!r}"))
        else:
            self.post_message(ExplorationEnded(config, outcome))
        finally:
            if runner is not None:
                runner.close()

    def shard_root(self, config: Config) -> Path:
        """The shard folder of a compact run: the one it started with, else next to the database."""
        row = config_row(config)
        return (
            Path(row.shard_root) if row is not None and row.shard_root else default_shard_root(self.db_path)
        )

    def forget(self, config: Config) -> None:
        """Delete everything stored about ``config``, as ``bbcore reset`` does (its rows,
        spectral groups, books, its own indexes and a compact run's shard files), under its
        lock (in the worker thread)."""
        with exploration_lock(self.db_path, config):
            row = config_row(config)
            reset_config(config)
            forget_shards(self.db_path, config, row.shard_root if row is not None else None)
        for key in [key for key in self.books.keys() if key[0] == config]:
            self.books.discard(key)

    def on_exploration_progress(self, message: ExplorationProgress) -> None:
        """Keep the latest report; the Explore screen watches it."""
        progress = message.progress
        self.progress_at = time.monotonic()
        self.meter.add(progress)
        self.progress = progress
        if progress.phase != "deleting" and progress.done > self.meter.stored:
            self.engine_loaded = True  # a range stored by this run: the kernels are compiled
        if self.exploring is not None:
            self.sub_title = f"{progress.phase} {progress.config} {progress.fraction:.0%}"

    def on_exploration_ended(self, message: ExplorationEnded) -> None:
        """Report the outcome; say where the spectral groups of a completed run are."""
        self.last_error = message.error
        config = message.config
        if message.outcome == "deleted":
            self.progress = None  # nothing stored: the panel says where the configuration stands
        self.exploring = None
        self.sub_title = self.home_subtitle()
        if self.quitting:
            self.exit()
            return
        if message.outcome == "deleted":
            self.notify(f"{config}: its rows are deleted; s explores it again.", title="Exploration")
            return
        # s resumes on the Explore screen (whose cursor goes to this run); elsewhere s is
        # another screen's key: say where it works.
        resume = "s" if isinstance(self.screen, ExploreScreen) else "s on the Explore screen (e)"
        if message.outcome == "full":
            self.notify(
                f"{config} stopped: {message.error}.", title="Exploration", severity="error", timeout=30
            )
        elif message.outcome == "error":
            self.notify(
                f"{config} stopped: {message.error}. What is stored is kept; {resume} resumes.",
                title="Exploration",
                severity="error",
                timeout=15,
            )
        elif message.outcome == "paused":
            if not isinstance(self.screen, ExploreScreen):  # there its panel says so (a toast hid it)
                self.notify(f"{config} paused: press {resume} to resume.", title="Exploration")
        else:
            self.offer_groups(config, toast=not isinstance(self.screen, ExploreScreen))

    def offer_groups(self, config: Config, *, toast: bool = True) -> None:
        """Say that ``config`` is explored and that ``g`` opens its spectral groups.

        In a toast (unless ``toast`` is False: a run that ends on the Explore
        screen, whose panel says it and which a toast covered for seconds) and on
        the Explore screen's panel, never in a dialog: a dialog would catch the
        next key the user meant for something else.
        """
        state = config_state(config)
        if state.ambiguous == 0:
            note = f"{config} is explored: every spectrum is unique, no spectral group."
        else:
            note = (
                f"{config} is explored: {plural(state.ambiguous, 'ambiguous spectrum', 'ambiguous spectra')} "
                f"in {plural(state.families, 'family', 'families')}; g opens them."
            )
        self.explored_note = note
        if toast:
            self.notify(note, title="Exploration")

    def on_exit_app(self, message: ExitApp) -> None:
        """A quit from outside (the browser tab of ``bbtui --serve`` closed, the server
        stopped, SIGTERM) pauses a run under way first, as ctrl+q does."""
        if self.exploring is not None and not self.quit_now:
            message.prevent_default()  # App's own handler would end the app mid-range
            if not self.quitting:  # a second one (SIGTERM and the tab's quit) waits too
                self.call_later(self.action_quit)

    async def action_quit(self) -> None:
        """Quit; a running exploration is paused first (its progress is kept)."""
        if self.exploring is None or self.quitting:
            self.quit_now = True  # ctrl+q again: quit without waiting for the pause
            self.exit()
            return
        self.quitting = True
        set_resume(self.db_path, self.exploring.name)  # resumed at the next launch on this file
        self.stop_event.set()
        self.notify(
            f"Pausing {self.exploring} before quitting: the ranges under way are being stored...",
            title="Quit",
            timeout=30,
        )


def port_number(text: str) -> int:
    """argparse type: a TCP port, 1 to 65535."""
    value = positive_int(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"expected a port from 1 to 65535, got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The command line: ``bbtui [--db PATH] [--cluster ADDRESS] [--read-only] [CONFIG]``,
    or ``bbtui --serve [--host HOST] [--port PORT] [--max-sessions N] ...``."""
    parser = argparse.ArgumentParser(
        prog="bbtui",
        description="Explore the Black Box deduction game: run exhaustive explorations, browse "
        "the ambiguous molecules side by side, decode spectra.",
        epilog=f"database: --db PATH or URL, else $BBTUI_DB, else {default_description()}",
    )
    parser.add_argument(
        "config",
        nargs="?",
        metavar="CONFIG",
        help="configuration to select, AN_BW (e.g. A4_B8: 4 atoms, 8 x 8 box)",
    )
    parser.add_argument(
        "--db",
        type=database_arg,
        default=None,
        metavar="PATH",
        help="SQLite database file (created if missing), or a PostgreSQL server's "
        "postgresql://USER@HOST[:PORT]/DBNAME",
    )
    parser.add_argument(
        "--cluster",
        metavar="ADDRESS",
        default=None,
        help="explore on the Dask scheduler at ADDRESS, compact store (default: $BBTUI_CLUSTER)",
    )
    parser.add_argument(
        "--read-only",
        action="store_true",
        help="open the database read-only: browse, decode and play; exploring, resetting and "
        "computing a strategy book are off",
    )
    parser.add_argument("--version", action="version", version=f"bbtui {__version__}")
    # A session's app of bbtui --serve: it quits (pausing its run) when that server process ends.
    parser.add_argument("--served-by", type=positive_int, default=None, help=argparse.SUPPRESS)
    web = parser.add_argument_group(
        "serving in a web browser (needs the [web] extra: pip install 'bbtui[web]')",
        "bbtui --serve runs a web server; each browser tab that opens it gets an app of its own "
        "(a process) on the same database. Ctrl-C or SIGTERM stops it and every session's app, "
        "pausing and storing an exploration under way.",
    )
    web.add_argument("--serve", action="store_true", help="serve the app to web browsers")
    web.add_argument(
        "--host",
        default=None,
        help="address to listen on (default 127.0.0.1: this machine only; any other address "
        "lets anyone who can reach the port use the app)",
    )
    web.add_argument("--port", type=port_number, default=None, help="port to listen on (default 8000)")
    web.add_argument(
        "--max-sessions",
        type=positive_int,
        default=None,
        metavar="N",
        help="browser sessions at once, each a process (default 4); one more tab is told so",
    )
    web.add_argument(
        "--allowed-host",
        action="append",
        default=None,
        metavar="NAME[:PORT]",
        help="a Host the browser may use besides the address served and localhost (a proxy's or "
        "tunnel's name; repeatable); any other is refused, against DNS rebinding",
    )
    web.add_argument(
        "--session-memory",
        type=positive_int,
        default=None,
        metavar="MIB",
        help="address space of each session's app and of its exploration workers, in MiB (default 4096)",
    )
    return parser


def serve_main(args: argparse.Namespace) -> int:
    """``bbtui --serve``: check the database once, then serve it (``bbtui.serve``)."""
    try:
        from bbtui import serve
    except ImportError as error:
        print(f"bbtui: --serve needs the [web] extra ({error}): pip install 'bbtui[web]'", file=sys.stderr)
        return 2
    for value in args.allowed_host or ():
        if serve.host_and_port(value) is None:
            print(f"bbtui: --allowed-host: expected a host NAME or NAME:PORT, got {value!r}", file=sys.stderr)
            return 2
    try:
        if args.config:
            parse_config(args.config)
        path = open_database(args.db, write=False if args.read_only else None)
    except (ConfigError, StoreError) as error:
        print(f"bbtui: {error}", file=sys.stderr)
        return 2
    finally:
        close_database()
    return serve.serve(
        path,
        host=args.host or serve.DEFAULT_HOST,
        port=args.port or serve.DEFAULT_PORT,
        read_only=args.read_only,
        max_sessions=args.max_sessions or serve.DEFAULT_MAX_SESSIONS,
        config=args.config,
        cluster=args.cluster,
        allowed=args.allowed_host,
        session_memory=args.session_memory or serve.DEFAULT_SESSION_MEMORY,
    )


def main(argv: list[str] | None = None) -> int:
    """Check the arguments and the database, then run the app (or serve it: ``--serve``)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.serve:
        return serve_main(args)
    serving = ("host", "port", "max_sessions", "allowed_host", "session_memory")
    given = [name for name in serving if getattr(args, name) is not None]
    if given:
        parser.error(f"--{given[0].replace('_', '-')} goes with --serve")
    if args.served_by:
        die_with_parent(args.served_by, signal.SIGTERM)  # Textual's web driver quits on SIGTERM
    try:
        config = parse_config(args.config) if args.config else None
        app = BlackBoxApp(args.db, config, cluster=cluster_address(args.cluster), read_only=args.read_only)
    except (ConfigError, StoreError) as error:
        print(f"bbtui: {error}", file=sys.stderr)
        return 2
    code = None
    try:
        app.run()
        code = app.return_code
    finally:
        del app
        gc.collect()  # the connections of the app's finished threads, closed
        close_database()  # a file written here is left whole, in one file
    return 0 if code is None else code


if __name__ == "__main__":
    sys.exit(main())
