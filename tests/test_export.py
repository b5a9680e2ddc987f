"""Export: CSV and JSON read back equal the database, streamed with flat memory."""

from __future__ import annotations

import csv
import io
import json
import os
import sys
import tracemalloc
from pathlib import Path

import pytest
from expect import BBCORE, ROOT
from unprivileged import give_to_nobody, make_unwritable, run_unprivileged

from bbcore import export as export_module
from bbcore import families
from bbcore.config import Config
from bbcore.explore import explore as explore_configuration
from bbcore.export import COLUMNS, export, export_to_file, iter_rows
from bbcore.progress import COMPLETE
from bbcore.statistics import StatisticsError
from bbcore.store import COMPACT, Molecule, Spectrum, close_database, config_row, open_database

A2_B4, A3_B4, A4_B4 = Config(2, 4), Config(3, 4), Config(4, 4)
TEXT_COLUMNS = {"config", "molecule", "spectrum", "transform", "dh1", "dh2"}


def database_rows(config: Config, table: str) -> list[dict]:
    """The table as the database holds it, in export order."""
    if table == "molecules":
        query = Molecule.select().where(Molecule.config == config.name).order_by(Molecule.number)
    else:
        query = Spectrum.select().where(Spectrum.config == config.name).order_by(Spectrum.spectrum)
    return [{c: row[c] for c in COLUMNS[table]} for row in query.dicts()]


def typed(row: dict[str, str]) -> dict:
    """A CSV row with its numbers read back as numbers."""
    return {k: v if k in TEXT_COLUMNS else int(v) for k, v in row.items()}


def export_text(config: Config, table: str, fmt: str) -> str:
    out = io.StringIO()
    export(config, table, fmt, out)
    return out.getvalue()


@pytest.mark.parametrize("table", ["molecules", "spectrums"])
def test_csv_round_trip(store, table):
    """CSV read back (header, then rows) equals the database, row for row, column for column."""
    text = export_text(A4_B4, table, "csv")
    reader = csv.DictReader(io.StringIO(text))
    assert tuple(reader.fieldnames) == COLUMNS[table]
    rows = [typed(row) for row in reader]
    assert rows == database_rows(A4_B4, table)
    assert len(rows) == {"molecules": 1820, "spectrums": 66}[table]


@pytest.mark.parametrize("table", ["molecules", "spectrums"])
def test_json_round_trip(store, table):
    """JSON read back is an array of objects equal to the database rows, numbers as numbers."""
    rows = json.loads(export_text(A4_B4, table, "json"))
    assert rows == database_rows(A4_B4, table)


def test_report_round_trip(store):
    """The report table: the spec's A4_B4 figures and the total line, in both formats."""
    expected = [
        {"size": 2, "families": 9, "groups": 58, "molecules": 116},
        {"size": 3, "families": 2, "groups": 8, "molecules": 24},
        {"size": "total", "families": 11, "groups": 66, "molecules": 140},
    ]
    assert json.loads(export_text(A4_B4, "report", "json")) == expected
    rows = list(csv.DictReader(io.StringIO(export_text(A4_B4, "report", "csv"))))
    assert [{k: v if v == "total" else int(v) for k, v in row.items()} for row in rows] == expected


def test_empty_tables(store):
    """A2_B4 has no ambiguous spectrum: an empty JSON array, a CSV header alone."""
    assert json.loads(export_text(A2_B4, "spectrums", "json")) == []
    assert export_text(A2_B4, "spectrums", "csv") == ",".join(COLUMNS["spectrums"]) + "\n"
    assert export_text(A2_B4, "report", "csv").splitlines()[1:] == ["total,0,0,0"]


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_the_count_returned_is_the_rows_written(store, fmt):
    """The count ``export`` returns (``--output`` prints it) is the rows written, none included."""
    cases = ((A4_B4, "molecules", 1820), (A4_B4, "spectrums", 66), (A2_B4, "spectrums", 0))
    for config, table, rows in cases:
        out = io.StringIO()
        assert export(config, table, fmt, out) == rows
        text = out.getvalue()
        written = len(json.loads(text)) if fmt == "json" else len(text.splitlines()) - 1
        assert written == rows


def test_rows_are_streamed(store):
    """The rows come one at a time: the first is there before the cursor is read further."""
    rows = iter_rows(A4_B4, "molecules")
    first = next(rows)
    assert first[:2] == ("A4_B4", 1)
    assert next(rows)[1] == 2


class Sink(io.TextIOBase):
    """A text stream that only counts what it is given."""

    def __init__(self) -> None:
        self.size = 0

    def write(self, text: str) -> int:
        self.size += len(text)
        return len(text)


def export_peak(config: Config, fmt: str) -> tuple[int, int]:
    """(characters written, peak of traced memory) of a molecules export."""
    sink = Sink()
    tracemalloc.start()
    try:
        export(config, "molecules", fmt, sink)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return sink.size, peak


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_memory_stays_flat(store, fmt):
    """15 times more molecules (A2_B4: 120, A4_B4: 1,820), the same peak memory.

    Reading the whole table first (``fetchall``) would add several times the
    size of the extra text written; streaming keeps a few rows alive at once.
    """
    export_peak(A2_B4, fmt)  # first use: imports and caches
    small_size, small_peak = export_peak(A2_B4, fmt)
    large_size, large_peak = export_peak(A4_B4, fmt)
    assert large_size - small_size > 200_000
    assert large_peak - small_peak < (large_size - small_size) / 10


def test_export_to_file_round_trip(store, tmp_path):
    """The file written equals the stream, and no temporary file is left."""
    target = tmp_path / "molecules.json"
    assert export_to_file(A4_B4, "molecules", "json", target) == 1820
    assert json.loads(target.read_text()) == database_rows(A4_B4, "molecules")
    assert [p.name for p in tmp_path.iterdir()] == ["molecules.json"]


def test_failed_export_leaves_the_old_file(store, tmp_path, monkeypatch):
    """An export that fails half-way leaves the previous file as it was and no temporary file."""
    target = tmp_path / "molecules.csv"
    target.write_text("previous\n")

    def failing_rows(config, table):
        yield from list(iter_rows(config, table))[:10]
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(export_module, "iter_rows", failing_rows)
    with pytest.raises(OSError):
        export_to_file(A4_B4, "molecules", "csv", target)
    assert target.read_text() == "previous\n"
    assert [p.name for p in tmp_path.iterdir()] == ["molecules.csv"]


def test_incomplete_configuration_is_refused(store):
    """Only complete configurations are exported."""
    with pytest.raises(StatisticsError, match="A3_B5 is not explored"):
        export_text(Config(3, 5), "molecules", "csv")


@pytest.fixture(scope="module")
def compact_a4_b4(tmp_path_factory) -> Path:
    """A4_B4 explored in a compact store (no Molecules rows: the export computes them)."""
    path = tmp_path_factory.mktemp("compact") / "a4b4-compact.sqlite"
    assert explore_configuration(A4_B4, path, store=COMPACT, workers=1) == COMPLETE
    close_database()
    return path


def test_a_compact_stores_molecules_are_dated_when_the_configuration_was_completed(compact_a4_b4, explored):
    """A compact store keeps no molecule rows: each exported row's dh1 and dh2 are the time the
    configuration was completed, the same on every row, never empty, and its other columns are
    those of the full store (the shared database's A4_B4)."""
    open_database(compact_a4_b4)
    completed = config_row(A4_B4).dh2
    rows = json.loads(export_text(A4_B4, "molecules", "json"))
    assert completed and {(row["dh1"], row["dh2"]) for row in rows} == {(completed, completed)}
    open_database(explored)
    undated = [{k: v for k, v in row.items() if k not in ("dh1", "dh2")} for row in rows]
    assert undated == [
        {k: v for k, v in row.items() if k not in ("dh1", "dh2")} for row in database_rows(A4_B4, "molecules")
    ]


def test_an_export_into_a_folder_it_cannot_write_names_the_permission(explored, tmp_path):
    """``--output`` in a folder the user cannot write: one line that says the permission is
    denied (the error of creating the file, not of cleaning up a file never made), a non-zero
    exit, and nothing left in the folder.  Run as a user who cannot write (root can)."""
    home, folder = tmp_path / "home", tmp_path / "out"
    home.mkdir()
    folder.mkdir()
    give_to_nobody(home)
    make_unwritable(folder)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "BBTUI_"))}
    env.update(HOME=str(home), PYTHONPATH=f"{ROOT}{os.pathsep}{ROOT / 'tests'}", PYTHON=sys.executable)
    target = folder / "report.csv"
    words = ["export", "A4_B4", "--table", "report", "--output", str(target)]
    result = run_unprivileged([*BBCORE, "--db", str(explored), *words], env=env)
    assert result.returncode != 0 and result.stderr.count("\n") == 1, result.stderr
    assert f"cannot write {target}: Permission denied" in result.stderr
    assert list(folder.iterdir()) == []


def test_a_servers_compact_export_sorted_in_chunks_is_the_same(pg_url, monkeypatch):
    """On a PostgreSQL server (no file to put the chunks beside: they go to the system's temporary
    folder), a compact store's spectra sorted in chunks and merged are the rows of one chunk."""
    config = Config(4, 5)
    assert explore_configuration(config, pg_url, store=COMPACT, workers=1) == COMPLETE
    open_database(pg_url)
    whole = list(iter_rows(config, "spectrums"))
    monkeypatch.setattr(families, "DERIVE_BATCH", 1)
    monkeypatch.setattr(export_module, "SORT_ROWS", 20)
    assert len(whole) > 2 * 20 and list(iter_rows(config, "spectrums")) == whole
    close_database()
