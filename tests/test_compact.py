"""The compact exploration: the same spectral groups as a full one, from records and shards."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bbcore import compact, engine
from bbcore.config import Config, parse_config
from bbcore.explore import COMPLETE, ExploreError, explore
from bbcore.numbering import atoms_of_numbers, binomial_table
from bbcore.store import open_database

SPECTRUMS = (
    "SELECT spectrum, nb_mol, transform, canonical_number FROM Spectrums WHERE config = ? ORDER BY spectrum"
)
FULL_MEMBERS = """
SELECT spectrum, number FROM Molecules WHERE config = ?1 AND spectrum IN
    (SELECT spectrum FROM Spectrums WHERE config = ?1) ORDER BY spectrum, number
"""
COMPACT_MEMBERS = "SELECT spectrum, number FROM SpectrumMolecules WHERE config = ? ORDER BY spectrum, number"


def groups(path: Path, config: Config, members_sql: str) -> tuple[list[tuple], list[tuple]]:
    """The Spectrums rows and the molecules of each ambiguous spectrum, from the file."""
    with sqlite3.connect(path) as connection:
        return (
            connection.execute(SPECTRUMS, (config.name,)).fetchall(),
            connection.execute(members_sql, (config.name,)).fetchall(),
        )


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
    assert groups(small, config, COMPACT_MEMBERS) == groups(full, config, FULL_MEMBERS)


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
    assert groups(small, config, COMPACT_MEMBERS) == groups(full, config, FULL_MEMBERS)
    assert not compact.config_directory(small, config).exists()


def start_compact(path: Path, config: Config, shards: int) -> None:
    """Create a compact configuration's row with a chosen shard count (as the run would)."""
    from bbcore.store import Configuration, ensure_config

    open_database(path)
    ensure_config(config, "compact")
    Configuration.update(shards=shards).where(Configuration.config == config.name).execute()


def test_canonical_molecules_are_those_lowest_among_their_images():
    config = Config(3, 5)
    table = binomial_table(config)
    numbers = np.arange(1, config.nb_mol + 1)
    images = engine.image_numbers(config, atoms_of_numbers(config, numbers, table), table)
    expected = numbers[images.min(axis=1) == numbers]
    for start, stop in ((1, config.nb_mol + 1), (17, 1000), (999, 1001)):
        atoms, found = engine.canonical_molecules(config, start, stop)
        wanted = expected[(expected >= start) & (expected < stop)]
        assert found.tolist() == wanted.tolist()
        assert (atoms == atoms_of_numbers(config, wanted, table)).all()


def test_molecules_sharing_a_spectrum_share_a_key():
    config = Config(4, 5)
    batch = engine.explore_range(config, 1, config.nb_mol + 1)
    canonical = np.unique(batch.canonical_number)
    atoms = atoms_of_numbers(config, canonical)
    partner, _, _ = engine.trace_batch(config, atoms)
    keys, orbit, _ = engine.spectrum_keys(config, atoms, partner)
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
    import threading

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
