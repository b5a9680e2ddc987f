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

from peewee import chunked, fn

from bbcore import sql
from bbcore.config import Config
from bbcore.store import Spectrum, create_config_indexes, db


def computed_spectrums(config: Config) -> dict[str, tuple[int, str, int]]:
    """The ambiguous spectra of the stored molecules: spectrum -> (nb_mol, transform, canonical_number).

    Read through the configuration's spectrum index (which must exist).
    ``build_spectrums`` stores them; ``bbcore check`` compares them with
    what is stored.
    """
    first: dict[str, tuple[int, int, str]] = {}
    count: dict[str, int] = {}
    for spectrum, canonical, number, transform in db.execute_sql(sql.ambiguous_molecules(config)):
        count[spectrum] = count.get(spectrum, 0) + 1
        if spectrum not in first or (canonical, number) < first[spectrum][:2]:
            first[spectrum] = (canonical, number, transform)
    return {s: (count[s], first[s][2], first[s][0]) for s in sorted(first)}


def build_spectrums(config: Config) -> int:
    """Rebuild the Spectrums rows of a configuration (and its indexes); returns how many."""
    create_config_indexes(config)
    rows = [
        {"config": config.name, "spectrum": s, "nb_mol": n, "transform": t, "canonical_number": c}
        for s, (n, t, c) in computed_spectrums(config).items()
    ]
    with db.atomic():
        Spectrum.delete().where(Spectrum.config == config.name).execute()
        for batch in chunked(rows, 500):
            Spectrum.insert_many(batch).execute()
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
