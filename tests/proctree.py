"""Processes read from /proc, and polling: what the process tests and the server tests check.

A command under test runs in a session of its own (``start_new_session``),
so every process it starts carries that session id, even once adopted by
init: ``session_processes`` finds whatever of it is still alive.
Imported by the test modules that start processes; it holds no test.
"""

from __future__ import annotations

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
