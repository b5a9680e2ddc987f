"""``bbcore copy``: one complete configuration between stores, against real files and a real server.

- a round trip file -> server -> server -> file, for A3_B5 and A4_B6 in both
  store kinds (and a strategy book): ``bbcore check`` agrees on both servers
  and on the file that comes back, and every CLI reader prints the same
  bytes there as on the source;
- a copy killed with SIGKILL mid-way is never seen complete by a reader,
  is not resumed by ``bbcore explore`` as an exploration of its own (refused
  in one line), and the same copy command resumes it to the same result;
- pages: a small page size copies in many bounded pages;
- refusals, one line and exit 2: a configuration unknown or not complete in
  the source, a target that already holds it (``--replace`` overwrites), a
  file or a role that may only read, the source itself as the target.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest
from expect import BBCORE, ROOT, one_line_error
from postgres import free_port
from stores import CONFIGS, checked, cli, explore_sources, outputs
from unprivileged import give_to_nobody, make_unwritable, run_unprivileged

from bbcore import queries, store
from bbcore.config import Config
from bbcore.copy import copy_configuration
from bbcore.store import FULL, STORES, close_database, open_database

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the test server runs on Linux")


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A file per store kind holding A3_B5 and A4_B6 complete (``stores.explore_sources``)."""
    return explore_sources(tmp_path_factory.mktemp("sources"))


@pytest.fixture
def second_url(pg_server):
    """Another fresh database of the test server (a server-to-server copy's target)."""
    name = pg_server.create_database()
    yield pg_server.url(name)
    pg_server.drop_database(name)


@pytest.mark.parametrize("kind", STORES)
def test_a_round_trip_through_two_servers_is_checked_and_reads_the_same(
    sources, kind, pg_url, second_url, tmp_path
):
    source, back = sources[kind], tmp_path / "back.sqlite"
    for config in CONFIGS:
        for origin, target in ((source, pg_url), (pg_url, second_url), (second_url, back)):
            status, out, err = cli(origin, "copy", config.name, str(target), "--page", "997")
            assert status == 0, err
            assert f"{config.name} ({kind} store) copied to" in out
        checked(pg_url, config)  # every end of the trip: the servers (but SQLite's own check), the file
        checked(second_url, config)
        checked(back, config)
    assert outputs(back) == outputs(source)


# -- killed mid-way, then resumed ------------------------------------------------------------


def target_state(target: Path | str, config: Config) -> tuple[bool, int] | None:
    """(complete, the Molecules or Families rows) of the target, read in one statement: one snapshot."""
    statement = (
        'SELECT complete, (SELECT COUNT(*) FROM "Molecules" WHERE config = {0}) '
        '+ (SELECT COUNT(*) FROM "Families" WHERE config = {0}) FROM "Configurations" WHERE config = {0}'
    )
    if store.is_server(store.location(str(target))):
        with psycopg.connect(store.location(str(target)).conninfo) as connection:
            try:
                row = connection.execute(statement.format("%s"), (config.name,) * 3).fetchone()
            except psycopg.errors.UndefinedTable:
                return None
    else:
        if not Path(target).exists():
            return None
        connection = sqlite3.connect(f"file:{target}?mode=ro", uri=True, timeout=10)
        try:
            row = connection.execute(statement.format("?"), (config.name,) * 3).fetchone()
        except sqlite3.OperationalError:
            return None
        finally:
            connection.close()
    return None if row is None else (bool(row[0]), int(row[1]))


def start_copy(source: Path, target: Path | str, config: Config, page: int) -> subprocess.Popen:
    return subprocess.Popen(
        [*BBCORE, "--db", str(source), "copy", config.name, str(target), "--page", str(page)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def watch(process: subprocess.Popen, target: Path | str, config: Config, whole: int, *, kill_at: int = 0):
    """Read the target while the copy runs: complete only ever with every row; SIGKILL it past ``kill_at``."""
    deadline = time.monotonic() + 300
    while process.poll() is None and time.monotonic() < deadline:
        state = target_state(target, config)
        if state is not None:
            complete, rows = state
            assert not complete or rows == whole, f"a reader saw {config.name} complete with {rows} rows"
            if kill_at and not complete and rows >= kill_at:
                process.send_signal(signal.SIGKILL)
                process.wait(30)
                return
        time.sleep(0.02)
    process.wait(30)


@pytest.mark.parametrize(("kind", "server"), [(FULL, True), ("compact", True), (FULL, False)])
def test_a_copy_killed_mid_way_is_never_complete_and_resumes(sources, kind, server, pg_url, tmp_path):
    config, source = Config(4, 6), sources[kind]
    target = pg_url if server else tmp_path / "target.sqlite"
    open_database(source, write=False)
    whole = queries.config_state(config).total if kind == FULL else queries.config_state(config).families
    close_database()
    # A compact A4_B6 has 100 families: a page each, killed as soon as one is seen (a loaded
    # machine's reader may see several pages at once, even all of them: the copy is then
    # still not complete, its other tables and the complete flag not yet written).
    page = 100 if kind == FULL else 1
    process = start_copy(source, target, config, page)
    try:
        watch(process, target, config, whole, kill_at=3 * page if kind == FULL else page)
        assert process.returncode == -signal.SIGKILL, process.stderr.read()
    finally:
        process.kill()
        process.wait()
    complete, rows = target_state(target, config)
    assert not complete and 0 < rows <= whole
    status, out, _ = cli(target, "status")
    line = out.split(config.name)[1].splitlines()[0]
    assert status == 0 and "complete" not in line and "partial copy" in line
    assert f"{config.name} is a copy stopped before its end: run the same 'bbcore copy' again" in out
    status, _, err = cli(target, "groups", config.name)
    one_line_error(status, err, "a copy stopped before its end", "'bbcore copy' again")
    assert status == 2 and "bbcore explore" not in err
    # the copied rows are not an exploration of the target's own: explore refuses to resume them
    status, _, err = cli(target, "explore", config.name)
    one_line_error(status, err, f"a copy of {config.name} into", "is not finished", "bbcore copy")
    assert status == 2 and target_state(target, config) == (complete, rows)
    again = start_copy(source, target, config, page)
    watch(again, target, config, whole)
    out, err = again.communicate()
    assert again.returncode == 0, err
    assert "by the run it resumed" in out
    assert target_state(target, config) == (True, whole)
    back = tmp_path / "back.sqlite"
    if server:
        assert cli(target, "copy", config.name, str(back))[0] == 0
    else:
        back = target
    checked(back, config)
    assert outputs(back, [config]) == outputs(source, [config])


def test_ctrl_c_stops_a_copy_in_one_line_and_the_same_command_resumes(sources, pg_url):
    config, source = Config(4, 6), sources[FULL]
    process = start_copy(source, pg_url, config, 100)
    try:
        deadline = time.monotonic() + 120
        while (target_state(pg_url, config) or (False, 0))[1] < 300 and time.monotonic() < deadline:
            time.sleep(0.02)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        process.kill()
        process.wait()
    assert process.returncode == 130, err
    last = err.strip().splitlines()[-1]  # after the progress lines (off a terminal: one per table)
    assert "Traceback" not in err and last.startswith(f"bbcore: {config.name} copy stopped at")
    assert "run the same command again to resume" in last
    complete, rows = target_state(pg_url, config)
    assert not complete and 0 < rows < config.nb_mol
    status, out, err = cli(source, "copy", config.name, pg_url)
    assert status == 0 and "by the run it resumed" in out, err
    assert target_state(pg_url, config) == (True, config.nb_mol)


# -- pages ---------------------------------------------------------------------------------


def test_a_small_page_size_copies_in_many_bounded_pages(sources, pg_url):
    config, seen = Config(4, 6), []
    copy_configuration(
        config, sources[FULL], store.location(pg_url), page=64, progress=lambda *a: seen.append(a)
    )
    close_database()
    molecules = [done for table, done, _ in seen if table == "Molecules"]
    steps = [b - a for a, b in zip([0, *molecules], molecules)]
    assert len(steps) == -(-config.nb_mol // 64) and max(steps) == 64  # every page 64 rows at most
    assert molecules[-1] == config.nb_mol
    assert seen[-1][1] == seen[-1][2]  # every row of every table
    assert target_state(pg_url, config) == (True, config.nb_mol)


def test_a_page_that_divides_a_table_exactly_copies_its_last_row_once(sources, tmp_path):
    """``PAGE`` shrunk to 105, which divides A4_B6's 58,905 molecules: the last page is full, so
    the copy asks once more and finds the table done; a file to a file, every row there once."""
    config, seen = Config(4, 6), []
    target = tmp_path / "target.sqlite"
    copy_configuration(
        config, sources[FULL], store.location(str(target)), page=105, progress=lambda *a: seen.append(a)
    )
    close_database()
    molecules = [done for table, done, _ in seen if table == "Molecules"]
    assert config.nb_mol % 105 == 0 and molecules[-1] == config.nb_mol
    assert [b - a for a, b in zip([0, *molecules], molecules)] == [105] * (config.nb_mol // 105)
    with sqlite3.connect(sources[FULL]) as source, sqlite3.connect(target) as copied:
        for table in ("Molecules", "Spectrums", "ExploredRanges"):
            query = f"SELECT * FROM {table} WHERE config = 'A4_B6' ORDER BY 1, 2, 3"
            assert copied.execute(query).fetchall() == source.execute(query).fetchall(), table


# -- refusals ----------------------------------------------------------------------------------


def test_an_incomplete_or_unknown_configuration_is_refused(sources, tmp_path):
    source = tmp_path / "partial.sqlite"
    source.write_bytes(sources[FULL].read_bytes())
    with sqlite3.connect(source) as connection:
        connection.execute("UPDATE Configurations SET complete = 0 WHERE config = 'A3_B5'")
    target = tmp_path / "target.sqlite"
    status, _, err = cli(source, "copy", "A3_B5", str(target))
    one_line_error(status, err, "A3_B5 is not complete in", "finish its exploration")
    status, _, err = cli(source, "copy", "A2_B3", str(target))
    one_line_error(status, err, "A2_B3 is not in")
    assert not target.exists()  # nothing was made
    status, _, err = cli(source, "copy", "A4_B6", str(source))
    one_line_error(status, err, "is the source itself")


def test_a_target_holding_the_configuration_is_refused_unless_replace(sources, tmp_path):
    source, target = sources[FULL], tmp_path / "target.sqlite"
    assert cli(source, "copy", "A3_B5", str(target))[0] == 0
    status, _, err = cli(source, "copy", "A3_B5", str(target))
    one_line_error(status, err, f"{target} already holds A3_B5", "--replace")
    with sqlite3.connect(target) as connection:  # an unfinished exploration of its own
        connection.execute("UPDATE Configurations SET complete = 0, dh1 = 'another run'")
        connection.execute("DELETE FROM Molecules WHERE number > 1000")
    status, _, err = cli(source, "copy", "A3_B5", str(target))
    one_line_error(status, err, "already holds an unfinished A3_B5")
    with sqlite3.connect(source) as connection:
        (started,) = connection.execute("SELECT dh1 FROM Configurations WHERE config = 'A3_B5'").fetchone()
    with sqlite3.connect(target) as connection:  # copied (cp) while explored: the same start, no copy's mark
        connection.execute(
            "UPDATE Configurations SET dh1 = ?, dh2 = ? WHERE config = 'A3_B5'", (started, started)
        )
    status, _, err = cli(source, "copy", "A3_B5", str(target))
    one_line_error(status, err, "already holds an unfinished A3_B5")
    status, out, err = cli(source, "copy", "A3_B5", str(target), "--replace")
    assert status == 0, err
    checked(target, Config(3, 5))


def test_a_role_that_may_only_read_is_refused(sources, pg_server, pg_url):
    open_database(pg_url)  # the tables, made by a writer
    close_database()
    pg_server.create_role("copy_reader", "pw-r3ader", read_only=True)
    try:
        url = pg_url.replace(f"postgres:{pg_server.password}@", "copy_reader:pw-r3ader@")
        status, out, err = cli(sources[FULL], "copy", "A3_B5", url)
        one_line_error(status, err, "role copy_reader may only read")
        assert "pw-r3ader" not in out + err
    finally:
        pg_server.drop_role("copy_reader")


def test_a_target_file_that_cannot_be_written_is_refused(sources, tmp_path):
    """As a user who cannot write the target (nobody, when the suite runs as root)."""
    home, folder = tmp_path / "home", tmp_path / "shared"
    home.mkdir()
    folder.mkdir()
    give_to_nobody(home)
    target = folder / "target.sqlite"
    assert cli(sources[FULL], "copy", "A3_B5", str(target))[0] == 0
    close_database()
    before = target.read_bytes()
    make_unwritable(target, folder)
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "PYTHONPATH": str(ROOT),
        "NUMBA_CACHE_DIR": str(home / "numba"),
    }
    result = run_unprivileged([*BBCORE, "--db", str(sources[FULL]), "copy", "A4_B6", str(target)], env=env)
    one_line_error(result.returncode, result.stderr, f"{target} is read-only")
    assert result.returncode == 2 and target.read_bytes() == before


def test_an_unreachable_server_either_side_is_one_line_without_the_password(sources, tmp_path):
    url = f"postgresql://alice:s3cr3t-copy@127.0.0.1:{free_port()}/nothing"
    for source, target in ((url, tmp_path / "target.sqlite"), (sources[FULL], url)):
        status, out, err = cli(source, "copy", "A3_B5", str(target))
        one_line_error(status, err, "cannot reach the server of postgresql://alice:***@127.0.0.1")
        assert "s3cr3t-copy" not in out + err
    assert not (tmp_path / "target.sqlite").exists()
    status, _, err = cli(tmp_path / "missing.sqlite", "copy", "A3_B5", str(tmp_path / "target.sqlite"))
    one_line_error(status, err, "no database at")
