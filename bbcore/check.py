"""``bbcore check``: verify a stored configuration, as ``git fsck`` or a ZFS scrub would.

A database received from elsewhere can be trusted only once it is checked.
``check(config)`` reads the open database (read-only is enough) and runs,
in this order:

1. ``integrity``: SQLite's own ``integrity_check`` of the whole file;
2. ``configuration``: the Configurations row against C(W², N), the atoms
   and the width, and the stored ranges (``ExploredRanges``) against it;
3. ``count``: the molecules stored, against C(W², N);
4. ``groups``: every ambiguous spectrum of the stored molecules has its
   Spectrums row, with ``nb_mol`` the number of molecules that have it
   (and its transform and canonical number those ``build_spectrums``
   gives), and no other row is there;
5. ``families``: every molecule, by enantiomer group: its canonical
   number is the smallest of its 8 images, the transform recorded maps the
   canonical molecule onto it, its board is its number's, its spectrum is
   its canonical molecule's stored spectrum moved by that transform, and
   no member of a group is missing (numbering and symmetry only, no
   tracing);
6. ``engine``: a seeded random sample of molecules (``SAMPLE``; every one
   with ``everything=True``) re-traced by the engine
   (``engine.molecules_of_numbers``, the exploration's own kernels), canonical number, transform, board,
   spectrum and the 17 statistics compared;
7. ``reference``: a smaller seeded sample (``REFERENCE_SAMPLE``, drawn from
   the first) re-traced by the plain reference ``bbcore.rays``, so that
   an engine bug cannot vouch for itself.

A compact store (``bbcore.compact``: no row per molecule, only the ambiguous
spectra, their molecules and the profiles) is checked for what it holds:
``count`` (no molecule rows, the profiles count C(W², N) molecules),
``groups`` (each Spectrums row's nb_mol, transform and canonical number
against its stored molecules), ``members`` (every stored molecule of a
spectral group re-traced by the engine has the group's spectrum), and the
two samples must fall in the stored groups: a re-traced molecule whose
spectrum is stored ambiguous is among its molecules, a molecule listed in
a group has its spectrum, and its profile has a ``Profiles`` row (with
``everything``, every profile is counted and must equal the stored ones).
What a compact store cannot show, a spectrum shared by two molecules and
stored nowhere, only a new exploration finds.

Each check keeps its first ``LISTED`` differences (molecule number, what,
what is stored, what was computed) and counts them all.  Only a complete
configuration is checked (a partial one has no spectral groups to check).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from math import comb

import numpy as np
from peewee import chunked

from bbcore import engine, families, rays, sql
from bbcore.compact import PROFILE_FIELDS
from bbcore.config import Config
from bbcore.engine import image_numbers
from bbcore.geometry import TRANSFORM_NAMES, transform_atoms
from bbcore.numbering import atoms_of, atoms_of_numbers, atoms_of_range, binomial_table, number_of
from bbcore.rays import STAT_FIELDS
from bbcore.spectra import computed_spectrums
from bbcore.store import (
    COMPACT,
    Configuration,
    ExploredRange,
    Profile,
    Spectrum,
    db,
    has_config_indexes,
    stored_count,
)

SAMPLE = 10_000
"""Molecules re-traced by the engine, by default."""
REFERENCE_SAMPLE = 1_000
"""Molecules re-traced by the reference ``rays.py``, by default (about a millisecond each)."""
SEED = 14
"""The default seed of the samples: the same molecules every time, unless ``--seed``."""
LISTED = 20
"""Differences kept, per check."""
FAMILY_BATCH = 8192
"""Numbers per batch of the families check (whole enantiomer groups are read at once)."""
ROWS_PER_QUERY = 500
"""Numbers per ``IN (...)`` look-up of sampled rows."""
CHECKS = ("integrity", "configuration", "count", "groups", "families", "engine", "reference")
"""The checks of a full store, in order."""
COMPACT_CHECKS = ("integrity", "configuration", "count", "groups", "members", "engine", "reference")
"""The checks of a compact store, in order."""

CheckProgressCallback = Callable[[str, int, int], None]
"""Called with (check, done, total) while a check runs."""


class CheckError(Exception):
    """A configuration that cannot be checked: the message is one line for the user."""


@dataclass(frozen=True)
class Difference:
    """Something stored that is not what was computed."""

    number: int | None  # the molecule, or None (a spectrum, a table, the file)
    what: str  # the column or the thing compared
    stored: str
    computed: str

    def line(self) -> str:
        """One line: ``molecule 1,234: spectrum stored '...', computed '...'``."""
        subject = f"molecule {self.number:,}: " if self.number is not None else ""
        return f"{subject}{self.what}: stored {self.stored}, computed {self.computed}"

    def as_dict(self) -> dict[str, object]:
        """For ``--json``."""
        return {"number": self.number, "what": self.what, "stored": self.stored, "computed": self.computed}


@dataclass
class CheckResult:
    """One check: what it covered, its differences (the first ``LISTED``) and how many in all."""

    name: str
    covered: str = ""
    differences: list[Difference] = field(default_factory=list)
    count: int = 0

    @property
    def ok(self) -> bool:
        """Whether everything agreed."""
        return self.count == 0

    def add(self, difference: Difference) -> None:
        """Count a difference, and keep it if it is among the first."""
        self.count += 1
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
    progress: CheckProgressCallback | None = None,
) -> CheckReport:
    """Run every check on ``config`` in the open database; raises CheckError if it cannot be checked."""
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
    reference_numbers = sorted(random.Random(seed).sample(numbers, min(reference, len(numbers))))
    if row.store == COMPACT:
        judge: Judge = CompactJudge(config, everything)
        results = [
            check_integrity(progress),
            check_configuration(config, row),
            judge.check_count(),
            judge.check_groups(progress),
            judge.check_members(progress),
        ]
    else:
        judge = FullJudge(config)
        results = [
            check_integrity(progress),
            check_configuration(config, row),
            check_count(config),
            check_groups(config, progress),
            check_families(config, progress),
        ]
    results.append(check_sample("engine", config, numbers, engine_rows, judge, progress))
    results.append(check_sample("reference", config, reference_numbers, reference_rows, judge, progress))
    if everything and isinstance(judge, CompactJudge):
        results[-2] = judge.every_profile(results[-2])
    return CheckReport(
        config, results, seed, len(numbers), len(reference_numbers), time.monotonic() - started
    )


# -- the checks -------------------------------------------------------------------


def check_integrity(progress: CheckProgressCallback) -> CheckResult:
    """SQLite's ``integrity_check`` of the whole file (every configuration in it)."""
    result = CheckResult("integrity", "SQLite's integrity_check of the whole file")
    connection = db.connection()
    ticks = [0]

    def tick() -> int:
        ticks[0] += 1
        progress("integrity", 0, 1)
        return 0

    progress("integrity", 0, 1)
    connection.set_progress_handler(tick, 200_000)
    try:
        lines = [line for (line,) in db.execute_sql(sql.INTEGRITY_CHECK)]
    finally:
        connection.set_progress_handler(None, 0)
    if lines != ["ok"]:
        for line in lines:
            result.add(Difference(None, "integrity_check", repr(line), "'ok'"))
    progress("integrity", 1, 1)
    return result


def check_configuration(config: Config, row: Configuration) -> CheckResult:
    """The Configurations row and the stored ranges against C(W², N)."""
    expected = comb(config.width**2, config.atoms)
    result = CheckResult(
        "configuration",
        f"C({config.width**2}, {config.atoms}) = {expected:,} molecules, atoms, width, ranges",
    )
    for what, stored, computed in (
        ("nb_mol", row.nb_mol, expected),
        ("nb_atoms", row.nb_atoms, config.atoms),
        ("width", row.width, config.width),
        ("molecules in ExploredRanges", stored_count(config), expected),
    ):
        if stored != computed:
            result.add(Difference(None, what, f"{stored:,}", f"{computed:,}"))
    ranges = sorted(
        (r.start, r.stop)
        for r in ExploredRange.select(ExploredRange.start, ExploredRange.stop).where(
            ExploredRange.config == config.name
        )
    )
    cursor = 1
    for start, stop in ranges:
        if start != cursor:
            result.add(Difference(None, "ExploredRanges", f"a range starting at {start:,}", f"{cursor:,}"))
        cursor = max(cursor, stop)
    if cursor != expected + 1:
        result.add(Difference(None, "ExploredRanges end", f"{cursor - 1:,}", f"{expected:,}"))
    return result


def check_count(config: Config) -> CheckResult:
    """The number of molecules stored."""
    result = CheckResult("count", f"{config.nb_mol:,} molecule rows")
    (stored,) = db.execute_sql(sql.COUNT_MOLECULES, (config.name,)).fetchone()
    if stored != config.nb_mol:
        result.add(Difference(None, "molecule rows", f"{stored:,}", f"{config.nb_mol:,}"))
    return result


def check_groups(config: Config, progress: CheckProgressCallback) -> CheckResult:
    """Every ambiguous spectrum's Spectrums row, and its nb_mol, transform and canonical number."""
    result = CheckResult("groups")
    progress("groups", 0, 1)
    if not has_config_indexes(config):
        result.add(Difference(None, "spectrum index", "missing", f'"{sql.spectrum_index(config)}"'))
        return result
    computed = computed_spectrums(config)
    stored = {
        row.spectrum: (row.nb_mol, row.transform, row.canonical_number)
        for row in Spectrum.select().where(Spectrum.config == config.name)
    }
    result.covered = f"{len(computed):,} ambiguous spectra: nb_mol, transform, canonical number"
    for spectrum in sorted(set(computed) | set(stored)):
        have, want = stored.get(spectrum), computed.get(spectrum)
        if have == want:
            continue
        subject = f"spectrum {spectrum}"
        if have is None:
            result.add(Difference(None, subject, "no Spectrums row", f"nb_mol {want[0]}"))
        elif want is None:
            result.add(Difference(None, subject, f"nb_mol {have[0]}", "fewer than 2 molecules have it"))
        else:
            for what, h, w in zip(("nb_mol", "transform", "canonical_number"), have, want):
                if h != w:
                    result.add(Difference(None, f"{subject}: {what}", str(h), str(w)))
    progress("groups", 1, 1)
    return result


def check_families(config: Config, progress: CheckProgressCallback) -> CheckResult:
    """Every molecule against its enantiomer group: canonical, transform, board, spectrum, members."""
    result = CheckResult(
        "families", f"{config.nb_mol:,} molecules: canonical, transform, board, spectrum by symmetry, members"
    )
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
    found = (at < len(expected)) & (expected[np.minimum(at, len(expected) - 1)] == number)

    present = np.zeros(len(expected), dtype=bool)
    present[at[found]] = True
    for missing in expected[~present].tolist():
        group = own[group_of[np.searchsorted(expected, missing)]]
        result.add(Difference(missing, "row", "absent", f"a member of the group of {group:,}"))

    for i in np.nonzero(~found)[0].tolist():  # stored with a canonical number in range, but not its own
        result.add(
            Difference(
                int(number[i]),
                "canonical_number",
                f"{stored_canonical[i]:,}",
                _canonical_text(config, number[i]),
            )
        )

    rows_found = np.nonzero(found)[0]
    groups = group_of[at[rows_found]]
    true_canonical = own[groups]
    bad_canonical = stored_canonical[rows_found] != true_canonical
    for i, c in zip(rows_found[bad_canonical].tolist(), true_canonical[bad_canonical].tolist()):
        result.add(Difference(int(number[i]), "canonical_number", f"{stored_canonical[i]:,}", f"{c:,}"))
    maps = (stored_transform[rows_found] >= 0) & (
        images[groups, np.maximum(stored_transform[rows_found], 0)] == number[rows_found]
    )
    for i in rows_found[~maps].tolist():
        t = int(images_first_transform(images[group_of[at[i]]], number[i]))
        result.add(Difference(int(number[i]), "transform", repr(rows[i][2]), repr(TRANSFORM_NAMES[t])))

    # Boards: the molecule column is its number's board.
    boards = _boards(config, atoms_of_numbers(config, number[rows_found], table))
    for i, board in zip(rows_found.tolist(), boards):
        if rows[i][3] != board:
            result.add(Difference(int(number[i]), "molecule", repr(rows[i][3]), repr(board)))

    # Spectra: each member's is its canonical molecule's, moved by the transform.
    good = rows_found[~bad_canonical & maps]
    by_number = {int(n): i for i, n in enumerate(number.tolist())}
    canon_row = np.array([by_number.get(int(c), -1) for c in stored_canonical[good].tolist()], dtype=np.int64)
    good, canon_row = good[canon_row >= 0], canon_row[canon_row >= 0]
    if not len(good):
        return len(rows)
    spectra = [rows[i][4] for i in range(len(rows))]
    partner, valid = partners(config, spectra)
    for i in np.nonzero(~valid)[0].tolist():
        result.add(Difference(int(number[i]), "spectrum", repr(spectra[i]), "a well-formed spectrum"))
    usable = valid[good] & valid[canon_row]
    good, canon_row = good[usable], canon_row[usable]
    if not len(good):
        return len(rows)
    t = stored_transform[good]
    moved = partner[canon_row[:, None], source[t]]
    moved = np.where(moved >= 0, inverse[t[:, None], np.maximum(moved, 0)], moved)
    want = engine.letters(moved)
    have = np.array([np.frombuffer(spectra[i].encode("ascii"), dtype=np.uint8) for i in good.tolist()])
    wrong = np.nonzero((want != have).any(axis=1))[0]
    for k in wrong.tolist():
        i = int(good[k])
        c = int(stored_canonical[i])
        computed = want[k].tobytes().decode("ascii")
        result.add(
            Difference(
                int(number[i]),
                "spectrum",
                repr(spectra[i]),
                f"{computed!r} (molecule {c:,}'s stored spectrum by {TRANSFORM_NAMES[int(t[k])]})",
            )
        )
    return len(rows)


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
    text = np.array([np.frombuffer(spectra[i].encode("ascii"), dtype=np.uint8) for i in rows], dtype=np.int64)
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
    ok &= (engine.letters(np.where(ok[:, None], block, engine.ABSORBED_CODE)) == text).all(axis=1)
    partner[rows] = block
    valid[rows] = ok
    return partner, valid


# -- the samples ------------------------------------------------------------------


def sample_numbers(config: Config, size: int, seed: int) -> list[int]:
    """``size`` molecule numbers drawn at random (seeded), sorted; every one when size >= nb_mol."""
    if size >= config.nb_mol:
        return list(range(1, config.nb_mol + 1))
    generator = np.random.default_rng(seed)
    if config.nb_mol < 50 * size:
        drawn = generator.choice(config.nb_mol, size=size, replace=False) + 1
    else:  # a few repeats drawn again: choice without replacement would permute nb_mol numbers
        drawn = np.unique(generator.integers(1, config.nb_mol + 1, size=size + size // 10))
        drawn = generator.permutation(drawn)[:size]
    return sorted(int(n) for n in drawn)


MOLECULE_FIELDS = ("number", "canonical_number", "transform", "molecule", "spectrum", *STAT_FIELDS)


def stored_rows(config: Config, numbers: list[int]) -> dict[int, tuple]:
    """The stored rows (``MOLECULE_FIELDS``) of ``numbers``, by number (look-ups of ``ROWS_PER_QUERY``)."""
    rows: dict[int, tuple] = {}
    for chunk in chunked(numbers, ROWS_PER_QUERY):
        query = sql.molecules_by_number(MOLECULE_FIELDS, len(chunk))
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
        result.add(Difference(number, "row", "absent", "present"))
        return
    for name, have, want in zip(MOLECULE_FIELDS[1:], stored[1:], computed[1:]):
        if have != want:
            shown = (repr(have), repr(want)) if isinstance(want, str) else (str(have), str(want))
            result.add(Difference(number, name, *shown))


SAMPLE_BATCH = ROWS_PER_QUERY * 8
"""Sampled molecules computed and judged at a time."""


def check_sample(
    name: str,
    config: Config,
    numbers: list[int],
    compute: Callable[[Config, list[int]], dict[int, tuple]],
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


def engine_rows(config: Config, numbers: list[int]) -> dict[int, tuple]:
    """Rows (``MOLECULE_FIELDS``) computed by the engine (``engine.molecules_of_numbers``: the
    exploration's own kernels, on the enantiomer groups of these molecules only)."""
    batch = engine.molecules_of_numbers(config, np.array(numbers, dtype=np.int64))
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


def reference_rows(config: Config, numbers: list[int]) -> dict[int, tuple]:
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


# -- a compact store ----------------------------------------------------------------


class CompactJudge(Judge):
    """A compact store (``bbcore.compact``): no row per molecule, its spectral groups and profiles.

    A re-traced molecule must fall in the stored groups: if its spectrum is
    an ambiguous one stored, it is among that spectrum's molecules; if it is
    listed among a spectrum's molecules, that is its spectrum.  Its 9 profile
    statistics must have a ``Profiles`` row whose lowest number is at most
    its own; with every molecule re-traced (``--all``), the profiles are
    counted and must equal the stored ones exactly.
    """

    covers = "in the stored spectral groups, profile statistics"

    def __init__(self, config: Config, everything: bool) -> None:
        self.config = config
        self.spectra: dict[str, families.SpectrumRow] = {}  # derived from Families (bbcore.families)
        self.member_of: dict[int, list[str]] = {}
        for row, numbers in families.spectrum_rows(config):
            self.spectra[row.spectrum] = row
            for number in numbers:
                self.member_of.setdefault(number, []).append(row.spectrum)
        self.profiles = {
            tuple(getattr(row, name) for name in PROFILE_FIELDS): (row.molecules, row.lowest)
            for row in Profile.select().where(Profile.config == config.name)
        }
        self.counted: dict[tuple, list[int]] | None = {} if everything else None

    def check_count(self) -> CheckResult:
        """No molecule rows, and the profiles count every molecule."""
        config = self.config
        result = CheckResult("count", f"{config.nb_mol:,} molecules in the profiles, no molecule rows")
        (rows,) = db.execute_sql(sql.COUNT_MOLECULES, (config.name,)).fetchone()
        if rows:
            result.add(Difference(None, "molecule rows of a compact store", f"{rows:,}", "0"))
        counted = sum(molecules for molecules, _ in self.profiles.values())
        if counted != config.nb_mol:
            result.add(Difference(None, "molecules in Profiles", f"{counted:,}", f"{config.nb_mol:,}"))
        return result

    def check_groups(self, progress: CheckProgressCallback) -> CheckResult:
        """Each Spectrums row against its molecules (nb_mol, transform, canonical number), and the
        shards' counts by size against the rows."""
        config = self.config
        result = CheckResult(
            "groups",
            f"{len(self.spectra):,} ambiguous spectra: nb_mol, transform, canonical number; counts by size",
        )
        progress("groups", 0, 1)
        members: dict[str, list[int]] = {}
        for number, spectra in self.member_of.items():
            for spectrum in spectra:
                members.setdefault(spectrum, []).append(number)
        table = binomial_table(config)
        for spectrum in sorted(set(self.spectra) | set(members)):
            row, numbers = self.spectra.get(spectrum), sorted(members.get(spectrum, []))
            subject = f"spectrum {spectrum}"
            if row is None:
                result.add(Difference(None, subject, "molecules but no Spectrums row", "a Spectrums row"))
                continue
            if row.nb_mol != len(numbers) or len(numbers) < 2:
                result.add(
                    Difference(
                        None, f"{subject}: nb_mol", str(row.nb_mol), f"{len(numbers)} molecules stored"
                    )
                )
            if not numbers:
                continue
            atoms = atoms_of_numbers(config, np.array(numbers, dtype=np.int64), table)
            images = image_numbers(config, atoms, table)
            canonical = images.min(axis=1)
            first = min(range(len(numbers)), key=lambda i: (canonical[i], numbers[i]))
            canonical_images = image_numbers(
                config, atoms_of_numbers(config, canonical[first : first + 1], table), table
            )[0]
            transform = TRANSFORM_NAMES[images_first_transform(canonical_images, numbers[first])]
            for what, have, want in (
                ("transform", row.transform, transform),
                ("canonical_number", row.canonical_number, int(canonical[first])),
            ):
                if have != want:
                    result.add(Difference(None, f"{subject}: {what}", str(have), str(want)))
        counted: dict[int, list[int]] = {}
        for row in self.spectra.values():
            line = counted.setdefault(row.nb_mol, [0, 0])
            line[0] += row.transform == TRANSFORM_NAMES[0]
            line[1] += 1
        want = {size: tuple(line) for size, line in sorted(counted.items())}
        have = families.size_counts(config)  # the ambiguity table is read from these
        if have != want:
            result.add(Difference(None, "GroupedShards.sizes (families, groups)", str(have), str(want)))
        progress("groups", 1, 1)
        return result

    def check_members(self, progress: CheckProgressCallback) -> CheckResult:
        """Every stored molecule of a spectral group, re-traced by the engine, has the group's spectrum."""
        numbers = sorted(self.member_of)
        result = CheckResult(
            "members", f"{len(numbers):,} molecules of the spectral groups re-traced by the engine"
        )
        progress("members", 0, len(numbers))
        for first in range(0, len(numbers), SAMPLE_BATCH):
            chunk = numbers[first : first + SAMPLE_BATCH]
            for number, row in engine_rows(self.config, chunk).items():
                for spectrum in self.member_of[number]:
                    if row[4] != spectrum:
                        result.add(Difference(number, "spectrum", repr(spectrum), repr(row[4])))
            progress("members", first + len(chunk), len(numbers))
        return result

    def judge(self, result: CheckResult, rows: dict[int, tuple]) -> None:
        for number in sorted(rows):
            computed = rows[number]
            spectrum = computed[4]
            listed = self.member_of.get(number, [])
            if spectrum in self.spectra and spectrum not in listed:
                result.add(
                    Difference(number, f"group of spectrum {spectrum}", "not among its molecules", "a member")
                )
            for other in listed:
                if other != spectrum:
                    result.add(Difference(number, "spectrum", f"{other!r} (its group)", repr(spectrum)))
            stats = dict(zip(MOLECULE_FIELDS, computed))
            profile = tuple(stats[name] for name in PROFILE_FIELDS)
            stored = self.profiles.get(profile)
            if stored is None or stored[1] > number:
                have = "no such row" if stored is None else f"lowest {stored[1]:,}"
                result.add(Difference(number, f"Profiles {profile}", have, f"a row, lowest <= {number:,}"))
            if self.counted is not None and result.name == "engine":
                line = self.counted.setdefault(profile, [0, number])
                line[0] += 1
                line[1] = min(line[1], number)

    def every_profile(self, result: CheckResult) -> CheckResult:
        """With every molecule re-traced: the profiles counted equal the stored ones."""
        counted = {k: tuple(v) for k, v in (self.counted or {}).items()}
        for profile in sorted(set(counted) | set(self.profiles)):
            have, want = self.profiles.get(profile), counted.get(profile)
            if have != want:
                result.add(
                    Difference(
                        None,
                        f"Profiles {profile} (molecules, lowest)",
                        str(have or "no row"),
                        str(want or "no molecule"),
                    )
                )
        result.covered += "; every profile counted"
        return result
