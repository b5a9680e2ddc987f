"""Where an exploration stands: the one progress report every run sends.

The full store's run and the compact one's stages report through it, and
the CLI's status line and the TUI's progress panel read it; a module of its
own so that the faces and the pipelines share it without importing each
other (a TUI widget that draws progress needs no exploration code).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Progress:
    """Where a run stands: sent after each stored range."""

    config: str
    done: int  # molecules stored, this run and earlier ones
    total: int
    elapsed: float  # seconds since this run started
    rate: float  # molecules stored per second by this run
    # phase: "exploring", "spectrums" (full); "tracing", "grouping", "writing" (compact); "complete",
    # "paused".  In the full store's "spectrums" phase, done counts the molecules through the
    # grouping (estimated, spectra.GroupingMeter) and rate is that phase's own.
    phase: str
    unit: str = "molecules"  # what done and total count: molecules; shards grouping; families writing

    @property
    def fraction(self) -> float:
        """Done over total, 0..1."""
        return self.done / self.total if self.total else 1.0

    @property
    def eta(self) -> float | None:
        """Seconds left at this run's rate, None before any rate is known."""
        if self.rate <= 0 or self.unit != "molecules":
            return None
        return (self.total - self.done) / self.rate


RunProgressCallback = Callable[[Progress], None]
"""What a run calls with its progress, from the calling thread."""
