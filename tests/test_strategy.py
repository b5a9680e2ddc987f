"""The strategy book: the policy played against every molecule, checked by brute force.

The simulation (``conftest.policy_line``) plays the issue's policy one molecule
at a time, written plainly from the reference rules (``bbcore.rays``): no
engine, no kernel.
"""

from __future__ import annotations

import json
import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from bbcore.config import Config
from bbcore.shots import shot_figures
from bbcore.store import Book, open_database
from bbcore.strategy import (
    STORED_DEPTH,
    StrategyError,
    book,
    codes_of_partner,
    codes_of_spectra,
    compute_book,
    run_policy,
    spectra_codes,
    stored_book,
)

A2_B4, A3_B4 = Config(2, 4), Config(3, 4)


@pytest.mark.slow
@pytest.mark.parametrize("config", [A2_B4, A3_B4], ids=str)
@pytest.mark.parametrize("by", ["remaining", "information"])
def test_book_equals_a_direct_simulation_molecule_by_molecule(config, by, policy_line):
    """Every molecule's line of shots, rays and points; the tree's size by depth."""
    made = compute_book(config, by, source="compute")
    lines = {}
    for number in range(1, config.nb_mol + 1):
        line, shot, points = policy_line(config, number, by)
        assert made.line(number) == line, number
        assert (int(made.rays[number - 1]), int(made.points[number - 1])) == (shot, points), number
        lines[number] = tuple(line)
    # A node at depth d is a distinct beginning of d shots; a leaf a distinct whole line.
    depths = max(len(line) for line in lines.values()) + 1
    nodes = [len({line[:d] for line in lines.values() if len(line) >= d}) for d in range(depths)]
    leaves = [len({line for line in lines.values() if len(line) == d}) for d in range(depths)]
    assert made.size_by_depth() == [(d, nodes[d], leaves[d]) for d in range(depths)]
    assert made.histogram("rays") == dict(Counter(len(line) for line in lines.values()))
    assert made.maximum("rays") == max(len(line) for line in lines.values())


def test_book_tree_rebuilt_below_the_stored_levels_equals_the_whole_tree():
    """Nodes rebuilt on demand are the nodes a run recording every level gives."""
    made = compute_book(A3_B4, source="compute")
    assert made.nodes.depth.max() == STORED_DEPTH
    codes, _ = spectra_codes(A3_B4, "compute")
    order = np.arange(A3_B4.nb_mol, dtype=np.int64)
    whole = run_policy(codes, order, "remaining")

    def shape(tree, index):
        """A node and everything under it, as nested (shot, outcome, count, molecules)."""
        first, n = int(tree.nodes.start[index]), int(tree.nodes.count[index])
        kids = sorted(shape(tree, c) for c in children(tree, index))
        members = tuple(sorted(tree.order[first : first + n].tolist()))
        return (int(tree.nodes.shot[index]), int(tree.nodes.outcome[index]), n, members, tuple(kids))

    def children(tree, index):
        if hasattr(tree, "children"):
            return tree.children(index)
        return [int(c) for c in np.flatnonzero(tree.nodes.parent == index)]

    whole.order = order
    assert shape(made, 0) == shape(whole, 0)
    assert len(made.nodes) == len(whole.nodes)


def test_codes_read_from_the_store_equal_the_traced_ones(store):
    """Stored spectra (letters) become the same codes as the engine's partners."""
    for config in (A2_B4, A3_B4, Config(4, 4)):
        stored, where = spectra_codes(config, "auto")
        assert where == "store"
        assert np.array_equal(stored, spectra_codes(config, "compute")[0])


def test_codes_of_spectra_pairs_each_letter_with_its_other_end():
    """The spec's worked example: ``@&ab@&@cbac@&@&@``."""
    chars = np.frombuffer(b"@&ab@&@cbac@&@&@", dtype=np.uint8).reshape(1, 16)
    # 1-based, a: 3 <-> 10, b: 4 <-> 9, c: 8 <-> 11; a code is the 0-based exit + 2.
    absorbed, reflected = 1, 0
    expected = [absorbed, reflected, 11, 10, absorbed, reflected, absorbed, 12, 5, 4, 9]
    expected += [absorbed, reflected, absorbed, reflected, absorbed]
    assert codes_of_spectra(chars)[0].tolist() == expected


def test_a_configuration_not_explored_has_no_stored_spectra(tmp_path):
    """Asking for the store's spectra of an unexplored configuration is a one-line error."""
    open_database(tmp_path / "empty.sqlite")
    with pytest.raises(StrategyError, match="not completely explored"):
        spectra_codes(A2_B4, "store")


# -- hand-made cases ----------------------------------------------------------


def hand_made(columns: list[list[int]], spare: int = 8) -> np.ndarray:
    """Codes of molecules (rows) at positions (the given columns, then ``spare``
    positions where every molecule is reflected, for exits to point at)."""
    rows = len(columns[0])
    return np.array([column for column in columns] + [[0] * rows] * spare, dtype=np.int8).T.copy()


def exit_to(position: int) -> int:
    """The code of a ray out at a 0-based position."""
    return position + 2


def first_shot(codes: np.ndarray, by: str) -> int:
    run = run_policy(codes, np.arange(len(codes), dtype=np.int64), by, record_depth=1)
    return int(run.nodes.shot[0])


def test_equal_outcome_counts_tie_and_the_lowest_position_wins():
    """Positions 0 and 1 split the molecules into the same multiset of counts (2, 1, 1),
    in other outcomes: a tie on both figures, so position 0 is shot."""
    codes = hand_made([[0, 0, 1, exit_to(5)], [exit_to(6), 1, 1, 0], [0, 0, 0, 1]])
    for by in ("remaining", "information"):
        assert first_shot(codes, by) == 0
    # Swapping the two columns swaps nothing else: still the lower one.
    assert first_shot(codes[:, [1, 0, 2, 3, 4, 5, 6, 7, 8, 9, 10]], "remaining") == 0


def test_equal_remaining_goes_to_more_information():
    """(2, 2, 2) and (3, 1, 1, 1) both leave 2 candidates on average out of 6; the
    second tells more (1.79 bits against 1.58), so position 1 wins the tie."""
    e = exit_to
    codes = hand_made([[0, 0, 1, 1, e(8), e(8)], [0, 0, 0, 1, e(8), e(9)]])
    assert shot_figures(np.array([2, 2, 2]))[0] == shot_figures(np.array([3, 1, 1, 1]))[0]
    assert first_shot(codes, "remaining") == 1


def test_the_two_policies_differ_where_the_figures_disagree():
    """(3, 3, 2, 2) leaves fewer on average (2.6 against 3), (5, 1, 1, 1, 1, 1) tells
    more (2.16 bits against 1.97)."""
    e = exit_to
    fewest = [0, 0, 0, 1, 1, 1, e(8), e(8), e(9), e(9)]
    most = [0, 0, 0, 0, 0, 1, e(8), e(9), e(10), e(11)]
    codes = hand_made([fewest, most], spare=10)
    assert first_shot(codes, "remaining") == 0
    assert first_shot(codes, "information") == 1


def test_an_exit_reveals_its_other_end():
    """Position 0 comes out at position 1 for molecules A and B: then position 1 is
    known and never shot, though (in these made-up codes) it would split them and
    has the lower number than position 2; the exit costs 2 points."""
    codes = hand_made([[exit_to(1), exit_to(1), 1], [exit_to(0), 0, 0], [0, 1, 0]], spare=0)
    order = np.arange(3, dtype=np.int64)
    run = run_policy(codes, order, "remaining")
    assert int(run.nodes.shot[0]) == 0
    # A and B: shot 0 (out, 2 points), then shot 2 (1 point); C: shot 0 absorbed (1 point).
    assert run.rays.tolist() == [2, 2, 1]
    assert run.points.tolist() == [3, 3, 1]
    assert sorted(int(s) for s in run.nodes.shot if s >= 0) == [0, 2]


def test_one_spectrum_left_stops_at_once():
    """Two molecules no ray tells apart (a spectral group) need no ray."""
    codes = hand_made([[1, 1], [exit_to(2), exit_to(2)], [exit_to(1), exit_to(1)]], spare=0)
    run = run_policy(codes, np.arange(2, dtype=np.int64), "remaining")
    assert run.rays.tolist() == [0, 0] and len(run.nodes) == 1 and run.nodes.shot[0] == -1


def test_codes_of_partner_shifts_the_engine_codes():
    assert codes_of_partner(np.array([[-2, -1, 0, 5]])).tolist() == [[0, 1, 2, 7]]


# -- storage and JSON ---------------------------------------------------------


def test_a_stored_book_is_read_back_equal_and_not_recomputed(tmp_path):
    open_database(tmp_path / "book.sqlite")
    made, computed = book(A3_B4, "information")
    assert computed
    again, computed = book(A3_B4, "information")
    assert not computed
    assert again.summary() == made.summary()
    assert np.array_equal(again.rays, made.rays) and np.array_equal(again.order, made.order)
    assert [again.line(n) for n in (1, 77, 560)] == [made.line(n) for n in (1, 77, 560)]
    assert stored_book(A3_B4, "remaining") is None
    row = Book.get(Book.config == "A3_B4")
    assert json.loads(row.summary)["hardest"] == made.hardest()
    assert row.rays_max == made.maximum("rays")


@pytest.mark.parametrize("config", [A2_B4, A3_B4], ids=str)
@pytest.mark.parametrize("by", ["remaining", "information"])
def test_summary_figures_equal_the_brute_force_ones(config, by, policy_summary):
    """First shot, mean, maximum and histograms of rays and points, hardest: the values, played
    out molecule by molecule by the plain simulation, not just their types."""
    summary = compute_book(config, by, source="compute").summary()
    expected = policy_summary(config, by)
    for what in ("rays", "points"):
        assert summary[what]["mean"] == pytest.approx(expected[what]["mean"], abs=1e-12)
        summary[what]["mean"] = expected[what]["mean"]
    assert summary == expected
    assert json.loads(json.dumps(summary)) == summary  # the --json layout, as is


def simulate_codes(codes: np.ndarray, target: int, by: str) -> tuple[int, int]:
    """The policy, plainly, over made-up codes (code >= 2 is an exit at position code - 2):
    the rays and points it spends on molecule ``target``."""
    candidates = list(range(len(codes)))
    known: set[int] = set()
    rays = points = 0
    while True:
        best, best_key = None, None
        for position in range(codes.shape[1]):
            if position in known:
                continue
            counts = Counter(int(codes[m, position]) for m in candidates)
            if len(counts) < 2:
                continue
            n = len(candidates)
            remaining = sum(c * c for c in counts.values()) / n
            information = -sum(c / n * math.log2(c / n) for c in counts.values())
            figures = (round(remaining, 9), -round(information, 9))
            key = (figures if by == "remaining" else figures[::-1]) + (position,)
            if best_key is None or key < best_key:
                best, best_key = position, key
        if best is None:
            return rays, points
        code = int(codes[target, best])
        candidates = [m for m in candidates if codes[m, best] == code]
        known.add(best)
        if code >= 2:
            known.add(code - 2)
        rays += 1
        points += 2 if code >= 2 else 1


@st.composite
def made_up_codes(draw) -> np.ndarray:
    """A few molecules' codes at a few positions, with ties and exits galore."""
    positions = draw(st.integers(2, 6))
    molecules = draw(st.integers(1, 12))
    values = st.integers(0, positions + 1)
    rows = draw(
        st.lists(
            st.lists(values, min_size=positions, max_size=positions), min_size=molecules, max_size=molecules
        )
    )
    return np.array(rows, dtype=np.int8)


TIED_INFORMATION = [
    # positions 0 and 1: outcome counts {4, 3, 1, 1, 1, 1, 1} and {3, 2, 2, 2, 2, 1}, the same entropy
    [[0, 4, 0, 0, 0], [1, 2, 0, 0, 0], [2, 0, 0, 0, 0], [2, 1, 0, 0, 0], [2, 3, 0, 0, 0], [2, 4, 0, 0, 0]]
    + [[3, 5, 0, 0, 0], [4, 3, 0, 0, 0], [5, 0, 0, 0, 0], [5, 1, 0, 0, 0], [5, 2, 0, 0, 0], [6, 0, 0, 0, 0]],
    # {4, 3, 3} and {6, 2, 1, 1}: the same entropy again
    [[0, 0], [0, 0], [0, 1], [0, 1], [1, 1], [1, 1], [1, 1], [3, 1], [3, 2], [3, 3]],
]
"""Codes where two shots have the same information from different multisets (hypothesis found
both): the kernel once took a last-bit difference of the two sums for a difference."""


@settings(max_examples=150, deadline=None)
@given(codes=made_up_codes(), by=st.sampled_from(["remaining", "information"]))
@example(codes=np.array(TIED_INFORMATION[0], dtype=np.int8), by="information")
@example(codes=np.array(TIED_INFORMATION[1], dtype=np.int8), by="information")
def test_the_kernel_plays_the_policy_on_any_codes(codes, by):
    """Whatever the codes, each molecule's rays and points are the plain policy's."""
    run = run_policy(codes, np.arange(len(codes), dtype=np.int64), by)
    for target in range(len(codes)):
        assert (int(run.rays[target]), int(run.points[target])) == simulate_codes(codes, target, by)


@pytest.mark.parametrize("by", ["remaining", "information"])
@pytest.mark.parametrize("step", [1, 7, 100])
def test_the_kernel_cut_into_steps_plays_the_same_tree(monkeypatch, by, step):
    """The kernel stops after ``STEP`` molecules read and goes on where it stopped, in the
    middle of a node's counts (1, 7) or between nodes: the same tree, costs and order as in
    one call, and ``played`` told the molecules placed, rising to all of them."""
    codes, _ = spectra_codes(A3_B4, "compute")
    whole_order = np.arange(A3_B4.nb_mol, dtype=np.int64)
    whole = run_policy(codes, whole_order, by)
    monkeypatch.setattr("bbcore.strategy.STEP", step)
    told: list[tuple[int, int]] = []
    order = np.arange(A3_B4.nb_mol, dtype=np.int64)
    cut = run_policy(codes, order, by, played=lambda done, total: told.append((done, total)))
    assert np.array_equal(order, whole_order)
    assert np.array_equal(cut.rays, whole.rays) and np.array_equal(cut.points, whole.points)
    assert np.array_equal(cut.depth_nodes, whole.depth_nodes)
    assert np.array_equal(cut.depth_leaves, whole.depth_leaves)
    for name in ("parent", "depth", "shot", "outcome", "start", "count", "known", "rays", "points"):
        assert np.array_equal(getattr(cut.nodes, name), getattr(whole.nodes, name)), name
    done = [d for d, _ in told]
    assert len(told) > A3_B4.nb_mol // max(step, 50) and done == sorted(done)
    assert told[-1] == (A3_B4.nb_mol, A3_B4.nb_mol) and {t for _, t in told} == {A3_B4.nb_mol}


def test_a_book_stops_mid_play_when_asked(monkeypatch):
    """``stop`` is checked between two steps of the kernel: set once a tenth of the
    molecules are placed, the book stops there (DecodeCancelled), long before the end."""
    import threading

    monkeypatch.setattr("bbcore.strategy.STEP", 1000)  # A4_B6 is one step of the default

    from bbcore.decode import DecodeCancelled

    stop = threading.Event()
    placed: list[int] = []

    def played(done: int, total: int) -> None:
        placed.append(done)
        if done >= total // 10:
            stop.set()

    config = Config(4, 6)
    with pytest.raises(DecodeCancelled):
        compute_book(config, source="compute", played=played, stop=stop)
    assert placed and placed[-1] < config.nb_mol // 2


def test_known_children_never_rebuild_and_children_do():
    made = compute_book(A3_B4, source="compute")
    deep = next(
        i for i in range(len(made.nodes)) if made.nodes.depth[i] == STORED_DEPTH and made.nodes.shot[i] >= 0
    )
    assert made.known_children(0) == made.children(0) and made.known_children(0)
    assert made.known_children(deep) is None
    kids = made.children(deep)
    assert kids and made.known_children(deep) == kids
    leaf = next(i for i in range(len(made.nodes)) if made.nodes.shot[i] < 0)
    assert made.known_children(leaf) == []


def test_the_hardest_molecules_kept_are_the_first_of_the_whole_order():
    """``hardest`` keeps the first ``HARDEST`` once sorted; any limit reads the same order,
    which is the most rays, then the most points, then the lowest number."""
    made = compute_book(A3_B4, source="compute")
    rank = sorted(
        range(1, A3_B4.nb_mol + 1), key=lambda n: (-int(made.rays[n - 1]), -int(made.points[n - 1]), n)
    )
    assert made.hardest(5) == rank[:5]
    assert made.hardest() == rank[:20] and made.hardest(7) == rank[:7]
    assert made.hardest(45) == rank[:45]
