"""Messages the thread workers (exploration, decoding) post, from their threads.

They are small dataclasses: the worker thread only ever creates them and
``post_message``s them (thread-safe); the app's handlers run on the event
loop and update the screens.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from bbcore.config import Config
from bbcore.decoder import Answer
from bbcore.game import Game
from bbcore.play import Match
from bbcore.progress import Progress
from bbcore.strategy import StrategyBook


@dataclass
class ExplorationProgress(Message):
    """Where the running exploration stands (sent after each stored range)."""

    progress: Progress

    def can_replace(self, message: Message) -> bool:
        """A newer progress report makes an older, not yet handled one useless."""
        return isinstance(message, ExplorationProgress)


@dataclass
class ExplorationEnded(Message):
    """The exploration worker returned: ``outcome`` is bbcore's, ``"error"``, or ``"full"``
    (the disk filled: ``error`` is the command line's one line, ending "press s to resume")."""

    config: Config
    outcome: str
    error: str | None = None


@dataclass
class DecodeProgress(Message):
    """How far a decode computed without the store has gone."""

    done: int
    total: int

    def can_replace(self, message: Message) -> bool:
        """A newer report makes an older one useless."""
        return isinstance(message, DecodeProgress)


@dataclass
class DecodeFinished(Message):
    """The decode worker answered a game (``bbcore.decoder.Answer``), or failed (``error``)."""

    game: Game
    answer: Answer | None
    error: str | None = None


@dataclass
class BookReady(Message):
    """The strategy book of a configuration and policy was read or computed (or ``error``)."""

    config: Config
    by: str
    book: StrategyBook | None
    error: str | None = None


@dataclass
class BookProgress(Message):
    """How far a book being computed has gone: its spectra read or traced (``phase``
    ``"spectra"``), then its molecules placed in a leaf of the tree (``"playing"``)."""

    config: Config
    by: str
    done: int
    total: int
    phase: str = "spectra"

    def can_replace(self, message: Message) -> bool:
        """A newer report of the same book makes an older one useless."""
        return isinstance(message, BookProgress) and (message.config, message.by) == (self.config, self.by)


@dataclass
class CoachAnswer(Message):
    """The Play screen's coach decoded the rays shot so far."""

    answer: Answer


@dataclass
class BookFigures(Message):
    """What the Strategy screen shows beside a book's tree, worked out in a thread (the
    hardest molecules' lines may rebuild nodes): its figures, the histograms of rays and
    of points, and the hardest molecules with their lines."""

    book: StrategyBook
    figures: str
    histograms: dict[str, dict[int, int]]
    hardest: str


@dataclass
class OptimalReady(Message):
    """The optimal book of a configuration and objective read from the store (None when
    none is stored: ``note`` says how to compute it)."""

    config: Config
    objective: str
    book: StrategyBook | None
    note: str = ""


@dataclass
class OptimalFigures(Message):
    """The optimal book beside the greedy one, worked out in a thread: its figures, both
    histograms of rays per molecule, and the molecules on which the two differ most."""

    greedy: StrategyBook
    optimal: StrategyBook
    figures: str
    histograms: dict[str, dict[int, int]]
    differences: list[tuple[int, int, int]]


@dataclass
class NodeOpened(Message):
    """A node of a book opened in a thread: its label, and each child's index, label and
    whether it is a leaf (a node below the stored levels is rebuilt, seconds for a large one)."""

    book: StrategyBook
    index: int
    label: str
    children: list[tuple[int, str, bool]]


@dataclass
class BookVerdict(Message):
    """A finished game's verdict beside what the book spent on its molecule (the book's
    line, worked out in a thread)."""

    match: Match
    text: str
