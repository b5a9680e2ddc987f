"""Families computed by blocks: a block of families re-traced, the rows each should have.

Shared by every layout that stores families (today the compact store's
groups phase, ``bbcore.check.compact_groups``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bbcore import engine
from bbcore.check.report import CheckResult, Difference
from bbcore.check.traces import _spectrum_images_kernel, letters
from bbcore.config import Config
from bbcore.engine import image_numbers
from bbcore.numbering import atoms_of_numbers, binomial_table


@dataclass
class FamilyBlock:
    """A block of families: each one's canonical number and molecules (ragged, by family)."""

    canonical: np.ndarray  # (K,) int64
    numbers: np.ndarray  # (k,) int64, every family's molecules one after the other
    family_of: np.ndarray  # (k,) the index of each molecule's family

    @property
    def sizes(self) -> np.ndarray:
        return np.bincount(self.family_of, minlength=len(self.canonical))


@dataclass
class ExpectedRows:
    """The spectral groups a block of families should have: one row per distinct image spectrum."""

    spectrum: np.ndarray  # (r, 4W) uint8, each family's rows together, in transform order
    groups: np.ndarray  # (K,) rows per family
    partner: np.ndarray  # (K, 4W) each canonical molecule's trace (engine.trace_batch's codes)


def family_spectra(config: Config, block: FamilyBlock, result: CheckResult) -> ExpectedRows:
    """Re-trace a block of families and derive the rows each should have, all at once.

    Every molecule of a family must have its canonical molecule's spectrum
    (``groups.member``), and the family's canonical number must be the
    smallest canonical number among them (``groups.canonical_number``).
    The family's spectral groups are the distinct images of that spectrum
    by the 8 symmetries (the first transform giving each), each with the
    images of the molecules by the same symmetry.  A compact store keeps no
    group's transform, first molecule or size (readers derive them:
    ``families.derived``), so none is computed here.
    """
    table = binomial_table(config)
    _, source, inverse = engine._symmetry_tables(config.width)
    families = len(block.canonical)
    members = atoms_of_numbers(config, block.numbers, table)
    canonical_atoms = atoms_of_numbers(config, block.canonical, table)
    partner, _, _ = engine.trace_batch(config, np.concatenate([canonical_atoms, members]))
    spectra = letters(partner)
    own, traced = spectra[:families], spectra[families:]
    for i in np.nonzero((traced != own[block.family_of]).any(axis=1))[0].tolist():
        c = int(block.canonical[block.family_of[i]])
        result.add(
            Difference(
                "groups.member",
                int(block.numbers[i]),
                f"spectrum (in the family of {c:,})",
                repr(own[block.family_of[i]].tobytes().decode("ascii")) + f" (molecule {c:,}'s)",
                repr(traced[i].tobytes().decode("ascii")),
            )
        )
    canon = image_numbers(config, members, table).min(axis=1)
    smallest = np.full(families, np.iinfo(np.int64).max)
    np.minimum.at(smallest, block.family_of, canon)
    for f in np.nonzero(smallest != block.canonical)[0].tolist():
        result.add(
            Difference(
                "groups.canonical_number",
                None,
                f"family {int(block.canonical[f]):,}",
                f"{int(block.canonical[f]):,}",
                f"{int(smallest[f]):,} (the smallest canonical number of its molecules)",
            )
        )
    image_spectra = np.empty((families, 8, config.positions), dtype=np.uint8)
    engine.compiled(_spectrum_images_kernel)(partner[:families], source, inverse, image_spectra)
    distinct = np.ones((families, 8), dtype=bool)
    for t in range(1, 8):
        for u in range(t):
            distinct[:, t] &= (image_spectra[:, t] != image_spectra[:, u]).any(axis=1)
    family, t = np.nonzero(distinct)
    return ExpectedRows(image_spectra[family, t], distinct.sum(axis=1), partner[:families])


MAX_APART_CELLS = 1 << 22
"""Board cells (families x molecules x cells) compared at once by ``max_atoms_apart``."""


def max_atoms_apart(config: Config, block: FamilyBlock) -> np.ndarray:
    """Each family's max_diff: the most atoms one of its molecules has where another has none.

    ``families.max_atoms_apart`` for a block at once: two molecules of N atoms
    each differ by N minus the atoms they share, and the atoms shared by
    every pair of a family are one batched product of their boards, the
    families of one size together.
    """
    sizes = block.sizes
    out = np.zeros(len(sizes), dtype=np.int64)
    offsets = np.r_[0, np.cumsum(sizes)[:-1]]
    table = binomial_table(config)
    for size in np.unique(sizes[sizes >= 2]).tolist():
        which = np.nonzero(sizes == size)[0]
        step = max(1, MAX_APART_CELLS // (size * max(size, config.cells)))
        for first in range(0, len(which), step):
            these = which[first : first + step]
            numbers = block.numbers[offsets[these][:, None] + np.arange(size)]
            atoms = atoms_of_numbers(config, numbers.ravel(), table)
            boards = np.zeros((len(atoms), config.cells), dtype=np.float32)
            np.put_along_axis(boards, atoms, 1.0, axis=1)
            boards = boards.reshape(len(these), size, config.cells)
            shared = np.matmul(boards, boards.transpose(0, 2, 1))
            shared[:, np.arange(size), np.arange(size)] = config.atoms + 1
            out[these] = config.atoms - shared.min(axis=(1, 2)).astype(np.int64)
    return out
