"""Statistics of an explored configuration: ambiguity, ray records, distributions.

Glossary (spec, ``shared/spec/blackbox.md``):

- *ambiguity report*: the spec's table (spectral groups per size, up to
  symmetry and with symmetry, molecules involved) with its total line, the
  share of all molecules that are ambiguous, and the groups counted by the
  most atoms that differ between two of their molecules: what a seeker who
  guesses one molecule of the group risks (5 points per wrong atom in the
  usual scoring);
- *ray class*: ``absorbed``, ``reflected`` or ``out`` (an out pair is one ray);
- *ray record*: for each class, the longest ray and the ray with most turns
  over every molecule of the configuration, with the lowest-numbered
  molecule achieving it (always a canonical molecule: images share their
  canonical molecule's statistics and have higher numbers);
- *distribution*: molecules counted by a statistic (number of rays of a
  class, longest ray, most turns), or spectral groups by size.

Everything is computed by SQL over the stored statistics: the spectral
groups by ``GROUP BY`` over ``Spectrums`` (a compact store: its shards'
counts), the distributions and records from the profile, counted
(``profile_counts``): one ``GROUP BY`` over a full store's molecules
(``statistics_profile``: a single scan of the configuration), or one per
distribution over a compact store's ``Profiles``; a record's molecule is
then re-traced with the reference implementation (``bbcore.rays.trace``) to
find the ray itself and draw its path.

Drawing a ray (``path_drawing``): every cell the ray crosses shows the
heading the ray leaves it with, ``>`` east, ``<`` west, ``^`` north, ``v``
south, so a turn is where the arrow changes (the turn cell already shows the
new heading); a cell crossed twice shows ``+``.  Around the box only the
ray's own ends are labelled, in the spec's style: ``@`` absorbed, ``&``
reflected, ``a`` at both ends of a ray that came out.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from math import prod
from typing import Literal

import numpy as np

from bbcore import sql
from bbcore.config import Config
from bbcore.families import risk_counts
from bbcore.geometry import EAST, NORTH, SOUTH, WEST, Cell, Direction
from bbcore.numbering import atoms_of, molecule_string
from bbcore.queries import COMPLETE, EXPLORED, NOT_STARTED, config_state
from bbcore.rays import ABSORBED, REFLECTED, Ray, path_headings, trace_all
from bbcore.render import BLANK, max_atoms_differing, render_board
from bbcore.spectra import AmbiguityLine, ambiguity_table
from bbcore.store import config_row, db, is_compact

RayClass = Literal["absorbed", "reflected", "out"]
Measure = Literal["length", "turns"]
RAY_CLASSES: tuple[RayClass, ...] = ("absorbed", "reflected", "out")
MEASURES: tuple[Measure, ...] = ("length", "turns")
POINTS_PER_WRONG_ATOM = 5

CLAIM_WIDTH, CLAIM_TURNS, CLAIM_LENGTH = 8, 6, 23
"""Players' belief: on the 8 x 8 board a ray turns at most 6 times and crosses at most 23 cells."""

ARROWS: dict[Direction, str] = {EAST: ">", WEST: "<", NORTH: "^", SOUTH: "v"}
CROSSING = "+"


class StatisticsError(Exception):
    """Statistics asked of a configuration that is not complete: one line for the user."""


def require_complete(config: Config) -> None:
    """Raise StatisticsError unless ``config`` is explored and its spectral groups are built.

    A complete configuration is one look-up (counting its spectral groups, as
    ``config_state`` does, took 0.65 s on A6_B8 and the report asks 4 times).
    """
    row = config_row(config)
    if row is not None and row.complete:
        return
    state = config_state(config)
    if state.state == COMPLETE:
        return
    if state.state == NOT_STARTED:
        raise StatisticsError(f"{config.name} is not explored: run 'bbcore explore {config.name}' first")
    if state.state == EXPLORED:
        raise StatisticsError(
            f"{config.name} has no spectral groups yet: run 'bbcore explore {config.name}' to finish it"
        )
    raise StatisticsError(
        f"{config.name} is only {state.label} explored: run 'bbcore explore {config.name}' to finish it"
    )


# -- the ambiguity report ------------------------------------------------------


@dataclass(frozen=True)
class RiskLine:
    """Spectral groups whose molecules differ by at most ``max_diff`` atoms (two by two)."""

    max_diff: int
    families: int  # up to symmetry
    groups: int  # with symmetry

    @property
    def points(self) -> int:
        """What a wrong guess in such a group costs at most in the usual scoring."""
        return POINTS_PER_WRONG_ATOM * self.max_diff


@dataclass(frozen=True)
class AmbiguityReport:
    """The spec's ambiguity table with its totals, the ambiguous share and the risk lines."""

    config: Config
    lines: tuple[AmbiguityLine, ...]
    risk: tuple[RiskLine, ...]

    @property
    def total(self) -> AmbiguityLine:
        """The total line (``size`` is 0: it sums every size)."""
        return AmbiguityLine(
            0,
            sum(x.families for x in self.lines),
            sum(x.groups for x in self.lines),
            sum(x.molecules for x in self.lines),
        )

    @property
    def share(self) -> float:
        """The fraction of all molecules of the configuration that are ambiguous, 0..1."""
        return self.total.molecules / self.config.nb_mol

    @property
    def unique(self) -> int:
        """Molecules whose spectrum is theirs alone."""
        return self.config.nb_mol - self.total.molecules


def risk_lines(config: Config) -> list[RiskLine]:
    """Spectral groups counted by the most atoms differing between two of their molecules.

    Streams the ambiguous molecules group by group (one group in memory).
    A compact store counted them while grouping (``bbcore.families.risk_counts``).
    """
    if is_compact(config):
        counts = risk_counts(config)
        return [RiskLine(d, families, groups) for d, (families, groups) in counts.items()]
    families: dict[int, int] = {}
    groups: dict[int, int] = {}
    cursor = db.execute_sql(sql.group_molecules(config))
    for (_, transform), rows in itertools.groupby(cursor, key=lambda row: (row[0], row[1])):
        diff = max_atoms_differing([row[2] for row in rows])
        groups[diff] = groups.get(diff, 0) + 1
        families[diff] = families.get(diff, 0) + (transform == "id")
    return [RiskLine(d, families[d], groups[d]) for d in sorted(groups)]


def ambiguity_report(config: Config) -> AmbiguityReport:
    """The ambiguity report of a complete configuration."""
    require_complete(config)
    return AmbiguityReport(config, tuple(ambiguity_table(config)), tuple(risk_lines(config)))


# -- the statistics profile: one scan for the distributions and the records ----------

PROFILE_COLUMNS: tuple[str, ...] = (
    *(f"{c}_number" for c in RAY_CLASSES),
    *(f"{c}_max_{m}" for m in MEASURES for c in RAY_CLASSES),
)
"""The statistics the distributions and the records are made of."""


@dataclass(frozen=True)
class ProfileRow:
    """The molecules sharing one combination of PROFILE_COLUMNS: how many, and the lowest number."""

    values: dict[str, int]
    molecules: int
    lowest: int


def profile_bases(config: Config) -> tuple[int, ...]:
    """One more than the largest possible value of each of PROFILE_COLUMNS.

    At most 4W rays of a class; a ray ends within 2W*W steps (spec), so its
    length, and its turns, are at most 2W*W.
    """
    rays_bound, ray_bound = 4 * config.width + 1, 2 * config.cells + 1
    return tuple(rays_bound if column.endswith("_number") else ray_bound for column in PROFILE_COLUMNS)


def statistics_profile(config: Config) -> list[ProfileRow]:
    """Molecules grouped by their PROFILE_COLUMNS: a single SQL GROUP BY over Molecules.

    Every distribution and every ray record follows from these rows (about
    13,000 on A4_B8), so a whole configuration is scanned once: one GROUP BY
    per statistic would scan it a dozen times.  The 9 columns are grouped as
    one integer (mixed radix, ``profile_bases``) when it fits in 63 bits
    (W <= 10): SQLite sorts one integer key about 2.5 times faster than
    nine (7 s against 19 s on A4_B8 on this machine).  A compact store
    summed the same rows while tracing (``Profiles``).
    """
    if is_compact(config):
        width = len(PROFILE_COLUMNS)
        return [
            ProfileRow(dict(zip(PROFILE_COLUMNS, row[:width])), row[width], row[width + 1])
            for row in db.execute_sql(sql.profile_rows(PROFILE_COLUMNS), (config.name,))
        ]
    bases = profile_bases(config)
    if prod(bases) < 2**63:
        key = packed_key(PROFILE_COLUMNS, bases)
        rows = []
        for packed, count, lowest in db.execute_sql(sql.grouped_by(key, "1"), (config.name,)):
            values = {}
            for column, base in zip(PROFILE_COLUMNS, bases):
                packed, values[column] = divmod(packed, base)
            rows.append(ProfileRow(values, count, lowest))
        return rows
    columns = ", ".join(PROFILE_COLUMNS)
    width = len(PROFILE_COLUMNS)
    return [
        ProfileRow(dict(zip(PROFILE_COLUMNS, row[:width])), row[width], row[width + 1])
        for row in db.execute_sql(sql.grouped_by(columns, columns), (config.name,))
    ]


# -- distributions ---------------------------------------------------------------


@dataclass(frozen=True)
class Distribution:
    """Counts by value of a statistic, one column per series (e.g. per ray class)."""

    name: str  # "rays", "longest", "turns", "sizes"
    title: str
    key_label: str
    series: tuple[str, ...]
    rows: tuple[tuple[int, tuple[int, ...]], ...]  # (value, count per series), by value

    def column(self, series: str) -> list[tuple[int, int]]:
        """(value, count) pairs of one series, zero counts included."""
        index = self.series.index(series)
        return [(key, counts[index]) for key, counts in self.rows]


ANY = "any"
"""The series over all classes: the longest ray (or most turns) of a molecule, whatever its class."""

MOLECULE_DISTRIBUTIONS: dict[str, tuple[str, str, dict[str, tuple[str, ...]]]] = {
    "rays": (
        "molecules by number of rays of each class (out: pairs)",
        "rays",
        {c: (f"{c}_number",) for c in RAY_CLASSES},
    ),
    "longest": (
        "molecules by their longest ray (cells crossed)",
        "length",
        {
            **{c: (f"{c}_max_length",) for c in RAY_CLASSES},
            ANY: tuple(f"{c}_max_length" for c in RAY_CLASSES),
        },
    ),
    "turns": (
        "molecules by their ray with most turns",
        "turns",
        {**{c: (f"{c}_max_turns",) for c in RAY_CLASSES}, ANY: tuple(f"{c}_max_turns" for c in RAY_CLASSES)},
    ),
}
"""name -> (title, key label, series -> the columns whose maximum is counted).

A molecule with no ray of a class counts at 0 for that class."""


@dataclass(frozen=True)
class ProfileCounts:
    """What the distributions and the records read of the profile, already counted.

    For each of ``MOLECULE_DISTRIBUTIONS``, the molecules counted by the
    values of its columns (``distribution_columns``) and whether they have a
    ray of each class: one row per combination, the values, the 3 flags
    (``RAY_CLASSES`` order), the molecules and the lowest number (int64).
    """

    grouped: dict[str, np.ndarray]

    def records(self) -> dict[tuple[RayClass, Measure], tuple[int, int, int]]:
        """For each class and measure some molecule has a ray of: the record value, how many
        molecules reach it and the lowest number among them."""
        found = {}
        for name in MOLECULE_DISTRIBUTIONS:
            columns = distribution_columns(name)
            grouped = self.grouped[name]
            for ray_class, measure in itertools.product(RAY_CLASSES, MEASURES):
                column = f"{ray_class}_max_{measure}"
                if column not in columns:
                    continue
                having = grouped[:, len(columns) + RAY_CLASSES.index(ray_class)] > 0
                if not having.any():
                    continue
                values = grouped[:, columns.index(column)]
                value = int(values[having].max())
                reaching = having & (values == value)
                found[ray_class, measure] = (
                    value,
                    int(grouped[reaching, -2].sum()),
                    int(grouped[reaching, -1].min()),
                )
        return found


def distribution_columns(name: str) -> tuple[str, ...]:
    """The profile columns a molecule distribution is made of, in ``PROFILE_COLUMNS`` order."""
    used = {c for columns in MOLECULE_DISTRIBUTIONS[name][2].values() for c in columns}
    return tuple(c for c in PROFILE_COLUMNS if c in used)


def profile_counts(config: Config, profile: list[ProfileRow] | None = None) -> ProfileCounts:
    """The profile's counts for the distributions and the records, counted in numpy.

    A compact store's ``Profiles`` rows are read as four integers each (the
    statistics packed in two, ``sql.profile_packed``): A7_B8's 998,521 rows
    took 7 s as ``ProfileRow`` objects, 3.4 s of CPU as one SQL GROUP BY per
    distribution (SQLite sorts every row), 0.8 s so.  A full store's profile
    is the GROUP BY over its molecules (``statistics_profile``).
    """
    if profile is None and is_compact(config):
        values, molecules, lowest = _stored_profile(config)
    else:
        profile = statistics_profile(config) if profile is None else profile
        count = len(profile)
        values = {
            c: np.fromiter((row.values[c] for row in profile), np.int64, count) for c in PROFILE_COLUMNS
        }
        molecules = np.fromiter((row.molecules for row in profile), np.int64, count)
        lowest = np.fromiter((row.lowest for row in profile), np.int64, count)
    bases = dict(zip(PROFILE_COLUMNS, profile_bases(config)))
    flags = [(values[f"{c}_number"] > 0).astype(np.int64) for c in RAY_CLASSES]
    grouped = {}
    for name in MOLECULE_DISTRIBUTIONS:
        columns = distribution_columns(name)
        radix = [bases[c] for c in columns] + [2] * len(flags)
        key = np.zeros(len(molecules), dtype=np.int64)
        for column, base in zip([values[c] for c in columns] + flags, radix):
            key = key * base + column
        combinations, inverse = np.unique(key, return_inverse=True)
        totals = np.zeros(len(combinations), dtype=np.int64)
        np.add.at(totals, inverse.ravel(), molecules)
        least = np.full(len(combinations), np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(least, inverse.ravel(), lowest)
        digits = []
        for base in reversed(radix):
            combinations, digit = np.divmod(combinations, base)
            digits.append(digit)
        grouped[name] = np.column_stack([*reversed(digits), totals, least]).astype(np.int64)
    return ProfileCounts(grouped)


def packed_key(columns: tuple[str, ...], bases: tuple[int, ...]) -> str:
    """An SQL expression packing these columns in one integer (mixed radix: the first column
    least significant); each value must be below its base."""
    key = columns[-1]
    for column, base in zip(columns[-2::-1], bases[-2::-1]):
        key = f"{column} + {base} * ({key})"
    return key


def _stored_profile(config: Config) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """A compact store's ``Profiles`` rows as columns: the statistics, the molecules, the lowest numbers.

    Four integers a row reach Python: the rays and longest rays packed in
    one (``profile_bases``), the turns in another, the molecules and the
    lowest number.  Both packs fit 63 bits up to W = 13.
    """
    bases = profile_bases(config)
    halves = (slice(0, 6), slice(6, 9))
    keys = [packed_key(PROFILE_COLUMNS[half], bases[half]) for half in halves]
    cursor = db.execute_sql(sql.profile_packed(keys), (config.name,))
    rows = np.fromiter(itertools.chain.from_iterable(cursor), dtype=np.int64).reshape(-1, 4)
    values = {}
    for i, half in enumerate(halves):
        packed = rows[:, i]
        for column, base in zip(PROFILE_COLUMNS[half], bases[half]):
            packed, values[column] = np.divmod(packed, base)
    return values, rows[:, 2], rows[:, 3]


def molecule_distribution(counts: ProfileCounts, name: str) -> Distribution:
    """One of ``MOLECULE_DISTRIBUTIONS`` (``rays``, ``longest``, ``turns``), from the profile's counts."""
    title, key_label, series = MOLECULE_DISTRIBUTIONS[name]
    grouped = counts.grouped[name]
    index = {c: i for i, c in enumerate(distribution_columns(name))}
    molecules = grouped[:, -2]
    tallies: dict[str, dict[int, int]] = {}
    for s, names in series.items():
        per_row = np.max(grouped[:, [index[c] for c in names]], axis=1)
        values, inverse = np.unique(per_row, return_inverse=True)
        totals = np.zeros(len(values), dtype=np.int64)
        np.add.at(totals, inverse.ravel(), molecules)
        tallies[s] = dict(zip(values.tolist(), totals.tolist()))
    keys = sorted(set().union(*tallies.values()))
    rows = tuple((k, tuple(tallies[s].get(k, 0) for s in series)) for k in keys)
    return Distribution(name, title, key_label, tuple(series), rows)


def size_distribution(config: Config, table: list[AmbiguityLine] | None = None) -> Distribution:
    """Spectral groups by size: families (up to symmetry), groups and molecules (SQL GROUP BY).

    ``table`` is the ambiguity table when already read (1.7 s on A6_B8's 5.3 M spectra).
    """
    table = ambiguity_table(config) if table is None else table
    rows = tuple((x.size, (x.families, x.groups, x.molecules)) for x in table)
    return Distribution("sizes", "spectral groups by size", "size", ("families", "groups", "molecules"), rows)


def distributions(
    config: Config, counts: ProfileCounts | None = None, table: list[AmbiguityLine] | None = None
) -> list[Distribution]:
    """Every distribution of a complete configuration: rays, longest, turns, sizes."""
    require_complete(config)
    counts = profile_counts(config) if counts is None else counts
    return [
        *(molecule_distribution(counts, name) for name in MOLECULE_DISTRIBUTIONS),
        size_distribution(config, table),
    ]


# -- ray records ------------------------------------------------------------------


@dataclass(frozen=True)
class RayRecord:
    """The longest ray (or most turns) of one class over a whole configuration."""

    config: Config
    ray_class: RayClass
    measure: Measure
    value: int  # the record: cells crossed or turns
    molecules: int  # how many molecules have such a ray
    number: int  # the lowest-numbered of them
    molecule: str
    ray: Ray  # that molecule's record ray (reference trace)

    @property
    def column(self) -> str:
        """The Molecules column holding the per-molecule maximum."""
        return f"{self.ray_class}_max_{self.measure}"


def record_ray(
    config: Config, atoms: tuple[int, ...], ray_class: RayClass, measure: Measure, value: int
) -> Ray:
    """The ray of a molecule achieving a record: the record value, then the most of the other measure,
    then the lowest position."""
    other: Measure = "turns" if measure == "length" else "length"
    candidates = [
        r for r in trace_all(config, atoms) if r.result == ray_class and getattr(r, measure) == value
    ]
    if not candidates:
        raise ValueError(f"no {ray_class} ray with {measure} {value} in {config.name} molecule {atoms}")
    return max(candidates, key=lambda r: (getattr(r, other), -r.position))


def ray_records(config: Config, counts: ProfileCounts | None = None) -> list[RayRecord]:
    """The records (3 classes x length, turns), in RAY_CLASSES x MEASURES order.

    From the profile's counts (``profile_counts``): the record is the
    largest ``<class>_max_<measure>`` among molecules that have a ray of the
    class (a maximum of 0 can also mean "no such ray"), with how many
    molecules reach it and the lowest number.  That molecule is made from its
    number and re-traced with the reference implementation to find the ray.
    A class no molecule has (reflections in a full box, say) has no record.
    """
    require_complete(config)
    counts = profile_counts(config) if counts is None else counts
    found = counts.records()
    records = []
    for ray_class in RAY_CLASSES:
        for measure in MEASURES:
            if (ray_class, measure) not in found:
                continue
            value, molecules, number = found[ray_class, measure]
            atoms = atoms_of(config, number)
            molecule = molecule_string(config, atoms)
            ray = record_ray(config, atoms, ray_class, measure, value)
            records.append(RayRecord(config, ray_class, measure, value, molecules, number, molecule, ray))
    return records


def overall(records: list[RayRecord], measure: Measure) -> RayRecord | None:
    """The record of a measure over every class (the first class on ties)."""
    chosen = [r for r in records if r.measure == measure]
    return max(chosen, key=lambda r: r.value, default=None)


def claim_statement(config: Config, records: list[RayRecord]) -> str:
    """A plain sentence: do the records confirm or refine "6 turns, 23 cells" on 8 x 8?"""
    longest, turniest = overall(records, "length"), overall(records, "turns")
    length = longest.value if longest else 0
    turns = turniest.value if turniest else 0
    figures = f"the longest ray crosses {length} cells and the most turns is {turns}"
    claim = f'"at most {CLAIM_TURNS} turns and {CLAIM_LENGTH} cells"'
    if config.width != CLAIM_WIDTH:
        return (
            f"In {config.name} {figures}; the players' belief {claim} is about the 8 x 8 box, "
            f"so {config.name} neither confirms nor refines it."
        )
    if (turns, length) == (CLAIM_TURNS, CLAIM_LENGTH):
        return (
            f"{config.name} confirms the belief {claim}: {figures}, "
            "both bounds are reached and never exceeded."
        )
    parts = []
    for name, found, believed in (("turns", turns, CLAIM_TURNS), ("cells", length, CLAIM_LENGTH)):
        if found > believed:
            parts.append(f"a ray can reach {found} {name}, more than {believed}")
        elif found < believed:
            parts.append(f"no ray goes beyond {found} {name}, fewer than {believed}")
        else:
            parts.append(f"{believed} {name} is exact")
    return f"{config.name} refines the belief {claim}: " + "; ".join(parts) + f" ({figures})."


# -- drawing a ray -----------------------------------------------------------------


def path_drawing(width: int, ray: Ray, height: int | None = None) -> dict[Cell, str]:
    """Cell -> character of the ray's path: the leaving heading's arrow, ``+`` where it crosses itself."""
    drawing: dict[Cell, str] = {}
    for cell, (_, leaving) in zip(ray.path, path_headings(width, ray, height)):
        drawing[cell] = CROSSING if cell in drawing else ARROWS[leaving]
    return drawing


def ray_labels(width: int, ray: Ray, height: int | None = None) -> list[str]:
    """Perimeter labels showing only this ray, in the spec's style."""
    labels = [BLANK] * (2 * (width + (height or width)))
    if ray.result == "absorbed":
        labels[ray.position - 1] = ABSORBED
    elif ray.result == "reflected":
        labels[ray.position - 1] = REFLECTED
    else:
        assert ray.exit is not None
        labels[ray.position - 1] = labels[ray.exit - 1] = "a"
    return labels


def ray_board(width: int, molecule: str, ray: Ray, height: int | None = None) -> str:
    """The molecule's board with one ray drawn (see the module docstring)."""
    return render_board(
        width,
        molecule,
        ray_labels(width, ray, height),
        path=path_drawing(width, ray, height),
        height=height,
    )


def describe_ray(ray: Ray) -> str:
    """One line: where the ray enters, how it ends, its length and turns."""
    if ray.result == "out":
        end = f"comes out at position {ray.exit}"
    else:
        end = "is absorbed" if ray.result == "absorbed" else "is reflected"
    cells = "1 cell" if ray.length == 1 else f"{ray.length} cells"
    turns = "1 turn" if ray.turns == 1 else f"{ray.turns} turns"
    return f"ray from position {ray.position} {end}: {cells}, {turns}"


# -- the whole report ----------------------------------------------------------------


@dataclass(frozen=True)
class StatisticsReport:
    """Everything the report shows for one configuration."""

    config: Config
    ambiguity: AmbiguityReport
    records: tuple[RayRecord, ...]
    claim: str
    distributions: tuple[Distribution, ...]


def statistics_report(config: Config) -> StatisticsReport:
    """The whole report of a complete configuration (raises StatisticsError otherwise)."""
    require_complete(config)
    counts = profile_counts(config)
    records = ray_records(config, counts)
    ambiguity = ambiguity_report(config)
    return StatisticsReport(
        config,
        ambiguity,
        tuple(records),
        claim_statement(config, records),
        tuple(distributions(config, counts, list(ambiguity.lines))),
    )


def iter_report_rows(report: AmbiguityReport) -> Iterator[dict[str, int | str]]:
    """The ambiguity table as rows (size, families, groups, molecules), then the total line."""
    for line in report.lines:
        yield {
            "size": line.size,
            "families": line.families,
            "groups": line.groups,
            "molecules": line.molecules,
        }
    total = report.total
    yield {"size": "total", "families": total.families, "groups": total.groups, "molecules": total.molecules}
