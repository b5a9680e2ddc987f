"""``bbcore strategy``: the text and JSON of the book, stored and read back, one-line errors;
and ``bbcore decode`` saying what the stored book does from a game."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from peewee import OperationalError

from bbcore.cli import main
from bbcore.config import Config
from bbcore.store import Book, db, open_database
from bbcore.strategy import compute_book

A3_B4 = Config(3, 4)


def run(capsys, db_path: Path, *args: str) -> tuple[int, str, str]:
    """``bbcore --db DB ARGS``: (status, stdout, stderr)."""
    status = main(["--db", str(db_path), *args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_json_has_the_issue_shape_and_the_brute_force_figures(capsys, tmp_path, policy_summary):
    status, out, err = run(capsys, tmp_path / "db.sqlite", "strategy", "A3_B4", "--json")
    assert status == 0, err
    summary = json.loads(out)
    expected = policy_summary(A3_B4, "remaining")
    for what in ("rays", "points"):
        assert summary[what]["mean"] == pytest.approx(expected[what]["mean"], abs=1e-12)
        summary[what]["mean"] = expected[what]["mean"]
    assert summary == expected  # first shot 1, rays 4.988 (max 8), points 6.716 (max 10), by brute force


def test_text_then_read_back_from_the_database(capsys, tmp_path, policy_summary):
    path = tmp_path / "db.sqlite"
    status, out, _ = run(capsys, path, "strategy", "A3_B4", "--by", "information")
    assert status == 0
    assert "computed now" in out and "spectra traced now" in out
    expected = policy_summary(A3_B4, "information")
    assert f"Best first shot: position {expected['first_shot']}," in out
    lines = out.splitlines()
    for what in ("rays", "points"):
        figures = next(line for line in lines if line.startswith(f"{what}  "))
        assert figures.split() == [what, f"{expected[what]['mean']:.3f}", str(expected[what]["max"])]
    # The histogram of rays: a table (rays, molecules, share), then the plot's axis under it.
    histogram = expected["rays"]["histogram"]
    start = lines.index("Molecules by rays shot:") + 2
    table = [line.split() for line in lines[start : start + len(histogram)]]
    assert [(k, n) for k, n, _ in table] == [(k, str(n)) for k, n in histogram.items()]
    assert [share for _, _, share in table] == [f"{100 * n / 560:.2f}%" for n in histogram.values()]
    axis = lines[next(i for i in range(start, len(lines)) if lines[i].lstrip().startswith("└")) + 1]
    assert axis.split() == list(histogram)
    for heading in ("Molecules by points scored:", "The tree by depth"):
        assert heading in out
    assert f"need {expected['rays']['max']} rays" in out
    status, again, _ = run(capsys, path, "strategy", "A3_B4", "--by", "information")
    assert "read from the database" in again
    assert again.split("\n", 1)[1] == out.split("\n", 1)[1]
    open_database(path)
    assert Book.select().count() == 1


def test_an_explored_configuration_uses_its_stored_spectra(capsys, store):
    target = store.parent / "copy.sqlite"
    db.close()
    shutil.copy(store, target)
    status, out, _ = run(capsys, target, "strategy", "A2_B4", "--recompute")
    assert status == 0 and "from the stored spectra" in out


def test_decode_says_what_the_stored_book_does(capsys, tmp_path):
    path = tmp_path / "db.sqlite"
    run(capsys, path, "strategy", "A3_B4")
    made = compute_book(A3_B4, source="compute")
    first = made.first_shot.position
    status, out, _ = run(capsys, path, "decode", "A3_B4")
    assert f"The book (by remaining) shoots position {first} next" in out
    # A game off the book's line is said to be so.
    other = next(p for p in range(1, 17) if p != first)
    game = ["."] * 16
    game[other - 1] = "H"
    status, out, _ = run(capsys, path, "decode", "A3_B4", "".join(game))
    assert "does not play this game" in out


def test_a_configuration_too_large_is_one_line(capsys, tmp_path):
    status, out, err = run(capsys, tmp_path / "db.sqlite", "strategy", "A6_B8")
    assert status == 2 and out == ""
    assert "too many for a book" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("args", "message"), [(["A1_B1"], "CONFIG"), (["A3_B4", "--by", "luck"], "invalid choice")]
)
def test_bad_arguments_are_one_line(capsys, tmp_path, args, message):
    with pytest.raises(SystemExit) as exit:
        main(["--db", str(tmp_path / "db.sqlite"), "strategy", *args])
    err = capsys.readouterr().err
    assert exit.value.code == 2
    assert message in err and len(err.strip().splitlines()) == 1


def test_a_database_that_cannot_be_written_still_prints_the_book(capsys, tmp_path, monkeypatch):
    """Read-only or locked: one line on stderr, and the book on stdout."""

    def refused(book):
        raise OperationalError("attempt to write a readonly database")

    monkeypatch.setattr("bbcore.cli.strategy.save_book", refused)
    status, out, err = run(capsys, tmp_path / "db.sqlite", "strategy", "A2_B4")
    assert status == 0 and "Best first shot" in out
    assert "the book is not stored" in err and "read-only" in err
    assert len(err.strip().splitlines()) == 1


def test_a_corrupt_stored_book_is_one_line_and_recompute_mends_it(capsys, tmp_path):
    path = tmp_path / "db.sqlite"
    run(capsys, path, "strategy", "A2_B4")
    open_database(path)
    Book.update(arrays=b"not an npz").execute()
    status, out, err = run(capsys, path, "strategy", "A2_B4")
    assert status == 2 and out == ""
    assert "the stored remaining book of A2_B4 is unreadable" in err and len(err.strip().splitlines()) == 1
    status, out, _ = run(capsys, path, "strategy", "A2_B4", "--recompute")
    assert status == 0 and "computed now" in out
    status, out, _ = run(capsys, path, "strategy", "A2_B4")
    assert status == 0 and "read from the database" in out
