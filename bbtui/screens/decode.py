"""The Decode screen: which molecules give a spectrum.

Type a configuration and a spectrum in the spec's notation (``@`` absorbed,
``&`` reflected, a letter at both ends of each ray that came out; letters
need not be normalised) or the traditional one (``H``, ``R``, labels).  The
input is checked as you type with ``bbcore.decode``'s messages.  A full
spectrum decodes to no molecule, one (unique) or several (ambiguous, shown
side by side); a partial one (``.`` for a ray not shot) lists every
molecule that agrees.

The candidates come from the store when the configuration is explored, and
are computed otherwise, in a thread worker that can be interrupted.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, cast

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, Label, ProgressBar

from bbcore.config import Config, parse_config, validation_error
from bbcore.decode import DecodeCancelled, DecodeError, Game, candidates, parse_game
from bbcore.queries import config_state, molecule_record
from bbcore.render import differing_atoms
from bbtui.messages import DecodeFinished, DecodeProgress
from bbtui.widgets.board import Board, BoardGrid, record_board
from bbtui.widgets.inputs import ConfigBoundValidator, ConfigValidator
from bbtui.widgets.stats_table import StatsTable

if TYPE_CHECKING:
    from bbtui.app import BlackBoxApp

SHOWN = 24
"""The most candidate boards drawn at once."""


class GameValidator(ConfigBoundValidator):
    """A game (a spectrum, full or partial) of a configuration, with bbcore's messages."""

    def check(self, config: Config, value: str) -> None:
        """The value must parse as a game of the configuration."""
        parse_game(value, config)


class DecodeScreen(Screen):
    """Type a spectrum, see the molecules that give it."""

    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("slash", "edit", "Spectrum", key_display="/"),
        Binding("o", "open_molecule", "Molecule"),
    ]

    def __init__(self, config: Config | None = None, spectrum: str = "") -> None:
        """Decode ``spectrum`` of ``config`` (default: the app's configuration)."""
        super().__init__()
        # The input to type in gets the focus as soon as the screen is composed.
        self.AUTO_FOCUS = "#decode-spectrum" if config is not None else "#decode-config"
        self.config = config
        self.initial = spectrum
        self.stop = threading.Event()
        self.shown_numbers: list[int] = []

    @property
    def bb_app(self) -> BlackBoxApp:
        """The app, typed."""
        return cast("BlackBoxApp", self.app)

    @property
    def spectrum_input(self) -> Input:
        """The spectrum input."""
        return self.query_one("#decode-spectrum", Input)

    def compose(self) -> ComposeResult:
        """Inputs, message, result."""
        yield Header()
        with Horizontal(id="decode-inputs", classes="inputs"):
            yield Input(placeholder="A4_B8", id="decode-config", validators=[ConfigValidator()],
                        classes="config-input")
            yield Input(placeholder="spectrum: @ & and letters, or H R and labels; . not shot",
                        id="decode-spectrum", validators=[GameValidator(None)])
        yield Label("", id="decode-message", classes="message")
        yield ProgressBar(total=1, show_eta=False, id="decode-progress")
        yield Label("", id="decode-result", classes="heading")
        with VerticalScroll(id="decode-body"):
            yield BoardGrid(id="decode-boards")
            yield StatsTable(id="decode-stats")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        """Start from the app's configuration."""
        self.title = "Decode a spectrum"
        self.query_one("#decode-progress").display = False
        self.config = self.config or self.bb_app.config
        if self.config is not None:
            self.query_one("#decode-config", Input).value = self.config.name
            self.spectrum_input.validators = [GameValidator(self.config)]
            self.spectrum_input.focus()
            if self.initial:
                self.spectrum_input.value = self.initial
                self.decode(self.initial)
        else:
            self.query_one("#decode-config", Input).focus()
        self.hint()

    def hint(self) -> None:
        """What to type."""
        if self.config is None:
            self.say("Choose a configuration (AN_BW, e.g. A4_B8), then type a spectrum.")
        else:
            self.say(f"{self.config}: type {self.config.positions} results, position 1 first "
                     f"(? explains the notation), then Enter.")

    def say(self, text: str, *, error: bool = False) -> None:
        """The line under the inputs."""
        message = self.query_one("#decode-message", Label)
        message.update(text)
        message.set_class(error, "error")

    # -- inputs ----------------------------------------------------------------

    @on(Input.Changed, "#decode-config")
    def config_typed(self, event: Input.Changed) -> None:
        """A valid configuration is taken at once; the spectrum is checked against it."""
        error = validation_error(event.value) if event.value.strip() else None
        if error:
            self.say(error, error=True)
            return
        if not event.value.strip():
            return
        self.config = parse_config(event.value)
        self.spectrum_input.validators = [GameValidator(self.config)]
        self.spectrum_input.validate(self.spectrum_input.value)
        self.check_spectrum(self.spectrum_input.value)

    @on(Input.Submitted, "#decode-config")
    def config_submitted(self) -> None:
        """On to the spectrum."""
        self.spectrum_input.focus()

    @on(Input.Changed, "#decode-spectrum")
    def spectrum_typed(self, event: Input.Changed) -> None:
        """Check the spectrum as it is typed."""
        self.check_spectrum(event.value)

    def check_spectrum(self, text: str) -> None:
        """Say exactly what is wrong, or what the spectrum reads as."""
        if self.config is None:
            self.say("Choose a configuration first.", error=True)
            return
        if not text.strip():
            self.hint()
            return
        try:
            game = parse_game(text, self.config)
        except DecodeError as error:
            self.say(str(error), error=True)
            return
        if game.complete:
            self.say(f"Full spectrum, normalised {game.pattern()}: Enter decodes it.")
        else:
            self.say(f"{len(game.shown)} of {game.positions} positions shown "
                     f"(a full spectrum has all {game.positions}): Enter lists the molecules that agree.")

    @on(Input.Submitted, "#decode-spectrum")
    def spectrum_submitted(self, event: Input.Submitted) -> None:
        """Enter decodes."""
        self.decode(event.value)

    def decode(self, text: str) -> None:
        """Parse ``text`` and start the decode worker."""
        if self.config is None:
            self.say("Choose a configuration first.", error=True)
            return
        try:
            game = parse_game(text, self.config)
        except DecodeError as error:
            self.say(str(error), error=True)
            return
        if not game.shown:
            self.say("Type at least one result: with no ray shot, every molecule agrees.", error=True)
            return
        self.stop.set()
        self.stop = threading.Event()
        explored = config_state(self.config).complete
        if not explored:
            self.say(f"{self.config} is not explored: computing every molecule's rays "
                     f"(explore it for instant answers)...")
            bar = self.query_one("#decode-progress", ProgressBar)
            bar.update(total=self.config.nb_mol, progress=0)
            bar.display = True
        self.run_decode(self.config, game, "store" if explored else "compute", self.stop)

    @work(thread=True, exclusive=True, group="decode")
    def run_decode(self, config: Config, game: Game, source: str, stop: threading.Event) -> None:
        """Find the candidates in a thread (the database side is per-thread in peewee)."""
        try:
            found = candidates(config, game, source=source, stop=stop,  # type: ignore[arg-type]
                               progress=lambda done, total: self.post_message(DecodeProgress(done, total)))
        except DecodeCancelled:
            return
        except DecodeError as error:
            self.post_message(DecodeFinished(game, None, str(error)))
            return
        self.post_message(DecodeFinished(game, found))

    def on_decode_progress(self, message: DecodeProgress) -> None:
        """Move the bar."""
        self.query_one("#decode-progress", ProgressBar).update(total=message.total, progress=message.done)

    async def on_decode_finished(self, message: DecodeFinished) -> None:
        """Show the molecules found."""
        self.query_one("#decode-progress").display = False
        found = message.candidates
        if found is None or self.config is None:
            self.say(message.error or "decoding failed", error=True)
            return
        game = message.game
        result = self.query_one("#decode-result", Label)
        count = found.count
        if count == 0:
            result.update("No molecule gives this spectrum." if game.complete
                          else "No molecule agrees with these rays.")
        elif count == 1:
            result.update("Unique: one molecule gives this spectrum." if game.complete
                          else "One molecule agrees with these rays.")
        else:
            more = f" (the first {SHOWN} shown)" if count > SHOWN else ""
            result.update(f"Ambiguous: {count:,} molecules give this spectrum{more}." if game.complete
                          else f"{count:,} molecules agree with these rays{more}.")
        numbers = [number for number, _ in found.molecules(SHOWN)]
        records = [molecule_record(self.config, number) for number in numbers]
        self.shown_numbers = numbers
        labels = game.pattern(" ")
        marked = differing_atoms([r.molecule for r in records]) if len(records) > 1 else set()
        boards = [record_board(r, marked, labels) for r in records]
        await self.query_one("#decode-boards", BoardGrid).show(boards)
        self.query_one("#decode-stats", StatsTable).show(records if game.complete else [])
        source = "from the store" if found.source == "store" else "computed"
        self.say(f"{game.pattern()}: {count:,} molecule{'s' * (count != 1)} ({source}).")
        if boards:
            boards[0].focus()
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Open a molecule only when some are shown."""
        if action == "open_molecule":
            return bool(self.shown_numbers)
        return True

    def action_edit(self) -> None:
        """Back to the spectrum input."""
        self.spectrum_input.focus()

    def action_open_molecule(self) -> None:
        """The Molecule screen of the focused board."""
        focused = self.focused
        grid = self.query_one("#decode-boards", BoardGrid)
        if isinstance(focused, Board) and focused in grid.children and self.config is not None:
            number = self.shown_numbers[list(grid.children).index(focused)]
            self.bb_app.open_molecule(self.config, number)

    def action_back(self) -> None:
        """Escape leaves an input first (when there is a result), then the screen."""
        boards = self.query(Board)
        if isinstance(self.focused, Input) and boards:
            boards.first().focus()
        else:
            self.stop.set()
            self.app.pop_screen()
