"""Benchmark: ``bbcore check``, phase by phase: seconds, and the process's peak resident memory.

    python bench/check.py --db PATH A6_B8               # the default samples
    python bench/check.py --db PATH A4_B8 --runs 3      # medians of 3 runs
    python bench/check.py --db PATH A6_B8 --profile     # where the groups phase spends its time

Each run is a fresh Python process (numba's kernels from their cache) that
opens the file read-only, runs ``check.check`` with a progress callback
that notes when each phase starts and ends, and prints one JSON line: the
seconds of each phase, the total, ``ok``, and ``ru_maxrss`` (the peak
resident set of the whole run, SQLite's 64 MiB page cache included).  The
configuration must be explored in the file already.  The machine is shared:
quote the load beside the figures.

Measured (2 cores, load average 11 to 15 from other agents' test runs unless
said), the default samples (10,000 and 1,000):

    A6_B8 compact before Families (Spectrums rows and FamilyMolecules), 681 MB
      (669,622 families, 5,349,433 spectra, 1,804,946 molecules in them)
      before (abf1348): stopped at 480 s and 5.4 GB resident, no phase finished:
                        it loaded every spectrum and molecule of the groups first
      after, 2 runs:    integrity 16.6 / 25.2 s, groups 55.7 / 55.9 s, samples 2.1 / 2.4 s,
                        total 77.1 / 85.6 s (median 81.4 s), peak resident 320 MB;
                        `bbcore check A6_B8` from the shell: 87.6 s, 336 MB (/usr/bin/time)
      after the groups phase's transforms came as numbers and the cycle collector
      was paused (load 8 to 11), 2 runs: integrity 7.8 / 10.0 s, groups 17.6 / 18.0 s,
                        total 27.8 / 31.1 s (median 29.5 s), 319 MB; from the shell 27.5 s, 333 MB
    A6_B8 compact in the Families layout (frontier), 112 MB (669,622 Families rows,
      5,349,433 spectra derived, 1,804,946 molecules re-traced), 3 runs at load 2.1 to 2.5:
                        integrity 1.25 / 1.09 / 1.07 s, groups 8.57 / 8.29 / 8.09 s,
                        samples 0.95 s, total 11.56 / 11.01 / 10.75 s (median 11.01 s),
                        peak resident 311 MB (A4_B8 compact, 280 families, same code: 165 MB);
                        `bbcore check A6_B8` from the shell: 18.2 s, 327 MB (/usr/bin/time, load 4.4);
      with the type check of every value (groups.malformed), 3 runs at load 0.7 to 0.9:
                        groups 8.48 s, total 11.54 s (medians), 311 MB; from the shell 12.4 s, 326 MB
    A4_B8 full, 184 MB (635,376 molecules), one run each at load 11.5 to 14:
      before: 44.6 s (integrity 6.8, families 32.6), 334 MB
      after:  57.1 s (integrity 12.4, families 38.9), 333 MB: the same code but for the
              groups phase, which streams (0.4 -> 0.8 s); the difference is the load
    A3_B5 (2,300 molecules) in a 681 MB file that holds A6_B8 too, 3 runs:
      15.2 to 20.4 s (median 17.0 s), nearly all of it SQLite's integrity_check of the
      whole file; with --no-integrity 1.9 to 2.1 s

"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CHILD = """
import cProfile, json, pstats, resource, sys, time
from pathlib import Path
from bbcore import check
from bbcore.config import parse_config
from bbcore.store import open_database

path, name, profile = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
open_database(Path(path), create=False, write=False)
config = parse_config(name)
starts, ends = {}, {}

def progress(phase, done, total):
    now = time.monotonic()
    starts.setdefault(phase, now)
    ends[phase] = now

profiler = cProfile.Profile() if profile else None
started = time.monotonic()
if profiler:
    profiler.enable()
report = check.check(config, progress=progress)
if profiler:
    profiler.disable()
    pstats.Stats(profiler, stream=sys.stderr).sort_stats("cumulative").print_stats(30)
total = time.monotonic() - started
phases = {p: round(ends[p] - starts[p], 2) for p in starts}
print(json.dumps({"phases": phases, "seconds": round(total, 2), "ok": report.ok,
                  "maxrss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}))
"""


def run_once(db: Path, config: str, profile: bool) -> dict:
    """One check in a fresh process; its JSON line."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(db), config, "1" if profile else "0"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    if profile:
        print(done.stderr, file=sys.stderr)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("config")
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--profile", action="store_true", help="print cProfile's top 30 (one run)")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}, file {args.db.stat().st_size / 1e6:,.0f} MB")
    runs = [run_once(args.db, args.config, args.profile) for _ in range(args.runs)]
    for run in runs:
        print(json.dumps(run))
    phases = runs[0]["phases"]
    print(f"{'phase':<14} {'median s':>9}")
    for phase in phases:
        print(f"{phase:<14} {statistics.median(r['phases'].get(phase, 0) for r in runs):>9.2f}")
    print(f"{'total':<14} {statistics.median(r['seconds'] for r in runs):>9.2f}")
    print(f"peak resident {max(r['maxrss_mb'] for r in runs):,} MB; ok: {all(r['ok'] for r in runs)}")


if __name__ == "__main__":
    main()
