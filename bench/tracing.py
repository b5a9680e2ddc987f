"""Benchmark: a compact run's tracing task, part by part, on a few ranges of numbers.

    python bench/tracing.py A7_B8 --runs 5
    python bench/tracing.py A7_B8 --runs 5 --baseline ../main

What ``compact.trace.trace_range`` does to each batch of ``TRACE_BATCH`` numbers, timed apart:
finding the canonical molecules (``canonical``), tracing their rays (``trace``), their keys
(``keys``), their profile rows (``profile``) and their records' numbers (``records``), over
ranges spread across the configuration (``--ranges``: a dense start, where nearly every number
is canonical, and sparser ones further on, where most are skipped). One process per run,
numba's cache warm (one batch run first, untimed); with ``--baseline``, the other checkout
runs the same in turn (alternating), and each part's medians and ratio this / baseline are
printed, measured in this run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from compact import ENV, ROOT, load

PARTS = ("canonical", "trace", "keys", "profile", "records")
RANGE = 1 << 23
"""Numbers a range: 8 M (A7_B8's dense start has 7.4 M canonical molecules in its first 8 M)."""

TIMED = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
from bbcore import engine
from bbcore.compact import trace
from bbcore.compact.shards import record_number_bits
from bbcore.config import parse_config

config = parse_config(sys.argv[2])
starts = [int(s) for s in sys.argv[3].split(",")]
size = int(sys.argv[4])
atoms, own = engine.canonical_molecules(config, 1, 1000)  # numba's start, untimed
partner, length, turns = engine.trace_batch(config, atoms)
engine.spectrum_keys(config, atoms, partner)
engine.ray_profile(partner, length, turns)
seconds = dict.fromkeys(("canonical", "trace", "keys", "profile", "records"), 0.0)
canonical = 0
for first in starts:
    for low in range(first, min(first + size, config.nb_mol + 1), trace.TRACE_BATCH):
        high = min(low + trace.TRACE_BATCH, first + size, config.nb_mol + 1)
        t0 = time.perf_counter()
        atoms, own = engine.canonical_molecules(config, low, high)
        t1 = time.perf_counter()
        partner, length, turns = engine.trace_batch(config, atoms)
        t2 = time.perf_counter()
        keys, orbit, shared, lowest = engine.spectrum_keys(config, atoms, partner)
        t3 = time.perf_counter()
        trace._profile(engine.ray_profile(partner, length, turns), orbit, own)
        t4 = time.perf_counter()
        record_number_bits(config, own, shared, lowest)
        t5 = time.perf_counter()
        for part, took in zip(seconds, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4)):
            seconds[part] += took
        canonical += len(own)
print(json.dumps({"seconds": seconds, "canonical": canonical}))
"""


def timed(tree: Path, name: str, starts: list[int], size: int) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", TIMED, str(tree), name, ",".join(map(str, starts)), str(size)],
        capture_output=True,
        text=True,
        env={**ENV, "PYTHONPATH": str(tree)},
        cwd=tree,
        check=True,
    ).stdout
    return json.loads(out.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", nargs="?", default="A7_B8")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--ranges",
        default="1,20000000,60000000,150000000",
        help="the first number of each range, comma-separated (default: A7_B8's dense start and three more)",
    )
    parser.add_argument("--size", type=int, default=RANGE, help=f"numbers a range (default {RANGE:,})")
    parser.add_argument("--baseline", type=Path, help="another checkout of bbtui, timed alternately")
    args = parser.parse_args()
    starts = [int(s) for s in args.ranges.split(",")]
    trees = {"this": ROOT} | ({"baseline": args.baseline.resolve()} if args.baseline else {})
    print(f"{args.config}: ranges of {args.size:,} numbers from {starts}; load {load()}", flush=True)
    found: dict[str, list[dict]] = {label: [] for label in trees}
    started = time.perf_counter()
    for run in range(args.runs):
        for label, tree in trees.items():
            result = timed(tree, args.config, starts, args.size)
            found[label].append(result)
            parts = ", ".join(f"{part} {s:.2f}" for part, s in result["seconds"].items())
            print(
                f"run {run + 1} {label}: {parts} s; {result['canonical']:,} canonical molecules", flush=True
            )
    print(f"medians of {args.runs} ({time.perf_counter() - started:.0f} s in all); load {load()}")
    medians = {
        label: {part: statistics.median(r["seconds"][part] for r in results) for part in PARTS}
        for label, results in found.items()
    }
    for part in (*PARTS, "total"):
        line = []
        for label in trees:
            value = sum(medians[label].values()) if part == "total" else medians[label][part]
            line.append(f"{label} {value:.3f} s")
        ratio = ""
        if args.baseline:
            mine, theirs = (
                sum(medians[label].values()) if part == "total" else medians[label][part] for label in trees
            )
            ratio = f", ratio this / baseline {mine / theirs:.2f}x" if theirs else ""
        print(f"  {part}: {', '.join(line)}{ratio}")


if __name__ == "__main__":
    main()
