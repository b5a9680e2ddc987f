"""Messages the thread workers (exploration, decoding) post, from their threads.

They are small dataclasses: the worker thread only ever creates them and
``post_message``s them (thread-safe); the app's handlers run on the event
loop and update the screens.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from textual.message import Message

from bbcore.config import Config
from bbcore.decode import Candidates
from bbcore.decoder import Answer
from bbcore.explore import Progress
from bbcore.game import Game
from bbcore.shots import NextShot
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
    """The exploration worker returned: ``outcome`` is bbcore's, or ``"error"``."""

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
    """The decode worker found the candidates of a game and ranked the next shots
    (``skipped`` says why they were not), or failed (``error``)."""

    game: Game
    candidates: Candidates | None
    shots: list[NextShot] = field(default_factory=list)
    skipped: str | None = None
    error: str | None = None


@dataclass
class BookReady(Message):
    """The strategy book of a configuration and policy was read or computed (or ``error``)."""

    config: Config
    by: str
    book: StrategyBook | None
    error: str | None = None


@dataclass
class CoachAnswer(Message):
    """The Play screen's coach decoded the rays shot so far."""

    answer: Answer
