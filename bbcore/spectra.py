"""Spectral groups: spectra shared by two or more molecules.

``build_spectrums`` fills the ``Spectrums`` table of a configuration from its
stored molecules and links each ambiguous spectrum to the others obtained
from it by symmetry (spec, "Tables"): going through the canonical molecules
in increasing number, and through each one's enantiomer group in increasing
number, an ambiguous spectrum not yet linked gets that molecule's transform
and canonical number.  That first molecule is simply the one with the
smallest (canonical_number, number) among the molecules of the spectrum.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from peewee import Case, chunked, fn

from bbcore import families, sql
from bbcore.config import Config
from bbcore.store import Spectrum, counted_by_shards, db, index_exists, refresh_statistics


def computed_spectrums(config: Config) -> dict[str, tuple[int, str, int]]:
    """The ambiguous spectra of the stored molecules: spectrum -> (nb_mol, transform, canonical_number).

    Read through the configuration's spectrum index (which must exist).
    ``build_spectrums`` stores them; ``bbcore check`` compares them with
    what is stored.
    """
    first: dict[str, tuple[int, int, str]] = {}
    count: dict[str, int] = {}
    for spectrum, canonical, number, transform in db.execute_sql(sql.ambiguous_molecules(config)):
        count[spectrum] = count.get(spectrum, 0) + 1
        if spectrum not in first or (canonical, number) < first[spectrum][:2]:
            first[spectrum] = (canonical, number, transform)
    return {s: (count[s], first[s][2], first[s][0]) for s in sorted(first)}


GroupingProgress = Callable[[int, int], None]
"""Called with (molecules grouped, molecules of the configuration), estimated, a few times a second."""

OPS_PER_TICK = 20_000
"""SQLite virtual-machine instructions between two looks at the clock while grouping."""
INDEX_OPS_PER_ROW, INDEX_OPS_PER_MOLECULE = 3, 8
"""An index build runs 3 instructions for every row of Molecules (the partial index
tests its WHERE) and 8 more for each molecule of the configuration (A4_B8, 635,376
rows: 11.0 instructions a row; an index of no configuration: 3.0)."""
QUERY_OPS_PER_MOLECULE = 20
"""The ambiguous molecules' query: 20.0 instructions per molecule on A4_B8."""
REPORT_EVERY = 0.25
"""Seconds between two progress reports while grouping."""


class GroupingMeter:
    """How far the grouping (two index builds, the ambiguous molecules' query) has gone.

    SQLite cannot say how far a statement is, but it calls a progress
    handler every ``OPS_PER_TICK`` virtual-machine instructions, and these
    statements run a nearly constant number of instructions per row
    (measured above): the instructions run, over those expected, give the
    share of the work done, as molecules.  A step that ends early or late
    puts the count back at the step's end, and the phase reports the
    configuration's molecules only when it is over.  The handler only
    counts and calls ``progress``: it never touches the connection.
    """

    def __init__(self, config: Config, progress: GroupingProgress | None) -> None:
        self.config, self.progress = config, progress
        rows = int(db.execute_sql(sql.dialect.molecule_rows_bound).fetchone()[0] or 0)
        molecules = config.nb_mol
        index_ops = INDEX_OPS_PER_ROW * max(rows, molecules) + INDEX_OPS_PER_MOLECULE * molecules
        self.steps = {
            name: 0 if index_exists(name) else index_ops
            for name in (sql.spectrum_index(config), sql.canonical_index(config))
        }
        self.steps["query"] = QUERY_OPS_PER_MOLECULE * molecules
        self.total = max(sum(self.steps.values()), 1)
        self.current = ""  # the step under way: an index's name, or "query"
        self.base = 0  # instructions expected before the current step
        self.step = 0  # instructions expected in the current step
        self.ops = 0  # instructions run in the current step
        self.last = 0.0

    def __enter__(self) -> GroupingMeter:
        # A server's connection has no progress handler: its steps report as they start.
        self.handled = hasattr(db.connection(), "set_progress_handler")
        if self.progress is not None:
            if self.handled:
                db.connection().set_progress_handler(self.tick, OPS_PER_TICK)
            self.report(force=True)
        return self

    def __exit__(self, *exc) -> None:
        if self.progress is not None and self.handled:
            db.connection().set_progress_handler(None, 0)

    def start(self, step: str) -> None:
        """A step begins: the ones before it are done."""
        self.base += self.step
        self.current, self.step, self.ops = step, self.steps[step], 0
        self.report(force=True)

    def tick(self) -> int:
        """SQLite's progress handler: count, and report now and then (0: go on)."""
        self.ops += OPS_PER_TICK
        self.report()
        return 0

    def done(self) -> int:
        """Molecules through the grouping so far (an estimate; never the whole before the end)."""
        ops = self.base + min(self.ops, int(0.99 * self.step))
        return min(self.config.nb_mol * ops // self.total, max(self.config.nb_mol - 1, 0))

    def report(self, force: bool = False) -> None:
        now = time.monotonic()
        if self.progress is not None and (force or now - self.last >= REPORT_EVERY):
            self.last = now
            self.progress(self.done(), self.config.nb_mol)


def build_spectrums(config: Config, progress: GroupingProgress | None = None) -> int:
    """Rebuild the Spectrums rows of a configuration (and its indexes); returns how many.

    ``progress`` (molecules grouped, molecules) is called a few times a
    second, from this thread (``GroupingMeter``).  The planner's statistics
    of Molecules are refreshed before the grouping query, and those of
    Spectrums once written (``store.refresh_statistics``).
    """
    with GroupingMeter(config, progress) as meter:
        for name in (sql.spectrum_index(config), sql.canonical_index(config)):
            meter.start(name)
            db.execute_sql(sql.create_index_named(config, name))
        refresh_statistics("Molecules")  # the planner sees the configuration's rows (issue 32, D1)
        meter.start("query")
        spectra = computed_spectrums(config)
    rows = [
        {"config": config.name, "spectrum": s, "nb_mol": n, "transform": t, "canonical_number": c}
        for s, (n, t, c) in spectra.items()
    ]
    with db.atomic():
        Spectrum.delete().where(Spectrum.config == config.name).execute()
        for batch in chunked(rows, 500):
            Spectrum.insert_many(batch).execute()
    refresh_statistics("Spectrums")
    if progress is not None:
        progress(config.nb_mol, config.nb_mol)
    return len(rows)


@dataclass(frozen=True)
class AmbiguityLine:
    """One line of the ambiguity report: spectral groups of one size."""

    size: int
    families: int  # spectral groups up to symmetry (``id`` rows)
    groups: int  # spectral groups with symmetry (all rows)
    molecules: int  # size * groups


def ambiguity_table(config: Config) -> list[AmbiguityLine]:
    """The spec's ambiguity report, one line per group size (no total line).

    A complete compact store sums its shards' counts (``families.size_counts``).
    """
    if counted_by_shards(config):
        counts = families.size_counts(config)
        return [AmbiguityLine(size, f, g, size * g) for size, (f, g) in counts.items()]
    query = (
        Spectrum.select(
            Spectrum.nb_mol,
            # CASE, not SUM(transform = 'id'): a server has no SUM of booleans
            fn.SUM(Case(None, [(Spectrum.transform == "id", 1)], 0)).alias("families"),
            fn.COUNT(Spectrum.spectrum).alias("groups"),
        )
        .where(Spectrum.config == config.name)
        .group_by(Spectrum.nb_mol)
        .order_by(Spectrum.nb_mol)
    )
    return [
        AmbiguityLine(row.nb_mol, int(row.families), row.groups, row.nb_mol * row.groups) for row in query
    ]
