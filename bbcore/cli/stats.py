"""The ``report`` and ``export`` commands of ``bbcore``.

``bbcore report CONFIG`` prints, for a complete configuration: the spec's
ambiguity table with its total line, the share of ambiguous molecules, the
spectral groups by the most atoms differing between their molecules, the
ray records with their boards (see ``bbcore.statistics`` for how a ray is
drawn), a plain statement about the players' "6 turns, 23 cells", and the
distributions as tables.

``bbcore export CONFIG --table molecules|spectrums|report --format csv|json
[--output FILE]`` streams a table (see ``bbcore.export``) to stdout or to a
file, which is replaced only once the export is whole.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from bbcore.cli.common import (
    CLIError,
    add_command,
    add_config_argument,
    format_table,
    open_store,
)
from bbcore.export import FORMATS, TABLES, export, export_to_file
from bbcore.render import side_by_side
from bbcore.statistics import (
    POINTS_PER_WRONG_ATOM,
    AmbiguityReport,
    Distribution,
    RayRecord,
    StatisticsError,
    StatisticsReport,
    ray_board,
    statistics_report,
)
from bbcore.words import plural


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``report`` and ``export`` commands."""
    report = add_command(
        subparsers,
        "report",
        description="Print the ambiguity report of a complete configuration (the spec's table "
        "with totals), the ray records with their boards, and the distributions.",
    )
    add_config_argument(report)
    report.set_defaults(handler=run_report)

    export_parser = add_command(
        subparsers,
        "export",
        description="Stream a table of a complete configuration as CSV or JSON.",
    )
    add_config_argument(export_parser)
    export_parser.add_argument(
        "--table", choices=TABLES, default="molecules", help="molecules (default), spectrums or report"
    )
    export_parser.add_argument(
        "--format", choices=FORMATS, default="csv", dest="fmt", help="csv (default) or json"
    )
    export_parser.add_argument(
        "--output", "-o", metavar="FILE", default=None, help="write to FILE instead of stdout"
    )
    export_parser.set_defaults(handler=run_export)


def format_ambiguity(report: AmbiguityReport) -> str:
    """The spec's table with its total line, the ambiguous share and the risk table."""
    config = report.config
    lines = [f"{config.name}: ambiguity report ({config.nb_mol:,} molecules)", ""]
    if not report.lines:
        lines.append(
            f"{config.name} has no ambiguous spectrum: every molecule can be told apart "
            "by shooting every ray."
        )
        return "\n".join(lines)
    rows = [(f"size {x.size}", x.families, x.groups, x.molecules) for x in report.lines]
    total = report.total
    rows.append(("total", total.families, total.groups, total.molecules))
    lines.append(format_table(("", "up to symmetry", "spectra", "molecules"), rows))
    lines += [
        "",
        f"Ambiguous molecules: {total.molecules:,} of {config.nb_mol:,} "
        f"({100 * report.share:.2f}%); {report.unique:,} have a spectrum of their own.",
        "",
    ]
    lines.append(
        "Spectral groups by the most atoms differing between two of their molecules "
        f"(a wrong guess costs {POINTS_PER_WRONG_ATOM} points per atom):"
    )
    lines.append(
        format_table(
            ("atoms differing", "points at risk", "up to symmetry", "spectra"),
            [(r.max_diff, r.points, r.families, r.groups) for r in report.risk],
        )
    )
    return "\n".join(lines)


def record_block(record: RayRecord) -> str:
    """A record's short caption and board (narrow, so that boards fit side by side)."""
    ray = record.ray
    word = "longest" if record.measure == "length" else "most turns,"
    route = f"{ray.position} to {ray.exit}" if ray.result == "out" else f"from {ray.position}"
    caption = [
        f"{word} {record.ray_class}",
        f"{plural(ray.length, 'cell')}, {plural(ray.turns, 'turn')}, {route}",
        f"molecule {record.number:,} ({record.molecules:,} reach it)",
    ]
    return "\n".join(caption) + "\n" + ray_board(record.config.width, record.molecule, ray)


def format_records(records: Sequence[RayRecord], claim: str, max_width: int) -> str:
    """The ray records with their boards, side by side, then the claim statement."""
    lines = [
        "Ray records (the lowest-numbered molecule reaching each; arrows give the ray's heading, "
        "a change of arrow is a turn, + a cell crossed twice):",
        "",
    ]
    blocks = [record_block(r) for r in records]
    lines.append(side_by_side(blocks, max_width=max_width) if blocks else "(no ray)")
    lines += ["", claim]
    return "\n".join(lines)


def format_distribution(distribution: Distribution) -> str:
    """A distribution as a table: one row per value, one column per series."""
    rows = [(key, *counts) for key, counts in distribution.rows]
    return f"{distribution.title.capitalize()}:\n" + format_table(
        (distribution.key_label, *distribution.series), rows
    )


def format_report(report: StatisticsReport, max_width: int = 100) -> str:
    """The whole report as text."""
    parts = [
        format_ambiguity(report.ambiguity),
        format_records(report.records, report.claim, max_width),
        "Distributions",
        *(format_distribution(d) for d in report.distributions),
    ]
    return "\n\n".join(parts) + "\n"


def run_report(args: argparse.Namespace) -> int:
    """``bbcore report CONFIG``."""
    open_store(args)
    try:
        report = statistics_report(args.config)
    except StatisticsError as error:
        raise CLIError(str(error)) from None
    max_width = shutil.get_terminal_size((100, 24)).columns
    sys.stdout.write(format_report(report, max_width))
    return 0


def run_export(args: argparse.Namespace) -> int:
    """``bbcore export CONFIG --table T --format F [--output FILE]``; count of rows on stderr."""
    open_store(args)
    try:
        if args.output:
            count = export_to_file(args.config, args.table, args.fmt, _output_path(args.output))
        else:
            count = export(args.config, args.table, args.fmt, sys.stdout)
    except StatisticsError as error:
        raise CLIError(str(error)) from None
    except OSError as error:
        if isinstance(error, BrokenPipeError):
            raise
        raise CLIError(f"cannot write {args.output or 'stdout'}: {error.strerror or error}") from None
    if args.output:
        print(f"{count:,} rows of {args.config.name} {args.table} written to {args.output}", file=sys.stderr)
    return 0


def _output_path(text: str) -> Path:
    """The output file, checked before any row is read."""
    path = Path(text).expanduser()
    if path.is_dir():
        raise CLIError(f"{path} is a directory, not a file")
    if not path.parent.is_dir():
        raise CLIError(f"cannot write {path}: folder {path.parent} does not exist")
    return path
