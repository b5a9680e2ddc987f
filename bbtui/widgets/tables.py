"""Tables whose columns are as wide as their widest cell from the moment they are filled.

Textual's DataTable measures new rows and changed cells later, when its
messages run out; a frame drawn before that caches the cells at their
columns' old widths, and measuring does not redraw them.  Under load a
distribution table and the groups table stayed so ("2,998" cut to "2,9"
under "out", "10" to "1" under "#") until the next change.  So the screens
set each column's width themselves, in the same step as they fill it.
"""

from __future__ import annotations

from rich.text import Text
from textual.coordinate import Coordinate
from textual.widgets import DataTable


def cell_width(cell: object) -> int:
    """The cells a table's value takes, as the table draws it (a string is markup)."""
    if isinstance(cell, Text):
        return cell.cell_len
    return Text.from_markup(cell).cell_len if isinstance(cell, str) else len(str(cell))


def fit_columns(table: DataTable) -> None:
    """Each column as wide as its label or its widest cell, now (call it after filling)."""
    for index, column in enumerate(table.ordered_columns):
        cells = (table.get_cell_at(Coordinate(row, index)) for row in range(table.row_count))
        column.width = max([column.label.cell_len, *map(cell_width, cells)])
        column.auto_width = False
    table.refresh()
