"""``bbcore.store``'s helpers called in this process: errors read, files judged, a file finished.

Written for the mutation run of ``bbcore/store.py`` (issue 33, section 5,
``bench/mutation_notes.md``).  Its helpers were reached only through the
command line's subprocesses (``tests/test_cli.py``, ``test_readonly.py``,
``test_disk_full.py``), out of mutmut's sight: a full disk hidden behind
the rollback that followed it, an interrupted statement found the same way,
each one-line message of an SQLite error, what a path is (a folder, a FIFO,
a socket, a device, a link loop), the default database, a WAL file left as
one self-contained file, and an older file opened read-only through its shims.
"""

from __future__ import annotations

import errno
import os
import socket
import sqlite3
from pathlib import Path

import pytest

from bbcore import server, store
from bbcore.config import Config


class DriverError(Exception):
    """An error wrapping the driver's (its first argument), saying nothing of it: as peewee's may."""

    def __str__(self) -> str:
        return "an error of the driver"


def chained(inner: BaseException, how: str) -> BaseException:
    """An error raised after ``inner``: as its cause, its context, or wrapping it (its first argument)."""
    outer = (
        DriverError(inner) if how == "wrapped" else RuntimeError("cannot rollback - no transaction is active")
    )
    if how == "cause":
        outer.__cause__ = inner
    elif how == "context":
        outer.__context__ = inner
    return outer


# is_disk_full and _was_interrupted: the error itself, or behind what followed it


@pytest.mark.parametrize("words", [*store.DISK_FULL, "12288 requested and 4096 written"])
def test_a_full_disk_is_read_from_its_words(words):
    assert store.is_disk_full(sqlite3.OperationalError(f"oops: {words}"))
    assert not store.is_disk_full(sqlite3.OperationalError("database is locked"))


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EDQUOT])
def test_a_full_disk_is_read_from_its_errno(code):
    assert store.is_disk_full(OSError(code, "write failed"))


def test_a_full_disk_is_read_from_a_servers_sqlstate():
    error = RuntimeError("could not extend file")
    error.sqlstate = "53100"
    assert store.is_disk_full(error)
    error.sqlstate = "23505"
    assert not store.is_disk_full(error)


@pytest.mark.parametrize("how", ["cause", "context", "wrapped"])
def test_a_full_disk_is_found_behind_what_followed_it(how):
    assert store.is_disk_full(chained(sqlite3.OperationalError("database or disk is full"), how))
    assert store.is_disk_full(chained(chained(OSError(errno.ENOSPC, "write"), how), "context"))
    assert store.is_disk_full(chained(chained(OSError(errno.ENOSPC, "write"), "context"), how))


@pytest.mark.parametrize(
    ("found", "message"),
    [(store.is_disk_full, "database or disk is full"), (store._was_interrupted, "interrupted")],
    ids=["disk full", "interrupted"],
)
def test_a_cause_is_followed_before_a_context(found, message):
    outer = chained(sqlite3.OperationalError(message), "cause")
    outer.__context__ = ValueError("unrelated")
    assert found(outer)
    wrapped = chained(sqlite3.OperationalError(message), "wrapped")
    wrapped.__context__ = ValueError("unrelated")
    assert found(wrapped)


def test_other_errors_are_not_a_full_disk_and_a_loop_of_contexts_ends():
    assert not store.is_disk_full(Exception())
    assert not store.is_disk_full(OSError(errno.EACCES, "permission denied"))
    assert not store.is_disk_full(Exception("two", ValueError("arguments, the first not an error")))
    first, second = RuntimeError("first"), RuntimeError("second")
    first.__context__, second.__context__ = second, first
    assert not store.is_disk_full(first)
    assert not store._was_interrupted(first)


@pytest.mark.parametrize("how", ["cause", "context", "wrapped"])
def test_an_interrupted_statement_is_found_behind_the_failed_rollback(how):
    assert store.opened.path is None or not store.is_server(store.opened.path)
    assert store._was_interrupted(sqlite3.OperationalError("interrupted"))
    assert store._was_interrupted(chained(sqlite3.OperationalError("interrupted"), how))
    assert store._was_interrupted(chained(chained(sqlite3.OperationalError("interrupted"), how), "context"))
    assert store._was_interrupted(chained(chained(sqlite3.OperationalError("interrupted"), "context"), how))
    assert not store._was_interrupted(chained(sqlite3.OperationalError("database is locked"), how))
    assert not store._was_interrupted(Exception())


# error_line: one line for each kind of SQLite error


@pytest.mark.parametrize(
    ("message", "line"),
    [
        (
            "file is not a database",
            "{path} is not a bbtui database (or it is corrupt): file is not a database",
        ),
        (
            "database disk image is malformed\nmore",
            "{path} is not a bbtui database (or it is corrupt): database disk image is malformed",
        ),
        ("database is locked", "{path} is locked by another process; try again when it is done"),
        ("database table is busy", "{path} is locked by another process; try again when it is done"),
        ("unable to open database file", "cannot open {path}: unable to open database file"),
        (
            "no such table: Books",
            "{path} is not a bbtui database, or one made by an older bbtui: no such table: Books",
        ),
        ("some other trouble\nsecond line", "{path}: some other trouble"),
        ("", "{path}: OperationalError"),
    ],
)
def test_each_sqlite_error_has_its_line(tmp_path, message, line):
    path = tmp_path / "db.sqlite"
    assert store.error_line(sqlite3.OperationalError(message), path) == line.format(path=path)


@pytest.mark.parametrize("message", ["attempt to write a readonly database", "the file is read-only"])
def test_a_read_only_error_says_how_to_write(tmp_path, message):
    path = tmp_path / "db.sqlite"
    line = store.error_line(sqlite3.OperationalError(message), path)
    assert line == store.read_only_message(path)
    assert line == (
        f"{path} is read-only (the file or its folder): to write, copy it "
        f"(cp {path} copy.sqlite, then --db copy.sqlite) or pass --db with another path"
    )


def test_a_full_disk_behind_a_rollback_says_the_disk_is_full(tmp_path):
    path = tmp_path / "db.sqlite"
    error = chained(sqlite3.OperationalError("database or disk is full"), "context")
    assert store.error_line(error, path) == (
        f"the disk holding {path} is full; what was stored is kept (free some space and try again)"
    )


# what a path is


def test_a_missing_path_or_a_regular_file_has_no_problem(tmp_path):
    assert store.file_problem(tmp_path / "missing.sqlite") is None
    (tmp_path / "file").write_bytes(b"")
    assert store.file_problem(tmp_path / "file") is None
    assert store.exists(tmp_path / "file")
    assert not store.exists(tmp_path / "missing.sqlite")


def test_a_folder_a_fifo_a_socket_a_device_and_a_loop_are_not_database_files(tmp_path):
    assert store.file_problem(tmp_path) == f"{tmp_path} is a directory, not a database file"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    not_a_file = "not a regular file: a database is a file"
    assert store.file_problem(fifo) == f"{fifo} is a FIFO (named pipe), {not_a_file}"
    sock = tmp_path / "sock"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(sock))
    try:
        assert store.file_problem(sock) == f"{sock} is a socket, {not_a_file}"
    finally:
        listener.close()
    device = Path("/dev/null")
    assert store.file_problem(device) == f"{device} is a device, {not_a_file}"
    loop = tmp_path / "loop"
    loop.symlink_to(tmp_path / "loop")
    never = "(its links never reach a file): not a database"
    assert store.file_problem(loop) == f"{loop} is a symbolic link loop {never}"
    assert store.exists(loop)  # there, so that opening it says what it is


def test_a_path_through_a_file_cannot_be_opened(tmp_path):
    (tmp_path / "file").write_bytes(b"")
    inside = tmp_path / "file" / "db.sqlite"
    assert store.file_problem(inside) == f"cannot open {inside}: {os.strerror(errno.ENOTDIR)}"


def test_a_database_file_is_checked_by_sqlite_itself(tmp_path):
    store.check_database_file(tmp_path / "missing.sqlite")
    (tmp_path / "empty.sqlite").write_bytes(b"")
    store.check_database_file(tmp_path / "empty.sqlite")
    sqlite3.connect(tmp_path / "real.sqlite").execute("CREATE TABLE t (x)").connection.close()
    store.check_database_file(tmp_path / "real.sqlite")
    text = tmp_path / "text.sqlite"
    text.write_text("a line of text, and another, long enough to be read as a header\n" * 4)
    with pytest.raises(store.StoreError) as refused:
        store.check_database_file(text)
    assert str(refused.value) == f"{text} is not a bbtui database (or it is corrupt): file is not a database"
    with pytest.raises(store.StoreError) as folder:
        store.check_database_file(tmp_path)
    assert str(folder.value) == f"{tmp_path} is a directory, not a database file"


def test_a_read_only_uri_names_the_whole_path_quoted(tmp_path, monkeypatch):
    folder = tmp_path / "a b?c"
    folder.mkdir()
    monkeypatch.chdir(folder)
    (folder / "db.sqlite").write_bytes(b"")
    assert store.read_only_uri(Path("db.sqlite")) == f"file:{tmp_path}/a%20b%3Fc/db.sqlite?mode=ro"
    assert store.writable(Path("db.sqlite"))
    # in a folder this process may write, SQLite keeps its locking, whatever the file holds
    (folder / "text.sqlite").write_text("not a database, long enough to have a header\n" * 4)
    assert store.read_only_uri(folder / "text.sqlite") == f"file:{tmp_path}/a%20b%3Fc/text.sqlite?mode=ro"
    assert store.writable(folder / "missing.sqlite")


# the default database


def test_the_default_database_is_bbtui_db_else_under_the_data_home(tmp_path, monkeypatch):
    monkeypatch.setenv("BBTUI_DB", "~/mine.sqlite")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert store.default_path() == tmp_path / "mine.sqlite"
    assert store.default_description() == str(tmp_path / "mine.sqlite")
    monkeypatch.setenv("BBTUI_DB", "postgresql://someone@somewhere/games")
    assert store.default_path() == server.ServerURL("postgresql://someone@somewhere/games")
    assert store.is_server(store.default_path())
    assert store.exists(store.default_path())
    monkeypatch.setenv("BBTUI_DB", "")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert store.default_path() == tmp_path / "data" / "bbtui" / "blackbox.sqlite"
    monkeypatch.delenv("BBTUI_DB")
    monkeypatch.delenv("XDG_DATA_HOME")
    assert store.default_path() == tmp_path / ".local" / "share" / "bbtui" / "blackbox.sqlite"


def test_a_bbtui_db_libpq_cannot_parse_is_named_not_shown(monkeypatch):
    monkeypatch.setenv("BBTUI_DB", "host='secret")
    with pytest.raises(store.StoreError) as refused:
        store.default_path()
    message = str(refused.value)
    assert message.startswith("$BBTUI_DB: not a valid PostgreSQL connection string")
    assert "secret" not in message
    assert store.default_description() == message


def test_a_location_is_a_path_or_a_server():
    url = server.ServerURL("postgresql://someone@somewhere/games")
    assert store.location(url) is url
    assert store.location("dbname=games") == server.ServerURL("dbname=games")
    assert store.location(Path("~/x.sqlite")) == Path.home() / "x.sqlite"
    assert not store.is_server(None)
    assert not store.is_server("x.sqlite")
    assert not store.is_server(Path("x.sqlite"))


def test_a_writer_sorts_with_helper_threads_and_a_reader_is_left_alone(tmp_path):
    """A writer's connection lets SQLite's sorter use ``SORTER_THREADS`` helper threads (the family
    indexes are built faster); a read-only one keeps SQLite's default, none."""
    path = tmp_path / "db.sqlite"
    store.open_database(path)
    try:
        assert store.db.execute_sql("PRAGMA threads").fetchone()[0] == store.SORTER_THREADS == 2
    finally:
        store.close_database()
    store.open_database(path, write=False)
    try:
        assert store.db.execute_sql("PRAGMA threads").fetchone()[0] == 0
    finally:
        store.close_database()


# a file finished after a writer: one self-contained file


def test_a_wal_file_is_finished_in_delete_mode(tmp_path):
    path = tmp_path / "db.sqlite"
    assert not store.finish_file(path)
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("CREATE TABLE t (x)")
    connection.execute("INSERT INTO t VALUES (1)")
    connection.commit()
    assert not store.finish_file(path)  # another connection holds it: it stays in WAL mode
    connection.close()
    # left in WAL mode, as by a killed run
    sqlite3.connect(path).execute("PRAGMA journal_mode=WAL").connection.close()
    assert store.finish_file(path)
    assert not Path(f"{path}-wal").exists()
    check = sqlite3.connect(path)
    assert check.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    assert check.execute("SELECT x FROM t").fetchall() == [(1,)]
    check.close()
    assert store.finish_file(path)  # already in DELETE mode


def test_a_file_that_is_not_a_database_is_not_finished(tmp_path):
    path = tmp_path / "text.sqlite"
    path.write_text("not a database at all, and long enough to have a header\n" * 4)
    assert not store.finish_file(path)
    assert path.read_text().startswith("not a database")


# an older file read: shims, never a write


def test_an_older_file_is_read_through_shims_and_never_written(tmp_path):
    path = tmp_path / "old.sqlite"
    old = sqlite3.connect(path)
    old.execute(
        'CREATE TABLE "Configurations" (config TEXT PRIMARY KEY, nb_mol INTEGER, nb_atoms INTEGER, '
        "width INTEGER, complete INTEGER, dh1 TEXT, dh2 TEXT)"
    )
    old.execute("INSERT INTO \"Configurations\" VALUES ('A2_B4', 120, 2, 4, 1, 'x', 'y')")
    old.commit()
    old.close()
    before = path.read_bytes()
    try:
        store.open_database(path, create=False, write=False)
        assert store.is_read_only()
        shims = store.opened.shims
        made = [model for model in store.MODELS if model._meta.table_name != "Configurations"]
        assert len(shims) == len(made) + 1
        assert all(f'"{model._meta.table_name}"' in " ".join(shims) for model in made)
        assert shims[-1] == (
            'CREATE TEMP VIEW "Configurations" AS SELECT *, '
            '\'full\' AS "store", NULL AS "shards", NULL AS "shard_root" FROM main."Configurations"'
        )
        row = store.config_row(Config(2, 4))
        assert (row.store, row.shards, row.shard_root, row.nb_mol) == ("full", None, None, 120)
        assert store.stored_count(Config(2, 4)) == 0
        assert not store.is_compact(Config(2, 4))
        assert not store.counted_by_shards(Config(2, 4))
        assert not store.unfinished_copy(row)
    finally:
        store.close_database()
    assert path.read_bytes() == before


# a server's database: its own words, no server needed to choose them

URL = server.ServerURL("postgresql://reader@somewhere/games")


def test_a_servers_errors_are_its_own_lines():
    error = sqlite3.OperationalError("database is locked")
    assert store.error_line(error, URL) == server.error_line(error, URL)
    assert store.error_line(error, URL) != store.error_line(error, Path("games"))
    assert store.read_only_message(URL) == server.read_only_message(URL)
    assert store.read_only_message(URL).startswith("role reader may only read")


def test_a_servers_interruption_is_read_from_its_sqlstate(monkeypatch):
    monkeypatch.setattr(store.opened, "path", URL)
    cancelled = RuntimeError("canceling statement due to user request")
    cancelled.sqlstate = server.CANCELLED_STATE
    assert store._was_interrupted(cancelled)
    assert not store._was_interrupted(sqlite3.OperationalError("interrupted"))  # a file's words


# a store's rows: which configurations are compact, which counted by their shards


def test_a_compact_configuration_is_counted_by_its_shards_once_complete(tmp_path):
    store.open_database(tmp_path / "db.sqlite")
    try:
        compact, full, unknown = Config(3, 4), Config(2, 4), Config(4, 4)
        store.ensure_config(compact, store.COMPACT)
        store.ensure_config(full, store.FULL)
        assert [store.is_compact(c) for c in (compact, full, unknown)] == [True, False, False]
        assert [store.counted_by_shards(c) for c in (compact, full, unknown)] == [False, False, False]
        for config in (compact, full):
            store.Configuration.update(complete=True).where(
                store.Configuration.config == config.name
            ).execute()
        assert [store.counted_by_shards(c) for c in (compact, full, unknown)] == [True, False, False]
    finally:
        store.close_database()


def test_a_file_of_this_bbtui_read_only_needs_no_shim(tmp_path):
    path = tmp_path / "db.sqlite"
    store.open_database(path)
    store.ensure_config(Config(3, 4), store.COMPACT)
    store.close_database()
    store.open_database(path, create=False, write=False)
    try:
        assert store.is_read_only()
        assert store.opened.shims == ()
        assert store.is_compact(Config(3, 4))
    finally:
        store.close_database()


def test_only_a_copy_stopped_before_its_end_is_an_unfinished_copy(tmp_path):
    store.open_database(tmp_path / "db.sqlite")
    try:
        row = store.ensure_config(Config(3, 4))
        assert not store.unfinished_copy(row)  # an exploration under way
        row.dh2 = store.COPYING
        assert store.unfinished_copy(row)
        row.complete = True  # the copy's last transaction sets complete (and the source's dh2)
        assert not store.unfinished_copy(row)
        assert not store.unfinished_copy(None)
    finally:
        store.close_database()


def test_after_a_close_no_store_is_open_and_nothing_reopens_it(tmp_path):
    """``close_database`` leaves peewee's ``db`` at the last path: the readers that ask whether a
    store is open (decode, play, the strategy book, the optimum) must say no, never connect to the
    closed file again (here it is gone: a connection would make a new empty one)."""
    from bbcore import decode, optimal, play, strategy

    path = tmp_path / "db.sqlite"
    compact, full = Config(3, 4), Config(2, 4)
    store.open_database(path)
    try:
        store.ensure_config(compact, store.COMPACT)
        store.ensure_config(full, store.FULL)
        store.Configuration.update(complete=True).execute()
        assert store.is_open() and play.db_is_open()
        assert decode.compact_complete(compact) and decode.is_explored(full)
    finally:
        store.close_database()
    path.unlink()
    assert not store.is_open() and not play.db_is_open()
    assert not decode.compact_complete(compact) and not decode.is_explored(full)
    assert strategy.stored_book(full) is None
    assert optimal.stored_run(full, "rays") is None and optimal.stored_book(full, "rays") is None
    assert not path.exists()
