"""bbcore: the headless Black Box exploration engine.

Everything about the game lives here: configurations, molecule numbering,
ray tracing (a plain reference and a fast batch engine), symmetry, the
SQLite store, resumable exploration, spectral groups, decoding, statistics
and text rendering.  It never imports ``textual`` or ``rich``.
"""

__version__ = "0.1.0"
