"""A compact store's spectral groups, kept once per family (``store.Family``) and derived on read.

A family is an ambiguous spectrum with its images by the 8 symmetries: 1
to 8 spectral groups of one size.  The spec's linking (``Spectrums``)
gives every spectrum of a family the same canonical number c: the first
canonical molecule whose enantiomer group has one of them, and then every
one of them, since the images of c have the images of its spectrum.  So c
alone gives the family: trace c's 8 images in increasing number, and the
first image with each distinct spectrum gives that spectrum and its
transform (``derived``); the spectrum's molecules are the images of the
first spectrum's (stored, ``numbers``) by that transform (``images_of``).
A72_B8's 78.8 M ``Spectrums`` rows become 9.9 M ``Families`` rows.

The ordinals make every page of the groups listing a bounded number of
point queries, in both orders and any size filter (``group_rows``):

- ``position``: rank by c (the primary key with the configuration), and
  ``spectra_before``, the spectra of the families before it;
- ``size_position``: rank by nb_mol descending, then c (an index), and
  ``size_spectra_before``;
- the shards' counts by size (``size_counts``, ``GroupedShards.sizes``)
  say where each size starts in the size order, and how many families and
  spectra there are: nothing is counted over the table.

A page of families is a range of one ordinal; a page of every spectrum
(``--all``) binary-searches the monotonic ``*spectra_before`` column through
the same key (about 24 point queries for A7_B8), then reads at most a
page of families from there.  A typed spectrum finds its family by its key
(``engine.spectra_keys``, an index), then among the few families of that
key by deriving their spectra.

The writing (``FamilyWriter``) takes the families in increasing c, as the
compact exploration's writing stage merges its shards' results and as
``migrate`` reads an older file, and computes the ordinals as it streams
(the counts by size are known before).  It resumes after the last position
stored: the running counts are read back from the rows written.

The full store keeps the spec's ``Spectrums`` rows and its molecules, and
lists its groups from them (``bbcore.queries``): its files are bounded by
disk at a few million spectra, and building ``Families`` there too would
make every full file made by an older bbtui, read-only ones included,
unreadable until migrated.  ``bbcore export CONFIG --table spectrums``
streams a compact store's ``Spectrums`` rows as a full store's, derived.

A compact store made before ``Families`` (``Spectrums`` rows and
``FamilyMolecules``) is migrated in place by ``bbcore migrate``
(``migrate``: resumable, with progress); until then its readers say so in
one line.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace

import numpy as np
from peewee import fn

from bbcore import engine, sql
from bbcore.config import Config
from bbcore.geometry import TRANSFORM_NAMES
from bbcore.numbering import atoms_of_numbers, binomial_table
from bbcore.store import (
    COMPACT,
    Family,
    FamilyMolecules,
    GroupedShard,
    Spectrum,
    StoreError,
    config_row,
    db,
    insert_rows,
    refresh_statistics,
    write_transaction,
)

ATOM_CODE = ord("O")
DERIVE_BATCH = 1 << 12
"""Families derived at a time when every one is read (an export, a check, a migration)."""
MIGRATE_BATCH = 1 << 14
"""Families moved per transaction by ``migrate``."""


# -- packed molecules ------------------------------------------------------------------


def numbers_dtype(config: Config) -> np.dtype:
    """How molecule numbers are packed in ``Family.numbers``: 4 bytes when they fit, else 8."""
    return np.dtype("<u4") if config.nb_mol <= 1 << 32 else np.dtype("<u8")


def unpack_numbers(config: Config, blob: bytes) -> np.ndarray:
    """The molecule numbers packed in a ``Family.numbers`` blob."""
    return np.frombuffer(blob, dtype=numbers_dtype(config)).astype(np.int64)


def images_of(config: Config, numbers: np.ndarray, transform: str) -> np.ndarray:
    """The numbers of these molecules' images by a transform, sorted."""
    if transform == TRANSFORM_NAMES[0] or not len(numbers):
        return np.sort(numbers)
    table = binomial_table(config)
    images = engine.image_numbers(config, atoms_of_numbers(config, numbers, table), table)
    return np.sort(images[:, TRANSFORM_NAMES.index(transform)])


def max_atoms_apart(config: Config, numbers: np.ndarray) -> int:
    """The most atoms that one of these molecules has where another has none (0 for one molecule)."""
    if len(numbers) < 2:
        return 0
    atoms = atoms_of_numbers(config, np.asarray(numbers, dtype=np.int64))
    boards = np.zeros((len(atoms), config.cells), dtype=bool)
    np.put_along_axis(boards, atoms, True, axis=1)
    return int((boards[:, None, :] & ~boards[None, :, :]).sum(axis=2).max())


# -- the shards' counts (a compact store's groups, counted while grouping) ---------------


def risk_counts(config: Config) -> dict[int, tuple[int, int]]:
    """A compact store's spectral groups by atoms differing: ``{max_diff: (families, groups)}``."""
    return _shard_counts(config, GroupedShard.risk)


def size_counts(config: Config) -> dict[int, tuple[int, int]]:
    """A compact store's spectral groups by size: ``{molecules: (families, groups)}``.

    Summed from the shards' counts: a GROUP BY over A7_B8's 79 M spectra
    took about 30 s of its report.
    """
    return _shard_counts(config, GroupedShard.sizes)


def spectra_counts(config: Config) -> tuple[int, int]:
    """A compact store's ambiguous spectra and families, from its shards' counts."""
    query = GroupedShard.select(fn.SUM(GroupedShard.spectra), fn.SUM(GroupedShard.families)).where(
        GroupedShard.config == config.name
    )
    spectra, families = query.tuples().get()
    return int(spectra or 0), int(families or 0)


def _shard_counts(config: Config, column) -> dict[int, tuple[int, int]]:
    """The shards' JSON counts ``{value: [families, groups]}`` summed."""
    total: dict[int, list[int]] = {}
    for (text,) in GroupedShard.select(column).where(GroupedShard.config == config.name).tuples():
        for key, (families, groups) in json.loads(text).items():
            line = total.setdefault(int(key), [0, 0])
            line[0] += families
            line[1] += groups
    return {k: (v[0], v[1]) for k, v in sorted(total.items())}


@dataclass(frozen=True)
class SizeOrder:
    """Where each size starts in the size order, from the shards' counts."""

    counts: dict[int, tuple[int, int]]  # size: (families, spectra)
    families_above: dict[int, int]  # families of larger sizes
    spectra_above: dict[int, int]  # spectra of larger sizes
    families: int
    spectra: int


def size_order(config: Config) -> SizeOrder:
    """The counts by size and where each size starts in the size order (families, spectra)."""
    counts = size_counts(config)
    families_above, spectra_above = {}, {}
    families = spectra = 0
    for size in sorted(counts, reverse=True):
        families_above[size], spectra_above[size] = families, spectra
        families += counts[size][0]
        spectra += counts[size][1]
    return SizeOrder(counts, families_above, spectra_above, families, spectra)


# -- deriving a family's spectra -----------------------------------------------------------


def derived(config: Config, canonicals) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every spectrum of the families of these canonical numbers: ``(canonical, spectrum, transform)``.

    Sorted by canonical number, then spectrum (``S4W`` bytes); ``transform``
    is the index in ``TRANSFORM_NAMES`` of the first image of c (by number)
    with that spectrum: the spec's linking.
    """
    canonicals = np.unique(np.asarray(canonicals, dtype=np.int64))
    if not len(canonicals):
        return np.empty(0, np.int64), np.empty(0, f"S{config.positions}"), np.empty(0, np.int8)
    batch = engine.groups_of_canonicals(config, atoms_of_numbers(config, canonicals), canonicals)
    text = np.ascontiguousarray(batch.spectrum).view(f"S{config.positions}").ravel()
    order = np.lexsort((batch.number, text, batch.canonical_number))
    canonical, text, transform = batch.canonical_number[order], text[order], batch.transform[order]
    first = np.r_[True, (canonical[1:] != canonical[:-1]) | (text[1:] != text[:-1])]
    return canonical[first], text[first], transform[first].astype(np.int8)


@dataclass(frozen=True)
class FamilyRow:
    """One ``Families`` row (``sql.FAMILY_COLUMNS`` without config)."""

    position: int
    canonical_number: int
    key: int
    nb_mol: int
    spectra: int
    max_diff: int
    spectrum: str
    numbers: bytes
    spectra_before: int
    size_position: int
    size_spectra_before: int


def _rows(statement: str, parameters: tuple) -> list[FamilyRow]:
    return [FamilyRow(*row[1:]) for row in db.execute_sql(statement, parameters)]


@dataclass(frozen=True)
class SpectrumRow:
    """One spectral group of a compact store: the spec's ``Spectrums`` row and its max_diff."""

    spectrum: str
    nb_mol: int
    transform: str
    canonical_number: int
    max_diff: int


def _expand(config: Config, families: list[FamilyRow]) -> list[tuple[FamilyRow, SpectrumRow]]:
    """Every spectrum of these families, each family's by spectrum, families in the given order."""
    canonical, text, transform = derived(config, [f.canonical_number for f in families])
    starts = np.searchsorted(canonical, [f.canonical_number for f in families], side="left")
    ends = np.searchsorted(canonical, [f.canonical_number for f in families], side="right")
    out = []
    for family, low, high in zip(families, starts.tolist(), ends.tolist()):
        for i in range(low, high):
            row = SpectrumRow(
                text[i].decode("ascii"),
                family.nb_mol,
                TRANSFORM_NAMES[int(transform[i])],
                family.canonical_number,
                family.max_diff,
            )
            out.append((family, row))
    return out


def _first_row(family: FamilyRow) -> SpectrumRow:
    """The family's first spectrum (transform id), as stored."""
    return SpectrumRow(
        family.spectrum, family.nb_mol, TRANSFORM_NAMES[0], family.canonical_number, family.max_diff
    )


# -- the layout of a file ------------------------------------------------------------------


def needs_migration(config: Config) -> bool:
    """Whether a compact configuration was stored by a bbtui before ``Families`` (``migrate`` it)."""
    row = config_row(config)
    if row is None or row.store != COMPACT or not row.complete:
        return False
    if Family.select().where(Family.config == config.name).exists():
        return FamilyMolecules.select().where(FamilyMolecules.config == config.name).exists()
    return (
        FamilyMolecules.select().where(FamilyMolecules.config == config.name).exists()
        or Spectrum.select().where(Spectrum.config == config.name).exists()
    )


def require_current(config: Config) -> None:
    """Raise StoreError (one line) when the configuration's groups are in an older layout."""
    if needs_migration(config):
        raise StoreError(
            f"{config.name} was stored by an older bbtui (one row per spectrum): "
            "run 'bbcore migrate' once to bring the file to this layout"
        )


# -- reading pages -------------------------------------------------------------------------

ORDERS = {"canonical": ("position", "spectra_before"), "size": ("size_position", "size_spectra_before")}
"""Each order of the groups listing: the ordinal of a family in it, and the spectra before it."""


def group_count(config: Config, *, all_rows: bool = False, size: int | None = None) -> int:
    """How many families (or spectra, ``all_rows``), of one size if given: the shards' counts."""
    require_current(config)
    counts = size_counts(config)
    lines = (
        [counts[size]] if size is not None and size in counts else [] if size is not None else counts.values()
    )
    return sum(spectra if all_rows else families for families, spectra in lines)


def group_sizes(config: Config) -> list[int]:
    """The distinct sizes of the spectral groups, increasing: the shards' counts."""
    return sorted(size_counts(config))


def group_rows(
    config: Config,
    start: int,
    stop: int,
    *,
    all_rows: bool = False,
    size: int | None = None,
    order: str = "canonical",
) -> list[SpectrumRow]:
    """The spectral groups at 0-based indexes start..stop-1 of the listing, in ``order``.

    Families only (their first spectrum, ``id``) unless ``all_rows``; of one
    size if given (then both orders are the same: by canonical number).
    """
    require_current(config)
    layout = size_order(config)
    if size is not None:
        if size not in layout.counts:
            return []
        column, before = ORDERS["size"]
        first_family, families = layout.families_above[size], layout.counts[size][0]
        first_spectrum, spectra = layout.spectra_above[size], layout.counts[size][1]
    else:
        column, before = ORDERS[order]
        first_family, families, first_spectrum, spectra = 0, layout.families, 0, layout.spectra
    start, stop = max(start, 0), min(stop, spectra if all_rows else families)
    if start >= stop:
        return []
    if not all_rows:
        low, high = first_family + start, first_family + stop
        return [
            _first_row(f)
            for f in _rows(sql.families_by(config, column, f"{column} BETWEEN ? AND ?"), (low, high - 1))
        ]
    target = first_spectrum + start
    ordinal = _holding(config, column, before, target, first_family, first_family + families - 1)
    last = min(ordinal + (stop - start), first_family + families) - 1
    found = _rows(sql.families_by(config, column, f"{column} BETWEEN ? AND ?"), (ordinal, last))
    if not found:
        return []
    skip = target - getattr(found[0], before)
    return [row for _, row in _expand(config, found)[skip : skip + stop - start]]


def _holding(config: Config, column: str, before: str, target: int, low: int, high: int) -> int:
    """The ordinal in [low, high] of the family holding the ``target``-th spectrum of the order.

    The last family whose ``before`` is at most ``target``: a binary search,
    one point query a step (``before`` grows with the ordinal).
    """
    statement = sql.family_ordinal(config, column, before)
    while low < high:
        middle = (low + high + 1) // 2
        (value,) = db.execute_sql(statement, (middle,)).fetchone()
        if value <= target:
            low = middle
        else:
            high = middle - 1
    return low


# -- a spectrum's family ---------------------------------------------------------------------


def partner_of(config: Config, spectrum: str) -> np.ndarray | None:
    """A spectrum string as its partner array (``engine.trace_batch``'s codes), None if malformed."""
    if len(spectrum) != config.positions:
        return None
    partner = np.full(config.positions, engine.UNKNOWN, dtype=np.int64)
    ends: dict[str, list[int]] = {}
    for position, character in enumerate(spectrum):
        if character == "@":
            partner[position] = engine.ABSORBED_CODE
        elif character == "&":
            partner[position] = engine.REFLECTED_CODE
        else:
            ends.setdefault(character, []).append(position)
    for pair in ends.values():
        if len(pair) != 2:
            return None
        partner[pair[0]], partner[pair[1]] = pair[1], pair[0]
    return partner


def spectrum_family(config: Config, spectrum: str) -> tuple[FamilyRow, str] | None:
    """The family of an ambiguous spectrum of a compact store and the spectrum's transform, or None.

    Its keys (``engine.stored_keys``, one a keying) name a few families at
    most (one, but for a 64-bit collision); deriving their spectra finds it.
    """
    require_current(config)
    partner = partner_of(config, spectrum)
    if partner is None:
        return None
    keys = tuple(engine.stored_keys(config, partner[None, :])[0].tolist())
    found = _rows(sql.families_by(config, "key", "key IN (?, ?)"), keys)
    for family, row in _expand(config, found):
        if row.spectrum == spectrum:
            return family, row.transform
    return None


def spectrum_numbers(config: Config, spectrum: str) -> list[int]:
    """The molecules of an ambiguous spectrum of a compact store, by number (empty if not ambiguous)."""
    found = spectrum_family(config, spectrum)
    if found is None:
        return []
    family, transform = found
    return images_of(config, unpack_numbers(config, family.numbers), transform).tolist()


def spectrum_group(config: Config, spectrum: str) -> SpectrumRow | None:
    """The spectral group of a spectrum of a compact store (its ``Spectrums`` row), or None."""
    found = spectrum_family(config, spectrum)
    if found is None:
        return None
    family, transform = found
    return SpectrumRow(spectrum, family.nb_mol, transform, family.canonical_number, family.max_diff)


def every_family(config: Config) -> Iterator[list[FamilyRow]]:
    """Every family of a configuration by position, a batch at a time."""
    require_current(config)
    statement = sql.families_by(config, "position", "position BETWEEN ? AND ?")
    low = 0
    while batch := _rows(statement, (low, low + DERIVE_BATCH - 1)):
        yield batch
        low += DERIVE_BATCH


def spectrum_rows(config: Config, *, with_numbers: bool = True) -> Iterator[tuple[SpectrumRow, list[int]]]:
    """Every spectral group of a compact store with its molecules (by number), in canonical order.

    Canonical order: by canonical number, then spectrum (the groups listing's
    ``--all``).  ``with_numbers=False`` leaves the molecules out (empty lists).
    """
    table = binomial_table(config)
    for families in every_family(config):
        expanded = _expand(config, families)
        images: dict[int, np.ndarray] = {}
        if with_numbers:
            for family in families:
                numbers = unpack_numbers(config, family.numbers)
                images[family.position] = (
                    engine.image_numbers(config, atoms_of_numbers(config, numbers, table), table)
                    if len(numbers)
                    else np.empty((0, 8), dtype=np.int64)
                )
        for family, row in expanded:
            if not with_numbers:
                yield row, []
                continue
            column = images[family.position][:, TRANSFORM_NAMES.index(row.transform)]
            yield row, np.sort(column).tolist()


# -- writing ---------------------------------------------------------------------------------


def _insert_families(config: Config) -> str:
    """SQLite's INSERT of a configuration's ``Families`` rows: every column bound but the configuration.

    Naming the configuration as a literal instead of binding it to each row
    saved 14% of executemany's CPU on A6_B8's families.
    """
    values = ", ".join([sql.config_literal(config)] + ["?"] * (len(sql.FAMILY_COLUMNS) - 1))
    return f"INSERT INTO {sql.FAMILIES} ({', '.join(sql.FAMILY_COLUMNS)}) VALUES ({values})"


def _insert_statement(config: Config) -> str:
    """The open store's INSERT of ``Families`` rows (``insert_rows``): a server's COPY takes every column."""
    return sql.INSERT_FAMILIES if sql.dialect.server else _insert_families(config)


def _named(config: Config, rows: Iterator[tuple]) -> Iterator[tuple]:
    """``family_rows`` as the open store's INSERT takes them: with the configuration on a server."""
    return ((config.name, *row) for row in rows) if sql.dialect.server else rows


@dataclass
class FamilyColumns:
    """A batch of families to write, by increasing canonical number."""

    canonical: np.ndarray  # int64
    key: np.ndarray  # uint64
    nb_mol: np.ndarray  # int64
    spectra: np.ndarray  # int64
    max_diff: np.ndarray  # int64
    spectrum: list[str]
    numbers: list[bytes]


@dataclass
class FamilyOrdinals:
    """The running counts that give each family written its ordinals, in increasing canonical number.

    ``position`` and ``spectra_before`` are the next family's rank and the
    spectra before it; ``seen_families`` and ``seen_spectra`` count the
    families and spectra written so far of each size, which with the size
    order (``SizeOrder``, the shards' counts) give ``size_position`` and
    ``size_spectra_before``.  Plain numbers and dicts: the writing stage
    hands a copy to each worker that writes a part of the table
    (``compact.write``).
    """

    config: Config
    layout: SizeOrder
    position: int = 0
    spectra_before: int = 0
    seen_families: dict[int, int] = field(default_factory=dict)
    seen_spectra: dict[int, int] = field(default_factory=dict)
    stored_last: int | None = None
    """The canonical number of the last family stored when these counts were read (``stored``),
    None when none was: where a writing resumes."""

    @classmethod
    def stored(cls, config: Config) -> FamilyOrdinals:
        """The counts after the families already stored (where a writing resumes)."""
        (row,) = db.execute_sql(sql.LAST_FAMILY_ROW, (config.name,)).fetchall() or [None]
        ordinals = cls(config, size_order(config))
        if row is not None:
            ordinals.position, ordinals.stored_last = row[0] + 1, int(row[1])
        for size, families, spectra in db.execute_sql(sql.FAMILIES_BY_SIZE, (config.name,)):
            ordinals.seen_families[size], ordinals.seen_spectra[size] = families, spectra
            ordinals.spectra_before += spectra
        return ordinals

    def copy(self) -> FamilyOrdinals:
        """The same counts, to be advanced on their own."""
        return replace(self, seen_families=dict(self.seen_families), seen_spectra=dict(self.seen_spectra))

    def advance(self, sizes: np.ndarray, spectra: np.ndarray) -> tuple[np.ndarray, ...]:
        """The ordinals of the next families (their sizes and spectra, in increasing c), counted.

        Returns ``(position, spectra_before, size_position, size_spectra_before)``.
        """
        count = len(sizes)
        spectra = np.asarray(spectra, dtype=np.int64)
        sizes = np.asarray(sizes, dtype=np.int64)
        position = self.position + np.arange(count, dtype=np.int64)
        spectra_before = self.spectra_before + np.r_[0, np.cumsum(spectra)[:-1]]
        size_position = np.empty(count, dtype=np.int64)
        size_spectra_before = np.empty(count, dtype=np.int64)
        for size in np.unique(sizes).tolist():
            if size not in self.layout.counts:
                raise StoreError(
                    f"{self.config.name}: a family of {size} molecules that the shards did not count; "
                    "reset it and explore it again"
                )
            which = np.flatnonzero(sizes == size)
            families, seen = self.seen_families.get(size, 0), self.seen_spectra.get(size, 0)
            size_position[which] = self.layout.families_above[size] + families + np.arange(len(which))
            these = spectra[which]
            size_spectra_before[which] = (
                self.layout.spectra_above[size] + seen + np.r_[0, np.cumsum(these)[:-1]]
            )
            self.seen_families[size] = families + len(which)
            self.seen_spectra[size] = seen + int(these.sum())
        self.position += count
        self.spectra_before += int(spectra.sum())
        return position, spectra_before, size_position, size_spectra_before


def family_rows(ordinals: FamilyOrdinals, columns: FamilyColumns) -> Iterator[tuple]:
    """A batch's ``Families`` rows (``sql.FAMILY_COLUMNS`` without the configuration), its ordinals
    counted in ``ordinals``."""
    sizes = columns.nb_mol.astype(np.int64)
    spectra = columns.spectra.astype(np.int64)
    position, spectra_before, size_position, size_spectra_before = ordinals.advance(sizes, spectra)
    return zip(
        position.tolist(),
        columns.canonical.tolist(),
        columns.key.astype(np.uint64).view(np.int64).tolist(),
        sizes.tolist(),
        spectra.tolist(),
        columns.max_diff.tolist(),
        columns.spectrum,
        columns.numbers,
        spectra_before.tolist(),
        size_position.tolist(),
        size_spectra_before.tolist(),
    )


class FamilyWriter:
    """Families written in increasing canonical number, their ordinals computed as they stream.

    The counts by size (the shards') say where each size starts in the size
    order; the running counts (``FamilyOrdinals``: families and spectra so
    far, in all and by size) are read back from the rows already written, so
    a writing killed at any moment resumes after its last position.  Each
    ``write`` is one transaction, in this thread: inserting from a thread of
    its own while this one prepared the next batch was no quicker on A6_B8's
    669,622 families (medians of 4, alternating, load 14: 24.3 s threaded,
    21.8 s inline), SQLite's inserts being most of the time.  A compact
    exploration on SQLite writes its families in parts, in worker processes
    (``compact.write``); this writer is the server's way, and ``migrate``'s.
    """

    def __init__(self, config: Config) -> None:
        self.config = config
        self.ordinals = FamilyOrdinals.stored(config)
        self.last = self.ordinals.stored_last  # the last canonical number written

    @property
    def position(self) -> int:
        """Families written so far."""
        return self.ordinals.position

    @property
    def total(self) -> int:
        """Families of the configuration (the shards' counts)."""
        return self.ordinals.layout.families

    def write(self, columns: FamilyColumns) -> None:
        """Append a batch of families (after the last one written) in one transaction."""
        if not len(columns.canonical):
            return
        before = self.ordinals.copy()
        rows = family_rows(self.ordinals, columns)
        try:
            with write_transaction(self.config):  # stops the run if its lock was lost (``server.check_lock``)
                insert_rows(
                    "Families", sql.FAMILY_COLUMNS, _named(self.config, rows), _insert_statement(self.config)
                )
        except BaseException:
            self.ordinals = before  # nothing was written
            raise
        self.last = int(columns.canonical[-1])

    def finish(self) -> None:
        """Build the configuration's family indexes (``build_family_indexes``)."""
        build_family_indexes(self.config)


def build_family_indexes(config: Config) -> None:
    """Build a configuration's family indexes (after the bulk load: see ``sql``), and refresh the
    planner's statistics of what was written (``store.refresh_statistics``)."""
    for statement in sql.create_family_indexes(config):
        db.execute_sql(statement)
    refresh_statistics("Families", "Profiles")


def family_facts(config: Config, canonicals: np.ndarray, numbers: list[np.ndarray]) -> FamilyColumns:
    """Everything ``Families`` stores of families given by c and their first spectrum's molecules.

    What the compact exploration's grouping computes as it goes, computed
    again from c (``migrate``): c's spectrum and key by tracing it, its
    family's spectra by deriving them.
    """
    canonicals = np.asarray(canonicals, dtype=np.int64)
    atoms = atoms_of_numbers(config, canonicals)
    partner, _, _ = engine.trace_batch(config, atoms)
    key = engine.spectrum_keys(config, atoms, partner).keys
    text = np.ascontiguousarray(engine.letters(partner)).view(f"S{config.positions}").ravel()
    canonical, _, _ = derived(config, canonicals)
    present, spectra = np.unique(canonical, return_counts=True)
    spectra_of = dict(zip(present.tolist(), spectra.tolist()))
    return FamilyColumns(
        canonical=canonicals,
        key=key,
        nb_mol=np.array([len(n) for n in numbers], dtype=np.int64),
        spectra=np.array([spectra_of[c] for c in canonicals.tolist()], dtype=np.int64),
        max_diff=np.array([max_atoms_apart(config, n) for n in numbers], dtype=np.int64),
        spectrum=[t.decode("ascii") for t in text.tolist()],
        numbers=[np.asarray(n).astype(numbers_dtype(config)).tobytes() for n in numbers],
    )


# -- a file made before Families -----------------------------------------------------------------

MigrationProgress = Callable[[int, int], None]
"""Called with (families moved, families of the configuration) after each transaction."""


def migrate(config: Config, progress: MigrationProgress | None = None) -> int:
    """Move a compact configuration stored before ``Families`` into it; returns its families.

    Its ``FamilyMolecules`` rows (c and the first spectrum's molecules), in
    increasing c, become ``Families`` rows (the rest computed again from c:
    ``family_facts``); then its ``Spectrums`` and ``FamilyMolecules`` rows
    are deleted in one transaction.  Killed at any moment, it resumes.  The
    caller holds the configuration's exploration lock.
    """
    writer = FamilyWriter(config)
    last = -1 if writer.last is None else writer.last
    if progress is not None:
        progress(writer.position, writer.total)
    while rows := db.execute_sql(sql.OLD_FAMILIES, (config.name, last, MIGRATE_BATCH)).fetchall():
        canonicals = np.array([c for c, _ in rows], dtype=np.int64)
        numbers = [unpack_numbers(config, blob) for _, blob in rows]
        writer.write(family_facts(config, canonicals, numbers))
        last = int(canonicals[-1])
        if progress is not None:
            progress(writer.position, writer.total)
    writer.finish()
    with db.atomic():
        Spectrum.delete().where(Spectrum.config == config.name).execute()
        FamilyMolecules.delete().where(FamilyMolecules.config == config.name).execute()
    return writer.position
