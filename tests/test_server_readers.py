"""The readers on a server: the same configuration, copied there, reads as it does in its file.

Store parity, against a real server (tests/postgres.py): A3_B5 and A4_B6
in both store kinds (the full one with a strategy book) are copied from
their file into a server database (``bbcore copy``), and every CLI reader
(``status``, ``groups`` in each order, of one size and ``--all``, ``show
--spectrum``, ``decode``, ``report``, ``strategy``) prints the same bytes
on both.  A compact store's groups listing reads its families by their
ordinals, a typed spectrum's family by its key, the report its profiles:
all of them through the server.  ``bbcore check`` runs on the server as on
the file but for SQLite's integrity_check, which it says it cannot run
there, and still finds damage planted in the server's rows.
"""

from __future__ import annotations

import sys
from pathlib import Path

import psycopg
import pytest
from stores import CONFIGS, checked, cli, explore_sources, outputs

from bbcore import check
from bbcore.store import COMPACT, FULL, STORES, close_database, db, location, open_database

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the test server runs on Linux")


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A file per store kind holding A3_B5 and A4_B6 complete (``stores.explore_sources``)."""
    return explore_sources(tmp_path_factory.mktemp("sources"))


def copied(source: Path, url: str) -> None:
    """Every configuration of ``source`` copied into the server database ``url``."""
    for config in CONFIGS:
        status, _, err = cli(source, "copy", config.name, url)
        assert status == 0, err


@pytest.mark.parametrize("kind", STORES)
def test_every_reader_prints_the_same_on_the_server_as_in_the_file(sources, kind, pg_url):
    copied(sources[kind], pg_url)
    assert outputs(pg_url) == outputs(sources[kind])


@pytest.mark.parametrize("kind", STORES)
def test_check_runs_on_the_server_but_for_sqlites_integrity_check(sources, kind, pg_url):
    copied(sources[kind], pg_url)
    for config in CONFIGS:
        out = checked(pg_url, config)
        integrity = out.splitlines()[1]
        assert integrity.split()[0] == "ok"
        assert integrity.endswith(
            " not run on a server: SQLite's integrity_check has no equivalent (see pg_amcheck)"
        )
        assert "configuration" in out and "engine sample" in out and "reference sample" in out


@pytest.mark.parametrize(
    ("kind", "damage", "finding"),
    [
        (COMPACT, 'UPDATE "Families" SET nb_mol = nb_mol + 1 WHERE config = %s AND position = 3', "nb_mol"),
        (FULL, "UPDATE \"Molecules\" SET transform = 'r90' WHERE config = %s AND number = 77", "transform"),
    ],
)
def test_check_on_the_server_finds_damage_in_its_rows(sources, kind, damage, finding, pg_url):
    config = CONFIGS[1]
    status, _, err = cli(sources[kind], "copy", config.name, pg_url)
    assert status == 0, err
    with psycopg.connect(location(pg_url).conninfo, autocommit=True) as connection:
        assert connection.execute(damage, (config.name,)).rowcount == 1
    status, out, err = cli(pg_url, "check", config.name, "--sample", "500", "--reference", "50")
    assert status == 1, out + err
    assert "FAIL" in out and finding in out


def test_check_reads_the_servers_rows_a_block_at_a_time(pg_url, monkeypatch):
    """``check`` streams its long queries: on a server through a named (server-side) cursor, a
    block at a time, two side by side on one connection.  psycopg's own cursor would fetch the
    whole result first: the same rows, but a check's memory would grow with the configuration."""
    monkeypatch.setattr(check.blocks, "BLOCK", 2)
    open_database(pg_url)
    try:
        numbers = "SELECT generate_series(1, 7)"
        first, second = check.blocks.rows_in_blocks(numbers), check.blocks.rows_in_blocks(numbers + " + 10")
        assert next(first) == [(1,), (2,)] and next(second) == [(11,), (12,)]
        cursors = [name for (name,) in db.execute_sql("SELECT name FROM pg_cursors").fetchall()]
        assert len(cursors) == 2 and all(name.startswith("bbcore_check_") for name in cursors)
        assert [row for rows in first for row in rows] == [(n,) for n in range(3, 8)]
        assert [row for rows in second for row in rows] == [(n,) for n in range(13, 18)]
        assert db.execute_sql("SELECT name FROM pg_cursors").fetchall() == []  # each closed at its end
    finally:
        close_database()
