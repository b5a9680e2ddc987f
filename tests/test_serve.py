"""``bbtui --serve`` in a real browser: Debian's chromium, driven by Playwright.

Each test starts the real server (``python -m bbtui.app --serve``) on
127.0.0.1, a free port and a database of its own, in a session of its own
(``start_new_session``) so that every process it starts, the browser tabs'
apps and their exploration workers, can be found in /proc
(``proctree.session_processes``).  Chromium opens the page and types into
the terminal it draws, as a visitor would; what a tab shows is read from
the terminal output its websocket receives (the page draws on a canvas).
The database is read with sqlite3, as a file.

No browser is ever downloaded: a missing chromium or Playwright skips
these tests on a workstation, and fails them in CI (``$CI`` set), where
``.ci/run`` installs chromium.
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from proctree import session_processes, stored_ranges, wait_until

from bbcore.config import Config
from bbcore.store import close_database, open_database
from bbtui.app import main
from bbtui.settings import resume_target

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SMALL = Config(3, 4)
"""560 molecules: explored in a few seconds once the engine is compiled."""
SECOND = Config(3, 5)
"""2,300 molecules: a second small configuration."""
LONG = Config(5, 7)
"""1,906,884 molecules: still exploring when the server is stopped."""
APP = "bbtui.app --db"
"""What a session's app process has on its command line (``bbtui.serve.session_command``)."""

pytestmark = [pytest.mark.slow, pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")]


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """Headless chromium (Debian's), with a fresh profile; skipped, or failed in CI, when missing."""
    missing = None
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing = "Playwright for Python is not installed (pip install -e '.[test]')"
    if missing is None and not CHROMIUM.exists():
        missing = f"{CHROMIUM} is missing (apt-get install chromium)"
    if missing is not None:
        if os.environ.get("CI"):
            pytest.fail(f"CI needs a browser for the server tests: {missing}")
        pytest.skip(missing)
    with tempfile.TemporaryDirectory(prefix="bbtui-chromium-") as profile, sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            profile,
            executable_path=str(CHROMIUM),
            args=CHROMIUM_ARGS,
            headless=True,
            viewport={"width": 1000, "height": 640},
        )
        try:
            yield context
        finally:
            context.close()


def free_port() -> int:
    """A port nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def listening(port: int) -> bool:
    """Whether the server accepts connections yet."""
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


class Served:
    """A running ``bbtui --serve``: its process, address and output."""

    def __init__(self, process: subprocess.Popen, url: str, output: Path) -> None:
        self.process = process
        self.url = url
        self.output = output

    def apps(self) -> list[int]:
        """The pids of the sessions' app processes running now."""
        return [pid for pid, command in session_processes(self.process.pid) if APP in command]

    def stop(self, signum: int = signal.SIGTERM) -> list[tuple[int, str]]:
        """Signal the server alone, wait for it; what of its session is still alive after.

        After SIGTERM the server has ended its sessions itself; after SIGKILL
        they end by themselves (``--served-by``), pausing their runs first.
        """
        self.process.send_signal(signum)
        assert self.process.wait(90) == (0 if signum == signal.SIGTERM else -signum), self.output.read_text()
        deadline = time.monotonic() + (0.5 if signum == signal.SIGTERM else 60)
        while time.monotonic() < deadline and session_processes(self.process.pid):
            time.sleep(0.1)
        time.sleep(0.5)  # an orphan would still be there; a reaped child is gone at once
        return session_processes(self.process.pid)


@contextmanager
def serving(
    db: Path, *options: str, env: dict[str, str] | None = None, cwd: Path = ROOT, python: tuple[str, ...] = ()
) -> Iterator[Served]:
    """``bbtui --serve --db DB OPTIONS`` on a free port of 127.0.0.1; everything of it ended after.

    ``env`` is added to the environment, ``cwd`` is the server's working
    folder, ``python`` options go to its interpreter (``-P``)."""
    port = free_port()
    output = db.with_suffix(".log")
    command = [sys.executable, *python, "-m", "bbtui.app", "--serve", "--db", str(db), "--port", str(port)]
    with output.open("w") as log:
        process = subprocess.Popen(
            [*command, *options],
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
            cwd=cwd,
            start_new_session=True,
        )
    try:
        wait_until(lambda: listening(port) or process.poll() is not None, 60, "the server to listen")
        assert process.poll() is None, output.read_text()
        yield Served(process, f"http://127.0.0.1:{port}/", output)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(90)
            except subprocess.TimeoutExpired:
                pass
        for pid, _ in session_processes(process.pid):  # a failed test leaves nothing either
            os.kill(pid, signal.SIGKILL)
        if process.poll() is None:
            process.wait()


class Tab:
    """A browser tab on the server, and the terminal output its websocket received."""

    def __init__(self, browser, url: str) -> None:
        self.page = browser.new_page()
        self.received = bytearray()
        self.page.on("websocket", lambda websocket: websocket.on("framereceived", self.frame))
        self.page.goto(url)

    def frame(self, payload: bytes | str) -> None:
        """Keep the terminal output (binary frames); the text frames are pongs."""
        if isinstance(payload, bytes):
            self.received += payload

    def shows(self, text: str) -> bool:
        """Whether the terminal was sent ``text`` (the app's screen, or the server's message)."""
        return text in self.received.decode("utf-8", errors="replace")

    def wait(self, condition, timeout: float, what: str) -> None:
        """Poll ``condition()`` while the browser delivers its events, or fail."""
        deadline = time.monotonic() + timeout
        while not condition():
            assert time.monotonic() < deadline, f"timed out waiting for {what}"
            self.page.wait_for_timeout(100)

    def wait_for_app(self) -> None:
        """Until the app drew its Explore screen (the engine and the store loaded)."""
        self.wait(lambda: self.shows("No exploration running"), 90, "the app's Explore screen")

    def type(self, text: str, *keys: str) -> None:
        """Type ``text`` into the terminal, then press ``keys``, as a visitor would.

        The terminal's own input (xterm.js's textarea) takes the focus, not a
        click, which the app would take as a click on whatever lies under it.
        """
        self.page.focus("#terminal textarea")
        self.page.keyboard.type(text)
        for key in keys:
            self.page.keyboard.press(key)

    def close(self) -> None:
        self.page.close()


def complete(db: Path, config: Config) -> bool:
    """Whether the database holds ``config`` complete (read as a file, with sqlite3)."""
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as connection:
            row = connection.execute(
                "SELECT complete FROM Configurations WHERE config = ?", (config.name,)
            ).fetchone()
    except sqlite3.Error:
        return False
    return bool(row and row[0])


def molecules(db: Path, config: Config) -> int:
    """The molecule rows of ``config`` stored."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as connection:
        query = "SELECT COUNT(*) FROM Molecules WHERE config = ?"
        return connection.execute(query, (config.name,)).fetchone()[0]


def stop_while_exploring(served: Served, db: Path, signum: int) -> None:
    """Once a tab's run of LONG has stored ranges, stop the server with ``signum``: the run is
    paused and stored as ctrl+q pauses it, and nothing of the server is left running."""
    wait_until(lambda: stored_ranges(db, LONG) > 0, 120, f"{LONG}'s first ranges stored")
    running = session_processes(served.process.pid)
    assert served.stop(signum) == [], f"left running; before the stop: {running}"
    log = served.output.read_text()
    assert "did not quit" not in log and "killing" not in log, log
    assert not complete(db, LONG)
    assert 0 < stored_ranges(db, LONG)
    # The app quit through its pause (as ctrl+q): the run is marked to resume at the next launch.
    assert resume_target(db.resolve()) == LONG.name


def test_a_browser_tab_explores_a_configuration_and_the_stop_leaves_nothing(tmp_path, browser):
    db = tmp_path / "served.sqlite"
    with serving(db) as served:
        tab = Tab(browser, served.url)
        tab.wait_for_app()
        assert f"bbtui: serving {db} on {served.url.rstrip('/')}" in served.output.read_text()
        assert len(served.apps()) == 1
        tab.type(SMALL.name, "Enter")
        tab.wait(lambda: complete(db, SMALL), 120, f"{SMALL} complete in the database")
        assert molecules(db, SMALL) == SMALL.nb_mol
        assert served.stop() == []


def test_a_second_configuration_typed_after_a_run_is_explored_then_g_opens_its_groups(tmp_path, browser):
    """The keys typed right after a tab's run has ended reach the app where they belong: a
    configuration into the input (Enter had handed the focus to the table for the run, which
    took the characters and opened the first run's groups on Enter), g to the app."""
    db = tmp_path / "served.sqlite"
    with serving(db) as served:
        tab = Tab(browser, served.url)
        tab.wait_for_app()
        tab.type(SMALL.name, "Enter")
        tab.wait(lambda: tab.shows(f"{SMALL} is explored"), 120, "the run's end on the Explore screen")
        tab.type(SECOND.name, "Enter")
        tab.wait(lambda: complete(db, SECOND), 120, f"{SECOND}, typed after the run, complete")
        tab.type("g")
        tab.wait(lambda: tab.shows(f"Spectral groups of {SECOND}"), 30, "the Groups screen after g")
        assert served.stop() == []


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_stopping_the_server_pauses_and_stores_a_running_exploration(tmp_path, browser, signum):
    """SIGTERM: the server quits every session; SIGKILL: each session quits by itself (--served-by)."""
    db = tmp_path / "served.sqlite"
    with serving(db) as served:
        tab = Tab(browser, served.url)
        tab.wait_for_app()
        tab.type(LONG.name, "Enter")
        stop_while_exploring(served, db, signum)


def test_read_only_the_same_keys_leave_the_database_unchanged(tmp_path, browser):
    db = tmp_path / "served.sqlite"
    open_database(db)  # an empty bbtui database
    close_database()
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    with serving(db, "--read-only") as served:
        tab = Tab(browser, served.url)
        tab.wait_for_app()
        assert tab.shows("read-only session")  # the header says why, before the file's path
        tab.type(SMALL.name, "Enter")
        tab.wait(lambda: tab.shows("Read-only"), 30, "the refusal's notification")
        tab.type("", "s", "r")
        assert served.stop() == []
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
    assert not complete(db, SMALL)


def websocket_handshake(url: str, origin: str) -> int:
    """The HTTP status the server answers a websocket opened from a page of ``origin``."""
    address = urlsplit(url)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
    try:
        connection.request(
            "GET",
            "/ws",
            headers={
                "Upgrade": "websocket",
                "Connection": "Upgrade",
                "Sec-WebSocket-Key": base64.b64encode(os.urandom(16)).decode(),
                "Sec-WebSocket-Version": "13",
                "Origin": origin,
            },
        )
        return connection.getresponse().status
    finally:
        connection.close()


def test_one_more_tab_than_max_sessions_gets_a_message_not_an_app(tmp_path, browser):
    db = tmp_path / "served.sqlite"
    with serving(db, "--max-sessions", "1") as served:
        # A page of another site may not open a session in the visitor's browser.
        assert websocket_handshake(served.url, origin="http://elsewhere.example") == 403
        assert served.apps() == []
        first = Tab(browser, served.url)
        first.wait_for_app()
        second = Tab(browser, served.url)
        second.wait(lambda: second.shows("every session of this server is in use"), 30, "the message")
        assert not second.shows("No exploration running")
        [app] = served.apps()
        first.close()  # its app quits, and the session is free again
        wait_until(lambda: not Path(f"/proc/{app}").exists(), 30, "the first tab's app to end")
        second.page.reload()
        second.wait_for_app()
        assert len(served.apps()) == 1
        assert served.stop() == []


@pytest.mark.parametrize(
    "options, expected",
    [
        (["--serve", "--port", "70000"], "expected a port from 1 to 65535"),
        (["--serve", "--max-sessions", "0"], "expected a number >= 1"),
        (["--serve", "--read-only"], "no database at"),
        (["--port", "8000"], "--port goes with --serve"),
    ],
)
def test_serve_refuses_bad_options_in_one_line(tmp_path, capsys, options, expected):
    try:
        code = main(["--db", str(tmp_path / "none.sqlite"), *options])
    except SystemExit as exit:  # argparse's own refusals
        code = exit.code
    error = capsys.readouterr().err
    assert code == 2 and expected in error and "Traceback" not in error


def test_serving_beyond_the_loopback_warns_in_one_line(tmp_path):
    # 192.0.2.1 (TEST-NET-1) is no address of this machine: the warning, then the bind's refusal.
    result = subprocess.run(
        [sys.executable, "-m", "bbtui.app", "--serve", "--host", "192.0.2.1", "--db", str(tmp_path / "db")],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=60,
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    warning, refusal = result.stderr.splitlines()
    assert "anyone who can reach this port can use the app" in warning
    assert refusal.startswith("bbtui: cannot serve on 192.0.2.1:8000: ")
