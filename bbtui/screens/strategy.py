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

The tree has two branches: the greedy book, and beside it the optimal book
of one objective (``bbcore.optimal``: ``rays``, ``worst`` or ``points``,
``ctrl+o`` goes to the next) when a finished search of it is stored; the
screen never searches (minutes to hours): with none stored, the branch, the
message line and the plot say so and give the exact command that computes it.

Beside the tree: the greedy book's figures, the histograms of rays and of
points, and the hardest molecules; then the optimal book's figures, its
histogram of rays (over the same range as the greedy one's: how many
molecules need k rays under each book), and the molecules on which the two
books differ most (``bbcore.optimal.differences``).  ``ctrl+r`` switches
between the ``remaining`` and ``information`` policies.  The book is read from the database or
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
from bbcore.optimal import OBJECTIVES, command_line, differences
from bbcore.optimal import stored_book as stored_optimal_book
from bbcore.queries import config_state
from bbcore.rays import spectrum
from bbcore.shots import outcome_text
from bbcore.strategy import POLICIES, StrategyBook, StrategyError, line_text
from bbtui.host import Host, host, unwatch_app
from bbtui.messages import BookFigures, BookProgress, BookReady, NodeOpened, OptimalFigures, OptimalReady
from bbtui.widgets.plot import BarPlot

HARDEST_SHOWN = 10
DIFFERENCES_SHOWN = 10
"""Molecules listed where the greedy and the optimal books differ most."""
NONE_STORED = "none stored (the command beside computes it)"
"""The optimal branch's label when no optimum of the objective is stored (the command is
given in full beside the tree, where it wraps)."""
GREEDY, OPTIMAL = "greedy", "optimal"
"""The tree's two branches; a tree node's data is (branch, index in that branch's book)."""


def node_label(book: StrategyBook, index: int) -> str:
    """What a node says: its outcome and count, then the next shot and what follows (or the
    molecules left at a leaf).  It reads the node's molecules: in a thread."""
    node = book.node(index)
    head = f"{node.count:,} molecules" if node.outcome is None else outcome_text(node.outcome, node.count)
    if node.leaf:
        numbers = book.numbers(index)
        if node.count == 1:
            return f"{head}: molecule #{int(numbers[0]):,}"
        spectra = spectra_of(book.config, numbers)
        listed = ", ".join(f"#{int(n):,}" for n in numbers[:4])
        if spectra > 1:  # the optimal book for points stops and guesses
            return f"{head}: stop and guess ({spectra} spectra), {listed}"
        return f"{head}: one spectrum, {listed}"
    rays, most, points, _ = book.ahead(index)
    return f"{head} → {node.shot} · +{rays:.1f} rays (≤{most}), +{points:.1f} pts"


def branch_title(book: StrategyBook) -> str:
    """What a branch of the tree is: the greedy book of a policy, or an optimal book."""
    if book.by.startswith("optimal "):
        return f"optimal for {book.by.removeprefix('optimal ')}"
    return f"greedy by {book.by}"


def spectra_of(config: Config, numbers) -> int:
    """How many spectra a leaf's molecules have (one, unless the seeker stopped to guess)."""
    return len({spectrum(config, atoms_of(config, int(n))) for n in numbers})


def differences_text(rows: list[tuple[int, int, int]], by: str, objective: str) -> str:
    """The molecules on which the greedy and the optimal books differ most, as a small table."""
    if not rows:
        return f"The {by} book and the optimal book for {objective} shoot as many rays for every molecule."
    lines = ["Where the books differ most (rays):", f"{'molecule':>9}  {by:>9}  {'optimal':>7}"]
    lines += [f"{number:>9,}  {greedy:>9}  {optimal:>7}" for number, greedy, optimal in rows]
    return "\n".join(lines)


class StrategyScreen(Screen):
    """Browse the strategy book of a configuration."""

    # Under 100 columns the tree takes the whole width (its labels four levels down need
    # about 60 columns) and the figures and plots go below it (``-narrow`` in bbtui.tcss).
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back", show=False),
        Binding("ctrl+r", "policy", "Policy"),
        Binding("o", "open", "Open"),
        Binding("ctrl+o", "objective", "Optimum"),
    ]

    def __init__(self, config: Config, by: str = "remaining") -> None:
        """The book of ``config`` under policy ``by``."""
        super().__init__()
        self.config = config
        self.by = by
        self.book: StrategyBook | None = None
        self.objective = OBJECTIVES[0]
        """The objective of the optimal book shown beside the greedy one."""
        self.optimal: StrategyBook | None = None
        """The optimal book shown (None: none stored, or not read yet)."""
        self.histograms: dict[str, dict[int, int]] = {}
        """The greedy book's histograms shown (rays and points), once worked out."""
        self.tree_nodes: dict[tuple[str, int], TreeNode[tuple[str, int]]] = {}
        """The tree's nodes by branch and index in that branch's book (an opened node's
        children go there)."""

    @property
    def bb_app(self) -> Host:
        """The app, as the screens see it (``bbtui.host``)."""
        return host(self)

    @property
    def tree(self) -> Tree[tuple[str, int]]:
        """The books' tree; each node's data is (branch, its index in that branch's book)."""
        return self.query_one("#strategy-tree", Tree)

    def branch(self, which: str) -> TreeNode[tuple[str, int]]:
        """The root of a branch of the tree: the greedy book's, or the optimal one's."""
        return self.tree.root.children[0 if which == GREEDY else 1]

    def book_of(self, which: str) -> StrategyBook | None:
        """The book of a branch."""
        return self.book if which == GREEDY else self.optimal

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
                yield Label("", id="strategy-optimal-figures")
                yield Label("", id="strategy-differences")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        """Read or compute the book."""
        self.title = f"Strategy book of {self.config}"
        tree = self.tree
        tree.show_root = True
        tree.root.set_label(f"{self.config}: {self.config.nb_mol:,} molecules")
        tree.root.add(f"greedy by {self.by}: reading...", allow_expand=False)
        tree.root.add(f"optimal for {self.objective}: reading...", allow_expand=False)
        tree.root.expand()
        self.load()
        self.load_optimal()

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
        self.histograms = {}
        self.query_one("#strategy-message", Label).update(f"No {self.by} book: {why}.")
        for what in ("rays", "points"):
            self.query_one(f"#strategy-{what}", BarPlot).wait(f"molecules by {what}", "no book (see above)")
        greedy = self.branch(GREEDY)
        greedy.remove_children()
        greedy.data = None
        greedy.allow_expand = False
        greedy.set_label(f"no {self.by} book of {self.config}")
        self.query_one("#strategy-figures", Label).update("")
        self.query_one("#strategy-hardest", Label).update("")

    def show_book(self, book: StrategyBook) -> None:
        """The tree (its root opening), the figures, histograms and hardest molecules being
        worked out: everything that reads more than a node is done in a thread."""
        self.book = book
        self.histograms = {}
        where = "stored spectra" if book.source == "store" else "traced spectra"
        self.query_one("#strategy-message", Label).update(
            f"{self.config}, by {book.by}: {book.molecules:,} molecules ({where}, {book.seconds:.1f} s). "
            f"Enter opens a node, or a leaf's molecules; ctrl+r: the other policy."
        )
        self.show_branch(GREEDY, book)
        self.show_waiting(f"the {book.by} book's figures...")
        self.query_one("#strategy-hardest", Label).update("Hardest: tracing their lines...")
        self.describe_book(book)
        self.compare()

    def show_branch(self, which: str, book: StrategyBook) -> None:
        """A book at the root of its branch, opening (its children made in a thread)."""
        node = self.branch(which)
        for key in [key for key in self.tree_nodes if key[0] == which]:
            del self.tree_nodes[key]
        node.remove_children()
        node.data = (which, 0)
        node.set_label(f"{branch_title(book)}: {book.molecules:,} molecules")
        node.allow_expand = not book.node(0).leaf
        self.tree_nodes[(which, 0)] = node
        node.collapse()
        node.expand()

    # -- the optimal book ------------------------------------------------------

    def load_optimal(self) -> None:
        """The optimal book of the current objective, read from the store in a worker."""
        self.optimal = None
        node = self.branch(OPTIMAL)
        for key in [key for key in self.tree_nodes if key[0] == OPTIMAL]:
            del self.tree_nodes[key]
        node.remove_children()
        node.data = None
        node.allow_expand = False
        node.set_label(f"optimal for {self.objective}: reading...")
        self.query_one("#strategy-optimal-figures", Label).update(
            f"Reading the optimal book for {self.objective}..."
        )
        self.show_histograms()  # the greedy book's alone until the new one is compared
        self.query_one("#strategy-differences", Label).update("")
        self.read_optimal(self.config, self.objective)

    @work(thread=True, exclusive=True, group="strategy-optimal")
    def read_optimal(self, config: Config, objective: str) -> None:
        """Read the stored optimal book in a thread (the screen never searches one)."""
        made = stored_optimal_book(config, objective)  # type: ignore[arg-type]
        note = ""
        if made is None:
            command = command_line(config, objective, self.bb_app.db_path)  # type: ignore[arg-type]
            note = f"no optimal book for {objective} is stored: `{command}` computes it"
        self.post_message(OptimalReady(config, objective, made, note))

    def on_optimal_ready(self, message: OptimalReady) -> None:
        """Show the optimal book beside the greedy one, or say how to compute it."""
        if (message.config, message.objective) != (self.config, self.objective):
            return
        if message.book is None:
            self.optimal = None
            self.branch(OPTIMAL).set_label(f"optimal for {self.objective}: {NONE_STORED}")
            self.query_one("#strategy-optimal-figures", Label).update(
                f"{message.note[0].upper()}{message.note[1:]}."
            )
            return
        self.optimal = message.book
        self.show_branch(OPTIMAL, message.book)
        self.compare()

    def compare(self) -> None:
        """With both books at hand, work out the optimal one's figures beside the greedy one's."""
        if self.book is not None and self.optimal is not None and self.book_shown():
            self.query_one("#strategy-differences", Label).update("Comparing the books...")
            self.compare_books(self.book, self.optimal)

    @work(thread=True, exclusive=True, group="strategy-compare")
    def compare_books(self, greedy: StrategyBook, optimal: StrategyBook) -> None:
        """Both books' rays per molecule, and where they differ most, in a thread."""
        figures = "\n".join(
            [
                f"{branch_title(optimal)}: first shot {optimal.node(0).shot or 'none'}",
                f"rays    mean {optimal.mean('rays'):.3f} ({greedy.by}: {greedy.mean('rays'):.3f}), "
                f"max {optimal.maximum('rays')} ({greedy.maximum('rays')})",
                f"points  mean {optimal.mean('points'):.3f} ({greedy.by}: {greedy.mean('points'):.3f})",
            ]
        )
        histograms = {book.by: book.histogram("rays") for book in (greedy, optimal)}
        rows = differences(greedy.rays, optimal.rays, DIFFERENCES_SHOWN)
        self.post_message(OptimalFigures(greedy, optimal, figures, histograms, rows))

    def on_optimal_figures(self, message: OptimalFigures) -> None:
        """Both histograms of rays over one range, the optimal book's figures and the
        molecules where the books differ most."""
        if message.greedy is not self.book or message.optimal is not self.optimal:
            return
        greedy, optimal = (message.histograms[book.by] for book in (message.greedy, message.optimal))
        keys = list(range(min(*greedy, *optimal), max(*greedy, *optimal) + 1))
        self.query_one("#strategy-rays", BarPlot).compare(
            "molecules by rays, both books",
            keys,
            [
                (message.greedy.by, [greedy.get(k, 0) for k in keys]),
                (message.optimal.by, [optimal.get(k, 0) for k in keys]),
            ],
        )
        self.query_one("#strategy-optimal-figures", Label).update(message.figures)
        self.query_one("#strategy-differences", Label).update(
            differences_text(message.differences, message.greedy.by, self.objective)
        )

    def action_objective(self) -> None:
        """The optimal book of the next objective (rays, worst, points)."""
        self.objective = OBJECTIVES[(OBJECTIVES.index(self.objective) + 1) % len(OBJECTIVES)]
        self.load_optimal()

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
        self.histograms = message.histograms
        self.show_histograms()
        self.query_one("#strategy-hardest", Label).update(message.hardest)
        self.compare()  # the rays plot again, over the range of both books

    def show_histograms(self) -> None:
        """The greedy book's histograms of rays and points (the rays beside the optimal
        book's once both are worked out: ``on_optimal_figures``)."""
        for what, histogram in self.histograms.items():
            keys = list(range(min(histogram), max(histogram) + 1))
            self.query_one(f"#strategy-{what}", BarPlot).show(
                f"molecules by {what}", keys, [histogram.get(k, 0) for k in keys]
            )

    @on(Tree.NodeExpanded, "#strategy-tree")
    def node_expanded(self, event: Tree.NodeExpanded[int]) -> None:
        """A node opened the first time: a line says it is opening, and a thread makes its
        children (rebuilding them below the stored levels) and their labels."""
        node = event.node
        if node.data is None or node.children:
            return
        which, index = node.data
        book = self.book_of(which)
        if book is None:
            return
        node.add_leaf("opening...")
        self.open_node(book, index)

    @work(thread=True, group="strategy-nodes")
    def open_node(self, book: StrategyBook, index: int) -> None:
        """A node's children and the labels of it and them, in a thread."""
        children = [(child, node_label(book, child), book.node(child).leaf) for child in book.children(index)]
        self.post_message(NodeOpened(book, index, node_label(book, index), children))

    def on_node_opened(self, message: NodeOpened) -> None:
        """Put an opened node's children in the tree, in place of "opening..."."""
        which = GREEDY if message.book is self.book else OPTIMAL if message.book is self.optimal else None
        node = self.tree_nodes.get((which, message.index)) if which else None
        if which is None or node is None:
            return
        label = message.label
        if message.index == 0:
            # the molecules are the tree root's: the branch says whose book it is instead
            head = f"{message.book.molecules:,} molecules"
            label = f"{branch_title(message.book)}{label.removeprefix(head)}"
        node.set_label(label)
        node.remove_children()
        for child, label, leaf in message.children:
            self.tree_nodes[(which, child)] = node.add(label, data=(which, child), allow_expand=not leaf)

    @on(Tree.NodeSelected, "#strategy-tree")
    def node_selected(self, event: Tree.NodeSelected[tuple[str, int]]) -> None:
        """Enter on a leaf opens its molecules."""
        if event.node.data is None:
            return
        which, index = event.node.data
        book = self.book_of(which)
        if book is not None and book.node(index).leaf:
            self.open_leaf(book, index)

    def action_open(self) -> None:
        """Open the highlighted leaf's molecule or spectral group."""
        node = self.tree.cursor_node
        if node is None or node.data is None:
            return
        which, index = node.data
        book = self.book_of(which)
        if book is None:
            return
        if not book.node(index).leaf:
            self.notify("Not a leaf: the book shoots again here (Enter opens the node).")
            return
        self.open_leaf(book, index)

    def open_leaf(self, book: StrategyBook, index: int) -> None:
        """A leaf's molecule, or its spectral group (side by side when the configuration is
        explored, else its first molecule); a leaf where the seeker stops to guess among
        several spectra (the optimal book for points) opens its first molecule."""
        numbers = [int(n) for n in book.numbers(index)]
        if len(numbers) > 1 and spectra_of(self.config, numbers) > 1:
            self.notify(
                f"The seeker guesses among {len(numbers)} molecules here: {', '.join(map(str, numbers))}."
            )
            self.bb_app.open_molecule(self.config, numbers[0])
        elif len(numbers) == 1:
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
