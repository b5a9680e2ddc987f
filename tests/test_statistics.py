"""Statistics: the ambiguity report, ray records, the drawn paths and the distributions.

Every figure is checked against the spec or against a brute-force
recomputation with the reference implementation (``rays.trace_all`` over
every molecule of the configuration).
"""

from __future__ import annotations

import itertools
import threading
from collections import Counter, defaultdict

import pytest

from bbcore import rays
from bbcore import statistics as statistics_module
from bbcore.config import Config
from bbcore.explore import explore
from bbcore.numbering import atoms_of, molecule_string
from bbcore.rays import path_headings
from bbcore.render import diagram_grid
from bbcore.statistics import (
    ARROWS,
    CROSSING,
    RAY_CLASSES,
    RayRecord,
    StatisticsError,
    ambiguity_report,
    claim_statement,
    distributions,
    iter_report_rows,
    path_drawing,
    ray_board,
    ray_records,
    require_complete,
    statistics_profile,
    statistics_report,
)
from bbcore.store import Configuration, open_database

A2_B4, A3_B4, A4_B4 = Config(2, 4), Config(3, 4), Config(4, 4)


# -- the ambiguity report ---------------------------------------------------------


def figures(config: Config) -> list[tuple[int, int, int, int]]:
    report = ambiguity_report(config)
    return [(x.size, x.families, x.groups, x.molecules) for x in report.lines]


def test_ambiguity_report_matches_the_spec(store):
    """The spec's two tables, with A4_B4's total line, and A2_B4 without ambiguity."""
    assert figures(A3_B4) == [(2, 1, 4, 8)]
    assert figures(A4_B4) == [(2, 9, 58, 116), (3, 2, 8, 24)]
    total = ambiguity_report(A4_B4).total
    assert (total.families, total.groups, total.molecules) == (11, 66, 140)
    assert figures(A2_B4) == []
    assert ambiguity_report(A2_B4).total.molecules == 0


def test_report_rows_end_with_the_total(store):
    """The exported form of the report: one row per size, then ``total``."""
    assert list(iter_report_rows(ambiguity_report(A4_B4))) == [
        {"size": 2, "families": 9, "groups": 58, "molecules": 116},
        {"size": 3, "families": 2, "groups": 8, "molecules": 24},
        {"size": "total", "families": 11, "groups": 66, "molecules": 140},
    ]


def test_ambiguous_share(store):
    """140 of the 1,820 A4_B4 molecules are ambiguous; none of A2_B4's."""
    report = ambiguity_report(A4_B4)
    assert report.share == pytest.approx(140 / 1820)
    assert report.unique == 1820 - 140
    assert ambiguity_report(A2_B4).share == 0


@pytest.mark.slow
def test_risk_lines_equal_brute_force(store, brute_rays):
    """Groups by most atoms differing, recomputed from reference spectra of every molecule."""
    config = A4_B4
    by_spectrum: dict[str, list[set[int]]] = defaultdict(list)
    for number, traced in enumerate(brute_rays(config), start=1):
        by_spectrum[rays.spectrum_of_rays(traced)].append(set(atoms_of(config, number)))
    expected: Counter[int] = Counter()
    for members in by_spectrum.values():
        if len(members) > 1:
            expected[max(len(a - b) for a, b in itertools.permutations(members, 2))] += 1
    report = ambiguity_report(config)
    assert {r.max_diff: r.groups for r in report.risk} == dict(expected)
    assert sum(r.families for r in report.risk) == report.total.families
    assert [r.points for r in report.risk] == [5 * r.max_diff for r in report.risk]


# -- completeness -----------------------------------------------------------------


def test_unexplored_configuration_is_refused(store):
    """A configuration never explored: a one-line error naming the command to run."""
    with pytest.raises(StatisticsError, match=r"^A5_B4 is not explored: run 'bbcore explore A5_B4'"):
        statistics_report(Config(5, 4))


def test_partial_and_unfinished_configurations_are_refused(tmp_path):
    """Stopped after one range, then every range stored but the spectral groups not marked built."""
    path = tmp_path / "partial.sqlite"
    stop = threading.Event()
    explore(A3_B4, path, range_size=100, progress=lambda p: p.done and stop.set(), stop=stop)
    open_database(path)
    with pytest.raises(StatisticsError, match=r"only \d+\.\d% explored"):
        require_complete(A3_B4)
    explore(A3_B4, path, range_size=100)  # resume with the same ranges
    open_database(path)
    require_complete(A3_B4)
    Configuration.update(complete=False).where(Configuration.config == A3_B4.name).execute()
    with pytest.raises(StatisticsError, match="no spectral groups yet"):
        ambiguity_report(A3_B4)


# -- ray records ------------------------------------------------------------------


def brute_records(traced_all) -> dict[tuple[str, str], tuple[int, int, int]]:
    """(class, measure) -> (record, molecules reaching it, lowest such number), by brute force."""
    best: dict[tuple[str, str], tuple[int, int, int]] = {}
    for number, traced in enumerate(traced_all, start=1):
        for ray_class in RAY_CLASSES:
            for measure in ("length", "turns"):
                values = [getattr(r, measure) for r in traced if r.result == ray_class]
                if not values:
                    continue
                value, key = max(values), (ray_class, measure)
                record, count, first = best.get(key, (-1, 0, 0))
                if value > record:
                    best[key] = (value, 1, number)
                elif value == record:
                    best[key] = (record, count + 1, first)
    return best


@pytest.mark.parametrize("config", [A2_B4, A3_B4, pytest.param(A4_B4, marks=pytest.mark.slow)], ids=str)
def test_records_equal_brute_force(store, config, brute_rays):
    """Each record, how many molecules reach it and the molecule shown, from reference rays."""
    records = ray_records(config)
    found = {(r.ray_class, r.measure): (r.value, r.molecules, r.number) for r in records}
    assert found == brute_records(brute_rays(config))
    for record in records:
        assert record.molecule == molecule_string(config, atoms_of(config, record.number))
        assert record.ray in brute_rays(config)[record.number - 1]
        assert record.ray.result == record.ray_class
        assert getattr(record.ray, record.measure) == record.value


def test_records_use_the_spec_order(store):
    """Three classes times two measures, absorbed first, length before turns."""
    records = ray_records(A3_B4)
    assert [(r.ray_class, r.measure) for r in records] == [
        (c, m) for c in ("absorbed", "reflected", "out") for m in ("length", "turns")
    ]


def fake_record(config: Config, ray_class: str, measure: str, value: int) -> RayRecord:
    ray = rays.Ray(
        1,
        ray_class,
        2 if ray_class == "out" else None,
        value if measure == "length" else 0,
        value if measure == "turns" else 0,
    )
    return RayRecord(config, ray_class, measure, value, 1, 1, "", ray)


@pytest.mark.parametrize(
    ("turns", "length", "verb", "detail"),
    [
        (6, 23, "confirms", "both bounds are reached"),
        (7, 23, "refines", "a ray can reach 7 turns, more than 6"),
        (6, 21, "refines", "no ray goes beyond 21 cells, fewer than 23"),
    ],
)
def test_claim_statement_on_8x8(turns, length, verb, detail):
    """The sentence says plainly whether the records confirm or refine the players' belief."""
    config = Config(4, 8)
    records = [
        fake_record(config, "out", "length", length),
        fake_record(config, "absorbed", "turns", turns),
        fake_record(config, "out", "turns", turns - 1),
    ]
    statement = claim_statement(config, records)
    assert statement.startswith(f"A4_B8 {verb} the belief")
    assert detail in statement


def test_claim_statement_elsewhere(store):
    """On another box the sentence gives the figures and says the belief is about 8 x 8."""
    statement = statistics_report(A3_B4).claim
    assert "A3_B4 neither confirms nor refines it" in statement
    assert "longest ray crosses 7 cells and the most turns is 3" in statement


# -- drawn paths ------------------------------------------------------------------


def drawn_cells(width: int, board: str) -> dict[tuple[int, int], str]:
    """Read a one-character-token board back: the cells holding a path character."""
    lines = board.split("\n")
    found = {}
    for line in range(1, width + 1):
        row = lines[line].ljust(2 * width + 3)
        for column in range(1, width + 1):
            token = row[2 * column]
            if token in {*ARROWS.values(), CROSSING}:
                found[(line, column)] = token
    return found


def test_worked_example_ray_drawing():
    """A2_B4 molecule 2, ray 8 -> 11 (3 cells, 1 turn): arrows north, then east where it turns."""
    ray = rays.trace(4, atoms_of(A2_B4, 2), 8)
    assert (ray.exit, ray.length, ray.turns) == (11, 3, 1)
    assert ray_board(4, "O-O-------------", ray) == "\n".join(
        [
            "",
            "  O - O -",
            "  - - - > a",
            "  - - - ^",
            "  - - - ^",
            "        a",
        ]
    )


@pytest.mark.parametrize("config", [A2_B4, A3_B4], ids=str)
def test_drawn_path_is_the_reference_path(config, brute_rays):
    """For every ray of every molecule: the drawn cells are the ray's cells, the arrow changes its turns."""
    for number, traced in enumerate(brute_rays(config), start=1):
        molecule = molecule_string(config, atoms_of(config, number))
        for ray in traced:
            drawing = path_drawing(config.width, ray)
            assert set(drawing) == set(ray.path)
            assert (
                sum(entering != leaving for entering, leaving in path_headings(config.width, ray))
                == ray.turns
            )
            if ray.path:
                assert drawn_cells(config.width, ray_board(config.width, molecule, ray)) == drawing


def test_headings_follow_the_path(brute_rays):
    """Each cell is entered from the previous one and left towards the next one."""
    for ray in brute_rays(A3_B4)[36]:
        headings = path_headings(4, ray)
        for (here, following), (_, leaving) in zip(zip(ray.path, ray.path[1:]), headings):
            assert (following[0] - here[0], following[1] - here[1]) == leaving


def test_record_boards_draw_the_record_ray(store):
    """The boards of the report: the record ray's cells, and its ends labelled around the box."""
    for record in ray_records(A4_B4):
        board = ray_board(4, record.molecule, record.ray)
        assert set(drawn_cells(4, board)) == set(record.ray.path)
        grid = diagram_grid(4, record.molecule, [" "] * 16)
        labels = "".join(board.split())
        atoms = "".join(grid[line][column] for line in range(1, 5) for column in range(1, 5)).count("O")
        assert labels.count("O") == atoms == 4
        expected_ends = {"absorbed": "@", "reflected": "&", "out": "aa"}[record.ray_class]
        assert "".join(ch for ch in labels if ch in "@&a") == expected_ends


# -- distributions ------------------------------------------------------------------


@pytest.mark.parametrize("config", [A3_B4, pytest.param(A4_B4, marks=pytest.mark.slow)], ids=str)
def test_distributions_equal_brute_force(store, config, brute_rays):
    """Molecules by rays of each class, longest ray, most turns: reference statistics, counted."""
    stats = [rays.statistics_of_rays(traced) for traced in brute_rays(config)]
    found = {d.name: d for d in distributions(config)}
    for ray_class in RAY_CLASSES:
        for name, column in (
            ("rays", f"{ray_class}_number"),
            ("longest", f"{ray_class}_max_length"),
            ("turns", f"{ray_class}_max_turns"),
        ):
            expected = Counter(s[column] for s in stats)
            assert {k: v for k, v in found[name].column(ray_class) if v} == dict(expected)
    for name, measure in (("longest", "length"), ("turns", "turns")):
        expected = Counter(max(s[f"{c}_max_{measure}"] for c in RAY_CLASSES) for s in stats)
        assert {k: v for k, v in found[name].column("any") if v} == dict(expected)
    sizes = found["sizes"]
    assert [(k, c) for k, c in sizes.rows] == [
        (x.size, (x.families, x.groups, x.molecules)) for x in ambiguity_report(config).lines
    ]
    assert sum(v for _, v in found["rays"].column("out")) == config.nb_mol


def test_profile_packed_and_plain_group_by_agree(store, monkeypatch):
    """The one-integer GROUP BY (W <= 10) gives the same groups as the nine-column one."""

    def rows(profile):
        return sorted((tuple(r.values.values()), r.molecules, r.lowest) for r in profile)

    packed = statistics_profile(A4_B4)
    monkeypatch.setattr(statistics_module, "prod", lambda bases: 2**63)
    plain = statistics_profile(A4_B4)
    assert rows(packed) == rows(plain)
    assert sum(r.molecules for r in packed) == A4_B4.nb_mol
