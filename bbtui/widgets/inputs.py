"""The inputs: validators with ``bbcore``'s own messages, the inputs that leave the
app's and the screen's keys live, and the game input."""

from __future__ import annotations

from dataclasses import dataclass

from textual import events
from textual.message import Message
from textual.validation import ValidationResult, Validator
from textual.widgets import Input

from bbcore.config import Config, validation_error
from bbcore.numbering import atoms_from_string, number_of


class ConfigValidator(Validator):
    """A configuration ``AN_BW``, with the messages of ``bbcore.config``."""

    def validate(self, value: str) -> ValidationResult:
        """Blank is fine (nothing typed yet); anything else must parse."""
        error = validation_error(value) if value.strip() else None
        return self.failure(error) if error else self.success()


def molecule_number(config: Config, text: str) -> int:
    """A molecule number from its number or its W*W string; ValueError says what is wrong."""
    text = text.strip()
    if text.isdigit():
        number = int(text)
        if not 1 <= number <= config.nb_mol:
            raise ValueError(f"{config} molecules are numbered 1..{config.nb_mol:,}, not {number:,}")
        return number
    if set(text) <= {"O", "-"} and text:
        return number_of(config, atoms_from_string(config, text))
    raise ValueError(
        f"type a molecule number (1..{config.nb_mol:,}) or its {config.cells} "
        f"characters, 'O' an atom and '-' an empty cell, line 1 first"
    )


class ConfigBoundValidator(Validator):
    """Values that only make sense for a chosen configuration; blank is fine.

    Subclasses say what a value must be in ``check``, raising ValueError (or
    a subclass) with bbcore's one-line message.
    """

    def __init__(self, config: Config | None) -> None:
        """Values of ``config`` (None: every value fails until one is chosen)."""
        super().__init__()
        self.config = config

    def check(self, config: Config, value: str) -> None:
        """Raise ValueError with a message unless ``value`` fits ``config``."""
        raise NotImplementedError

    def validate(self, value: str) -> ValidationResult:
        """Blank is fine; anything else must pass ``check``."""
        if not value.strip():
            return self.success()
        if self.config is None:
            return self.failure("choose a configuration first")
        try:
            self.check(self.config, value)
        except ValueError as error:
            return self.failure(str(error))
        return self.success()


class MoleculeValidator(ConfigBoundValidator):
    """A molecule of a configuration: its number or its molecule string."""

    def check(self, config: Config, value: str) -> None:
        """A number in range or a molecule string of the right size."""
        molecule_number(config, value)


class KeyInput(Input):
    """An input that never types the characters no value of it can hold, so that their
    keys stay live while it has the focus: ``?`` the help, ``/`` the screen's main input.

    Textual leaves a key that the focused input would type to the input, priority
    bindings included: a configuration or a number input would type ``?`` as an
    error ("invalid configuration '?'") although the screen says "? every key".
    """

    free_keys: frozenset[str] = frozenset("?/")
    """Characters this input leaves to the bindings."""

    def check_consume_key(self, key: str, character: str | None) -> bool:
        """The free characters are keys, not text."""
        if character is not None and character in self.free_keys:
            return False
        return super().check_consume_key(key, character)

    def _on_key(self, event: events.Key) -> None:
        """A free character goes on to the bindings; Input's own handler (called next
        unless the default is prevented) would type it."""
        if event.character is not None and event.character in self.free_keys:
            event.prevent_default()


@dataclass
class GamePasted(Message):
    """Text of several lines (a board diagram) was pasted to be read as a game."""

    text: str


class GameInput(KeyInput):
    """The game input: one line is typed or pasted as usual; a pasted diagram
    (several lines, which an Input cannot hold) is handed on as ``GamePasted``.
    ``?`` is typed here (a position not shot); ``/`` is never part of a game."""

    free_keys = frozenset("/")

    def __init__(self, *args, **kwargs) -> None:
        """An Input that keeps its text on focus: Textual's selects it all, and then the next
        key would replace a whole game."""
        kwargs.setdefault("select_on_focus", False)
        super().__init__(*args, **kwargs)

    def _on_paste(self, event: events.Paste) -> None:
        """A diagram goes to the screen; one line is left to Input's own handler
        (Textual calls every class's handler in turn unless the default is prevented)."""
        if len(event.text.strip().splitlines()) > 1:
            event.prevent_default()
            event.stop()
            self.post_message(GamePasted(event.text))
