"""``bbcore report`` and ``bbcore export``: real output, one-line errors."""

from __future__ import annotations

import csv
import io
import json

import pytest
from expect import one_line_error

from bbcore.cli import main
from bbcore.config import Config


def run(capsys, *argv: str) -> tuple[int, str, str]:
    """``bbcore ARGV`` in process: (status, stdout, stderr)."""
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_report_prints_the_spec_table(capsys, explored):
    """The spec's A4_B4 figures with the total line, then the extras."""
    status, out, err = run(capsys, "--db", str(explored), "report", "A4_B4")
    assert status == 0 and err == ""
    table = out.split("\n\n")[1].splitlines()
    assert table[0].split() == ["up", "to", "symmetry", "spectra", "molecules"]
    assert [line.split() for line in table[1:]] == [
        ["size", "2", "9", "58", "116"],
        ["size", "3", "2", "8", "24"],
        ["total", "11", "66", "140"],
    ]
    assert "Ambiguous molecules: 140 of 1,820 (7.69%); 1,680 have a spectrum of their own." in out
    assert "points at risk" in out


def test_report_draws_the_records(capsys, explored, brute_record):
    """Six record boards with their captions, and the plain statement about 6 turns and 23 cells."""
    _, out, _ = run(capsys, "--db", str(explored), "report", "A4_B4")
    for caption in (
        "longest absorbed",
        "most turns, absorbed",
        "longest reflected",
        "most turns, reflected",
        "longest out",
        "most turns, out",
    ):
        assert caption in out
    # The longest out ray of A4_B4, by brute force over the reference rays.
    ray, reaching, number = brute_record(Config(4, 4), "out", "length")
    assert f"{ray.length} cells, {ray.turns} turns, {ray.position} to {ray.exit}" in out
    assert f"molecule {number} ({reaching} reach it)" in out
    assert "  O O - -      " in out  # boards side by side
    assert "A4_B4 neither confirms nor refines it" in out


def test_report_prints_the_distributions(capsys, explored, brute_statistics):
    """The distribution tables, each headed by its title; the most-turns rows by brute force."""
    _, out, _ = run(capsys, "--db", str(explored), "report", "A4_B4")
    block = out.split("Molecules by their ray with most turns:\n")[1].split("\n\n")[0].splitlines()
    assert block[0].split() == ["turns", "absorbed", "reflected", "out", "any"]
    stats = brute_statistics(Config(4, 4))
    classes = ("absorbed", "reflected", "out")
    rows = [line.split() for line in block[1:]]
    assert [int(row[0]) for row in rows] == list(range(len(rows)))
    for turns, row in enumerate(rows):
        counts = [sum(s[f"{c}_max_turns"] == turns for s in stats) for c in classes]
        counts.append(sum(max(s[f"{c}_max_turns"] for c in classes) == turns for s in stats))
        assert row[1:] == [f"{n:,}" for n in counts]
    assert "Spectral groups by size:" in out


def test_report_without_ambiguity(capsys, explored):
    """A2_B4: no table, a sentence."""
    status, out, _ = run(capsys, "--db", str(explored), "report", "A2_B4")
    assert status == 0
    assert "A2_B4 has no ambiguous spectrum" in out


@pytest.mark.parametrize("command", [["report", "A3_B5"], ["export", "A3_B5"]])
def test_unexplored_configuration(capsys, explored, command):
    """One line naming the configuration and the command to run."""
    status, out, err = run(capsys, "--db", str(explored), *command)
    one_line_error(status, err, "A3_B5 is not explored", "bbcore explore A3_B5")
    assert out == ""


@pytest.mark.parametrize("command", ["report", "export"])
def test_missing_database(capsys, tmp_path, command):
    """A missing database is an error, and is not created."""
    missing = tmp_path / "none.sqlite"
    status, _, err = run(capsys, "--db", str(missing), command, "A4_B4")
    one_line_error(status, err, "no database at")
    assert not missing.exists()


def test_not_a_database(capsys, tmp_path):
    """A file that is not a database: one line, and the file is left as it was."""
    text = tmp_path / "notes.txt"
    text.write_text("not a database\n")
    status, _, err = run(capsys, "--db", str(text), "report", "A4_B4")
    one_line_error(status, err, "not a bbtui database")
    assert text.read_text() == "not a database\n"


def test_export_csv_to_stdout(capsys, explored):
    """The molecules as CSV on stdout: a header and 1,820 rows."""
    status, out, err = run(capsys, "--db", str(explored), "export", "A4_B4")
    assert status == 0 and err == ""
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0][:3] == ["config", "number", "canonical_number"]
    assert len(rows) == 1 + 1820
    assert rows[2][:2] == ["A4_B4", "2"]


def test_export_json_to_file(capsys, explored, tmp_path):
    """The spectrums as JSON in a file; the row count on stderr."""
    target = tmp_path / "spectrums.json"
    status, out, err = run(
        capsys,
        "--db",
        str(explored),
        "export",
        "A4_B4",
        "--table",
        "spectrums",
        "--format",
        "json",
        "--output",
        str(target),
    )
    assert status == 0 and out == ""
    assert err == f"66 rows of A4_B4 spectrums written to {target}\n"
    rows = json.loads(target.read_text())
    assert len(rows) == 66 and sum(r["transform"] == "id" for r in rows) == 11


def test_export_report(capsys, explored):
    """The report table with its total line."""
    _, out, _ = run(capsys, "--db", str(explored), "export", "A4_B4", "--table", "report")
    assert out == "size,families,groups,molecules\n2,9,58,116\n3,2,8,24\ntotal,11,66,140\n"


def test_export_to_a_missing_folder(capsys, explored, tmp_path):
    """An output folder that does not exist: one line, nothing written."""
    target = tmp_path / "missing" / "out.csv"
    status, _, err = run(capsys, "--db", str(explored), "export", "A4_B4", "--output", str(target))
    one_line_error(status, err, "folder", "does not exist")
    assert not target.parent.exists()


def test_export_to_a_folder(capsys, explored, tmp_path):
    """An output that is a folder: one line."""
    status, _, err = run(capsys, "--db", str(explored), "export", "A4_B4", "--output", str(tmp_path))
    one_line_error(status, err, "is a directory")


def test_export_bad_choice(capsys, explored):
    """An unknown table: argparse's error, on one line."""
    with pytest.raises(SystemExit) as exit_info:
        main(["--db", str(explored), "export", "A4_B4", "--table", "atoms"])
    err = capsys.readouterr().err
    assert exit_info.value.code != 0
    assert err.count("\n") == 1 and "atoms" in err
