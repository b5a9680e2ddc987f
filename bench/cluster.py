"""Benchmark: a compact exploration on a local Dask cluster against the local pool, in one run.

    python bench/cluster.py                    # A5_B8, 3 runs each, 2 workers
    python bench/cluster.py A4_B8 --runs 5 --workers 2

Starts a real ``dask scheduler`` and ``--workers`` ``dask worker``
processes (one thread each) on 127.0.0.1, then alternates, in fresh
temporary files and fresh processes:

- ``local``: ``bbcore explore CONFIG --store compact --workers N``;
- ``cluster``: ``bbcore explore CONFIG --store compact --cluster ADDRESS``
  (the shard files in a temporary folder next to the database).

It prints each run's wall time and the client's peak resident memory (with
its local workers, for ``local``), the Dask workers' peak over all runs, then
the medians and the ratio cluster / local measured in the same run, and
checks that both runs found the same ambiguous spectra.  The cluster is
stopped at the end, leaving no process behind.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from dask_local import ENV, LocalDask  # noqa: E402


def run(args: list[str]) -> tuple[float, int]:
    """Run ``bbcore`` with ``args`` in a fresh process: wall seconds and peak RSS in MB."""
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "bbcore", *args], env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"bbcore {' '.join(args)} failed: {process.stderr.read().decode()[-500:]}")
    return wall, usage.ru_maxrss // 1024


def worker_peak(pid: int) -> int:
    """A running process's peak resident memory so far, in MB (VmHWM)."""
    with open(f"/proc/{pid}/status") as status:
        return int(next(line for line in status if line.startswith("VmHWM")).split()[1]) // 1024


def spectra(path: Path, config: str) -> list[tuple]:
    """The families found (one row each, ``store.Family``), to check that both runs agree."""
    with sqlite3.connect(path) as connection:
        return connection.execute(
            'SELECT canonical_number, spectrum, nb_mol, spectra FROM "Families" '
            "WHERE config = ? ORDER BY position",
            (config,),
        ).fetchall()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("config", nargs="?", default="A5_B8")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f}, {os.cpu_count()} cores")
    times: dict[str, list[float]] = {"local": [], "cluster": []}
    with tempfile.TemporaryDirectory(prefix="cluster-bench-") as folder:
        started = time.perf_counter()
        dask = LocalDask(Path(folder), workers=args.workers)
        up = time.perf_counter() - started
        print(f"scheduler and {args.workers} workers up in {up:.1f} s: {dask.address}")
        try:
            for index in range(args.runs):
                found = {}
                for kind in ("local", "cluster"):
                    path = Path(folder) / f"{kind}-{index}.sqlite"
                    command = ["--db", str(path), "explore", args.config, "--store", "compact"]
                    if kind == "cluster":
                        shards = Path(folder) / f"shards-{index}"
                        command += ["--cluster", dask.address, "--shards", str(shards)]
                    else:
                        command += ["--workers", str(args.workers)]
                    wall, rss = run(command)
                    times[kind].append(wall)
                    found[kind] = spectra(path, args.config)
                    print(f"run {index + 1} {kind:7}  {wall:7.2f} s  client peak {rss} MB")
                assert found["local"] == found["cluster"], "the cluster found other spectra"
            peaks = [worker_peak(process.pid) for process in dask.workers.values()]
            print(f"dask workers' peak memory over all runs: {', '.join(f'{p} MB' for p in peaks)}")
        finally:
            dask.close()
    local, cluster = statistics.median(times["local"]), statistics.median(times["cluster"])
    print(
        f"{args.config} medians of {args.runs}: local {local:.2f} s, cluster {cluster:.2f} s "
        f"({cluster / local:.2f}x)"
    )
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
