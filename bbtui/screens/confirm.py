"""A yes/no question in a modal dialog."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label


class ConfirmScreen(ModalScreen[bool]):
    """Ask a question; dismiss with True (yes) or False (no)."""

    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; }
    ConfirmScreen > Vertical {
        width: 64; max-width: 100%; height: auto;
        border: thick $primary; background: $surface; padding: 1 2;
    }
    ConfirmScreen #question { width: 1fr; margin-bottom: 1; }
    ConfirmScreen Horizontal { height: auto; align-horizontal: right; }
    ConfirmScreen Button { margin-left: 2; }
    """

    AUTO_FOCUS = "#yes"

    BINDINGS = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No", key_display="n/esc"),
    ]

    def __init__(self, question: str, *, yes: str = "Yes", no: str = "No") -> None:
        """A dialog asking ``question``, with buttons labelled ``yes`` and ``no``."""
        super().__init__()
        self.question = question
        self.yes, self.no = yes, no

    def compose(self) -> ComposeResult:
        """The question and two buttons."""
        with Vertical():
            yield Label(self.question, id="question")
            with Horizontal():
                yield Button(f"{self.no} (n)", id="no")
                yield Button(f"{self.yes} (y)", id="yes", variant="primary")

    @on(Button.Pressed)
    def answered(self, event: Button.Pressed) -> None:
        """A button answers."""
        self.dismiss(event.button.id == "yes")

    def action_answer(self, answer: bool) -> None:
        """A key answers."""
        self.dismiss(answer)
