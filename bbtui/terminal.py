"""The largest terminal a browser tab may give its app (``bbtui --serve``), in one home.

A tab names its terminal's size three ways: the page's ``?width=&height=``
query and its ``resize`` messages, read by the server (``bbtui.serve``),
and an in-band resize report (``ESC [ 48 ; H ; W ; h ; w t``) typed as
keys, which Textual's terminal parser reads in the app itself.  One resize
to 60000 x 60000 took an app from 70 MB to 3.8 GB (issue 32, D4): the
server clamps what it reads, and a served app (``BlackBoxApp.post_message``)
what its parser read.
"""

from __future__ import annotations

MAX_COLUMNS = 500
MAX_ROWS = 200
"""The largest terminal a tab may ask for."""


def clamped_size(width: object, height: object) -> tuple[int, int] | None:
    """A terminal size a tab asked for, within 1..MAX_COLUMNS x 1..MAX_ROWS; None if not numbers."""
    if not all(isinstance(value, int) and not isinstance(value, bool) for value in (width, height)):
        return None
    return min(max(width, 1), MAX_COLUMNS), min(max(height, 1), MAX_ROWS)
