"""``bbcore check``: verify a stored configuration, as ``git fsck`` or a ZFS scrub would.

A database received from elsewhere can be trusted only once it is checked.
``check(config)`` reads the open database (read-only is enough) and runs
its phases in order (``PHASES``; a full store ``CHECKS``, a compact one
``COMPACT_CHECKS``).  What each can find is a registered ``Finding``
(``FINDINGS``: a name, the stores it applies to, one line saying what
damage it names): every difference reported names one, and the tests
plant each finding's damage in a real file (``tests/test_check_damage.py``
fails on a finding that no planted damage exercises).

Every phase streams: it reads a block of rows at a time (``BLOCK``
families, molecules or rows), computes what they should be with numpy and
the engine's kernels for the whole block at once, and keeps only counts and
the first ``LISTED`` differences of each phase.  Memory does not grow with
the configuration (A7_B8's 79 M spectra are never held together), and every
phase reports progress, SQLite's integrity check included (``SqliteMeter``).

A compact store (``bbcore.compact``) is checked for what it holds: one
``Families`` row per family (``bbcore.families``), read once in position
order, each family re-traced and every column and ordinal compared; its
checks are modules of their own (``compact_groups``, ``compact_judge``),
written against its layout, while the block machinery (``rows_in_blocks``,
``family_spectra``, ``SqliteMeter``, the registry) is shared.
What a compact store cannot show, a spectrum shared by two molecules and
stored nowhere, only a new exploration finds.

Each phase keeps its first ``LISTED`` differences (molecule number, what,
what is stored, what was computed) and counts them all.  Only a complete
configuration is checked (a partial one has no spectral groups to check).

The package, a module per phase or store, each importing only those below it
(``run`` at the top):

- ``run``: ``check(config)``, the phases in order and the report;
- the phases: ``integrity`` (SQLite's integrity_check, ``SqliteMeter``),
  ``configuration`` (the Configurations row and ranges; a full store's
  count), ``full_groups`` (a full store's groups and families),
  ``compact_groups`` (a compact store's groups), ``samples`` (the engine and
  reference samples, re-traced);
- each store's judge of a re-traced molecule: ``full_judge`` (its row),
  ``compact_judge`` (its spectral group and profile; the compact count);
- what they share: ``family_blocks`` (families re-traced by blocks),
  ``traces`` (spectra as partner arrays and letters, the numba kernels),
  ``blocks`` (rows streamed by blocks, a phase's progress);
- ``report`` (``Difference``, ``CheckResult``, ``CheckReport``,
  ``CheckError``) over ``findings`` (the registry: ``PHASES``, ``FINDINGS``).

This module is the package's face: it defines nothing, and names what other
code uses.  A constant is changed (a test shrinking ``BLOCK``) in the module
that holds it (``bbcore.check.blocks.BLOCK``), which every user reads.
"""

from __future__ import annotations

from bbcore.check.findings import CHECKS, COMPACT_CHECKS, FINDINGS, PHASES, Finding, Phase
from bbcore.check.integrity import megabytes
from bbcore.check.report import CheckError, CheckProgressCallback, CheckReport, CheckResult, Difference
from bbcore.check.run import check
from bbcore.check.samples import REFERENCE_SAMPLE, SAMPLE, SEED, reference_sample, sample_numbers

__all__ = [
    "CHECKS",
    "COMPACT_CHECKS",
    "FINDINGS",
    "PHASES",
    "REFERENCE_SAMPLE",
    "SAMPLE",
    "SEED",
    "CheckError",
    "CheckProgressCallback",
    "CheckReport",
    "CheckResult",
    "Difference",
    "Finding",
    "Phase",
    "check",
    "megabytes",
    "reference_sample",
    "sample_numbers",
]
