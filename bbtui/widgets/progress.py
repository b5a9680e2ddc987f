"""The exploration panel: a progress bar and the run's figures."""

from __future__ import annotations

from collections import deque

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Label, ProgressBar

from bbcore.progress import Progress


def duration(seconds: float | None) -> str:
    """Seconds as ``42 s``, ``3:07`` or ``1:02:03``; ``?`` when unknown."""
    if seconds is None:
        return "?"
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02}:{seconds:02}" if hours else f"{minutes}:{seconds:02}"


IDLE = "No exploration running."
PHASES = {
    "exploring": "exploring",
    "spectrums": "building the spectral groups",
    "deleting": "deleting the stored rows",
    "tracing": "tracing (compact store)",
    "grouping": "grouping the shards into spectral groups",
    "writing": "writing the spectral groups to the database",
}
TIMED_PHASES = ("exploring", "tracing")
"""Phases counted in molecules, with a rate and an ETA."""


class RateMeter:
    """A run's molecules per second, smoothed, for the rate and the ETA shown.

    The run's first reports come before any range is stored, while the
    engine loads (or compiles, on a first run): the measurement starts at
    the first report with more than the ``stored`` molecules the run began
    with, so that loading is not counted as slowness.
    The rate is then taken over the last ``WINDOW`` seconds of reports, and
    only once they span ``MIN_SPAN`` seconds: before, it is unknown (no
    ETA rather than one that jumps from 43 s to 13 s in a 5 s run).
    """

    WINDOW = 5.0
    MIN_SPAN = 1.0

    def __init__(self, stored: int = 0) -> None:
        """A run starting with ``stored`` molecules already stored (a resumed run)."""
        self.stored = stored
        self.samples: deque[tuple[float, int]] = deque()

    def add(self, progress: Progress) -> None:
        """Take a report of the run (exploring reports only)."""
        if progress.phase not in TIMED_PHASES or progress.done <= self.stored:
            return  # still loading: nothing stored by this run yet
        self.samples.append((progress.elapsed, progress.done))
        while len(self.samples) > 2 and progress.elapsed - self.samples[1][0] >= self.WINDOW:
            self.samples.popleft()

    @property
    def storing(self) -> bool:
        """Whether this run has stored a range (the engine is loaded)."""
        return bool(self.samples)

    @property
    def rate(self) -> float | None:
        """Molecules per second over the last few seconds, or None while unknown."""
        if len(self.samples) < 2:
            return None
        (t0, d0), (t1, d1) = self.samples[0], self.samples[-1]
        if t1 - t0 < self.MIN_SPAN:
            return None
        return (d1 - d0) / (t1 - t0)

    def eta(self, progress: Progress) -> float | None:
        """Seconds left at the smoothed rate, or None while it is unknown."""
        rate = self.rate
        if not rate:
            return None
        return (progress.total - progress.done) / rate


def progress_figures(progress: Progress, since: float = 0.0, meter: RateMeter | None = None) -> str:
    """Done / total, molecules per second, elapsed and ETA on one line.

    ``since`` is the time since the report: the clock keeps going between
    reports (a range can take seconds, and the first ones wait for the
    worker processes to start).  While exploring, the rate and the ETA are
    ``meter``'s (smoothed; "measuring" until known); a paused run shows its
    average rate; the grouping (``spectrums``) its own rate and ETA.
    """
    figures = [f"{progress.done:,} / {progress.total:,} {progress.unit}"]
    if progress.phase in TIMED_PHASES:
        rate = meter.rate if meter is not None else (progress.rate or None)
        figures.append("measuring the rate" if rate is None else f"{rate:,.0f} mol/s")
    elif (progress.phase == "paused" and progress.unit == "molecules") or (
        progress.phase == "spectrums" and progress.rate > 0
    ):
        figures.append(f"{progress.rate:,.0f} mol/s")  # spectrums: the grouping's own rate
    figures.append(f"elapsed {duration(progress.elapsed + since)}")
    if progress.phase in TIMED_PHASES:
        eta = meter.eta(progress) if meter is not None else progress.eta
        if eta is not None:
            figures.append(f"ETA {duration(max(0.0, eta - since))}")
    elif progress.phase == "spectrums" and progress.eta is not None:
        figures.append(f"ETA {duration(max(0.0, progress.eta - since))}")
    return " · ".join(figures)


class ExplorationPanel(Vertical):
    """Where the current (or last) exploration stands."""

    DEFAULT_CSS = """
    ExplorationPanel {
        height: auto;
        border: round $primary;
        padding: 0 1;
    }
    ExplorationPanel ProgressBar { width: 1fr; }
    ExplorationPanel ProgressBar Bar { width: 1fr; }
    ExplorationPanel Label { width: 1fr; }
    ExplorationPanel #figures { color: $text-muted; }
    """

    def __init__(self) -> None:
        """An empty panel."""
        super().__init__()
        self.shown: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        """A title line, the bar, the figures."""
        yield Label(IDLE, id="phase")
        yield ProgressBar(total=1, show_eta=False, id="bar")
        yield Label("", id="figures")

    def on_mount(self) -> None:
        """Start empty."""
        self.border_title = "Exploration"

    def show(
        self,
        progress: Progress | None,
        *,
        running: bool,
        note: str = "",
        since: float = 0.0,
        stored: tuple[int, int] | None = None,
        meter: RateMeter | None = None,
        loading: str = "loading the engine",
    ) -> None:
        """Show a run's latest progress, received ``since`` seconds ago (``note``: another phase line).

        With no progress, ``stored`` (done, total) fills the bar: where the
        selected configuration stands.  While a run has stored nothing yet
        (``meter``), its phase is ``loading`` (the engine).
        """
        if progress is None:
            done, total = stored or (0, 1)
            self.set_lines(note or IDLE, f"{done:,} / {total:,} molecules" if stored else "")
            self.query_one("#bar", ProgressBar).update(total=max(total, 1), progress=done)
            return
        if running and progress.phase == "exploring" and meter is not None and not meter.storing:
            line = f"{progress.config}: {loading}..."
        elif running:
            line = f"{progress.config}: {PHASES.get(progress.phase, progress.phase)}..."
        elif progress.phase == "complete":
            line = f"{progress.config}: explored"
        else:
            line = f"{progress.config}: paused, s resumes"
        figures = progress_figures(progress, since if running else 0.0, meter if running else None)
        if progress.phase == "deleting":
            figures = f"{progress.done:,} / {progress.total:,} molecules stored, being deleted"
        self.set_lines(note or line, figures)
        self.query_one("#bar", ProgressBar).update(total=max(progress.total, 1), progress=progress.done)

    def set_lines(self, phase: str, figures: str) -> None:
        """Update the two text lines, only when they change.

        A label update lays the screen out again: on a busy machine, doing
        it for nothing several times a second costs the event loop dearly.
        """
        for widget_id, text in (("#phase", phase), ("#figures", figures)):
            label = self.query_one(widget_id, Label)
            if self.shown.get(widget_id) != text:
                self.shown[widget_id] = text
                label.update(text)
