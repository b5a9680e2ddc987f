"""The list of modules' command registrars, in ``bbcore --help`` order."""

from __future__ import annotations

from bbcore import cli_decode, cli_explore, cli_stats

REGISTRARS: list = [cli_explore.register, cli_stats.register, cli_decode.register]
