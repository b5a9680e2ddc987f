"""What the screens ask of the app, as a protocol: the screens never import ``bbtui.app``.

``bbtui.app.BlackBoxApp`` implements it; a screen reads it through its
``bb_app`` property (``host(self)``).  So the app imports the screens and
no screen imports the app: no import circle, and each screen names exactly
what it uses of the app.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol, cast

from textual.cache import LRUCache
from textual.dom import DOMNode

from bbcore.config import Config
from bbcore.decode import Stop
from bbcore.progress import Progress
from bbcore.shots import Ranking
from bbcore.strategy import StrategyBook


class Host(Protocol):
    """The app as the screens see it: the shared state and the actions they start."""

    config: Config | None
    """The configuration the screens work on."""
    exploring: Config | None
    """The configuration being explored, or None."""
    progress: Progress | None
    """The latest progress report of the current or last run."""
    db_path: Path
    read_only: bool
    """The database is read-only: browsing works, exploring is off."""
    books: LRUCache[tuple[Config, str], StrategyBook]
    """Strategy books read or computed, by (configuration, policy): the last few only."""

    def open_molecule(self, config: Config, number: int) -> None:
        """The Molecule screen of one molecule."""

    def open_group(self, config: Config, spectrum: str) -> None:
        """The Group screen of one spectral group."""

    def action_groups(self) -> None:
        """The Groups screen of the app's configuration."""

    def start_exploration(self, config: Config, *, restart: bool = False, store: str | None = None) -> None:
        """Explore (or resume, or restart) a configuration in a worker."""

    def exploration_refusal(
        self, config: Config, *, restart: bool = False, store: str | None = None
    ) -> str | None:
        """Why a run cannot start now, in one line, or None."""

    def pause_exploration(self) -> None:
        """Ask the running exploration to pause."""

    def offer_groups(self, config: Config) -> None:
        """Offer the spectral groups of a configuration that just completed."""

    def strategy_book(
        self,
        config: Config,
        by: Ranking,
        progress: Callable[[int, int], None] | None = None,
        played: Callable[[int, int], None] | None = None,
        stop: Stop | None = None,
    ) -> StrategyBook:
        """The stored book, else computed until ``stop`` is set (not in a read-only session:
        StrategyError)."""

    def refuse_read_only(self) -> bool:
        """Say why nothing can be explored in a read-only file; True if refused."""


def host(node: DOMNode) -> Host:
    """The app of a screen or widget, as the screens see it."""
    return cast(Host, node.app)


def unwatch_app(node: DOMNode, closing: DOMNode | None = None) -> None:
    """Drop the watchers of ``node``'s app set by nodes closed since (the Header of every
    screen watches the app's title), and by ``closing``; a screen that watched the app
    calls it when it unmounts (``unwatch_app(self, self)``), the app at each change of
    screen.

    Textual drops a closed node's watcher of another object only when that
    attribute next changes (``app.progress``: during an exploration), and
    until then the watcher's bound method keeps the closed screen alive with
    everything it showed (70 Groups screens after 1,050 keys, 185 MB).
    Textual keeps them in the object's ``__watchers``: {attribute: [(node,
    callback)]}, and prunes by the same test.
    """
    watchers: dict[str, list[tuple[DOMNode, object]]] = getattr(node.app, "__watchers", {})
    for pairs in watchers.values():
        pairs[:] = [
            (owner, callback)
            for owner, callback in pairs
            if owner is not closing and not owner._closing and not owner._closed
        ]
