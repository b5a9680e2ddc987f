"""Every SQL statement that bbcore writes as text, in one place.

Most of the store is read and written through peewee (``bbcore.store``'s
models).  What is here is what peewee does not say well: the partial
indexes of a configuration and the queries that must name them, the
single-scan GROUP BYs, and the bulk inserts that bypass peewee's per-row
query building.  The functions only build text; the callers execute it
on ``store.db`` (or on its connection) so that this module imports no
database.

Why the configuration is a literal and the index is named: SQLite uses a
partial index (``WHERE config = 'A4_B8'``) only when the query's WHERE
names that configuration as a literal, not as a bound parameter; and
without ANALYZE statistics it prefers the primary key (``config = ?``) as
soon as a column outside the spectrum index is read, a scan of the whole
configuration per spectrum (seconds each on A4_B8).  ``INDEXED BY`` names
the index to use.  Names are ``A<digits>_B<digits>`` (``bbcore.config``),
so quoting them is safe.

The statements are SQLite's.  What a PostgreSQL server (``bbcore.server``)
says differently is the dialect (``Dialect``, ``ServerDialect``), set by
``store.open_database`` for the store it opens (``use``): ``INDEXED BY``
(the server's planner has statistics and needs no hint), the catalogue of
indexes, ``GLOB``, the row bound of a grouping's progress.  The ``?``
placeholders stay as written: ``server.ServerDatabase`` hands them to
psycopg as ``%s`` (none of these statements has a ``?`` or ``%`` of its
own), and its bulk writes are ``COPY`` (``server.copy_rows``).
"""

from __future__ import annotations

import re

from bbcore.config import Config

MOLECULES = '"Molecules"'


class Dialect:
    """SQLite's forms of the statements that differ between the stores (the file)."""

    server = False

    def indexed_by(self, index: str) -> str:
        """The hint naming the index a query must use (see the module's docstring)."""
        return f' INDEXED BY "{index}"'

    index_exists = "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?"
    """One parameter: the index's name."""

    molecule_rows_bound = f"SELECT COALESCE(MAX(rowid), 0) FROM {MOLECULES}"
    """About how many rows an index build scans (every configuration's): the highest rowid."""

    row_order = "rowid"
    """The column that orders a table's rows as they are stored."""

    def rowid_bounds(self, config: Config) -> str:
        """The lowest and highest ``row_order`` of a configuration's molecules."""
        order, where = self.row_order, f"config = {config_literal(config)}"
        return f"SELECT min({order}), max({order}) FROM {MOLECULES} WHERE {where}"

    def spectra_by_rowid(self, config: Config) -> str:
        """number, spectrum of a configuration's molecules in table order; parameters: ``rowid_bounds``."""
        return (
            f"SELECT number, spectrum FROM {MOLECULES} "
            f"WHERE {self.row_order} BETWEEN ? AND ? AND config = {config_literal(config)}"
        )

    def matches(self, column: str) -> str:
        """``column`` matches a pattern (bound) of ``?`` (any one character), ``[a-z]`` and literals."""
        return f"{column} GLOB ?"

    def pattern(self, glob: str) -> str:
        """The bound value ``matches`` takes for a GLOB pattern."""
        return glob


class ServerDialect(Dialect):
    """PostgreSQL's forms."""

    server = True

    def indexed_by(self, index: str) -> str:
        return ""  # the partial index is chosen by the planner: the WHERE names the configuration

    index_exists = "SELECT 1 FROM pg_indexes WHERE schemaname = current_schema() AND indexname = ?"
    molecule_rows_bound = (
        "SELECT GREATEST(reltuples, 0)::bigint FROM pg_class WHERE oid = to_regclass('\"Molecules\"')"
    )
    """The planner's estimate of the table's rows (no scan)."""
    row_order = "number"  # no rowid: the primary key's order (config, number)

    def matches(self, column: str) -> str:
        return f"{column} ~ ?"

    def pattern(self, glob: str) -> str:
        """A GLOB of ``?``, ``[a-z]`` and literal characters as an anchored regular expression."""
        parts = re.split(r"(\[a-z\]|\?)", glob)
        return "^" + "".join("." if p == "?" else p if p == "[a-z]" else re.escape(p) for p in parts) + "$"


SQLITE = Dialect()
SERVER = ServerDialect()
dialect: Dialect = SQLITE
"""The open store's dialect (``use``)."""


def use(chosen: Dialect) -> None:
    """Speak ``chosen`` from now on (``store.open_database``, for the store it opens)."""
    global dialect
    dialect = chosen


def config_literal(config: Config) -> str:
    """The configuration's name as an SQL string literal (see the module's docstring)."""
    return f"'{config.name}'"


# -- the file ------------------------------------------------------------------------

SCHEMA_VERSION = "PRAGMA schema_version"
"""Reads the header: fails at once on a file that is not an SQLite database."""
JOURNAL_MODE = "PRAGMA journal_mode"
CHECKPOINT_TRUNCATE = "PRAGMA wal_checkpoint(TRUNCATE)"
"""Every page of the WAL into the file, and the WAL emptied."""
JOURNAL_MODE_DELETE = "PRAGMA journal_mode=DELETE"
"""Leave WAL mode: the file alone holds everything (``store.finish_file``)."""
USER_VERSION = "PRAGMA user_version"
"""The file's schema version as bbtui records it (``store.check_file_version``; 0 before it did)."""


def set_user_version(version: int) -> str:
    """Record the file's schema version (``USER_VERSION``)."""
    return f"PRAGMA user_version = {int(version)}"


STATISTICS_PRESENT = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sqlite_stat1'"
"""Whether the file has planner statistics (someone ran ANALYZE on it): ``store.refresh_statistics``."""


def analysis_limit(rows: int) -> str:
    """How many rows of each index SQLite's ANALYZE reads (0: all)."""
    return f"PRAGMA analysis_limit = {int(rows)}"


def analyze(table: str) -> str:
    """Refresh a table's statistics and its indexes' (the models' table names only)."""
    return f'ANALYZE "{table}"'


# -- a configuration's partial indexes ------------------------------------------


def spectrum_index(config: Config) -> str:
    """The name of a configuration's index on spectrum."""
    return f"Molecules_{config.name}_spectrum"


def canonical_index(config: Config) -> str:
    """The name of a configuration's index on canonical_number."""
    return f"Molecules_{config.name}_canonical"


def create_indexes(config: Config) -> tuple[str, ...]:
    """The statements that build a configuration's partial indexes on spectrum and canonical_number."""
    where = f"WHERE config = {config_literal(config)}"
    return (
        f'CREATE INDEX IF NOT EXISTS "{spectrum_index(config)}" ON {MOLECULES} (spectrum) {where}',
        f'CREATE INDEX IF NOT EXISTS "{canonical_index(config)}" ON {MOLECULES} (canonical_number) {where}',
    )


def create_index_named(config: Config, name: str) -> str:
    """The statement of ``create_indexes`` that builds the index called ``name``."""
    return next(statement for statement in create_indexes(config) if f'"{name}"' in statement)


def drop_index(name: str) -> str:
    """The statement that drops an index if it exists."""
    return f'DROP INDEX IF EXISTS "{name}"'


def drop_indexes(config: Config) -> tuple[str, ...]:
    """The statements that drop a configuration's partial indexes (its molecules' and its families')."""
    names = (
        spectrum_index(config),
        canonical_index(config),
        family_key_index(config),
        family_size_index(config),
    )
    return tuple(drop_index(name) for name in names)


LEGACY_INDEXES = ("molecule_config_spectrum", "molecule_config_canonical_number")
"""Whole-table indexes of databases made before the per-configuration ones."""

LEGACY_INDEXES_PRESENT = "SELECT name FROM sqlite_master WHERE type = 'index' AND name IN (?, ?)"
"""Parameters: LEGACY_INDEXES."""


# -- the molecules of a configuration, by spectrum --------------------------------


def molecules_indexed(config: Config, alias: str = "", *, indexed: bool = True) -> tuple[str, str]:
    """``FROM`` and ``WHERE`` fragments for a configuration's molecules through its spectrum index.

    Returns (``"Molecules" [AS alias] INDEXED BY "<index>"``, ``[alias.]config = '<name>'``).
    With ``indexed=False`` (a configuration still being explored has no
    index yet) the ``INDEXED BY`` is left out and its molecules are scanned.
    """
    table = f"{MOLECULES} AS {alias}" if alias else MOLECULES
    if indexed:
        table += dialect.indexed_by(spectrum_index(config))
    column = f"{alias}.config" if alias else "config"
    return table, f"{column} = {config_literal(config)}"


def by_spectrum(
    config: Config, columns: str, condition: str, *, indexed: bool = True, order: str = ""
) -> str:
    """``SELECT columns`` of a configuration's molecules matching ``condition``, through the spectrum index.

    The one query the store answers by spectrum: a spectral group's
    molecules (``spectrum = ?``), a decode's candidates (``spectrum GLOB ?``
    and more).  ``order`` is an ``ORDER BY`` list, or empty.
    """
    table, where = molecules_indexed(config, indexed=indexed)
    sql = f"SELECT {columns} FROM {table} WHERE {where} AND {condition}"
    return f"{sql} ORDER BY {order}" if order else sql


def ambiguous_molecules(config: Config) -> str:
    """The molecules of the ambiguous spectra: spectrum, canonical_number, number, transform.

    Both steps go through the spectrum index (a covering scan, then a
    look-up per spectrum: 0.15 s on A4_B8).  Without the INDEXED BY, SQLite
    grouped the whole configuration by a sort (1.2 s).  A server's form is
    ``ambiguous_by_window``.
    """
    if dialect.server:
        return ambiguous_by_window(config)
    table, where = molecules_indexed(config)
    return (
        f"SELECT spectrum, canonical_number, number, transform FROM {table} "
        f"WHERE {where} AND spectrum IN "
        f"(SELECT spectrum FROM {table} WHERE {where} GROUP BY spectrum HAVING COUNT(*) > 1)"
    )


def ambiguous_by_window(config: Config) -> str:
    """A server's ``ambiguous_molecules``: one pass over the configuration's molecules, by spectrum.

    Each molecule is counted with its spectrum (a window over the rows in
    spectrum order) and kept when its spectrum has two molecules or more,
    rows in spectrum order (``ambiguous_molecules_by_spectrum``'s order).
    No join: the plan is a scan (of the table or the spectrum index), a
    sort unless the index gives the order, and the window, whatever the
    planner believes of the row counts.  The form with ``IN (SELECT ...
    GROUP BY spectrum ...)`` was planned from statistics taken before the
    configuration's rows existed (an estimate of 1 row) as a nested loop
    that ran the GROUP BY again for every molecule: A4_B6 (58,905
    molecules) beside a 7,140-row A3_B6 sat in it for over 10 minutes;
    this form took 0.64 s with the same stale statistics (issue 32, D1).
    With fresh statistics it costs no more than the hash join the other
    form then gets: A4_B8 (635,376 molecules), 7.2 s against 8.9 s
    (medians of 3, alternating, load average 19).
    """
    return (
        "SELECT spectrum, canonical_number, number, transform FROM "
        "(SELECT spectrum, canonical_number, number, transform, "
        f"COUNT(*) OVER (PARTITION BY spectrum) AS molecules FROM {MOLECULES} "
        f"WHERE config = {config_literal(config)}) AS counted WHERE molecules > 1 ORDER BY spectrum"
    )


def group_molecules(config: Config) -> str:
    """Every stored spectral group's molecules: spectrum, transform, molecule, ordered by spectrum.

    Without ANALYZE statistics, SQLite prefers scanning Molecules by its
    primary key (config=?) to the spectrum index whenever a column outside
    that index is read: one whole-configuration scan per spectral group
    (over an hour on A4_B8).  CROSS JOIN fixes the order: each group, its
    molecule numbers by the covering spectrum index, then each molecule by
    primary key (half a second).
    """
    table, where = molecules_indexed(config, "k")
    name = config_literal(config)
    return (
        f'SELECT s.spectrum, s.transform, m.molecule FROM "Spectrums" AS s '
        f"CROSS JOIN {table} CROSS JOIN {MOLECULES} AS m "
        f"WHERE s.config = {name} AND {where} AND k.spectrum = s.spectrum "
        f"AND m.config = {name} AND m.number = k.number ORDER BY s.spectrum"
    )


# -- whole-configuration scans ----------------------------------------------------


def grouped_by(columns: str, group_by: str) -> str:
    """``SELECT <columns>, COUNT(*), MIN(number)`` of a configuration's molecules, grouped.

    One parameter: the configuration's name.  The statistics profile is
    one such scan (``bbcore.statistics.statistics_profile``).
    """
    return f"SELECT {columns}, COUNT(*), MIN(number) FROM {MOLECULES} WHERE config = ? GROUP BY {group_by}"


def table_rows(table: str, columns: tuple[str, ...], order: str) -> str:
    """Every row of a configuration in ``table``, the given columns, in ``order``; one parameter: config."""
    return f'SELECT {", ".join(columns)} FROM "{table}" WHERE config = ? ORDER BY {order}'


# -- bulk writes (exploration) ----------------------------------------------------

STAGE = "staged_molecules"
"""A connection's own temporary table where a chunk waits for its write turn."""


def insert_molecules(columns: tuple[str, ...], table: str = f"main.{MOLECULES}") -> str:
    """``INSERT INTO table (columns) VALUES (?, ...)``, for executemany."""
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"


def create_stage(columns: tuple[str, ...]) -> str:
    """Create the connection's staging table (``STAGE``) if needed."""
    return f'CREATE TEMP TABLE IF NOT EXISTS "{STAGE}" ({", ".join(columns)})'


def copy_stage(columns: tuple[str, ...]) -> str:
    """Copy the staged rows into Molecules."""
    return f'INSERT INTO main.{MOLECULES} ({", ".join(columns)}) SELECT * FROM temp."{STAGE}"'


CLEAR_STAGE = f'DELETE FROM temp."{STAGE}"'


# -- upgrades and the compact store ----------------------------------------------------


def add_column(table: str, column: str, definition: str) -> str:
    """The statement that adds a column to a table of an older database."""
    return f'ALTER TABLE "{table}" ADD COLUMN "{column}" {definition}'


def profile_rows(columns: tuple[str, ...]) -> str:
    """A compact store's profile rows: the statistics, molecules and lowest number (config bound)."""
    return f'SELECT {", ".join(columns)}, molecules, lowest FROM "Profiles" WHERE config = ?'


def profile_packed(keys: list[str]) -> str:
    """A compact store's profile rows with their statistics packed in ``keys`` (SQL expressions),
    then the molecules and the lowest number (config bound)."""
    return f'SELECT {", ".join(keys)}, molecules, lowest FROM "Profiles" WHERE config = ?'


def insert_profiles(columns: tuple[str, ...]) -> str:
    """A compact store's profile rows, by ``executemany``: config, the statistics, molecules, lowest."""
    names = ("config", *columns, "molecules", "lowest")
    return f'INSERT INTO "Profiles" ({", ".join(names)}) VALUES ({", ".join("?" * len(names))})'


# -- bbcore check ---------------------------------------------------------------

CHECKED_COLUMNS = ("number", "canonical_number", "transform", "molecule", "spectrum")
"""What ``bbcore check`` reads of every molecule (the statistics only for its samples)."""


def molecules_by_canonical(config: Config) -> str:
    """The checked columns of the molecules whose canonical_number is in [?, ?), by the canonical index.

    Whole enantiomer groups, and (rows being written group by group) read
    nearly in table order.
    """
    return (
        f"SELECT {', '.join(CHECKED_COLUMNS)} FROM {MOLECULES}{dialect.indexed_by(canonical_index(config))} "
        f"WHERE config = {config_literal(config)} AND canonical_number >= ? AND canonical_number < ?"
    )


def molecules_by_number(columns: tuple[str, ...], count: int) -> str:
    """Given columns of a configuration's molecules with ``count`` numbers; parameters: config, numbers."""
    numbers = ", ".join("?" * count)
    return f"SELECT {', '.join(columns)} FROM {MOLECULES} WHERE config = ? AND number IN ({numbers})"


COUNT_MOLECULES = f"SELECT COUNT(*) FROM {MOLECULES} WHERE config = ?"
"""One parameter: the configuration's name."""

INTEGRITY_CHECK = "PRAGMA integrity_check(20)"
"""SQLite's own check of the whole file: ``ok``, or up to 20 lines of damage."""


# -- a compact store's families (bbcore.families) ----------------------------------------

FAMILIES = '"Families"'
FAMILY_COLUMNS = (
    "config",
    "position",
    "canonical_number",
    "key",
    "nb_mol",
    "spectra",
    "max_diff",
    "spectrum",
    "numbers",
    "spectra_before",
    "size_position",
    "size_spectra_before",
)
"""``store.Family``'s columns, in the order ``INSERT_FAMILIES`` and the readers use."""
INSERT_FAMILIES = (
    f"INSERT INTO {FAMILIES} ({', '.join(FAMILY_COLUMNS)}) VALUES ({', '.join('?' * len(FAMILY_COLUMNS))})"
)
"""A compact store's families, by ``executemany``."""


def family_key_index(config: Config) -> str:
    """The name of a configuration's index of its families by key (a typed spectrum's family)."""
    return f"Families_{config.name}_key"


def family_size_index(config: Config) -> str:
    """The name of a configuration's index of its families by size_position (the size order)."""
    return f"Families_{config.name}_size"


def create_family_indexes(config: Config) -> tuple[str, ...]:
    """The statements that build a configuration's family indexes, once its families are all written."""
    where = f"WHERE config = {config_literal(config)}"
    return (
        f'CREATE INDEX IF NOT EXISTS "{family_key_index(config)}" ON {FAMILIES} (key) {where}',
        f'CREATE INDEX IF NOT EXISTS "{family_size_index(config)}" ON {FAMILIES} (size_position) {where}',
    )


def families_by(config: Config, column: str, condition: str) -> str:
    """Every column of a configuration's families matching ``condition``, ordered by ``column``.

    ``column`` is position (the primary key), size_position or key (their
    partial indexes, named: see the module's docstring); ``condition`` on it
    has its values bound.
    """
    index = {"size_position": family_size_index(config), "key": family_key_index(config)}.get(column)
    table = FAMILIES + dialect.indexed_by(index) if index else FAMILIES
    return (
        f"SELECT {', '.join(FAMILY_COLUMNS)} FROM {table} "
        f"WHERE config = {config_literal(config)} AND {condition} ORDER BY {column}"
    )


def family_ordinal(config: Config, column: str, before: str) -> str:
    """``before`` (spectra_before or size_spectra_before) of the family at one ``column`` value (bound)."""
    index = {"size_position": family_size_index(config)}.get(column)
    table = FAMILIES + dialect.indexed_by(index) if index else FAMILIES
    return f"SELECT {before} FROM {table} WHERE config = {config_literal(config)} AND {column} = ?"


LAST_FAMILY_ROW = (
    f"SELECT position, canonical_number FROM {FAMILIES} WHERE config = ? ORDER BY position DESC LIMIT 1"
)
"""The last family written of a configuration (where the writing resumes)."""
FAMILIES_BY_SIZE = (
    f"SELECT nb_mol, COUNT(*), SUM(spectra) FROM {FAMILIES} WHERE config = ? GROUP BY nb_mol ORDER BY nb_mol"
)
"""The families written so far of a configuration, by size, smallest first on every store (a resumed
writing's running counts: a server's GROUP BY gave them in another order)."""
OLD_FAMILIES = (
    'SELECT canonical_number, numbers FROM "FamilyMolecules" WHERE config = ? AND canonical_number > ? '
    "ORDER BY canonical_number LIMIT ?"
)
"""A compact store made before Families: its families' molecules, a batch at a time (``families.migrate``)."""
PAGE_COUNT = "PRAGMA page_count"
PAGE_SIZE = "PRAGMA page_size"
"""The file's size is their product (what the integrity check reads)."""


def ambiguous_molecules_by_spectrum(config: Config) -> str:
    """``ambiguous_molecules``' rows (spectrum, canonical_number, number, transform), ordered by spectrum.

    The ambiguous spectra come from a covering scan of the spectrum index
    grouped in its order (a co-routine), then each one's molecules by a
    look-up: the rows stream out in spectrum order with no sort and nothing
    materialised (an ORDER BY made SQLite sort them all again), so
    ``bbcore check`` merges them with the Spectrums rows a spectrum at a time.
    """
    if dialect.server:
        return ambiguous_by_window(config)
    table, where = molecules_indexed(config)
    molecules, joined = molecules_indexed(config, "m")
    return (
        f"SELECT m.spectrum, m.canonical_number, m.number, m.transform "
        f"FROM (SELECT spectrum FROM {table} WHERE {where} GROUP BY spectrum HAVING COUNT(*) > 1) AS a "
        f"CROSS JOIN {molecules} WHERE {joined} AND m.spectrum = a.spectrum"
    )


COUNT_SPECTRUMS = 'SELECT COUNT(*) FROM "Spectrums" WHERE config = ?'
SPECTRUMS_BY_SPECTRUM = (
    'SELECT spectrum, nb_mol, transform, canonical_number FROM "Spectrums" WHERE config = ? ORDER BY spectrum'
)
"""A configuration's Spectrums rows in their primary key's order (no sort)."""


def molecules_outside_canonicals(config: Config) -> str:
    """number, canonical_number of the molecules whose canonical number is below ? or above ?.

    Two searches of the canonical index (an OR made it scan the index whole).
    """
    select = (
        f"SELECT number, canonical_number FROM {MOLECULES}{dialect.indexed_by(canonical_index(config))} "
        f"WHERE config = {config_literal(config)} AND canonical_number"
    )
    return f"{select} < ? UNION ALL {select} > ?"
