"""Every statement of ``bbcore.sql`` run on a real store, its rows checked against plain Python.

Written for the mutation run of ``bbcore/sql.py`` (issue 33, section 5,
``bench/mutation_notes.md``).  The statements are built by the modules that
use them, several when they are imported (``full.INSERT_MOLECULES``,
``export``'s table readers, ``sql.INSERT_FAMILIES``): a statement broken
there is broken before any test runs, so each builder is called here, at
test time, and what it returns is executed on a copy of a real store.  The
rows expected come from reading whole tables in Python, not from another
statement of this module.  A server's dialect is run where SQLite speaks it
too (its row order, its window form of the ambiguous molecules, no index
hint), and its regular expressions are checked to match exactly what
SQLite's GLOB matches.
"""

from __future__ import annotations

import re
import shutil
import sqlite3
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from stores import explored_compact

from bbcore import sql, store
from bbcore.config import Config

A3_B4, A4_B4 = Config(3, 4), Config(4, 4)


def opened_copy(source: Path, copy: Path) -> Iterator[sqlite3.Connection]:
    """A copy of a store, opened plainly (closed after the test)."""
    shutil.copy(source, copy)
    connection = sqlite3.connect(copy)
    yield connection
    connection.close()


@pytest.fixture
def full(tmp_path, explored) -> Iterator[sqlite3.Connection]:
    """A copy of the shared full store (A2_B4, A3_B4 and A4_B4 complete), opened plainly."""
    yield from opened_copy(explored, tmp_path / "full.sqlite")


@pytest.fixture(scope="module")
def compact_store(tmp_path_factory) -> Path:
    """A4_B4 explored into a compact store (its Families and Profiles)."""
    return explored_compact(tmp_path_factory.mktemp("compact") / "compact.sqlite", A4_B4)


@pytest.fixture
def compact(tmp_path, compact_store) -> Iterator[sqlite3.Connection]:
    """A copy of the compact store, opened plainly."""
    yield from opened_copy(compact_store, tmp_path / "compact.sqlite")


@pytest.fixture(params=["sqlite", "server"])
def dialect(request, monkeypatch) -> sql.Dialect:
    """Each dialect in turn, as ``store.open_database`` sets it (``sql.use``)."""
    chosen = sql.SQLITE if request.param == "sqlite" else sql.SERVER
    sql.use(chosen)
    yield chosen
    sql.use(sql.SQLITE)


def molecules(connection, config: Config) -> list[dict]:
    """A configuration's Molecules rows, every column, by number."""
    cursor = connection.execute('SELECT * FROM "Molecules" WHERE config = ? ORDER BY number', (config.name,))
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor]


def ambiguous(rows: list[dict]) -> list[tuple]:
    """(spectrum, canonical_number, number, transform) of the molecules sharing their spectrum."""
    by = defaultdict(list)
    for row in rows:
        by[row["spectrum"]].append(row)
    return sorted(
        (r["spectrum"], r["canonical_number"], r["number"], r["transform"])
        for group in by.values()
        if len(group) > 1
        for r in group
    )


# -- the dialects ---------------------------------------------------------------------------


def test_use_sets_the_dialect_every_statement_speaks():
    sql.use(sql.SERVER)
    try:
        assert sql.dialect is sql.SERVER
        assert "INDEXED BY" not in sql.by_spectrum(A3_B4, "number", "spectrum = ?")
        assert sql.ambiguous_molecules(A3_B4) == sql.ambiguous_by_window(A3_B4)
    finally:
        sql.use(sql.SQLITE)
    assert sql.dialect is sql.SQLITE
    assert f'INDEXED BY "{sql.spectrum_index(A3_B4)}"' in sql.by_spectrum(A3_B4, "number", "spectrum = ?")


@settings(max_examples=300, deadline=None)
@given(
    glob=st.lists(
        st.sampled_from(["?", "[a-z]", "a", "b", "@", "&", ".", "^", "$", "(", "+", "*", "\\"]), max_size=6
    ),
    text=st.text(alphabet="ab@&.^$(+*\\zq", max_size=6),
)
def test_a_server_pattern_matches_what_sqlite_s_glob_matches(glob, text):
    """``?`` any one character, ``[a-z]`` a lowercase letter, anything else itself (escaped:
    ``.``, ``^``, ``$``, ``(``, ``+``, ``*``, ``\\`` are literal), anchored at both ends: the server's
    regular expression matches exactly the strings SQLite's GLOB does (``*`` aside, which no
    caller writes: GLOB reads it as any run of characters, the server as itself)."""
    pattern = "".join(glob)
    assert sql.SQLITE.pattern(pattern) == pattern
    assert sql.SQLITE.matches("spectrum") == "spectrum GLOB ?"
    assert sql.SERVER.matches("spectrum") == "spectrum ~ ?"
    regex = sql.SERVER.pattern(pattern)
    if "*" in pattern:
        assert bool(re.search(regex, text)) == (text == pattern.replace("[a-z]", "?") == pattern)
        return
    (globbed,) = sqlite3.connect(":memory:").execute("SELECT ? GLOB ?", (text, pattern)).fetchone()
    assert bool(re.search(regex, text)) == bool(globbed), (pattern, regex, text)


def test_a_server_pattern_s_forms():
    assert sql.SERVER.pattern("@?[a-z].&") == r"^@.[a-z]\.\&$"
    assert sql.SERVER.pattern("") == "^$"


def test_the_stored_spectra_between_the_row_bounds_are_every_molecule(full, dialect):
    """``rowid_bounds`` then ``spectra_by_rowid``: number and spectrum of every molecule of the
    configuration, no other's (a server orders by number: SQLite runs that form too)."""
    low, high = full.execute(dialect.rowid_bounds(A3_B4)).fetchone()
    rows = sorted(full.execute(dialect.spectra_by_rowid(A3_B4), (low, high)).fetchall())
    assert rows == [(r["number"], r["spectrum"]) for r in molecules(full, A3_B4)]
    if dialect is sql.SERVER:
        assert (low, high) == (1, A3_B4.nb_mol)
    assert len(full.execute(dialect.spectra_by_rowid(A3_B4), (low, low)).fetchall()) == 1


# -- the file ---------------------------------------------------------------------------------


def test_the_file_s_version_statistics_and_columns(full):
    full.execute(sql.set_user_version(7))
    assert full.execute(sql.USER_VERSION).fetchone() == (7,)
    full.execute(sql.set_user_version("12"))  # an int whatever it is given
    assert full.execute(sql.USER_VERSION).fetchone() == (12,)
    full.execute(sql.analysis_limit(100))
    assert full.execute("PRAGMA analysis_limit").fetchone() == (100,)
    full.execute(sql.analysis_limit(0))
    assert full.execute("PRAGMA analysis_limit").fetchone() == (0,)
    assert full.execute(sql.STATISTICS_PRESENT).fetchone() is None
    full.execute(sql.analyze("Spectrums"))
    tables = {t for (t,) in full.execute("SELECT tbl FROM sqlite_stat1")}
    assert tables == {"Spectrums"}
    full.execute(sql.add_column("Configurations", "note", "TEXT DEFAULT 'none'"))
    columns = {row[1]: row[4] for row in full.execute('PRAGMA table_info("Configurations")')}
    assert columns["note"] == "'none'"


# -- a configuration's partial indexes -------------------------------------------------------


def indexes(connection, table: str = "Molecules") -> dict[str, str]:
    return dict(
        connection.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ?", (table,)
        )
    )


def test_a_configuration_s_indexes_are_named_made_and_dropped(full):
    """Each configuration's two partial indexes (on spectrum and canonical_number, for its rows
    alone); dropping one configuration's leaves the others'; each can be made alone."""
    names = (sql.spectrum_index(A3_B4), sql.canonical_index(A3_B4))
    assert names == ("Molecules_A3_B4_spectrum", "Molecules_A3_B4_canonical")
    assert (sql.family_key_index(A3_B4), sql.family_size_index(A3_B4)) == (
        "Families_A3_B4_key",
        "Families_A3_B4_size",
    )
    for statement in sql.drop_indexes(A3_B4):
        full.execute(statement)
    left = indexes(full)
    assert not set(names) & set(left) and sql.spectrum_index(A4_B4) in left
    for statement in sql.drop_indexes(A3_B4):  # again: IF EXISTS
        full.execute(statement)
    full.execute(sql.create_index_named(A3_B4, names[1]))
    assert names[1] in indexes(full) and names[0] not in indexes(full)
    for statement in sql.create_indexes(A3_B4):  # the other, and the first again (IF NOT EXISTS)
        full.execute(statement)
    made = indexes(full)
    assert made[names[0]].endswith("(spectrum) WHERE config = 'A3_B4'")
    assert made[names[1]].endswith("(canonical_number) WHERE config = 'A3_B4'")
    full.execute(sql.drop_index(names[0]))
    assert names[0] not in indexes(full)


# -- by spectrum -----------------------------------------------------------------------------


def test_by_spectrum_reads_one_configuration_s_molecules(full, dialect):
    """A spectral group's molecules, through the index or not, ordered or not; in a query
    plan, the configuration's spectrum index (SQLite's hint)."""
    rows = molecules(full, A3_B4)
    spectrum = ambiguous(rows)[0][0]
    expected = [r["number"] for r in rows if r["spectrum"] == spectrum]
    assert len(expected) > 1
    for indexed in (True, False):
        query = sql.by_spectrum(A3_B4, "number", "spectrum = ?", indexed=indexed, order="number DESC")
        assert [n for (n,) in full.execute(query, (spectrum,))] == expected[::-1]
        query = sql.by_spectrum(A3_B4, "number, config", "spectrum = ?", indexed=indexed)
        assert sorted(full.execute(query, (spectrum,))) == [(n, "A3_B4") for n in expected]
    plan = " ".join(
        str(r)
        for r in full.execute("EXPLAIN QUERY PLAN " + sql.by_spectrum(A3_B4, "*", "spectrum = ?"), ("x",))
    )
    assert sql.spectrum_index(A3_B4) in plan
    for statement in sql.drop_indexes(A3_B4):  # a configuration still explored has no index yet
        full.execute(statement)
    query = sql.by_spectrum(A3_B4, "number", "spectrum = ?", indexed=False, order="number")
    assert [n for (n,) in full.execute(query, (spectrum,))] == expected
    table, where = sql.molecules_indexed(A3_B4, "k")
    assert table.startswith('"Molecules" AS k') and where == "k.config = 'A3_B4'"


def test_the_ambiguous_molecules_in_each_form(full, dialect):
    """Every molecule whose spectrum another shares, no other, in each form (a server's in
    spectrum order, as is ``ambiguous_molecules_by_spectrum``'s)."""
    for config in (A3_B4, A4_B4):
        expected = ambiguous(molecules(full, config))
        assert expected
        assert sorted(full.execute(sql.ambiguous_molecules(config))) == expected
        by_spectrum = full.execute(sql.ambiguous_molecules_by_spectrum(config)).fetchall()
        assert sorted(by_spectrum) == expected
        assert [r[0] for r in by_spectrum] == sorted(r[0] for r in by_spectrum)
        window = full.execute(sql.ambiguous_by_window(config)).fetchall()
        assert sorted(window) == expected and [r[0] for r in window] == sorted(r[0] for r in window)


def test_group_molecules_gives_each_stored_group_s_molecules(full):
    """Each Spectrums row's molecules (spectrum, the row's transform, molecule), by spectrum."""
    rows = molecules(full, A3_B4)
    spectrums = dict(full.execute('SELECT spectrum, transform FROM "Spectrums" WHERE config = ?', ("A3_B4",)))
    expected = sorted(
        (r["spectrum"], spectrums[r["spectrum"]], r["molecule"]) for r in rows if r["spectrum"] in spectrums
    )
    found = full.execute(sql.group_molecules(A3_B4)).fetchall()
    assert sorted(found) == expected and [r[0] for r in found] == sorted(r[0] for r in found)


# -- whole-configuration scans, bulk writes ---------------------------------------------------


def test_grouped_by_and_table_rows(full):
    rows = molecules(full, A3_B4)
    counts = defaultdict(lambda: [0, None])
    for r in rows:
        entry = counts[r["out_number"]]
        entry[0] += 1
        entry[1] = r["number"] if entry[1] is None else min(entry[1], r["number"])
    found = full.execute(sql.grouped_by("out_number", "out_number"), ("A3_B4",)).fetchall()
    assert sorted(found) == sorted((k, n, low) for k, (n, low) in counts.items())
    found = full.execute(sql.table_rows("Molecules", ("number", "spectrum"), "spectrum, number"), ("A3_B4",))
    assert found.fetchall() == sorted(
        ((r["number"], r["spectrum"]) for r in rows), key=lambda t: (t[1], t[0])
    )


def test_molecules_written_directly_and_through_the_stage(tmp_path, full):
    """``insert_molecules`` into Molecules, and into the connection's stage (``create_stage``),
    then ``copy_stage``: the same rows; ``CLEAR_STAGE`` empties the stage."""
    rows = [tuple(r.values()) for r in molecules(full, A3_B4)]
    columns = tuple(molecules(full, A3_B4)[0])
    assert columns == store.MOLECULE_COLUMNS
    target = sqlite3.connect(tmp_path / "target.sqlite")
    target.execute(next(s for (s,) in full.execute("SELECT sql FROM sqlite_master WHERE name = 'Molecules'")))
    target.executemany(sql.insert_molecules(columns), rows[:100])
    target.execute(sql.create_stage(columns))
    target.execute(sql.create_stage(columns))  # IF NOT EXISTS
    target.executemany(sql.insert_molecules(columns, f'temp."{sql.STAGE}"'), rows[100:])
    assert target.execute('SELECT COUNT(*) FROM "Molecules"').fetchone() == (100,)
    target.execute(sql.copy_stage(columns))
    assert target.execute('SELECT * FROM "Molecules" ORDER BY number').fetchall() == rows
    target.execute(sql.CLEAR_STAGE)
    assert target.execute(f'SELECT COUNT(*) FROM temp."{sql.STAGE}"').fetchone() == (0,)
    target.close()


# -- bbcore check's reads -----------------------------------------------------------------------


def test_the_checked_molecules_by_canonical_and_by_number(full, dialect):
    rows = molecules(full, A4_B4)
    checked = [tuple(r[c] for c in sql.CHECKED_COLUMNS) for r in rows]
    found = full.execute(sql.molecules_by_canonical(A4_B4), (100, 300)).fetchall()
    assert sorted(found) == sorted(row for row in checked if 100 <= row[1] < 300)
    numbers = [5, 77, 1820]
    query = sql.molecules_by_number(("number", "spectrum"), len(numbers))
    assert sorted(full.execute(query, ("A4_B4", *numbers))) == [
        (r["number"], r["spectrum"]) for r in rows if r["number"] in numbers
    ]
    outside = full.execute(sql.molecules_outside_canonicals(A4_B4), (100, 1500)).fetchall()
    assert sorted(outside) == sorted(
        (r["number"], r["canonical_number"]) for r in rows if not 100 <= r["canonical_number"] <= 1500
    )


# -- a compact store ---------------------------------------------------------------------------


def families(connection) -> list[tuple]:
    return connection.execute(
        f'SELECT {", ".join(sql.FAMILY_COLUMNS)} FROM "Families" WHERE config = ? ORDER BY position',
        ("A4_B4",),
    ).fetchall()


def test_a_compact_store_s_families_by_each_column(compact, dialect):
    """``families_by`` on position, size_position and key (their indexes named), and
    ``family_ordinal``; ``create_family_indexes`` remakes the indexes a copy drops."""
    for statement in sql.drop_indexes(A4_B4):
        compact.execute(statement)
    assert not indexes(compact, "Families")
    for statement in sql.create_family_indexes(A4_B4):
        compact.execute(statement)
    made = indexes(compact, "Families")
    assert made[sql.family_key_index(A4_B4)].endswith("(key) WHERE config = 'A4_B4'")
    assert made[sql.family_size_index(A4_B4)].endswith("(size_position) WHERE config = 'A4_B4'")
    rows = families(compact)
    at = {name: i for i, name in enumerate(sql.FAMILY_COLUMNS)}
    assert len(rows) > 5
    for column in ("position", "size_position", "key"):
        low, high = sorted(r[at[column]] for r in rows)[1], sorted(r[at[column]] for r in rows)[-2]
        found = compact.execute(
            sql.families_by(A4_B4, column, f"{column} BETWEEN ? AND ?"), (low, high)
        ).fetchall()
        expected = sorted((r for r in rows if low <= r[at[column]] <= high), key=lambda r: r[at[column]])
        assert [r[at[column]] for r in found] == [r[at[column]] for r in expected], column
        assert sorted(found) == sorted(expected), column
    for row in rows[:4]:
        for column, before in (("position", "spectra_before"), ("size_position", "size_spectra_before")):
            query = sql.family_ordinal(A4_B4, column, before)
            assert compact.execute(query, (row[at[column]],)).fetchone() == (row[at[before]],)
    assert compact.execute(sql.LAST_FAMILY_ROW, ("A4_B4",)).fetchone() == (
        rows[-1][at["position"]],
        rows[-1][at["canonical_number"]],
    )


def test_a_compact_store_s_profile_rows(compact, tmp_path):
    """``profile_rows`` and ``profile_packed`` read the Profiles rows; ``insert_profiles`` writes
    them back the same."""
    columns = ("absorbed_number", "reflected_number", "out_number")
    rows = compact.execute(
        f'SELECT {", ".join(columns)}, molecules, lowest FROM "Profiles" WHERE config = ?', ("A4_B4",)
    ).fetchall()
    assert rows
    assert sorted(compact.execute(sql.profile_rows(columns), ("A4_B4",))) == sorted(rows)
    packed = compact.execute(
        sql.profile_packed(["absorbed_number * 100 + out_number", "reflected_number"]), ("A4_B4",)
    )
    assert sorted(packed) == sorted((a * 100 + o, r, m, low) for a, r, o, m, low in rows)
    every = tuple(row[1] for row in compact.execute('PRAGMA table_info("Profiles")'))[1:-2]
    whole = compact.execute(
        f'SELECT config, {", ".join(every)}, molecules, lowest FROM "Profiles"'
    ).fetchall()
    compact.execute('DELETE FROM "Profiles"')
    compact.executemany(sql.insert_profiles(every), whole)
    assert sorted(
        compact.execute(f'SELECT config, {", ".join(every)}, molecules, lowest FROM "Profiles"')
    ) == sorted(whole)
