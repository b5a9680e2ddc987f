"""The exploration lock on a file (``bbcore.lock``): one writer of a configuration at a time.

Written from the mutation run of ``bbcore/lock.py`` (``bench/mutation.py lock``): each
configuration has a byte of its own in ``<database>.lock``, so two configurations
are explored at once, by threads or by processes, while a second writer of the same
one is refused, however the database's path is spelled; the lock is released when
the block ends (by an error too) and after a lock file that could not be opened.
The server's lock is tested on the test server (``tests/test_server.py``); a server
that cannot be reached is one line here.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from bbcore.config import Config
from bbcore.lock import exploration_lock
from bbcore.progress import ExploreError
from bbcore.store import StoreError, location

ROOT = Path(__file__).resolve().parent.parent

TRY_LOCK = """
import sys
from pathlib import Path
from bbcore.config import Config
from bbcore.lock import exploration_lock
from bbcore.progress import ExploreError
try:
    with exploration_lock(Path(sys.argv[1]), Config(int(sys.argv[2]), int(sys.argv[3]))):
        print("held")
except ExploreError as error:
    print(error)
"""


def other_process(path: Path, atoms: int, width: int) -> str:
    """What another process gets on taking the lock of ``A{atoms}_B{width}`` in ``path``."""
    return subprocess.run(
        [sys.executable, "-c", TRY_LOCK, str(path), str(atoms), str(width)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    ).stdout.strip()


def busy(path: Path, name: str) -> str:
    return f"{name} is being explored by another process on {path}; wait for it or stop it first"


def test_a_second_writer_of_a_configuration_is_refused_in_the_same_process(tmp_path):
    path = tmp_path / "db.sqlite"
    with exploration_lock(path, Config(4, 5)):
        with pytest.raises(ExploreError) as refused:
            with exploration_lock(path, Config(4, 5)):
                pass
        assert str(refused.value) == busy(path, "A4_B5")
        assert (tmp_path / "db.sqlite.lock").exists()
    # released at the end of the block: taken again, in this process and in another
    with exploration_lock(path, Config(4, 5)):
        pass
    assert other_process(path, 4, 5) == "held"


def test_another_process_is_refused_the_same_configuration_but_not_another(tmp_path):
    path = tmp_path / "db.sqlite"
    with exploration_lock(path, Config(4, 5)):
        assert other_process(path, 4, 5) == busy(path, "A4_B5")
        # a byte each: neighbours in width and in atoms, and the configuration with
        # atoms and width swapped, are explored at the same time
        for atoms, width in ((4, 6), (4, 4), (5, 4), (5, 5), (3, 5)):
            assert other_process(path, atoms, width) == "held", (atoms, width)
    assert other_process(path, 4, 5) == "held"


def test_threads_explore_two_configurations_of_one_database_at_once(tmp_path):
    path = tmp_path / "db.sqlite"
    held = threading.Event()
    release = threading.Event()

    def hold() -> None:
        with exploration_lock(path, Config(3, 4)):
            held.set()
            release.wait(10)

    thread = threading.Thread(target=hold)
    thread.start()
    try:
        assert held.wait(10)
        with exploration_lock(path, Config(4, 4)):
            pass
        with pytest.raises(ExploreError, match="A3_B4 is being explored"):
            with exploration_lock(path, Config(3, 4)):
                pass
    finally:
        release.set()
        thread.join()


def test_the_same_database_spelled_another_way_is_the_same_lock(tmp_path, monkeypatch):
    path = tmp_path / "db.sqlite"
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    with exploration_lock(path, Config(4, 5)):
        with pytest.raises(ExploreError, match="being explored"):
            with exploration_lock(Path("../db.sqlite"), Config(4, 5)):
                pass


def test_an_error_in_the_run_releases_the_lock(tmp_path):
    path = tmp_path / "db.sqlite"
    with pytest.raises(RuntimeError, match="the run failed"):
        with exploration_lock(path, Config(4, 5)):
            raise RuntimeError("the run failed")
    with exploration_lock(path, Config(4, 5)):
        assert other_process(path, 3, 4) == "held"


def test_a_lock_file_that_cannot_be_made_is_one_clear_error_and_no_lock_kept(tmp_path):
    path = tmp_path / "missing" / "db.sqlite"
    with pytest.raises(ExploreError) as refused:
        with exploration_lock(path, Config(4, 5)):
            pass
    assert str(refused.value) == f"cannot lock {path}: No such file or directory"
    (tmp_path / "missing").mkdir()
    with exploration_lock(path, Config(4, 5)):  # the failed attempt left no lock behind
        pass


def test_the_lock_file_is_readable_by_all_and_writable_by_its_owner_only(tmp_path):
    old = os.umask(0)  # the mode asked for, whole
    try:
        with exploration_lock(tmp_path / "db.sqlite", Config(4, 5)):
            pass
    finally:
        os.umask(old)
    assert (tmp_path / "db.sqlite.lock").stat().st_mode & 0o777 == 0o644


def test_two_databases_lock_the_same_configuration_at_once_in_one_process(tmp_path):
    with exploration_lock(tmp_path / "one.sqlite", Config(4, 5)):
        with exploration_lock(tmp_path / "two.sqlite", Config(4, 5)):
            assert other_process(tmp_path / "one.sqlite", 4, 5) == busy(tmp_path / "one.sqlite", "A4_B5")
            assert other_process(tmp_path / "two.sqlite", 4, 5) == busy(tmp_path / "two.sqlite", "A4_B5")


def test_a_server_that_cannot_be_reached_for_the_lock_is_a_store_error():
    url = location("postgresql://nobody@127.0.0.1:1/games")
    with pytest.raises(StoreError) as refused:
        with exploration_lock(url, Config(4, 5)):
            pass
    assert str(refused.value) == f"cannot reach the server of {url}: Connection refused"


PROBE_BYTE = """
import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
try:
    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, int(sys.argv[2]))
    print("free")
except OSError:
    print("held")
"""


def test_a_configurations_byte_is_atoms_times_16_plus_width(tmp_path):
    """The lock file's layout, which every release holding it at once must share: ``A4_B5``'s byte is 69."""
    path = tmp_path / "db.sqlite"

    def probe(offset: int) -> str:
        return subprocess.run(
            [sys.executable, "-c", PROBE_BYTE, f"{path}.lock", str(offset)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()

    with exploration_lock(path, Config(4, 5)):
        assert [probe(offset) for offset in (68, 69, 70)] == ["free", "held", "free"]
    with exploration_lock(path, Config(7, 12)):
        assert [probe(offset) for offset in (123, 124, 125)] == ["free", "held", "free"]
