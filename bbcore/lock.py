"""The exclusive right to explore a configuration: one process at a time, released when it dies.

On a file, an exclusive byte-range lock (``fcntl``) on ``<database>.lock``,
one byte per configuration, is held for the whole run and released by the
kernel when the process ends, however it ends; threads of one process are
kept apart by a set of their own (``fcntl`` locks do not exclude them).  On
a server, the server's own advisory lock (``server.advisory_lock``), held on
a connection of its own and released by the server when that connection
ends: explorers on every machine share it; a run whose lock connection alone
is lost stops before its next rows (``server.check_lock``, in every
``store.write_transaction``).  Every writer of a configuration
takes it: both pipelines (through ``bbcore.explore``), reset, spectrums,
migrate.  Readers never do.
"""

from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bbcore import server
from bbcore.config import Config
from bbcore.progress import ExploreError
from bbcore.store import StoreError, is_server

_held: set[tuple[str, str]] = set()
_held_guard = threading.Lock()


def hold(db_path: Path, config: Config) -> Iterator[None]:
    """Hold the exclusive right to write ``config`` in ``db_path`` (file or server), or raise ExploreError.

    A plain generator, made a context manager below (``exploration_lock``): mutmut mutates no
    decorated function, and this one is what its run of this module tests (``bench/mutation.py lock``).
    """
    busy = ExploreError(
        f"{config.name} is being explored by another process on {db_path}; wait for it or stop it first"
    )
    if is_server(db_path):
        try:
            with server.advisory_lock(db_path, config, busy):
                yield
        except server.ServerError as error:  # the server could not be reached for the lock
            raise StoreError(str(error)) from None
        return
    key = (str(Path(db_path).resolve()), config.name)
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


exploration_lock = contextmanager(hold)
"""``with exploration_lock(db_path, config):`` holds the right to write ``config`` there (``hold``)."""
