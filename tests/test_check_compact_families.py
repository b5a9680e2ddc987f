"""``check`` of a compact store against expectations computed another way.

A compact store has no row per molecule: ``check`` re-traces every family
(``check.family_blocks.family_spectra``), recomputes its max_diff (``check.family_blocks.max_atoms_apart``)
and judges its samples against the stored groups and profiles
(``check.compact_judge.CompactJudge``).  Here each is compared with what the spec's own
rules give: the reference ray tracer ``rays.py`` on the molecules' images, a
brute-force count over every pair of a family's molecules, and the whole
lines a user reads when a compact file is damaged (an empty Profiles table,
a molecule left out of its family, a member with another spectrum).  Found
by the mutation run (``bench/mutation.py check``): these parts' mutants
survived test_check.py and test_check_damage.py.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest
from test_check_damage import (
    FAMILY_43_SPECTRUM,
    REFERENCE,
    compact_family_member_replaced,
    compact_molecule_left_out,
    damaged_report,
    raised_findings,
)

from bbcore import check, engine, rays
from bbcore.compact.trace import PROFILE_FIELDS
from bbcore.config import Config, parse_config
from bbcore.numbering import atoms_of, image_numbers_of
from bbcore.store import COMPACT

pytestmark = pytest.mark.usefixtures("remembered_reference")

A3_B5 = parse_config("A3_B5")
SMALL = [parse_config(name) for name in ("A1_B3", "A2_B4", "A3_B4", "A2_B5")]
"""Whole configurations re-traced by the reference (up to 560 molecules each)."""


def spectra_of(records) -> dict[int, str]:
    return {record[1]: record[4] for record in records}


def reference_families(records) -> list[tuple[int, list[int]]]:
    """Every family of a configuration from its reference records: (canonical number, molecules).

    A family is the molecules sharing a canonical molecule's spectrum; its
    canonical number is the smallest canonical number among them (each
    family once, its own spectrum the first of its 8 images).
    """
    spectrum = spectra_of(records)
    canonical = {record[1]: record[2] for record in records}
    having: dict[str, list[int]] = defaultdict(list)
    for number, text in spectrum.items():
        having[text].append(number)
    out = []
    for c in sorted(set(canonical.values())):
        members = sorted(having[spectrum[c]])
        if min(canonical[m] for m in members) == c:
            out.append((c, members))
    return out


def block_of(families: list[tuple[int, list[int]]]) -> check.family_blocks.FamilyBlock:
    return check.family_blocks.FamilyBlock(
        np.array([c for c, _ in families], dtype=np.int64),
        np.array([m for _, members in families for m in members], dtype=np.int64),
        np.repeat(np.arange(len(families)), [len(members) for _, members in families]),
    )


def partner_of(config: Config, number: int) -> list[int]:
    """A molecule's trace in ``engine.trace_batch``'s codes, from the reference rays."""
    codes = {"absorbed": engine.ABSORBED_CODE, "reflected": engine.REFLECTED_CODE}
    return [
        codes[ray.result] if ray.result in codes else ray.exit - 1
        for ray in rays.trace_all(config, atoms_of(config, number))
    ]


def test_family_spectra_are_the_reference_spectra_of_the_canonical_molecules_images(whole_reference) -> None:
    """Every family of whole configurations: its spectral groups are the distinct spectra of the
    canonical molecule's 8 images, traced by rays.py, in transform order; no finding."""
    sizes, counts = set(), set()
    for config in [*SMALL, A3_B5]:
        records = whole_reference(config)
        spectrum = spectra_of(records)
        families = reference_families(records)
        result = check.CheckResult("groups")
        expected = check.family_blocks.family_spectra(config, block_of(families), result)
        assert result.count == 0
        rows, groups = [], []
        for c, _ in families:
            images = []
            for image in image_numbers_of(config, c):  # in TRANSFORM_NAMES' order
                if spectrum[image] not in images:
                    images.append(spectrum[image])
            rows += images
            groups.append(len(images))
        assert expected.groups.tolist() == groups, config.name
        assert [row.tobytes().decode("ascii") for row in expected.spectrum] == rows, config.name
        assert expected.partner.tolist() == [partner_of(config, c) for c, _ in families], config.name
        sizes |= {len(members) for _, members in families}
        counts |= set(groups)
    # families of one molecule and of several, spectra with 8 images and symmetric ones
    assert {1, 2} <= sizes and {1, 2, 4, 8} <= counts


def test_a_member_with_another_spectrum_is_named_with_both_spectra(
    a3_b5_stores: dict[str, Path], tmp_path: Path, whole_reference, capsys
) -> None:
    """Family 43's molecule 43 replaced by 44: the line gives 43's spectrum and 44's (rays.py's)."""
    _, _, lines = damaged_report(a3_b5_stores, tmp_path, COMPACT, compact_family_member_replaced, (), capsys)
    spectrum_44 = spectra_of(whole_reference(A3_B5))[44]
    assert spectrum_44 != FAMILY_43_SPECTRUM
    assert lines["groups.member"] == [
        f"molecule 44: spectrum (in the family of 43): stored '{FAMILY_43_SPECTRUM}' (molecule 43's), "
        f"computed '{spectrum_44}'"
    ]


def atoms_apart(config: Config, numbers: list[int]) -> int:
    """Brute force: the most atoms one molecule has where another has none, over every pair."""
    boards = [set(atoms_of(config, n)) for n in numbers]
    return max((len(a - b) for a, b in combinations(boards, 2)), default=0)


@pytest.mark.parametrize("cells", [check.family_blocks.MAX_APART_CELLS, 1, 300])
def test_max_atoms_apart_is_the_brute_force_count_over_every_pair(
    cells: int, whole_reference, monkeypatch
) -> None:
    """Every family of whole configurations, and large made-up ones (every molecule of a
    configuration in one family, runs of 3 and 17 molecules), whatever the batches:
    ``MAX_APART_CELLS`` as shipped (one batch per size), 1 (one family at a time) and 300
    (families of one size split among batches)."""
    monkeypatch.setattr(check.family_blocks, "MAX_APART_CELLS", cells)
    apart = set()
    for config in SMALL:
        families = reference_families(whole_reference(config))
        made_up = [(1, list(range(1, config.nb_mol + 1)))]
        made_up += [(s, list(range(s, min(s + 3, config.nb_mol + 1)))) for s in range(1, config.nb_mol, 3)]
        made_up += [(s, list(range(s, s + 17))) for s in range(1, config.nb_mol - 17, 17)]
        for chosen in families, made_up:
            got = check.family_blocks.max_atoms_apart(config, block_of(chosen))
            want = [atoms_apart(config, members) for _, members in chosen]
            assert got.tolist() == want, config.name
            apart |= set(want)
    assert apart == {0, 1, 2, 3}  # single molecules, and pairs sharing 2, 1 or no atom


def profile_of(record) -> tuple[int, ...]:
    return tuple(record[6 + rays.STAT_FIELDS.index(name)] for name in PROFILE_FIELDS)


def no_profiles(connection: sqlite3.Connection) -> None:
    assert connection.execute("DELETE FROM Profiles WHERE config = 'A3_B5'").rowcount > 0


@pytest.mark.parametrize("every", [False, True], ids=["sample", "all"])
def test_an_empty_profiles_table_names_every_molecule(
    a3_b5_stores: dict[str, Path], tmp_path: Path, whole_reference, every: bool, capsys
) -> None:
    """Profiles emptied: the count says 0 molecules, every molecule re-traced has no profile row
    (its profile as rays.py gives it), and with --all every profile met is named too (counted,
    none stored: one line each, after the molecules' lines, so only counted here)."""
    args = ("--all",) if every else ()
    _, found, lines = damaged_report(a3_b5_stores, tmp_path, COMPACT, no_profiles, args, capsys)
    records = whole_reference(A3_B5)
    differences = {c["name"]: c["differences"] for c in found["checks"]}
    expected = {"count.profiles", "engine.profile", "reference.profile"}
    assert raised_findings(found) == expected | ({"engine.profiles_counted"} if every else set())
    assert lines["count.profiles"] == ["molecules in Profiles: stored 0, computed 2,300"]
    assert differences["engine"] == 2300 + (len({profile_of(r) for r in records}) if every else 0)
    assert differences["reference"] == 1000
    assert lines["engine.profile"] == [
        f"molecule {r[1]:,}: Profiles {profile_of(r)}: stored no such row, computed a row, lowest <= {r[1]:,}"
        for r in records[: check.report.LISTED]
    ]


def test_a_molecule_left_out_of_its_family_is_named_with_what_it_should_be(
    a3_b5_stores: dict[str, Path], tmp_path: Path, whole_reference, capsys
) -> None:
    """Molecule 43 left out of family 43: each of its images is named, in the group of its spectrum
    (rays.py's), with what is stored and what should be."""
    _, _, lines = damaged_report(a3_b5_stores, tmp_path, COMPACT, compact_molecule_left_out, (), capsys)
    having = defaultdict(list)
    for number, text in spectra_of(whole_reference(A3_B5)).items():
        having[text].append(number)
    # each of the family's groups derives its molecules from 752 alone, by the transform taking the
    # canonical molecule 43 to the group's first molecule: that first one (43's image) is left out
    spectra = {text for text, numbers in having.items() if set(numbers) & set(image_numbers_of(A3_B5, 43))}
    assert len(spectra) == 4 and all(len(having[text]) == 2 for text in spectra)
    assert lines["engine.not_in_group"] == [
        f"molecule {n:,}: group of spectrum {text}: stored not among its molecules, computed a member"
        for n, text in sorted((min(having[text]), text) for text in spectra)
    ]


def test_a_profile_value_of_another_type_is_named_and_its_row_left_out(
    a3_b5_stores: dict[str, Path], tmp_path: Path, capsys
) -> None:
    """A text lowest and a real molecules count (the table is not STRICT): each value is named,
    its row left out of the count (check crashed on the text, and took 1.5 for 1)."""
    damaged: list[tuple] = []

    def text_and_real(connection: sqlite3.Connection) -> None:
        names = ", ".join(PROFILE_FIELDS)
        rows = connection.execute(
            f"SELECT rowid, {names}, molecules FROM Profiles WHERE config = 'A3_B5' ORDER BY rowid LIMIT 2"
        ).fetchall()
        for (rowid, *profile, molecules), change in zip(rows, ("lowest = 'one'", "molecules = 1.5")):
            connection.execute(f"UPDATE Profiles SET {change} WHERE rowid = ?", (rowid,))
            damaged.append((tuple(profile), molecules))

    _, found, lines = damaged_report(a3_b5_stores, tmp_path, COMPACT, text_and_real, (), capsys)
    (text, text_molecules), (real, real_molecules) = damaged
    assert {"count.malformed", "count.profiles", "engine.profile"} <= raised_findings(found)
    assert lines["count.malformed"] == [
        f"Profiles {text}: lowest: stored 'one', computed an integer",
        f"Profiles {real}: molecules: stored 1.5, computed an integer",
    ]
    counted = 2300 - text_molecules - real_molecules
    assert lines["count.profiles"] == [f"molecules in Profiles: stored {counted:,}, computed 2,300"]
    differences = {c["name"]: c["differences"] for c in found["checks"]}
    assert differences["engine"] == text_molecules + real_molecules  # their molecules: no profile row


def test_a_profile_split_in_two_rows_is_named_and_its_first_row_read_judges(
    a3_b5_stores: dict[str, Path], tmp_path: Path, capsys
) -> None:
    """A profile's row split in two (the molecules still add up): the repeat is named, and the first
    row read, whose lowest is one too high, names its lowest molecule."""
    split: list = []

    def split_in_two(connection: sqlite3.Connection) -> None:
        names = ", ".join(PROFILE_FIELDS)
        rowid, lowest, *profile = connection.execute(
            f"SELECT rowid, lowest, {names} FROM Profiles WHERE config = 'A3_B5' AND molecules >= 2 "
            "ORDER BY lowest LIMIT 1"
        ).fetchone()
        connection.execute(
            "UPDATE Profiles SET lowest = lowest + 1, molecules = molecules - 1 WHERE rowid = ?", (rowid,)
        )
        connection.execute(
            f"INSERT INTO Profiles (config, {names}, molecules, lowest) "
            f"SELECT config, {names}, 1, ? FROM Profiles WHERE rowid = ?",
            (lowest, rowid),
        )
        split.extend((lowest, tuple(profile)))

    _, found, lines = damaged_report(a3_b5_stores, tmp_path, COMPACT, split_in_two, (), capsys)
    lowest, profile = split
    assert raised_findings(found) == {"count.repeated", "engine.profile"} | (
        {"reference.profile"} if lowest in REFERENCE else set()
    )
    assert lines["count.repeated"] == [f"Profiles {profile}: stored 2 rows, computed 1 row"]
    assert lines["engine.profile"] == [
        f"molecule {lowest:,}: Profiles {profile}: stored lowest {lowest + 1:,}, "
        f"computed a row, lowest <= {lowest:,}"
    ]
