"""``bbtui --serve``: the app in a web browser, each browser tab an app process of its own.

textual-serve's ``Server`` serves a page that draws a terminal and, for
each websocket a tab opens, runs a command whose Textual app talks to that
tab (``AppService``).  The command here is ``bbtui`` itself on the one
database the server was started with, so every tab is the same app, with
the same keys, as in a terminal.  What this module adds to textual-serve:

- a limit: at most ``--max-sessions`` app processes at once (each is a
  Python process with the engine loaded, and may run an exploration); one
  more tab gets a one-line message in its terminal instead of an app;
- ``--read-only``: every session's app is ``bbtui --read-only``, so the
  store is opened read-only and exploring, resetting, restarting and
  computing a strategy book are off, with the reason in the header;
- a stop that leaves nothing behind: Ctrl-C or SIGTERM on the server asks
  every session's app to quit, which pauses an exploration under way and
  stores its ranges (as ctrl+q does in a terminal); an app that has not
  ended after ``QUIT_SECONDS`` is terminated, then killed;
- the page's websocket address taken from the address the browser used
  (textual-serve writes ``http://HOST:PORT``, which is wrong for 0.0.0.0,
  a name, or an SSH tunnel), and websockets from another site's pages
  refused (a page on any site could otherwise drive a server on
  127.0.0.1 from the visitor's own browser).

Binding to an address other than the loopback prints a one-line warning:
there is no login, so anyone who can reach the port can use the app (and,
without ``--read-only``, explore and reset configurations in the database).

textual-serve 1.1 is what this is written and tested against (pinned in
the ``[web]`` extra): the subclasses below use its ``Server`` and
``AppService`` methods and ``AppService._process``.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import os
import shlex
import signal
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp_jinja2
from aiohttp import WSMsgType, web
from textual_serve.app_service import AppService
from textual_serve.server import Server, to_int

from bbcore.store import is_server
from bbcore.words import plural

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
DEFAULT_MAX_SESSIONS = 4
"""Browser sessions at once: each is an app process (about 100 MB, more while it explores)."""
QUIT_SECONDS = 30.0
"""How long a session's app has to pause its exploration and exit once asked to quit."""
TERM_SECONDS = 5.0
"""Then how long after SIGTERM before SIGKILL (its exploration workers die with it)."""

log = logging.getLogger("bbtui.serve")


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable only from this machine (localhost, 127.0.0.0/8, ::1)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a name, which may resolve to any address


def exposure_warning(host: str, read_only: bool) -> str | None:
    """The one line said when the server is reachable from other machines, else None."""
    if is_loopback(host):
        return None
    can = "browse the database" if read_only else "explore and reset configurations in the database"
    return (
        f"bbtui: warning: serving on {host}, not the loopback: anyone who can reach this port "
        f"can use the app, with no login, and {can}"
    )


def session_command(
    db_path: Path, *, read_only: bool, config: str | None = None, cluster: str | None = None
) -> str:
    """The shell command that runs one session's app: this bbtui, on this database.

    ``exec`` replaces the shell by the app, so the process the server
    started, signals and waits for is the app itself; ``--served-by`` has
    it quit (pausing its run) if the server is killed without a word.
    """
    # A server's URL goes by $BBTUI_DB (serve): never a password on a command line.
    argv = [sys.executable, "-m", "bbtui.app"] + ([] if is_server(db_path) else ["--db", str(db_path)])
    argv += ["--served-by", str(os.getpid())]
    if read_only:
        argv.append("--read-only")
    if cluster:
        argv += ["--cluster", cluster]
    if config:
        argv.append(config)
    return "exec " + shlex.join(argv)


def full_message(max_sessions: int) -> bytes:
    """What a tab over the limit shows in its terminal instead of an app."""
    lines = (
        f"bbtui: every session of this server is in use ({plural(max_sessions, 'session')} "
        f"at most, --max-sessions {max_sessions}).",
        "Close another bbtui tab, then reload this page.",
    )
    return ("\x1b[2J\x1b[H\x1b[1m" + "\r\n".join(lines) + "\x1b[0m\r\n").encode()


class Session(AppService):
    """One browser tab's app process, which the server can end cleanly."""

    @property
    def ended(self) -> bool:
        """Whether its app process has ended (a session still starting counts as running)."""
        return self._process is not None and self._process.returncode is not None

    ending: asyncio.Task[None] | None = None
    """The one ending of this session: its tab's handler and the server's stop both ask for it."""

    async def end(self) -> None:
        """End the app (``quit``), once, even if the handler that asked is cancelled meanwhile."""
        if self.ending is None:
            self.ending = asyncio.create_task(self.quit())
        await asyncio.shield(self.ending)

    async def quit(self) -> None:
        """Ask the app to quit (it pauses a run first); terminate, then kill, one that hangs."""
        process = self._process
        if process is None:
            return
        if process.returncode is None:
            await self.send_meta({"type": "quit"})  # the app's ExitApp: as ctrl+q
            for signum, seconds in ((None, QUIT_SECONDS), (signal.SIGTERM, TERM_SECONDS)):
                if signum is not None and process.returncode is None:
                    log.warning("session %s did not quit: sending %s", process.pid, signum.name)
                    process.send_signal(signum)
                try:
                    await asyncio.wait_for(process.wait(), seconds)
                    break
                except TimeoutError:
                    continue
            else:
                log.warning("session %s did not end: killing it", process.pid)
                process.kill()
                await process.wait()
        await self.stop()  # its output read to the end


class BbtuiServer(Server):
    """textual-serve's Server with a session limit, same-origin websockets and a clean stop."""

    def __init__(self, command: str, *, host: str, port: int, max_sessions: int, banner: str) -> None:
        """Serve ``command`` (``session_command``) on ``host:port``, ``max_sessions`` at once."""
        super().__init__(command, host=host, port=port, title="bbtui")
        self.max_sessions = max_sessions
        self.banner = banner
        self.sessions: set[Session] = set()
        """The sessions started, until their app's output is read to the end."""
        self.websockets: set[web.WebSocketResponse] = set()
        """Every open websocket, those over the limit included."""
        self.stopping = False

    def request_exit(self) -> None:
        """Stop on the first Ctrl-C or SIGTERM; later ones must not cut the sessions' ending short."""
        if self.stopping:
            return
        self.stopping = True
        print("bbtui: stopping: every session's app quits (a run under way is paused)", flush=True)
        super().request_exit()

    def serve(self, debug: bool = False) -> None:
        """Serve until Ctrl-C or SIGTERM (textual-serve's own, with bbtui's banner and log).

        The banner is printed once the port is bound (aiohttp's ``print``),
        and the log is one plain line per request or event.
        """
        logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stdout, force=True)
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, self.request_exit)
        web.run_app(
            self._make_app(),
            host=self.host,
            port=self.port,
            handle_signals=False,
            loop=loop,
            print=lambda _: print(self.banner, flush=True),
        )

    async def on_startup(self, app: web.Application) -> None:
        """Nothing: the banner says where the app is served, once it is (``serve``)."""

    async def on_shutdown(self, app: web.Application) -> None:
        """End every session's app (pausing its run), then close every websocket."""
        await asyncio.gather(*(session.end() for session in list(self.sessions)))
        await asyncio.gather(*(websocket.close() for websocket in list(self.websockets)))

    @aiohttp_jinja2.template("app_index.html")
    async def handle_index(self, request: web.Request) -> dict[str, Any]:
        """The page, its addresses taken from the one the browser used (as textual-serve's own)."""
        router = request.app.router
        base = f"{request.scheme}://{request.host}"
        websocket_scheme = "wss" if request.scheme == "https" else "ws"
        static = f"{base}{router['static'].url_for(filename='/')}".rstrip("/") + "/"
        return {
            "font_size": to_int(request.query.get("fontsize", "16"), 16),
            "app_websocket_url": f"{websocket_scheme}://{request.host}{router['websocket'].url_for()}",
            "config": {"static": {"url": static}},
            "application": {"name": self.title},
        }

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        """Run an app for this tab, or say that every session is in use."""
        origin = request.headers.get("Origin")
        if origin is not None and urlsplit(origin).netloc != request.host:
            raise web.HTTPForbidden(text="bbtui: websocket from another site refused")
        websocket = web.WebSocketResponse(heartbeat=15)
        await websocket.prepare(request)
        self.websockets.add(websocket)
        try:
            if self.stopping:
                await websocket.close()
            elif sum(not session.ended for session in self.sessions) >= self.max_sessions:
                await websocket.send_bytes(full_message(self.max_sessions))
                await self.wait_closed(websocket)
            else:
                await self.run_session(request, websocket)
        finally:
            self.websockets.discard(websocket)
        return websocket

    async def run_session(self, request: web.Request, websocket: web.WebSocketResponse) -> None:
        """An app process for this tab, until either ends (as textual-serve's own handler)."""
        session = Session(
            self.command,
            write_bytes=websocket.send_bytes,
            write_str=websocket.send_str,
            close=websocket.close,
            download_manager=self.download_manager,
            debug=self.debug,
        )
        self.sessions.add(session)
        try:
            await session.start(
                to_int(request.query.get("width", "80"), 80), to_int(request.query.get("height", "24"), 24)
            )
            await self._process_messages(websocket, session)
        except asyncio.CancelledError:
            await websocket.close()
        except Exception as error:
            log.exception(error)
        finally:
            await session.end()  # the tab closed: the app quits as with ctrl+q
            self.sessions.discard(session)

    async def wait_closed(self, websocket: web.WebSocketResponse) -> None:
        """Keep a tab over the limit showing its message, answering its pings, until it goes."""
        async for message in websocket:
            if message.type == WSMsgType.TEXT:
                envelope = message.json()
                if isinstance(envelope, list) and envelope and envelope[0] == "ping":
                    await websocket.send_json(["pong", envelope[1]])


def serve(
    db_path: Path,
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    read_only: bool = False,
    max_sessions: int = DEFAULT_MAX_SESSIONS,
    config: str | None = None,
    cluster: str | None = None,
) -> int:
    """Serve bbtui on ``host:port`` until Ctrl-C or SIGTERM; the exit status.

    ``db_path`` is the database every session opens (already checked by
    the caller); ``config`` is selected in every session.
    """
    warning = exposure_warning(host, read_only)
    if warning:
        print(warning, file=sys.stderr)
    url_host = f"[{host}]" if ":" in host else host
    banner = (
        f"bbtui: serving {db_path}{' read-only' if read_only else ''} on http://{url_host}:{port} "
        f"({plural(max_sessions, 'browser session')} at most); Ctrl-C stops"
    )
    if is_server(db_path):  # the sessions' apps inherit it (session_command)
        os.environ["BBTUI_DB"] = db_path.conninfo
    else:
        db_path = db_path.resolve()
    command = session_command(db_path, read_only=read_only, config=config, cluster=cluster)
    server = BbtuiServer(command, host=host, port=port, max_sessions=max_sessions, banner=banner)
    try:
        server.serve()
    except OSError as error:  # the port is taken, the address is not this machine's
        print(f"bbtui: cannot serve on {host}:{port}: {error.strerror or error}", file=sys.stderr)
        return 2
    return 0
