"""``bbtui --read-only``: the app that every session of ``bbtui --serve --read-only`` runs.

Any database opens read-only: browsing works; exploring, resetting and
computing a strategy book are off, and the header and a notification say
why.  The control, the same keys without the flag, computes and stores the
book: the file changes.
"""

from __future__ import annotations

import hashlib
import shutil

import pytest
from pilot import text_of, wait_for

from bbcore.config import Config
from bbcore.store import close_database
from bbtui.app import BlackBoxApp
from bbtui.screens.strategy import StrategyScreen

SMALL = Config(3, 4)


@pytest.mark.parametrize("read_only", [True, False])
async def test_a_read_only_session_computes_no_book_and_explores_nothing(explored, tmp_path, read_only):
    """What every session of ``bbtui --serve --read-only`` is: ``bbtui --read-only`` (and,
    as the control, the same keys without it compute and store the book)."""
    db = tmp_path / "copy.sqlite"
    shutil.copy(explored, db)
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    app = BlackBoxApp(db, SMALL, read_only=read_only)
    async with app.run_test(size=(120, 40)) as pilot:
        assert app.read_only is read_only
        assert app.sub_title.startswith("read-only session") is read_only
        await pilot.press("b")
        await wait_for(pilot, lambda: isinstance(app.screen, StrategyScreen))
        if read_only:
            await wait_for(pilot, lambda: "does not compute one" in text_of(app, "#strategy-message"))
            app.start_exploration(Config(2, 3))
            assert app.exploring is None
            await wait_for(pilot, lambda: any("(--read-only)" in note.message for note in app._notifications))
        else:
            await wait_for(pilot, lambda: app.screen.book is not None)
    close_database()
    assert (hashlib.sha256(db.read_bytes()).hexdigest() == before) is read_only
