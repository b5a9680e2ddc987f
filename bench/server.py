"""Benchmark: an exploration into a PostgreSQL server against the same into an SQLite file, in one run.

    python bench/server.py                        # A4_B7, 3 runs, a throwaway server of this machine
    python bench/server.py A4_B8 --runs 5 --workers 2
    python bench/server.py A4_B8 --url postgresql://me@db.example/bench   # an existing (empty) database
    python bench/server.py A5_B8 --store compact  # the compact store (shard files on local disk)

For each run, alternately: ``bbcore explore CONFIG --store STORE`` in a fresh
process into a fresh SQLite file, and into a fresh database of the server
(the throwaway server of ``tests/postgres.py`` unless ``--url``; with
``--url``, the configuration is reset before each run).  It prints the
median wall time of each store and their ratio (server / SQLite), measured
in the same run, since the machines are shared and noisy.

The throwaway server runs with ``synchronous_commit=off`` and fsync on: as
SQLite's WAL with ``synchronous=NORMAL``, a commit is not waited for on
disk, but the files are synced at checkpoints.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from bbcore.config import parse_config  # noqa: E402


def explore(db: str, config: str, workers: int, store: str) -> float:
    """Seconds of ``bbcore --db DB explore CONFIG --store STORE`` in a fresh process."""
    argv = [sys.executable, "-m", "bbcore", "--db", db, "explore", config, "--store", store]
    if workers:
        argv += ["--workers", str(workers)]
    start = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True, cwd=ROOT)
    return time.perf_counter() - start


def reset(db: str, config: str) -> None:
    """Delete the configuration from an existing database (``--url``)."""
    subprocess.run(
        [sys.executable, "-m", "bbcore", "--db", db, "reset", config, "--yes"], capture_output=True, cwd=ROOT
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", nargs="?", default="A4_B7")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workers", type=int, default=0, help="worker processes (default: all cores)")
    parser.add_argument("--store", choices=("full", "compact"), default="full")
    parser.add_argument("--url", default=None, help="an existing server database instead of a throwaway one")
    args = parser.parse_args()
    config = parse_config(args.config)
    server = None
    if args.url is None:
        from postgres import PostgresServer, binaries

        server = PostgresServer(binaries(), settings={"fsync": "on", "synchronous_commit": "off"})
        server.start()
    times: dict[str, list[float]] = {"sqlite": [], "server": []}
    try:
        for run in range(args.runs):
            with tempfile.TemporaryDirectory(prefix="bbtui-bench-") as folder:
                lite = str(Path(folder) / "bench.sqlite")
                times["sqlite"].append(explore(lite, args.config, args.workers, args.store))
            if server is not None:
                name = server.create_database()
                url = server.url(name)
            else:
                url = args.url
                reset(url, args.config)
            times["server"].append(explore(url, args.config, args.workers, args.store))
            if server is not None:
                server.drop_database(name)
            print(
                f"run {run + 1}: sqlite {times['sqlite'][-1]:.2f} s, server {times['server'][-1]:.2f} s",
                flush=True,
            )
    finally:
        if server is not None:
            server.stop()
    sqlite, on_server = statistics.median(times["sqlite"]), statistics.median(times["server"])
    print(f"{config.name} {args.store}, {config.nb_mol:,} molecules, median of {args.runs}:")
    print(f"  sqlite  {sqlite:7.2f} s  {config.nb_mol / sqlite:,.0f} molecules/s")
    print(f"  server  {on_server:7.2f} s  {config.nb_mol / on_server:,.0f} molecules/s")
    print(f"  server / sqlite: {on_server / sqlite:.2f}x")


if __name__ == "__main__":
    main()
