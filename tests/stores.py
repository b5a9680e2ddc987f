"""The same configurations in two stores, read the same: what the copy and server-reader tests share.

``explore_sources`` makes a file per store kind holding A3_B5 and A4_B6
(and A3_B5's strategy book in the full one); ``outputs`` runs every CLI
reader on a database in this process (``bbcore.cli.main``, the real
command line) and returns what each printed, the database's own name taken
out, so that two stores compare byte for byte; ``checked`` runs
``bbcore check``; ``bbcore`` runs the command line in a subprocess (a
server test's one home for it), ``started`` starts it, and ``same`` takes out of an output what may
differ between two runs.  Imported by the test modules (a helper module,
like ``expect.py``).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
from pathlib import Path

from bbcore import families, queries, statistics
from bbcore import store as store_module
from bbcore.cli import main
from bbcore.config import Config
from bbcore.explore import explore
from bbcore.progress import COMPLETE
from bbcore.store import COMPACT, FULL, STORES, Book, close_database, open_database

CONFIGS = (Config(3, 5), Config(4, 6))
BOOK = Config(3, 5)
"""The configuration whose strategy book the full source holds."""


def cli(db: Path | str, *args: str) -> tuple[int, str, str]:
    """``bbcore --db DB ARGS`` run in this process (the real command line): status, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["--db", str(db), *args])
    return status, out.getvalue(), err.getvalue()


def bbcore(
    db: Path | str, *args: str, home: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """``bbcore --db DB ARGS`` in a subprocess, with a clean HOME (no ~/.pgpass of the machine's).

    Its data and cache folders are under ``home`` too: a compact run's shard
    files for a server go to ``home/cache`` (``server.shard_root``).
    """
    return subprocess.run(
        [sys.executable, "-m", "bbcore", "--db", str(db), *args],
        capture_output=True,
        text=True,
        env=_environment(home, env),
        timeout=300,
    )


def started(db: Path | str, *args: str, home: Path) -> subprocess.Popen:
    """``bbcore --db DB ARGS`` started in a subprocess of its own session (``os.killpg`` stops it
    with its workers), as ``bbcore`` runs it; its stdout and stderr piped."""
    return subprocess.Popen(
        [sys.executable, "-m", "bbcore", "--db", str(db), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_environment(home),
        start_new_session=True,
    )


def _environment(home: Path, env: dict[str, str] | None = None) -> dict[str, str]:
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CACHE_HOME": str(home / "cache"),
        "COLUMNS": "100",  # the width a report lays its panels out in, whatever runs the tests
        **(env or {}),
    }


def same(output: str) -> str:
    """What must be equal: the output without the time a book took and the exploration's timestamps."""
    output = re.sub(r"computed now, [0-9.]+ s", "computed now, N s", output)
    return re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", "TIME", output)


def explored_compact(path: Path, config: Config) -> Path:
    """``config`` explored into a compact store at ``path`` in this process, the database closed."""
    assert explore(config, path, store=COMPACT, workers=1) == COMPLETE
    close_database()
    return path


def explore_sources(folder: Path) -> dict[str, Path]:
    """A file per store kind holding CONFIGS complete; the full one has BOOK's strategy book."""
    found = {}
    for kind in STORES:
        path = folder / f"{kind}.sqlite"
        for config in CONFIGS:
            explore(config, path, store=kind, workers=1)
        found[kind] = path
    status, _, err = cli(found[FULL], "strategy", BOOK.name)
    assert status == 0, err
    return found


SUMS = 'SELECT SUM(nb_mol), COUNT(*), MAX(stop), AVG(nb_mol) FROM "ExploredRanges" WHERE config = ?'
"""Aggregates as a program of its own may ask them (``bbcore.store.db.execute_sql``)."""


def figures(db: Path | str, config: Config) -> list[str]:
    """The library's figures of ``config`` in ``db``, as ``repr`` shows them (what a program gets).

    An int must come back an int from either store: PostgreSQL's SUM of a
    bigint column is a ``numeric`` (a ``decimal.Decimal`` from psycopg),
    which prints as an int does in most outputs but not in ``repr``, JSON,
    or arithmetic with a float.  AVG is a float on both (its last digit may
    differ: only its type is compared).
    """
    open_database(db, write=False)
    try:
        *sums, average = store_module.db.execute_sql(SUMS, (config.name,)).fetchone()
        found = [
            repr(queries.config_state(config)),
            repr(store_module.stored_count(config)),
            repr(statistics.ambiguity_report(config)),
            repr(statistics.risk_lines(config)),
            repr(tuple(sums)),
            type(average).__name__,
        ]
        if store_module.is_compact(config):
            o = families.FamilyOrdinals.stored(config)
            found += [
                repr(families.spectra_counts(config)),
                repr((o.position, o.seen_families, o.seen_spectra, o.spectra_before)),
            ]
    finally:
        close_database()
    return found


def readers(db: Path | str, config: Config) -> list[tuple[str, ...]]:
    """Every reader's command line on a configuration, the spectrum and size taken from its groups."""
    open_database(db, write=False)
    try:
        group = queries.group_page(config, 0, 1, all_rows=True)[0]
        spectrum, size = group.spectrum, queries.group_sizes(config)[-1]
        book = Book.select().where(Book.config == config.name).exists()
    finally:
        close_database()
    commands = [
        ("groups", config.name),
        ("groups", config.name, "--by-size"),
        ("groups", config.name, "--all"),
        ("groups", config.name, "--all", "--by-size"),
        ("groups", config.name, "--size", str(size)),
        ("show", config.name, "--spectrum", spectrum),
        ("decode", config.name, spectrum),
        ("report", config.name),
    ]
    if book:  # read back, never computed (that would print its own seconds)
        commands.append(("strategy", config.name))
    return commands


def outputs(db: Path | str, configs=CONFIGS) -> dict[tuple[str, ...], object]:
    """What each reader prints on ``db`` (the database's own name taken out); status: these configs' lines."""
    printed: dict[tuple[str, ...], object] = {}
    for args in [("status",)] + [command for config in configs for command in readers(db, config)]:
        status, out, err = cli(db, *args)
        assert status == 0, (args, err)
        printed[args] = out.replace(str(db), "DATABASE")
    names = tuple(config.name for config in configs)
    lines = str(printed[("status",)]).splitlines()  # the table's header and these configurations
    printed[("status",)] = [line for line in lines[1:] if line.startswith(("config ", *names))]
    return printed


def checked(db: Path | str, config: Config) -> str:
    """``bbcore check`` agrees on every check; what it printed."""
    status, out, err = cli(db, "check", config.name, "--sample", "2000", "--reference", "100")
    assert status == 0, out + err
    assert f"{config.name}: every check agrees" in out
    return out
