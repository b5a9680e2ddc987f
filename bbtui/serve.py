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
  127.0.0.1 from the visitor's own browser);
- an allowlist of Host headers (``allowed_hosts``): a page whose name an
  attacker rebinds to 127.0.0.1 (DNS rebinding) is same-origin with its own
  Host, so the Origin check alone lets it in; every request whose Host is
  not the address served, the loopback or an ``--allowed-host`` is refused
  (403), the page, its files and the websocket alike;
- a bound on what a tab can make its app spend: the terminal size it asks
  for is clamped to ``terminal.MAX_COLUMNS`` x ``MAX_ROWS`` (one resize to
  60000 x 60000 took an app to 3.8 GB; a size typed as keys, an in-band
  resize report, is clamped by the app: ``bbtui.terminal``), a websocket message that is not
  textual-serve's protocol ends that tab in one log line, and each app
  runs under an address-space limit (``--session-memory``, inherited by its
  exploration workers), so a tab's app fails alone, not the machine;
- the sessions' apps run the code the server runs (``session_command``:
  no module of the working directory shadows it), so they share its numba
  cache: the engine compiled once, by the terminal app or a first run, is
  loaded by every session.

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
import json
import logging
import os
import shlex
import signal
import site
import sys
from asyncio.subprocess import Process
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import aiohttp_jinja2
from aiohttp import WSMsgType, web
from textual_serve.app_service import AppService
from textual_serve.server import Server, to_int

from bbcore.store import is_server
from bbcore.words import plural
from bbtui.terminal import clamped_size

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
DEFAULT_MAX_SESSIONS = 4
"""Browser sessions at once: each is an app process (about 100 MB, more while it explores)."""
DEFAULT_SESSION_MEMORY = 4096
"""The address space of each session's app process, and of each of its exploration workers, in
MiB (``--session-memory``).  An idle served app maps about 570 MiB (75 MiB resident), an A5_B7
exploration worker about 530 MiB, a strategy book adds 300 to 600 MiB."""
REFUSED_HOSTS_LOGGED = 20
"""Refused Host values logged, each once; past them, one line more and no other (a client
sending a new Host with every request would fill the log, and the memory that remembers them)."""
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


def exposure_warning(host: str, read_only: bool, allowed: list[str] | None = None) -> str | None:
    """The one line said when the server is reachable from other machines, else None; on a
    wildcard address with no ``--allowed-host``, that browsers elsewhere are refused until one
    names the address they use (``allowed_hosts``)."""
    if is_loopback(host):
        return None
    can = "browse the database" if read_only else "explore and reset configurations in the database"
    names = (
        "; browsers on other machines need the name or address they use given with --allowed-host"
        if ipaddress_unspecified(host) and not allowed
        else ""
    )
    return (
        f"bbtui: warning: serving on {host}, not the loopback: anyone who can reach this port "
        f"can use the app, with no login, and {can}{names}"
    )


def allowed_hosts(host: str, port: int, extra: list[str] | None = None) -> list[tuple[str, int | None]]:
    """The Host headers served, as (name, port) pairs; a port of None allows any port.

    By default the address served and the loopback's names (``localhost``,
    127.0.0.1, ::1), each with the port served: names no other site's page
    can be served from.  ``extra`` are ``--allowed-host`` values
    (``NAME`` for any port, as behind a proxy or a tunnel, or ``NAME:PORT``).
    """
    names = ["localhost", "127.0.0.1", "::1"]
    if not ipaddress_unspecified(host):
        names.insert(0, host.strip("[]").lower())
    pairs: list[tuple[str, int | None]] = [(name, port) for name in dict.fromkeys(names)]
    for value in extra or ():
        parsed = host_and_port(value)
        if parsed is None:
            raise ValueError(f"not a host name or NAME:PORT: {value!r}")
        pairs.append(parsed)
    return pairs


def memory_warning(max_sessions: int, session_memory: int, memory: int | None = None) -> str | None:
    """The one line said when ``max_sessions`` apps of ``session_memory`` MiB each could take more
    than this machine's memory (``memory`` MiB, read when None), else None: the limit then no
    longer keeps the sessions from taking the host down together (docs/serve.md)."""
    if memory is None:
        try:
            memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2**20
        except (ValueError, OSError):  # not known here: nothing to compare with
            return None
    if max_sessions * session_memory <= memory:
        return None
    return (
        f"bbtui: warning: {plural(max_sessions, 'session')} of up to {session_memory:,} MiB each "
        f"could take more than this machine's {memory:,} MiB of memory: lower --session-memory "
        "or --max-sessions"
    )


def ipaddress_unspecified(host: str) -> bool:
    """Whether ``host`` is a wildcard address (0.0.0.0, ::): no browser names it."""
    try:
        return ipaddress.ip_address(host.strip("[]")).is_unspecified
    except ValueError:
        return False


def host_and_port(value: str) -> tuple[str, int | None] | None:
    """``NAME``, ``NAME:PORT``, ``[::1]:PORT`` as (lower-case name, port or None); None if malformed."""
    if not value or any(character in value for character in "/?#@ \t"):
        return None
    try:
        address = urlsplit(f"//{value}")
        name, port = address.hostname, address.port
    except ValueError:
        return None
    if not name or (port is not None and not 0 < port < 65536):
        return None
    return name, port


def host_allowed(header: str | None, allowed: list[tuple[str, int | None]], scheme: str = "http") -> bool:
    """Whether a request's Host header names this server (``allowed_hosts``)."""
    parsed = host_and_port(header or "")
    if parsed is None:
        return False
    name, port = parsed
    port = port if port is not None else (443 if scheme == "https" else 80)
    return any(name == known and known_port in (None, port) for known, known_port in allowed)


def package_root() -> Path:
    """The folder that holds the ``bbtui`` and ``bbcore`` packages this server runs."""
    return Path(__file__).resolve().parent.parent


def session_command(
    db_path: Path,
    *,
    read_only: bool,
    config: str | None = None,
    cluster: str | None = None,
    memory_mib: int = DEFAULT_SESSION_MEMORY,
) -> str:
    """The shell command that runs one session's app: this bbtui, on this database.

    ``ulimit -v`` caps the app's address space (``memory_mib``), and its
    exploration workers inherit the cap.  ``exec`` replaces the shell by
    the app, so the process the server started, signals and waits for is
    the app itself; ``--served-by`` has it quit (pausing its run) if the
    server is killed without a word.  ``-P`` keeps the working directory
    off the app's ``sys.path``: with ``-m`` alone, a ``bbcore`` folder there
    (a source checkout the server was started in) would be imported
    instead of the server's own, with a numba cache of its own, so every
    session compiled the engine again (``serve`` puts the server's own
    packages first on ``$PYTHONPATH`` when they are not installed).
    """
    # A server's URL goes by $BBTUI_DB (serve): never a password on a command line.
    argv = [sys.executable, "-P", "-m", "bbtui.app"] + ([] if is_server(db_path) else ["--db", str(db_path)])
    argv += ["--served-by", str(os.getpid())]
    if read_only:
        argv.append("--read-only")
    if cluster:
        argv += ["--cluster", cluster]
    if config:
        argv.append(config)
    return f"ulimit -v {memory_mib * 1024} && exec " + shlex.join(argv)


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
    ended_process: Process | None = None
    """The app process that ending was for: None for a session stopped while it was starting."""

    async def end(self) -> None:
        """End the app (``quit``), once, even if the handler that asked is cancelled meanwhile;
        again if its app started after an ending that found none (the server stopping meanwhile)."""
        if self.ending is None or (self.ending.done() and self.ended_process is not self._process):
            self.ended_process = self._process
            self.ending = asyncio.create_task(self.quit())
        await asyncio.shield(self.ending)

    async def run(self) -> None:
        """textual-serve's (the app's output to the tab, until it ends), then the tab closed: an
        app that failed (at its memory limit, say) sends no exit, and its tab would hang."""
        await super().run()
        await self.remote_close()

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

    def __init__(
        self,
        command: str,
        *,
        host: str,
        port: int,
        max_sessions: int,
        banner: str,
        allowed: list[tuple[str, int | None]] | None = None,
    ) -> None:
        """Serve ``command`` (``session_command``) on ``host:port``, ``max_sessions`` at once,
        to requests whose Host is ``allowed`` (``allowed_hosts``)."""
        super().__init__(command, host=host, port=port, title="bbtui")
        self.max_sessions = max_sessions
        self.banner = banner
        self.allowed = allowed if allowed is not None else allowed_hosts(host, port)
        self.refused_hosts: set[str] = set()
        """The Host headers refused so far, each logged once (a rebinding page retries)."""
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

    async def _make_app(self) -> web.Application:
        """textual-serve's application, every request of it behind the Host check."""
        app = await super()._make_app()
        app.middlewares.append(self.check_host)
        return app

    @web.middleware
    async def check_host(self, request: web.Request, handler) -> web.StreamResponse:
        """Refuse (403) a request whose Host header is not this server's (DNS rebinding)."""
        header = request.headers.get("Host")
        if not host_allowed(header, self.allowed, request.scheme):
            if header not in self.refused_hosts and len(self.refused_hosts) <= REFUSED_HOSTS_LOGGED:
                self.refused_hosts.add(str(header))
                if len(self.refused_hosts) > REFUSED_HOSTS_LOGGED:
                    log.warning("refused more Host values: no longer logged")
                else:
                    log.warning("refused a request for Host %r: not an allowed host (--allowed-host)", header)
            raise web.HTTPForbidden(text=f"bbtui: Host {header!r} is not served here (--allowed-host)\n")
        return await handler(request)

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
            size = clamped_size(
                to_int(request.query.get("width", "80"), 80), to_int(request.query.get("height", "24"), 24)
            )
            await session.start(*(size or (80, 24)))
            if not self.stopping:  # else the stop found it starting: it ends at once (finally)
                await self._process_messages(websocket, session)
        except asyncio.CancelledError:
            await websocket.close()
        except Exception as error:  # one line: a tab's trouble is no traceback in the server's log
            log.error("session ended by an error: %s: %s", type(error).__name__, error)
        finally:
            await session.end()  # the tab closed: the app quits as with ctrl+q
            self.sessions.discard(session)

    async def _process_messages(self, websocket: web.WebSocketResponse, session: AppService) -> None:
        """Pass a tab's keys, sizes (clamped), focus and pings to its app, until the tab goes.

        textual-serve's own raised on a message that is not its protocol
        (a traceback in the log) and passed any size on.  Here a malformed
        message ends its tab with one log line (``malformed``), and a size
        is clamped to ``terminal.MAX_COLUMNS`` x ``MAX_ROWS``.
        """
        async for message in websocket:
            if message.type != WSMsgType.TEXT:
                continue
            envelope = envelope_of(message.data)
            kind, data = envelope if envelope is not None else (None, None)
            size = clamped_size(data.get("width"), data.get("height")) if isinstance(data, dict) else None
            if kind == "stdin" and isinstance(data, str):
                await session.send_bytes(data.encode("utf-8"))
            elif kind == "resize" and size is not None:
                await session.set_terminal_size(*size)
            elif kind == "ping":
                await websocket.send_json(["pong", data])
            elif kind == "blur":
                await session.blur()
            elif kind == "focus":
                await session.focus()
            else:
                await self.malformed(websocket, message.data)
                return

    async def malformed(self, websocket: web.WebSocketResponse, text: str) -> None:
        """End a tab that sent something other than textual-serve's protocol: one log line."""
        log.warning("a tab sent a malformed message (%d characters): its session ends", len(text))
        await websocket.close(code=aiohttp.WSCloseCode.INVALID_TEXT, message=b"malformed message")

    async def wait_closed(self, websocket: web.WebSocketResponse) -> None:
        """Keep a tab over the limit showing its message, answering its pings, until it goes."""
        async for message in websocket:
            if message.type == WSMsgType.TEXT:
                envelope = envelope_of(message.data)
                if envelope is None:
                    await self.malformed(websocket, message.data)
                    return
                if envelope[0] == "ping":
                    await websocket.send_json(["pong", envelope[1]])


def envelope_of(text: str) -> tuple[str, Any] | None:
    """A websocket message of textual-serve's protocol, ``["kind", data]``, as (kind, data);
    None if it is not JSON, or not a list whose first item is a string."""
    try:
        envelope = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: "[[[[...]]]]" nested deep
        return None
    if not isinstance(envelope, list) or not envelope or not isinstance(envelope[0], str):
        return None
    return envelope[0], envelope[1] if len(envelope) > 1 else None


def serve(
    db_path: Path,
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    read_only: bool = False,
    max_sessions: int = DEFAULT_MAX_SESSIONS,
    config: str | None = None,
    cluster: str | None = None,
    allowed: list[str] | None = None,
    session_memory: int = DEFAULT_SESSION_MEMORY,
) -> int:
    """Serve bbtui on ``host:port`` until Ctrl-C or SIGTERM; the exit status.

    ``db_path`` is the database every session opens (already checked by
    the caller); ``config`` is selected in every session.  ``allowed`` are
    the ``--allowed-host`` values (checked by the caller, ``host_and_port``),
    ``session_memory`` each session's address space in MiB.
    """
    for warning in (exposure_warning(host, read_only, allowed), memory_warning(max_sessions, session_memory)):
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
    # The sessions' apps import this server's packages, whatever folder it was started in
    # (an installed package is found without: -P only keeps the working directory out).
    root = str(package_root())
    if root not in (*site.getsitepackages(), site.getusersitepackages()):
        paths = [entry for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep) if entry]
        os.environ["PYTHONPATH"] = os.pathsep.join([root, *paths])
    command = session_command(
        db_path, read_only=read_only, config=config, cluster=cluster, memory_mib=session_memory
    )
    server = BbtuiServer(
        command,
        host=host,
        port=port,
        max_sessions=max_sessions,
        banner=banner,
        allowed=allowed_hosts(host, port, allowed),
    )
    try:
        server.serve()
    except OSError as error:  # the port is taken, the address is not this machine's
        print(f"bbtui: cannot serve on {host}:{port}: {error.strerror or error}", file=sys.stderr)
        return 2
    return 0
