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
- the way: today's engine (``bbcore.decode``) where it enumerates, that is
  a square box with a fixed count of atoms and at most ``DIRECT_LIMIT``
  molecules to try, and a square box with a range of counts whose counts
  all pass that test (one engine run per count, added up); the solver
  (``bbcore.solver``) beyond it: more molecules than that, a box W x H, a
  range of counts.  Both give the same answers wherever both run (the
  tests); an answer of the solver keeps its ``solution`` (count exact or
  estimated, backbone, probabilities, core), and its ``found`` candidates
  when they are listed for a square box of a fixed count (then the next
  shots are the engine's, over them);
- cancellation: ``decode`` takes a ``threading.Event`` (a Textual thread
  worker's ``cancelled_event``) and raises ``DecodeCancelled`` once it is
  set, between batches, between solver calls, or by ending the counter's
  child process.

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
from math import comb
from typing import Final

import numpy as np

from bbcore import solver
from bbcore.config import Config
from bbcore.decode import (
    DIRECT_LIMIT,
    Candidates,
    DecodeCancelled,
    MoleculesDone,
    Source,
    Stop,
    candidates,
    compact_complete,
    excluded_cells,
    is_explored,
)
from bbcore.game import DecodeError, Game, Result
from bbcore.numbering import numbers_of
from bbcore.shots import (
    NEXT_SHOT_BUDGET,
    NextShot,
    Ranking,
    atom_counts,
    next_shots,
    outcome_text,
    rank_shots,
    ranked_shots,
    shot_of_counts,
)
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
    found: Candidates | None
    shots: list[NextShot]
    skipped: str | None
    explored: bool
    solution: solver.Solution | None = None
    config: Config | None = None

    def ranked(self, by: Ranking) -> Answer:
        """The same answer, its next shots ranked ``by`` the other figure or the same."""
        return replace(self, shots=rank_shots(self.shots, by))

    @property
    def count(self) -> int:
        """How many molecules agree (an estimate when not ``exact``)."""
        return self.found.count if self.found is not None else self.solution.count.value  # type: ignore[union-attr]

    @property
    def exact(self) -> bool:
        """Whether ``count`` is exact."""
        return self.found is not None or self.solution is None or self.solution.count.exact

    @property
    def core(self) -> tuple[int, ...] | None:
        """When no molecule agrees, the positions of a minimal set of shown rays that cannot all hold."""
        return None if self.solution is None else self.solution.core

    @property
    def probabilities(self) -> np.ndarray:
        """The probability of an atom in each cell, H rows of W."""
        if self.found is not None:
            counts = atom_counts(self.found)
            return counts / self.found.count if self.found.count else counts.astype(float)
        return self.solution.probabilities  # type: ignore[union-attr]

    def heat(self) -> tuple[np.ndarray, int]:
        """(H x W counts, total) for a heat map: the candidates' atom counts, or per mille of the
        probabilities, certain cells kept certain."""
        if self.found is not None:
            return atom_counts(self.found), self.found.count
        assert self.solution is not None
        backbone = self.solution.backbone
        counts = np.clip(np.rint(self.solution.probabilities * 1000), 1, 999).astype(np.int64)
        counts[backbone == 1], counts[backbone == 0] = 1000, 0
        return counts, 1000


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
                if answer.found is not None and not answer.found.every_molecule and game.extends(answer.game)
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
        width, height, least, most = shape(self.config)
        try:
            if height != width or least != most:
                answer = self._by_counts(game, by, progress, cancelled)
            elif self._beyond_engine(game, explored):
                answer = self._solved(game, by, cancelled)
        except solver.SolverCancelled:
            raise DecodeCancelled() from None
        except (solver.SolverMissing, solver.SolverTimeout) as error:
            raise DecodeError(str(error)) from None
        if answer is not None:
            return self._keep(answer)
        source: Source = self.source
        if source == "auto" and not (game.complete and compact_complete(self.config)):
            source = "store" if game.complete and explored else "compute"
        # else "auto": a full spectrum of a compact store is read from its family when ambiguous
        found = candidates(
            self.config, game, source=source, within=self.within(game), progress=progress, stop=cancelled
        )
        shots, skipped = ranked_shots(self.config, game, found, by=by, progress=progress, stop=cancelled)
        solution = None
        if found.count == 0 and game.shown:
            solution = self._solution(game, cancelled)  # the core: which rays cannot all hold
        return self._keep(Answer(game, found, shots, skipped, explored, solution, self.config))

    def compiles_solver(self, game: Game) -> bool:
        """Whether ``decode(game)`` compiles the solver first (about 10 s): it asks the solver
        (nothing kept answers it) and the solver's kernel is neither compiled nor cached, so
        that a screen can say why this decode takes longer.  It may read the store: call it
        from a worker."""
        if not game.shown or solver.kernels_ready():
            return False
        with self._lock:
            if game.results in self._answers:
                return False
        width, height, least, most = shape(self.config)
        if height != width or least != most:
            return self._counts_beyond_engine(game)
        return self._beyond_engine(game, self.source != "compute" and is_explored(self.config))

    def _beyond_engine(self, game: Game, explored: bool) -> bool:
        """A square box with a fixed count: the solver when the store does not answer and
        more than ``DIRECT_LIMIT`` molecules are left to try."""
        return (
            (self.source == "compute" or not explored)
            and bool(game.shown)
            and self.within(game) is None
            and _to_try(self.config, game) > DIRECT_LIMIT
        )

    def _counts_beyond_engine(self, game: Game) -> bool:
        """A rectangle, or a range of counts of which one passes ``DIRECT_LIMIT``: the solver."""
        width, height, _, _ = shape(self.config)
        return (
            height != width or not game.shown or any(_to_try(c, game) > DIRECT_LIMIT for c in self._counts())
        )

    def _counts(self) -> list[Config]:
        """A square box's configurations, one per count of atoms allowed."""
        width, _, least, most = shape(self.config)
        return [Config(n, width) for n in range(max(1, least), most + 1)]

    def _keep(self, answer: Answer) -> Answer:
        with self._lock:
            self._answers[answer.game.results] = answer
            self._answers.move_to_end(answer.game.results)
            while len(self._answers) > self.kept:
                self._answers.popitem(last=False)
        return answer

    def _solution(self, game: Game, cancelled: Stop | None) -> solver.Solution:
        width, height, least, most = shape(self.config)
        try:
            return solver.solve(width, height, least, most, game.rays(), stop=cancelled)
        except solver.SolverCancelled:
            raise DecodeCancelled() from None
        except (solver.SolverMissing, solver.SolverTimeout) as error:
            raise DecodeError(str(error)) from None

    def _solved(self, game: Game, by: Ranking, cancelled: Stop | None) -> Answer:
        """The solver's answer; with a fixed count (on a square or a rectangle, both numbered),
        its listed placements become candidates (and the engine ranks the next shots over them)."""
        solution = self._solution(game, cancelled)
        width, height, least, most = shape(self.config)
        if solution.placements is not None and least == most:
            atoms = np.array(solution.placements, dtype=np.uint8).reshape(-1, least)
            numbers = numbers_of(self.config, atoms.astype(np.int64))
            order = np.argsort(numbers)
            found = Candidates(self.config, numbers[order], atoms[order], "solver")
            shots, skipped = ranked_shots(self.config, game, found, by=by, stop=cancelled)
            return Answer(game, found, shots, skipped, False, solution, self.config)
        shots = solver.next_shots(solution, game.unknown, by)
        return Answer(game, None, shots, None, False, solution, self.config)

    def _by_counts(
        self, game: Game, by: Ranking, progress: MoleculesDone | None, cancelled: Stop | None
    ) -> Answer:
        """A range of counts on a square box: the engine once per count, added up, when each
        count passes ``DIRECT_LIMIT``; a rectangle or a larger range: the solver."""
        if self._counts_beyond_engine(game):
            return self._solved(game, by, cancelled)
        width, height, least, most = shape(self.config)
        total, counts = 0, np.zeros((height, width), dtype=np.int64)
        outcomes: dict[int, np.ndarray] = {}
        for config in self._counts():
            found = candidates(config, game, source="compute", progress=progress, stop=cancelled)
            total += found.count
            counts += atom_counts(found)
            if found.count and len(game.unknown) * found.count <= NEXT_SHOT_BUDGET:
                # every count's outcomes, one molecule's too (ranked_shots ranks none for one)
                for shot in next_shots(config, game, found, stop=cancelled):
                    into = outcomes.setdefault(shot.position, np.zeros(4 * width + 2, dtype=np.int64))
                    for result, n in shot.outcomes:
                        into[solver.code_of(result) + 2] += n
        backbone = np.where(counts == total, 1, np.where(counts == 0, 0, solver.UNDECIDED)).astype(np.int8)
        box = solver.Box(width, height)
        solution = solver.Solution(
            box, least, most, tuple(game.rays()), total > 0, None, backbone,
            solver.Count(total, True, method="engine"), None, None,
            counts / total if total else counts.astype(float), 0.0,
        )  # fmt: skip
        if total == 0:
            solution = self._solution(game, cancelled)
        shots = (
            rank_shots([shot_of_counts(p, c) for p, c in outcomes.items()], by)
            if total > 1 and len(game.unknown) * total <= NEXT_SHOT_BUDGET
            else []
        )
        skipped = None
        if total > 1 and game.unknown and not shots:
            skipped = f"next shots not ranked: {total:,} candidates is too many rays to trace"
        return Answer(game, None, shots, skipped, False, solution, self.config)

    def forget(self) -> None:
        """Drop the kept answers (the store changed)."""
        with self._lock:
            self._answers.clear()


# -- sentences about a decode ---------------------------------------------------------


def count_sentence(answer: Answer) -> str:
    """How many molecules agree, in words: a full spectrum's are unique or ambiguous."""
    found, game = answer.found, answer.game
    if found is None:
        return _solved_sentence(answer)
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


def _solved_sentence(answer: Answer) -> str:
    """How many placements agree, as the solver answered (exact or estimated)."""
    solution = answer.solution
    assert solution is not None
    if not solution.consistent:
        return (
            "No placement agrees with these rays: these cannot all hold together: "
            + ", ".join(str(p) for p in solution.core or ())
            + "."
        )
    count = solution.count
    if not answer.game.shown:
        return f"No ray shot: every placement ({count.value:,}) agrees; they are not listed."
    if count.exact:
        verb = "agrees" if count.value == 1 else "agree"
        return f"{plural(count.value, 'placement')} {verb} with these rays."
    return (
        f"About {count.value:,} placements agree with these rays (estimated: within a factor "
        f"{1 + (count.tolerance or 0):g} with {count.confidence:.0%} confidence)."
    )


def shape(config: Config) -> tuple[int, int, int, int]:
    """(width, height, least atoms, most atoms) of a configuration: the solver's plain ints."""
    return config.width, config.height, config.atoms, config.atoms_max


def _to_try(config: Config, game: Game) -> int:
    """Molecules the engine would trace to decode ``game`` (those of the cells its rays leave)."""
    return comb(config.cells - len(excluded_cells(config, game)), config.atoms)


def source_phrase(answer: Answer) -> str:
    """Where the candidates came from: the store, or computed and why."""
    if answer.found is None or answer.found.source == "solver":
        return "solved: more molecules than the engine lists, or a box it does not trace"
    config = answer.found.config
    if answer.found.source == "store":
        return f"read from the explored {config}"
    if answer.explored:
        return "computed: quicker than scanning the store for a partial game"
    if compact_complete(config):
        return f"computed: {config} is a compact store, which keeps only its spectral groups"
    return f"computed: {config} is not explored"


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
