"""Every size that is a constant (a batch, a page, a chunk, a shard), shrunk so that its edges are crossed.

At their real sizes these constants are larger than anything the tests explore, so each
loop over them runs once and a bound off by one (a batch that drops its last molecule, a
chunk that cuts an enantiomer group, a page that stops a row short) passes unseen.  Here
each runs with the constant shrunk to a few rows, so that its loop turns many times and
ends on a short batch (or on one exactly full), and the result is compared with the one
at the real size, byte for byte.  (Other modules shrink their own: ``WRITE_ROWS``,
``MIGRATE_BATCH`` and ``SORT_ROWS`` in test_compact.py, ``GROUPS_PAGE`` in
test_cli_trials.py, ``INTERVALS_PAGE`` in test_feasibility.py, the Decode screen's
``PAGE`` in test_tui_decode.py, ``FAMILY_BATCH`` in test_check.py, ``RANGE_SIZE``,
``LARGEST_RANGE``, ``RANGES_AT_LEAST`` and ``merged``'s rows in test_mut_compact.py.)
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from stores import cli, figures, outputs

from bbcore import export, families, full, shots
from bbcore.compact import group as group_stage
from bbcore.compact import shards, trace
from bbcore.config import Config
from bbcore.decode import candidates
from bbcore.explore import explore
from bbcore.game import parse_game
from bbcore.progress import COMPLETE
from bbcore.store import close_database, open_database

A4_B4 = Config(4, 4)
"""1,820 molecules in 1,820 // 8 + 1 = 228 shard records, 11 families of 66 spectral groups."""
A3_B5 = Config(3, 5)
"""2,300 molecules."""


def explored(path: Path, config: Config, store: str) -> Path:
    """``config`` explored in one process (the constants patched here are this process's)."""
    assert explore(config, path, store=store, workers=1) == COMPLETE
    close_database()
    return path


def molecules_csv(path: Path, config: Config) -> list[str]:
    """``bbcore export CONFIG`` (its Molecules), each line without dh1 and dh2 (when it was made)."""
    status, out, err = cli(path, "export", config.name)
    assert status == 0, err
    return [line.rsplit(",", 2)[0] for line in out.splitlines()]


def spectrums_csv(path: Path, config: Config) -> str:
    """``bbcore export CONFIG --table spectrums`` (a compact store's derived from every family)."""
    status, out, err = cli(path, "export", config.name, "--table", "spectrums")
    assert status == 0, err
    return out


def readings(path: Path, config: Config) -> dict[str, object]:
    """What every reader (``stores.outputs``), the library's figures and the exports say of ``config``."""
    return {
        "readers": outputs(path, (config,)),
        "figures": figures(path, config),
        "molecules": molecules_csv(path, config),
        "spectrums": spectrums_csv(path, config),
    }


@pytest.fixture(scope="module")
def real(tmp_path_factory) -> dict[str, dict[str, object]]:
    """A4_B4 compact and A3_B5 full, explored and read with every constant at its real size
    (read here, before any test shrinks a reader's constant)."""
    folder = tmp_path_factory.mktemp("real")
    return {
        "compact": readings(explored(folder / "compact.sqlite", A4_B4, "compact"), A4_B4),
        "full": readings(explored(folder / "full.sqlite", A3_B5, "full"), A3_B5),
    }


# -- a compact exploration: tracing, grouping, deriving, exporting --------------------------


@pytest.mark.parametrize("size", [1, 7, 13])
def test_a_compact_store_made_and_read_in_small_batches_is_the_same(tmp_path, monkeypatch, real, size):
    """Tracing ``TRACE_BATCH`` numbers at a time (1,820 = 7 x 260: the last batch full; 13 x 140
    too; 1: every number alone), its profile summed every ``PROFILE_ROWS`` rows, the groups
    settled ``SETTLE_BATCH`` keys at a time, the families read ``DERIVE_BATCH`` at a time (11 of
    them: a last short batch, or 11 of one) and the molecules exported ``COMPUTED_BATCH`` at a
    time: the same store as at the real sizes, where each is one batch."""
    monkeypatch.setattr(trace, "TRACE_BATCH", size)
    monkeypatch.setattr(trace, "PROFILE_ROWS", size)
    monkeypatch.setattr(group_stage, "SETTLE_BATCH", size)
    monkeypatch.setattr(families, "DERIVE_BATCH", max(1, size // 3))
    shrunk = explored(tmp_path / "shrunk.sqlite", A4_B4, "compact")
    monkeypatch.setattr(export, "COMPUTED_BATCH", size + 2)  # 1,820 = 9 x 202 + 2, 15 x 121 + 5, 3 x 606 + 2
    assert readings(shrunk, A4_B4) == real["compact"]


def test_the_export_batch_ends_on_the_last_molecule(tmp_path, monkeypatch, real):
    """A batch of exactly the molecules, one less (a last batch of one), one more: the same rows,
    every number once, from 1 to the last."""
    expected = real["compact"]["molecules"]
    assert [line.split(",")[1] for line in expected[1:]] == [str(n) for n in range(1, A4_B4.nb_mol + 1)]
    path = explored(tmp_path / "compact.sqlite", A4_B4, "compact")
    for size in (A4_B4.nb_mol - 1, A4_B4.nb_mol, A4_B4.nb_mol + 1, 2):
        monkeypatch.setattr(export, "COMPUTED_BATCH", size)
        assert molecules_csv(path, A4_B4) == expected, size


# -- a full exploration: chunks cut between enantiomer groups ---------------------------------


@pytest.mark.parametrize("rows", [1, 2, 7])
def test_a_full_store_written_in_chunks_of_a_few_rows_is_the_same(tmp_path, monkeypatch, real, rows):
    """``CHUNK_ROWS`` of 1, 2, 7: each chunk is stretched to the end of its last enantiomer group
    (groups of 1, 2, 4 or 8 molecules), and the chunks' ranges cover the numbers with no gap."""
    monkeypatch.setattr(full, "CHUNK_ROWS", rows)
    shrunk = explored(tmp_path / "shrunk.sqlite", A3_B5, "full")
    found, expected = readings(shrunk, A3_B5), dict(real["full"])
    # the same figures but ExploredRanges' sums (``stores.SUMS``): a row per chunk
    found["figures"], expected["figures"] = (f[:4] + f[5:] for f in (found["figures"], expected["figures"]))
    assert found == expected
    open_database(shrunk, write=False)
    try:
        from bbcore.store import ExploredRange

        ranges = sorted((r.start, r.stop) for r in ExploredRange.select())
    finally:
        close_database()
    assert ranges[0][0] == 1 and ranges[-1][1] == A3_B5.nb_mol + 1
    assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))  # no gap, no overlap
    assert len(ranges) > A3_B5.nb_mol // 8 // rows  # the chunks were cut (one range a chunk)


# -- shards -----------------------------------------------------------------------------------


def test_the_shard_count_is_the_power_of_two_that_holds_the_records_up_to_the_cap(monkeypatch):
    """A4_B4's 228 expected records: 57 a shard fit in 4 exactly, 56 need 8; at most ``MAX_SHARDS``."""
    assert shards.shard_count(A4_B4, 57) == 4
    assert shards.shard_count(A4_B4, 56) == 8
    assert shards.shard_count(A4_B4, 228) == 1
    assert shards.shard_count(A4_B4, 227) == 2
    monkeypatch.setattr(shards, "MAX_SHARDS", 4)
    assert shards.shard_count(A4_B4, 56) == 4  # capped
    assert shards.shard_count(A4_B4, 1) == 4
    assert shards.shard_count(A4_B4, 57) == 4  # the cap reached exactly


@pytest.mark.parametrize(
    ("records", "cap", "expected"),
    [(57, 1 << 12, 4), (56, 1 << 12, 8), (1, 1 << 12, 256), (1, 8, 8)],
)
def test_a_compact_store_in_many_shards_is_the_same(tmp_path, monkeypatch, real, records, cap, expected):
    """``SHARD_RECORDS`` shrunk so that A4_B4's 228 expected records take 4, 8 or 256 shards (most
    of them empty, or holding one key), and ``MAX_SHARDS`` so that the cap binds: the shard
    count stored, and the same store as in one shard."""
    monkeypatch.setattr(shards, "SHARD_RECORDS", records)
    monkeypatch.setattr(shards, "MAX_SHARDS", cap)
    path = explored(tmp_path / "shards.sqlite", A4_B4, "compact")
    open_database(path, write=False)
    try:
        from bbcore.store import GroupedShard, config_row

        assert config_row(A4_B4).shards == expected
        assert sorted(row.shard for row in GroupedShard.select()) == list(range(expected))
    finally:
        close_database()
    assert readings(path, A4_B4) == real["compact"]


@pytest.mark.parametrize("at_once", [1, 3, 18, 19, 20])
def test_range_profiles_summed_a_few_files_at_a_time_are_the_same(tmp_path, monkeypatch, at_once):
    """A4_B4's profile cut into 19 range files, none empty (a real run's last ranges hold no
    canonical molecule, so losing them shows nothing), summed ``PROFILES_AT_ONCE`` files at a
    time: each alone, 3 (a last part of one), 18 (the same), 19 (all at once) and more: the
    Profiles rows of the whole, the traced mark set and the files gone."""
    monkeypatch.setattr(trace, "PROFILES_AT_ONCE", at_once)
    whole = trace.trace_range(trace.TraceJob(A4_B4, 1, A4_B4.nb_mol + 1, 1, str(tmp_path / "records")))
    assert len(whole.profile) > 19
    folder = tmp_path / "A4_B4" / "profiles"
    folder.mkdir(parents=True)
    for part in range(19):
        np.save(folder / f"{part}-{part + 1}.npy", whole.profile[part::19])
    open_database(tmp_path / "profiles.sqlite")
    try:
        from bbcore.store import Profile, ensure_config

        ensure_config(A4_B4, "compact")
        trace._store_profiles(folder.parent, A4_B4)
        fields = (*trace.PROFILE_FIELDS, "molecules", "lowest")
        stored = sorted(tuple(getattr(row, f) for f in fields) for row in Profile.select())
    finally:
        close_database()
    assert stored == sorted(map(tuple, whole.profile.tolist()))
    assert (folder.parent / shards.TRACED).exists() and not folder.exists()


# -- next shots, traced a batch of candidates at a time ---------------------------------------


@pytest.mark.parametrize(
    ("config", "game_text"),
    [
        (A4_B4, ""),  # every position unknown: the engine traces them all at once
        (A4_B4, "@&@............."),  # 13 of 16 unknown: still all at once (403 candidates)
        (Config(4, 5), "&@&&@@@@&@.........."),  # 10 of 20: each unknown position alone (3 candidates)
    ],
)
def test_next_shots_ranked_over_small_batches_of_candidates_are_the_same(monkeypatch, config, game_text):
    """``_RAYS_PER_BATCH`` shrunk to a batch of 1, 2 or 5 candidates: the same outcomes and figures."""
    game = parse_game(game_text, config)
    found = candidates(config, game, source="compute")
    assert found.count > 2
    real = shots.next_shots(config, game, found)
    traced = config.positions if len(game.unknown) > config.positions // 2 else len(game.unknown)
    for each in (1, 2, 5):
        monkeypatch.setattr(shots, "_RAYS_PER_BATCH", each * traced)
        seen: list[int] = []
        report = lambda done, _, seen=seen: seen.append(done)  # noqa: E731
        assert shots.next_shots(config, game, found, progress=report) == real
        # reported before each batch (of at most ``each``) and at the end, all of them traced
        assert seen[0] == 0 and seen[-1] == found.count
        assert all(0 < b - a <= each for a, b in zip(seen, seen[1:]))
