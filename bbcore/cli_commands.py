"""The list of modules' command registrars, in ``bbcore --help`` order."""

from __future__ import annotations

REGISTRARS: list = []
