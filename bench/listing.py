"""Benchmark: a long ``bbcore show`` listing piped to ``/dev/null``, this tree against another, paired.

    python bench/listing.py --against /tmp/main      # a copy of the code to compare with
    python bench/listing.py --against /tmp/main --runs 5 -- show A4_B8 --from 1 --to 5000

Each run is a fresh ``bbcore`` process (``python -m bbcore``, the tree
first on ``PYTHONPATH``), its output piped to ``/dev/null``: the path a
script or ``| head`` takes, where lines are written as they are made.  The
two trees take turns (A B, B A, A B, ...), so that the load of the shared
machine falls on both alike; each is run once first, unmeasured, to compile
and cache its numba kernels.  Printed: the lines written, the medians of
wall and CPU seconds (the process's own user + system), and the same-run
ratio A/B of the medians.  ``--against`` is a copy of the other code, e.g.
``git archive main | tar -x -C /tmp/main``.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(tree: Path, args: list[str], db: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one ``bbcore ARGS > /dev/null`` with the code of ``tree``."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "bbcore", "--db", str(db), *args],
        stdout=subprocess.DEVNULL,
        check=True,
        env=env,
        cwd=tree,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, required=True, help="a copy of the code to compare with")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("command", nargs="*", default=["show", "A4_B8", "--from", "1", "--to", "5000"])
    args = parser.parse_args()
    trees = {"A (this tree)": ROOT, "B (--against)": args.against.resolve()}
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "none.sqlite"  # none: show computes the boards
        lines = subprocess.run(
            [sys.executable, "-m", "bbcore", "--db", str(db), *args.command],
            capture_output=True,
            check=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            cwd=ROOT,
        ).stdout.count(b"\n")
        for tree in trees.values():
            run(tree, args.command, db)  # numba's kernels compiled and cached, unmeasured
        figures: dict[str, list[tuple[float, float]]] = {name: [] for name in trees}
        for index in range(args.runs):
            order = list(trees.items()) if index % 2 == 0 else list(trees.items())[::-1]
            for name, tree in order:
                figures[name].append(run(tree, args.command, db))
    print(f"bbcore {' '.join(args.command)} > /dev/null: {lines:,} lines, {args.runs} runs each, paired")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores at the end")
    medians = {}
    for name, runs in figures.items():
        wall = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        medians[name] = wall, cpu
        print(f"  {name:14s} wall median {wall:6.2f} s   cpu median {cpu:6.2f} s")
    (wall_a, cpu_a), (wall_b, cpu_b) = medians.values()
    print(f"  A/B            wall {wall_a / wall_b:.3f}   cpu {cpu_a / cpu_b:.3f}")


if __name__ == "__main__":
    main()
