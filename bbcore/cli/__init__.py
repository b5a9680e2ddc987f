"""The ``bbcore`` command line: a package, one module per command family.

- ``explore``: explore, reset, spectrums, status;
- ``browse``: show, groups;
- ``stats``: report, export;
- ``decode``: decode;
- ``strategy``: strategy (the seeker's book);
- ``check``: check;
- ``copy``: copy (a configuration into another store);
- ``common``: what they share (one-line errors, argument types, tables,
  progress, the pager).  Command modules import ``common`` only, never this
  package's ``__init__``, so there is no import circle.

Every command is a function ``run_<name>(args) -> int`` registered by its
module's ``register(subparsers)``; ``common.COMMANDS`` names each command's
module and line of help, so that ``bbcore`` imports only the module of the
command it runs.  Every expected failure (a bad
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
from collections.abc import Collection
from importlib import import_module

from bbcore import __version__, store
from bbcore.cli.common import COMMANDS, USER_ERRORS, OneLineParser, UsageError, database_arg
from bbcore.store import DATABASE_ERRORS, default_description, error_line


def build_parser(modules: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The parser with every command: each of ``modules`` (default: every module) registers its
    commands with their arguments; any other command is its name and line of help only.

    ``main`` parses in two passes: with no module, which is enough to answer
    ``bbcore --help`` and ``--version`` and to know the command, then with the
    command's module only.  Importing every module was a sixth of a ``bbcore
    decode``'s start (numpy's and the store's imports are paid by any command).
    """
    parser = OneLineParser(
        prog="bbcore",
        description="Explore Black Box configurations exhaustively and query the results.",
        epilog=f"database: --db PATH or URL, else $BBTUI_DB, else {default_description()}",
    )
    parser.add_argument("--version", action="version", version=f"bbcore {__version__}")
    database_help = (
        "SQLite database file, or a PostgreSQL server's postgresql://USER@HOST[:PORT]/DBNAME "
        "(default: $BBTUI_DB or ~/.local/share/bbtui/blackbox.sqlite)"
    )
    parser.add_argument("--db", type=database_arg, default=None, metavar="PATH", help=database_help)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    registered: set[str] = set()
    for name, command in COMMANDS.items():
        if modules is not None and command.module not in modules:
            # the rest of the line is its module's to parse, in the second pass
            subparsers.add_parser(name, help=command.help, add_help=False)
        elif command.module not in registered:
            import_module(f"bbcore.cli.{command.module}").register(subparsers)
            registered.add(command.module)
    # --db after the command too (``bbcore status --db X``): since a command's errors
    # point to its own --help, that help names it.  SUPPRESS keeps one given before.
    for name, command in commands(parser).items():
        if COMMANDS[name].module in registered:
            command.add_argument(
                "--db", type=database_arg, default=argparse.SUPPRESS, metavar="PATH", help=database_help
            )
    return parser


def commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """Each command's own parser, by name (what ``bbcore COMMAND --help`` describes)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def parse_arguments(parser: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    """``parse_args``, except that a command's words (a game, molecule numbers) may also follow
    its options, and ``--`` ends the options wherever it is.

    Python 3.11's argparse gives a ``nargs="*"`` positional its words only where
    they first appear: ``decode A4_B8 --guess 1 GAME`` left GAME unrecognized, and
    ``decode A4_B8 --json -- -H---`` left ``--`` and the game unrecognized (a
    trailing ``--`` too).  Words left over are given to the command's list of
    words, through its type; what is left after that is an error of the
    command, whose hint names the command's own ``--help``.
    """
    args, extra = parser.parse_known_args(argv)
    command = commands(parser)[args.command]
    before, after = extra, []
    if "--" in extra:  # argparse left it: every word after it is a word, never an option
        cut = extra.index("--")
        before, after = extra[:cut], extra[cut + 1 :]
    words = next((a for a in command._actions if not a.option_strings and a.nargs == "*"), None)
    unknown = [word for word in before if _option_word(word, words)]
    if words is None:
        unknown = before + after
    if unknown:
        command.error(f"unrecognized arguments: {' '.join(unknown)}")
    if words is not None and (before or after):
        values = getattr(args, words.dest) or []
        for word in before + after:
            try:
                values.append(words.type(word) if words.type else word)
            except (argparse.ArgumentTypeError, TypeError, ValueError) as error:
                command.error(f"argument {words.metavar or words.dest}: {error}")
        setattr(args, words.dest, values)
    return args


def _option_word(word: str, words: argparse.Action | None) -> bool:
    """Whether a word left over before ``--`` reads as an option rather than one of the command's words.

    A game may start with "-" (not shot): a word of one dash and more than one more
    character is no option of ours (they all start with "--"), so it is the game's.
    """
    if not word.startswith("-") or word == "-":
        return False
    if words is not None and words.dest == "game":
        return len(word) <= 2 or word.startswith("--")
    return not word[1:].isdigit()  # -5: a number, refused by the words' own type


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``bbcore`` console script."""
    command, _ = build_parser(()).parse_known_args(argv)
    args = parse_arguments(build_parser({COMMANDS[command.command].module}), argv)
    try:
        return int(args.handler(args) or 0)
    except UsageError as error:
        print(f"bbcore {args.command}: error: {error} (see 'bbcore {args.command} --help')", file=sys.stderr)
        return 2
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
