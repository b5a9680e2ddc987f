"""What every ``bbcore`` command shares: one-line errors, argument types, tables, progress, the pager."""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from itertools import chain, islice
from typing import TYPE_CHECKING, NamedTuple

from bbcore import decode, queries
from bbcore.config import Config, ConfigError, parse_config
from bbcore.numbering import NumbersTooLarge
from bbcore.progress import Progress
from bbcore.store import (
    Configuration,
    StoreError,
    location,
    open_database,
)

if TYPE_CHECKING:
    from bbcore.store import Location


class Command(NamedTuple):
    """A ``bbcore`` command: the module of ``bbcore.cli`` that registers and runs it, and its line
    in ``bbcore --help``."""

    module: str
    help: str


COMMANDS: dict[str, Command] = {
    "explore": Command("explore", "explore a configuration (create or resume)"),
    "reset": Command("explore", "delete a configuration's rows"),
    "spectrums": Command("explore", "rebuild the spectral groups of an explored configuration"),
    "migrate": Command("explore", "bring compact stores made by an older bbtui to this layout"),
    "status": Command("explore", "the configurations in the database"),
    "show": Command("browse", "molecules as board diagrams with their statistics"),
    "groups": Command("browse", "list the spectral groups, one line each"),
    "report": Command("stats", "ambiguity report, ray records and distributions of a configuration"),
    "export": Command("stats", "export a table as CSV or JSON, streamed"),
    "decode": Command("decode", "molecules agreeing with a game, atom probabilities, best next shots"),
    "strategy": Command("strategy", "the seeker's book: the best-next-shot policy against every molecule"),
    "check": Command(
        "check", "verify a stored configuration (integrity, counts, groups, families, re-traced samples)"
    ),
    "copy": Command("copy", "copy a complete configuration into another database (file or server)"),
}
"""Every command, in the order ``bbcore --help`` lists them (a module's commands side by side).

Here rather than in each module, so that ``bbcore`` lists every command and
imports only the module of the one it runs (``bbcore.cli.build_parser``):
importing them all cost ``bbcore decode`` a sixth of its start."""


def add_command(subparsers: argparse._SubParsersAction, name: str, **kwargs) -> argparse.ArgumentParser:
    """A command's own parser, with its line of help from ``COMMANDS`` (its module's ``register``)."""
    return subparsers.add_parser(name, help=COMMANDS[name].help, **kwargs)


class CLIError(Exception):
    """A user error with a one-line message."""


class UsageError(CLIError):
    """An argument the parser took that the command refuses (a molecule number past the
    configuration's last): said as the parser says its own, ``bbcore show: error: ... (see
    'bbcore show --help')``."""


USER_ERRORS: tuple[type[Exception], ...] = (CLIError, ConfigError, StoreError, NumbersTooLarge)


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line (usage is in ``--help``)."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def database_arg(text: str) -> Location:
    """argparse type for ``--db`` (``bbcore``'s and ``bbtui``'s): a file path, or a server
    (``postgresql://...`` or libpq's key=value); never empty (``--db ""`` was the current folder,
    ". is a directory").

    A connection string libpq cannot parse is refused in one line that never
    shows the text (argparse's own line for a ValueError would quote it,
    password and all).
    """
    if not text.strip():
        raise argparse.ArgumentTypeError("empty: name a database file or a postgresql:// URL")
    try:
        return location(text)
    except StoreError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def config_arg(text: str) -> Config:
    """argparse type for ``AN_BW``."""
    try:
        return parse_config(text)
    except ConfigError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def open_store(args: argparse.Namespace, *, create: bool = False, write: bool | None = None) -> Location:
    """Open the database named by ``--db`` / ``BBTUI_DB`` / the default.

    Readers (``write=None``) open a file they cannot write read-only; the
    commands that write pass ``write=True`` and are refused such a file in
    one line (``store.ReadOnlyError``).
    """
    return open_database(args.db, create=create, write=write)


CONFIG_HELP = "a configuration AN_BW, e.g. A4_B8 (N atoms in a W x W box)"


def add_config_argument(parser: argparse.ArgumentParser) -> None:
    """The positional CONFIG, the same in every command's usage and help."""
    parser.add_argument("config", type=config_arg, metavar="CONFIG", help=CONFIG_HELP)


def add_ranking_argument(parser: argparse.ArgumentParser) -> None:
    """``--by remaining|information``: how next shots are ranked (``bbcore.shots.rank_shots``)."""
    parser.add_argument(
        "--by",
        choices=("remaining", "information"),
        default="remaining",
        help="rank shots by expected candidates left (default) or by expected information in bits",
    )


LARGEST_INTEGER = 2**63 - 1
"""The largest whole number an option takes: SQLite's largest integer (a larger one
raised OverflowError in the middle of a query) and numpy's."""


class WholeNumber:
    """argparse type: a whole number in ``minimum..maximum`` (``maximum`` None: no bound).

    Every numeric option of ``bbcore`` has one, so that a bad number is a
    one-line error naming the option and the text typed, before any work
    starts.  ``maximum`` is None only where the command itself checks the
    number against the configuration before building anything (molecule
    numbers, which may pass 64 bits).
    """

    def __init__(self, minimum: int = 1, maximum: int | None = LARGEST_INTEGER) -> None:
        self.minimum = minimum
        self.maximum = maximum
        self.__name__ = "whole number"  # argparse's word for this type in its own messages

    def __call__(self, text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            shown = text if len(text) <= 40 else text[:37] + "..."
            raise argparse.ArgumentTypeError(f"expected a whole number, got {shown!r}") from None
        if value < self.minimum:
            raise argparse.ArgumentTypeError(f"expected a number >= {self.minimum}, got {value}")
        if self.maximum is not None and value > self.maximum:
            raise argparse.ArgumentTypeError(f"expected a number <= {self.maximum:,}, got {value}")
        return value

    def __repr__(self) -> str:
        return f"WholeNumber({self.minimum}, {self.maximum})"


positive_int = WholeNumber(1)
"""argparse type: a whole number from 1 to ``LARGEST_INTEGER``."""

molecule_number = WholeNumber(1, None)
"""argparse type: a molecule number (1 or more), checked against the configuration by the command."""


def format_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A plain text table: numbers right-aligned with separators, words (row labels) left-aligned."""
    cells = [list(headers)] + [[f"{v:,}" if isinstance(v, int) else str(v) for v in row] for row in rows]
    left = [any(isinstance(row[i], str) for row in rows) for i in range(len(headers))]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    return "\n".join(
        "  ".join(c.ljust(w) if lft else c.rjust(w) for c, w, lft in zip(row, widths, left)).rstrip()
        for row in cells
    )


def clock(seconds: float | None) -> str:
    """Seconds as ``h:mm:ss`` or ``m:ss``; ``?`` when unknown."""
    if seconds is None:
        return "?"
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def progress_line(p: Progress) -> str:
    """One line: done/total, percentage, rate, elapsed, ETA (shards grouped: no rate).

    A rate is shown once there is one; a finished or paused run has no ETA.
    """
    if p.unit != "molecules":
        return (
            f"{p.config} {p.phase}: {p.done:,}/{p.total:,} {p.unit} ({100 * p.fraction:.1f}%)  "
            f"elapsed {clock(p.elapsed)}"
        )
    line = f"{p.config} {p.phase}: {p.done:,}/{p.total:,} ({100 * p.fraction:.1f}%)  "
    if p.rate > 0:  # none yet at a phase's start, none made by a run that only completes
        line += f"{p.rate:,.0f} mol/s  "
    line += f"elapsed {clock(p.elapsed)}"
    if p.phase not in ("complete", "paused"):
        line += f"  ETA {clock(p.eta)}"
    return line


PHASES_BY_TENTHS = ("exploring", "spectrums", "tracing", "grouping", "writing")
"""Long phases, printed every 10% when stderr is not a terminal."""


class StatusLine:
    """One line of progress on stderr: redrawn in place on a terminal, ended or erased by ``close``.

    The terminal handling that every progress printer of the CLI shares
    (explore's, decode's and strategy's, check's); each printer only words its
    line. ``interval`` spaces the redraws; ``erase`` says whether ``close``
    removes the line (a bar) or keeps it (the last state of a run).
    """

    def __init__(self, stream=None, *, interval: float = 0.0, erase: bool = False) -> None:
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty()
        self.interval = interval
        self.erase = erase
        self.shown = False
        self.last = 0.0

    def due(self, *, final: bool = False) -> bool:
        """Whether a redraw is due (``interval`` seconds since the last one; always when ``final``)."""
        now = time.monotonic()
        if not final and now - self.last < self.interval:
            return False
        self.last = now
        return True

    def redraw(self, line: str) -> None:
        """Replace the line on the terminal."""
        self.stream.write("\r\x1b[K" + line)
        self.stream.flush()
        self.shown = True

    def print(self, line: str) -> None:
        """Write a line of its own (off a terminal)."""
        self.stream.write(line + "\n")
        self.stream.flush()

    def close(self) -> None:
        """End the redrawn line, or erase it."""
        if self.live and self.shown:
            self.stream.write("\r\x1b[K" if self.erase else "\n")
            self.stream.flush()


class ProgressPrinter(StatusLine):
    """An exploration's progress: redrawn in place on a terminal, every 10% otherwise."""

    def __init__(self, stream=None) -> None:
        super().__init__(stream)
        self.next_tenth = 0
        self.phase = ""

    def __call__(self, p: Progress) -> None:
        if self.live:
            self.redraw(progress_line(p))
            return
        tenth = int(10 * p.fraction)
        if p.phase != self.phase:  # a new phase starts its tenths again
            self.phase, self.next_tenth = p.phase, 0
        if p.phase not in PHASES_BY_TENTHS or tenth >= self.next_tenth:
            self.print(progress_line(p))
            self.next_tenth = tenth + 1


class MoleculesLine(StatusLine):
    """Molecules done of a long pass (a direct decode, a book's spectra), on a terminal only."""

    def __init__(self, what: str, stream=None) -> None:
        super().__init__(stream, interval=0.2, erase=True)
        self.what = what

    def __call__(self, done: int, total: int) -> None:
        if not self.live or total < decode.BATCH * 4 or not self.due():
            return
        self.redraw(f"{self.what}: {done:,} of {total:,} molecules ({done / total:.0%})")


def require_stored(config: Config) -> None:
    """Raise CLIError unless the configuration is in the open database."""
    if Configuration.get_or_none(Configuration.config == config.name) is None:
        raise CLIError(f"{config.name} is not explored: run 'bbcore explore {config.name}' first")


def require_complete(config: Config) -> None:
    """Raise CLIError unless the configuration's exploration is complete."""
    require_stored(config)
    state = queries.config_state(config)
    if state.copying:
        raise CLIError(copy_unfinished(config))
    if not state.complete:
        raise CLIError(
            f"{config.name} is not completely explored: run 'bbcore explore {config.name}' to finish it"
        )


def copy_unfinished(config: Config) -> str:
    """The line about a configuration whose copy into this database stopped before its end."""
    return (
        f"{config.name} is a copy stopped before its end: run the same 'bbcore copy' again "
        f"to finish it, or 'bbcore reset {config.name}' to delete it"
    )


def emit_lines(head: Iterable[str], rest: Iterable[str]) -> None:
    """Print lines as they are made; on a terminal, through a pager when they outgrow the screen.

    ``rest`` may be long or endless (``show --from 1``, ``groups --all``): it
    is never listed first.  Piped or redirected, each line goes out as it is
    made (in the stream's blocks).  On a terminal, a screenful is gathered (a
    line is kept for the prompt): what fits is printed as is; otherwise a
    pager (``pager_command``) is started on it and fed every further line as
    it is made, so its first page shows at once while the rest is still being
    made, and quitting the pager stops the making (``page_lines``).  The
    whole listing used to be gathered before the pager started: an endless
    one showed nothing and grew in memory until killed.
    """
    lines = chain(head, rest)
    if not sys.stdout.isatty():
        sys.stdout.writelines(f"{line}\n" for line in lines)  # a third of print's cost a line
        return
    screenful = list(islice(lines, shutil.get_terminal_size().lines - 1))
    more = next(lines, None)
    command = pager_command() if more is not None else None
    if command is None:  # a terminal's stdout is line-buffered: each line shows as it is made
        sys.stdout.writelines(
            f"{line}\n" for line in chain(screenful, () if more is None else (more,), lines)
        )
        return
    page_lines(command, chain(screenful, (more,), lines))


def pager_command() -> str | None:
    """The pager ``pydoc`` would run (``$MANPAGER``, ``$PAGER``, else ``pager``, ``less`` or
    ``more`` on the PATH), or None when there is none or no keyboard to drive it."""
    if not sys.stdin.isatty():
        return None
    command = os.environ.get("MANPAGER") or os.environ.get("PAGER")
    if command:
        return command
    if os.environ.get("TERM") in ("dumb", "emacs"):
        return None
    return next((name for name in ("pager", "less", "more") if shutil.which(name)), None)


def page_lines(command: str, lines: Iterable[str]) -> None:
    """Feed ``lines`` to the pager ``command`` one at a time, as they are made, until it quits.

    pydoc's own pager takes the whole text at once, which a long listing
    would make the reader wait for (and hold in memory).  Each line is
    written to the pager's pipe at once, unbuffered: its first page shows as
    soon as the lines for it exist, and nothing is left in a buffer to flush
    into a pipe the pager no longer reads.  Quitting the pager before the end
    closes the pipe, and the lines not made yet are never made (status 0).

    Ctrl-C reaches the pager and this process together (the terminal's
    foreground process group).  Once a SIGINT is received, from the pager's
    start until it has ended, the command ends "interrupted", status 130,
    whatever the pipe says and in whatever order the events come:

    - while a line is made or written (a write waiting on a full pipe too):
      the making stops, the pipe is closed (the pager sees the end of what
      was made and keeps the terminal), and once the pager is quit, 130;
    - ``q`` typed right after ^C can end the pager before the handler has
      run here: the write then fails on the broken pipe first, and it is
      still 130, not the quiet 0 of a pager quit (``interrupt`` notes the
      signal; the note, not the place where a KeyboardInterrupt lands, is
      what counts: it used to be lost when it landed in the wait for the
      pager, which ignored it);
    - after the last line was handed over, or once the pipe broke (the
      pager stopped reading but has not ended yet): the SIGINT is noted,
      the pager keeps the terminal until it ends (nothing here kills it),
      then 130.

    The handler raises KeyboardInterrupt once, only while the lines are
    made, to stop the making wherever it is; at any other moment it only
    notes.  A SIGINT ignored when the command started (a background job of
    a shell without job control) stays ignored.
    """
    received: list[int] = []  # the SIGINTs received while paging: what decides 130
    making = False  # whether a SIGINT should stop the making (raise) rather than be noted

    def interrupt(signum: int, _frame: object) -> None:
        nonlocal making
        received.append(signum)
        if making:
            making = False  # at most once: the making stops, everything after only notes
            raise KeyboardInterrupt

    ours = signal.getsignal(signal.SIGINT) is signal.default_int_handler
    if ours:
        signal.signal(signal.SIGINT, interrupt)
    try:
        pager = subprocess.Popen(command, shell=True, stdin=subprocess.PIPE, bufsize=0)
        encoding = sys.stdout.encoding or "utf-8"  # the terminal's, which the pager writes to
        try:
            try:  # a KeyboardInterrupt from interrupt() lands inside, wherever in the making
                try:
                    with pager.stdin as pipe:  # closed on the way out: the pager sees the end
                        making = not received
                        if received:
                            raise KeyboardInterrupt  # noted while the pager was started
                        for line in lines:
                            data = f"{line}\n".encode(encoding, errors="backslashreplace")
                            while data:  # a raw write may take part of a line over PIPE_BUF
                                data = data[pipe.write(data) :]
                except BrokenPipeError:
                    pass  # the pager was quit before the last line
                finally:
                    making = False
            except KeyboardInterrupt:
                pass  # raised once by interrupt(), which noted it
        finally:  # on an error too: the terminal is the pager's until it ends
            pager.wait()  # interrupt() only notes now
    finally:
        if ours:
            signal.signal(signal.SIGINT, signal.default_int_handler)
    if received:
        raise KeyboardInterrupt  # main: "bbcore: interrupted", status 130
