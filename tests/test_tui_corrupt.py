"""bbtui on a corrupt database says what bbcore says, on screen, and stays up (issue 32, D6).

The files are really corrupted: a real explored database (A4_B6, full
store) with pages overwritten, as a disk or a careless copy would leave it,
never a mocked error.  Pages 2 to 4 hold the start of the tables, so the
launch's first query fails; a data page of ``Molecules`` in the middle of
the file is read only by the statistics.
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from expect import bbcore
from pilot import wait_for
from textual.widgets import Label

from bbcore.config import Config
from bbcore.explore import explore
from bbcore.store import close_database
from bbtui.app import BlackBoxApp
from bbtui.screens.explore import ExploreScreen
from bbtui.screens.help import HelpScreen
from bbtui.screens.statistics import StatisticsScreen

CONFIG = Config(4, 6)
PAGE = 4096
TABLE_LEAF = 0x0D
"""SQLite's page type of a table b-tree leaf: rows."""
CORRUPT = "is not a bbtui database (or it is corrupt)"


@pytest.fixture(scope="module")
def explored_file(tmp_path_factory) -> Path:
    """A4_B6 explored (58,905 molecules, 3,000 pages and more), closed: every page in the file."""
    path = tmp_path_factory.mktemp("corrupt") / "explored.sqlite"
    explore(CONFIG, path)
    close_database()
    return path


def garbled(source: Path, folder: Path, pages: list[int]) -> Path:
    """A copy of ``source`` with ``pages`` (1-based) overwritten by bytes that are no page."""
    path = folder / "garbled.sqlite"
    shutil.copy(source, path)
    data = bytearray(path.read_bytes())
    for page in pages:
        data[(page - 1) * PAGE : page * PAGE] = bytes((i * 37 + page) % 251 for i in range(PAGE))
    path.write_bytes(bytes(data))
    return path


def middle_data_page(path: Path) -> int:
    """The table leaf page nearest the middle of the file: ``Molecules`` rows, most of the file."""
    data = path.read_bytes()
    pages = len(data) // PAGE
    for page in sorted(range(2, pages + 1), key=lambda page: abs(page - pages // 2)):
        if data[(page - 1) * PAGE] == TABLE_LEAF:
            return page
    raise AssertionError("no table leaf page")


def cli_line(path: Path, *args: str) -> str:
    """bbcore's one line on the file, without its ``bbcore: error:`` prefix."""
    result = bbcore("--db", str(path), *args)
    assert result.returncode == 2 and len(result.stderr.splitlines()) == 1, result.stderr
    return result.stderr.strip().removeprefix("bbcore: error: ")


def test_a_file_corrupt_at_its_start_is_refused_by_bbtui_with_the_clis_line(explored_file, tmp_path):
    """Pages 2 to 4 garbled: the schema version, read as the file opens, already fails, so
    ``bbtui`` says the CLI's one line and exits 2, as ``bbcore`` does (never a traceback)."""
    path = garbled(explored_file, tmp_path, [2, 3, 4])
    line = cli_line(path, "status")
    assert CORRUPT in line
    launched = subprocess.run(
        [sys.executable, "-m", "bbtui.app", "--db", str(path)], capture_output=True, text=True, timeout=120
    )
    assert launched.returncode == 2 and launched.stderr.strip() == f"bbtui: {line}", launched.stderr


async def test_the_statistics_of_a_file_with_a_corrupt_data_page_show_the_line_and_the_app_stays_up(
    explored_file, tmp_path
):
    path = garbled(explored_file, tmp_path, [middle_data_page(explored_file)])
    line = cli_line(path, "report", CONFIG.name)
    assert CORRUPT in line
    app = BlackBoxApp(path, CONFIG)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("t")
        await wait_for(pilot, lambda: isinstance(app.screen, StatisticsScreen))
        summary = app.screen.query_one("#stats-summary", Label)
        await wait_for(pilot, lambda: str(summary.render()) == line)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, StatisticsScreen))
        assert app.is_running and app._exception is None
    close_database()


def root_page(path: Path, table: str) -> int:
    """The page of ``table``'s b-tree root (``sqlite_master``), read before the file is garbled."""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as connection:
        return connection.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]


@pytest.mark.parametrize("read_only", [False, True], ids=["writable", "read-only"])
async def test_the_explore_list_of_a_file_with_a_corrupt_table_shows_the_line_once_and_the_app_stays_up(
    explored_file, tmp_path, read_only
):
    """``ExploredRanges``' root page garbled: the file opens (its schema and ``Configurations`` are
    whole), and the Explore screen's list, the first read of the table, fails.  The screen says
    bbcore's line, in its message and in one toast, and the app goes on (``--read-only``: what a
    served visitor's app is)."""
    path = garbled(explored_file, tmp_path, [root_page(explored_file, "ExploredRanges")])
    line = cli_line(path, "status")
    assert CORRUPT in line
    app = BlackBoxApp(path, read_only=read_only)
    async with app.run_test(size=(120, 40)) as pilot:
        message = app.screen.query_one("#config-message", Label)
        await wait_for(pilot, lambda: str(message.render()) == line)
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen))
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, ExploreScreen))
        assert [note.message for note in app._notifications] == [line]
        assert app.is_running and app._exception is None
    close_database()
