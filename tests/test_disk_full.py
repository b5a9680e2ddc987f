"""A disk that fills during a run, for real: a small tmpfs mounted for the test (issue 32, D5).

The full store's file, and a compact store's shard files, on a file system
of a few MB: the run stops in one line that says the disk is full, where,
about how much more the run needs, and that the same command resumes; once
the file system is grown (as freeing space does), the same command
finishes the run, to the result of a run on a disk with room.

Mounting needs root (the suite runs as root on the development machine and
in CI); elsewhere the tests are skipped, and ``test_cli.py`` covers the
line with SQLite's error injected (``expect.disk_full_at``).  Each mount is
unmounted at the end of its test, whatever the test did.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from expect import bbcore

from bbcore.config import Config

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sys.platform != "linux", reason="tmpfs is Linux's"),
]

FULL = Config(4, 7)
"""211,876 molecules: worker processes (the path whose line was "cannot rollback"), about 60 MB."""
COMPACT = Config(4, 7)


@pytest.fixture
def small_disk(tmp_path):
    """A tmpfs of 4 MB mounted at ``tmp_path / "small"``, and how to resize it; unmounted at the end."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    folder = tmp_path / "small"
    folder.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(folder)], capture_output=True, text=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")

    def resize(size: str) -> None:
        options = f"remount,size={size}"
        done = subprocess.run(["mount", "-o", options, str(folder)], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr

    try:
        yield folder, resize
    finally:
        subprocess.run(["umount", "--lazy", str(folder)], check=False)


def _error_line(run: subprocess.CompletedProcess) -> str:
    """The run's one error line, after its progress lines (stderr is not a terminal)."""
    assert run.returncode == 2, run.stdout + run.stderr
    assert "Traceback" not in run.stderr
    errors = [line for line in run.stderr.splitlines() if line.startswith("bbcore: error:")]
    assert len(errors) == 1 and run.stderr.strip().endswith(errors[0]), run.stderr
    return errors[0]


def _figures(db: Path, config: Config) -> str:
    """What ``status`` prints of the configuration, the database's name aside."""
    status = bbcore("--db", str(db), "status")
    assert status.returncode == 0, status.stderr
    return next(line for line in status.stdout.splitlines() if line.startswith(config.name))


def _resumed_on_freed_space(command, resize, db: Path, config: Config, store: str, tmp_path: Path) -> str:
    """Space freed, the same ``command`` run again: it ends (its output returned) with the figures
    of a run that never lacked space."""
    resize("256m")  # as freeing space does
    resumed = bbcore(*command)
    assert resumed.returncode == 0, resumed.stderr
    roomy = tmp_path / "roomy.sqlite"
    assert bbcore("--db", str(roomy), "explore", config.name, "--store", store).returncode == 0
    assert _figures(db, config) == _figures(roomy, config)
    return resumed.stdout


def test_the_full_stores_file_on_a_full_disk_says_so_and_the_same_command_resumes(small_disk, tmp_path):
    folder, resize = small_disk
    db = folder / "bb.sqlite"
    command = ("--db", str(db), "explore", FULL.name, "--store", "full", "--force")
    line = _error_line(bbcore(*command))
    assert line.startswith(f"bbcore: error: the disk is full at {folder} ("), line
    assert re.search(rf"{FULL.name} needs about [0-9.]+ MB more \(an estimate\)", line), line
    assert "are stored and kept" in line and "cannot rollback" not in line
    assert line.endswith(f"then run 'bbcore --db {db} explore {FULL.name}' again to resume"), line
    resumed = _resumed_on_freed_space(command, resize, db, FULL, "full", tmp_path)
    assert f"{FULL.name} complete: {FULL.nb_mol:,} molecules" in resumed


def test_a_compact_runs_shard_files_on_a_full_disk_say_so_and_the_same_command_resumes(small_disk, tmp_path):
    folder, resize = small_disk
    db = tmp_path / "compact.sqlite"
    command = ("--db", str(db), "explore", COMPACT.name, "--store", "compact", "--shards", str(folder))
    resize("64k")  # the tracing's first records, not all of them
    line = _error_line(bbcore(*command))
    assert line.startswith(f"bbcore: error: the disk is full at {folder / COMPACT.name} ("), line
    assert re.search(rf"{COMPACT.name} needs about [0-9.]+ [kM]B more \(an estimate\)", line), line
    assert "requested and" not in line
    assert line.endswith(f"then run 'bbcore --db {db} explore {COMPACT.name}' again to resume"), line
    resumed = _resumed_on_freed_space(command, resize, db, COMPACT, "compact", tmp_path)
    assert f"{COMPACT.name} complete" in resumed
