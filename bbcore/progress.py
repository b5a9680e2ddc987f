"""Where an exploration stands and how it ends: what every run tells its face.

The full store's run and the compact one's stages report through
``Progress``, end with ``COMPLETE`` or ``PAUSED`` (``ALREADY_COMPLETE`` when
there was nothing to do), and refuse with an ``ExploreError`` (one line);
the CLI's status line and the TUI's progress panel read them.  A module of
its own so that the faces, the entry (``bbcore.explore``), the pipelines, the
lock and the runners share it without importing each other (a TUI widget
that draws progress needs no exploration code).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

COMPLETE, PAUSED, ALREADY_COMPLETE = "complete", "paused", "already complete"
"""How a run ends: every range stored and grouped; stopped with what is done kept; nothing to do."""


class ExploreError(Exception):
    """An exploration that cannot run: the message is one line for the user."""


class DiskFull(ExploreError):
    """A run stopped by a full disk at ``folder`` (a compact run's shard files); what was stored is kept.

    The faces word it with what is stored and how to resume (``explore.full_disk_line``).
    """

    def __init__(self, message: str, folder: Path) -> None:
        super().__init__(message)
        self.folder = folder


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


class RunClock:
    """A run's clock, started when the run starts: the ``Progress`` it sends, with the seconds
    since then and the rate of the work this run did itself (not what earlier runs stored).

    Every run and long pass that reports (the two pipelines, ``bbcore spectrums``,
    ``bbcore migrate``) words its progress through one, so that elapsed time and rate are
    reckoned the same way everywhere.
    """

    def __init__(self, config: str) -> None:
        self.config = config
        self.started = time.monotonic()

    def progress(
        self,
        done: int,
        total: int,
        phase: str,
        *,
        own: int | None = None,
        since: float | None = None,
        unit: str = "molecules",
    ) -> Progress:
        """``done`` of ``total`` in ``phase``; its rate is ``own`` (default: ``done``) over the
        seconds since ``since`` (default: the run's start; a phase with a rate of its own gives
        its own start), 0 when the run did nothing to rate."""
        now = time.monotonic()
        seconds = now - (self.started if since is None else since)
        own = done if own is None else own
        rate = own / seconds if seconds > 0 else 0.0
        return Progress(self.config, done, total, now - self.started, rate, phase, unit)
