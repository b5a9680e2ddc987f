"""Decoding at its edges: narrowing, a late stop, the cells the shown rays rule out,
a compact store's families, and a process that never opened a database.

Each expectation is computed another way: from every molecule of a small
configuration traced by the engine, or from a decode started afresh.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from stores import explored_compact

import bbcore
from bbcore import decode, engine
from bbcore.config import parse_config
from bbcore.game import ABSORBED, REFLECTED, Game, parse_game
from bbcore.numbering import atoms_of, atoms_of_range
from bbcore.rays import spectrum, trace
from bbcore.store import open_database

A3_B4 = parse_config("A3_B4")
A3_B5 = parse_config("A3_B5")


def partial(game: Game, positions) -> Game:
    """``game`` with only the results at ``positions`` (and their exit partners)."""
    shown = Game.empty(game.width)
    for p in positions:
        shown = shown.with_result(p, game.result(p))
    return shown


def full_game(config, number: int) -> Game:
    """The full spectrum of molecule ``number``, by the reference rules."""
    return parse_game(spectrum(config, atoms_of(config, number)), config)


def all_spectra(config) -> list[str]:
    """Every molecule's normalised spectrum (the engine's), in number order."""
    partner = engine.trace_batch(config, atoms_of_range(config, 1, config.nb_mol + 1))[0]
    return [row.tobytes().decode() for row in engine.letters(partner)]


# -- narrowing earlier candidates ------------------------------------------------


def test_narrowing_every_molecule_is_decoding_the_new_rays():
    """The first ray shown after none: ``within`` holds every molecule, unlisted."""
    game = partial(full_game(A3_B4, 200), [1, 5])
    every = decode.candidates(A3_B4, Game.empty(4))
    assert every.every_molecule
    narrowed = decode.candidates(A3_B4, game, within=every)
    fresh = decode.candidates(A3_B4, game, source="compute")
    assert narrowed.count < A3_B4.nb_mol
    assert narrowed.numbers.tolist() == fresh.numbers.tolist()
    assert narrowed.molecules() == fresh.molecules()


def test_narrowed_candidates_list_their_molecules_and_say_where_they_came_from(store):
    full = full_game(A3_B4, 200)
    first, more = partial(full, [1, 5]), partial(full, [1, 5, 9, 13, 16])
    fresh = decode.candidates(A3_B4, more, source="compute")
    for source, said in (("compute", "computed"), ("store", "store")):
        earlier = decode.candidates(A3_B4, first, source=source)
        narrowed = decode.candidates(A3_B4, more, within=earlier)
        assert narrowed.source == earlier.source == said
        assert narrowed.count < earlier.count
        # the molecules listed are the narrowed ones, not the first molecules of the configuration
        assert narrowed.molecules() == fresh.molecules()
        assert narrowed.molecules()[0][0] != 1


def test_a_ray_that_contradicts_the_last_candidate_leaves_none():
    """One molecule left, then a ray it does not give: no molecule agrees, narrowed or afresh."""
    for number in range(1, A3_B4.nb_mol + 1):
        full = full_game(A3_B4, number)
        game = partial(full, [1, 2, 3, 4, 5, 6, 7, 8])
        one = decode.candidates(A3_B4, game, source="compute")
        if one.count == 1 and game.unknown:
            break
    else:
        pytest.fail("no A3_B4 game with one candidate and a position left")
    assert one.numbers.tolist() == [number]
    position = game.unknown[0]
    actual = trace(4, atoms_of(A3_B4, number), position).result
    wrong = REFLECTED if actual == "absorbed" else ABSORBED
    contradicted = game.with_result(position, wrong)
    narrowed = decode.candidates(A3_B4, contradicted, within=one)
    assert narrowed.count == 0 and narrowed.molecules() == []
    assert decode.candidates(A3_B4, contradicted, source="compute").count == 0


def test_a_stop_asked_for_during_the_last_batch_cancels_the_decode():
    """A3_B4 fits in one batch: the stop, set once the batch started, still cancels."""
    stop = threading.Event()

    def progress(done: int, total: int) -> None:
        stop.set()

    game = partial(full_game(A3_B4, 200), [1, 5])
    with pytest.raises(decode.DecodeCancelled):
        decode.candidates(A3_B4, game, source="compute", progress=progress, stop=stop)


# -- the cells the shown rays rule out ---------------------------------------------


@pytest.fixture(scope="module")
def a3_b5_rays() -> tuple[np.ndarray, np.ndarray]:
    """Every A3_B5 molecule's ray partners (k, 20) and which cells hold an atom (k, 25)."""
    atoms = atoms_of_range(A3_B5, 1, A3_B5.nb_mol + 1)
    partner = engine.trace_batch(A3_B5, atoms)[0]
    holds = np.zeros((len(atoms), A3_B5.cells), dtype=bool)
    np.put_along_axis(holds, atoms.astype(np.int64), True, axis=1)
    return partner, holds


def test_the_cells_ruled_out_are_those_where_an_atom_forbids_the_shown_ray(a3_b5_rays):
    """On every side: a cell is ruled out exactly when no molecule with an atom there gives the result.

    The decode tries the molecules of the other cells only: its progress
    total (and the limit of what it may try) counts them.
    """
    partner, holds = a3_b5_rays

    def forbidding(rows: np.ndarray) -> set[int]:
        """The cells no molecule of ``rows`` (a boolean mask) has an atom in."""
        return set(np.flatnonzero(~(holds & rows[:, None]).any(axis=0)).tolist())

    for position in range(1, A3_B5.positions + 1):
        column = partner[:, position - 1]
        reflected = Game.empty(5).with_result(position, REFLECTED)
        exit = int(column[column >= 0][0]) + 1  # where the first molecule that lets it out sends it
        out = Game.empty(5).with_result(position, exit)
        through = forbidding(column >= 0) | forbidding(partner[:, exit - 1] >= 0)
        for game, ruled_out in ((reflected, forbidding(column == engine.REFLECTED_CODE)), (out, through)):
            assert decode.excluded_cells(A3_B5, game) == sorted(ruled_out), (position, game.pattern())
            totals: list[int] = []
            decode.candidates(
                A3_B5, game, source="compute", progress=lambda _, total, seen=totals: seen.append(total)
            )
            assert set(totals) == {math.comb(A3_B5.cells - len(ruled_out), A3_B5.atoms)}


# -- a compact store ----------------------------------------------------------------


@pytest.fixture(scope="module")
def compact_a3_b5(tmp_path_factory) -> Path:
    return explored_compact(tmp_path_factory.mktemp("compact") / "a3_b5.sqlite", A3_B5)


def test_a_full_spectrum_of_a_spectral_group_is_read_from_a_compact_store(compact_a3_b5):
    """The spectral group's members come from its family; a spectrum of one molecule is computed."""
    spectra = all_spectra(A3_B5)
    counts = Counter(spectra)
    shared, size = counts.most_common(1)[0]
    lone = next(s for s, n in counts.items() if n == 1)
    assert size > 1
    open_database(compact_a3_b5)
    group = decode.candidates(A3_B5, parse_game(shared, A3_B5))
    members = [n for n, s in enumerate(spectra, 1) if s == shared]
    assert group.source == "store" and group.numbers.tolist() == members
    computed = decode.candidates(A3_B5, parse_game(shared, A3_B5), source="compute")
    assert group.molecules() == computed.molecules()
    alone = decode.candidates(A3_B5, parse_game(lone, A3_B5))
    assert alone.source == "computed" and alone.numbers.tolist() == [spectra.index(lone) + 1]


# -- no database at all ---------------------------------------------------------------


def test_a_full_spectrum_decodes_in_a_process_that_opened_no_database(store):
    """Read from the store where A3_B4 is explored; a script that opened no file computes it."""
    game = full_game(A3_B4, 200)
    stored = decode.candidates(A3_B4, game)
    assert decode.is_explored(A3_B4) and stored.source == "store"
    expected = stored.numbers.tolist()
    script = (
        "import json\n"
        "from bbcore import decode\n"
        "from bbcore.config import parse_config\n"
        "from bbcore.game import parse_game\n"
        "config = parse_config('A3_B4')\n"
        f"found = decode.candidates(config, parse_game({game.pattern()!r}, config))\n"
        "print(json.dumps([found.source, found.numbers.tolist(), decode.is_explored(config)]))\n"
    )
    # the bbcore of this test (mutation runs import it from a copy)
    root = Path(bbcore.__file__).resolve().parent.parent
    run = subprocess.run(
        [sys.executable, "-c", script], cwd=root, capture_output=True, text=True, timeout=300, check=False
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == ["computed", expected, False]
