"""The Strategy screen: the seeker's book as a tree to browse.

The root is the book's first shot over every molecule.  Each child is an
outcome of its parent's shot with its count of candidates, and the shot the
book takes next (or, at a leaf, the molecule or spectral group left); the
figures after it are the rays and points the book still spends below it on
average (``H 229,246 → 3 · +6.3 rays (≤12), +9.9 pts``: absorbed for
229,246 molecules, then shoot 3).  Nodes are made when expanded: the stored levels come from the
database, deeper ones are rebuilt by ``StrategyBook.children``.  Enter (or
``o``) on a leaf opens its molecule, or its spectral group.

Beside the tree: the book's figures, the histograms of rays and of points,
and the hardest molecules.  ``ctrl+r`` switches between the ``remaining``
and ``information`` policies.  The book is read from the database or
computed (and stored) in a thread worker, and kept by the app.
"""

from __future__ import annotations

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Label, Tree

from bbcore.config import Config
from bbcore.numbering import atoms_of
from bbcore.queries import config_state
from bbcore.rays import spectrum
from bbcore.shots import outcome_text
from bbcore.strategy import POLICIES, StrategyBook, StrategyError, line_text
from bbtui.host import Host, host
from bbtui.messages import BookProgress, BookReady
from bbtui.widgets.plot import BarPlot

HARDEST_SHOWN = 10


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
        """Read or compute (and store) the book in a thread, its progress posted."""

        def progress(done: int, total: int) -> None:
            self.post_message(BookProgress(config, by, done, total))

        try:
            made = self.bb_app.strategy_book(config, by, progress)  # type: ignore[arg-type]
        except StrategyError as error:
            self.post_message(BookReady(config, by, None, str(error)))
            return
        self.post_message(BookReady(config, by, made))

    def on_book_progress(self, message: BookProgress) -> None:
        """The spectra read or traced so far, then the tree being played."""
        if (message.config, message.by) != (self.config, self.by) or self.book_shown():
            return
        if message.done < message.total:
            share = message.done / message.total
            note = f"spectra: {message.done:,} of {message.total:,} molecules ({share:.0%})"
        else:
            note = f"playing the {message.by} book over {message.total:,} molecules..."
        self.show_waiting(note)

    def book_shown(self) -> bool:
        """Whether the book of the current policy is shown."""
        return self.book is not None and (self.book.config, self.book.by) == (self.config, self.by)

    def on_book_ready(self, message: BookReady) -> None:
        """Keep the book and show it, if it is still the one asked for."""
        if message.book is None:
            self.query_one("#strategy-message", Label).update(message.error or "no book")
            return
        self.bb_app.books[(message.config, message.by)] = message.book
        if (message.config, message.by) == (self.config, self.by):
            self.show_book(message.book)

    def show_book(self, book: StrategyBook) -> None:
        """The tree (its root open), the figures, the histograms, the hardest molecules."""
        self.book = book
        where = "stored spectra" if book.source == "store" else "traced spectra"
        self.query_one("#strategy-message", Label).update(
            f"{self.config}, by {book.by}: {book.molecules:,} molecules ({where}, {book.seconds:.1f} s). "
            f"Enter opens a node, or a leaf's molecules; ctrl+r: the other policy."
        )
        tree = self.tree
        tree.clear()
        tree.root.data = 0
        tree.root.set_label(self.node_label(0))
        tree.root.allow_expand = not book.node(0).leaf
        tree.root.expand()
        first = book.first_shot
        figures = [
            f"First shot: position {first.position}" if first else "No shot: one spectrum",
            f"rays    mean {book.mean('rays'):.3f}, max {book.maximum('rays')}",
            f"points  mean {book.mean('points'):.3f}, max {book.maximum('points')}",
            "nodes by depth: " + ", ".join(f"{n:,}" for _, n, _ in book.size_by_depth()),
        ]
        self.query_one("#strategy-figures", Label).update("\n".join(figures))
        for what in ("rays", "points"):
            histogram = book.histogram(what)
            keys = list(range(min(histogram), max(histogram) + 1))
            self.query_one(f"#strategy-{what}", BarPlot).show(
                f"molecules by {what}", keys, [histogram.get(k, 0) for k in keys]
            )
        lines = [f"Hardest: {book.hardest_count():,} need {book.maximum('rays')} rays"]
        for number in book.hardest(HARDEST_SHOWN):
            lines.append(
                f"#{number:<8,} {int(book.rays[number - 1])} rays {int(book.points[number - 1])} pts  "
                f"{line_text(book.line(number))}"
            )
        self.query_one("#strategy-hardest", Label).update("\n".join(lines))

    def node_label(self, index: int) -> str:
        """What a node says: its outcome and count, then the next shot and what follows (or
        the molecules left at a leaf)."""
        assert self.book is not None
        node = self.book.node(index)
        head = f"{node.count:,} molecules" if node.outcome is None else outcome_text(node.outcome, node.count)
        if node.leaf:
            numbers = self.book.numbers(index)
            if node.count == 1:
                return f"{head}: molecule #{int(numbers[0]):,}"
            return f"{head}: one spectrum, {', '.join(f'#{int(n):,}' for n in numbers[:4])}"
        rays, most, points, _ = self.book.ahead(index)
        return f"{head} → {node.shot} · +{rays:.1f} rays (≤{most}), +{points:.1f} pts"

    @on(Tree.NodeExpanded, "#strategy-tree")
    def node_expanded(self, event: Tree.NodeExpanded[int]) -> None:
        """Add a node's children the first time it opens."""
        node = event.node
        if self.book is None or node.data is None or node.children:
            return
        for child in self.book.children(node.data):
            leaf = self.book.node(child).leaf
            node.add(self.node_label(child), data=child, allow_expand=not leaf)

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
