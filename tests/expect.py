"""What the CLI tests expect of an error: one line, a non-zero exit, never a traceback.

Imported by the test modules that run ``bbcore``; it holds no test.
"""

from __future__ import annotations


def one_line_error(status: int, err: str, *words: str) -> None:
    """A non-zero exit with exactly one line on stderr, ``bbcore: error: ...``, containing ``words``."""
    assert status != 0, err
    assert err.count("\n") == 1, err
    assert "Traceback" not in err
    for word in words:
        assert word in err, err
