"""Benchmark: a compact exploration killed (SIGKILL) in every phase, resumed each time, against a clean run.

    python bench/killed.py A6_B8
    python bench/killed.py A7_B8 --keep /tmp/a7b8

What a user does: ``bbcore --db DB explore CONFIG --store compact``, in a fresh process each
time, its progress read line by line from its output. First a clean run into one database.
Then another database, and a run killed (``kill -9`` of the process group: the CLI, its
workers) once it is well into each phase in turn, each kill followed by a new run that resumes:

- ``tracing``: once half the molecules are traced;
- ``grouping``: once half the shards are grouped;
- ``writing``: once a third of the families are written;
- ``indexes``: half a second after the last family is written, while the two family indexes are
  built (A7_B8: about 20 s);

and a last run that completes it. After each kill: how long the run lived, that no process of
it is left (its workers die with it), and, at the end, that the killed-and-resumed database holds
exactly the clean one's rows (every ``Families`` and ``Profiles`` row, the ``GroupedShards``
counts, the molecules of ``ExploredRanges``) and the same ``bbcore report``. Exit status 1 if not.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from compact import ENV, load

PHASE_LINE = re.compile(r"^\S+ (tracing|grouping|writing): ([\d,]+)/([\d,]+)")
KILLS = (("tracing", 1 / 2), ("grouping", 1 / 2), ("writing", 1 / 3), ("indexes", None))
"""Each kill: the phase, and the share of it done before the kill (None: once writing is done)."""
INDEXES_AFTER = 0.5
"""Seconds after the last family is written that the ``indexes`` kill comes (A7_B8's two indexes
take about 20 s; a small configuration's may be built before it: then that kill is not made)."""


def command(db: Path, name: str) -> list[str]:
    return [sys.executable, "-u", "-m", "bbcore", "--db", str(db), "explore", name, "--store", "compact"]


def run_until(db: Path, name: str, phase: str | None, share: float | None) -> tuple[float | None, str]:
    """Run the exploration; kill it once ``phase`` is ``share`` done (None: run to the end).  Returns
    how long it ran before the kill (None: it ended first) and the last progress line."""
    started = time.perf_counter()
    process = subprocess.Popen(
        command(db, name), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=ENV, start_new_session=True
    )
    assert process.stdout is not None
    out = process.stdout.fileno()
    os.set_blocking(out, False)
    last, buffer, written_at = "", "", None
    while True:
        ended = process.poll() is not None
        try:
            buffer += os.read(out, 1 << 16).decode(errors="replace")
        except BlockingIOError:
            pass
        *lines, buffer = buffer.split("\n")
        for line in lines:
            last = line or last
            found = PHASE_LINE.match(line)
            if found is None or phase is None:
                continue
            seen, done, total = found.group(1), *(int(g.replace(",", "")) for g in found.group(2, 3))
            if phase == "indexes" and seen == "writing" and total and done == total:
                written_at = written_at or time.perf_counter()
            elif seen == phase and share is not None and total and done >= share * total:
                return kill(process, started), line
        if ended:
            break
        if written_at is not None and time.perf_counter() - written_at >= INDEXES_AFTER:
            return kill(process, started), last
        time.sleep(0.05)
    os.set_blocking(out, True)
    ran = time.perf_counter() - started
    last = (buffer + process.stdout.read().decode(errors="replace")).strip().splitlines()[-1:] or [last]
    if process.returncode != 0:
        sys.exit(f"the run ended with status {process.returncode}: {last[0]}")
    return (ran if phase is None else None), last[0]


def kill(process: subprocess.Popen, started: float) -> float:
    """SIGKILL the process alone (its workers must die with it: ``bbcore.lifeline``), then check."""
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    lived = time.perf_counter() - started
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.killpg(process.pid, 0)  # any process left in its group (its workers)?
        except ProcessLookupError:
            return lived
        time.sleep(0.1)
    os.killpg(process.pid, signal.SIGKILL)
    sys.exit("a worker outlived the killed exploration by 10 s")


def digest(db: Path, name: str) -> dict[str, str]:
    """A fingerprint of everything the run stores for the configuration, timestamps left out."""
    queries = {
        "families": "SELECT * FROM Families WHERE config = ? ORDER BY position",
        "profiles": "SELECT * FROM Profiles WHERE config = ? ORDER BY 2, 3, 4, 5, 6, 7, 8, 9, 10",
        "shards": (
            "SELECT shard, records, spectra, families, risk FROM GroupedShards WHERE config = ? ORDER BY 1"
        ),
        "ranges": "SELECT sum(nb_mol), count(*) FROM ExploredRanges WHERE config = ?",
        "configuration": "SELECT nb_mol, complete, store, shards FROM Configurations WHERE config = ?",
        "indexes": (
            "SELECT name, sql FROM sqlite_master WHERE tbl_name = 'Families' AND name LIKE '%' || ? || '%'"
        ),
    }
    found = {}
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as connection:
        for what, query in queries.items():
            hashed, rows = hashlib.sha256(), 0
            for row in connection.execute(query, (name,)):
                hashed.update(repr(row).encode())
                rows += 1
            found[what] = f"{rows} rows, sha256 {hashed.hexdigest()[:16]}"
    return found


def report(db: Path, name: str) -> str:
    out = subprocess.run(
        [sys.executable, "-m", "bbcore", "--db", str(db), "report", name],
        capture_output=True,
        text=True,
        env=ENV,
        check=True,
    ).stdout
    return "\n".join(line for line in out.splitlines() if "elapsed" not in line and " at 20" not in line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", nargs="?", default="A6_B8")
    parser.add_argument("--keep", type=Path, help="a folder to keep both databases in (default: deleted)")
    args = parser.parse_args()
    folder = args.keep or Path(tempfile.mkdtemp(prefix="bbtui-killed-"))
    folder.mkdir(parents=True, exist_ok=True)
    clean, killed = folder / "clean.sqlite", folder / "killed.sqlite"
    for path in (clean, killed):
        if path.exists():
            sys.exit(f"{path} exists: give another --keep folder")
    print(f"{args.config}: load {load()}", flush=True)
    try:
        same = killed_and_resumed(args.config, clean, killed)
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)
    sys.exit(0 if same else 1)


def killed_and_resumed(name: str, clean: Path, killed: Path) -> bool:
    """The clean run, the killed ones, the last; whether the databases hold the same."""
    seconds, last = run_until(clean, name, None, None)
    print(f"clean run: {seconds:.1f} s: {last}", flush=True)
    total = 0.0
    for phase, share in KILLS:
        seconds, last = run_until(killed, name, phase, share)
        if seconds is None:
            print(f"not killed in {phase}: the run ended first: {last}", flush=True)
            break
        total += seconds
        print(f"killed in {phase} after {seconds:.1f} s, no process left: {last}", flush=True)
    else:
        seconds, last = run_until(killed, name, None, None)
        total += seconds or 0.0
        print(f"resumed to the end in {seconds:.1f} s ({total:.1f} s in all): {last}", flush=True)
    expected, found = digest(clean, name), digest(killed, name)
    same = expected == found and report(clean, name) == report(killed, name)
    for what in expected:
        mark = "same" if expected[what] == found[what] else f"DIFFERENT: {found[what]}"
        print(f"  {what}: {expected[what]} ({mark})")
    print(f"the killed run's database {'is' if same else 'is NOT'} the clean one's; load {load()}")
    return same


if __name__ == "__main__":
    main()
