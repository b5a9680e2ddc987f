"""The SQLite store, through peewee.

Tables (spec, "Tables"), with the spec's snake_case columns so that anyone
can query them with ``sqlite3``:

- ``Configurations``: config, nb_mol, nb_atoms, width, complete, dh1, dh2;
- ``Molecules``: config, number, canonical_number, molecule, spectrum,
  transform, the 17 statistics, dh1, dh2; primary key (config, number);
  each complete configuration has its own indexes on spectrum and on
  canonical_number (see ``create_config_indexes``);
- ``Spectrums``: config, spectrum, nb_mol, transform, canonical_number;
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
"""

from __future__ import annotations

import os
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from peewee import (
    BlobField,
    BooleanField,
    CharField,
    CompositeKey,
    DatabaseError,
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

db = SqliteDatabase(None)

BUSY_TIMEOUT_MS = 5000
PRAGMAS = {
    "journal_mode": "wal",
    "synchronous": "normal",
    "busy_timeout": BUSY_TIMEOUT_MS,
    "cache_size": -64 * 1024,
}


class StoreError(Exception):
    """A database that cannot be used: its message is one line for the user."""


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


MODELS = (Configuration, Molecule, Spectrum, ExploredRange, Book)
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


def drop_config_indexes(config: Config) -> None:
    """Drop a configuration's partial indexes (before it is reset)."""
    for statement in sql.drop_indexes(config):
        db.execute_sql(statement)


def has_config_indexes(config: Config) -> bool:
    """Whether a configuration's spectrum index exists (it is complete)."""
    return db.execute_sql(sql.INDEX_EXISTS, (sql.spectrum_index(config),)).fetchone() is not None


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


def default_path() -> Path:
    """The database file: ``BBTUI_DB``, else ``$XDG_DATA_HOME/bbtui/blackbox.sqlite``."""
    if os.environ.get("BBTUI_DB"):
        return Path(os.environ["BBTUI_DB"]).expanduser()
    data_home = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(data_home) / "bbtui" / "blackbox.sqlite"


def describe(error: Exception, path: Path) -> str:
    """A one-line message for an sqlite/peewee error on ``path``."""
    text = str(error).splitlines()[0] if str(error) else type(error).__name__
    if "not a database" in text or "malformed" in text:
        return f"{path} is not a bbtui database (or it is corrupt): {text}"
    if "locked" in text or "busy" in text:
        return f"{path} is locked by another process; try again when it is done"
    if "unable to open" in text:
        return f"cannot open {path}: {text}"
    if "readonly" in text or "read-only" in text:
        return f"{path} is read-only: {text}"
    return f"{path}: {text}"


def open_database(
    path: Path | str | None = None, *, create: bool = True, pragmas: dict[str, object] | None = None
) -> Path:
    """Point ``db`` at a file, check it is a usable database, create the tables.

    With ``create=False`` a missing file is an error instead of a new empty
    database (the read-only commands use this).  ``pragmas`` are set on top
    of PRAGMAS for this opening (an exploration's worker process uses its
    own).  Raises StoreError with a one-line message; a file that is not a
    database is never written to.  Every thread's connection is closed:
    call it before other threads use ``db`` (``use_database`` does not).
    """
    path = Path(path).expanduser() if path else default_path()
    if path.is_dir():
        raise StoreError(f"{path} is a directory, not a database file")
    if not path.exists():
        if not create:
            raise StoreError(f"no database at {path} (explore a configuration first)")
        if not path.parent.is_dir():
            if path.parent == default_path().parent:
                path.parent.mkdir(parents=True, exist_ok=True)
            else:
                raise StoreError(f"cannot create {path}: folder {path.parent} does not exist")
    check_database_file(path)
    if not db.is_closed():
        db.close()
    db.init(str(path), pragmas={**PRAGMAS, **(pragmas or {})}, check_same_thread=False)
    try:
        db.connect()
        db.create_tables(MODELS, safe=True)
        _upgrade_indexes()
    except (DatabaseError, OperationalError, sqlite3.Error) as error:
        db.close()
        raise StoreError(describe(error, path)) from None
    return path


def use_database(path: Path | str | None = None) -> Path:
    """Point ``db`` at ``path`` unless it already does (then nothing changes, in any thread)."""
    wanted = Path(path).expanduser() if path else default_path()
    if db.database and Path(db.database).resolve() == wanted.resolve():
        return wanted
    return open_database(wanted)


def check_database_file(path: Path) -> None:
    """Raise StoreError unless ``path`` is absent, empty or an SQLite database."""
    if not path.exists() or path.stat().st_size == 0:
        return
    # SQLite itself reads the header ("file is not a database"): closing a file
    # descriptor of our own on the database would drop every POSIX lock this
    # process holds on it, under the connections still open in other threads
    # (the TUI), and the database was seen malformed after a run.
    try:
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_MS / 1000)
        try:
            connection.execute("PRAGMA schema_version").fetchone()
        finally:
            connection.close()
    except sqlite3.Error as error:
        raise StoreError(describe(error, path)) from None


def config_row(config: Config) -> Configuration | None:
    """The Configurations row of a configuration, or None if unknown."""
    return Configuration.get_or_none(Configuration.config == config.name)


def ensure_config(config: Config) -> Configuration:
    """The Configurations row of a configuration, created if needed."""
    row, _ = Configuration.get_or_create(
        config=config.name,
        defaults={"nb_mol": config.nb_mol, "nb_atoms": config.atoms, "width": config.width},
    )
    return row


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
    (``bbcore.explore.exploration_lock``) so that no run is writing it.
    """
    with db.atomic():
        drop_config_indexes(config)
        deleted = Molecule.delete().where(Molecule.config == config.name).execute()
        Spectrum.delete().where(Spectrum.config == config.name).execute()
        ExploredRange.delete().where(ExploredRange.config == config.name).execute()
        Book.delete().where(Book.config == config.name).execute()
        Configuration.delete().where(Configuration.config == config.name).execute()
    return deleted
