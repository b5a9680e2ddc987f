"""What the mutation run of ``bbcore/cli/common.py`` and ``bbcore/cli/decode.py`` found untested
(seventh session, mutcli; notes: bench/mutation_notes.md).

Every test runs ``bbcore.cli.main`` in this process, as the console script does, so that
mutmut sees what it reaches (the terminal tests of test_cli.py run ``bbcore`` in a
subprocess).  A terminal is a real pseudo-terminal: ``sys.stdout`` and ``sys.stdin`` are its
slave end, the screen is read from its master end, and ``LINES``/``COLUMNS`` give its size
(``shutil.get_terminal_size`` reads them first).  A pager is a real shell command,
``$PAGER``, that writes what it was fed to a file.
"""

from __future__ import annotations

import io
import json
import os
import pty
import re
import stat
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from bbcore.cli import main
from bbcore.cli.common import ProgressPrinter, StatusLine
from bbcore.config import Config
from bbcore.progress import Progress

A2_B4 = Config(2, 4)


class Screen:
    """What a pseudo-terminal's master end received, read by a thread until the slave end closes."""

    def __init__(self, master: int) -> None:
        self.master = master
        self.data = bytearray()
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 65536)
            except OSError:  # EIO: the slave end is closed
                return
            if not chunk:
                return
            self.data += chunk

    def text(self) -> str:
        """Everything shown, the terminal's CR LF read as LF."""
        self.thread.join(timeout=30)
        return self.data.decode().replace("\r\n", "\n")


@contextmanager
def terminal(lines: int, *, keyboard: bool = True) -> Iterator[Screen]:
    """``sys.stdout`` on a pseudo-terminal of ``lines`` lines (and ``sys.stdin`` on it too when
    ``keyboard``: a pager needs one); the screen, read once the block is done."""
    master, slave = pty.openpty()
    stdout = open(slave, "w", encoding="utf-8", buffering=1, closefd=False)  # line-buffered, as a tty's
    stdin = open(slave, encoding="utf-8", closefd=False)
    screen = Screen(master)
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(sys, "stdout", stdout)
            if keyboard:
                patch.setattr(sys, "stdin", stdin)
            patch.setenv("LINES", str(lines))
            patch.setenv("COLUMNS", "100")
            yield screen
            stdout.flush()
    finally:
        os.close(slave)
        screen.thread.join(timeout=30)
        os.close(master)


def pager(tmp_path: Path, name: str = "paged.txt") -> tuple[str, Path]:
    """A pager command that keeps what it is fed in a file (the file, made only if it is run)."""
    path = tmp_path / name
    return f"cat > {path}", path


def shown(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``bbcore ARGV`` run here: (status, stdout, stderr)."""
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def executable(folder: Path, name: str, text: str) -> Path:
    """A shell script ``name`` in ``folder`` (a pager on a PATH of the test's own)."""
    path = folder / name
    path.write_text(f"#!/bin/sh\n{text}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def no_pager_set(monkeypatch: pytest.MonkeyPatch) -> None:
    """Neither ``$MANPAGER`` nor ``$PAGER`` set: the pager is found on the PATH, by ``$TERM``."""
    monkeypatch.delenv("MANPAGER", raising=False)
    monkeypatch.delenv("PAGER", raising=False)


TWO_BOARDS = ("show", "A2_B4", "1", "2")
"""21 lines: molecules 1 and 2 of A2_B4, 10 lines each and one between."""


@pytest.fixture
def two_boards(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> tuple[list[str], str]:
    """(the ``--db`` words, the 21 lines of ``TWO_BOARDS`` off a terminal)."""
    db = ["--db", str(tmp_path / "none.sqlite")]
    status, out, _ = shown(capsys, *db, *TWO_BOARDS)
    assert status == 0 and out.count("\n") == 21
    return db, out


def test_a_listing_that_fits_the_screen_is_printed_without_the_pager(two_boards, tmp_path, monkeypatch):
    db, lines = two_boards
    command, paged = pager(tmp_path)
    monkeypatch.setenv("PAGER", command)
    with terminal(22) as screen:  # 21 lines and the prompt's
        assert main([*db, *TWO_BOARDS]) == 0
    assert screen.text() == lines
    assert not paged.exists()


def test_a_listing_a_line_too_long_for_the_screen_goes_whole_to_the_pager(two_boards, tmp_path, monkeypatch):
    db, lines = two_boards
    command, paged = pager(tmp_path)
    monkeypatch.setenv("PAGER", command)
    with terminal(21) as screen:
        assert main([*db, *TWO_BOARDS]) == 0
    assert screen.text() == ""
    assert paged.read_text() == lines


def test_manpager_comes_before_pager(two_boards, tmp_path, monkeypatch):
    db, lines = two_boards
    command, paged = pager(tmp_path)
    ignored, not_paged = pager(tmp_path, "by-pager.txt")
    monkeypatch.setenv("MANPAGER", command)
    monkeypatch.setenv("PAGER", ignored)
    with terminal(10):
        assert main([*db, *TWO_BOARDS]) == 0
    assert paged.read_text() == lines
    assert not not_paged.exists()


@pytest.mark.parametrize(
    ("on_path", "used"),
    [(("pager", "less", "more"), "pager"), (("less", "more"), "less"), (("more",), "more")],
)
def test_with_no_pager_set_the_first_of_pager_less_more_on_the_path_pages(
    two_boards, tmp_path, monkeypatch, on_path, used
):
    db, lines = two_boards
    folder = tmp_path / "bin"
    folder.mkdir()
    for name in on_path:
        executable(folder, name, f"/bin/cat > {tmp_path / name}.txt")
    no_pager_set(monkeypatch)
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.setenv("PATH", str(folder))
    with terminal(10) as screen:
        assert main([*db, *TWO_BOARDS]) == 0
    assert screen.text() == ""
    assert (tmp_path / f"{used}.txt").read_text() == lines
    assert [name for name in on_path if (tmp_path / f"{name}.txt").exists()] == [used]


@pytest.mark.parametrize("term", ["dumb", "emacs"])
def test_a_dumb_terminal_with_no_pager_set_gets_the_lines_as_they_are(
    two_boards, tmp_path, monkeypatch, term
):
    db, lines = two_boards
    folder = tmp_path / "bin"
    folder.mkdir()
    executable(folder, "less", f"/bin/cat > {tmp_path / 'less.txt'}")
    no_pager_set(monkeypatch)
    monkeypatch.setenv("TERM", term)
    monkeypatch.setenv("PATH", str(folder))
    with terminal(10) as screen:
        assert main([*db, *TWO_BOARDS]) == 0
    assert screen.text() == lines
    assert not (tmp_path / "less.txt").exists()


def test_no_pager_on_the_path_gets_the_lines_as_they_are(two_boards, tmp_path, monkeypatch):
    db, lines = two_boards
    no_pager_set(monkeypatch)
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.setenv("PATH", str(tmp_path))  # no pager, less or more in it
    with terminal(10) as screen:
        assert main([*db, *TWO_BOARDS]) == 0
    assert screen.text() == lines


def test_without_a_keyboard_no_pager_is_started(two_boards, tmp_path, monkeypatch):
    db, lines = two_boards
    command, paged = pager(tmp_path)
    monkeypatch.setenv("PAGER", command)
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # stdin redirected: nothing to drive a pager with
    with terminal(10, keyboard=False) as screen:
        assert main([*db, *TWO_BOARDS]) == 0
    assert screen.text() == lines
    assert not paged.exists()


def test_a_pager_quit_after_its_first_line_ends_the_listing_quietly(capsys, tmp_path, monkeypatch):
    path = tmp_path / "first.txt"
    monkeypatch.setenv("PAGER", f"head -n 1 > {path}")
    with terminal(10) as screen:  # 120 boards, over a thousand lines
        status = main(["--db", str(tmp_path / "none.sqlite"), "show", "A2_B4", "--from", "1"])
    assert status == 0
    assert screen.text() == ""
    assert (
        path.read_text() == "A2_B4 #1  canonical 1 (id)  spectrum @&ab@@cdbac@d&@@  (computed, not stored)\n"
    )
    assert capsys.readouterr().err == ""


def test_ctrl_c_while_paging_is_an_interruption_and_the_handler_is_put_back(
    two_boards, tmp_path, monkeypatch
):
    import signal

    db, lines = two_boards
    command, paged = pager(tmp_path)
    monkeypatch.setenv("PAGER", f"kill -INT $PPID; {command}")  # ^C reaches the pager and bbcore
    # Python's own handler, as a console script starts with (a test runner may have its own)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with terminal(10) as screen:
            status = main([*db, *TWO_BOARDS])
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, previous)
    assert status == 130
    assert screen.text() == ""


def test_ctrl_c_ignored_when_the_command_started_stays_ignored(capsys, two_boards, tmp_path, monkeypatch):
    import signal

    db, lines = two_boards
    command, paged = pager(tmp_path)
    monkeypatch.setenv("PAGER", f"kill -INT $PPID; {command}")
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # a background job of a shell without job control
    try:
        with terminal(10):
            status = main([*db, *TWO_BOARDS])
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)
    assert status == 0
    assert paged.read_text() == lines
    assert capsys.readouterr().err == ""


MOLECULES_LINE = re.compile(
    r"A2_B4 (?P<phase>exploring|spectrums|tracing|complete): (?P<done>[\d,]+)/120 \((?P<percent>[\d.]+)%\)  "
    r"(?:(?P<rate>[\d,]+) mol/s  )?elapsed \d+:\d\d(?P<eta>  ETA (?:\?|\d+:\d\d))?"
)
"""A progress line counting molecules: done/total, percentage, rate once known, elapsed, ETA."""

COUNTED_LINE = re.compile(
    r"A2_B4 (?P<phase>grouping|writing): (?P<done>\d+)/(?P<total>\d+) (?P<unit>shards|families) "
    r"\((?P<percent>[\d.]+)%\)  elapsed \d+:\d\d"
)
"""A progress line counting shards or families: no rate and no ETA."""


@pytest.mark.parametrize("store", ["full", "compact"])
def test_an_exploration_off_a_terminal_prints_each_phase_s_progress_in_its_words(capsys, tmp_path, store):
    db = str(tmp_path / f"{store}.sqlite")
    status, out, err = shown(capsys, "--db", db, "explore", "A2_B4", "--workers", "1", "--store", store)
    assert status == 0 and out.startswith("A2_B4 complete: 120 molecules")
    lines = err.splitlines()
    counted = [COUNTED_LINE.fullmatch(line) for line in lines if " shards " in line or " families " in line]
    molecules = [
        MOLECULES_LINE.fullmatch(line) for line in lines if line not in (c.string for c in counted if c)
    ]
    assert all(counted) and all(molecules), err
    assert bool(counted) == (store == "compact")
    for match in counted:
        done, total = int(match["done"]), int(match["total"])
        assert match["percent"] == f"{100 * done / total if total else 100:.1f}"
    phases = [match["phase"] for match in (*molecules, *counted)]
    # each phase's tenths start again at its 0%
    assert sorted(set(phases)) == (
        ["complete", "exploring", "spectrums"]
        if store == "full"
        else ["complete", "grouping", "tracing", "writing"]
    )
    for phase in set(phases) - {"complete"}:
        assert next(m for m in (*molecules, *counted) if m["phase"] == phase)["done"] == "0"
    assert molecules[-1]["phase"] == "complete"
    for match in molecules:
        done = int(match["done"])
        assert match["percent"] == f"{100 * done / 120:.1f}"
        # no ETA for a finished run; a phase's start has no rate yet, so no ETA either ("?")
        assert (match["eta"] is None) == (match["phase"] == "complete")
        if done == 0:
            assert match["rate"] is None and match["eta"] == "  ETA ?"
    assert molecules[-1]["rate"] is not None and molecules[-1]["done"] == "120"


def test_a_run_of_a_molecule_a_second_shows_its_rate():
    """Below 1 molecule a second (a large configuration's start) the rate is shown, rounded."""
    stream = io.StringIO()
    printer = ProgressPrinter(stream)
    printer(Progress("A8_B8", 3, 4_426_165_368, 4.0, 0.75, "exploring"))
    assert stream.getvalue().startswith("A8_B8 exploring: 3/4,426,165,368 (0.0%)  1 mol/s  ")


def test_a_long_run_shows_hours_and_a_paused_one_no_eta():
    stream = io.StringIO()
    printer = ProgressPrinter(stream)
    printer(Progress("A8_B8", 1_000_000, 4_426_165_368, 3_725.4, 268.5, "exploring"))
    printer(Progress("A8_B8", 1_000_000, 4_426_165_368, 3_725.4, 268.5, "paused"))
    exploring, paused = stream.getvalue().splitlines()
    eta = clock_words((4_426_165_368 - 1_000_000) / 268.5)
    assert (
        exploring == f"A8_B8 exploring: 1,000,000/4,426,165,368 (0.0%)  268 mol/s  elapsed 1:02:05  ETA {eta}"
    )
    assert paused == "A8_B8 paused: 1,000,000/4,426,165,368 (0.0%)  268 mol/s  elapsed 1:02:05"


def clock_words(seconds: float) -> str:
    """Seconds as hours, minutes and seconds, ``h:mm:ss``, worked out here."""
    whole = round(seconds)
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"


def test_a_status_line_redraws_once_an_interval_and_always_at_the_end():
    line = StatusLine(io.StringIO(), interval=3_600.0)
    assert line.due()  # the first is always due (the machine has been up an hour: monotonic time)
    assert not line.due()  # the next, an hour later only
    assert line.due(final=True)  # the last state, at once
    assert not line.due()


def test_the_status_table_has_its_words_left_aligned_and_no_trailing_blanks(capsys, explored):
    status, out, _ = shown(capsys, "--db", str(explored), "status")
    assert status == 0
    header, *rows = out.splitlines()[1:]
    assert header.split() == ["config", "molecules", "stored", "state", "store", "families", "spectra"]
    assert [row.split()[0] for row in rows] == ["A2_B4", "A3_B4", "A4_B4"]
    for row in (header, *rows):
        assert row == row.rstrip()
    for row in rows:  # each word starts under its header
        for word in header.split()[1:]:
            assert row[header.index(word)] != " " and row[header.index(word) - 1] == " "
    assert "1,820" in rows[2]


def test_the_report_s_tables_right_align_their_numbers_with_separators(capsys, explored):
    status, out, _ = shown(capsys, "--db", str(explored), "report", "A4_B4")
    assert status == 0
    table = out.split("Molecules by their ray with most turns:\n")[1].split("\n\n")[0].splitlines()
    header, *rows = table
    assert header.split() == ["turns", "absorbed", "reflected", "out", "any"]
    assert {len(row) for row in table} == {len(header)}  # every column right-aligned, the last too
    counts = [[int(word.replace(",", "")) for word in row.split()] for row in rows]
    assert [row[0] for row in counts] == list(range(len(rows)))
    for row, numbers in zip(rows, counts):
        assert row.split() == [f"{n:,}" for n in numbers]
    assert any(n >= 1_000 for numbers in counts for n in numbers)  # a separator shown


@pytest.mark.parametrize("text", ["abc", "x" * 40, "y" * 41])
def test_a_number_that_is_not_one_is_quoted_whole_up_to_40_characters(capsys, tmp_path, text):
    with pytest.raises(SystemExit) as stopped:
        main(["--db", str(tmp_path / "none.sqlite"), "decode", "A2_B4", "--limit", text])
    assert stopped.value.code == 2
    shown_text = text if len(text) <= 40 else text[:37] + "..."
    assert capsys.readouterr().err == (
        f"bbcore decode: error: argument --limit: expected a whole number, got {shown_text!r} "
        "(see 'bbcore decode --help')\n"
    )


@pytest.mark.parametrize(("config", "bar"), [(Config(4, 6), False), (Config(4, 8), True)])
def test_a_direct_decode_draws_its_bar_on_a_terminal_only_past_four_batches(capsys, tmp_path, config, bar):
    """A4_B6's 58,905 molecules are under four batches: no bar; A4_B8's 635,376 are over (a ray
    shown: every molecule is traced)."""
    game = "@" + "." * (config.positions - 1)
    master, slave = pty.openpty()
    stderr = open(slave, "w", encoding="utf-8", closefd=False)
    screen = Screen(master)
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(sys, "stderr", stderr)
            status = main(["--db", str(tmp_path / "none.sqlite"), "decode", config.name, game, "--json"])
            stderr.flush()
    finally:
        os.close(slave)
        screen.thread.join(timeout=30)
        os.close(master)
    assert status == 0 and json.loads(capsys.readouterr().out)["config"] == config.name
    drawn = screen.text()
    assert (f"decoding {config.name}: " in drawn) == bar
    assert drawn.endswith("\r\x1b[K") == bar  # erased once done


def test_decode_ranks_by_remaining_or_information_only_and_says_so_in_its_help(capsys, tmp_path):
    with pytest.raises(SystemExit) as stopped:
        main(["--db", str(tmp_path / "none.sqlite"), "decode", "A2_B4", "--by", "worst"])
    assert stopped.value.code == 2
    assert "argument --by: invalid choice: 'worst'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stopped:
        main(["decode", "--help"])
    assert stopped.value.code == 0
    assert "expected information in bits" in " ".join(capsys.readouterr().out.split())


def test_decode_json_lists_as_many_molecules_as_limit_asks(capsys, tmp_path):
    db = ["--db", str(tmp_path / "none.sqlite")]
    status, out, _ = shown(capsys, *db, "decode", "A2_B4", "@" + "." * 15, "--json")
    every = json.loads(out)["molecules"]
    status_limited, out, _ = shown(capsys, *db, "decode", "A2_B4", "@" + "." * 15, "--json", "--limit", "2")
    assert status == status_limited == 0 and len(every) > 2
    assert json.loads(out)["molecules"] == every[:2]
