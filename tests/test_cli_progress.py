"""The CLI's progress printers: one status line, redrawn on a terminal, plain lines elsewhere."""

from __future__ import annotations

import io

from bbcore import decode
from bbcore.cli.check import CheckProgress
from bbcore.cli.common import MoleculesLine, ProgressPrinter
from bbcore.config import parse_config
from bbcore.progress import Progress


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def progress(done: int, phase: str = "exploring") -> Progress:
    return Progress("A4_B6", done, 58_905, 2.0, 1_000.0, phase)


def test_exploration_progress_is_redrawn_in_place_and_ended_with_a_newline():
    terminal = Terminal()
    printer = ProgressPrinter(terminal)
    printer(progress(1_000))
    printer(progress(2_000))
    printer.close()
    text = terminal.getvalue()
    assert text.count("\r\x1b[K") == 2  # each state replaces the last
    assert "2,000/58,905" in text.rsplit("\r\x1b[K", 1)[1]
    assert text.endswith("\n")  # the last state stays on screen


def test_exploration_progress_off_a_terminal_is_a_line_every_tenth():
    stream = io.StringIO()
    printer = ProgressPrinter(stream)
    for done in range(0, 58_906, 1_000):
        printer(progress(done))
    printer.close()
    lines = stream.getvalue().splitlines()
    assert "\r" not in stream.getvalue()
    assert len(lines) == 10  # 0%, 10%, ..., 90% (58,000 is under 100%)
    assert all(line.startswith("A4_B6 exploring: ") for line in lines)


def test_a_molecules_line_is_erased_when_done_and_silent_off_a_terminal():
    total = decode.BATCH * 8
    terminal = Terminal()
    line = MoleculesLine("decoding A4_B8", terminal)
    line(decode.BATCH, total)
    line.close()
    assert terminal.getvalue() == (
        f"\r\x1b[Kdecoding A4_B8: {decode.BATCH:,} of {total:,} molecules (12%)\r\x1b[K"
    )
    quiet = io.StringIO()
    line = MoleculesLine("decoding A4_B8", quiet)
    line(decode.BATCH, total)
    line.close()
    assert quiet.getvalue() == ""


def test_a_check_bar_shows_its_final_state_and_is_erased():
    terminal = Terminal()
    bar = CheckProgress(parse_config("A4_B6"), terminal)
    bar("integrity", 0, 1)
    bar("integrity", 1, 1)  # a final state is drawn even within the redraw interval
    bar.close()
    text = terminal.getvalue()
    assert "100%" in text
    assert text.endswith("\r\x1b[K")
    stream = io.StringIO()
    bar = CheckProgress(parse_config("A4_B6"), stream)
    bar("integrity", 0, 1)
    bar("integrity", 1, 1)
    bar.close()
    assert stream.getvalue().count("\n") == 1 and stream.getvalue().endswith(" done\n")
