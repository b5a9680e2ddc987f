"""A full store's judge: a re-traced molecule against its own row, every column."""

from __future__ import annotations

from bbcore.check.report import CheckResult, Difference
from bbcore.check.samples import MOLECULE_FIELDS, Judge, stored_rows
from bbcore.config import Config


class FullJudge(Judge):
    """A full store: the molecule's own row, every column."""

    covers = "canonical, transform, board, spectrum, 17 statistics"

    def __init__(self, config: Config) -> None:
        self.config = config

    def judge(self, result: CheckResult, rows: dict[int, tuple]) -> None:
        stored = stored_rows(self.config, sorted(rows))
        for number in sorted(rows):
            _compare(result, number, stored.get(number), rows[number])


def _compare(result: CheckResult, number: int, stored: tuple | None, computed: tuple) -> None:
    """Every field of a stored row against the computed one (both in ``MOLECULE_FIELDS`` order)."""
    if stored is None:
        result.add(Difference(f"{result.name}.absent", number, "row", "absent", "present"))
        return
    for name, have, want in zip(MOLECULE_FIELDS[1:], stored[1:], computed[1:]):
        if have != want:
            shown = (repr(have), repr(want)) if isinstance(want, str) else (str(have), str(want))
            result.add(Difference(f"{result.name}.column", number, name, *shown))
