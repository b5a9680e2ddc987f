"""Benchmark: the solver decoder on the boards people play (issue 30's targets).

    python bench/solver.py                 # every case, 3 runs each
    python bench/solver.py --runs 5 --cases 10x10-full 20x12-full

Each case draws its hidden placements with a fixed seed (one per run), traces
the shown rays with the solver's tracer and times the answer:

- ``10x10-full``, ``20x12-full``: the full spectrum of 10 atoms in 10 x 10,
  of 15 in 20 x 12: the count and the backbone (``bbcore.solver.solve``);
- ``10x10-partial``, ``20x12-partial``: 12 rays shot at random positions:
  the backbone, the count (exact or estimated) and the next shots;
- ``8x8-range``: 3 to 6 atoms in 8 x 8, 8 rays shown: the exact count over
  every count, through the Decoder (the engine once per count);
- ``cpsat`` (only when named; needs ``pip install ortools``): OR-Tools CP-SAT
  on the 10 x 10 full spectrum's clauses, its first solve and backbone
  against CaDiCaL's (the figures in docs/decode-solver.md);
- ``cubes`` (only when named): the 20 x 12 game of 12 rays, each shown ray
  traced alone by the plain path search over the cells the backbone leaves
  undecided, for at most 4 s of processor time: its leaves (cubes) and
  branches, or how far it got (why the rays are not joined ray by ray:
  docs/decode-solver.md);
- ``engine``: A4_B8 games of 3 rays through the Decoder against
  ``bbcore.decode.candidates`` and ``ranked_shots`` called directly (today's
  path), alternating, in the same run: their ratio says whether the engine
  path got slower.

It prints each case's median and slowest seconds, the count and how it was
had, the peak memory of the process and of its children (the counters run in
a child process), and the load average before and after (the machine is
shared and noisy).
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bbcore import decode  # noqa: E402
from bbcore.config import Config  # noqa: E402
from bbcore.decoder import Decoder  # noqa: E402
from bbcore.game import Game  # noqa: E402
from bbcore.shots import ranked_shots  # noqa: E402
from bbcore.solver import Box, SolverTimeout, next_shots, solve, trace_result  # noqa: E402

CASES = ("10x10-full", "10x10-partial", "20x12-full", "20x12-partial", "8x8-range", "engine")
MEASURED = ("cpsat", "cubes")
"""Cases only run when named: ``cpsat`` needs OR-Tools (pip install ortools), not a dependency;
``cubes`` is a measurement behind the docs, not a target."""

CUBE_SECONDS = 4.0
"""Processor time each ray of the ``cubes`` case is traced for."""


def shown(box: Box, atoms, positions) -> tuple[list[tuple[int, object]], list[int]]:
    """The rays from ``positions`` (an exit pair once) and the positions not shot."""
    results = {p: trace_result(box, atoms, p) for p in positions}
    for p, r in list(results.items()):
        if isinstance(r, int):
            results[r] = p
    rays = [(p, r) for p, r in sorted(results.items()) if not (isinstance(r, int) and r < p)]
    return rays, [p for p in range(1, box.positions + 1) if p not in results]


def square_game(width: int, rays) -> Game:
    game = Game.empty(width)
    for position, result in rays:
        game = game.with_result(position, result)
    return game


def solver_case(width: int, height: int, atoms: int, shots: int | None, seed: int) -> tuple[float, str]:
    rng = random.Random(seed)
    box = Box(width, height)
    hidden = rng.sample(range(box.cells), atoms)
    positions = (
        range(1, box.positions + 1) if shots is None else rng.sample(range(1, box.positions + 1), shots)
    )
    rays, unknown = shown(box, hidden, positions)
    start = time.perf_counter()
    solution = solve(width, height, atoms, atoms, rays)
    ranked = next_shots(solution, unknown)
    took = time.perf_counter() - start
    undecided = int((solution.backbone == -1).sum())
    best = f", best shot {ranked[0].position}" if ranked else ""
    return took, f"{solution.count} ({solution.count.method}), {undecided} cells undecided{best}"


def range_case(seed: int) -> tuple[float, str]:
    rng = random.Random(seed)
    box = Box(8, 8)
    hidden = rng.sample(range(64), rng.randint(3, 6))
    rays, _ = shown(box, hidden, rng.sample(range(1, 33), 8))
    config = Config(3, 8)
    object.__setattr__(config, "atoms_max", 6)  # until configurations carry a range (issue 30 section 1)
    start = time.perf_counter()
    answer = Decoder(config, source="compute").decode(square_game(8, rays))
    return time.perf_counter() - start, f"{answer.count:,} exact={answer.exact}"


def engine_case(seed: int) -> tuple[float, str]:
    """Seconds of the Decoder over seconds of today's calls, on the same A4_B8 game."""
    rng = random.Random(seed)
    config = Config(4, 8)
    hidden = rng.sample(range(64), 4)
    rays, _ = shown(Box(8, 8), hidden, rng.sample(range(1, 33), 3))
    game = square_game(8, rays)
    start = time.perf_counter()
    found = decode.candidates(config, game, source="compute")
    ranked_shots(config, game, found)
    today = time.perf_counter() - start
    start = time.perf_counter()
    answer = Decoder(config, source="compute").decode(game)
    now = time.perf_counter() - start
    assert answer.found is not None and answer.found.count == found.count
    return now, f"today {today:.3f} s, ratio {now / today:.2f}"


def cpsat_case(seed: int) -> tuple[float, str]:
    """OR-Tools CP-SAT (one worker) on the 10 x 10 full spectrum's clauses: its first solve and
    the backbone (solution-guided, as ``bbcore.solver._backbone``), against CaDiCaL's same."""
    from ortools.sat.python import cp_model

    from bbcore import solver

    rng = random.Random(seed)
    box = Box(10, 10)
    rays, _ = shown(box, rng.sample(range(box.cells), 10), range(1, box.positions + 1))
    encoding = solver.Encoding(box, 10, 10, rays)
    start = time.perf_counter()
    _, _, Solver = solver._pysat()
    with Solver(name=solver.SOLVER, bootstrap_with=encoding.hard) as sat:
        guard = solver._Interrupter(sat, None)
        selectors = list(encoding.selectors.values())
        guard.solve(selectors)
        cadical_first = time.perf_counter() - start
        model = guard.model()
        expected = solver._backbone(guard, box, selectors, [tuple(c for c in range(100) if model[c] > 0)])
    cadical = time.perf_counter() - start
    start = time.perf_counter()
    cp = cp_model.CpModel()
    x = [None] + [cp.NewBoolVar("") for _ in range(encoding.top)]
    for clause in encoding.hard:
        cp.AddBoolOr([x[v] if v > 0 else x[-v].Not() for v in clause])
    for selector in selectors:
        cp.Add(x[selector] == 1)
    engine = cp_model.CpSolver()
    engine.parameters.num_workers = 1
    assert engine.Solve(cp) in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    first = time.perf_counter() - start
    atom = [bool(engine.Value(x[c + 1])) for c in range(box.cells)]
    seen_atom, seen_empty, backbone = list(atom), [not a for a in atom], [-1] * box.cells
    for c in range(box.cells):
        if seen_atom[c] and seen_empty[c]:
            continue
        want = not seen_atom[c]  # ask for the value not seen yet
        cp.ClearAssumptions()
        cp.AddAssumption(x[c + 1] if want else x[c + 1].Not())
        if engine.Solve(cp) in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            for i in range(box.cells):
                seen_atom[i] |= bool(engine.Value(x[i + 1]))
                seen_empty[i] |= not engine.Value(x[i + 1])
        else:
            backbone[c] = int(not want)
            cp.ClearAssumptions()
            cp.Add(x[c + 1] == int(not want))
    took = time.perf_counter() - start
    assert backbone == expected.tolist()
    return (
        took,
        f"CP-SAT first {first:.2f} s; CaDiCaL first {cadical_first:.2f} s, with backbone {cadical:.2f} s",
    )


def cubes_case(seed: int) -> tuple[float, str]:
    """Each shown ray of the 20 x 12 game of 12 rays alone: its cubes (the plain path search's
    leaves with that ray only), over the cells the backbone of the whole game leaves undecided."""
    from bbcore import solver

    rng = random.Random(seed)
    box = Box(20, 12)
    hidden = rng.sample(range(box.cells), 15)
    rays, _ = shown(box, hidden, rng.sample(range(1, box.positions + 1), 12))
    start = time.perf_counter()
    encoding = solver.Encoding(box, 15, 15, rays)
    _, _, Solver = solver._pysat()
    with Solver(name=solver.SOLVER, bootstrap_with=encoding.hard) as sat:
        guard = solver._Interrupter(sat, None)
        selectors = list(encoding.selectors.values())
        guard.solve(selectors)
        model = guard.model()
        first = [tuple(c for c in range(box.cells) if model[c] > 0)]
        backbone = solver._backbone(guard, box, selectors, first)
    figures = []
    for ray in rays:
        search = solver._PathSearch(box, 15, 15, [ray], backbone, CUBE_SECONDS, None)
        ended = search._leaves(solver.ENUMERATION_LIMIT) is not None
        reached = f"{len(search.leaves):,}" if ended else f"past {CUBE_SECONDS:g} s at {len(search.leaves):,}"
        figures.append(f"{ray[0]}: {reached} ({search.branches:,} branches)")
    undecided = int((backbone == solver.UNDECIDED).sum())
    return time.perf_counter() - start, f"{undecided} cells undecided; cubes per ray: " + "; ".join(figures)


def run(case: str, seed: int) -> tuple[float, str]:
    if case == "10x10-full":
        return solver_case(10, 10, 10, None, seed)
    if case == "10x10-partial":
        return solver_case(10, 10, 10, 12, seed)
    if case == "20x12-full":
        return solver_case(20, 12, 15, None, seed)
    if case == "20x12-partial":
        return solver_case(20, 12, 15, 12, seed)
    if case == "8x8-range":
        return range_case(seed)
    if case == "cpsat":
        return cpsat_case(seed)
    if case == "cubes":
        return cubes_case(seed)
    return engine_case(seed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cases", nargs="*", choices=CASES + MEASURED, default=list(CASES))
    args = parser.parse_args()
    print(f"load before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    run("engine", 0)  # numba's kernels loaded before any timing
    for case in args.cases:
        times = []
        for seed in range(1, args.runs + 1):
            start = time.perf_counter()
            try:
                took, what = run(case, seed)
            except SolverTimeout as refused:  # counted as its time: past the target in any case
                took, what = time.perf_counter() - start, f"refused: {refused}"
            times.append(took)
            print(f"  {case} seed {seed}: {took:.2f} s, {what}", flush=True)
        print(f"{case}: median {statistics.median(times):.2f} s, slowest {max(times):.2f} s", flush=True)
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"peak memory: {own:.0f} MB (this process), {children:.0f} MB (the counters' processes)")
    print(f"load after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
