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
60 lines), ``bbcore status``, ``bbcore groups --size LARGEST`` and ``bbcore
decode`` of a stored (ambiguous) spectrum; and, in one process with the
database open, what the TUI asks on each key (``browse_latencies``): the
first, next and last page of 35 groups in both orders, every group and
families only, and a group opened (its row and its molecules), median of 5
in milliseconds.  With ``--full-db``, the report and the derived
``Spectrums`` rows (``bbcore export --table spectrums``) of the same
configuration in that full store are compared with the compact one, line
for line.  ``--db PATH`` measures the readers of an existing compact
database, without exploring; ``--readers report,decode`` times only those
(the TUI's keys are measured with ``browse``), ``--reader-runs N`` fresh
processes each, and ``--baseline TREE`` runs each reader in another checkout
of bbtui too (its code: ``PYTHONPATH`` and the working folder set to it),
alternating, with the ratio of the medians::

    python bench/compact.py A7_B8 --db A7_B8.sqlite --readers report,decode --reader-runs 7 --baseline ../main

The medians and the ratio compact / floor, both measured in this run,
are printed; the machine's load average is printed at the start and end.

Every run also prints its CPU time (the process and the workers it waited
for): on a shared machine, CPU seconds over the cores say what a quiet one
would take.  ``--phases`` runs the exploration through ``explore()`` (what
the CLI calls) and prints each phase's length, with the driver's CPU time
(every task's with ``--workers 1``); ``--tree PATH`` then runs another
checkout's bbcore, for a baseline measured in the same run::

    python bench/compact.py A6_B8 --runs 1 --no-floor --phases --workers 1 --tree /work/main
"""

from __future__ import annotations

import argparse
import os
import resource
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


PHASED = """
import sys, time
start = time.perf_counter()
sys.path.insert(0, sys.argv[4])
from bbcore.explore import explore
from bbcore.config import parse_config
from bbcore.store import open_database
open_database(sys.argv[1])
seen = {}

def progress(report):
    seen.setdefault(report.phase, (time.perf_counter() - start, time.process_time()))

config = parse_config(sys.argv[2])
status = explore(config, sys.argv[1], workers=int(sys.argv[3]), store="compact", progress=progress)
assert status == "complete", status
seen["complete"] = (time.perf_counter() - start, time.process_time())
print("PHASES", " ".join(f"{phase}={at:.2f},{cpu:.2f}" for phase, (at, cpu) in seen.items()))
"""
"""``--phases``: the exploration in a fresh process through ``explore()``, as the CLI calls it,
printing when each phase started (seconds since the process started)."""


def phase_lengths(line: str) -> str:
    """``tracing 9.3 s (CPU 9.1 s), grouping ...`` from a ``PHASES tracing=1.2,0.9 ...`` line.

    The CPU time is the driver's own: every task's with ``--workers 1`` (they run in it)."""
    marks = [
        (name, *map(float, at.split(","))) for name, at in (word.split("=") for word in line.split()[1:])
    ]
    lengths = [f"start {marks[0][1]:.1f} s"] + [
        f"{name} {end - at:.1f} s (CPU {end_cpu - cpu:.1f} s)"
        for (name, at, cpu), (_, end, end_cpu) in zip(marks, marks[1:])
    ]
    return ", ".join(lengths)


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


cpu_seconds: list[float] = []
"""The CPU time of each command ``watched`` ran."""


def watched(command: list[str], disk: list[Path], env: dict = ENV) -> tuple[float, int, int, str]:
    """Run a command: its wall time, peak tree RSS, peak disk of ``disk``, and its stdout.

    ``cpu_seconds[-1]`` is then its CPU time (user and system, the workers it
    waited for included): on a busy machine, CPU seconds over the cores say
    what the wall time would be on a quiet one."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
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
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_seconds.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    sampler.join()
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed with status {process.returncode}")
    return wall, peaks[0], peaks[1], out


def timed_reader(db: Path, *words: str, tree: Path = ROOT) -> float:
    """Seconds for one ``bbcore`` reader in a fresh process (``groups``: first 60 lines), run from
    the checkout ``tree`` (this one by default)."""
    start = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "bbcore", "--db", str(db), *words],
        env={**ENV, "PYTHONPATH": str(tree)},
        cwd=tree,
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


BROWSE = """
import statistics, sys, time
sys.path.insert(0, sys.argv[3])
from bbcore import queries
from bbcore.config import parse_config
from bbcore.store import open_database
open_database(sys.argv[1], write=False)
config = parse_config(sys.argv[2])
QUIET = sys.argv[4] == "quiet"  # only the spectrum and the largest size, no timings
PAGE = 35

def timed(what, call):
    if QUIET:
        return
    times = []
    for _ in range(5):
        start = time.perf_counter()
        call()
        times.append(1000 * (time.perf_counter() - start))
    print(f"  {what}: {statistics.median(times):.1f} ms")

for all_rows in (False, True):
    for order in ("canonical", "size"):
        count = queries.group_count(config, all_rows=all_rows)
        last = max(0, (count - 1) // PAGE)
        name = f"{'all' if all_rows else 'families'}, {order} order"
        timed(f"{name}: count", lambda: queries.group_count(config, all_rows=all_rows))
        for label, page in (("first", 0), ("next", 1), ("last", last), ("middle", last // 2)):
            timed(
                f"{name}: {label} page",
                lambda: queries.group_page(config, page, PAGE, all_rows=all_rows, order=order),
            )
count = queries.group_count(config, all_rows=True)

def open_group():
    row = queries.group_at(config, count // 2, all_rows=True, order="size")
    queries.molecules_with_spectrum(config, row.spectrum)

timed("a group opened (its row, its molecules)", open_group)
largest = max(queries.group_sizes(config))
timed(
    f"every group of {largest} molecules (--size)",
    lambda: queries.group_page(config, 0, 10**6, size=largest),
)
print("SPECTRUM", queries.group_at(config, count // 3, all_rows=True).spectrum)
print("LARGEST", largest)
"""


def browse_latencies(db: Path, name: str, quiet: bool = False) -> tuple[str, int]:
    """Print what the TUI's keys cost on a compact database (not when ``quiet``); return a stored
    spectrum, the largest size."""
    out = subprocess.run(
        [sys.executable, "-c", BROWSE, str(db), name, str(ROOT), "quiet" if quiet else "timed"],
        env=ENV,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    values = {}
    for line in out.splitlines():
        if line.startswith(("SPECTRUM", "LARGEST")):
            key, value = line.split()
            values[key] = value
        else:
            print(line)
    return values["SPECTRUM"], int(values["LARGEST"])


def export_spectrums(db: Path, name: str) -> str:
    """``bbcore export --table spectrums`` of a configuration."""
    return subprocess.run(
        [sys.executable, "-m", "bbcore", "--db", str(db), "export", name, "--table", "spectrums"],
        env=ENV,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


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


def compact_command(db: Path, config: Config, args: argparse.Namespace) -> list[str]:
    """The compact exploration's command: ``bbcore explore``, or ``PHASED`` with ``--phases``."""
    if args.phases:
        return [sys.executable, "-c", PHASED, str(db), config.name, str(args.workers), str(args.tree)]
    command = [sys.executable, "-m", "bbcore", "--db", str(db), "explore", config.name]
    return command + ["--store", "compact", "--workers", str(args.workers)]


def tree_env(tree: Path) -> dict:
    """The environment of a run of ``tree``'s bbcore: another tree's numba cache goes to a
    temporary folder, never into that tree."""
    if tree.resolve() == ROOT:
        return ENV
    return {
        **ENV,
        "PYTHONPATH": str(tree),
        "NUMBA_CACHE_DIR": str(Path(tempfile.gettempdir()) / "bench-numba"),
    }


def print_phases(out: str) -> None:
    """The phases' lengths, when the run printed them (``--phases``)."""
    for line in out.splitlines():
        if line.startswith("PHASES"):
            print(f"  phases: {phase_lengths(line)}")


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
    parser.add_argument("--db", type=Path, help="measure the readers of this compact database only")
    parser.add_argument("--no-floor", action="store_true", help="explore without measuring the floor")
    parser.add_argument(
        "--readers",
        type=lambda text: text.split(","),
        default=list(READERS),
        help=f"the readers to time, comma-separated (default: all of {','.join(READERS)})",
    )
    parser.add_argument("--reader-runs", type=int, default=3, help="fresh processes per reader (default 3)")
    parser.add_argument(
        "--baseline", type=Path, help="another checkout: each reader is run there too, alternating"
    )
    parser.add_argument("--phases", action="store_true", help="explore through explore(), timing each phase")
    parser.add_argument(
        "--tree", type=Path, default=ROOT, help="with --phases: the bbcore tree to run (a baseline)"
    )
    args = parser.parse_args()
    unknown = set(args.readers) - set(READERS)
    if unknown:
        parser.error(f"unknown readers {sorted(unknown)}: choose among {','.join(READERS)}")
    config = parse_config(args.config)
    print(f"{config.name}: {config.nb_mol:,} molecules, {args.workers} workers; load {load()}")
    if args.db:
        readers(args.db, config, args.full_db, args)
        return
    floors, walls, rss, disks = [], [], [], []
    folder = Path(tempfile.mkdtemp(prefix="compact-bench-", dir=os.environ.get("BENCH_TMP")))
    db = folder / "compact.sqlite"
    try:
        for run in range(args.runs):
            if args.no_floor:
                floors.append(float("nan"))
                for path in folder.iterdir():
                    shutil.rmtree(path) if path.is_dir() else path.unlink()
                wall, peak_rss, peak_disk, out = watched(
                    compact_command(db, config, args), [folder], tree_env(args.tree)
                )
                walls.append(wall)
                rss.append(peak_rss)
                disks.append(peak_disk)
                print(
                    f"run {run + 1}: compact {wall:.2f} s (CPU {cpu_seconds[-1]:.1f} s), "
                    f"peak RSS {peak_rss / 1e6:,.0f} MB, "
                    f"peak disk {peak_disk / 1e6:,.1f} MB, final db {db.stat().st_size / 1e6:,.1f} MB; "
                    f"load {load()}"
                )
                print_phases(out)
                continue
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
            wall, peak_rss, peak_disk, out = watched(
                compact_command(db, config, args), [folder], tree_env(args.tree)
            )
            walls.append(wall)
            rss.append(peak_rss)
            disks.append(peak_disk)
            print(
                f"run {run + 1}: floor {floors[-1]:.2f} s, compact {wall:.2f} s "
                f"({wall / floors[-1]:.2f}x, CPU {cpu_seconds[-1]:.1f} s), "
                f"peak RSS {peak_rss / 1e6:,.0f} MB, "
                f"peak disk {peak_disk / 1e6:,.1f} MB, final db {db.stat().st_size / 1e6:,.1f} MB; "
                f"load {load()}"
            )
            print_phases(out)
        floor, wall = statistics.median(floors), statistics.median(walls)
        print(
            f"median of {args.runs}: floor {floor:.2f} s, compact {wall:.2f} s, ratio {wall / floor:.2f}x; "
            f"peak RSS {max(rss) / 1e6:,.0f} MB, peak disk {max(disks) / 1e6:,.1f} MB "
            f"({max(disks) / config.nb_mol:.2f} bytes a molecule)"
        )
        if args.keep:
            shutil.copy(db, args.keep)
        readers(db, config, args.full_db, args)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


READERS = ("browse", "report", "groups", "status", "groups-size", "decode")
"""What ``readers`` can time: the TUI's keys in one process, then each command in fresh processes."""


def readers(db: Path, config: Config, full_db: Path | None, args: argparse.Namespace) -> None:
    """The readers of a compact database: fresh processes, then the TUI's keys in one process."""
    print(f"database {db.stat().st_size / 1e6:,.1f} MB")
    spectrum, largest = browse_latencies(db, config.name, quiet="browse" not in args.readers)
    commands = {
        "report": ("report", config.name),
        "groups": ("groups", config.name),
        "status": ("status",),
        "groups-size": ("groups", config.name, "--size", str(largest)),
        "decode": ("decode", config.name, spectrum),
    }
    for name, words in commands.items():
        if name not in args.readers:
            continue
        times, baseline = [], []
        for _ in range(args.reader_runs):
            times.append(timed_reader(db, *words))
            if args.baseline:
                baseline.append(timed_reader(db, *words, tree=args.baseline.resolve()))
        median = statistics.median(times)
        line = f"bbcore {' '.join(words)}: median {median:.2f} s of {len(times)} fresh processes"
        if baseline:
            base = statistics.median(baseline)
            line += f"; {args.baseline}: {base:.2f} s; ratio {median / base:.2f}x"
        print(line)
    if full_db:
        same = report_text(db, config.name) == report_text(full_db, config.name)
        print(f"report compact vs {full_db}: {'identical' if same else 'DIFFERENT'}")
        same = export_spectrums(db, config.name) == export_spectrums(full_db, config.name)
        print(f"Spectrums rows (export) compact vs {full_db}: {'identical' if same else 'DIFFERENT'}")
    print(f"load {load()}")


if __name__ == "__main__":
    main()
