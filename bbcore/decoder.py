"""The decoder that ``bbcore decode``, the Decode screen and the Play screen's coach drive.

A ``Decoder`` answers games of one configuration: the candidates
(``bbcore.decode``), then the next shots (``bbcore.shots``).  It owns what
each of its users would otherwise decide for itself:

- the source: ``"auto"`` reads a full spectrum from the store when the
  configuration is explored there and computes a partial game, which is
  quicker than scanning the store (bench/decode.py); ``"store"`` and
  ``"compute"`` force one way (``"compute"`` does not look at the store);
- the narrowing: a game that only adds rays to a game answered before is
  decoded from that game's candidates (``within``), the fewest there are;
- the answer cache: the last ``KEPT_ANSWERS`` games' answers, so that
  undoing a result shows the previous answer at once;
- cancellation: ``decode`` takes a ``threading.Event`` (a Textual thread
  worker's ``cancelled_event``) and raises ``DecodeCancelled`` once it is
  set, between batches.

A decoder may be used from several threads at once (a UI's worker decoding
while its event loop reads the cache).

The sentences about a decode are written here once, for the CLI and the
TUI: how many molecules agree (``count_sentence``), where they came from
(``source_phrase``), and the next-shot table (``shot_table``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import Final

from bbcore.config import Config
from bbcore.decode import Candidates, DecodeCancelled, MoleculesDone, Source, Stop, candidates, is_explored
from bbcore.game import Game, Result
from bbcore.shots import NextShot, Ranking, outcome_text, rank_shots, ranked_shots
from bbcore.words import plural

__all__ = ["Answer", "DecodeCancelled", "Decoder"]

KEPT_ANSWERS: Final = 16
"""Games whose candidates and next shots a decoder keeps."""

RANKINGS: Final[dict[str, str]] = {
    "remaining": "expected candidates left",
    "information": "expected information",
}
"""What each ranking of the next shots sorts by, in words."""


@dataclass(frozen=True)
class Answer:
    """A decoded game: its candidates, its next shots (ranked) or why they were not ranked.

    ``explored`` says whether the configuration was explored in the store
    when the game was decoded (which the source phrase tells).
    """

    game: Game
    found: Candidates
    shots: list[NextShot]
    skipped: str | None
    explored: bool

    def ranked(self, by: Ranking) -> Answer:
        """The same answer, its next shots ranked ``by`` the other figure or the same."""
        return replace(self, shots=rank_shots(self.shots, by))


class Decoder:
    """Decodes games of one configuration, keeping the last answers (see the module)."""

    def __init__(self, config: Config, *, source: Source = "auto", kept: int = KEPT_ANSWERS) -> None:
        self.config = config
        self.source: Source = source
        self.kept = kept
        self._answers: OrderedDict[tuple[Result | None, ...], Answer] = OrderedDict()
        self._lock = threading.Lock()

    def cached(self, game: Game, by: Ranking = "remaining") -> Answer | None:
        """The kept answer of ``game`` (shots ranked ``by``), or None."""
        with self._lock:
            answer = self._answers.get(game.results)
            if answer is None:
                return None
            self._answers.move_to_end(game.results)
        return answer.ranked(by)

    def within(self, game: Game) -> Candidates | None:
        """The fewest kept candidates of a game that ``game`` only adds rays to, if any."""
        with self._lock:
            earlier = [
                answer.found
                for answer in self._answers.values()
                if not answer.found.every_molecule and game.extends(answer.game)
            ]
        return min(earlier, key=lambda found: found.count, default=None)

    def decode(
        self,
        game: Game,
        *,
        by: Ranking = "remaining",
        progress: MoleculesDone | None = None,
        cancelled: Stop | None = None,
    ) -> Answer:
        """The answer of ``game``: kept, narrowed from a kept one, or decoded from the source.

        Raises DecodeError (a game of another box, too many molecules to
        compute) or DecodeCancelled once ``cancelled`` is set.
        """
        answer = self.cached(game, by)
        if answer is not None:
            return answer
        explored = self.source != "compute" and is_explored(self.config)
        source: Source = self.source
        if source == "auto" and not (game.complete and _compact_complete(self.config)):
            source = "store" if game.complete and explored else "compute"
        # else "auto": a full spectrum of a compact store is read from its family when ambiguous
        found = candidates(
            self.config, game, source=source, within=self.within(game), progress=progress, stop=cancelled
        )
        shots, skipped = ranked_shots(self.config, game, found, by=by, progress=progress, stop=cancelled)
        answer = Answer(game, found, shots, skipped, explored)
        with self._lock:
            self._answers[game.results] = answer
            self._answers.move_to_end(game.results)
            while len(self._answers) > self.kept:
                self._answers.popitem(last=False)
        return answer

    def forget(self) -> None:
        """Drop the kept answers (the store changed)."""
        with self._lock:
            self._answers.clear()


# -- sentences about a decode ---------------------------------------------------------


def count_sentence(answer: Answer) -> str:
    """How many molecules agree, in words: a full spectrum's are unique or ambiguous."""
    found, game = answer.found, answer.game
    count = found.count
    if found.every_molecule:
        return f"No ray shot: every molecule of {found.config} ({count:,}) agrees; they are not listed."
    if game.complete:
        if count == 0:
            return "No molecule gives this spectrum."
        if count == 1:
            return "Unique: one molecule gives this spectrum."
        return f"Ambiguous: {count:,} molecules give this spectrum."
    if count == 0:
        return "No molecule agrees with these rays."
    if count == 1:
        return "Solved: one molecule agrees with these rays."
    return f"{count:,} molecules agree with these rays."


def source_phrase(answer: Answer) -> str:
    """Where the candidates came from: the store, or computed and why."""
    config = answer.found.config
    if answer.found.source == "store":
        return f"read from the explored {config}"
    if answer.explored:
        return "computed: quicker than scanning the store for a partial game"
    if _compact_complete(config):
        return f"computed: {config} is a compact store, which keeps only its spectral groups"
    return f"computed: {config} is not explored"


def _compact_complete(config: Config) -> bool:
    """Whether the open database holds ``config`` complete as a compact store."""
    from bbcore.store import config_row, db, is_compact

    if db.database is None:
        return False
    row = config_row(config)
    return row is not None and bool(row.complete) and is_compact(config)


def shown_phrase(game: Game) -> str:
    """``10 rays shown on 14 positions``."""
    return f"{plural(len(game.rays()), 'ray')} shown on {plural(len(game.shown), 'position')}"


def shots_title(by: Ranking, *, marked: bool = False) -> str:
    """The next-shot table's title; ``marked`` when the board marks them with ``*``."""
    return f"Best next shots{' (*)' if marked else ''}, by {RANKINGS[by]}:"


def shot_table(shots: list[NextShot], top: int, outcomes: int) -> list[str]:
    """The ``top`` next shots as lines: a header, then a row per shot.

    A row ends with how many results the shot can have, then the ``outcomes``
    most frequent: the count comes first, so that a screen too narrow for the
    row cuts the list's tail, never the count (``27: H 229,246, ...``).
    """
    lines = [" pos        left    bits  results"]
    for shot in shots[:top]:
        shown = ", ".join(outcome_text(result, count) for result, count in shot.outcomes[:outcomes])
        more = ", ..." if len(shot.outcomes) > outcomes else ""
        lines.append(
            f"{shot.position:>4}  {shot.remaining:>10,.2f}  {shot.information:>6.3f}  "
            f"{len(shot.outcomes):>3}: {shown}{more}"
        )
    return lines
