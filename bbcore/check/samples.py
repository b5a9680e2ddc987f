"""The engine and reference phases: a seeded sample re-traced, and the store made to answer for it.

The sample is drawn here (``sample_numbers``, ``reference_sample``) and
re-traced by the engine (``engine_rows``) or the reference ``rays.py``
(``reference_rows``); each store answers through its ``Judge``
(``bbcore.check.full_judge``, ``bbcore.check.compact_judge``).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

import numpy as np
from peewee import chunked

from bbcore import engine, rays, sql
from bbcore.check import blocks
from bbcore.check.report import CheckProgressCallback, CheckResult
from bbcore.config import Config
from bbcore.geometry import TRANSFORM_NAMES, transform_atoms
from bbcore.numbering import atoms_of, number_of
from bbcore.rays import STAT_FIELDS
from bbcore.store import db

SAMPLE = 10_000
"""Molecules re-traced by the engine, by default."""
REFERENCE_SAMPLE = 1_000
"""Molecules re-traced by the reference ``rays.py``, by default (about a millisecond each)."""
SEED = 14
"""The default seed of the samples: the same molecules every time, unless ``--seed``."""


def sample_numbers(config: Config, size: int, seed: int) -> Sequence[int]:
    """``size`` molecule numbers drawn at random (seeded), sorted; all (a ``range``) when size >= nb_mol."""
    if size >= config.nb_mol:
        return range(1, config.nb_mol + 1)
    generator = np.random.default_rng(seed)
    if config.nb_mol < 50 * size:
        drawn = generator.choice(config.nb_mol, size=size, replace=False) + 1
    else:  # a few repeats drawn again: choice without replacement would permute nb_mol numbers
        drawn = np.unique(generator.integers(1, config.nb_mol + 1, size=size + size // 10))
        drawn = generator.permutation(drawn)[:size]
    return sorted(int(n) for n in drawn)


def reference_sample(numbers: Sequence[int], size: int, seed: int) -> list[int]:
    """The reference sample: ``size`` of the engine's sample drawn again (seeded), sorted."""
    return sorted(random.Random(seed).sample(numbers, min(size, len(numbers))))


MOLECULE_FIELDS = ("number", "canonical_number", "transform", "molecule", "spectrum", *STAT_FIELDS)


def stored_rows(
    config: Config, numbers: Sequence[int], columns: tuple[str, ...] = MOLECULE_FIELDS
) -> dict[int, tuple]:
    """The stored rows (``columns``, the number first) of ``numbers``, by number."""
    rows: dict[int, tuple] = {}
    for chunk in chunked(numbers, blocks.ROWS_PER_QUERY):
        query = sql.molecules_by_number(columns, len(chunk))
        rows.update((row[0], tuple(row)) for row in db.execute_sql(query, (config.name, *chunk)))
    return rows


class Judge:
    """How a configuration's store answers for a re-traced molecule (full or compact)."""

    covers = ""

    def judge(self, result: CheckResult, rows: dict[int, tuple]) -> None:
        """Compare the computed rows (``MOLECULE_FIELDS`` order, by number) with the store."""
        raise NotImplementedError


SAMPLE_BATCH = blocks.ROWS_PER_QUERY * 8
"""Sampled molecules computed and judged at a time."""


def check_sample(
    name: str,
    config: Config,
    numbers: Sequence[int],
    compute: Callable[[Config, Sequence[int]], dict[int, tuple]],
    judge: Judge,
    progress: CheckProgressCallback,
) -> CheckResult:
    """Re-trace ``numbers`` with ``compute`` (the engine or rays.py) and let the store answer for them."""
    how = "the engine" if name == "engine" else "the reference rays.py"
    which = " (all)" if len(numbers) == config.nb_mol else ", a seeded sample"
    result = CheckResult(name, f"{len(numbers):,} molecules{which} re-traced by {how}: {judge.covers}")
    progress(name, 0, len(numbers))
    step = SAMPLE_BATCH if name == "engine" else 50
    for first in range(0, len(numbers), step):
        chunk = numbers[first : first + step]
        judge.judge(result, compute(config, chunk))
        progress(name, first + len(chunk), len(numbers))
    return result


def engine_rows(config: Config, numbers: Sequence[int]) -> dict[int, tuple]:
    """Rows (``MOLECULE_FIELDS``) computed by the engine (``engine.molecules_of_numbers``: the
    exploration's own kernels, on the enantiomer groups of these molecules only)."""
    batch = engine.molecules_of_numbers(config, np.asarray(numbers, dtype=np.int64))
    return {
        int(n): (
            int(n),
            int(batch.canonical_number[i]),
            TRANSFORM_NAMES[int(batch.transform[i])],
            batch.molecule[i].tobytes().decode("ascii"),
            batch.spectrum[i].tobytes().decode("ascii"),
            *(int(v) for v in batch.stats[i]),
        )
        for i, n in enumerate(batch.number.tolist())
    }


def reference_rows(config: Config, numbers: Sequence[int]) -> dict[int, tuple]:
    """Rows (``MOLECULE_FIELDS``) computed by the reference rays.py."""
    return {n: reference_row(config, n) for n in numbers}


def reference_row(config: Config, number: int) -> tuple:
    """A molecule's row computed from the spec's rules alone (``rays.py``, plain numbering)."""
    atoms = atoms_of(config, number)
    canonical = min(number_of(config, transform_atoms(config, atoms, t)) for t in TRANSFORM_NAMES)
    canonical_atoms = atoms_of(config, canonical)
    transform = next(
        t for t in TRANSFORM_NAMES if transform_atoms(config, canonical_atoms, t) == tuple(atoms)
    )
    traced = rays.trace_all(config, atoms)
    statistics = rays.statistics_of_rays(traced)
    board = "".join("O" if cell in atoms else "-" for cell in range(config.cells))
    return (
        number,
        canonical,
        transform,
        board,
        rays.spectrum_of_rays(traced),
        *(statistics[name] for name in STAT_FIELDS),
    )
