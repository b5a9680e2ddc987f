"""``bbcore check``: verify a stored configuration, as ``git fsck`` or a ZFS scrub would.

A database received from elsewhere can be trusted only once it is checked.
``check(config)`` reads the open database (read-only is enough) and runs
its phases in order (``PHASES``; a full store ``CHECKS``, a compact one
``COMPACT_CHECKS``).  What each can find is a registered ``Finding``
(``FINDINGS``: a name, the stores it applies to, one line saying what
damage it names): every difference reported names one, and the tests
plant each finding's damage in a real file (``tests/test_check_damage.py``
fails on a finding that no planted damage exercises).

Every phase streams: it reads a block of rows at a time (``BLOCK``
families, molecules or rows), computes what they should be with numpy and
the engine's kernels for the whole block at once, and keeps only counts and
the first ``LISTED`` differences of each phase.  Memory does not grow with
the configuration (A7_B8's 79 M spectra are never held together), and every
phase reports progress, SQLite's integrity check included (``SqliteMeter``).

A compact store (``bbcore.compact``) is checked for what it holds: one
``Families`` row per family (``bbcore.families``), read once in position
order, each family re-traced and every column and ordinal compared; its
checks are one section of this module (``CompactGroups``, ``CompactJudge``),
written against its layout, while the block machinery (``rows_in_blocks``,
``family_spectra``, ``SqliteMeter``, the registry) is shared.
What a compact store cannot show, a spectrum shared by two molecules and
stored nowhere, only a new exploration finds.

Each phase keeps its first ``LISTED`` differences (molecule number, what,
what is stored, what was computed) and counts them all.  Only a complete
configuration is checked (a partial one has no spectral groups to check).
"""

from __future__ import annotations

import gc
import random
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import count, groupby
from math import comb

import numpy as np
from peewee import chunked

from bbcore import engine, families, rays, sql
from bbcore.compact.trace import PROFILE_FIELDS
from bbcore.config import Config
from bbcore.engine import image_numbers
from bbcore.families import images_of, numbers_dtype, unpack_numbers
from bbcore.geometry import TRANSFORM_NAMES, transform_atoms
from bbcore.numbering import atoms_of, atoms_of_numbers, atoms_of_range, binomial_table, number_of
from bbcore.rays import STAT_FIELDS
from bbcore.store import COMPACT, FULL, Configuration, ExploredRange, db, index_exists, is_server, opened

SAMPLE = 10_000
"""Molecules re-traced by the engine, by default."""
REFERENCE_SAMPLE = 1_000
"""Molecules re-traced by the reference ``rays.py``, by default (about a millisecond each)."""
SEED = 14
"""The default seed of the samples: the same molecules every time, unless ``--seed``."""
LISTED = 20
"""Differences kept, per check."""
FAMILY_BATCH = 8192
"""Numbers per batch of the full store's families check (whole enantiomer groups are read at once)."""
BLOCK = 1 << 14
"""Rows (families, Spectrums rows, ambiguous molecules) read and computed at a time."""
ROWS_PER_QUERY = 500
"""Numbers per ``IN (...)`` look-up of sampled rows."""

CheckProgressCallback = Callable[[str, int, int], None]
"""Called with (check, done, total) while a check runs."""


# -- the registry: phases and findings -------------------------------------------------


@dataclass(frozen=True)
class Phase:
    """One line of the report: a group of findings checked together, with its progress."""

    name: str
    label: str
    description: str


@dataclass(frozen=True)
class Finding:
    """A kind of damage ``check`` names: ``phase.what``, the stores it applies to, one line."""

    name: str
    stores: tuple[str, ...]
    description: str

    @property
    def phase(self) -> str:
        """The phase that reports it."""
        return self.name.split(".")[0]


BOTH = (FULL, COMPACT)

PHASES: dict[str, Phase] = {
    phase.name: phase
    for phase in (
        Phase(
            "integrity",
            "SQLite integrity_check",
            "SQLite's integrity_check of the whole file: every b-tree, page, and index against its table",
        ),
        Phase(
            "configuration",
            "configuration",
            "the Configurations row against the name (C(W², N), N, W) and the explored ranges against it",
        ),
        Phase("count", "molecule count", "the molecules stored (rows, or a compact store's profiles)"),
        Phase(
            "groups",
            "spectral groups",
            "every Spectrums row against the molecules that have its spectrum (a compact store: every "
            "Families row, its molecules re-traced, its columns and ordinals) and the stored counts by size",
        ),
        Phase(
            "families",
            "families",
            "every molecule row against its enantiomer group: canonical number, transform, board, "
            "spectrum by symmetry, no member missing",
        ),
        Phase("engine", "engine sample", "a seeded sample re-traced by the engine, every column compared"),
        Phase("reference", "reference sample", "a smaller sample re-traced by the reference rays.py"),
    )
}
CHECKS = ("integrity", "configuration", "count", "groups", "families", "engine", "reference")
"""The phases of a full store, in order."""
COMPACT_CHECKS = ("integrity", "configuration", "count", "groups", "engine", "reference")
"""The phases of a compact store, in order."""


def _sample_findings(phase: str) -> tuple[Finding, ...]:
    """What a re-traced sample finds (the engine's and the reference's are the same kinds)."""
    return (
        Finding(f"{phase}.absent", (FULL,), "a sampled molecule has no row"),
        Finding(
            f"{phase}.column", (FULL,), "a sampled molecule's row differs from the re-traced one in a column"
        ),
        Finding(
            f"{phase}.not_in_group",
            (COMPACT,),
            "a sampled molecule's spectrum is stored ambiguous, but the molecule is not among its molecules",
        ),
        Finding(
            f"{phase}.profile",
            (COMPACT,),
            "a sampled molecule's 9 profile statistics have no Profiles row (or its lowest number is higher)",
        ),
    )


FINDINGS: dict[str, Finding] = {
    finding.name: finding
    for finding in (
        Finding(
            "integrity.damage",
            BOTH,
            "SQLite reports damage: a page, a b-tree, an index disagreeing with its table",
        ),
        Finding("configuration.nb_mol", BOTH, "the Configurations row's nb_mol is not C(W², N)"),
        Finding("configuration.atoms", BOTH, "the Configurations row's nb_atoms is not the name's N"),
        Finding("configuration.width", BOTH, "the Configurations row's width is not the name's W"),
        Finding(
            "configuration.ranges_molecules", BOTH, "the explored ranges' molecules do not add up to C(W², N)"
        ),
        Finding(
            "configuration.ranges_hole",
            BOTH,
            "the explored ranges leave a hole (at the start, between two, at the end)",
        ),
        Finding("configuration.ranges_overlap", BOTH, "two explored ranges overlap"),
        Finding("configuration.ranges_beyond", BOTH, "an explored range goes past the last molecule"),
        Finding("count.rows", (FULL,), "the molecule rows are not C(W², N)"),
        Finding("count.molecule_rows", (COMPACT,), "a compact store has molecule rows"),
        Finding("count.profiles", (COMPACT,), "the Profiles rows do not count C(W², N) molecules"),
        Finding(
            "count.malformed", (COMPACT,), "a Profiles row holds a value of another type (text or a real)"
        ),
        Finding("count.repeated", (COMPACT,), "two Profiles rows or more have the same 9 statistics"),
        Finding(
            "groups.index",
            BOTH,
            "the configuration's spectrum index (a compact store: its Families key or size index) is missing",
        ),
        Finding("groups.missing_row", (FULL,), "a spectrum of two molecules or more has no Spectrums row"),
        Finding("groups.extra_row", (FULL,), "a Spectrums row whose spectrum fewer than 2 molecules have"),
        Finding(
            "groups.nb_mol",
            BOTH,
            "a Spectrums row's nb_mol is not the number of molecules that have it "
            "(a family's: not the number of molecules stored in it)",
        ),
        Finding(
            "groups.transform",
            (FULL,),
            "a Spectrums row's transform does not map its canonical molecule onto its first",
        ),
        Finding(
            "groups.canonical_number",
            BOTH,
            "a Spectrums row's canonical number is not its first molecule's (a family's: not the smallest "
            "canonical number of its molecules, or no molecule)",
        ),
        Finding(
            "groups.numbers",
            (COMPACT,),
            "a family's numbers blob is damaged: its length, a number out of range, a repeat, "
            "not increasing, fewer than 2 molecules",
        ),
        Finding(
            "groups.malformed",
            (COMPACT,),
            "a Families row holds a value of another type (text or NULL for a number, no blob of numbers)",
        ),
        Finding(
            "groups.member",
            (COMPACT,),
            "a molecule stored in a family, re-traced, does not have the family's first spectrum",
        ),
        Finding(
            "groups.spectra",
            (COMPACT,),
            "a family's spectra is not the number of distinct spectra among its canonical molecule's "
            "8 images",
        ),
        Finding(
            "groups.spectrum", (COMPACT,), "a family's spectrum is not its canonical molecule's, re-traced"
        ),
        Finding(
            "groups.key",
            (COMPACT,),
            "a family's key is not its spectrum's (engine.spectra_keys): a typed spectrum would not find it",
        ),
        Finding(
            "groups.max_diff",
            (COMPACT,),
            "a family's max_diff is not the most atoms one of its molecules has where another has none",
        ),
        Finding(
            "groups.position",
            (COMPACT,),
            "the families are not at positions 0, 1, 2, ... in increasing canonical number "
            "(a gap, a family out of order)",
        ),
        Finding(
            "groups.spectra_before",
            (COMPACT,),
            "a family's spectra_before is not the number of spectra of the families before it",
        ),
        Finding(
            "groups.size_position",
            (COMPACT,),
            "a family's size_position is not its rank in the size order (nb_mol descending, then "
            "canonical number)",
        ),
        Finding(
            "groups.size_spectra_before",
            (COMPACT,),
            "a family's size_spectra_before is not the number of spectra before it in the size order",
        ),
        Finding(
            "groups.shard_sizes",
            (COMPACT,),
            "GroupedShards' counts by size (families, spectra) disagree with the families",
        ),
        Finding(
            "groups.shard_totals", (COMPACT,), "GroupedShards' spectra or families disagree with the families"
        ),
        Finding("families.index", (FULL,), "the configuration's canonical_number index is missing"),
        Finding("families.missing", (FULL,), "a member of an enantiomer group has no row"),
        Finding(
            "families.stray", (FULL,), "a molecule row whose number is not a molecule of the configuration"
        ),
        Finding(
            "families.canonical_number",
            (FULL,),
            "a molecule's canonical number is not the smallest of its 8 images",
        ),
        Finding(
            "families.transform",
            (FULL,),
            "a molecule's transform does not map its canonical molecule onto it",
        ),
        Finding("families.board", (FULL,), "a molecule's board is not its number's"),
        Finding(
            "families.spectrum",
            (FULL,),
            "a molecule's spectrum is not its canonical molecule's moved by its transform",
        ),
        Finding("families.malformed", (FULL,), "a molecule's spectrum is not a well-formed spectrum"),
        *_sample_findings("engine"),
        Finding(
            "engine.profiles_counted",
            (COMPACT,),
            "with --all, the profiles counted differ from the Profiles rows",
        ),
        *_sample_findings("reference"),
    )
}
"""Every finding ``check`` can report, by name (``phase.what``)."""


class CheckError(Exception):
    """A configuration that cannot be checked: the message is one line for the user."""


@dataclass(frozen=True)
class Difference:
    """Something stored that is not what was computed, and the finding it is."""

    finding: str  # a name in FINDINGS
    number: int | None  # the molecule, or None (a spectrum, a table, the file)
    what: str  # the column or the thing compared
    stored: str
    computed: str

    def __post_init__(self) -> None:
        if self.finding not in FINDINGS:
            raise ValueError(f"unregistered finding {self.finding!r}")

    def line(self) -> str:
        """One line: ``molecule 1,234: spectrum: stored '...', computed '...'``."""
        subject = f"molecule {self.number:,}: " if self.number is not None else ""
        return f"{subject}{self.what}: stored {self.stored}, computed {self.computed}"

    def as_dict(self) -> dict[str, object]:
        """For ``--json``."""
        return {
            "finding": self.finding,
            "number": self.number,
            "what": self.what,
            "stored": self.stored,
            "computed": self.computed,
        }


@dataclass
class CheckResult:
    """One check: what it covered, its differences (the first ``LISTED``) and how many in all."""

    name: str
    covered: str = ""
    differences: list[Difference] = field(default_factory=list)
    count: int = 0
    findings: set[str] = field(default_factory=set)  # every finding reported, listed or not

    @property
    def ok(self) -> bool:
        """Whether everything agreed."""
        return self.count == 0

    def add(self, difference: Difference) -> None:
        """Count a difference, and keep it if it is among the first."""
        if FINDINGS[difference.finding].phase != self.name:
            raise ValueError(f"{difference.finding} is not a finding of {self.name}")
        self.count += 1
        self.findings.add(difference.finding)
        if len(self.differences) < LISTED:
            self.differences.append(difference)


@dataclass
class CheckReport:
    """Every check of one configuration."""

    config: Config
    results: list[CheckResult]
    seed: int
    sample: int  # molecules re-traced by the engine
    reference: int  # molecules re-traced by rays.py
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """Whether every check agreed."""
        return all(result.ok for result in self.results)

    def summary(self) -> dict[str, object]:
        """The report as one JSON object."""
        return {
            "config": self.config.name,
            "ok": self.ok,
            "molecules": self.config.nb_mol,
            "seed": self.seed,
            "sample": self.sample,
            "reference": self.reference,
            "seconds": round(self.seconds, 3),
            "checks": [
                {
                    "name": r.name,
                    "ok": r.ok,
                    "covered": r.covered,
                    "differences": r.count,
                    "findings": sorted(r.findings),
                    "first": [d.as_dict() for d in r.differences],
                }
                for r in self.results
            ],
        }


def _quiet(check: str, done: int, total: int) -> None:
    """No progress wanted."""


def check(
    config: Config,
    *,
    sample: int = SAMPLE,
    everything: bool = False,
    reference: int = REFERENCE_SAMPLE,
    seed: int = SEED,
    integrity: bool = True,
    progress: CheckProgressCallback | None = None,
) -> CheckReport:
    """Run every check on ``config`` in the open database; raises CheckError if it cannot be checked.

    ``integrity=False`` skips SQLite's check of the whole file (done once
    for a file that holds several configurations).
    """
    progress = progress or _quiet
    row = Configuration.get_or_none(Configuration.config == config.name)
    if row is None:
        raise CheckError(f"{config.name} is not in this database: nothing to check")
    if not row.complete:
        raise CheckError(
            f"{config.name} is not completely explored: check verifies complete configurations "
            f"(run 'bbcore explore {config.name}' to finish it)"
        )
    started = time.monotonic()
    numbers = sample_numbers(config, config.nb_mol if everything else sample, seed)
    reference_numbers = reference_sample(numbers, reference, seed)
    if is_server(opened.path):
        results = [server_integrity()]
    else:
        results = [check_integrity(progress) if integrity else skipped_integrity()]
    results.append(quick_phase("configuration", progress, lambda: check_configuration(config, row)))
    if row.store == COMPACT:
        judge: Judge = CompactJudge(config, everything)
        results.append(quick_phase("count", progress, judge.check_count))
        with without_cycle_collection():
            results.append(CompactGroups(config).check(progress))
    else:
        judge = FullJudge(config)
        results.append(quick_phase("count", progress, lambda: check_count(config)))
        with without_cycle_collection():
            results += [check_groups(config, progress), check_families(config, progress)]
    results.append(check_sample("engine", config, numbers, engine_rows, judge, progress))
    results.append(check_sample("reference", config, reference_numbers, reference_rows, judge, progress))
    if everything and isinstance(judge, CompactJudge):
        results[-2] = judge.every_profile(results[-2])
    return CheckReport(
        config, results, seed, len(numbers), len(reference_numbers), time.monotonic() - started
    )


# -- shared machinery: blocks, progress of a statement ------------------------------------


def rows_in_blocks(statement: str, parameters: Sequence = ()) -> Iterator[list[tuple]]:
    """The rows of a query, ``BLOCK`` at a time, from one cursor (nothing more is held).

    On a server, psycopg's own cursor would fetch the whole result first: a
    named (server-side) cursor hands it over a block at a time, and two of
    them stream side by side on one connection (the groups phase merges
    two); ``WITH HOLD``, since the store's connection commits each statement.
    """
    if is_server(opened.path):
        from bbcore.server import placeholders

        cursor = db.connection().cursor(name=f"bbcore_check_{next(_cursors)}", withhold=True)
        cursor.execute(placeholders(statement), tuple(parameters))
    else:
        cursor = db.execute_sql(statement, tuple(parameters))
    try:
        while rows := cursor.fetchmany(BLOCK):
            yield rows
    finally:
        cursor.close()


_cursors = count()
"""Numbers naming the server-side cursors of ``rows_in_blocks``."""


@contextmanager
def without_cycle_collection() -> Iterator[None]:
    """Python's cycle collector paused while rows stream through (restored after).

    Each block makes tens of thousands of row tuples, and every so often the
    collector walked every object alive, numba's included: 15 s of A6_B8's
    38 s groups phase.  The streaming loops make no reference cycles: their
    blocks are freed by reference counting as before.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


OPS_PER_TICK = 10_000
"""SQLite virtual-machine instructions between two calls of the progress handler."""
METER_INTERVAL = 0.1
"""Seconds between two progress reports of a long statement (the handler is called far more often)."""
INTEGRITY_OPS_PER_PAGE = 1000
"""integrity_check's instructions per page: A6_B8 compact (166,196 pages) 813, A4_B8 full (44,946) 1,019.
The larger: the bar may jump ahead at the end, it never waits at 99%."""


class SqliteMeter:
    """Progress of one long SQLite statement, from the instructions it runs.

    SQLite cannot say how far a statement is, but it calls a progress
    handler every ``OPS_PER_TICK`` virtual-machine instructions, and a
    statement runs a nearly constant number of them per page or row
    (measured: ``INTEGRITY_OPS_PER_PAGE``): the instructions run, over
    those expected, give the share done.  It never reports the whole before
    the statement is over (``bbcore.spectra.GroupingMeter`` does the same
    for the index builds).  The handler only counts and reports.
    """

    def __init__(self, name: str, expected_ops: int, progress: CheckProgressCallback, total: int) -> None:
        self.name, self.expected, self.progress, self.total = name, max(expected_ops, 1), progress, total
        self.ops = 0
        self.last = 0.0

    def __enter__(self) -> SqliteMeter:
        self.progress(self.name, 0, self.total)
        db.connection().set_progress_handler(self.tick, OPS_PER_TICK)
        return self

    def __exit__(self, *exc) -> None:
        db.connection().set_progress_handler(None, 0)

    def tick(self) -> int:
        self.ops += OPS_PER_TICK
        now = time.monotonic()
        if now - self.last >= METER_INTERVAL:
            self.last = now
            share = min(self.ops / self.expected, 0.99)
            self.progress(self.name, int(share * self.total), self.total)
        return 0


# -- the checks -------------------------------------------------------------------


def file_size() -> int:
    """The database file's size in bytes (its pages)."""
    (pages,) = db.execute_sql(sql.PAGE_COUNT).fetchone()
    (size,) = db.execute_sql(sql.PAGE_SIZE).fetchone()
    return int(pages) * int(size)


def megabytes(size: int) -> str:
    """A file size for a person: ``680 MB``, ``0.6 MB``."""
    return f"{size / 1e6:,.0f} MB" if size >= 10e6 else f"{size / 1e6:.1f} MB"


def check_integrity(progress: CheckProgressCallback) -> CheckResult:
    """SQLite's ``integrity_check`` of the whole file (every configuration in it).

    Why ``integrity_check`` and not ``quick_check``: ``quick_check`` reads
    every page and b-tree but does not compare the indexes with their
    tables, which is O(N log N) more work.  Measured (2 cores, load 8 to
    14): A6_B8's compact file (681 MB) quick_check 2.4 s, integrity_check
    11.8 s; A4_B8's full file (184 MB) 1.7 s and 7.3 s.  An index that disagrees
    with its table (a file edited by hand, or with ``writable_schema``)
    passes quick_check and every other phase here, while the readers that
    go through that index (groups by size, decoding) answer wrongly: only
    integrity_check finds it, and its cost stays within the phases' own.
    It reads the whole file, every configuration in it: ``--no-integrity``
    skips it when the file was checked already.  The progress counts pages.
    """
    result = CheckResult(
        "integrity",
        f"SQLite's integrity_check of the whole file ({megabytes(file_size())}, every configuration)",
    )
    (pages,) = db.execute_sql(sql.PAGE_COUNT).fetchone()
    with SqliteMeter("integrity", INTEGRITY_OPS_PER_PAGE * int(pages), progress, int(pages)):
        lines = [line for (line,) in db.execute_sql(sql.INTEGRITY_CHECK)]
    if lines != ["ok"]:
        for line in lines:
            result.add(Difference("integrity.damage", None, "integrity_check", repr(line), "'ok'"))
    progress("integrity", int(pages), int(pages))
    return result


def skipped_integrity() -> CheckResult:
    """The integrity line of a check run with ``--no-integrity`` (no progress: nothing runs)."""
    return CheckResult("integrity", "skipped (--no-integrity): the file's own integrity was not checked")


def server_integrity() -> CheckResult:
    """The integrity line on a server: SQLite's integrity_check has no equivalent there.

    A server keeps its own storage (write-ahead log, checksums when enabled);
    its administrator checks it with PostgreSQL's tools (``pg_amcheck``, which
    needs the amcheck extension and a superuser).  Every other phase reads
    the rows themselves and runs as on a file.
    """
    return CheckResult(
        "integrity", "not run on a server: SQLite's integrity_check has no equivalent (see pg_amcheck)"
    )


def quick_phase(name: str, progress: CheckProgressCallback, run: Callable[[], CheckResult]) -> CheckResult:
    """A phase of a few look-ups: its progress is its start and its end."""
    progress(name, 0, 1)
    result = run()
    progress(name, 1, 1)
    return result


def check_configuration(config: Config, row: Configuration) -> CheckResult:
    """The Configurations row and the stored ranges against C(W², N)."""
    expected = comb(config.width**2, config.atoms)
    result = CheckResult(
        "configuration",
        f"C({config.width**2}, {config.atoms}) = {expected:,} molecules, atoms, width, ranges",
    )
    for finding, what, stored, computed in (
        ("configuration.nb_mol", "nb_mol", row.nb_mol, expected),
        ("configuration.atoms", "nb_atoms", row.nb_atoms, config.atoms),
        ("configuration.width", "width", row.width, config.width),
    ):
        if stored != computed:
            result.add(Difference(finding, None, what, f"{stored:,}", f"{computed:,}"))
    ranges = (
        ExploredRange.select(ExploredRange.start, ExploredRange.stop, ExploredRange.nb_mol)
        .where(ExploredRange.config == config.name)
        .order_by(ExploredRange.start)
        .tuples()
    )
    cursor, molecules = 1, 0
    for start, stop, nb_mol in ranges.iterator():
        molecules += nb_mol
        if start > cursor:
            result.add(
                Difference(
                    "configuration.ranges_hole",
                    None,
                    "ExploredRanges",
                    f"nothing from {cursor:,} to {start - 1:,}",
                    "every number",
                )
            )
        elif start < cursor:
            result.add(
                Difference(
                    "configuration.ranges_overlap",
                    None,
                    "ExploredRanges",
                    f"{start:,} to {stop - 1:,} overlapping the range before it (to {cursor - 1:,})",
                    "each number once",
                )
            )
        if stop > expected + 1:
            result.add(
                Difference(
                    "configuration.ranges_beyond",
                    None,
                    "ExploredRanges",
                    f"a range to {stop - 1:,}",
                    f"numbers to {expected:,}",
                )
            )
        cursor = max(cursor, stop)
    if cursor < expected + 1:
        result.add(
            Difference(
                "configuration.ranges_hole",
                None,
                "ExploredRanges",
                f"nothing from {cursor:,} to {expected:,}",
                "every number",
            )
        )
    if molecules != expected:
        result.add(
            Difference(
                "configuration.ranges_molecules",
                None,
                "molecules in ExploredRanges",
                f"{molecules:,}",
                f"{expected:,}",
            )
        )
    return result


def check_count(config: Config) -> CheckResult:
    """The number of molecules stored."""
    result = CheckResult("count", f"{config.nb_mol:,} molecule rows")
    (stored,) = db.execute_sql(sql.COUNT_MOLECULES, (config.name,)).fetchone()
    if stored != config.nb_mol:
        result.add(Difference("count.rows", None, "molecule rows", f"{stored:,}", f"{config.nb_mol:,}"))
    return result


def check_groups(config: Config, progress: CheckProgressCallback) -> CheckResult:
    """Every ambiguous spectrum's Spectrums row, and its nb_mol, transform and canonical number.

    Two streams sorted by spectrum are merged: the molecules of the
    ambiguous spectra (through the spectrum index) grouped as
    ``build_spectrums`` groups them, and the Spectrums rows (their primary
    key).  Only the current spectrum of each is held.
    """
    result = CheckResult("groups")
    if not index_exists(sql.spectrum_index(config)):
        result.add(
            Difference("groups.index", None, "spectrum index", "missing", f'"{sql.spectrum_index(config)}"')
        )
        return result
    (total,) = db.execute_sql(sql.COUNT_SPECTRUMS, (config.name,)).fetchone()
    progress("groups", 0, total)
    computed = _computed_groups(config)
    stored = (row for rows in rows_in_blocks(sql.SPECTRUMS_BY_SPECTRUM, (config.name,)) for row in rows)
    have, want = next(stored, None), next(computed, None)
    done = seen = steps = 0
    while have is not None or want is not None:
        steps += 1
        if want is None or (have is not None and have[0] < want[0]):
            result.add(
                Difference(
                    "groups.extra_row",
                    None,
                    f"spectrum {have[0]}",
                    f"nb_mol {have[1]}",
                    "fewer than 2 molecules have it",
                )
            )
            have, done = next(stored, None), done + 1
        elif have is None or want[0] < have[0]:
            result.add(
                Difference(
                    "groups.missing_row", None, f"spectrum {want[0]}", "no Spectrums row", f"nb_mol {want[1]}"
                )
            )
            want = next(computed, None)
            seen += 1
        else:
            for finding, index in (
                ("groups.nb_mol", 1),
                ("groups.transform", 2),
                ("groups.canonical_number", 3),
            ):
                if have[index] != want[index]:
                    what = finding.split(".")[1]
                    result.add(
                        Difference(
                            finding, None, f"spectrum {have[0]}: {what}", str(have[index]), str(want[index])
                        )
                    )
            have, want, done, seen = next(stored, None), next(computed, None), done + 1, seen + 1
        if steps % BLOCK == 0:
            progress("groups", min(done, total), total)
    result.covered = f"{seen:,} ambiguous spectra: nb_mol, transform, canonical number"
    progress("groups", total, total)
    return result


def _computed_groups(config: Config) -> Iterator[tuple[str, int, str, int]]:
    """(spectrum, nb_mol, transform, canonical_number) of every ambiguous spectrum, by spectrum.

    The first molecule of a spectrum is its smallest (canonical_number,
    number): ``bbcore.spectra.computed_spectrums``'s rule, one spectrum at a time.
    """
    statement = sql.ambiguous_molecules_by_spectrum(config)  # a server's has its ORDER BY
    molecules = (row for rows in rows_in_blocks(statement) for row in rows)
    last = ""
    for spectrum, group in groupby(molecules, key=lambda row: row[0]):
        if spectrum <= last:  # the query's plan changed (sql.ambiguous_molecules_by_spectrum)
            raise CheckError(f"the ambiguous molecules of {config.name} did not come in spectrum order")
        last = spectrum
        members = list(group)
        _, canonical, _, transform = min(members, key=lambda row: (row[1], row[2]))
        yield spectrum, len(members), transform, canonical


def check_families(config: Config, progress: CheckProgressCallback) -> CheckResult:
    """Every molecule against its enantiomer group: canonical, transform, board, spectrum, members."""
    result = CheckResult(
        "families", f"{config.nb_mol:,} molecules: canonical, transform, board, spectrum by symmetry, members"
    )
    if not index_exists(sql.canonical_index(config)):
        result.add(
            Difference(
                "families.index",
                None,
                "canonical_number index",
                "missing",
                f'"{sql.canonical_index(config)}"',
            )
        )
        return result
    table = binomial_table(config)
    _, source, inverse = engine._symmetry_tables(config.width)
    query = sql.molecules_by_canonical(config)
    # Progress counts rows read: canonical molecules crowd the low numbers (A4_B8's
    # first 8,192 numbers hold 59,000 molecules), so numbers would run unevenly.
    done, total = 0, config.nb_mol
    progress("families", 0, total)
    for start in range(1, config.nb_mol + 1, FAMILY_BATCH):
        stop = min(start + FAMILY_BATCH, config.nb_mol + 1)
        done += _check_family_batch(config, start, stop, table, source, inverse, query, result)
        progress("families", min(done, total - 1), total)
    for number, canonical in db.execute_sql(sql.molecules_outside_canonicals(config), (1, config.nb_mol)):
        result.add(
            Difference(
                "families.canonical_number",
                number,
                "canonical_number",
                f"{canonical:,}",
                _canonical_text(config, number),
            )
        )
    progress("families", total, total)
    return result


def _check_family_batch(config, start, stop, table, source, inverse, query, result: CheckResult) -> int:
    """The groups whose canonical number is in start..stop-1; returns the rows read."""
    atoms = atoms_of_range(config, start, stop)
    own = np.arange(start, stop, dtype=np.int64)
    images = image_numbers(config, atoms, table)
    canonical = images.min(axis=1) == own
    images, own = images[canonical], own[canonical]
    # Each group's members: its distinct images, each with its first transform.
    first = np.ones(images.shape, dtype=bool)
    for t in range(1, 8):
        for u in range(t):
            first[:, t] &= images[:, t] != images[:, u]
    group_of = np.nonzero(first)[0]
    expected = images[first]
    order = np.argsort(expected)
    expected, group_of = expected[order], group_of[order]

    rows = db.execute_sql(query, (start, stop)).fetchall()
    transform_index = {name: i for i, name in enumerate(TRANSFORM_NAMES)}
    number = np.array([r[0] for r in rows], dtype=np.int64)
    stored_canonical = np.array([r[1] for r in rows], dtype=np.int64)
    stored_transform = np.array([transform_index.get(r[2], -1) for r in rows], dtype=np.int64)
    at = np.searchsorted(expected, number)
    found = np.zeros(len(number), dtype=bool)  # a batch may hold no canonical number (rows stray into it)
    if len(expected):
        found = (at < len(expected)) & (expected[np.minimum(at, len(expected) - 1)] == number)

    present = np.zeros(len(expected), dtype=bool)
    present[at[found]] = True
    missing = expected[~present]
    elsewhere = set()  # members stored with another canonical number: named below, not missing
    for chunk in chunked(missing.tolist(), ROWS_PER_QUERY):
        elsewhere.update(stored_rows(config, chunk, ("number",)))
    for number_missing in missing.tolist():
        if number_missing in elsewhere:
            continue
        group = own[group_of[np.searchsorted(expected, number_missing)]]
        result.add(
            Difference(
                "families.missing", number_missing, "row", "absent", f"a member of the group of {group:,}"
            )
        )

    for i in np.nonzero(~found)[0].tolist():  # stored with a canonical number in range, but not its own
        n = int(number[i])
        if not 1 <= n <= config.nb_mol:
            result.add(
                Difference(
                    "families.stray", n, "number", "a row", f"none: numbers go from 1 to {config.nb_mol:,}"
                )
            )
            continue
        result.add(
            Difference(
                "families.canonical_number",
                n,
                "canonical_number",
                f"{stored_canonical[i]:,}",
                _canonical_text(config, n),
            )
        )

    rows_found = np.nonzero(found)[0]
    groups = group_of[at[rows_found]]
    true_canonical = own[groups]
    bad_canonical = stored_canonical[rows_found] != true_canonical
    for i, c in zip(rows_found[bad_canonical].tolist(), true_canonical[bad_canonical].tolist()):
        result.add(
            Difference(
                "families.canonical_number",
                int(number[i]),
                "canonical_number",
                f"{stored_canonical[i]:,}",
                f"{c:,}",
            )
        )
    maps = (stored_transform[rows_found] >= 0) & (
        images[groups, np.maximum(stored_transform[rows_found], 0)] == number[rows_found]
    )
    for i in rows_found[~maps].tolist():
        t = int(images_first_transform(images[group_of[at[i]]], number[i]))
        result.add(
            Difference(
                "families.transform", int(number[i]), "transform", repr(rows[i][2]), repr(TRANSFORM_NAMES[t])
            )
        )

    # Boards: the molecule column is its number's board.
    boards = _boards(config, atoms_of_numbers(config, number[rows_found], table))
    for i, board in zip(rows_found.tolist(), boards):
        if rows[i][3] != board:
            result.add(
                Difference("families.board", int(number[i]), "molecule", repr(rows[i][3]), repr(board))
            )

    # Spectra: each member's is its canonical molecule's, moved by the transform.
    good = rows_found[~bad_canonical & maps]
    by_number = {int(n): i for i, n in enumerate(number.tolist())}
    canon_row = np.array([by_number.get(int(c), -1) for c in stored_canonical[good].tolist()], dtype=np.int64)
    good, canon_row = good[canon_row >= 0], canon_row[canon_row >= 0]
    spectra = [rows[i][4] for i in range(len(rows))]
    partner, valid = partners(config, spectra)
    for i in rows_found[~valid[rows_found]].tolist():  # the others are named above
        result.add(
            Difference(
                "families.malformed", int(number[i]), "spectrum", repr(spectra[i]), "a well-formed spectrum"
            )
        )
    usable = valid[good] & valid[canon_row]
    good, canon_row = good[usable], canon_row[usable]
    if not len(good):
        return len(rows)
    t = stored_transform[good]
    want = letters(moved_partners(partner[canon_row], t, source, inverse))
    have = _as_bytes([spectra[i] for i in good.tolist()], config.positions)
    wrong = np.nonzero((want != have).any(axis=1))[0]
    for k in wrong.tolist():
        i = int(good[k])
        c = int(stored_canonical[i])
        computed = want[k].tobytes().decode("ascii")
        result.add(
            Difference(
                "families.spectrum",
                int(number[i]),
                "spectrum",
                repr(spectra[i]),
                f"{computed!r} (molecule {c:,}'s stored spectrum by {TRANSFORM_NAMES[int(t[k])]})",
            )
        )
    return len(rows)


def moved_partners(
    partner: np.ndarray, transform: np.ndarray, source: np.ndarray, inverse: np.ndarray
) -> np.ndarray:
    """Partner arrays (k, 4W) moved by a transform each (indexes, shape (k,)): the images' spectra."""
    moved = np.take_along_axis(partner, source[transform], axis=1)
    return np.where(moved >= 0, np.take_along_axis(inverse[transform], np.maximum(moved, 0), axis=1), moved)


def images_first_transform(images: np.ndarray, number: int) -> int:
    """The first transform (index) taking a canonical molecule with these images to ``number``."""
    return int(np.nonzero(images == number)[0][0])


def _canonical_text(config: Config, number: int) -> str:
    """The canonical number of a molecule, or why it has none."""
    if not 1 <= number <= config.nb_mol:
        return f"none: numbers go from 1 to {config.nb_mol:,}"
    atoms = atoms_of_numbers(config, np.array([number], dtype=np.int64))
    return f"{int(image_numbers(config, atoms, binomial_table(config)).min()):,}"


def _boards(config: Config, atoms: np.ndarray) -> list[str]:
    """The molecule strings (``O`` atom, ``-`` empty, row by row) of a batch of molecules."""
    boards = np.full((len(atoms), config.cells), ord("-"), dtype=np.uint8)
    np.put_along_axis(boards, atoms, ord("O"), axis=1)
    return [row.tobytes().decode("ascii") for row in boards]


def partners(config: Config, spectra: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Spectrum strings as partner arrays (``engine.trace_batch``'s codes), and which are well formed.

    A well-formed spectrum has 4W characters: ``@``, ``&``, and lowercase
    letters each at exactly two positions, given in order of first
    appearance (normalised).
    """
    npos = config.positions
    partner = np.full((len(spectra), npos), engine.UNKNOWN, dtype=np.int64)
    valid = np.array([len(s) == npos and s.isascii() for s in spectra], dtype=bool)
    rows = np.nonzero(valid)[0]
    if not len(rows):
        return partner, valid
    text = _as_bytes([spectra[i] for i in rows.tolist()], npos).astype(np.int64)
    block = np.full(text.shape, engine.UNKNOWN, dtype=np.int64)
    block[text == ord("@")] = engine.ABSORBED_CODE
    block[text == ord("&")] = engine.REFLECTED_CODE
    r, q = np.nonzero((text >= ord("a")) & (text <= ord("z")))
    key = r * 32 + (text[r, q] - ord("a"))
    _, inverse, counts = np.unique(key, return_inverse=True, return_counts=True)
    twice = counts[inverse] == 2
    r, q, key = r[twice], q[twice], key[twice]
    order = np.argsort(key, kind="stable")  # a letter's two positions, side by side
    r, q = r[order], q[order]
    block[r[0::2], q[0::2]] = q[1::2]
    block[r[1::2], q[1::2]] = q[0::2]
    ok = (block != engine.UNKNOWN).all(axis=1)
    # normalised: letters in order of first appearance (what engine.letters writes)
    ok &= (letters(np.where(ok[:, None], block, engine.ABSORBED_CODE)) == text).all(axis=1)
    partner[rows] = block
    valid[rows] = ok
    return partner, valid


# -- the samples ------------------------------------------------------------------


def sample_numbers(config: Config, size: int, seed: int) -> Sequence[int]:
    """``size`` molecule numbers drawn at random (seeded), sorted; all (a ``range``) when size >= nb_mol."""
    if size >= config.nb_mol:
        return range(1, config.nb_mol + 1)
    generator = np.random.default_rng(seed)
    if config.nb_mol < 50 * size:
        drawn = generator.choice(config.nb_mol, size=size, replace=False) + 1
    else:  # a few repeats drawn again: choice without replacement would permute nb_mol numbers
        drawn = np.unique(generator.integers(1, config.nb_mol + 1, size=size + size // 10))
        drawn = generator.permutation(drawn)[:size]
    return sorted(int(n) for n in drawn)


def reference_sample(numbers: Sequence[int], size: int, seed: int) -> list[int]:
    """The reference sample: ``size`` of the engine's sample drawn again (seeded), sorted."""
    return sorted(random.Random(seed).sample(numbers, min(size, len(numbers))))


MOLECULE_FIELDS = ("number", "canonical_number", "transform", "molecule", "spectrum", *STAT_FIELDS)


def stored_rows(
    config: Config, numbers: Sequence[int], columns: tuple[str, ...] = MOLECULE_FIELDS
) -> dict[int, tuple]:
    """The stored rows (``columns``, the number first) of ``numbers``, by number."""
    rows: dict[int, tuple] = {}
    for chunk in chunked(numbers, ROWS_PER_QUERY):
        query = sql.molecules_by_number(columns, len(chunk))
        rows.update((row[0], tuple(row)) for row in db.execute_sql(query, (config.name, *chunk)))
    return rows


class Judge:
    """How a configuration's store answers for a re-traced molecule (full or compact)."""

    covers = ""

    def judge(self, result: CheckResult, rows: dict[int, tuple]) -> None:
        """Compare the computed rows (``MOLECULE_FIELDS`` order, by number) with the store."""
        raise NotImplementedError


class FullJudge(Judge):
    """A full store: the molecule's own row, every column."""

    covers = "canonical, transform, board, spectrum, 17 statistics"

    def __init__(self, config: Config) -> None:
        self.config = config

    def judge(self, result: CheckResult, rows: dict[int, tuple]) -> None:
        stored = stored_rows(self.config, sorted(rows))
        for number in sorted(rows):
            _compare(result, number, stored.get(number), rows[number])


def _compare(result: CheckResult, number: int, stored: tuple | None, computed: tuple) -> None:
    """Every field of a stored row against the computed one (both in ``MOLECULE_FIELDS`` order)."""
    if stored is None:
        result.add(Difference(f"{result.name}.absent", number, "row", "absent", "present"))
        return
    for name, have, want in zip(MOLECULE_FIELDS[1:], stored[1:], computed[1:]):
        if have != want:
            shown = (repr(have), repr(want)) if isinstance(want, str) else (str(have), str(want))
            result.add(Difference(f"{result.name}.column", number, name, *shown))


SAMPLE_BATCH = ROWS_PER_QUERY * 8
"""Sampled molecules computed and judged at a time."""


def check_sample(
    name: str,
    config: Config,
    numbers: Sequence[int],
    compute: Callable[[Config, Sequence[int]], dict[int, tuple]],
    judge: Judge,
    progress: CheckProgressCallback,
) -> CheckResult:
    """Re-trace ``numbers`` with ``compute`` (the engine or rays.py) and let the store answer for them."""
    how = "the engine" if name == "engine" else "the reference rays.py"
    which = " (all)" if len(numbers) == config.nb_mol else ", a seeded sample"
    result = CheckResult(name, f"{len(numbers):,} molecules{which} re-traced by {how}: {judge.covers}")
    progress(name, 0, len(numbers))
    step = SAMPLE_BATCH if name == "engine" else 50
    for first in range(0, len(numbers), step):
        chunk = numbers[first : first + step]
        judge.judge(result, compute(config, chunk))
        progress(name, first + len(chunk), len(numbers))
    return result


def engine_rows(config: Config, numbers: Sequence[int]) -> dict[int, tuple]:
    """Rows (``MOLECULE_FIELDS``) computed by the engine (``engine.molecules_of_numbers``: the
    exploration's own kernels, on the enantiomer groups of these molecules only)."""
    batch = engine.molecules_of_numbers(config, np.asarray(numbers, dtype=np.int64))
    return {
        int(n): (
            int(n),
            int(batch.canonical_number[i]),
            TRANSFORM_NAMES[int(batch.transform[i])],
            batch.molecule[i].tobytes().decode("ascii"),
            batch.spectrum[i].tobytes().decode("ascii"),
            *(int(v) for v in batch.stats[i]),
        )
        for i, n in enumerate(batch.number.tolist())
    }


def reference_rows(config: Config, numbers: Sequence[int]) -> dict[int, tuple]:
    """Rows (``MOLECULE_FIELDS``) computed by the reference rays.py."""
    return {n: reference_row(config, n) for n in numbers}


def reference_row(config: Config, number: int) -> tuple:
    """A molecule's row computed from the spec's rules alone (``rays.py``, plain numbering)."""
    atoms = atoms_of(config, number)
    canonical = min(number_of(config, transform_atoms(config, atoms, t)) for t in TRANSFORM_NAMES)
    canonical_atoms = atoms_of(config, canonical)
    transform = next(
        t for t in TRANSFORM_NAMES if transform_atoms(config, canonical_atoms, t) == tuple(atoms)
    )
    traced = rays.trace_all(config, atoms)
    statistics = rays.statistics_of_rays(traced)
    board = "".join("O" if cell in atoms else "-" for cell in range(config.cells))
    return (
        number,
        canonical,
        transform,
        board,
        rays.spectrum_of_rays(traced),
        *(statistics[name] for name in STAT_FIELDS),
    )


# -- families computed by blocks (shared by every layout that stores families) -----------


@dataclass
class FamilyBlock:
    """A block of families: each one's canonical number and molecules (ragged, by family)."""

    canonical: np.ndarray  # (K,) int64
    numbers: np.ndarray  # (k,) int64, every family's molecules one after the other
    family_of: np.ndarray  # (k,) the index of each molecule's family

    @property
    def sizes(self) -> np.ndarray:
        return np.bincount(self.family_of, minlength=len(self.canonical))


@dataclass
class ExpectedRows:
    """The spectral groups a block of families should have: one row per distinct image spectrum."""

    spectrum: np.ndarray  # (r, 4W) uint8, each family's rows together, in transform order
    groups: np.ndarray  # (K,) rows per family
    partner: np.ndarray  # (K, 4W) each canonical molecule's trace (engine.trace_batch's codes)


def family_spectra(config: Config, block: FamilyBlock, result: CheckResult) -> ExpectedRows:
    """Re-trace a block of families and derive the rows each should have, all at once.

    Every molecule of a family must have its canonical molecule's spectrum
    (``groups.member``), and the family's canonical number must be the
    smallest canonical number among them (``groups.canonical_number``).
    The family's spectral groups are the distinct images of that spectrum
    by the 8 symmetries (the first transform giving each), each with the
    images of the molecules by the same symmetry.  A compact store keeps no
    group's transform, first molecule or size (readers derive them:
    ``families.derived``), so none is computed here.
    """
    table = binomial_table(config)
    _, source, inverse = engine._symmetry_tables(config.width)
    families = len(block.canonical)
    members = atoms_of_numbers(config, block.numbers, table)
    canonical_atoms = atoms_of_numbers(config, block.canonical, table)
    partner, _, _ = engine.trace_batch(config, np.concatenate([canonical_atoms, members]))
    spectra = letters(partner)
    own, traced = spectra[:families], spectra[families:]
    for i in np.nonzero((traced != own[block.family_of]).any(axis=1))[0].tolist():
        c = int(block.canonical[block.family_of[i]])
        result.add(
            Difference(
                "groups.member",
                int(block.numbers[i]),
                f"spectrum (in the family of {c:,})",
                repr(own[block.family_of[i]].tobytes().decode("ascii")) + f" (molecule {c:,}'s)",
                repr(traced[i].tobytes().decode("ascii")),
            )
        )
    canon = image_numbers(config, members, table).min(axis=1)
    smallest = np.full(families, np.iinfo(np.int64).max)
    np.minimum.at(smallest, block.family_of, canon)
    for f in np.nonzero(smallest != block.canonical)[0].tolist():
        result.add(
            Difference(
                "groups.canonical_number",
                None,
                f"family {int(block.canonical[f]):,}",
                f"{int(block.canonical[f]):,}",
                f"{int(smallest[f]):,} (the smallest canonical number of its molecules)",
            )
        )
    image_spectra = np.empty((families, 8, config.positions), dtype=np.uint8)
    engine.compiled(_spectrum_images_kernel)(partner[:families], source, inverse, image_spectra)
    distinct = np.ones((families, 8), dtype=bool)
    for t in range(1, 8):
        for u in range(t):
            distinct[:, t] &= (image_spectra[:, t] != image_spectra[:, u]).any(axis=1)
    family, t = np.nonzero(distinct)
    return ExpectedRows(image_spectra[family, t], distinct.sum(axis=1), partner[:families])


def letters(partner: np.ndarray) -> np.ndarray:
    """``engine.letters`` (normalised spectra as uint8, shape (k, 4W)) by a numba kernel."""
    out = np.empty(partner.shape, dtype=np.uint8)
    engine.compiled(_spectrum_letters_kernel)(np.ascontiguousarray(partner), out)
    return out


def _as_bytes(spectra: list[str], positions: int) -> np.ndarray:
    """Spectra of ``positions`` ASCII characters each as a (k, positions) uint8 array, in one pass."""
    joined = "".join(spectra).encode("ascii")
    return np.frombuffer(joined, dtype=np.uint8).reshape(len(spectra), positions)


# numba compiles the two kernels below: mutmut leaves them whole (its wrapper is no numba code)
def _spectrum_letters_kernel(partner, out):  # pragma: no mutate block
    """``engine.letters`` row by row (numba): numpy's version made a dozen (k, 4W) arrays."""
    rows, positions = partner.shape
    for r in range(rows):
        letter = 0
        for p in range(positions):
            q = partner[r, p]
            if q == -1:  # engine.ABSORBED_CODE
                out[r, p] = 64
            elif q == -2:  # engine.REFLECTED_CODE
                out[r, p] = 38
            elif q > p:
                out[r, p] = 97 + letter
                letter += 1
            else:
                out[r, p] = out[r, q]


def _spectrum_images_kernel(partner, source, inverse, out):  # pragma: no mutate block
    """The spectra (letters) of the 8 images of each partner array: ``out[f, t]`` by transform t.

    The image by t sees at position p what the molecule saw at ``source[t, p]``,
    an exit moved by ``inverse[t]`` (``moved_partners``).
    """
    rows, positions = partner.shape
    for f in range(rows):
        for t in range(8):
            letter = 0
            for p in range(positions):
                q = partner[f, source[t, p]]
                if q == -1:
                    out[f, t, p] = 64
                elif q == -2:
                    out[f, t, p] = 38
                else:
                    q = inverse[t, q]
                    if q > p:
                        out[f, t, p] = 97 + letter
                        letter += 1
                    else:
                        out[f, t, p] = out[f, t, q]


# -- a compact store (bbcore.families: one Families row per family) -------------------------

FAMILY_INTEGERS = tuple(name for name in sql.FAMILY_COLUMNS if name not in ("config", "spectrum", "numbers"))
"""The integer columns of a ``Families`` row, read into arrays a block at a time."""


@dataclass
class FamilyRows:
    """A block of ``Families`` rows as arrays, in position order (``sql.FAMILY_COLUMNS``)."""

    columns: dict[str, np.ndarray]  # FAMILY_INTEGERS, int64 each
    spectrum: list[str]
    numbers: list[bytes]

    @classmethod
    def of(cls, rows: list[tuple], result: CheckResult) -> FamilyRows | None:
        """The block's rows as arrays; a row with a value of another type (text for a number, NULL)
        is named (``groups.malformed``) and left out.  None when none is left."""
        at = {name: i for i, name in enumerate(sql.FAMILY_COLUMNS)}
        types = {name: int for name in FAMILY_INTEGERS} | {"spectrum": str, "numbers": bytes}
        values = list(zip(*rows))
        if any(set(map(type, values[at[name]])) != {kind} for name, kind in types.items()):
            kept = []
            for row in rows:
                wrong = [name for name, kind in types.items() if type(row[at[name]]) is not kind]
                for name in wrong:
                    result.add(
                        Difference(
                            "groups.malformed",
                            None,
                            f"family at position {row[at['position']]!r}: {name}",
                            repr(row[at[name]]),
                            {int: "an integer", str: "text", bytes: "a blob"}[types[name]],
                        )
                    )
                if not wrong:
                    kept.append(row)
            if not kept:
                return None
            values = list(zip(*kept))
        columns = {name: np.array(values[at[name]], dtype=np.int64) for name in FAMILY_INTEGERS}
        return cls(columns, list(values[at["spectrum"]]), list(values[at["numbers"]]))


class CompactGroups:
    """The families of a compact store, read once in position order, a block at a time.

    Each block's families are re-traced (``family_spectra``: every stored
    molecule must have the family's first spectrum, the canonical number
    must be the smallest canonical number of its molecules), and every
    stored column is compared with what the molecules give: the numbers
    blob, nb_mol, spectra (the distinct spectra among c's 8 images),
    spectrum (c's own), key (``engine.spectra_keys`` of it), max_diff.  The
    ordinals are checked as they stream: position 0, 1, 2, ... in
    increasing canonical number; spectra_before the spectra of the families
    before; in the size order (nb_mol descending, then canonical number) each
    family's size_position and size_spectra_before follow the previous family
    of its size, and each size starts after the larger ones (checked at the
    end, from the counts by size, a few hundred numbers).  Those counts are
    then compared with ``GroupedShards``'.  Nothing grows with the
    configuration but the counts by size.
    """

    def __init__(self, config: Config) -> None:
        self.config = config
        self.families = self.molecules = self.spectra = 0
        self.last_position, self.last_canonical = -1, 0
        self.next_of_size: dict[int, tuple[int, int]] = {}  # size: (size_position, size_spectra_before)
        self.first_of_size: dict[int, tuple[int, int, int]] = {}  # size: (canonical, the two ordinals)
        self.counts: dict[int, list[int]] = {}  # size: [families, spectra]

    def check(self, progress: CheckProgressCallback) -> CheckResult:
        config = self.config
        result = CheckResult("groups")
        for index in sql.family_key_index(config), sql.family_size_index(config):
            if not index_exists(index):
                result.add(Difference("groups.index", None, "family index", "missing", f'"{index}"'))
        _, total = families.spectra_counts(config)
        total = max(total, 1)
        progress("groups", 0, total)
        statement = sql.families_by(config, "position", "position >= ?")
        for rows in rows_in_blocks(statement, (0,)):
            block = FamilyRows.of(rows, result)
            if block is not None:
                self.block(block, result)
            progress("groups", min(self.families, total - 1), total)
        self.size_starts(result)
        self.compare_counts(result)
        result.covered = (
            f"{self.families:,} families ({self.molecules:,} molecules re-traced), "
            f"{self.spectra:,} ambiguous spectra: molecules, nb_mol, spectra, spectrum, key, "
            "canonical number, max_diff, ordinals; counts by size"
        )
        progress("groups", total, total)
        return result

    def block(self, rows: FamilyRows, result: CheckResult) -> None:
        """One block of families: re-traced, every column compared, the ordinals followed."""
        config = self.config
        column = rows.columns
        canonical = column["canonical_number"]
        block, kept = self.unpack(canonical, rows.numbers, result)
        self.molecules += len(block.numbers)
        spectra = column["spectra"].copy()  # the computed ones where the family could be traced
        if len(kept):
            expected = family_spectra(config, block, result)
            spectra[kept] = expected.groups
            first_rows = np.r_[0, np.cumsum(expected.groups)[:-1]]
            own = [s.tobytes().decode("ascii") for s in expected.spectrum[first_rows]]
            keys = engine.spectra_keys(config, expected.partner).view(np.int64)
            for name, want in (
                ("nb_mol", block.sizes),
                ("spectra", expected.groups),
                ("key", keys),
                ("max_diff", max_atoms_apart(config, block)),
            ):
                have = column[name][kept]
                for i in np.nonzero(have != want)[0].tolist():
                    result.add(
                        Difference(
                            f"groups.{name}",
                            None,
                            f"family {int(block.canonical[i]):,}: {name}",
                            f"{int(have[i]):,}",
                            f"{int(want[i]):,}",
                        )
                    )
            for i, k in enumerate(kept.tolist()):
                if rows.spectrum[k] != own[i]:
                    result.add(
                        Difference(
                            "groups.spectrum",
                            None,
                            f"family {int(block.canonical[i]):,}: spectrum",
                            repr(rows.spectrum[k]),
                            f"{own[i]!r} (molecule {int(block.canonical[i]):,}'s, re-traced)",
                        )
                    )
        self.ordinals(column, spectra, result)
        self.families += len(canonical)
        self.spectra += int(spectra.sum())

    def ordinals(self, column: dict[str, np.ndarray], spectra: np.ndarray, result: CheckResult) -> None:
        """Position, spectra_before and the size order's ordinals of a block, after the blocks before."""
        canonical, position = column["canonical_number"], column["position"]
        previous = np.r_[self.last_position, position[:-1]]
        before = np.r_[self.last_canonical, canonical[:-1]]
        # The order is checked between two molecules' numbers: a family numbered as no molecule
        # (0, or past the last) is groups.canonical_number's to name, and the first family has
        # no family before it (last_canonical 0).
        nb_mol = self.config.nb_mol
        numbered = (canonical >= 1) & (canonical <= nb_mol) & (before >= 1) & (before <= nb_mol)
        out_of_order = numbered & (canonical <= before)
        for i in np.nonzero((position != previous + 1) | out_of_order)[0].tolist():
            c, p, q, b = (int(v[i]) for v in (canonical, position, previous, before))
            want = f"{q + 1:,}"
            if out_of_order[i]:
                want += f" after a family numbered below {c:,}"
            result.add(
                Difference(
                    "groups.position",
                    None,
                    f"family {c:,}: position",
                    f"{p:,} after the family {b:,} at {q:,}" if q >= 0 else f"{p:,} as the first family",
                    want,
                )
            )
        self.last_position, self.last_canonical = int(position[-1]), int(canonical[-1])
        want = self.spectra + np.r_[0, np.cumsum(spectra)[:-1]]
        self._differ("spectra_before", canonical, column["spectra_before"], want, result)
        sizes = column["nb_mol"]
        order = np.argsort(sizes, kind="stable")  # each size's families, by position
        size, ordinal, spectra_before = (
            sizes[order],
            column["size_position"][order],
            column["size_spectra_before"][order],
        )
        these = spectra[order]
        starts = np.nonzero(np.r_[True, size[1:] != size[:-1]])[0]
        want_ordinal = np.r_[0, ordinal[:-1] + 1]
        want_before = np.r_[0, spectra_before[:-1] + these[:-1]]
        for start in starts.tolist():
            s = int(size[start])
            if s in self.next_of_size:
                want_ordinal[start], want_before[start] = self.next_of_size[s]
            else:  # its first family: where it starts is checked at the end (size_starts)
                self.first_of_size[s] = (
                    int(canonical[order[start]]),
                    int(ordinal[start]),
                    int(spectra_before[start]),
                )
                want_ordinal[start], want_before[start] = ordinal[start], spectra_before[start]
        for last in np.r_[starts[1:] - 1, len(size) - 1].tolist():
            s = int(size[last])
            self.next_of_size[s] = (int(ordinal[last]) + 1, int(spectra_before[last] + these[last]))
        for s, families_of, spectra_of in zip(*_by_size(sizes, spectra)):
            line = self.counts.setdefault(s, [0, 0])
            line[0] += families_of
            line[1] += spectra_of
        self._differ("size_position", canonical[order], ordinal, want_ordinal, result, " (its size's next)")
        self._differ(
            "size_spectra_before", canonical[order], spectra_before, want_before, result, " (its size's next)"
        )

    @staticmethod
    def _differ(name, canonical, have, want, result: CheckResult, why: str = "") -> None:
        for i in np.nonzero(have != want)[0].tolist():
            result.add(
                Difference(
                    f"groups.{name}",
                    None,
                    f"family {int(canonical[i]):,}: {name}",
                    f"{int(have[i]):,}",
                    f"{int(want[i]):,}{why}",
                )
            )

    def size_starts(self, result: CheckResult) -> None:
        """Each size's first family: after every family (and spectrum) of the larger sizes."""
        families_above = spectra_above = 0
        for size in sorted(self.counts, reverse=True):
            canonical, ordinal, before = self.first_of_size[size]
            for name, have, want in (
                ("size_position", ordinal, families_above),
                ("size_spectra_before", before, spectra_above),
            ):
                if have != want:
                    result.add(
                        Difference(
                            f"groups.{name}",
                            None,
                            f"family {canonical:,}: {name}",
                            f"{have:,}",
                            f"{want:,} (the first of {size} molecules, after the larger ones)",
                        )
                    )
            families_above += self.counts[size][0]
            spectra_above += self.counts[size][1]

    def unpack(
        self, canonical: np.ndarray, blobs: list[bytes], result: CheckResult
    ) -> tuple[FamilyBlock, np.ndarray]:
        """A block's numbers blobs at once: the families that can be traced, and their rows in the block.

        A damaged blob is named (``groups.numbers``) and its good numbers kept;
        a family with none, or a canonical number that is no molecule, is left out.
        """
        config = self.config
        dtype = numbers_dtype(config)
        lengths = np.fromiter(map(len, blobs), dtype=np.int64, count=len(blobs))
        if not (lengths % dtype.itemsize).any():
            sizes = lengths // dtype.itemsize
            numbers = np.frombuffer(b"".join(blobs), dtype=dtype).astype(np.int64)
            family_of = np.repeat(np.arange(len(blobs)), sizes)
            later = np.r_[False, family_of[1:] == family_of[:-1]]  # not a family's first molecule
            if (
                (sizes >= 2).all()
                and ((numbers >= 1) & (numbers <= config.nb_mol)).all()
                and (np.diff(numbers)[later[1:]] > 0).all()
                and ((canonical >= 1) & (canonical <= config.nb_mol)).all()
            ):
                return FamilyBlock(canonical, numbers, family_of), np.arange(len(blobs))
        return self._unpack_damaged(canonical, blobs, result)

    def _unpack_damaged(
        self, canonical: np.ndarray, blobs: list[bytes], result: CheckResult
    ) -> tuple[FamilyBlock, np.ndarray]:
        """``unpack``, a family at a time, naming what is wrong in each (a block with damage only)."""
        config = self.config
        dtype = numbers_dtype(config)
        kept, parts = [], []
        for k, (c, blob) in enumerate(zip(canonical.tolist(), blobs)):
            subject = f"family {c:,}: numbers"
            if len(blob) % dtype.itemsize:
                result.add(
                    Difference(
                        "groups.numbers",
                        None,
                        subject,
                        f"{len(blob)} bytes",
                        f"a multiple of {dtype.itemsize}",
                    )
                )
                blob = blob[: len(blob) - len(blob) % dtype.itemsize]
            numbers = np.frombuffer(blob, dtype=dtype).astype(np.int64)
            inside = (numbers >= 1) & (numbers <= config.nb_mol)
            if not inside.all() or (np.diff(numbers) <= 0).any() or len(numbers) < 2:
                result.add(
                    Difference(
                        "groups.numbers",
                        None,
                        subject,
                        _listed(numbers),
                        f"2 or more increasing numbers from 1 to {config.nb_mol:,}",
                    )
                )
            numbers = np.unique(numbers[inside])
            if not 1 <= c <= config.nb_mol:
                result.add(
                    Difference(
                        "groups.canonical_number",
                        None,
                        f"family {c:,}",
                        f"{c:,}",
                        f"a number from 1 to {config.nb_mol:,}",
                    )
                )
                continue
            if len(numbers):
                kept.append(k)
                parts.append(numbers)
        sizes = [len(p) for p in parts]
        block = FamilyBlock(
            canonical[np.array(kept, dtype=np.int64)],
            np.concatenate(parts) if parts else np.empty(0, dtype=np.int64),
            np.repeat(np.arange(len(parts)), sizes),
        )
        return block, np.array(kept, dtype=np.int64)

    def compare_counts(self, result: CheckResult) -> None:
        """``GroupedShards``' counts (the groups listing and the status read them) against the families."""
        config = self.config
        stored = families.spectra_counts(config)
        if stored != (self.spectra, self.families):
            result.add(
                Difference(
                    "groups.shard_totals",
                    None,
                    "GroupedShards (spectra, families)",
                    f"({stored[0]:,}, {stored[1]:,})",
                    f"({self.spectra:,}, {self.families:,}) in the families",
                )
            )
        have = families.size_counts(config)
        want = {size: tuple(line) for size, line in sorted(self.counts.items())}
        if have != want:
            result.add(
                Difference(
                    "groups.shard_sizes",
                    None,
                    "GroupedShards.sizes (families, spectra)",
                    str(have),
                    str(want),
                )
            )


def _by_size(sizes: np.ndarray, spectra: np.ndarray) -> tuple[list[int], list[int], list[int]]:
    """Families counted by size: (sizes, families, spectra)."""
    values, inverse = np.unique(sizes, return_inverse=True)
    return (
        values.tolist(),
        np.bincount(inverse, minlength=len(values)).tolist(),
        np.bincount(inverse, weights=spectra, minlength=len(values)).astype(np.int64).tolist(),
    )


MAX_APART_CELLS = 1 << 22
"""Board cells (families x molecules x cells) compared at once by ``max_atoms_apart``."""


def max_atoms_apart(config: Config, block: FamilyBlock) -> np.ndarray:
    """Each family's max_diff: the most atoms one of its molecules has where another has none.

    ``families.max_atoms_apart`` for a block at once: two molecules of N atoms
    each differ by N minus the atoms they share, and the atoms shared by
    every pair of a family are one batched product of their boards, the
    families of one size together.
    """
    sizes = block.sizes
    out = np.zeros(len(sizes), dtype=np.int64)
    offsets = np.r_[0, np.cumsum(sizes)[:-1]]
    table = binomial_table(config)
    for size in np.unique(sizes[sizes >= 2]).tolist():
        which = np.nonzero(sizes == size)[0]
        step = max(1, MAX_APART_CELLS // (size * max(size, config.cells)))
        for first in range(0, len(which), step):
            these = which[first : first + step]
            numbers = block.numbers[offsets[these][:, None] + np.arange(size)]
            atoms = atoms_of_numbers(config, numbers.ravel(), table)
            boards = np.zeros((len(atoms), config.cells), dtype=np.float32)
            np.put_along_axis(boards, atoms, 1.0, axis=1)
            boards = boards.reshape(len(these), size, config.cells)
            shared = np.matmul(boards, boards.transpose(0, 2, 1))
            shared[:, np.arange(size), np.arange(size)] = config.atoms + 1
            out[these] = config.atoms - shared.min(axis=(1, 2)).astype(np.int64)
    return out


def _whole(config: Config, blob: bytes) -> int:
    """The bytes of a numbers blob that hold whole numbers (a damaged blob's last ones left out)."""
    size = numbers_dtype(config).itemsize
    return len(blob) - len(blob) % size


def _inside(config: Config, numbers: np.ndarray) -> np.ndarray:
    """The numbers that are molecules of the configuration (a damaged family's others left out)."""
    return numbers[(numbers >= 1) & (numbers <= config.nb_mol)]


def _listed(numbers: np.ndarray) -> str:
    """A few numbers of a family, for a message."""
    shown = ", ".join(f"{n:,}" for n in numbers[:6].tolist())
    return f"[{shown}{', ...' if len(numbers) > 6 else ''}]"


def _profile_keys(profiles: np.ndarray) -> np.ndarray:
    """Profiles (k, 9) int64 as one comparable key each (their bytes)."""
    return (
        np.ascontiguousarray(profiles, dtype=np.int64)
        .view(np.dtype((np.void, 8 * len(PROFILE_FIELDS))))
        .ravel()
    )


class CompactJudge(Judge):
    """A compact store (``bbcore.compact``): no row per molecule, its spectral groups and profiles.

    A re-traced molecule must fall in the stored groups: if its spectrum is
    an ambiguous one stored (its key names a family that derives it), it is
    among that spectrum's molecules (the family's stored ones, moved by the
    spectrum's transform: ``groups_of``).  Its 9 profile statistics must
    have a ``Profiles`` row whose lowest number is at most its own; with
    every molecule re-traced (``--all``), the profiles are counted and must
    equal the stored ones exactly.  The count names a Profiles row holding
    text or a real (left out) and a profile in several rows (the first of
    them read judges the molecules).  A molecule listed in a group with
    another spectrum is found by ``CompactGroups``, which re-traces them all.
    The profiles are held as arrays (326,131 on A6_B8: 29 MB).
    """

    covers = "in the stored spectral groups, profile statistics"

    def __init__(self, config: Config, everything: bool) -> None:
        self.config = config
        # the table is not STRICT: a damaged row may hold text or a real, named by the count, left out
        rows = db.execute_sql(sql.profile_rows(PROFILE_FIELDS), (config.name,)).fetchall()
        stored = np.array(rows)  # numpy's own inference: integers only (the rule) give int64 at once
        self.malformed: list[tuple] = []
        if stored.dtype != np.int64:  # a text, a real or a NULL somewhere: sorted out row by row
            whole = [all(type(value) is int for value in row) for row in rows]
            self.malformed = [row for row, ok in zip(rows, whole) if not ok]
            stored = np.array([row for row, ok in zip(rows, whole) if ok], dtype=np.int64)
        stored = stored.reshape(-1, len(PROFILE_FIELDS) + 2)
        self.total = int(stored[:, -2].sum())  # every row's molecules, for the count
        # each profile once, in the keys' order, from the first row read that has it: a molecule is
        # judged against that row, and a profile in several rows is named by the count
        self.keys, first, rows = np.unique(
            _profile_keys(stored[:, : len(PROFILE_FIELDS)]), return_index=True, return_counts=True
        )
        self.molecules, self.lowest = stored[first, -2], stored[first, -1]
        self.repeated = [
            (tuple(stored[i, : len(PROFILE_FIELDS)].tolist()), n)
            for i, n in zip(first.tolist(), rows.tolist())
            if n > 1
        ]
        self.counted: dict[bytes, list[int]] | None = {} if everything else None
        self.key_index = index_exists(sql.family_key_index(config))

    def check_count(self) -> CheckResult:
        """No molecule rows, every profile value an integer, each profile in one row, and the profiles
        count every molecule."""
        config = self.config
        result = CheckResult("count", f"{config.nb_mol:,} molecules in the profiles, no molecule rows")
        for row in self.malformed:
            for name, value in zip((*PROFILE_FIELDS, "molecules", "lowest"), row):
                if type(value) is not int:
                    result.add(
                        Difference(
                            "count.malformed",
                            None,
                            f"Profiles {row[: len(PROFILE_FIELDS)]}: {name}",
                            repr(value),
                            "an integer",
                        )
                    )
        (rows,) = db.execute_sql(sql.COUNT_MOLECULES, (config.name,)).fetchone()
        if rows:
            result.add(
                Difference("count.molecule_rows", None, "molecule rows of a compact store", f"{rows:,}", "0")
            )
        for profile, copies in self.repeated:
            result.add(Difference("count.repeated", None, f"Profiles {profile}", f"{copies} rows", "1 row"))
        counted = self.total
        if counted != config.nb_mol:
            result.add(
                Difference(
                    "count.profiles", None, "molecules in Profiles", f"{counted:,}", f"{config.nb_mol:,}"
                )
            )
        return result

    def judge(self, result: CheckResult, rows: dict[int, tuple]) -> None:
        numbers = sorted(rows)
        members = self.groups_of(sorted({rows[n][4] for n in numbers}))
        for number in numbers:
            spectrum = rows[number][4]
            if spectrum in members and number not in members[spectrum]:
                result.add(
                    Difference(
                        f"{result.name}.not_in_group",
                        number,
                        f"group of spectrum {spectrum}",
                        "not among its molecules",
                        "a member",
                    )
                )
        columns = [MOLECULE_FIELDS.index(name) for name in PROFILE_FIELDS]
        stats = np.array([[rows[n][c] for c in columns] for n in numbers], dtype=np.int64).reshape(
            -1, len(columns)
        )
        keys = _profile_keys(stats)
        keys_stored = self.keys if len(self.keys) else _profile_keys(np.full((1, len(columns)), -1))
        lowest = self.lowest if len(self.keys) else np.zeros(1, dtype=np.int64)
        at = np.minimum(np.searchsorted(keys_stored, keys), len(keys_stored) - 1)
        found = keys_stored[at] == keys
        for i in np.nonzero(~found | (lowest[at] > np.array(numbers)))[0].tolist():
            profile = tuple(stats[i].tolist())
            have = "no such row" if not found[i] else f"lowest {int(lowest[at[i]]):,}"
            result.add(
                Difference(
                    f"{result.name}.profile",
                    numbers[i],
                    f"Profiles {profile}",
                    have,
                    f"a row, lowest <= {numbers[i]:,}",
                )
            )
        if self.counted is not None and result.name == "engine":
            for key, number in zip(keys.tolist(), numbers):
                line = self.counted.setdefault(key, [0, number])
                line[0] += 1
                line[1] = min(line[1], number)

    def groups_of(self, spectra: list[str]) -> dict[str, set[int]]:
        """The stored ambiguous spectra among these, each with its molecules (derived from its family).

        Each spectrum's key (``engine.spectra_keys``) names its family through
        the key index (a scan of the families if that index is missing: the
        groups phase names it); the families found are derived
        (``families.derived``) and a spectrum's molecules are the images of
        the family's stored ones by its transform.  Only this batch's
        families are read.
        """
        config = self.config
        partner, valid = partners(config, spectra)
        spectra = [s for s, ok in zip(spectra, valid.tolist()) if ok]
        keys = sorted(set(engine.spectra_keys(config, partner[valid]).view(np.int64).tolist()))
        column = "key" if self.key_index else "position"
        at = {name: i for i, name in enumerate(sql.FAMILY_COLUMNS)}
        found: dict[int, np.ndarray] = {}
        for chunk in chunked(keys, ROWS_PER_QUERY):
            statement = sql.families_by(config, column, f"key IN ({', '.join('?' * len(chunk))})")
            for row in db.execute_sql(statement, tuple(chunk)):
                blob, canonical = row[at["numbers"]], row[at["canonical_number"]]
                if type(blob) is not bytes or type(canonical) is not int:
                    continue  # malformed: the groups phase names it
                if not 1 <= canonical <= config.nb_mol:
                    continue  # no molecule (the engine would read out of bounds): the groups phase names it
                numbers = unpack_numbers(config, blob[: _whole(config, blob)])
                found[canonical] = _inside(config, numbers)
        wanted = set(spectra)
        members: dict[str, set[int]] = {}
        canonical, text, transform = families.derived(config, sorted(found))
        for c, s, t in zip(canonical.tolist(), text.tolist(), transform.tolist()):
            spectrum = s.decode("ascii")
            if spectrum in wanted and spectrum not in members:
                members[spectrum] = set(images_of(config, found[c], TRANSFORM_NAMES[t]).tolist())
        return members

    def every_profile(self, result: CheckResult) -> CheckResult:
        """With every molecule re-traced: the profiles counted equal the stored ones."""
        counted = self.counted or {}
        stored = {k: (int(m), int(low)) for k, m, low in zip(self.keys.tolist(), self.molecules, self.lowest)}
        for key in sorted(set(counted) | set(stored)):
            have, want = stored.get(key), counted.get(key)
            if have != (tuple(want) if want else None):
                profile = tuple(np.frombuffer(key, dtype=np.int64).tolist())
                result.add(
                    Difference(
                        "engine.profiles_counted",
                        None,
                        f"Profiles {profile} (molecules, lowest)",
                        str(have or "no row"),
                        str(tuple(want) if want else "no molecule"),
                    )
                )
        result.covered += "; every profile counted"
        return result
