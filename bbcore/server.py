"""The PostgreSQL store: what a server URL changes, in one place (``store.py`` only dispatches).

``--db`` and ``BBTUI_DB`` take a server URL as well as a file path:
``postgresql://user[:password]@host[:port]/dbname`` (or ``postgres://``),
with libpq's query parameters (``?sslmode=require``, ...).  The tables are
the SQLite store's peewee models, created by the first writer through
peewee's ``PostgresqlDatabase`` on psycopg 3 (the ``[server]`` extra).

This module holds:

- ``ServerURL``: a connection string (a URL, or libpq's key=value form)
  parsed as libpq parses it (``parse``), whose ``str()`` is made from the
  parsed parameters with the password masked, so that whatever prints a
  database's name (errors, ``status``, the TUI's header, progress lines,
  the ``--serve`` banner) can never show it, whatever characters it
  holds.  The password may also come from ``PGPASSWORD`` or
  ``~/.pgpass``: libpq reads them when the URL has none.
- ``ServerDatabase``: peewee's database with 64-bit integers (molecule
  numbers pass 2^31) whose connections are read-only when the store is.
- the one-line errors of a server (``error_line``): unreachable,
  authentication failed, database missing, permission denied, read-only,
  disk full, connection dropped.  The password is scrubbed from any text
  the server or libpq gives back.
- ``open_server``: connect, find whether the role may write, create the
  tables (first writer) or check the schema version.
- ``advisory_lock``: the exploration lock of a configuration, the server's
  own (``pg_try_advisory_lock``), held on a connection of its own, and
  ``check_lock``, which each write transaction of a run calls: a lock lost
  with its connection alone stops the run in one line.

Every value travels as a query parameter; identifiers in SQL text are the
models' own table names, never user input.  This module never imports
``bbcore.store`` (which dispatches to it): the store passes its ``db`` and
models in, and turns ``ServerError`` into its own ``StoreError``.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from urllib.parse import quote

from peewee import DatabaseError, DatabaseProxy, InterfaceError, Model, OperationalError, PostgresqlDatabase

from bbcore import sql
from bbcore.config import Config

SCHEMES = ("postgresql", "postgres")
SCHEMA_VERSION = 1
"""The layout of the tables this bbtui writes; a server database records the one it was made with."""
CONNECT_TIMEOUT_SECONDS = 10
"""How long a connection attempt waits for an unreachable host, unless the URL says otherwise."""
MASK = "***"
LOCK_SPACE = 0x62627475  # "bbtu": the high half of every advisory lock key of bbtui
SERVER_DOCS = "see docs/server.md"


class ServerError(Exception):
    """A server database that cannot be used: one line for the user, the password masked."""


class ReadOnlyRole(ServerError):
    """A write asked of a role that may only read."""


KEYWORDS = frozenset(
    (
        "host hostaddr port dbname user password passfile require_auth channel_binding connect_timeout "
        "client_encoding options application_name fallback_application_name keepalives keepalives_idle "
        "keepalives_interval keepalives_count tcp_user_timeout replication gssencmode sslmode requiressl "
        "sslcompression sslcert sslkey sslpassword sslcertmode sslrootcert sslcrl sslcrldir sslsni "
        "requirepeer ssl_min_protocol_version ssl_max_protocol_version krbsrvname gsslib gssdelegation "
        "service target_session_attrs load_balance_hosts sslnegotiation"
    ).split()
)
"""libpq's connection keywords: a ``--db`` text that starts with one of them and ``=`` is a server's
``key=value`` connection string (``host=db.example dbname=blackbox``), not a file path."""
SHAPE = "postgresql://USER[:PASSWORD]@HOST[:PORT]/DBNAME, or libpq's key=value form"
INVALID = f"not a valid PostgreSQL connection string ({SHAPE})"


def is_url(text: object) -> bool:
    """Whether ``--db``'s text names a server rather than a file.

    A server is named as libpq names one: a URL (``postgresql://`` or
    ``postgres://``), or a ``key=value`` connection string whose first
    keyword is one of libpq's (``KEYWORDS``).
    """
    if not isinstance(text, str):
        return False
    scheme, separator, _ = text.partition("://")
    if separator and scheme.lower() in SCHEMES:
        return True
    first = re.match(r"\s*([A-Za-z_]+)\s*=", text)
    return first is not None and first.group(1) in KEYWORDS


def parse(text: str) -> dict[str, str]:
    """The connection parameters libpq reads in ``text`` (psycopg's ``conninfo_to_dict``), or ServerError.

    libpq parses, so that bbtui connects to what it shows and masks the
    password libpq will send, whatever characters it holds.  No message
    shows ``text`` or a part of it: libpq's own complaints quote the
    offending part, which may be the password, and that part is left out
    (``_unquoted``).  A URL in which libpq would find an ``@`` past the
    one that ends the user's part (a raw ``@`` or ``/`` in the password,
    which libpq then reads as part of the host, port or database) is
    refused: its password would be misread, and its tail shown as a host.
    """
    try:
        from psycopg import ProgrammingError
        from psycopg.conninfo import conninfo_to_dict
    except ImportError:
        raise ServerError(
            "a PostgreSQL server as the store needs psycopg: pip install 'bbtui[server]'"
        ) from None
    try:
        if "\0" in text:  # libpq would stop reading there
            raise ValueError(text)
        params = conninfo_to_dict(text)
    except ProgrammingError as error:
        raise ServerError(f"{INVALID}: {_unquoted(str(error))}") from None
    except ValueError:  # a NUL, or bytes that are not text
        raise ServerError(f"{INVALID}: a character libpq cannot take") from None
    if _stray_at(text):
        raise ServerError(
            f"{INVALID}: libpq would not read its user and password as meant; percent-encode "
            "an '@' or '/' in the user name, password or database (%40, %2F)"
        )
    return {name: str(value) for name, value in params.items() if value is not None}


def _unquoted(message: str) -> str:
    """libpq's complaint on a connection string with the parts it quotes from it left out.

    libpq quotes what it read (``missing "=" after "xyz"``, ``invalid URI
    query parameter: "..."``), and that may be the password or a part of
    it: everything from the first double quote to the last is dropped,
    but for the words libpq quotes of its own (``LIBPQ_TOKENS``).
    """
    line = " ".join(message.split())
    for number, token in enumerate(LIBPQ_TOKENS):  # libpq's own quoted words stay
        line = line.replace(token, f"\0{number}\0")
    if '"' in line:
        line = line[: line.index('"')] + '"..."' + line[line.rindex('"') + 1 :]
    for number, token in enumerate(LIBPQ_TOKENS):
        line = line.replace(f"\0{number}\0", token)
    return line.rstrip(": ") or "libpq cannot parse it"


LIBPQ_TOKENS = ('":" or "/"', '"="', '"]"', '"%00"')
"""What libpq quotes of its own in its complaints (``expected ":" or "/"``, ``missing "="``)."""


def _stray_at(text: str) -> bool:
    """Whether libpq would read an ``@`` of a URL as part of its host, port or database name.

    libpq ends the user's part at the first ``@`` met before a ``/``; an
    ``@`` after it, before the query, is what a raw ``@`` or ``/`` in a
    password leaves behind (``user:Pa@ss@host``: host ``ss@host``;
    ``user:a/b@host/db``: host ``user``, database ``b@host/db``).
    """
    scheme, separator, rest = text.partition("://")
    if not separator or scheme.lower() not in SCHEMES:
        return False
    end = next((index for index, char in enumerate(rest) if char in "@/"), len(rest))
    after = rest[end + 1 :] if end < len(rest) and rest[end] == "@" else rest
    return "@" in after.split("?", 1)[0]


def _written_password(text: str) -> str:
    """The password of a URL as typed (``%41`` undecoded): what ``scrub`` masks besides libpq's reading."""
    scheme, separator, rest = text.partition("://")
    end = next((index for index, char in enumerate(rest) if char in "@/"), len(rest))
    if not separator or end == len(rest) or rest[end] != "@":
        return ""
    return rest[:end].partition(":")[2]


class ServerURL:
    """A server database's connection string, parsed as libpq parses it; ``str()`` masks the password.

    ``params`` are libpq's parameters (``parse``); ``str()`` and ``repr()``
    are a URL made from them with the password as ``***``, so that what
    is shown is what libpq reads, never the text given.  ``conninfo``
    (every parameter, percent-encoded, in a ``postgresql://`` URL, which
    is what peewee recognizes) is the only way to the password: it goes
    to libpq, never to a message.
    """

    __slots__ = ("conninfo", "params", "user", "dbname", "_masked", "_secrets")

    def __init__(self, text: str) -> None:
        self.params = parse(text)
        scheme = text.partition("://")[0].lower() if "://" in text else "postgresql"
        self.conninfo = "postgresql://" + (
            "?" + "&".join(f"{name}={quote(value, safe='')}" for name, value in self.params.items())
            if self.params
            else ""
        )
        self.user = self.params.get("user") or _default_user()
        self.dbname = self.params.get("dbname") or os.environ.get("PGDATABASE") or self.user
        password = self.params.get("password") or ""
        written = [password, quote(password, safe=""), _written_password(text)]  # as libpq reads it, as typed
        for name in SECRETS:  # the SSL key's password, as libpq reads it
            written += [self.params.get(name) or "", quote(self.params.get(name) or "", safe="")]
        self._secrets = tuple(sorted((secret for secret in dict.fromkeys(written) if secret), key=len)[::-1])
        self._masked = masked(self.params, scheme if scheme in SCHEMES else "postgresql")

    def __str__(self) -> str:
        return self._masked

    def __repr__(self) -> str:
        return f"ServerURL({self._masked!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ServerURL) and other.params == self.params

    def __hash__(self) -> int:
        return hash(frozenset(self.params.items()))

    @property
    def host(self) -> str | None:
        """The host (or hosts, comma-separated, or a socket folder) libpq connects to; None: its default."""
        return self.params.get("host") or self.params.get("hostaddr")

    @property
    def port(self) -> str | None:
        """The port libpq connects to (as given); None: its default."""
        return self.params.get("port")

    def scrub(self, text: str) -> str:
        """``text`` with every occurrence of the password masked (a message from libpq or the server)."""
        for secret in self._secrets:
            text = text.replace(secret, MASK)
        return text


def _default_user() -> str:
    """libpq's default user when the URL names none: ``PGUSER``, else the login name."""
    if os.environ.get("PGUSER"):
        return os.environ["PGUSER"]
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "?"


SECRETS = ("sslpassword",)
"""libpq's parameters besides ``password`` that hold a secret (the SSL client key's password):
masked wherever the password is."""


def masked(params: dict[str, str], scheme: str = "postgresql") -> str:
    """A URL of libpq's parameters ``params`` with the password (and ``SECRETS``) as ``***``: what
    bbtui shows of a server.

    Made from the parsed parameters only, each percent-encoded: the text
    the user gave is never shown, so a password libpq read is never shown
    either, whatever it holds.
    """
    rest = dict(params)
    user, password = rest.pop("user", None), rest.pop("password", None)
    netloc = ""
    if user is not None or password is not None:
        netloc = quote(user or "", safe="") + (f":{MASK}" if password is not None else "") + "@"
    host, port = rest.get("host"), rest.get("port")
    if host and not host.startswith("/") and "," not in host + (port or ""):
        del rest["host"]
        netloc += f"[{host}]" if ":" in host else quote(host, safe="")
        if port is not None:
            netloc += ":" + quote(rest.pop("port"), safe="")
    path = "/" + quote(rest.pop("dbname"), safe="") if "dbname" in rest else ""
    query = "&".join(
        f"{name}={MASK if name in SECRETS else quote(value, safe='/,')}" for name, value in rest.items()
    )
    return f"{scheme}://{netloc}{path}" + (f"?{query}" if query else "")


def placeholders(sql: str) -> str:
    """bbcore's SQL text (SQLite's ``?`` placeholders, ``bbcore.sql``) as psycopg takes it (``%s``).

    Text without ``?`` is left alone: peewee's own queries already say ``%s``.
    """
    if "?" in sql:
        return sql.replace("%", "%%").replace("?", "%s")
    return sql


class ServerDatabase(PostgresqlDatabase):
    """peewee's PostgreSQL database for the store: 64-bit integers, read-only sessions when asked.

    peewee's ``IntegerField`` is ``INTEGER`` (32 bits) on PostgreSQL; the
    store's numbers (molecules, family keys) need 64.  Text compares byte
    by byte (``COLLATE "C"``), as in SQLite: spectra sort the same in both
    stores, whatever the server's locale.  bbcore's SQL text uses SQLite's
    ``?`` placeholders (``bbcore.sql``); ``execute_sql`` hands them to
    psycopg as ``%s``.  A store opened
    read-only (``write=False``, or a role that may only read) sets every new
    session read-only, so that nothing this process does can write.
    """

    field_types = {**PostgresqlDatabase.field_types, "INT": "BIGINT", "TEXT": 'TEXT COLLATE "C"'}

    def __init__(self, url: ServerURL, *, read_only: bool = False) -> None:
        self.read_only = read_only
        self.url = url
        super().__init__(
            url.conninfo,
            prefer_psycopg3=True,
            connect_timeout=CONNECT_TIMEOUT_SECONDS,
            application_name="bbtui",
        )

    def execute_sql(self, sql: str, params=None):
        return super().execute_sql(placeholders(sql), params)

    def _initialize_connection(self, conn) -> None:
        conn.adapters.register_loader("numeric", _numeric_loader())
        if self.read_only:
            conn.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")


@cache
def _numeric_loader() -> type:
    """psycopg's loader of ``numeric`` values that gives what SQLite gives: an int when whole, else a float.

    A ``numeric`` is what PostgreSQL's SUM of a bigint column returns (and
    AVG of any integer): psycopg would give a ``decimal.Decimal``, which
    prints as an int does but does not mix with floats (a TypeError) or
    JSON.  bbtui's tables hold no ``numeric`` column (integers are BIGINT,
    reals double precision), so every numeric is an aggregate: ``SUM`` comes
    back an int and ``AVG`` a float, as from SQLite, in one place for every
    query, peewee's or ``bbcore.sql``'s.
    """
    from psycopg.adapt import Loader

    class SQLiteNumeric(Loader):
        def load(self, data) -> int | float:
            text = bytes(data).decode("ascii")
            try:
                return int(text)
            except ValueError:
                return float(text)  # a fraction, NaN or an infinity

    return SQLiteNumeric


# -- errors -------------------------------------------------------------------

UNREACHABLE = (
    "Connection refused",
    "could not translate host name",
    "failed to resolve host",
    "timeout expired",
    "No route to host",
)


def _cause(error: BaseException) -> BaseException:
    """The driver's exception behind peewee's wrapper (``peewee.OperationalError(psycopg_error, ...)``)."""
    seen = set()
    while id(error) not in seen:
        seen.add(id(error))
        if getattr(error, "sqlstate", None) or type(error).__module__.startswith("psycopg"):
            return error
        inner = error.args[0] if error.args and isinstance(error.args[0], BaseException) else None
        inner = inner or error.__cause__ or error.__context__
        if inner is None:
            break
        error = inner
    return error


def _first_line(text: str) -> str:
    """The message without libpq's prefixes ("connection failed: ... failed: FATAL:  ")."""
    line = text.strip().splitlines()[0] if text.strip() else ""
    line = line.rsplit(" failed: ", 1)[-1]
    return re.sub(r"^(FATAL|ERROR):\s+", "", line).strip()


def read_only_message(url: ServerURL) -> str:
    """The one line refusing a write to a role that may only read."""
    return (
        f"role {url.user} may only read {url}: it cannot write (explore, reset, a book); "
        f"use a writer role ({SERVER_DOCS})"
    )


def error_line(error: BaseException, url: ServerURL) -> str:
    """One line for what the server (or libpq) said, the password masked."""
    if isinstance(error, ServerError):
        return url.scrub(str(error))
    cause = _cause(error)
    state = getattr(cause, "sqlstate", None) or ""
    text = url.scrub(_first_line(str(cause)) or type(cause).__name__)
    if "password authentication failed" in text or state == "28P01":
        return f"authentication failed for {url}: wrong password for role {url.user}"
    if "no password supplied" in text:
        return f"authentication failed for {url}: no password (put it in the URL, $PGPASSWORD or ~/.pgpass)"
    if state == "28000" or ("role" in text and "does not exist" in text):
        return f"authentication failed for {url}: {text}"
    if state == "3D000" or ("database" in text and "does not exist" in text):
        return f"database {url.dbname} does not exist on the server of {url} (createdb it: {SERVER_DOCS})"
    if state == "25006":
        return read_only_message(url)
    if state == "42501" or "permission denied" in text:
        return f"role {url.user} lacks a permission on {url}: {text} ({SERVER_DOCS})"
    if state in ("53100", "53400") or "No space left" in text:
        return f"the server's disk is full ({url}): what was stored is kept (free some space and resume)"
    if state.startswith(("57P", "08")) or isinstance(cause, InterfaceError) or _lost(text):
        return f"the connection to {url} was lost: {text} (what was stored is kept; run it again to resume)"
    if any(words in text for words in UNREACHABLE) or "connection" in text.lower():
        return f"cannot reach the server of {url}: {text}"
    return f"{url}: {text}"


LOST = ("closed", "connection is lost", "terminating connection", "connection lost")
"""What psycopg and the server say of a connection that ended under a command (no SQLSTATE, often)."""


def _lost(text: str) -> bool:
    return any(words in text.lower() for words in LOST)


def is_server_error(error: BaseException) -> bool:
    """Whether ``error`` comes from psycopg or the server (so ``error_line`` describes it)."""
    cause = _cause(error)
    return type(cause).__module__.startswith("psycopg") or isinstance(error, DatabaseError | OperationalError)


# -- opening ------------------------------------------------------------------


@dataclass(frozen=True)
class Access:
    """What the role may do on the database: read only, and whether the tables are there."""

    read_only: bool
    tables: bool
    can_create: bool


ACCESS = (
    "SELECT current_setting('transaction_read_only') = 'on' OR pg_is_in_recovery(), "
    "to_regclass(%s) IS NOT NULL, has_schema_privilege(current_schema(), 'CREATE')"
)
CAN_WRITE = "SELECT has_table_privilege(%s, 'INSERT')"


def access(db: DatabaseProxy) -> Access:
    """Whether the connected role may write, and whether bbtui's tables exist (``open_server``)."""
    table = _qualified("Configurations")
    read_only, tables, can_create = db.execute_sql(ACCESS, (table,)).fetchone()
    if tables and not read_only:
        (may_insert,) = db.execute_sql(CAN_WRITE, (table,)).fetchone()
        read_only = not may_insert
    return Access(bool(read_only), bool(tables), bool(can_create))


def _qualified(table: str) -> str:
    """A table name as ``to_regclass`` and ``has_table_privilege`` read it (quoted: mixed case)."""
    return f'"{table}"'


def open_server(
    db: DatabaseProxy,
    url: ServerURL,
    models: tuple[type[Model], ...],
    version: type[Model],
    *,
    create: bool = True,
    write: bool | None = None,
) -> bool:
    """Point the store's ``db`` at the server; create the tables or check their version; True when read-only.

    ``models`` are the store's tables, ``version`` the one-row table of the
    schema version (among them).  ``write=True`` refuses a role that may
    only read (ReadOnlyRole, one line); ``write=False`` opens read-only
    whatever the role may do; ``write=None`` (readers) takes what the role
    allows.  ``create=False`` refuses a database without bbtui's tables
    instead of creating them.  Raises ServerError.
    """
    if not db.is_closed():
        db.close()
    db.initialize(ServerDatabase(url, read_only=write is False))
    try:
        db.connect()
        found = access(db)
        read_only = write is False or found.read_only
        if read_only and write:
            raise ReadOnlyRole(read_only_message(url))
        if not found.tables:
            if not create or read_only:
                who = " with a writer role" if read_only else ""
                raise ServerError(f"{url} holds no bbtui tables yet: explore a configuration{who} first")
            if not found.can_create:
                raise ServerError(
                    f"role {url.user} may not create tables in {url}: "
                    f"grant it CREATE on the schema, or let a writer role create them ({SERVER_DOCS})"
                )
            create_tables(db, models, version)
        check_version(db, url, version)
        if read_only and not db.obj.read_only:  # a role that may only read: read-only sessions too
            db.close()
            db.obj.read_only = True
            db.connect()
    except ServerError:
        db.close()
        raise
    except Exception as error:
        db.close()
        if is_server_error(error):
            raise ServerError(error_line(error, url)) from None
        raise
    return read_only


def create_tables(db: DatabaseProxy, models: tuple[type[Model], ...], version: type[Model]) -> None:
    """Create bbtui's tables and record the schema version, once, whoever else tries at the same time.

    Two first writers at once would both try ``CREATE TABLE IF NOT EXISTS``,
    which PostgreSQL does not make atomic: a transaction-scoped advisory
    lock lets one create while the other waits, then finds them.
    peewee writes SQLite's ``WITHOUT ROWID`` option of some models into
    their DDL whatever the database; PostgreSQL has no rowid to drop.
    """
    with db.atomic():
        db.execute_sql("SELECT pg_advisory_xact_lock(%s)", (lock_key("schema"),))
        for model in models:
            statement, params = model._schema._create_table(safe=True).query()
            db.execute_sql(statement.replace(" WITHOUT ROWID", ""), params)
            model._schema.create_indexes(safe=True)
        if not version.select().exists():
            version.insert(version=SCHEMA_VERSION).execute()


def check_version(db: DatabaseProxy, url: ServerURL, version: type[Model]) -> None:
    """Raise ServerError (one line, what to do) unless the database's tables are this bbtui's layout."""
    if not db.table_exists(version._meta.table_name):
        raise ServerError(
            f"{url} has bbtui tables without a schema version: it was not made by this bbtui; "
            f"point --db at a new database ({SERVER_DOCS})"
        )
    refused = version_refusal(url, [row.version for row in version.select(version.version)])
    if refused:
        raise ServerError(refused)


def version_refusal(where: object, versions: list[int], *, unversioned: tuple[int, ...] = ()) -> str | None:
    """The one line refusing a store whose schema version (its ``versions``) is not this bbtui's, or None.

    Both stores record it: a server in its ``SchemaVersion`` table, a file
    in SQLite's ``user_version`` (``store.check_file_version``), where
    ``unversioned`` (0) is a file made before versions were recorded,
    taken as this layout (it is upgraded in place).  ``bbcore copy`` asks
    the same of its source (``copy.Source``).
    """
    if versions == [SCHEMA_VERSION] or (len(versions) == 1 and versions[0] in unversioned):
        return None
    found = max(versions) if versions else None
    if found is not None and found > SCHEMA_VERSION:
        return (
            f"{where} holds bbtui schema version {found}, newer than this bbtui's {SCHEMA_VERSION}: "
            "upgrade bbtui (pip install -U bbtui)"
        )
    return (
        f"{where} holds bbtui schema version {found}, this bbtui reads version {SCHEMA_VERSION}: "
        f"open it with the bbtui that made it, or point --db at a new database ({SERVER_DOCS})"
    )


logging.getLogger("psycopg").addHandler(logging.NullHandler())
"""psycopg logs, as a warning, the error of ending a COPY that an error already ended ("error
ignored terminating <psycopg.Copy [BAD]>", the server stopped under a run's COPY); with no handler
of its own, Python printed it to stderr before the run's one line.  The error that ended the COPY is
raised, and said in that line (``error_line``); no logging is configured by bbcore."""


def copy_rows(connection, table: str, columns: tuple[str, ...], rows: Iterable[tuple]) -> None:
    """Write ``rows`` into ``table`` by COPY on ``connection`` (psycopg 3's ``cursor.copy``).

    The bulk write of an exploration: one COPY a chunk, in the chunk's
    transaction, instead of a statement per row.  Values go by COPY's own
    protocol, never into the SQL text (``table`` and ``columns`` are the
    models' names).
    """
    statement = f'COPY "{table}" ({", ".join(columns)}) FROM STDIN'
    with connection.cursor() as cursor, cursor.copy(statement) as copy:
        for row in rows:
            copy.write_row(row)


def analyze(db: DatabaseProxy, table: str) -> None:
    """Refresh the server's statistics of ``table`` (``ANALYZE``), for the queries about to read it.

    The planner estimates from statistics taken when autovacuum last ran,
    which waits for about 10% of a table to change: rows just written for
    a new configuration are absent from them (an estimate of 1 row), and a
    plan chosen on that can run for hours (issue 32, D1).  ANALYZE reads a
    sample (30,000 rows by default), not the table, so it costs about the
    same on any size.  A role that does not own the table gets a warning
    from the server, not an error: the queries then run on the statistics
    there are, and the ones that matter are planned so as not to depend on
    them (``sql.ambiguous_by_window``).
    """
    db.execute_sql(sql.analyze(table))


def cancel_statement(connection) -> None:
    """Ask the server to cancel the statement running on ``connection`` (from any thread).

    psycopg's cancel request goes on a connection of its own (libpq's
    ``PQcancel``); the statement then fails with ``QueryCanceled``
    (``is_cancelled``) and the server rolls it back.  On an idle connection
    it does nothing.  ``store.interrupted_when`` calls it at a pause.
    """
    cancel = getattr(connection, "cancel_safe", None) or connection.cancel
    try:
        cancel()
    except Exception:  # the connection is gone, and its statement with it
        pass


CANCELLED_STATE = "57014"
"""The SQLSTATE of a statement cancelled by a request (query_canceled)."""


def is_cancelled(error: BaseException) -> bool:
    """Whether ``error`` is a statement the server cancelled at our request (``cancelled_when``)."""
    return getattr(_cause(error), "sqlstate", None) == CANCELLED_STATE


def lock_writes(db: DatabaseProxy, config: Config) -> None:
    """Take ``config``'s write lock until the end of the current transaction.

    The workers of one run write their chunks one at a time (what SQLite's
    ``BEGIN IMMEDIATE`` does), so a chunk's overlap check and its write see
    the same rows; the key is not the exploration lock's, which the run
    holds on another connection.
    """
    db.execute_sql("SELECT pg_advisory_xact_lock(%s)", (lock_key(f"write {config.name}"),))


def shard_root(url: ServerURL) -> Path:
    """Where a compact exploration's shard files go by default for a server database: this machine's cache.

    A file's shards go beside it; a server has no folder of ours, so they
    go under ``$XDG_CACHE_HOME/bbtui/shards`` (``~/.cache`` when unset), in
    a folder named by the server and database (never the password).
    """
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    name = f"{url.host or 'local'}-{url.port or 5432}-{url.dbname}"
    return Path(cache) / "bbtui" / "shards" / re.sub(r"[^A-Za-z0-9._-]", "_", name)


# -- the exploration lock ---------------------------------------------------------


def lock_key(what: Config | str) -> int:
    """The 64-bit advisory lock key of a configuration (or of another bbtui name, e.g. "schema").

    The high half is bbtui's; the low half is the configuration's
    ``atoms * 16 + width`` (unique for every valid configuration) or a
    hash of the name.  Advisory locks are per database: the same
    configuration in two databases of one server does not collide.
    """
    if isinstance(what, Config):
        low = what.atoms * 16 + what.width
    else:
        low = 0x80000000 | int.from_bytes(hashlib.sha256(what.encode()).digest()[:3], "big")
    return (LOCK_SPACE << 32) | low


_held: set[tuple[str, int]] = set()
_held_guard = threading.Lock()
_holders: dict[tuple[str, int], tuple[int, object]] = {}
"""The lock sessions this process's runs hold, by (conninfo, key): (backend pid, backend start).
A worker process of a run gets its parent's (``held_locks``, ``adopt_locks``)."""

HOLDER = "SELECT pid, backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid()"
HOLDS = (
    "SELECT EXISTS (SELECT FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
    "WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 "
    "AND ((l.classid::bigint << 32) | l.objid::bigint) = %s AND l.pid = %s AND a.backend_start = %s)"
)
"""Whether the lock session (pid, backend start: a pid alone may be reused) still holds the key."""


@contextmanager
def advisory_lock(url: ServerURL, config: Config, busy: Exception) -> Iterator[None]:
    """Hold ``config``'s exploration lock on the server for the block, or raise ``busy``.

    The lock lives on a connection of its own, opened here and closed at the
    end: the server releases it when that connection ends, whether this
    process finished, was stopped, or was killed (``kill -9`` drops the
    connection).  Explorers on any machine share it.  Session-level
    advisory locks are re-entrant within one connection, and every call
    opens its own, so two threads of one process exclude each other too;
    the ``_held`` set refuses the second without a round trip.

    The lock's connection can also end alone (``pg_terminate_backend``, a
    network failure on that one connection) while the run writes on its
    others: the server then releases the lock, and a second explorer could
    start.  So every write transaction checks that this very session still
    holds the lock (``check_lock``), and once taken, the lock waits for
    the configuration's write transaction under way, if any (a run whose
    lock was lost may be committing one that checked in time): what the
    new run then reads to resume includes it, and the old run's next write
    transaction finds its lock gone and stops.
    """
    import psycopg

    key = (url.conninfo, lock_key(config))
    with _held_guard:
        if key in _held:
            raise busy
        _held.add(key)
    try:
        try:
            connection = psycopg.connect(
                url.conninfo,
                autocommit=True,
                connect_timeout=CONNECT_TIMEOUT_SECONDS,
                application_name="bbtui lock",
            )
        except psycopg.Error as error:
            raise ServerError(error_line(error, url)) from None
        try:
            try:
                (taken,) = connection.execute("SELECT pg_try_advisory_lock(%s)", (key[1],)).fetchone()
                if not taken:
                    raise busy
                writes = lock_key(f"write {config.name}")
                connection.execute("SELECT pg_advisory_lock(%s)", (writes,))  # the old run's last write
                connection.execute("SELECT pg_advisory_unlock(%s)", (writes,))
                _holders[key] = connection.execute(HOLDER).fetchone()
            except psycopg.Error as error:  # the lock's connection ended while taking it
                raise ServerError(error_line(error, url)) from None
            yield
        finally:
            _holders.pop(key, None)
            connection.close()  # releases the lock
    finally:
        with _held_guard:
            _held.discard(key)


def check_lock(db: DatabaseProxy, url: ServerURL, config: Config) -> None:
    """Raise ServerError (the lost connection's line) unless ``config``'s lock session still holds it.

    Called in each transaction that stores a run's rows, after its write
    lock (``lock_writes``): one query of a few hundred microseconds per
    transaction of thousands of rows (measured: bench/server.py), and no
    transaction commits once the lock is gone.  Checking the lock's
    connection from this process instead (``connection.closed``, a ping)
    would miss a lock the server released while that connection still
    looked open, and could not be done from the worker processes.  A
    process that holds no lock of ``config`` (``reset``, ``copy``: their
    own transactions) is not checked.
    """
    holder = _holders.get((url.conninfo, lock_key(config)))
    if holder is None:
        return
    (holds,) = db.execute_sql(HOLDS, (lock_key(config), *holder)).fetchone()
    if not holds:
        raise ServerError(
            f"the connection to {url} was lost: the exploration lock of {config.name} was released "
            "by the server (what was stored is kept; run it again to resume)"
        )


def held_locks() -> dict[tuple[str, int], tuple[int, object]]:
    """The lock sessions this process holds, for its worker processes (``adopt_locks``)."""
    return dict(_holders)


def adopt_locks(holders: dict[tuple[str, int], tuple[int, object]]) -> None:
    """In a run's worker process: check its parent's lock sessions (``held_locks``) on each write."""
    _holders.update(holders)
