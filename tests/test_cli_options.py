"""Every numeric option of every ``bbcore`` command: a bad number is one line and exit 2, at once.

The options are read from the parser itself (``bbcore.cli.commands``): an
argument is numeric when its type turns ``"7"`` into a number, so a new
numeric option is covered here without editing this file.  Each gets 0, -1,
2^63, 10^30 and two non-numbers.  What the parser refuses is checked in
this process; what it accepts and the command refuses (a molecule number
past the configuration's, more workers than cores) runs in one subprocess
under a 2 GB address-space limit and a timeout, so that a command that
starts building what it was asked for fails the test instead of the machine.

Then the regression tests of issues #20 and #21's command lines: ``show``'s
ranges, ``--workers``, ``--`` and the ``--help`` hint, ``groups --size`` on
a real database.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import subprocess
import sys
from contextlib import redirect_stderr
from pathlib import Path

import pytest
from expect import BBCORE, ROOT, one_line_error

from bbcore.cli import build_parser, commands, main, parse_arguments
from bbcore.feasibility import cores

CONFIG = "A2_B4"
"""120 molecules, 16 positions: what the commands check their numbers against."""
BAD = ("0", "-1", str(2**63), str(10**30), "ten", "1.5")
VALID = {
    ("decode", "--limit"): {"0"},  # no boards: only the counts
    ("check", "--seed"): {"0"},  # any seed from 0 draws a sample
}
"""The values of BAD an option takes on purpose; its help says so."""
MEMORY = 2 << 30
"""Address space of the subprocess: a command that lists a range of 10^30 numbers runs out of it."""


def numeric(action: argparse.Action) -> bool:
    """Whether an argument takes a number: its type makes one of ``"7"``."""
    if action.type is None or action.nargs == 0:
        return False
    try:
        value = action.type("7")
    except (argparse.ArgumentTypeError, TypeError, ValueError):
        return False
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def label(action: argparse.Action) -> str:
    """How the user and the error line name an argument: ``--size``, or ``N`` for a positional."""
    return action.option_strings[0] if action.option_strings else action.metavar or action.dest


NUMERIC = [
    (name, action)
    for name, command in commands(build_parser()).items()
    for action in command._actions
    if numeric(action)
]


def argv_for(name: str, action: argparse.Action, value: str, db: Path) -> list[str]:
    """``bbcore --db DB COMMAND [CONFIG] ... OPTION VALUE``: the least a command needs, and the value."""
    words = ["--db", str(db), name]
    for other in commands(build_parser())[name]._actions:
        if other.option_strings:
            continue
        if other.dest == action.dest:
            words.append(value)
        elif other.dest == "config":
            words.append(CONFIG)
        elif other.dest == "target":  # copy's TARGET: a file beside the database
            words.append(str(db.with_name("copy-target.sqlite")))
        elif other.nargs not in ("*", "?"):
            pytest.fail(f"no example for {name}'s positional {other.dest}: add one to argv_for")
    if action.option_strings:
        words += [action.option_strings[0], value]
    return words


def parsed(argv: list[str]) -> tuple[int | None, str, argparse.Namespace | None]:
    """Parse as ``main`` does, in this process: (exit status or None, stderr, the arguments)."""
    err = io.StringIO()
    with redirect_stderr(err):
        try:
            return None, "", parse_arguments(build_parser(), argv)
        except SystemExit as exit_:
            return exit_.code, err.getvalue(), None


RUN_EACH = """
import contextlib, io, json, sys
from bbcore.cli import main
results = []
for argv in json.load(sys.stdin):
    print("running", argv, file=sys.stderr, flush=True)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            status = main(argv)
        except SystemExit as exit_:
            status = exit_.code
    results.append({"argv": argv, "status": status, "err": err.getvalue()})
print(json.dumps(results))
"""


def limited_memory() -> None:
    """In the child: at most MEMORY bytes of address space."""
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def run_limited(argvs: list[list[str]], timeout: float = 120) -> list[dict]:
    """``main(argv)`` for each, in one subprocess with MEMORY bytes and ``timeout`` seconds in all."""
    try:
        result = subprocess.run(
            [sys.executable, "-c", RUN_EACH],
            input=json.dumps(argvs),
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            cwd=ROOT,
            timeout=timeout,
            preexec_fn=limited_memory,
        )
    except subprocess.TimeoutExpired as error:
        pytest.fail(f"ran away, still {(error.stderr or b'').splitlines()[-1:]!r} after {timeout} s")
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def refused_by_commands(tmp_path_factory) -> dict[tuple[str, ...], dict]:
    """Every bad value the parser lets through, run by its command: {argv after ``--db DB``: result}."""
    db = tmp_path_factory.mktemp("options") / "none.sqlite"
    through = []
    for name, action in NUMERIC:
        for value in BAD:
            argv = argv_for(name, action, value, db)
            if value not in VALID.get((name, label(action)), ()) and parsed(argv)[0] is None:
                through.append(argv)
    results = run_limited(through) if through else []
    assert not db.exists()  # refused before the database is opened (created, for explore)
    return {tuple(r["argv"][2:]): r for r in results}


def test_the_walk_finds_every_numeric_option():
    found = {(name, label(action)) for name, action in NUMERIC}
    assert {
        ("show", "N"),
        ("show", "--from"),
        ("show", "--to"),
        ("show", "--ray"),
        ("groups", "--size"),
        ("explore", "--workers"),
        ("decode", "--limit"),
        ("check", "--sample"),
        ("check", "--reference"),
        ("check", "--seed"),
    } <= found
    assert set(VALID) <= found  # no stale row in the table


@pytest.mark.parametrize("name, action", NUMERIC, ids=[f"{name} {label(action)}" for name, action in NUMERIC])
def test_a_bad_number_is_one_line_and_exit_2(name, action, refused_by_commands, tmp_path):
    for value in BAD:
        argv = argv_for(name, action, value, tmp_path / "none.sqlite")
        status, err, args = parsed(argv)
        if value in VALID.get((name, label(action)), ()):
            assert status is None and getattr(args, action.dest) in (int(value), [int(value)]), err
            assert value in action.help  # the help says it is taken
            continue
        if status is None:  # the parser took it: the command refused it, in the subprocess
            result = refused_by_commands[tuple(argv[2:])]
            status, err = result["status"], result["err"]
            typed = (value, f"{int(value):,}")
            assert any(f"{label(action)} {t}" in err or f"not {t}" in err for t in typed), err
            # show refuses its numbers as its parser would (issue #33: with its prefix and --help)
            prefix = f"bbcore {name}: error: " if name == "show" else "bbcore: error: "
            assert err.startswith(prefix), err
        else:  # the parser refused it: the line names the option and the command's --help
            assert f"argument {label(action)}: " in err and value in err, err
            assert err.startswith(f"bbcore {name}: error: ") and f"(see 'bbcore {name} --help')" in err
        assert status == 2, (argv, err)
        one_line_error(status, err)


# -- show: ranges are checked at their ends, never listed -------------------------


def test_show_names_the_number_typed_not_the_first_out_of_range(capsys, tmp_path):
    db = tmp_path / "none.sqlite"
    assert main(["--db", str(db), "show", "A2_B4", "--from", "1", "--to", "200"]) == 2
    err = capsys.readouterr().err
    one_line_error(2, err, "A2_B4 has molecules 1..120", "--to 200")
    assert "121" not in err
    assert main(["--db", str(db), "show", "A2_B4", "--from", "121"]) == 2
    one_line_error(2, capsys.readouterr().err, "--from 121")
    assert main(["--db", str(db), "show", "A2_B4", "--from", "9", "--to", "3"]) == 2
    one_line_error(2, capsys.readouterr().err, "--from 9 is after --to 3")
    assert main(["--db", str(db), "show", "A2_B4", "1", "--ray", "17"]) == 2
    one_line_error(2, capsys.readouterr().err, "--ray 17", "1..16")
    assert not db.exists()


def test_a_huge_range_is_refused_at_once_and_a_long_one_is_shown_as_it_is_made(tmp_path):
    db = str(tmp_path / "none.sqlite")
    huge = ["--db", db, "show", "A2_B4", "--from", "1", "--to", "99999999999999999999999"]
    [result] = run_limited([huge], timeout=60)
    one_line_error(result["status"], result["err"], "--to 99999999999999999999999 is past the last")
    # A4_B8's 10,518,300 molecules, read by a reader that stops after three: the boards
    # are made one at a time (a list of them would outgrow MEMORY long before the first).
    process = subprocess.Popen(
        [*BBCORE, "--db", db, "show", "A4_B8", "--from", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        preexec_fn=limited_memory,
    )
    try:
        headings = []
        for line in process.stdout:
            if line.startswith("A4_B8 #"):
                headings.append(line.split()[1])
                if len(headings) == 3:
                    break
        process.stdout.close()  # the reader goes away, as ``head`` does
        err = process.stderr.read()
        status = process.wait(60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert headings == ["#1", "#2", "#3"]
    assert status == 0 and "Traceback" not in err, err


# -- explore --workers ------------------------------------------------------------


def test_more_workers_than_cores_is_refused_before_the_database_is_made(capsys, tmp_path):
    db = tmp_path / "db.sqlite"
    for workers in (str(cores() + 1), "99999999999999999999"):
        assert main(["--db", str(db), "explore", "A10_B13", "--workers", workers]) == 2
        err = capsys.readouterr().err
        one_line_error(2, err, f"--workers {workers}: this machine has", f"1 to {cores()} worker")
        assert "0 s" not in err
    assert not db.exists()


# -- '--' and the --help hint -------------------------------------------------------


def test_a_trailing_double_dash_is_taken(capsys, tmp_path):
    db = str(tmp_path / "db.sqlite")
    assert main(["--db", db, "strategy", "A2_B4", "--json", "--"]) == 0
    assert json.loads(capsys.readouterr().out)["config"] == "A2_B4"
    assert main(["--db", db, "status", "--"]) == 0
    capsys.readouterr()


def test_a_command_error_points_to_the_command_help(tmp_path):
    status, err, _ = parsed(["--db", str(tmp_path / "x"), "strategy", "A2_B4", "--json", "--", "extra"])
    one_line_error(status, err, "unrecognized arguments: extra", "(see 'bbcore strategy --help')")
    status, err, _ = parsed(["strategy", "A2_B4", "--bogus"])
    one_line_error(status, err, "bbcore strategy: error: unrecognized arguments: --bogus")
    assert "'bbcore --help'" not in err


def test_db_is_taken_after_the_command_as_its_help_says(capsys, explored, tmp_path, monkeypatch):
    monkeypatch.setenv("BBTUI_DB", str(tmp_path / "elsewhere.sqlite"))
    assert main(["--db", str(explored), "status"]) == 0
    before = capsys.readouterr().out
    assert main(["status", "--db", str(explored)]) == 0
    assert capsys.readouterr().out == before and f"database: {explored}" in before
    for name, command in commands(build_parser()).items():
        assert "--db PATH" in command.format_help(), name


GAME = "-H" + "-" * 14
"""A2_B4's game with only position 2 shot, absorbed: it starts with '-'."""


def test_decode_takes_a_game_after_double_dash_in_either_order(capsys, tmp_path):
    db = str(tmp_path / "none.sqlite")
    answers = []
    for argv in (
        ["decode", "A2_B4", "--json", "--", GAME],  # issue #20: "unrecognized arguments: --"
        ["decode", "--json", "A2_B4", "--", GAME],
        ["decode", "A2_B4", "--json", GAME],
    ):
        assert main(["--db", db, *argv]) == 0, capsys.readouterr().err
        answers.append(json.loads(capsys.readouterr().out))
    assert answers[0] == answers[1] == answers[2]
    assert answers[0]["shown"] == [2] and answers[0]["count"] == 45  # 45 molecules absorb ray 2


def test_show_takes_numbers_after_double_dash(capsys, tmp_path):
    db = str(tmp_path / "none.sqlite")
    assert main(["--db", db, "show", "A2_B4", "--ray", "3", "--", "5", "6"]) == 0
    out = capsys.readouterr().out
    assert [line.split()[1] for line in out.splitlines() if line.startswith("A2_B4 #")] == ["#5", "#6"]


# -- groups --size on a real database ------------------------------------------------


def test_groups_size_past_sqlite_is_one_line_not_an_overflow(capsys, explored):
    with pytest.raises(SystemExit) as exit_:
        main(["--db", str(explored), "groups", "A3_B4", "--size", "99999999999999999999"])
    err = capsys.readouterr().err
    one_line_error(exit_.value.code, err, "--size", "99999999999999999999")
    assert exit_.value.code == 2
    assert main(["--db", str(explored), "groups", "A3_B4", "--size", str(2**63 - 1)]) == 0
    assert "0 families of spectral groups (transform id) of size" in capsys.readouterr().out
