"""Records that keep their canonical molecule's spectrum: the grouping reads it, traces nothing again.

A compact run's tracing keeps each canonical molecule's ``partner`` row in its record
(``shards.spectrum_record``, ``.spectra.keys`` files) while that adds at most
``feasibility.SPECTRA_BYTES``; records without one (``.keys``: a larger configuration, or a run begun by
an older release) are traced again by the grouping.  Either way the result is the full store's.
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_compact import groups, result_of, start_compact

from bbcore import engine, feasibility
from bbcore.compact import group as group_stage
from bbcore.compact import trace
from bbcore.compact.shards import SHARED, config_directory
from bbcore.config import Config, parse_config
from bbcore.explore import explore
from bbcore.numbering import atoms_of_numbers
from bbcore.progress import COMPLETE, PAUSED

A4_B6 = Config(4, 6)


def record_files(path: Path, config: Config) -> set[str]:
    """The suffixes of a paused run's record files: ``.keys`` (no spectrum), ``.spectra.keys``."""
    folder = config_directory(path, config)
    return {"." + p.name.split(".", 1)[1] for p in folder.glob("s*/*.keys")}


def pause_at_grouping(path: Path, config: Config, **options) -> str:
    """Explore ``config`` compact until its grouping begins."""
    stop = threading.Event()

    def progress(report):
        if report.phase == "grouping":
            stop.set()

    return explore(config, path, store="compact", stop=stop, progress=progress, **options)


def traced_in_grouping(path: Path, config: Config, monkeypatch) -> int:
    """Resume a run paused at its grouping to the end; the canonical molecules traced meanwhile."""
    traced = []
    original = engine.trace_batch

    def counting(config, atoms, *args, **kwargs):
        traced.append(len(atoms))
        return original(config, atoms, *args, **kwargs)

    with monkeypatch.context() as spying:
        spying.setattr(engine, "trace_batch", counting)
        assert explore(config, path, workers=1) == COMPLETE
    return sum(traced)


@pytest.fixture(scope="module")
def full_groups(tmp_path_factory):
    """Each configuration's Spectrums rows and members from a full store, explored once."""
    found: dict[str, tuple] = {}

    def of(config: Config):
        if config.name not in found:
            path = tmp_path_factory.mktemp("full") / "full.sqlite"
            assert explore(config, path, store="full") == COMPLETE
            found[config.name] = groups(path, config, "full")
        return found[config.name]

    return of


@pytest.mark.slow
@pytest.mark.parametrize("kept", [True, False], ids=["spectra", "keys"])
@pytest.mark.parametrize("name", ["A2_B4", "A3_B4", "A4_B4", "A3_B5", "A4_B5", "A2_B6", "A3_B6", "A4_B6"])
def test_records_with_or_without_spectra_give_the_full_groups(tmp_path, monkeypatch, full_groups, name, kept):
    """Catches: a stored spectrum read wrong (its dtype, its row, a record's spectrum given to
    another molecule), or records without one left untraced.  And the grouping of records that
    keep spectra traces no molecule again (the point of keeping them)."""
    config = parse_config(name)
    if not kept:
        monkeypatch.setattr(feasibility, "SPECTRA_BYTES", 0)
    assert feasibility.keeps_spectra(config) == kept
    path = tmp_path / "compact.sqlite"
    assert pause_at_grouping(path, config, workers=1) == PAUSED
    assert record_files(path, config) == ({".spectra.keys"} if kept else {".keys"})
    traced = traced_in_grouping(path, config, monkeypatch)
    if kept or not full_groups(config)[0]:  # no ambiguous spectrum: perhaps nothing to trace
        assert traced == 0 or not kept
    else:
        assert traced > 0
    assert groups(path, config, "compact") == full_groups(config)


@pytest.mark.slow
def test_a_shard_of_both_layouts_gives_the_result_of_either(tmp_path, monkeypatch):
    """A run begun by a release whose records kept no spectrum (``SPECTRA_BYTES`` = 0 here), paused
    midway through its tracing and resumed by one that keeps them: its shards hold both layouts,
    and the result (families, profiles, shard counts, ranges) is that of a run in either layout
    alone.  Catches: records of one layout ignored or read as the other, a spectrum lost in the
    merge of the two, the grouping tracing the stored ones or not the others."""
    clean = {}
    for kept in (True, False):
        path = tmp_path / f"clean-{kept}.sqlite"
        start_compact(path, A4_B6, 4)
        with monkeypatch.context() as layout:
            layout.setattr(feasibility, "SPECTRA_BYTES", feasibility.SPECTRA_BYTES if kept else 0)
            assert explore(A4_B6, path, store="compact", range_size=700, workers=1) == COMPLETE
        clean[kept] = result_of(path, A4_B6)
    assert clean[True] == clean[False]

    path = tmp_path / "mixed.sqlite"
    start_compact(path, A4_B6, 4)
    stop = threading.Event()
    with monkeypatch.context() as older:
        older.setattr(feasibility, "SPECTRA_BYTES", 0)
        paused = explore(
            A4_B6, path, store="compact", range_size=700, workers=1, stop=stop,
            progress=lambda p: p.done > A4_B6.nb_mol // 2 and stop.set(),
        )  # fmt: skip
    assert paused == PAUSED
    assert pause_at_grouping(path, A4_B6, range_size=700, workers=1) == PAUSED
    folders = sorted(config_directory(path, A4_B6).glob("s*"))
    assert len(folders) == 4
    for folder in folders:  # every shard holds both layouts
        assert {"." + p.name.split(".", 1)[1] for p in folder.iterdir()} == {".keys", ".spectra.keys"}
    records = [group_stage.read_shard(config_directory(path, A4_B6), s, A4_B6) for s in range(4)]
    assert all(part["kept"].any() and not part["kept"].all() for part in records)
    traced = traced_in_grouping(path, A4_B6, monkeypatch)
    assert 0 < traced < sum(len(part) for part in records)
    assert result_of(path, A4_B6) == clean[True]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    config=st.sampled_from(
        [Config(n, w) for w in (3, 4, 5) for n in range(1, 5)] + [Config(1, 32), Config(2, 31)]
    ),
    cut=st.floats(0, 1),
    shard_count=st.sampled_from([1, 2, 8]),
    batch=st.sampled_from([7, 1 << 16]),
)
def test_a_stored_spectrum_is_the_traced_one(tmp_path_factory, config, cut, shard_count, batch):
    """Every canonical molecule of a range (its two halves at ``cut``) is stored once, with the
    ``partner`` row ``engine.trace_batch`` gives it, in whichever of its batches: a byte holds every
    code up to 32 cells wide (exit positions to 127, absorbed -1, reflected -2).  Catches a row
    stored for the wrong molecule, a truncated code (a narrower dtype, or a wider box), a batch's
    spectra dropped, and the ``.keys`` records of a run that does not keep them differing."""
    directory = tmp_path_factory.mktemp("spectra")
    middle = 1 + int(cut * config.nb_mol)
    original = trace.TRACE_BATCH
    trace.TRACE_BATCH = batch
    try:
        for start, stop in ((1, middle), (middle, config.nb_mol + 1)):
            if start < stop:
                trace.trace_range(trace.TraceJob(config, start, stop, shard_count, str(directory), True))
                trace.trace_range(trace.TraceJob(config, start, stop, shard_count, str(directory / "old")))
    finally:
        trace.TRACE_BATCH = original
    stored = np.concatenate([group_stage.read_shard(directory, s, config) for s in range(shard_count)])
    old = np.concatenate([group_stage.read_shard(directory / "old", s) for s in range(shard_count)])
    assert stored["kept"].all()
    numbers = (stored["number"] & ~SHARED).astype(np.int64)
    order = np.argsort(numbers)
    _, canonical = engine.canonical_molecules(config, 1, config.nb_mol + 1)
    assert numbers[order].tolist() == canonical.tolist()
    partner, _, _ = engine.trace_batch(config, atoms_of_numbers(config, canonical))
    assert (stored["partner"][order].astype(np.int32) == partner).all()
    assert sorted(zip(old["key"].tolist(), old["number"].tolist())) == sorted(
        zip(stored["key"].tolist(), stored["number"].tolist())
    )


def test_records_keep_spectra_while_they_add_at_most_the_bound(monkeypatch):
    """A configuration's records keep spectra by a rule of its own (the same for every run of it):
    A7_B8's add 2.5 GB and keep them, A7_B10's 80 GB and do not; a bound read at the call; no
    spectrum of a box whose exit positions do not fit a byte."""
    assert feasibility.keeps_spectra(parse_config("A7_B8"))
    assert 2.4e9 < feasibility.spectra_bytes(parse_config("A7_B8")) < 2.6e9
    assert not feasibility.keeps_spectra(parse_config("A7_B10"))
    assert feasibility.keeps_spectra(Config(1, 32)) and not feasibility.keeps_spectra(Config(1, 33))
    monkeypatch.setattr(feasibility, "SPECTRA_BYTES", feasibility.spectra_bytes(A4_B6))
    assert feasibility.keeps_spectra(A4_B6) and not feasibility.keeps_spectra(Config(4, 7))
