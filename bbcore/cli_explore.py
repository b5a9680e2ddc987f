"""The ``bbcore`` commands that run and inspect explorations.

``explore``, ``reset``, ``spectrums``, ``status``, ``show`` and ``groups``.
Progress goes to stderr: one line redrawn in place on a terminal, a line
every 10% otherwise (logs, CI).  Ctrl-C during ``explore`` pauses: the
ranges under way are stored, then the command says how far it got and
exits with status 130; running it again resumes.
"""

from __future__ import annotations

import argparse
import io
import pydoc
import shutil
import signal
import sys
import threading
from collections.abc import Iterable, Iterator

from bbcore import queries
from bbcore.cli import CLIError, config_arg, open_store
from bbcore.cli_stats import format_table
from bbcore.config import Config
from bbcore.explore import (
    ALREADY_COMPLETE,
    COMPLETE,
    ExploreError,
    Progress,
    exploration_lock,
    explore,
    missing_ranges,
)
from bbcore.rays import normalise, trace
from bbcore.render import render_board
from bbcore.spectra import build_spectrums
from bbcore.statistics import describe_ray, ray_board
from bbcore.store import Configuration, now, reset_config, stored_count

CONFIG_HELP = "a configuration AN_BW, e.g. A4_B8 (N atoms in a W x W box)"


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add explore, reset, spectrums, status, show and groups."""
    p = subparsers.add_parser(
        "explore",
        help="explore a configuration (create or resume)",
        description="Compute and store every molecule of a configuration, "
        "then its spectral groups. Ctrl-C pauses; run again to resume.",
    )
    p.add_argument("config", type=config_arg, help=CONFIG_HELP)
    p.add_argument(
        "--workers",
        type=positive_int,
        default=None,
        metavar="N",
        help="worker processes (default: all cores)",
    )
    p.set_defaults(handler=run_explore)

    p = subparsers.add_parser(
        "reset",
        help="delete a configuration's rows",
        description="Delete every stored row of a configuration.",
    )
    p.add_argument("config", type=config_arg, help=CONFIG_HELP)
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    p.set_defaults(handler=run_reset)

    p = subparsers.add_parser("spectrums", help="rebuild the spectral groups of an explored configuration")
    p.add_argument("config", type=config_arg, help=CONFIG_HELP)
    p.set_defaults(handler=run_spectrums)

    p = subparsers.add_parser("status", help="the configurations in the database")
    p.set_defaults(handler=run_status)

    p = subparsers.add_parser(
        "show",
        help="molecules as board diagrams with their statistics",
        description="Show molecules by number, by a range of numbers, or by spectrum. "
        "Numbers work on unexplored configurations too (computed).",
    )
    p.add_argument("config", type=config_arg, help=CONFIG_HELP)
    p.add_argument("numbers", type=positive_int, nargs="*", metavar="N", help="molecule numbers")
    p.add_argument("--from", dest="first", type=positive_int, metavar="A", help="first number")
    p.add_argument("--to", dest="last", type=positive_int, metavar="B", help="last number")
    p.add_argument("--spectrum", metavar="S", help="the molecules with this full spectrum")
    p.add_argument(
        "--ray", type=positive_int, metavar="P", help="draw the path of the ray shot from position P"
    )
    p.set_defaults(handler=run_show)

    p = subparsers.add_parser(
        "groups",
        help="list the spectral groups, one line each",
        description="List spectral groups: one per family of symmetric "
        "groups (transform id) unless --all. Paged on a terminal.",
    )
    p.add_argument("config", type=config_arg, help=CONFIG_HELP)
    p.add_argument("--size", type=positive_int, metavar="K", help="only groups of K molecules")
    p.add_argument("--all", action="store_true", help="every spectral group, not one per family")
    p.add_argument("--by-size", action="store_true", help="largest groups first")
    p.set_defaults(handler=run_groups)


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number >= 1, got {value}")
    return value


# -- explore -----------------------------------------------------------------


def clock(seconds: float | None) -> str:
    """Seconds as ``h:mm:ss`` or ``m:ss``; ``?`` when unknown."""
    if seconds is None:
        return "?"
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def progress_line(p: Progress) -> str:
    """One line: done/total, percentage, rate, elapsed, ETA."""
    return (
        f"{p.config} {p.phase}: {p.done:,}/{p.total:,} ({100 * p.fraction:.1f}%)  "
        f"{p.rate:,.0f} mol/s  elapsed {clock(p.elapsed)}  ETA {clock(p.eta)}"
    )


class ProgressPrinter:
    """Progress on stderr: redrawn in place on a terminal, every 10% otherwise."""

    def __init__(self, stream=None) -> None:
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty()
        self.next_tenth = 0

    def __call__(self, p: Progress) -> None:
        if self.live:
            self.stream.write("\r\x1b[K" + progress_line(p))
            self.stream.flush()
            return
        tenth = int(10 * p.fraction)
        if p.phase != "exploring" or tenth >= self.next_tenth:
            self.stream.write(progress_line(p) + "\n")
            self.next_tenth = tenth + 1

    def close(self) -> None:
        """End the redrawn line."""
        if self.live:
            self.stream.write("\n")


def run_explore(args: argparse.Namespace) -> int:
    """Explore (or resume) a configuration; Ctrl-C pauses it."""
    config: Config = args.config
    path = open_store(args, create=True)
    stop = threading.Event()
    printer = ProgressPrinter()

    def pause(signum, frame) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()
        sys.stderr.write("\npausing: storing the ranges under way (Ctrl-C again to abort)\n")

    previous = signal.signal(signal.SIGINT, pause)
    try:
        status = explore(config, path, workers=args.workers, progress=printer, stop=stop)
    except ExploreError as error:
        raise CLIError(str(error)) from None
    finally:
        signal.signal(signal.SIGINT, previous)
        printer.close()
    if status == ALREADY_COMPLETE:
        print(f"{config.name} is already complete in {path}: nothing to do")
        return 0
    if status == COMPLETE:
        state = queries.config_state(config)
        print(
            f"{config.name} complete: {state.done:,} molecules, {state.ambiguous:,} ambiguous "
            f"spectra ({state.families:,} up to symmetry) in {path}"
        )
        return 0
    print(
        f"{config.name} paused at {stored_count(config):,}/{config.nb_mol:,} molecules; "
        f"run 'bbcore explore {config.name}' again to resume"
    )
    return 130


def run_reset(args: argparse.Namespace) -> int:
    """Delete a configuration's rows, after confirmation on a terminal."""
    config: Config = args.config
    path = open_store(args)
    if Configuration.get_or_none(Configuration.config == config.name) is None:
        raise CLIError(f"{config.name} is not in {path}: nothing to reset")
    if not args.yes:
        if not sys.stdin.isatty():
            raise CLIError("refusing to delete without confirmation: pass --yes")
        answer = input(
            f"Delete all {stored_count(config):,} stored molecules of {config.name} from {path}? [y/N] "
        )
        if answer.strip().lower() not in ("y", "yes"):
            print("nothing deleted")
            return 1
    try:
        with exploration_lock(path, config):
            deleted = reset_config(config)
    except ExploreError as error:
        raise CLIError(str(error)) from None
    print(f"{config.name}: {deleted:,} molecules deleted")
    return 0


def run_spectrums(args: argparse.Namespace) -> int:
    """Rebuild the Spectrums rows of a fully stored configuration."""
    config: Config = args.config
    path = open_store(args)
    require_stored(config)
    try:
        with exploration_lock(path, config):
            if missing_ranges(config):
                raise CLIError(
                    f"{config.name} is not fully explored: run 'bbcore explore {config.name}' first"
                )
            count = build_spectrums(config)
            Configuration.update(complete=True, dh2=now()).where(
                Configuration.config == config.name
            ).execute()
    except ExploreError as error:
        raise CLIError(str(error)) from None
    print(f"{config.name}: {count:,} ambiguous spectra")
    return 0


def run_status(args: argparse.Namespace) -> int:
    """A table of the configurations in the database."""
    path = open_store(args)
    states = queries.config_states()
    print(f"database: {path}")
    if not states:
        print("no configuration yet: try 'bbcore explore A4_B6'")
        return 0
    rows = [
        (
            s.config.name,
            f"{s.total:,}",
            f"{s.done:,}",
            s.label,
            f"{s.ambiguous:,}" if s.complete else "",
            f"{s.families:,}" if s.complete else "",
        )
        for s in states
    ]
    print(
        format_table(("config", "molecules", "stored", "state", "ambiguous spectra", "up to symmetry"), rows)
    )
    return 0


# -- show and groups -----------------------------------------------------------


def require_stored(config: Config) -> None:
    """Raise CLIError unless the configuration is in the open database."""
    if Configuration.get_or_none(Configuration.config == config.name) is None:
        raise CLIError(f"{config.name} is not explored: run 'bbcore explore {config.name}' first")


def require_complete(config: Config) -> None:
    """Raise CLIError unless the configuration's exploration is complete."""
    require_stored(config)
    if not queries.config_state(config).complete:
        raise CLIError(
            f"{config.name} is not completely explored: run 'bbcore explore {config.name}' to finish it"
        )


def stats_lines(record: queries.MoleculeRecord) -> list[str]:
    """The 17 statistics as three readable lines."""
    s = record.stats

    def figures(name: str) -> str:
        return (
            f"max length {s[name + '_max_length']}, max turns {s[name + '_max_turns']}, "
            f"total length {s[name + '_tot_length']}, total turns {s[name + '_tot_turns']}"
        )

    return [
        f"absorbed  {s['absorbed_number']:2d}  ({figures('absorbed')})",
        f"reflected {s['reflected_number']:2d}  (edge {s['reflected_edge']}, deep "
        f"{s['reflected_deep']}; {figures('reflected')})",
        f"out pairs {s['out_number']:2d}  ({figures('out')})",
    ]


def molecule_block(record: queries.MoleculeRecord, ray_position: int | None, stored: bool) -> str:
    """A molecule's heading, board and statistics (and a drawn ray)."""
    config = record.config
    source = "" if stored else "  (computed, not stored)"
    lines = [
        f"{config.name} #{record.number}  canonical {record.canonical_number} "
        f"({record.transform})  spectrum {record.spectrum}{source}"
    ]
    if ray_position is not None:
        ray = trace(config.width, record.atoms, ray_position)
        lines.append(ray_board(config.width, record.molecule, ray))
        lines.append(describe_ray(ray))
    else:
        lines.append(render_board(config.width, record.molecule, record.spectrum))
    lines.extend(stats_lines(record))
    return "\n".join(lines)


def wanted_numbers(args: argparse.Namespace, config: Config) -> Iterator[int]:
    """The molecule numbers asked for: listed ones, then the --from/--to range."""
    yield from args.numbers
    if args.first is not None or args.last is not None:
        first = args.first or 1
        last = args.last or config.nb_mol
        if first > last:
            raise CLIError(f"--from {first} is after --to {last}")
        yield from range(first, last + 1)


def run_show(args: argparse.Namespace) -> int:
    """Print molecules as boards with their statistics."""
    config: Config = args.config
    if args.ray is not None and args.ray > config.positions:
        raise CLIError(f"--ray must be a position in 1..{config.positions} for {config.name}")
    numbers = list(wanted_numbers(args, config)) if args.numbers or args.first or args.last else []
    for n in numbers:
        if n > config.nb_mol:
            raise CLIError(f"{config.name} has molecules 1..{config.nb_mol:,}, not {n:,}")
    if not numbers and args.spectrum is None:
        raise CLIError("say which molecules: numbers, --from/--to, or --spectrum")
    stored = False
    if args.spectrum is not None or store_exists(args):
        open_store(args)
        stored = Configuration.get_or_none(Configuration.config == config.name) is not None
    blocks: list[str] = []
    if args.spectrum is not None:
        require_complete(config)
        spectrum = checked_spectrum(config, args.spectrum)
        found = queries.molecules_with_spectrum(config, spectrum)
        if not found:
            raise CLIError(f"no molecule of {config.name} has the spectrum {spectrum}")
        blocks += [molecule_block(r, args.ray, True) for r in found]
    for n in numbers:
        record = queries.molecule_record(config, n) if stored else queries.computed_record(config, n)
        blocks.append(molecule_block(record, args.ray, stored and record_is_stored(config, n)))
    emit("\n\n".join(blocks))
    return 0


def store_exists(args: argparse.Namespace) -> bool:
    """Whether the database file exists (show works without one)."""
    from bbcore.store import default_path

    return (args.db or default_path()).exists()


def record_is_stored(config: Config, number: int) -> bool:
    """Whether molecule ``number`` is in the open database."""
    from bbcore.store import Molecule

    return Molecule.select().where((Molecule.config == config.name) & (Molecule.number == number)).exists()


def checked_spectrum(config: Config, text: str) -> str:
    """A full spectrum, validated and normalised, or CLIError naming what is wrong."""
    text = text.strip()
    if len(text) != config.positions:
        raise CLIError(f"a {config.name} spectrum has {config.positions} characters, not {len(text)}")
    for i, ch in enumerate(text, 1):
        if not (ch in "@&" or ch.isalpha() and ch.islower()):
            raise CLIError(f"position {i}: {ch!r} is not '@', '&' or a lowercase letter")
    for letter in sorted(set(text) - set("@&")):
        if text.count(letter) != 2:
            raise CLIError(
                f"letter {letter!r} is used {text.count(letter)} times: "
                "each exit letter is used exactly twice"
            )
    return normalise(text)


def group_lines(config: Config, *, all_rows: bool, size: int | None, order: str) -> Iterator[str]:
    """One line per spectral group, read page by page."""
    page = 0
    while True:
        rows = queries.group_page(config, page, 500, all_rows=all_rows, size=size, order=order)
        if not rows:
            return
        for g in rows:
            yield (
                f"{g.nb_mol:4d}  #{g.canonical_number:<9d} {g.transform:<7s} {g.max_diff:5d}  {g.spectrum}"
            )
        page += 1


def run_groups(args: argparse.Namespace) -> int:
    """List spectral groups, one line each."""
    config: Config = args.config
    open_store(args)
    require_complete(config)
    count = queries.group_count(config, all_rows=args.all, size=args.size)
    if args.all:
        what = "spectral group" if count == 1 else "spectral groups"
    else:
        what = ("family" if count == 1 else "families") + " of spectral groups (transform id)"
    header = [
        f"{config.name}: {count:,} {what}" + (f" of size {args.size}" if args.size else ""),
        "size  canonical  transf. atoms  spectrum",
        "                         differ",
    ]
    order = "size" if args.by_size else "canonical"
    emit_lines(header, group_lines(config, all_rows=args.all, size=args.size, order=order))
    return 0


def emit(text: str) -> None:
    """Print, through a pager when the text is longer than the terminal."""
    emit_lines(text.splitlines(), [])


def emit_lines(head: Iterable[str], rest: Iterable[str]) -> None:
    """Print lines; on a terminal, page them when they do not fit on the screen."""
    lines = list(head)
    if not sys.stdout.isatty():
        for line in lines:
            print(line)
        for line in rest:
            print(line)
        return
    height = shutil.get_terminal_size().lines
    buffer = io.StringIO()
    rest = iter(rest)
    for line in rest:
        lines.append(line)
        if len(lines) >= height:
            break
    if len(lines) < height:
        print("\n".join(lines))
        return
    buffer.write("\n".join(lines) + "\n")
    for line in rest:
        buffer.write(line + "\n")
    pydoc.pager(buffer.getvalue())
