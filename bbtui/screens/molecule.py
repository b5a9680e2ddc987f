"""The Molecule screen: one molecule by number, its spectrum, statistics and enantiomers.

A molecule is read from the store when its configuration is explored, and
computed by ``bbcore`` otherwise.  Its enantiomer group (its images under
the 8 symmetries of the square) is shown as boards below it.
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, Label

from bbcore.config import Config, parse_config, validation_error
from bbcore.queries import MoleculeRecord, config_state, enantiomers, molecule_record, molecules_with_spectrum
from bbtui.host import Host, host
from bbtui.widgets.board import Board, BoardGrid, record_board
from bbtui.widgets.inputs import ConfigValidator, KeyInput, MoleculeValidator, molecule_number
from bbtui.widgets.stats_table import StatsTable


class MoleculeScreen(Screen):
    """Jump to a molecule: board, spectrum, statistics, enantiomer group."""

    BINDINGS = [
        Binding("escape", "back", "Back", show=False),
        # Short descriptions: with a spectral group, every key and ? Help fit 80 columns.
        Binding("n", "step(1)", "Next", group=Binding.Group("Step")),
        Binding("p", "step(-1)", "Previous", group=Binding.Group("Step")),
        Binding("c", "canonical", "Canonical"),
        Binding("o", "open_enantiomer", "Open"),
        Binding("s", "spectral_group", "Group"),
        Binding("slash", "edit", "Jump", key_display="/"),
    ]

    def __init__(self, config: Config | None = None, number: int | None = None) -> None:
        """Molecule ``number`` of ``config`` (default: the app's configuration, nothing shown)."""
        super().__init__()
        # The input to type in gets the focus as soon as the screen is composed.
        self.AUTO_FOCUS = "#molecule-number" if config is not None else "#molecule-config"
        self.config = config
        self.number = number
        self.record: MoleculeRecord | None = None
        self.sharing = 0  # molecules with the same spectrum (stored configurations only)
        self.enantiomer_numbers: list[int] = []

    @property
    def bb_app(self) -> Host:
        """The app, as the screens see it (``bbtui.host``)."""
        return host(self)

    def compose(self) -> ComposeResult:
        """Inputs, then the molecule and its enantiomers."""
        yield Header()
        with Horizontal(id="molecule-inputs", classes="inputs"):
            yield KeyInput(
                placeholder="A4_B8",
                id="molecule-config",
                validators=[ConfigValidator()],
                classes="config-input",
            )
            yield KeyInput(
                placeholder="number, or the molecule as O and -",
                id="molecule-number",
                validators=[MoleculeValidator(None)],
            )
        yield Label("", id="molecule-message", classes="message")
        with VerticalScroll(id="molecule-body"):
            with Horizontal(id="molecule-main"):
                yield Vertical(id="molecule-board")
                yield Label("", id="molecule-about")
            yield StatsTable(id="molecule-stats")
            yield Label("", id="enantiomers-title", classes="heading")
            yield BoardGrid(id="enantiomers")
        yield Footer(compact=True)

    async def on_mount(self) -> None:
        """Start from the app's configuration, on the molecule asked for if any."""
        self.title = "Molecule"
        self.config = self.config or self.bb_app.config
        number_input = self.query_one("#molecule-number", Input)
        if self.config is not None:
            self.query_one("#molecule-config", Input).value = self.config.name
            number_input.validators = [MoleculeValidator(self.config)]
        if self.config is not None and self.number is not None:
            await self.show_molecule(self.number)
        elif self.config is None:
            self.query_one("#molecule-config", Input).focus()
        else:
            number_input.focus()
        self.refresh_bindings()

    # -- inputs ----------------------------------------------------------------

    @on(Input.Changed, "#molecule-config")
    def config_typed(self, event: Input.Changed) -> None:
        """A valid configuration is taken at once; the number is checked against it."""
        message = self.query_one("#molecule-message", Label)
        error = validation_error(event.value) if event.value.strip() else None
        if error:
            self.say(error, error=True)
            return
        if event.value.strip():
            config = parse_config(event.value)
            if config != self.config:
                self.config = config
                self.number = None
            number = self.query_one("#molecule-number", Input)
            number.validators = [MoleculeValidator(config)]
            number.validate(number.value)
            message.update(f"{config}: molecules 1..{config.nb_mol:,}")
            message.set_class(False, "error")

    @on(Input.Submitted, "#molecule-config")
    def config_submitted(self) -> None:
        """On to the number."""
        self.query_one("#molecule-number", Input).focus()

    @on(Input.Changed, "#molecule-number")
    def number_typed(self, event: Input.Changed) -> None:
        """Say what is wrong with the number as it is typed."""
        result = event.validation_result
        if result is not None and not result.is_valid:
            self.say(result.failure_descriptions[0], error=True)
        elif self.config is not None:
            self.say(f"{self.config}: molecules 1..{self.config.nb_mol:,} (Enter shows it)")

    @on(Input.Submitted, "#molecule-number")
    async def number_submitted(self, event: Input.Submitted) -> None:
        """Enter shows the molecule."""
        if self.config is None:
            self.say("choose a configuration first", error=True)
            return
        try:
            number = molecule_number(self.config, event.value)
        except ValueError as error:
            self.say(str(error), error=True)
            return
        await self.show_molecule(number)

    def say(self, text: str, *, error: bool = False) -> None:
        """A line under the inputs."""
        message = self.query_one("#molecule-message", Label)
        message.update(text)
        message.set_class(error, "error")

    # -- the molecule ----------------------------------------------------------

    async def show_molecule(self, number: int) -> None:
        """Draw molecule ``number`` of the current configuration."""
        config = self.config
        assert config is not None
        self.number = number
        self.record = record = molecule_record(config, number)
        self.query_one("#molecule-number", Input).value = str(number)
        explored = config_state(config).complete
        self.sharing = len(molecules_with_spectrum(config, record.spectrum)) if explored else 0
        if not explored:
            ambiguity = f"explore {config} to see which molecules share this spectrum"
        elif self.sharing > 1:
            ambiguity = f"ambiguous: {self.sharing} molecules give this spectrum (s shows them side by side)"
        else:
            ambiguity = "unique: no other molecule gives this spectrum"
        self.query_one("#molecule-about", Label).update(
            f"{config} molecule #{number:,}\n"
            f"canonical #{record.canonical_number:,}, transform {record.transform}\n"
            f"spectrum {record.spectrum}\n{ambiguity}"
        )
        holder = self.query_one("#molecule-board", Vertical)
        await holder.remove_children()
        board = record_board(record)
        await holder.mount(board)
        self.query_one("#molecule-stats", StatsTable).show([record])
        images = enantiomers(config, number)
        self.enantiomer_numbers = [image.number for image in images]
        self.query_one("#enantiomers-title", Label).update(
            f"Enantiomer group: {len(images)} molecule{'s' * (len(images) > 1)} "
            f"(the images of #{record.canonical_number:,} under the 8 symmetries)"
        )
        await self.query_one("#enantiomers", BoardGrid).show([record_board(image) for image in images])
        board.focus()
        self.say(f"{config}: molecule {number:,} of {config.nb_mol:,}")
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Molecule keys only once a molecule is shown; ``/`` (to the number input) from
        anywhere else (the inputs never type it)."""
        if action == "edit":
            return self.focused is not self.query_one("#molecule-number")
        if action in ("step", "canonical", "open_enantiomer"):
            return self.record is not None
        if action == "spectral_group":
            return self.sharing > 1
        return True

    async def action_step(self, step: int) -> None:
        """The next (1) or previous (-1) molecule by number."""
        if self.config is not None and self.number is not None:
            target = self.number + step
            if 1 <= target <= self.config.nb_mol:
                await self.show_molecule(target)

    async def action_canonical(self) -> None:
        """The canonical molecule of the enantiomer group."""
        if self.record is not None:
            await self.show_molecule(self.record.canonical_number)

    async def action_open_enantiomer(self) -> None:
        """Show the enantiomer whose board is focused."""
        focused = self.focused
        grid = self.query_one("#enantiomers", BoardGrid)
        if isinstance(focused, Board) and focused in grid.children:
            await self.show_molecule(self.enantiomer_numbers[list(grid.children).index(focused)])

    def action_spectral_group(self) -> None:
        """The molecules sharing this spectrum, side by side."""
        if self.record is not None and self.config is not None and self.sharing > 1:
            self.bb_app.open_group(self.config, self.record.spectrum)

    def action_edit(self) -> None:
        """Type another number."""
        self.query_one("#molecule-number", Input).focus()

    def action_back(self) -> None:
        """Escape leaves an input first, then the screen."""
        if isinstance(self.focused, Input) and self.record is not None:
            self.query_one(Board).focus()
        else:
            self.app.pop_screen()
