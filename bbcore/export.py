"""Export a configuration's tables as CSV or JSON, streamed row by row.

``bbcore export CONFIG --table molecules|spectrums|report --format csv|json``:

- ``molecules``: every column of ``Molecules`` (spec, "Tables"), by number;
  a compact store (``bbcore.compact``) has no such rows: they are computed
  by the engine, batch by batch, the same rows a full store holds;
- ``spectrums``: every column of ``Spectrums``, by spectrum; a compact
  store keeps one row per family (``bbcore.families``): its rows are
  derived, in sorted chunks merged from files beside the database when
  they are many (``derived_spectrums``), the same rows a full store holds;
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
import itertools
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Literal, TextIO

import numpy as np

from bbcore import families, sql
from bbcore.columns import Column, merged
from bbcore.config import Config
from bbcore.engine import molecules_of_numbers
from bbcore.geometry import TRANSFORM_NAMES
from bbcore.statistics import ambiguity_report, iter_report_rows, require_complete
from bbcore.store import MOLECULE_COLUMNS, config_row, db, is_compact, opened

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
    if table == "spectrums" and is_compact(config):
        families.require_current(config)  # at once, not at the first row
        return derived_spectrums(config)
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


SORT_ROWS = 1 << 21
"""Derived Spectrums rows sorted at a time in memory (about 100 MB) when a compact store's are exported."""
SPECTRUM_PARTS = ("spectrum", "nb_mol", "transform", "canonical")


def derived_spectrums(config: Config) -> Iterator[Row]:
    """A compact store's ``Spectrums`` rows, derived from its families, by spectrum.

    The families give their spectra in canonical order; chunks of
    ``SORT_ROWS`` are sorted by spectrum.  One chunk is yielded as it is;
    more (A7_B8's 78.8 M rows) are saved in a temporary folder beside the
    database and merged (``columns.merged``), so memory stays that of a chunk.
    """
    chunks = _sorted_chunks(config)
    first = next(chunks, None)
    if first is None:
        return
    second = next(chunks, None)
    if second is None:
        yield from _chunk_rows(config, first, np.arange(len(first["spectrum"])))
        return
    folder = opened.path.parent if isinstance(opened.path, Path) else None  # a server: the system's
    with tempfile.TemporaryDirectory(prefix=".bbcore-export-", dir=folder) as temporary:
        parts = []
        for number, chunk in enumerate(itertools.chain([first, second], chunks)):
            for name in SPECTRUM_PARTS:
                np.save(Path(temporary) / f"{number}.{name}.npy", chunk[name])
            parts.append({name: Column(Path(temporary) / f"{number}.{name}.npy") for name in SPECTRUM_PARTS})
        spectra = [part["spectrum"] for part in parts]
        for slices, order, _ in merged(spectra, [0] * len(parts), SORT_ROWS):
            block = {
                name: np.concatenate([parts[p][name][low:high] for p, low, high in slices])
                for name in SPECTRUM_PARTS
            }
            yield from _chunk_rows(config, block, order)


def _sorted_chunks(config: Config) -> Iterator[dict[str, np.ndarray]]:
    """The derived rows as column arrays, ``SORT_ROWS`` at a time, each chunk sorted by spectrum."""
    pending: list[dict[str, np.ndarray]] = []
    count = 0
    for batch in families.every_family(config):
        canonical, text, transform = families.derived(config, [f.canonical_number for f in batch])
        sizes = dict((f.canonical_number, f.nb_mol) for f in batch)
        pending.append(
            {
                "spectrum": text,
                "nb_mol": np.array([sizes[c] for c in canonical.tolist()], dtype=np.int64),
                "transform": transform,
                "canonical": canonical,
            }
        )
        count += len(text)
        if count >= SORT_ROWS:
            yield _sorted(pending)
            pending, count = [], 0
    if pending:
        yield _sorted(pending)


def _sorted(parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    joined = {name: np.concatenate([part[name] for part in parts]) for name in SPECTRUM_PARTS}
    order = np.argsort(joined["spectrum"], kind="stable")
    return {name: column[order] for name, column in joined.items()}


def _chunk_rows(config: Config, chunk: dict[str, np.ndarray], order: np.ndarray) -> Iterator[Row]:
    names = np.array(TRANSFORM_NAMES, dtype=object)
    yield from zip(
        [config.name] * len(order),
        chunk["spectrum"][order].astype(f"U{config.positions}").tolist(),
        chunk["nb_mol"][order].tolist(),
        names[chunk["transform"][order]].tolist(),
        chunk["canonical"][order].tolist(),
    )


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
