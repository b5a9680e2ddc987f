"""The findings registry: what ``bbcore check`` can report, in one place.

``PHASES``: the report's lines, in the order a full store (``CHECKS``) and a
compact one (``COMPACT_CHECKS``) run them.  ``FINDINGS``: every kind of damage
a phase names (``phase.what``, the stores it applies to, one line saying
what it is); every ``Difference`` names one (``bbcore.check.report``), and
``tests/test_check_damage.py`` plants each one's damage in a real file.
"""

from __future__ import annotations

from dataclasses import dataclass

from bbcore.store import COMPACT, FULL


@dataclass(frozen=True)
class Phase:
    """One line of the report: a group of findings checked together, with its progress."""

    name: str
    label: str
    description: str


@dataclass(frozen=True)
class Finding:
    """A kind of damage ``check`` names: ``phase.what``, the stores it applies to, one line."""

    name: str
    stores: tuple[str, ...]
    description: str

    @property
    def phase(self) -> str:
        """The phase that reports it."""
        return self.name.split(".")[0]


BOTH = (FULL, COMPACT)

PHASES: dict[str, Phase] = {
    phase.name: phase
    for phase in (
        Phase(
            "integrity",
            "SQLite integrity_check",
            "SQLite's integrity_check of the whole file: every b-tree, page, and index against its table",
        ),
        Phase(
            "configuration",
            "configuration",
            "the Configurations row against the name (C(W², N), N, W) and the explored ranges against it",
        ),
        Phase("count", "molecule count", "the molecules stored (rows, or a compact store's profiles)"),
        Phase(
            "groups",
            "spectral groups",
            "every Spectrums row against the molecules that have its spectrum (a compact store: every "
            "Families row, its molecules re-traced, its columns and ordinals) and the stored counts by size",
        ),
        Phase(
            "families",
            "families",
            "every molecule row against its enantiomer group: canonical number, transform, board, "
            "spectrum by symmetry, no member missing",
        ),
        Phase("engine", "engine sample", "a seeded sample re-traced by the engine, every column compared"),
        Phase("reference", "reference sample", "a smaller sample re-traced by the reference rays.py"),
    )
}
CHECKS = ("integrity", "configuration", "count", "groups", "families", "engine", "reference")
"""The phases of a full store, in order."""
COMPACT_CHECKS = ("integrity", "configuration", "count", "groups", "engine", "reference")
"""The phases of a compact store, in order."""


def _sample_findings(phase: str) -> tuple[Finding, ...]:
    """What a re-traced sample finds (the engine's and the reference's are the same kinds)."""
    return (
        Finding(f"{phase}.absent", (FULL,), "a sampled molecule has no row"),
        Finding(
            f"{phase}.column", (FULL,), "a sampled molecule's row differs from the re-traced one in a column"
        ),
        Finding(
            f"{phase}.not_in_group",
            (COMPACT,),
            "a sampled molecule's spectrum is stored ambiguous, but the molecule is not among its molecules",
        ),
        Finding(
            f"{phase}.profile",
            (COMPACT,),
            "a sampled molecule's 9 profile statistics have no Profiles row (or its lowest number is higher)",
        ),
    )


FINDINGS: dict[str, Finding] = {
    finding.name: finding
    for finding in (
        Finding(
            "integrity.damage",
            BOTH,
            "SQLite reports damage: a page, a b-tree, an index disagreeing with its table",
        ),
        Finding("configuration.nb_mol", BOTH, "the Configurations row's nb_mol is not C(W², N)"),
        Finding("configuration.atoms", BOTH, "the Configurations row's nb_atoms is not the name's N"),
        Finding("configuration.width", BOTH, "the Configurations row's width is not the name's W"),
        Finding(
            "configuration.ranges_molecules", BOTH, "the explored ranges' molecules do not add up to C(W², N)"
        ),
        Finding(
            "configuration.ranges_hole",
            BOTH,
            "the explored ranges leave a hole (at the start, between two, at the end)",
        ),
        Finding("configuration.ranges_overlap", BOTH, "two explored ranges overlap"),
        Finding("configuration.ranges_beyond", BOTH, "an explored range goes past the last molecule"),
        Finding("count.rows", (FULL,), "the molecule rows are not C(W², N)"),
        Finding("count.molecule_rows", (COMPACT,), "a compact store has molecule rows"),
        Finding("count.profiles", (COMPACT,), "the Profiles rows do not count C(W², N) molecules"),
        Finding(
            "count.malformed", (COMPACT,), "a Profiles row holds a value of another type (text or a real)"
        ),
        Finding("count.repeated", (COMPACT,), "two Profiles rows or more have the same 9 statistics"),
        Finding(
            "groups.index",
            BOTH,
            "the configuration's spectrum index (a compact store: its Families key or size index) is missing",
        ),
        Finding("groups.missing_row", (FULL,), "a spectrum of two molecules or more has no Spectrums row"),
        Finding("groups.extra_row", (FULL,), "a Spectrums row whose spectrum fewer than 2 molecules have"),
        Finding(
            "groups.nb_mol",
            BOTH,
            "a Spectrums row's nb_mol is not the number of molecules that have it "
            "(a family's: not the number of molecules stored in it)",
        ),
        Finding(
            "groups.transform",
            (FULL,),
            "a Spectrums row's transform does not map its canonical molecule onto its first",
        ),
        Finding(
            "groups.canonical_number",
            BOTH,
            "a Spectrums row's canonical number is not its first molecule's (a family's: not the smallest "
            "canonical number of its molecules, or no molecule)",
        ),
        Finding(
            "groups.numbers",
            (COMPACT,),
            "a family's numbers blob is damaged: its length, a number out of range, a repeat, "
            "not increasing, fewer than 2 molecules",
        ),
        Finding(
            "groups.malformed",
            (COMPACT,),
            "a Families row holds a value of another type (text or NULL for a number, no blob of numbers)",
        ),
        Finding(
            "groups.member",
            (COMPACT,),
            "a molecule stored in a family, re-traced, does not have the family's first spectrum",
        ),
        Finding(
            "groups.spectra",
            (COMPACT,),
            "a family's spectra is not the number of distinct spectra among its canonical molecule's "
            "8 images",
        ),
        Finding(
            "groups.spectrum", (COMPACT,), "a family's spectrum is not its canonical molecule's, re-traced"
        ),
        Finding(
            "groups.key",
            (COMPACT,),
            "a family's key is not its spectrum's (engine.stored_keys): a typed spectrum would not find it",
        ),
        Finding(
            "groups.max_diff",
            (COMPACT,),
            "a family's max_diff is not the most atoms one of its molecules has where another has none",
        ),
        Finding(
            "groups.position",
            (COMPACT,),
            "the families are not at positions 0, 1, 2, ... in increasing canonical number "
            "(a gap, a family out of order)",
        ),
        Finding(
            "groups.spectra_before",
            (COMPACT,),
            "a family's spectra_before is not the number of spectra of the families before it",
        ),
        Finding(
            "groups.size_position",
            (COMPACT,),
            "a family's size_position is not its rank in the size order (nb_mol descending, then "
            "canonical number)",
        ),
        Finding(
            "groups.size_spectra_before",
            (COMPACT,),
            "a family's size_spectra_before is not the number of spectra before it in the size order",
        ),
        Finding(
            "groups.shard_sizes",
            (COMPACT,),
            "GroupedShards' counts by size (families, spectra) disagree with the families",
        ),
        Finding(
            "groups.shard_totals", (COMPACT,), "GroupedShards' spectra or families disagree with the families"
        ),
        Finding("families.index", (FULL,), "the configuration's canonical_number index is missing"),
        Finding("families.missing", (FULL,), "a member of an enantiomer group has no row"),
        Finding(
            "families.stray", (FULL,), "a molecule row whose number is not a molecule of the configuration"
        ),
        Finding(
            "families.canonical_number",
            (FULL,),
            "a molecule's canonical number is not the smallest of its 8 images",
        ),
        Finding(
            "families.transform",
            (FULL,),
            "a molecule's transform does not map its canonical molecule onto it",
        ),
        Finding("families.board", (FULL,), "a molecule's board is not its number's"),
        Finding(
            "families.spectrum",
            (FULL,),
            "a molecule's spectrum is not its canonical molecule's moved by its transform",
        ),
        Finding("families.malformed", (FULL,), "a molecule's spectrum is not a well-formed spectrum"),
        *_sample_findings("engine"),
        Finding(
            "engine.profiles_counted",
            (COMPACT,),
            "with --all, the profiles counted differ from the Profiles rows",
        ),
        *_sample_findings("reference"),
    )
}
"""Every finding ``check`` can report, by name (``phase.what``)."""
