"""``bbtui --serve`` against hostile clients: what a page, a tab or a script can make it do.

Each test starts the real server (``test_serve.serving``: ``python -m
bbtui.app --serve`` on 127.0.0.1, a free port, a database of its own) and
talks to it as a browser would, but with the liberties a hostile client
takes: a Host header of its own (a page whose name was rebound to
127.0.0.1), a terminal size no screen has, messages that are not
textual-serve's protocol.  The client below is aiohttp's (textual-serve
depends on it), speaking textual-serve 1.1's websocket protocol: text
frames ``["stdin", keys]``, ``["resize", {"width": W, "height": H}]``,
``["ping", data]``; binary frames back are the app's terminal output.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import aiohttp
import pytest
from proctree import wait_until
from test_serve import ROOT, Served, serving

from bbcore.engine import kernels_cached
from bbcore.store import close_database, open_database
from bbtui.app import main
from bbtui.serve import REFUSED_HOSTS_LOGGED

pytestmark = [pytest.mark.slow, pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")]

APP_READY = "No exploration running"
"""What the Explore screen says once a session's app has loaded (``test_serve.Tab.wait_for_app``)."""
CURSOR = re.compile(rb"\x1b\[(\d+);(\d+)H")
"""A cursor move in the terminal output: the app draws each line at its row and column."""


class Client:
    """A websocket client of the served app: what it sends, and the terminal output it got."""

    def __init__(self, websocket: aiohttp.ClientWebSocketResponse) -> None:
        self.websocket = websocket
        self.received = bytearray()
        self.closed: int | None = None
        """The close code the server sent, once it closed the websocket."""
        self.reader = asyncio.create_task(self.read())
        """Reads all along, as a browser does: aiohttp answers the server's heartbeat pings only
        while it reads, and the server drops a tab that does not answer."""

    async def read(self) -> None:
        """Keep the terminal output (binary frames) until the websocket closes."""
        async for message in self.websocket:
            if message.type == aiohttp.WSMsgType.BINARY:
                self.received += message.data
        self.closed = self.websocket.close_code or 0

    def text(self, start: int = 0) -> str:
        """The terminal output from byte ``start`` on, without its escape sequences."""
        output = self.received[start:].decode("utf-8", errors="replace")
        return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", output)

    def rows(self, start: int = 0) -> list[int]:
        """The rows the app drew on from byte ``start`` on."""
        return [int(match[1]) for match in CURSOR.finditer(self.received, start)]

    def redrawn_at(self, height: int, start: int) -> bool:
        """Whether the app drew its last line at ``height`` after everything taller it drew
        from byte ``start`` on (frames of the size before may still arrive after a resize)."""
        rows = self.rows(start)
        taller = [index for index, row in enumerate(rows) if row > height]
        return height in rows[taller[-1] + 1 if taller else 0 :]

    def columns(self, start: int = 0) -> list[int]:
        """The columns the app's lines start at from byte ``start`` on."""
        return [int(match[2]) for match in CURSOR.finditer(self.received, start)]

    async def until(self, condition, timeout: float, what: str, closing: bool = False) -> None:
        """Until ``condition()`` holds (fail if the websocket closes first), or until it closes
        (``closing``); fail after ``timeout``."""
        deadline = time.monotonic() + timeout
        while not condition():
            if closing and self.closed is not None:
                return
            assert self.closed is None, f"the server closed the websocket ({self.closed}) before {what}"
            assert time.monotonic() < deadline, f"timed out waiting for {what}"
            await asyncio.sleep(0.05)

    async def closed_by_server(self, timeout: float) -> int:
        """Until the server closes the websocket; its close code."""
        await self.until(lambda: False, timeout, "the server to close the tab", closing=True)
        return self.closed

    async def send(self, text: str) -> None:
        """One text frame, as is (the protocol's, or anything else)."""
        await self.websocket.send_str(text)

    async def keys(self, keys: str) -> None:
        """Keys typed in the terminal."""
        await self.send(json.dumps(["stdin", keys]))

    async def resize(self, width: int, height: int) -> None:
        """The terminal's new size, as the page sends it when the window changes."""
        await self.send(json.dumps(["resize", {"width": width, "height": height}]))


async def eventually(condition, timeout: float, what: str) -> None:
    """``proctree.wait_until`` for the event loop: the tabs' readers go on meanwhile."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


async def open_tab(session: aiohttp.ClientSession, served: Served, query: str = "") -> Client:
    """A tab's websocket on the served app (its own Host and Origin, as a page of it sends)."""
    websocket = await session.ws_connect(f"{served.url}ws{query}", origin=served.url.rstrip("/"))
    return Client(websocket)


def request(served: Served, path: str, host: str, origin: str | None = None) -> int:
    """The HTTP status of a GET of ``path`` with this Host header (a websocket's handshake for /ws)."""
    address = urlsplit(served.url)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
    headers = {"Host": host}
    if path == "/ws":
        headers |= {
            "Upgrade": "websocket",
            "Connection": "Upgrade",
            "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
            "Sec-WebSocket-Version": "13",
        }
    if origin is not None:
        headers["Origin"] = origin
    try:
        connection.request("GET", path, headers=headers)
        return connection.getresponse().status
    finally:
        connection.close()


def port_of(served: Served) -> int:
    return urlsplit(served.url).port


def test_a_rebinding_page_gets_403_on_the_page_and_the_websocket(tmp_path):
    """DNS rebinding: evil.example first resolves to the attacker, then to 127.0.0.1; its page
    is then same-origin with itself (Host and Origin evil.example:PORT) and reached this server."""
    db = tmp_path / "served.sqlite"
    with serving(db, "--allowed-host", "tunnel.example") as served:
        port = port_of(served)
        evil = f"evil.example:{port}"
        assert request(served, "/", evil) == 403
        assert request(served, "/static/js/textual.js", evil) == 403
        assert request(served, "/ws", evil, origin=f"http://{evil}") == 403
        assert served.apps() == []  # no session was started for it
        for name in ("localhost.evil.example", "127.0.0.1.evil.example", "", "[::1", f"localhost:{port + 1}"):
            assert request(served, "/", name) == 403, name
        # The address served and localhost, with its port, are served; so is an --allowed-host,
        # on any port (a proxy's or a tunnel's), in any case.
        for name in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST:{port}", "tunnel.example:9999"):
            assert request(served, "/", name) == 200, name
        assert request(served, "/ws", f"tunnel.example:{port}", origin=f"http://tunnel.example:{port}") == 101
        log = served.output.read_text()
        assert log.count(f"refused a request for Host '{evil}'") == 1, log  # once, not per request
        # A client with a new Host every request: the first few logged, then one line, then none.
        for number in range(2 * REFUSED_HOSTS_LOGGED):
            assert request(served, "/", f"evil{number}.example:{port}") == 403
        log = served.output.read_text()
        assert log.count("refused a request for Host") == REFUSED_HOSTS_LOGGED, log
        assert log.count("refused more Host values: no longer logged") == 1, log
        assert "Traceback" not in log
        assert served.stop() == []


@pytest.mark.parametrize(
    "options, expected",
    [
        (["--serve", "--allowed-host", "http://evil.example/"], "--allowed-host: expected a host NAME"),
        (["--serve", "--allowed-host", "name:port"], "--allowed-host: expected a host NAME"),
        (["--allowed-host", "tunnel.example"], "--allowed-host goes with --serve"),
        (["--session-memory", "2048"], "--session-memory goes with --serve"),
        (["--serve", "--session-memory", "0"], "expected a number >= 1"),
    ],
)
def test_the_new_options_refuse_bad_values_in_one_line(tmp_path, capsys, options, expected):
    try:
        code = main(["--db", str(tmp_path / "none.sqlite"), *options])
    except SystemExit as exit:  # argparse's own refusals
        code = exit.code
    error = capsys.readouterr().err
    assert code == 2 and expected in error and "Traceback" not in error, error


def resident_mib(pid: int) -> float:
    """A process's resident memory now (VmRSS), in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmRSS for {pid}")


def test_a_tab_cannot_ask_for_a_terminal_beyond_500_by_200(tmp_path):
    """One ``resize`` to 60000 x 60000 took a read-only app from 70 MB to 3.8 GB: the size asked
    for, by the page's query and by its resize messages, is clamped to 500 x 200."""
    db = tmp_path / "served.sqlite"

    async def scenario(served: Served) -> list[float]:
        async with aiohttp.ClientSession() as session:
            tab = await open_tab(session, served, "?width=1000&height=400")
            await tab.until(lambda: APP_READY in tab.text(), 90, "the app's Explore screen")
            assert max(tab.rows()) == 200 and max(tab.columns()) <= 500, (max(tab.rows()), max(tab.columns()))
            [app] = served.apps()
            memory = [resident_mib(app)]
            start = len(tab.received)
            await tab.resize(120, 40)
            await tab.until(lambda: tab.redrawn_at(40, start), 30, "the redraw at 120 x 40")
            start = len(tab.received)
            await tab.resize(60000, 60000)
            await tab.until(lambda: tab.redrawn_at(200, start), 60, "the redraw at 500 x 200")
            assert max(tab.rows(start)) == 200 and max(tab.columns(start)) <= 500
            memory.append(resident_mib(app))
            await tab.websocket.close()
            return memory

    with serving_new(db, "--read-only") as served:
        before, after = asyncio.run(scenario(served))
        # Measured: about 80 MB resident at 500 x 200 before and after the huge resize.
        assert after < 500, f"the app grew from {before:.0f} MiB to {after:.0f} MiB"
        assert served.stop() == []


def tab_size(tab: Client, start: int) -> str:
    """The terminal the app drew on from byte ``start`` on, as COLUMNS x ROWS."""
    return f"drawn on {max(tab.columns(start))} x {max(tab.rows(start))}"


def test_a_size_typed_as_keys_is_clamped_too(tmp_path):
    """Textual's terminal parser reads an in-band resize report (``ESC [ 48 ; H ; W ; h ; w t``)
    in what a tab types, and resized the app to any size it named: the ``resize`` message's clamp
    passed round.  Sent whole, and cut in two across frames (the parser keeps what it has read),
    the size is clamped to 500 x 200 as any other."""
    db = tmp_path / "served.sqlite"

    async def scenario(served: Served) -> float:
        async with aiohttp.ClientSession() as session:
            tab = await open_tab(session, served, "?width=120&height=40")
            await tab.until(lambda: APP_READY in tab.text(), 90, "the app's Explore screen")
            [app] = served.apps()
            start = len(tab.received)
            await tab.keys("\x1b[48;300;700;0;0t")
            await tab.until(lambda: max(tab.rows(start), default=0) >= 200, 60, "the redraw at 500 x 200")
            assert max(tab.rows(start)) == 200 and max(tab.columns(start)) <= 500, tab_size(tab, start)
            start = len(tab.received)
            await tab.resize(100, 30)
            await tab.until(lambda: tab.redrawn_at(30, start), 30, "the redraw at 100 x 30")
            start = len(tab.received)
            await tab.keys("\x1b[48;60000;")
            await tab.keys("60000;0;0t")
            await tab.until(lambda: max(tab.rows(start), default=0) >= 200, 60, "the redraw at 500 x 200")
            assert max(tab.rows(start)) == 200 and max(tab.columns(start)) <= 500, tab_size(tab, start)
            memory = resident_mib(app)
            await tab.websocket.close()
            return memory

    with serving_new(db, "--read-only") as served:
        after = asyncio.run(scenario(served))
        assert after < 500, f"the app grew to {after:.0f} MiB"
        log = served.output.read_text()
        assert "Traceback" not in log, log
        assert served.stop() == []


def serving_new(db: Path, *options: str, **keywords):
    """``serving`` on a new, empty bbtui database (``--read-only`` needs one to exist)."""
    open_database(db)
    close_database()
    return serving(db, *options, **keywords)


MALFORMED = [
    "not json {",
    "[" * 100_000,  # nested too deep for json
    "{}",
    "[]",
    '["resize"]',
    '["resize", {"width": "wide", "height": 30}]',
    '["stdin", 42]',
    '["format the disk", 1]',
]


def test_a_malformed_message_ends_only_its_tab_with_one_log_line(tmp_path):
    db = tmp_path / "served.sqlite"

    async def scenario(served: Served) -> None:
        async with aiohttp.ClientSession() as session:
            bystander = await open_tab(session, served)
            await bystander.until(lambda: APP_READY in bystander.text(), 90, "the bystander's app")
            [kept] = served.apps()
            for number, message in enumerate(MALFORMED, 1):
                tab = await open_tab(session, served)
                await tab.until(lambda tab=tab: APP_READY in tab.text(), 90, "the tab's app")
                [app] = [pid for pid in served.apps() if pid != kept]
                await tab.send(message)
                code = await tab.closed_by_server(30)
                log = served.output.read_text()
                assert "Traceback" not in log, log
                assert code == aiohttp.WSCloseCode.INVALID_TEXT, message
                ended = lambda app=app: not Path(f"/proc/{app}").exists()  # noqa: E731
                await eventually(ended, 60, "that tab's app to end")
                log = served.output.read_text()
                assert log.count("sent a malformed message") == number, log
            # The other tab's app still runs and answers.
            assert served.apps() == [kept]
            start = len(bystander.received)
            await bystander.keys("?")
            await bystander.until(lambda: "Help" in bystander.text(start), 30, "the bystander's help")

    with serving(db, "--max-sessions", "2") as served:
        asyncio.run(scenario(served))
        log = served.output.read_text()
        assert "Traceback" not in log and "Error" not in log, log
        assert served.stop() == []


def address_space_limit(pid: int) -> int | None:
    """A process's RLIMIT_AS in bytes (``/proc/PID/limits``), None when unlimited."""
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max address space"):
            soft = line.split()[3]
            return None if soft == "unlimited" else int(soft)
    raise AssertionError(f"no address space line for {pid}")


@pytest.mark.parametrize("options, mib", [([], 4096), (["--session-memory", "3000"], 3000)])
def test_each_session_app_runs_under_a_memory_limit(tmp_path, options, mib):
    db = tmp_path / "served.sqlite"

    async def scenario(served: Served) -> None:
        async with aiohttp.ClientSession() as session:
            tab = await open_tab(session, served)
            await tab.until(lambda: APP_READY in tab.text(), 90, "the app's Explore screen")
            [app] = served.apps()
            assert address_space_limit(app) == mib * 1024 * 1024
            assert address_space_limit(served.process.pid) is None  # the server's own is left alone
            await tab.websocket.close()

    with serving(db, *options) as served:
        asyncio.run(scenario(served))
        assert served.stop() == []


def test_a_session_too_large_for_its_limit_fails_alone(tmp_path):
    """The limit is enforced: an app that needs more than it (here, just to start) fails, its tab
    ends, and the server goes on serving."""
    db = tmp_path / "served.sqlite"

    async def scenario(served: Served) -> None:
        async with aiohttp.ClientSession() as session:
            tab = await open_tab(session, served)
            await tab.closed_by_server(90)
            assert APP_READY not in tab.text()
        assert request(served, "/", f"127.0.0.1:{port_of(served)}") == 200

    with serving(db, "--session-memory", "64") as served:
        asyncio.run(scenario(served))
        assert served.process.poll() is None
        assert served.stop() == []


NORD_BACKGROUND = b"48;2;46;52;64"
"""The nord theme's background colour (#2E3440) in the terminal output."""


def test_a_read_only_visitor_changes_the_theme_of_its_own_session_only(tmp_path):
    """Ctrl+P, Theme, nord: the session takes it, the host's settings.json is not written."""
    db = tmp_path / "served.sqlite"
    config_home = tmp_path / "config"
    settings = config_home / "bbtui" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text('{"theme": "textual-dark"}\n')
    before = settings.read_bytes()

    async def scenario(served: Served) -> None:
        async with aiohttp.ClientSession() as session:
            tab = await open_tab(session, served)
            await tab.until(lambda: APP_READY in tab.text(), 90, "the app's Explore screen")
            assert NORD_BACKGROUND not in tab.received
            await tab.keys("\x10")  # ctrl+p: the command palette
            await tab.until(lambda: "Search for commands" in tab.text(), 30, "the command palette")
            await tab.keys("theme")
            await tab.until(lambda: "Change" in tab.text(), 30, "the theme command")
            await tab.keys("\r")
            await tab.until(lambda: "nord" in tab.text(), 30, "the themes")
            await tab.keys("nord")
            await tab.keys("\r")
            await tab.until(lambda: NORD_BACKGROUND in tab.received, 30, "the session drawn in nord")
            await tab.websocket.close()

    with serving_new(db, "--read-only", env={"XDG_CONFIG_HOME": str(config_home)}) as served:
        asyncio.run(scenario(served))
        assert served.stop() == []
    assert settings.read_bytes() == before
    assert [path.name for path in settings.parent.iterdir()] == ["settings.json"]  # no temporary left


def test_a_served_session_loads_the_engine_the_terminal_compiled(tmp_path):
    """A server started in a folder that holds a ``bbcore`` of its own (a source checkout beside
    an installed bbtui) ran its sessions' apps on that one, ``python -m`` putting the working
    folder first: another module path, another numba cache, "compiling the engine, first run
    only" in every session.  The sessions run the server's own code, and load its cache."""
    terminal = subprocess.run(  # the terminal's run, which compiles the engine (or loads it)
        [sys.executable, "-m", "bbcore", "--db", str(tmp_path / "terminal.sqlite"), "explore", "A3_B4"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
        timeout=600,
    )
    assert terminal.returncode == 0, terminal.stderr
    assert kernels_cached()
    folder = tmp_path / "checkout"
    (folder / "bbcore").mkdir(parents=True)
    for source in (ROOT / "bbcore").rglob("*.py"):
        target = folder / "bbcore" / source.relative_to(ROOT / "bbcore")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(source.read_bytes())
    db = tmp_path / "served.sqlite"

    async def scenario(served: Served) -> str:
        async with aiohttp.ClientSession() as session:
            tab = await open_tab(session, served)
            await tab.until(lambda: APP_READY in tab.text(), 90, "the app's Explore screen")
            await tab.keys("A3_B4\r")
            await tab.until(lambda: "the engine" in tab.text(), 60, "the run's first phase")
            phase = re.search(r"A3_B4: \w+ the engine[^.]*", tab.text())[0]
            await tab.until(lambda: "A3_B4 is explored" in tab.text(), 120, "the run's end")
            await tab.websocket.close()
            return phase

    # The bbtui server as its console script runs it: its packages from the environment's path
    # (here $PYTHONPATH), not from the folder it was started in.
    with serving(db, cwd=folder, python=("-P",)) as served:
        phase = asyncio.run(scenario(served))
        assert served.stop() == []
    assert phase == "A3_B4: loading the engine"
    assert not list(folder.rglob("*.nbi")), "a session compiled the checkout's engine"


def test_serving_on_a_wildcard_address_says_which_browsers_are_refused():
    """On 0.0.0.0 no browser names the address served: the warning says to name the one used."""
    from bbtui.serve import exposure_warning

    assert "--allowed-host" in exposure_warning("0.0.0.0", read_only=True)
    assert "--allowed-host" in exposure_warning("::", read_only=True)
    assert "--allowed-host" not in exposure_warning("0.0.0.0", read_only=True, allowed=["bbtui.lan"])
    assert "--allowed-host" not in exposure_warning("192.0.2.1", read_only=True)  # served: allowed


def test_sessions_that_could_take_more_than_the_machines_memory_are_warned_of(tmp_path):
    """The per-session limit bounds each app, not their sum: past this machine's memory, the
    server says so in one line when it starts (and serves all the same)."""
    memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2**20
    db = tmp_path / "served.sqlite"
    with serving_new(db, "--max-sessions", "2", "--session-memory", str(memory // 2 + 1)) as served:
        wait_until(lambda: "serving" in served.output.read_text(), 60, "the banner")
        log = served.output.read_text()
        assert log.count("bbtui: warning: 2 sessions of up to") == 1, log
        assert f"than this machine's {memory:,} MiB of memory" in log, log
        assert served.stop() == []
    quiet = tmp_path / "quiet.sqlite"
    with serving_new(quiet, "--max-sessions", "2", "--session-memory", str(memory // 2)) as served:
        wait_until(lambda: "serving" in served.output.read_text(), 60, "the banner")
        assert "warning" not in served.output.read_text()
        assert served.stop() == []
