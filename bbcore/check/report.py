"""What a check reports: its differences, each phase's result, the whole report.

A phase keeps its first ``LISTED`` differences and counts them all
(``CheckResult``); a ``Difference`` names a registered finding
(``bbcore.check.findings``).  ``CheckError``: a configuration that cannot be
checked at all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from bbcore.check.findings import FINDINGS
from bbcore.config import Config

LISTED = 20
"""Differences kept, per check."""


CheckProgressCallback = Callable[[str, int, int], None]
"""Called with (check, done, total) while a check runs."""


class CheckError(Exception):
    """A configuration that cannot be checked: the message is one line for the user."""


@dataclass(frozen=True)
class Difference:
    """Something stored that is not what was computed, and the finding it is."""

    finding: str  # a name in FINDINGS
    number: int | None  # the molecule, or None (a spectrum, a table, the file)
    what: str  # the column or the thing compared
    stored: str
    computed: str

    def __post_init__(self) -> None:
        if self.finding not in FINDINGS:
            raise ValueError(f"unregistered finding {self.finding!r}")

    def line(self) -> str:
        """One line: ``molecule 1,234: spectrum: stored '...', computed '...'``."""
        subject = f"molecule {self.number:,}: " if self.number is not None else ""
        return f"{subject}{self.what}: stored {self.stored}, computed {self.computed}"

    def as_dict(self) -> dict[str, object]:
        """For ``--json``."""
        return {
            "finding": self.finding,
            "number": self.number,
            "what": self.what,
            "stored": self.stored,
            "computed": self.computed,
        }


@dataclass
class CheckResult:
    """One check: what it covered, its differences (the first ``LISTED``) and how many in all."""

    name: str
    covered: str = ""
    differences: list[Difference] = field(default_factory=list)
    count: int = 0
    findings: set[str] = field(default_factory=set)  # every finding reported, listed or not

    @property
    def ok(self) -> bool:
        """Whether everything agreed."""
        return self.count == 0

    def add(self, difference: Difference) -> None:
        """Count a difference, and keep it if it is among the first."""
        if FINDINGS[difference.finding].phase != self.name:
            raise ValueError(f"{difference.finding} is not a finding of {self.name}")
        self.count += 1
        self.findings.add(difference.finding)
        if len(self.differences) < LISTED:
            self.differences.append(difference)


@dataclass
class CheckReport:
    """Every check of one configuration."""

    config: Config
    results: list[CheckResult]
    seed: int
    sample: int  # molecules re-traced by the engine
    reference: int  # molecules re-traced by rays.py
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """Whether every check agreed."""
        return all(result.ok for result in self.results)

    def summary(self) -> dict[str, object]:
        """The report as one JSON object."""
        return {
            "config": self.config.name,
            "ok": self.ok,
            "molecules": self.config.nb_mol,
            "seed": self.seed,
            "sample": self.sample,
            "reference": self.reference,
            "seconds": round(self.seconds, 3),
            "checks": [
                {
                    "name": r.name,
                    "ok": r.ok,
                    "covered": r.covered,
                    "differences": r.count,
                    "findings": sorted(r.findings),
                    "first": [d.as_dict() for d in r.differences],
                }
                for r in self.results
            ],
        }
