"""``bbcore copy``: one complete configuration, from one store to another (file or server).

How a result computed on a laptop is published on the group's server, and
how a server's result is taken offline: SQLite to server, server to
SQLite, server to server (and file to file).  Both store kinds (full and
compact) are copied whole: every table of ``store.MODELS`` that holds rows
of the configuration, its ``Configurations`` row last.

- **Bounded memory.**  Each table is read a page at a time by its primary
  key (``WHERE key > last ORDER BY key LIMIT page``: a keyset, never an
  OFFSET, never a whole table); ``Profiles``, which has no primary key, by
  its 9 profile columns, unique within a configuration.  The source is read
  in one read-only snapshot (a server's REPEATABLE READ transaction, or
  SQLite's read transaction), so the pages are of one state of it.
- **Writes.**  Each page is one transaction on the target: COPY on a server
  (psycopg 3's ``cursor.copy``), ``executemany`` on a file.  The indexes a
  store builds after its bulk load (a full store's spectrum and canonical
  indexes, a compact store's family indexes) are built after the rows,
  those the source has.
- **Never visible as complete.**  The target's ``Configurations`` row is
  written first with ``complete`` false and ``dh2`` reading ``copying``
  (``store.COPYING``), and set complete (with the source's ``dh2``) only in
  the last transaction, once every row and index is there.  Until then readers see
  a configuration being explored (``status``: partial), and the rows are
  never shown as a result.  ``ExploredRanges`` is copied after every other
  table, so a range is only ever recorded with its molecules present.
- **Stopped, then resumed.**  A copy stopped at any moment (Ctrl-C, kill -9,
  a dropped connection) keeps the pages it committed; running the same
  command again resumes it: each table goes on after the last key the
  target holds (pages are written in key order, so the target holds a
  prefix of each table).  It resumes only an unfinished copy of the same
  source configuration: same store, same molecules, same ``dh1`` (when its
  exploration started).  Meanwhile ``bbcore explore`` refuses the
  configuration there (``store.unfinished_copy``): its rows are the
  source's, not a run of the target's own to resume.  Any other unfinished configuration in the target
  (an exploration) is refused, as is a complete one, unless ``replace``.
- **The target's exploration lock** (``lock.exploration_lock``) is held for
  the whole copy: no explorer, reset or second copy writes the same
  configuration meanwhile.

Refused in one line (``CopyError``): a source configuration that is
unknown or not complete, a target that already holds it (without
``replace``), a target that cannot be written (a read-only file or
role), the same store as source and target.

The target is the store's ``db`` (``store.open_database`` creates its
tables and refuses what cannot be written); the source is read through a
connection of its own (``Source``).  The statements are this module's own:
they are the same in both dialects but for the placeholder (``?`` or
``%s``) and the byte order of text keys (``COLLATE "C"`` on a server, as
SQLite compares text).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from peewee import IntegerField, Model

from bbcore import sql, store
from bbcore.config import Config
from bbcore.lock import exploration_lock
from bbcore.statistics import PROFILE_COLUMNS
from bbcore.store import (
    MODELS,
    Book,
    Configuration,
    ExploredRange,
    Profile,
    StoreError,
    db,
    is_server,
)

if TYPE_CHECKING:
    from bbcore.store import Location

PAGE = 10_000
"""Rows read and written at a time (a transaction on the target): a few MB of Molecules rows."""
BLOB_PAGE = 1
"""Rows of ``Books`` at a time: a book's arrays may be hundreds of MB."""


class CopyError(StoreError):
    """A copy refused before it writes anything: one line for the user."""


@dataclass(frozen=True)
class Table:
    """A table copied: its model, its columns, and the key its pages follow (within the configuration)."""

    model: type[Model]
    columns: tuple[str, ...]
    key: tuple[str, ...]
    text_key: bool  # a single text key: compared byte by byte (COLLATE "C" on a server)
    page: int

    @property
    def name(self) -> str:
        return self.model._meta.table_name


def tables(page: int = PAGE) -> tuple[Table, ...]:
    """Every table of a configuration but ``Configurations``, ``ExploredRanges`` last (see the module)."""
    found = []
    for model in (*(m for m in MODELS if m not in (Configuration, ExploredRange)), ExploredRange):
        fields = model._meta.sorted_fields
        columns = tuple(field.column_name for field in fields)
        if model is Profile:
            key = PROFILE_COLUMNS
        else:
            key = tuple(name for name in model._meta.primary_key.field_names if name != "config")
        text_key = len(key) == 1 and not isinstance(model._meta.fields[key[0]], IntegerField)
        books = model is Book  # a row's arrays may be large: one at a time
        found.append(Table(model, columns, key, text_key, BLOB_PAGE if books else page))
    return tuple(found)


CONFIGURATION_COLUMNS = tuple(field.column_name for field in Configuration._meta.sorted_fields)


# -- the statements (both dialects) ---------------------------------------------------


def _placeholder(text: str, server: bool) -> str:
    """``?`` placeholders as psycopg's ``%s`` on a server connection of our own (``server.placeholders``)."""
    if not server:
        return text
    from bbcore.server import placeholders

    return placeholders(text)


def _key_order(table: Table, server: bool, descending: bool = False) -> str:
    """The key's ORDER BY list; a text key byte by byte on a server (its collation may be a locale's)."""
    collate = ' COLLATE "C"' if server and table.text_key else ""
    direction = " DESC" if descending else ""
    return ", ".join(f'"{column}"{collate}{direction}' for column in table.key)


def page_statement(table: Table, server: bool, *, first: bool) -> str:
    """The next page of a table's rows of a configuration; parameters: config, the last key (unless first)."""
    columns = ", ".join(f'"{column}"' for column in table.columns)
    collate = ' COLLATE "C"' if server and table.text_key else ""
    after = ""
    if not first:
        key = ", ".join(f'"{column}"{collate}' for column in table.key)
        marks = ", ".join("?" * len(table.key))
        after = f" AND ({key}) > ({marks})" if len(table.key) > 1 else f" AND {key} > ?"
    text = (
        f'SELECT {columns} FROM "{table.name}" WHERE config = ?{after} '
        f"ORDER BY {_key_order(table, server)} LIMIT {table.page}"
    )
    return _placeholder(text, server)


def last_key_statement(table: Table, server: bool) -> str:
    """The highest key of a configuration's rows in a table (where a stopped copy resumes)."""
    columns = ", ".join(f'"{column}"' for column in table.key)
    text = (
        f'SELECT {columns} FROM "{table.name}" WHERE config = ? '
        f"ORDER BY {_key_order(table, server, descending=True)} LIMIT 1"
    )
    return _placeholder(text, server)


def count_statement(table: Table, server: bool) -> str:
    """How many rows of a configuration a table holds."""
    return _placeholder(f'SELECT COUNT(*) FROM "{table.name}" WHERE config = ?', server)


def insert_statement(table: Table) -> str:
    """A page of rows into a file, by ``executemany``."""
    columns = ", ".join(f'"{column}"' for column in table.columns)
    return f'INSERT INTO "{table.name}" ({columns}) VALUES ({", ".join("?" * len(table.columns))})'


def index_names(config: Config) -> tuple[str, ...]:
    """The indexes a store builds for a configuration after its bulk load (``sql``)."""
    return (
        sql.spectrum_index(config),
        sql.canonical_index(config),
        sql.family_key_index(config),
        sql.family_size_index(config),
    )


def index_statement(config: Config, name: str) -> str:
    """The statement building one of ``index_names`` (the store's own, ``sql``)."""
    statements = (*sql.create_indexes(config), *sql.create_family_indexes(config))
    return next(statement for statement in statements if f'"{name}"' in statement)


SQLITE_TABLE = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?"
SERVER_TABLE = "SELECT to_regclass(%s) IS NOT NULL"
SERVER_VERSIONS = 'SELECT version FROM "SchemaVersion"'


# -- the source -----------------------------------------------------------------------


class Source:
    """The store a configuration is copied from, read through a connection of its own, in one snapshot."""

    def __init__(self, where: Location) -> None:
        self.where = where
        self.server = is_server(where)
        try:
            self.connection = self._connect()
        except store.DATABASE_ERRORS as error:
            raise CopyError(store.error_line(error, where)) from None

    def _connect(self):
        if self.server:
            import psycopg

            from bbcore import server

            connection = psycopg.connect(
                self.where.conninfo,
                connect_timeout=server.CONNECT_TIMEOUT_SECONDS,
                application_name="bbtui copy",
            )
            connection.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
            connection.read_only = True
            return connection
        path = Path(self.where)
        problem = store.file_problem(path)
        if problem:
            raise CopyError(problem)
        if not path.is_file():
            raise CopyError(f"no database at {path} (the source of the copy)")
        store.check_database_file(path)
        uri = store.read_only_uri(path)
        connection = sqlite3.connect(uri, uri=True, timeout=store.BUSY_TIMEOUT_MS / 1000)
        connection.execute("BEGIN")  # one read transaction: every page of one state of the file
        return connection

    def rows(self, statement: str, parameters: tuple = ()) -> list[tuple]:
        """The rows of one statement (a page at most)."""
        try:
            return [tuple(row) for row in self.connection.execute(statement, parameters).fetchall()]
        except store.DATABASE_ERRORS as error:
            raise CopyError(store.error_line(error, self.where)) from None

    def has_table(self, name: str) -> bool:
        """Whether the source has a table (a file made by an older bbtui may lack the newer ones)."""
        if self.server:
            return bool(self.rows(SERVER_TABLE, (f'"{name}"',))[0][0])
        return bool(self.rows(SQLITE_TABLE, (name,)))

    def has_index(self, name: str) -> bool:
        """Whether the source has an index of this name."""
        dialect = sql.SERVER if self.server else sql.SQLITE
        return bool(self.rows(_placeholder(dialect.index_exists, self.server), (name,)))

    def configuration(self, config: Config) -> dict[str, object] | None:
        """The source's ``Configurations`` row of ``config`` (missing columns of an older file filled in)."""
        if not self.has_table("Configurations"):
            raise CopyError(f"{self.where} is not a bbtui database (no Configurations table)")
        self.check_version()
        statement = _placeholder('SELECT * FROM "Configurations" WHERE config = ?', self.server)
        try:
            cursor = self.connection.execute(statement, (config.name,))
            row = cursor.fetchone()
            names = [column[0] for column in cursor.description]
        except store.DATABASE_ERRORS as error:
            raise CopyError(store.error_line(error, self.where)) from None
        if row is None:
            return None
        found = {name: value for name, value in zip(names, row) if name in CONFIGURATION_COLUMNS}
        for name, _, value in store.ADDED_COLUMNS:
            found.setdefault(name, None if value == "NULL" else value.strip("'"))
        if found["store"] not in store.STORES:
            raise CopyError(
                f"{self.where} holds {config.name} in a store this bbtui does not know "
                f"({found['store']!r}, not {' or '.join(store.STORES)}): copy it with the bbtui that made it"
            )
        return found

    def check_version(self) -> None:
        """Raise CopyError unless the source's schema version is this bbtui's (as ``store.open_database``
        asks of every store it opens, the target included)."""
        from bbcore import server

        if self.server:
            if not self.has_table("SchemaVersion"):
                raise CopyError(
                    f"{self.where} has bbtui tables without a schema version: it was not made by this bbtui"
                )
            refused = server.version_refusal(self.where, [v for (v,) in self.rows(SERVER_VERSIONS)])
        else:
            (found,) = self.rows(sql.USER_VERSION)[0]
            refused = server.version_refusal(self.where, [int(found)], unversioned=(store.UNVERSIONED,))
        if refused:
            raise CopyError(refused)

    def close(self) -> None:
        try:
            self.connection.close()
        except store.DATABASE_ERRORS:
            pass


def same_store(source: Location, target: Location) -> bool:
    """Whether two locations name the same store (the same file, or the same server database).

    Raises CopyError (one line) for a path that cannot be a database
    (a symlink loop, a FIFO: ``store.file_problem``), before resolving it.
    """
    if is_server(source) or is_server(target):
        return source == target
    for path in (source, target):
        problem = store.file_problem(Path(path))
        if problem:
            raise CopyError(problem)
    return Path(source).resolve() == Path(target).resolve()


# -- the copy ---------------------------------------------------------------------------

CopyProgress = Callable[[str, int, int], None]
"""Called with (table, rows copied in all, rows to copy in all) after each page."""


@dataclass(frozen=True)
class CopyResult:
    """What a copy did: the rows written by this run, those a stopped run had written, the store kind."""

    config: Config
    store: str
    rows: int
    resumed: int
    total: int
    stopped: bool = False  # ``stop`` was set: the pages written are kept, the same call resumes


def copy_configuration(
    config: Config,
    source: Location,
    target: Location,
    *,
    replace: bool = False,
    page: int = PAGE,
    progress: CopyProgress | None = None,
    stop: threading.Event | None = None,
) -> CopyResult:
    """Copy one complete configuration from ``source`` into ``target``, resuming a stopped copy.

    Opens ``target`` as the store's ``db`` (creating its tables) and leaves
    it open.  Raises CopyError (one line) for what is refused, StoreError for
    a store that cannot be used.  ``stop`` set (Ctrl-C) ends the copy after
    the page being written (``CopyResult.stopped``); the same call resumes.
    """
    if same_store(source, target):
        raise CopyError(f"{target} is the source itself: copy {config.name} to another file or database")
    reader = Source(source)
    try:
        row = reader.configuration(config)
        if row is None:
            raise CopyError(f"{config.name} is not in {source}: nothing to copy")
        if not row["complete"]:
            raise CopyError(
                f"{config.name} is not complete in {source}: finish its exploration there before copying it"
            )
        store.open_database(target, create=True, write=True)
        with exploration_lock(target, config):
            return _copy(config, reader, row, replace=replace, page=page, progress=progress, stop=stop)
    finally:
        reader.close()


def _copy(
    config: Config,
    reader: Source,
    row: dict[str, object],
    *,
    replace: bool,
    page: int,
    progress: CopyProgress | None,
    stop: threading.Event | None,
) -> CopyResult:
    """The copy proper, the target open and locked."""
    target = store.opened.path
    existing = store.config_row(config)
    if existing is not None and not (replace or _resumable(existing, row)):
        what = "" if existing.complete else "an unfinished "
        raise CopyError(
            f"{target} already holds {what}{config.name}: pass --replace to overwrite it "
            f"(or 'bbcore --db {target} reset {config.name}')"
        )
    if existing is not None and replace:
        store.reset_config(config)
        existing = None
    server = is_server(target)
    chosen = [t for t in tables(page) if reader.has_table(t.name)]
    counts = {t.name: reader.rows(count_statement(t, reader.server), (config.name,))[0][0] for t in chosen}
    total = sum(counts.values())
    if existing is None:
        with db.atomic():
            for table in tables(page):  # rows without a Configurations row: nobody's, cleared
                table.model.delete().where(table.model.config == config.name).execute()
            Configuration.insert(**{**row, "complete": False, "dh2": store.COPYING}).execute()
    done = resumed = 0
    for table in chosen:
        last = _target_last_key(table, config, server)
        if last is not None:
            already = db.execute_sql(count_statement(table, server), (config.name,)).fetchone()[0]
            done += already
            resumed += already
            if progress is not None:
                progress(table.name, done, total)
        for rows in _pages(reader, table, config, last):
            if stop is not None and stop.is_set():
                return CopyResult(config, str(row["store"]), done - resumed, resumed, total, stopped=True)
            with db.atomic():
                _write(table, rows, server)
            done += len(rows)
            if progress is not None:
                progress(table.name, done, total)
    for name in index_names(config):
        if reader.has_index(name):
            db.execute_sql(index_statement(config, name))
    store.refresh_statistics(*(table.name for table in chosen))  # the planner sees what was copied
    with db.atomic():  # the last transaction: from here on, readers see it complete
        Configuration.update(complete=True, dh2=row["dh2"]).where(
            Configuration.config == config.name
        ).execute()
    return CopyResult(config, str(row["store"]), done - resumed, resumed, total)


def _resumable(existing: Configuration, row: dict[str, object]) -> bool:
    """Whether the target's row is an unfinished copy of this source configuration (see the module).

    A copy's mark (``store.unfinished_copy``), not only the source's start: a file copied
    while its configuration was explored has the same start, and its rows are an exploration's,
    with gaps below its last key that a copy resumed after that key would never fill.
    """
    return (
        store.unfinished_copy(existing)
        and existing.store == row["store"]
        and existing.nb_mol == row["nb_mol"]
        and existing.dh1 == row["dh1"]
    )


def _target_last_key(table: Table, config: Config, server: bool) -> tuple | None:
    """The highest key of the configuration's rows the target holds in ``table`` (None: no rows)."""
    found = db.execute_sql(last_key_statement(table, server), (config.name,)).fetchone()
    return None if found is None else tuple(found)


def _pages(reader: Source, table: Table, config: Config, last: tuple | None) -> Iterator[list[tuple]]:
    """The source's rows of ``config`` in ``table`` after key ``last``, a page at a time."""
    at = {name: i for i, name in enumerate(table.columns)}
    while True:
        first = last is None
        statement = page_statement(table, reader.server, first=first)
        rows = reader.rows(statement, (config.name,) if first else (config.name, *last))
        if not rows:
            return
        yield rows
        if len(rows) < table.page:
            return
        last = tuple(rows[-1][at[name]] for name in table.key)


def _write(table: Table, rows: list[tuple], server: bool) -> None:
    """A page of rows into the target, in the current transaction: COPY on a server, executemany on a file."""
    if server:  # the columns quoted: Books has a column named by, a reserved word there
        store.copy_rows(table.name, tuple(f'"{column}"' for column in table.columns), rows)
    else:
        db.connection().executemany(insert_statement(table), rows)
