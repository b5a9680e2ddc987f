"""How the CLI tests run ``bbcore`` and what they expect of an error.

``bbcore(...)`` runs the real command in a fresh process; ``one_line_error``
is what every refusal must look like: one line, a non-zero exit, never a
traceback.  Imported by the test modules that run ``bbcore``; it holds no test.
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
