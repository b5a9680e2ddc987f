"""The line under a screen's inputs, where its answers and errors are said."""

from __future__ import annotations

from textual.widgets import Label


class MessageLine(Label):
    """A screen's message line: an error stays only until the next valid action.

    ``say`` shows a line (``error`` marks it with the ``error`` class);
    ``clear_error`` is called on a valid action and shows the last line that
    was not an error again, so that an error never outlives what it was
    about (Decode's and Play's stale "invalid configuration").
    """

    def __init__(self, *, id: str) -> None:
        super().__init__("", id=id, classes="message")
        self.status = ""  # the last line said that is not an error
        self.showing_error = False

    def say(self, text: str, *, error: bool = False) -> None:
        """Show ``text``, as an error or as the line to come back to."""
        self.update(text)
        self.set_class(error, "error")
        self.showing_error = error
        if not error:
            self.status = text

    def clear_error(self) -> None:
        """A valid action: an error said before is no longer true."""
        if self.showing_error:
            self.say(self.status)
