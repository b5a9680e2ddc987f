"""Processes read from /proc, and polling: what the process tests and the server tests check.

A command under test runs in a session of its own (``start_new_session``),
so every process it starts carries that session id, even once adopted by
init: ``session_processes`` finds whatever of it is still alive.
Imported by the test modules that start processes; it holds no test.
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

from bbcore.config import Config


def session_processes(session: int) -> list[tuple[int, str]]:
    """``(pid, command line)`` of every live (not zombie) process of a session."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue  # ended meanwhile
        fields = stat[stat.rindex(")") + 2 :].split()  # state ppid pgrp session ...
        if int(fields[3]) == session and fields[0] != "Z":
            found.append((int(entry.name), command))
    return found


def waits_in(pid: int) -> str:
    """The kernel function a sleeping process waits in (``/proc/PID/wchan``): ``do_wait`` for a
    child to end, ``pipe_write`` for room in a pipe...; "" while it runs or once it has ended."""
    try:
        where = Path(f"/proc/{pid}/wchan").read_text()
    except OSError:
        return ""
    return "" if where == "0" else where


READ = {"x86_64": "0", "aarch64": "63"}.get(os.uname().machine)
"""The number of the read system call on this machine (None where not known here)."""


def reads_its_terminal(pid: int) -> bool:
    """Whether a process waits in a read of a terminal: a pager waiting for a key.

    ``/proc/PID/syscall`` names the call a blocked process is in and its
    arguments (the first, a read's file descriptor); it says "running" while
    the process runs or is about to (a signal just woke it)."""
    try:
        call = Path(f"/proc/{pid}/syscall").read_text().split()
        source = os.readlink(f"/proc/{pid}/fd/{int(call[1], 16)}")
    except (OSError, IndexError, ValueError):
        return False
    return call[0] == READ and source.startswith(("/dev/pts/", "/dev/tty"))


def stored_ranges(path: Path, config: Config) -> int:
    """ExploredRanges rows of ``config`` so far (0 before the table exists)."""
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5) as connection:
            return connection.execute(
                "SELECT COUNT(*) FROM ExploredRanges WHERE config = ?", (config.name,)
            ).fetchone()[0]
    except sqlite3.Error:
        return 0


def wait_until(condition, timeout: float, what: str) -> None:
    """Poll ``condition()`` until it holds, or fail saying ``what`` did not happen."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)
