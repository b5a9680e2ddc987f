"""Benchmark: ``bbcore copy`` both ways, file -> server and server -> file: seconds, rows/s, peak memory.

    python bench/copying.py --db PATH --url postgresql://USER@HOST/DB A4_B8
    python bench/copying.py --db PATH --url URL A4_B8 --runs 3 --page 2000

The configuration must be complete in the file.  Each run is a fresh
``bbcore`` process per direction (``copy --replace`` into the server, then
from the server into a new file), timed from outside; ``ru_maxrss`` is the
peak resident set of the child processes so far (the largest of the two
directions: it can only grow).  Prints one line per run and the medians.
The machine is shared: quote the load beside the figures.

Measured (2 cores, a throwaway server of this machine started by
tests/postgres.py with fsync off, load average 7.5 to 8.8 from other agents):

    A4_B8 full (635,376 molecules, 637,650 rows in all with its Spectrums and
    ExploredRanges, a 184 MB file; exploring it took 21.3 s), page 10,000, 3 runs:
      file -> server 17.7 / 21.3 / 22.2 s (median 21.3 s, 29,900 rows/s)
      server -> file 16.3 / 16.0 / 15.2 s (median 16.0 s, 39,900 rows/s)
      file -> file (for scale) 15.2 / 14.3 s
      peak resident 172 to 186 MB whatever the page (1,000 or 10,000 rows): the
      target file's 64 MB SQLite page cache and its index builds, over the 63 MB
      that ``bbcore status`` takes; A4_B5 (12,650 molecules) copies in 63 MB.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def timed(*args: str) -> tuple[float, str]:
    """Seconds of one ``bbcore`` command (it must succeed), and what it printed."""
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "bbcore", *args], capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"bbcore {' '.join(args[2:])} failed: {result.stderr.strip()}")
    return time.perf_counter() - started, result.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config")
    parser.add_argument("--db", required=True, help="the SQLite file holding the configuration")
    parser.add_argument("--url", required=True, help="a server database the copy may write")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--page", type=int, default=10_000)
    args = parser.parse_args()
    page = ("--page", str(args.page))
    there, back, count = [], [], 0
    with tempfile.TemporaryDirectory() as folder:
        for run in range(args.runs):
            target = Path(folder) / f"back{run}.sqlite"
            seconds, line = timed("--db", args.db, "copy", args.config, args.url, "--replace", *page)
            there.append(seconds)
            count = int(line.split(": ")[1].split(" row")[0].replace(",", ""))
            back.append(timed("--db", args.url, "copy", args.config, str(target), *page)[0])
            print(f"run {run + 1}: file -> server {there[-1]:.1f} s, server -> file {back[-1]:.1f} s")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    for name, seconds in (("file -> server", there), ("server -> file", back)):
        median = statistics.median(seconds)
        print(f"{name}: median {median:.1f} s of {len(seconds)}, {count / median:,.0f} rows/s")
    load = Path("/proc/loadavg").read_text().split()[:3]
    print(f"rows: {count:,}; peak resident of a copy: {peak:.0f} MB; load {' '.join(load)}")


if __name__ == "__main__":
    main()
