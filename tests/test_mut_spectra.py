"""Spectral groups (``bbcore.spectra``): the Spectrums rows against brute force, the grouping's progress.

Written from the mutation run of ``bbcore/spectra.py`` (``bench/mutation.py spectra``):
each ambiguous spectrum's row (its size, and the transform and canonical number of
its first molecule by (canonical number, number)) is checked against rays traced
by the reference, on A4_B4 (66 spectral groups); the
grouping's progress is checked with ``OPS_PER_TICK`` shrunk (a tick every 500
instructions instead of 20,000) and with ``REPORT_EVERY`` both ways.
"""

from __future__ import annotations

import sqlite3

import pytest
from conftest import canonical_and_transform
from peewee import fn

from bbcore import rays
from bbcore import spectra as spectra_module
from bbcore.config import Config
from bbcore.explore import explore
from bbcore.numbering import atoms_of
from bbcore.progress import COMPLETE
from bbcore.spectra import ambiguity_table, build_spectrums, computed_spectrums
from bbcore.store import COMPACT, Spectrum, db

A3_B4, A4_B4, A4_B5 = Config(3, 4), Config(4, 4), Config(4, 5)


def reference_spectrums(config: Config) -> dict[str, tuple[int, str, int]]:
    """spectrum -> (molecules, transform, canonical number) of its first molecule, by brute force."""
    first: dict[str, tuple[int, int, str]] = {}
    sizes: dict[str, int] = {}
    for number in range(1, config.nb_mol + 1):
        atoms = atoms_of(config, number)
        spectrum = rays.spectrum(config, atoms)
        canonical, transform = canonical_and_transform(config, atoms)
        sizes[spectrum] = sizes.get(spectrum, 0) + 1
        first[spectrum] = min(
            first.get(spectrum, (canonical, number, transform)), (canonical, number, transform)
        )
    return {s: (n, first[s][2], first[s][0]) for s, n in sizes.items() if n > 1}


@pytest.fixture(scope="module")
def a4_b4(tmp_path_factory):
    path = tmp_path_factory.mktemp("spectra") / "db.sqlite"
    assert explore(A4_B4, path, workers=1) == COMPLETE
    return path, reference_spectrums(A4_B4)


def stored_rows(config: Config) -> dict[str, tuple[int, str, int]]:
    query = Spectrum.select().where(Spectrum.config == config.name)
    return {r.spectrum: (r.nb_mol, r.transform, r.canonical_number) for r in query}


def test_each_ambiguous_spectrum_is_stored_once_with_its_first_molecules_transform(a4_b4):
    path, reference = a4_b4
    explore(A4_B4, path)  # opens it again here (the module's fixture may have run in another test's database)
    assert stored_rows(A4_B4) == reference
    assert computed_spectrums(A4_B4) == dict(sorted(reference.items()))
    assert list(computed_spectrums(A4_B4)) == sorted(reference)
    # built again: the same rows, none twice, and how many it wrote
    assert build_spectrums(A4_B4) == len(reference)
    assert stored_rows(A4_B4) == reference
    assert Spectrum.select(fn.COUNT(Spectrum.spectrum)).where(Spectrum.config == A4_B4.name).scalar() == len(
        reference
    )
    # the ambiguity report, from the reference's groups
    sizes = sorted({n for n, _, _ in reference.values()})
    expected = []
    for size in sizes:
        groups = [t for n, t, _ in reference.values() if n == size]
        expected.append((size, groups.count("id"), len(groups), size * len(groups)))
    assert [(x.size, x.families, x.groups, x.molecules) for x in ambiguity_table(A4_B4)] == expected


def test_a_compact_stores_ambiguity_report_is_the_full_stores(a4_b4, tmp_path):
    path, _ = a4_b4
    explore(A4_B4, path)
    full = ambiguity_table(A4_B4)
    assert [(x.size, x.families, x.groups, x.molecules) for x in full] == [(2, 9, 58, 116), (3, 2, 8, 24)]
    assert explore(A4_B4, tmp_path / "compact.sqlite", workers=1, store=COMPACT) == COMPLETE
    assert ambiguity_table(A4_B4) == full
    assert explore(A3_B4, tmp_path / "compact.sqlite", workers=1, store=COMPACT) == COMPLETE
    assert [(x.size, x.families, x.groups, x.molecules) for x in ambiguity_table(A3_B4)] == [(2, 1, 4, 8)]


def drop_indexes(path) -> None:
    with sqlite3.connect(path) as connection:
        for name in ("spectrum", "canonical"):
            connection.execute(f"DROP INDEX Molecules_{A4_B4.name}_{name}")


def shrunk_grouping_reports(a4_b4, monkeypatch, report_every: float) -> list[tuple[int, int]]:
    """The progress reports of A4_B4's grouping, its indexes dropped first (so that it builds
    them), with ticks every 500 SQLite operations and reports ``report_every`` seconds apart."""
    path, reference = a4_b4
    explore(A4_B4, path)
    drop_indexes(path)
    monkeypatch.setattr(spectra_module, "OPS_PER_TICK", 500)
    monkeypatch.setattr(spectra_module, "REPORT_EVERY", report_every)
    seen: list[tuple[int, int]] = []
    assert build_spectrums(A4_B4, lambda done, total: seen.append((done, total))) == len(reference)
    return seen


def test_the_grouping_reports_its_progress_without_reaching_the_whole_before_its_end(a4_b4, monkeypatch):
    seen = shrunk_grouping_reports(a4_b4, monkeypatch, 0.0)
    assert {total for _, total in seen} == {A4_B4.nb_mol}
    done = [d for d, _ in seen]
    assert done[0] == 0 and done[-1] == A4_B4.nb_mol
    assert done == sorted(done)
    assert all(d < A4_B4.nb_mol for d in done[:-1])  # the whole only once over
    assert len(seen) > 20 and len({d for d in done if 0 < d < A4_B4.nb_mol}) > 10  # it moves in between
    # the two index builds are about two thirds of the work here, the query the rest
    assert any(A4_B4.nb_mol // 2 < d < A4_B4.nb_mol for d in done)
    assert len([d for d in done if d < A4_B4.nb_mol // 4]) > 3
    # once over, SQLite's progress handler is gone: a long statement calls nothing
    count = len(seen)
    db.execute_sql("SELECT COUNT(*) FROM Molecules a, Molecules b WHERE a.number < 100").fetchone()
    assert len(seen) == count


def test_the_grouping_reports_at_each_step_and_no_more_often_than_report_every(a4_b4, monkeypatch):
    seen = shrunk_grouping_reports(a4_b4, monkeypatch, 3600.0)
    # the start, each of its three steps (two indexes, the query), the end
    assert len(seen) == 5
    assert seen[0] == seen[1] == (0, A4_B4.nb_mol) and seen[-1] == (A4_B4.nb_mol, A4_B4.nb_mol)
    assert 0 < seen[2][0] < seen[3][0] < A4_B4.nb_mol
    # with the indexes there, only the query is left: its steps start at 0 and end short of the whole
    seen.clear()
    build_spectrums(A4_B4, lambda done, total: seen.append((done, total)))
    assert [d for d, _ in seen[:4]] == [0, 0, 0, 0] and seen[-1][0] == A4_B4.nb_mol


def test_a_rebuild_touches_only_its_configuration_and_refreshes_the_planners_statistics(tmp_path):
    path = tmp_path / "db.sqlite"
    assert explore(A4_B4, path, workers=1) == COMPLETE
    four = stored_rows(A4_B4)
    db.execute_sql("ANALYZE")  # the file has planner statistics: they are kept up to date
    assert explore(A3_B4, path, workers=1) == COMPLETE
    stats = {(table, index): stat for table, index, stat in db.execute_sql("SELECT * FROM sqlite_stat1")}
    assert stats[("Spectrums", "Spectrums")].split()[0] == "70"  # 66 of A4_B4 and A3_B4's 4
    assert ("Molecules", "Molecules_A3_B4_spectrum") in stats
    assert build_spectrums(A3_B4) == 4
    assert stored_rows(A4_B4) == four
    assert [(x.size, x.families, x.groups) for x in ambiguity_table(A3_B4)] == [(2, 1, 4)]
    assert [(x.size, x.families, x.groups) for x in ambiguity_table(A4_B4)] == [(2, 9, 58), (3, 2, 8)]


def grouping_reports(config: Config) -> list[int]:
    """The molecules reported grouped while ``config``'s indexes and spectra are built again."""
    with sqlite3.connect(db.database) as connection:
        for name in ("spectrum", "canonical"):
            connection.execute(f"DROP INDEX Molecules_{config.name}_{name}")
    seen: list[int] = []
    build_spectrums(config, lambda done, total: seen.append(done))
    assert all(type(done) is int for done in seen)
    return seen


def test_the_grouping_estimates_its_steps_from_every_row_an_index_build_scans(tmp_path, monkeypatch):
    """A3_B4 in a database holding A4_B5 too: each index build scans every configuration's rows."""
    path = tmp_path / "db.sqlite"
    assert explore(A4_B5, path, workers=1) == COMPLETE
    assert explore(A3_B4, path, workers=1) == COMPLETE
    rows = db.execute_sql("SELECT MAX(rowid) FROM Molecules").fetchone()[0]
    assert rows == 12650 + 560
    monkeypatch.setattr(spectra_module, "OPS_PER_TICK", 200)
    monkeypatch.setattr(spectra_module, "REPORT_EVERY", 1e12)  # past any clock: only the steps report
    seen = grouping_reports(A3_B4)
    # 3 instructions a row and 8 a molecule for each index, 20 a molecule for the query
    index = 3 * rows + 8 * 560
    total = 2 * index + 20 * 560
    assert seen == [0, 0, 560 * index // total, 560 * 2 * index // total, 560]
    assert seen[3] == 496


def test_a_step_longer_than_its_estimate_never_takes_the_count_back_nor_to_the_whole(tmp_path, monkeypatch):
    path = tmp_path / "db.sqlite"
    assert explore(A4_B5, path, workers=1) == COMPLETE
    assert explore(A3_B4, path, workers=1) == COMPLETE
    monkeypatch.setattr(spectra_module, "OPS_PER_TICK", 100)
    monkeypatch.setattr(spectra_module, "REPORT_EVERY", 0.0)
    # the index builds run several times their estimates: the count stops short of the query's share
    monkeypatch.setattr(spectra_module, "INDEX_OPS_PER_ROW", 0)
    monkeypatch.setattr(spectra_module, "INDEX_OPS_PER_MOLECULE", 1)
    seen = grouping_reports(A3_B4)
    assert seen == sorted(seen) and seen[-1] == 560
    share = 560 * 2 * 560 // (2 * 560 + 20 * 560)  # the index builds' share: where the query starts
    assert max(seen[:-1]) > share and len([done for done in seen if done == share]) >= 1
    # the query (a small share here) runs 20 times its estimate: held at 99% of it, one short of the whole
    monkeypatch.undo()
    monkeypatch.setattr(spectra_module, "OPS_PER_TICK", 100)
    monkeypatch.setattr(spectra_module, "REPORT_EVERY", 0.0)
    monkeypatch.setattr(spectra_module, "QUERY_OPS_PER_MOLECULE", 1)
    seen = grouping_reports(A3_B4)
    assert seen == sorted(seen) and seen[-2:] == [559, 560]
