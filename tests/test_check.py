"""``bbcore check``: a clean file passes, and each kind of damage fails and is named.

The file is A3_B5 (2,300 molecules, 8 spectral groups), explored once for the
module; every damaged copy is made with plain ``sqlite3``, as someone
editing a file by hand (or a bad disk) would.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import time
from pathlib import Path

import numpy as np
import pytest

from bbcore import check, engine
from bbcore.cli import main
from bbcore.cli.check import LABELS
from bbcore.config import parse_config
from bbcore.explore import explore
from bbcore.store import COMPACT, FULL, MOLECULE_COLUMNS, close_database, open_database

A3_B5 = parse_config("A3_B5")
pytestmark = pytest.mark.usefixtures("remembered_reference")


@pytest.fixture
def clean(a3_b5_stores: dict[str, Path]) -> Path:
    return a3_b5_stores[FULL]


def damaged_copy(source: Path, path: Path, *statements: tuple[str, tuple]) -> Path:
    """A copy of ``source`` at ``path``, changed by the SQL given (each statement changes one row)."""
    shutil.copy(source, path)
    connection = sqlite3.connect(path)
    for statement, parameters in statements:
        assert connection.execute(statement, parameters).rowcount == 1
    connection.commit()
    connection.close()
    return path


@pytest.fixture
def damaged(clean: Path, tmp_path: Path):
    """A copy of the clean file, changed by the SQL given."""

    def make(*statements: tuple[str, tuple]) -> Path:
        return damaged_copy(clean, tmp_path / "copy.sqlite", *statements)

    return make


def run_check(path: Path, capsys, *args: str) -> tuple[int, str, str]:
    code = main(["--db", str(path), "check", "A3_B5", *args])
    out, err = capsys.readouterr()
    return code, out, err


def failed_checks(out: str) -> list[str]:
    """The names of the checks marked FAIL in the text report."""
    names = {label: name for name, label in LABELS.items()}
    return [names[line[7:30].strip()] for line in out.splitlines() if line.startswith("  FAIL")]


def stored(path: Path, column: str, number: int):
    connection = sqlite3.connect(path)
    value = connection.execute(
        f"SELECT {column} FROM Molecules WHERE config = 'A3_B5' AND number = ?", (number,)
    ).fetchone()[0]
    connection.close()
    return value


def test_a_clean_file_passes(clean: Path, capsys) -> None:
    code, out, err = run_check(clean, capsys)
    assert code == 0, out
    assert "FAIL" not in out and "A3_B5: every check agrees (seed 14)." in out
    size = check.megabytes(clean.stat().st_size)
    # the progress (a line per phase off a terminal) says what the integrity check reads
    assert err.splitlines() == [
        f"A3_B5 check: SQLite integrity_check of the whole file ({size}, every configuration) done",
        *(f"A3_B5 check: {LABELS[name]} done" for name in check.CHECKS[1:]),
    ]
    assert f"SQLite's integrity_check of the whole file ({size}, every configuration)" in out
    code, out, _ = run_check(clean, capsys, "--json")
    report = json.loads(out)
    assert code == 0 and report["ok"] is True
    assert [c["name"] for c in report["checks"]] == list(check.CHECKS)
    assert all(c["ok"] and c["differences"] == 0 for c in report["checks"])
    assert report["sample"] == 2300 and report["reference"] == 1000  # the default sample covers A3_B5


def test_one_changed_spectrum_fails_and_is_named(clean: Path, damaged, capsys) -> None:
    before = stored(clean, "spectrum", 1000)
    after = before.replace("@", "&", 1)
    path = damaged(("UPDATE Molecules SET spectrum = ? WHERE config = 'A3_B5' AND number = 1000", (after,)))
    code, out, _ = run_check(path, capsys)
    assert code == 1
    assert failed_checks(out) == ["families", "engine", "reference"]
    assert f"molecule 1,000: spectrum: stored '{after}', computed '{before}'" in out
    assert out.count("molecule 1,000: spectrum") == 3 and "A3_B5: 3 checks failed, 3 differences" in out


def test_one_deleted_molecule_fails_and_is_named(damaged, capsys) -> None:
    path = damaged(("DELETE FROM Molecules WHERE config = 'A3_B5' AND number = 1500", ()))
    code, out, _ = run_check(path, capsys)
    assert code == 1
    assert {"count", "families", "engine"} <= set(failed_checks(out))
    assert "molecule rows: stored 2,299, computed 2,300" in out
    assert "molecule 1,500: row: stored absent" in out


def test_the_reference_catches_an_engine_that_vouches_for_itself(damaged, monkeypatch, capsys) -> None:
    """An engine bug that also wrote the file: only the reference sample sees it."""
    path = damaged(
        ("UPDATE Molecules SET absorbed_max_turns = 9 WHERE config = 'A3_B5' AND number = 321", ())
    )
    molecules_of_numbers = engine.molecules_of_numbers

    def buggy(config, numbers):
        batch = molecules_of_numbers(config, numbers)
        batch.stats[batch.number == 321, 2] = 9  # absorbed_max_turns
        return batch

    monkeypatch.setattr(engine, "molecules_of_numbers", buggy)
    code, out, _ = run_check(path, capsys, "--reference", "2300")
    assert code == 1 and failed_checks(out) == ["reference"]
    assert "molecule 321: absorbed_max_turns: stored 9, computed 1" in out


def test_a_sample_is_seeded_and_sized(clean: Path, capsys) -> None:
    assert check.sample_numbers(A3_B5, 100, 7) == check.sample_numbers(A3_B5, 100, 7)
    assert check.sample_numbers(A3_B5, 100, 7) != check.sample_numbers(A3_B5, 100, 8)
    numbers = check.sample_numbers(A3_B5, 100, 7)
    assert len(set(numbers)) == 100 and numbers == sorted(numbers) and 1 <= numbers[0] <= numbers[-1] <= 2300
    big = parse_config("A6_B10")
    drawn = check.sample_numbers(big, 1000, 1)
    assert len(set(drawn)) == 1000 and drawn[-1] <= big.nb_mol
    code, out, _ = run_check(clean, capsys, "--sample", "300", "--reference", "20", "--seed", "3", "--json")
    report = json.loads(out)
    assert code == 0 and (report["sample"], report["reference"], report["seed"]) == (300, 20, 3)


def test_a_seed_names_the_same_sample_in_every_release() -> None:
    """``--seed`` names a sample for good ("the samples are the same every time", docs/cli.md): a
    check run again with the same seed, by this release or a later one, re-traces the same
    molecules.  Pinned on both sides of the switch between the two ways of drawing (without
    replacement when the sample is over a fiftieth of the molecules, else distinct integers:
    A3_B5's 2,300 switch between 46 and 47), one short of every molecule, and past 2^31."""
    a3_b5, a6_b10 = A3_B5, parse_config("A6_B10")
    pinned = {  # (config, size, seed): (first four, last two, sum)
        (a3_b5, 45, 1): ([46, 64, 81, 143], [2247, 2256], 49_865),
        (a3_b5, 46, 1): ([46, 64, 81, 143], [2247, 2256], 52_077),
        (a3_b5, 47, 1): ([46, 63, 79, 143], [2146, 2234], 49_940),
        (a3_b5, 2299, 1): ([1, 2, 3, 4], [2299, 2300], 2_646_150 - 704),
        (a6_b10, 1000, 1): (
            [2_451_865, 3_274_744, 4_445_596, 4_967_567],
            [1_189_957_373, 1_190_891_201],
            599_559_993_152,
        ),
    }
    for (config, size, seed), (first, last, total) in pinned.items():
        numbers = check.sample_numbers(config, size, seed)
        assert len(set(numbers)) == size and numbers == sorted(numbers), (config.name, size)
        assert (numbers[:4], numbers[-2:], sum(numbers)) == (first, last, total), (config.name, size)
    assert list(check.sample_numbers(a3_b5, 2300, 1)) == list(range(1, 2301))


def test_the_samples_progress_in_their_batches(clean: Path) -> None:
    """The engine sample re-traces (and reports) ``SAMPLE_BATCH`` molecules at a time, the reference
    sample (rays.py, slower) 50 at a time."""
    _, seen = progress_of(clean, sample=check.samples.SAMPLE_BATCH + 30, reference=120, integrity=False)
    phases = dict(groupby_names(seen))
    assert [done for _, done, _ in phases["engine"]] == [0, 2300]  # A3_B5 has fewer: all of them
    assert [done for _, done, _ in phases["reference"]] == [0, 50, 100, 120]


def test_check_retraces_the_seeds_samples_or_every_molecule_and_times_itself(
    clean: Path, monkeypatch
) -> None:
    """``check`` re-traces the seed's sample with the engine and a sample of it with rays.py (all
    molecules with ``everything``), and reports the seconds it took.  The two tracers are watched
    (called through) to see which molecules they get."""
    traced: dict[str, list[int]] = {"engine": [], "reference": []}
    engine_rows, reference_rows = check.samples.engine_rows, check.samples.reference_rows
    monkeypatch.setattr(
        check.run, "engine_rows", lambda c, n: traced["engine"].extend(n) or engine_rows(c, n)
    )
    monkeypatch.setattr(
        check.run, "reference_rows", lambda c, n: traced["reference"].extend(n) or reference_rows(c, n)
    )
    open_database(clean, create=False, write=False)
    try:
        before = time.monotonic()
        report = check.check(A3_B5, sample=300, reference=40, seed=3, integrity=False)
        took = time.monotonic() - before
        assert report.ok and (report.sample, report.reference, report.seed) == (300, 40, 3)
        assert traced["engine"] == list(check.sample_numbers(A3_B5, 300, 3))
        assert traced["reference"] == check.reference_sample(traced["engine"], 40, 3)
        assert 0 < report.seconds <= took
        for phase in traced.values():
            phase.clear()
        report = check.check(A3_B5, sample=300, everything=True, reference=40, seed=3, integrity=False)
        assert report.ok and report.sample == 2300 and traced["engine"] == list(range(1, 2301))
    finally:
        close_database()


def test_megabytes_are_whole_from_ten_on() -> None:
    """File sizes for a person: a tenth of a megabyte under 10 MB, whole megabytes from 10 MB on."""
    assert check.megabytes(600_000) == "0.6 MB"
    assert check.megabytes(1_350_000) == "1.4 MB"
    assert check.megabytes(9_999_999) == "10.0 MB"
    assert check.megabytes(10_000_000) == "10 MB"
    assert check.megabytes(11_500_000) == "12 MB"  # half to even: exactly 11.5
    assert check.megabytes(1_234_567_890) == "1,235 MB"


def test_partners_read_back_what_the_engine_writes() -> None:
    config = parse_config("A4_B6")
    atoms = np.array([[0, 7, 14, 35], [1, 2, 3, 4], [5, 10, 20, 30]])
    partner, _, _ = engine.trace_batch(config, atoms)
    spectra = [row.tobytes().decode() for row in engine.letters(partner)]
    parsed, valid = check.traces.partners(config, spectra + ["@" * 23 + "a", "ba" + spectra[0][2:], "x"])
    assert valid.tolist() == [True, True, True, False, False, False]
    assert (parsed[:3] == partner).all()


def test_what_cannot_be_checked_is_one_line(clean: Path, tmp_path: Path, capsys) -> None:
    assert main(["--db", str(clean), "check", "A4_B4"]) == 2
    assert "A4_B4 is not in this database" in capsys.readouterr().err
    partial = tmp_path / "partial.sqlite"
    shutil.copy(clean, partial)
    connection = sqlite3.connect(partial)
    connection.execute("UPDATE Configurations SET complete = 0")
    connection.commit()
    connection.close()
    assert main(["--db", str(partial), "check", "A3_B5"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not completely explored" in err
    with pytest.raises(SystemExit) as exit_status:  # argparse: one or the other
        main(["--db", str(clean), "check", "A3_B5", "--sample", "5", "--all"])
    assert exit_status.value.code == 2 and "not allowed with" in capsys.readouterr().err


def test_check_only_reads(clean: Path, tmp_path: Path, capsys) -> None:
    path = tmp_path / "copy.sqlite"
    shutil.copy(clean, path)
    before = path.read_bytes()
    assert main(["--db", str(path), "check", "A3_B5"]) == 0
    assert path.read_bytes() == before
    open_database(path)  # a later writer still opens it
    close_database()


@pytest.fixture
def compact(a3_b5_stores: dict[str, Path]) -> Path:
    """A3_B5 explored compact: no molecule rows, its 8 spectra and their 16 molecules, profiles."""
    return a3_b5_stores[COMPACT]


def damaged_compact(compact: Path, tmp_path: Path, *statements: tuple[str, tuple]) -> Path:
    """A copy of the compact file, changed by the SQL given."""
    return damaged_copy(compact, tmp_path / "compact-copy.sqlite", *statements)


def test_the_compact_samples_find_each_spectrums_molecules_from_its_family(
    clean: Path, compact: Path, tmp_path: Path
) -> None:
    """The compact judge derives a stored ambiguous spectrum's molecules from its family's row: the
    same sets as the full store's rows, only for the spectra asked; a family row that is malformed
    (its numbers text) or numbered as no molecule gives nothing (the groups phase names it) and the
    families after it in the same query are still read."""
    connection = sqlite3.connect(clean)
    expected: dict[str, set[int]] = {}
    for spectrum, number in connection.execute(
        "SELECT m.spectrum, m.number FROM Molecules m JOIN Spectrums s"
        " ON s.config = m.config AND s.spectrum = m.spectrum WHERE m.config = 'A3_B5'"
    ):
        expected.setdefault(spectrum, set()).add(number)
    family_of = dict(connection.execute("SELECT spectrum, canonical_number FROM Spectrums"))
    connection.close()
    assert len(expected) == 8 and all(len(n) >= 2 for n in expected.values())

    def groups_of(path: Path, spectra: list[str]) -> dict[str, set[int]]:
        open_database(path, create=False, write=False)
        try:
            return check.compact_judge.CompactJudge(A3_B5, everything=False).groups_of(spectra)
        finally:
            close_database()

    assert groups_of(compact, sorted(expected)) == expected
    some = sorted(expected)[::3]
    assert groups_of(compact, some) == {s: expected[s] for s in some}
    first = (
        sqlite3.connect(compact).execute("SELECT canonical_number FROM Families ORDER BY key").fetchone()[0]
    )
    kept = {s: n for s, n in expected.items() if family_of[s] != first}
    assert 0 < len(kept) < len(expected)
    for damage in ("numbers = 'text'", "canonical_number = 0"):
        path = damaged_copy(
            compact,
            tmp_path / "family.sqlite",
            (f"UPDATE Families SET {damage} WHERE config = 'A3_B5' AND canonical_number = ?", (first,)),
        )
        assert groups_of(path, sorted(expected)) == kept, damage
    inside = check.compact_judge._inside(A3_B5, np.array([-1, 0, 1, 2, 2299, 2300, 2301]))
    assert inside.tolist() == [1, 2, 2299, 2300]


def plain_partners(spectrum: str, positions: int) -> list[int] | None:
    """A spectrum's partner codes by the rule, or None when it is not well formed: 4W characters,
    ``@``, ``&`` and lowercase letters each at two positions, in order of first appearance."""
    if len(spectrum) != positions:
        return None
    letters_seen: list[str] = []
    partner: list[int] = []
    for p, c in enumerate(spectrum):
        if c == "@" or c == "&":
            partner.append({"@": engine.ABSORBED_CODE, "&": engine.REFLECTED_CODE}[c])
        elif c in "abcdefghijklmnopqrstuvwxyz" and spectrum.count(c) == 2:
            if c not in letters_seen:
                letters_seen.append(c)
            partner.append(next(q for q, d in enumerate(spectrum) if d == c and q != p))
        else:
            return None
    if letters_seen != [chr(ord("a") + i) for i in range(len(letters_seen))]:
        return None
    return partner


def test_partners_reads_every_well_formed_spectrum_and_refuses_the_others() -> None:
    """``check.traces.partners`` (the spectra the check reads, as partner codes) against the rule read
    plainly, on one batch: the edges of the alphabet (all 26 letters), a letter once or three
    times, out of order, in upper case (beside a good row: rows must not mix), a stray character,
    a wrong length, a non-ASCII one."""
    config = parse_config("A1_B13")
    n = config.positions  # 52
    alphabet = "abcdefghijklmnopqrstuvwxyz"
    spectra = [
        alphabet + alphabet,  # all 26 letters, "z" included
        "ab" + "@" * (n - 4) + "ab",
        "AB" + "@" * (n - 4) + "AB",  # upper case, right after a good row
        "ab" + "&" * (n - 4) + "ba",
        "ba" + "@" * (n - 4) + "ab",  # not normalised
        "a" + "@" * (n - 1),  # a letter once
        "aa" + "@" * (n - 3) + "a",  # three times
        "#" * n,
        "@" * n,
        "&" * n,
        "@" * (n - 1),  # one short
        "é" + "@" * (n - 1),
        alphabet[::-1] + alphabet[::-1],
    ]
    partner, valid = check.traces.partners(config, spectra)
    expected = [plain_partners(s, n) for s in spectra]
    assert valid.tolist() == [e is not None for e in expected]
    assert [True, True, False, True, False, False, False, False, True, True, False, False, False] == (
        valid.tolist()
    )
    for row, want in zip(partner.tolist(), expected):
        if want is not None:
            assert row == want


def test_a_missing_profile_that_sorts_last_is_named(compact: Path, tmp_path: Path, capsys) -> None:
    """The judge finds a re-traced profile among the stored ones by its key: the one that sorts
    after every other, deleted, is named "no such row" for each of its molecules (a lookup past
    the last key is the edge)."""
    from bbcore.compact.trace import PROFILE_FIELDS

    connection = sqlite3.connect(compact)
    rows = connection.execute(f"SELECT rowid, {', '.join(PROFILE_FIELDS)} FROM Profiles").fetchall()
    connection.close()
    keys = check.compact_judge._profile_keys(np.array([row[1:] for row in rows], dtype=np.int64))
    last = max(range(len(rows)), key=lambda i: keys[i].tobytes())
    path = damaged_compact(compact, tmp_path, ("DELETE FROM Profiles WHERE rowid = ?", (rows[last][0],)))
    code, report = compact_report(path, capsys, "--all")
    assert code == 1
    lines = [d for d in failures(report)["engine"] if d["what"] == f"Profiles {tuple(rows[last][1:])}"]
    assert lines and all(d["stored"] == "no such row" for d in lines)


def compact_report(path: Path, capsys, *args: str) -> tuple[int, dict]:
    code = main(["--db", str(path), "check", "A3_B5", "--json", *args])
    return code, json.loads(capsys.readouterr().out)


def failures(report: dict) -> dict[str, list[dict]]:
    return {c["name"]: c["first"] for c in report["checks"] if not c["ok"]}


def test_a_clean_compact_store_passes(compact: Path, capsys) -> None:
    for args in ((), ("--all",)):
        code, report = compact_report(compact, capsys, *args)
        assert code == 0 and report["ok"], report
        assert [c["name"] for c in report["checks"]] == list(check.COMPACT_CHECKS)
    assert "every profile counted" in report["checks"][4]["covered"]
    assert "2 families (4 molecules re-traced), 8 ambiguous spectra" in report["checks"][3]["covered"]


def progress_of(path: Path, config=A3_B5, **options) -> tuple[check.CheckReport, list[tuple[str, int, int]]]:
    """A check run in this process (``options``: check's own), every progress report noted."""
    seen: list[tuple[str, int, int]] = []
    open_database(path, create=False, write=False)
    try:
        report = check.check(
            config, progress=lambda name, done, total: seen.append((name, done, total)), **options
        )
    finally:
        close_database()
    return report, seen


@pytest.mark.parametrize("store", ["full", "compact"])
def test_every_phase_reports_its_progress(clean: Path, compact: Path, store: str) -> None:
    """Each phase, the integrity check included, starts at 0 and ends at its total, never going back."""
    report, seen = progress_of(clean if store == "full" else compact)
    assert report.ok
    names = check.CHECKS if store == "full" else check.COMPACT_CHECKS
    assert [name for name, _ in groupby_names(seen)] == list(names)
    for name, reports in groupby_names(seen):
        dones = [done for _, done, _ in reports]
        totals = {total for _, _, total in reports}
        assert dones[0] == 0 and len(totals) == 1 and dones[-1] == totals.pop(), name
        assert dones == sorted(dones), name


def test_the_integrity_progress_follows_the_pages(clean: Path, monkeypatch) -> None:
    """SQLite's integrity_check, every tick of its progress handler reported: the bar moves with the
    instructions run (about ``INTEGRITY_OPS_PER_PAGE`` a page), from its first tick on, and
    reaches the file's pages only when the statement is over."""
    monkeypatch.setattr(check.integrity, "METER_INTERVAL", 0.0)
    connection = sqlite3.connect(clean)
    (pages,) = connection.execute("PRAGMA page_count").fetchone()
    connection.close()
    _, seen = progress_of(clean)
    integrity = dict(groupby_names(seen))["integrity"]
    assert {total for _, _, total in integrity} == {pages}
    dones = [done for _, done, _ in integrity]
    ticks = dones[1:-1]
    assert dones[0] == 0 and dones[-1] == pages and len(ticks) >= 5, dones
    # the pages a tick stands for
    per_tick = check.integrity.OPS_PER_TICK / check.integrity.INTEGRITY_OPS_PER_PAGE
    assert all(abs(done - k * per_tick) <= 1 for k, done in enumerate(ticks[:3], start=1)), dones
    assert ticks == sorted(ticks) and ticks[-1] < pages, dones


def test_the_integrity_progress_reports_at_most_once_an_interval(clean: Path, monkeypatch) -> None:
    """The meter throttles its reports: after one, the next waits ``METER_INTERVAL`` seconds.  Set
    to the clock's reading now, the first tick reports (its last report is at 0) and no other
    does, the check being far shorter than that."""
    monkeypatch.setattr(check.integrity, "METER_INTERVAL", time.monotonic())
    _, seen = progress_of(clean)
    dones = [done for _, done, _ in dict(groupby_names(seen))["integrity"]]
    per_tick = check.integrity.OPS_PER_TICK / check.integrity.INTEGRITY_OPS_PER_PAGE
    assert len(dones) == 3 and dones[0] == 0 and abs(dones[1] - per_tick) <= 1, dones


def test_a_result_counts_every_difference_and_lists_the_first() -> None:
    """``LISTED`` differences are kept for the report, every one is counted, each finding named."""
    result = check.CheckResult("groups")
    for n in range(check.report.LISTED + 5):
        finding = "groups.nb_mol" if n % 2 else "groups.transform"
        result.add(check.Difference(finding, None, f"spectrum {n}", "1", "2"))
    assert result.count == check.report.LISTED + 5 and not result.ok
    assert [d.what for d in result.differences] == [f"spectrum {n}" for n in range(check.report.LISTED)]
    assert result.findings == {"groups.nb_mol", "groups.transform"}


def test_a_finding_of_another_phase_or_none_is_refused_by_name() -> None:
    """A programming error, said plainly: a difference added to the wrong phase, or whose finding
    is not registered."""
    with pytest.raises(ValueError, match=r"^families\.transform is not a finding of groups$"):
        check.CheckResult("groups").add(check.Difference("families.transform", 3, "transform", "a", "b"))
    with pytest.raises(ValueError, match=r"^unregistered finding 'groups\.colour'$"):
        check.Difference("groups.colour", None, "colour", "a", "b")


def test_the_json_summary_says_what_was_checked() -> None:
    """``--json``'s object: the configuration, its molecules, the run's figures, seconds to the
    millisecond, and each check."""
    config = parse_config("A4_B8")
    report = check.CheckReport(config, [check.CheckResult("count", "635,376 molecules")], 7, 100, 10, 1.23456)
    assert report.summary() == {
        "config": "A4_B8",
        "ok": True,
        "molecules": 635_376,
        "seed": 7,
        "sample": 100,
        "reference": 10,
        "seconds": 1.235,
        "checks": [
            {
                "name": "count",
                "ok": True,
                "covered": "635,376 molecules",
                "differences": 0,
                "findings": [],
                "first": [],
            }
        ],
    }


def groupby_names(seen: list[tuple[str, int, int]]) -> list[tuple[str, list[tuple[str, int, int]]]]:
    """The progress reports, phase by phase, in order."""
    phases: list[tuple[str, list]] = []
    for report in seen:
        if not phases or phases[-1][0] != report[0]:
            phases.append((report[0], []))
        phases[-1][1].append(report)
    return phases


def test_blocks_of_one_row_give_the_same_answers(
    clean: Path, compact: Path, tmp_path: Path, monkeypatch, capsys
):
    """Every stream cut at every row (a group, a family, ordinals across blocks) agrees and finds damage."""
    monkeypatch.setattr(check.blocks, "BLOCK", 1)
    monkeypatch.setattr(check.full_groups, "FAMILY_BATCH", 7)
    for path in (clean, compact):
        report, _ = progress_of(path)
        assert report.ok, [d.line() for r in report.results for d in r.differences]
    assert "8 ambiguous spectra" in report.results[3].covered
    spectrum = "@&a&@@&@&b@cac@b&@&@"
    for path, statement, named in (
        (
            clean,
            f"UPDATE Spectrums SET nb_mol = 3 WHERE config = 'A3_B5' AND spectrum = '{spectrum}'",
            f"spectrum {spectrum}: nb_mol: stored 3, computed 2",
        ),
        (
            compact,
            "UPDATE Families SET nb_mol = 3 WHERE config = 'A3_B5' AND canonical_number = 43",
            "family 43: nb_mol: stored 3, computed 2",
        ),
        (
            compact,
            "UPDATE Families SET size_spectra_before = 5 WHERE config = 'A3_B5' AND canonical_number = 45",
            "family 45: size_spectra_before: stored 5, computed 4 (its size's next)",
        ),
        (
            compact,
            "UPDATE Families SET spectra_before = 3 WHERE config = 'A3_B5' AND canonical_number = 45",
            "family 45: spectra_before: stored 3, computed 4",
        ),
    ):
        copy = damaged_copy(path, tmp_path / f"damaged-{path.stem}.sqlite", (statement, ()))
        report, _ = progress_of(copy)
        assert [d.line() for d in report.results[3].differences if d.line().startswith(named)], named


def test_a_compact_check_re_traces_every_family(tmp_path: Path) -> None:
    """A4_B6 compact (100 families of 4 sizes, cut in blocks of 7): every Families row the writing
    stage stored, its columns and ordinals, is what the check computes from its molecules, re-traced."""
    path = tmp_path / "a4b6.sqlite"
    config = parse_config("A4_B6")
    explore(config, path, workers=1, store="compact")
    close_database()
    connection = sqlite3.connect(path)
    families, spectra, sizes = connection.execute(
        "SELECT COUNT(*), SUM(spectra), COUNT(DISTINCT nb_mol) FROM Families WHERE config = 'A4_B6'"
    ).fetchone()
    connection.close()
    assert families > 7 and sizes > 1  # several blocks, several sizes to follow across them
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(check.blocks, "BLOCK", 7)
        report, _ = progress_of(path, config)
    assert report.ok, [d.line() for r in report.results for d in r.differences]
    assert report.results[3].covered.startswith(f"{families:,} families (")
    assert f"{spectra:,} ambiguous spectra" in report.results[3].covered


def test_the_samples_find_their_families_without_the_key_index(compact: Path, tmp_path: Path, capsys) -> None:
    """The key index dropped (named by the groups phase): a sampled molecule left out of its family
    is still found, the families read by a scan instead."""
    path = damaged_compact(
        compact,
        tmp_path,
        (
            "UPDATE Families SET numbers = ? WHERE config = 'A3_B5' AND canonical_number = 43",
            ((752).to_bytes(4, "little"),),
        ),
    )
    connection = sqlite3.connect(path)
    connection.execute('DROP INDEX "Families_A3_B5_key"')
    connection.commit()
    connection.close()
    code, report = compact_report(path, capsys)
    assert code == 1
    found = {name for c in report["checks"] for name in c["findings"]}
    assert {"groups.index", "engine.not_in_group", "reference.not_in_group"} <= found
    lines = [check.Difference(**d).line() for d in failures(report)["engine"]]
    assert "molecule 43: group of spectrum @&a&@@&@&b@cac@b&@&@: stored not among its molecules" in " ".join(
        lines
    )


def test_a_clean_file_whose_groups_do_not_start_at_their_lowest_number_passes(
    explored: Path, tmp_path, capsys
):
    """A4_B4 (the shared small file): a spectral group's first molecule is its smallest
    (canonical number, number), which in 26 of its 66 groups is not its lowest number."""
    path = tmp_path / "small.sqlite"
    shutil.copy(explored, path)
    connection = sqlite3.connect(path)
    (later,) = connection.execute(
        "SELECT COUNT(*) FROM (SELECT spectrum, MIN(number) AS lowest FROM Molecules WHERE config = 'A4_B4' "
        "GROUP BY spectrum HAVING COUNT(*) > 1) AS g WHERE lowest != (SELECT number FROM Molecules "
        "WHERE config = 'A4_B4' AND spectrum = g.spectrum ORDER BY canonical_number, number LIMIT 1)"
    ).fetchone()
    connection.close()
    assert later == 26
    code = main(["--db", str(path), "check", "A4_B4"])
    out, err = capsys.readouterr()
    assert code == 0, out + err


def test_molecules_moved_to_a_group_of_another_batch_are_named_once(clean: Path, tmp_path: Path, monkeypatch):
    """The families phase reads the molecules a batch of canonical numbers at a time (7 here):
    a row stored under another batch's canonical number is named there (the first and the last
    molecule included), not also as missing from its own group; a stray and a deleted member
    in the same batches are named too."""
    monkeypatch.setattr(check.full_groups, "FAMILY_BATCH", 7)
    columns = ", ".join(MOLECULE_COLUMNS)
    stray = {"number": "0", "canonical_number": "150", "spectrum": "'stray'"}
    copied = ", ".join(stray.get(c, c) for c in MOLECULE_COLUMNS)
    moved = [
        (f"UPDATE Molecules SET canonical_number = 150 WHERE config = 'A3_B5' AND number = {n}", ())
        for n in (1, 1201, 2300)
    ]
    path = damaged_copy(
        clean,
        tmp_path / "moved.sqlite",
        *moved,
        (
            f"INSERT INTO Molecules ({columns}) SELECT {copied} FROM Molecules "
            "WHERE config = 'A3_B5' AND number = 1500",
            (),
        ),
        ("DELETE FROM Molecules WHERE config = 'A3_B5' AND number = 1365", ()),
    )
    report, _ = progress_of(path)
    families = next(result for result in report.results if result.name == "families")
    assert sorted(d.line() for d in families.differences) == sorted(
        [
            "molecule 1: canonical_number: stored 150, computed 1",
            "molecule 1,201: canonical_number: stored 150, computed 499",
            "molecule 2,300: canonical_number: stored 150, computed 1",
            "molecule 0: number: stored a row, computed none: numbers go from 1 to 2,300",
            "molecule 1,365: row: stored absent, computed a member of the group of 499",
        ]
    )


@pytest.mark.parametrize("store", [FULL, COMPACT])
def test_a_configuration_without_ambiguous_spectra_is_checked(store: str, tmp_path: Path, capsys) -> None:
    """A1_B3 (9 molecules, every spectrum its own): no spectral group stored, none computed, and
    the check passes; a Spectrums row added there (the full store) is named, not a crash."""
    path = tmp_path / "a1b3.sqlite"
    explore(parse_config("A1_B3"), path, workers=1, store=store)
    close_database()
    code = main(["--db", str(path), "check", "A1_B3", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["ok"], report
    groups = next(c for c in report["checks"] if c["name"] == "groups")
    assert groups["covered"].startswith("0 ambiguous spectra" if store == FULL else "0 families (0 molecules")
    if store == COMPACT:
        return
    connection = sqlite3.connect(path)
    (spectrum,) = connection.execute("SELECT spectrum FROM Molecules WHERE number = 9").fetchone()
    connection.execute("INSERT INTO Spectrums VALUES ('A1_B3', ?, 2, 'id', 9)", (spectrum,))
    connection.commit()
    connection.close()
    code = main(["--db", str(path), "check", "A1_B3"])
    out = capsys.readouterr().out
    assert code == 1 and failed_checks(out) == ["groups"]
    assert f"spectrum {spectrum}: stored nb_mol 2, computed fewer than 2 molecules have it" in out


def test_the_groups_progress_counts_the_spectrums_rows_read(clean: Path, tmp_path: Path, monkeypatch) -> None:
    """The spectral groups' bar counts the Spectrums rows read, a report every BLOCK spectra; a
    row no group has (the first, by spectrum) counts as read too."""
    monkeypatch.setattr(check.blocks, "BLOCK", 2)
    _, seen = progress_of(clean)
    assert [(done, total) for _, done, total in dict(groupby_names(seen))["groups"]] == [
        (0, 8),
        *((done, 8) for done in (2, 4, 6, 8, 8)),
    ]
    monkeypatch.setattr(check.blocks, "BLOCK", 1)
    path = damaged_copy(
        clean, tmp_path / "extra.sqlite", ("INSERT INTO Spectrums VALUES ('A3_B5', '!', 2, 'id', 1)", ())
    )
    report, seen = progress_of(path)
    assert [d.line() for d in report.results[3].differences] == [
        "spectrum !: stored nb_mol 2, computed fewer than 2 molecules have it"
    ]
    assert [(done, total) for _, done, total in dict(groupby_names(seen))["groups"]] == [
        (done, 9) for done in (0, *range(1, 10), 9)
    ]


def test_the_families_progress_counts_the_rows_read(clean: Path, monkeypatch) -> None:
    """The families' bar counts the molecule rows read, a batch of canonical numbers at a time, and
    reaches every molecule only at the end."""
    monkeypatch.setattr(check.full_groups, "FAMILY_BATCH", 500)
    connection = sqlite3.connect(clean)
    read = [
        connection.execute(
            "SELECT COUNT(*) FROM Molecules WHERE config = 'A3_B5' AND canonical_number < ?", (stop,)
        ).fetchone()[0]
        for stop in (501, 1001, 1501, 2001, 2301)
    ]
    connection.close()
    assert 0 < read[0] < read[1] < 2300 and read[-1] == 2300
    _, seen = progress_of(clean)
    dones = [done for _, done, _ in dict(groupby_names(seen))["families"]]
    assert dones == [0, *(min(n, 2299) for n in read), 2300]


def test_a_row_moved_to_the_last_number_is_read_in_a_batch_of_its_own(
    clean: Path, tmp_path: Path, monkeypatch
) -> None:
    """Batches of 2,299 canonical numbers: the second is the last number alone (no molecule's
    canonical one); a row stored under it is read there and named."""
    monkeypatch.setattr(check.full_groups, "FAMILY_BATCH", 2299)
    canonical = stored(clean, "canonical_number", 5)
    path = damaged_copy(
        clean,
        tmp_path / "last.sqlite",
        ("UPDATE Molecules SET canonical_number = 2300 WHERE config = 'A3_B5' AND number = 5", ()),
    )
    report, _ = progress_of(path)
    assert [d.line() for d in report.results[4].differences] == [
        f"molecule 5: canonical_number: stored 2,300, computed {canonical}"
    ]
