"""Benchmark: a compact exploration end to end against the engine's floor, in one run.

    python bench/compact.py A6_B8 --runs 3            # floor and compact, alternating
    python bench/compact.py A5_B8 --runs 1 --full-db PATH   # and compare the report with a full store

For each run, in fresh processes and fresh temporary files:

- ``floor``: the engine alone tracing every molecule of the configuration
  (``engine.trace_batch`` on every number, in ranges of 65,536 on the same
  local runner and workers as the exploration), nothing stored;
- ``compact``: ``bbcore explore CONFIG --store compact`` (a fresh process:
  numba's loading, the workers, tracing, grouping and writing the result are
  all counted): wall time, peak resident memory of the whole process tree
  (sampled every 0.2 s), peak extra disk (the database and its shard folder,
  sampled every 0.2 s).

Then, on the last compact database, each reader in a fresh process:
``bbcore report``, ``bbcore groups`` (its first page: the output is cut after
60 lines) and ``bbcore status``.  With ``--full-db``, the report of the same
configuration in that full store is compared with the compact one, line for
line.  The medians and the ratio compact / floor, both measured in this run,
are printed; the machine's load average is printed at the start and end.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bbcore.config import Config, parse_config  # noqa: E402

BATCH = 1 << 16
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

FLOOR = """
import sys, threading, time
start = time.perf_counter()
sys.path.insert(0, sys.argv[4])
from bench.compact import floor_run
print(floor_run(sys.argv[1], int(sys.argv[2]), start))
"""


def trace_every_molecule(job: tuple[Config, int, int]) -> int:
    """The floor's task: trace every molecule numbered start..stop-1 (nothing kept)."""
    import numpy as np

    from bbcore import engine
    from bbcore.numbering import atoms_of_numbers

    config, start, stop = job
    atoms = atoms_of_numbers(config, np.arange(start, stop, dtype=np.int64))
    engine.trace_batch(config, atoms)
    return stop - start


def floor_run(name: str, workers: int, start: float) -> float:
    """Trace every molecule of ``name`` on a local runner; the seconds since ``start``."""
    from bbcore.runner import LocalRunner

    config = parse_config(name)
    runner = LocalRunner(workers)
    jobs = ((config, low, min(low + BATCH, config.nb_mol + 1)) for low in range(1, config.nb_mol + 1, BATCH))
    try:
        traced = sum(count for _, count in runner.run(trace_every_molecule, jobs, threading.Event()))
    finally:
        runner.close()
    assert traced == config.nb_mol
    return time.perf_counter() - start


def tree_rss(pid: int) -> int:
    """Resident bytes of a process and all its descendants."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                parent = int(stat.read().rsplit(")", 1)[1].split()[1])
        except OSError:
            continue
        children.setdefault(parent, []).append(int(entry))
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        todo += children.get(current, [])
        try:
            with open(f"/proc/{current}/statm") as statm:
                total += int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except OSError:
            pass
    return total


def disk_use(paths: list[Path]) -> int:
    """Bytes in these files and folders (those that exist)."""
    total = 0
    for path in paths:
        if path.is_file():
            total += path.stat().st_size
        elif path.is_dir():
            for folder, _, files in os.walk(path):
                for name in files:
                    try:
                        total += os.stat(os.path.join(folder, name)).st_size
                    except OSError:
                        pass
    return total


def watched(command: list[str], disk: list[Path]) -> tuple[float, int, int, str]:
    """Run a command: its wall time, peak tree RSS, peak disk of ``disk``, and its stdout."""
    start = time.perf_counter()
    process = subprocess.Popen(command, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    peaks = [0, 0]

    def sample() -> None:
        while process.poll() is None:
            peaks[0] = max(peaks[0], tree_rss(process.pid))
            peaks[1] = max(peaks[1], disk_use(disk))
            time.sleep(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, _ = process.communicate()
    wall = time.perf_counter() - start
    sampler.join()
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed with status {process.returncode}")
    return wall, peaks[0], peaks[1], out


def timed_reader(db: Path, *words: str) -> float:
    """Seconds for one ``bbcore`` reader in a fresh process (``groups``: first 60 lines)."""
    start = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "bbcore", "--db", str(db), *words],
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert process.stdout is not None
    for count, _ in enumerate(process.stdout, 1):
        if count >= 60 and words[0] == "groups":
            break
    process.stdout.close()
    process.wait()
    return time.perf_counter() - start


def report_text(db: Path, name: str) -> str:
    """``bbcore report`` of a configuration."""
    result = subprocess.run(
        [sys.executable, "-m", "bbcore", "--db", str(db), "report", name],
        env={**ENV, "COLUMNS": "100"},
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout


def load() -> str:
    """The load averages."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", nargs="?", default="A5_B8")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--full-db", type=Path, help="a full store of the configuration: compare reports")
    parser.add_argument("--keep", type=Path, help="keep the last compact database at this path")
    args = parser.parse_args()
    config = parse_config(args.config)
    print(f"{config.name}: {config.nb_mol:,} molecules, {args.workers} workers; load {load()}")
    floors, walls, rss, disks = [], [], [], []
    folder = Path(tempfile.mkdtemp(prefix="compact-bench-"))
    db = folder / "compact.sqlite"
    try:
        for run in range(args.runs):
            out = subprocess.run(
                [sys.executable, "-c", FLOOR, config.name, str(args.workers), "", str(ROOT)],
                env=ENV,
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            floors.append(float(out.strip().splitlines()[-1]))
            for path in folder.iterdir():
                shutil.rmtree(path) if path.is_dir() else path.unlink()
            command = [sys.executable, "-m", "bbcore", "--db", str(db), "explore", config.name]
            command += ["--store", "compact", "--workers", str(args.workers)]
            wall, peak_rss, peak_disk, _ = watched(command, [folder])
            walls.append(wall)
            rss.append(peak_rss)
            disks.append(peak_disk)
            print(
                f"run {run + 1}: floor {floors[-1]:.2f} s, compact {wall:.2f} s "
                f"({wall / floors[-1]:.2f}x), peak RSS {peak_rss / 1e6:,.0f} MB, "
                f"peak disk {peak_disk / 1e6:,.1f} MB, final db {db.stat().st_size / 1e6:,.1f} MB; "
                f"load {load()}"
            )
        floor, wall = statistics.median(floors), statistics.median(walls)
        print(
            f"median of {args.runs}: floor {floor:.2f} s, compact {wall:.2f} s, ratio {wall / floor:.2f}x; "
            f"peak RSS {max(rss) / 1e6:,.0f} MB, peak disk {max(disks) / 1e6:,.1f} MB "
            f"({max(disks) / config.nb_mol:.2f} bytes a molecule)"
        )
        for words in (("report", config.name), ("groups", config.name), ("status",)):
            times = [timed_reader(db, *words) for _ in range(3)]
            print(f"bbcore {' '.join(words)}: median {statistics.median(times):.2f} s of 3 fresh processes")
        if args.full_db:
            same = report_text(db, config.name) == report_text(args.full_db, config.name)
            print(f"report compact vs {args.full_db}: {'identical' if same else 'DIFFERENT'}")
        if args.keep:
            shutil.copy(db, args.keep)
        print(f"load {load()}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
