"""The optimal search's parts that tests/test_optimal.py reaches only through subprocesses, or not
at all: a search stopped and its bounds, the memo's bound and what it forgets, the ticks, the
stored run and its book read back or damaged, the figures of a played book.

Written from the mutation run of ``bbcore/optimal.py`` (issue 33, section 5,
``bench/mutation_notes.md``).  Small boxes only (A2_B4: 120 molecules, a search of 68 to 361
sets; A2_B5: 300), so that each mutant's tests take seconds.  The exact values come from
``solve``, which tests/test_optimal.py checks against a plain expectimax on these boxes.
"""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest

import bbcore.optimal as bbcore_optimal
from bbcore import store
from bbcore.config import Config
from bbcore.optimal import (
    LEAF,
    OBJECTIVES,
    STOP,
    WRONG_ATOM,
    OptimalError,
    Optimum,
    Paused,
    Played,
    Problem,
    Search,
    book_summary,
    bounds_now,
    first_difference,
    fraction_text,
    greedy_played,
    greedy_shot,
    greedy_total,
    memo_bytes,
    memo_of_bytes,
    optimal,
    play,
    solve,
    stored_book,
    stored_run,
)
from bbcore.strategy import compute_book, result_of_code, shot_text

A2_B4 = Config(2, 4)
A2_B5 = Config(2, 5)
A3_B4 = Config(3, 4)


@pytest.fixture(scope="module")
def problems() -> dict[str, Problem]:
    return {config.name: Problem.of(config) for config in (A2_B4, A2_B5)}


@pytest.fixture(scope="module")
def exact(problems) -> dict[tuple[str, str], int]:
    """Each objective's optimal total on A2_B4 and A2_B5."""
    return {
        (name, objective): solve(problem.config, objective, problem=problem, difference=False)[0].upper
        for name, problem in problems.items()
        for objective in OBJECTIVES
    }


@pytest.fixture
def database(tmp_path):
    store.open_database(tmp_path / "optimal.sqlite")
    yield tmp_path / "optimal.sqlite"
    store.close_database()


# -- the search's ticks: stop, progress, checkpoint ---------------------------------------------


def test_a_stop_is_asked_every_64_sets_and_pauses_the_search(problems):
    """``stop`` is asked once every 64 sets searched: true at its first asking, the search
    pauses with 64 sets searched; asked and false, it goes on to the end."""
    asked: list[int] = []
    search = Search(problems["A2_B4"], "points")
    search.stop = lambda: asked.append(search.nodes) or True
    with pytest.raises(Paused):
        search.run(10**9)
    assert asked == [64] and search.nodes == 64 and search.seconds > 0
    asked.clear()
    search = Search(problems["A2_B4"], "points")
    search.stop = lambda: asked.append(search.nodes) and False
    search.run(10**9)
    assert asked == list(range(64, search.nodes + 1, 64)) and len(asked) >= 5


def test_progress_and_checkpoint_are_told_at_their_own_pace(problems):
    """``progress`` at most twice a second, ``checkpoint`` every ``every`` seconds: with
    ``every`` 0, at each 64th set; with an hour, never in a short search."""
    told: list[int] = []
    saved: list[int] = []
    search = Search(problems["A2_B4"], "points", progress=lambda s: told.append(s.nodes))
    search.checkpoint, search.every = (lambda s: saved.append(s.nodes)), 0.0
    search.solve(problems["A2_B4"].everyone, 10**9)  # not ``run``: the last report is at time 0
    assert saved == list(range(64, search.nodes + 1, 64))
    assert told and told[0] == 64 and all(n % 64 == 0 for n in told)
    saved.clear()
    search = Search(problems["A2_B4"], "points", every=3600.0)
    search.checkpoint = lambda s: saved.append(s.nodes)
    search.run(10**9)
    assert saved == [] and search.rate > 0


# -- the memo: what it keeps and forgets -------------------------------------------------------


def test_the_memo_keeps_an_exact_total_and_raises_a_lower_bound_only():
    search = Search.__new__(Search)
    search.memo, search.memory, search.evicted = {}, 1024, 0
    search._remember(b"a", 5, False, LEAF, 3)
    search._remember(b"a", 4, False, LEAF, 3)  # a weaker bound: kept as it was
    assert search.memo[b"a"] == (5, False, LEAF, 3)
    search._remember(b"a", 5, False, 2, 3)  # the same bound: kept as it was
    assert search.memo[b"a"] == (5, False, LEAF, 3)
    search._remember(b"a", 6, False, LEAF, 3)
    assert search.memo[b"a"] == (6, False, LEAF, 3)
    search._remember(b"a", 7, True, 1, 3)  # an exact total replaces a bound
    search._remember(b"a", 9, False, LEAF, 3)  # and no bound replaces it
    assert search.memo[b"a"] == (7, True, 1, 3)
    search._remember(b"a", 8, True, 2, 3)
    assert search.memo[b"a"] == (8, True, 2, 3)


def test_past_its_limit_the_memo_forgets_its_bounds_then_its_smallest_sets(problems):
    """One entry past the limit (1,000 entries, the least): every lower bound goes, then the
    exact totals of the smallest sets, down to 3/4 of the limit."""
    search = Search(problems["A2_B4"], "rays", memory=0)
    assert search.limit == 1000
    bounds = {f"b{i}".encode(): (i, False, LEAF, 1000 + i) for i in range(100)}
    exacts = {f"e{i}".encode(): (i, True, 0, 3 + i) for i in range(900)}
    search.memo = {**bounds, **exacts}
    search._remember(b"last", 1, True, 0, 2000)
    assert search.evicted == 1001 - 750 and len(search.memo) == 750
    assert not set(bounds) & set(search.memo)
    assert set(search.memo) == {b"last"} | {f"e{i}".encode() for i in range(151, 900)}
    search.memo.update({f"again{i}".encode(): (i, True, 0, 2) for i in range(250)})
    search._remember(b"one more", 1, True, 0, 2)  # 1,001 again, the 251 smallest forgotten
    assert search.evicted == 2 * 251 and len(search.memo) == 750  # counted over the search
    kept = Search(problems["A2_B4"], "rays", memory=0)
    kept.memo = dict(exacts)
    kept._remember(b"one more", 1, False, LEAF, 3)  # 901 entries: under the limit, nothing forgotten
    assert len(kept.memo) == 901 and kept.evicted == 0


def test_a_search_with_a_small_memo_forgets_and_still_finds_the_optimum(problems, exact):
    """A2_B5's search of points proves 1,602 sets; with room for 1,000 it forgets some, and
    finds the same total and the same book."""
    small, search = solve(A2_B5, "points", problem=problems["A2_B5"], memory=0, difference=False)
    assert search.evicted > 0 and len(search.memo) <= search.limit == 1000
    assert small.upper == exact[("A2_B5", "points")]
    assert small.played.total("points", problems["A2_B5"].everyone) == small.upper


# -- bounds of a stopped search ----------------------------------------------------------------


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_a_stopped_search_s_bounds_hold_the_optimum(problems, exact, objective):
    """Stopped after 64 sets: lower <= optimum <= upper <= the greedy book's; the memo knowing
    every set but the root, the lower bound is the optimum (the best shot's cost and its
    children's totals); the root known exact, both are; a strategy completed at the root lowers
    the upper bound below the greedy book's, never above."""
    from bbcore.optimal import _known_lower

    problem = problems["A2_B5"]
    greedy = greedy_played(problem).total(objective, problem.everyone)
    value = exact[("A2_B5", objective)]
    assert value < greedy
    search = Search(problem, objective, stop=lambda: True)
    with pytest.raises(Paused):
        search.run(greedy)
    lower, upper = bounds_now(search, greedy)
    assert 0 < lower <= value <= upper <= greedy
    assert lower == _known_lower(search, problem.everyone, 2)  # two levels down: 300 molecules
    done = Search(problem, objective)
    assert done.run(greedy) == value and done.upper_found == value
    assert bounds_now(done, greedy) == (value, value)
    done.upper_found = None
    assert bounds_now(done, greedy) == (value, value)  # the root's exact total is both bounds
    done.upper_found = value
    root, _ = problem.canonical(problem.everyone)
    entry = done.memo.pop(root)
    assert bounds_now(done, greedy) == (value, value)
    done.upper_found = None
    assert bounds_now(done, greedy) == (value, greedy)
    done.memo[root] = (value + 1, False, LEAF, entry[3])  # as if a budget proved more
    assert bounds_now(done, greedy) == (value + 1, greedy)
    assert _known_lower(done, problem.everyone, 2) == value + 1
    done.memo[root] = (value - 1, False, LEAF, entry[3])  # a weaker bound: the children's is kept
    assert _known_lower(done, problem.everyone, 2) == value
    done.upper_found = greedy + 1
    assert bounds_now(done, greedy)[1] == greedy


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_a_bound_two_levels_down_is_at_least_one_level_down(problems, exact, objective):
    """With what a search proved so far, looking two levels down bounds the root at least as
    well as one (the memo's proved children count), and never past the optimum."""
    from bbcore.optimal import _known_lower, lower_bound

    problem = problems["A2_B5"]
    search = Search(problem, objective, stop=lambda: True)
    with pytest.raises(Paused):
        search.run(greedy_played(problem).total(objective, problem.everyone))
    everyone = problem.everyone
    own = lower_bound(problem, everyone, objective)
    one, two = (_known_lower(search, everyone, depth) for depth in (1, 2))
    assert own <= one <= two <= exact[("A2_B5", objective)]
    assert _known_lower(search, everyone, 0) == own
    pair = everyone[:2]
    assert _known_lower(search, pair, 2) == search._pair(pair)[0]
    assert _known_lower(search, everyone[:1], 2) == 0


# -- the book and its figures ------------------------------------------------------------------


def test_a_pair_is_told_apart_by_one_ray_or_guessed(problems):
    """Two molecules: rays 2 (one ray each), worst 1; points: the cheapest ray that tells them
    apart (1 reflected or absorbed, 2 out, for each), or the guess when it costs less."""
    problem = problems["A2_B4"]
    codes = problem.codes
    for a in range(0, problem.config.nb_mol, 7):
        for b in range(a + 1, problem.config.nb_mol, 11):
            pair = np.array([a, b], dtype=np.int32)
            apart = np.flatnonzero(codes[a] != codes[b])
            stop = problem.stop_cost(pair)
            if len(apart) == 0:
                assert Search(problem, "rays")._pair(pair) == (0, LEAF)
                assert Search(problem, "points")._pair(pair) == (stop, LEAF)
                continue
            assert Search(problem, "rays")._pair(pair) == (2, int(apart[0]))
            assert Search(problem, "worst")._pair(pair) == (1, int(apart[0]))
            paid = [(1 if codes[a, p] < 2 else 2) + (1 if codes[b, p] < 2 else 2) for p in apart]
            value, shot = Search(problem, "points")._pair(pair)
            if stop <= min(paid):
                assert (value, shot) == (stop, STOP)
            else:
                assert value == min(paid) and shot == int(apart[paid.index(min(paid))])


def test_the_played_book_s_tree_follows_each_molecule(problems):
    """``play``'s nodes: each child's molecules are its parent's with one outcome of its
    shot, one segment of the order; its known positions, rays and points add the shot's."""
    problem = problems["A2_B4"]
    _, search = solve(A2_B4, "points", problem=problem, difference=False)
    played = play(problem, problem.everyone, search.best_shot)
    nodes, order = played.tree.nodes, played.tree.order
    assert (nodes.parent[0], nodes.depth[0], nodes.count[0]) == (-1, 0, A2_B4.nb_mol)
    assert played.first_shot == int(nodes.shot[0]) + 1
    for child in range(1, len(nodes.parent)):
        parent = int(nodes.parent[child])
        shot, code = int(nodes.shot[parent]), int(nodes.outcome[child])
        members = order[nodes.start[child] : nodes.start[child] + nodes.count[child]]
        inside = order[nodes.start[parent] : nodes.start[parent] + nodes.count[parent]]
        assert set(members.tolist()) == {m for m in inside.tolist() if problem.codes[m, shot] == code}
        seen = int(nodes.known[parent]) | (1 << shot) | ((1 << (code - 2)) if code >= 2 else 0)
        assert int(nodes.known[child]) == seen
        assert nodes.depth[child] == nodes.depth[parent] + 1
        assert nodes.rays[child] == nodes.rays[parent] + 1
        assert nodes.points[child] == nodes.points[parent] + (1 if code < 2 else 2)
        if nodes.shot[child] < 0:
            assert (played.rays[members] == nodes.rays[child]).all()
            assert (played.points[members] == nodes.points[child]).all()
            assert (played.wrong[members] == problem.wrong(members.astype(np.int32))[1]).all()


def test_the_greedy_book_is_the_remaining_policy_s(problems):
    """The greedy book played here is ``bbcore.strategy``'s by remaining: its rays, points, first
    shot, and each total; a set no ray splits has no greedy shot."""
    problem = Problem.of(A3_B4)  # A2's molecules all have spectra of their own
    reference = compute_book(A3_B4, "remaining", source="compute")
    greedy = greedy_played(problem)
    assert np.array_equal(greedy.rays, reference.rays) and np.array_equal(greedy.points, reference.points)
    assert greedy.first_shot == reference.first_shot.position
    everyone = problem.everyone
    assert greedy_shot(problem, everyone) + 1 == reference.first_shot.position
    for objective in OBJECTIVES:
        assert greedy_total(problem, everyone, objective) == greedy.total(objective, everyone)
    assert greedy.total("rays", everyone) == int(reference.rays.sum())
    assert greedy.total("worst", everyone) == int(reference.rays.max())
    alike = np.flatnonzero((problem.codes == problem.codes[np.argmax(greedy.wrong)]).all(axis=1))
    assert len(alike) > 1 and greedy_shot(problem, alike.astype(np.int32)) == LEAF
    assert (greedy.wrong[alike] == problem.wrong(alike.astype(np.int32))[1]).all()
    assert greedy.total("points", everyone) == int(reference.points.sum()) + WRONG_ATOM * int(
        greedy.wrong.sum()
    )


def test_a_played_book_s_totals():
    """rays: the sum over the members; worst: the most; points: the points and 5 per wrong atom."""
    played = Played(
        rays=np.array([3, 1, 4], dtype=np.int16),
        points=np.array([5, 2, 6], dtype=np.int16),
        wrong=np.array([0, 2, 1], dtype=np.int16),
        first_shot=1,
    )
    members = np.array([0, 2])
    assert played.total("rays", members) == 7
    assert played.total("worst", members) == 4
    assert played.total("points", members) == 11 + WRONG_ATOM * 1


def test_a_book_s_summary_has_its_figures_and_hardest_molecules(problems):
    """``book_summary``: each figure's mean, max and histogram (as strings, zeros left out), the
    wrong atoms too, and the 20 hardest molecules by rays, then points, then number."""
    problem = problems["A2_B4"]
    optimum, _ = solve(A2_B4, "points", problem=problem, difference=False)
    played = optimum.played
    summary = book_summary(A2_B4, "optimal points", played)
    assert (summary["config"], summary["by"], summary["molecules"]) == ("A2_B4", "optimal points", 120)
    assert summary["first_shot"] == optimum.first_shot
    for name, values in (("rays", played.rays), ("points", played.points), ("wrong_atoms", played.wrong)):
        figures = summary[name]
        assert figures["mean"] == pytest.approx(sum(values.tolist()) / 120)
        assert figures["max"] == max(values.tolist())
        assert figures["histogram"] == {
            str(v): values.tolist().count(v) for v in sorted(set(values.tolist()))
        }
    ranked = sorted(range(120), key=lambda m: (-int(played.rays[m]), -int(played.points[m]), m))
    assert summary["hardest"] == [m + 1 for m in ranked[:20]]


def test_an_unfinished_optimum_says_its_bounds_and_gap():
    """Per molecule as a reduced fraction (worst: a count of rays); a search not finished has
    no value but its lower and upper bounds and their gap."""
    assert fraction_text(366, 120) == "61/20" and fraction_text(240, 120) == "2"
    made = Optimum(A2_B4, "rays", proved=False, lower=300, upper=372, greedy=372, seconds=1.23456, nodes=9)
    summary = made.summary()
    assert summary["value"] is None and summary["proved"] is False
    assert (summary["lower"], summary["upper"], summary["gap"]) == ("5/2", "31/10", "3/5")
    assert summary["greedy"] == "31/10" and summary["seconds"] == 1.235 and summary["nodes"] == 9
    worst = Optimum(A2_B4, "worst", proved=True, lower=4, upper=4, greedy=5, seconds=0, nodes=1, first_shot=2)
    assert worst.summary()["value"] == "4" and worst.summary()["greedy"] == "5"
    assert "lower" not in worst.summary() and worst.summary()["first_shot"] == 2


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_where_greedy_first_errs_is_the_first_such_node_breadth_first(problems, objective):
    """Breadth first in the greedy book's tree, the first node whose greedy shot costs more than
    the optimum (its path written as shots), with each total worked out here from the optimal
    values of the shot's children."""
    problem = problems["A2_B4"]
    optimum, search = solve(A2_B4, objective, problem=problem, difference=True)

    def through(members, p):
        children = problem.split(members, p)
        values = [search.value_of(child) for _, child in children]
        if objective == "worst":
            return 1 + max(values)
        paid = (
            sum(len(c) * (1 if code < 2 else 2) for code, c in children)
            if objective == "points"
            else len(members)
        )
        return paid + sum(values)

    queue, found = [(problem.everyone, [])], None
    while queue and found is None:
        members, path = queue.pop(0)
        shot = greedy_shot(problem, members)
        if shot < 0:
            continue
        if through(members, shot) > search.value_of(members):
            best = search.best_shot(members)
            found = {
                "path": path,
                "molecules": len(members),
                "greedy_shot": shot + 1,
                "optimal_shot": best + 1 if best >= 0 else "stop",
                "greedy_total": through(members, shot),
                "optimal_total": search.value_of(members),
            }
        for code, child in problem.split(members, shot):
            queue.append((child, [*path, shot_text(shot + 1, result_of_code(code))]))
    assert found is not None and optimum.difference == found
    assert first_difference(search, limit=0) is None


# -- storage -----------------------------------------------------------------------------------


def test_a_memo_and_its_book_read_back_as_they_were(problems):
    memo = {bytes(range(16)): (7, True, 3, 12), bytes(range(1, 17)): (5, False, LEAF, 40)}
    assert memo_of_bytes(memo_bytes(memo)) == memo
    assert memo_of_bytes(memo_bytes({})) == {}
    optimum, _ = solve(A2_B4, "rays", problem=problems["A2_B4"], difference=False)
    import io

    with np.load(io.BytesIO(memo_bytes(memo, optimum.played))) as arrays:
        assert np.array_equal(arrays["book_rays"], optimum.played.rays)
        assert np.array_equal(arrays["book_order"], optimum.played.tree.order)
        assert np.array_equal(arrays["book_node_shot"], optimum.played.tree.nodes.shot)
    with np.load(io.BytesIO(memo_bytes(memo, greedy_played(problems["A2_B4"])))) as arrays:
        assert arrays.files == ["keys", "values"]  # the greedy book has no tree to store


def test_a_search_stopped_then_resumed_then_read_back(database, problems, exact):
    """In one process: stopped at once (the greedy book's figures and the bounds, its memo
    stored, no result), resumed from that memo to the optimum, then read back unsearched;
    ``recompute`` searches again from nothing."""
    problem = problems["A2_B4"]
    result, searched = optimal(A2_B4, "rays", seconds=0, problem=problem)
    assert searched and result["by"] == "remaining"
    assert result["optimum"]["proved"] is False and result["optimum"]["value"] is None
    assert result["optimum"]["memo"] > 0 and "rate" in result["optimum"]
    value = Fraction(exact[("A2_B4", "rays")], 120)
    assert Fraction(result["optimum"]["lower"]) <= value <= Fraction(result["optimum"]["upper"])
    stored = stored_run(A2_B4, "rays")
    assert stored is not None and stored[0] is None and len(stored[1]) == result["optimum"]["memo"]
    assert stored[3] == result["optimum"]["nodes"] == 64
    assert stored_book(A2_B4, "rays") is None  # no finished search
    done, searched = optimal(A2_B4, "rays", problem=problem)
    assert searched and done["by"] == "optimal rays"
    assert done["optimum"]["proved"] and Fraction(done["optimum"]["value"]) == value
    assert done["optimum"]["nodes"] > 64  # counted on from the stored search's
    row = stored_run(A2_B4, "rays")
    assert row[0] == done and row[3] == done["optimum"]["nodes"]
    again, searched = optimal(A2_B4, "rays", problem=problem)
    assert again == done and not searched
    fresh, searched = optimal(A2_B4, "rays", recompute=True, problem=problem)
    assert searched and fresh["optimum"]["value"] == done["optimum"]["value"]
    assert fresh["optimum"]["nodes"] < done["optimum"]["nodes"]
    assert stored_run(A2_B4, "worst") is None


def test_a_checkpoint_stores_the_memo_and_an_interruption_stores_it_again(database, problems, monkeypatch):
    """``checkpoint`` seconds 0: the memo is stored at the first tick (64 sets), unfinished; an
    interruption there (a KeyboardInterrupt out of that store) stores it again and goes on up."""
    import bbcore.optimal

    save_run = bbcore.optimal.save_run
    stored: list[tuple[int, object]] = []

    def save_then_interrupt(config, objective, search, result, played=None):
        save_run(config, objective, search, result, played)
        stored.append((search.nodes, result))
        if len(stored) == 1:
            raise KeyboardInterrupt

    monkeypatch.setattr(bbcore.optimal, "save_run", save_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        optimal(A2_B4, "points", checkpoint=0, problem=problems["A2_B4"])
    assert stored == [(64, None), (64, None)]
    row = stored_run(A2_B4, "points")
    assert row is not None and row[0] is None and len(row[1]) > 0 and row[3] == 64
    stored.clear()
    with pytest.raises(KeyboardInterrupt):  # the default: a checkpoint a minute, none in 64 sets
        optimal(A2_B4, "points", checkpoint=3600, problem=problems["A2_B4"], recompute=True)
    assert len(stored) == 1 and stored[0][0] > 64 and stored[0][1]["optimum"]["proved"]


def test_a_read_only_search_stores_nothing(database, problems, exact):
    result, searched = optimal(A2_B4, "worst", store=False, problem=problems["A2_B4"])
    assert searched and result["optimum"]["value"] == str(exact[("A2_B4", "worst")])
    assert stored_run(A2_B4, "worst") is None
    paused, _ = optimal(A2_B4, "rays", store=False, seconds=0, problem=problems["A2_B4"])
    assert paused["optimum"]["proved"] is False and stored_run(A2_B4, "rays") is None


def test_a_damaged_stored_book_is_no_book(database, problems):
    """A finished search whose stored arrays are unreadable: no book (the CLI offers to search)."""
    from bbcore.store import OptimalRun

    optimal(A2_B4, "rays", problem=problems["A2_B4"])
    assert stored_book(A2_B4, "rays") is not None
    OptimalRun.update(memo=b"not an npz").execute()
    assert stored_book(A2_B4, "rays") is None


def test_an_unreadable_memo_is_one_line_and_searched_from_nothing(database, problems, capsys):
    from bbcore.store import OptimalRun

    optimal(A2_B4, "rays", seconds=0, problem=problems["A2_B4"])
    OptimalRun.update(memo=b"not an npz").execute()
    result, memo, _, nodes = stored_run(A2_B4, "rays")
    assert result is None and memo == {} and nodes == 64
    err = capsys.readouterr().err
    assert err.startswith("bbcore: the stored memo of A2_B4 (rays) is unreadable (")
    assert err.endswith("); searching from nothing\n") and err.count("\n") == 1


def test_a_database_without_the_table_has_no_run(database):
    assert stored_run(A2_B4, "rays") is None and stored_book(A2_B4, "rays") is None


def test_a_saved_run_replaces_its_own_row_alone(database, problems):
    """Saving a search again replaces the row of its configuration and objective, no other; a
    finished one is marked proved."""
    from bbcore.store import OptimalRun

    optimal(A2_B4, "rays", seconds=0, problem=problems["A2_B4"])
    optimal(A2_B4, "points", seconds=0, problem=problems["A2_B4"])
    optimal(A2_B5, "rays", seconds=0, problem=problems["A2_B5"])
    optimal(A2_B4, "rays", problem=problems["A2_B4"])
    rows = {(r.config, r.objective): r for r in OptimalRun.select()}
    assert set(rows) == {("A2_B4", "rays"), ("A2_B4", "points"), ("A2_B5", "rays")}
    assert rows[("A2_B4", "rays")].proved and rows[("A2_B4", "rays")].result
    assert not rows[("A2_B4", "points")].proved and rows[("A2_B4", "points")].result is None
    assert rows[("A2_B4", "rays")].dh1


def test_a_stored_book_knows_its_time_and_its_sizes_by_depth(database, problems):
    optimal(A2_B4, "worst", problem=problems["A2_B4"])
    book = stored_book(A2_B4, "worst")
    row = stored_run(A2_B4, "worst")
    assert book is not None and book.source == "optimal" and book.seconds == row[2]
    depths = book.nodes.depth
    leaves = book.nodes.shot < 0
    assert len(book.depth_nodes) == len(book.depth_leaves) == A2_B4.positions + 2
    assert book.depth_nodes.tolist() == [int((depths == d).sum()) for d in range(A2_B4.positions + 2)]
    assert book.depth_leaves.tolist() == [
        int((depths[leaves] == d).sum()) for d in range(A2_B4.positions + 2)
    ]
    assert book.depth_nodes.dtype == np.int64 and book.depth_leaves.dtype == np.int64


def test_a_search_refuses_an_unknown_objective_and_too_many_molecules(monkeypatch):
    with pytest.raises(OptimalError, match="^unknown objective 'fastest': expected rays, worst or points$"):
        optimal(A2_B4, "fastest")  # type: ignore[arg-type]
    with pytest.raises(OptimalError, match="^unknown objective 'fastest': expected rays, worst or points$"):
        solve(A2_B4, "fastest")  # type: ignore[arg-type]
    monkeypatch.setattr("bbcore.optimal.MOLECULE_LIMIT", A2_B4.nb_mol - 1)
    with pytest.raises(OptimalError) as error:
        Problem.of(A2_B4)
    assert str(error.value) == "A2_B4 has 120 molecules: too many to search (the limit is 119)"
    monkeypatch.setattr("bbcore.optimal.MOLECULE_LIMIT", A2_B4.nb_mol)
    assert Problem.of(A2_B4).codes.shape == (120, A2_B4.positions)


def test_a_result_stored_with_its_book_is_read_back_never_played_again(database, problems):
    """Once its book is stored, a finished result is returned as stored: a stored value the
    memo would not play (changed here) is not checked against it."""
    from bbcore.store import OptimalRun

    result, _ = optimal(A2_B4, "rays", problem=problems["A2_B4"])
    changed = result | {"optimum": result["optimum"] | {"value": "1"}}
    OptimalRun.update(result=json.dumps(changed)).execute()
    again, searched = optimal(A2_B4, "rays", problem=problems["A2_B4"])
    assert again == changed and not searched


def test_a_book_played_from_a_memo_that_forgot_sets_searches_them_again(database, problems):
    """A result stored without its book and with a memo that lost every set: the book is played
    by searching again (the memory bound passed on), stored, and the optimal book; a read-only
    reader stores nothing."""
    config, problem = A2_B4, problems["A2_B4"]
    optimum, search = solve(config, "points", problem=problem, difference=False)
    result, _ = optimal(config, "points", store=False, problem=problem)
    search.memo = {}
    bbcore_optimal.save_run(config, "points", search, result)  # no book, no memo
    again, searched = optimal(config, "points", store=False, problem=problem)
    assert again == result and not searched and stored_book(config, "points") is None
    again, searched = optimal(config, "points", memory=0, problem=problem)
    assert again == result and not searched
    book = stored_book(config, "points")
    assert book is not None and np.array_equal(book.rays, optimum.played.rays)
    assert np.array_equal(book.points, optimum.played.points)


def test_the_options_reach_the_search(database, problems):
    """``seconds`` an hour: the search ends, proved; ``memory`` 0: the memo stored holds at most
    1,000 sets (A2_B5's points prove 1,602); resumed, the seconds counted on from the stored
    search's."""
    import time

    done, _ = optimal(A2_B4, "rays", seconds=3600, problem=problems["A2_B4"])
    assert done["optimum"]["proved"]
    optimal(A2_B5, "points", memory=0, problem=problems["A2_B5"])
    assert 0 < len(stored_run(A2_B5, "points")[1]) <= 1000
    paused, _ = optimal(A2_B5, "rays", seconds=0, problem=problems["A2_B5"])
    before = stored_run(A2_B5, "rays")[2]
    began = time.perf_counter()
    resumed, _ = optimal(A2_B5, "rays", problem=problems["A2_B5"])
    took = time.perf_counter() - began
    assert before <= resumed["optimum"]["seconds"] <= before + took + 0.001


def test_progress_is_told_while_the_search_runs(database):
    """A3_B4's points (8,745 sets, seconds of search): ``progress`` is told twice a second, and an
    interruption from it ends the search."""
    told: list[int] = []

    def progress(search: Search) -> None:
        told.append(search.nodes)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        optimal(A3_B4, "points", store=False, progress=progress)
    assert len(told) == 1 and told[0] % 64 == 0


def test_a_paused_search_s_object_names_its_objective_and_the_greedy_book(database, problems, exact):
    """Stopped at once on A2_B5's worst (before any strategy is completed at the root): the
    upper bound and the greedy figure are the greedy book's most rays (a count, not a
    fraction), its first shot is named, and the objective too; the rate to one decimal."""
    problem = problems["A2_B5"]
    greedy = greedy_played(problem)
    paused, _ = optimal(A2_B5, "worst", seconds=0, problem=problem)
    optimum = paused["optimum"]
    assert optimum["objective"] == "worst" and optimum["proved"] is False
    worst = greedy.total("worst", problem.everyone)
    assert optimum["greedy"] == optimum["upper"] == str(worst) == str(int(greedy.rays.max()))
    assert int(optimum["lower"]) <= exact[("A2_B5", "worst")] < worst
    assert optimum["greedy_first_shot"] == greedy.first_shot is not None
    assert optimum["first_shot"] is None and optimum["gap"] == str(worst - int(optimum["lower"]))
    rate = optimum["rate"]  # sets searched a second, to one decimal (its value is the machine's)
    assert isinstance(rate, float) and rate > 1 and rate == round(rate, 1) and optimum["memo"] > 0


def test_a_spectral_group_s_bound_is_its_guess_alone():
    """A4_B4 has spectral groups of three molecules (A2's and A3_B4's spectra are all their own,
    or in pairs): a set that is one group is bounded by the penalty of its guess for points and
    by 0 rays; a group and one more molecule (two groups) by the set's own bound, above 0."""
    from bbcore.optimal import _known_lower, lower_bound

    problem = Problem.of(Config(4, 4))
    sizes = np.bincount(problem.group)
    group = np.flatnonzero(problem.group == int(np.argmax(sizes))).astype(np.int32)
    assert len(group) >= 3
    other = np.flatnonzero(problem.group != problem.group[group[0]])[:1].astype(np.int32)
    two = np.sort(np.concatenate([group, other]))
    for objective in OBJECTIVES:
        search = Search(problem, objective)
        alone = problem.stop_cost(group) if objective == "points" else 0
        assert _known_lower(search, group, 1) == alone and (objective != "points" or alone > 0)
        assert _known_lower(search, two, 0) == lower_bound(problem, two, objective) > 0
