"""The Decode screen: a player's assistant.

Write a game and see which molecules agree with it, where the atoms may be,
and where to shoot next.

- The game: type it in the game input in any of ``bbcore.decode``'s
  notations (``@``/``H`` absorbed, ``&``/``R`` reflected, a label at both
  ends of an exit, ``.`` not shot; whitespace-separated tokens for
  multi-digit labels), checked as you type, Enter decodes; or paste a board
  diagram (the spec's style or Emacs'); or build it on the game board
  (``bbtui.widgets.game_board``): the arrow keys move a cursor round the box
  and typing writes that position's result.
- The game board's box is the heat map of the atom probabilities; beside it,
  the five best next shots with their figures, ranked by expected candidates
  left (the sum of n^2/N) or by expected information (bits), ``ctrl+r``
  switching; when no ray left can split the candidates, the game is
  ambiguous and the atoms in doubt are named.
- Below, the candidates a page at a time (``<`` ``>``, or ``n`` ``p`` on a
  candidate), each with the game's labels round it and the shown rays drawn
  (not a full spectrum's, which would cover the box; ``ctrl+t`` switches);
  the cursor of any board draws its ray on every candidate.
- A guess (a molecule number or string, or the atoms drawn in a pasted
  diagram) is checked against the shown rays.

Every change of the game decodes again in a thread worker, which the next
change cancels (its ``cancelled_event`` goes to the decode).  The screen
only displays: a ``bbcore.decoder.Decoder`` chooses the source (a full
spectrum from the store when the configuration is explored, a partial game
computed, which is faster), narrows an earlier game's candidates when the
new game only adds rays, and keeps the last answers, so that erasing a
result shows the previous answer at once; its sentences are bbcore's too.
"""

from __future__ import annotations

from typing import cast

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, Label, ProgressBar
from textual.worker import get_current_worker

from bbcore.config import Config, parse_config, validation_error
from bbcore.decode import BATCH, Candidates, DecodeCancelled, check_guess
from bbcore.decoder import Answer, Decoder, count_sentence, source_phrase
from bbcore.game import DecodeError, Game, labels_text, parse_game, parse_guess
from bbcore.queries import molecule_record
from bbcore.shots import Ranking, ambiguity, doubtful_cells
from bbcore.words import plural
from bbtui.host import Host, host
from bbtui.messages import DecodeFinished, DecodeProgress
from bbtui.widgets.board import Board, BoardGrid, RaySelected, record_board
from bbtui.widgets.game_board import DraftChanged, DraftRefused, GameBoard, shots_text
from bbtui.widgets.inputs import ConfigBoundValidator, ConfigValidator, GameInput, GamePasted, KeyInput
from bbtui.widgets.message import MessageLine
from bbtui.widgets.stats_table import StatsTable

PAGE = 24
"""Candidate boards drawn at once."""


class GameValidator(ConfigBoundValidator):
    """A game (a spectrum, full or partial) of a configuration, with bbcore's messages."""

    def check(self, config: Config, value: str) -> None:
        """The value must parse as a game of the configuration."""
        parse_game(value, config)


class GuessValidator(ConfigBoundValidator):
    """A guessed molecule of a configuration: its number or its string."""

    def check(self, config: Config, value: str) -> None:
        """The value must be a molecule of the configuration."""
        parse_guess(value, config)


class DecodeScreen(Screen):
    """Write a game, see the molecules that agree, the atom heat map and the best next shots."""

    # Esc steps out one level, and the footer says where to: from an input to the
    # game board, from the board (where letters and digits write labels) to the
    # screen's keys (every letter a key: P plays, g groups...), from there back.
    BINDINGS = [
        Binding("escape", "to_board", "Board", key_display="esc"),
        Binding("escape", "to_keys", "Keys", key_display="esc"),
        Binding("escape", "back", "Back", key_display="esc"),
        Binding("slash", "edit", "Game", key_display="/"),
        Binding("ctrl+r", "ranking", "Rank"),
        Binding("ctrl+t", "shown_rays", "Rays", show=False),  # the candidates' heading says it
        Binding("less_than_sign", "page(-1)", "Page", key_display="<", group=Binding.Group("Page")),
        Binding("greater_than_sign", "page(1)", "Page", key_display=">", group=Binding.Group("Page")),
        Binding("p", "page(-1)", "Previous page", show=False),
        Binding("n", "page(1)", "Next page", show=False),
        Binding("o", "open_molecule", "Molecule"),
        # ? types a position not shot in the game input: there, F1 is the help's key.
        Binding("f1", "help", "Help", key_display="F1"),
    ]

    def __init__(self, config: Config | None = None, spectrum: str = "") -> None:
        """Decode ``spectrum`` (any notation) of ``config`` (default: the app's configuration)."""
        super().__init__()
        # The input to type in gets the focus as soon as the screen is composed.
        self.AUTO_FOCUS = "#decode-spectrum" if config is not None else "#decode-config"
        self.config = config
        self.initial = spectrum
        self.decoder: Decoder | None = None  # the configuration's, with its kept answers
        self.game: Game | None = None  # the game last written, maybe not decoded yet
        self.answer: Answer | None = None  # the answer shown
        self.ranking: Ranking = "remaining"
        self.page = 0
        self.guess: tuple[int, ...] | None = None
        self.shown_numbers: list[int] = []
        self.bindings_state: tuple[bool | None, ...] = ()
        # Draw the shown rays on the candidates: None follows the game (not for a full
        # spectrum, whose 4W rays would cover the box), ctrl+t decides.
        self.draw_shown: bool | None = None

    @property
    def bb_app(self) -> Host:
        """The app, as the screens see it (``bbtui.host``)."""
        return host(self)

    @property
    def spectrum_input(self) -> Input:
        """The game input."""
        return self.query_one("#decode-spectrum", Input)

    @property
    def game_board(self) -> GameBoard | None:
        """The game board of the configuration, once one is chosen."""
        boards = self.query(GameBoard)
        return boards.first() if boards else None

    @property
    def found(self) -> Candidates | None:
        """The candidates shown."""
        return self.answer.found if self.answer else None

    def compose(self) -> ComposeResult:
        """Inputs, message; the game board beside the next shots; the candidates."""
        yield Header()
        with Horizontal(id="decode-inputs", classes="inputs"):
            yield KeyInput(
                placeholder="A4_B8",
                id="decode-config",
                validators=[ConfigValidator()],
                classes="config-input",
            )
            yield GameInput(
                placeholder="game: H, R, labels; . not shot",
                id="decode-spectrum",
                validators=[GameValidator(None)],
            )
            yield KeyInput(
                placeholder="guess: number or O/-", id="decode-guess", validators=[GuessValidator(None)]
            )
        yield MessageLine(id="decode-message")
        yield ProgressBar(total=1, show_eta=False, id="decode-progress")
        # Not a focus stop of its own: Tab goes config, game, guess, board, candidates.
        with VerticalScroll(id="decode-body", can_focus=False):
            with Horizontal(id="decode-top"):
                yield Vertical(id="decode-game")
                with Vertical(id="decode-side"):
                    yield Label("", id="decode-result", classes="heading")
                    yield Label("", id="decode-shots")
                    yield Label("", id="decode-verdict", classes="message")
            yield Label("", id="decode-page", classes="heading")
            yield BoardGrid(id="decode-boards")
            yield StatsTable(id="decode-stats")
        yield Footer(compact=True)

    async def on_mount(self) -> None:
        """Start from the app's configuration: no ray shot, or the game asked for."""
        self.title = "Decode a game"
        self.query_one("#decode-progress").display = False
        config = self.config or self.bb_app.config
        if config is None:
            self.say("Choose a configuration (AN_BW, e.g. A4_B8), then write a game.")
            return
        self.query_one("#decode-config", Input).value = config.name
        await self.set_config(config)
        if self.initial:
            self.spectrum_input.value = self.initial
            self.read_game(self.initial)

    async def set_config(self, config: Config) -> None:
        """Work on ``config``: a fresh game board, no ray shot (decoded at once)."""
        self.config = config
        self.spectrum_input.validators = [GameValidator(config)]
        self.spectrum_input.validate(self.spectrum_input.value)
        guess_input = self.query_one("#decode-guess", Input)
        guess_input.validators = [GuessValidator(config)]
        guess_input.validate(guess_input.value)
        self.guess = self.guess_of(guess_input.value)
        self.decoder = Decoder(config)
        self.answer = None
        slot = self.query_one("#decode-game", Vertical)
        await slot.remove_children()
        await slot.mount(GameBoard(config))
        # Room for the board with two-digit labels and a narrow side: a box too wide for the
        # screen (30 x 30 at 80 columns) scrolls sideways rather than being cut.
        self.query_one("#decode-top").styles.min_width = (config.width + 2) * 3 + 3 + DECODE_SIDE
        # The game input mirrors the board: a game written for another box goes.
        text = self.spectrum_input.value
        if text.strip() and self.spectrum_input.is_valid:
            self.read_game(text)
            return
        self.spectrum_input.value = ""
        self.decode(Game.empty(config.width, config.height))

    def say(self, text: str, *, error: bool = False) -> None:
        """The line under the inputs (``MessageLine``): an error stays only until the next valid action."""
        self.query_one("#decode-message", MessageLine).say(text, error=error)

    def clear_error(self) -> None:
        """A valid action: an error said before is no longer true."""
        self.query_one("#decode-message", MessageLine).clear_error()

    # -- the inputs --------------------------------------------------------------

    @on(Input.Changed, "#decode-config")
    async def config_typed(self, event: Input.Changed) -> None:
        """A valid configuration is taken at once."""
        if not event.value.strip():
            return
        error = validation_error(event.value)
        if error:
            self.say(error, error=True)
            return
        config = parse_config(event.value)
        if config != self.config or self.game_board is None:
            await self.set_config(config)
        else:  # typed back to the configuration shown: an error said on the way is gone
            self.clear_error()

    @on(Input.Submitted, "#decode-config")
    def config_submitted(self) -> None:
        """On to the game."""
        self.spectrum_input.focus()

    @on(Input.Changed, "#decode-spectrum")
    def spectrum_typed(self, event: Input.Changed) -> None:
        """Say what the game reads as, or exactly what is wrong (not for the board's own echo)."""
        board = self.game_board
        if board is not None and event.value == labels_text(board.game.labels) and event.value:
            return
        self.check_spectrum(event.value)

    def check_spectrum(self, text: str) -> None:
        """Say exactly what is wrong, or what the game reads as."""
        if self.config is None:
            self.say("Choose a configuration first.", error=True)
            return
        if not text.strip():
            self.say(
                f"{self.config}: type {self.config.positions} results, position 1 first "
                f"(F1 explains the notation), then Enter; or write them on the board."
            )
            return
        try:
            game = parse_game(text, self.config)
        except DecodeError as error:
            self.say(str(error), error=True)
            self.show_stale()
            return
        if game.complete:
            self.say(f"Full spectrum, normalised {game.pattern()}: Enter decodes it.")
        else:
            self.say(
                f"{len(game.shown)} of {game.positions} positions shown: Enter lists the "
                f"molecules that agree."
            )

    def show_stale(self) -> None:
        """The game typed does not parse: the answer below is the last valid game's, and
        says so (never shown as if it answered the game typed)."""
        if self.answer is None:
            return
        shown = labels_text(self.answer.game.labels) or "no ray shot"
        self.query_one("#decode-result", Label).update(
            f"Not decoded: the game typed has an error. Below, the last game decoded ({shown})."
        )

    @on(Input.Submitted, "#decode-spectrum")
    def spectrum_submitted(self, event: Input.Submitted) -> None:
        """Enter decodes the game typed, and shows it on the board."""
        if self.read_game(event.value) and self.game_board is not None:
            self.game_board.focus()

    @on(GamePasted)
    def game_pasted(self, event: GamePasted) -> None:
        """A diagram pasted in the game input or on the board."""
        self.read_game(event.text)

    def read_game(self, text: str) -> bool:
        """Decode a game given as text (any notation); False when it does not parse."""
        board = self.game_board
        if self.config is None or board is None:
            self.say("Choose a configuration first.", error=True)
            return False
        try:
            game = parse_game(text, self.config)
        except DecodeError as error:
            self.say(str(error), error=True)
            return False
        board.set_draft(game.labels)
        self.spectrum_input.value = labels_text(game.labels) if game.shown else ""
        if game.guess is not None:
            self.take_diagram_guess(game.guess)
        self.decode(game)
        return True

    def take_diagram_guess(self, atoms: tuple[int, ...]) -> None:
        """The atoms drawn in a pasted diagram become the guess (when they are as many as N)."""
        assert self.config is not None
        guess_input = self.query_one("#decode-guess", Input)
        if len(atoms) != self.config.atoms:
            self.guess = None
            guess_input.value = ""
            self.notify(
                f"The diagram has {len(atoms)} atoms, {self.config} has "
                f"{self.config.atoms}: its guess is not checked.",
                severity="warning",
            )
            return
        cells = set(atoms)
        guess_input.value = "".join("O" if c in cells else "-" for c in range(self.config.cells))
        self.guess = tuple(sorted(cells))

    @on(Input.Changed, "#decode-guess")
    def guess_typed(self, event: Input.Changed) -> None:
        """A valid guess is checked at once; a wrong one says why."""
        if not event.value.strip():
            self.guess = None
            self.show_verdict()
            return
        if self.config is None:
            return
        try:
            self.guess = tuple(parse_guess(event.value, self.config))
        except DecodeError as error:
            self.guess = None
            self.say(str(error) + self.game_hint(event.value), error=True)
            return
        self.show_verdict()

    def game_hint(self, text: str) -> str:
        """A game typed in the guess input: say where games go."""
        try:
            assert self.config is not None
            parse_game(text, self.config)
        except DecodeError:
            return ""
        return " (that is a game: / goes to the game input)"

    def guess_of(self, text: str) -> tuple[int, ...] | None:
        """The guess typed, if it is a molecule of the configuration."""
        if self.config is None or not text.strip():
            return None
        try:
            return tuple(parse_guess(text, self.config))
        except DecodeError:
            return None

    # -- the board --------------------------------------------------------------------

    @on(DraftChanged)
    def draft_changed(self, event: DraftChanged) -> None:
        """A result written on the board: the game input follows, and the game is decoded."""
        self.clear_error()
        self.spectrum_input.value = labels_text(event.game.labels) if event.game.shown else ""
        if event.waiting:
            where = event.waiting[-1]
            label = event.board.draft[where - 1]
            self.say(
                f"Label {label!r} at position {where} waits for its other end: type it "
                f"where that ray came out."
            )
        if event.game != self.game:
            self.decode(event.game)

    @on(DraftRefused)
    def draft_refused(self, event: DraftRefused) -> None:
        """Say why a result could not be written."""
        self.say(event.reason, error=True)

    @on(RaySelected)
    def ray_selected(self, event: RaySelected) -> None:
        """The game board's cursor draws its ray on every candidate."""
        if isinstance(event.board, GameBoard):
            self.clear_error()
            self.query_one("#decode-boards", BoardGrid).set_position(event.position)

    # -- decoding ------------------------------------------------------------------------

    def decode(self, game: Game) -> None:
        """Find the candidates of ``game`` and rank the next shots (kept answers at once)."""
        if self.decoder is None:
            return
        self.game = game
        kept = self.decoder.cached(game, self.ranking)
        if kept is not None:
            self.workers.cancel_group(self, "decode")
            self.post_message(DecodeFinished(game, kept))
            return
        if game.shown and self.decoder.within(game) is None:
            self.say(f"Decoding {labels_text(game.labels)}...")
        self.run_decode(self.decoder, game, self.ranking)

    @work(thread=True, exclusive=True, group="decode")
    def run_decode(self, decoder: Decoder, game: Game, ranking: Ranking) -> None:
        """The decoder's answer, in a thread (the database side is per-thread in peewee).

        The next decode cancels this worker: its ``cancelled_event`` stops the
        decoder between batches.
        """

        def progress(done: int, total: int) -> None:
            if total >= 4 * BATCH:
                self.post_message(DecodeProgress(done, total))

        cancelled = get_current_worker().cancelled_event
        if decoder.compiles_solver(game):
            # Asked here, off the event loop: the route may read the store.
            self.app.call_from_thread(self.say_compiling, game)
        try:
            answer = decoder.decode(game, by=ranking, progress=progress, cancelled=cancelled)
        except DecodeCancelled:
            return
        except DecodeError as error:
            self.post_message(DecodeFinished(game, None, error=str(error)))
            return
        self.post_message(DecodeFinished(game, answer))

    def say_compiling(self, game: Game) -> None:
        """The first decode by the solver compiles it: say why this one takes longer."""
        if game == self.game:
            labels = labels_text(game.labels)
            self.say(f"Decoding {labels}: compiling the solver, first time only (about 10 s)...")

    def on_decode_progress(self, message: DecodeProgress) -> None:
        """Move the bar."""
        bar = self.query_one("#decode-progress", ProgressBar)
        bar.display = True
        bar.update(total=message.total, progress=message.done)

    async def on_decode_finished(self, message: DecodeFinished) -> None:
        """Show the answer for the game on the board (an older game's is dropped)."""
        if message.game != self.game:
            return
        self.query_one("#decode-progress").display = False
        if message.answer is None:
            self.say(message.error or "decoding failed", error=True)
            return
        self.answer = message.answer.ranked(self.ranking)
        self.page = 0
        await self.show_answer()

    async def show_answer(self) -> None:
        """Heat map, next shots, verdicts, the first page of candidates."""
        assert self.answer is not None and self.config is not None
        game, found = self.answer.game, self.answer.found
        board = self.game_board
        if board is not None:
            board.show_heat(*self.answer.heat())  # the solver's answers list no candidates
            board.show_shots(self.answer.shots)
        self.query_one("#decode-result", Label).update(count_sentence(self.answer))
        self.show_shots()
        self.call_after_refresh(self.show_shots)  # once the board is drawn, the room is known
        self.show_verdict()
        await self.show_page()
        typed = self.spectrum_input.value
        if typed.strip() and not self.spectrum_input.is_valid:
            # A game typed with an error while this one was decoded (the first, as the
            # screen loads): its error stays said.
            self.check_spectrum(typed)
        elif found is not None and found.every_molecule:
            self.say(
                f"{self.config}: no ray shot yet. On the board, the arrows pick a position; "
                f"type H, R or a label for what its ray did."
            )
        else:
            # The player's own labels, as on the board (not renamed in order of appearance).
            shown = labels_text(game.labels)
            self.say(f"{shown}: {plural(self.answer.count, 'molecule')} ({source_phrase(self.answer)}).")
        self.update_bindings()

    def show_shots(self) -> None:
        """The top next shots with their figures, or why there are none."""
        label = self.query_one("#decode-shots", Label)
        answer = self.answer
        width = label.content_region.width or None
        label.update(shots_text(answer.shots, answer.skipped, self.ranking, width) if answer else "")

    def show_verdict(self) -> None:
        """Whether the game is ambiguous, and what the guess is worth."""
        lines = []
        answer = self.answer
        if answer is not None:
            doubt = answer.found and ambiguity(answer.found, answer.shots, answer.skipped)
            if doubt:
                lines.append(doubt)
            if self.guess is not None and self.config is not None:
                verdict = check_guess(self.config, answer.game, self.guess, answer.found)
                lines.append(f"Guess: {verdict.message}.")
        self.query_one("#decode-verdict", Label).update("\n".join(lines))

    async def show_page(self) -> None:
        """The current page of candidates, the game's labels round them, its rays drawn."""
        assert self.config is not None
        grid = self.query_one("#decode-boards", BoardGrid)
        heading = self.query_one("#decode-page", Label)
        found = self.found
        game = self.answer.game if self.answer else None
        if found is None or game is None or found.every_molecule or not found.count:
            self.shown_numbers = []
            heading.update("")
            await grid.update([])
            self.query_one("#decode-stats", StatsTable).show([])
            return
        molecules = found.molecules(PAGE, self.page * PAGE)
        self.shown_numbers = [number for number, _ in molecules]
        marked = doubtful_cells(found)
        drawn = [position for position, _ in game.rays()] if self.drawing_shown(game) else []
        # A full spectrum's few molecules get their records (statistics, transform);
        # a partial game's only their boards: pages must turn quickly.
        records = (
            [molecule_record(self.config, number) for number in self.shown_numbers] if game.complete else []
        )
        boards = (
            [record_board(r, marked, game.labels, drawn) for r in records]
            if records
            else [
                Board(
                    self.config.width,
                    molecule,
                    game.labels,
                    marked=marked,
                    drawn=drawn,
                    title=f"#{number:,}",
                    height=self.config.height,
                )
                for number, molecule in molecules
            ]
        )
        await grid.update(boards)
        board = self.game_board
        grid.set_position(board.position if board is not None else None)
        heading.update(page_heading(found.count, self.page, bool(drawn)))
        self.query_one("#decode-stats", StatsTable).show(records)

    # -- actions --------------------------------------------------------------------------

    def update_bindings(self) -> None:
        """Refresh the footer when a key comes or goes (it is rebuilt each time: not on every
        result written)."""
        state = tuple(
            self.check_action(action, parameters)
            for action, parameters in (
                ("page", (-1,)),
                ("page", (1,)),
                ("ranking", ()),
                ("open_molecule", ()),
                ("shown_rays", ()),
            )
        )
        if state != self.bindings_state:
            self.bindings_state = state
            self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Pages when there are several, a ranking when there are shots, a molecule and the
        shown rays when candidates are shown (``o`` on a focused candidate); the one Esc
        that applies where the focus is (``escape_action``); ``/`` (to the game input) from
        anywhere else (the inputs never type it)."""
        if action == "edit":
            return self.focused is not self.spectrum_input
        if action == "help":  # the footer's help key: F1 where ? is typed, else the app's ?
            return self.focused is self.spectrum_input
        if action in ("to_board", "to_keys", "back"):
            return action == self.escape_action()
        if action == "page":
            found = self.found
            if found is None or found.every_molecule or found.count <= PAGE:
                return False
            delta = cast(int, parameters[0])
            return 0 <= self.page + delta <= (found.count - 1) // PAGE or None
        if action == "ranking":
            return bool(self.answer and self.answer.shots)
        if action == "shown_rays":
            return bool(self.shown_numbers)
        if action == "open_molecule":
            return bool(self.shown_numbers) and self.focused_candidate() is not None
        return True

    async def action_page(self, delta: int) -> None:
        """The next or previous page of candidates."""
        found = self.found
        if found is None or found.every_molecule:
            return
        page = self.page + delta
        if 0 <= page <= (found.count - 1) // PAGE:
            self.page = page
            await self.show_page()
            self.update_bindings()

    def drawing_shown(self, game: Game) -> bool:
        """Whether the candidates draw the shown rays of ``game``."""
        return (not game.complete) if self.draw_shown is None else self.draw_shown

    async def action_shown_rays(self) -> None:
        """Draw the shown rays on the candidates, or only the cursor's ray."""
        if self.answer is not None:
            self.draw_shown = not self.drawing_shown(self.answer.game)
            await self.show_page()

    def action_ranking(self) -> None:
        """Rank the next shots by the other figure."""
        if self.answer is None:
            return
        self.ranking = "information" if self.ranking == "remaining" else "remaining"
        self.answer = self.answer.ranked(self.ranking)
        if self.game_board is not None:
            self.game_board.show_shots(self.answer.shots)
        self.show_shots()

    async def action_help(self) -> None:
        """The help (F1 in the game input, where ? is typed)."""
        await self.app.run_action("app.help")

    def action_edit(self) -> None:
        """Back to the game input."""
        self.spectrum_input.focus()

    def focused_candidate(self) -> int | None:
        """The number of the candidate whose board has the focus, if any."""
        focused = self.focused
        grid = self.query_one("#decode-boards", BoardGrid)
        if isinstance(focused, Board) and focused in grid.children:
            index = list(grid.children).index(focused)
            if index < len(self.shown_numbers):
                return self.shown_numbers[index]
        return None

    def action_open_molecule(self) -> None:
        """The Molecule screen of the focused candidate."""
        number = self.focused_candidate()
        if number is not None and self.config is not None:
            self.bb_app.open_molecule(self.config, number)

    def escape_action(self) -> str:
        """What Esc does from where the focus is: an input goes to the game board, the board
        (which types labels) to the screen's keys, anything else leaves the screen."""
        board = self.game_board
        if isinstance(self.focused, Input) and board is not None:
            return "to_board"
        if isinstance(self.focused, GameBoard):
            return "to_keys"
        return "back"

    def action_to_board(self) -> None:
        """From an input to the game board."""
        board = self.game_board
        if board is not None:
            board.focus()

    def action_to_keys(self) -> None:
        """From the game board to the screen's keys: nothing focused, every letter a key."""
        self.set_focus(None)
        self.say(
            "Screen keys: every letter is a key (P play, g groups, ? help); "
            "tab or / to write the game again, esc leaves."
        )

    def action_back(self) -> None:
        """Leave the screen (its decode cancelled)."""
        self.workers.cancel_group(self, "decode")
        self.app.pop_screen()

    def on_resize(self) -> None:
        """The next shots' rows are fitted to the room again."""
        self.call_after_refresh(self.show_shots)

    def on_screen_suspend(self) -> None:
        """Left for the help (or any screen): back here, the focus is where it was, even
        nowhere (the screen's keys), not the game input again (Textual focuses
        ``AUTO_FOCUS`` on each resume when nothing is focused)."""
        self.AUTO_FOCUS = ""

    def on_descendant_focus(self) -> None:
        """The Esc shown in the footer follows the focus."""
        self.refresh_bindings()

    def on_descendant_blur(self) -> None:
        """The Esc shown in the footer follows the focus."""
        self.refresh_bindings()


# -- text ----------------------------------------------------------------------------------


DECODE_SIDE = 30
"""Columns kept beside the game board for the count and the next shots."""


def page_heading(count: int, page: int, drawn: bool) -> str:
    """Which candidates the boards below are, and what they draw."""
    rays = "the shown rays drawn" if drawn else "the cursor's ray drawn"
    if count <= PAGE:
        return f"The {count:,} candidate{'s' * (count != 1)}, {rays} (ctrl+t):"
    start = page * PAGE
    pages = (count - 1) // PAGE + 1
    return (
        f"Candidates {start + 1:,}-{min(start + PAGE, count):,} of {count:,} "
        f"(page {page + 1:,} of {pages:,}: < > turn pages), {rays} (ctrl+t):"
    )
