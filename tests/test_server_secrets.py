"""A server's password is never shown, whatever characters it holds (issue 32, D2).

bbtui reads a connection string as libpq does (``server.parse``: psycopg's
``conninfo_to_dict``) and shows only what it parsed, the password masked.
Each password of ``PASSWORDS`` holds a character that a URL splitter reads
differently from libpq (``?``, ``#``, ``/``, ``@``, ``:``, ``%``, a space,
quotes...); each is written in every form a user may give it
(``FORMS``: a URL percent-encoded, the same URL raw, libpq's key=value
form) and run through every place that prints a database: the errors
(unreachable, unknown host, wrong password, a malformed string, in
``--db`` and in ``$BBTUI_DB``), ``status``, an exploration's progress and
final line (both stores: the compact one names its shard folder after the
server), the TUI's header and screen, and the ``--serve`` banner.  The
connections are to a real server (tests/postgres.py), as a role whose
password is the one under test.  The assertion is always the same: the
password's text is nowhere in what was printed or drawn.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import signal
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import quote

import pytest
from postgres import free_port
from proctree import wait_until
from psycopg.conninfo import conninfo_to_dict
from textual.app import App
from textual.geometry import Region

from bbcore import server, store
from bbcore.cli import main
from bbcore.config import Config
from bbtui.app import BlackBoxApp

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the test server runs on Linux")

PASSWORDS = {
    "question": "Qm?ark5Secret",
    "hash": "Ha#sh5Secret",
    "slash": "Sl/ash5Secret",
    "at": "Pa@ssWord9Secret",
    "colon": "Co:lon5Secret",
    "percent": "Pe%zz5Secret",
    "percent-hex": "Pe%41cent5Secret",
    "space": "Sp ace5Secret",
    "quote": "Qu'ote5Secret",
    "double-quote": 'Dq"uote5Secret',
    "backslash": "Ba\\ck5Secret",
    "ampersand-equals": "Am&p=5Secret",
    "everything": "Ev?#/@:%' \"\\&=5Secret",
}
"""A password per character that URL splitters and libpq read differently."""
FORMS = ("url", "raw-url", "key=value")
SMALL = Config(2, 3)
COMPACT = Config(2, 4)


def connection_string(
    form: str, password: str, *, user: str, port: int, dbname: str, host="127.0.0.1"
) -> str:
    """``password`` for ``user`` in one of ``FORMS``."""
    if form == "url":
        return f"postgresql://{user}:{quote(password, safe='')}@{host}:{port}/{dbname}"
    if form == "raw-url":
        return f"postgresql://{user}:{password}@{host}:{port}/{dbname}"
    escaped = password.replace("\\", "\\\\").replace("'", "\\'")
    return f"host={host} port={port} dbname={dbname} user={user} password='{escaped}'"


def libpq_reads(text: str, password: str) -> str:
    """What libpq itself reads in ``text``: "as meant", "another password" or "refused".

    Raw in a URL, some characters are taken as they are (``?``, ``#``,
    ``:``), ``%41`` is decoded (another password: the server refuses it),
    others end the user's part early (``@``, ``/``: the host would be the
    password's tail) or are refused by libpq (``%`` before a non-hex
    digit, a space): bbtui refuses those in one line.
    """
    try:
        params = conninfo_to_dict(text)
    except Exception:
        return "refused"
    if params.get("host") != "127.0.0.1":
        return "refused"
    return "as meant" if params.get("password") == password else "another password"


def assert_hidden(password: str, *outputs: str) -> None:
    """The password (and its percent-encoded form) appears in none of ``outputs``."""
    shown = "\n".join(outputs)
    assert password not in shown, shown
    assert quote(password, safe="") not in shown, shown


def assert_one_line(result: subprocess.CompletedProcess, password: str, words: str) -> str:
    """Exit 2, one line on stderr naming ``words``, no traceback, the password nowhere."""
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert words in lines[0], lines[0]
    assert_hidden(password, result.stdout, result.stderr)
    return lines[0]


def run(text: str, *args: str) -> subprocess.CompletedProcess:
    """``bbcore --db TEXT ARGS`` in this process (the real command line, argparse's exits included)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(["--db", text, *args])
        except SystemExit as exit:
            status = exit.code
    return subprocess.CompletedProcess(args, status, out.getvalue(), err.getvalue())


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch) -> Path:
    """A clean HOME (no ~/.pgpass of the machine's), its cache holding a compact run's shards."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("BBTUI_DB", raising=False)
    return tmp_path


def cases() -> list:
    return [
        pytest.param(form, password, id=f"{name}-{form}")
        for name, password in PASSWORDS.items()
        for form in FORMS
    ]


@pytest.fixture
def role(pg_server):
    """A login role of the password under test, owning a fresh database: (user, database)."""
    made: list[tuple[str, str]] = []

    def make(password: str) -> tuple[str, str]:
        user = f"secret_{len(made)}"
        pg_server.create_role(user, password)
        dbname = pg_server.create_database(owner=user)
        made.append((user, dbname))
        return user, dbname

    yield make
    for user, dbname in made:
        pg_server.drop_database(dbname)
        pg_server.drop_role(user)


# -- what bbtui parses and shows, no server needed ------------------------------------


@pytest.mark.parametrize(("form", "password"), cases())
def test_the_string_is_read_as_libpq_reads_it_and_shown_masked(form, password):
    text = connection_string(form, password, user="alice", port=5433, dbname="blackbox")
    if libpq_reads(text, password) == "refused":
        with pytest.raises(store.StoreError) as refused:
            store.location(text)
        assert_hidden(password, str(refused.value))
        assert "not a valid PostgreSQL connection string" in str(refused.value)
        return
    url = store.location(text)
    assert url.params["password"] == conninfo_to_dict(text)["password"]
    assert conninfo_to_dict(url.conninfo) == conninfo_to_dict(text)  # libpq gets it all, unchanged
    assert str(url) == "postgresql://alice:***@127.0.0.1:5433/blackbox"
    assert_hidden(password, str(url), repr(url), f"{url!s} {url!r}")
    assert url.scrub(f"libpq said {password}") == "libpq said ***"


@pytest.mark.parametrize(("form", "password"), cases())
def test_an_unreachable_server_is_one_line_without_the_password(form, password):
    text = connection_string(form, password, user="alice", port=free_port(), dbname="nothing")
    result = run(text, "status")
    words = (
        "not a valid PostgreSQL" if libpq_reads(text, password) == "refused" else "cannot reach the server"
    )
    assert_one_line(result, password, words)


@pytest.mark.parametrize("password", PASSWORDS.values(), ids=PASSWORDS.keys())
def test_an_unknown_host_is_one_line_without_the_password(password):
    for form in ("url", "key=value"):
        text = connection_string(
            form, password, user="alice", port=5432, dbname="d", host="no-such-host.invalid"
        )
        line = assert_one_line(run(text, "status"), password, "cannot reach the server")
        assert "no-such-host.invalid" in line


@pytest.mark.parametrize("password", PASSWORDS.values(), ids=PASSWORDS.keys())
def test_a_malformed_url_is_one_line(password):
    """An unclosed IPv6 bracket: argparse's line names --db, not the text."""
    text = f"postgresql://alice:{quote(password, safe='')}@[::1/blackbox"
    line = assert_one_line(run(text, "status"), password, "not a valid PostgreSQL")
    assert "argument --db" in line
    assert 'looking for matching "]" in IPv6 host address in URI: "..."' in line  # libpq's words only


def test_a_malformed_url_in_bbtui_db_is_one_line_for_every_command_and_help_says_so(home):
    """``bbcore status``, ``bbtui``, ``bbtui --serve``: one line; both ``--help``: the help, and why."""
    password = PASSWORDS["everything"]
    text = f"postgresql://alice:{quote(password, safe='')}@[::1/blackbox"
    env = {**os.environ, "BBTUI_DB": text}
    for command in (["-m", "bbcore", "status"], ["-m", "bbtui.app"], ["-m", "bbtui.app", "--serve"]):
        result = subprocess.run(
            [sys.executable, *command], capture_output=True, text=True, env=env, timeout=120
        )
        line = assert_one_line(result, password, "not a valid PostgreSQL")
        assert "$BBTUI_DB" in line
    for command in (["-m", "bbcore", "--help"], ["-m", "bbtui.app", "--help"]):
        result = subprocess.run(
            [sys.executable, *command], capture_output=True, text=True, env=env, timeout=120
        )
        assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
        assert "$BBTUI_DB: not a valid PostgreSQL" in " ".join(result.stdout.split())
        assert_hidden(password, result.stdout, result.stderr)


# -- against a real server, as a role of that password -------------------------------------


ANSWERS = {"as meant": "", "another password": "authentication failed", "refused": "not a valid PostgreSQL"}


@pytest.mark.parametrize(("form", "password"), cases())
def test_a_role_with_the_password_explores_and_nothing_shows_it(form, password, pg_server, role, tmp_path):
    user, dbname = role(password)
    text = connection_string(form, password, user=user, port=pg_server.port, dbname=dbname)
    wrong = "Wr0ng" + password[::-1]  # another password of the same characters: refused, never shown
    wrong_text = connection_string(form, wrong, user=user, port=pg_server.port, dbname=dbname)
    refused = run(wrong_text, "status")
    assert_one_line(refused, wrong, ANSWERS[libpq_reads(wrong_text, wrong)] or "authentication failed")
    assert_hidden(password, refused.stderr)
    if libpq_reads(text, password) != "as meant":
        result = run(text, "explore", SMALL.name)
        assert_one_line(result, password, ANSWERS[libpq_reads(text, password)])
        return
    masked = f"postgresql://{user}:***@127.0.0.1:{pg_server.port}/{dbname}"
    full = run(text, "explore", SMALL.name, "--store", "full", "--workers", "1")
    assert full.returncode == 0, full.stderr
    assert f"{SMALL.name} complete" in full.stdout and masked in full.stdout
    compact = run(text, "explore", COMPACT.name, "--store", "compact", "--workers", "1")  # shard_root
    assert compact.returncode == 0, compact.stderr
    assert "%" in compact.stderr  # its progress lines
    status = run(text, "status")
    assert status.returncode == 0 and f"database: {masked}" in status.stdout, status.stderr
    shards = server.shard_root(store.location(text))  # where the compact run kept its shards
    assert shards == tmp_path / "cache" / "bbtui" / "shards" / f"127.0.0.1-{pg_server.port}-{dbname}"
    assert_hidden(
        password, full.stdout, full.stderr, compact.stdout, compact.stderr, status.stdout, status.stderr
    )


@pytest.mark.parametrize("form", ["url", "key=value"])
@pytest.mark.parametrize(
    "password", [PASSWORDS["question"], PASSWORDS["everything"]], ids=["question", "everything"]
)
def test_the_ssl_keys_password_is_masked_as_the_password_is(form, password, pg_server, role):
    """``sslpassword`` (the SSL client key's) is a password too: shown as ``***``, in every
    line (libpq ignores it here, with no client key: the role connects)."""
    user, dbname = role(password)
    key_password = "Ssl" + password[::-1]
    text = connection_string(form, password, user=user, port=pg_server.port, dbname=dbname)
    if form == "url":
        text += f"?sslpassword={quote(key_password, safe='')}"
    else:
        escaped = key_password.replace("\\", "\\\\").replace("'", "\\'")
        text += f" sslpassword='{escaped}'"
    assert conninfo_to_dict(text)["sslpassword"] == key_password
    url = store.location(text)
    assert str(url) == f"postgresql://{user}:***@127.0.0.1:{pg_server.port}/{dbname}?sslpassword=***"
    store.open_database(text)
    store.close_database()  # the tables, made by the role
    status = run(text, "status")
    assert status.returncode == 0 and f"database: {url}" in status.stdout, status.stderr
    unreachable = text.replace(str(pg_server.port), str(free_port()))
    assert_one_line(run(unreachable, "status"), password, "cannot reach the server")
    for shown in (status, run(unreachable, "status")):
        assert_hidden(key_password, shown.stdout, shown.stderr)
        assert_hidden(password, shown.stdout, shown.stderr)


def screen_text(app: App) -> str:
    """Everything the screen draws, header included."""
    lines = []
    for widget in app.screen.query("*"):
        if widget.display and widget.size.area:
            lines += [line.text for line in widget.render_lines(Region(0, 0, *widget.size))]
    return "\n".join(lines)


@pytest.mark.parametrize("password", PASSWORDS.values(), ids=PASSWORDS.keys())
async def test_the_tui_header_and_a_served_sessions_header_never_show_it(
    password, pg_server, role, monkeypatch
):
    user, dbname = role(password)
    masked = f"{user}:***@127.0.0.1:{pg_server.port}/{dbname}"
    texts = [
        connection_string(form, password, user=user, port=pg_server.port, dbname=dbname) for form in FORMS
    ]
    texts = [text for text in texts if libpq_reads(text, password) == "as meant"]
    served = store.location(texts[0]).conninfo  # what a served session's app gets in $BBTUI_DB
    for text in [*texts, None]:
        if text is None:
            monkeypatch.setenv("BBTUI_DB", served)
        app = BlackBoxApp(text)
        async with app.run_test(size=(140, 40)) as pilot:
            await pilot.pause()
            assert masked in app.sub_title
            assert_hidden(password, app.title, app.sub_title, screen_text(app))
        store.close_database()


@contextlib.contextmanager
def serving(text: str, home: Path):
    """``bbtui --serve --read-only`` with ``$BBTUI_DB`` = ``text``, once it serves: (its address, its
    output's file); stopped at the end."""
    output = home / "serve.log"
    port = free_port()
    with output.open("w") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "bbtui.app", "--serve", "--read-only", "--port", str(port)],
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "BBTUI_DB": text, "HOME": str(home)},
            start_new_session=True,
        )
    try:
        wait_until(lambda: "serving" in output.read_text() or process.poll() is not None, 60, "the banner")
        yield f"http://127.0.0.1:{port}/", output
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(90)


def banner(text: str, home: Path) -> str:
    """What ``bbtui --serve --read-only`` prints with ``$BBTUI_DB`` = ``text``, once it serves."""
    with serving(text, home) as (_, output):
        pass
    return output.read_text()


@pytest.mark.parametrize(
    "password", [PASSWORDS["question"], PASSWORDS["everything"]], ids=["question", "everything"]
)
def test_the_serve_banner_never_shows_it(password, pg_server, role, tmp_path):
    """The banner, in both forms (a served app takes 15 s to start here: the issue's password, and all)."""
    user, dbname = role(password)
    store.open_database(connection_string("url", password, user=user, port=pg_server.port, dbname=dbname))
    store.close_database()  # the tables, made by the role
    for form in ("url", "key=value"):
        shown = banner(
            connection_string(form, password, user=user, port=pg_server.port, dbname=dbname), tmp_path
        )
        assert f"bbtui: serving postgresql://{user}:***@127.0.0.1:{pg_server.port}/{dbname}" in shown, shown
        assert_hidden(password, shown)


def test_a_browser_visitors_terminal_never_shows_it(pg_server, role, tmp_path):
    """What a visitor's tab receives (its app's terminal, header included, read by a websocket
    client as the page reads it) names the server masked, the password nowhere."""
    import aiohttp
    from test_serve_hostile import APP_READY, open_tab

    password = PASSWORDS["everything"]
    user, dbname = role(password)
    text = connection_string("url", password, user=user, port=pg_server.port, dbname=dbname)
    store.open_database(text)
    store.close_database()  # the tables, made by the role
    masked = f"{user}:***@127.0.0.1:{pg_server.port}/{dbname}"

    async def visit(address: str) -> str:
        async with aiohttp.ClientSession() as session:
            tab = await open_tab(session, SimpleNamespace(url=address), "?width=200&height=40")
            await tab.until(lambda: APP_READY in tab.text() and masked in tab.text(), 90, "the app's header")
            await tab.websocket.close()
            return tab.received.decode("utf-8", errors="replace")

    with serving(text, tmp_path) as (address, output):
        received = asyncio.run(visit(address))
    assert_hidden(password, received, output.read_text())
