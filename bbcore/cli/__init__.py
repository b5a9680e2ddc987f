"""The ``bbcore`` command line: a package, one module per command family.

- ``explore``: explore, reset, spectrums, status;
- ``browse``: show, groups;
- ``stats``: report, export;
- ``decode``: decode;
- ``strategy``: strategy (the seeker's book);
- ``common``: what they share (one-line errors, argument types, tables,
  progress, the pager).  Command modules import ``common`` only, never this
  package's ``__init__``, so there is no import circle.

Every command is a function ``run_<name>(args) -> int`` registered by its
module's ``register(subparsers)``.  Every expected failure (a bad
configuration, an unusable database, ...) is raised as one of
``USER_ERRORS`` and printed as one line on stderr with exit status 2, as
is any error SQLite raises (``store.DATABASE_ERRORS``: a file that turned
read-only or corrupt under a command); Ctrl-C exits with status 130.  When
a command ends, the database is closed and, if it was written, left as one
self-contained file (``store.close_database``).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from bbcore import __version__, store
from bbcore.cli.common import USER_ERRORS, OneLineParser
from bbcore.store import DATABASE_ERRORS, default_path, error_line


def build_parser() -> argparse.ArgumentParser:
    """The parser with every registered command."""
    from bbcore.cli import browse, check, decode, explore, stats, strategy

    parser = OneLineParser(
        prog="bbcore",
        description="Explore Black Box configurations exhaustively and query the results.",
        epilog=f"database: --db PATH, else $BBTUI_DB, else {default_path()}",
    )
    parser.add_argument("--version", action="version", version=f"bbcore {__version__}")
    parser.add_argument(
        "--db",
        type=Path,
        default=None,
        metavar="PATH",
        help="SQLite database file (default: $BBTUI_DB or ~/.local/share/bbtui/blackbox.sqlite)",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in (explore, browse, stats, decode, strategy, check):
        module.register(subparsers)
    return parser


def parse_arguments(parser: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    """``parse_args``, except that a game's words may also follow the options.

    Python 3.11's argparse gives a ``nargs="*"`` positional its words only where
    they first appear: ``decode A4_B8 --guess 1 GAME`` left GAME unrecognized.
    Words left over (not options) are added to the command's ``game``.
    """
    args, extra = parser.parse_known_args(argv)
    # A game may start with "-" (not shot): a word of one dash and more than one more
    # character is no option of ours (they all start with "--"), so it is the game's.
    unknown = [word for word in extra if word.startswith("-") and word != "-" and not _game_word(word)]
    if not isinstance(getattr(args, "game", None), list):
        unknown = extra
    if unknown:
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    if extra:
        args.game += extra
    return args


def _game_word(word: str) -> bool:
    """Whether a word that starts with ``-`` reads as part of a game, not as an option."""
    return len(word) > 2 and not word.startswith("--")


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``bbcore`` console script."""
    parser = build_parser()
    args = parse_arguments(parser, argv)
    try:
        return int(args.handler(args) or 0)
    except USER_ERRORS as error:
        print(f"bbcore: error: {error}", file=sys.stderr)
        return 2
    except DATABASE_ERRORS as error:  # anything SQLite says that a command did not expect
        print(
            f"bbcore: error: {error_line(error, store.opened.path or store.default_path())}", file=sys.stderr
        )
        return 2
    except KeyboardInterrupt:
        print("bbcore: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader (``head``, a pager) went away: not an error.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    finally:
        # A file written by this command is left whole, in one file (store.close_database).
        store.close_database()
