"""A disk that fills after the last molecule is stored: the line says what finishing needs.

Issue 32, D5: the line of a full disk says how much more the run needs.
That figure counted the molecules left only, so a disk that filled while a
full store's indexes were built, or while a compact run wrote its groups
into the database, said "needs about 0 B more ... for its 0 molecules
left", and freeing that much finished nothing.  Here, on a real tmpfs
(``test_disk_full.small_disk``), each run stops after its last molecule;
the line names what is left to write, and the disk grown by the size it
says (no more) lets the same command finish, to a run on a disk with room.
"""

from __future__ import annotations

import re
import shutil
import sqlite3
import subprocess
import sys

import pytest
import test_disk_full
from expect import bbcore
from test_disk_full import _error_line, _figures

from bbcore import sql
from bbcore.config import Config

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sys.platform != "linux", reason="tmpfs is Linux's"),
]

CONFIG = Config(4, 7)
"""211,876 molecules: a full store's indexes of about 10 MB, a compact database of about 400 kB."""
small_disk = test_disk_full.small_disk
"""The small tmpfs, and how to resize it (the fixture of ``test_disk_full``)."""
UNITS = {"B": 1, "kB": 10**3, "MB": 10**6, "GB": 10**9}


def _needed(line: str) -> int:
    """The bytes the line says the run needs (``words.size``: 3 significant digits, rounded)."""
    match = re.search(rf"{CONFIG.name} needs about ([0-9.]+) (B|kB|MB|GB) more \(an estimate\)", line)
    assert match, line
    return int(float(match[1]) * UNITS[match[2]])


def _grown_by(folder, needed: int) -> None:
    """The tmpfs at ``folder`` grown to what it holds now plus ``needed`` bytes (as freeing that much)."""
    used = shutil.disk_usage(folder).used
    size = -(-(used + needed) // 4096) * 4096
    remount = ["mount", "-o", f"remount,size={size}", str(folder)]
    done = subprocess.run(remount, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_a_full_store_stopped_in_its_indexes_says_what_they_need(small_disk, tmp_path):
    folder, resize = small_disk
    roomy = tmp_path / "roomy.sqlite"
    assert bbcore("--db", str(roomy), "explore", CONFIG.name, "--store", "full").returncode == 0
    # The file as its run leaves it once the last molecule is stored: no groups, no indexes yet.
    stored = tmp_path / "stored.sqlite"
    shutil.copy(roomy, stored)
    with sqlite3.connect(stored) as connection:
        connection.execute("UPDATE Configurations SET complete = 0")
        connection.execute("DELETE FROM Spectrums")
        for statement in sql.drop_indexes(CONFIG):
            connection.execute(statement)
    with sqlite3.connect(stored) as connection:
        connection.execute("VACUUM")  # the indexes' pages are not there to be reused
    resize(f"{(stored.stat().st_size + 2**20) // 1024}k")  # room for the rows, and 1 MB
    db = folder / "bb.sqlite"
    shutil.copy(stored, db)
    command = ("--db", str(db), "explore", CONFIG.name)
    line = _error_line(bbcore(*command))
    assert line.startswith(f"bbcore: error: the disk is full at {folder} ("), line
    assert f"(an estimate) for its indexes. All {CONFIG.nb_mol:,} molecules are stored and kept" in line, line
    needed = _needed(line)
    assert needed > 2**20, line  # the indexes are about 10 MB
    _grown_by(folder, needed)
    resumed = bbcore(*command)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{CONFIG.name} complete: {CONFIG.nb_mol:,} molecules" in resumed.stdout
    assert _figures(db, CONFIG) == _figures(roomy, CONFIG)


def test_a_compact_run_stopped_writing_its_groups_says_what_they_need(small_disk, tmp_path):
    """The shard files elsewhere (``--shards``), the database on the small disk: the tracing
    fits (a few rows a range), the grouping's rows do not."""
    folder, resize = small_disk
    resize("256k")
    db = folder / "compact.sqlite"
    command = ("--db", str(db), "explore", CONFIG.name, "--store", "compact", "--force")
    command += ("--shards", str(tmp_path / "shards"))
    line = _error_line(bbcore(*command))
    assert line.startswith(f"bbcore: error: the disk is full at {folder} ("), line
    assert (
        f"(an estimate) for its grouping and the database's rows. All {CONFIG.nb_mol:,} molecules are stored"
        in line
    ), line
    _grown_by(folder, _needed(line))
    resumed = bbcore(*command)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{CONFIG.name} complete" in resumed.stdout
    roomy = tmp_path / "roomy.sqlite"
    assert bbcore("--db", str(roomy), "explore", CONFIG.name, "--store", "compact").returncode == 0
    assert _figures(db, CONFIG) == _figures(roomy, CONFIG)
