"""The Play screen: a game against the box, with the strategy book as coach.

- A new game hides a molecule of the configuration (``bbcore.play``): ``n``
  a random one (the seed is shown; ``seed 42`` in the input replays it), a
  number typed in the input, or ``h`` a hard one, from a spectral group or
  among the book's hardest molecules.  Any box up to 30 x 30 and any range
  of atom counts (``A3-6_B8``: the count is drawn and not shown) is
  played; the body scrolls both ways where the box does not fit.
- The rules are a program's (``bbcore.play.RULES``), named on the screen:
  ``v`` cycles bbtui's, Tatham's, KBlackBox's and Emacs'; a preset's name
  typed in the configuration input (``kblackbox-14x10-11``,
  ``tatham-8x8-3-6``) plays that program's board with its rules.
- Shooting: the arrow keys move the perimeter cursor round the box and
  Enter fires; the results are marked as in the game (``H``, ``R``, a letter
  at both ends of a ray that came out) and the points counted.
- Guessing: ``a`` switches to placing atoms (the arrows move a cell cursor,
  Enter puts or takes an atom), ``s`` submits, judged by the rules in play.
- ``r`` reveals the hidden molecule with the player's rays drawn, beside
  what the book spent on it and its shots (a guess reveals it too).
- ``c`` the coach (off at first): the heat map of the atoms over the
  molecules that agree with the rays shot, and the best next shots.

The book (``bbcore.strategy``) is read from the database or computed once in
a thread worker, and kept by the app for the Strategy screen too.
"""

from __future__ import annotations

import re

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.validation import ValidationResult, Validator
from textual.widgets import Footer, Header, Input, Label
from textual.worker import get_current_worker

from bbcore.config import Config, parse_config, validation_error
from bbcore.decode import DecodeCancelled
from bbcore.decoder import Decoder, count_sentence
from bbcore.game import DecodeError, Game
from bbcore.numbering import molecule_string
from bbcore.play import (
    BBTUI,
    PRESETS,
    RULES,
    Match,
    PlayError,
    Rules,
    chosen_match,
    hard_match,
    random_match,
)
from bbcore.rays import Ray
from bbcore.strategy import StrategyBook, line_text
from bbtui.host import Host, host
from bbtui.messages import BookReady, BookVerdict, CoachAnswer
from bbtui.widgets.board import Board, BoardGrid, RaySelected
from bbtui.widgets.game_board import GameBoard, shots_text
from bbtui.widgets.inputs import KeyInput
from bbtui.widgets.message import MessageLine
from bbtui.widgets.play_board import AtomToggled, PlayBoard, ShotFired

SEED_RE = re.compile(r"^\s*seed\s*(\d+)\s*$", re.I)
NEW_GAME_HELP = "a number, 'seed N' or 'hard', then Enter"


class PlayScreen(Screen):
    """Play against the box: shoot, guess, and compare with the book."""

    # The box, the score and the coach side by side take 89 columns for A4_B8:
    # narrower, the coach goes below the box (``-narrow`` in bbtui.tcss).
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (90, "-wide")]

    BINDINGS = [
        Binding("escape", "back", "Back", show=False),
        Binding("a", "placing", "Atoms"),
        Binding("s", "submit", "Guess"),
        Binding("r", "reveal", "Reveal"),
        Binding("c", "coach", "Coach"),
        Binding("n", "new_game", "New"),
        Binding("v", "next_rules", "Rules", show=False),  # the score panel names it
        # Kept out of the footer (80 columns); the score panel and ? name them.
        Binding("h", "hard_game", "Hard", show=False),
        Binding("slash", "choose", "Number", key_display="/", show=False),
    ]

    def __init__(self, config: Config | None = None) -> None:
        """Play on ``config`` (default: the app's configuration)."""
        super().__init__()
        self.config = config
        self.rules: Rules = BBTUI
        self.match: Match | None = None
        self.guess: set[int] = set()
        self.coaching = False
        self.picked = False  # a position picked on the box yet (the first one is said)
        self.decoder: Decoder | None = None  # the coach's, kept per configuration
        self.waiting_hard = False
        self.waiting_reveal = False
        self.verdict_pinned = False  # the game is over: the verdict stays at the body's top

    @property
    def bb_app(self) -> Host:
        """The app, as the screens see it (``bbtui.host``)."""
        return host(self)

    @property
    def board(self) -> PlayBoard | None:
        """The play board, once a configuration is chosen."""
        boards = self.query(PlayBoard)
        return boards.first() if boards else None

    def compose(self) -> ComposeResult:
        """Inputs and message; the box, the score, the coach; what the reveal shows."""
        yield Header()
        with Horizontal(id="play-inputs", classes="inputs"):
            yield KeyInput(
                placeholder="A4_B8", id="play-config", validators=[PlayValidator()], classes="config-input"
            )
            yield KeyInput(placeholder=f"new game: {NEW_GAME_HELP}", id="play-new")
        yield MessageLine(id="play-message")
        with VerticalScroll(id="play-body"):
            with Horizontal(id="play-top"):
                yield Vertical(id="play-box")
                yield Label("", id="play-status")
                yield Vertical(id="play-coach")
            yield Label("", id="play-shots")
            yield Label("", id="play-coach-text")
            yield Label("", id="play-verdict", classes="heading")
            yield BoardGrid(id="play-reveal")
        yield Footer(compact=True)

    async def on_mount(self) -> None:
        """A random game of the app's configuration, or ask for one."""
        self.title = "Play"
        self.query_one("#play-coach").display = False
        self.watch(
            self.query_one("#play-body", VerticalScroll), "virtual_size", self.body_resized, init=False
        )
        config = self.config or self.bb_app.config
        if config is None:
            self.say("Choose a configuration (AN_BW, e.g. A4_B8) to play.")
            self.query_one("#play-config", Input).focus()
            return
        self.query_one("#play-config", Input).value = config.name
        await self.set_config(config)

    def say(self, text: str, *, error: bool = False) -> None:
        """The line under the inputs (``MessageLine``): an error stays only until the next valid action."""
        self.query_one("#play-message", MessageLine).say(text, error=error)

    def clear_error(self) -> None:
        """A valid action: an error said before is no longer true."""
        self.query_one("#play-message", MessageLine).clear_error()

    async def set_config(self, config: Config) -> None:
        """A fresh box of ``config`` and a random game."""
        self.config = config
        slot = self.query_one("#play-box", Vertical)
        await slot.remove_children()
        await slot.mount(PlayBoard(config))
        coach = self.query_one("#play-coach", Vertical)
        await coach.remove_children()
        board = CoachBoard(config)
        board.can_focus = False
        board.border_title, board.border_subtitle = "Coach", "heat map, * best shot"
        await coach.mount(board)
        await self.start(random_match(config, rules=self.rules))

    @on(Input.Changed, "#play-config")
    async def config_typed(self, event: Input.Changed) -> None:
        """A valid configuration (or a preset's name) starts a game at once."""
        if not event.value.strip():
            return
        preset = PRESETS.get(event.value.strip().lower())
        if preset is not None:
            self.rules = preset.rules
            await self.set_config(preset.config)
            self.say(f"{preset.describe()}. {preset.rules.describe()}")
            return
        error = validation_error(event.value)
        if error:
            self.say(error, error=True)
            return
        config = parse_config(event.value)
        if config != self.config:
            await self.set_config(config)
        else:  # typed back to the configuration played: an error said on the way is gone
            self.clear_error()

    async def action_next_rules(self) -> None:
        """The next program's rules (bbtui, Tatham, KBlackBox, Emacs), on a new game."""
        names = list(RULES)
        self.rules = RULES[names[(names.index(self.rules.name) + 1) % len(names)]]
        if self.config is not None:
            await self.start(random_match(self.config, rules=self.rules))
            self.say(f"New game. {self.rules.describe()}")

    @on(Input.Submitted, "#play-new")
    async def new_typed(self, event: Input.Submitted) -> None:
        """A number, ``seed N`` or ``hard`` starts that game."""
        if self.config is None:
            self.say("Choose a configuration first.", error=True)
            return
        text = event.value.strip()
        if text.lower() in PRESETS:  # a program's board: as if typed in the configuration input
            event.input.value = ""
            self.query_one("#play-config", Input).value = text.lower()
            return
        try:
            if text.lower() == "hard":
                self.action_hard_game()
                return
            seed = SEED_RE.match(text)
            if seed:
                match = random_match(self.config, int(seed.group(1)), self.rules)
            elif text.isdigit():
                match = chosen_match(self.config, int(text), self.rules)
            else:
                self.say(f"Type {NEW_GAME_HELP}.", error=True)
                return
        except PlayError as error:
            self.say(str(error), error=True)
            return
        event.input.value = ""
        await self.start(match)

    # -- the game ----------------------------------------------------------------

    async def start(self, match: Match) -> None:
        """Play ``match``: no ray shot, no atom placed, the reveal cleared."""
        self.match = match
        self.guess = set()
        self.verdict_pinned = False
        board = self.board
        assert board is not None
        board.set_placing(False)
        board.focus()
        await self.query_one("#play-reveal", BoardGrid).update([])
        self.query_one("#play-verdict", Label).update("")
        self.show()
        how = {
            "random": f"a random molecule, seed {match.seed} ('seed {match.seed}' replays it)",
            "chosen": f"molecule number {match.number:,}",
            "hard": f"a hard molecule, seed {match.seed}",
        }[match.draw]
        self.say(
            f"New game of {match.config} ({match.rules.title} rules): {how}. "
            f"Arrows pick a position, Enter shoots; a places atoms."
        )
        if self.coaching:
            self.coach()

    def show(self) -> None:
        """The box, the score and the shots so far."""
        match, board = self.match, self.board
        if match is None or board is None:
            return
        board.show(match.marks, self.guess)
        config = match.config
        hidden = f"{config.atoms}" if config.fixed_count else f"{config.atoms} to {config.atoms_max}"
        placed = f"{len(self.guess)} of {config.atoms}" if config.fixed_count else f"{len(self.guess)}"
        score = f"rays {match.rays}, points {match.points}" if match.rules.scored else f"rays {match.rays}"
        status = [
            f"{config}: {hidden} atoms hidden",
            f"rules: {match.rules.title}",
            score,
            f"atoms placed {placed}",
            "",
            "Enter shoots; a: atoms",
            "s guesses, r reveals",
            "n new, h hard, / number",
            "v next rules",
        ]
        self.query_one("#play-status", Label).update("\n".join(status))
        shots = " ".join(f"{p}:{match.marks[p - 1]}" for p in match.shots)
        self.query_one("#play-shots", Label).update(f"Your shots: {shots}" if shots else "")

    @on(ShotFired)
    def shot_fired(self, event: ShotFired) -> None:
        """Fire the ray and mark its result."""
        if self.match is None:
            return
        try:
            result = self.match.shoot(event.position)
        except PlayError as error:
            self.say(sentence(str(error)), error=True)
            return
        words = {"@": "absorbed (H)", "&": "reflected (R)"}
        self.say(f"Position {event.position}: {words.get(str(result), f'out at position {result}')}.")
        self.show()
        if self.coaching:
            self.coach()

    @on(RaySelected)
    def position_picked(self, event: RaySelected) -> None:
        """The box's first position picked (by an arrow, or by an Enter before any, which
        only picks it): say that Enter shoots it now."""
        if event.board is not self.board or event.position is None or self.picked:
            return
        self.picked = True
        self.say(f"Position {event.position} picked: Enter shoots it; the arrows pick another.")

    @on(AtomToggled)
    def atom_toggled(self, event: AtomToggled) -> None:
        """Put an atom on the cell or take it away."""
        if self.match is None or self.match.over:
            self.say("The game is over: n starts a new one.", error=True)
            return
        if event.cell in self.guess:
            self.guess.discard(event.cell)
        elif len(self.guess) >= self.match.config.atoms_max:
            self.say(f"{self.match.config.atoms_max} atoms placed already: take one away first.", error=True)
            return
        else:
            self.guess.add(event.cell)
        self.show()

    def action_placing(self) -> None:
        """Switch the board between shooting and placing atoms."""
        board = self.board
        if board is not None:
            board.set_placing(not board.placing)
            board.focus()
            self.say(
                "Placing atoms: arrows move, Enter puts or takes one; s submits."
                if board.placing
                else "Shooting: arrows pick a position, Enter shoots."
            )

    def action_submit(self) -> None:
        """Judge the guess, then reveal."""
        if self.match is None:
            return
        try:
            judgement = self.match.judge(self.guess)
        except PlayError as error:
            self.say(sentence(str(error)), error=True)
            return
        score = f" Score: {self.match.points} points." if self.match.rules.scored else ""
        self.say(f"{judgement.message}{score}", error=not judgement.right)
        self.action_reveal()

    def action_reveal(self) -> None:
        """Show the hidden molecule and what the book spent on it."""
        if self.match is None:
            return
        self.match.reveal()
        self.show()
        if self.match.judgement is None:
            self.say(f"{self.hidden_name(self.match)} revealed, with your rays drawn: n plays again.")
        if not self.match.config.square_fixed:
            verdict = self.match.judgement.message if self.match.judgement else "You did not guess."
            self.query_one("#play-verdict", Label).update(
                f"{verdict}\nNo strategy book here: books are made for squares with a known count."
            )
            self.call_later(self.show_reveal)
            return
        self.waiting_reveal = True
        self.query_one("#play-verdict", Label).update(
            "The book's figures for this molecule: reading the book..."
        )
        self.load_book()
        self.call_later(self.show_reveal)

    @staticmethod
    def hidden_name(match: Match) -> str:
        """``Molecule #1,234`` (of ``A5_B8`` on a range, whose count was not told)."""
        of = "" if match.config.fixed_count else f" of {match.hidden_config}"
        return f"Molecule #{match.number:,}{of}"

    async def show_reveal(self) -> None:
        """The hidden molecule with the player's rays drawn, the guess beside it, and the book."""
        match = self.match
        if match is None:
            return
        config = match.config
        of = "" if config.fixed_count else f" {match.hidden_config}"
        boards = [
            Board(
                config.width,
                match.molecule,
                match.marks,
                drawn=match.shots,
                title=f"#{match.number:,}{of} hidden",
                height=config.height,
            )
        ]
        if match.judgement is not None:
            boards.append(
                Board(
                    config.width,
                    molecule_string(config, match.judgement.guess),
                    match.marks,
                    marked=match.judgement.wrong,
                    title="your guess",
                    height=config.height,
                )
            )
        await self.query_one("#play-reveal", BoardGrid).update(boards)
        book = self.bb_app.books.get((config, "remaining"))
        if book is not None:
            self.show_book_comparison(book)
        self.verdict_pinned = True
        self.call_after_refresh(self.verdict_in_view)

    def verdict_in_view(self) -> None:
        """The verdict and the hidden molecule where the eye is, at the top of the body:
        at 80 x 24 they would be below the box, out of view."""
        self.query_one("#play-body", VerticalScroll).scroll_to_widget(
            self.query_one("#play-verdict"), animate=False, top=True
        )

    def body_resized(self) -> None:
        """The verdict scrolled to the top again once the body has grown: a scroll asked before
        the reveal's boards or the book's lines were laid out stops short, at the old end."""
        if self.verdict_pinned:
            self.verdict_in_view()

    def show_book_comparison(self, book: StrategyBook) -> None:
        """``the book needed 7 rays and 11 points for this molecule; you used 9 and 14``."""
        match = self.match
        if match is None or not match.over:
            return
        self.waiting_reveal = False
        self.compare_with_book(book, match)

    @work(thread=True, exclusive=True, group="play-comparison")
    def compare_with_book(self, book: StrategyBook, match: Match) -> None:
        """The book's line for the hidden molecule, in a thread: it may rebuild nodes of the
        book (seconds for a large one), which the event loop must not wait for."""
        index = match.number - 1
        verdict = match.judgement.message if match.judgement else "You did not guess."
        text = (
            f"{verdict}\nThe book needed {int(book.rays[index])} rays and {int(book.points[index])} points "
            f"for this molecule; you used {match.rays} and {match.points}.\n"
            f"The book's shots: {line_text(book.line(match.number))}"
        )
        self.post_message(BookVerdict(match, text))

    def on_book_verdict(self, message: BookVerdict) -> None:
        """The verdict with the book's figures, if the game is still the one shown."""
        if message.match is self.match:
            self.query_one("#play-verdict", Label).update(message.text)

    # -- the book ----------------------------------------------------------------

    def load_book(self) -> None:
        """The book of the configuration (by remaining), from the app or in a worker."""
        if self.config is None:
            return
        book = self.bb_app.books.get((self.config, "remaining"))
        if book is not None:
            self.post_message(BookReady(self.config, "remaining", book))
            return
        self.run_book(self.config)

    @work(thread=True, exclusive=True, group="play-book")
    def run_book(self, config: Config) -> None:
        """Read or compute the book in a thread."""
        from bbcore.strategy import StrategyError

        try:
            made = self.bb_app.strategy_book(config, "remaining", stop=get_current_worker().cancelled_event)
        except StrategyError as error:
            self.post_message(BookReady(config, "remaining", None, str(error)))
            return
        except DecodeCancelled:
            return
        made.hardest()  # sorted here, not on the event loop when a hard game is drawn
        self.post_message(BookReady(config, "remaining", made))

    async def on_book_ready(self, message: BookReady) -> None:
        """Keep the book; finish what waited for it."""
        if message.book is None:
            self.say(message.error or "no book", error=True)
            return
        self.bb_app.books.set((message.config, message.by), message.book)
        if message.config != self.config:
            return
        if self.waiting_hard:
            self.waiting_hard = False
            await self.start_hard(message.book)
        if self.waiting_reveal:
            self.show_book_comparison(message.book)

    def action_hard_game(self) -> None:
        """A hard molecule: from a spectral group or among the book's hardest."""
        if self.config is None:
            return
        if not self.config.square_fixed:
            self.say(
                f"No hard games on {self.config}: they come from the strategy book and the spectral "
                f"groups, made for squares with a known count.",
                error=True,
            )
            return
        self.waiting_hard = True
        self.say(f"Drawing a hard molecule of {self.config} (reading the book)...")
        self.load_book()

    async def start_hard(self, book: StrategyBook) -> None:
        """Start a hard game once the book is known."""
        assert self.config is not None
        try:
            match = hard_match(self.config, book.hardest(), rules=self.rules)
        except PlayError as error:
            self.say(str(error), error=True)
            return
        await self.start(match)

    async def action_new_game(self) -> None:
        """A new random game."""
        if self.config is not None:
            await self.start(random_match(self.config, rules=self.rules))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``/`` (to the new-game input) from anywhere else (the inputs never type it)."""
        if action == "choose":
            return self.focused is not self.query_one("#play-new")
        return True

    def action_choose(self) -> None:
        """To the new-game input."""
        self.query_one("#play-new", Input).focus()

    # -- the coach ---------------------------------------------------------------

    def action_coach(self) -> None:
        """Show or hide the coach: heat map and best next shots."""
        self.coaching = not self.coaching
        self.query_one("#play-coach").display = self.coaching
        if self.coaching:
            self.coach()
        else:
            self.query_one("#play-coach-text", Label).update("")

    def coach(self) -> None:
        """Decode the rays shot so far in a worker (the decoder narrows its last answer)."""
        if self.match is None:
            return
        if self.decoder is None or self.decoder.config != self.match.config:
            self.decoder = Decoder(self.match.config)
        self.run_coach(self.decoder, self.match.game)

    @work(thread=True, exclusive=True, group="coach")
    def run_coach(self, decoder: Decoder, game: Game) -> None:
        """Candidates, then the next shots, in a thread; a newer shot cancels it."""
        if decoder.compiles_solver(game):
            self.app.call_from_thread(self.coach_compiling, game)
        try:
            answer = decoder.decode(game, cancelled=get_current_worker().cancelled_event)
        except DecodeCancelled:
            return
        except DecodeError as error:
            self.app.call_from_thread(self.coach_refused, game, str(error))
            return
        self.post_message(CoachAnswer(answer))

    def coach_compiling(self, game: Game) -> None:
        """The coach's first decode by the solver compiles it: say why it takes longer."""
        if self.match is not None and self.match.game == game and self.coaching:
            text = "The coach is compiling the solver, first time only (about 10 s)..."
            self.query_one("#play-coach-text", Label).update(text)

    def coach_refused(self, game: Game, reason: str) -> None:
        """Say why the coach cannot decode this game (a board too large to enumerate)."""
        if self.match is not None and self.match.game == game and self.coaching:
            self.query_one("#play-coach-text", Label).update(f"The coach cannot help here: {reason}.")

    def on_coach_answer(self, message: CoachAnswer) -> None:
        """Show the heat map and the best next shots, if still for the game on the board."""
        answer = message.answer
        if self.match is None or answer.game != self.match.game or not self.coaching:
            return
        coach = self.query(GameBoard)
        if coach:
            board = coach.first()
            board.set_draft(self.match.marks)
            board.show_heat(*answer.heat())  # the solver's answers list no candidates
            board.show_shots(answer.shots)
        text = shots_text(answer.shots, answer.skipped, "remaining")
        text.append("\n" + count_sentence(answer))
        self.query_one("#play-coach-text", Label).update(text)

    def action_back(self) -> None:
        """Escape leaves an input for the board first, then the screen."""
        if isinstance(self.focused, Input) and self.board is not None:
            self.board.focus()
        else:
            self.app.pop_screen()


class CoachBoard(GameBoard):
    """The coach: the game shot so far on Decode's board, with its heat map and best next
    shots; nothing is typed on it (it takes no focus), so its caption says where to shoot."""

    def caption(self, ray: Ray | None) -> tuple[str, str]:
        """Where the shots go: the box (Decode's board says to type results)."""
        if self.position is None:
            return "your shots, atom odds", "shoot on the box: Enter"
        return super().caption(ray)


class PlayValidator(Validator):
    """A configuration, with ``bbcore.config``'s messages, or a preset's name (``bbcore.play.PRESETS``)."""

    def validate(self, value: str) -> ValidationResult:
        """Blank is fine (nothing typed yet); anything else must parse or name a preset."""
        if not value.strip() or value.strip().lower() in PRESETS:
            return self.success()
        error = validation_error(value)
        return self.failure(error) if error else self.success()


def sentence(text: str) -> str:
    """A one-line message as a sentence: a capital first, a full stop last."""
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")
