"""Shared fixtures: a molecule's full record computed from the spec's rules alone.

The record has the layout of ``EnantiomerBatch.rows()``: config, number,
canonical_number, molecule, spectrum, transform, then the 17 statistics.
It is built only from the reference modules (``rays``, ``numbering``,
``geometry``), so any fast path can be compared with it.
"""

from __future__ import annotations

import itertools
import math
import os
import shutil
from collections import Counter
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest
from hypothesis import strategies as st
from pilot import RangeGate
from postgres import PostgresServer, binaries, unavailable

from bbcore import engine, rays, strategy
from bbcore import full as full_module
from bbcore.config import Config
from bbcore.explore import explore as explore_configuration
from bbcore.game import ABSORBED, REFLECTED
from bbcore.geometry import TRANSFORM_NAMES, transform_atoms
from bbcore.numbering import atoms_of, molecule_string, number_of
from bbcore.store import COMPACT, FULL, close_database, db, open_database

Record = tuple
"""config, number, canonical_number, molecule, spectrum, transform, 17 statistics."""


def reference_rays(config: Config, atoms: tuple[int, ...]) -> list[rays.Ray]:
    """The 4W rays of a molecule, tracing only the positions not yet known.

    This is the spec's own procedure ("trace only the positions not yet
    known, in position order"); it halves the work of whole-configuration
    tests.  Reversibility itself is checked by the property tests.
    """
    known: dict[int, rays.Ray] = {}
    for position in range(1, config.positions + 1):
        if position in known:
            continue
        ray = rays.trace(config.width, atoms, position)
        known[position] = ray
        if ray.result == "out":
            assert ray.exit is not None
            known[ray.exit] = rays.Ray(ray.exit, "out", position, ray.length, ray.turns)
    return [known[p] for p in range(1, config.positions + 1)]


def canonical_and_transform(config: Config, atoms: tuple[int, ...]) -> tuple[int, str]:
    """The canonical number of a molecule and the first transform making it from there."""
    canonical = min(number_of(config, transform_atoms(config, atoms, t)) for t in TRANSFORM_NAMES)
    canonical_atoms = atoms_of(config, canonical)
    transform = next(t for t in TRANSFORM_NAMES if transform_atoms(config, canonical_atoms, t) == atoms)
    return canonical, transform


def record_of(config: Config, number: int, canonical: int, transform: str) -> Record:
    """A molecule's record, its rays traced by the reference."""
    atoms = atoms_of(config, number)
    traced = reference_rays(config, atoms)
    stats = rays.statistics_of_rays(traced)
    return (
        config.name,
        number,
        canonical,
        molecule_string(config, atoms),
        rays.spectrum_of_rays(traced),
        transform,
        *(stats[name] for name in rays.STAT_FIELDS),
    )


def reference_record(config: Config, number: int) -> Record:
    """The full record of molecule ``number``, from the reference modules."""
    return record_of(config, number, *canonical_and_transform(config, atoms_of(config, number)))


@cache
def reference_config(config: Config) -> tuple[Record, ...]:
    """Every record of a configuration, in number order.

    Going through the numbers in increasing order, a group is first met at
    its lowest number, its canonical molecule; its images are then named with
    the first transform, in table order, that makes each of them.
    """
    group: dict[int, tuple[int, str]] = {}
    for number in range(1, config.nb_mol + 1):
        if number not in group:
            atoms = atoms_of(config, number)
            for t in TRANSFORM_NAMES:
                group.setdefault(number_of(config, transform_atoms(config, atoms, t)), (number, t))
    return tuple(record_of(config, n, *group[n]) for n in range(1, config.nb_mol + 1))


@pytest.fixture(scope="session")
def reference() -> Callable[[Config, int], Record]:
    """``reference(config, number)``: the record of a molecule by the spec's rules."""
    return reference_record


@pytest.fixture(scope="session")
def whole_reference() -> Callable[[Config], tuple[Record, ...]]:
    """``whole_reference(config)``: every record of a small configuration (cached)."""
    return reference_config


def text_row(row: tuple) -> Record:
    """A row with its ASCII fields as ``str`` (the engine may hand out ``bytes``)."""
    return tuple(value.decode("ascii") if isinstance(value, bytes) else value for value in row)


def explored_rows(config: Config, start: int, stop: int) -> list[Record]:
    """``engine.explore_range(config, start, stop).rows()`` as text records."""
    rows = [text_row(row) for row in engine.explore_range(config, start, stop).rows()]
    assert all(len(row) == 6 + len(rays.STAT_FIELDS) for row in rows)
    return rows


@pytest.fixture(scope="session")
def explore() -> Callable[[Config, int, int], list[Record]]:
    """``explore(config, start, stop)``: the engine's rows for a range, as text records."""
    return explored_rows


WORKED_EXAMPLE_STATS = (
    6,
    3,
    0,
    7,
    0,  # absorbed: number, max_length, max_turns, tot_length, tot_turns
    4,
    3,
    1,
    3,
    0,
    3,
    0,  # reflected: number, edge, deep, max_length, max_turns, tot_*
    3,
    4,
    1,
    11,
    1,  # out pairs: number, max_length, max_turns, tot_length, tot_turns
)


@pytest.fixture(scope="session")
def worked_example() -> dict[int, Record]:
    """The spec's worked example, A2_B4 numbers 2 and 119, every field as printed there."""
    return {
        2: ("A2_B4", 2, 2, "O-O-------------", "@&ab@&@cbac@&@&@", "id", *WORKED_EXAMPLE_STATS),
        119: ("A2_B4", 119, 2, "-------------O-O", "abc@&@&@@&ba@&@c", "rot180", *WORKED_EXAMPLE_STATS),
    }


@st.composite
def _random_molecules(draw, max_width: int = 13) -> tuple[Config, tuple[int, ...]]:
    """A random configuration (W in 2..max_width, 13 the largest box, 1 <= N < W*W) and molecule."""
    width = draw(st.integers(2, max_width))
    config = Config(draw(st.integers(1, width * width - 1)), width)
    # One integer per molecule (its number) is far cheaper to draw than a set of cells.
    return config, atoms_of(config, draw(st.integers(1, config.nb_mol)))


@pytest.fixture(scope="session")
def random_molecules() -> st.SearchStrategy[tuple[Config, tuple[int, ...]]]:
    """A hypothesis strategy of (config, atoms), for ``data.draw`` in property tests."""
    return _random_molecules()


def load_kernels() -> None:
    """Compile (or load from cache) every numba kernel: engine, compact keys, strategy book."""
    config = Config(2, 3)
    engine.explore_range(config, 1, 4)
    atoms, _ = engine.canonical_molecules(config, 1, config.nb_mol + 1)
    partner, length, turns = engine.trace_batch(config, atoms)
    engine.spectrum_keys(config, atoms, partner)
    engine.ray_profile(partner, length, turns)  # the compact store's (kernels_cached(compact=True) counts it)
    strategy.compute_book(config, source="compute")


@pytest.fixture(scope="session", autouse=True)
def compiled_engine() -> None:
    """Every numba kernel compiled (or loaded from cache) once, first.

    On a fresh clone the first engine call compiles for up to a minute on a
    loaded machine; the TUI tests wait for results with timeouts and must
    not pay for that.
    """
    load_kernels()


A3_B5_STORES = "BBTUI_TEST_A3_B5_STORES"
"""An environment variable: a folder where ``a3b5-full.sqlite`` and ``a3b5-compact.sqlite`` are
explored already (``a3_b5_stores`` copies them instead of exploring)."""


def explore_a3_b5(folder: Path) -> dict[str, Path]:
    """A3_B5 explored in each store, in ``folder``."""
    paths = {}
    for store in (FULL, COMPACT):
        paths[store] = folder / f"a3b5-{store}.sqlite"
        explore_configuration(Config(3, 5), paths[store], workers=1, store=store)
        close_database()
    return paths


def pytest_collection_finish(session: pytest.Session) -> None:
    """Under mutmut (``bench/mutation.py``): its fork server collects the tests once, then forks a
    process per mutant, which inherits what was done here.  The kernels loaded and A3_B5 explored
    here are so loaded and explored once for the whole run, not once per mutant (about 1.5 s of
    each mutant's 2 s when the tests kill it at once).  They are built before any mutant is
    chosen: a mutant of the exploration (``compact``, ``families``, ``store``) does not reach these
    stores, only the tests that explore for themselves, so it can only survive here, never be
    killed by them falsely."""
    if "MUTANT_UNDER_TEST" not in os.environ or not session.config.option.collectonly:
        return
    load_kernels()
    folder = Path(session.config.rootpath) / "a3b5-stores"
    folder.mkdir(exist_ok=True)
    explore_a3_b5(folder)
    os.environ[A3_B5_STORES] = str(folder)


@pytest.fixture(scope="session")
def explored(tmp_path_factory) -> Path:
    """A database where A2_B4, A3_B4 and A4_B4 are complete, shared by tests that only read."""
    path = tmp_path_factory.mktemp("explored") / "small.sqlite"
    for config in (Config(2, 4), Config(3, 4), Config(4, 4)):
        explore_configuration(config, path)
    db.close()  # the WAL checkpointed into the file: tests may copy it
    return path


@pytest.fixture(scope="session")
def a5_b5(tmp_path_factory) -> Path:
    """A database where A5_B5 is complete (53,130 molecules, 5,055 spectral groups in 672
    families): lists longer than a page of 500, numbers past 999 (a few seconds to explore)."""
    path = tmp_path_factory.mktemp("a5b5") / "a5b5.sqlite"
    explore_configuration(Config(5, 5), path)
    close_database()
    return path


@pytest.fixture(scope="session")
def a3_b5_stores(tmp_path_factory) -> dict[str, Path]:
    """A3_B5 (2,300 molecules, 8 spectral groups in 2 families) explored once in each store, shared
    by the check tests (tests/test_check*.py), which only read them or damage a copy.

    Copied from ``$BBTUI_TEST_A3_B5_STORES`` when set (a mutation run), else explored here.
    """
    folder = tmp_path_factory.mktemp("a3b5")
    explored_already = os.environ.get(A3_B5_STORES)
    if not explored_already:
        return explore_a3_b5(folder)
    paths = {}
    for store in (FULL, COMPACT):
        paths[store] = folder / f"a3b5-{store}.sqlite"
        shutil.copy(Path(explored_already) / paths[store].name, paths[store])
    return paths


_REMEMBERED: dict[tuple, object] = {}
"""The reference rays.py's answers met so far in this session (``remembered_reference``)."""


class _Traced(list):
    """A molecule's rays as ``rays.trace_all`` returned them, with what they were traced for."""

    key: tuple


def _remembered_trace_all(config: Config, atoms) -> list[rays.Ray]:
    key = ("trace_all", config, tuple(atoms))
    if key not in _REMEMBERED:
        _REMEMBERED[key] = _ORIGINAL["trace_all"](config, atoms)
    traced = _Traced(_REMEMBERED[key])
    traced.key = key
    return traced


def _remembered_of_rays(name: str) -> Callable:
    """``rays.<name>`` of a molecule's rays, remembered when they come from ``trace_all`` (unchanged)."""

    def of_rays(traced: list[rays.Ray]):
        original = _ORIGINAL[name]
        if type(traced) is not _Traced or list(traced) != _REMEMBERED[traced.key]:
            return original(traced)
        key = (name, *traced.key)
        if key not in _REMEMBERED:
            _REMEMBERED[key] = original(traced)
        answer = _REMEMBERED[key]
        return answer.copy() if isinstance(answer, dict) else answer

    return of_rays


_ORIGINAL = {name: getattr(rays, name) for name in ("trace_all", "statistics_of_rays", "spectrum_of_rays")}


@pytest.fixture
def remembered_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check tests: the reference rays.py's answers remembered across the session.

    ``bbcore check``'s reference sample re-traces 1,000 molecules with
    ``rays.py``: 85% of a check of A3_B5 (0.58 of 0.70 s), the same 1,000
    molecules in nearly every test.  ``rays.py`` is pure (its own tests pin
    it), so its answers, remembered, are the same; ``bbcore/check/``'s own code
    (``reference_row`` and all) still runs in every test, so a mutation run
    still sees every test reach it (``bench/mutation.py check``).
    """
    monkeypatch.setattr(rays, "trace_all", _remembered_trace_all)
    for name in ("statistics_of_rays", "spectrum_of_rays"):
        monkeypatch.setattr(rays, name, _remembered_of_rays(name))


@pytest.fixture(scope="session")
def pg_server():
    """A throwaway PostgreSQL server for the session (tests/postgres.py), stopped at its end.

    Skipped where PostgreSQL's binaries (or psycopg) are missing, but failed
    when ``$CI`` is set: CI (``.ci/run``) installs them, and a server test
    must never be skipped silently there.
    """
    missing = unavailable()
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"CI needs PostgreSQL for the server tests: {missing}")
        pytest.skip(missing)
    server = PostgresServer(binaries())
    try:
        server.start()
        yield server
    finally:
        server.stop()


@pytest.fixture
def pg_url(pg_server: PostgresServer):
    """The URL (superuser, password in it) of a fresh empty database, dropped after the test."""
    name = pg_server.create_database()
    yield pg_server.url(name)
    pg_server.drop_database(name)


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> RangeGate:
    """``bbcore.full.store_range`` behind a gate (in-process runs only): a key lands mid-run."""
    gate = RangeGate(full_module.store_range)
    monkeypatch.setattr(full_module, "store_range", gate)
    return gate


@pytest.fixture
def store(explored: Path) -> Path:
    """The shared database, opened (other tests may have pointed ``db`` elsewhere)."""
    open_database(explored)
    return explored


@pytest.fixture(scope="session")
def a4_b8_first_shot() -> tuple[float, float]:
    """(expected molecules left, information in bits) of shooting position 2 first on A4_B8.

    By the reference tracer over all 635,376 molecules (a few seconds: the
    ray from position 2 is short), then the figures' definitions: the sum
    of n^2 / N over the outcomes, and their entropy.
    """
    outcomes: Counter = Counter()
    for atoms in itertools.combinations(range(64), 4):
        ray = rays.trace(8, atoms, 2)
        outcomes[ray.exit if ray.result == "out" else ray.result] += 1
    total = sum(outcomes.values())
    remaining = sum(n * n for n in outcomes.values()) / total
    information = -sum(n / total * math.log2(n / total) for n in outcomes.values())
    return remaining, information


@cache
def _brute_rays(config: Config) -> tuple[tuple[rays.Ray, ...], ...]:
    """Every molecule's 4W rays by the reference implementation, index = number - 1."""
    return tuple(tuple(rays.trace_all(config, atoms_of(config, n))) for n in range(1, config.nb_mol + 1))


@pytest.fixture(scope="session")
def brute_rays() -> Callable[[Config], tuple[tuple[rays.Ray, ...], ...]]:
    """``brute_rays(config)``: every molecule's rays by the reference tracer (cached), for
    figures computed independently of the code under test."""
    return _brute_rays


def _brute_statistics(config: Config) -> list[dict[str, int]]:
    return [rays.statistics_of_rays(list(traced)) for traced in _brute_rays(config)]


@pytest.fixture(scope="session")
def brute_statistics() -> Callable[[Config], list[dict[str, int]]]:
    """``brute_statistics(config)``: every molecule's 17 statistics from the reference rays."""
    return _brute_statistics


def _brute_record(config: Config, ray_class: str, measure: str) -> tuple[rays.Ray, int, int]:
    """The record ray of a class and measure by brute force: (the ray, how many molecules reach
    the record, the lowest such number); the ray is that molecule's with the record, then the
    most of the other measure, then the lowest position."""
    other = "turns" if measure == "length" else "length"
    best: list = []
    reaching = 0
    for number, traced in enumerate(_brute_rays(config), start=1):
        mine = [r for r in traced if r.result == ray_class]
        if not mine:
            continue
        value = max(getattr(r, measure) for r in mine)
        if not best or value > best[0]:
            ray = max(
                (r for r in mine if getattr(r, measure) == value),
                key=lambda r: (getattr(r, other), -r.position),
            )
            best, reaching = [value, ray, number], 0
        reaching += value == best[0]
    return best[1], reaching, best[2]


@pytest.fixture(scope="session")
def brute_record() -> Callable[[Config, str, str], tuple[rays.Ray, int, int]]:
    """``brute_record(config, ray_class, measure)``: (ray, molecules reaching it, lowest number)."""
    return _brute_record


@cache
def _policy_spectra(config: Config) -> tuple[tuple[object, ...], ...]:
    """Each molecule's result at each position: ``@``, ``&`` or the 1-based exit."""
    spectra = []
    for number in range(1, config.nb_mol + 1):
        traced = rays.trace_all(config, atoms_of(config, number))
        spectra.append(
            tuple(
                ABSORBED if r.result == "absorbed" else REFLECTED if r.result == "reflected" else r.exit
                for r in traced
            )
        )
    return tuple(spectra)


def _policy_line(config: Config, number: int, by: str) -> tuple[list[tuple[int, object]], int, int]:
    """Play the strategy book's policy (``bbcore.strategy``'s docstring) against one molecule,
    plainly, from the reference rays: its shots (position, result), rays, points."""
    spectra = _policy_spectra(config)
    hidden = spectra[number - 1]
    candidates = list(range(config.nb_mol))
    known: set[int] = set()
    line: list[tuple[int, object]] = []
    points = 0
    while len({spectra[m] for m in candidates}) > 1:
        best, best_key = None, None
        for position in range(1, config.positions + 1):
            if position in known:
                continue
            counts = Counter(spectra[m][position - 1] for m in candidates)
            n = len(candidates)
            remaining = sum(c * c for c in counts.values()) / n
            information = -sum(c / n * math.log2(c / n) for c in counts.values())
            figures = (round(remaining, 9), -round(information, 9))
            key = (figures if by == "remaining" else figures[::-1]) + (position,)
            if best_key is None or key < best_key:
                best, best_key = position, key
        assert best is not None
        result = hidden[best - 1]
        candidates = [m for m in candidates if spectra[m][best - 1] == result]
        known.add(best)
        if isinstance(result, int):
            known.add(result)
            points += 2
        else:
            points += 1
        line.append((best, result))
    return line, len(line), points


@cache
def _policy_summary(config: Config, by: str) -> dict:
    """The book's figures by brute force, in the layout of ``StrategyBook.summary()``."""
    played = {n: _policy_line(config, n, by) for n in range(1, config.nb_mol + 1)}
    figures = {}
    for what, column in (("rays", 1), ("points", 2)):
        values = [result[column] for result in played.values()]
        figures[what] = {
            "mean": sum(values) / len(values),
            "max": max(values),
            "histogram": {str(k): n for k, n in sorted(Counter(values).items())},
        }
    firsts = {line[0][0] for line, _, _ in played.values() if line}
    assert len(firsts) <= 1  # every molecule's line starts with the same shot
    hardest = sorted(played, key=lambda n: (-played[n][1], -played[n][2], n))[: strategy.HARDEST]
    return {
        "config": config.name,
        "by": by,
        "molecules": config.nb_mol,
        "first_shot": firsts.pop() if firsts else None,
        **figures,
        "hardest": hardest,
    }


@pytest.fixture(scope="session")
def policy_summary() -> Callable[[Config, str], dict]:
    """``policy_summary(config, by)``: the strategy book's summary (first shot, mean, maximum and
    histogram of rays and of points, hardest molecules) computed by brute force (cached)."""
    return _policy_summary


@pytest.fixture(scope="session")
def policy_line() -> Callable[[Config, int, str], tuple[list[tuple[int, object]], int, int]]:
    """``policy_line(config, number, by)``: the book's policy played against one molecule by
    brute force, (its shots as (position, result), rays, points), for figures computed
    independently of ``bbcore.strategy``."""
    return _policy_line


@pytest.fixture(autouse=True)
def temporary_settings(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """bbtui's settings (theme, the run to resume) in a fresh folder for each test, never the user's."""
    config_home = tmp_path_factory.mktemp("xdg-config")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config_home))
    return config_home


@pytest.fixture(autouse=True)
def temporary_default_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Whatever opens the default database (``BBTUI_DB``) opens a temporary file, never the user's."""
    path = tmp_path / "default.sqlite"
    monkeypatch.setenv("BBTUI_DB", str(path))
    return path
