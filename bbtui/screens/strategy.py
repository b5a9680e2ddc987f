"""The Strategy screen: the seeker's book as a tree to browse.

The root is the book's first shot over every molecule.  Each child is an
outcome of its parent's shot with its count of candidates, and the shot the
book takes next (or, at a leaf, the molecule or spectral group left); the
figures after it are the rays and points the book still spends below it on
average (``H 229,246 → 3 · +6.3 rays (≤12), +9.9 pts``: absorbed for
229,246 molecules, then shoot 3).  Nodes are made when expanded (in a thread,
"opening..." meanwhile): the stored levels come from the database, deeper ones
are rebuilt by ``StrategyBook.children``.  Enter (or ``o``) on a leaf opens its
molecule, or its spectral group.

Beside the tree: the book's figures, the histograms of rays and of points,
and the hardest molecules.  ``ctrl+r`` switches between the ``remaining``
and ``information`` policies.  The book is read from the database or
computed (and stored) in a thread worker, and kept by the app (its last
few).

No key waits for the engine: the book, each node opened (its children and
their labels, which read the node's molecules) and the figures beside the
tree (the hardest molecules' lines rebuild nodes) are made in thread
workers, whose kernels release the GIL.  Leaving the screen cancels them.
A read-only session computes no book: with none stored, the screen says so
and why, in the message line, both plots and the tree.
"""

from __future__ import annotations

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Label, Tree
from textual.widgets.tree import TreeNode
from textual.worker import get_current_worker

from bbcore.config import Config
from bbcore.decode import DecodeCancelled
from bbcore.numbering import atoms_of
from bbcore.queries import config_state
from bbcore.rays import spectrum
from bbcore.shots import outcome_text
from bbcore.strategy import POLICIES, StrategyBook, StrategyError, line_text
from bbtui.host import Host, host, unwatch_app
from bbtui.messages import BookFigures, BookProgress, BookReady, NodeOpened
from bbtui.widgets.plot import BarPlot

HARDEST_SHOWN = 10


def node_label(book: StrategyBook, index: int) -> str:
    """What a node says: its outcome and count, then the next shot and what follows (or the
    molecules left at a leaf).  It reads the node's molecules: in a thread."""
    node = book.node(index)
    head = f"{node.count:,} molecules" if node.outcome is None else outcome_text(node.outcome, node.count)
    if node.leaf:
        numbers = book.numbers(index)
        if node.count == 1:
            return f"{head}: molecule #{int(numbers[0]):,}"
        return f"{head}: one spectrum, {', '.join(f'#{int(n):,}' for n in numbers[:4])}"
    rays, most, points, _ = book.ahead(index)
    return f"{head} → {node.shot} · +{rays:.1f} rays (≤{most}), +{points:.1f} pts"


class StrategyScreen(Screen):
    """Browse the strategy book of a configuration."""

    # Under 100 columns the tree takes the whole width (its labels four levels down need
    # about 60 columns) and the figures and plots go below it (``-narrow`` in bbtui.tcss).
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", show=False),
        Binding("ctrl+r", "policy", "Policy"),
        Binding("o", "open", "Open"),
    ]

    def __init__(self, config: Config, by: str = "remaining") -> None:
        """The book of ``config`` under policy ``by``."""
        super().__init__()
        self.config = config
        self.by = by
        self.book: StrategyBook | None = None
        self.tree_nodes: dict[int, TreeNode[int]] = {}
        """The tree's nodes by their index in the book (an opened node's children go there)."""

    @property
    def bb_app(self) -> Host:
        """The app, as the screens see it (``bbtui.host``)."""
        return host(self)

    @property
    def tree(self) -> Tree[int]:
        """The book's tree; each node's data is its index in the book."""
        return self.query_one("#strategy-tree", Tree)

    def compose(self) -> ComposeResult:
        """The tree beside the figures, histograms and hardest molecules."""
        yield Header()
        yield Label("", id="strategy-message", classes="message")
        with Horizontal(id="strategy-main"):
            yield Tree("", id="strategy-tree")
            with VerticalScroll(id="strategy-side"):
                yield Label("", id="strategy-figures")
                yield BarPlot(id="strategy-rays")
                yield BarPlot(id="strategy-points")
                yield Label("", id="strategy-hardest")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        """Read or compute the book."""
        self.title = f"Strategy book of {self.config}"
        self.tree.show_root = True
        self.load()

    def on_unmount(self) -> None:
        """Closed: drop the watchers its widgets set on the app, which would keep them alive."""
        unwatch_app(self, self)

    def load(self) -> None:
        """The book of the current policy: the app's, else from a worker."""
        book = self.bb_app.books.get((self.config, self.by))
        if book is not None:
            self.show_book(book)
            return
        self.query_one("#strategy-message", Label).update(
            f"Reading the {self.by} book of {self.config}, or computing it (a few seconds for A4_B8)..."
        )
        self.show_waiting(f"reading the {self.by} book...")
        self.run_book(self.config, self.by)

    def show_waiting(self, note: str) -> None:
        """The plots say what the book waits for, with its progress, not "nothing to plot"."""
        for what in ("rays", "points"):
            self.query_one(f"#strategy-{what}", BarPlot).wait(f"molecules by {what}", note)

    @work(thread=True, exclusive=True, group="strategy-book")
    def run_book(self, config: Config, by: str) -> None:
        """Read or compute (and store) the book in a thread, its progress posted; leaving the
        screen, another policy or quitting cancels it (the worker's ``cancelled_event``,
        checked between two batches of molecules)."""

        def progress(done: int, total: int) -> None:
            self.post_message(BookProgress(config, by, done, total))

        def played(done: int, total: int) -> None:
            self.post_message(BookProgress(config, by, done, total, "playing"))

        stop = get_current_worker().cancelled_event
        try:
            made = self.bb_app.strategy_book(config, by, progress, played, stop)  # type: ignore[arg-type]
        except StrategyError as error:
            self.post_message(BookReady(config, by, None, str(error)))
            return
        except DecodeCancelled:
            return
        self.post_message(BookReady(config, by, made))

    def on_book_progress(self, message: BookProgress) -> None:
        """The spectra read or traced so far, then the molecules placed in the tree."""
        if (message.config, message.by) != (self.config, self.by) or self.book_shown():
            return
        share = message.done / message.total if message.total else 1.0
        if message.phase == "playing":
            note = f"playing the book: {message.done:,} of {message.total:,} molecules placed ({share:.0%})"
        elif message.done < message.total:
            note = f"spectra: {message.done:,} of {message.total:,} molecules ({share:.0%})"
        else:
            note = f"playing the {message.by} book over {message.total:,} molecules..."
        self.show_waiting(note)

    def book_shown(self) -> bool:
        """Whether the book of the current policy is shown."""
        return self.book is not None and (self.book.config, self.book.by) == (self.config, self.by)

    def on_book_ready(self, message: BookReady) -> None:
        """Keep the book and show it, if it is still the one asked for; else say plainly
        that there is no book, and why."""
        if (message.config, message.by) != (self.config, self.by):
            if message.book is not None:
                self.bb_app.books.set((message.config, message.by), message.book)
            return
        if message.book is None:
            self.show_no_book(message.error or "no book")
            return
        self.bb_app.books.set((message.config, message.by), message.book)
        self.show_book(message.book)

    def show_no_book(self, why: str) -> None:
        """No book to show: the message says why, the plots and the tree that there is none."""
        self.book = None
        self.query_one("#strategy-message", Label).update(f"No {self.by} book: {why}.")
        for what in ("rays", "points"):
            self.query_one(f"#strategy-{what}", BarPlot).wait(f"molecules by {what}", "no book (see above)")
        tree = self.tree
        tree.clear()
        tree.root.data = None
        tree.root.allow_expand = False
        tree.root.set_label(f"no {self.by} book of {self.config}")
        self.query_one("#strategy-figures", Label).update("")
        self.query_one("#strategy-hardest", Label).update("")

    def show_book(self, book: StrategyBook) -> None:
        """The tree (its root opening), the figures, histograms and hardest molecules being
        worked out: everything that reads more than a node is done in a thread."""
        self.book = book
        where = "stored spectra" if book.source == "store" else "traced spectra"
        self.query_one("#strategy-message", Label).update(
            f"{self.config}, by {book.by}: {book.molecules:,} molecules ({where}, {book.seconds:.1f} s). "
            f"Enter opens a node, or a leaf's molecules; ctrl+r: the other policy."
        )
        tree = self.tree
        tree.clear()
        tree.root.data = 0
        tree.root.set_label(f"{book.molecules:,} molecules")
        tree.root.allow_expand = not book.node(0).leaf
        self.tree_nodes = {0: tree.root}
        tree.root.expand()
        self.show_waiting(f"the {book.by} book's figures...")
        self.query_one("#strategy-hardest", Label).update("Hardest: tracing their lines...")
        self.describe_book(book)

    @work(thread=True, exclusive=True, group="strategy-figures")
    def describe_book(self, book: StrategyBook) -> None:
        """The figures, histograms and hardest lines of a book, in a thread."""
        first = book.first_shot
        figures = [
            f"First shot: position {first.position}" if first else "No shot: one spectrum",
            f"rays    mean {book.mean('rays'):.3f}, max {book.maximum('rays')}",
            f"points  mean {book.mean('points'):.3f}, max {book.maximum('points')}",
            "nodes by depth: " + ", ".join(f"{n:,}" for _, n, _ in book.size_by_depth()),
        ]
        histograms = {what: book.histogram(what) for what in ("rays", "points")}  # type: ignore[arg-type]
        lines = [f"Hardest: {book.hardest_count():,} need {book.maximum('rays')} rays"]
        for number in book.hardest(HARDEST_SHOWN):
            lines.append(
                f"#{number:<8,} {int(book.rays[number - 1])} rays {int(book.points[number - 1])} pts  "
                f"{line_text(book.line(number))}"
            )
        self.post_message(BookFigures(book, "\n".join(figures), histograms, "\n".join(lines)))

    def on_book_figures(self, message: BookFigures) -> None:
        """Show the figures worked out for the book shown."""
        if message.book is not self.book:
            return
        self.query_one("#strategy-figures", Label).update(message.figures)
        for what, histogram in message.histograms.items():
            keys = list(range(min(histogram), max(histogram) + 1))
            self.query_one(f"#strategy-{what}", BarPlot).show(
                f"molecules by {what}", keys, [histogram.get(k, 0) for k in keys]
            )
        self.query_one("#strategy-hardest", Label).update(message.hardest)

    @on(Tree.NodeExpanded, "#strategy-tree")
    def node_expanded(self, event: Tree.NodeExpanded[int]) -> None:
        """A node opened the first time: a line says it is opening, and a thread makes its
        children (rebuilding them below the stored levels) and their labels."""
        node = event.node
        if self.book is None or node.data is None or node.children:
            return
        node.add_leaf("opening...")
        self.open_node(self.book, node.data)

    @work(thread=True, group="strategy-nodes")
    def open_node(self, book: StrategyBook, index: int) -> None:
        """A node's children and the labels of it and them, in a thread."""
        children = [(child, node_label(book, child), book.node(child).leaf) for child in book.children(index)]
        self.post_message(NodeOpened(book, index, node_label(book, index), children))

    def on_node_opened(self, message: NodeOpened) -> None:
        """Put an opened node's children in the tree, in place of "opening..."."""
        node = self.tree_nodes.get(message.index)
        if message.book is not self.book or node is None:
            return
        node.set_label(message.label)
        node.remove_children()
        for child, label, leaf in message.children:
            self.tree_nodes[child] = node.add(label, data=child, allow_expand=not leaf)

    @on(Tree.NodeSelected, "#strategy-tree")
    def node_selected(self, event: Tree.NodeSelected[int]) -> None:
        """Enter on a leaf opens its molecules."""
        if event.node.data is not None and self.book is not None and self.book.node(event.node.data).leaf:
            self.open_leaf(event.node.data)

    def action_open(self) -> None:
        """Open the highlighted leaf's molecule or spectral group."""
        node = self.tree.cursor_node
        if node is None or node.data is None or self.book is None:
            return
        if not self.book.node(node.data).leaf:
            self.notify("Not a leaf: the book shoots again here (Enter opens the node).")
            return
        self.open_leaf(node.data)

    def open_leaf(self, index: int) -> None:
        """A leaf's molecule, or its spectral group (side by side when the configuration is
        explored, else its first molecule)."""
        assert self.book is not None
        numbers = [int(n) for n in self.book.numbers(index)]
        if len(numbers) == 1:
            self.bb_app.open_molecule(self.config, numbers[0])
        elif config_state(self.config).complete:
            self.bb_app.open_group(self.config, spectrum(self.config, atoms_of(self.config, numbers[0])))
        else:
            self.notify(f"{len(numbers)} molecules share this spectrum: {', '.join(map(str, numbers))}.")
            self.bb_app.open_molecule(self.config, numbers[0])

    def action_policy(self) -> None:
        """The book of the other policy."""
        self.by = POLICIES[1 - POLICIES.index(self.by)]
        self.load()
