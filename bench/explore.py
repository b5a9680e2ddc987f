"""Benchmark: a whole exploration against the SQLite write floor, in one run.

    python bench/explore.py                 # A4_B6 and A4_B8, 3 runs each
    python bench/explore.py A4_B6 --runs 5 --workers 2

For each configuration and run, in fresh temporary files:

- ``explore``: ``bbcore.explore.explore`` in a fresh process (so numba's
  loading and the worker processes are counted), molecules stored and
  spectral groups built: wall time, molecules per second, peak memory
  (the largest resident set of the process and of any one worker), and
  when the last phase (the configuration's indexes and its spectral groups)
  began;
- ``floor (same schema)``: the same rows, computed beforehand, written with
  the DB-API's ``executemany`` alone into bbcore's own table (its primary
  key; the spectrum and canonical_number indexes of a configuration are
  only built when it completes) in one transaction;
- ``floor (plain table)``: the same into a table with the same columns and
  no key or index.

It prints the median of the runs and the ratio explore / floor, both
measured in the same run, since the machines are shared and noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bbcore.config import parse_config  # noqa: E402
from bbcore.engine import explore_range  # noqa: E402
from bbcore.full import INSERT_MOLECULES  # noqa: E402
from bbcore.store import MOLECULE_COLUMNS, db, open_database  # noqa: E402

STAMP = "2026-01-01T00:00:00+00:00"
CHILD = """
import json, resource, sys, time
start = time.perf_counter()
from bbcore.config import parse_config
from bbcore.explore import explore
phases = {}
def progress(p):
    phases.setdefault(p.phase, time.perf_counter() - start)
status = explore(parse_config(sys.argv[1]), sys.argv[2], workers=int(sys.argv[3]) or None,
                 progress=progress)
wall = time.perf_counter() - start
# VmHWM, not RUSAGE_SELF: Linux carries ru_maxrss across exec, so the child
# would report the resident set of this benchmark (which holds every row).
me = int(next(l for l in open("/proc/self/status") if l.startswith("VmHWM")).split()[1])
children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"status": status, "wall": wall, "peak_mb": max(me, children) / 1024,
                  "spectrums_at": phases.get("spectrums", wall)}))
"""


def run_explore(config: str, path: Path, workers: int) -> dict:
    """One exploration in a fresh Python process."""
    out = subprocess.run(
        [sys.executable, "-c", CHILD, config, str(path), str(workers)],
        check=True,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def all_rows(config_name: str) -> list[tuple]:
    """Every row of a configuration, as the exploration writes them (untimed)."""
    config = parse_config(config_name)
    rows = []
    for start in range(1, config.nb_mol + 1, 65536):
        batch = explore_range(config, start, min(start + 65536, config.nb_mol + 1))
        rows.extend(batch.rows(STAMP, STAMP))
    return rows


def floor_same_schema(rows: list[tuple], path: Path) -> float:
    """Seconds to write the rows into bbcore's own Molecules table with executemany."""
    open_database(path)
    db.close()
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA journal_mode=wal")
    connection.execute("PRAGMA synchronous=normal")
    start = time.perf_counter()
    connection.execute("BEGIN")
    connection.executemany(INSERT_MOLECULES, rows)
    connection.execute("COMMIT")
    elapsed = time.perf_counter() - start
    connection.close()
    return elapsed


def floor_plain(rows: list[tuple], path: Path) -> float:
    """Seconds to write the rows into a table with the same columns, no key, no index."""
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute(f"CREATE TABLE molecules ({', '.join(MOLECULE_COLUMNS)})")
    placeholders = ", ".join("?" * len(MOLECULE_COLUMNS))
    start = time.perf_counter()
    connection.execute("BEGIN")
    connection.executemany(f"INSERT INTO molecules VALUES ({placeholders})", rows)
    connection.execute("COMMIT")
    elapsed = time.perf_counter() - start
    connection.close()
    return elapsed


def main() -> None:
    """Run the benchmark and print a table of medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("configs", nargs="*", default=["A4_B6", "A4_B8"])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workers", type=int, default=0, help="0: bbcore's default (all cores)")
    args = parser.parse_args()
    print(f"cores: {os.cpu_count()}, runs: {args.runs}, workers: {args.workers or 'default'}")
    for name in args.configs:
        rows = all_rows(name)
        explore_s, same_s, plain_s, peaks, last_phase = [], [], [], [], []
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory() as tmp:
                tmp = Path(tmp)
                result = run_explore(name, tmp / "explore.sqlite", args.workers)
                explore_s.append(result["wall"])
                last_phase.append(result["wall"] - result["spectrums_at"])
                peaks.append(result["peak_mb"])
                same_s.append(floor_same_schema(rows, tmp / "same.sqlite"))
                plain_s.append(floor_plain(rows, tmp / "plain.sqlite"))
        e, s, p = (statistics.median(x) for x in (explore_s, same_s, plain_s))
        print(f"{name}: {len(rows):,} molecules")
        print(
            f"  explore               {e:7.2f} s  {len(rows) / e:10,.0f} mol/s  "
            f"peak {max(peaks):.0f} MB  (indexes and spectral groups: "
            f"{statistics.median(last_phase):.2f} s)"
        )
        print(f"  floor (same schema)   {s:7.2f} s  ratio explore/floor {e / s:.2f}")
        print(f"  floor (plain table)   {p:7.2f} s  ratio explore/floor {e / p:.2f}")
        print(
            f"  runs: explore {[round(x, 2) for x in explore_s]}, "
            f"same {[round(x, 2) for x in same_s]}, plain {[round(x, 2) for x in plain_s]}"
        )


if __name__ == "__main__":
    main()
