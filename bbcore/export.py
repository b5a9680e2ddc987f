"""Export a configuration's tables as CSV or JSON, streamed row by row.

``bbcore export CONFIG --table molecules|spectrums|report --format csv|json``:

- ``molecules``: every column of ``Molecules`` (spec, "Tables"), by number;
  a compact store (``bbcore.compact``) has no such rows: they are computed
  by the engine, batch by batch, the same rows a full store holds;
- ``spectrums``: every column of ``Spectrums``, by spectrum;
- ``report``: the ambiguity report (size, families up to symmetry, spectral
  groups, molecules), one row per group size, then a ``total`` row.

Rows are read with one SQLite cursor and written as they come, so memory
stays flat whatever the size of the table (``bench/export.py`` measures it
on A4_B8).  CSV has a header line and ``\\n`` line ends; JSON is one array
of objects (column -> value, numbers as numbers), written one object per
line.  Only complete configurations are exported (``StatisticsError``
otherwise), so that an export is never a silent fragment.
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Literal, TextIO

import numpy as np

from bbcore import sql
from bbcore.config import Config
from bbcore.engine import molecules_of_numbers
from bbcore.statistics import ambiguity_report, iter_report_rows, require_complete
from bbcore.store import MOLECULE_COLUMNS, config_row, db, is_compact

Table = Literal["molecules", "spectrums", "report"]
Format = Literal["csv", "json"]
TABLES: tuple[Table, ...] = ("molecules", "spectrums", "report")
FORMATS: tuple[Format, ...] = ("csv", "json")

SPECTRUM_COLUMNS: tuple[str, ...] = ("config", "spectrum", "nb_mol", "transform", "canonical_number")
REPORT_COLUMNS: tuple[str, ...] = ("size", "families", "groups", "molecules")
COLUMNS: dict[Table, tuple[str, ...]] = {
    "molecules": MOLECULE_COLUMNS,
    "spectrums": SPECTRUM_COLUMNS,
    "report": REPORT_COLUMNS,
}
SQL: dict[Table, str] = {
    "molecules": sql.table_rows("Molecules", MOLECULE_COLUMNS, "number"),
    "spectrums": sql.table_rows("Spectrums", SPECTRUM_COLUMNS, "spectrum"),
}

Row = tuple[int | str | None, ...]


def iter_rows(config: Config, table: Table) -> Iterator[Row]:
    """The rows of a table of a complete configuration, one at a time, in the order of COLUMNS.

    Completeness is checked at once, before any row (or header) is asked for.
    """
    require_complete(config)
    if table == "report":
        report = ambiguity_report(config)
        return (tuple(row[c] for c in REPORT_COLUMNS) for row in iter_report_rows(report))
    if table == "molecules" and is_compact(config):
        return computed_molecules(config)
    # Iterating the cursor steps SQLite one row at a time: nothing is fetched ahead.
    return iter(db.execute_sql(SQL[table], (config.name,)))


COMPUTED_BATCH = 1 << 15
"""Molecules computed at a time when a compact store's molecules are exported."""


def computed_molecules(config: Config) -> Iterator[Row]:
    """A compact store's ``Molecules`` rows, computed by the engine batch by batch, by number.

    A batch traces the canonical molecules of its molecules once each; a
    row's dh1 and dh2 are the time the configuration was completed.
    """
    stamp = config_row(config).dh2
    for start in range(1, config.nb_mol + 1, COMPUTED_BATCH):
        numbers = np.arange(start, min(start + COMPUTED_BATCH, config.nb_mol + 1), dtype=np.int64)
        yield from molecules_of_numbers(config, numbers).rows(stamp, stamp)


def write_csv(columns: Iterable[str], rows: Iterable[Row], out: TextIO) -> int:
    """Write a header and the rows as CSV; returns the number of rows."""
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    count = 0
    for row in rows:
        writer.writerow(row)
        count += 1
    return count


def write_json(columns: Iterable[str], rows: Iterable[Row], out: TextIO) -> int:
    """Write the rows as a JSON array of objects, one per line; returns the number of rows."""
    columns = tuple(columns)
    encode = json.JSONEncoder(ensure_ascii=False).encode  # one encoder for every row
    count = 0
    for row in rows:
        out.write(",\n" if count else "[\n")
        out.write(encode(dict(zip(columns, row))))
        count += 1
    out.write("\n]\n" if count else "[]\n")
    return count


WRITERS = {"csv": write_csv, "json": write_json}


def export(config: Config, table: Table, fmt: Format, out: TextIO) -> int:
    """Stream one table of a complete configuration to ``out``; returns the number of rows."""
    return WRITERS[fmt](COLUMNS[table], iter_rows(config, table), out)


def export_to_file(config: Config, table: Table, fmt: Format, path: Path) -> int:
    """Export to a file, replacing it only once the export is whole (a temporary file, then a rename)."""
    path = Path(path)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.part")
    try:
        with temporary.open("w", encoding="utf-8", newline="") as out:
            count = export(config, table, fmt, out)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return count
