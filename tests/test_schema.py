"""The schema version and the store kind, on both stores, and readers that create nothing.

Issue 32, D9 and D11:

- a file records its schema version (SQLite's ``user_version``) as a
  server does (its ``SchemaVersion`` table); a file of a newer version, or
  one whose configuration names a store this bbtui does not know, is
  refused in one line, and left as it was;
- ``bbcore copy`` asks the same of its source and of its target;
- a read-only command (``status``) never turns a file into a database: an
  empty file, or an SQLite file of someone else's, is refused and left as
  it was.
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import psycopg
import pytest
from expect import one_line_error
from stores import cli

from bbcore import server, store
from bbcore.config import Config
from bbcore.explore import explore
from bbcore.progress import COMPLETE

CONFIG = Config(3, 5)


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    """A3_B5 explored (full store) into a file."""
    path = tmp_path_factory.mktemp("schema") / "source.sqlite"
    assert explore(CONFIG, path, workers=1) == COMPLETE
    store.close_database()
    return path


def _copy_of(source: Path, folder: Path, name: str) -> Path:
    path = folder / name
    path.write_bytes(source.read_bytes())
    return path


def _user_version(path: Path) -> int:
    with sqlite3.connect(path) as connection:
        return connection.execute("PRAGMA user_version").fetchone()[0]


def _contents(path: Path) -> tuple[int, list[str]]:
    """What a file holds: its version and every table's rows (SQLite's header counters aside)."""
    connection = sqlite3.connect(path)
    try:
        return connection.execute("PRAGMA user_version").fetchone()[0], list(connection.iterdump())
    finally:
        connection.close()


def _set(path: Path, *statements: str) -> tuple[int, list[str]]:
    connection = sqlite3.connect(path)
    with connection:
        for statement in statements:
            connection.execute(statement)
    connection.close()
    return _contents(path)


def test_a_file_records_the_schema_version(source):
    assert _user_version(source) == server.SCHEMA_VERSION


def test_a_file_made_before_versions_is_read_and_stamped_by_a_writer(source, tmp_path):
    path = _copy_of(source, tmp_path, "old.sqlite")
    _set(path, "PRAGMA user_version = 0")
    status, out, err = cli(path, "status")
    assert status == 0 and "A3_B5" in out, err
    assert _user_version(path) == 0  # a reader writes nothing
    assert explore(Config(2, 3), path, workers=1) == COMPLETE
    store.close_database()
    assert _user_version(path) == server.SCHEMA_VERSION


@pytest.mark.parametrize(
    ("version", "words"),
    [(server.SCHEMA_VERSION + 98, "upgrade bbtui"), (-1, "open it with the bbtui that made it")],
)
@pytest.mark.parametrize("command", [("status",), ("groups", CONFIG.name), ("explore", "A2_B3")])
def test_a_file_of_another_schema_version_is_refused_in_one_line(source, tmp_path, version, words, command):
    path = _copy_of(source, tmp_path, "other.sqlite")
    before = _set(path, f"PRAGMA user_version = {version}")
    status, _, err = cli(path, *command)
    one_line_error(status, err, f"schema version {version}", words)
    assert _contents(path) == before


@pytest.mark.parametrize("command", [("status",), ("groups", CONFIG.name), ("explore", "A2_B3")])
def test_an_unknown_store_is_refused_in_one_line(source, tmp_path, command):
    path = _copy_of(source, tmp_path, "odd.sqlite")
    before = _set(path, "UPDATE Configurations SET store = 'sparse'")
    status, _, err = cli(path, *command)
    one_line_error(status, err, "A3_B5", "'sparse'", "does not know")
    assert _contents(path) == before


def test_status_never_makes_a_database_of_an_empty_file(tmp_path):
    path = tmp_path / "empty.sqlite"
    path.touch()
    status, _, err = cli(path, "status")
    one_line_error(status, err, "empty file", "not a bbtui database")
    assert path.stat().st_size == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.sqlite"]


def test_status_never_adds_tables_to_someone_elses_database(tmp_path):
    path = tmp_path / "theirs.sqlite"
    before = _set(path, "CREATE TABLE notes (text TEXT)")
    status, _, err = cli(path, "status")
    one_line_error(status, err, "not a bbtui database")
    assert _contents(path) == before


# -- bbcore copy -------------------------------------------------------------------------------


@pytest.mark.parametrize("side", ["source", "target"])
def test_copy_refuses_a_file_of_another_schema_version_either_side(source, tmp_path, side):
    newer = _copy_of(source, tmp_path, "newer.sqlite")
    _set(newer, f"PRAGMA user_version = {server.SCHEMA_VERSION + 1}")
    if side == "target":
        _set(newer, "DELETE FROM Configurations")
    other = tmp_path / "other.sqlite"
    if side == "source":
        status, _, err = cli(newer, "copy", CONFIG.name, str(other))
    else:
        status, _, err = cli(source, "copy", CONFIG.name, str(newer))
    one_line_error(status, err, f"schema version {server.SCHEMA_VERSION + 1}", "upgrade bbtui")
    assert not other.exists()


def test_copy_refuses_an_unknown_store_in_the_source(source, tmp_path):
    odd = _copy_of(source, tmp_path, "odd.sqlite")
    _set(odd, "UPDATE Configurations SET store = 'sparse'")
    target = tmp_path / "target.sqlite"
    status, _, err = cli(odd, "copy", CONFIG.name, str(target))
    one_line_error(status, err, "'sparse'", "does not know")
    assert not target.exists()


@pytest.mark.skipif(sys.platform != "linux", reason="the test server runs on Linux")
@pytest.mark.parametrize("side", ["source", "target"])
def test_copy_refuses_a_server_of_another_schema_version_either_side(source, pg_url, tmp_path, side):
    if side == "source":
        assert cli(source, "copy", CONFIG.name, pg_url)[0] == 0
    else:
        store.open_database(pg_url)
    store.close_database()
    with psycopg.connect(pg_url, autocommit=True) as connection:
        connection.execute('UPDATE "SchemaVersion" SET version = %s', (server.SCHEMA_VERSION + 1,))
    other = tmp_path / "other.sqlite"
    if side == "source":
        status, _, err = cli(pg_url, "copy", CONFIG.name, str(other))
    else:
        status, _, err = cli(source, "copy", CONFIG.name, pg_url)
    one_line_error(status, err, f"schema version {server.SCHEMA_VERSION + 1}", "upgrade bbtui")
    assert not other.exists()
    with psycopg.connect(pg_url) as connection:
        rows = connection.execute('SELECT COUNT(*) FROM "Molecules"').fetchone()[0]
    assert rows == (CONFIG.nb_mol if side == "source" else 0)
