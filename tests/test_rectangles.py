"""Boxes W wide and H high: the perimeter numbering, the rays, the symmetries and decoding.

The reference (``bbcore.rays``, ``bbcore.geometry``) is checked against a
brute force written here plainly from the rules (``docs/spec.md``): its own
perimeter walk and its own ray loop, sharing nothing with bbcore but the
cell numbering.  The engine and the decoder are checked against the
reference, as every fast path is.
"""

from __future__ import annotations

import json
import re
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
from expect import bbcore, one_line_error
from games import assert_reversible
from hypothesis import given, settings
from hypothesis import strategies as st

from bbcore import rays
from bbcore.config import Config
from bbcore.decode import candidates, excluded_cells
from bbcore.engine import letters, trace_batch
from bbcore.game import DecodeError, Game, labels_text, parse_game
from bbcore.geometry import (
    RECTANGLE_TRANSFORMS,
    box_transforms,
    cell_permutation,
    entry,
    move_cursor,
    position_at,
    position_source,
    transform_atoms,
)
from bbcore.numbering import atoms_of, molecule_batches, molecule_string, number_of
from bbcore.queries import computed_record
from bbcore.render import config_positions_figure, render_board
from bbcore.strategy import StrategyError, compute_book

# -- the brute force, from the rules alone ----------------------------------------------


def plain_positions(width: int, height: int) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Each position's perimeter cell and inward heading, walking the ring as the numbering
    says: down the left side, along the bottom, up the right side, back along the top."""
    ring = [((line, 0), (0, 1)) for line in range(1, height + 1)]
    ring += [((height + 1, column), (-1, 0)) for column in range(1, width + 1)]
    ring += [((line, width + 1), (0, -1)) for line in range(height, 0, -1)]
    ring += [((0, column), (1, 0)) for column in range(width, 0, -1)]
    return ring


def plain_spectrum(width: int, height: int, atoms: tuple[int, ...]) -> str:
    """The normalised spectrum of a molecule, each ray followed as a player would."""
    ring = plain_positions(width, height)
    number = {cell: p for p, (cell, _) in enumerate(ring, 1)}
    balls = {(a // width + 1, a % width + 1) for a in atoms}
    results: list[object] = []
    for cell, heading in ring:
        (line, column), (dl, dc) = cell, heading
        result: object = None
        ahead = (line + dl, column + dc)
        sides = [(ahead[0] + dc, ahead[1] + dl), (ahead[0] - dc, ahead[1] - dl)]
        if ahead in balls:
            result = "@"
        elif any(side in balls for side in sides):
            result = "&"
        while result is None:
            line, column = line + dl, column + dc
            if not (1 <= line <= height and 1 <= column <= width):
                result = number[(line, column)]
                break
            ahead = (line + dl, column + dc)
            left, right = (ahead[0] + dc, ahead[1] + dl), (ahead[0] - dc, ahead[1] - dl)
            if ahead in balls:
                result = "@"
            elif left in balls and right in balls:
                result = "&"
            elif left in balls:
                dl, dc = -dc, -dl
            elif right in balls:
                dl, dc = dc, dl
        results.append(result)
    text, letter = [], {}
    for p, result in enumerate(results, 1):
        if isinstance(result, int):
            key = min(p, result)
            letter.setdefault(key, chr(ord("a") + len(letter)))
            text.append(letter[key])
        else:
            text.append(str(result))
    return "".join(text)


BOXES = [(2, 3), (3, 2), (4, 2), (2, 5), (4, 3), (3, 4), (5, 3), (6, 4), (4, 6), (6, 2)]


# -- the numbering ----------------------------------------------------------------------


@pytest.mark.parametrize("width, height", BOXES + [(5, 5), (8, 8)])
def test_positions_walk_the_ring(width, height):
    """``entry`` and ``position_at`` number the ring as the plain walk does, 1..2(W+H);
    on a square it is the spec's 1..4W."""
    ring = plain_positions(width, height)
    assert len(ring) == 2 * (width + height) == Config(1, width, height).positions
    for p, (cell, heading) in enumerate(ring, 1):
        assert entry(width, p, height) == (cell, heading)
        assert position_at(width, cell, height) == p
    with pytest.raises(ValueError):
        entry(width, 2 * (width + height) + 1, height)
    with pytest.raises(ValueError):
        position_at(width, (height + 1, width + 1), height)


def test_worked_numbering_5_by_3():
    """The figure of docs/spec.md's rectangular example, read position by position."""
    assert [entry(5, p, 3)[0] for p in (1, 3, 4, 8, 9, 11, 12, 16)] == [
        (1, 0),
        (3, 0),
        (4, 1),
        (4, 5),
        (3, 6),
        (1, 6),
        (0, 5),
        (0, 1),
    ]


@pytest.mark.parametrize("width, height", [(6, 4), (3, 7), (2, 2), (30, 2)])
def test_the_cursor_walks_a_rectangle(width, height):
    """Holding each side's own arrow (down the left side, right along the bottom, up the
    right side, left along the top) goes round the box in position order, round the corners;
    an arrow out of the box moves nothing."""
    order = [1]
    for step, count in (((1, 0), height), ((0, 1), width), ((-1, 0), height), ((0, -1), width)):
        for _ in range(count):
            order.append(move_cursor(width, order[-1], step, height))
    assert order == [*range(1, 2 * (width + height) + 1), 1]
    assert move_cursor(width, 1, (0, -1), height) == 1
    assert move_cursor(width, height + 1, (1, 0), height) == height + 1


# -- the rays ---------------------------------------------------------------------------


@pytest.mark.parametrize("width, height", BOXES)
@pytest.mark.parametrize("atoms", [1, 2, 3])
def test_reference_is_the_brute_force(width, height, atoms):
    """Every molecule of 1 to 3 atoms on boxes up to 6 x 4: the reference tracer's spectrum
    is the brute force's, and the engine's is the reference's."""
    if atoms >= width * height:
        pytest.skip("a box too small for that many atoms")
    config = Config(atoms, width, height)
    molecules = list(combinations(range(width * height), atoms))
    engine = letters(trace_batch(config, np.array(molecules, dtype=np.uint8))[0])
    for molecule, fast in zip(molecules, engine):
        expected = plain_spectrum(width, height, molecule)
        assert rays.spectrum(config, molecule) == expected, molecule
        assert bytes(fast).decode() == expected, molecule


def rectangles(max_side: int = 30) -> st.SearchStrategy[tuple[Config, tuple[int, ...]]]:
    """A random box (W != H most of the time) and a molecule in it."""

    @st.composite
    def draw(draw_):
        width = draw_(st.integers(2, max_side))
        height = draw_(st.integers(2, max_side))
        count = draw_(st.integers(1, min(12, width * height - 1)))
        atoms = draw_(
            st.lists(st.integers(0, width * height - 1), min_size=count, max_size=count, unique=True)
        )
        return Config(count, width, height), tuple(sorted(atoms))

    return draw()


@settings(max_examples=150, deadline=None)
@given(rectangles())
def test_rays_are_reversible_on_rectangles(drawn):
    """p exits at q iff q exits at p, with the same length and turns, the path reversed."""
    config, atoms = drawn
    for ray in rays.trace_all(config, atoms):
        assert ray.length == len(ray.path) <= 2 * config.cells
    assert_reversible(config, atoms)


@settings(max_examples=60, deadline=None)
@given(rectangles(12))
def test_brute_force_and_engine_on_random_rectangles(drawn):
    """Random boxes up to 12 x 12 with up to 12 atoms: reference, brute force and engine agree."""
    config, atoms = drawn
    expected = plain_spectrum(config.width, config.height, atoms)
    assert rays.spectrum(config, atoms) == expected
    fast = letters(trace_batch(config, np.array([atoms], dtype=np.int64))[0])[0]
    assert bytes(fast).decode() == expected


def test_more_than_26_exit_pairs_are_numbered():
    """An empty 20 x 12 box sends 32 rays straight across: letters run out, labels are numbers."""
    config = Config(1, 20, 12)
    spectrum = rays.spectrum(config, (0,))
    labels = rays.spectrum_labels(spectrum)
    exits = [label for label in labels if label not in "@&"]
    assert len(set(exits)) == len(exits) // 2 > 26
    assert {label for label in exits} == {str(k) for k in range(1, len(exits) // 2 + 1)}
    assert rays.spectrum_labels("@&ab&ba@") == list("@&ab&ba@")


# -- the symmetries of a rectangle ------------------------------------------------------


def test_a_rectangle_has_four_symmetries():
    """Only the transforms mapping the box onto itself; a quarter turn is refused."""
    assert box_transforms(6, 4) == RECTANGLE_TRANSFORMS == ("id", "rot180", "symm-h", "symm-v")
    assert len(box_transforms(6, 6)) == len(box_transforms(6)) == 8
    with pytest.raises(ValueError, match="does not map"):
        cell_permutation(6, "rot90", 4)
    assert cell_permutation(3, "rot180", 2) == (5, 4, 3, 2, 1, 0)
    assert cell_permutation(3, "symm-h", 2) == (2, 1, 0, 5, 4, 3)
    assert cell_permutation(3, "symm-v", 2) == (3, 4, 5, 0, 1, 2)


@settings(max_examples=60, deadline=None)
@given(rectangles(9), st.sampled_from(RECTANGLE_TRANSFORMS))
def test_an_image_has_the_moved_spectrum(drawn, transform):
    """The image's rays are the molecule's with their positions moved (``position_source``)."""
    config, atoms = drawn
    image = transform_atoms(config, atoms, transform)
    source = position_source(config.width, transform, config.height)
    old = rays.trace_all(config, atoms)
    back = {p: q for q, p in enumerate(source, 1)}  # old position -> new
    for new_position, old_position in enumerate(source, 1):
        ray = old[old_position - 1]
        moved = rays.trace(config.width, image, new_position, config.height)
        assert moved.result == ray.result
        assert moved.exit == (back[ray.exit] if ray.exit else None)


def test_computed_record_of_a_rectangle():
    """A rectangle's canonical molecule is the lowest of its 4 images."""
    config = Config(2, 3, 2)
    record = computed_record(config, number_of(config, (4, 5)))  # the bottom line's last two
    assert record.molecule == "----OO"
    assert record.canonical_number == 1 and record.transform == "rot180"
    assert record.spectrum == plain_spectrum(3, 2, (4, 5))


def test_the_engines_enantiomer_groups_refuse_a_rectangle():
    """The engine's group kernels move cells by the square's 8 transforms: on a rectangle they
    read past their tables (or, compiled, gave records unlike ``computed_record``'s)."""
    from bbcore.engine import molecules_of_numbers

    with pytest.raises(ValueError, match="square boxes only"):
        molecules_of_numbers(Config(3, 4, 3), np.arange(1, 11))


# -- decoding by enumeration ------------------------------------------------------------


def agreeing(config: Config, game: Game) -> list[int]:
    """The numbers of the molecules whose plain spectrum agrees with every shown ray."""
    found = []
    for number, molecule in enumerate(combinations(range(config.cells), config.atoms), 1):
        spectrum = plain_spectrum(config.width, config.height, molecule)
        ok = True
        for p, result in enumerate(game.results, 1):
            if result is None:
                continue
            seen = spectrum[p - 1]
            if isinstance(result, int):
                ok = seen not in "@&" and spectrum[result - 1] == seen
            else:
                ok = seen == result
            if not ok:
                break
        if ok:
            found.append(number)
    return found


@pytest.mark.parametrize("config", [Config(2, 6, 4), Config(3, 4, 6), Config(3, 5, 3)])
def test_candidates_are_the_brute_force(config):
    """Full spectra and partial games on rectangles: the engine's candidates are the brute
    force's, and never exclude a cell an agreeing molecule uses."""
    rng = np.random.default_rng(7)
    for number in rng.choice(config.nb_mol, 6, replace=False) + 1:
        atoms = atoms_of(config, int(number))
        full = parse_game(rays.spectrum(config, atoms), config)
        shown = [p for p in range(1, config.positions + 1) if rng.random() < 0.3]
        partial = Game.empty(config.width, config.height)
        for p in shown:
            partial = partial.with_result(p, full.result(p))
        for game in (full, partial):
            expected = agreeing(config, game)
            found = candidates(config, game, source="compute")
            assert found.numbers.tolist() == expected
            assert int(number) in expected
            assert not set(excluded_cells(config, game)) & set(atoms)


def test_batches_past_256_cells_are_uint16():
    """30 x 30 cells do not fit a byte: the batches widen rather than wrap round."""
    batch = next(molecule_batches(Config(1, 30, 30), 1000))
    assert batch.dtype == np.uint16 and batch[-1, 0] == 899


# -- docs/spec.md's worked example ------------------------------------------------------

SPEC = Path(__file__).resolve().parent.parent / "docs" / "spec.md"


def spec_section(title: str) -> str:
    """The text of a ``## title`` section of docs/spec.md."""
    text = SPEC.read_text()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else len(text)]


def test_the_spec_worked_rectangle():
    """The section's two figures are what bbcore draws, its numbering table is the plain
    walk's, and its molecule's number, string and spectrum are the brute force's."""
    section = spec_section("Rectangles and ranges")
    numbering, molecule_figure = re.findall(r"```\n(.*?)```", section, re.S)
    config = Config(2, 5, 3)
    assert numbering.rstrip("\n") == config_positions_figure(config)
    # The figure read back: each label next to the side it is on.
    rows = numbering.splitlines()
    assert [int(row.split()[0]) for row in rows[1:4]] == [1, 2, 3]
    assert [int(row.split()[-1]) for row in rows[1:4]] == [11, 10, 9]
    assert [int(x) for x in rows[4].split()] == [4, 5, 6, 7, 8]
    assert [int(x) for x in rows[0].split()] == [16, 15, 14, 13, 12]
    number = int(re.search(r"Molecule (\d+) of A2_B5x3 \((\d+) molecules\)", section).group(1))
    assert re.search(r"\((\d+) molecules\)", section).group(1) == str(config.nb_mol)
    molecule = re.search(r"is `([-O]+)`", section).group(1)
    spectrum = re.search(r"Its spectrum is `([^`]+)`", section).group(1)
    atoms = atoms_of(config, number)
    assert "".join("O" if i in atoms else "-" for i in range(15)) == molecule
    assert spectrum == plain_spectrum(5, 3, atoms) == rays.spectrum(config, atoms)
    assert molecule_figure.rstrip("\n") == render_board(5, molecule, spectrum, height=3)
    canonical = re.search(r"molecule 77\nabove is the `([\w-]+)` image of molecule (\d+), `([-O]+)`", section)
    record = computed_record(config, number)
    assert (record.transform, record.canonical_number) == (canonical.group(1), int(canonical.group(2)))
    assert molecule_string(config, atoms_of(config, record.canonical_number)) == canonical.group(3)
    assert transform_atoms(config, atoms_of(config, record.canonical_number), "rot180") == atoms
    table = re.findall(r"^\| ([\w+().]+)\.\.([\w+().]+) \| (\w+) \|", section, re.M)
    assert [side for _, _, side in table] == ["left", "bottom", "right", "top"]


# -- games on rectangles ----------------------------------------------------------------


def test_a_rectangular_diagram_reads_as_its_string():
    """The traditional diagram of A2_B5x3's molecule 77, numbers at both ends of each ray and
    the guess drawn, is the same game as its spectrum string."""
    config = Config(2, 5, 3)
    text = "\n".join(
        [
            "  1 H 3 H H",
            "1 - - - - - 3",
            "H - O - - - R",
            "2 - - - - O H",
            "  2 H H R H",
        ]
    )
    game = parse_game(text, config)
    assert game.results == parse_game("a@bb@@&@@&c@@c@a", config).results
    assert game.guess == (6, 14) and (game.width, game.height) == (5, 3)
    with pytest.raises(DecodeError, match=r"the diagram is a 5 x 3 box \(wide x high\), A2_B3x5 is 3 x 5"):
        parse_game(text, Config(2, 3, 5))


def test_a_game_of_the_wrong_length_for_the_box():
    """A string or tokens of another box's length say how many positions this box has."""
    with pytest.raises(DecodeError, match="A2_B6x4 has 20 positions .* the game has 16 characters"):
        parse_game("@" * 16, Config(2, 6, 4))
    with pytest.raises(DecodeError, match="the game is for a 4 x 6 box, A2_B6x4 is 6 x 4"):
        candidates(Config(2, 6, 4), Game.empty(4, 6))


def test_past_26_exit_pairs_labels_are_numbers():
    """On 20 x 12 a game writes its 27th exit pair as the number 1, and reads back as tokens."""
    config = Config(1, 20, 12)
    game = Game.empty(20, 12)
    for p in range(1, 28):  # straight across: the left side to the right, the bottom to the top
        game = game.with_result(p, 45 - p if p <= 12 else 77 - p)
    labels = [label for label in game.labels if label]
    assert len(set(labels)) == 27 and "1" in labels and "z" in labels
    assert parse_game(labels_text(game.labels), config).results == game.results


# -- the command line on rectangles and ranges ------------------------------------------


@pytest.mark.parametrize(
    "args, words",
    [
        (["decode", "A4_B31x8", ""], ["width", "2 and 30", "31"]),
        (["decode", "A4_B8x40", ""], ["height", "2 and 30", "40"]),
        (["show", "A24_B6x4", "1"], ["between 1 and 23", "6 x 4 box", "24"]),
        (["decode", "A5-3_B8", ""], ["upside down", "5 to 3"]),
        (["decode", "A2_B6x4", "@&ab@cdec@ba&@@&"], ["20 positions", "16 characters"]),
        (["show", "A3-5_B6x4", "3"], ["range of atom counts", "--molecule"]),
        (["explore", "A2_B6x4"], ["rectangle", "not explored"]),
        (["explore", "A3-4_B5"], ["range of atom counts", "not explored"]),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, args, words):
    """The real ``bbcore`` refuses each in one line, exit 2, nothing written."""
    done = bbcore("--db", str(tmp_path / "none.sqlite"), *args)
    one_line_error(done.returncode, done.stderr, *words)
    assert done.returncode == 2
    assert not (tmp_path / "none.sqlite").exists()


def test_show_and_decode_a_rectangle(tmp_path):
    """``show`` draws molecule 77 of A2_B5x3 as docs/spec.md does, and ``decode`` finds it alone
    from its spectrum; ``--molecule`` names it by its cells."""
    db = str(tmp_path / "none.sqlite")
    shown = bbcore("--db", db, "show", "A2_B5x3", "77")
    assert shown.returncode == 0, shown.stderr
    assert render_board(5, "------O-------O", "a@bb@@&@@&c@@c@a", height=3) in shown.stdout
    by_cells = bbcore("--db", db, "show", "A1-3_B5x3", "--molecule=------O-------O")
    assert by_cells.returncode == 0 and by_cells.stdout.startswith("A2_B5x3 #77 ")
    dotted = bbcore("--db", db, "show", "A2_B5x3", "--molecule", "......O.......O")
    assert dotted.stdout == bbcore("--db", db, "show", "A2_B5x3", "77").stdout
    wrong = bbcore("--db", db, "show", "A3-4_B5x3", "--molecule", "......O.......O")
    one_line_error(wrong.returncode, wrong.stderr, "2 atoms", "3 to 4")
    decoded = bbcore("--db", db, "decode", "A2_B5x3", "a@bb@@&@@&c@@c@a", "--json")
    assert decoded.returncode == 0, decoded.stderr
    answer = json.loads(decoded.stdout)
    assert answer["count"] == 1 and answer["molecules"][0]["number"] == 77
    assert len(answer["probabilities"]) == 3 and len(answer["probabilities"][0]) == 5


def test_a_book_is_of_one_count():
    """The strategy book refuses a range in one line, rather than numbering its least count."""
    with pytest.raises(StrategyError, match="range of atom counts"):
        compute_book(Config(1, 3, 2, 2))
