"""Databases people can share: a finished file opens read-only, for a user who cannot write it.

Root ignores file permissions, so every reader here runs in a subprocess as
a user who cannot write (``tests/unprivileged.py``: nobody, when the suite
runs as root; the same user after ``chmod`` otherwise).  Nothing is
skipped.  The database is A3_B5 (2,300 molecules, 8 spectral groups),
explored by the real ``bbcore explore`` and given a stored strategy book.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from expect import BBCORE, bbcore
from unprivileged import give_to_nobody, make_unwritable, run_unprivileged, who_am_i

ROOT = Path(__file__).resolve().parent.parent


def header_mode(path: Path) -> int:
    """Bytes 18-19 of an SQLite header: 1 rollback journal, 2 WAL."""
    return path.read_bytes()[18]


def digest(folder: Path) -> dict[str, str]:
    """Every file of a folder and its hash: what must not change."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A3_B5 explored by ``bbcore explore``, with its strategy book stored."""
    path = tmp_path_factory.mktemp("finished") / "a3b5.sqlite"
    assert bbcore("--db", str(path), "explore", "A3_B5").returncode == 0
    assert bbcore("--db", str(path), "strategy", "A3_B5").returncode == 0
    return path


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The unprivileged user's home: its XDG folders (numba's cache) go there."""
    folder = tmp_path_factory.mktemp("home")
    give_to_nobody(folder)
    folder.chmod(0o755)
    return folder


def user_env(home: Path) -> dict[str, str]:
    """The environment of the user who cannot write the shared file."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "BBTUI_"))}
    return {
        **env,
        "HOME": str(home),
        "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'tests'}",
        "PYTHON": sys.executable,
    }


def shared_copy(finished: Path, folder: Path, *, wal: bool = False, folder_writable: bool = False) -> Path:
    """A copy of the finished file in ``folder``, made unwritable (and its folder unless said)."""
    folder.mkdir()
    path = folder / finished.name
    shutil.copy(finished, path)
    if wal:  # a file left in WAL mode (a killed run, an older bbtui)
        connection = sqlite3.connect(path)
        assert connection.execute("PRAGMA journal_mode=wal").fetchone()[0] == "wal"
        connection.close()
    if folder_writable:
        give_to_nobody(folder)
        make_unwritable(path)
    else:
        make_unwritable(path, folder)
    return path


READERS = [
    (("status",), "A3_B5   2,300      2,300   complete"),
    (("groups", "A3_B5"), "2 families of spectral groups"),
    (("report", "A3_B5"), "Ambiguous molecules: 16 of 2,300"),
    (("show", "A3_B5", "43"), "A3_B5 #43  canonical 43 (id)"),
    (("show", "A3_B5", "--spectrum", "@&a&@@&@&b@cac@b&@&@"), "A3_B5 #43"),
    (("decode", "A3_B5", "@&a&@@&@&b@cac@b&@&@"), "Ambiguous: 2 molecules give this spectrum."),
    (("export", "A3_B5", "--table", "spectrums", "--format", "csv"), "A3_B5,@&a&@@&@&b@cac@b&@&@,2,id,43"),
    (("strategy", "A3_B5"), "read from the database"),
    (("check", "A3_B5", "--sample", "500", "--reference", "50"), "A3_B5: every check agrees"),
]
WRITERS = [("explore", "A3_B5"), ("explore", "A2_B4"), ("reset", "A3_B5", "--yes"), ("spectrums", "A3_B5")]


SOME_READERS = [READERS[i] for i in (0, 1, 4, 8)]
"""status, groups, show by spectrum (an index look-up), check: for the variants of a file."""


def run_readers(path: Path, home: Path, readers: list = READERS) -> None:
    for args, expected in readers:
        result = run_unprivileged([*BBCORE, "--db", str(path), *args], env=user_env(home))
        assert result.returncode == 0, (args, result.stderr)
        assert expected in result.stdout, (args, result.stdout)
        assert "Traceback" not in result.stderr


def assert_refused(result: subprocess.CompletedProcess, path: Path) -> None:
    """Exit 2, one line naming the file, saying it is read-only and what to do."""
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    assert f"{path} is read-only" in result.stderr
    assert "copy it" in result.stderr and "--db" in result.stderr


def test_the_commands_run_as_a_user_who_cannot_write(home: Path) -> None:
    """The premise: the subprocess cannot write a folder root owns."""
    uid, can_write_root = who_am_i(user_env(home)).split()
    assert can_write_root == "False"
    assert os.geteuid() != 0 or uid == "65534"


def test_a_finished_file_is_one_self_contained_file(finished: Path) -> None:
    assert header_mode(finished) == 1  # not WAL: readers need no -shm file
    assert sorted(p.name for p in finished.parent.iterdir()) == [finished.name, finished.name + ".lock"]


def test_every_reader_works_in_a_read_only_folder(finished: Path, home: Path, tmp_path: Path) -> None:
    path = shared_copy(finished, tmp_path / "shared")
    before = digest(path.parent)
    run_readers(path, home)
    for args in WRITERS:
        assert_refused(run_unprivileged([*BBCORE, "--db", str(path), *args], env=user_env(home)), path)
    assert digest(path.parent) == before  # not a byte written, no file added


def test_a_file_left_in_wal_mode_is_read_with_immutable(finished: Path, home: Path, tmp_path: Path) -> None:
    path = shared_copy(finished, tmp_path / "shared", wal=True)
    assert header_mode(path) == 2
    before = digest(path.parent)
    run_readers(path, home, SOME_READERS)
    assert digest(path.parent) == before


def test_an_older_file_is_read_as_it_is(finished: Path, home: Path, tmp_path: Path) -> None:
    """A file made before the compact store (no store columns, no compact tables) cannot be upgraded
    read-only: temporary tables and a view in the reader's own connection stand in for them."""
    older = tmp_path / "older.sqlite"
    shutil.copy(finished, older)
    connection = sqlite3.connect(older)
    for column in ("store", "shards", "shard_root"):
        connection.execute(f'ALTER TABLE Configurations DROP COLUMN "{column}"')
    for table in ("FamilyMolecules", "Profiles", "GroupedShards", "Families"):
        connection.execute(f'DROP TABLE "{table}"')
    connection.commit()
    connection.close()
    path = shared_copy(older, tmp_path / "shared")
    before = digest(path.parent)
    run_readers(path, home, SOME_READERS + [READERS[7]])  # and the stored book
    assert digest(path.parent) == before


def test_a_read_only_file_in_a_writable_folder(finished: Path, home: Path, tmp_path: Path) -> None:
    """The issue's second case: readers work, a new configuration is refused in one line."""
    path = shared_copy(finished, tmp_path / "colleague", folder_writable=True)
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    run_readers(path, home)
    for args in WRITERS:
        assert_refused(run_unprivileged([*BBCORE, "--db", str(path), *args], env=user_env(home)), path)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before


def test_a_new_file_in_a_read_only_folder_is_refused(home: Path, tmp_path: Path) -> None:
    folder = tmp_path / "mount"
    folder.mkdir()
    make_unwritable(folder)
    result = run_unprivileged(
        [*BBCORE, "--db", str(folder / "new.sqlite"), "explore", "A2_B4"], env=user_env(home)
    )
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert "is read-only" in result.stderr and "--db" in result.stderr
    assert list(folder.iterdir()) == []


def test_the_tui_browses_a_read_only_file(finished: Path, home: Path, tmp_path: Path) -> None:
    """A pilot, as the user who cannot write: groups, a group, molecule, statistics, decode."""
    path = shared_copy(finished, tmp_path / "shared")
    before = digest(path.parent)
    pilot = [sys.executable, str(ROOT / "tests" / "readonly_pilot.py"), str(path), "A3_B5"]
    result = run_unprivileged(pilot, env=user_env(home), timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    found = dict(line.split(" ", 1) for line in result.stdout.splitlines())
    assert found["read_only"] == "True"
    assert "read-only: exploring off" in found["subtitle"]
    assert found["start_key"] == "None" and found["restart_key"] == "None"  # dimmed: off
    assert f"{path} is read-only" in found["s_says"] and "copy it" in found["s_says"]
    assert found["exploring_after_s"] == "None"
    assert found["group_rows"] == "2"
    assert found["group_members"] == "2"
    assert found["decode_opened"] == "DecodeScreen"
    assert found["errors"] == "[]"
    assert digest(path.parent) == before


def test_exploring_keeps_wal_while_it_runs_and_ends_in_one_file(tmp_path: Path) -> None:
    from bbcore.config import parse_config
    from bbcore.explore import explore
    from bbcore.store import close_database

    path = tmp_path / "bb.sqlite"
    modes = []

    def progress(report) -> None:
        connection = sqlite3.connect(path)
        modes.append(connection.execute("PRAGMA journal_mode").fetchone()[0])
        connection.close()

    explore(parse_config("A3_B5"), path, workers=1, progress=progress, range_size=512)
    assert set(modes) == {"wal"}
    close_database()
    assert header_mode(path) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bb.sqlite", "bb.sqlite.lock"]
