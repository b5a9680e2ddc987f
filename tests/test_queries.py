"""``bbcore.queries`` where several configurations share a database, at the ends of its lists, and
on stores that are not complete: what test_queries_expect.py (one configuration at a time, each
complete) does not cross (found by ``bench/mutation.py queries``).

Each expectation is computed apart from the store: the spectra of every molecule by the
reference tracer (``bbcore.rays``), grouped with a dict.
"""

from __future__ import annotations

import shutil
import threading
from collections import defaultdict
from pathlib import Path

import pytest

from bbcore import queries, rays
from bbcore.config import Config
from bbcore.explore import explore
from bbcore.geometry import box_transforms
from bbcore.numbering import atoms_of
from bbcore.progress import COMPLETE, PAUSED
from bbcore.queries import (
    COMPLETE as COMPLETE_STATE,
)
from bbcore.queries import (
    EXPLORED,
    NOT_STARTED,
    PARTIAL,
    PARTIAL_COPY,
    ConfigState,
    config_state,
    config_states,
)
from bbcore.store import COMPACT, COPYING, FULL, Configuration, close_database, ensure_config, open_database

A2_B4, A3_B4, A4_B4, A2_B5 = Config(2, 4), Config(3, 4), Config(4, 4), Config(2, 5)


def spectra_of(config: Config) -> dict[str, list[int]]:
    """Every spectrum of ``config`` with its molecules, by the reference tracer."""
    found: dict[str, list[int]] = defaultdict(list)
    for number in range(1, config.nb_mol + 1):
        found[rays.spectrum(config, atoms_of(config, number))].append(number)
    return found


def ambiguous_of(config: Config) -> dict[str, list[int]]:
    """The spectral groups: the spectra of two molecules or more."""
    return {s: numbers for s, numbers in spectra_of(config).items() if len(numbers) > 1}


@pytest.fixture(scope="module")
def shared(explored: Path, tmp_path_factory) -> Path:
    """A2_B4, A3_B4, A4_B4 (the session's ``explored``) and A2_B5, all complete in one full store,
    A2_B5 last: narrower configurations with more atoms come before it."""
    path = tmp_path_factory.mktemp("shared") / "shared.sqlite"
    shutil.copy(explored, path)
    assert explore(A2_B5, path, store=FULL, workers=1) == COMPLETE
    close_database()
    return path


# -- the states of the configurations --------------------------------------------------------


def test_each_configuration_counts_only_its_own_groups(shared):
    open_database(shared, write=False)
    try:
        states = config_states()
        assert [s.config for s in states] == [A2_B4, A3_B4, A4_B4, A2_B5]  # by width, then atoms
        for state in states:
            groups = ambiguous_of(state.config)
            assert state == ConfigState(
                state.config, state.config.nb_mol, True, len(groups), state.families, FULL, False
            )
            assert state.families == queries.group_count(state.config) <= state.ambiguous
            assert state.ambiguous == queries.group_count(state.config, all_rows=True)
            assert (state.state, state.label) == (COMPLETE_STATE, COMPLETE_STATE)
        assert (states[2].ambiguous, states[2].families) == (66, 11)  # A4_B4
    finally:
        close_database()


def test_states_of_a_configuration_by_its_progress():
    state = ConfigState(A4_B4, 0, False, 0, 0)
    assert (state.state, state.label, state.total) == (NOT_STARTED, NOT_STARTED, 1820)
    one_short = ConfigState(A4_B4, 1819, False, 0, 0)
    assert (one_short.state, one_short.label) == (PARTIAL, "99.9%")
    assert ConfigState(A4_B4, 1, False, 0, 0).label == "0.1%"
    assert ConfigState(A4_B4, 1820, False, 0, 0).state == EXPLORED
    assert ConfigState(A4_B4, 1820, True, 66, 11).state == COMPLETE_STATE
    assert ConfigState(A4_B4, 12, False, 0, 0, copying=True).state == PARTIAL_COPY
    assert ConfigState(A4_B4, 1820, True, 66, 11, copying=True).state == COMPLETE_STATE


def test_a_row_not_complete_a_stopped_copy_and_an_unknown_configuration(tmp_path):
    path = tmp_path / "rows.sqlite"
    open_database(path)
    try:
        ensure_config(A3_B4, COMPACT)
        ensure_config(A2_B4)
        Configuration.update(dh2=COPYING).where(Configuration.config == A2_B4.name).execute()
        assert config_state(A3_B4) == ConfigState(A3_B4, 0, False, 0, 0, COMPACT, False)
        assert config_state(A2_B4) == ConfigState(A2_B4, 0, False, 0, 0, FULL, True)
        assert config_state(A2_B4).state == PARTIAL_COPY
        assert config_state(A4_B4) == ConfigState(A4_B4, 0, False, 0, 0, FULL, False)
    finally:
        close_database()


# -- groups: each configuration's own, in order, to the last ------------------------------------


def test_group_lists_of_one_configuration_among_several(shared):
    open_database(shared, write=False)
    try:
        assert queries.group_count(A2_B4) == 0 and queries.group_page(A2_B4, 0) == []  # no group
        for config in (A3_B4, A4_B4):
            groups = ambiguous_of(config)
            count = len(groups)
            assert count > 1
            rows = queries.group_page(config, 0, count + 5, all_rows=True)
            assert sorted(r.spectrum for r in rows) == sorted(groups)
            assert [r.nb_mol for r in rows] == [len(groups[r.spectrum]) for r in rows]
            assert [(r.canonical_number, r.spectrum) for r in rows] == sorted(
                (r.canonical_number, r.spectrum) for r in rows
            )  # by canonical number, then spectrum (the images of a family share it)
            by_size = queries.group_page(config, 0, count, all_rows=True, order="size")
            assert [(-r.nb_mol, r.canonical_number, r.spectrum) for r in by_size] == sorted(
                (-r.nb_mol, r.canonical_number, r.spectrum) for r in rows
            )
            assert queries.group_sizes(config) == sorted({len(n) for n in groups.values()})
            assert queries.group_at(config, count - 1, all_rows=True) == rows[-1]
            assert queries.group_at(config, count, all_rows=True) is None
            assert queries.group_at(config, -1, all_rows=True) is None
        families = queries.group_count(A4_B4)
        assert families == 11 and queries.group_at(A4_B4, families - 1) is not None
        assert queries.group_at(A4_B4, families) is None  # the families' list by default
        assert queries.group_at(A4_B4, families, all_rows=True) is not None
    finally:
        close_database()


def test_molecules_of_a_spectrum_come_by_number(shared):
    open_database(shared, write=False)
    try:
        for config in (A3_B4, A4_B4):
            for spectrum, numbers in ambiguous_of(config).items():
                records = queries.molecules_with_spectrum(config, spectrum)
                assert [r.number for r in records] == numbers  # increasing
                assert {r.spectrum for r in records} == {spectrum}
    finally:
        close_database()


def test_a_compact_store_still_being_explored_lists_no_group(tmp_path):
    """Paused in its tracing: its molecules are partly counted, its groups not built yet."""
    path = tmp_path / "paused.sqlite"
    stop = threading.Event()
    seen = []

    def progress(step) -> None:
        seen.append(step)
        stop.set()

    paused = explore(A4_B4, path, store=COMPACT, workers=1, range_size=100, stop=stop, progress=progress)
    assert paused == PAUSED
    open_database(path, write=False)
    try:
        state = config_state(A4_B4)
        assert state.store == COMPACT and not state.complete
        assert state.state in (NOT_STARTED, PARTIAL) and 0 <= state.done < A4_B4.nb_mol
        assert queries.group_count(A4_B4) == queries.group_count(A4_B4, all_rows=True) == 0
        assert queries.group_page(A4_B4, 0) == []
        assert queries.group_sizes(A4_B4) == []
        assert queries.group_at(A4_B4, 0) is None
    finally:
        close_database()


# -- molecules: stored or computed, the same -------------------------------------------------


def test_a_stored_molecule_is_the_one_computed(shared):
    """The first, the last and a few between, from the store, computed one by one and in a batch."""
    open_database(shared, write=False)
    try:
        numbers = [1, 2, 77, 455, 1819, 1820]
        stored = [queries.molecule_record(A4_B4, n) for n in numbers]
        assert stored == [queries.computed_record(A4_B4, n) for n in numbers]
        assert stored == queries.computed_records(A4_B4, numbers)
        assert [r.stats for r in stored] == [r.stats for r in queries.computed_records(A4_B4, numbers)]
        assert queries.computed_records(A4_B4, []) == []
        for record, number in zip(stored, numbers):
            atoms = atoms_of(A4_B4, number)
            assert record.number == number and record.atoms == tuple(atoms)
            assert record.molecule.count("O") == 4 and len(record.molecule) == 16
            assert record.spectrum == rays.spectrum(A4_B4, atoms)
            images = sorted({m.number for m in queries.enantiomers(A4_B4, number)})
            assert record.canonical_number == images[0] and number in images
            assert record.stats == rays.statistics(A4_B4, atoms_of(A4_B4, record.canonical_number))
    finally:
        close_database()


def test_an_enantiomer_group_is_its_images_once_each_by_number(shared):
    open_database(shared, write=False)
    try:
        for number in (1, 77, 1820):
            group = queries.enantiomers(A4_B4, number)
            numbers = [r.number for r in group]
            assert numbers == sorted(set(numbers)) and len(numbers) in (1, 2, 4, 8)
            assert len({r.canonical_number for r in group}) == 1
            assert {r.transform for r in group if r.number == r.canonical_number} == {"id"}
        square = Config(4, 4)  # the four corners: one molecule, its own image under every symmetry
        corners = next(n for n in range(1, 1821) if list(atoms_of(square, n)) == [0, 3, 12, 15])
        assert [r.number for r in queries.enantiomers(square, corners)] == [corners]
    finally:
        close_database()


def test_a_compact_store_lists_a_spectrum_as_the_full_one_does(shared, tmp_path):
    """An ambiguous spectrum from its family, a unique one decoded: the full store's records."""
    small = tmp_path / "compact.sqlite"
    assert explore(A4_B4, small, store=COMPACT, workers=1) == COMPLETE
    close_database()
    groups = ambiguous_of(A4_B4)
    unique = next(s for s, numbers in spectra_of(A4_B4).items() if len(numbers) == 1 and "a" in s)
    spectra = [*sorted(groups)[:3], unique]
    seen = {}
    for path in (shared, small):
        open_database(path, write=False)
        try:
            seen[path] = [queries.molecules_with_spectrum(A4_B4, s) for s in spectra]
        finally:
            close_database()
    assert seen[small] == seen[shared]
    assert [[r.number for r in records] for records in seen[small]] == [
        *(groups[s] for s in spectra[:3]),
        spectra_of(A4_B4)[unique],
    ]


def test_a_molecule_not_stored_is_computed_as_the_store_holds_it(shared):
    """Every molecule of A4_B4 computed (its transform among the square's 8) equals the stored one;
    a rectangle's transforms are its 4; a configuration not in the store and one past int64 are
    computed, statistics included."""
    open_database(shared, write=False)
    try:
        for number in range(1, A4_B4.nb_mol + 1):
            stored, computed = queries.molecule_record(A4_B4, number), queries.computed_record(A4_B4, number)
            assert (stored, stored.stats) == (computed, computed.stats)
        rectangle = Config(3, 4, 3)
        transforms = {queries.molecule_record(rectangle, n).transform for n in range(1, rectangle.nb_mol + 1)}
        assert transforms == set(box_transforms(4, 3))  # the four of a rectangle, each met
        a3_b5 = Config(3, 5)  # not in this store
        computed = [queries.molecule_record(a3_b5, n) for n in (1, 1000, 2300)]
        batch = queries.computed_records(a3_b5, [1, 1000, 2300])
        assert (computed, [r.stats for r in computed]) == (batch, [r.stats for r in batch])
        huge = Config(84, 13)  # C(169, 84) molecules: never stored, always computed
        last = queries.molecule_record(huge, huge.nb_mol)
        assert last.number == huge.nb_mol and last.molecule.count("O") == 84
    finally:
        close_database()


def test_a_groups_page_is_50_families_by_default(shared):
    open_database(shared, write=False)
    try:
        assert len(queries.group_page(A4_B4, 0, all_rows=True)) == 50  # of 66
        assert len(queries.group_page(A4_B4, 1, all_rows=True)) == 16
        assert queries.group_page(A4_B4, 0) == queries.group_page(A4_B4, 0, 11)  # the 11 families
        assert {r.transform for r in queries.group_page(A4_B4, 0)} == {"id"}
    finally:
        close_database()
