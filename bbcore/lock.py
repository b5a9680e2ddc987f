"""The exclusive right to explore a configuration: one process at a time, released when it dies.

An exclusive byte-range lock (``fcntl``) on ``<database>.lock``, one byte per
configuration, is held for the whole run and released by the kernel when the
process ends, however it ends; threads of one process are kept apart by a
set of their own (``fcntl`` locks do not exclude them).  Every writer of a
configuration takes it: both pipelines (through ``bbcore.explore``), reset,
spectrums, migrate.  Readers never do (WAL).
"""

from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bbcore.config import Config
from bbcore.progress import ExploreError

_held: set[tuple[str, str]] = set()
_held_guard = threading.Lock()


@contextmanager
def exploration_lock(db_path: Path, config: Config) -> Iterator[None]:
    """Hold the exclusive right to write ``config`` in ``db_path``, or raise ExploreError."""
    key = (str(Path(db_path).resolve()), config.name)
    busy = ExploreError(
        f"{config.name} is being explored by another process on {db_path}; wait for it or stop it first"
    )
    with _held_guard:
        # fcntl locks do not exclude threads of one process: guard those here.
        if key in _held:
            raise busy
        _held.add(key)
    try:
        fd = os.open(f"{db_path}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as error:
        with _held_guard:
            _held.discard(key)
        raise ExploreError(f"cannot lock {db_path}: {error.strerror}") from None
    offset = config.atoms * 16 + config.width  # one byte per configuration
    try:
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, offset)
        except OSError:
            raise busy from None
        yield
    finally:
        os.close(fd)  # releases the lock
        with _held_guard:
            _held.discard(key)
