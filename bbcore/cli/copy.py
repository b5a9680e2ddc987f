"""``bbcore copy CONFIG TARGET [--replace] [--page N]``: one complete configuration into another store.

The source is ``--db`` (or ``BBTUI_DB``, or the default file); ``TARGET``
is a file path or a server URL.  The copy is ``bbcore.copy``'s: paged by
primary key, COPY into a server, the configuration marked complete only in
its last transaction.  Progress goes to stderr: a bar redrawn on a terminal,
a line per table otherwise.  Ctrl-C or SIGTERM stops it after the page
being written (exit 130); a lost connection or kill -9 loses only the page
under way; either way the pages written are kept, and the same command
resumes it.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
import time

from bbcore.cli.common import (
    StatusLine,
    WholeNumber,
    add_command,
    add_config_argument,
    clock,
    database_arg,
)
from bbcore.cli.explore import PAUSE_SIGNALS
from bbcore.config import Config
from bbcore.copy import PAGE, copy_configuration
from bbcore.store import default_path
from bbcore.words import plural

BAR = 24


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``copy`` command."""
    parser = add_command(
        subparsers,
        "copy",
        description="Copy one complete configuration of the database (--db) into TARGET, an SQLite "
        "file or a PostgreSQL server URL (postgresql://USER@HOST/DBNAME), both store kinds, in "
        "bounded memory. The target's configuration is marked complete only in the copy's last "
        "transaction; a copy stopped (Ctrl-C, kill -9, a lost connection) resumes when the same "
        "command is run again. Refused: a configuration not complete in the source, a target that "
        "already holds it (unless --replace), a target that cannot be written.",
    )
    add_config_argument(parser)
    parser.add_argument(
        "target", type=database_arg, metavar="TARGET", help="an SQLite file, or postgresql://USER@HOST/DBNAME"
    )
    parser.add_argument(
        "--replace",
        action="store_true",
        help="delete the configuration in TARGET first if it is there (complete or not)",
    )
    parser.add_argument(
        "--page",
        type=WholeNumber(1, 1_000_000),
        default=PAGE,
        metavar="N",
        help=f"rows read and written at a time, each page one transaction (default {PAGE:,})",
    )
    parser.set_defaults(handler=run_copy)


class CopyBar(StatusLine):
    """The copy's progress on stderr: a bar redrawn on a terminal, a line per table copied otherwise."""

    def __init__(self, config: Config, stream=None) -> None:
        super().__init__(stream, interval=0.1, erase=True)
        self.config = config
        self.started = time.monotonic()
        self.table = ""
        self.done = self.total = 0

    def __call__(self, table: str, done: int, total: int) -> None:
        if table != self.table:
            self.finished()
            self.table = table
        self.done, self.total = done, total
        if not self.live or not self.due(final=done >= total):
            return
        fraction = done / total if total else 1.0
        filled = int(BAR * fraction)
        elapsed = clock(time.monotonic() - self.started)
        self.redraw(
            f"{self.config.name} copy: {table:<14} [{'#' * filled}{'.' * (BAR - filled)}] "
            f"{100 * fraction:3.0f}%  {done:,}/{total:,} rows  elapsed {elapsed}"
        )

    def finished(self) -> None:
        """Off a terminal: a line for the table just copied."""
        if self.table and not self.live:
            self.print(f"{self.config.name} copy: {self.table} copied ({self.done:,}/{self.total:,} rows)")

    def close(self) -> None:
        self.finished()
        self.table = ""
        super().close()


def run_copy(args: argparse.Namespace) -> int:
    """``bbcore copy CONFIG TARGET``; Ctrl-C or SIGTERM stops it after the page being written."""
    config: Config = args.config
    source = args.db or default_path()
    bar = CopyBar(config)
    started = time.monotonic()
    stop = threading.Event()

    def stopping(signum, frame) -> None:
        if stop.is_set() and signum == signal.SIGINT:
            raise KeyboardInterrupt  # a second Ctrl-C: at once (the page under way is rolled back)
        stop.set()

    previous = {number: signal.signal(number, stopping) for number in PAUSE_SIGNALS}
    try:
        result = copy_configuration(
            config, source, args.target, replace=args.replace, page=args.page, progress=bar, stop=stop
        )
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        bar.close()
    if result.stopped:
        print(
            f"bbcore: {config.name} copy stopped at {result.rows + result.resumed:,}/{result.total:,} rows; "
            "what was copied is kept, not shown as complete: run the same command again to resume",
            file=sys.stderr,
        )
        return 130
    resumed = f", {result.resumed:,} by the run it resumed" if result.resumed else ""
    print(
        f"{config.name} ({result.store} store) copied to {args.target}: "
        f"{plural(result.rows + result.resumed, 'row')}{resumed}, in {clock(time.monotonic() - started)}"
    )
    return 0
