"""The ``strategy`` command of ``bbcore``: the seeker's book over every molecule.

``bbcore strategy CONFIG [--by remaining|information] [--json]`` plays the
best-next-shot policy (``bbcore.strategy``) against every molecule of the
configuration and prints the best first shot with its figures, the mean and
maximum of rays and of points, both histograms (a table and a plot), the
tree's size by depth and the hardest molecules.  ``--json`` prints one
object, the shape of ``StrategyBook.summary``.

The book is read from the database when it was stored before (``--recompute``
plays it again); otherwise it is computed, from the stored spectra when the
configuration is explored and traced otherwise, then stored.  A database
that cannot be written (read-only, locked) is said in one line on stderr and
the book is still printed.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import sys

from bbcore import store
from bbcore.cli.common import (
    CLIError,
    MoleculesLine,
    StatusLine,
    WholeNumber,
    add_command,
    add_config_argument,
    add_ranking_argument,
    format_table,
    open_store,
)
from bbcore.config import Config
from bbcore.numbering import atoms_of, molecule_string
from bbcore.optimal import CHECKPOINT_SECONDS, MEMORY_MB, OBJECTIVES, OptimalError, optimal
from bbcore.plot import plain_chart
from bbcore.rays import spectrum
from bbcore.render import render_board, side_by_side
from bbcore.shots import outcomes_text
from bbcore.store import error_line
from bbcore.strategy import (
    StrategyBook,
    StrategyError,
    compute_book,
    line_text,
    save_book,
    stored_book,
)
from bbcore.words import plural

HARDEST_SHOWN = 6
"""Hardest molecules drawn as boards (all ``HARDEST`` are listed)."""
PLOT_HEIGHT = 14
POLICY_WORDS = {"remaining": "fewest expected candidates left", "information": "most expected information"}


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``strategy`` command."""
    parser = add_command(
        subparsers,
        "strategy",
        description="Play the best-next-shot policy against every molecule of a configuration, as "
        "one decision tree: shoot the position leaving the fewest expected candidates (ties: "
        "most information, then the lowest position), until every candidate shares one "
        "spectrum. Prints the best first shot, the rays and points needed (mean, maximum, "
        "histograms), the tree's size by depth and the hardest molecules. The book is stored in "
        "the database and read from there next time.",
    )
    add_config_argument(parser)
    add_ranking_argument(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--recompute", action="store_true", help="play the book again even if it is stored")
    parser.add_argument(
        "--optimal",
        choices=OBJECTIVES,
        metavar="OBJECTIVE",
        help="search the exactly optimal strategy for rays (mean rays), worst (most rays) or points "
        "(mean points with a final guess, 5 a wrong atom), by branch and bound; stored, and resumed "
        "when stopped",
    )
    parser.add_argument(
        "--memory",
        type=WholeNumber(16, 1_000_000),
        default=MEMORY_MB,
        metavar="MB",
        help=f"with --optimal: the search's memo is kept under this many MB (default {MEMORY_MB})",
    )
    parser.add_argument(
        "--seconds",
        type=WholeNumber(1, 10**9),
        metavar="S",
        help="with --optimal: stop the search after S seconds and print the bounds proved so far",
    )
    parser.add_argument(
        "--checkpoint",
        type=WholeNumber(1, 10**6),
        default=int(CHECKPOINT_SECONDS),
        metavar="S",
        help="with --optimal: store what the search proved every S seconds "
        f"(default {int(CHECKPOINT_SECONDS)})",
    )
    parser.set_defaults(handler=run_strategy)


def run_strategy(args: argparse.Namespace) -> int:
    """``bbcore strategy CONFIG``."""
    config: Config = args.config
    if args.optimal is None and args.seconds is not None:
        raise CLIError("--seconds goes with --optimal")
    where = open_store(args, create=True)
    if args.optimal is not None:
        return run_optimal(args)
    progress = MoleculesLine(f"{config.name}: spectra")
    try:
        made = None if args.recompute else stored_book(config, args.by)
        if made is None and store.is_read_only() and store.is_server(where):
            # a role that may only read computes no book it cannot store (docs/server.md): exit 2
            raise CLIError(store.read_only_message(where))
        computed = made is None
        if made is None:
            made = compute_book(config, args.by, progress=progress)
    except StrategyError as error:
        raise CLIError(str(error)) from None
    finally:
        progress.close()
    if computed:
        path = store.opened.path or store.default_path()
        try:
            if store.is_read_only():
                raise sqlite3.OperationalError("attempt to write a readonly database")
            save_book(made)
        except store.DATABASE_ERRORS as error:
            print(f"bbcore: the book is not stored: {error_line(error, path)}", file=sys.stderr)
    if args.json:
        print(json.dumps(made.summary()))
    else:
        width = shutil.get_terminal_size((100, 24)).columns
        sys.stdout.write(text_report(made, computed, width))
    return 0


def text_report(book: StrategyBook, computed: bool, width: int = 100) -> str:
    """The book as text: first shot, figures, histograms, tree by depth, hardest molecules."""
    config = book.config
    where = "the stored spectra" if book.source == "store" else "spectra traced now"
    when = "computed now" if computed else "read from the database (computed earlier)"
    lines = [
        f"{config.name} strategy book, by {book.by} ({POLICY_WORDS[book.by]}): "
        f"{book.molecules:,} molecules, {when}, {book.seconds:.1f} s from {where}.",
        "",
    ]
    first = book.first_shot
    if first is None:
        lines.append("Every molecule has the same spectrum: no ray can tell them apart.")
    else:
        lines += [
            f"Best first shot: position {first.position}, {first.remaining:,.2f} candidates left on "
            f"average, {first.information:.3f} bits, {plural(len(first.outcomes), 'result')}:",
            "  " + outcomes_text(first, 8),
        ]
    lines += [
        "",
        format_table(
            ("", "mean", "max"),
            [
                ("rays", f"{book.mean('rays'):.3f}", book.maximum("rays")),
                ("points", f"{book.mean('points'):.3f}", book.maximum("points")),
            ],
        ),
    ]
    plot_width = max(40, min(width, 100) - 2)
    for what, unit in (("rays", "rays shot"), ("points", "points scored")):
        histogram = book.histogram(what)
        keys = list(range(min(histogram), max(histogram) + 1))
        rows = [(k, histogram.get(k, 0), share(histogram.get(k, 0), book.molecules)) for k in keys]
        lines += ["", f"Molecules by {unit}:", format_table((what, "molecules", "share"), rows)]
        lines += [
            "",
            plain_chart(f"molecules by {unit}", keys, [n for _, n, _ in rows], plot_width, PLOT_HEIGHT),
        ]
    lines += [
        "",
        "The tree by depth (a node is a state of the game; a leaf, one spectrum left):",
        format_table(("rays shot", "nodes", "leaves"), book.size_by_depth()),
    ]
    hardest = book.hardest()
    lines += [
        "",
        f"Hardest molecules: {plural(book.hardest_count(), 'molecule')} "
        f"{'needs' if book.hardest_count() == 1 else 'need'} {book.maximum('rays')} rays; "
        f"the {len(hardest)} with most rays, then most points:",
        format_table(
            ("number", "rays", "points", "the book's shots"),
            [(n, int(book.rays[n - 1]), int(book.points[n - 1]), line_text(book.line(n))) for n in hardest],
        ),
        "",
    ]
    boards = []
    for n in hardest[:HARDEST_SHOWN]:
        atoms = atoms_of(config, n)
        board = render_board(config.width, molecule_string(config, atoms), spectrum(config, atoms))
        boards.append(f"number {n}\n{board}")
    if boards:
        lines += [side_by_side(boards, max_width=width), ""]
    return "\n".join(lines)


def share(count: int, total: int) -> str:
    """A percentage with two decimals; ``<0.01%`` rather than a misleading ``0.00%``."""
    percent = 100 * count / total
    return "<0.01%" if 0 < percent < 0.005 else f"{percent:.2f}%"


class SearchLine(StatusLine):
    """A search's progress: sets searched, the rate, the memo; on a terminal only."""

    def __init__(self, what: str, stream=None) -> None:
        super().__init__(stream, interval=0.5, erase=True)
        self.what = what

    def __call__(self, search) -> None:
        if not self.live or not self.due():
            return
        self.redraw(
            f"{self.what}: {search.nodes:,} sets searched, {search.rate:,.0f} a second, "
            f"{len(search.memo):,} remembered (of {search.limit:,})"
        )


def run_optimal(args: argparse.Namespace) -> int:
    """``bbcore strategy CONFIG --optimal OBJECTIVE``."""
    config: Config = args.config
    writable = not store.is_read_only()
    if not writable:
        print("bbcore: the database is read-only: the search is not stored", file=sys.stderr)
    progress = SearchLine(f"{config.name}, optimal {args.optimal}")
    try:
        result, computed = optimal(
            config,
            args.optimal,
            recompute=args.recompute,
            memory=args.memory,
            seconds=args.seconds,
            checkpoint=args.checkpoint,
            progress=progress,
            store=writable,
        )
    except OptimalError as error:
        raise CLIError(str(error)) from None
    except KeyboardInterrupt:
        progress.close()
        print(
            f"bbcore: the search of {config.name} ({args.optimal}) is paused, what it proved is "
            "stored: run the same command again to go on",
            file=sys.stderr,
        )
        return 130
    finally:
        progress.close()
    if args.json:
        print(json.dumps(result))
    else:
        sys.stdout.write(optimal_report(result, computed))
    return 0


OBJECTIVE_WORDS = {
    "rays": "rays on average",
    "worst": "rays at most",
    "points": "points on average (5 a wrong atom of the final guess)",
}


def optimal_report(result: dict, computed: bool) -> str:
    """The optimum as text."""
    optimum = result["optimum"]
    objective = optimum["objective"]
    words = OBJECTIVE_WORDS[objective]
    when = "searched now" if computed else "read from the database (searched earlier)"
    head = (
        f"{result['config']}, the optimal strategy for {objective} ({words}): {result['molecules']:,} "
        f"molecules, {when}, {optimum['seconds']:,.1f} s, {optimum['nodes']:,} sets searched."
    )
    lines = [head, ""]
    if optimum["proved"]:
        lines.append(f"Optimum: {optimum['value']} = {decimal(optimum['value'])} {words}, proved.")
    else:
        lines.append(
            f"Not proved yet: {optimum['lower']} <= optimum <= {optimum['upper']} (the gap: "
            f"{optimum['gap']}); {decimal(optimum['lower'])} to {decimal(optimum['upper'])} {words}. "
            "Run the same command again to go on."
        )
    lines.append(f"The greedy book (by remaining): {optimum['greedy']} = {decimal(optimum['greedy'])}.")
    first = optimum["first_shot"] or "none" if optimum["proved"] else "not known yet"
    lines.append(f"First shot: {first} (the greedy book's: {optimum['greedy_first_shot'] or 'none'}).")
    difference = optimum.get("first_difference")
    if optimum["proved"] and difference is None:
        lines.append("The greedy book's shots are optimal at every node looked at.")
    elif difference is not None:
        after = f"after {' '.join(difference['path'])}" if difference["path"] else "at the start"
        lines.append(
            f"The greedy book first errs {after} ({difference['molecules']:,} candidates): it "
            f"shoots {difference['greedy_shot']} (total {difference['greedy_total']:,}) where "
            f"{difference['optimal_shot']} gives {difference['optimal_total']:,}."
        )
    if optimum["proved"]:
        histogram = result["rays"]["histogram"]
        rows = [(int(k), n, share(n, result["molecules"])) for k, n in histogram.items()]
        lines += [
            "",
            "Molecules by rays shot (the optimal book):",
            format_table(("rays", "molecules", "share"), rows),
        ]
    return "\n".join(lines) + "\n"


def decimal(fraction: str) -> str:
    """A fraction string as a decimal with 3 places."""
    from fractions import Fraction

    return f"{float(Fraction(fraction)):.3f}"
