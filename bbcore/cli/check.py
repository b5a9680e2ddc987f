"""``bbcore check CONFIG [--sample N | --all] [--no-integrity] [--json]``: verify a stored configuration.

The checks are ``bbcore.check``'s.  A progress bar goes to stderr on a
terminal (a line per check otherwise).  Exit status 0 when everything
agrees, 1 when something differs (the first differences are listed, each
with its molecule number, what is stored and what was computed), 2 when the
configuration cannot be checked.  The file is only read: a read-only file
in a read-only folder is checked as well.
"""

from __future__ import annotations

import argparse
import json
import time

from bbcore import check
from bbcore.cli.common import (
    CONFIG_HELP,
    CLIError,
    StatusLine,
    WholeNumber,
    add_command,
    clock,
    config_arg,
    open_store,
    positive_int,
)
from bbcore.config import Config
from bbcore.store import is_server
from bbcore.words import plural

BAR = 24
LABELS = {name: phase.label for name, phase in check.PHASES.items()}
WIDTH = max(len(label) for label in LABELS.values())


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``check`` command."""
    parser = add_command(
        subparsers,
        "check",
        description="Verify a stored configuration, as one would a file received from elsewhere: "
        "SQLite's integrity_check of the whole file (every configuration in it; --no-integrity skips it); "
        "the configuration row against C(W², N); the molecule count; "
        "nb_mol of every ambiguous spectrum; every family (canonical molecule, transform, board, "
        f"spectrum by symmetry); a seeded random sample (default {check.SAMPLE:,}) re-traced by the "
        f"engine and a smaller one (default {check.REFERENCE_SAMPLE:,}) by the reference rays.py, "
        "spectrum and 17 statistics compared. Exit 0 when everything agrees, 1 with the first "
        "differences listed. Works on a read-only file.",
    )
    parser.add_argument("config", type=config_arg, metavar="CONFIG", help=CONFIG_HELP)
    size = parser.add_mutually_exclusive_group()
    size.add_argument(
        "--sample",
        type=positive_int,
        default=check.SAMPLE,
        metavar="N",
        help=f"molecules re-traced by the engine (default {check.SAMPLE:,})",
    )
    size.add_argument("--all", action="store_true", help="re-trace every molecule with the engine")
    parser.add_argument(
        "--reference",
        type=positive_int,
        default=check.REFERENCE_SAMPLE,
        metavar="N",
        help=f"of those, molecules re-traced by the reference rays.py (default {check.REFERENCE_SAMPLE:,})",
    )
    parser.add_argument(
        "--seed",
        type=WholeNumber(0),
        default=check.SEED,
        help=f"seed of the samples, 0 or more (default {check.SEED})",
    )
    parser.add_argument(
        "--no-integrity",
        dest="integrity",
        action="store_false",
        help="skip SQLite's integrity_check, which reads the whole file (every configuration in it): "
        "for a file already checked once",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(handler=run_check)


class CheckProgress(StatusLine):
    """A progress bar on stderr, redrawn on a terminal; a line per finished check otherwise."""

    def __init__(self, config: Config, stream=None, file_size: int | None = 0) -> None:
        super().__init__(stream, interval=0.1, erase=True)
        self.config = config
        # SQLite's check reads the whole file, every configuration in it: the line says so
        self.labels = dict(LABELS)
        if file_size is not None:  # None: a server, which has no such check
            size = check.megabytes(file_size)
            self.labels["integrity"] += f" of the whole file ({size}, every configuration)"
        self.started = time.monotonic()
        self.check_started = self.started
        self.current = ""

    def __call__(self, name: str, done: int, total: int) -> None:
        now = time.monotonic()
        if name != self.current:
            self.current, self.check_started = name, now
        finished = done >= total
        if not self.live:
            if finished:
                self.print(f"{self.config.name} check: {self.labels[name]} done")
            return
        if not self.due(final=finished):
            return
        fraction = done / total if total else 1.0
        filled = int(BAR * fraction)
        elapsed = now - self.check_started
        eta = elapsed * (1 - fraction) / fraction if 0 < fraction < 1 else None
        figures = f"{done:,}/{total:,}" if total > 1 else ("done" if finished else "running")
        self.redraw(
            f"{self.config.name} check: {self.labels[name]:<{WIDTH}} [{'#' * filled}{'.' * (BAR - filled)}] "
            f"{100 * fraction:3.0f}%  {figures}  elapsed {clock(now - self.started)}"
            + (f"  ETA {clock(eta)}" if eta is not None else "")
        )


def run_check(args: argparse.Namespace) -> int:
    """``bbcore check CONFIG``."""
    config: Config = args.config
    path = open_store(args, write=False)  # never written, not even its header
    progress = CheckProgress(config, file_size=None if is_server(path) else path.stat().st_size)
    try:
        report = check.check(
            config,
            sample=args.sample,
            everything=args.all,
            reference=args.reference,
            seed=args.seed,
            integrity=args.integrity,
            progress=progress,
        )
    except check.CheckError as error:
        raise CLIError(str(error)) from None
    finally:
        progress.close()
    if args.json:
        print(json.dumps({"database": str(path), **report.summary()}))
    else:
        print(report_text(report, str(path)))
    return 0 if report.ok else 1


def report_text(report: check.CheckReport, path: str) -> str:
    """The report as text: one line per check, its first differences below it, a verdict."""
    config = report.config
    lines = [f"{config.name} in {path}: {config.nb_mol:,} molecules, checked in {report.seconds:.1f} s"]
    for result in report.results:
        mark = "ok  " if result.ok else "FAIL"
        lines.append(f"  {mark} {LABELS[result.name]:<{WIDTH}} {result.covered}")
        for difference in result.differences:
            lines.append(f"         {difference.line()}")
        if result.count > len(result.differences):
            lines.append(f"         ... and {result.count - len(result.differences):,} more")
    failed = [r for r in report.results if not r.ok]
    if not failed:
        lines.append(f"{config.name}: every check agrees (seed {report.seed}).")
    else:
        total = sum(r.count for r in failed)
        lines.append(
            f"{config.name}: {plural(len(failed), 'check')} failed, {plural(total, 'difference')}; "
            "the first are listed above."
        )
    return "\n".join(lines)
