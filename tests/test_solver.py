"""The solver decoder (bbcore.solver) against the engine, and against a brute force written here.

The brute force and its tracer below are written plainly from the spec's ray
rules, for a box W wide and H high with the issue's perimeter numbering (left
side lines 1..H, bottom columns 1..W, right side lines H..1, top columns
W..1), so that rectangles and ranges of counts are judged by an independent
computation.
"""

from __future__ import annotations

import itertools
import json
import random
import threading

import numpy as np
import pytest
from expect import bbcore
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from bbcore import rays
from bbcore.config import Config
from bbcore.decode import candidates
from bbcore.decoder import Decoder
from bbcore.engine import ABSORBED_CODE, REFLECTED_CODE
from bbcore.game import ABSORBED, REFLECTED, Game
from bbcore.shots import atom_counts, ranked_shots
from bbcore.solver import (
    UNDECIDED,
    Box,
    Count,
    SolverCancelled,
    _CompiledPathSearch,
    _PathSearch,
    judge,
    next_shots,
    solve,
    trace_many,
    trace_result,
)

# -- a plain tracer and brute force, from the spec ------------------------------------


def plain_trace(width: int, height: int, atoms, position: int):
    """The spec's ray rules on a W x H box: ``"@"``, ``"&"`` or the exit position."""
    full = {(a // width + 1, a % width + 1) for a in atoms}
    if position <= height:
        line, column, dl, dc = position, 0, 0, 1
    elif position <= height + width:
        line, column, dl, dc = height + 1, position - height, -1, 0
    elif position <= 2 * height + width:
        line, column, dl, dc = 2 * height + width + 1 - position, width + 1, 0, -1
    else:
        line, column, dl, dc = 0, 2 * height + 2 * width + 1 - position, 1, 0
    first = (line + dl, column + dc)
    if first in full:
        return "@"
    if (first[0] + dc, first[1] + dl) in full or (first[0] - dc, first[1] - dl) in full:
        return "&"
    for _ in range(2 * width * height + 1):
        line, column = line + dl, column + dc
        if column == 0:
            return line
        if line == height + 1:
            return height + column
        if column == width + 1:
            return 2 * height + width + 1 - line
        if line == 0:
            return 2 * height + 2 * width + 1 - column
        ahead = (line + dl, column + dc)
        left = (ahead[0] + dc, ahead[1] + dl)
        right = (ahead[0] - dc, ahead[1] - dl)
        if ahead in full:
            return "@"
        if left in full and right in full:
            return "&"
        if left in full:
            dl, dc = -dc, -dl
        elif right in full:
            dl, dc = dc, dl
    raise AssertionError("a ray that does not end")


def shown_rays(width: int, height: int, atoms, positions) -> list[tuple[int, object]]:
    """The rays from ``positions`` as a game shows them: an exit pair once, at its first end."""
    results = {p: plain_trace(width, height, atoms, p) for p in positions}
    return [(p, r) for p, r in results.items() if not (isinstance(r, int) and r < p and r in results)]


def brute_force(width: int, height: int, least: int, most: int, shown) -> list[tuple[int, ...]]:
    """Every placement of ``least``..``most`` atoms whose plain rays give every shown result."""
    return [
        atoms
        for n in range(least, most + 1)
        for atoms in itertools.combinations(range(width * height), n)
        if all(plain_trace(width, height, atoms, p) == r for p, r in shown)
    ]


def as_game(width: int, shown) -> Game:
    """The shown rays of a square box as a Game."""
    game = Game.empty(width)
    for position, result in shown:
        game = game.with_result(position, result)
    return game


# -- the tracers ----------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_the_solver_tracers_are_the_reference_on_squares_and_the_plain_tracer_on_rectangles(data):
    width = data.draw(st.integers(2, 8))
    height = data.draw(st.integers(2, 8))
    box = Box(width, height)
    atoms = tuple(sorted(data.draw(st.sets(st.integers(0, box.cells - 1), min_size=1, max_size=6))))
    positions = list(range(1, box.positions + 1))
    grid = np.zeros((1, box.cells), dtype=bool)
    grid[0, list(atoms)] = True
    codes = trace_many(box, grid, positions)[0]
    for position in positions:
        plain = plain_trace(width, height, atoms, position)
        assert trace_result(box, atoms, position) == plain
        assert codes[position - 1] == (
            ABSORBED_CODE if plain == "@" else REFLECTED_CODE if plain == "&" else plain - 1
        )
        if width == height:
            ray = rays.trace(width, atoms, position)
            assert plain == (
                "@" if ray.result == "absorbed" else "&" if ray.result == "reflected" else ray.exit
            )


# -- the solver against the engine ----------------------------------------------------


@st.composite
def square_games(draw):
    width = draw(st.integers(2, 6))
    atoms_count = draw(st.integers(1, min(5, width * width - 1)))
    atoms = tuple(
        sorted(draw(st.sets(st.integers(0, width * width - 1), min_size=atoms_count, max_size=atoms_count)))
    )
    every = list(range(1, 4 * width + 1))
    positions = (
        every if draw(st.booleans()) else draw(st.lists(st.sampled_from(every), min_size=1, unique=True))
    )
    return width, atoms_count, atoms, shown_rays(width, width, atoms, sorted(positions))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(square_games())
def test_the_solver_gives_the_engines_candidates_backbone_count_and_probabilities(drawn):
    width, n, atoms, shown = drawn
    config = Config(n, width)
    game = as_game(width, shown)
    found = candidates(config, game, source="compute")
    solution = solve(width, width, n, n, shown, limit=10**6, seconds=None)
    assert solution.count.exact and solution.count.value == found.count
    assert sorted(solution.placements) == sorted(tuple(int(c) for c in a) for a in found.atoms)
    assert atoms in solution.placements
    counts = atom_counts(found)
    engine_backbone = np.where(counts == found.count, 1, np.where(counts == 0, 0, UNDECIDED))
    assert (solution.backbone == engine_backbone).all()
    assert np.allclose(solution.probabilities, counts / found.count)
    # The next shots over the listed placements are the engine's.
    engine_shots, skipped = ranked_shots(config, game, found)
    if skipped is None:
        assert next_shots(solution, game.unknown) == engine_shots


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(square_games())
def test_the_decoder_beyond_the_engine_answers_as_the_engine_where_both_run(drawn):
    width, n, _, shown = drawn
    config = Config(n, width)
    game = as_game(width, shown)
    engine = Decoder(config, source="compute").decode(game)
    # Both run where the solver lists every placement: a few hundred, listed well within
    # ENUMERATION_SECONDS even on a loaded machine (past it, an estimate, which the engine never gives).
    assume(engine.found.count <= 300)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("bbcore.decoder.DIRECT_LIMIT", 0)  # every game is past the engine's limit
        solved = Decoder(config, source="compute").decode(game)
    assert solved.solution is not None and solved.found is not None and solved.found.source == "solver"
    assert solved.found.numbers.tolist() == engine.found.numbers.tolist()
    assert solved.shots == engine.shots and solved.skipped == engine.skipped
    assert np.array_equal(solved.probabilities, engine.probabilities)
    assert solved.count == engine.count and solved.exact


# -- rectangles and ranges against the brute force ------------------------------------


@st.composite
def rectangle_games(draw):
    width, height = draw(st.integers(2, 6)), draw(st.integers(2, 4))
    least = draw(st.integers(1, 3))
    most = draw(st.integers(least, 3))
    n = draw(st.integers(least, most))
    atoms = tuple(sorted(draw(st.sets(st.integers(0, width * height - 1), min_size=n, max_size=n))))
    every = list(range(1, 2 * (width + height) + 1))
    positions = (
        every if draw(st.booleans()) else draw(st.lists(st.sampled_from(every), min_size=1, unique=True))
    )
    return width, height, least, most, atoms, shown_rays(width, height, atoms, sorted(positions))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rectangle_games())
def test_rectangles_and_ranges_agree_with_the_brute_force(drawn):
    width, height, least, most, atoms, shown = drawn
    brute = brute_force(width, height, least, most, shown)
    solution = solve(width, height, least, most, shown, limit=10**6, seconds=None)
    assert solution.count.exact and solution.count.value == len(brute)
    assert solution.placements == sorted(brute, key=lambda a: (len(a), a))
    assert atoms in solution.placements
    counts = np.zeros(width * height)
    for placement in brute:
        counts[list(placement)] += 1
    assert np.allclose(solution.probabilities.ravel(), counts / len(brute))
    assert solution.probabilities.shape == (height, width)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rectangle_games())
def test_past_the_listing_the_path_search_counts_exactly_and_draws_agreeing_placements(drawn):
    # limit=0: nothing listed; the count, probabilities and backbone are the path search's sums.
    width, height, least, most, atoms, shown = drawn
    brute = brute_force(width, height, least, most, shown)
    solution = solve(width, height, least, most, shown, limit=0, seconds=None)
    assert solution.count == Count(len(brute), True, method="path search")
    assert solution.placements is None and solution.margin == 0
    counts = np.zeros(width * height)
    for placement in brute:
        counts[list(placement)] += 1
    assert np.allclose(solution.probabilities.ravel(), counts / len(brute))
    backbone = np.where(counts == len(brute), 1, np.where(counts == 0, 0, UNDECIDED))
    assert (solution.backbone.ravel() == backbone).all()
    assert set(solution.samples) <= set(brute)


def test_the_path_search_draws_each_agreeing_placement_equally_often():
    # 3 atoms in 5 x 4, two rays: hundreds of placements, most cells free of both rays.
    hidden = (6, 12, 13)
    shown = shown_rays(5, 4, hidden, [2, 7])
    brute = brute_force(5, 4, 3, 3, shown)
    solution = solve(5, 4, 3, 3, shown, limit=0, seconds=None)
    assert solution.count.value == len(brute) > 100
    drawn = {placement: 0 for placement in brute}
    for placement in solution.samples:
        drawn[placement] += 1
    expected = len(solution.samples) / len(brute)
    # Uniform draws: each count is binomial around ``expected``; a chi-square far past its
    # degrees of freedom (len(brute) - 1, spread sqrt(2 (len - 1))) would say the draws lean.
    chi2 = sum((n - expected) ** 2 / expected for n in drawn.values())
    assert chi2 < len(brute) + 5 * (2 * len(brute)) ** 0.5


@st.composite
def searched_games(draw):
    """A game of ``rectangle_games`` (ranges of counts) or ``square_games``, the cells the
    backbone settles given to the search or not, whether placements are listed, and whether the
    compiled search writes out its leaves or draws them by a second run."""
    if draw(st.booleans()):
        width, height, least, most, _, shown = draw(rectangle_games())
    else:
        width, n, _, shown = draw(square_games())
        height, least, most = width, n, n
    settled = draw(st.booleans())
    return width, height, least, most, shown, settled, draw(st.sampled_from([0, 10**6])), draw(st.booleans())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(searched_games())
def test_the_compiled_path_search_answers_as_the_plain_one(drawn):
    # The plain search (Python, every leaf kept) is the reference; the compiled one must give
    # the same count, probabilities, backbone, listed placements and the same uniform draws.
    width, height, least, most, shown, settled, limit, written_out = drawn
    box = Box(width, height)
    fixed = np.full(width * height, UNDECIDED)
    if settled:  # the backbone, as the solver gives it to the search
        fixed = _PathSearch(box, least, most, shown, fixed, None, None).solution(0, 1).backbone.ravel()
    plain = _PathSearch(box, least, most, shown, fixed, None, None).solution(limit, 7)
    search = _CompiledPathSearch(box, least, most, shown, fixed, None, None)
    if not written_out:
        search.ROWS_BYTES = 0  # the leaves drawn are found by a second run of the search
    compiled = search.solution(limit, 7)
    assert plain is not None and compiled is not None
    assert compiled.count == plain.count
    assert np.array_equal(compiled.probabilities, plain.probabilities)
    assert np.array_equal(compiled.backbone, plain.backbone)
    assert compiled.placements == plain.placements
    assert compiled.samples == plain.samples
    assert compiled.rays == plain.rays and compiled.extra == plain.extra


def test_a_range_of_two_to_four_atoms_on_a_six_by_six_box_agrees_with_the_brute_force():
    hidden = (7, 15, 28)
    shown = shown_rays(6, 6, hidden, [1, 2, 4, 8, 11, 16, 19, 22])
    brute = brute_force(6, 6, 2, 4, shown)
    solution = solve(6, 6, 2, 4, shown, limit=10**6, seconds=None)
    assert solution.count.value == len(brute) and solution.placements == brute
    # The Decoder's way for a range on a square (the engine once per count) gives the same.
    config = Config(2, 6)
    object.__setattr__(config, "atoms_max", 4)
    answer = Decoder(config, source="compute").decode(as_game(6, shown))
    assert answer.count == len(brute) and answer.exact
    assert np.allclose(answer.probabilities, solution.probabilities)


# -- the boards people play -----------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(("width", "height", "n"), [(10, 10, 10), (14, 10, 11), (20, 12, 15)])
def test_a_random_placement_is_among_the_solutions_and_the_backbone_holds(width, height, n):
    rng = random.Random(width * 100 + height)
    hidden = tuple(sorted(rng.sample(range(width * height), n)))
    shown = shown_rays(width, height, hidden, range(1, 2 * (width + height) + 1))
    solution = solve(width, height, n, n, shown, seconds=None)
    assert solution.consistent and solution.count.exact
    assert hidden in solution.placements
    backbone = solution.backbone.ravel()
    assert all(backbone[c] != 0 for c in hidden)
    assert all(backbone[c] != 1 for c in range(width * height) if c not in hidden)
    for placement in solution.placements:
        assert all(plain_trace(width, height, placement, p) == r for p, r in shown)


@pytest.mark.slow
def test_past_the_listing_the_count_is_estimated_within_its_tolerance_and_the_backbone_holds():
    # A small game (UniGen is slow on these formulas): 12 placements, one listed at most, and
    # few samples: the backbone must then be proved, not read from the placements seen.
    width, n = 4, 2
    hidden = (5, 10)
    shown = shown_rays(width, width, hidden, [1])
    found = candidates(Config(n, width), as_game(width, shown), source="compute")
    solution = solve(width, width, n, n, shown, limit=1, samples=3, sampling=None, search=False)
    count = solution.count
    assert found.count > 1 and not count.exact and solution.placements is None
    assert len(solution.samples) == 3
    assert found.count / (1 + count.tolerance) <= count.value <= found.count * (1 + count.tolerance)
    listed = {tuple(int(c) for c in a) for a in found.atoms}
    assert all(sample in listed for sample in solution.samples)
    counts = atom_counts(found).ravel()
    backbone = solution.backbone.ravel()
    assert ((backbone == 1) == (counts == found.count)).all()
    assert ((backbone == 0) == (counts == 0)).all()
    assert 0 < solution.margin < 1
    shots = next_shots(solution, [p for p in range(1, 4 * width + 1) if p not in dict(shown)])
    assert shots and all(sum(k for _, k in shot.outcomes) > 0 for shot in shots)


# -- inconsistent games and guesses ---------------------------------------------------


def test_an_inconsistent_game_names_a_minimal_core_of_rays():
    hidden = (5, 18, 27)
    shown = shown_rays(6, 6, hidden, range(1, 25))
    # A mistyped result: the first ray that came out is said to be absorbed.
    position = next(p for p, r in shown if isinstance(r, int))
    wrong = [(p, ABSORBED if p == position else r) for p, r in shown]
    solution = solve(6, 6, 3, 3, wrong)
    assert not solution.consistent and solution.count.value == 0 and solution.core
    core = [ray for ray in wrong if ray[0] in solution.core]
    assert not brute_force(6, 6, 3, 3, core)
    for dropped in core:
        rest = [ray for ray in core if ray != dropped]
        assert solve(6, 6, 3, 3, rest).consistent


def test_tatham_accepts_a_guess_no_ray_tells_apart_and_emacs_does_not():
    box = Box(4, 4)
    hidden = next(
        atoms
        for atoms in itertools.combinations(range(16), 3)
        if solve(4, 4, 3, 3, shown_rays(4, 4, atoms, range(1, 17))).count.value == 2
    )
    other = next(
        p for p in solve(4, 4, 3, 3, shown_rays(4, 4, hidden, range(1, 17))).placements if p != hidden
    )
    assert judge(box, hidden, other, "tatham").accepted
    emacs = judge(box, hidden, other, "emacs")
    assert not emacs.accepted and emacs.ray is None and emacs.misplaced > 0


def test_a_guess_told_apart_is_refused_with_a_ray_that_does_it():
    box = Box(5, 3)
    hidden, guess = (0, 7, 13), (0, 7, 12)
    for rule in ("tatham", "emacs"):
        judgement = judge(box, hidden, guess, rule)
        assert not judgement.accepted
        position, truth, guessed = judgement.ray
        assert plain_trace(5, 3, hidden, position) == truth != guessed == plain_trace(5, 3, guess, position)
    assert judge(box, hidden, hidden, "emacs").accepted and judge(box, hidden, hidden, "tatham").accepted


def test_a_stop_set_cancels_the_solve():
    stop = threading.Event()
    stop.set()
    with pytest.raises(SolverCancelled):
        solve(6, 6, 3, 3, [(1, REFLECTED)], stop=stop)


@pytest.mark.parametrize("search", [_PathSearch, _CompiledPathSearch])
def test_a_stop_set_cancels_the_path_search(search):
    # Twelve rays on 10 x 10 and no cell settled: hundreds of thousands of branches; the stop
    # event is looked at every 4,096 (past 20 s without it, the search gives up: None, a failure).
    rng = random.Random(2)
    shown = shown_rays(10, 10, rng.sample(range(100), 10), sorted(rng.sample(range(1, 41), 12)))
    stop = threading.Event()
    stop.set()
    with pytest.raises(SolverCancelled):
        search(Box(10, 10), 10, 10, shown, np.full(100, UNDECIDED), 20.0, stop).solution(0, 1)


def test_a_stop_set_during_a_long_sat_call_cancels_it():
    """A SAT call that runs for a minute (the pigeonhole formula of 11 pigeons in 10 holes:
    about 50 s for CaDiCaL) is cancelled when its stop event is set while it runs
    (python-sat's CaDiCaL has no ``interrupt``)."""
    from pysat.examples.genhard import PHP
    from pysat.solvers import Solver

    from bbcore.solver import SOLVER, _Interrupter

    stop = threading.Event()
    timer = threading.Timer(0.3, stop.set)
    with Solver(name=SOLVER, bootstrap_with=PHP(10).clauses) as sat, _Interrupter(sat, stop) as guard:
        timer.start()
        with pytest.raises(SolverCancelled):  # the old code ran on to False
            guard.solve([])


# -- decode --json, through the real command ------------------------------------------


def tokens(width: int, height: int, atoms, mistyped: int | None = None) -> list[str]:
    """The full game of ``atoms`` as tokens (``H``, ``R``, a number at both ends of an exit);
    the ray from ``mistyped`` (and its other end) written as absorbed."""
    out = ["."] * (2 * (width + height))
    label = 0
    for position in range(1, len(out) + 1):
        result = plain_trace(width, height, atoms, position)
        if out[position - 1] != ".":
            continue
        if mistyped is not None and position == mistyped or result == "@":
            out[position - 1] = "H"
            if isinstance(result, int):
                out[result - 1] = "H"
        elif result == "&":
            out[position - 1] = "R"
        else:
            label += 1
            out[position - 1] = out[result - 1] = str(label)
    return out


@pytest.mark.slow
def test_decode_json_past_the_engine_keeps_its_fields(tmp_path):
    hidden = (4, 17, 23, 38, 45, 52, 61, 70, 86, 99)
    run = bbcore(
        "--db", str(tmp_path / "none.sqlite"), "decode", "A10_B10", *tokens(10, 10, hidden), "--json"
    )
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    brute_hidden = "".join("O" if c in hidden else "-" for c in range(100))
    assert report["source"] == "solver" and report["exact"] is True and report["core"] is None
    assert report["count"] == len(report["molecules"]) and brute_hidden in [
        m["molecule"] for m in report["molecules"]
    ]
    assert len(report["probabilities"]) == 10 and all(len(row) == 10 for row in report["probabilities"])
    assert all(report["backbone"][c // 10][c % 10] in "O?" for c in hidden)
    assert report["next_shots"] == []


def test_decode_json_names_the_core_when_nothing_agrees(tmp_path):
    hidden = (5, 18, 27)
    game = tokens(6, 6, hidden)
    position = next(p for p, t in enumerate(game, 1) if t.isdigit())
    run = bbcore(
        "--db", str(tmp_path / "none.sqlite"), "decode", "A3_B6", *tokens(6, 6, hidden, position), "--json"
    )
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["count"] == 0 and report["exact"] is True and report["core"]
    other_end = game.index(game[position - 1], position) + 1
    mistyped = {position, other_end}
    assert mistyped & set(report["core"])
