"""How the CLI tests run ``bbcore`` and what they expect of an error.

``bbcore(...)`` runs the real command in a fresh process; ``one_line_error``
is what every refusal must look like: one line, a non-zero exit, never a
traceback; ``disk_full_at`` fills the disk in the middle of a run.  Imported
by the test modules that run ``bbcore`` (and the TUI's); it holds no test.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BBCORE = [sys.executable, "-m", "bbcore"]


def bbcore(
    *args: str, stdin: str | None = None, env: dict | None = None, timeout: float = 600
) -> subprocess.CompletedProcess:
    """Run the real ``bbcore`` command in a fresh process (stdout and stderr as the user sees them)."""
    return subprocess.run(
        [*BBCORE, *args],
        capture_output=True,
        text=True,
        input=stdin,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        cwd=ROOT,
        timeout=timeout,
    )


def one_line_error(status: int, err: str, *words: str) -> None:
    """A non-zero exit with exactly one line on stderr, ``bbcore: error: ...``, containing ``words``."""
    assert status != 0, err
    assert err.count("\n") == 1, err
    assert "Traceback" not in err
    for word in words:
        assert word in err, err


def disk_full_at(monkeypatch, chunk: int) -> dict[str, int]:
    """Make the ``chunk``-th range's transaction of a full-store run fail as SQLite does when the
    disk is full; returns the count of transactions tried (``{"n": ...}``).

    SQLite rolls the transaction back itself (SQLITE_FULL), so the block's own rollback then
    fails ("cannot rollback - no transaction is active") and used to hide the cause.
    """
    import sqlite3

    import bbcore.full as full_module
    from bbcore.store import db

    commit = full_module._commit_chunk
    calls = {"n": 0}

    def filling(config, low, high, count, stamp, write):
        calls["n"] += 1
        if calls["n"] != chunk:
            return commit(config, low, high, count, stamp, write)

        def full():
            write()
            db.execute_sql("ROLLBACK")
            raise sqlite3.OperationalError("database or disk is full")

        return commit(config, low, high, count, stamp, full)

    monkeypatch.setattr(full_module, "_commit_chunk", filling)
    return calls
