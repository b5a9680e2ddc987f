"""The ``bbcore`` commands that browse stored results: ``show`` (molecules as boards) and ``groups``."""

from __future__ import annotations

import argparse
import itertools
from collections.abc import Iterable, Iterator

from bbcore import queries
from bbcore.cli.common import (
    CLIError,
    add_config_argument,
    emit_lines,
    open_store,
    positive_int,
    require_complete,
)
from bbcore.config import Config
from bbcore.rays import normalise, trace
from bbcore.render import render_board
from bbcore.statistics import (
    describe_ray,
    ray_board,
)
from bbcore.store import (
    Configuration,
    default_path,
)
from bbcore.words import article


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add show and groups."""
    p = subparsers.add_parser(
        "show",
        help="molecules as board diagrams with their statistics",
        description="Show molecules by number, by a range of numbers, or by spectrum. "
        "Numbers work on unexplored configurations too (computed).",
    )
    add_config_argument(p)
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
    add_config_argument(p)
    p.add_argument("--size", type=positive_int, metavar="K", help="only groups of K molecules")
    p.add_argument("--all", action="store_true", help="every spectral group, not one per family")
    p.add_argument("--by-size", action="store_true", help="largest groups first")
    p.set_defaults(handler=run_groups)


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
        f"{config.name} #{record.number:,}  canonical {record.canonical_number:,} "
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


def wanted_numbers(args: argparse.Namespace, config: Config) -> Iterable[int]:
    """The molecule numbers asked for: listed ones, then the --from/--to range.

    Checked at once, and never listed: a range of A30_B13 (1.7 x 10^33
    molecules) is read as it is shown.
    """
    first = args.first or 1
    last = args.last or config.nb_mol
    for n in [*args.numbers, first, last]:
        if n > config.nb_mol:
            raise CLIError(f"{config.name} has molecules 1..{config.nb_mol:,}, not {n:,}")
    if first > last:
        raise CLIError(f"--from {first} is after --to {last}")
    ranged = args.first is not None or args.last is not None
    return itertools.chain(args.numbers, range(first, last + 1) if ranged else ())


def run_show(args: argparse.Namespace) -> int:
    """Print molecules as boards with their statistics, each as soon as it is made."""
    config: Config = args.config
    if args.ray is not None and args.ray > config.positions:
        raise CLIError(f"--ray must be a position in 1..{config.positions} for {config.name}")
    numbers = wanted_numbers(args, config)
    if not (args.numbers or args.first or args.last) and args.spectrum is None:
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
    numbered = (
        molecule_block(
            queries.molecule_record(config, n) if stored else queries.computed_record(config, n),
            args.ray,
            stored and record_is_stored(config, n),
        )
        for n in numbers
    )
    emit_lines([], separated(itertools.chain(blocks, numbered)))
    return 0


def separated(blocks: Iterable[str]) -> Iterator[str]:
    """The lines of text blocks, a blank line between two blocks."""
    for i, block in enumerate(blocks):
        if i:
            yield ""
        yield from block.splitlines()


def store_exists(args: argparse.Namespace) -> bool:
    """Whether the database file exists (show works without one)."""

    return (args.db or default_path()).exists()


def record_is_stored(config: Config, number: int) -> bool:
    """Whether molecule ``number`` is in the open database."""
    from bbcore.store import Molecule

    return Molecule.select().where((Molecule.config == config.name) & (Molecule.number == number)).exists()


def checked_spectrum(config: Config, text: str) -> str:
    """A full spectrum, validated and normalised, or CLIError naming what is wrong."""
    text = text.strip()
    if len(text) != config.positions:
        raise CLIError(f"{article(config.name)} spectrum has {config.positions} characters, not {len(text)}")
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
