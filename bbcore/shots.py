"""Next shots and atom probabilities over a set of candidates.

- *next shot*: a position not shot yet, judged by how it would split the
  candidates: its outcomes (absorbed, reflected, out at each exit) with how
  many candidates give each, the expected number of candidates left (the sum
  of n^2 / N) and the expected information in bits;
- *atom counts / probabilities*: for each cell, how many (what share) of the
  candidates hold an atom there, every candidate taken as equally likely.

The ranking (``rank_shots``) is the one the decode screen, ``bbcore decode``
and the strategy book share: fewest expected candidates left, ties by most
information, then the lowest position (or information first).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from math import comb
from typing import Final, Literal

import numpy as np

from bbcore.config import Config
from bbcore.decode import Candidates, MoleculesDone, Stop, check_box, tick
from bbcore.engine import ABSORBED_CODE, REFLECTED_CODE, trace_batch
from bbcore.game import ABSORBED, REFLECTED, DecodeError, Game, Result
from bbcore.geometry import cell_of
from bbcore.numbering import fits_int64

NEXT_SHOT_BUDGET: Final = 24_000_000
"""Rays (candidates x positions not shot) above which a caller should not rank next shots.

About a second of tracing: enough to rank the first shot of A4_B8, where every
one of its 635,376 molecules is a candidate (20,332,032 rays)."""


_RAYS_PER_BATCH: Final = 1 << 21


Ranking = Literal["remaining", "information"]


def atom_counts(cands: Candidates) -> np.ndarray:
    """For each cell, shape (H, W) (H lines of W cells), how many candidates have an atom there."""
    config = cands.config
    if cands.atoms is None:
        each = comb(config.cells - 1, config.atoms - 1)
        # Python integers (an object array) where the count passes int64: A30_B13 and the like.
        counts = np.full(config.cells, each, dtype=np.int64 if fits_int64(config) else object)
    else:
        counts = np.bincount(cands.atoms.ravel(), minlength=config.cells).astype(np.int64)
    return counts.reshape(config.height, config.width)


def probabilities(cands: Candidates) -> np.ndarray:
    """For each cell, shape (H, W), the fraction of candidates with an atom there.

    Every candidate is taken as equally likely; all zeros when there is no
    candidate.
    """
    counts = atom_counts(cands)
    return counts / cands.count if cands.count else counts.astype(float)


def heat_token(count: int, total: int) -> str:
    """A cell of a heat map: ``-`` never an atom, ``O`` always, else a percentage 1..99."""
    if count == 0:
        return "-"
    if count == total:
        return "O"
    return str(min(99, max(1, round(100 * count / total))))


def doubtful_cells(cands: Candidates) -> list[int]:
    """Cells (0-based) holding an atom in some candidates but not all."""
    counts = atom_counts(cands).ravel()
    return [int(c) for c in np.flatnonzero((counts > 0) & (counts < cands.count))]


@dataclass(frozen=True)
class NextShot:
    """What shooting one position would tell, over the current candidates.

    ``outcomes`` pairs each possible result with how many candidates give
    it, most frequent first; ``remaining`` is the expected number of
    candidates left after the shot (sum of n^2 / N), ``information`` the
    expected information in bits (the entropy of the outcomes).
    """

    position: int
    outcomes: tuple[tuple[Result, int], ...]
    remaining: float
    information: float

    @property
    def splits(self) -> bool:
        """Whether the shot can tell some candidates apart."""
        return len(self.outcomes) > 1


def shot_cost(cands: Candidates, game: Game) -> int:
    """Rays ``next_shots`` would trace: candidates x positions not shot."""
    return cands.count * len(game.unknown)


def next_shots(
    config: Config,
    game: Game,
    cands: Candidates,
    *,
    by: Ranking = "remaining",
    progress: MoleculesDone | None = None,
    stop: Stop | None = None,
) -> list[NextShot]:
    """Every position not shot yet, best first, with its outcomes over the candidates.

    ``by="remaining"`` ranks by the expected number of candidates left
    (fewest first), ``by="information"`` by expected information (most
    first); ties go to the other figure, then to the lower position.
    """
    check_box(game, config)
    if by not in ("remaining", "information"):
        raise DecodeError(f"unknown ranking {by!r}: expected 'remaining' or 'information'")
    unknown = np.array(game.unknown, dtype=np.int64) - 1
    if len(unknown) == 0 or cands.count == 0:
        return []
    width = config.positions + 2  # codes -2..4W-1 shifted to 0..4W+1
    counts = np.zeros(len(unknown) * width, dtype=np.int64)
    offsets = (np.arange(len(unknown)) * width)[None, :]
    # With most positions unknown, tracing them all lets the engine fill the
    # far end of each exit from its near end (rays are reversible).
    every = len(unknown) > config.positions // 2
    size = max(1, _RAYS_PER_BATCH // (config.positions if every else len(unknown)))
    done = 0
    for atoms in cands.batches(size):
        tick(stop, progress, done, cands.count)
        if every:
            partner = trace_batch(config, atoms)[0][:, unknown].astype(np.int64)
        else:
            partner = trace_batch(config, atoms, unknown)[0].astype(np.int64)
        counts += np.bincount((partner + 2 + offsets).ravel(), minlength=len(counts))
        done += len(atoms)
    tick(stop, progress, done, cands.count)

    shots = [
        shot_of_counts(int(position), counts[i * width : (i + 1) * width])
        for i, position in enumerate(unknown + 1)
    ]
    return rank_shots(shots, by)


# numba compiles this one into the strategy book's kernel: mutmut leaves it whole (no numba code)
def shot_figures(counts: np.ndarray) -> tuple[float, float]:  # pragma: no mutate block
    """(remaining, information) of a shot from its outcome counts (any order, zeros ignored).

    ``remaining`` is the sum of n^2 / N, ``information`` the entropy in bits,
    summed over the counts from the largest down, so that two shots whose
    counts are the same multiset get the very same figures, and rounded to
    ``INFORMATION_DIGITS`` decimals, so that two different multisets with
    the same entropy compare equal too: {4, 3, 1, 1, 1, 1, 1} and
    {3, 2, 2, 2, 2, 1} (12 candidates) both give log2(12) - (8 + 3 log2 3) / 12
    bits, computed in a different order, one ulp apart (hypothesis found it:
    the book's kernel took the ulp for a difference where ``rank_shots``
    saw a tie).  Plain numpy that numba compiles too: the strategy book's
    kernel ranks with this function.
    """
    kept = np.sort(counts[counts > 0])[::-1]
    total = kept.sum()
    information = 0.0
    for n in kept:
        fraction = n / total
        information -= fraction * np.log2(fraction)
    return (kept * kept).sum() / total, round(max(0.0, information), INFORMATION_DIGITS)


INFORMATION_DIGITS = 9
"""Decimals an information figure is compared at (``shot_figures``, ``rank_shots``)."""


def shot_of_counts(position: int, counts: np.ndarray) -> NextShot:
    """The next shot at ``position`` from its outcome counts, indexed by engine code + 2
    (reflected, absorbed, then the exit positions)."""
    outcomes = sorted(
        ((_result_of_code(code - 2), int(n)) for code, n in enumerate(counts.tolist()) if n),
        key=lambda o: (-o[1], _outcome_order(o[0])),
    )
    remaining, information = shot_figures(np.asarray(counts, dtype=np.int64))
    return NextShot(position, tuple(outcomes), float(remaining), float(information))


def rank_shots(shots: Iterable[NextShot], by: Ranking) -> list[NextShot]:
    """Next shots best first: by fewest expected candidates left (``"remaining"``)
    or by most expected information (``"information"``); ties go to the other
    figure, then to the lower position."""
    if by == "remaining":
        return sorted(shots, key=lambda s: (round(s.remaining, 9), -_information(s), s.position))
    return sorted(shots, key=lambda s: (-_information(s), round(s.remaining, 9), s.position))


def _information(shot: NextShot) -> float:
    """A shot's information as it is compared (``shot_figures`` gives it rounded already)."""
    return round(shot.information, INFORMATION_DIGITS)


def ranked_shots(
    config: Config,
    game: Game,
    cands: Candidates,
    *,
    by: Ranking = "remaining",
    progress: MoleculesDone | None = None,
    stop: Stop | None = None,
) -> tuple[list[NextShot], str | None]:
    """``next_shots`` when there is something to rank within ``NEXT_SHOT_BUDGET``.

    Returns the ranked shots and None, or no shot and why (one line, for
    the user) when there are too many rays to trace.  With one candidate or
    none, or every position shot, there is nothing to rank and no reason.
    """
    if cands.count <= 1 or not game.unknown:
        return [], None
    if shot_cost(cands, game) > NEXT_SHOT_BUDGET:
        return [], (
            f"next shots not ranked: {cands.count:,} candidates x "
            f"{len(game.unknown)} positions is too many rays to trace; "
            f"shoot a ray or two first"
        )
    return next_shots(config, game, cands, by=by, progress=progress, stop=stop), None


def outcome_text(result: Result, count: int) -> str:
    """One outcome of a next shot: ``H 12``, ``R 3``, ``->7 20``."""
    name = "H" if result == ABSORBED else "R" if result == REFLECTED else f"->{result}"
    return f"{name} {count:,}"


def outcomes_text(shot: NextShot, limit: int) -> str:
    """A next shot's ``limit`` most frequent outcomes: ``H 12, R 3, ... (9 results)``."""
    text = ", ".join(outcome_text(r, n) for r, n in shot.outcomes[:limit])
    if len(shot.outcomes) > limit:
        text += f", ... ({len(shot.outcomes)} results)"
    return text


def _result_of_code(code: int) -> Result:
    if code == ABSORBED_CODE:
        return ABSORBED
    if code == REFLECTED_CODE:
        return REFLECTED
    return code + 1


def _outcome_order(result: Result) -> tuple[int, int]:
    return (0, 0) if result == ABSORBED else (1, 0) if result == REFLECTED else (2, int(result))


def is_ambiguous(cands: Candidates, shots: Iterable[NextShot]) -> bool:
    """Whether several candidates remain and no ray left can tell them apart."""
    return cands.count > 1 and not any(shot.splits for shot in shots)


def ambiguity(cands: Candidates, shots: Sequence[NextShot], skipped: str | None) -> str | None:
    """When the game is ambiguous, a sentence naming the atoms in doubt; else None.

    ``shots`` and ``skipped`` are what ``ranked_shots`` returned: when the
    shots were not ranked, nothing is known.
    """
    if cands.every_molecule or skipped or not is_ambiguous(cands, shots):
        return None
    return (
        f"No ray left can tell these {cands.count:,} molecules apart: the game is "
        f"ambiguous. Atoms in doubt: {cells_text(cands.config, doubtful_cells(cands))}."
    )


def cells_text(config: Config, cells: Iterable[int]) -> str:
    """Cells (0-based indexes) as ``(line, column)`` pairs."""
    return ", ".join("({}, {})".format(*cell_of(config.width, c)) for c in cells)
