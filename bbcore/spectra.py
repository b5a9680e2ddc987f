"""Spectral groups: spectra shared by two or more molecules.

``build_spectrums`` fills the ``Spectrums`` table of a configuration from its
stored molecules and links each ambiguous spectrum to the others obtained
from it by symmetry (spec, "Tables"): going through the canonical molecules
in increasing number, and through each one's enantiomer group in increasing
number, an ambiguous spectrum not yet linked gets that molecule's transform
and canonical number.  That first molecule is simply the one with the
smallest (canonical_number, number) among the molecules of the spectrum.
"""

from __future__ import annotations

from dataclasses import dataclass

from peewee import fn

from bbcore.config import Config
from bbcore.store import Spectrum, config_literal, create_config_indexes, db, spectrum_index

AMBIGUOUS_MOLECULES = """
SELECT spectrum, canonical_number, number, transform
FROM "Molecules" INDEXED BY "{index}"
WHERE config = {config} AND spectrum IN (
    SELECT spectrum FROM "Molecules" INDEXED BY "{index}"
    WHERE config = {config} GROUP BY spectrum HAVING COUNT(*) > 1)
"""
"""The molecules of the ambiguous spectra, both found through the spectrum index
(a covering scan, then a look-up per spectrum: 0.15 s on A4_B8).  Without the
INDEXED BY, SQLite grouped the whole configuration by a sort (1.2 s)."""


def build_spectrums(config: Config) -> int:
    """Rebuild the Spectrums rows of a configuration (and its indexes); returns how many."""
    create_config_indexes(config)
    sql = AMBIGUOUS_MOLECULES.format(index=spectrum_index(config), config=config_literal(config))
    first: dict[str, tuple[int, int, str]] = {}
    count: dict[str, int] = {}
    for spectrum, canonical, number, transform in db.execute_sql(sql):
        count[spectrum] = count.get(spectrum, 0) + 1
        if spectrum not in first or (canonical, number) < first[spectrum][:2]:
            first[spectrum] = (canonical, number, transform)
    rows = [
        {
            "config": config.name,
            "spectrum": s,
            "nb_mol": count[s],
            "transform": first[s][2],
            "canonical_number": first[s][0],
        }
        for s in sorted(first)
    ]
    with db.atomic():
        Spectrum.delete().where(Spectrum.config == config.name).execute()
        for start in range(0, len(rows), 500):
            Spectrum.insert_many(rows[start : start + 500]).execute()
    return len(rows)


@dataclass(frozen=True)
class AmbiguityLine:
    """One line of the ambiguity report: spectral groups of one size."""

    size: int
    families: int  # spectral groups up to symmetry (``id`` rows)
    groups: int  # spectral groups with symmetry (all rows)
    molecules: int  # size * groups


def ambiguity_table(config: Config) -> list[AmbiguityLine]:
    """The spec's ambiguity report, one line per group size (no total line)."""
    query = (
        Spectrum.select(
            Spectrum.nb_mol,
            fn.SUM(Spectrum.transform == "id").alias("families"),
            fn.COUNT(Spectrum.spectrum).alias("groups"),
        )
        .where(Spectrum.config == config.name)
        .group_by(Spectrum.nb_mol)
        .order_by(Spectrum.nb_mol)
    )
    return [
        AmbiguityLine(row.nb_mol, int(row.families), row.groups, row.nb_mol * row.groups) for row in query
    ]
