"""The bbcore command line: real output, and one-line errors for bad input."""

from __future__ import annotations

import fcntl
import json
import multiprocessing
import os
import pty
import select
import sqlite3
import struct
import subprocess
import sys
import termios
import time
from math import comb
from pathlib import Path

import pytest
from expect import BBCORE, bbcore, disk_full_at, one_line_error
from proctree import READ, reads_its_terminal, session_processes, wait_until, waits_in

from bbcore import rays, solver
from bbcore.cli import build_parser, commands, main
from bbcore.cli.common import COMMANDS as COMMAND_TABLE
from bbcore.config import Config
from bbcore.explore import explore
from bbcore.geometry import TRANSFORM_NAMES, transform_atoms
from bbcore.numbering import atoms_of, number_of
from bbcore.statistics import StatisticsError, statistics_report
from bbcore.store import db

ROOT = Path(__file__).resolve().parent.parent


def failure(result: subprocess.CompletedProcess) -> tuple[int, str]:
    """The exit status and stderr of a finished command, for ``one_line_error``."""
    return result.returncode, result.stderr


def test_show_prints_the_spec_worked_example(capsys, tmp_path):
    assert main(["--db", str(tmp_path / "none.sqlite"), "show", "A2_B4", "2"]) == 0
    out = capsys.readouterr().out
    assert "A2_B4 #2  canonical 2 (id)  spectrum @&ab@&@cbac@&@&@" in out
    assert "  @ & @ &\n@ O - O - @\n& - - - - c\na - - - - a\nb - - - - b\n  @ & @ c\n" in out
    assert "absorbed   6  (max length 3, max turns 0, total length 7, total turns 0)" in out
    assert "reflected  4  (edge 3, deep 1; max length 3, max turns 0" in out
    assert "out pairs  3  (max length 4, max turns 1, total length 11, total turns 1)" in out
    assert not (tmp_path / "none.sqlite").exists()  # show never creates a database


def test_show_from_store_by_spectrum_and_range(capsys, explored):
    assert main(["--db", str(explored), "show", "A3_B4", "--spectrum", "@&&@@&@&@aa@&@&@"]) == 0
    out = capsys.readouterr().out
    assert out.count("A3_B4 #") == 2 and "(computed" not in out
    assert main(["--db", str(explored), "show", "A3_B4", "--from", "1", "--to", "3"]) == 0
    out = capsys.readouterr().out
    assert [line.split()[1] for line in out.splitlines() if line.startswith("A3_B4 #")] == ["#1", "#2", "#3"]


ARROW = {(0, 1): ">", (0, -1): "<", (-1, 0): "^", (1, 0): "v"}


def test_show_draws_every_ray_of_the_worked_example(capsys, tmp_path):
    """Each ray of A2_B4 #2, drawn by ``--ray P``: its cells are the reference's, each arrow
    points to the next cell, and the caption gives the reference's end and figures."""
    config = Config(2, 4)
    turning = 0
    for ray in rays.trace_all(config, atoms_of(config, 2)):
        assert (
            main(["--db", str(tmp_path / "x.sqlite"), "show", "A2_B4", "2", "--ray", str(ray.position)]) == 0
        )
        out = capsys.readouterr().out.splitlines()
        # The box's lines: a cell (atom, empty or a piece of the path) every other column.
        box = [
            line
            for line in (line.ljust(11) for line in out[1:])
            if all(line[2 * column] in "O-<>^v+" for column in range(1, 5))
        ]
        assert len(box) == 4
        cells = {
            (line, column): box[line - 1][2 * column]
            for line in range(1, 5)
            for column in range(1, 5)
            if box[line - 1][2 * column] not in "O-"
        }
        assert set(cells) == set(ray.path)
        for here, following in zip(ray.path, ray.path[1:]):
            assert cells[here] == ARROW[(following[0] - here[0], following[1] - here[1])]
        end = {"absorbed": "is absorbed", "reflected": "is reflected"}.get(
            ray.result, f"comes out at position {ray.exit}"
        )
        cells_text = f"{ray.length} cell" + "s" * (ray.length != 1)
        turns_text = f"{ray.turns} turn" + "s" * (ray.turns != 1)
        assert f"ray from position {ray.position} {end}: {cells_text}, {turns_text}" in out
        turning += ray.turns > 0
    assert turning  # rays that turn are among them
    assert not (tmp_path / "x.sqlite").exists()


def reference_groups(config: Config) -> tuple[list[list[int]], int]:
    """The spectral groups of a configuration by brute force (reference rays), and how many
    families they make up to the 8 symmetries."""
    by_spectrum: dict[str, list[int]] = {}
    for number in range(1, config.nb_mol + 1):
        by_spectrum.setdefault(rays.spectrum(config, atoms_of(config, number)), []).append(number)
    groups = [numbers for numbers in by_spectrum.values() if len(numbers) > 1]
    orbits = {
        frozenset(
            frozenset(number_of(config, transform_atoms(config, atoms_of(config, n), t)) for n in group)
            for t in TRANSFORM_NAMES
        )
        for group in groups
    }
    return groups, len(orbits)


def test_groups_and_status(capsys, explored):
    groups, families = reference_groups(Config(4, 4))
    assert main(["--db", str(explored), "groups", "A4_B4"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"A4_B4: {families} families of spectral groups (transform id)"
    assert len([line for line in out[3:] if line.strip()]) == families
    threes = sum(len(group) == 3 for group in groups)
    assert main(["--db", str(explored), "groups", "A4_B4", "--all", "--size", "3"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"A4_B4: {threes} spectral groups of size 3"
    rows = [line for line in out[3:] if line.strip()]
    assert len(rows) == threes and all(line.split()[0] == "3" for line in rows)
    assert reference_groups(Config(3, 4))[1] == 1
    assert main(["--db", str(explored), "groups", "A3_B4"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "A3_B4: 1 family of spectral groups (transform id)"
    assert main(["--db", str(explored), "status"]) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("A4_B4"))
    # Families up to symmetry, then ambiguous spectra.
    assert line.split() == [
        "A4_B4",
        "1,820",
        "1,820",
        "complete",
        "full",
        f"{families:,}",
        f"{len(groups):,}",
    ]


def test_explore_prints_plain_progress_when_not_a_terminal(tmp_path):
    result = bbcore("--db", str(tmp_path / "db.sqlite"), "explore", "a3_b4")
    assert result.returncode == 0, result.stderr
    assert "A3_B4 complete: 560 molecules, 4 ambiguous spectra (1 family up to symmetry)" in result.stdout
    lines = result.stderr.splitlines()
    assert 2 <= len(lines) <= 14 and lines[-1].startswith("A3_B4 complete: 560/560 (100.0%)")
    again = bbcore("--db", str(tmp_path / "db.sqlite"), "explore", "A3_B4")
    assert again.returncode == 0 and "already complete" in again.stdout


def test_reset_needs_confirmation_off_a_terminal(tmp_path):
    path = tmp_path / "db.sqlite"
    explore(Config(3, 4), path)
    one_line_error(*failure(bbcore("--db", str(path), "reset", "A3_B4")), "--yes")
    done = bbcore("--db", str(path), "reset", "A3_B4", "--yes")
    assert done.returncode == 0 and "560 molecules deleted" in done.stdout
    with sqlite3.connect(path) as connection:
        assert connection.execute("SELECT COUNT(*) FROM Molecules").fetchone() == (0,)
        assert connection.execute("SELECT COUNT(*) FROM Configurations").fetchone() == (0,)


@pytest.mark.parametrize(
    "config, words",
    [
        ("A4B8", ["invalid configuration", "AN_BW"]),
        ("A4_B31", ["width must be between 2 and 30"]),
        ("A4_B14", ["only squares up to 13 x 13 are explored"]),
        ("A4_B8x6", ["rectangle", "not explored"]),
        ("A0_B8", ["number of atoms must be between 1 and 63"]),
        ("A16_B4", ["number of atoms must be between 1 and 15"]),
    ],
)
def test_a_bad_configuration_is_one_line(tmp_path, config, words):
    one_line_error(*failure(bbcore("--db", str(tmp_path / "db.sqlite"), "explore", config)), *words)
    assert not (tmp_path / "db.sqlite").exists()


def test_an_unexplored_configuration_is_one_line(explored):
    one_line_error(
        *failure(bbcore("--db", str(explored), "groups", "A2_B5")), "not explored", "bbcore explore A2_B5"
    )
    one_line_error(
        *failure(bbcore("--db", str(explored), "show", "A2_B5", "--spectrum", "@" * 20)), "not explored"
    )


def test_a_file_that_is_not_a_database_is_never_changed(tmp_path):
    bogus = tmp_path / "notes.sqlite"
    bogus.write_bytes(b"my precious notes\n" * 100)
    for args in (["status"], ["explore", "A3_B4"], ["groups", "A3_B4"], ["reset", "A3_B4", "--yes"]):
        one_line_error(*failure(bbcore("--db", str(bogus), *args)), "not a bbtui database")
    assert bogus.read_bytes() == b"my precious notes\n" * 100
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.sqlite"]


def test_a_corrupt_database_is_one_line(tmp_path):
    path = tmp_path / "db.sqlite"
    explore(Config(3, 4), path)
    db.close()  # the last connection checkpoints the WAL: every page is in the file
    data = bytearray(path.read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)  # the schema page
    path.write_bytes(bytes(data))
    one_line_error(*failure(bbcore("--db", str(path), "status")), str(path))


EVERY_COMMAND = (
    ["status"],
    ["explore", "A3_B4"],
    ["reset", "A3_B4", "--yes"],
    ["spectrums", "A3_B4"],
    ["migrate"],
    ["groups", "A3_B4"],
    ["show", "A3_B4", "1"],
    ["report", "A3_B4"],
    ["export", "A3_B4"],
    ["decode", "A3_B4", "--", "-" * 16],
    ["strategy", "A3_B4"],
    ["check", "A3_B4"],
    ["copy", "A3_B4", "TARGET"],
)
"""Every bbcore command, each given the database to open (``copy``: as its source, into TARGET)."""


def test_a_symlink_loop_is_named_in_one_line_by_every_command_and_as_copy_s_target(tmp_path, explored):
    loop = tmp_path / "loop.sqlite"
    loop.symlink_to("loop.sqlite")  # itself
    for args in EVERY_COMMAND:
        args = [str(tmp_path / "copied.sqlite") if word == "TARGET" else word for word in args]
        result = bbcore("--db", str(loop), *args, timeout=120)
        one_line_error(*failure(result), "loop.sqlite is a symbolic link loop")
    result = bbcore("--db", str(explored), "copy", "A3_B4", str(loop), timeout=120)
    one_line_error(*failure(result), "loop.sqlite is a symbolic link loop")
    assert loop.is_symlink() and sorted(p.name for p in tmp_path.iterdir()) == ["loop.sqlite"]


def test_a_fifo_is_refused_in_one_line_by_every_command_and_never_blocks(tmp_path, explored):
    """Nothing ever opens it (a reader would wait for a writer for good): subprocess's timeout guards."""
    fifo = tmp_path / "fifo.sqlite"
    os.mkfifo(fifo)
    for args in EVERY_COMMAND:
        args = [str(tmp_path / "copied.sqlite") if word == "TARGET" else word for word in args]
        result = bbcore("--db", str(fifo), *args, timeout=120)
        one_line_error(*failure(result), "fifo.sqlite is a FIFO (named pipe), not a regular file")
    result = bbcore("--db", str(explored), "copy", "A3_B4", str(fifo), timeout=120)
    one_line_error(*failure(result), "fifo.sqlite is a FIFO")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo.sqlite"]


def test_a_missing_folder_or_database_is_one_line(tmp_path):
    one_line_error(
        *failure(bbcore("--db", str(tmp_path / "no" / "such" / "db.sqlite"), "explore", "A3_B4")),
        "does not exist",
    )
    one_line_error(*failure(bbcore("--db", str(tmp_path / "absent.sqlite"), "status")), "no database at")
    assert not (tmp_path / "absent.sqlite").exists()


def test_a_locked_database_is_one_line(tmp_path, capsys, monkeypatch):
    """In process, with a busy timeout of 0.1 s: the test need not wait out the real 5 s."""
    from bbcore import store

    path = tmp_path / "db.sqlite"
    explore(Config(3, 4), path)
    db.close()
    monkeypatch.setattr(store, "BUSY_TIMEOUT_MS", 100)
    monkeypatch.setattr(store, "PRAGMAS", {**store.PRAGMAS, "busy_timeout": 100})
    monkeypatch.setattr(store, "READ_PRAGMAS", {**store.READ_PRAGMAS, "busy_timeout": 100})
    # An exclusive-mode writer keeps even WAL readers out.
    locker = sqlite3.connect(path, isolation_level=None)
    locker.execute("PRAGMA locking_mode=EXCLUSIVE")
    locker.execute("BEGIN EXCLUSIVE")
    try:
        status = main(["--db", str(path), "status"])
        one_line_error(status, capsys.readouterr().err, "locked")
    finally:
        locker.execute("ROLLBACK")
        locker.close()


def test_every_command_has_help():
    """Every registered command (read from the parser, so that new ones are covered) answers
    --help with its own usage, its options and their help."""
    parser = build_parser()
    commands = next(action for action in parser._actions if action.dest == "command").choices
    expected = {"explore", "reset", "spectrums", "status", "show", "groups", "report", "export", "decode"}
    assert expected <= set(commands)
    for name, command in commands.items():
        result = bbcore(name, "--help")
        assert result.returncode == 0 and result.stdout.startswith(f"usage: bbcore {name}"), name
        text = " ".join(result.stdout.split())
        for action in command._actions:
            assert all(option in text for option in action.option_strings), (name, action)
            if action.help and "%" not in action.help:
                assert " ".join(action.help.split()) in text, (name, action.help)


LOADED_COMMAND_MODULES = """
import json, sys
from bbcore import solver
from bbcore.cli import main
try:
    main(sys.argv[1:])
finally:
    print(json.dumps(sorted(m for m in sys.modules if m.startswith("bbcore.cli."))))
"""


def command_modules_loaded(*argv: str) -> tuple[subprocess.CompletedProcess, list[str]]:
    """Run ``bbcore ARGV`` in a fresh interpreter; the modules of ``bbcore.cli`` it imported."""
    result = subprocess.run(
        [sys.executable, "-c", LOADED_COMMAND_MODULES, *argv],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
        timeout=600,
    )
    return result, json.loads(result.stdout.splitlines()[-1])


def test_a_command_imports_only_its_own_module(tmp_path):
    """``bbcore --help`` lists every command from ``COMMANDS`` alone, and a command imports its
    own module only (``copy`` also reads explore's pause signals)."""
    db = str(tmp_path / "none.sqlite")
    result, loaded = command_modules_loaded("--help")
    assert result.returncode == 0 and loaded == ["bbcore.cli.common"]
    for name, line in (("decode", "molecules agreeing with a game"), ("check", "verify a stored")):
        assert f"{name} " in result.stdout and line in result.stdout
    result, loaded = command_modules_loaded("--db", db, "decode", "A2_B4", "-H" + "-" * 14)
    assert result.returncode == 0, result.stderr
    assert loaded == ["bbcore.cli.common", "bbcore.cli.decode"]
    result, loaded = command_modules_loaded("--db", db, "status")
    assert result.returncode == 0 and loaded == ["bbcore.cli.common", "bbcore.cli.explore"]
    result, loaded = command_modules_loaded("copy", "--help")
    assert result.returncode == 0 and result.stdout.startswith("usage: bbcore copy")
    assert loaded == ["bbcore.cli.common", "bbcore.cli.copy", "bbcore.cli.explore"]


def test_the_listing_without_the_modules_is_the_full_parsers():
    """What ``bbcore --help`` prints before any command module is imported is what the parser
    with every module prints: the same commands, in the same order, with the same lines."""
    assert build_parser(()).format_help() == build_parser().format_help()
    assert list(commands(build_parser())) == list(COMMAND_TABLE)


COMMANDS = (
    "explore",
    "reset",
    "spectrums",
    "status",
    "show",
    "groups",
    "report",
    "export",
    "decode",
    "strategy",
)


def test_every_command_describes_itself_and_names_its_configuration_config():
    for command in COMMANDS:
        out = bbcore(command, "--help").stdout
        usage, _, rest = out.partition("\n\n")
        description = rest.split("\n\n")[0]
        # A sentence of its own under the usage, not straight into the arguments.
        assert not description.startswith(("positional arguments", "options")), command
        if command != "status":
            assert " CONFIG" in usage and " config" not in usage, (command, usage)


def test_messages_quote_commands_one_way_and_write_numbers_with_separators(capsys, tmp_path):
    # An unexplored configuration's report (as the Statistics screen says it too): single
    # quotes round the command, as in every other message.
    explore(Config(2, 3), tmp_path / "x.sqlite")
    one_line_error(
        *failure(bbcore("--db", str(tmp_path / "x.sqlite"), "report", "A2_B4")), "'bbcore explore A2_B4'"
    )
    with pytest.raises(StatisticsError, match="run 'bbcore explore A2_B4' first"):
        statistics_report(Config(2, 4))
    # A number out of range: 635,376 as everywhere else, not 635376.
    one_line_error(
        *failure(bbcore("--db", str(tmp_path / "x.sqlite"), "show", "A4_B8", "635377")), "1..635,376"
    )
    assert main(["--db", str(tmp_path / "x.sqlite"), "show", "A4_B8", "10430"]) == 0
    assert capsys.readouterr().out.startswith("A4_B8 #10,430  canonical ")


def test_a_game_starting_with_not_shot_is_read(tmp_path):
    game = "-H------1---------H------------1"
    for args in (("--", game), (game,)):
        result = bbcore("--db", str(tmp_path / "x.sqlite"), "decode", "A4_B8", *args)
        assert result.returncode == 0, result.stderr
        assert result.stdout.startswith("A4_B8: 3 rays shown on 4 positions")


def test_bbtui_has_a_version():
    result = subprocess.run(
        [sys.executable, "-m", "bbtui.app", "--version"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
    )
    assert result.returncode == 0 and result.stdout.startswith("bbtui ")


def test_a_full_disk_during_explore_says_where_how_much_and_that_the_same_command_resumes(
    tmp_path, capsys, monkeypatch
):
    """SQLITE_FULL injected in the third range's transaction, as SQLite does it (``disk_full_at``):
    the message names the cause, not the failed rollback that followed it."""
    import bbcore.full as full_module

    commit = full_module._commit_chunk
    disk_full_at(monkeypatch, 3)
    path = tmp_path / "bb.sqlite"
    assert main(["--db", str(path), "explore", "A4_B6"]) == 2
    lines = capsys.readouterr().err.splitlines()  # progress lines (not a terminal), then the error
    assert [line for line in lines if "error" in line] == lines[-1:] and "cannot rollback" not in lines[-1]
    err = lines[-1]
    with sqlite3.connect(path) as connection:
        (stored,) = connection.execute("SELECT COUNT(*) FROM Molecules").fetchone()
    assert 0 < stored < 58_905
    assert err.startswith(f"bbcore: error: the disk is full at {tmp_path} (")
    assert "A4_B6 needs about " in err
    assert f"more (an estimate) for its {58_905 - stored:,} molecules left" in err
    assert f"{stored:,} are stored and kept" in err
    assert err.endswith(f"then run 'bbcore --db {path} explore A4_B6' again to resume")

    # The same command resumes, and the file equals a clean run.
    monkeypatch.setattr(full_module, "_commit_chunk", commit)
    assert main(["--db", str(path), "explore", "A4_B6"]) == 0
    clean = tmp_path / "clean.sqlite"
    explore(Config(4, 6), clean)
    query = "SELECT * FROM Molecules WHERE config = 'A4_B6' ORDER BY number"
    with sqlite3.connect(path) as resumed, sqlite3.connect(clean) as reference:
        rows = [row[:-2] for row in resumed.execute(query)]  # dh1, dh2: when written
        assert rows == [row[:-2] for row in reference.execute(query)] and len(rows) == 58_905


def test_a_resume_into_grouping_prints_the_grouping_progress(tmp_path, capsys, monkeypatch):
    """No '0 mol/s ... ETA ?' while the groups are built: the phase's own figures, every 10%."""
    from bbcore import spectra

    path = tmp_path / "bb.sqlite"
    explore(Config(4, 5), path)
    with sqlite3.connect(path) as connection:  # every molecule stored, the groups not built
        connection.execute('DROP INDEX "Molecules_A4_B5_spectrum"')
        connection.execute('DROP INDEX "Molecules_A4_B5_canonical"')
        connection.execute("UPDATE Configurations SET complete = 0")
    monkeypatch.setattr(spectra, "OPS_PER_TICK", 500)
    monkeypatch.setattr(spectra, "REPORT_EVERY", 0.0)
    assert main(["--db", str(path), "explore", "A4_B5"]) == 0
    lines = capsys.readouterr().err.splitlines()
    grouping = [line for line in lines if line.startswith("A4_B5 spectrums: ")]
    assert not any(line.startswith("A4_B5 exploring") for line in lines)  # nothing left to explore
    midway = [line for line in grouping if "12,650/12,650" not in line]
    assert len(midway) >= 3, lines  # a line every 10%
    assert all(" mol/s  elapsed " in line and "ETA ?" not in line for line in midway[1:]), grouping
    assert grouping[-1].startswith("A4_B5 spectrums: 12,650/12,650 (100.0%)")
    assert not any(" 0 mol/s" in line for line in lines)


# -- numbers past 64 bits ------------------------------------------------------------

A30_B13 = Config(30, 13)


def test_show_the_first_and_last_molecule_of_a30_b13(tmp_path):
    """A30_B13 has C(169, 30) ~ 1.7 x 10^33 molecules: its first and last are drawn, computed."""
    last = A30_B13.nb_mol
    result = bbcore("--db", str(tmp_path / "none.sqlite"), "show", "A30_B13", "1", str(last))
    assert result.returncode == 0 and result.stderr == "", result.stderr
    first_block, last_block = result.stdout.split("\n\n")
    for block, number, atoms, canonical in (
        (first_block, "1", range(30), "canonical 1 (id)"),
        (last_block, f"{last:,}", range(169 - 30, 169), "canonical 1 (rot180)"),
    ):
        heading, *board = block.splitlines()
        spectrum = rays.spectrum(A30_B13, atoms)
        assert heading == f"A30_B13 #{number}  {canonical}  spectrum {spectrum}  (computed, not stored)"
        assert sum(line.count("O") for line in board[:15]) == 30
        absorbed = rays.statistics(A30_B13, range(30))["absorbed_number"]  # the same up to symmetry
        assert f"absorbed  {absorbed:2d}" in block
    assert not (tmp_path / "none.sqlite").exists()


def test_show_streams_a_range_of_a30_b13(tmp_path):
    """``--from 1`` alone (to the last molecule) is shown as it is made, never listed first:
    the reader gets boards at once and may stop reading."""
    process = subprocess.Popen(
        [*BBCORE, "--db", str(tmp_path / "none.sqlite"), "show", "A30_B13", "--from", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        # A command that listed the range first would never write: wait 60 s at most.
        ready, _, _ = select.select([process.stdout], [], [], 60)
        assert ready, "no board within 60 s"
        lines = [process.stdout.readline() for _ in range(40)]
        assert lines[0].startswith("A30_B13 #1  ")
        assert any(line.startswith("A30_B13 #2  ") for line in lines)
        process.stdout.close()  # the reader goes away, as ``| head`` does
        assert process.wait(timeout=60) == 0
        assert "Traceback" not in process.stderr.read()
    finally:
        process.kill()
        process.wait()
        process.stderr.close()


class Terminal:
    """``bbcore ARGS`` on a pseudo-terminal of its own, its controlling terminal as in a shell
    (``setsid --ctty``): what a user sees, read from the terminal's other end.

    Started as a shell starts a command in the foreground: Ctrl-C at its default whatever
    the tests' runner has (a runner started in the background of a shell without job control
    ignores SIGINT, and its children would too: the command would never see the ^C)."""

    def __init__(self, *args: str, rows: int, pager: str) -> None:
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, 80, 0, 0))
        # The screen's size is the terminal's (no $LINES), the pager the one named with its
        # own defaults (no $LESS of whoever runs the tests).
        unset = ("LINES", "COLUMNS", "MANPAGER", "LESS")
        env = {key: value for key, value in os.environ.items() if key not in unset}
        self.process = subprocess.Popen(
            ["setsid", "--ctty", "--wait", "env", "--default-signal=INT", *BBCORE, *args],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env={**env, "PYTHONPATH": str(ROOT), "TERM": "xterm", "PAGER": pager},
            cwd=ROOT,
        )
        os.close(slave)
        self.shown = b""

    def process_named(self, name: str) -> int:
        """The pid of the terminal's process running the program ``name`` (the pager)."""
        return next(
            pid
            for pid, command in session_processes(self.process.pid)
            if Path(command.split()[0]).name == name
        )

    def read_until(self, text: str, timeout: float) -> str:
        """What the terminal showed until ``text`` (AssertionError if not within ``timeout`` s)."""
        deadline = time.monotonic() + timeout
        while text.encode() not in self.shown:
            left = deadline - time.monotonic()
            assert left > 0, f"{text!r} not shown within {timeout} s; last shown: {self.shown[-500:]!r}"
            if select.select([self.master], [], [], left)[0]:
                try:
                    self.shown += os.read(self.master, 65536)
                except OSError:  # EIO: every process of the terminal has ended
                    break
        return self.shown.decode(errors="replace")

    def finish(self, timeout: float = 60) -> tuple[int, str]:
        """Its exit status once it ends, and everything the terminal showed."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if select.select([self.master], [], [], 0.1)[0]:
                try:
                    self.shown += os.read(self.master, 65536)
                except OSError:  # EIO: every process of the terminal has ended
                    break
            elif self.process.poll() is not None:
                break
        status = self.process.wait(timeout=1)
        return status, self.shown.decode(errors="replace")

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        os.close(self.master)


def test_show_on_a_terminal_pages_the_boards_as_they_are_made(tmp_path):
    """On a terminal, a listing longer than the screen goes to the pager as it is made: the
    first boards of an endless range show while the command still runs (never listed first),
    and quitting the pager ends the command quietly, status 0."""
    terminal = Terminal(
        "--db", str(tmp_path / "none.sqlite"), "show", "A30_B13", "--from", "1", rows=24, pager="less"
    )
    try:
        shown = terminal.read_until("A30_B13 #2  ", timeout=60)
        assert "A30_B13 #1  " in shown
        assert terminal.process.poll() is None  # still making boards: the pager shows them already
        os.write(terminal.master, b"q")
        status, shown = terminal.finish()
    finally:
        terminal.close()
    assert status == 0 and "Traceback" not in shown, shown[-2000:]


@pytest.mark.skipif(READ is None, reason="the read system call's number is not known here")
def test_ctrl_c_under_the_pager_stops_the_making_and_says_so_once_the_pager_is_quit(tmp_path):
    """Ctrl-C reaches the command and the pager (one process group): the boards stop being made,
    the pager keeps the terminal until it is quit, then the one line and status 130.

    Each event waits for the effect of the one before, so that the order is the one meant:
    the pager's first page and the pager waiting for a key (less notes a ^C that comes while
    it is between drawing and reading, and then drops the next key: a 'q' would be lost);
    ^C; the command waiting for its pager (the making stopped) and the pager waiting for a
    key again (the interruption handled: less was woken by it before the command could stop);
    then q."""
    terminal = Terminal(
        "--db", str(tmp_path / "none.sqlite"), "show", "A30_B13", "--from", "1", rows=24, pager="less"
    )
    try:
        terminal.read_until("A30_B13 #2  ", timeout=60)
        command, pager = terminal.process.pid, terminal.process_named("less")
        wait_until(lambda: reads_its_terminal(pager), 60, "the pager to wait for a key")
        assert waits_in(command) != "do_wait"  # still making boards (or waiting for room in the pipe)
        os.write(terminal.master, b"\x03")
        wait_until(lambda: waits_in(command) == "do_wait", 60, "the command to wait for its pager")
        wait_until(lambda: reads_its_terminal(pager), 60, "the pager to wait for a key again")
        assert terminal.process.poll() is None and "interrupted" not in terminal.read_until("", 0.1)
        os.write(terminal.master, b"q")
        status, shown = terminal.finish()
    finally:
        terminal.close()
    assert status == 130 and "bbcore: interrupted" in shown and "Traceback" not in shown, shown[-2000:]


@pytest.mark.skipif(READ is None, reason="the read system call's number is not known here")
def test_ctrl_c_after_the_pipe_broke_is_still_an_interruption(tmp_path):
    """The pipe breaks first, the SIGINT is handled after, while the command waits for its
    pager: still "interrupted", status 130.  It is the order of a 'q' typed right after ^C
    when the pager ends before the command's handler has run (the write fails on the broken
    pipe first); it used to end 0, the interruption landing in the wait for the pager, which
    ignored it.  The pager here stops reading at once, ignores ^C and keeps the terminal
    until a line is typed."""
    stops_reading = "exec 0<&-; trap '' INT; read line </dev/tty"
    terminal = Terminal(
        "--db", str(tmp_path / "none.sqlite"), "show", "A30_B13", "--from", "1", rows=24, pager=stops_reading
    )
    try:
        command = terminal.process.pid
        wait_until(lambda: waits_in(command) == "do_wait", 60, "the command to wait for its pager")
        pager = terminal.process_named("sh")
        wait_until(lambda: reads_its_terminal(pager), 60, "the pager to wait for a line")
        os.write(terminal.master, b"\x03")
        os.write(terminal.master, b"q\n")
        status, shown = terminal.finish()
    finally:
        terminal.close()
    assert status == 130 and "bbcore: interrupted" in shown and "Traceback" not in shown, shown[-2000:]


def test_show_on_a_terminal_pages_only_what_outgrows_the_screen(tmp_path):
    """The pager ($PAGER) gets a listing taller than the terminal, all of it; what fits is printed."""
    db = str(tmp_path / "none.sqlite")
    tagging = "sed -u s/^/paged:/"  # a pager that marks each line it passes on
    terminal = Terminal("--db", db, "show", "A2_B4", "2", rows=40, pager=tagging)
    try:
        status, shown = terminal.finish()
    finally:
        terminal.close()
    assert status == 0 and "A2_B4 #2  canonical 2" in shown and "paged:" not in shown, shown
    terminal = Terminal("--db", db, "show", "A2_B4", "--from", "1", "--to", "3", rows=10, pager=tagging)
    try:
        status, shown = terminal.finish()
    finally:
        terminal.close()
    assert status == 0, shown
    for number in (1, 2, 3):
        assert f"paged:A2_B4 #{number}  canonical" in shown, shown


def test_decode_a30_b13_with_no_ray_and_a_guess_by_number(tmp_path):
    """Every molecule is a candidate: counted, a heat map of 30/169 = 18 %, the guess judged."""
    last = A30_B13.nb_mol
    db_option = ("--db", str(tmp_path / "none.sqlite"))
    text = bbcore(*db_option, "decode", "A30_B13", "--guess", str(last))
    assert text.returncode == 0, text.stderr
    assert f"so do {last - 1:,} other molecules" in text.stdout
    assert " 18 18 18 " in text.stdout
    report = json.loads(bbcore(*db_option, "decode", "A30_B13", "--guess", "1", "--json").stdout)
    assert report["count"] == comb(169, 30) and report["every_molecule"]
    assert report["atom_counts"][0][0] == comb(168, 29)
    assert report["probabilities"][12][12] == pytest.approx(30 / 169)


@pytest.mark.parametrize(
    "args, words",
    [
        (["show", "A30_B13", str(A30_B13.nb_mol + 1)], [f"molecules 1..{A30_B13.nb_mol:,}, not"]),
        (["show", "A84_B13", "--from", "5", "--to", "4"], ["--from 5 is after --to 4"]),
        (["decode", "A30_B13", "--guess", str(A30_B13.nb_mol + 1)], ["bad guess", f"1..{A30_B13.nb_mol:,}"]),
        (["explore", "A30_B13"], [f"A30_B13 has {A30_B13.nb_mol:,} molecules: too many to explore"]),
    ],
)
def test_huge_numbers_one_line_errors(tmp_path, args, words):
    one_line_error(*failure(bbcore("--db", str(tmp_path / "x.sqlite"), *args)), *words)


def test_a_count_too_large_to_estimate_in_time_is_one_line(tmp_path, capsys, monkeypatch):
    """A84_B13 with one ray, past the engine: the solver's path search counts it exactly
    (about 2^104 placements); and where the path search gives up (``PATH_LEAVES`` shrunk to
    none) ApproxMC would take hours: the solver's counting bound (shrunk here to 2 s from 120)
    refuses it in one line, and its counter process is gone."""
    game = "@" + "." * 51
    assert main(["--db", str(tmp_path / "x.sqlite"), "decode", "A84_B13", game]) == 0
    # Absorbed at position 1 (left of line 1, heading right): the first column k, from the left,
    # with an atom in line 1 or 2 has one in line 1 (ahead is looked at before the diagonal).
    exact = sum(comb(169 - 2 * (k - 1) - 1, 83) for k in range(1, 14))
    assert f"{exact:,} placements agree" in capsys.readouterr().out
    monkeypatch.setattr(solver, "PATH_LEAVES", 0)
    monkeypatch.setattr(solver, "COUNTING_SECONDS", 2.0)
    status = main(["--db", str(tmp_path / "x.sqlite"), "decode", "A84_B13", game])
    one_line_error(status, capsys.readouterr().err, "too many placements agree to count them within 2 s")
    assert not multiprocessing.active_children()
