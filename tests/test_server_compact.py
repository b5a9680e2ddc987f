"""The compact store explored on a real PostgreSQL server (tests/postgres.py): parity, rows, kill -9.

Store parity: a configuration explored compact into a server and into an
SQLite file gives the same rows (Families, Profiles, GroupedShards,
ExploredRanges, Configurations) and the same output of every reader (the
database's name aside).  A compact run on the server killed with SIGKILL
in its tracing, grouping or writing resumes to the same rows as a run
that was never stopped.
"""

from __future__ import annotations

import signal
import sqlite3
import sys
from itertools import zip_longest

import psycopg
import pytest
from dask_local import LocalDask
from stores import bbcore, figures, same
from test_compact import run_killed, start_compact

from bbcore import server, store
from bbcore.config import Config
from bbcore.explore import explore
from bbcore.progress import COMPLETE

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sys.platform != "linux", reason="the test server runs on Linux"),
]

CONFIGS = (Config(3, 5), Config(4, 6))

ROWS = {
    "Families": 'SELECT * FROM "Families" WHERE config = ? ORDER BY position',
    "Profiles": 'SELECT * FROM "Profiles" WHERE config = ? ORDER BY 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12',
    "GroupedShards": (
        'SELECT shard, records, spectra, families, risk, sizes FROM "GroupedShards" '
        "WHERE config = ? ORDER BY 1"
    ),
    "ExploredRanges": 'SELECT start, stop, nb_mol FROM "ExploredRanges" WHERE config = ? ORDER BY 1',
    "Configurations": (
        'SELECT config, nb_mol, complete, store, shards FROM "Configurations" WHERE config = ?'
    ),
}
"""What a compact run leaves in the database, timestamps left out, in the same order on both stores."""


def rows_of(db: str, config: Config) -> dict[str, list[tuple]]:
    """Every table's rows of ``config`` in ``db`` (a server URL or an SQLite file), as Python values."""
    if server.is_url(db):
        with psycopg.connect(db) as connection:
            return {
                table: connection.execute(query.replace("?", "%s"), (config.name,)).fetchall()
                for table, query in ROWS.items()
            }
    with sqlite3.connect(db) as connection:
        return {table: connection.execute(query, (config.name,)).fetchall() for table, query in ROWS.items()}


def _first_difference(one: list, other: list) -> int | None:
    return next((i for i, (a, b) in enumerate(zip_longest(one, other)) if a != b), None)


@pytest.fixture(scope="module", params=CONFIGS, ids=[c.name for c in CONFIGS])
def both(request, pg_server, tmp_path_factory):
    """A configuration explored compact (by the CLI) into a server database and into an SQLite file."""
    config = request.param
    home = tmp_path_factory.mktemp("home")
    dbname = pg_server.create_database()
    server, lite = pg_server.url(dbname), str(home / "parity.sqlite")
    explored = {
        db: bbcore(db, "explore", config.name, "--store", "compact", home=home) for db in (server, lite)
    }
    yield config, server, lite, home, explored
    pg_server.drop_database(dbname)


def test_a_compact_exploration_on_the_server_completes(both):
    config, server, lite, home, explored = both
    for db in (server, lite):
        assert explored[db].returncode == 0, explored[db].stderr
        assert f"{config.name} complete" in explored[db].stdout
    assert not (home / "cache" / "bbtui" / "shards").exists() or not any(
        (home / "cache" / "bbtui" / "shards").rglob("*.npy")
    ), "the shard files are deleted once the run is complete"


def test_the_server_holds_the_same_rows_as_the_file(both):
    config, server, lite, _, _ = both
    on_server, on_file = rows_of(server, config), rows_of(lite, config)
    assert on_server["Families"], "families were written"
    for table in ROWS:
        differ = _first_difference(on_server[table], on_file[table])
        assert differ is None, (
            table,
            differ,
            on_server[table][differ : differ + 1],
            on_file[table][differ : differ + 1],
        )


def test_the_librarys_figures_are_the_same_python_values_on_both_stores(both):
    """Sums come back as ints from the server as from SQLite (not as decimal.Decimal), the resumed
    writer's running counts among them."""
    config, server, lite, _, _ = both
    assert figures(server, config) == figures(lite, config)


def test_the_family_indexes_are_built_on_the_server(both):
    config, server, _, _, _ = both
    with psycopg.connect(server) as connection:
        indexes = {
            name
            for (name,) in connection.execute("SELECT indexname FROM pg_indexes WHERE tablename = 'Families'")
        }
    assert {f"Families_{config.name}_key", f"Families_{config.name}_size"} <= indexes


def readers(config: Config, lite: str) -> dict[str, tuple[str, ...]]:
    """Every reader of a compact store, with a spectrum of its largest family (read from the file)."""
    with sqlite3.connect(lite) as connection:
        spectrum, size = connection.execute(
            'SELECT spectrum, nb_mol FROM "Families" WHERE config = ? ORDER BY nb_mol DESC, position LIMIT 1',
            (config.name,),
        ).fetchone()
    name = config.name
    half = len(spectrum) // 2  # a partial game: the hits and reflections of half the positions
    partial = "".join(c if c in "@&" else "-" for c in spectrum[:half]) + "-" * (len(spectrum) - half)
    return {
        "status": ("status",),
        "groups": ("groups", name),
        "groups by size": ("groups", name, "--by-size"),
        "every group": ("groups", name, "--all"),
        "every group by size": ("groups", name, "--all", "--by-size"),
        "groups of one size": ("groups", name, "--size", str(size)),
        "every group of one size": ("groups", name, "--all", "--size", str(size)),
        "show a spectrum": ("show", name, "--spectrum", spectrum),
        "decode a spectrum": ("decode", name, spectrum),
        "decode a partial game": ("decode", name, partial),
        "report": ("report", name),
        "export the spectra": ("export", name, "--table", "spectrums"),
        "export the molecules": ("export", name),
        "strategy": ("strategy", name),
    }


READER_NAMES = (
    "status",
    "groups",
    "groups by size",
    "every group",
    "every group by size",
    "groups of one size",
    "every group of one size",
    "show a spectrum",
    "decode a spectrum",
    "decode a partial game",
    "report",
    "export the spectra",
    "export the molecules",
    "strategy",
)


@pytest.mark.parametrize("reader", READER_NAMES)
def test_every_reader_says_the_same_on_both_stores(both, reader):
    config, server, lite, home, _ = both
    args = readers(config, lite)[reader]
    on_server = bbcore(server, *args, home=home)
    on_file = bbcore(lite, *args, home=home)
    assert on_server.returncode == on_file.returncode == 0, (on_server.stderr, on_file.stderr)
    masked = str(store.location(server))
    server_lines = same(on_server.stdout.replace(masked, "DB")).splitlines()
    file_lines = same(on_file.stdout.replace(lite, "DB")).splitlines()
    assert server_lines, "the reader printed something"
    differ = _first_difference(server_lines, file_lines)
    assert differ is None, (differ, server_lines[differ : differ + 1], file_lines[differ : differ + 1])


# -- killed, then resumed ----------------------------------------------------------------

KILLED = Config(4, 6)
SHARDS = 4


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> dict[str, list[tuple]]:
    """KILLED explored compact into an SQLite file without a stop, as the killed runs explore it."""
    path = tmp_path_factory.mktemp("clean") / "clean.sqlite"
    start_compact(path, KILLED, SHARDS)
    assert explore(KILLED, path, store="compact", range_size=700) == COMPLETE
    return rows_of(str(path), KILLED)


@pytest.mark.parametrize("point, count", [("tracing", 5), ("profiles", 1), ("grouping", 2), ("writing", 3)])
def test_killed_on_the_server_resumes_to_the_clean_result(pg_url, tmp_path, monkeypatch, clean, point, count):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # the server's shard root
    start_compact(pg_url, KILLED, SHARDS)
    killed = run_killed(pg_url, KILLED.name, point, count, 1)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    stopped = rows_of(pg_url, KILLED)
    assert stopped["Configurations"][0][2] is False
    grouped = len(stopped["GroupedShards"])
    assert grouped == {"grouping": 1, "writing": SHARDS}.get(point, 0)
    if point == "tracing":
        assert 0 < len(stopped["ExploredRanges"]) < len(clean["ExploredRanges"])
    if point == "writing":
        assert 0 < len(stopped["Families"]) < len(clean["Families"])
    store.open_database(pg_url)
    assert explore(KILLED, pg_url, range_size=700) == COMPLETE
    resumed = rows_of(pg_url, KILLED)
    for table in ROWS:
        if table != "ExploredRanges":  # a resumed tracing cuts what is left into its own ranges
            assert resumed[table] == clean[table], table
    assert sum(n for _, _, n in resumed["ExploredRanges"]) == KILLED.nb_mol
    assert not any((tmp_path / "cache").rglob("*.npy")), "the shard folder is deleted once complete"


# -- on a Dask cluster -------------------------------------------------------------------


def test_a_cluster_run_writes_the_same_rows_to_the_server(pg_url, tmp_path):
    """The driver writes to the server; the workers see only the shard folder (``--shards``)."""
    config = Config(4, 6)
    lite = tmp_path / "local.sqlite"
    assert explore(config, lite, store="compact") == COMPLETE
    cluster = LocalDask(tmp_path / "dask")
    try:
        result = bbcore(
            pg_url,
            "explore",
            config.name,
            "--cluster",
            cluster.address,
            "--shards",
            str(tmp_path / "shared"),
            home=tmp_path,
        )
    finally:
        cluster.close()
    assert result.returncode == 0, result.stderr
    assert f"worker threads on the Dask scheduler at {cluster.address}" in result.stderr
    assert rows_of(pg_url, config) == rows_of(str(lite), config)
    assert not (tmp_path / "shared" / config.name).exists()
