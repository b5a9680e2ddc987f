"""The Strategy screen never makes a key wait for the engine, and keeps few books.

- While a book is computed (A4_B8, traced then played, a few seconds), and
  while a node below the stored levels is rebuilt, keys are pressed: each
  key's latency is recorded (``record_property``, and printed with ``-s``),
  and the test asserts that the key was handled while the work was still
  running, not a time.
- Leaving the screen, or quitting, cancels the book's computation mid-way
  (the worker's thread ends with DecodeCancelled): nothing is kept or stored.
- The app keeps the last ``BOOKS_KEPT`` books only.
- A read-only session (``--read-only``, or a reader role on a server) with no
  stored book says plainly that there is none and why, on the message line,
  in both plots and in the tree, and computes nothing.
"""

from __future__ import annotations

import threading
import time

import pytest
from pilot import open_screen, text_of, tree_cursor_to, wait_for
from textual import events
from textual.binding import Binding
from textual.worker import Worker, WorkerState

from bbcore import store
from bbcore.config import Config
from bbcore.strategy import STORED_DEPTH, compute_book, stored_book
from bbtui.app import BOOKS_KEPT, BlackBoxApp
from bbtui.screens.strategy import StrategyScreen, node_label
from bbtui.widgets.plot import BarPlot

A4_B8 = Config(4, 8)
A3_B4 = Config(3, 4)
PLAYED_STEP_SECONDS = 0.02
"""How long each step of playing a book waits in ``ProbedApp``, so that the book is still being
played while the test presses its keys."""


class ProbedApp(BlackBoxApp):
    """The app with one more key, whose action notes when it ran and whether the book's
    worker was still at work then.

    The key is posted as the terminal's driver does, and the latency taken
    when the action runs: ``pilot.press`` waits after each key until the
    process looks idle (its CPU time, the worker's thread included), up to a
    second, which would also let the book finish before the test leaves.
    """

    BINDINGS = [*BlackBoxApp.BINDINGS, Binding("f12", "probe", "Probe", show=False)]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.probes: list[tuple[float, bool]] = []
        self.book_ended = threading.Event()
        self.book_outcome: str | None = None
        """How the book's computation ended, in the worker's thread: "finished" or the
        exception's name."""

    def strategy_book(self, config, by, progress=None, played=None, stop=None):
        def slowly(done: int, total: int) -> None:
            # a fast machine played A4_B8's whole book in 1.8 s, before the test could probe
            # it: each step of the playing now waits a little, as a slower machine's does
            time.sleep(PLAYED_STEP_SECONDS)
            played(done, total)

        try:
            made = super().strategy_book(config, by, progress, slowly if played else None, stop)
        except BaseException as error:
            self.book_outcome = type(error).__name__
            raise
        else:
            self.book_outcome = "finished"
            return made
        finally:
            self.book_ended.set()

    def action_probe(self) -> None:
        """Note the time, and whether the strategy book's worker was running."""
        running = any(w.group == "strategy-book" and w.is_running for w in self.workers)
        self.probes.append((time.perf_counter(), running))


def book_worker(app: BlackBoxApp) -> Worker:
    """The Strategy screen's worker reading or computing the book."""
    return next(w for w in app.workers if w.group == "strategy-book")


def plot_note(app: BlackBoxApp) -> str:
    """What the rays plot says while it has no bars."""
    return app.screen.query_one("#strategy-rays", BarPlot).note


async def test_keys_are_handled_while_a_book_is_played_and_leaving_cancels_it(tmp_path, record_property):
    db = tmp_path / "book.sqlite"
    app = ProbedApp(db, A4_B8)
    latencies: list[float] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("escape", "b")
        assert isinstance(app.screen, StrategyScreen)
        await wait_for(pilot, lambda: any(w.group == "strategy-book" for w in app.workers))
        worker = book_worker(app)
        # The spectra traced, then the tree being played: the screen says how far.
        await wait_for(pilot, lambda: plot_note(app).startswith("playing the book:"))
        for count in range(1, 6):
            sent = time.perf_counter()
            app.post_message(events.Key("f12", None))
            await wait_for(pilot, lambda count=count: len(app.probes) == count)
            latencies.append(app.probes[-1][0] - sent)
        assert all(running for _, running in app.probes), "a key waited for the book"
        assert app.screen.book is None
        app.post_message(events.Key("escape", None))  # leaving the screen cancels the book
        await wait_for(pilot, app.book_ended.is_set)
        assert app.book_outcome == "DecodeCancelled"
        await wait_for(pilot, lambda: worker.is_finished)
        assert worker.state == WorkerState.CANCELLED
        assert (A4_B8, "remaining") not in app.books
    record_property("key_latency_ms_while_played", [round(1000 * s, 1) for s in latencies])
    print("key latency while the book is played (ms):", [round(1000 * s, 1) for s in latencies])
    store.open_database(db)
    try:
        assert stored_book(A4_B8) is None  # stopped mid-way: never finished, so never stored
    finally:
        store.close_database()


def rebuilding(app: BlackBoxApp) -> bool:
    """Whether a worker of the Strategy screen is opening a node."""
    return any(w.group == "strategy-nodes" and w.is_running for w in app.workers)


def stored_node_to_rebuild(book) -> list[int]:
    """The path from the root to the first node of the deepest stored level that shoots again."""
    index = next(
        i for i in range(len(book.nodes)) if book.nodes.depth[i] == STORED_DEPTH and book.nodes.shot[i] >= 0
    )
    return book.path(index)


async def test_keys_are_handled_while_a_node_is_rebuilt(tmp_path, record_property):
    app = BlackBoxApp(tmp_path / "node.sqlite", A3_B4)
    latencies: list[float] = []
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_screen(app, pilot, "b", StrategyScreen)
        await wait_for(pilot, lambda: screen.book is not None)
        book = screen.book
        tree = screen.tree
        path = stored_node_to_rebuild(book)
        node = screen.branch("greedy")
        for index in path[1:]:
            await wait_for(pilot, lambda node=node: node.children and node.children[0].data is not None)
            node = next(c for c in node.children if c.data == ("greedy", index))
            node.expand()
        # The node to rebuild is open, and its rebuilding held (as a large node's
        # tracing would hold it for seconds): keys move the cursor meanwhile.
        assert book.known_children(path[-1]) is None
        held, done = threading.Event(), threading.Event()

        def hold() -> None:
            """Hold the book's rebuilding until the test is done (20 s at most: a screen
            that waited for it on its event loop must not hang the run)."""
            with book._rebuilding:
                held.set()
                done.wait(timeout=20)

        holder = threading.Thread(target=hold)
        holder.start()
        held.wait()
        try:
            await wait_for(
                pilot, lambda: any(w.group == "strategy-nodes" and w.is_running for w in app.workers)
            )
            assert [str(c.label) for c in node.children] == ["opening..."]
            await tree_cursor_to(pilot, tree, node)  # its line laid out: move_cursor alone may put it nowhere
            line = tree.cursor_line
            for key in ("up", "down", "up", "down"):
                sent = time.perf_counter()
                await pilot.press(key)
                latencies.append(time.perf_counter() - sent)
                assert tree.cursor_line != line, "the key waited for the node"
                line = tree.cursor_line
            assert rebuilding(app)
            assert [str(c.label) for c in node.children] == ["opening..."]
        finally:
            done.set()
            holder.join()
        await wait_for(pilot, lambda: node.children and node.children[0].data is not None)
        fresh = compute_book(A3_B4, source="compute")
        assert [str(c.label) for c in node.children] == [
            node_label(fresh, child) for child in fresh.children(path[-1])
        ]
    record_property("key_latency_ms_while_rebuilt", [round(1000 * s, 1) for s in latencies])
    print("key latency while a node is rebuilt (ms):", [round(1000 * s, 1) for s in latencies])


async def test_the_app_keeps_the_last_books_only(tmp_path):
    app = BlackBoxApp(tmp_path / "books.sqlite", Config(2, 4))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("escape")
        kept = []
        for config in (Config(2, 4), Config(2, 3), Config(3, 3)):
            app.config = config
            await pilot.press("b")
            screen = app.screen
            assert isinstance(screen, StrategyScreen) and screen.config == config
            await wait_for(pilot, lambda screen=screen: screen.book is not None)
            kept.append((config, "remaining"))
            await pilot.press("escape")
            assert list(app.books.keys()) == kept[-BOOKS_KEPT:]
        assert (Config(2, 4), "remaining") not in app.books


@pytest.fixture
def reader_url(pg_server, pg_url):
    """A server database whose tables a writer made, A2_B4 explored (no book stored), and a
    read-only role's URL of it."""
    from bbcore.explore import explore

    store.open_database(pg_url)
    explore(Config(2, 4))
    store.close_database()
    pg_server.create_role("freeze_reader", "Reader5Secret", read_only=True)
    yield pg_url.replace(f"postgres:{pg_server.password}@", "freeze_reader:Reader5Secret@")
    pg_server.drop_role("freeze_reader")


async def assert_no_book_is_said(app: BlackBoxApp, why: str) -> None:
    """The Strategy screen of A2_B4 says there is no book and why, in the message, both
    plots and the tree; and nothing was computed."""
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await open_screen(app, pilot, "b", StrategyScreen)
        await wait_for(pilot, lambda: text_of(app, "#strategy-message").startswith("No remaining book:"))
        message = text_of(app, "#strategy-message")
        assert "no remaining book of A2_B4 is stored" in message and why in message
        for what in ("rays", "points"):
            assert screen.query_one(f"#strategy-{what}", BarPlot).note == "no book (see above)"
        assert str(screen.branch("greedy").label) == "no remaining book of A2_B4"
        assert not screen.branch("greedy").allow_expand
        assert len(app.books) == 0 and screen.book is None
    store.close_database()


async def test_a_read_only_session_with_no_stored_book_says_so(explored):
    await assert_no_book_is_said(BlackBoxApp(explored, Config(2, 4), read_only=True), "(--read-only)")


async def test_a_reader_role_computes_no_book_and_says_why(reader_url):
    await assert_no_book_is_said(BlackBoxApp(reader_url, Config(2, 4)), "read-only here")


async def test_quitting_while_a_book_is_played_stops_it_at_once(tmp_path):
    """ctrl+q while the A4_B8 book is played: the app quits, and the computation stops
    mid-way (the app would otherwise wait for it: 35 s for a reader's A6_B7 book)."""
    db = tmp_path / "quit.sqlite"
    app = ProbedApp(db, A4_B8)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("escape", "b")
        await wait_for(pilot, lambda: plot_note(app).startswith("playing the book:"))
        await pilot.press("ctrl+q")
    assert app.book_ended.wait(timeout=60)
    assert app.book_outcome == "DecodeCancelled"
    store.open_database(db)
    try:
        assert stored_book(A4_B8) is None
    finally:
        store.close_database()
