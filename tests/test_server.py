"""The PostgreSQL store's foundation, against a real server (tests/postgres.py), never a mock.

- ``--db`` takes a server URL; the password is masked wherever the URL is
  shown, and comes from the URL, ``PGPASSWORD`` or ``~/.pgpass``;
- each server failure is one line, exit 2, no traceback, and the password
  appears nowhere in what the command printed;
- the first writer creates the tables and records the schema version; a
  database of another version is refused in one line saying what to do;
- a role that may only read browses, is read-only as an unwritable file
  is, and every write is refused in one line;
- the exploration lock is the server's advisory lock: a second explorer of
  the same configuration is refused, another configuration is not, and a
  killed holder's lock is released by the server.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import psycopg
import pytest
from pilot import wait_for
from postgres import PostgresServer, free_port
from proctree import session_processes, wait_until
from psycopg.conninfo import conninfo_to_dict
from stores import bbcore

from bbcore import server, store
from bbcore.config import Config
from bbcore.lock import exploration_lock
from bbcore.progress import ExploreError
from bbtui.app import BlackBoxApp

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the test server runs on Linux")

SMALL = Config(2, 4)
SECRET = "s3cr3t-Pa55word"
"""A distinctive password: it must never appear in what a command prints."""


def assert_one_line_error(result: subprocess.CompletedProcess, *, secret: str, words: str) -> str:
    """Exit 2, one line on stderr naming ``words``, no traceback, the password nowhere."""
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert words in lines[0], lines[0]
    assert secret not in result.stdout + result.stderr
    return lines[0]


@pytest.fixture
def writer(pg_server: PostgresServer):
    """A writer role (password SECRET) and a fresh database it owns: ``(URL, database name)``.

    What docs/server.md tells an administrator to do for a writer: the
    owner of the database may create tables in it.
    """
    pg_server.create_role("writer", SECRET)
    dbname = pg_server.create_database(owner="writer")
    yield pg_server.url(dbname, "writer", SECRET), dbname
    pg_server.drop_database(dbname)
    pg_server.drop_role("writer")


# -- the URL ---------------------------------------------------------------------


def test_a_url_names_a_server_and_a_path_names_a_file():
    url = store.location("postgresql://alice:hunter2@db.example:6543/results?sslmode=require")
    assert store.is_server(url)
    assert (url.user, url.dbname) == ("alice", "results")
    assert str(url) == "postgresql://alice:***@db.example:6543/results?sslmode=require"
    assert "hunter2" not in repr(url) and "hunter2" not in f"{url}"
    assert conninfo_to_dict(url.conninfo) == {  # what libpq reads, all of it, goes to libpq
        "user": "alice",
        "password": "hunter2",
        "host": "db.example",
        "port": "6543",
        "dbname": "results",
        "sslmode": "require",
    }
    short = store.location("postgres://bob@localhost/bb")
    assert str(short) == "postgres://bob@localhost/bb" and short.conninfo.startswith("postgresql://")
    in_query = store.location("postgresql://h/db?user=carol&password=pw1&sslmode=disable")
    assert "pw1" not in str(in_query) and in_query.user == "carol"
    assert in_query.scrub("password pw1 was refused") == "password *** was refused"
    for path in ("results.sqlite", "postgresql.sqlite", "dir/postgres://x"):
        assert isinstance(store.location(path), Path), path
    assert store.location("postgresql://a:b@h/d") == store.location("postgresql://a:b@h/d")


def test_each_configuration_has_its_own_lock_key():
    configs = [Config(atoms, width) for width in range(2, 14) for atoms in range(1, width * width)]
    keys = {server.lock_key(config) for config in configs}
    assert len(keys) == sum(width * width - 1 for width in range(2, 14))
    assert server.lock_key("schema") not in keys


# -- opening, the schema version ---------------------------------------------------


def test_the_first_writer_creates_the_tables_and_records_the_version(pg_url):
    where = store.open_database(pg_url)
    try:
        assert store.is_server(where) and not store.is_read_only()
        assert store.SchemaVersion.select(store.SchemaVersion.version).scalar() == server.SCHEMA_VERSION
        store.ensure_config(SMALL)
        # 64-bit integers: a molecule number past 2^31 is stored whole
        store.ExploredRange.create(config=SMALL.name, start=2**40, stop=2**40 + 5, nb_mol=3)
        assert store.stored_count(SMALL) == 3
    finally:
        store.close_database()
    store.open_database(pg_url)  # a second opening finds them, and the version
    try:
        assert [row.config for row in store.Configuration.select()] == [SMALL.name]
        assert store.SchemaVersion.select().count() == 1
    finally:
        store.close_database()


@pytest.mark.parametrize(
    ("version", "words"),
    [(server.SCHEMA_VERSION + 1, "upgrade bbtui"), (0, "open it with the bbtui that made it")],
)
def test_a_database_of_another_schema_version_is_refused_in_one_line(
    pg_server, writer, tmp_path, version, words
):
    url, dbname = writer
    store.open_database(url)
    store.close_database()
    with pg_server.admin(dbname) as connection:
        connection.execute('UPDATE "SchemaVersion" SET version = %s', (version,))
    result = bbcore(url, "status", home=tmp_path)
    line = assert_one_line_error(result, secret=SECRET, words=words)
    assert f"schema version {version}" in line


# -- failures: one line, exit 2, never the password ---------------------------------


def test_an_unreachable_server_is_one_line(tmp_path):
    url = f"postgresql://alice:{SECRET}@127.0.0.1:{free_port()}/nothing"
    result = bbcore(url, "status", home=tmp_path)
    assert_one_line_error(result, secret=SECRET, words="cannot reach the server")


def test_a_wrong_password_is_one_line(pg_server, pg_url, tmp_path):
    url = pg_url.replace(pg_server.password, SECRET)
    result = bbcore(url, "status", home=tmp_path)
    assert_one_line_error(result, secret=SECRET, words="authentication failed")


def test_a_missing_password_says_where_one_goes(pg_server, pg_url, tmp_path):
    result = bbcore(pg_url.replace(f":{pg_server.password}@", "@"), "status", home=tmp_path)
    assert_one_line_error(result, secret=pg_server.password, words="$PGPASSWORD or ~/.pgpass")


def test_a_missing_database_is_one_line(pg_server, writer, tmp_path):
    url = pg_server.url("no_such_database", "writer", SECRET)
    result = bbcore(url, "explore", SMALL.name, home=tmp_path)
    line = assert_one_line_error(result, secret=SECRET, words="does not exist")
    assert "no_such_database" in line


def test_a_role_without_rights_is_one_line(pg_server, pg_url, tmp_path):
    store.open_database(pg_url)  # the tables, made by a writer
    store.close_database()
    pg_server.create_role("nobody_here", SECRET)
    url = pg_url.replace(f"postgres:{pg_server.password}@", f"nobody_here:{SECRET}@")
    try:
        result = bbcore(url, "status", home=tmp_path)
        assert_one_line_error(result, secret=SECRET, words="lacks a permission")
    finally:
        pg_server.drop_role("nobody_here")


def test_the_password_may_come_from_pgpassword_or_pgpass(pg_server, pg_url, tmp_path):
    store.open_database(pg_url)  # the tables
    store.close_database()
    bare = pg_url.replace(f":{pg_server.password}@", "@")
    from_env = bbcore(bare, "status", home=tmp_path, env={"PGPASSWORD": pg_server.password})
    assert from_env.returncode == 0, from_env.stderr
    assert pg_server.password not in from_env.stdout + from_env.stderr
    pgpass = tmp_path / ".pgpass"
    pgpass.write_text(f"127.0.0.1:{pg_server.port}:*:postgres:{pg_server.password}\n")
    pgpass.chmod(0o600)
    from_file = bbcore(bare, "status", home=tmp_path)
    assert from_file.returncode == 0, from_file.stderr
    assert "database: postgresql://postgres@127.0.0.1" in from_file.stdout


def test_the_password_is_masked_in_status_and_errors(pg_server, writer, tmp_path):
    url, dbname = writer
    store.open_database(url)  # the writer makes the tables
    store.ensure_config(SMALL)
    store.close_database()
    status = bbcore(url, "status", home=tmp_path)
    assert status.returncode == 0, status.stderr
    assert f"writer:***@127.0.0.1:{pg_server.port}/{dbname}" in status.stdout
    failed = bbcore(url, "groups", SMALL.name, home=tmp_path)  # not explored: an error naming the store
    assert failed.returncode == 2
    assert SECRET not in status.stdout + status.stderr + failed.stdout + failed.stderr


# -- a role that may only read ---------------------------------------------------


@pytest.fixture
def reader_url(pg_server, pg_url):
    """A database whose tables a writer made (with A2_B4 started), and a read-only role's URL of it."""
    store.open_database(pg_url)
    store.ensure_config(SMALL)
    store.close_database()
    pg_server.create_role("reader", SECRET, read_only=True)
    yield pg_url.replace(f"postgres:{pg_server.password}@", f"reader:{SECRET}@")
    pg_server.drop_role("reader")


def test_a_read_only_role_browses_and_is_refused_every_write(reader_url, tmp_path):
    status = bbcore(reader_url, "status", home=tmp_path)
    assert status.returncode == 0, status.stderr
    assert SMALL.name in status.stdout and SECRET not in status.stdout
    for write in (("explore", SMALL.name), ("reset", SMALL.name, "--yes"), ("explore", "A3_B4")):
        result = bbcore(reader_url, *write, home=tmp_path)
        assert_one_line_error(result, secret=SECRET, words="role reader may only read")


def test_a_read_only_role_reads_a_stored_book_and_is_refused_computing_one(pg_url, reader_url, tmp_path):
    """docs/server.md: computing a book is a write, refused in one line, exit 2 (not computed, then lost)."""
    written = bbcore(pg_url, "strategy", "A2_B3", home=tmp_path)  # a writer stores A2_B3's book
    assert written.returncode == 0, written.stderr
    stored = bbcore(reader_url, "strategy", "A2_B3", home=tmp_path)
    assert stored.returncode == 0 and stored.stderr == "", stored.stderr
    assert "read from the database" in stored.stdout
    for args in (("A3_B5",), ("A2_B3", "--recompute"), ("A2_B3", "--by", "information")):
        refused = bbcore(reader_url, "strategy", *args, home=tmp_path)
        assert_one_line_error(refused, secret=SECRET, words="role reader may only read")
        assert refused.stdout == ""


def test_a_read_only_role_opens_read_only_and_cannot_write_even_by_hand(reader_url):
    store.open_database(reader_url)
    try:
        assert store.is_read_only()
        with pytest.raises(store.DATABASE_ERRORS) as refused:
            store.ensure_config(Config(3, 4))
        assert "may only read" in store.error_line(refused.value, store.opened.path)
    finally:
        store.close_database()
    with pytest.raises(store.ReadOnlyError, match="may only read"):
        store.open_database(reader_url, write=True)


def test_a_writer_opened_read_only_writes_nothing(pg_url):
    store.open_database(pg_url)
    store.close_database()
    store.open_database(pg_url, write=False)
    try:
        assert store.is_read_only()
        with pytest.raises(store.DATABASE_ERRORS):
            store.ensure_config(SMALL)
    finally:
        store.close_database()


async def test_the_tui_header_says_the_role_is_read_only(reader_url):
    app = BlackBoxApp(reader_url)
    async with app.run_test(size=(120, 40)) as pilot:
        assert app.read_only
        assert "read-only role" in app.sub_title
        assert SECRET not in app.sub_title and "reader:***@" in app.sub_title
        app.start_exploration(Config(2, 3))
        assert app.exploring is None
        await wait_for(pilot, lambda: any("may only read" in note.message for note in app._notifications))
    store.close_database()


# -- the exploration lock --------------------------------------------------------------


def test_a_second_explorer_of_the_same_configuration_is_refused(pg_url, tmp_path):
    store.open_database(pg_url)
    store.ensure_config(SMALL)
    store.close_database()
    with exploration_lock(store.location(pg_url), SMALL):
        # another process, as from another machine: refused in one line
        result = bbcore(pg_url, "reset", SMALL.name, "--yes", home=tmp_path)
        assert_one_line_error(result, secret=store.location(pg_url).conninfo, words="being explored")
        # another thread of this process too
        with pytest.raises(ExploreError, match="being explored"):
            with exploration_lock(store.location(pg_url), SMALL):
                pass
        # another configuration is free
        with exploration_lock(store.location(pg_url), Config(3, 4)):
            pass
    with exploration_lock(store.location(pg_url), SMALL):  # released at the end of the block
        pass


def test_a_killed_explorer_releases_its_lock(pg_url, tmp_path):
    holder = textwrap.dedent(
        f"""
        import sys, time
        from bbcore.config import Config
        from bbcore.lock import exploration_lock
        from bbcore.store import location
        with exploration_lock(location({pg_url!r}), Config(2, 4)):
            print("held", flush=True)
            time.sleep(600)
        """
    )
    process = subprocess.Popen([sys.executable, "-c", holder], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout.readline().strip() == "held"
        with pytest.raises(ExploreError, match="being explored"):
            with exploration_lock(store.location(pg_url), SMALL):
                pass
        process.send_signal(signal.SIGKILL)
        process.wait(30)
        # the server ends the dead connection's session, and its lock with it
        wait_until(lambda: _lock_is_free(pg_url), 30, "the killed holder's lock to be released")
    finally:
        process.kill()
        process.wait()


def _lock_is_free(url: str) -> bool:
    try:
        with exploration_lock(store.location(url), SMALL):
            return True
    except ExploreError:
        return False


# -- the test server itself ------------------------------------------------------------


def test_the_test_server_dies_with_a_killed_parent(pg_server):
    """A session killed with SIGKILL leaves no server behind (what ``pg_server`` relies on)."""
    starter = textwrap.dedent(
        f"""
        import sys, time
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from postgres import PostgresServer, binaries
        server = PostgresServer(binaries())
        server.start()
        print(server.process.pid, server.folder, flush=True)
        time.sleep(600)
        """
    )
    process = subprocess.Popen(
        [sys.executable, "-c", starter], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        postmaster, folder = process.stdout.readline().split()
        assert any(pid == int(postmaster) for pid, _ in session_processes(process.pid))
        psycopg.connect(host=folder, port=_port_of(folder), user="postgres", dbname="postgres").close()
        process.send_signal(signal.SIGKILL)
        process.wait(30)
        wait_until(lambda: not session_processes(process.pid), 30, "the orphaned server to end")
    finally:
        process.kill()
        process.wait()
        for pid, _ in session_processes(process.pid):
            os.kill(pid, signal.SIGKILL)
        import shutil

        shutil.rmtree(folder, ignore_errors=True)


COPY_CUT = textwrap.dedent(
    """
    import sys
    import psycopg
    from bbcore import server

    url = sys.argv[1]
    connection = psycopg.connect(url)
    connection.execute("CREATE TEMP TABLE cut (a bigint, b text)")
    backend = connection.info.backend_pid

    def rows():
        for i in range(200_000):
            if i == 1000:  # the server ends the session under the COPY (stopped, restarted, ...)
                with psycopg.connect(url, autocommit=True) as admin:
                    admin.execute("SELECT pg_terminate_backend(%s)", (backend,))
            yield (i, "x" * 50)

    try:
        server.copy_rows(connection, "cut", ("a", "b"), rows())
    except psycopg.OperationalError:
        print("raised")
    """
)


def test_a_copy_cut_by_the_server_raises_without_psycopgs_warning(pg_url):
    """Issue 32, D11: psycopg logged "error ignored terminating <psycopg.Copy [BAD]>" to stderr
    (no logging handler of its own) before the run's one line; the error itself is raised."""
    run = subprocess.run(
        [sys.executable, "-c", COPY_CUT, pg_url], capture_output=True, text=True, timeout=120
    )
    assert run.stdout.strip() == "raised", run.stderr
    assert run.stderr == ""


def _port_of(folder: str) -> int:
    """The port of the server whose socket is in ``folder`` (its name is ``.s.PGSQL.<port>``)."""
    (socket,) = Path(folder).glob(".s.PGSQL.*[0-9]")
    return int(socket.name.rsplit(".", 1)[1])
