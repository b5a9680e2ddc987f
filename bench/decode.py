"""Benchmark: decoding partial games, computed directly and read from the store.

    python bench/decode.py                    # A4_B8, explores it into a temporary file
    python bench/decode.py --db PATH          # reuse a database where the configuration is explored
    python bench/decode.py --config A4_B6 --runs 7 --games 5 --no-store

Games are drawn from random molecules (fixed seed): for each number of shown
rays (positions picked at random, with the other ends of their exits), the
same games are decoded ``--runs`` times each by ``bbcore.decode.candidates``
with ``source="compute"`` and, when the configuration is explored, with
``source="store"``; the next-shot ranking is timed on the computed
candidates, and so is narrowing: the candidates of a game with one more
ray, found among those of the game (``within=``, what the TUI does as the
player writes a result).  It prints, per number of shown rays, the median
over the games of each game's median time, the slowest game, and the median
as a multiple of a numpy reference operation timed in the same run (the
machines are shared: the ratio says more than the seconds).  The first call
(loading numba's compiled kernels) is timed apart.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bbcore import decode, rays  # noqa: E402
from bbcore.config import Config, parse_config  # noqa: E402
from bbcore.game import Game, parse_game  # noqa: E402
from bbcore.numbering import atoms_of  # noqa: E402
from bbcore.runner import keep_freed_memory  # noqa: E402
from bbcore.shots import NEXT_SHOT_BUDGET, next_shots, shot_cost  # noqa: E402
from bbcore.store import open_database  # noqa: E402

SHOWN = (1, 2, 3, 5, 8, 12, 0)
"""Rays shown per game; 0 stands for every ray (the full spectrum)."""


def numpy_reference() -> float:
    """Median milliseconds of sorting a million random int64 with numpy: a fixed piece of
    CPU work of the same order as a decode, timed in the same run as the baseline."""
    values = np.random.default_rng(0).integers(0, 1 << 62, 1_000_000)
    times = []
    for _ in range(9):
        start = time.perf_counter()
        np.sort(values)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def random_games(config: Config, shown: int, count: int, rng: np.random.Generator) -> list[Game]:
    """Games of ``shown`` rays (0: all) from random molecules (exits keep both ends)."""
    games = []
    for _ in range(count):
        number = int(rng.integers(1, config.nb_mol + 1))
        full = parse_game(rays.spectrum(config, atoms_of(config, number)), config)
        game = Game.empty(config.width)
        for position in rng.permutation(config.positions) + 1:
            if shown and len(game.rays()) == shown:
                break
            game = game.with_result(int(position), full.result(int(position)))
        games.append(game)
    return games


def timed(function, runs: int) -> tuple[float, object]:
    """Median seconds of ``runs`` calls, and the last result."""
    times = []
    result = None
    for _ in range(runs):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def report(title: str, rows: list[tuple[int, list[float], list[int]]], reference: float) -> None:
    """One line per number of shown rays: median and slowest game, the median over the
    reference, candidates."""
    print(f"\n{title}")
    print("  rays shown   median game   slowest game   / reference   candidates (median)")
    for shown, times, counts in rows:
        median = statistics.median(times)
        print(
            f"  {shown or 'all':>10}   {median:>9.3f} s   {max(times):>10.3f} s"
            f"   {median * 1000 / reference:>11,.2f}   {int(statistics.median(counts)):>12,}"
        )


def one_more_ray(config: Config, game: Game, rng: np.random.Generator) -> Game:
    """``game`` and one more ray of the same molecule's, drawn among those not shown."""
    full = parse_game(rays.spectrum(config, game_molecule(config, game)), config)
    position = int(rng.choice(game.unknown))
    return game.with_result(position, full.result(position))


def game_molecule(config: Config, game: Game) -> tuple[int, ...]:
    """A molecule agreeing with ``game`` (the first candidate)."""
    cands = decode.candidates(config, game)
    return tuple(int(cell) for cell in cands.atoms[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=parse_config, default=parse_config("A4_B8"))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--games", type=int, default=4, help="games per number of shown rays")
    parser.add_argument(
        "--db", type=Path, default=None, help="a database where the configuration is explored"
    )
    parser.add_argument("--no-store", action="store_true", help="time the direct decoding only")
    args = parser.parse_args()
    config: Config = args.config
    keep_freed_memory()  # as the CLI does

    reference = numpy_reference()
    print(
        f"{config.name}: {config.nb_mol:,} molecules; reference (numpy sort of 1M int64) {reference:.1f} ms"
    )
    rng = np.random.default_rng(2024)
    games = {shown: random_games(config, shown, args.games, rng) for shown in SHOWN}

    start = time.perf_counter()
    decode.candidates(config, games[0][0], source="compute")
    print(f"first decode (loads numba's kernels): {time.perf_counter() - start:.2f} s")

    computed, shots, narrowed = [], [], []
    found: dict[tuple[int, int], np.ndarray] = {}
    for shown, chosen in games.items():
        times, counts, shot_times, shot_counts, narrow_times, narrow_counts = [], [], [], [], [], []
        for i, game in enumerate(chosen):
            seconds, cands = timed(lambda g=game: decode.candidates(config, g, source="compute"), args.runs)
            times.append(seconds)
            counts.append(cands.count)
            found[shown, i] = cands.numbers
            if shot_cost(cands, game) <= NEXT_SHOT_BUDGET:
                seconds, _ = timed(lambda g=game, c=cands: next_shots(config, g, c), max(1, args.runs // 2))
                shot_times.append(seconds)
                shot_counts.append(cands.count)
            if game.unknown and cands.count:
                more = one_more_ray(config, game, rng)
                seconds, fewer = timed(
                    lambda g=more, c=cands: decode.candidates(config, g, within=c), args.runs
                )
                narrow_times.append(seconds)
                narrow_counts.append(fewer.count)
        computed.append((shown, times, counts))
        if shot_times:
            shots.append((shown, shot_times, shot_counts))
        if narrow_times:
            narrowed.append((shown, narrow_times, narrow_counts))
    report("candidates, computed directly (not explored):", computed, reference)
    report("next-shot ranking on those candidates (games within the budget):", shots, reference)
    report("one more ray, narrowing those candidates (within=):", narrowed, reference)
    every = decode.candidates(config, Game.empty(config.width))
    if shot_cost(every, Game.empty(config.width)) <= NEXT_SHOT_BUDGET:
        seconds, _ = timed(
            lambda: next_shots(config, Game.empty(config.width), every), max(1, args.runs // 2)
        )
        print(
            f"\nfirst shot ranked over every molecule: {seconds:.3f} s "
            f"({seconds * 1000 / reference:,.1f} x the reference)"
        )

    if args.no_store:
        return
    if args.db is None:
        from bbcore.explore import explore

        folder = tempfile.mkdtemp(prefix="bench-decode-")
        path = Path(folder) / "decode.sqlite"
        start = time.perf_counter()
        explore(config, path)
        print(f"\n(explored {config.name} into {path} in {time.perf_counter() - start:.1f} s)")
    else:
        path = args.db
    open_database(path, create=False)
    if not decode.is_explored(config):
        sys.exit(f"{config.name} is not explored in {path}")
    stored = []
    for shown, chosen in games.items():
        times, counts = [], []
        for i, game in enumerate(chosen):
            seconds, cands = timed(lambda g=game: decode.candidates(config, g, source="store"), args.runs)
            assert (cands.numbers == found[shown, i]).all(), "store and computation disagree"
            times.append(seconds)
            counts.append(cands.count)
        stored.append((shown, times, counts))
    report("candidates, read from the store (explored):", stored, reference)


if __name__ == "__main__":
    main()
