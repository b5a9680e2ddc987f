"""The fast numpy engine equals the reference, molecule for molecule."""

from __future__ import annotations

import importlib
import importlib.util
import math
import random
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bbcore import engine, rays
from bbcore.config import Config, parse_config
from bbcore.geometry import TRANSFORM_NAMES, transform_atoms
from bbcore.numbering import atoms_of, atoms_of_numbers, number_of

WHOLE_CONFIGS = [
    "A2_B4",
    "A3_B4",
    "A4_B4",
    "A3_B5",
    pytest.param("A4_B5", marks=pytest.mark.slow),
]


def mismatches(rows: list[tuple], expected: list[tuple]) -> list[tuple]:
    """(engine row, reference record) pairs that differ, for a readable failure."""
    return [(row, record) for row, record in zip(rows, expected) if row != record]


def test_worked_example_engine(worked_example, explore):
    """A2_B4 numbers 2 and 119: every field of the spec's record, from the engine."""
    rows = {row[1]: row for row in explore(Config(2, 4), 1, 121)}
    for number, record in worked_example.items():
        assert rows[number] == record


@pytest.mark.parametrize("name", WHOLE_CONFIGS)
def test_engine_equals_reference_on_every_molecule(name, whole_reference, explore):
    """Every molecule exactly once, each field equal to the reference record."""
    config = parse_config(name)
    rows = sorted(explore(config, 1, config.nb_mol + 1), key=lambda row: row[1])
    assert [row[1] for row in rows] == list(range(1, config.nb_mol + 1))
    bad = mismatches(rows, list(whole_reference(config)))
    assert not bad, f"{len(bad)} molecules differ, first: {bad[:3]}"


def test_ranges_split_anywhere_give_the_same_rows(explore):
    """Cutting 1..nb_mol into arbitrary ranges gives the same rows, each molecule once."""
    config = Config(4, 4)
    whole = explore(config, 1, config.nb_mol + 1)
    cuts = [1, 2, 7, 100, 101, 555, 1200, config.nb_mol + 1]
    pieces = [row for a, b in zip(cuts, cuts[1:]) for row in explore(config, a, b)]
    assert pieces == whole


def test_range_rows_are_the_groups_of_its_canonical_molecules(whole_reference, explore):
    """A range holds exactly the groups whose canonical molecule is in it, ordered."""
    config = Config(3, 4)
    rows = explore(config, 40, 90)
    assert rows == sorted(rows, key=lambda row: (row[2], row[1]))
    expected = sorted((record[2], record[1]) for record in whole_reference(config) if 40 <= record[2] < 90)
    assert [(row[2], row[1]) for row in rows] == expected


def test_range_without_canonical_molecule_is_empty():
    """119 and 120 of A2_B4 are images of smaller molecules: nothing to compute."""
    batch = engine.explore_range(Config(2, 4), 119, 121)
    assert len(batch) == 0
    assert list(batch.rows()) == []


def group_of(config: Config, number: int) -> tuple[int, list[int]]:
    """The canonical number and the sorted numbers of a molecule's enantiomer group."""
    atoms = atoms_of(config, number)
    numbers = sorted({number_of(config, transform_atoms(config, atoms, t)) for t in TRANSFORM_NAMES})
    return numbers[0], numbers


@pytest.mark.parametrize("name, seed", [("A4_B8", 48), ("A5_B10", 510)])
def test_engine_groups_on_random_molecules(name, seed, reference, explore):
    """Random molecules of large configurations: their whole group from a range around it."""
    config = parse_config(name)
    rng = random.Random(seed)
    checked = 0
    for _ in range(25):
        canonical, group = group_of(config, rng.randint(1, config.nb_mol))
        start = max(1, canonical - rng.randint(0, 3))
        stop = min(config.nb_mol + 1, canonical + 1 + rng.randint(0, 3))
        rows = explore(config, start, stop)
        mine = [row for row in rows if row[2] == canonical]
        assert [row[1] for row in mine] == group
        for row in mine:
            assert row == reference(config, row[1])
        checked += len(mine)
    assert checked >= 100


def assert_traced_like_reference(config: Config, atoms: np.ndarray) -> None:
    """trace_batch (and letters) agree ray by ray with the reference on every molecule."""
    partner, length, turns = engine.trace_batch(config, atoms)
    spectra = [bytes(row).decode() for row in engine.letters(partner)]
    codes = {"absorbed": engine.ABSORBED_CODE, "reflected": engine.REFLECTED_CODE}
    for k, molecule in enumerate(atoms.tolist()):
        traced = rays.trace_all(config, molecule)
        assert partner[k].tolist() == [codes.get(r.result, (r.exit or 0) - 1) for r in traced]
        assert length[k].tolist() == [r.length for r in traced], molecule
        assert turns[k].tolist() == [r.turns for r in traced], molecule
        assert spectra[k] == rays.spectrum_of_rays(traced), molecule


@pytest.mark.parametrize("name, seed", [("A4_B8", 8), ("A5_B10", 10)])
def test_trace_batch_on_random_molecules(name, seed):
    """200 random molecules: every ray's exit, length and turns equal the reference."""
    config = parse_config(name)
    rng = np.random.default_rng(seed)
    atoms = np.sort(
        np.array([rng.choice(config.cells, config.atoms, replace=False) for _ in range(200)]), axis=1
    )
    assert_traced_like_reference(config, atoms)


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_trace_batch_on_random_configurations(random_molecules, data):
    """Any width 2..10 and any number of atoms: every ray equals the reference."""
    config, atoms = data.draw(random_molecules)
    assert_traced_like_reference(config, np.array([atoms]))


NUMBERED = 2**62
"""Numbers the engine's numbering handles (int64)."""


@st.composite
def numbered_molecules(draw) -> tuple[Config, int]:
    """A random configuration of any width 2..13 whose numbers fit the engine, and a molecule number."""
    width = draw(st.integers(2, 13))
    # The numbering's binomial table holds C(m, k) for k up to N: all must fit.
    cells = width * width
    sizes = [n for n in range(1, cells) if math.comb(cells, min(n, cells // 2)) < NUMBERED]
    config = Config(draw(st.sampled_from(sizes)), width)
    return config, draw(st.integers(1, config.nb_mol))


@settings(max_examples=60, deadline=None)
@given(drawn=numbered_molecules())
def test_engine_rows_on_random_configurations_up_to_w13(reference, drawn):
    """The engine's whole row of a molecule (canonical number, transform, board, spectrum, the
    17 statistics) equals the reference record, for widths up to 13."""
    config, number = drawn
    batch = engine.molecules_of_numbers(config, np.array([number]))
    assert batch.rows() == [reference(config, number)]


@pytest.mark.parametrize("name", ["A3_B4", "A4_B4", "A3_B5", "A2_B6"])
def test_ray_profile_equals_the_reference_statistics(name):
    """Every molecule: the 9 profile statistics of a compact store equal the reference's."""
    from bbcore.compact.trace import PROFILE_FIELDS

    config = parse_config(name)
    atoms = np.array([atoms_of(config, n) for n in range(1, config.nb_mol + 1)], dtype=np.int64)
    profile = engine.ray_profile(*engine.trace_batch(config, atoms))
    expected = [
        [rays.statistics_of_rays(rays.trace_all(config, molecule))[field] for field in PROFILE_FIELDS]
        for molecule in atoms.tolist()
    ]
    assert profile.tolist() == expected


def test_small_batches_run_the_kernels_as_plain_python_with_the_same_results(monkeypatch):
    """Up to ``PLAIN_AT_MOST`` molecules, a kernel not compiled yet runs as plain Python (a stored
    spectrum's family decoded without numba's start): every molecule of A3_B5's enantiomer groups,
    traced and imaged, equals the compiled kernels' answer."""
    config = Config(3, 5)
    atoms, own = engine.canonical_molecules(config, 1, config.nb_mol + 1)

    def batches() -> list[engine.EnantiomerBatch]:
        cuts = range(0, len(own), 16)
        return [engine.groups_of_canonicals(config, atoms[i : i + 16], own[i : i + 16]) for i in cuts]

    compiled = batches()
    monkeypatch.setattr(engine, "_COMPILED", {})
    plain = batches()
    trace = engine.kernel_identity(engine._trace_kernel)
    enantiomers = engine.kernel_identity(engine._enantiomer_kernel)
    assert trace not in engine._COMPILED and enantiomers not in engine._COMPILED
    for fast, slow in zip(compiled, plain):
        for name in ("number", "canonical_number", "transform", "molecule", "spectrum", "stats"):
            assert np.array_equal(getattr(fast, name), getattr(slow, name)), name
    engine.groups_of_canonicals(config, atoms[:100], own[:100])  # above the bound: compiled
    assert trace in engine._COMPILED


def test_kernels_of_the_same_name_in_two_modules_are_compiled_apart(tmp_path, monkeypatch):
    """``compiled`` knows a kernel by its module and qualified name, not its bare name: two
    modules' ``_scaled_kernel`` (one doubling, one tripling) each run their own code."""
    modules = {}
    for name, factor in (("doubling", 2), ("tripling", 3)):
        path = tmp_path / f"{name}.py"
        path.write_text(f"def _scaled_kernel(values):\n    return values * {factor}\n", encoding="utf-8")
        spec = importlib.util.spec_from_file_location(name, path)
        modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(modules[name])
    doubling, tripling = modules["doubling"], modules["tripling"]
    monkeypatch.setattr(engine, "_COMPILED", {})
    values = np.arange(5, dtype=np.int64)
    assert engine.compiled(doubling._scaled_kernel)(values).tolist() == [0, 2, 4, 6, 8]
    assert engine.compiled(tripling._scaled_kernel)(values).tolist() == [0, 3, 6, 9, 12]
    assert set(engine._COMPILED) == {("doubling", "_scaled_kernel"), ("tripling", "_scaled_kernel")}


def reference_families(records) -> dict[int, tuple]:
    """The families of ambiguous spectra from the reference records, by canonical number:
    ``(molecules a spectrum, spectra, most atoms differing, first spectrum's molecules, spectrum)``.

    A spectral group is the molecules of one spectrum (two or more); its first molecule has
    the smallest canonical number, then number; a family's first group is its canonical
    molecule's own (transform ``id``), its other spectra the groups that start with an image
    of that molecule."""
    by_spectrum: dict[str, list] = {}
    for record in records:
        by_spectrum.setdefault(record[4], []).append(record)
    groups = [sorted(rows, key=lambda r: r[1]) for rows in by_spectrum.values() if len(rows) >= 2]
    heads = [min(group, key=lambda r: (r[2], r[1])) for group in groups]
    spectra = Counter(head[2] for head in heads)
    families = {}
    for group, head in zip(groups, heads):
        if head[5] == "id":
            boards = [{cell for cell, mark in enumerate(r[3]) if mark == "O"} for r in group]
            most = max(len(a - b) for a in boards for b in boards)
            families[head[2]] = (len(group), spectra[head[2]], most, [r[1] for r in group], head[4])
    return families


def engine_families(
    config: Config,
    canonicals: np.ndarray,
    runs: np.ndarray,
    insertion_rows: int = engine.INSERTION_ROWS,
    lowest: np.ndarray | None = None,
) -> dict[int, tuple]:
    """``engine.families_of_runs`` in the shape of ``reference_families`` (by the asymmetric
    kernel when given ``lowest``)."""
    atoms = atoms_of_numbers(config, canonicals)
    found = engine.families_of_runs(config, atoms, canonicals, runs, insertion_rows, lowest)
    starts = np.r_[0, found.ends][:-1]
    return {
        int(canonicals[row]): (int(size), int(spectra), int(most), found.members[a:b].tolist(), text)
        for row, size, spectra, most, a, b, text in zip(
            found.row,
            found.size,
            found.spectra,
            found.max_diff,
            starts,
            found.ends,
            [bytes(chars).decode("ascii") for chars in found.spectrum],
            strict=True,
        )
    }


@pytest.mark.parametrize("name", ["A2_B4", "A3_B4", "A4_B4", "A3_B5", "A2_B6"])
@pytest.mark.parametrize("insertion_rows", [0, 7, 8, engine.INSERTION_ROWS, 10**9])
def test_families_of_runs_equal_the_reference_groups(name, insertion_rows, whole_reference):
    """The compact grouping's lean kernel finds every family of the reference, with its size,
    spectra, atoms differing and first spectrum's molecules: every canonical molecule in one
    run, and in the runs of equal keys that a compact run gives it; each run's images sorted
    by numba's argsort (0), by insertion (10^9: even the whole configuration's), or each way
    by their count (a lone canonical molecule has up to 8 images)."""
    config = parse_config(name)
    records = whole_reference(config)
    expected = reference_families(records)
    canonicals = np.array([r[1] for r in records if r[1] == r[2]], dtype=np.int64)
    assert engine_families(config, canonicals, np.array([0, len(canonicals)]), insertion_rows) == expected
    atoms = atoms_of_numbers(config, canonicals)
    keys = engine.spectrum_keys(config, atoms, engine.trace_batch(config, atoms)[0]).keys
    order = np.argsort(keys, kind="stable")
    runs = np.flatnonzero(np.r_[True, keys[order][1:] != keys[order][:-1], True])
    assert engine_families(config, canonicals[order], runs, insertion_rows) == expected


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_families_of_runs_on_random_runs_of_a4_b6(data):
    """Cut A4_B6's canonical molecules, sorted by key, anywhere between keys into batches:
    each batch's families together are the whole configuration's, as one run finds them."""
    config = Config(4, 6)
    canonicals = engine.canonical_molecules(config, 1, config.nb_mol + 1)[1]
    whole = engine_families(config, canonicals, np.array([0, len(canonicals)]))
    atoms = atoms_of_numbers(config, canonicals)
    keys = engine.spectrum_keys(config, atoms, engine.trace_batch(config, atoms)[0]).keys
    order = np.argsort(keys, kind="stable")
    runs = np.flatnonzero(np.r_[True, keys[order][1:] != keys[order][:-1], True])
    cuts = sorted(set(data.draw(st.lists(st.sampled_from(runs.tolist()), max_size=6))) | {0, len(order)})
    found = {}
    for low, high in zip(cuts, cuts[1:]):
        inside = runs[(runs >= low) & (runs <= high)] - low
        found.update(engine_families(config, canonicals[order][low:high], inside))
    assert found == whole
    assert sum(size * spectra for size, spectra, *_ in whole.values()) > 0


def asymmetric_canonicals(config: Config) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The canonical molecules that ``spectrum_keys`` finds asymmetric (8 images, 8 distinct
    spectra), sorted by key: (numbers, lowest, runs of equal keys)."""
    canonicals = engine.canonical_molecules(config, 1, config.nb_mol + 1)[1]
    atoms = atoms_of_numbers(config, canonicals)
    keys, orbit, shared, lowest = engine.spectrum_keys(config, atoms, engine.trace_batch(config, atoms)[0])
    assert ((lowest >= 0) == ((orbit == 8) & ~shared)).all()
    kept = np.flatnonzero(lowest >= 0)
    order = kept[np.argsort(keys[kept], kind="stable")]
    runs = np.flatnonzero(np.r_[True, keys[order][1:] != keys[order][:-1], True])
    return canonicals[order], lowest[order], runs


@pytest.mark.parametrize("name", ["A4_B4", "A4_B5", "A3_B6"])
def test_the_asymmetric_kernel_finds_the_reference_families_of_asymmetric_molecules(name, whole_reference):
    """Given each asymmetric canonical molecule's transform of its smallest image, the asymmetric
    kernel finds the reference's families of those molecules (a family is all asymmetric or
    none: a molecule's symmetry makes its spectrum's images equal), with their sizes, 8
    spectra, atoms differing and first spectrum's molecules: in the runs of equal keys, and
    all of them in one run (many spectra side by side: only equal ones are grouped)."""
    config = parse_config(name)
    records = whole_reference(config)
    canonicals, lowest, runs = asymmetric_canonicals(config)
    asymmetric = set(canonicals.tolist())
    expected = {c: family for c, family in reference_families(records).items() if c in asymmetric}
    assert expected and all(spectra == 8 for _, spectra, *_ in expected.values())
    assert engine_families(config, canonicals, runs, lowest=lowest) == expected
    whole = np.array([0, len(canonicals)])
    assert engine_families(config, canonicals, whole, lowest=lowest) == expected
    shuffled = np.random.default_rng(5).permutation(len(canonicals))
    assert engine_families(config, canonicals[shuffled], whole, lowest=lowest[shuffled]) == expected


@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_the_asymmetric_kernel_on_random_runs_of_a4_b6_is_the_general_one(data):
    """A4_B6's asymmetric canonical molecules cut into random runs (not only runs of one key: a
    run may hold many spectra): the asymmetric kernel finds the general kernel's families."""
    config = Config(4, 6)
    canonicals, lowest, _ = asymmetric_canonicals(config)
    picked = np.array(sorted(set(data.draw(st.lists(st.integers(0, len(canonicals) - 1), max_size=400)))))
    picked = picked if len(picked) else np.array([0])
    order = picked[np.random.default_rng(data.draw(st.integers(0, 99))).permutation(len(picked))]
    cuts = sorted(set(data.draw(st.lists(st.integers(0, len(order)), max_size=8))) | {0, len(order)})
    runs = np.array(cuts)
    general = engine_families(config, canonicals[order], runs)
    assert engine_families(config, canonicals[order], runs, lowest=lowest[order]) == general


def test_the_asymmetric_kernel_refuses_a_molecule_that_is_not():
    """``lowest`` -1 (a symmetric molecule, or images sharing a hash) is refused, not grouped wrong."""
    config = Config(3, 4)
    canonicals = engine.canonical_molecules(config, 1, config.nb_mol + 1)[1][:4]
    with pytest.raises(ValueError, match="not asymmetric"):
        engine_families(config, canonicals, np.array([0, 4]), lowest=np.array([0, 1, -1, 2]))


def test_every_kernel_releases_the_gil(monkeypatch):
    """Every numba kernel of bbcore (the engine's, the strategy book's, check's) is compiled
    ``nogil``: the TUI runs them in thread workers, and one that held the GIL stopped the
    event loop for as long as it ran (3 s a key while an A5_B8 book was played)."""
    import ast
    from pathlib import Path

    import bbcore

    monkeypatch.setattr(engine, "_COMPILED", {})
    found = []
    for path in sorted(Path(bbcore.__file__).parent.rglob("*.py")):
        tree = ast.parse(path.read_text())
        names = [
            node.name
            for node in tree.body
            if isinstance(node, ast.FunctionDef)
            and node.name.startswith("_")
            and node.name.endswith("_kernel")
        ]
        if not names:
            continue
        module = importlib.import_module(
            ".".join(path.relative_to(Path(bbcore.__file__).parent.parent).with_suffix("").parts)
        )
        for name in names:
            found.append(f"{module.__name__}.{name}")
            assert engine.compiled(getattr(module, name)).targetoptions.get("nogil"), found[-1]
    assert {"bbcore.engine._trace_kernel", "bbcore.strategy._book_kernel"} <= set(found)
    assert len(found) >= 10
