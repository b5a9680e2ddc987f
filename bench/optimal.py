"""Benchmark: the exactly optimal strategy (``bbcore.optimal``), configuration by configuration.

    python bench/optimal.py                                   # A2_B4 .. A4_B6, each objective
    python bench/optimal.py --configs A3_B8 A4_B7 --limit 3600
    python bench/optimal.py --configs A4_B8 --objectives rays --limit 600   # rate and bounds

For each configuration and objective it searches the optimum from nothing
(no stored memo), in this process after a warm-up (numba's kernels loaded),
and prints one row: the optimum as a fraction and a decimal, the greedy
book's value scored the same way, both first shots, where the greedy book
first errs (breadth first in its tree: the shots that lead there, the
candidates, the greedy shot and an optimal one with their totals), the
seconds, the sets searched and the rate.  A search that passes ``--limit``
seconds is stopped and its row gives the proved bounds instead (``lower ..
upper``) with the rate.  The machine's load (``os.getloadavg``) is printed
before and after: the machines are shared, and the seconds mean little
without it.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bbcore.config import Config, parse_config  # noqa: E402
from bbcore.optimal import (  # noqa: E402
    OBJECTIVES,
    Paused,
    Problem,
    Search,
    bounds_now,
    finish,
    first_difference,
    greedy_played,
    solve,
)

DEFAULT = ("A2_B4", "A2_B5", "A3_B4", "A3_B5", "A2_B6", "A3_B6", "A4_B5", "A4_B6")


def decimal(total: int, config: Config, objective: str) -> str:
    return str(total) if objective == "worst" else f"{total / config.nb_mol:.4f}"


def row(config: Config, objective: str, problem: Problem, limit: float) -> str:
    """One search from nothing, as one line."""
    began = time.perf_counter()
    search = Search(problem, objective, stop=lambda: time.perf_counter() - began > limit)
    greedy = greedy_played(problem)
    greedy_total = greedy.total(objective, problem.everyone)
    try:
        optimum = finish(search, greedy, difference=False)
    except Paused:
        lower, upper = bounds_now(search, greedy_total)
        return (
            f"{config.name:6} {objective:6} not proved in {limit:.0f} s: "
            f"{decimal(lower, config, objective)} <= optimum <= {decimal(upper, config, objective)}; "
            f"{search.nodes:,} sets, {search.rate:,.0f}/s, memo {len(search.memo):,}"
        )
    seconds = time.perf_counter() - began
    nodes = search.nodes
    search.stop = None
    difference = first_difference(search)
    where = "greedy optimal at every node looked at"
    if difference is not None:
        where = (
            f"greedy errs after [{' '.join(difference['path'])}] ({difference['molecules']} cands): "
            f"{difference['greedy_shot']} ({difference['greedy_total']}) vs "
            f"{difference['optimal_shot']} ({difference['optimal_total']})"
        )
    return (
        f"{config.name:6} {objective:6} {optimum.per(optimum.upper):>12} = "
        f"{decimal(optimum.upper, config, objective):>7}  "
        f"greedy {decimal(greedy_total, config, objective):>7}  "
        f"first {optimum.first_shot} (greedy {optimum.greedy_first_shot})  {seconds:8.1f} s  "
        f"{nodes:>9,} sets  {nodes / seconds:6,.0f}/s  {where}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configs", nargs="+", type=parse_config, default=[parse_config(c) for c in DEFAULT])
    parser.add_argument("--objectives", nargs="+", choices=OBJECTIVES, default=list(OBJECTIVES))
    parser.add_argument("--limit", type=float, default=600.0, help="seconds a search may take (default 600)")
    args = parser.parse_args()
    solve(Config(2, 3), "rays", difference=False)  # warm-up: the kernels loaded from numba's cache
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load before: {load} ({os.cpu_count()} cores)", flush=True)
    for config in args.configs:
        began = time.perf_counter()
        problem = Problem.of(config)
        seconds = time.perf_counter() - began
        print(f"{config.name}: {config.nb_mol:,} molecules, spectra in {seconds:.1f} s", flush=True)
        for objective in args.objectives:
            print(row(config, objective, problem, args.limit), flush=True)
    print(f"load after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)


if __name__ == "__main__":
    main()
