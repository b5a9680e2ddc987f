"""The ``bbcore`` commands that browse stored results: ``show`` (molecules as boards) and ``groups``."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

from bbcore import queries
from bbcore.cli.common import (
    CLIError,
    UsageError,
    add_command,
    add_config_argument,
    emit_lines,
    molecule_number,
    open_store,
    positive_int,
    require_complete,
)
from bbcore.config import Config
from bbcore.game import labels_text
from bbcore.numbering import number_of
from bbcore.rays import normalise, spectrum_labels, trace
from bbcore.render import render_board
from bbcore.statistics import (
    describe_ray,
    ray_board,
)
from bbcore.store import (
    Configuration,
    default_path,
    exists,
)
from bbcore.words import article


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add show and groups."""
    p = add_command(
        subparsers,
        "show",
        description="Show molecules by number, by a range of numbers, by their cells (--molecule), "
        "or by spectrum. Numbers work on unexplored configurations too (computed), rectangles "
        "(A4_B10x6) included; a range of atom counts (A3-6_B8) has no numbers: show its molecules "
        "by their cells. A range of numbers is shown as it is made: '--from 1 | head' stops at once.",
    )
    add_config_argument(p)
    p.add_argument(
        "numbers",
        type=molecule_number,
        nargs="*",
        default=[],  # optional: argparse names a "*" positional without a default as required
        metavar="N",
        help="molecule numbers, 1 to the last",
    )
    p.add_argument("--from", dest="first", type=molecule_number, metavar="A", help="first number (default 1)")
    p.add_argument(
        "--to",
        dest="last",
        type=molecule_number,
        metavar="B",
        help="last number (default: the last molecule)",
    )
    p.add_argument("--spectrum", metavar="S", help="the molecules with this full spectrum")
    p.add_argument(
        "--molecule",
        metavar="CELLS",
        help="the molecule with these cells: W*H characters, line 1 first, 'O' an atom, '-' or '.' "
        "empty (--molecule=--O... when it starts with '-')",
    )
    p.add_argument(
        "--ray", type=positive_int, metavar="P", help="draw the path of the ray shot from position P"
    )
    p.set_defaults(handler=run_show)

    p = add_command(
        subparsers,
        "groups",
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
        f"({record.transform})  spectrum {labels_text(spectrum_labels(record.spectrum))}{source}"
    ]
    if ray_position is not None:
        ray = trace(config.width, record.atoms, ray_position, config.height)
        lines.append(ray_board(config.width, record.molecule, ray, config.height))
        lines.append(describe_ray(ray))
    else:
        labels = spectrum_labels(record.spectrum)
        lines.append(render_board(config.width, record.molecule, labels, height=config.height))
    lines.extend(stats_lines(record))
    return "\n".join(lines)


def wanted_numbers(args: argparse.Namespace, config: Config) -> Iterator[int]:
    """The molecule numbers asked for: listed ones, then the --from/--to range, one at a time.

    ``checked_numbers`` has checked them: a range is never listed, so that
    ``--to 10**22`` costs nothing before it is refused.
    """
    yield from args.numbers
    if args.first is not None or args.last is not None:
        yield from range(args.first or 1, (args.last or config.nb_mol) + 1)


def checked_numbers(args: argparse.Namespace, config: Config) -> None:
    """Raise CLIError, naming the number typed, unless every number asked for is one of ``config``'s.

    Checked before anything is built or read: each listed number, and the ends of
    the range (never the numbers between them).
    """
    asked = args.numbers or args.first is not None or args.last is not None
    if asked and not config.fixed_count:
        raise CLIError(
            f"{config.name} is a range of atom counts: its molecules have no numbers; "
            f"give one by its cells (--molecule) or one count ({config.with_atoms(config.atoms).name})"
        )
    last_molecule = config.nb_mol
    for number in args.numbers:
        if number > last_molecule:
            raise UsageError(f"{config.name} has molecules 1..{last_molecule:,}, not {number:,}")
    for option, number in (("--from", args.first), ("--to", args.last)):
        if number is not None and number > last_molecule:
            raise UsageError(
                f"{config.name} has molecules 1..{last_molecule:,}: {option} {number} is past the last"
            )
    if args.first is not None and args.last is not None and args.first > args.last:
        raise UsageError(f"--from {args.first} is after --to {args.last}")


def run_show(args: argparse.Namespace) -> int:
    """Print molecules as boards with their statistics, one after the other as they are made."""
    config: Config = args.config
    if args.ray is not None and args.ray > config.positions:
        raise UsageError(f"{config.name} has positions 1..{config.positions}: --ray {args.ray} is not one")
    checked_numbers(args, config)
    ranged = args.first is not None or args.last is not None
    if not args.numbers and not ranged and args.spectrum is None and args.molecule is None:
        raise CLIError("say which molecules: numbers, --from/--to, --molecule or --spectrum")
    chosen = checked_molecule(config, args.molecule) if args.molecule is not None else None
    if chosen is not None:
        config = chosen.config
    stored = False
    if args.spectrum is not None or store_exists(args):
        open_store(args)
        stored = Configuration.get_or_none(Configuration.config == config.name) is not None
    found: list[queries.MoleculeRecord] = []
    if args.spectrum is not None:
        require_complete(config)
        spectrum = checked_spectrum(config, args.spectrum)
        found = queries.molecules_with_spectrum(config, spectrum)
        if not found:
            raise CLIError(f"no molecule of {config.name} has the spectrum {spectrum}")

    def records() -> Iterator[tuple[queries.MoleculeRecord, bool]]:
        """Each molecule asked for, with whether it is read from the store; made as it is shown."""
        for record in found:
            yield record, True
        if chosen is not None:
            yield chosen, stored and record_is_stored(config, chosen.number)
        for n in wanted_numbers(args, config):
            if stored:
                yield queries.molecule_record(config, n), record_is_stored(config, n)
            else:
                yield queries.computed_record(config, n), False

    def lines() -> Iterator[str]:
        for index, (record, from_store) in enumerate(records()):
            if index:
                yield ""
            yield from molecule_block(record, args.ray, from_store).splitlines()

    emit_lines([], lines())
    return 0


def checked_molecule(config: Config, cells: str) -> queries.MoleculeRecord:
    """The molecule given by its cells (computed), or CLIError naming what is wrong.

    Its record is of the configuration with its own count of atoms, which
    must be one of ``config``'s (a range takes any of its counts)."""
    cells = cells.strip().replace(".", "-")
    if len(cells) != config.cells or set(cells) - set("O-"):
        raise CLIError(
            f"--molecule: {article(config.box + ' box')} molecule is {config.cells} characters "
            f"of 'O' (atom) and '-' or '.' (empty), line 1 first; got {len(cells)} characters"
        )
    count = cells.count("O")
    if count not in config.counts:
        hides = f"{config.atoms}" if config.fixed_count else f"{config.atoms} to {config.atoms_max}"
        raise CLIError(f"--molecule has {count} atoms, {config.name} has {hides}")
    exact = config.with_atoms(count)
    return queries.computed_record(exact, number_of(exact, [i for i, ch in enumerate(cells) if ch == "O"]))


def store_exists(args: argparse.Namespace) -> bool:
    """Whether the database file exists, or is a server (show works without one)."""

    return exists(args.db or default_path())


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


GROUPS_PAGE = 500
"""Spectral groups read at once by ``bbcore groups``."""


def group_lines(config: Config, *, all_rows: bool, size: int | None, order: str) -> Iterator[str]:
    """One line per spectral group, read page by page; numbers with their commas, as the TUI
    shows them."""
    page = 0
    while True:
        rows = queries.group_page(config, page, GROUPS_PAGE, all_rows=all_rows, size=size, order=order)
        if not rows:
            return
        for g in rows:
            yield (
                f"{g.nb_mol:4,}  #{g.canonical_number:<9,} {g.transform:<7s} {g.max_diff:5d}  {g.spectrum}"
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
