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

from bbcore import geometry, rays
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
    describe_ray,
    distribution_columns,
    distributions,
    iter_report_rows,
    molecule_distribution,
    overall,
    path_drawing,
    profile_counts,
    ray_board,
    ray_labels,
    ray_records,
    record_ray,
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


@pytest.mark.parametrize("config", [A2_B4, A3_B4], ids=str)
def test_record_ray_is_the_longest_then_most_turning_then_first(config, brute_rays):
    """For every molecule, class and measure: of the rays at the molecule's maximum, the record
    ray has the most of the other measure, then the lowest position (what the report draws)."""
    for number, traced in enumerate(brute_rays(config), start=1):
        atoms = atoms_of(config, number)
        for ray_class in RAY_CLASSES:
            mine = [r for r in traced if r.result == ray_class]
            for measure, other in (("length", "turns"), ("turns", "length")):
                if not mine:
                    continue
                value = max(getattr(r, measure) for r in mine)
                reaching = [r for r in mine if getattr(r, measure) == value]
                expected = sorted(reaching, key=lambda r: (-getattr(r, other), r.position))[0]
                assert record_ray(config, atoms, ray_class, measure, value) == expected


def test_a_record_the_molecule_does_not_have_is_refused():
    """A value no ray of the molecule has (a store that disagrees with the tracer): one line naming it."""
    atoms = atoms_of(A2_B4, 2)
    with pytest.raises(ValueError, match=r"^no out ray with length 99 in A2_B4 molecule \(0, 2\)$"):
        record_ray(A2_B4, atoms, "out", "length", 99)


def test_the_report_gathers_its_parts(store):
    """The whole report is the ambiguity report, the records, the claim and the distributions,
    each as asked for alone."""
    report = statistics_report(A3_B4)
    assert report.config == A3_B4
    assert report.ambiguity == ambiguity_report(A3_B4)
    assert report.records == tuple(ray_records(A3_B4))
    assert all(record.config == A3_B4 for record in report.records)
    assert report.claim == claim_statement(A3_B4, list(report.records))
    assert report.distributions == tuple(distributions(A3_B4))


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


BELIEF = '"at most 6 turns and 23 cells"'


@pytest.mark.parametrize(
    ("turns", "length", "sentence"),
    [
        (
            6,
            23,
            f"A4_B8 confirms the belief {BELIEF}: the longest ray crosses 23 cells and the most turns is 6, "
            "both bounds are reached and never exceeded.",
        ),
        (
            7,
            23,
            f"A4_B8 refines the belief {BELIEF}: a ray can reach 7 turns, more than 6; 23 cells is exact "
            "(the longest ray crosses 23 cells and the most turns is 7).",
        ),
        (
            6,
            21,
            f"A4_B8 refines the belief {BELIEF}: 6 turns is exact; no ray goes beyond 21 cells, "
            "fewer than 23 (the longest ray crosses 21 cells and the most turns is 6).",
        ),
        (
            5,
            24,
            f"A4_B8 refines the belief {BELIEF}: no ray goes beyond 5 turns, fewer than 6; a ray can reach "
            "24 cells, more than 23 (the longest ray crosses 24 cells and the most turns is 5).",
        ),
    ],
)
def test_claim_statement_whole_sentences(turns, length, sentence):
    """Each bound said exact, exceeded or not reached, in one sentence with the figures."""
    config = Config(4, 8)
    records = [fake_record(config, "out", "length", length), fake_record(config, "absorbed", "turns", turns)]
    assert claim_statement(config, records) == sentence


def test_claim_statement_without_records():
    """No record of a measure counts as 0 (a list of records with none of it)."""
    assert claim_statement(A3_B4, []) == (
        f"In A3_B4 the longest ray crosses 0 cells and the most turns is 0; the players' belief {BELIEF} "
        "is about the 8 x 8 box, so A3_B4 neither confirms nor refines it."
    )
    assert overall([], "length") is None


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


def board_tokens(board: str, width: int, height: int) -> dict[tuple[int, int], str]:
    """A one-character-token board read back: (line, column) -> token, the labels around at lines
    0 and height + 1 and columns 0 and width + 1 (``diagram_grid``'s places), blanks left out."""
    lines = board.split("\n")
    assert len(lines) == height + 2
    found = {}
    for line, text in enumerate(lines):
        for column in range(width + 2):
            token = text.ljust(2 * width + 3)[2 * column]
            if token != " ":
                found[(line, column)] = token
    return found


STEPS = {(0, 1): ">", (0, -1): "<", (-1, 0): "^", (1, 0): "v"}


@pytest.mark.parametrize(
    ("config", "crossing"), [(Config(2, 4, 3), 0), (Config(2, 3, 4), 0), (A3_B4, 8)], ids=str
)
def test_ray_boards_on_rectangles(config, crossing):
    """Every ray of every molecule, in a box wider than high, higher than wide, and square: the
    board has a line per row; its end marks stand at the ray's positions around the box and
    nowhere else; each cell the ray crosses once points to the next one (the last, out of the box
    to its exit), each cell crossed twice shows ``+`` (8 rays of A3_B4); the atoms are where the
    molecule has them."""
    width, height = config.width, config.height
    inside = {(line, column) for line in range(1, height + 1) for column in range(1, width + 1)}
    crossings = Counter()
    for number in range(1, config.nb_mol + 1):
        atoms = atoms_of(config, number)
        molecule = molecule_string(config, atoms)
        for ray in rays.trace_all(config, atoms):
            labels = ray_labels(width, ray, height)
            ends = {ray.position: labels[ray.position - 1]}
            if ray.result == "out":
                ends[ray.exit] = "a"
            assert len(labels) == config.positions
            assert {p: label for p, label in enumerate(labels, start=1) if label != " "} == ends
            assert ends[ray.position] == {"absorbed": "@", "reflected": "&", "out": "a"}[ray.result]
            tokens = board_tokens(ray_board(width, molecule, ray, height), width, height)
            marks = {cell: token for cell, token in tokens.items() if cell not in inside}
            assert marks == {geometry.entry(width, p, height)[0]: mark for p, mark in ends.items()}
            atoms_drawn = {cell for cell, token in tokens.items() if token == "O"}
            assert atoms_drawn == {(a // width + 1, a % width + 1) for a in atoms}
            drawn = {cell: token for cell, token in tokens.items() if cell in inside and token not in "O-"}
            assert set(drawn) == set(ray.path)
            times = Counter(ray.path)
            following = [*ray.path[1:]]
            if ray.result == "out":
                following.append(geometry.entry(width, ray.exit, height)[0])
            for cell, after in zip(ray.path, following):
                if times[cell] > 1:
                    assert drawn[cell] == CROSSING
                    crossings[number, ray.position] += 1
                else:
                    assert drawn[cell] == STEPS[(after[0] - cell[0], after[1] - cell[1])]
    assert len(crossings) == crossing  # rays reflected deep in the box cross their own path


def test_describe_ray():
    """One line a ray: where it enters, how it ends, its cells and turns (singular for one)."""
    assert describe_ray(rays.trace(4, atoms_of(A2_B4, 2), 8)) == (
        "ray from position 8 comes out at position 11: 3 cells, 1 turn"
    )
    assert (
        describe_ray(rays.Ray(3, "absorbed", None, 1, 0))
        == "ray from position 3 is absorbed: 1 cell, 0 turns"
    )
    assert describe_ray(rays.Ray(5, "reflected", None, 4, 2)) == (
        "ray from position 5 is reflected: 4 cells, 2 turns"
    )
    assert (
        describe_ray(rays.Ray(14, "out", 2, 7, 3))
        == "ray from position 14 comes out at position 2: 7 cells, 3 turns"
    )


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


def test_distributions_are_named_and_counted_in_integers(store):
    """The titles, key labels and series the CLI and the TUI show, and every value and count an
    integer (a float would print as ``12.0``)."""
    found = distributions(A3_B4)
    classes = ("absorbed", "reflected", "out")
    assert [(d.name, d.title, d.key_label, d.series) for d in found] == [
        ("rays", "molecules by number of rays of each class (out: pairs)", "rays", classes),
        ("longest", "molecules by their longest ray (cells crossed)", "length", (*classes, "any")),
        ("turns", "molecules by their ray with most turns", "turns", (*classes, "any")),
        ("sizes", "spectral groups by size", "size", ("families", "groups", "molecules")),
    ]
    for distribution in found:
        for value, counts in distribution.rows:
            assert type(value) is int and all(type(count) is int for count in counts), distribution.name


def test_a_profile_given_is_the_one_counted(store):
    """``profile_counts`` counts the profile it is given (a part of one here), not the store's."""
    profile = statistics_profile(A3_B4)
    part = [row for row in profile if row.values["out_number"] == 4]
    counts = profile_counts(A3_B4, part)
    for name in ("rays", "longest", "turns"):
        grouped = counts.grouped[name]
        assert grouped[:, -2].sum() == sum(row.molecules for row in part) < A3_B4.nb_mol
        assert grouped[:, -1].min() == min(row.lowest for row in part)
        assert grouped.shape[1] == len(distribution_columns(name)) + 3 + 2
    assert {v for v, c in molecule_distribution(counts, "rays").column("out") if c} == {4}


def test_profile_packed_and_plain_group_by_agree(store, monkeypatch):
    """The one-integer GROUP BY (W <= 10) gives the same groups as the nine-column one."""

    def rows(profile):
        return sorted((tuple(r.values.values()), r.molecules, r.lowest) for r in profile)

    packed = statistics_profile(A4_B4)
    monkeypatch.setattr(statistics_module, "prod", lambda bases: 2**63)
    plain = statistics_profile(A4_B4)
    assert rows(packed) == rows(plain)
    assert sum(r.molecules for r in packed) == A4_B4.nb_mol
