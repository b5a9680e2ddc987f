"""Read-only questions the CLI and the TUI ask of the store.

Everything here reads page by page from the database (never a whole large
configuration at once) and returns small frozen dataclasses, so that a UI
can show them without knowing peewee.  The database must be open
(``store.open_database``); every function works from any thread, each
thread using its own connection (peewee's default).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from bbcore import families, rays, sql
from bbcore.config import Config
from bbcore.engine import EnantiomerBatch, molecules_of_numbers
from bbcore.geometry import TRANSFORM_NAMES, box_transforms
from bbcore.numbering import atoms_of, fits_int64, image_numbers_of, molecule_string
from bbcore.rays import STAT_FIELDS
from bbcore.render import max_atoms_differing
from bbcore.store import (
    FULL,
    Configuration,
    Molecule,
    Spectrum,
    counted_by_shards,
    has_config_indexes,
    is_compact,
    stored_count,
    unfinished_copy,
)

NOT_STARTED, PARTIAL, EXPLORED, COMPLETE = "not started", "partial", "explored", "complete"
PARTIAL_COPY = "partial copy"
"""The state of a configuration whose copy stopped before its end (``store.unfinished_copy``)."""


@dataclass(frozen=True)
class ConfigState:
    """A configuration in the database and how far its exploration went."""

    config: Config
    done: int  # molecules stored
    complete: bool
    ambiguous: int  # rows of Spectrums (spectral groups with symmetry)
    families: int  # ``id`` rows of Spectrums (spectral groups up to symmetry)
    store: str = FULL  # full (a row per molecule) or compact (bbcore.compact)
    copying: bool = False  # a copy stopped before its end (``store.unfinished_copy``): its rows are partial

    @property
    def total(self) -> int:
        """Molecules of the configuration."""
        return self.config.nb_mol

    @property
    def state(self) -> str:
        """``not started``, ``partial``, ``explored`` (no spectral groups yet), ``complete``, or
        ``partial copy`` (a copy stopped before its end: the same copy finishes it)."""
        if self.complete:
            return COMPLETE
        if self.copying:
            return PARTIAL_COPY
        if self.done == 0:
            return NOT_STARTED
        return EXPLORED if self.done >= self.total else PARTIAL

    @property
    def label(self) -> str:
        """The state for a table cell: ``not started``, ``42.0%`` or ``complete``."""
        if self.state == PARTIAL:
            return f"{100 * self.done / self.total:.1f}%"
        return self.state


def config_state(config: Config) -> ConfigState:
    """The state of one configuration (not started when unknown)."""
    row = Configuration.get_or_none(Configuration.config == config.name)
    if counted_by_shards(config):
        ambiguous, up_to_symmetry = families.spectra_counts(config)
    else:
        spectra = Spectrum.select().where(Spectrum.config == config.name)
        ambiguous, up_to_symmetry = spectra.count(), spectra.where(Spectrum.transform == "id").count()
    return ConfigState(
        config=config,
        done=stored_count(config),
        complete=bool(row and row.complete),
        ambiguous=ambiguous,
        families=up_to_symmetry,
        store=row.store if row else FULL,
        copying=unfinished_copy(row),
    )


def config_states() -> list[ConfigState]:
    """Every configuration known to the database, smallest first."""
    configs = [Config(row.nb_atoms, row.width) for row in Configuration.select()]
    return [config_state(c) for c in sorted(configs, key=lambda c: (c.width, c.atoms))]


@dataclass(frozen=True)
class MoleculeRecord:
    """One molecule: its number, board, spectrum, symmetry and statistics."""

    config: Config
    number: int
    canonical_number: int
    molecule: str
    spectrum: str
    transform: str
    stats: dict[str, int] = field(compare=False)

    @property
    def atoms(self) -> tuple[int, ...]:
        """The atom cells."""
        return tuple(i for i, ch in enumerate(self.molecule) if ch == "O")


def _record(config: Config, row: Molecule) -> MoleculeRecord:
    return MoleculeRecord(
        config,
        row.number,
        row.canonical_number,
        row.molecule,
        row.spectrum,
        row.transform,
        {name: getattr(row, name) for name in STAT_FIELDS},
    )


def computed_record(config: Config, number: int) -> MoleculeRecord:
    """A molecule computed with the reference implementation (no database needed).

    Python integers throughout, so that any configuration has its molecules,
    A84_B13's 4.6 x 10^49 included.
    """
    atoms = atoms_of(config, number)
    canonical = min(image_numbers_of(config, number))
    canonical_atoms = atoms_of(config, canonical)
    # The first transform, in the spec's order, taking the canonical molecule here.
    transform = box_transforms(config.width, config.height)[image_numbers_of(config, canonical).index(number)]
    return MoleculeRecord(
        config,
        number,
        canonical,
        molecule_string(config, atoms),
        rays.spectrum(config, atoms),
        transform,
        rays.statistics(config, canonical_atoms),
    )


def molecule_record(config: Config, number: int) -> MoleculeRecord:
    """Molecule ``number``: from the store when stored, else computed.

    A configuration whose numbers pass int64 is never stored (nor could
    SQLite hold its numbers): it is computed without asking.
    """
    where = (Molecule.config == config.name) & (Molecule.number == number)
    row = Molecule.get_or_none(where) if fits_int64(config) else None
    return _record(config, row) if row else computed_record(config, number)


def enantiomers(config: Config, number: int) -> list[MoleculeRecord]:
    """The enantiomer group of a molecule (1, 2, 4 or 8 molecules), by number."""
    return [molecule_record(config, n) for n in sorted(set(image_numbers_of(config, number)))]


def molecules_with_spectrum(config: Config, spectrum: str) -> list[MoleculeRecord]:
    """The molecules whose spectrum is exactly ``spectrum`` (normalised), by number.

    From ``Molecules`` in a full store.  A compact store lists the molecules
    of its ambiguous spectra (``families.spectrum_numbers``) and the records are
    computed by the engine, as a full store would hold them; a spectrum of
    one molecule is not stored there, and that molecule is found by decoding.
    """
    if is_compact(config):
        found = families.spectrum_numbers(config, spectrum) if counted_by_shards(config) else []
        numbers = found or _decoded_numbers(config, spectrum)
        return computed_records(config, numbers)
    return [_record(config, row) for row in _with_spectrum(config, spectrum)]


def _decoded_numbers(config: Config, spectrum: str) -> list[int]:
    """The molecules with a full spectrum, computed (``bbcore.decode``)."""
    from bbcore.decode import candidates
    from bbcore.game import parse_game

    found = candidates(config, parse_game(spectrum, config), source="compute")
    return [] if found.numbers is None else found.numbers.tolist()


def computed_records(config: Config, numbers: list[int]) -> list[MoleculeRecord]:
    """Molecules computed by the engine from their numbers, as a full store holds them, by number."""
    if not numbers:
        return []
    return _batch_records(molecules_of_numbers(config, np.array(numbers, dtype=np.int64)))


def _batch_records(batch: EnantiomerBatch) -> list[MoleculeRecord]:
    """The rows of an engine batch as records."""
    return [
        MoleculeRecord(
            batch.config,
            int(batch.number[i]),
            int(batch.canonical_number[i]),
            batch.molecule[i].tobytes().decode("ascii"),
            batch.spectrum[i].tobytes().decode("ascii"),
            TRANSFORM_NAMES[int(batch.transform[i])],
            dict(zip(STAT_FIELDS, map(int, batch.stats[i]))),
        )
        for i in range(len(batch))
    ]


def _with_spectrum(config: Config, spectrum: str):
    """The Molecules rows of one spectrum, through the configuration's spectrum index.

    A configuration still being explored has no such index yet: its
    molecules are scanned (``bbcore.sql``).
    """
    query = sql.by_spectrum(config, "*", "spectrum = ?", indexed=has_config_indexes(config), order="number")
    return Molecule.raw(query, spectrum)


@dataclass(frozen=True)
class GroupRow:
    """One spectral group (an ambiguous spectrum) as a line of the groups list."""

    config: Config
    spectrum: str
    nb_mol: int
    transform: str
    canonical_number: int
    max_diff: int  # the most atoms that differ between two of its molecules


def _groups_query(config: Config, *, all_rows: bool, size: int | None, order: str):
    """A full store's groups listing, from its ``Spectrums`` rows (a compact one reads ``Families``)."""
    query = Spectrum.select().where(Spectrum.config == config.name)
    if not all_rows:
        query = query.where(Spectrum.transform == "id")
    if size is not None:
        query = query.where(Spectrum.nb_mol == size)
    if order == "size":
        return query.order_by(Spectrum.nb_mol.desc(), Spectrum.canonical_number, Spectrum.spectrum)
    return query.order_by(Spectrum.canonical_number, Spectrum.spectrum)


def group_count(config: Config, *, all_rows: bool = False, size: int | None = None) -> int:
    """How many spectral groups (``id`` rows only unless ``all_rows``), of one size if given.

    A complete compact store counts them from its shards' counts
    (``bbcore.families``); one still being explored lists none yet.
    """
    if is_compact(config):
        return families.group_count(config, all_rows=all_rows, size=size) if counted_by_shards(config) else 0
    return _groups_query(config, all_rows=all_rows, size=size, order="canonical").count()


def group_page(
    config: Config,
    page: int,
    page_size: int = 50,
    *,
    all_rows: bool = False,
    size: int | None = None,
    order: str = "canonical",
) -> list[GroupRow]:
    """Page ``page`` (0-based) of the spectral groups, in ``order`` (canonical or size).

    A compact store reads each page by its families' ordinals, a few point
    queries whatever the page (``families.group_rows``).
    """
    if is_compact(config):
        if not counted_by_shards(config):
            return []
        start = page * page_size
        rows = families.group_rows(
            config, start, start + page_size, all_rows=all_rows, size=size, order=order
        )
        return [
            GroupRow(config, r.spectrum, r.nb_mol, r.transform, r.canonical_number, r.max_diff) for r in rows
        ]
    query = _groups_query(config, all_rows=all_rows, size=size, order=order)
    rows = list(query.offset(page * page_size).limit(page_size))
    return [_group_row(config, row) for row in rows]


def group_at(
    config: Config,
    index: int,
    *,
    all_rows: bool = False,
    size: int | None = None,
    order: str = "canonical",
) -> GroupRow | None:
    """The group at 0-based ``index`` of the list, or None past either end."""
    if index < 0:
        return None
    page = group_page(config, index, 1, all_rows=all_rows, size=size, order=order)
    return page[0] if page else None


def group_sizes(config: Config) -> list[int]:
    """The distinct sizes of the spectral groups, increasing."""
    if is_compact(config):
        return families.group_sizes(config) if counted_by_shards(config) else []
    query = (
        Spectrum.select(Spectrum.nb_mol)
        .where(Spectrum.config == config.name)
        .group_by(Spectrum.nb_mol)
        .order_by(Spectrum.nb_mol)
    )
    return [row.nb_mol for row in query]


def _group_row(config: Config, row: Spectrum) -> GroupRow:
    molecules = [m.molecule for m in _with_spectrum(config, row.spectrum)]
    return GroupRow(
        config, row.spectrum, row.nb_mol, row.transform, row.canonical_number, max_atoms_differing(molecules)
    )
