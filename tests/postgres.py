"""A throwaway PostgreSQL server for the tests, from the machine's own binaries.

The server tests run against a real server, never a mock: ``PostgresServer``
runs ``initdb`` in a temporary folder and then ``postgres`` itself (not
``pg_ctl``, which would detach it from us), listening on 127.0.0.1 at a free
port and on a Unix socket inside that folder only.  ``initdb`` refuses to
run as root, so when the suite runs as root both run as ``nobody``.

The server ends with the test session, even when pytest is killed with
SIGKILL: the postmaster is started with ``PR_SET_PDEATHSIG`` (the idea of
``bbcore.lifeline``), set after the drop to ``nobody`` because changing
credentials clears it; its backends end when the postmaster is gone
(PostgreSQL's own postmaster-death check).  At the end of a session it is
stopped with a fast shutdown and its folder removed.

Host connections (TCP) need a password (SCRAM); the socket trusts, and is
how the fixtures administer the server (roles, databases).  Under
pytest-xdist each worker has its own server.  Imported by conftest.py only.
"""

from __future__ import annotations

import ctypes
import glob
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

NOBODY = 65534
PR_SET_PDEATHSIG = 1
SUPERUSER = "postgres"
START_SECONDS = 60
STOP_SECONDS = 30
DEBIAN_BINARIES = "/usr/lib/postgresql/*/bin"


def binaries() -> Path | None:
    """The folder holding ``initdb`` and ``postgres``: ``pg_config --bindir``, PATH, or Debian's."""
    candidates: list[str] = []
    pg_config = shutil.which("pg_config")
    if pg_config:
        try:
            found = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, timeout=10)
            candidates.append(found.stdout.strip())
        except (OSError, subprocess.SubprocessError):
            pass
    for name in ("initdb", "postgres"):
        where = shutil.which(name)
        if where:
            candidates.append(str(Path(where).resolve().parent))
    # The newest Debian version first (a lexical sort would put 9 after 15).
    debian = sorted(glob.glob(DEBIAN_BINARIES), key=lambda p: int(Path(p).parent.name or 0), reverse=True)
    candidates.extend(debian)
    for folder in candidates:
        if folder and all(os.access(Path(folder) / name, os.X_OK) for name in ("initdb", "postgres")):
            return Path(folder)
    return None


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _as_server_user(parent: int):
    """The ``preexec_fn`` of initdb and postgres: become nobody (when root), then die with ``parent``."""

    def preexec() -> None:
        if os.geteuid() == 0:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
        # After the drop: a change of credentials clears the parent-death signal.
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(70)

    return preexec


class PostgresServer:
    """One running throwaway server: its port, socket folder, superuser password; admin helpers."""

    TEST_SETTINGS = {
        "fsync": "off",
        "synchronous_commit": "off",
        "full_page_writes": "off",
        "max_connections": "60",
        "shared_buffers": "32MB",
    }
    """Fast and not durable: the tests' databases live for a test (bench/server.py turns fsync on)."""

    def __init__(self, bindir: Path, settings: dict[str, str] | None = None) -> None:
        self.bindir = bindir
        self.settings = {**self.TEST_SETTINGS, **(settings or {})}
        self.folder = Path(tempfile.mkdtemp(prefix="bbtui-pg-"))
        self.data = self.folder / "data"
        self.password = secrets.token_urlsafe(16)
        self.port = 0
        self.process: subprocess.Popen | None = None
        self.log = self.folder / "server.log"
        self._databases = 0

    # -- start and stop ------------------------------------------------------

    def start(self) -> None:
        """initdb, then the server on a free port; wait until it accepts connections."""
        if os.geteuid() == 0:
            os.chown(self.folder, NOBODY, NOBODY)
        pwfile = self.folder / "pwfile"
        pwfile.write_text(self.password + "\n")
        if os.geteuid() == 0:
            os.chown(pwfile, NOBODY, NOBODY)
        initdb = subprocess.run(
            [
                str(self.bindir / "initdb"),
                "-D",
                str(self.data),
                "-U",
                SUPERUSER,
                f"--pwfile={pwfile}",
                "--auth-local=trust",
                "--auth-host=scram-sha-256",
                "--encoding=UTF8",
                "--no-instructions",
                "--no-sync",
            ],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=self.folder,
            preexec_fn=_as_server_user(os.getpid()),
        )
        pwfile.unlink()
        if initdb.returncode != 0:
            raise RuntimeError(f"initdb failed: {initdb.stderr.strip() or initdb.stdout.strip()}")
        for _ in range(5):  # another process may take the free port first
            self.port = free_port()
            if self._run():
                return
        raise RuntimeError(f"the test server did not start: {self.log.read_text()[-2000:]}")

    def _run(self) -> bool:
        """Start postgres on ``self.port``; True once it answers, False if it exited."""
        log = open(self.log, "ab")
        self.process = subprocess.Popen(
            [
                str(self.bindir / "postgres"),
                "-D",
                str(self.data),
                "-p",
                str(self.port),
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                f"unix_socket_directories={self.folder}",
                *(word for name, value in self.settings.items() for word in ("-c", f"{name}={value}")),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=self.folder,
            preexec_fn=_as_server_user(os.getpid()),
        )
        log.close()
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            try:
                self.admin("postgres").close()
                return True
            except ImportError:  # no psycopg: say so, not "did not answer" a minute later
                self.stop()
                raise
            except Exception:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"the test server did not answer in {START_SECONDS} s")

    def stop(self) -> None:
        """Fast shutdown (SIGINT), SIGKILL if it lingers; remove the folder."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(STOP_SECONDS)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)

    # -- administration --------------------------------------------------------

    def admin(self, dbname: str = "postgres"):
        """A superuser connection through the socket (autocommit)."""
        import psycopg

        return psycopg.connect(
            host=str(self.folder), port=self.port, user=SUPERUSER, dbname=dbname, autocommit=True
        )

    def url(self, dbname: str, user: str = SUPERUSER, password: str | None = None) -> str:
        """The TCP URL of ``dbname`` for ``user`` (with the superuser's password by default)."""
        secret = self.password if password is None and user == SUPERUSER else password
        credentials = f"{user}:{secret}" if secret else user
        return f"postgresql://{credentials}@127.0.0.1:{self.port}/{dbname}"

    def create_database(self, owner: str = SUPERUSER) -> str:
        """A new empty database; its name."""
        from psycopg import sql

        self._databases += 1
        name = f"t{os.getpid()}_{self._databases}"
        with self.admin() as connection:
            connection.execute(
                sql.SQL("CREATE DATABASE {} OWNER {}").format(sql.Identifier(name), sql.Identifier(owner))
            )
        return name

    def drop_database(self, name: str) -> None:
        """Drop a database, closing whatever is still connected to it."""
        from psycopg import sql

        with self.admin() as connection:
            connection.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )

    def create_role(self, name: str, password: str, *, read_only: bool = False) -> None:
        """A login role: a reader (``pg_read_all_data``, read-only transactions), or one without rights.

        ``read_only`` gives the role what docs/server.md tells an
        administrator to give a reader; without it and ``grant_all=False``
        the role may log in and nothing more.
        """
        from psycopg import sql

        role = sql.Identifier(name)
        with self.admin() as connection:
            connection.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(role))
            connection.execute(
                sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(role, sql.Literal(password))
            )
            if read_only:
                connection.execute(sql.SQL("GRANT pg_read_all_data TO {}").format(role))
                connection.execute(
                    sql.SQL("ALTER ROLE {} SET default_transaction_read_only = on").format(role)
                )

    def drop_role(self, name: str) -> None:
        """Drop a role once the databases it may own are gone."""
        from psycopg import sql

        with self.admin() as connection:
            connection.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(name)))


def unavailable() -> str | None:
    """Why no test server can run here (no binaries, no psycopg, not Linux), or None."""
    if not sys.platform.startswith("linux"):
        return "the test server runs on Linux only"
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is missing (pip install -e '.[test]')"
    if binaries() is None:
        return "PostgreSQL's initdb and postgres are missing (apt-get install postgresql)"
    return None
