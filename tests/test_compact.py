"""The compact exploration: the same spectral groups as a full one, from records and shards."""

from __future__ import annotations

import bisect
import os
import signal
import sqlite3
import subprocess
import sys
import threading
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bbcore import engine, export, families, queries
from bbcore.columns import Column, merged
from bbcore.compact import group as group_stage
from bbcore.compact import trace, write
from bbcore.compact.shards import CompactError, config_directory, result_folder
from bbcore.config import Config, parse_config
from bbcore.explore import explore
from bbcore.numbering import atoms_of_numbers, binomial_table
from bbcore.progress import COMPLETE, PAUSED, ExploreError
from bbcore.store import ExploredRange, config_row, open_database

SPECTRUMS = (
    "SELECT spectrum, nb_mol, transform, canonical_number FROM Spectrums WHERE config = ? ORDER BY spectrum"
)
FULL_MEMBERS = """
SELECT spectrum, number FROM Molecules WHERE config = ?1 AND spectrum IN
    (SELECT spectrum FROM Spectrums WHERE config = ?1) ORDER BY spectrum, number
"""


def compact_spectrums(path: Path, config: Config) -> list[tuple]:
    """The spec's Spectrums rows of a compact store, derived from its families (``bbcore export``'s)."""
    open_database(path)
    return [row[1:] for row in export.iter_rows(config, "spectrums")]


def compact_members(path: Path, config: Config) -> list[tuple[str, int]]:
    """``(spectrum, number)`` of every molecule of an ambiguous spectrum of a compact store, in order."""
    open_database(path)
    return sorted((row.spectrum, n) for row, numbers in families.spectrum_rows(config) for n in numbers)


def groups(path: Path, config: Config, store: str) -> tuple[list[tuple], list[tuple]]:
    """The Spectrums rows and the molecules of each ambiguous spectrum, from the file."""
    if store == "full":
        with sqlite3.connect(path) as connection:
            spectrums = connection.execute(SPECTRUMS, (config.name,)).fetchall()
            return spectrums, connection.execute(FULL_MEMBERS, (config.name,)).fetchall()
    return compact_spectrums(path, config), compact_members(path, config)


def explore_both(tmp_path: Path, config: Config, **compact_options) -> tuple[Path, Path]:
    """``config`` explored full and compact into two files."""
    full, small = tmp_path / "full.sqlite", tmp_path / "compact.sqlite"
    assert explore(config, full, store="full") == COMPLETE
    assert explore(config, small, store="compact", **compact_options) == COMPLETE
    return full, small


@pytest.mark.slow
@pytest.mark.parametrize("name", ["A2_B4", "A3_B4", "A4_B4", "A3_B5", "A4_B5", "A2_B6", "A3_B6", "A4_B6"])
def test_compact_and_full_give_the_same_groups_and_members(tmp_path, name):
    config = parse_config(name)
    full, small = explore_both(tmp_path, config)
    assert groups(small, config, "compact") == groups(full, config, "full")


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    config=st.sampled_from(
        [Config(n, w) for w in (2, 3, 4, 5) for n in range(1, w * w) if w * w <= 25]
    ).filter(lambda c: c.nb_mol <= 60_000),
    range_size=st.integers(1, 5000),
    shards=st.sampled_from([1, 2, 4, 8]),
)
def test_any_ranges_and_shards_give_the_full_groups(tmp_path_factory, config, range_size, shards):
    tmp_path = tmp_path_factory.mktemp("any")
    full = tmp_path / "full.sqlite"
    small = tmp_path / "compact.sqlite"
    assert explore(config, full, store="full") == COMPLETE
    start_compact(small, config, shards)
    assert explore(config, small, store="compact", range_size=range_size) == COMPLETE
    assert groups(small, config, "compact") == groups(full, config, "full")
    assert not config_directory(small, config).exists()


def start_compact(path: Path, config: Config, shards: int) -> None:
    """Create a compact configuration's row with a chosen shard count (as the run would)."""
    from bbcore.store import Configuration, ensure_config

    open_database(path)
    ensure_config(config, "compact")
    Configuration.update(shards=shards).where(Configuration.config == config.name).execute()


@cache
def lowest_among_their_images(config: Config) -> np.ndarray:
    """The numbers of a configuration's molecules that are the lowest of their 8 images."""
    table = binomial_table(config)
    numbers = np.arange(1, config.nb_mol + 1)
    images = engine.image_numbers(config, atoms_of_numbers(config, numbers, table), table)
    return numbers[images.min(axis=1) == numbers]


def assert_canonical_range(config: Config, start: int, stop: int) -> None:
    expected = lowest_among_their_images(config)
    atoms, found = engine.canonical_molecules(config, start, stop)
    wanted = expected[(expected >= start) & (expected < stop)]
    assert found.tolist() == wanted.tolist()
    assert (atoms == atoms_of_numbers(config, wanted)).all()


@pytest.mark.parametrize("name", ["A3_B5", "A4_B5", "A2_B6", "A5_B6"])
def test_canonical_molecules_are_those_lowest_among_their_images(name):
    """Every canonical molecule of the configuration, of ranges that start and end inside the
    blocks of numbers the kernel skips, of a range of one number (the first, the last)."""
    config = parse_config(name)
    last = config.nb_mol
    for start, stop in ((1, last + 1), (17, 1000), (999, 1001), (2, 3), (1, 2), (last, last + 1)):
        assert_canonical_range(config, start, min(stop, last + 1))


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_canonical_molecules_of_any_range_of_a4_b6(data):
    """Any range of A4_B6: the skipped blocks (molecules sharing their first atoms, one of which
    has an image before the first atom) are cut anywhere by the range's ends."""
    config = Config(4, 6)
    start = data.draw(st.integers(1, config.nb_mol))
    stop = data.draw(st.integers(start, min(start + 20_000, config.nb_mol + 1)))
    assert_canonical_range(config, start, stop)


def test_molecules_sharing_a_spectrum_share_a_key():
    config = Config(4, 5)
    batch = engine.explore_range(config, 1, config.nb_mol + 1)
    canonical = np.unique(batch.canonical_number)
    atoms = atoms_of_numbers(config, canonical)
    partner, _, _ = engine.trace_batch(config, atoms)
    keys, orbit, _, _ = engine.spectrum_keys(config, atoms, partner)
    key_of = dict(zip(canonical.tolist(), keys.tolist()))
    assert int(orbit.sum()) == config.nb_mol
    by_spectrum: dict[bytes, set[int]] = {}
    for spectrum, group in zip(batch.spectrum, batch.canonical_number):
        by_spectrum.setdefault(spectrum.tobytes(), set()).add(key_of[int(group)])
    assert all(len(found) == 1 for found in by_spectrum.values())
    # and keys tell most enantiomer groups apart (few of A4_B5's are ambiguous)
    assert len(set(keys.tolist())) > 0.9 * len(canonical)


def test_a_started_store_cannot_change(tmp_path):
    path = tmp_path / "db.sqlite"
    stop = threading.Event()
    explore(
        Config(4, 5),
        path,
        store="compact",
        range_size=500,
        progress=lambda p: p.done and stop.set(),
        stop=stop,
    )
    with pytest.raises(ExploreError, match="reset it first"):
        explore(Config(4, 5), path, store="full")
    assert explore(Config(4, 5), path) == COMPLETE  # keeps its store


# -- stopped at any moment -------------------------------------------------------------

ROOT = Path(__file__).resolve().parent.parent


def run_killed(path: Path, config_name: str, point: str, count: int, workers: int):
    """Run KILLER in a fresh process: a compact run SIGKILLed at ``point`` (its ``count``-th step)."""
    return subprocess.run(
        [sys.executable, "-c", KILLER, str(path), config_name, point, str(count), str(workers)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )


KILLER = """
import os, signal, sys
from pathlib import Path
import bbcore.families
from bbcore import sql
from bbcore.compact import group, trace, write
from bbcore.config import parse_config
from bbcore.explore import explore
from bbcore.store import sqlite_db

path, name, point, count, workers = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
calls = 0

def kill_at(target, counted=lambda *args: True):
    def wrapper(*args, **kwargs):
        global calls
        calls += counted(*args)
        if calls == count:
            os.kill(os.getpid(), signal.SIGKILL)
        return target(*args, **kwargs)
    return wrapper

write.WRITE_ROWS = 8  # A4_B6's 100 families in about 13 parts of 8
write.PART_FAMILIES = write.PART_AT_LEAST = 8
if point == "tracing":  # a range traced and written, not recorded
    trace._record_range = kill_at(trace._record_range)
elif point == "spilling":  # a shard file half written, not renamed
    os.replace = kill_at(os.replace)
elif point == "profiles":  # every range traced, the profiles being stored (in their transaction)
    sql.insert_profiles = kill_at(sql.insert_profiles)
elif point == "grouping":  # a shard grouped, its result written, not recorded
    group._record_shard = kill_at(group._record_shard)
elif point == "writing":  # every shard grouped, some families written: parts copied (SQLite), or rows
    write._copy_part = kill_at(write._copy_part)
    bbcore.families.FamilyWriter.write = kill_at(bbcore.families.FamilyWriter.write)  # (a server)
elif point == "parts":  # every shard grouped, a part of the families half written in its file
    write.family_rows = kill_at(write.family_rows)
elif point == "indexes":  # every family written, one of its two indexes built
    indexing = lambda statement, *args: statement.startswith('CREATE INDEX IF NOT EXISTS "Families_')
    sqlite_db.execute_sql = kill_at(sqlite_db.execute_sql, indexing)  # the file behind store.db (a proxy)

def main():
    explore(parse_config(name), path, store="compact", range_size=700, workers=workers)

if __name__ == "__main__":
    main()
"""


def result_of(path: Path, config: Config) -> dict[str, list[tuple]]:
    """What a compact run leaves in the database, timestamps left out."""
    with sqlite3.connect(path) as connection:
        query = lambda sql: connection.execute(sql, (config.name,)).fetchall()  # noqa: E731
        return {
            "families": query("SELECT * FROM Families WHERE config = ? ORDER BY position"),
            "indexes": connection.execute(
                "SELECT name, sql FROM sqlite_master WHERE tbl_name = 'Families' AND name LIKE ? ORDER BY 1",
                (f"Families_{config.name}_%",),
            ).fetchall(),
            "profiles": query("SELECT * FROM Profiles WHERE config = ? ORDER BY 2, 3, 4, 5, 6, 7, 8, 9, 10"),
            "shards": query(
                "SELECT shard, records, spectra, families, risk FROM GroupedShards "
                "WHERE config = ? ORDER BY 1"
            ),
            "ranges": query("SELECT sum(nb_mol) FROM ExploredRanges WHERE config = ?"),
            "configurations": query(
                "SELECT config, nb_mol, complete, store, shards FROM Configurations WHERE config = ?"
            ),
        }


@pytest.fixture(scope="module")
def clean_a4_b6(tmp_path_factory) -> dict[str, list[tuple]]:
    """A4_B6 explored compact in 4 shards without a stop."""
    path = tmp_path_factory.mktemp("clean") / "clean.sqlite"
    start_compact(path, Config(4, 6), 4)
    assert explore(Config(4, 6), path, store="compact", range_size=700) == COMPLETE
    return result_of(path, Config(4, 6))


def test_records_without_their_lowest_transform_give_the_same_store(tmp_path, monkeypatch, clean_a4_b6):
    """Every other canonical molecule's record without its ``LOWEST`` bits (as an older bbtui wrote
    them), beside records with them in the same keys: those keys go to the general kernel, the
    others to the asymmetric one (both ran), and the store is the one of a clean run."""
    real_bits, real_families = trace.record_number_bits, engine.families_of_runs
    grouped = {True: 0, False: 0}

    def older(config, numbers, shared, lowest):
        return real_bits(config, numbers, shared, np.where(numbers % 2 == 0, -1, lowest))

    def counted(config, atoms, own, runs, insertion_rows=engine.INSERTION_ROWS, lowest=None):
        grouped[lowest is not None] += len(own)
        return real_families(config, atoms, own, runs, insertion_rows, lowest)

    monkeypatch.setattr(trace, "record_number_bits", older)
    monkeypatch.setattr(engine, "families_of_runs", counted)
    path = tmp_path / "older.sqlite"
    start_compact(path, Config(4, 6), 4)
    assert explore(Config(4, 6), path, store="compact", range_size=700, workers=1) == COMPLETE
    assert result_of(path, Config(4, 6)) == clean_a4_b6
    assert grouped[True] > 0 and grouped[False] > 0


def family_keys(path: Path, config: Config) -> list[tuple[int, str]]:
    with sqlite3.connect(path) as connection:
        return connection.execute(
            "SELECT key, spectrum FROM Families WHERE config = ? ORDER BY position", (config.name,)
        ).fetchall()


def without_keys(result: dict[str, list[tuple]]) -> dict[str, list]:
    """``result_of`` but for the families' keys, and the shards summed (the keys choose them)."""
    return {
        **result,
        "families": [row[:3] + row[4:] for row in result["families"]],
        "shards": [sum(row[i] for row in result["shards"]) for i in (1, 2, 3)],
    }


def test_a_run_begun_with_hashed_keys_is_resumed_with_them(tmp_path, clean_a4_b6, capsys):
    """A run paused while tracing by a bbtui from before the lexical keys (records keyed by the
    smallest hash, no keying file) is resumed by this one: it keys the rest the same way, so every
    spectral group is found (the clean run's store but for the keys), each family's key is its
    spectrum's hashed one, a typed spectrum finds its family, and ``check`` passes the store.  A
    new run keys lexically."""
    config = Config(4, 6)
    path = tmp_path / "db.sqlite"
    start_compact(path, config, 4)
    directory = config_directory(path, config)
    directory.mkdir(parents=True)
    (directory / trace.KEYING).write_text(engine.HASHED)  # the records of the older bbtui
    stop = threading.Event()

    def pause_after_a_range(report) -> None:
        if report.phase == "tracing" and report.done > 0:
            stop.set()

    assert explore(config, path, range_size=700, progress=pause_after_a_range, stop=stop) == PAUSED
    (directory / trace.KEYING).unlink()  # which wrote no keying file
    open_database(path)
    assert 0 < ExploredRange.select().where(ExploredRange.config == config.name).count() < 10
    assert explore(config, path, range_size=700) == COMPLETE
    assert without_keys(result_of(path, config)) == without_keys(clean_a4_b6)
    stored = family_keys(path, config)
    partner = np.array([families.partner_of(config, spectrum) for _, spectrum in stored])
    lexical, hashed = engine.stored_keys(config, partner).T
    assert [key for key, _ in stored] == hashed.tolist()
    assert [row[3] for row in clean_a4_b6["families"]] == lexical.tolist()
    open_database(path)
    for (_, spectrum), row in zip(stored, clean_a4_b6["families"]):
        assert len(families.spectrum_numbers(config, spectrum)) == row[4]  # its nb_mol
    assert "groups.key" not in cli(capsys, path, "check", config.name, "--all")  # exits 0: every check ok


@pytest.mark.slow
@pytest.mark.parametrize(
    "point, count",
    [
        ("tracing", 5),
        ("spilling", 7),
        ("profiles", 1),
        ("grouping", 2),
        ("parts", 2),
        ("writing", 3),
        ("indexes", 2),
    ],
)
def test_killed_at_any_phase_resumes_to_the_clean_result(tmp_path, clean_a4_b6, point, count):
    config = Config(4, 6)
    path = tmp_path / "db.sqlite"
    start_compact(path, config, 4)
    killed = run_killed(path, config.name, point, count, 1)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    open_database(path)
    assert not queries.config_state(config).complete
    grouped = {row[0] for row in result_of(path, config)["shards"]}
    assert len(grouped) == {"grouping": 1, "parts": 4, "writing": 4, "indexes": 4}.get(point, 0)
    stored = result_of(path, config)
    if point in ("parts", "writing"):
        assert 0 < len(stored["families"]) < len(clean_a4_b6["families"])
        assert stored["families"] == clean_a4_b6["families"][: len(stored["families"])]  # whole parts
        left = [p.name for p in (config_directory(path, config) / write.PARTS).iterdir()]
        if point == "parts":  # the second part half written, under a temporary name
            assert len(left) == 1 and left[0].startswith(".p00001.sqlite.")
        else:  # the third part written, not copied
            assert left == ["p00002.sqlite"]
    if point == "indexes":
        assert stored["families"] == clean_a4_b6["families"]
        assert len(stored["indexes"]) == 1 < len(clean_a4_b6["indexes"])
    regrouped: list[int] = []
    original = group_stage.group_shard

    def spy(job):
        regrouped.append(job.shard)
        return original(job)

    group_stage.group_shard = spy
    try:
        assert explore(config, path) == COMPLETE
    finally:
        group_stage.group_shard = original
    assert sorted(regrouped) == sorted(set(range(4)) - grouped)
    assert result_of(path, config) == clean_a4_b6
    assert not config_directory(path, config).exists()


@pytest.mark.slow
def test_killed_with_workers_resumes_without_redoing_recorded_ranges(tmp_path):
    config = Config(5, 6)  # 376,992 molecules: worker processes
    path, clean = tmp_path / "db.sqlite", tmp_path / "clean.sqlite"
    killed = run_killed(path, config.name, "tracing", 40, 2)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    open_database(path)
    recorded = {(r.start, r.stop) for r in ExploredRange.select().where(ExploredRange.config == config.name)}
    assert len(recorded) == 39
    traced: list[tuple[int, int]] = []
    original = trace.trace_range

    def spy(job):
        traced.append((job.start, job.stop))
        return original(job)

    trace.trace_range = spy
    try:
        assert explore(config, path, workers=1, range_size=700) == COMPLETE
    finally:
        trace.trace_range = original
    assert not recorded & set(traced)
    assert explore(config, clean, store="compact", range_size=700) == COMPLETE
    assert result_of(path, config) == result_of(clean, config)


def test_pause_and_resume_give_the_clean_result(tmp_path, clean_a4_b6, monkeypatch):
    config = Config(4, 6)
    path = tmp_path / "db.sqlite"
    start_compact(path, config, 4)
    monkeypatch.setattr(write, "WRITE_ROWS", 8)
    phases, units = [], {}
    for phase in ("tracing", "grouping", "writing"):
        stop = threading.Event()

        def progress(p, phase=phase, stop=stop):
            phases.append(p.phase)
            units[p.phase] = (p.unit, p.total)
            if p.phase == phase and p.done > 0:
                stop.set()

        assert explore(config, path, range_size=700, progress=progress, stop=stop) == PAUSED
        assert phases[-1] == "paused"
    assert explore(config, path, range_size=700) == COMPLETE
    assert result_of(path, config) == clean_a4_b6
    assert phases.index("tracing") < phases.index("grouping") < phases.index("writing")
    assert units["tracing"] == ("molecules", config.nb_mol)
    assert units["writing"] == ("families", 100)  # A4_B6's 100 families, a row each


# -- every reader, on a configuration explored both ways -----------------------------------


@pytest.fixture(scope="module")
def both_a4_b6(tmp_path_factory) -> tuple[Path, Path]:
    """A4_B6 explored full and compact (2 shards, its 100 families written 16 at a time)."""
    tmp_path = tmp_path_factory.mktemp("both")
    full, small = tmp_path / "full.sqlite", tmp_path / "compact.sqlite"
    assert explore(Config(4, 6), full, store="full") == COMPLETE
    start_compact(small, Config(4, 6), 2)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(write, "WRITE_ROWS", 16)
        assert explore(Config(4, 6), small, store="compact") == COMPLETE
    return full, small


def cli(capsys, path: Path, *words: str) -> str:
    """The standard output of ``bbcore --db path words...`` (which must succeed)."""
    from bbcore.cli import main

    assert main(["--db", str(path), *words]) == 0
    return capsys.readouterr().out


def without_dates(csv_text: str) -> list[str]:
    """CSV lines without their last two columns (dh1, dh2: when each store was made)."""
    return [line.rsplit(",", 2)[0] for line in csv_text.splitlines()]


@pytest.mark.slow
def test_every_cli_reader_says_the_same_on_both_stores(capsys, both_a4_b6):
    full, small = both_a4_b6
    spectra = [row[0] for row in groups(full, Config(4, 6), "full")[0]]
    unique = queries_spectrum(full, 1)
    for words in (
        ["report", "A4_B6"],
        ["groups", "A4_B6"],
        ["groups", "A4_B6", "--all", "--by-size"],
        ["groups", "A4_B6", "--size", "3"],
        ["show", "A4_B6", "--spectrum", spectra[0]],
        ["show", "A4_B6", "--spectrum", spectra[-1], "--ray", "3"],
        ["show", "A4_B6", "--spectrum", unique],
        ["export", "A4_B6", "--table", "spectrums"],
        ["export", "A4_B6", "--table", "report", "--format", "json"],
    ):
        assert cli(capsys, small, *words) == cli(capsys, full, *words), words
    assert without_dates(cli(capsys, small, "export", "A4_B6")) == without_dates(
        cli(capsys, full, "export", "A4_B6")
    )
    stored = "  (computed, not stored)"
    shown = cli(capsys, small, "show", "A4_B6", "1", "77", "58905")
    assert shown.count(stored) == 3
    assert shown.replace(stored, "") == cli(capsys, full, "show", "A4_B6", "1", "77", "58905")
    for words in (
        ["decode", "A4_B6", spectra[0]],
        ["decode", "A4_B6", unique],
        ["decode", "A4_B6", "".join(c if c in "@&" else "." for c in spectra[1])],
    ):
        compact_lines = cli(capsys, small, *words).splitlines()
        full_lines = cli(capsys, full, *words).splitlines()
        assert compact_lines[1:] == full_lines[1:], words  # the first line says where they came from
    status_small, status_full = (cli(capsys, path, "status").splitlines()[1:] for path in (small, full))
    assert [line.replace("compact", "full").split() for line in status_small] == [
        line.split() for line in status_full
    ]
    assert "compact" in status_small[1]


def queries_spectrum(path: Path, number: int) -> str:
    """The spectrum of molecule ``number`` of A4_B6 in a full store."""
    with sqlite3.connect(path) as connection:
        return connection.execute(
            "SELECT spectrum FROM Molecules WHERE config = 'A4_B6' AND number = ?", (number,)
        ).fetchone()[0]


def test_library_readers_agree_on_both_stores(both_a4_b6):
    from bbcore import statistics

    full, small = both_a4_b6
    config = Config(4, 6)
    seen = {}
    for path in (full, small):
        open_database(path)
        spectrum = queries.group_page(config, 3, 5)[0].spectrum
        seen[path] = (
            queries.group_page(config, 0, 20, all_rows=True, order="size"),
            queries.molecules_with_spectrum(config, spectrum),
            queries.enantiomers(config, 4321),
            [queries.molecule_record(config, n) for n in (1, 2, 500)],
            statistics.statistics_report(config),
            queries.config_state(config).ambiguous,
        )
    assert seen[small] == seen[full]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    arrays=st.lists(st.lists(st.integers(0, 10**6), max_size=60, unique=True), min_size=1, max_size=6),
    rows=st.integers(1, 40),
    cut=st.integers(0, 10**6),
)
def test_the_merge_gives_every_element_once_in_order(tmp_path_factory, arrays, rows, cut):
    """Sorted arrays with distinct elements (as shards' keys are), read from files, resumed after ``cut``."""
    folder = tmp_path_factory.mktemp("merge")
    columns = []
    for i, values in enumerate(arrays):
        np.save(folder / f"{i}.npy", np.array(sorted(values), dtype=np.int64))
        columns.append(Column(folder / f"{i}.npy"))
    everything = sorted(v for values in arrays for v in values)
    if len(everything) != len(set(everything)):
        return  # keys are never in two shards
    starts = [bisect.bisect_right(column, cut) for column in columns]  # as a resumed write finds them
    out = []
    for slices, order, joined in merged(columns, starts, rows):
        assert len(joined) == sum(high - low for _, low, high in slices)
        out += joined[order].tolist()
    assert out == [v for v in everything if v > cut]


def test_a_column_reads_what_numpy_saved(tmp_path):
    text = np.array([b"AB@", b"CD&", b"EFa"], dtype="S3")
    np.save(tmp_path / "t.npy", text)
    column = Column(tmp_path / "t.npy")
    assert len(column) == 3 and column[1] == b"CD&" and column[1:].tolist() == [b"CD&", b"EFa"]
    assert column[3:].tolist() == [] and column[-1] == b"EFa"


# -- one row per family: every listing, a typed spectrum, the export, an older file ------------


def every_listing(path: Path, config: Config) -> dict:
    """Every page (7 groups) of every order and filter, the sizes and a few groups by index."""
    open_database(path)
    seen: dict = {"sizes": queries.group_sizes(config)}
    for all_rows in (False, True):
        for order in ("canonical", "size"):
            for size in (None, *seen["sizes"], 999):
                count = queries.group_count(config, all_rows=all_rows, size=size)
                pages = [
                    queries.group_page(config, page, 7, all_rows=all_rows, size=size, order=order)
                    for page in range(count // 7 + 2)
                ]
                ends = [
                    queries.group_at(config, index, all_rows=all_rows, size=size, order=order)
                    for index in (-1, 0, count // 2, count - 1, count)
                ]
                seen[all_rows, order, size] = (count, pages, ends)
    return seen


@pytest.mark.slow
def test_every_page_of_every_listing_is_the_full_stores(both_a4_b6):
    full, small = both_a4_b6
    expected = every_listing(full, Config(4, 6))
    assert every_listing(small, Config(4, 6)) == expected
    count, pages, _ = expected[True, "size", None]
    assert count == 764 and sum(len(page) for page in pages) == 764  # not vacuous


def test_a_typed_spectrum_has_the_key_of_its_molecules():
    config = Config(4, 5)
    atoms, _ = engine.canonical_molecules(config, 1, config.nb_mol + 1)
    partner, _, _ = engine.trace_batch(config, atoms)
    keys = engine.spectrum_keys(config, atoms, partner).keys
    assert engine.spectra_keys(config, partner).tolist() == keys.tolist()
    # and of its images: every molecule of a group, canonical or not, gives the same key
    batch = engine.explore_range(config, 1, 2000)
    images = np.array([families.partner_of(config, s.tobytes().decode()) for s in batch.spectrum])
    canonical_keys = dict(zip(engine.canonical_molecules(config, 1, config.nb_mol + 1)[1].tolist(), keys))
    assert engine.spectra_keys(config, images).tolist() == [
        canonical_keys[c] for c in batch.canonical_number.tolist()
    ]


def test_a_compact_export_sorted_in_chunks_is_the_full_stores(both_a4_b6, monkeypatch, capsys):
    """A4_B6's 764 rows derived one family at a time, sorted in chunks of ``SORT_ROWS`` (50) rows
    or a family more (a family has at most 8 spectra), saved beside the database while the export
    runs, merged into the full store's rows, and the folder removed at the end.  (With
    ``SORT_ROWS`` alone shrunk, the 100 families came in one batch: one chunk, no merge.)"""
    full, small = both_a4_b6
    monkeypatch.setattr(families, "DERIVE_BATCH", 1)
    monkeypatch.setattr(export, "SORT_ROWS", 50)
    assert cli(capsys, small, "export", "A4_B6", "--table", "spectrums") == cli(
        capsys, full, "export", "A4_B6", "--table", "spectrums"
    )
    assert not list(small.parent.glob(".bbcore-export-*"))
    open_database(small)
    rows = export.iter_rows(Config(4, 6), "spectrums")
    next(rows)
    (folder,) = small.parent.glob(".bbcore-export-*")  # the sorted chunks wait beside the database
    sizes = [
        len(np.load(folder / f"{n}.spectrum.npy")) for n in range(len(list(folder.glob("*.spectrum.npy"))))
    ]
    assert sum(sizes) == 764 and len(sizes) > 2
    assert all(50 <= size < 50 + 8 for size in sizes[:-1]) and 0 < sizes[-1] < 50 + 8, sizes
    rows.close()
    assert not folder.exists()


def test_a_stored_spectrum_of_a_compact_store_is_read_from_its_family(both_a4_b6, capsys):
    full, small = both_a4_b6
    spectrum = groups(full, Config(4, 6), "full")[0][-1][0]
    first = cli(capsys, small, "decode", "A4_B6", spectrum).splitlines()[0]
    assert "read from the explored A4_B6" in first


OLD_FILE = Path(__file__).parent / "data" / "compact_before_families.sqlite"
"""A4_B5 and A3_B4 explored compact by the release before Families (Spectrums rows, FamilyMolecules)."""


def test_a_compact_file_of_the_previous_layout_is_migrated_in_place(tmp_path, capsys):
    from bbcore.cli import main

    old, fresh = tmp_path / "old.sqlite", tmp_path / "fresh.sqlite"
    old.write_bytes(OLD_FILE.read_bytes())
    assert main(["--db", str(old), "groups", "A4_B5"]) == 2
    assert "run 'bbcore migrate'" in capsys.readouterr().err
    interrupted = []

    class Stopped(Exception):
        """The migration stopped after its first transaction (as a kill would stop it)."""

    def stop_after_the_first_batch(done: int, total: int) -> None:
        if done and not interrupted:
            interrupted.append(done)
            raise Stopped

    open_database(old)
    config = Config(4, 5)
    with pytest.raises(Stopped), pytest.MonkeyPatch.context() as patch:
        patch.setattr(families, "MIGRATE_BATCH", 10)
        families.migrate(config, stop_after_the_first_batch)
    assert interrupted == [10] and families.needs_migration(config)
    assert cli(capsys, old, "migrate").splitlines() == [
        "A3_B4: 1 family migrated",
        "A4_B5: 43 families migrated",
    ]
    assert cli(capsys, old, "migrate").endswith("nothing to migrate\n")
    for name in ("A4_B5", "A3_B4"):
        assert explore(parse_config(name), fresh, store="compact") == COMPLETE
    with sqlite3.connect(old) as connection:
        assert connection.execute("SELECT COUNT(*) FROM Spectrums").fetchone() == (0,)
        assert connection.execute("SELECT COUNT(*) FROM FamilyMolecules").fetchone() == (0,)
    for name in ("A4_B5", "A3_B4"):
        assert (
            result_of(old, parse_config(name))["families"] == result_of(fresh, parse_config(name))["families"]
        )
        assert (
            result_of(old, parse_config(name))["indexes"] == result_of(fresh, parse_config(name))["indexes"]
        )
    assert every_listing(old, config) == every_listing(fresh, config)
    for words in (["report", "A4_B5"], ["export", "A4_B5", "--table", "spectrums"], ["groups", "A3_B4"]):
        assert cli(capsys, old, *words) == cli(capsys, fresh, *words)


STARTS_LIGHT = """
import sys
from bbcore.cli import main
main(["--db", sys.argv[1], "decode", "A4_B6", sys.argv[2]])
print("loaded:", sorted(m for m in ("numba", "plotext") if m in sys.modules))
"""


def test_decoding_a_stored_spectrum_starts_without_numba_or_plotext(both_a4_b6):
    """A fresh ``bbcore decode`` of a stored spectrum reads its family and answers without importing
    numba (its kernels run as plain Python on the family's few molecules) or plotext: they cost a
    fresh process most of a second."""
    _, small = both_a4_b6
    spectrum = groups(small, Config(4, 6), "compact")[0][0][0]
    done = subprocess.run(
        [sys.executable, "-c", STARTS_LIGHT, str(small), spectrum],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "read from the explored A4_B6" in done.stdout
    assert done.stdout.splitlines()[-1] == "loaded: []"


def test_writing_without_the_grouped_shards_says_where_they_were_looked_for(tmp_path):
    """The writing stage, resumed with a shard folder that does not hold the grouped shards (another
    ``--shards``, or results of an older bbtui), stops with one line that names the configuration
    and the folder, and says what to do; nothing is written."""
    path, a4_b4 = tmp_path / "compact.sqlite", Config(4, 4)
    assert explore(a4_b4, path, store="compact") == COMPLETE
    open_database(path)
    elsewhere = tmp_path / "elsewhere" / "A4_B4"
    steps = []
    with pytest.raises(CompactError) as missing:
        write.write_result(elsewhere, a4_b4, threading.Event(), steps.append)
    assert str(missing.value) == (
        f"the grouped shards of A4_B4 are not in {elsewhere}: explore it with the folder it was grouped "
        "into, or reset it"
    )
    for shard in range(config_row(a4_b4).shards):
        result_folder(elsewhere, shard).mkdir(parents=True)  # a result without the family columns
    with pytest.raises(CompactError) as older:
        write.write_result(elsewhere, a4_b4, threading.Event(), steps.append)
    assert str(older.value) == (
        "the grouped shards of A4_B4 were written by an older bbtui: reset it and explore it again"
    )
    assert steps == []


def test_every_progress_report_of_a_compact_run_names_its_phase(tmp_path):
    """Each report a compact run makes (the TUI's and the CLI's progress line) names its phase, in
    the order tracing, grouping, writing, complete, with the unit of that phase, and the writing's
    reports count A4_B4's 11 families of 11 from the first."""
    reports = []
    assert (
        explore(Config(4, 4), tmp_path / "compact.sqlite", store="compact", progress=reports.append)
        == COMPLETE
    )
    phases = [report.phase for report in reports]
    assert phases[-1] == "complete" and "writing" in phases
    assert phases[:-1] == sorted(phases[:-1], key=["tracing", "grouping", "writing"].index)
    units = {report.phase: report.unit for report in reports[:-1]}
    assert units == {"tracing": "molecules", "grouping": "shards", "writing": "families"}
    writing = [(report.done, report.total) for report in reports if report.phase == "writing"]
    assert all(0 <= done <= total for done, total in writing) and writing[-1] == (11, 11)  # families


def test_a_pause_asked_as_the_last_families_are_written_pauses(tmp_path):
    """A pause asked while the last batch of families is written (the report of all of them
    written) pauses the run before the family indexes: PAUSED, not complete; resumed, it completes
    with the families of a run never paused."""
    config, path = Config(4, 4), tmp_path / "compact.sqlite"
    stop = threading.Event()

    def progress(report) -> None:
        if report.phase == "writing" and report.done == report.total:
            stop.set()

    assert explore(config, path, store="compact", progress=progress, stop=stop) == PAUSED
    open_database(path)
    assert not config_row(config).complete
    assert explore(config, path, store="compact") == COMPLETE
    clean = tmp_path / "clean.sqlite"
    assert explore(config, clean, store="compact") == COMPLETE
    assert compact_spectrums(path, config) == compact_spectrums(clean, config)
