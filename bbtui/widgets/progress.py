"""The exploration panel: a progress bar and the run's figures."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Label, ProgressBar

from bbcore.explore import Progress


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
PHASES = {"exploring": "exploring", "spectrums": "building the spectral groups"}


def progress_figures(progress: Progress, since: float = 0.0) -> str:
    """Done / total, molecules per second, elapsed and ETA on one line.

    ``since`` is the time since the report: the clock keeps going between
    reports (a range can take seconds, and the first ones wait for the
    worker processes to start).
    """
    figures = [f"{progress.done:,} / {progress.total:,} molecules"]
    if progress.phase in ("exploring", "paused"):
        figures.append(f"{progress.rate:,.0f} mol/s")
    figures.append(f"elapsed {duration(progress.elapsed + since)}")
    if progress.phase == "exploring":
        eta = progress.eta
        figures.append(f"ETA {duration(None if eta is None else max(0.0, eta - since))}")
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

    def compose(self) -> ComposeResult:
        """A title line, the bar, the figures."""
        yield Label(IDLE, id="phase")
        yield ProgressBar(total=1, show_eta=False, id="bar")
        yield Label("", id="figures")

    def on_mount(self) -> None:
        """Start empty."""
        self.border_title = "Exploration"

    def show(self, progress: Progress | None, *, running: bool, note: str = "", since: float = 0.0,
             stored: tuple[int, int] | None = None) -> None:
        """Show a run's latest progress, received ``since`` seconds ago (``note``: another phase line).

        With no progress, ``stored`` (done, total) fills the bar: where the
        selected configuration stands.
        """
        phase = self.query_one("#phase", Label)
        bar = self.query_one("#bar", ProgressBar)
        figures = self.query_one("#figures", Label)
        if progress is None:
            phase.update(note or IDLE)
            done, total = stored or (0, 1)
            bar.update(total=max(total, 1), progress=done)
            figures.update(f"{done:,} / {total:,} molecules" if stored else "")
            return
        if running:
            line = f"{progress.config}: {PHASES.get(progress.phase, progress.phase)}..."
        elif progress.phase == "complete":
            line = f"{progress.config}: explored"
        else:
            line = f"{progress.config}: paused, s resumes"
        phase.update(note or line)
        bar.update(total=max(progress.total, 1), progress=progress.done)
        figures.update(progress_figures(progress, since if running else 0.0))
