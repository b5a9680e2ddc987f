"""The exactly optimal strategy (``bbcore.optimal``): against a plain expectimax written
here (no pruning, no symmetry, a cache keyed by the candidate set), the book played
molecule by molecule, the lower bounds on every sub-problem of A3_B5, the 8 symmetries,
and a search killed with -9 then resumed.

The spectra of the expectimax come from the reference tracer (``bbcore.rays``), the
wrong atoms and the greedy book's figures from this module's own counting."""

from __future__ import annotations

import heapq
import json
import os
import signal
import sqlite3
import subprocess
from fractions import Fraction
from functools import cache
from itertools import combinations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from bbcore import store
from bbcore.config import Config
from bbcore.optimal import (
    OBJECTIVES,
    WRONG_ATOM,
    Problem,
    Search,
    command_line,
    differences,
    evaluate,
    lower_bound,
    optimal,
    solve,
    stored_book,
)
from bbcore.optimal_kernels import _huffman
from bbcore.rays import spectrum
from bbcore.strategy import compute_book
from tests.expect import BBCORE, ROOT
from tests.proctree import wait_until

SMALL = [Config(1, 3), Config(2, 3), Config(2, 4), Config(3, 4)]


# ---------------------------------------------------------------------------
# The plain game, from the reference tracer


def reference_codes(config: Config) -> tuple[list[tuple[int, ...]], list[frozenset[int]]]:
    """Every molecule's results (0 reflected, 1 absorbed, 2 + q out at q) and atoms, by the
    reference tracer, in number order."""
    codes, atoms = [], []
    for cells in combinations(range(config.cells), config.atoms):
        text = spectrum(config, cells)
        first: dict[str, int] = {}
        row = []
        for p, ch in enumerate(text):
            if ch == "@":
                row.append(1)
            elif ch == "&":
                row.append(0)
            else:
                row.append(-1)
                first.setdefault(ch, p)
        for p, ch in enumerate(text):
            if row[p] == -1:
                partner = next(q for q, other in enumerate(text) if other == ch and q != p)
                row[p] = partner + 2
        codes.append(tuple(row))
        atoms.append(frozenset(cells))
    return codes, atoms


def penalty(atoms: list[frozenset[int]], members) -> int:
    """5 x the wrong atoms of the best guess among the members, summed over them.

    A guess's wrong atoms against a member, ``len(g - m)``, are counted on the cells as bits
    (``g & ~m``): the same sum, 2.4 times as fast as the sets' difference (the plain game of
    A3_B4 for points spent 44% of its time here)."""
    cells = [sum(1 << c for c in atoms[m]) for m in members]
    return WRONG_ATOM * min(sum((g & ~m).bit_count() for m in cells) for g in cells)


def expectimax(config: Config, objective: str):
    """The plain game: ``value(frozenset)`` (the optimal total) and ``shots(frozenset)``
    (every optimal first shot, 0-based; -1 for stopping), over every shot at every set."""
    codes, atoms = reference_codes(config)
    positions = range(config.positions)

    @cache
    def options(members: frozenset[int]) -> dict[int, int]:
        found = {}
        stop = penalty(atoms, members) if objective == "points" else 0
        for p in positions:
            children: dict[int, list[int]] = {}
            for m in members:
                children.setdefault(codes[m][p], []).append(m)
            if len(children) < 2:
                continue
            values = {c: value(frozenset(ms)) for c, ms in children.items()}
            if objective == "rays":
                found[p] = len(members) + sum(values.values())
            elif objective == "worst":
                found[p] = 1 + max(values.values())
            else:
                found[p] = sum(len(ms) * (1 if c < 2 else 2) + values[c] for c, ms in children.items())
        if objective == "points" or not found:
            found[-1] = stop
        return found

    def value(members: frozenset[int]) -> int:
        return min(options(members).values())

    def shots(members: frozenset[int]) -> set[int]:
        best = value(members)
        return {p for p, v in options(members).items() if v == best}

    return value, shots, codes, atoms


@pytest.fixture(scope="module")
def problems() -> dict[str, Problem]:
    return {config.name: Problem.of(config) for config in SMALL}


@pytest.mark.parametrize("objective", OBJECTIVES)
@pytest.mark.parametrize("config", SMALL, ids=lambda c: c.name)
def test_the_solver_agrees_with_a_plain_expectimax(config, objective, problems):
    value, shots, _, _ = expectimax(config, objective)
    everyone = frozenset(range(config.nb_mol))
    optimum, _ = solve(config, objective, problem=problems[config.name], difference=False)
    assert optimum.proved and optimum.upper == value(everyone)
    best = shots(everyone)
    first = optimum.first_shot - 1 if optimum.first_shot else -1
    assert first in best  # the first shot where it is unique, one of the optimal ones otherwise
    if len(best) == 1:
        assert {first} == best


def test_a2_b4_rays_is_the_issue_example(problems):
    optimum, _ = solve(Config(2, 4), "rays", problem=problems["A2_B4"], difference=False)
    assert optimum.summary()["value"] == "61/20"


# ---------------------------------------------------------------------------
# The book keeps its claim


def played_by_hand(search: Search, codes, atoms, molecule: int) -> tuple[int, int, int]:
    """One molecule against the optimal book: (rays, points of rays, wrong atoms x 5)."""
    members = np.arange(len(codes), dtype=np.int32)
    rays = points = 0
    while True:
        shot = search.best_shot(members)
        if shot < 0:
            break
        outcome = codes[molecule][shot]
        members = members[[codes[m][shot] == outcome for m in members]]
        rays += 1
        points += 1 if outcome < 2 else 2
    guess = min(members, key=lambda g: (sum(len(atoms[g] - atoms[m]) for m in members), g))
    return rays, points, WRONG_ATOM * len(atoms[guess] - atoms[molecule])


@pytest.mark.parametrize("objective", OBJECTIVES)
@pytest.mark.parametrize("config", [Config(2, 4), Config(3, 4)], ids=lambda c: c.name)
def test_the_book_played_against_every_molecule_gives_the_claimed_value_and_beats_greedy(
    config, objective, problems
):
    codes, atoms = reference_codes(config)
    optimum, search = solve(config, objective, problem=problems[config.name], difference=False)
    lines = [played_by_hand(search, codes, atoms, m) for m in range(config.nb_mol)]
    if objective == "rays":
        total = sum(r for r, _, _ in lines)
    elif objective == "worst":
        total = max(r for r, _, _ in lines)
    else:
        total = sum(p + w for _, p, w in lines)
    assert total == optimum.upper
    # The greedy book scored the same way: each spectral group where it ends charged its guess.
    greedy = compute_book(config, "remaining", source="compute")
    groups: dict[tuple[int, ...], list[int]] = {}
    for m, row in enumerate(codes):
        groups.setdefault(row, []).append(m)
    charged = sum(penalty(atoms, ms) for ms in groups.values())
    scored = {
        "rays": int(greedy.rays.sum()),
        "worst": int(greedy.rays.max()),
        "points": int(greedy.points.sum()) + charged,
    }[objective]
    assert optimum.greedy == scored
    assert optimum.upper <= scored
    assert Fraction(optimum.summary()["value"]) == (
        optimum.upper if objective == "worst" else Fraction(optimum.upper, config.nb_mol)
    )


def test_the_optimal_book_is_strictly_better_than_greedy_somewhere(problems):
    """A3_B4: greedy is beaten on each objective (the reason for the search)."""
    for objective in OBJECTIVES:
        optimum, _ = solve(Config(3, 4), objective, problem=problems["A3_B4"])
        assert optimum.upper < optimum.greedy
        difference = optimum.difference
        assert difference is not None and difference["greedy_total"] > difference["optimal_total"]


# ---------------------------------------------------------------------------
# Admissible bounds


A3_B5 = Config(3, 5)


@pytest.fixture(scope="module")
def a3_b5():
    problem = Problem.of(A3_B5)
    return problem, {objective: Search(problem, objective) for objective in OBJECTIVES}


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_the_lower_bounds_are_never_above_the_exact_value_on_a3_b5(a3_b5, data):
    """A sub-problem: the candidates after 2 to 5 shots against a molecule (the searches
    share their memos from one example to the next)."""
    problem, searches = a3_b5
    molecule = data.draw(st.integers(0, A3_B5.nb_mol - 1), label="molecule")
    shots = data.draw(st.lists(st.integers(0, A3_B5.positions - 1), min_size=2, max_size=5), label="shots")
    members = problem.everyone
    for p in shots:
        members = members[problem.codes[members, p] == problem.codes[molecule, p]]
    for objective, search in searches.items():
        exact = search.value_of(members)
        assert lower_bound(problem, members, objective) <= exact
        if len(members) > 1:
            figures = evaluate(problem, members, objective)
            for p in np.flatnonzero(figures.kinds >= 2):
                for code, child in problem.split(members, int(p)):
                    assert figures.child_bound[p, code] <= search.value_of(child)


@settings(max_examples=200, deadline=None)
@given(
    weights=st.lists(st.integers(1, 50), min_size=1, max_size=12),
    b=st.integers(2, 6),
)
def test_huffman_is_the_least_weighted_depth(weights, b):
    """Against b-ary Huffman written with a heap (zeros padded in)."""
    heap = [*weights, *[0] * ((b - 1 - (len(weights) - 1) % (b - 1)) % (b - 1))]
    heapq.heapify(heap)
    cost = 0
    while len(heap) > 1:
        merged = sum(heapq.heappop(heap) for _ in range(min(b, len(heap))))
        cost += merged
        heapq.heappush(heap, merged)
    array = np.array(weights, dtype=np.int64)
    assert _huffman(array, b, np.empty(len(weights) + b, dtype=np.int64)) == (cost if len(weights) > 1 else 0)


# ---------------------------------------------------------------------------
# Symmetry


@settings(
    max_examples=10,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.filter_too_much],
)
@given(data=st.data())
def test_a_set_and_its_8_images_have_the_same_optimum(problems, data):
    """A3_B4, the candidates (at most 40) after 2 to 4 shots: the plain expectimax (no symmetry) on each
    image equals the solver on the set, the solver's shot on each image (a fresh search)
    is one of the image's optimal shots, and the keys agree."""
    config = Config(3, 4)
    problem = problems[config.name]
    objective = data.draw(st.sampled_from(OBJECTIVES), label="objective")
    molecule = data.draw(st.integers(0, config.nb_mol - 1), label="molecule")
    shots = data.draw(st.lists(st.integers(0, config.positions - 1), min_size=2, max_size=4), label="shots")
    members = problem.everyone
    for p in shots:
        members = members[problem.codes[members, p] == problem.codes[molecule, p]]
    assume(len(members) <= 40)  # the plain expectimax of 8 images, each without a shared cache
    value, shots, _, _ = EXPECTIMAX[objective]
    search = Search(problem, objective)
    exact = search.value_of(members)
    key = problem.canonical(members)[0]
    for t in range(8):
        image = np.sort(problem.images[members, t])
        assert value(frozenset(image.tolist())) == exact
        assert problem.canonical(image)[0] == key
        fresh = Search(problem, objective)
        assert fresh.value_of(image) == exact
        expected, got = shots(frozenset(image.tolist())), fresh.best_shot(image)
        if got == -2:  # no shot splits the set: the plain game can only stop
            assert expected == {-1}
        else:
            assert got in expected


EXPECTIMAX = {objective: expectimax(Config(3, 4), objective) for objective in OBJECTIVES}


# ---------------------------------------------------------------------------
# Resume


def stored_memo_size(path) -> int:
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as connection:
            row = connection.execute("SELECT length(memo) FROM OptimalRuns").fetchone()
    except sqlite3.Error:
        return 0
    return row[0] if row else 0


def test_a_search_killed_with_9_resumes_to_the_same_value(tmp_path):
    """A3_B5's search for rays takes 13 s here, its first checkpoint 1 s: killed just after
    that, it resumes from the stored memo to the value of a search never stopped."""
    config = Config(3, 5)
    path = tmp_path / "db.sqlite"
    command = [*BBCORE, "--db", str(path), "strategy", config.name, "--optimal", "rays", "--json"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen([*command, "--checkpoint", "1"], env=env, cwd=ROOT, start_new_session=True)
    try:
        wait_until(lambda: stored_memo_size(path) > 1000, 300, "the search to store its memo")
        assert process.poll() is None, "the search ended before it was killed"
        os.kill(process.pid, signal.SIGKILL)
        process.wait(10)
    finally:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)
    with sqlite3.connect(path) as connection:
        (result,) = connection.execute("SELECT result FROM OptimalRuns").fetchone()
    assert result is None  # not finished: only the memo
    resumed = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    optimum = json.loads(resumed.stdout)["optimum"]
    never_stopped, _ = solve(config, "rays", difference=False)
    assert optimum["proved"] and optimum["value"] == str(Fraction(never_stopped.upper, config.nb_mol))
    again = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT)
    assert json.loads(again.stdout) == json.loads(resumed.stdout)  # stored: read back, not searched


def test_ctrl_c_pauses_the_search_and_stores_what_it_proved(tmp_path):
    """A4_B4's search for points takes 22 s here: interrupted after its first checkpoint."""
    path = tmp_path / "db.sqlite"
    command = [*BBCORE, "--db", str(path), "strategy", "A4_B4", "--optimal", "points", "--checkpoint", "1"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        command, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        wait_until(lambda: stored_memo_size(path) > 1000, 300, "the search to store its memo")
        before = stored_memo_size(path)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)
    assert process.returncode == 130, err
    assert out == "" and err.count("\n") == 1 and "paused" in err and "Traceback" not in err, err
    assert stored_memo_size(path) >= before


def test_a_stopped_search_gives_bounds_around_the_optimum_and_goes_on_to_it(tmp_path):
    """Stopped at its first check (``seconds=0``: no clock decides), the search gives proved
    bounds around the exact value; run again, it goes on from its stored memo to that value."""
    config = Config(3, 4)
    value, _, _, _ = EXPECTIMAX["rays"]
    exact = Fraction(value(frozenset(range(config.nb_mol))), config.nb_mol)
    store.open_database(tmp_path / "db.sqlite")
    try:
        stopped, searched = optimal(config, "rays", seconds=0)
        resumed, _ = optimal(config, "rays")
    finally:
        store.close_database()
    optimum = stopped["optimum"]
    assert searched and not optimum["proved"] and optimum["value"] is None
    assert Fraction(optimum["lower"]) <= exact <= Fraction(optimum["upper"])
    assert Fraction(optimum["gap"]) == Fraction(optimum["upper"]) - Fraction(optimum["lower"])
    assert resumed["optimum"]["proved"] and Fraction(resumed["optimum"]["value"]) == exact
    assert resumed["optimum"]["nodes"] > optimum["nodes"] > 0


def test_seconds_stops_the_command_with_its_bounds(tmp_path):
    """A3_B5's search takes over 10 s here: stopped after 1 s it is not proved, and says so."""
    command = [*BBCORE, "--db", str(tmp_path / "db.sqlite"), "strategy", "A3_B5", "--optimal", "rays"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    stopped = subprocess.run(
        [*command, "--seconds", "1", "--json"], capture_output=True, text=True, env=env, cwd=ROOT
    )
    assert stopped.returncode == 0, stopped.stderr
    optimum = json.loads(stopped.stdout)["optimum"]
    assert not optimum["proved"] and optimum["value"] is None
    assert Fraction(optimum["lower"]) < Fraction(optimum["upper"]) <= Fraction(optimum["greedy"])
    text = subprocess.run([*command, "--seconds", "1"], capture_output=True, text=True, env=env, cwd=ROOT)
    assert text.returncode == 0, text.stderr
    assert "Not proved yet: " in text.stdout and "Run the same command again to go on." in text.stdout


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_the_stored_book_is_the_optimal_book_whole(tmp_path, objective, problems):
    """The book stored with a finished search, read back as a StrategyBook: each molecule's
    rays and points as the optimal book plays them, and every node's shot splitting its
    molecules into its children by their outcomes, down to single spectra (or a guess)."""
    config = Config(2, 4)
    store.open_database(tmp_path / "db.sqlite")
    try:
        assert stored_book(config, objective) is None
        result, _ = optimal(config, objective)
        book = stored_book(config, objective)
    finally:
        store.close_database()
    assert book is not None and book.by == f"optimal {objective}"
    optimum, _ = solve(config, objective, problem=problems["A2_B4"], difference=False)
    assert np.array_equal(book.rays, optimum.played.rays)
    assert np.array_equal(book.points, optimum.played.points)
    assert book.first_shot.position == result["optimum"]["first_shot"]
    codes, atoms = reference_codes(config)
    claimed = {"rays": book.rays.sum(), "worst": book.rays.max()}
    if objective != "points":
        assert Fraction(int(claimed[objective]), 1 if objective == "worst" else 120) == Fraction(
            result["optimum"]["value"]
        )
    leaves = 0
    for index in range(len(book.nodes)):
        node, numbers = book.node(index), [int(n) for n in book.numbers(index)]
        assert node.count == len(numbers)
        assert all(book.rays[n - 1] >= node.rays for n in numbers)
        if node.leaf:
            leaves += node.count
            assert all(book.rays[n - 1] == node.rays for n in numbers)
            if objective != "points":  # a spectral group: no ray splits it
                assert len({codes[n - 1] for n in numbers}) == 1
            continue
        by_outcome: dict[int, list[int]] = {}
        for n in numbers:
            by_outcome.setdefault(codes[n - 1][node.shot - 1], []).append(n)
        children = book.children(index)
        assert len(children) == len(by_outcome) >= 2
        for child in children:
            code = int(book.nodes.outcome[child])
            assert [int(n) for n in book.numbers(child)] == by_outcome[code]
    assert leaves == config.nb_mol


def test_a_result_stored_without_its_book_gets_it_from_its_memo(tmp_path, problems):
    """A search finished before books were kept with the result (its row as that version
    stored it): the same command plays the book from the memo, stores it, and prints the
    same result without searching."""
    from bbcore.optimal import save_run

    config = Config(2, 4)
    optimum, search = solve(config, "worst", problem=problems["A2_B4"], difference=False)
    store.open_database(tmp_path / "db.sqlite")
    try:
        result, _ = optimal(config, "worst", store=False, problem=problems["A2_B4"])
        save_run(config, "worst", search, result)  # no book
        assert stored_book(config, "worst") is None
        again, searched = optimal(config, "worst")
        book = stored_book(config, "worst")
    finally:
        store.close_database()
    assert again == result and not searched
    assert book is not None and np.array_equal(book.rays, optimum.played.rays)


def test_differences_lists_the_molecules_where_the_books_differ_most():
    greedy = np.array([3, 5, 4, 2, 6, 4], dtype=np.int16)
    best = np.array([3, 3, 4, 4, 4, 3], dtype=np.int16)
    # by the gap (2: molecules 2, 4, 5), then the greedy rays (6, 5, 2), then the number
    assert differences(greedy, best) == [(5, 6, 4), (2, 5, 3), (4, 2, 4), (6, 4, 3)]
    assert differences(greedy, best, 2) == [(5, 6, 4), (2, 5, 3)]
    assert differences(best, best) == []


def test_the_command_line_names_the_database_unless_it_is_the_default(tmp_path, monkeypatch):
    monkeypatch.setenv("BBTUI_DB", str(tmp_path / "default.sqlite"))
    assert (
        command_line(Config(3, 5), "worst", tmp_path / "default.sqlite")
        == "bbcore strategy A3_B5 --optimal worst"
    )
    assert (
        command_line(Config(3, 5), "rays", tmp_path / "my db.sqlite")
        == f"bbcore strategy A3_B5 --optimal rays --db '{tmp_path / 'my db.sqlite'}'"
    )


def test_the_cli_prints_the_first_shots_and_where_greedy_first_errs(tmp_path):
    """A2_B5 (docs/optimal.md's table): the greedy book errs at its first shot; A2_B4, after
    two shots."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    lines = {}
    for config in ("A2_B5", "A2_B4"):
        command = [*BBCORE, "--db", str(tmp_path / "db.sqlite"), "strategy", config, "--optimal", "rays"]
        done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
        assert done.returncode == 0, done.stderr
        lines[config] = done.stdout.splitlines()
        listed = subprocess.run([*command, "--json"], capture_output=True, text=True, env=env, cwd=ROOT)
        optimum = json.loads(listed.stdout)["optimum"]
        assert (
            f"First shot: {optimum['first_shot']} (the greedy book's: {optimum['greedy_first_shot']})."
            in lines[config]
        )
        value = Fraction(optimum["value"])
        assert f"Optimum: {value} = {float(value):.3f} rays on average, proved." in lines[config]
    assert (
        "The greedy book first errs at the start (300 candidates): it shoots 3 (total 963) where 2 gives 952."
        in lines["A2_B5"]
    )
    assert (
        "The greedy book first errs after 2->5 (8 candidates): it shoots 10 (total 14) where 8 gives 12."
        in lines["A2_B4"]
    )


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("--optimal", "fastest"), ("--optimal", "fastest")),
        (("--seconds", "3"), ("--seconds goes with --optimal",)),
        (("--optimal", "rays", "--memory", "3"), ("--memory", ">= 16")),
    ],
)
def test_bad_options_are_one_line(tmp_path, args, words):
    result = subprocess.run(
        [*BBCORE, "--db", str(tmp_path / "db.sqlite"), "strategy", "A2_B4", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
    )
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    for word in words:
        assert word in result.stderr
