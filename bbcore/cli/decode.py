"""The ``decode`` command of ``bbcore``: a player's assistant.

``bbcore decode CONFIG [GAME ... | -]`` reads a game (a spectrum string,
tokens, or a board diagram on standard input with ``-``; see
``bbcore.decode`` for the notations) and prints the molecules that agree
with every shown ray, the atom probabilities as a heat map, and the best
next shots (``--by remaining|information``).  ``--guess`` (or atoms drawn in
a diagram) checks a guessed molecule.  ``--json`` prints one JSON object.
When the database holds the configuration's strategy book for the ranking
(``bbcore strategy``), the text says what the book does from the game.

The candidates come from the store when the configuration is explored in
the database (``--db`` / ``BBTUI_DB`` / the default file), and are computed
directly otherwise; a missing database file is not created.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys

import numpy as np

from bbcore import decode
from bbcore.cli.common import (
    CLIError,
    MoleculesLine,
    WholeNumber,
    add_command,
    add_config_argument,
    add_ranking_argument,
    open_store,
)
from bbcore.config import Config
from bbcore.decode import Candidates, Verdict
from bbcore.decoder import (
    Answer,
    Decoder,
    count_sentence,
    shot_table,
    shots_title,
    shown_phrase,
    source_phrase,
)
from bbcore.game import ABSORBED, REFLECTED, DecodeError, Game, Result, parse_game, parse_guess
from bbcore.geometry import cell_of
from bbcore.render import diagram_grid, render_board, side_by_side
from bbcore.runner import keep_freed_memory
from bbcore.shots import Ranking, ambiguity, atom_counts, doubtful_cells, heat_token
from bbcore.store import default_path, exists
from bbcore.strategy import StrategyBook, stored_book
from bbcore.words import plural

BOARDS_SHOWN = 6


TOP_SHOTS = 5


OUTCOMES_SHOWN = 5


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``decode`` command."""
    parser = add_command(
        subparsers,
        "decode",
        description="Decode a game: list the molecules that agree with every shown ray, the "
        "probability of an atom in each cell, and the best next shots. The game is "
        "a spectrum string (@ or H absorbed, & or R reflected, . ? or - not shot, "
        "a letter or digit at both ends of an exit), whitespace-separated tokens "
        "(multi-digit labels), or a board diagram read from stdin with '-'. "
        "With no game, no ray is shown.",
    )
    add_config_argument(parser)
    parser.add_argument(
        "game",
        nargs="*",
        default=[],  # optional: argparse names a "*" positional without a default as required
        metavar="GAME",
        help="the game as a string or tokens, or '-' to read it from stdin (none: no ray shown)",
    )
    add_ranking_argument(parser)
    parser.add_argument(
        "--guess",
        metavar="N|MOLECULE",
        default=None,
        help="check a guessed molecule, by number or as its W*W string",
    )
    parser.add_argument(
        "--limit",
        type=WholeNumber(0),
        default=None,
        metavar="N",
        help=f"candidates listed, 0 for none, only the counts (default: {BOARDS_SHOWN} boards, "
        "every molecule with --json)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(handler=run_decode)


def read_game_text(words: list[str]) -> str:
    """The game text: the arguments joined, or standard input for ``-``."""
    if words == ["-"]:
        return sys.stdin.read()
    return " ".join(words)


def database_exists(args: argparse.Namespace) -> bool:
    """Whether the database file exists, or is a server (it is opened then, never created)."""
    if not exists(args.db or default_path()):
        return False
    open_store(args)
    return True


def run_decode(args: argparse.Namespace) -> int:
    """``bbcore decode CONFIG [GAME | -]``."""
    config: Config = args.config
    # Decoding allocates the same few MB batch after batch: keep them instead of
    # faulting fresh pages in every time (see bbcore.explore).
    keep_freed_memory()
    try:
        game = parse_game(read_game_text(args.game), config)
        guess = parse_guess(args.guess, config) if args.guess else None
        stored = database_exists(args)
        progress = MoleculesLine(f"decoding {config.name}")
        try:
            decoder = Decoder(config, source="auto" if stored else "compute")
            answer = decoder.decode(game, by=args.by, progress=progress)
        finally:
            progress.close()
        verdict, guess_note = judge_guess(config, game, guess, answer.found)
    except DecodeError as error:
        raise CLIError(str(error)) from None
    if args.json:
        print(json.dumps(json_report(answer, verdict, guess_note, args.limit)))
    else:
        limit = BOARDS_SHOWN if args.limit is None else args.limit
        book = stored_book(config, args.by) if stored else None
        sys.stdout.write(text_report(answer, verdict, guess_note, limit, args.by, book))
    return 0


def judge_guess(
    config: Config, game: Game, guess: tuple[int, ...] | None, cands: Candidates | None
) -> tuple[Verdict | None, str | None]:
    """The verdict on the guess (``--guess`` or atoms drawn in the diagram), or why none."""
    if guess is None and game.guess is not None:
        if len(game.guess) not in config.counts:
            return None, (
                f"guess not checked: the diagram has {len(game.guess)} atoms, "
                f"{config.name} has {config.atoms}"
            )
        guess = game.guess
    if guess is None:
        return None, None
    return decode.check_guess(config, game, guess, cands), None


def heat_map(config: Config, game: Game, answer: Answer) -> str:
    """The atom probabilities as a board of percentages, the game's labels around it."""
    counts, total = answer.heat()
    rows = diagram_grid(config.width, "-" * config.cells, game.labels, height=config.height)
    for index, count in enumerate(counts.ravel().tolist()):
        line, column = cell_of(config.width, index)
        rows[line][column] = heat_token(count, total)
    size = max(len(token) for row in rows for token in row)
    return "\n".join(" ".join(token.rjust(size) for token in row).rstrip() for row in rows)


def text_report(
    answer: Answer,
    verdict: Verdict | None,
    guess_note: str | None,
    limit: int,
    by: Ranking,
    book: StrategyBook | None = None,
) -> str:
    """The whole text output of ``bbcore decode``; ``book`` the stored strategy book, if any."""
    game, cands, shots, skipped = answer.game, answer.found, answer.shots, answer.skipped
    if cands is None:
        return solved_report(answer, verdict, guess_note, by)
    config = cands.config
    count = cands.count
    if cands.every_molecule:
        out = [count_sentence(answer)]
    else:
        out = [f"{config.name}: {shown_phrase(game)}; {source_phrase(answer)}.", count_sentence(answer)]

    if not cands.every_molecule and count and limit:
        width = shutil.get_terminal_size((100, 24)).columns
        boards = [
            f"number {number:,}\n" + render_board(config.width, molecule, game.labels, height=config.height)
            for number, molecule in cands.molecules(limit)
        ]
        out += ["", side_by_side(boards, max_width=width)]
        if count > limit:
            out.append(f"... and {count - limit:,} more (--limit N to show more, --json to list them all)")

    if count > 1:
        out += [
            "",
            f"Atom probabilities, % of the {plural(count, 'candidate')} "
            f"(O: an atom in every one, -: in none):",
            heat_map(config, game, answer),
        ]
    if shots:
        out += ["", shots_title(by)] + shot_table(shots, TOP_SHOTS, OUTCOMES_SHOWN)
    if book is not None:
        out += ["", book.advice(game)]
    if skipped:
        out += ["", skipped + "."]
    doubt = ambiguity(cands, shots, skipped)
    if doubt:
        out += ["", doubt]
    if verdict is not None:
        out += ["", f"Guess: {verdict.message}."]
    if guess_note:
        out += ["", guess_note + "."]
    return "\n".join(out) + "\n"


def solved_report(answer: Answer, verdict: Verdict | None, guess_note: str | None, by: Ranking) -> str:
    """The text of a decode the solver answered without listing the molecules."""
    game, solution = answer.game, answer.solution
    assert solution is not None
    config = solution_config(answer)
    out = [f"{config}: {shown_phrase(game)}; {source_phrase(answer)}.", count_sentence(answer)]
    if solution.consistent and answer.count > 1:
        how = (
            "exact"
            if solution.margin == 0
            else f"from {len(solution.samples or ()):,} near-uniform samples, within "
            f"{100 * solution.margin:.0f} points at 95%"
        )
        out += ["", f"Atom probabilities, % ({how}; O: certainly an atom, -: certainly empty):"]
        out.append(heat_map(config, game, answer))
    if answer.shots:
        estimated = (
            ""
            if answer.solution is None or answer.solution.samples is None
            else " (estimated from the samples)"
        )
        out += ["", shots_title(by) + estimated] + shot_table(answer.shots, TOP_SHOTS, OUTCOMES_SHOWN)
    if answer.skipped:
        out += ["", answer.skipped + "."]
    if verdict is not None:
        out += ["", f"Guess: {verdict.message}."]
    if guess_note:
        out += ["", guess_note + "."]
    return "\n".join(out) + "\n"


def solution_config(answer: Answer) -> Config:
    """The configuration of an answer, whether the engine or the solver gave it."""
    return answer.found.config if answer.found is not None else answer.config


def result_json(result: Result) -> dict:
    """A result for JSON: ``{"result": "absorbed"}`` or ``{"result": "out", "exit": 7}``."""
    if result == ABSORBED:
        return {"result": "absorbed"}
    if result == REFLECTED:
        return {"result": "reflected"}
    return {"result": "out", "exit": result}


def json_report(answer: Answer, verdict: Verdict | None, guess_note: str | None, limit: int | None) -> dict:
    """The ``--json`` object."""
    game, cands, shots, skipped = answer.game, answer.found, answer.shots, answer.skipped
    config = solution_config(answer)
    solution = answer.solution
    listed = [] if cands is None or cands.every_molecule else cands.molecules(limit)
    ambiguous = cands is not None and ambiguity(cands, shots, skipped) is not None
    estimate = None if solution is None or solution.count.exact else solution.count
    if cands is not None:
        counts = atom_counts(cands)
        backbone = np.where(counts == cands.count, 1, np.where(counts == 0, 0, -1)) if cands.count else None
    else:
        assert solution is not None
        # Exact counts (listed, or the engine once per count) give each cell's atom count.
        counts = None if estimate is not None else np.rint(solution.probabilities * answer.count).astype(int)
        backbone = solution.backbone if solution.consistent else None
    return {
        "config": config.name,
        "game": game.pattern(),
        "shown": list(game.shown),
        "source": cands.source if cands is not None else "solver",
        "count": answer.count,
        "exact": answer.exact,
        "tolerance": None if estimate is None else estimate.tolerance,
        "confidence": None if estimate is None else estimate.confidence,
        "core": None if answer.core is None else list(answer.core),
        "every_molecule": cands.every_molecule if cands is not None else not game.shown,
        "molecules": [{"number": n, "molecule": m} for n, m in listed],
        "atom_counts": None if counts is None else counts.tolist(),
        "probabilities": answer.probabilities.tolist(),
        "probability_margin": 0.0 if solution is None or cands is not None else solution.margin,
        # Each cell: O certainly an atom, - certainly empty, ? undecided (-1 picks the last).
        "backbone": None if backbone is None else [["-O?"[v] for v in row] for row in backbone.tolist()],
        "next_shots": [
            {
                "position": s.position,
                "remaining": s.remaining,
                "information": s.information,
                "outcomes": [{**result_json(r), "count": n} for r, n in s.outcomes],
            }
            for s in shots
        ],
        "next_shots_skipped": skipped,
        "ambiguous": ambiguous,
        "doubtful_cells": (
            [list(cell_of(config.width, c)) for c in doubtful_cells(cands)] if cands and ambiguous else []
        ),
        "guess": None
        if verdict is None
        else {
            "consistent": verdict.consistent,
            "contradiction": None
            if verdict.contradiction is None
            else {
                "position": verdict.contradiction[0],
                "shown": result_json(verdict.contradiction[1]),
                "guess": result_json(verdict.contradiction[2]),
            },
            "others": verdict.others,
            "message": verdict.message,
        },
        "guess_note": guess_note,
    }
