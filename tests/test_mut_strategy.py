"""The strategy book read as the screens and ``bbcore decode`` read it, against brute force.

Written from the mutation run of ``bbcore/strategy.py`` (issue 33, section 5,
``bench/mutation_notes.md``): ``tests/test_strategy.py`` checks the book's
lines, costs and summary, but nothing there followed a game through the book
(``follow``, ``advice``, ``ahead``), read a node as the screens show it
(``node``, ``numbers``), or wrote a line as text.  Every figure here comes
from ``conftest.policy_line``, the policy played plainly from the reference
rays, never from the book itself.
"""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Callable
from functools import cache

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from bbcore.config import Config
from bbcore.game import ABSORBED, REFLECTED, Game
from bbcore.store import Book, close_database, open_database
from bbcore.strategy import (
    STORED_DEPTH,
    BookNode,
    StrategyBook,
    StrategyError,
    book,
    code_of_result,
    codes_of_spectra,
    compute_book,
    line_text,
    result_of_code,
    run_policy,
    shot_text,
    spectra_codes,
    stored_book,
)

A3_B4 = Config(3, 4)


@pytest.fixture(scope="module")
def made() -> Callable[[str], StrategyBook]:
    """``made(by)``: A3_B4's book, made once per policy and module (``follow`` rebuilds nodes).

    A fixture, not a module-level cache: mutmut runs the tests once in its own process before
    forking for each mutant, and a book cached in the module then was made (and its nodes
    rebuilt) by the unmutated code, which a mutant's tests would read.
    """
    return cache(lambda by: compute_book(A3_B4, by, source="compute"))


@pytest.fixture(scope="module")
def lines(policy_line) -> dict[int, tuple[tuple[int, object], ...]]:
    """Every molecule's line by the ``remaining`` policy, played plainly."""
    return {n: tuple(policy_line(A3_B4, n, "remaining")[0]) for n in range(1, A3_B4.nb_mol + 1)}


def cost(line) -> tuple[int, int]:
    """Rays and points of a line: 2 points for a ray that comes out, 1 otherwise."""
    return len(line), sum(2 if isinstance(result, int) else 1 for _, result in line)


def played(line) -> Game:
    """The game showing exactly the shots of ``line``."""
    game = Game.empty(A3_B4.width)
    for position, result in line:
        game = game.with_result(position, result)
    return game


def test_a_shot_and_a_line_as_text():
    """``2:H`` absorbed, ``5:R`` reflected, ``3->19`` out at 19; ``(no ray)`` for no shot."""
    assert shot_text(2, ABSORBED) == "2:H"
    assert shot_text(5, REFLECTED) == "5:R"
    assert shot_text(3, 19) == "3->19"
    assert shot_text(1, 1) == "1->1"  # an exit is never taken for H or R, whatever its number
    assert line_text([(2, ABSORBED), (3, 19), (7, REFLECTED)]) == "2:H 3->19 7:R"
    assert line_text([(4, 12)]) == "4->12"
    assert line_text([]) == "(no ray)"


def test_codes_and_results_are_each_other_s_inverse():
    """Code 0 reflected, 1 absorbed, 2 + q out at the 0-based position q (1-based q + 1)."""
    assert result_of_code(0) == REFLECTED and result_of_code(1) == ABSORBED
    assert [result_of_code(code) for code in range(2, 2 + A3_B4.positions)] == list(
        range(1, A3_B4.positions + 1)
    )
    assert code_of_result(REFLECTED) == 0 and code_of_result(ABSORBED) == 1
    assert code_of_result(1) == 2 and code_of_result(16) == 17
    for code in range(A3_B4.positions + 2):
        assert code_of_result(result_of_code(code)) == code
    assert isinstance(code_of_result(5), int)


def test_following_each_molecule_s_line_reaches_its_nodes(lines, made):
    """Every beginning of every molecule's line, played as a game, is a node of the book: at its
    depth, with the rays and points spent, the shot the line takes next (none at the end), the
    outcome that led there, and exactly the molecules whose lines begin so."""
    book = made("remaining")
    for number, line in lines.items():
        for depth in range(len(line) + 1):
            prefix = line[:depth]
            index = book.follow(played(prefix))
            assert index is not None, (number, prefix)
            node = book.node(index)
            members = [n for n, other in lines.items() if other[:depth] == prefix]
            rays, points = cost(prefix)
            assert node == BookNode(
                index=index,
                depth=depth,
                shot=line[depth][0] if depth < len(line) else None,
                outcome=prefix[-1][1] if prefix else None,
                count=len(members),
                rays=rays,
                points=points,
            ), (number, prefix)
            assert node.leaf == (depth == len(line))
            assert book.numbers(index).tolist() == members
            assert book.path(index)[-1] == index and len(book.path(index)) == depth + 1


def test_what_the_book_still_spends_from_a_node(lines, made):
    """``ahead``: the mean and most rays and points the node's molecules still need, from their
    own lines; ``advice`` says the same in words (or that the book stops)."""
    book = made("remaining")
    seen_leaf = seen_inner = False
    for number in (1, 2, 77, 200, 333, 559, 560):
        line = lines[number]
        for depth in range(len(line) + 1):
            prefix = line[:depth]
            game = played(prefix)
            members = [n for n, other in lines.items() if other[:depth] == prefix]
            spent = cost(prefix)
            rays = [cost(lines[n])[0] - spent[0] for n in members]
            points = [cost(lines[n])[1] - spent[1] for n in members]
            index = book.follow(game)
            assert book.ahead(index) == (
                pytest.approx(sum(rays) / len(rays), abs=1e-12),
                max(rays),
                pytest.approx(sum(points) / len(points), abs=1e-12),
                max(points),
            )
            if depth == len(line):
                seen_leaf = True
                assert book.advice(game) == (
                    f"The book (by remaining) stops here: its {len(members):,} candidates share one spectrum."
                )
            else:
                seen_inner = True
                assert book.advice(game) == (
                    f"The book (by remaining) shoots position {line[depth][0]} next; from here it needs "
                    f"{sum(rays) / len(rays):.2f} more rays on average (at most {max(rays)}) and "
                    f"{sum(points) / len(points):.2f} more points."
                )
    assert seen_leaf and seen_inner


def test_a_game_off_the_book_is_not_followed(lines, made):
    """A game whose shots are not the book's (another first shot, an outcome no molecule gives,
    a ray more than the line's, another box) has no node, and ``advice`` says the book does not
    play it."""
    book = made("remaining")
    first = lines[1][0][0]
    assert {line[0][0] for line in lines.values()} == {first}
    other = next(p for p in range(1, A3_B4.positions + 1) if p != first)
    off = [Game.empty(A3_B4.width).with_result(other, ABSORBED)]
    given = {line[0][1] for line in lines.values()}
    never = [
        r for r in (ABSORBED, REFLECTED, *range(1, A3_B4.positions + 1)) if r not in given and r != first
    ]
    assert never  # A3_B4: some exits of the first shot are given by no molecule
    off.append(Game.empty(A3_B4.width).with_result(first, never[0]))
    line = lines[77]
    extra = next(p for p in range(1, A3_B4.positions + 1) if played(line).result(p) is None)
    off.append(played(line).with_result(extra, REFLECTED))  # the leaf's shot is none: one ray too many
    for game in off:
        assert book.follow(game) is None, game.pattern()
        assert book.advice(game) == "The book (by remaining) does not play this game: its shots differ."
    assert book.follow(Game.empty(A3_B4.width + 1)) is None
    assert book.follow(Game.empty(A3_B4.width)) == 0


def test_advice_names_its_policy(made):
    """The policy in each sentence is the book's own."""
    book = made("information")
    assert book.advice(Game.empty(A3_B4.width)).startswith(
        f"The book (by information) shoots position {book.first_shot.position} next"
    )


def test_the_hardest_count_is_the_molecules_with_the_most_rays(lines, made):
    book = made("remaining")
    most = max(len(line) for line in lines.values())
    assert book.hardest_count() == sum(len(line) == most for line in lines.values())
    assert book.hardest_count() < A3_B4.nb_mol  # not every molecule: a count, not a length
    assert np.array_equal(book.rays, np.array([len(lines[n]) for n in range(1, A3_B4.nb_mol + 1)]))


# -- storage -------------------------------------------------------------------------------


def test_codes_are_a_byte_each():
    """A book holds every molecule's spectrum as codes, a byte each (``BYTES_PER_MOLECULE``)."""
    chars = np.frombuffer(b"@&ab@&@cbac@&@&@", dtype=np.uint8).reshape(1, 16)
    assert codes_of_spectra(chars).dtype == np.int8
    assert spectra_codes(Config(2, 4), "compute")[0].dtype == np.int8


def test_a_saved_book_s_row_holds_its_figures_for_sqlite3_readers(tmp_path):
    """The Books row's columns and its JSON summary (what ``sqlite3`` shows): the first shot,
    the size by depth and the count of hardest molecules included; read back, the book has its
    source, time and tree sizes."""
    open_database(tmp_path / "book.sqlite")
    made, computed = book(A3_B4, source="compute")  # the default policy: remaining
    assert computed and made.by == "remaining"
    row = Book.get((Book.config == "A3_B4") & (Book.by == "remaining"))
    summary = json.loads(row.summary)
    assert summary["size_by_depth"] == [list(t) for t in made.size_by_depth()]
    assert summary["hardest_count"] == made.hardest_count() > 0
    assert row.first_shot == summary["first_shot"] == made.first_shot.position
    assert row.nb_mol == A3_B4.nb_mol and row.source == "computed" and row.dh1
    again = stored_book(A3_B4)  # the default policy: remaining
    assert again is not None and again.by == "remaining"
    assert (again.source, again.seconds) == (made.source, made.seconds)
    assert again.size_by_depth() == made.size_by_depth()
    assert book(A3_B4)[1] is False  # read back, not computed


def test_recomputing_a_book_replaces_it_alone(tmp_path):
    """Saving a book again replaces its own row (configuration and policy), no other."""
    open_database(tmp_path / "books.sqlite")
    for config, by in ((A3_B4, "remaining"), (A3_B4, "information"), (Config(2, 4), "remaining")):
        book(config, by, source="compute")
    before = {(r.config, r.by): r.seconds for r in Book.select()}
    made, computed = book(A3_B4, "remaining", source="compute", recompute=True)
    assert computed
    after = {(r.config, r.by): r.seconds for r in Book.select()}
    assert (
        set(after)
        == set(before)
        == {("A3_B4", "remaining"), ("A3_B4", "information"), ("A2_B4", "remaining")}
    )
    assert after[("A3_B4", "remaining")] == made.seconds
    assert after[("A3_B4", "information")] == before[("A3_B4", "information")]
    assert after[("A2_B4", "remaining")] == before[("A2_B4", "remaining")]


def test_a_damaged_stored_book_is_one_line_naming_the_fix(tmp_path):
    """Unreadable arrays, or another configuration's: a StrategyError saying what and
    ``--recompute``."""
    open_database(tmp_path / "damaged.sqlite")
    book(A3_B4, source="compute")
    book(Config(2, 4), source="compute")
    Book.update(arrays=b"not an npz").where(Book.config == "A3_B4").execute()
    with pytest.raises(StrategyError) as error:
        stored_book(A3_B4)
    assert str(error.value).startswith("the stored remaining book of A3_B4 is unreadable (")
    assert str(error.value).endswith("); --recompute plays it again")
    other = Book.get(Book.config == "A2_B4").arrays
    Book.update(arrays=other).where(Book.config == "A3_B4").execute()
    with pytest.raises(StrategyError) as error:
        stored_book(A3_B4)
    assert str(error.value) == (
        f"the stored remaining book of A3_B4 has {Config(2, 4).nb_mol} molecules, not 560; "
        "--recompute plays it again"
    )


def test_book_reads_an_explored_store_and_passes_on_its_callbacks(tmp_path, explored):
    """``book`` with the default source reads the spectra of a complete configuration from the
    store; it tells ``progress`` and ``played``, and stops when asked."""
    from bbcore.decode import DecodeCancelled

    copy = tmp_path / "copy.sqlite"
    shutil.copy(explored, copy)
    open_database(copy)
    read: list[int] = []
    placed: list[int] = []
    made, computed = book(A3_B4, progress=lambda d, _: read.append(d), played=lambda d, _: placed.append(d))
    assert computed and made.source == "store"
    assert read[-1] == placed[-1] == A3_B4.nb_mol
    assert book(A3_B4, "information", source="compute")[0].source == "computed"  # as asked
    stop = threading.Event()
    stop.set()
    with pytest.raises(DecodeCancelled):
        book(Config(2, 4), stop=stop)


def test_a_book_on_a_read_only_store_is_computed_and_not_stored(tmp_path):
    """A database opened read-only: the book is computed, and the file keeps no book."""
    path = tmp_path / "read-only.sqlite"
    open_database(path)
    close_database()
    open_database(path, write=False)
    try:
        made, computed = book(Config(2, 4), source="compute")
        assert computed and made.molecules == Config(2, 4).nb_mol
        assert Book.select().count() == 0
    finally:
        close_database()


# -- the spectra, read or traced a batch at a time (``BATCH`` shrunk) ---------------------------


@pytest.mark.parametrize("size", [7, 100, 559, 560, 561])
def test_spectra_read_or_traced_in_small_batches_are_the_same(tmp_path, explored, monkeypatch, size):
    """``BATCH`` of 7 (560 = 80 x 7: the last batch full), 100 (a last short batch), one less
    than the molecules, exactly them, one more: the stored spectra read a batch at a time, and
    the traced ones, are the codes at the real size, every molecule in its own row; progress is
    told before each batch and at the end."""
    import bbcore.strategy as strategy

    copy = tmp_path / "copy.sqlite"
    shutil.copy(explored, copy)
    open_database(copy, write=False)
    try:
        real = spectra_codes(A3_B4, "compute")[0]
        assert np.array_equal(spectra_codes(A3_B4, "store")[0], real)
        monkeypatch.setattr(strategy, "BATCH", size)
        for source in ("store", "compute"):
            told: list[tuple[int, int]] = []
            codes, _ = spectra_codes(A3_B4, source, progress=lambda d, t, told=told: told.append((d, t)))
            assert codes.dtype == np.int8, source
            assert np.array_equal(codes, real), source
            done = [d for d, _ in told]
            assert {t for _, t in told} == {560} and done[0] == 0 and done[-1] == 560, source
            if source == "store":  # the rows a batch at a time
                assert done == [*range(0, 560, size), 560]
            else:  # ``molecule_batches`` (at most ``BATCH`` molecules each)
                assert all(0 < b - a <= size for a, b in zip(done[:-1], done[1:-1])), done
                assert len(done) >= 560 // size + 1
    finally:
        close_database()


@pytest.mark.parametrize("source", ["store", "compute"])
def test_spectra_stop_between_two_batches_and_at_the_end(tmp_path, explored, monkeypatch, source):
    """``stop``, set while the last batch is read, ends the reading before it returns
    (DecodeCancelled); set earlier, at the next batch."""
    import bbcore.strategy as strategy
    from bbcore.decode import DecodeCancelled

    copy = tmp_path / "copy.sqlite"
    shutil.copy(explored, copy)
    open_database(copy, write=False)
    monkeypatch.setattr(strategy, "BATCH", 100)
    try:
        starts: list[int] = []
        spectra_codes(A3_B4, source, progress=lambda d, _: starts.append(d))
        for at in (starts[0], starts[len(starts) // 2], starts[-2]):  # [-2]: the last batch's start
            stop = threading.Event()
            told: list[int] = []

            def progress(done: int, _: int, stop=stop, told=told, at=at) -> None:
                told.append(done)
                if done == at:
                    stop.set()

            with pytest.raises(DecodeCancelled):
                spectra_codes(A3_B4, source, progress=progress, stop=stop)
            assert told[-1] == at
    finally:
        close_database()


def test_a_configuration_missing_a_stored_spectrum_is_one_line(tmp_path, explored):
    """A complete configuration with a molecule row lost: the count found and expected."""
    from bbcore.store import Molecule

    copy = tmp_path / "copy.sqlite"
    shutil.copy(explored, copy)
    open_database(copy)
    try:
        Molecule.delete().where((Molecule.config == "A3_B4") & (Molecule.number == 77)).execute()
        with pytest.raises(StrategyError) as error:
            spectra_codes(A3_B4, "store")
        assert str(error.value) == "A3_B4: 559 spectra stored, 560 expected"
    finally:
        close_database()


# -- the book's edges --------------------------------------------------------------------------


def test_children_come_most_candidates_first_then_by_outcome():
    """Each node's children as the screens list them: the most candidates first, ties by the
    outcome's code (reflected, absorbed, then the exits in order), rebuilt ones too."""
    made_here = compute_book(A3_B4, source="compute")
    checked = 0
    for index in range(len(made_here.nodes)):
        if made_here.nodes.depth[index] > STORED_DEPTH or made_here.nodes.shot[index] < 0:
            continue
        kids = made_here.children(index)
        keys = [(-int(made_here.nodes.count[c]), int(made_here.nodes.outcome[c])) for c in kids]
        assert keys == sorted(keys) and len(kids) >= 2, index
        assert sum(int(made_here.nodes.count[c]) for c in kids) == int(made_here.nodes.count[index])
        checked += 1
    assert checked > 20
    assert len({-k for k, _ in keys}) > 1  # counts that differ, so the order is seen


def test_a_box_of_one_molecule_needs_no_ray():
    """A box full of atoms (A4_B2: one molecule): no first shot, no ray, and the book says it
    stops at once."""
    one = Config(4, 2)
    made_here = compute_book(one, source="compute")
    summary = made_here.summary()
    assert summary["first_shot"] is None and summary["molecules"] == 1
    assert summary["rays"] == {"mean": 0.0, "max": 0, "histogram": {"0": 1}}
    assert made_here.line(1) == []
    assert made_here.advice(Game.empty(2)) == (
        "The book (by remaining) stops here: its 1 candidates share one spectrum."
    )


def test_a_book_is_refused_for_a_range_and_past_its_limit(monkeypatch):
    """One line each: a range of atom counts, and more molecules than ``BOOK_LIMIT`` (a book of
    exactly the limit is made)."""
    import bbcore.strategy as strategy

    with pytest.raises(StrategyError) as error:
        compute_book(Config(2, 3, atoms_max=3))
    assert str(error.value) == "A2-3_B3 is a range of atom counts: a book is made for one count"
    monkeypatch.setattr(strategy, "BOOK_LIMIT", A3_B4.nb_mol)
    assert compute_book(A3_B4, source="compute").molecules == A3_B4.nb_mol
    monkeypatch.setattr(strategy, "BOOK_LIMIT", A3_B4.nb_mol - 1)
    with pytest.raises(StrategyError) as error:
        compute_book(A3_B4, source="compute")
    assert str(error.value) == (
        "A3_B4 has 560 molecules: too many for a book in memory (the limit is 559, about 0 MB)"
    )
    monkeypatch.setattr(strategy, "BOOK_LIMIT", 12_345_678)  # A6_B8: 74,974,368 molecules
    with pytest.raises(StrategyError) as error:
        compute_book(Config(6, 8))
    assert str(error.value).endswith("(the limit is 12,345,678, about 740 MB)")


def test_compute_book_reads_an_explored_store_by_default(tmp_path, explored):
    """With no source given, a complete configuration's spectra come from the store, and
    ``progress`` is told as they are read."""
    copy = tmp_path / "copy.sqlite"
    shutil.copy(explored, copy)
    open_database(copy, write=False)
    try:
        told: list[int] = []
        made_here = compute_book(A3_B4, progress=lambda d, _: told.append(d))
        assert made_here.source == "store" and told[-1] == A3_B4.nb_mol
        assert spectra_codes(A3_B4)[1] == "store"  # its default too
    finally:
        close_database()


def test_a_book_stops_while_its_spectra_are_traced(monkeypatch):
    """``stop`` set while the spectra are traced (``BATCH`` shrunk: several batches) ends the
    book there, before the rest is traced or anything played."""
    import bbcore.strategy as strategy
    from bbcore.decode import DecodeCancelled

    monkeypatch.setattr(strategy, "BATCH", 100)
    stop = threading.Event()
    told: list[int] = []
    placed: list[int] = []

    def progress(done: int, _: int) -> None:
        told.append(done)
        stop.set()

    with pytest.raises(DecodeCancelled):
        compute_book(
            A3_B4, source="compute", progress=progress, played=lambda d, _: placed.append(d), stop=stop
        )
    assert told == [0] and placed == []


# -- run_policy: what it records (fifth session: its mutation run) -----------------------------


@st.composite
def small_codes(draw) -> np.ndarray:
    """A few molecules' codes at a few positions (any values, ties and deep trees included)."""
    positions = draw(st.integers(2, 5))
    molecules = draw(st.integers(1, 14))
    value = st.integers(0, positions + 1)
    return np.array(
        draw(
            st.lists(
                st.lists(value, min_size=positions, max_size=positions),
                min_size=molecules,
                max_size=molecules,
            )
        ),
        dtype=np.int8,
    )


DEEPEST = np.array([[0, 0], [0, 1], [1, 0], [1, 1]], dtype=np.int8)
"""Two positions, four molecules: the tree is two rays deep at every leaf, as deep as it can be."""


def node_rows(run, depth: int) -> list[tuple[int, ...]]:
    """The recorded nodes down to ``depth`` (depth, outcome, count, rays, points), sorted: their
    indexes differ between a run recording every level and one recording a few."""
    nodes = run.nodes
    return sorted(
        (
            int(nodes.depth[i]),
            int(nodes.outcome[i]),
            int(nodes.count[i]),
            int(nodes.rays[i]),
            int(nodes.points[i]),
        )
        for i in range(len(nodes.depth))
        if nodes.depth[i] <= depth
    )


def test_an_unknown_policy_is_one_line():
    with pytest.raises(StrategyError) as error:
        run_policy(DEEPEST, np.arange(4, dtype=np.int64), "fastest")
    assert str(error.value) == "unknown policy 'fastest': expected 'remaining' or 'information'"


@settings(max_examples=60, deadline=None)
@given(codes=small_codes(), by=st.sampled_from(["remaining", "information"]))
@example(codes=DEEPEST, by="remaining")
def test_every_node_is_recorded_unless_fewer_levels_are_asked(codes, by):
    """``record_depth`` None: every node of the tree, to the deepest (as many rays as
    positions); each depth's nodes and leaves counted in a slot of its own (as many as a
    ray can be deep, plus the root and one); rays and points two bytes a molecule, as a
    book stores them.  ``record_depth`` d: the same nodes down to depth d, and no other."""
    npos = codes.shape[1]
    whole = run_policy(codes, np.arange(len(codes), dtype=np.int64), by)
    assert len(whole.nodes.depth) == int(whole.depth_nodes.sum())
    root = (int(whole.nodes.parent[0]), int(whole.nodes.outcome[0]), int(whole.nodes.depth[0]))
    assert root == (-1, -1, 0)  # no parent, no outcome, as ``bbcore.optimal.play`` records its root
    leaves = whole.nodes.shot < 0
    assert int(whole.nodes.count[leaves].sum()) == len(codes)
    assert len(whole.depth_nodes) == len(whole.depth_leaves) == npos + 2
    assert whole.depth_nodes.tolist() == [int((whole.nodes.depth == d).sum()) for d in range(npos + 2)]
    assert whole.depth_leaves.tolist() == [
        int((whole.nodes.depth[leaves] == d).sum()) for d in range(npos + 2)
    ]
    assert whole.rays.dtype == whole.points.dtype == np.int16
    assert whole.depth_nodes.dtype == whole.depth_leaves.dtype == np.int64
    for depth in range(int(whole.nodes.depth.max()) + 1):
        part = run_policy(codes, np.arange(len(codes), dtype=np.int64), by, record_depth=depth)
        assert node_rows(part, npos + 1) == node_rows(whole, depth), depth
        assert np.array_equal(part.rays, whole.rays) and np.array_equal(part.depth_nodes, whole.depth_nodes)


def test_a_stop_asked_during_a_run_of_one_step_is_seen_at_its_end():
    """A3_B4 fits in one step of the kernel: a stop set before the run is seen once it ends
    (DecodeCancelled), and ``played`` is not told the molecules placed."""
    from bbcore.decode import DecodeCancelled

    codes, _ = spectra_codes(A3_B4, "compute")
    stop = threading.Event()
    stop.set()
    told: list[int] = []
    with pytest.raises(DecodeCancelled):
        run_policy(
            codes,
            np.arange(A3_B4.nb_mol, dtype=np.int64),
            "remaining",
            played=lambda d, _: told.append(d),
            stop=stop,
        )
    assert told == []
