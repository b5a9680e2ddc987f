"""Benchmark: memory and speed of ``bbcore export``, flat against the size of the table.

    python bench/export.py --db PATH                    # A4_B6, A4_B7, A4_B8 from PATH
    python bench/export.py --db PATH --configs A4_B8 --formats csv

Configurations missing from the database are explored into it first (A4_B8
takes minutes).  Each export runs in a fresh Python process, writing to
``/dev/null`` (``--to-file`` writes a real file in a temporary folder,
through the temporary-file-and-rename path), and reports:

- rows and characters written, wall time, rows per second;
- ``traced MB`` (with ``--tracemalloc``, in a second run, since tracing
  makes Python about ten times slower): the most Python memory alive at
  once during the export;
- ``RSS +MB``: the process's peak resident set during the export minus
  its resident set just before (the peak is reset through
  ``/proc/self/clear_refs`` when the kernel allows it).  It includes
  SQLite's page cache, which fills as the table is read, up to bbcore's
  ``cache_size`` (64 MiB); ``--cache-kib`` sets a smaller one to show the
  rest is flat;
- the same for a naive export that reads the whole table first
  (``fetchall``), as the reference of what streaming saves.

Streaming keeps both figures flat from A4_B6 (58,905 molecules) to A4_B8
(635,376 molecules); the naive export grows with the table.  Measured on
this shared 2-core machine (load 2 to 9, so the times are only indicative),
molecules table, database on tmpfs:

    config  fmt  mode       rows    MB out  traced MB  RSS +MB  RSS +MB (--cache-kib 2048)
    A4_B6   csv  stream     58,905    10.3       0.16     12.0      2.0
    A4_B7   csv  stream    211,876    40.8       0.16     47.8      2.1
    A4_B8   csv  stream    635,376   135.5       0.16     66.4      2.1
    A4_B8   json stream    635,376   436.1       0.03     66.4      2.0
    A4_B6   csv  naive      58,905    10.3          -     54.8
    A4_B7   csv  naive     211,876    40.8          -    208.4
    A4_B8   csv  naive     635,376   135.5          -    568.0

With bbcore's 64 MiB page cache the resident set grows until the cache is
full (A4_B7 onwards) and no further; Python's own memory never exceeds
0.2 MB.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bbcore.config import parse_config  # noqa: E402
from bbcore.explore import explore  # noqa: E402
from bbcore.queries import config_state  # noqa: E402
from bbcore.store import open_database  # noqa: E402

CHILD = """
import io, json, sys, time, tracemalloc
from pathlib import Path
from bbcore.config import parse_config
from bbcore.export import COLUMNS, SQL, WRITERS, export, export_to_file
from bbcore.store import db, open_database

db_path, name, table, fmt, mode, target, traced, cache_kib = sys.argv[1:9]
config = parse_config(name)
open_database(db_path, create=False)
if int(cache_kib):
    db.execute_sql(f"PRAGMA cache_size = -{int(cache_kib)}")


def status(field):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


class Counting(io.TextIOBase):
    def __init__(self, out):
        self.out, self.size = out, 0
    def write(self, text):
        self.size += len(text)
        return self.out.write(text)


try:
    Path("/proc/self/clear_refs").write_text("5")  # reset the peak RSS (VmHWM)
    reset = True
except OSError:
    reset = False
before = status("VmRSS")
if traced == "1":
    tracemalloc.start()
start = time.perf_counter()
if mode == "naive":
    rows = db.execute_sql(SQL[table], (config.name,)).fetchall()
    with open(target, "w") as handle:
        sink = Counting(handle)
        count = WRITERS[fmt](COLUMNS[table], rows, sink)
    size = sink.size
elif mode == "file":
    count = export_to_file(config, table, fmt, Path(target))
    size = Path(target).stat().st_size
else:
    with open(target, "w") as handle:
        sink = Counting(handle)
        count = export(config, table, fmt, sink)
    size = sink.size
wall = time.perf_counter() - start
peak = tracemalloc.get_traced_memory()[1] if traced == "1" else 0
print(json.dumps({"rows": count, "chars": size, "wall": wall, "traced_mb": peak / 2**20,
                  "rss_growth_mb": status("VmHWM") - before if reset else None,
                  "rss_before_mb": before}))
"""


def measure(
    db_path: Path, config: str, table: str, fmt: str, mode: str, target: str, traced: bool, cache_kib: int = 0
) -> dict:
    """One export in a fresh process (tracemalloc on when ``traced``: it makes Python ~10 times slower)."""
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            CHILD,
            str(db_path),
            config,
            table,
            fmt,
            mode,
            target,
            "1" if traced else "0",
            str(cache_kib),
        ],
        check=True,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    return json.loads(out.stdout)


def ensure_explored(db_path: Path, name: str) -> None:
    """Explore a configuration into the database unless it is complete there."""
    config = parse_config(name)
    open_database(db_path)
    if not config_state(config).complete:
        print(f"exploring {name} into {db_path} ...", flush=True)
        explore(config, db_path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--db", type=Path, required=True, help="database holding (or to hold) the configurations"
    )
    parser.add_argument("--configs", default="A4_B6,A4_B7,A4_B8")
    parser.add_argument("--formats", default="csv,json")
    parser.add_argument("--table", default="molecules", choices=("molecules", "spectrums"))
    parser.add_argument("--to-file", action="store_true", help="write real files instead of /dev/null")
    parser.add_argument("--no-naive", action="store_true", help="skip the fetchall reference")
    parser.add_argument(
        "--cache-kib",
        type=int,
        default=0,
        help="SQLite page cache for the export (default: bbcore's, 64 MiB)",
    )
    parser.add_argument(
        "--tracemalloc",
        action="store_true",
        help="also run each export under tracemalloc (slow) for the Python peak",
    )
    args = parser.parse_args()
    configs = args.configs.split(",")
    for name in configs:
        ensure_explored(args.db, name)
    print(
        f"{'config':7} {'fmt':4} {'mode':8} {'rows':>9} {'MB out':>8} {'s':>6} {'rows/s':>9} "
        f"{'traced MB':>9} {'RSS +MB':>8}"
    )
    with tempfile.TemporaryDirectory() as folder:
        for name in configs:
            for fmt in args.formats.split(","):
                modes = ["file" if args.to_file else "stream"] + ([] if args.no_naive else ["naive"])
                for mode in modes:
                    target = str(Path(folder) / f"{name}.{fmt}") if mode == "file" else "/dev/null"
                    r = measure(args.db, name, args.table, fmt, mode, target, False, args.cache_kib)
                    if args.tracemalloc:
                        r["traced_mb"] = measure(
                            args.db, name, args.table, fmt, mode, target, True, args.cache_kib
                        )["traced_mb"]
                    traced = f"{r['traced_mb']:.2f}" if args.tracemalloc else "-"
                    growth = "n/a" if r["rss_growth_mb"] is None else f"{r['rss_growth_mb']:.1f}"
                    print(
                        f"{name:7} {fmt:4} {mode:8} {r['rows']:>9,} {r['chars'] / 1e6:>8.1f} "
                        f"{r['wall']:>6.1f} {r['rows'] / r['wall']:>9,.0f} {traced:>9} "
                        f"{growth:>8}",
                        flush=True,
                    )
                    if mode == "file":
                        Path(target).unlink()


if __name__ == "__main__":
    main()
