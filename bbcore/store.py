"""The SQLite store, through peewee.

Tables (spec, "Tables"), with the spec's snake_case columns so that anyone
can query them with ``sqlite3``:

- ``Configurations``: config, nb_mol, nb_atoms, width, complete, dh1, dh2;
- ``Molecules``: config, number, canonical_number, molecule, spectrum,
  transform, the 17 statistics, dh1, dh2; primary key (config, number);
  each complete configuration has its own indexes on spectrum and on
  canonical_number (see ``create_config_indexes``);
- ``Spectrums``: config, spectrum, nb_mol, transform, canonical_number (a
  full store's; a compact store derives them from ``Families``, one row a
  family: ``bbcore.families``);
- ``ExploredRanges`` (ours, not the spec's): which ranges of canonical
  molecule numbers are stored.  Each chunk of molecules (about 65,536, cut
  between enantiomer groups) and its row here are written in one
  transaction, which is what makes a run resumable (``bbcore.explore``).
- ``Books`` (ours): the strategy book of a configuration under each policy
  (``bbcore.strategy``): figures, and arrays for the TUI.

``complete`` is set once every range is stored and ``Spectrums`` is built.
One database file holds any number of configurations.  The database is
created deferred, so the CLI, the TUI and the tests choose the file; the
default is ``$XDG_DATA_HOME/bbtui/blackbox.sqlite`` (``~/.local/share``
when unset), overridden by ``--db`` or ``BBTUI_DB``.

``--db`` and ``BBTUI_DB`` may also name a PostgreSQL server
(``postgresql://user@host/dbname``): the same models, on the server, through
peewee's ``PostgresqlDatabase``.  ``db`` is a peewee ``DatabaseProxy`` that
``open_database`` points at the SQLite file or the server; what differs on a
server lives in ``bbcore.server``, and this module only dispatches on the
location (``Location``: a ``Path`` or a ``server.ServerURL``).
"""

from __future__ import annotations

import errno
import os
import re
import sqlite3
import stat
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from peewee import (
    BigIntegerField,
    BlobField,
    BooleanField,
    CharField,
    CompositeKey,
    DatabaseError,
    DatabaseProxy,
    FloatField,
    IntegerField,
    Model,
    OperationalError,
    SqliteDatabase,
    TextField,
)

from bbcore import sql
from bbcore.config import Config
from bbcore.rays import STAT_FIELDS

if TYPE_CHECKING:
    from bbcore.server import ServerURL

    Location = Path | ServerURL
    """Where the store is: an SQLite file, or a server database."""


class StoreDatabase(SqliteDatabase):
    """peewee's SqliteDatabase, whose new connections also get ``opened.shims`` (read-only files)."""

    def _add_conn_hooks(self, conn) -> None:
        for statement in opened.shims:  # before the pragmas: query_only refuses them
            conn.execute(statement)
        super()._add_conn_hooks(conn)


sqlite_db = StoreDatabase(None)
"""The SQLite database ``db`` stands for when a file is open."""
db = DatabaseProxy()
"""The open store (``open_database``): ``sqlite_db``, or a ``server.ServerDatabase``."""
db.initialize(sqlite_db)

BUSY_TIMEOUT_MS = 5000
SORTER_THREADS = 2
"""Helper threads SQLite's sorter may use in a writer's large sorts (``PRAGMA threads``): building
A7_B8's two family indexes took 19.1 s with 2 against 23.8 s with none (and 8.9 s more CPU)."""
PRAGMAS = {
    "journal_mode": "wal",
    "synchronous": "normal",
    "busy_timeout": BUSY_TIMEOUT_MS,
    "cache_size": -64 * 1024,
    "threads": SORTER_THREADS,
}
READ_PRAGMAS = {"busy_timeout": BUSY_TIMEOUT_MS, "cache_size": -64 * 1024, "query_only": 1}
"""A read-only connection sets no journal mode (that would be a write)."""


try:
    from psycopg import Error as _ServerDriverError
except ImportError:  # the [server] extra is not installed: no server error can happen
    _ServerDriverError = sqlite3.Error

DATABASE_ERRORS = (DatabaseError, OperationalError, sqlite3.Error, _ServerDriverError)
"""What peewee, sqlite3 and psycopg raise on a database that cannot do what was asked."""


class StoreError(Exception):
    """A database that cannot be used: its message is one line for the user."""


class ReadOnlyError(StoreError):
    """A write asked of a file (or folder) this process cannot write."""


def now() -> str:
    """A timestamp for dh1/dh2 columns (UTC, ISO 8601, seconds)."""
    return datetime.now(UTC).isoformat(timespec="seconds")


class BaseModel(Model):
    """Every table lives in the deferred database ``db``."""

    class Meta:
        database = db


class Configuration(BaseModel):
    """A configuration known to the database, explored or not yet."""

    config = CharField(primary_key=True)
    nb_mol = IntegerField()
    nb_atoms = IntegerField()
    width = IntegerField()
    complete = BooleanField(default=False)
    dh1 = TextField(default=now)
    dh2 = TextField(default=now)
    store = CharField(default="full")  # FULL or COMPACT (bbcore.compact)
    shards = IntegerField(null=True)  # a compact exploration's shard count, fixed when it starts
    shard_root = TextField(null=True)  # its shard files' root folder (--shards) when not the default

    class Meta:
        table_name = "Configurations"


class Molecule(BaseModel):
    """One molecule of a configuration, its spectrum and ray statistics."""

    config = CharField()
    number = IntegerField()
    canonical_number = IntegerField()
    molecule = TextField()
    spectrum = TextField()
    transform = CharField()
    absorbed_number = IntegerField()
    absorbed_max_length = IntegerField()
    absorbed_max_turns = IntegerField()
    absorbed_tot_length = IntegerField()
    absorbed_tot_turns = IntegerField()
    reflected_number = IntegerField()
    reflected_edge = IntegerField()
    reflected_deep = IntegerField()
    reflected_max_length = IntegerField()
    reflected_max_turns = IntegerField()
    reflected_tot_length = IntegerField()
    reflected_tot_turns = IntegerField()
    out_number = IntegerField()
    out_max_length = IntegerField()
    out_max_turns = IntegerField()
    out_tot_length = IntegerField()
    out_tot_turns = IntegerField()
    dh1 = TextField()
    dh2 = TextField()

    class Meta:
        table_name = "Molecules"
        # A rowid table: rows are appended, and the key is a unique index of
        # small entries.  WITHOUT ROWID made SQLite move whole 25-column rows
        # on every out-of-order insert: 1.22x slower writes (A/B, 121,597 rows).
        # The spectrum and canonical_number indexes are per configuration,
        # built when it is complete: see create_config_indexes.
        primary_key = CompositeKey("config", "number")


class Spectrum(BaseModel):
    """An ambiguous spectrum: shared by two or more molecules."""

    config = CharField()
    spectrum = TextField()
    nb_mol = IntegerField()
    transform = CharField()
    canonical_number = IntegerField()

    class Meta:
        table_name = "Spectrums"
        primary_key = CompositeKey("config", "spectrum")
        without_rowid = True
        indexes = ((("config", "transform", "nb_mol"), False),)


class FamilyMolecules(BaseModel):
    """The molecules of a family's first spectrum, in a compact store made before ``Families``.

    Read only by ``families.migrate`` (``bbcore migrate``), which moves them
    into ``Families`` and deletes them with the configuration's Spectrums rows.

    A family is an ambiguous spectrum with its images by the 8 symmetries;
    its first spectrum is the one whose first molecule is canonical
    (transform 0), and ``canonical_number`` is that molecule's.  ``numbers``
    packs the spectrum's molecules, by number (``families.numbers_dtype``).
    The other spectra of the family have the images of these molecules, by
    their row's transform.  A full store finds them all in ``Molecules``.
    """

    config = CharField()
    canonical_number = IntegerField()
    numbers = BlobField()

    class Meta:
        table_name = "FamilyMolecules"
        primary_key = CompositeKey("config", "canonical_number")
        without_rowid = True


class Family(BaseModel):
    """A family of ambiguous spectra, once, in a compact store (``bbcore.families``).

    A family is an ambiguous spectrum with its images by the 8 symmetries
    (1 to 8 spectral groups of the same size).  Every spectrum of a family
    has the same ``canonical_number`` c in the spec's ``Spectrums`` (the
    first canonical molecule whose enantiomer group has one of them), so c
    alone gives them all: trace c's 8 images in increasing number, and the
    first image with each distinct spectrum gives that spectrum and its
    transform.  Stored: c, ``key`` (``engine.spectrum_keys``' 64-bit key as
    a signed integer: how a typed spectrum finds its family), ``nb_mol`` (the
    molecules of each of its spectra), ``spectra`` (how many spectra, 1 to 8),
    ``max_diff`` (the most atoms differing between two molecules of one of
    its groups), ``spectrum`` (the first spectrum: c's own, transform ``id``),
    ``numbers`` (that spectrum's molecules, packed as ``families.numbers_dtype``;
    the other spectra's are their images by the spectrum's transform), and
    the ordinals that make every page of the groups listing a point query:
    ``position`` (rank by c), ``size_position`` (rank by nb_mol descending,
    then c), and the spectra of the families before it in each order
    (``spectra_before``, ``size_spectra_before``).

    For ``sqlite3`` users, a spectrum's group: ``bbcore export CONFIG --table
    spectrums`` streams the spec's ``Spectrums`` rows derived from these; or
    find the family of a spectrum you hold with ``bbcore show CONFIG
    --spectrum S``.  The families themselves read directly::

        SELECT canonical_number, nb_mol, spectra, spectrum FROM Families
        WHERE config = 'A7_B8' ORDER BY position LIMIT 20;
    """

    config = CharField()
    position = IntegerField()
    canonical_number = IntegerField()
    key = IntegerField()
    nb_mol = IntegerField()
    spectra = IntegerField()
    max_diff = IntegerField()
    spectrum = TextField()
    numbers = BlobField()
    spectra_before = IntegerField()
    size_position = IntegerField()
    size_spectra_before = IntegerField()

    class Meta:
        table_name = "Families"
        # Written in position order, so the key's B-tree only grows at its end;
        # the key and size_position indexes are per configuration, built after
        # the bulk load (sql.create_family_indexes).
        primary_key = CompositeKey("config", "position")
        without_rowid = True


class Profile(BaseModel):
    """Molecules of a compact store counted by their ray profile (``statistics.PROFILE_COLUMNS``).

    What ``statistics.statistics_profile`` computes from ``Molecules`` in a
    full store: how many molecules share these 9 statistics, and the lowest
    number among them.
    """

    config = CharField()
    absorbed_number = IntegerField()
    reflected_number = IntegerField()
    out_number = IntegerField()
    absorbed_max_length = IntegerField()
    reflected_max_length = IntegerField()
    out_max_length = IntegerField()
    absorbed_max_turns = IntegerField()
    reflected_max_turns = IntegerField()
    out_max_turns = IntegerField()
    molecules = IntegerField()
    lowest = IntegerField()

    class Meta:
        table_name = "Profiles"
        primary_key = False
        indexes = ((("config",), False),)


class GroupedShard(BaseModel):
    """A shard of a compact exploration whose spectral groups are stored.

    ``risk`` and ``sizes`` are JSON, ``{value: [families, groups]}``: the
    shard's groups counted by the most atoms differing between two of their
    molecules, and by their number of molecules.
    """

    config = CharField()
    shard = IntegerField()
    records = IntegerField()
    spectra = IntegerField()
    families = IntegerField()
    risk = TextField()
    sizes = TextField()
    dh1 = TextField(default=now)

    class Meta:
        table_name = "GroupedShards"
        primary_key = CompositeKey("config", "shard")
        without_rowid = True


class ExploredRange(BaseModel):
    """A stored range start..stop-1 of canonical numbers and how many molecules it gave."""

    config = CharField()
    start = IntegerField()
    stop = IntegerField()
    nb_mol = IntegerField()
    dh1 = TextField(default=now)

    class Meta:
        table_name = "ExploredRanges"
        primary_key = CompositeKey("config", "start")
        without_rowid = True


class Book(BaseModel):
    """A configuration's strategy book under one policy (``bbcore.strategy``).

    The figures are columns and ``summary`` (JSON: histograms, size by
    depth, hardest molecules) for anyone reading the file with ``sqlite3``;
    ``arrays`` (numpy's npz) holds each molecule's rays and points and the
    tree's first levels, for the TUI and ``bbcore decode``.
    """

    config = CharField()
    by = CharField()
    nb_mol = IntegerField()
    source = CharField()
    seconds = FloatField()
    first_shot = IntegerField(null=True)
    rays_mean = FloatField()
    rays_max = IntegerField()
    points_mean = FloatField()
    points_max = IntegerField()
    summary = TextField()
    arrays = BlobField()
    dh1 = TextField(default=now)

    class Meta:
        table_name = "Books"
        primary_key = CompositeKey("config", "by")


class OptimalRun(BaseModel):
    """A search of a configuration's optimal strategy under one objective (``bbcore.optimal``).

    ``memo`` (numpy's npz) holds what the search proved so far, so that a
    stopped search goes on from there; ``result`` (JSON) the finished
    result, null while the search is not finished.  Not in ``MODELS``: the
    table is made by the first search that stores (``bbcore.optimal.save_run``),
    so that opening, copying and the server's schema are as before.
    """

    config = CharField()
    objective = CharField()
    proved = BooleanField(default=False)
    seconds = FloatField()
    nodes = BigIntegerField()
    result = TextField(null=True)
    memo = BlobField()
    dh1 = TextField(default=now)

    class Meta:
        table_name = "OptimalRuns"
        primary_key = CompositeKey("config", "objective")


class SchemaVersion(BaseModel):
    """The layout version of a server database's tables (one row), written by its first writer.

    Only a server database has it (``bbcore.server``): a file is opened by
    whoever has it, and upgraded in place (``_upgrade_columns``).
    """

    version = IntegerField()

    class Meta:
        table_name = "SchemaVersion"
        primary_key = False


MODELS = (
    Configuration,
    Molecule,
    Spectrum,
    ExploredRange,
    Book,
    FamilyMolecules,
    Profile,
    GroupedShard,
    Family,
)
SERVER_MODELS = (*MODELS, SchemaVersion)
"""A server database's tables."""
FULL, COMPACT = "full", "compact"
STORES = (FULL, COMPACT)
MOLECULE_COLUMNS: tuple[str, ...] = (
    "config",
    "number",
    "canonical_number",
    "molecule",
    "spectrum",
    "transform",
    *STAT_FIELDS,
    "dh1",
    "dh2",
)


def copy_rows(table: str, columns: tuple[str, ...], rows: Iterable[tuple]) -> None:
    """Bulk-write rows into a server table by COPY, in the current transaction (``server.copy_rows``)."""
    from bbcore import server

    server.copy_rows(db.connection(), table, columns, rows)


def insert_rows(table: str, columns: tuple[str, ...], rows, statement: str) -> None:
    """Bulk-write rows in the current transaction: COPY on a server, ``executemany(statement)`` on SQLite.

    The compact store's Families and Profiles: peewee's per-row query
    building costs more than either store's own bulk path.  ``statement``
    is SQLite's INSERT of ``columns`` (``bbcore.sql``).
    """
    if sql.dialect.server:
        copy_rows(table, columns, rows)
    else:
        db.connection().executemany(statement, rows)


@contextmanager
def write_transaction(config: Config) -> Iterator[None]:
    """A transaction that writes ``config``'s rows, one writer of the configuration at a time.

    SQLite takes the file's write lock at ``BEGIN IMMEDIATE`` (so the
    overlap check and the write see the same file); a server takes the
    configuration's transaction-scoped write lock (``server.lock_writes``)
    while the other configurations' writers go on, and checks that the
    run's exploration lock is still held (``server.check_lock``: a lock
    whose connection alone was lost stops the run in one line, before its
    next rows).  Every transaction that stores a run's rows is one of these:
    the full store's chunks, the compact store's traced ranges, grouped
    shards and families.
    """
    if is_server(opened.path):
        from bbcore import server

        with db.atomic():
            server.lock_writes(db, config)
            try:
                server.check_lock(db, opened.path, config)
            except server.ServerError as error:
                raise StoreError(str(error)) from None
            yield
    else:
        with db.atomic("IMMEDIATE"):
            yield


def create_config_indexes(config: Config) -> None:
    """Build a configuration's partial indexes on spectrum and canonical_number.

    They are built once the configuration's molecules are all stored, not
    kept up to date while it is explored: maintaining them row by row made
    an A4_B8 exploration's writes 1.9x slower than building them at the end
    (bench/explore.py), and spectra are only looked up in complete
    configurations (the spectral groups exist only then).  Being partial
    (``WHERE config = 'A4_B8'``), they cover one configuration each, so
    building one costs nothing for the others in the same file.
    """
    for statement in sql.create_indexes(config):
        db.execute_sql(statement)


ANALYSIS_LIMIT = 1000
"""Rows SQLite's ANALYZE reads of each index when it refreshes statistics (``refresh_statistics``):
an estimate, in milliseconds, rather than a scan of every configuration's rows."""


def refresh_statistics(*tables: str) -> None:
    """Bring the planner's statistics of ``tables`` up to date with what was just written.

    A server always has statistics, taken when autovacuum last ran: rows
    just written are absent from them until ``ANALYZE`` (``server.analyze``).
    A file has statistics only once someone ran ``ANALYZE`` on it (bbtui's
    own queries are planned without them: ``bbcore.sql``); when it has,
    they are stale too, and refreshed here, each index read up to
    ``ANALYSIS_LIMIT`` rows (the new configuration's indexes get theirs).
    """
    if is_server(opened.path):
        from bbcore import server

        for table in tables:
            server.analyze(db, table)
        return
    if db.execute_sql(sql.STATISTICS_PRESENT).fetchone() is None:
        return
    db.execute_sql(sql.analysis_limit(ANALYSIS_LIMIT))
    try:
        for table in tables:
            db.execute_sql(sql.analyze(table))
    finally:
        db.execute_sql(sql.analysis_limit(0))


class Interrupted(Exception):
    """A statement stopped at a pause request (``interrupted_when``): the run pauses, nothing is lost."""


INTERRUPT_EVERY_SECONDS = 0.05
"""How often a pause request is looked at, and sent again, during a statement (``interrupted_when``)."""


@contextmanager
def interrupted_when(stop: threading.Event | None) -> Iterator[None]:
    """Stop the statements this thread runs as soon as ``stop`` is set; raise ``Interrupted`` then.

    A pause (Ctrl-C, SIGTERM: a signal handler; the TUI's pause: another
    thread) only sets ``stop``, and must not wait for a statement that may
    run for minutes (a configuration's index builds, its grouping query).
    A watcher thread sees it and stops the statement under way: a server's
    is cancelled (``server.cancel_statement``), a file's interrupted
    (sqlite3's ``interrupt``, safe from another thread); either is rolled
    back, and the run resumes from what was committed.  The request is
    sent again every ``INTERRUPT_EVERY_SECONDS`` until the block ends: one
    that lands between two statements does nothing.  The watcher ends with
    the block, so no request reaches a later statement.
    """
    if stop is None:
        yield
        return
    if stop.is_set():  # asked before the block: no statement of it starts (a short one would end first)
        raise Interrupted("interrupted")
    connection = db.connection()
    if is_server(opened.path):
        from bbcore import server

        cancel = lambda: server.cancel_statement(connection)  # noqa: E731
    else:
        cancel = connection.interrupt
    done = threading.Event()

    def watch() -> None:
        while not done.wait(INTERRUPT_EVERY_SECONDS):
            if stop.is_set():
                cancel()

    watcher = threading.Thread(target=watch, name="bbtui interrupt", daemon=True)
    watcher.start()
    try:
        yield
    except DATABASE_ERRORS as error:
        if stop.is_set() and _was_interrupted(error):
            raise Interrupted(str(error).splitlines()[0] if str(error) else "interrupted") from None
        raise
    finally:
        done.set()
        watcher.join()


def _was_interrupted(error: BaseException) -> bool:
    """Whether a database error is a statement stopped by ``interrupted_when``."""
    if is_server(opened.path):
        from bbcore import server

        return server.is_cancelled(error)
    # An interrupted write rolls its transaction back: the block's own rollback then fails,
    # and the interruption is that error's context (as a full disk's is: ``is_disk_full``).
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if "interrupted" in str(current):
            return True
        wrapped = current.args[0] if current.args and isinstance(current.args[0], BaseException) else None
        current = current.__cause__ or wrapped or current.__context__
    return False


def index_exists(name: str) -> bool:
    """Whether an index of this name exists in the open database."""
    return db.execute_sql(sql.dialect.index_exists, (name,)).fetchone() is not None


def drop_config_indexes(config: Config) -> None:
    """Drop a configuration's partial indexes (before it is reset)."""
    for statement in sql.drop_indexes(config):
        db.execute_sql(statement)


def has_config_indexes(config: Config) -> bool:
    """Whether a configuration's spectrum index exists (it is complete)."""
    return index_exists(sql.spectrum_index(config))


def _upgrade_indexes() -> None:
    """Replace the whole-table indexes of an older database by per-configuration ones."""
    legacy = [name for (name,) in db.execute_sql(sql.LEGACY_INDEXES_PRESENT, sql.LEGACY_INDEXES)]
    if not legacy:
        return
    with db.atomic():
        for row in Configuration.select().where(Configuration.complete == True):  # noqa: E712
            create_config_indexes(Config(row.nb_atoms, row.width))
        for name in legacy:
            db.execute_sql(sql.drop_index(name))


ADDED_COLUMNS = (
    ("store", "TEXT NOT NULL DEFAULT 'full'", "'full'"),
    ("shards", "INTEGER", "NULL"),
    ("shard_root", "TEXT", "NULL"),
)
"""Columns of Configurations newer than some databases: name, definition, the value they stand for."""


def _upgrade_columns() -> None:
    """Add the columns a database made before them lacks (its configurations are full stores)."""
    present = {column.name for column in db.get_columns("Configurations")}
    for name, definition, _ in ADDED_COLUMNS:
        if name not in present:
            db.execute_sql(sql.add_column("Configurations", name, definition))


def read_only_shims() -> tuple[str, ...]:
    """What a read-only connection to an older file needs, in its own temporary schema.

    A file made by an older bbtui lacks newer tables and columns, and a file
    that cannot be written cannot be upgraded.  Temporary objects shadow the
    file's for every unqualified name: an empty temporary table stands for a
    missing one (no book, no compact store), and a temporary view of
    Configurations adds the missing columns with the values they stand for
    (``'full'``: such files hold full stores only).  Nothing touches the file.
    """
    shims = []
    for model in MODELS:
        if not db.table_exists(model._meta.table_name):
            statement, _ = model._schema._create_table(safe=True, temporary=True).query()
            shims.append(statement)
    present = {column.name for column in db.get_columns("Configurations")}
    missing = [(name, value) for name, _, value in ADDED_COLUMNS if name not in present]
    if missing:
        extra = ", ".join(f'{value} AS "{name}"' for name, value in missing)
        shims.append(f'CREATE TEMP VIEW "Configurations" AS SELECT *, {extra} FROM main."Configurations"')
    return tuple(shims)


def location(text: str | os.PathLike | ServerURL) -> Location:
    """What ``--db`` or ``BBTUI_DB`` names: a server (a ``postgresql://`` URL or libpq's
    ``key=value`` form, ``server.is_url``), else a file path.

    Raises StoreError (one line, never the text given) for a connection string libpq cannot parse.
    """
    if not isinstance(text, str | os.PathLike):
        return text  # already a ServerURL
    from bbcore import server

    if server.is_url(text):
        try:
            return server.ServerURL(str(text))
        except server.ServerError as error:
            raise StoreError(str(error)) from None
    return Path(text).expanduser()


def is_server(where: object) -> bool:
    """Whether a location is a server database (not a file)."""
    return where is not None and not isinstance(where, str | os.PathLike)


def default_description() -> str:
    """The default database as ``--help`` names it; a ``BBTUI_DB`` that cannot be used says so, masked."""
    try:
        return str(default_path())
    except StoreError as error:
        return str(error)


def default_path() -> Location:
    """The database: ``BBTUI_DB`` (a file or a server URL), else ``$XDG_DATA_HOME/bbtui/blackbox.sqlite``."""
    if os.environ.get("BBTUI_DB"):
        try:
            return location(os.environ["BBTUI_DB"])
        except StoreError as error:
            raise StoreError(f"$BBTUI_DB: {error}") from None
    data_home = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(data_home) / "bbtui" / "blackbox.sqlite"


def exists(where: Location) -> bool:
    """Whether the database is there to be read: the file exists; a server is asked when opened.

    A path that is there but cannot be a database (a symlink loop, a FIFO:
    ``file_problem``) counts as there, so that opening it says what it is.
    """
    return is_server(where) or Path(where).exists() or file_problem(Path(where)) is not None


def file_problem(path: Path) -> str | None:
    """Why ``path`` cannot be a database file, in one line; None when it is a regular file or is missing.

    Looked at before SQLite opens it: a symbolic link loop (which
    ``Path.exists`` takes for a missing file, and ``Path.resolve``
    raises on), and anything not a regular file (a FIFO would block the
    opening for good, a device or socket fail in SQLite's words).
    """
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return None
    except OSError as error:
        if error.errno == errno.ELOOP:
            return f"{path} is a symbolic link loop (its links never reach a file): not a database"
        return f"cannot open {path}: {error.strerror or error}"
    if stat.S_ISDIR(mode):
        return f"{path} is a directory, not a database file"
    if not stat.S_ISREG(mode):
        kind = "a socket" if stat.S_ISSOCK(mode) else "a device"
        kind = "a FIFO (named pipe)" if stat.S_ISFIFO(mode) else kind
        return f"{path} is {kind}, not a regular file: a database is a file"
    return None


def read_only_message(path: Location) -> str:
    """The one line refusing a write to a file this user cannot write (or a role that may only read)."""
    if is_server(path):
        from bbcore import server

        return server.read_only_message(path)
    return (
        f"{path} is read-only (the file or its folder): to write, copy it "
        f"(cp {path} copy.sqlite, then --db copy.sqlite) or pass --db with another path"
    )


DISK_FULL = ("database or disk is full", "No space left on device", "Disk quota exceeded")
"""What SQLite (SQLITE_FULL) and the system (ENOSPC, EDQUOT) say when the disk is full."""
SHORT_WRITE = re.compile(r"\d+ requested and \d+ written")
"""What numpy says of a file it could not write whole (``ndarray.tofile``, ``np.save``): on a
regular file, only a full disk (or quota) cuts a write short, and numpy drops the errno."""
DISK_FULL_STATES = ("53100",)
"""PostgreSQL's SQLSTATE of a full disk (disk_full), whatever the server's message says."""


def is_disk_full(error: BaseException) -> bool:
    """Whether ``error`` comes from a full disk, even hidden behind what followed it.

    When a write fails with SQLITE_FULL, SQLite has already rolled the
    transaction back, so the rollback of the ``with db.atomic()`` block fails
    in turn ("cannot rollback - no transaction is active") and that is the
    error raised: the cause is its context.  From a worker process, the
    cause is in the remote traceback's text.  A server says it with its
    SQLSTATE (psycopg's error, which peewee's wraps as its first argument).
    """
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if any(words in str(current) for words in DISK_FULL) or SHORT_WRITE.search(str(current)):
            return True
        if getattr(current, "errno", None) in (errno.ENOSPC, errno.EDQUOT):
            return True
        if getattr(current, "sqlstate", None) in DISK_FULL_STATES:
            return True
        wrapped = current.args[0] if current.args and isinstance(current.args[0], BaseException) else None
        current = current.__cause__ or wrapped or current.__context__
    return False


def error_line(error: Exception, path: Location) -> str:
    """A one-line message for an sqlite/peewee (or server) error on ``path``."""
    if is_server(path):
        from bbcore import server

        return server.error_line(error, path)
    if is_disk_full(error):
        return f"the disk holding {path} is full; what was stored is kept (free some space and try again)"
    text = str(error).splitlines()[0] if str(error) else type(error).__name__
    if "not a database" in text or "malformed" in text:
        return f"{path} is not a bbtui database (or it is corrupt): {text}"
    if "locked" in text or "busy" in text:
        return f"{path} is locked by another process; try again when it is done"
    if "unable to open" in text:
        return f"cannot open {path}: {text}"
    if "readonly" in text or "read-only" in text:
        return read_only_message(path)
    if "no such table" in text:
        return f"{path} is not a bbtui database, or one made by an older bbtui: {text}"
    return f"{path}: {text}"


def writable(path: Path) -> bool:
    """Whether this process may write ``path``: the file (if it exists) and its folder.

    The folder counts as much as the file: SQLite writes its journal (or its
    WAL and shared-memory files) beside the database.  A read-only mount
    answers False for both.
    """
    folder = path.parent if str(path.parent) else Path(".")
    if path.exists() and not os.access(path, os.W_OK):
        return False
    return os.access(folder, os.W_OK)


def read_only_uri(path: Path) -> str:
    """The URI opening ``path`` read-only: ``mode=ro``, plus ``immutable=1`` when it must.

    A file in WAL mode needs a ``-shm`` file beside it, even to be read:
    where the folder is read-only and that file cannot be made, ``immutable=1``
    tells SQLite that nobody writes the file, so it neither locks it nor looks
    for the ``-shm`` file.  Otherwise plain ``mode=ro`` keeps SQLite's locking
    (someone who can write the file may be writing it).  The file is probed
    through SQLite only: closing a descriptor of our own on it would drop
    every POSIX lock this process holds on it.
    """
    base = f"file:{quote(str(path.resolve()))}?mode=ro"
    folder = path.parent if str(path.parent) else Path(".")
    if os.access(folder, os.W_OK) or not path.exists():
        return base
    try:
        connection = sqlite3.connect(base, uri=True, timeout=BUSY_TIMEOUT_MS / 1000)
        try:
            connection.execute(sql.SCHEMA_VERSION).fetchone()
        finally:
            connection.close()
    except sqlite3.Error:
        return base + "&immutable=1"
    return base


@dataclass
class OpenState:
    """The file ``db`` points at, and whether it was opened read-only."""

    path: Location | None = None  # a file, or a server database (server.ServerURL)
    read_only: bool = False
    shims: tuple[str, ...] = ()  # read_only_shims(), run by every new connection


opened = OpenState()
"""Which file is open, and how (``open_database``)."""


def is_open() -> bool:
    """Whether a store is open (``open_database``, until ``close_database``): ``db`` keeps the
    last path after a close, and peewee would connect to it again on the next query."""
    return opened.path is not None


def is_read_only() -> bool:
    """Whether the open database was opened read-only (``open_database``)."""
    return opened.read_only


def open_database(
    path: Location | str | None = None,
    *,
    create: bool = True,
    write: bool | None = None,
    pragmas: dict[str, object] | None = None,
) -> Location:
    """Point ``db`` at a file (or a server), check it is a usable database, create the tables.

    A server URL (``postgresql://...``) is opened by ``server.open_server``
    with the same meaning of ``create`` and ``write``: a role that may only
    read is read-only as an unwritable file is.  ``pragmas`` are SQLite's.

    With ``create=False`` a missing file is an error instead of a new empty
    database (the read-only commands use this).  ``write=True`` (the commands
    that write: explore, reset, spectrums) refuses, with ReadOnlyError, a file
    or folder this process cannot write.  ``write=None`` (readers) opens such a
    file read-only: SQLite's ``mode=ro``, nothing is ever written, not even
    the ``-shm`` file of WAL mode; ``immutable=1`` is added when the file's
    header still says WAL (a run killed mid-way, or a file made by an older
    bbtui), since a WAL reader would need to create that ``-shm`` file.
    ``write=False`` opens read-only even a writable file.  ``pragmas`` are
    set on top of PRAGMAS for a writer (an exploration's worker process
    uses its own).  Every thread's connection is closed: call it before
    other threads use ``db`` (``use_database`` leaves them alone).
    Raises StoreError with a one-line message; a file that is not a database
    is never written to.
    """
    path = location(path) if path else default_path()
    if is_server(path):
        from bbcore import server

        try:
            read_only = server.open_server(db, path, SERVER_MODELS, SchemaVersion, create=create, write=write)
        except server.ReadOnlyRole as error:
            raise ReadOnlyError(str(error)) from None
        except server.ServerError as error:
            raise StoreError(str(error)) from None
        opened.path, opened.read_only, opened.shims = path, read_only, ()
        sql.use(sql.SERVER)
        try:
            _check_stores(path)
        except StoreError:
            db.close()
            raise
        return path
    sql.use(sql.SQLITE)
    problem = file_problem(path)
    if problem:
        raise StoreError(problem)
    if not path.exists():
        if not create or write is False:
            raise StoreError(f"no database at {path} (explore a configuration first)")
        if not path.parent.is_dir():
            if path.parent == default_path().parent:
                path.parent.mkdir(parents=True, exist_ok=True)
            else:
                raise StoreError(f"cannot create {path}: folder {path.parent} does not exist")
        if not writable(path):
            raise ReadOnlyError(
                f"cannot create {path}: folder {path.parent} is read-only; pass --db with another path"
            )
    check_database_file(path)
    if not create and path.stat().st_size == 0:  # SQLite would take it for a new database
        raise StoreError(f"{path} is an empty file, not a bbtui database (explore a configuration first)")
    read_only = write is False or not writable(path)
    if read_only and write:
        raise ReadOnlyError(read_only_message(path))
    if not db.is_closed():
        db.close()
    db.initialize(sqlite_db)
    if read_only:
        db.init(read_only_uri(path), pragmas=READ_PRAGMAS, check_same_thread=False, uri=True)
    else:
        db.init(str(path), pragmas={**PRAGMAS, **(pragmas or {})}, check_same_thread=False)
    opened.path, opened.read_only, opened.shims = path, read_only, ()
    try:
        db.connect()
        version = check_file_version(path)  # before anything is written to it
        if read_only:
            if not db.table_exists(Configuration._meta.table_name):
                raise StoreError(f"{path} is not a bbtui database (no Configurations table)")
            opened.shims = read_only_shims()
            if opened.shims:  # every connection, this one included, gets them (StoreDatabase)
                db.close()
                db.connect()
        else:
            if not create and not db.table_exists(Configuration._meta.table_name):  # a reader creates nothing
                raise StoreError(f"{path} is not a bbtui database (no Configurations table)")
            db.create_tables(MODELS, safe=True)
            _upgrade_columns()
            _upgrade_indexes()
            if version == UNVERSIONED and (write or create):  # readers (create=False) write nothing
                db.execute_sql(sql.set_user_version(_schema_version()))
        _check_stores(path)
    except (DatabaseError, OperationalError, sqlite3.Error) as error:
        db.close()
        raise StoreError(error_line(error, path)) from None
    except StoreError:
        db.close()
        raise
    return path


UNVERSIONED = 0
"""SQLite's ``user_version`` of a file made before bbtui recorded its schema version there: the same
layout, upgraded in place (``_upgrade_columns``), and stamped with the version when opened to write."""


def _schema_version() -> int:
    """The layout version of bbtui's tables (``server.SCHEMA_VERSION``, one number for both stores)."""
    from bbcore.server import SCHEMA_VERSION

    return SCHEMA_VERSION


def check_file_version(path: Path) -> int:
    """The open file's schema version (SQLite's ``user_version``); raise StoreError (one line) unless it
    is this bbtui's, or a file's made before versions were recorded (``UNVERSIONED``)."""
    from bbcore import server

    (found,) = db.execute_sql(sql.USER_VERSION).fetchone()
    refused = server.version_refusal(path, [int(found)], unversioned=(UNVERSIONED,))
    if refused:
        raise StoreError(refused)
    return int(found)


def _check_stores(path: Location) -> None:
    """Raise StoreError (one line) if a configuration has a ``store`` this bbtui does not know."""
    unknown = (
        Configuration.select(Configuration.config, Configuration.store)
        .where(Configuration.store.not_in(STORES))
        .first()
    )
    if unknown is not None:
        raise StoreError(
            f"{path} holds {unknown.config} in a store this bbtui does not know ({unknown.store!r}, "
            f"not {' or '.join(STORES)}): open it with the bbtui that made it"
        )


def use_database(path: Location | str | None = None) -> Location:
    """Point ``db`` at ``path`` unless it already does (then nothing changes, in any thread)."""
    wanted = location(path) if path else default_path()
    if is_server(wanted) or is_server(opened.path):
        if opened.path == wanted:
            return wanted
    elif opened.path is not None and opened.path.resolve() == wanted.resolve():
        return wanted
    return open_database(wanted)


def close_database() -> None:
    """Close this thread's connection; a file opened for writing is left as one self-contained file.

    After a writer, the WAL is checkpointed into the file and the journal mode
    set back to DELETE, so that the file alone holds everything and opens
    read-only anywhere (a read-only folder cannot hold the ``-shm`` file that
    a WAL reader needs).  SQLite allows this only when no other connection
    has the file open: while an exploration runs (here or in another
    process), the attempt fails at once and the file stays in WAL mode; the
    last writer to close does it.  Connections of other threads of this
    process close when their threads end.
    """
    path, read_only = opened.path, opened.read_only
    if not db.is_closed():
        db.close()
    opened.path, opened.read_only, opened.shims = None, False, ()
    if path is not None and not read_only and not is_server(path):
        finish_file(path)


def finish_file(path: Path) -> bool:
    """Checkpoint the WAL of ``path`` and leave it in DELETE mode; False if another connection is open."""
    if not path.exists() or not writable(path):
        return False
    try:
        connection = sqlite3.connect(str(path), timeout=0)
        try:
            if connection.execute(sql.JOURNAL_MODE).fetchone()[0] != "wal":
                return True
            connection.execute(sql.CHECKPOINT_TRUNCATE)
            mode = connection.execute(sql.JOURNAL_MODE_DELETE).fetchone()[0]
        finally:
            connection.close()
    except sqlite3.Error:
        return False
    return mode == "delete"


def check_database_file(path: Path) -> None:
    """Raise StoreError unless ``path`` is absent, empty or an SQLite database."""
    problem = file_problem(path)
    if problem:
        raise StoreError(problem)
    if not path.exists() or path.stat().st_size == 0:
        return
    # SQLite itself reads the header ("file is not a database"): closing a file
    # descriptor of our own on the database would drop every POSIX lock this
    # process holds on it, under the connections still open in other threads
    # (the TUI), and the database was seen malformed after a run.
    try:
        connection = sqlite3.connect(read_only_uri(path), uri=True, timeout=BUSY_TIMEOUT_MS / 1000)
        try:
            connection.execute(sql.SCHEMA_VERSION).fetchone()
        finally:
            connection.close()
    except sqlite3.Error as error:
        raise StoreError(error_line(error, path)) from None


def config_row(config: Config) -> Configuration | None:
    """The Configurations row of a configuration, or None if unknown."""
    return Configuration.get_or_none(Configuration.config == config.name)


def ensure_config(config: Config, store: str = FULL) -> Configuration:
    """The Configurations row of a configuration, created if needed (with its store mode)."""
    row, _ = Configuration.get_or_create(
        config=config.name,
        defaults={"nb_mol": config.nb_mol, "nb_atoms": config.atoms, "width": config.width, "store": store},
    )
    return row


COPYING = "copying"
"""``dh2`` of a configuration that ``bbcore copy`` is still writing into this store (``bbcore.copy``).

``dh2`` is when a configuration was completed; until a copy's last
transaction (which sets ``complete`` and the source's ``dh2``) it reads
``copying``, so that a copy stopped half-way is never taken for an
exploration of this store's own (``unfinished_copy``)."""


def unfinished_copy(row: Configuration | None) -> bool:
    """Whether a configuration's row (``config_row``) is a copy stopped before its end (``COPYING``).

    Its rows are the source's, some tables whole and others not yet there:
    an exploration must not resume them as its own (``bbcore.explore``
    refuses), the copy run again finishes them, a reset deletes them.
    """
    return row is not None and not row.complete and row.dh2 == COPYING


def is_compact(config: Config) -> bool:
    """Whether a configuration is (being) explored as a compact store (``bbcore.compact``)."""
    row = config_row(config)
    return row is not None and row.store == COMPACT


def counted_by_shards(config: Config) -> bool:
    """Whether a configuration's spectral groups are counted in its ``GroupedShards`` rows
    (by size, spectra, families): a complete compact store (``bbcore.compact``)."""
    row = config_row(config)
    return row is not None and row.complete and row.store == COMPACT


def stored_count(config: Config) -> int:
    """How many molecules of a configuration are stored (from ExploredRanges)."""
    from peewee import fn

    total = (
        ExploredRange.select(fn.COALESCE(fn.SUM(ExploredRange.nb_mol), 0))
        .where(ExploredRange.config == config.name)
        .scalar()
    )
    return int(total or 0)


def reset_config(config: Config) -> int:
    """Delete every row of a configuration in one transaction; returns molecules deleted.

    The caller holds the configuration's exploration lock
    (``bbcore.lock.exploration_lock``) so that no run is writing it.
    """
    deleted = stored_count(config)
    with db.atomic():
        drop_config_indexes(config)
        Molecule.delete().where(Molecule.config == config.name).execute()
        Spectrum.delete().where(Spectrum.config == config.name).execute()
        ExploredRange.delete().where(ExploredRange.config == config.name).execute()
        Book.delete().where(Book.config == config.name).execute()
        if db.table_exists(OptimalRun._meta.table_name):  # made by the first optimal search
            OptimalRun.delete().where(OptimalRun.config == config.name).execute()
        for model in (FamilyMolecules, Profile, GroupedShard, Family):
            model.delete().where(model.config == config.name).execute()
        Configuration.delete().where(Configuration.config == config.name).execute()
    return deleted
