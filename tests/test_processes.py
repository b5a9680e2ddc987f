"""No process outlives a killed explorer: ``kill -9`` of ``bbcore explore`` or of ``bbtui``;
SIGTERM (``timeout``, systemd) pauses ``bbcore explore`` as Ctrl-C does.

Each explorer runs in a session of its own (``start_new_session``), so
every process it starts (the workers, multiprocessing's resource tracker)
carries its session id even once adopted by init.  Only the explorer is
killed, not its group: its children must end by themselves
(``bbcore.lifeline``).  Then the same command resumes, and the result is
the same as a clean run.
"""

from __future__ import annotations

import fcntl
import math
import os
import pty
import signal
import sqlite3
import struct
import subprocess
import sys
import termios
import threading
from pathlib import Path

import pytest
from expect import BBCORE
from proctree import session_processes, stored_ranges, wait_until

from bbcore.compact import trace
from bbcore.config import Config
from bbcore.explore import explore
from bbcore.progress import COMPLETE

ROOT = Path(__file__).resolve().parent.parent
ENV = dict(os.environ, PYTHONPATH=str(ROOT))
CONFIG = Config(4, 7)
"""211,876 molecules: above ``IN_PROCESS_BELOW``, so a real worker pool runs."""
pytestmark = [pytest.mark.slow, pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")]


def table_rows(path: Path) -> dict[str, list[tuple]]:
    """The molecules and spectra of CONFIG, timestamps left out."""
    with sqlite3.connect(path) as connection:
        columns = [
            row[1]
            for row in connection.execute('PRAGMA table_info("Molecules")')
            if row[1] not in ("dh1", "dh2")
        ]
        return {
            "molecules": connection.execute(
                f'SELECT {", ".join(columns)} FROM "Molecules" WHERE config = ? ORDER BY number',
                (CONFIG.name,),
            ).fetchall(),
            "spectrums": connection.execute(
                'SELECT spectrum, nb_mol, transform, canonical_number FROM "Spectrums" '
                "WHERE config = ? ORDER BY spectrum",
                (CONFIG.name,),
            ).fetchall(),
        }


@pytest.fixture(scope="module")
def clean_run(tmp_path_factory) -> dict[str, list[tuple]]:
    """CONFIG explored without interruption."""
    path = tmp_path_factory.mktemp("clean") / "clean.sqlite"
    assert explore(CONFIG, path) == COMPLETE
    return table_rows(path)


def start_explorer(path: Path, config: Config, *options: str, captured: bool = False) -> subprocess.Popen:
    """``bbcore explore`` of ``config`` with 2 workers in a session of its own (so that every process
    it starts can be found and killed); its output captured as text, or dropped."""
    output = subprocess.PIPE if captured else subprocess.DEVNULL
    return subprocess.Popen(
        [*BBCORE, "--db", str(path), "explore", config.name, *options, "--workers", "2"],
        stdout=output,
        stderr=output,
        text=captured,
        env=ENV,
        start_new_session=True,
    )


def kill_and_check_no_survivor(process: subprocess.Popen, path: Path, config: Config = CONFIG) -> None:
    """Once workers are storing ranges, SIGKILL the explorer alone; nothing of its session survives."""
    session = process.pid
    try:
        wait_until(
            lambda: (
                sum("multiprocessing" in cmd for _, cmd in session_processes(session)) >= 3
                and stored_ranges(path, config) > 0
            ),
            90,
            "the workers and the resource tracker to start and store a range",
        )
        os.kill(process.pid, signal.SIGKILL)
        process.wait(10)
        wait_until(lambda: not session_processes(session), 5, "the explorer's children to end")
    finally:
        for pid, _ in session_processes(session):  # a failed test leaves nothing either
            os.kill(pid, signal.SIGKILL)


def resume_and_compare(path: Path, clean_run: dict[str, list[tuple]]) -> None:
    """Run the same explore command again: it completes and equals the clean run."""
    partial = len(table_rows(path)["molecules"])
    assert 0 < partial < CONFIG.nb_mol
    result = subprocess.run(
        [sys.executable, "-m", "bbcore", "--db", str(path), "explore", CONFIG.name],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert f"{CONFIG.name} complete" in result.stdout
    assert table_rows(path) == clean_run


def test_killing_the_cli_explorer_ends_its_workers_and_resume_equals_a_clean_run(tmp_path, clean_run):
    path = tmp_path / "db.sqlite"
    process = start_explorer(path, CONFIG)
    kill_and_check_no_survivor(process, path)
    resume_and_compare(path, clean_run)


def test_killing_the_tui_ends_its_workers_and_resume_equals_a_clean_run(tmp_path, clean_run):
    path = tmp_path / "db.sqlite"
    main, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    process = subprocess.Popen(
        [sys.executable, "-m", "bbtui.app", "--db", str(path), CONFIG.name],
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        env=dict(ENV, TERM="xterm-256color", BBTUI_DB=str(path)),
        start_new_session=True,
    )
    os.close(terminal)
    screen = bytearray()

    def drain() -> None:  # the app blocks if nobody reads its terminal
        while True:
            try:
                data = os.read(main, 65536)
            except OSError:
                return
            if not data:
                return
            screen.extend(data)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        # The configuration given at launch is not in the database: it waits in
        # the input, and Enter explores it.
        wait_until(lambda: b"Enter explores it" in screen, 60, "the Explore screen")
        os.write(main, b"\r")
        kill_and_check_no_survivor(process, path)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(main)
        reader.join(5)
    resume_and_compare(path, clean_run)


COMPACT_CONFIG = Config(5, 8)
"""7,624,512 molecules: 30 tracing tasks of the compact store, about 3 s of tracing on 2 cores, so
that a kill after the first stored range lands while tracing (A4_B8's 3 tasks could all be stored
between two looks)."""
COMPACT_RANGES = math.ceil(COMPACT_CONFIG.nb_mol / trace.RANGE_SIZE)
COMPACT_TABLES = ("Families", "Profiles", "GroupedShards")


def compact_rows(path: Path) -> dict[str, list[tuple]]:
    """The compact store's tables for COMPACT_CONFIG, timestamps left out."""
    with sqlite3.connect(path) as connection:
        found = {}
        for table in COMPACT_TABLES:
            columns = [r[1] for r in connection.execute(f'PRAGMA table_info("{table}")') if r[1] != "dh1"]
            found[table] = sorted(
                connection.execute(
                    f'SELECT {", ".join(columns)} FROM "{table}" WHERE config = ?', (COMPACT_CONFIG.name,)
                ).fetchall()
            )
        return found


@pytest.fixture(scope="module")
def compact_clean_run(tmp_path_factory) -> dict[str, list[tuple]]:
    """COMPACT_CONFIG explored in the compact store without interruption."""
    clean = tmp_path_factory.mktemp("compact") / "clean.sqlite"
    assert explore(COMPACT_CONFIG, clean, store="compact") == COMPLETE
    return compact_rows(clean)


def test_killing_a_compact_explorer_ends_its_workers_and_resume_equals_a_clean_run(
    tmp_path, compact_clean_run
):
    path = tmp_path / "db.sqlite"
    command = [sys.executable, "-m", "bbcore", "--db", str(path), "explore", COMPACT_CONFIG.name]
    process = start_explorer(path, COMPACT_CONFIG, "--store", "compact")
    kill_and_check_no_survivor(process, path, COMPACT_CONFIG)
    assert stored_ranges(path, COMPACT_CONFIG) < COMPACT_RANGES  # killed while tracing
    result = subprocess.run(command, capture_output=True, text=True, env=ENV, timeout=300)
    assert result.returncode == 0, result.stderr
    assert compact_rows(path) == compact_clean_run


# -- SIGTERM pauses as Ctrl-C does -----------------------------------------------------


def terminate_and_check_paused(process: subprocess.Popen, path: Path, config: Config) -> None:
    """Once workers are storing ranges, send SIGTERM as ``timeout`` does (to the explorer, then to
    its whole process group: the workers too): the run pauses as on Ctrl-C, and nothing survives.

    Issue #20: the workers died of it and multiprocessing's resource tracker warned of
    "leaked semaphore objects"; the explorer died without storing what was under way.
    """
    session = process.pid
    try:
        wait_until(
            lambda: (
                sum("multiprocessing" in cmd for _, cmd in session_processes(session)) >= 3
                and stored_ranges(path, config) > 0
            ),
            90,
            "the workers and the resource tracker to start and store a range",
        )
        os.kill(process.pid, signal.SIGTERM)
        os.killpg(session, signal.SIGTERM)
        out, err = process.communicate(timeout=120)
        wait_until(lambda: not session_processes(session), 10, "the explorer's children to end")
    finally:
        for pid, _ in session_processes(session):  # a failed test leaves nothing either
            os.kill(pid, signal.SIGKILL)
    assert process.returncode == 130, err  # as for Ctrl-C
    assert "leaked semaphore" not in err and "Traceback" not in err and "Error" not in err, err
    assert "SIGTERM: pausing: storing what is under way" in err
    assert out.startswith(f"{config.name} paused at ") and out.count("\n") == 1, out


def test_sigterm_pauses_a_full_explorer_and_resume_equals_a_clean_run(tmp_path, clean_run):
    path = tmp_path / "db.sqlite"
    process = start_explorer(path, CONFIG, captured=True)
    terminate_and_check_paused(process, path, CONFIG)
    resume_and_compare(path, clean_run)


def test_sigterm_pauses_a_compact_explorer_and_resume_equals_a_clean_run(tmp_path, compact_clean_run):
    path = tmp_path / "db.sqlite"
    command = [sys.executable, "-m", "bbcore", "--db", str(path), "explore", COMPACT_CONFIG.name]
    process = start_explorer(path, COMPACT_CONFIG, "--store", "compact", captured=True)
    terminate_and_check_paused(process, path, COMPACT_CONFIG)
    assert stored_ranges(path, COMPACT_CONFIG) < COMPACT_RANGES  # paused while tracing
    result = subprocess.run(command, capture_output=True, text=True, env=ENV, timeout=300)
    assert result.returncode == 0, result.stderr
    assert f"{COMPACT_CONFIG.name} complete" in result.stdout
    assert compact_rows(path) == compact_clean_run


@pytest.mark.parametrize("store", ["full", "compact"])
def test_sigterm_while_the_workers_start_pauses_the_run(tmp_path, store):
    """A SIGTERM to the whole group while the spawned workers still import bbcore (before their
    initialiser ignores it) kills them: the run pauses (exit 130, "paused at"), it does not end
    with "A process in the process pool was terminated abruptly" (exit 2, as CI once saw), and the
    same command then completes (``runner.LocalRunner``)."""
    path = tmp_path / "db.sqlite"
    config = CONFIG if store == "full" else COMPACT_CONFIG
    process = start_explorer(path, config, "--store", store, captured=True)
    session = process.pid
    try:
        wait_until(
            lambda: sum("spawn_main" in cmd for _, cmd in session_processes(session)) >= 2,
            90,
            "the workers to be spawned",
        )
        os.killpg(session, signal.SIGTERM)
        out, err = process.communicate(timeout=120)
        wait_until(lambda: not session_processes(session), 10, "the explorer's children to end")
    finally:
        for pid, _ in session_processes(session):
            os.kill(pid, signal.SIGKILL)
    assert process.returncode == 130, err
    assert "Traceback" not in err and "terminated abruptly" not in err, err
    assert out.startswith(f"{config.name} paused at "), out
    command = [*BBCORE, "--db", str(path), "explore", config.name, "--store", store, "--workers", "2"]
    resumed = subprocess.run(command, capture_output=True, text=True, env=ENV, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{config.name} complete" in resumed.stdout
