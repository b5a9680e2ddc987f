"""Benchmark: summing a compact run's range profiles at the end of its tracing (``trace.sum_profiles``).

    python bench/profiles.py FOLDER --runs 3                     # a folder of range profile files
    python bench/profiles.py FOLDER --runs 3 --baseline ../main  # and another checkout, alternating
    python bench/profiles.py --make A6_B8 --runs 3 --baseline ../main

A compact run keeps each traced range's profile in a file (``<database>.shards/<config>/profiles``)
until every range is traced, then sums them into ``Profiles``.  FOLDER is such a folder (copy it
from a run before it ends: the run deletes it), or ``--make CONFIG`` traces CONFIG's ranges into a
temporary folder first (the tracing is not timed).

Each run is a fresh process that sums every file of the folder with the checkout's code (its
``sum_profiles``; a checkout without it folds ``PROFILES_AT_ONCE`` files at a time into one
running total, as releases before it did) and prints its seconds, its peak resident memory and
the rows summed.  With ``--baseline`` the two checkouts alternate and the ratio of their medians
is printed, with a check that both sums are equal.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from bbcore.compact.shards import range_name, shard_count  # noqa: E402
from bbcore.compact.trace import TraceJob, profile_file, range_size, trace_range  # noqa: E402
from bbcore.config import parse_config  # noqa: E402
from bbcore.runner import LocalRunner  # noqa: E402

SUM = """
import hashlib, resource, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[2])
import numpy as np
from bbcore.compact import trace
paths = sorted(Path(sys.argv[1]).glob("*.npy"))
start = time.perf_counter()
if hasattr(trace, "sum_profiles"):
    total = trace.sum_profiles(paths)
else:  # releases before sum_profiles: one running total
    total = trace.merge_profiles([])
    for first in range(0, len(paths), trace.PROFILES_AT_ONCE):
        total = trace.merge_profiles(
            [total, *(trace.read_profile(path) for path in paths[first : first + trace.PROFILES_AT_ONCE])]
        )
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
digest = hashlib.sha256(np.ascontiguousarray(total).tobytes()).hexdigest()[:16]
print(f"{seconds:.3f} {peak} {len(paths)} {len(total)} {int(total[:, 9].sum())} {digest}")
"""


def summed(folder: Path, tree: Path) -> tuple[float, int, int, int, int, str]:
    """One fresh process summing ``folder`` with ``tree``'s code: seconds, peak RSS, files, rows,
    molecules, a digest of the sum."""
    out = subprocess.run(
        [sys.executable, "-c", SUM, str(folder), str(tree)],
        env={**os.environ, "PYTHONPATH": str(tree)},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return float(out[0]), int(out[1]), int(out[2]), int(out[3]), int(out[4]), out[5]


def make_profiles(name: str, folder: Path) -> Path:
    """Trace every range of ``name`` into ``folder`` (not timed); its profiles folder."""
    config = parse_config(name)
    size, shards = range_size(config), shard_count(config)
    profiles = folder / "profiles"
    profiles.mkdir(parents=True)
    jobs = (
        TraceJob(config, start, min(start + size, config.nb_mol + 1), shards, str(folder))
        for start in range(1, config.nb_mol + 1, size)
    )
    runner = LocalRunner(os.cpu_count() or 1)
    try:
        for job, result in runner.run(trace_range, jobs, threading.Event()):
            path = profiles / f"{range_name(job.start, job.stop)}.npy"
            np.save(path, profile_file(result.profile, job.start))
    finally:
        runner.close()
    return profiles


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", type=Path, help="a folder of range profile files")
    parser.add_argument("--make", metavar="CONFIG", help="trace CONFIG's ranges first")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline", type=Path, help="another checkout, run alternately")
    args = parser.parse_args()
    if (args.folder is None) == (args.make is None):
        parser.error("give a FOLDER or --make CONFIG")
    with tempfile.TemporaryDirectory(prefix="profiles-bench-") as scratch:
        folder = make_profiles(args.make, Path(scratch)) if args.make else args.folder
        trees = [("this", ROOT)] + ([("baseline", args.baseline.resolve())] if args.baseline else [])
        times: dict[str, list[float]] = {name: [] for name, _ in trees}
        digests = set()
        print(f"load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        for run in range(args.runs):
            for name, tree in trees:
                seconds, peak, files, rows, molecules, digest = summed(folder, tree)
                times[name].append(seconds)
                digests.add(digest)
                print(
                    f"run {run + 1} {name}: {seconds:.2f} s, peak RSS {peak / 1e6:,.0f} MB, "
                    f"{files:,} files, {rows:,} rows summed, {molecules:,} molecules"
                )
        medians = {name: statistics.median(values) for name, values in times.items()}
        line = ", ".join(f"{name} median {value:.2f} s" for name, value in medians.items())
        if args.baseline:
            line += f"; this / baseline {medians['this'] / medians['baseline']:.2f}x"
            line += ", the same sums" if len(digests) == 1 else ", THE SUMS DIFFER"
        print(f"{line}; load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        if len(digests) > 1:
            raise SystemExit(1)


if __name__ == "__main__":
    main()
