"""Benchmark: decoding partial games, computed directly and read from the store.

    python bench/decode.py                    # A4_B8, explores it into a temporary file
    python bench/decode.py --db PATH          # reuse a database where the configuration is explored
    python bench/decode.py --config A4_B6 --runs 7 --games 5 --no-store

Games are drawn from random molecules (fixed seed): for each number of shown
rays (positions picked at random, with the other ends of their exits), the
same games are decoded ``--runs`` times each by ``bbcore.decode.candidates``
with ``source="compute"`` and, when the configuration is explored, with
``source="store"``; the next-shot ranking is timed on the computed
candidates.  It prints, per number of shown rays, the median over the games
of each game's median time, and the slowest game.  The first call (loading
numba's compiled kernels) is timed apart.  A numpy reference operation is
timed too: the machines are shared, and it tells how loaded this one was.
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
from bbcore.decode import Game  # noqa: E402
from bbcore.explore import keep_freed_memory  # noqa: E402
from bbcore.numbering import atoms_of  # noqa: E402
from bbcore.store import open_database  # noqa: E402

SHOWN = (1, 2, 3, 5, 8, 12, 0)
"""Rays shown per game; 0 stands for every ray (the full spectrum)."""


def numpy_reference() -> float:
    """Median milliseconds of adding 1 to a million int32 (about 0.3 ms on an idle machine)."""
    a = np.arange(1_000_000, dtype=np.int32)
    b = np.empty_like(a)
    times = []
    for _ in range(31):
        start = time.perf_counter()
        np.add(a, 1, out=b)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def random_games(config: Config, shown: int, count: int, rng: np.random.Generator) -> list[Game]:
    """Games of ``shown`` rays (0: all) from random molecules (exits keep both ends)."""
    games = []
    for _ in range(count):
        number = int(rng.integers(1, config.nb_mol + 1))
        full = decode.parse_game(rays.spectrum(config, atoms_of(config, number)), config)
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


def report(title: str, rows: list[tuple[int, list[float], list[int]]]) -> None:
    """One line per number of shown rays: median and slowest game, candidates."""
    print(f"\n{title}")
    print("  rays shown   median game   slowest game   candidates (median)")
    for shown, times, counts in rows:
        print(f"  {shown or 'all':>10}   {statistics.median(times):>9.3f} s   {max(times):>10.3f} s"
              f"   {int(statistics.median(counts)):>12,}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=parse_config, default=parse_config("A4_B8"))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--games", type=int, default=4, help="games per number of shown rays")
    parser.add_argument("--db", type=Path, default=None,
                        help="a database where the configuration is explored")
    parser.add_argument("--no-store", action="store_true", help="time the direct decoding only")
    args = parser.parse_args()
    config: Config = args.config
    keep_freed_memory()  # as the CLI does

    print(f"{config.name}: {config.nb_mol:,} molecules; numpy reference "
          f"{numpy_reference():.2f} ms (about 0.3 on an idle machine)")
    rng = np.random.default_rng(2024)
    games = {shown: random_games(config, shown, args.games, rng) for shown in SHOWN}

    start = time.perf_counter()
    decode.candidates(config, games[0][0], source="compute")
    print(f"first decode (loads numba's kernels): {time.perf_counter() - start:.2f} s")

    computed, shots = [], []
    found: dict[tuple[int, int], np.ndarray] = {}
    for shown, chosen in games.items():
        times, counts, shot_times = [], [], []
        for i, game in enumerate(chosen):
            seconds, cands = timed(lambda g=game: decode.candidates(config, g, source="compute"),
                                   args.runs)
            times.append(seconds)
            counts.append(cands.count)
            found[shown, i] = cands.numbers
            if decode.shot_cost(cands, game) <= decode.NEXT_SHOT_BUDGET:
                seconds, _ = timed(lambda g=game, c=cands: decode.next_shots(config, g, c),
                                   max(1, args.runs // 2))
                shot_times.append(seconds)
        computed.append((shown, times, counts))
        if shot_times:
            shots.append((shown, shot_times, counts))
    report("candidates, computed directly (not explored):", computed)
    report("next-shot ranking on those candidates (games within the budget):", shots)

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
            seconds, cands = timed(lambda g=game: decode.candidates(config, g, source="store"),
                                   args.runs)
            assert (cands.numbers == found[shown, i]).all(), "store and computation disagree"
            times.append(seconds)
            counts.append(cands.count)
        stored.append((shown, times, counts))
    report("candidates, read from the store (explored):", stored)


if __name__ == "__main__":
    main()
