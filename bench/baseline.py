"""Benchmark: bbcore against the C baseline, side by side, alternating, in one run.

    python bench/baseline.py A6_B8 --runs 3
    python bench/baseline.py A7_B8 --runs 3 --orbits ../shared/bench/orbits

The C baseline (``shared/bench/orbits``, outside this repository: a yardstick, never a
dependency, never copied) traces one molecule per symmetry orbit, spills canonical spectra into
hash shards and counts them; it writes no database. It is built here with ``gcc -O3
-march=native`` into a temporary folder (``orbits.c`` up to 8 x 8, ``orbits_wide.c`` beyond) and
run through its own ``run.sh`` (2 tracing processes, shards grouped 2 at a time).

Each run, in fresh processes and fresh temporary folders, one after the other:

- ``baseline``: ``run.sh BINARY N W SPILL``: wall time, peak resident memory of its process tree,
  peak disk of its spill folder (sampled every 0.2 s);
- ``bbcore``: ``bbcore explore CONFIG --store compact`` through ``explore()`` (what the CLI
  calls), with the same figures and each phase's length (``bench/compact.py --phases``); numba's
  cache is filled once before the first run (A3_B4, untimed), so no run counts the compilation.

Then the medians of both and their ratio bbcore / baseline, both measured in this run (the
machine is shared: only same-run ratios mean anything), and the two ambiguity tables compared
size by size (families, spectral groups, molecules): a disagreement ends the run with status 1.
``--table`` prints the table they agree on; ``--keep PATH`` keeps bbcore's last database.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from compact import ENV, PHASED, ROOT, cpu_seconds, load, phase_lengths, watched

from bbcore.config import parse_config

ORBITS = ROOT.parent / "shared" / "bench" / "orbits"
NARROW_LIMIT = 8
"""``orbits.c`` handles boxes up to 8 x 8; ``orbits_wide.c`` the wider ones (and is slower at 8)."""

Table = dict[int, tuple[int, int, int]]
"""Group size: (families, spectral groups, molecules)."""


def build(orbits: Path, width: int, folder: Path) -> Path:
    """The baseline's binary for boxes of this width, compiled into ``folder``."""
    source = orbits / ("orbits.c" if width <= NARROW_LIMIT else "orbits_wide.c")
    binary = folder / source.stem
    command = ["gcc", "-O3", "-march=native", "-w", "-o", str(binary), str(source)]
    subprocess.run(command, check=True)
    return binary


def baseline_table(out: str) -> Table:
    """The baseline's table: its ``size S: families F spectra G molecules M`` lines."""
    table: Table = {}
    for match in re.finditer(r"^size (\d+): families (\d+) spectra (\d+) molecules (\d+)$", out, re.M):
        size, families, groups, molecules = map(int, match.groups())
        table[size] = (families, groups, molecules)
    return table


def bbcore_table(db: Path, name: str) -> Table:
    """bbcore's table: ``bbcore export --table report`` (size, families, groups, molecules)."""
    out = subprocess.run(
        [sys.executable, "-m", "bbcore", "--db", str(db), "export", name, "--table", "report"],
        env=ENV,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    table: Table = {}
    for line in out.splitlines()[1:]:
        if not line.split(",")[0].isdigit():  # the total
            continue
        size, families, groups, molecules = map(int, line.split(","))
        table[size] = (families, groups, molecules)
    return table


def empty(folder: Path) -> None:
    """Remove everything inside ``folder``."""
    for path in folder.iterdir():
        shutil.rmtree(path) if path.is_dir() else path.unlink()


def figures(name: str, walls: list[float], rss: list[int], disks: list[int], cpus: list[float]) -> str:
    """One line of medians and peaks."""
    return (
        f"{name} median {statistics.median(walls):.2f} s (CPU {statistics.median(cpus):.1f} s), "
        f"peak RSS {max(rss) / 1e6:,.0f} MB, peak disk {max(disks) / 1e6:,.1f} MB"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", nargs="?", default="A5_B8")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--orbits", type=Path, default=ORBITS, help=f"the baseline (default {ORBITS})")
    parser.add_argument("--table", action="store_true", help="print the agreed table, size by size")
    parser.add_argument("--keep", type=Path, help="keep bbcore's last database at this path")
    args = parser.parse_args()
    if args.keep and args.keep.exists():
        parser.error(f"{args.keep} exists")
    config = parse_config(args.config)
    if not (args.orbits / "run.sh").is_file():
        parser.error(f"no C baseline at {args.orbits} (give its folder with --orbits)")
    print(f"{config.name}: {config.nb_mol:,} molecules, {args.workers} workers; load {load()}")
    folder = Path(tempfile.mkdtemp(prefix="baseline-bench-", dir=os.environ.get("BENCH_TMP")))
    spill, store = folder / "spill", folder / "store"
    spill.mkdir()
    store.mkdir()
    db = store / "compact.sqlite"
    runs = {"baseline": ([], [], [], []), "bbcore": ([], [], [], [])}
    try:
        binary = build(args.orbits, config.width, folder)
        baseline_command = ["bash", str(args.orbits / "run.sh"), str(binary), str(config.atoms)]
        baseline_command += [str(config.width), str(spill)]
        bbcore_command = [sys.executable, "-c", PHASED, str(db), config.name, str(args.workers), str(ROOT)]
        warm = subprocess.run(  # numba's cache filled once, untimed: the runs compare steady states
            [sys.executable, "-m", "bbcore", "--db", str(folder / "warm.sqlite"), "explore", "A3_B4"],
            env=ENV,
            capture_output=True,
        )
        if warm.returncode != 0:
            raise SystemExit(f"bbcore could not explore A3_B4: {warm.stderr.decode().strip()}")
        for run in range(args.runs):
            for name, command, disk in (
                ("baseline", baseline_command, spill),
                ("bbcore", bbcore_command, store),
            ):
                empty(disk)
                wall, peak_rss, peak_disk, out = watched(command, [disk])
                walls, rss, disks, cpus = runs[name]
                walls.append(wall)
                rss.append(peak_rss)
                disks.append(peak_disk)
                cpus.append(cpu_seconds[-1])
                phases = "".join(f"; {phase_lengths(line)}" for line in out.splitlines() if "PHASES" in line)
                print(
                    f"run {run + 1} {name}: {wall:.2f} s (CPU {cpus[-1]:.1f} s), "
                    f"peak RSS {peak_rss / 1e6:,.0f} MB, peak disk {peak_disk / 1e6:,.1f} MB{phases}; "
                    f"load {load()}"
                )
                if name == "baseline":
                    expected = baseline_table(out)
        for name, (walls, rss, disks, cpus) in runs.items():
            print(figures(name, walls, rss, disks, cpus))
        ratio = statistics.median(runs["bbcore"][0]) / statistics.median(runs["baseline"][0])
        print(f"ratio bbcore / baseline: {ratio:.2f}x (medians of {args.runs}, same run); load {load()}")
        found = bbcore_table(db, config.name)
        if found != expected:
            for size in sorted(set(found) | set(expected)):
                print(f"size {size}: baseline {expected.get(size)}, bbcore {found.get(size)}")
            raise SystemExit("the two tables disagree")
        molecules = sum(row[2] for row in found.values())
        print(f"the tables agree: {len(found)} group sizes, {molecules:,} molecules in spectral groups")
        if args.table:
            print(f"{'size':>4}  {'families':>12}  {'spectra':>13}  {'molecules':>15}")
            for size, (families, groups, members) in sorted(found.items()):
                print(f"{size:>4}  {families:>12,}  {groups:>13,}  {members:>15,}")
            totals = [sum(row[i] for row in found.values()) for i in range(3)]
            print(f"{'all':>4}  {totals[0]:>12,}  {totals[1]:>13,}  {totals[2]:>15,}")
        if args.keep:
            for suffix in ("", "-wal", "-shm"):
                if Path(f"{db}{suffix}").exists():
                    shutil.move(f"{db}{suffix}", f"{args.keep}{suffix}")
            print(f"bbcore's database kept at {args.keep}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
