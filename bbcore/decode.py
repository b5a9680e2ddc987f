"""Decoding a game: which molecules agree with the rays a player has shown.

A *candidate* is a molecule whose rays agree with every shown ray of a game
(``bbcore.game``).  How candidates are found (both ways give the same
answer, by the tests):

- from the ``Molecules`` table of an explored configuration: a full
  spectrum is one lookup of its normalised string in the configuration's spectrum
  index; a partial game is a scan of that index, ``GLOB`` fixing the
  absorbed and reflected positions and putting a letter at exits, and
  ``substr`` giving both ends of each exit pair the same letter (stored
  letters are normalised, a player's are not);
- directly with the engine: the shown rays first rule out cells
  (``excluded_cells``), then every molecule of the cells left, in batches
  in number order, is traced at the shown positions only, one shown ray at
  a time on the molecules still in the running, the ray that keeps fewest
  molecules first.  Memory stays flat whatever the configuration.

``candidates(..., source="auto")`` takes the store for full spectra and
computes partial games, which is quicker than the scan (bench/decode.py).
Next shots and atom probabilities over the candidates are in
``bbcore.shots``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from math import comb
from typing import Final, Literal, Protocol

import numpy as np

from bbcore.config import Config
from bbcore.engine import ABSORBED_CODE, REFLECTED_CODE, trace_batch
from bbcore.game import ABSORBED, REFLECTED, DecodeError, Game, Result, result_words
from bbcore.geometry import entry
from bbcore.numbering import (
    atoms_of,
    atoms_of_numbers,
    molecule_batches,
    molecule_string,
    number_of,
    numbers_of,
)
from bbcore.rays import trace
from bbcore.words import article

BATCH: Final = 1 << 15
"""Molecules traced together when computing candidates directly (small batches
reuse the same memory: fresh pages are costly on sandboxed machines)."""


DIRECT_LIMIT: Final = 100_000_000
"""The most molecules a configuration may have to be decoded without the store."""


Source = Literal["auto", "store", "compute"]


MoleculesDone = Callable[[int, int], None]
"""A progress callback of long work: called with (molecules done, molecules in all) between batches."""


class Stop(Protocol):
    """Anything with ``is_set()``, such as a ``threading.Event``."""

    def is_set(self) -> bool: ...


class DecodeCancelled(Exception):
    """The stop event was set during a long computation (a decode, next shots, a strategy book)."""


@dataclass
class Candidates:
    """The molecules that agree with a game.

    ``numbers`` (sorted, int64) and ``atoms`` (uint8, shape (k, N)) are
    None when no ray is shown: then every molecule is a candidate and they
    are not listed.  ``source`` says where they came from: ``"store"``,
    ``"computed"`` or ``"all"``.
    """

    config: Config
    numbers: np.ndarray | None
    atoms: np.ndarray | None
    source: str

    @property
    def every_molecule(self) -> bool:
        """True when no ray is shown: every molecule of the configuration."""
        return self.numbers is None

    @property
    def count(self) -> int:
        """How many molecules agree."""
        return self.config.nb_mol if self.numbers is None else len(self.numbers)

    def molecules(self, limit: int | None = None, start: int = 0) -> list[tuple[int, str]]:
        """(number, molecule string) of ``limit`` candidates (all by default) from
        the ``start``-th one (0-based), in number order."""
        end = self.count if limit is None else min(start + limit, self.count)
        if self.numbers is None or self.atoms is None:
            return [
                (k, molecule_string(self.config, atoms_of(self.config, k))) for k in range(start + 1, end + 1)
            ]
        return [
            (int(k), molecule_string(self.config, a))
            for k, a in zip(self.numbers[start:end], self.atoms[start:end].tolist())
        ]

    def batches(self, size: int) -> Iterator[np.ndarray]:
        """The candidates' atom cells, ``size`` molecules at a time."""
        if self.atoms is None:
            yield from molecule_batches(self.config, size)
        else:
            for i in range(0, len(self.atoms), size):
                yield self.atoms[i : i + size]

    def contains(self, atoms: Iterable[int]) -> bool:
        """Whether the molecule with these atom cells is a candidate."""
        if self.numbers is None:
            return True
        number = number_of(self.config, atoms)
        i = np.searchsorted(self.numbers, number)
        return bool(i < len(self.numbers) and self.numbers[i] == number)


def check_box(game: Game, config: Config) -> None:
    """Raise DecodeError unless ``game`` is written for the box of ``config``."""
    if (game.width, game.height) != (config.width, config.height):
        raise DecodeError(f"the game is for {article(f'{game.box} box')}, {config.name} is {config.box}")


def tick(stop: Stop | None, progress: MoleculesDone | None, done: int, total: int) -> None:
    """Between two batches: raise DecodeCancelled once ``stop`` is set, else report progress."""
    if stop is not None and stop.is_set():
        raise DecodeCancelled()
    if progress is not None:
        progress(done, total)


def candidates(
    config: Config,
    game: Game,
    *,
    source: Source = "auto",
    within: Candidates | None = None,
    progress: MoleculesDone | None = None,
    stop: Stop | None = None,
) -> Candidates:
    """Every molecule of ``config`` whose rays agree with every shown ray of ``game``.

    ``source``: ``"store"`` reads the explored configuration from the open
    database, ``"compute"`` traces the molecules directly, ``"auto"`` (best)
    reads a full spectrum from the store when ``bbcore.store.db`` is open
    and the configuration explored, and computes otherwise: a partial game
    makes SQLite scan every spectrum of the configuration, which
    bench/decode.py measures 2 to 4 times slower than computing.

    ``within`` narrows earlier candidates (of a game with fewer rays shown)
    instead of starting over.  ``progress`` and ``stop`` are checked between
    batches (DecodeCancelled on stop).
    """
    check_box(game, config)
    if not config.fixed_count:
        # Candidates of one count are one array of (k, N) cells; a range is the solver's.
        raise DecodeError(
            f"{config.name} is a range of atom counts: the engine decodes one count at a time "
            f"(such as {config.with_atoms(config.atoms).name}); a range needs the solver"
        )
    if not game.shown:
        return Candidates(config, None, None, "all")
    if within is not None and not within.every_molecule:
        assert within.numbers is not None and within.atoms is not None
        keep = _agreeing(config, within.atoms, game.rays())
        return Candidates(config, within.numbers[keep], within.atoms[keep], within.source)
    if source == "auto":
        if game.complete and compact_complete(config):
            found = _family_candidates(config, game)
            if found is not None:
                return found
        source = "store" if game.complete and is_explored(config) else "compute"
    if source == "store":
        return _stored_candidates(config, game)
    return _computed_candidates(config, game, progress, stop)


def compact_complete(config: Config) -> bool:
    """Whether the open database (if any) holds ``config`` complete as a compact store."""
    from bbcore.store import counted_by_shards, is_open

    return is_open() and counted_by_shards(config)


def _family_candidates(config: Config, game: Game) -> Candidates | None:
    """A full spectrum's molecules from its family in a compact store, or None when it is not
    ambiguous (one molecule or none: computed).  Its key finds the family
    (``bbcore.families``): milliseconds where computing A7_B8 took 1.8 s."""
    from bbcore.families import spectrum_numbers

    numbers = np.array(spectrum_numbers(config, game.pattern()), dtype=np.int64)
    if not len(numbers):
        return None
    return Candidates(config, numbers, atoms_of_numbers(config, numbers).astype(np.uint8), "store")


def _agreeing(config: Config, atoms: np.ndarray, rays: list[tuple[int, Result]]) -> np.ndarray:
    """Indexes of the molecules (atom cells) whose rays give every result of ``rays``.

    One ray at a time, on the molecules still in the running: each shown
    ray costs only what the previous ones left.
    """
    keep = np.arange(len(atoms))
    for position, result in rays:
        if len(keep) == 0:
            break
        code = (
            result - 1
            if isinstance(result, int)
            else (ABSORBED_CODE if result == ABSORBED else REFLECTED_CODE)
        )
        partner = trace_batch(config, atoms[keep], np.array([position - 1]))[0][:, 0]
        keep = keep[partner == code]
    return keep


def excluded_cells(config: Config, game: Game) -> list[int]:
    """Cells that no candidate can have an atom in, read from the shown rays' entries.

    A ray that comes out found, at both ends, its first cell and both front
    diagonals empty (else it is absorbed or reflected at the edge), and
    then the second cell of its line empty (else it is absorbed there).  A
    reflected ray found its first cell empty.
    """
    w, h = config.width, config.height
    excluded: set[int] = set()
    for position, result in enumerate(game.results, 1):
        if result is None or result == ABSORBED:
            continue
        (line, column), (dl, dc) = entry(w, position, h)
        first = (line + dl, column + dc)
        near = (
            [first]
            if result == REFLECTED
            else [
                first,
                (first[0] + dc, first[1] + dl),
                (first[0] - dc, first[1] - dl),
                (first[0] + dl, first[1] + dc),
            ]
        )
        excluded.update((l - 1) * w + c - 1 for l, c in near if 1 <= l <= h and 1 <= c <= w)
    return sorted(excluded)


def _computed_candidates(
    config: Config, game: Game, progress: MoleculesDone | None, stop: Stop | None
) -> Candidates:
    allowed = np.setdiff1d(np.arange(config.cells), excluded_cells(config, game))
    total = comb(len(allowed), config.atoms)
    if total > DIRECT_LIMIT:
        raise DecodeError(
            f"{config.name}: {total:,} molecules to try, too many to decode without "
            f"exploring the configuration (the limit is {DIRECT_LIMIT:,})"
        )
    rays = sorted(game.rays(), key=lambda ray: _rarity(config, *ray))
    found: list[np.ndarray] = [np.empty((0, config.atoms), dtype=np.uint8)]
    done = 0
    for atoms in molecule_batches(config, BATCH, allowed):
        tick(stop, progress, done, total)
        found.append(atoms[_agreeing(config, atoms, rays)])
        done += len(atoms)
    tick(stop, progress, total, total)
    atoms = np.concatenate(found)
    return Candidates(config, numbers_of(config, atoms.astype(np.int64)), atoms, "computed")


def _rarity(config: Config, position: int, result: Result) -> int:
    """Sort key of the shown rays, the result fewest molecules give first.

    The first ray is traced on every molecule, the next ones only on those
    left: a ray that turned keeps fewest, then a reflection, a ray straight
    across, and an absorption keeps most.
    """
    if isinstance(result, int):
        w, h = config.width, config.height
        across = position + result in (2 * h + w + 1, 2 * w + 3 * h + 1)
        return 2 if across else 0
    return 1 if result == REFLECTED else 3


def is_explored(config: Config) -> bool:
    """Whether the open database (if any) holds every molecule's spectrum: a complete full store.

    A compact store (``bbcore.compact``) keeps only the ambiguous spectra:
    its molecules are computed, as those of an unexplored configuration.
    """
    from bbcore.store import FULL, config_row, is_open

    if not is_open():
        return False
    row = config_row(config)
    return row is not None and bool(row.complete) and row.store == FULL


def _stored_candidates(config: Config, game: Game) -> Candidates:
    """Candidates read from the Molecules table of an explored configuration.

    A full spectrum is one lookup in the configuration's spectrum index.  A
    partial one is a scan of that index: ``GLOB`` fixes the absorbed and
    reflected positions and puts a letter at exits, and ``substr`` makes
    both ends of each exit pair carry the same letter, so that only the
    matching rows are read and only their numbers leave SQLite.  The
    configuration is a literal and the index is named (``bbcore.sql``):
    the planner would otherwise scan by primary key.
    """
    from bbcore import sql
    from bbcore.store import db, has_config_indexes

    if game.complete:
        conditions, params = ["spectrum = ?"], [game.pattern()]
    else:
        pattern = "".join("?" if r is None else "[a-z]" if isinstance(r, int) else r for r in game.results)
        conditions, params = [sql.dialect.matches("spectrum")], [sql.dialect.pattern(pattern)]
        conditions += [
            f"substr(spectrum, {p}, 1) = substr(spectrum, {q}, 1)"
            for p, q in game.rays()
            if isinstance(q, int)
        ]
    query = sql.by_spectrum(config, "number", " AND ".join(conditions), indexed=has_config_indexes(config))
    rows = db.execute_sql(query, params).fetchall()
    numbers = np.sort(np.array([row[0] for row in rows], dtype=np.int64))
    atoms = atoms_of_numbers(config, numbers).astype(np.uint8)
    return Candidates(config, numbers, atoms, "store")


@dataclass(frozen=True)
class Verdict:
    """Whether a guessed molecule agrees with a game.

    ``contradiction`` is (position, shown result, the guess's result) for
    the first shown ray the guess contradicts; ``others`` how many other
    molecules agree with the game too (None when not known).
    """

    consistent: bool
    contradiction: tuple[int, Result, Result] | None
    others: int | None
    message: str


def check_guess(config: Config, game: Game, guess: Iterable[int], cands: Candidates | None = None) -> Verdict:
    """Check a guessed molecule (atom cells) against every shown ray of ``game``.

    With ``cands`` (the game's candidates), a consistent guess is also told
    whether it is the only molecule that agrees.
    """
    check_box(game, config)
    cells = tuple(sorted(set(guess)))
    if len(cells) not in config.counts:
        hides = f"{config.atoms}" if config.fixed_count else f"{config.atoms} to {config.atoms_max}"
        raise DecodeError(f"the guess has {len(cells)} atoms, {config.name} has {hides}")
    if not all(0 <= c < config.cells for c in cells):
        raise DecodeError(f"a guess's cells are in 0..{config.cells - 1}")
    for position, shown in game.rays():
        ray = trace(config.width, cells, position, config.height)
        actual: Result = (
            ABSORBED
            if ray.result == "absorbed"
            else REFLECTED
            if ray.result == "reflected"
            else int(ray.exit or 0)
        )
        if actual != shown:
            return Verdict(
                False,
                (position, shown, actual),
                None,
                f"the guess contradicts position {position}: the game shows "
                f"{result_words(shown)}, the guess gives {result_words(actual)}",
            )
    if cands is None:
        return Verdict(True, None, None, "the guess agrees with every shown ray")
    others = cands.count - 1
    if others == 0:
        message = "the guess agrees with every shown ray and is the only molecule that does"
    else:
        message = (
            f"the guess agrees with every shown ray, but so do {others:,} other "
            f"molecule{'s' if others > 1 else ''}: it is not proved yet"
        )
    return Verdict(True, None, others, message)
