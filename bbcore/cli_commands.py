"""The list of modules' command registrars, in ``bbcore --help`` order."""

from __future__ import annotations

from bbcore import cli_stats

REGISTRARS: list = [cli_stats.register]
