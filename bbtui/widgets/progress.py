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
    if progress.phase in ("exploring", "spectrums", "paused"):  # spectrums: grouped, at its own rate
        figures.append(f"{progress.rate:,.0f} mol/s")
    figures.append(f"elapsed {duration(progress.elapsed + since)}")
    if progress.phase in ("exploring", "spectrums"):
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
    ) -> None:
        """Show a run's latest progress, received ``since`` seconds ago (``note``: another phase line).

        With no progress, ``stored`` (done, total) fills the bar: where the
        selected configuration stands.
        """
        if progress is None:
            done, total = stored or (0, 1)
            self.set_lines(note or IDLE, f"{done:,} / {total:,} molecules" if stored else "")
            self.query_one("#bar", ProgressBar).update(total=max(total, 1), progress=done)
            return
        if running:
            line = f"{progress.config}: {PHASES.get(progress.phase, progress.phase)}..."
        elif progress.phase == "complete":
            line = f"{progress.config}: explored"
        else:
            line = f"{progress.config}: paused, s resumes"
        self.set_lines(note or line, progress_figures(progress, since if running else 0.0))
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
