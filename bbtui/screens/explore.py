"""The Explore screen: the configurations of the database and the running exploration.

The table lists every configuration the database knows with its state;
the input below takes a new one, checked as you type with ``bbcore``'s own
messages.  The app runs the exploration; this screen starts, pauses,
resumes and restarts it, and shows its progress several times a second.
"""

from __future__ import annotations

import time

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Input, Label
from textual.widgets.data_table import RowDoesNotExist

from bbcore.config import Config, parse_config, validation_error
from bbcore.explore import COMPACT_ABOVE
from bbcore.progress import Progress
from bbcore.queries import ConfigState, config_state, config_states
from bbcore.store import COMPACT, DATABASE_ERRORS, FULL, error_line, opened
from bbcore.words import article
from bbtui.host import Host, host, unwatch_app
from bbtui.screens.confirm import ConfirmScreen
from bbtui.widgets.inputs import ConfigValidator, KeyInput
from bbtui.widgets.progress import ExplorationPanel
from bbtui.widgets.tables import fit_columns

COLUMNS = (
    ("config", "configuration"),
    ("molecules", "molecules"),
    ("state", "state"),
    ("store", "store"),
    ("families", "families"),
    ("ambiguous", "spectra"),
)


AUTO = "auto"
STORE_CHOICES = (AUTO, FULL, COMPACT)


def store_line(choice: str) -> str:
    """What the store choice means, on one line."""
    meaning = {
        AUTO: f"full up to {COMPACT_ABOVE:,} molecules, compact above",
        FULL: "a row per molecule",
        COMPACT: "only the spectral groups and the report; molecules computed from their numbers",
    }[choice]
    return f"New runs store: {choice} ({meaning}); c changes it. A run being resumed keeps its store."


INPUT_HINT = (
    "Type AN_BW (A4_B8: 4 atoms in an 8 x 8 box), Enter explores it; escape: the table. "
    "Then g groups, d decode, t statistics, P play, b book, ? every key."
)


READ_ONLY_HINT = (
    "Read-only: type an explored AN_BW, Enter selects it; escape: the table. "
    "Then g groups, d decode, t statistics, P play, b book, ? every key."
)


class ExploreScreen(Screen):
    """Configurations, and the exploration: start, pause, resume, restart."""

    AUTO_FOCUS = ""
    """``on_mount`` chooses: focusing the table would make its first row current."""

    BINDINGS = [
        Binding("s", "start", "Start", tooltip="Start or resume the selected configuration"),
        Binding("p", "pause", "Pause"),
        Binding("r", "restart", "Restart"),
        Binding("n", "new", "New"),
        Binding("c", "store", "Store", tooltip="How a new run stores its result: auto, full or compact"),
        Binding("escape", "leave_input", "Table", show=False),
        # A configuration typed outside the input goes into it (action_type_config); in the
        # input, Textual leaves the key to the input, priority or not.
        Binding("A", "type_config('A')", show=False, priority=True),
        Binding("a", "type_config('a')", show=False, priority=True),
    ]

    def __init__(self) -> None:
        """The screen; the table is filled on mount."""
        super().__init__()
        self.states: dict[str, ConfigState] = {}
        self.store_choice = AUTO
        self.database_error: str | None = None
        """bbcore's line for the file, when the last read of the list failed (a corrupt file)."""

    @property
    def bb_app(self) -> Host:
        """The app, as the screens see it (``bbtui.host``)."""
        return host(self)

    @property
    def table(self) -> DataTable:
        """The configurations table."""
        return self.query_one("#configs", DataTable)

    @property
    def panel(self) -> ExplorationPanel:
        """The exploration panel."""
        return self.query_one(ExplorationPanel)

    def compose(self) -> ComposeResult:
        """Table, input and its message, exploration panel."""
        yield Header()
        with Vertical(id="explore-body"):
            yield Label("Configurations", classes="heading")
            yield DataTable(id="configs", cursor_type="row", zebra_stripes=True)
            yield KeyInput(
                placeholder="New configuration, e.g. A4_B8 (Enter explores it)",
                id="new-config",
                validators=[ConfigValidator()],
            )
            yield Label(INPUT_HINT, id="config-message")
            yield Label(store_line(AUTO), id="store-choice")
            yield ExplorationPanel()
        yield Footer(compact=True)

    def on_mount(self) -> None:
        """Fill the table, select the app's configuration, follow the app's run."""
        self.title = "Explore"
        for key, label in COLUMNS:
            self.table.add_column(label, key=key)
        self.refresh_table()
        config = self.bb_app.config
        new_config = self.query_one("#new-config", Input)
        if config is not None and not self.select(config):
            new_config.value = config.name
        if self.bb_app.read_only:  # nothing is explored: Enter selects an explored one
            new_config.placeholder = "Configuration, e.g. A4_B8 (Enter selects it)"
            if self.database_error is None:
                self.query_one("#config-message", Label).update(READ_ONLY_HINT)
        self.clock = self.set_interval(0.5, self.tick, pause=True)
        self.watch(self.app, "progress", self.progress_changed)
        self.watch(self.app, "exploring", self.exploring_changed)
        # An empty database, or a configuration asked for at launch that it does
        # not hold yet, starts in the input: Enter explores what it shows.
        (self.table if self.table.row_count and not new_config.value else new_config).focus()

    def on_unmount(self) -> None:
        """Closed: drop the watchers of the app, which would keep this screen alive."""
        unwatch_app(self, self)

    # -- the table -------------------------------------------------------------

    def refresh_table(self) -> None:
        """Read every configuration's state from the database."""
        table = self.table
        selected = self.selected
        table.clear()
        try:
            states = config_states()
        except DATABASE_ERRORS as error:  # a corrupt file: the CLI's line, on screen; the app stays up
            self.states = {}
            line = error_line(error, opened.path)
            self.query_one("#config-message", Label).update(line)
            if line != self.database_error:  # read again (a run's end, the watchers' first call): one toast
                self.notify(line, title="Database", severity="error", timeout=30)
            self.database_error = line
            return
        self.states = {state.config.name: state for state in states}
        self.database_error = None
        for state in self.states.values():
            table.add_row(*self.row_cells(state), key=state.config.name)
        fit_columns(table)
        if selected is not None:
            self.select(selected)
        if self.bb_app.exploring is not None:
            self.show_running_state()
        self.refresh_bindings()

    @staticmethod
    def row_cells(state: ConfigState) -> tuple[str, ...]:
        """The table cells of a configuration."""
        groups = f"{state.families:,}" if state.complete else "-"
        ambiguous = f"{state.ambiguous:,}" if state.complete else "-"
        store = state.store if state.done or state.complete else "-"
        return state.config.name, f"{state.total:,}", state.label, store, groups, ambiguous

    @property
    def selected(self) -> Config | None:
        """The configuration under the table's cursor."""
        table = self.table
        if not table.row_count:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return parse_config(key) if key else None

    def select(self, config: Config) -> bool:
        """Put the cursor on ``config``; False if it is not in the table."""
        try:
            row = self.table.get_row_index(config.name)
        except RowDoesNotExist:
            return False
        self.table.move_cursor(row=row)
        return True

    @on(DataTable.RowHighlighted, "#configs")
    def row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """The highlighted configuration becomes the app's current one.

        Only while the table has the focus: filling the table highlights its
        first row, which must not replace a configuration given at launch.
        """
        if self.table.has_focus:
            self.adopt_selected()
        self.tick()
        self.refresh_bindings()

    def adopt_selected(self) -> None:
        """The configuration under the table's cursor becomes the app's current one."""
        if self.selected is not None:
            self.bb_app.config = self.selected

    @on(DataTable.RowSelected, "#configs")
    def row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter: the spectral groups of an explored configuration, else start it."""
        config = self.selected
        if config is None:
            return
        self.adopt_selected()
        if config_state(config).complete:
            self.bb_app.action_groups()
        else:
            self.action_start()

    # -- the input -------------------------------------------------------------

    @on(Input.Changed, "#new-config")
    def config_typed(self, event: Input.Changed) -> None:
        """Say what is wrong with the configuration, or what it is."""
        message = self.query_one("#config-message", Label)
        result = event.validation_result
        if not event.value.strip():
            message.update(READ_ONLY_HINT if self.bb_app.read_only else INPUT_HINT)
        elif result is not None and not result.is_valid:
            message.update(result.failure_descriptions[0])
        else:
            config = parse_config(event.value)
            state = config_state(config)
            refused = None if state.complete else self.bb_app.exploration_refusal(config)
            if refused:
                message.update(refused)
                message.add_class("error")
                return
            known = f" ({state.label})" if state.done or state.complete else ""
            if state.complete:
                enter = "Enter selects it, g opens its groups"
            elif self.bb_app.read_only:
                enter = "Read-only: it is not explored here"
            else:
                enter = "Enter explores it"
            message.update(
                f"{config}{known}: {config.nb_mol:,} molecules, {config.atoms} atoms in "
                f"{article(f'{config.width} x {config.width} box')}. {enter}."
            )
        message.set_class(result is not None and not result.is_valid, "error")

    @on(Input.Submitted, "#new-config")
    def config_submitted(self, event: Input.Submitted) -> None:
        """Enter on a valid configuration explores it."""
        if not event.value.strip():
            self.table.focus()
            return
        error = validation_error(event.value)
        if error:
            self.notify(error, severity="error")
            return
        config = parse_config(event.value)
        refused = None if config_state(config).complete else self.bb_app.exploration_refusal(config)
        if refused:
            self.notify(refused, title="Exploration", severity="error", timeout=15)
            return  # the input keeps the configuration, and its message says why
        event.input.value = ""
        self.table.focus()
        self.start(config)

    def on_key(self, event: events.Key) -> None:
        """In a read-only file, the exploration keys (dimmed) say why they are off; ``p``
        with nothing running says so, rather than nothing."""
        if isinstance(self.focused, Input):
            return
        if self.bb_app.read_only and event.key in ("s", "r"):
            event.stop()
            self.bb_app.refuse_read_only()
        elif event.key == "p" and self.bb_app.exploring is None:
            event.stop()
            self.notify(f"Nothing to pause: no exploration is running. {self.idle_note()}", title="Pause")

    @property
    def chosen_store(self) -> str | None:
        """The store a new run asks for (None: bbcore's default for its size)."""
        return None if self.store_choice == AUTO else self.store_choice

    def action_store(self) -> None:
        """Cycle the store of new runs: auto, full, compact."""
        self.store_choice = STORE_CHOICES[(STORE_CHOICES.index(self.store_choice) + 1) % len(STORE_CHOICES)]
        self.query_one("#store-choice", Label).update(store_line(self.store_choice))

    def action_new(self) -> None:
        """Type a new configuration."""
        self.query_one("#new-config", Input).focus()

    def action_type_config(self, key: str) -> None:
        """``A`` outside the input: a configuration is being typed; the input takes it.

        Enter in the input starts the run and hands the focus to the table
        (where ``p`` pauses it), and nothing gave it back: the next
        configuration typed, right after the run or later, went to the table,
        which ignores letters and digits, and its Enter opened the finished
        configuration's groups instead.  Every configuration starts with
        ``A``, no other key of this screen or of the app's.  A priority
        binding runs as the app reads the key, before it hands the keys read
        with it to the focused widget (a browser's terminal sends a typed word
        at once), so the focus moves now (``set_focus``), the characters after
        it land in the input, and the ``A`` is handed to the input to type
        after its focus (which selects what it held: the new configuration
        replaces it).
        """
        new_config = self.query_one("#new-config", Input)
        self.set_focus(new_config)
        new_config.post_message(events.Key(key, key))

    def action_leave_input(self) -> None:
        """Escape from the input back to the table."""
        self.table.focus()

    # -- the exploration -------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Show only the exploration keys that apply now (none in a read-only file)."""
        if self.bb_app.read_only and action in ("start", "pause", "restart"):
            return None  # shown dimmed: off (the header says why)
        exploring = self.bb_app.exploring
        if action == "pause":  # not once the run reported complete (it only closes its workers)
            progress = self.bb_app.progress
            return exploring is not None and not (
                progress is not None and progress.phase == "complete" and progress.config == exploring.name
            )
        selected = self.selected
        state = self.states.get(selected.name) if selected is not None else None
        if action == "start":
            return exploring is None and state is not None and not state.complete
        if action == "restart":
            return exploring is None and state is not None and (state.done > 0 or state.complete)
        return True

    def action_start(self) -> None:
        """Start or resume the selected configuration."""
        config = self.selected
        if config is not None:
            self.start(config)

    def start(self, config: Config) -> None:
        """Start or resume ``config``; an explored one opens its groups instead."""
        if config_state(config).complete:
            self.select(config)
            self.bb_app.config = config
            self.bb_app.offer_groups(config)
            return
        self.bb_app.start_exploration(config, store=self.chosen_store)

    def action_pause(self) -> None:
        """Pause the run (its progress is kept; s resumes)."""
        app = self.bb_app
        app.pause_exploration()
        if app.exploring is None:
            return
        if app.progress is not None and app.progress.phase == "deleting":
            note = f"{app.exploring}: deleting its rows, then stopping (the run will not start)..."
        else:
            note = f"{app.exploring}: pausing..."
        self.panel.show(app.progress, running=True, note=note)

    def action_restart(self) -> None:
        """Delete the selected configuration's rows and explore it again, after a confirmation."""
        config = self.selected
        if config is None:
            return
        state = config_state(config)
        question = (
            f"Restart {config}? The {state.done:,} molecules stored and its spectral "
            f"groups are deleted, then the exploration starts from scratch."
        )

        def answered(yes: bool | None) -> None:
            if yes:
                self.bb_app.start_exploration(config, restart=True, store=self.chosen_store)

        self.app.push_screen(ConfirmScreen(question, yes="Restart", no="Cancel"), answered)

    def progress_changed(self, progress: Progress | None) -> None:
        """A new report: the panel, and the running configuration's row."""
        self.tick()
        if progress is None:
            return
        if progress.phase == "complete":
            self.refresh_bindings()  # nothing left to pause: p goes from the footer
        if progress.config not in {key.value for key in self.table.rows}:
            self.refresh_table()
            exploring = self.bb_app.exploring
            if exploring is not None and exploring.name == progress.config:
                self.select(exploring)  # a new row: the cursor on the run, where s and p apply
        self.show_running_state()

    def tick(self) -> None:
        """Redraw the panel; between reports the clock and the ETA keep moving."""
        app = self.bb_app
        if app.stop_event.is_set() and app.exploring is not None:
            return  # "pausing..." stays until the run stops
        if app.exploring is None and app.progress is None:
            selected = self.selected
            state = self.states.get(selected.name) if selected is not None else None
            self.panel.show(
                None,
                running=False,
                note=self.idle_note(),
                stored=(state.done, state.total) if state else None,
            )
            return
        note = ""
        if app.exploring is None and app.last_error and app.progress is not None:
            note = f"{app.progress.config} stopped: {app.last_error}"
        elif app.exploring is None and app.progress is not None and app.progress.phase == "complete":
            note = app.explored_note or ""
        self.panel.show(
            app.progress,
            running=app.exploring is not None,
            note=note,
            since=time.monotonic() - app.progress_at,
            meter=app.meter,
            loading=app.loading,
        )

    def idle_note(self) -> str:
        """What the panel says when nothing runs: where the selected configuration stands."""
        selected = self.selected
        state = self.states.get(selected.name) if selected is not None else None
        if state is None:
            return ""
        if self.bb_app.read_only and not state.complete:
            return f"{state.config}: {state.done:,} of {state.total:,} stored; the file is read-only."
        if state.complete:
            note = self.bb_app.explored_note
            if note and note.startswith(f"{state.config} "):
                return note  # the run just finished: its figures
            return f"{state.config} is explored: Enter or g opens its spectral groups."
        if state.done:
            return f"{state.config}: {state.done:,} of {state.total:,} molecules stored; s resumes."
        return f"{state.config} is not explored yet: s starts it."

    def show_running_state(self) -> None:
        """The running configuration's state cell, from the latest report."""
        progress = self.bb_app.progress
        if progress is None or progress.config not in {key.value for key in self.table.rows}:
            return
        if progress.phase == "complete":
            return  # the table is read again when the run ends
        cells = {
            "state": "deleting..." if progress.phase == "deleting" else f"{100 * progress.fraction:.1f}%",
            # Known only once complete: not the counts of a run being replaced.
            "families": "-",
            "ambiguous": "-",
        }
        changed = False
        for column, label in cells.items():
            if self.table.get_cell(progress.config, column) != label:
                self.table.update_cell(progress.config, column, label)
                changed = True
        if changed:
            fit_columns(self.table)

    def exploring_changed(self, exploring: Config | None) -> None:
        """A run started or ended."""
        if exploring is None:
            self.clock.pause()
            self.refresh_table()
            # The cursor on the run that ended: "s resumes", said in its message, works here.
            progress = self.bb_app.progress
            if progress is not None and progress.config in self.states:
                self.select(self.states[progress.config].config)
            self.tick()
        else:
            self.clock.resume()
            self.select(exploring)
            self.panel.show(None, running=True, note=f"{exploring}: starting...")
        self.refresh_bindings()
