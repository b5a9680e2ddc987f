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


PHASES = {
    "exploring": "exploring",
    "spectrums": "building the spectral groups of",
    "complete": "explored",
    "paused": "paused",
}


def progress_figures(progress: Progress) -> str:
    """Done / total, molecules per second, elapsed and ETA on one line."""
    figures = [f"{progress.done:,} / {progress.total:,} molecules"]
    if progress.phase in ("exploring", "paused"):
        figures.append(f"{progress.rate:,.0f} mol/s")
    figures.append(f"elapsed {duration(progress.elapsed)}")
    if progress.phase == "exploring":
        figures.append(f"ETA {duration(progress.eta)}")
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
    ExplorationPanel #figures { color: $text-muted; }
    """

    def compose(self) -> ComposeResult:
        """A title line, the bar, the figures."""
        yield Label("No exploration running: choose a configuration and press s.", id="phase")
        yield ProgressBar(total=1, show_eta=False, id="bar")
        yield Label("", id="figures")

    def on_mount(self) -> None:
        """Start empty."""
        self.border_title = "Exploration"

    def show(self, progress: Progress | None, *, running: bool, note: str = "") -> None:
        """Show a run's latest progress (``note`` replaces the phase line when given)."""
        phase = self.query_one("#phase", Label)
        bar = self.query_one("#bar", ProgressBar)
        figures = self.query_one("#figures", Label)
        if progress is None:
            phase.update(note or "No exploration running: choose a configuration and press s.")
            bar.update(total=1, progress=0)
            figures.update("")
            return
        words = PHASES.get(progress.phase, progress.phase)
        if progress.phase == "paused" or (running and progress.phase == "exploring"):
            line = f"{progress.config}: {words}"
        else:
            line = f"{words.capitalize()} {progress.config}"
        phase.update(note or line)
        bar.update(total=max(progress.total, 1), progress=progress.done)
        figures.update(progress_figures(progress))
