"""A full store's groups and families phases: its Spectrums rows and its molecule rows' enantiomer groups."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import groupby

import numpy as np
from peewee import chunked

from bbcore import engine, sql
from bbcore.check import blocks
from bbcore.check.blocks import rows_in_blocks
from bbcore.check.report import CheckError, CheckProgressCallback, CheckResult, Difference
from bbcore.check.samples import stored_rows
from bbcore.check.traces import _as_bytes, letters, moved_partners, partners
from bbcore.config import Config
from bbcore.engine import image_numbers
from bbcore.geometry import TRANSFORM_NAMES
from bbcore.numbering import atoms_of_numbers, atoms_of_range, binomial_table
from bbcore.store import db, index_exists

FAMILY_BATCH = 8192
"""Numbers per batch of the full store's families check (whole enantiomer groups are read at once)."""


def check_groups(config: Config, progress: CheckProgressCallback) -> CheckResult:
    """Every ambiguous spectrum's Spectrums row, and its nb_mol, transform and canonical number.

    Two streams sorted by spectrum are merged: the molecules of the
    ambiguous spectra (through the spectrum index) grouped as
    ``build_spectrums`` groups them, and the Spectrums rows (their primary
    key).  Only the current spectrum of each is held.
    """
    result = CheckResult("groups")
    if not index_exists(sql.spectrum_index(config)):
        result.add(
            Difference("groups.index", None, "spectrum index", "missing", f'"{sql.spectrum_index(config)}"')
        )
        return result
    (total,) = db.execute_sql(sql.COUNT_SPECTRUMS, (config.name,)).fetchone()
    progress("groups", 0, total)
    computed = _computed_groups(config)
    stored = (row for rows in rows_in_blocks(sql.SPECTRUMS_BY_SPECTRUM, (config.name,)) for row in rows)
    have, want = next(stored, None), next(computed, None)
    done = seen = steps = 0
    while have is not None or want is not None:
        steps += 1
        if want is None or (have is not None and have[0] < want[0]):
            result.add(
                Difference(
                    "groups.extra_row",
                    None,
                    f"spectrum {have[0]}",
                    f"nb_mol {have[1]}",
                    "fewer than 2 molecules have it",
                )
            )
            have, done = next(stored, None), done + 1
        elif have is None or want[0] < have[0]:
            result.add(
                Difference(
                    "groups.missing_row", None, f"spectrum {want[0]}", "no Spectrums row", f"nb_mol {want[1]}"
                )
            )
            want = next(computed, None)
            seen += 1
        else:
            for finding, index in (
                ("groups.nb_mol", 1),
                ("groups.transform", 2),
                ("groups.canonical_number", 3),
            ):
                if have[index] != want[index]:
                    what = finding.split(".")[1]
                    result.add(
                        Difference(
                            finding, None, f"spectrum {have[0]}: {what}", str(have[index]), str(want[index])
                        )
                    )
            have, want, done, seen = next(stored, None), next(computed, None), done + 1, seen + 1
        if steps % blocks.BLOCK == 0:
            progress("groups", min(done, total), total)
    result.covered = f"{seen:,} ambiguous spectra: nb_mol, transform, canonical number"
    progress("groups", total, total)
    return result


def _computed_groups(config: Config) -> Iterator[tuple[str, int, str, int]]:
    """(spectrum, nb_mol, transform, canonical_number) of every ambiguous spectrum, by spectrum.

    The first molecule of a spectrum is its smallest (canonical_number,
    number): ``bbcore.spectra.computed_spectrums``'s rule, one spectrum at a time.
    """
    statement = sql.ambiguous_molecules_by_spectrum(config)  # a server's has its ORDER BY
    molecules = (row for rows in rows_in_blocks(statement) for row in rows)
    last = ""
    for spectrum, group in groupby(molecules, key=lambda row: row[0]):
        if spectrum <= last:  # the query's plan changed (sql.ambiguous_molecules_by_spectrum)
            raise CheckError(f"the ambiguous molecules of {config.name} did not come in spectrum order")
        last = spectrum
        members = list(group)
        _, canonical, _, transform = min(members, key=lambda row: (row[1], row[2]))
        yield spectrum, len(members), transform, canonical


def check_families(config: Config, progress: CheckProgressCallback) -> CheckResult:
    """Every molecule against its enantiomer group: canonical, transform, board, spectrum, members."""
    result = CheckResult(
        "families", f"{config.nb_mol:,} molecules: canonical, transform, board, spectrum by symmetry, members"
    )
    if not index_exists(sql.canonical_index(config)):
        result.add(
            Difference(
                "families.index",
                None,
                "canonical_number index",
                "missing",
                f'"{sql.canonical_index(config)}"',
            )
        )
        return result
    table = binomial_table(config)
    _, source, inverse = engine._symmetry_tables(config.width)
    query = sql.molecules_by_canonical(config)
    # Progress counts rows read: canonical molecules crowd the low numbers (A4_B8's
    # first 8,192 numbers hold 59,000 molecules), so numbers would run unevenly.
    done, total = 0, config.nb_mol
    progress("families", 0, total)
    for start in range(1, config.nb_mol + 1, FAMILY_BATCH):
        stop = min(start + FAMILY_BATCH, config.nb_mol + 1)
        done += _check_family_batch(config, start, stop, table, source, inverse, query, result)
        progress("families", min(done, total - 1), total)
    for number, canonical in db.execute_sql(sql.molecules_outside_canonicals(config), (1, config.nb_mol)):
        result.add(
            Difference(
                "families.canonical_number",
                number,
                "canonical_number",
                f"{canonical:,}",
                _canonical_text(config, number),
            )
        )
    progress("families", total, total)
    return result


def _check_family_batch(config, start, stop, table, source, inverse, query, result: CheckResult) -> int:
    """The groups whose canonical number is in start..stop-1; returns the rows read."""
    atoms = atoms_of_range(config, start, stop)
    own = np.arange(start, stop, dtype=np.int64)
    images = image_numbers(config, atoms, table)
    canonical = images.min(axis=1) == own
    images, own = images[canonical], own[canonical]
    # Each group's members: its distinct images, each with its first transform.
    first = np.ones(images.shape, dtype=bool)
    for t in range(1, 8):
        for u in range(t):
            first[:, t] &= images[:, t] != images[:, u]
    group_of = np.nonzero(first)[0]
    expected = images[first]
    order = np.argsort(expected)
    expected, group_of = expected[order], group_of[order]

    rows = db.execute_sql(query, (start, stop)).fetchall()
    transform_index = {name: i for i, name in enumerate(TRANSFORM_NAMES)}
    number = np.array([r[0] for r in rows], dtype=np.int64)
    stored_canonical = np.array([r[1] for r in rows], dtype=np.int64)
    stored_transform = np.array([transform_index.get(r[2], -1) for r in rows], dtype=np.int64)
    at = np.searchsorted(expected, number)
    found = np.zeros(len(number), dtype=bool)  # a batch may hold no canonical number (rows stray into it)
    if len(expected):
        found = (at < len(expected)) & (expected[np.minimum(at, len(expected) - 1)] == number)

    present = np.zeros(len(expected), dtype=bool)
    present[at[found]] = True
    missing = expected[~present]
    elsewhere = set()  # members stored with another canonical number: named below, not missing
    for chunk in chunked(missing.tolist(), blocks.ROWS_PER_QUERY):
        elsewhere.update(stored_rows(config, chunk, ("number",)))
    for number_missing in missing.tolist():
        if number_missing in elsewhere:
            continue
        group = own[group_of[np.searchsorted(expected, number_missing)]]
        result.add(
            Difference(
                "families.missing", number_missing, "row", "absent", f"a member of the group of {group:,}"
            )
        )

    for i in np.nonzero(~found)[0].tolist():  # stored with a canonical number in range, but not its own
        n = int(number[i])
        if not 1 <= n <= config.nb_mol:
            result.add(
                Difference(
                    "families.stray", n, "number", "a row", f"none: numbers go from 1 to {config.nb_mol:,}"
                )
            )
            continue
        result.add(
            Difference(
                "families.canonical_number",
                n,
                "canonical_number",
                f"{stored_canonical[i]:,}",
                _canonical_text(config, n),
            )
        )

    rows_found = np.nonzero(found)[0]
    groups = group_of[at[rows_found]]
    true_canonical = own[groups]
    bad_canonical = stored_canonical[rows_found] != true_canonical
    for i, c in zip(rows_found[bad_canonical].tolist(), true_canonical[bad_canonical].tolist()):
        result.add(
            Difference(
                "families.canonical_number",
                int(number[i]),
                "canonical_number",
                f"{stored_canonical[i]:,}",
                f"{c:,}",
            )
        )
    maps = (stored_transform[rows_found] >= 0) & (
        images[groups, np.maximum(stored_transform[rows_found], 0)] == number[rows_found]
    )
    for i in rows_found[~maps].tolist():
        t = int(images_first_transform(images[group_of[at[i]]], number[i]))
        result.add(
            Difference(
                "families.transform", int(number[i]), "transform", repr(rows[i][2]), repr(TRANSFORM_NAMES[t])
            )
        )

    # Boards: the molecule column is its number's board.
    boards = _boards(config, atoms_of_numbers(config, number[rows_found], table))
    for i, board in zip(rows_found.tolist(), boards):
        if rows[i][3] != board:
            result.add(
                Difference("families.board", int(number[i]), "molecule", repr(rows[i][3]), repr(board))
            )

    # Spectra: each member's is its canonical molecule's, moved by the transform.
    good = rows_found[~bad_canonical & maps]
    by_number = {int(n): i for i, n in enumerate(number.tolist())}
    canon_row = np.array([by_number.get(int(c), -1) for c in stored_canonical[good].tolist()], dtype=np.int64)
    good, canon_row = good[canon_row >= 0], canon_row[canon_row >= 0]
    spectra = [rows[i][4] for i in range(len(rows))]
    partner, valid = partners(config, spectra)
    for i in rows_found[~valid[rows_found]].tolist():  # the others are named above
        result.add(
            Difference(
                "families.malformed", int(number[i]), "spectrum", repr(spectra[i]), "a well-formed spectrum"
            )
        )
    usable = valid[good] & valid[canon_row]
    good, canon_row = good[usable], canon_row[usable]
    if not len(good):
        return len(rows)
    t = stored_transform[good]
    want = letters(moved_partners(partner[canon_row], t, source, inverse))
    have = _as_bytes([spectra[i] for i in good.tolist()], config.positions)
    wrong = np.nonzero((want != have).any(axis=1))[0]
    for k in wrong.tolist():
        i = int(good[k])
        c = int(stored_canonical[i])
        computed = want[k].tobytes().decode("ascii")
        result.add(
            Difference(
                "families.spectrum",
                int(number[i]),
                "spectrum",
                repr(spectra[i]),
                f"{computed!r} (molecule {c:,}'s stored spectrum by {TRANSFORM_NAMES[int(t[k])]})",
            )
        )
    return len(rows)


def images_first_transform(images: np.ndarray, number: int) -> int:
    """The first transform (index) taking a canonical molecule with these images to ``number``."""
    return int(np.nonzero(images == number)[0][0])


def _canonical_text(config: Config, number: int) -> str:
    """The canonical number of a molecule, or why it has none."""
    if not 1 <= number <= config.nb_mol:
        return f"none: numbers go from 1 to {config.nb_mol:,}"
    atoms = atoms_of_numbers(config, np.array([number], dtype=np.int64))
    return f"{int(image_numbers(config, atoms, binomial_table(config)).min()):,}"


def _boards(config: Config, atoms: np.ndarray) -> list[str]:
    """The molecule strings (``O`` atom, ``-`` empty, row by row) of a batch of molecules."""
    boards = np.full((len(atoms), config.cells), ord("-"), dtype=np.uint8)
    np.put_along_axis(boards, atoms, ord("O"), axis=1)
    return [row.tobytes().decode("ascii") for row in boards]
