"""The groups listing against groups computed another way: a plain grouping in Python.

The CLI's tests and the compact-versus-full tests pass both sides through
the same query, so a wrong order or filter passes them.  Here the expected
list is built from the molecules themselves: every molecule's spectrum by
the reference tracer (``conftest.reference_config``), grouped with a dict;
each family linked by the spec's rule (canonical molecules in increasing
number, each one's enantiomer group in increasing number, an ambiguous
spectrum not yet linked takes that molecule's transform and canonical
number); the atoms differing counted over every pair.  Each order, filter,
page and index of ``bbcore.queries`` (and the ``bbcore groups`` command) is
compared with it, on whole small configurations, in full and compact
stores.  Only public functions and commands are read, never table rows.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from pathlib import Path

import pytest

from bbcore import queries
from bbcore.cli import main
from bbcore.config import Config, parse_config
from bbcore.explore import explore
from bbcore.progress import COMPLETE
from bbcore.queries import GroupRow
from bbcore.store import open_database

CONFIGS = ["A3_B4", "A4_B4", "A3_B5", "A4_B5"]
SLOW = {"A4_B5"}  # its reference grouping traces 12,650 molecules in Python
STORES = ["full", "compact"]
ORDERS = ["canonical", "size"]


def expected_groups(config: Config, records) -> list[GroupRow]:
    """Every spectral group of ``config`` (all rows), in no particular order, from the records."""
    members: dict[str, list[tuple[int, ...]]] = defaultdict(list)
    for record in records:
        members[record[4]].append(tuple(i for i, cell in enumerate(record[3]) if cell == "O"))
    ambiguous = {spectrum for spectrum, found in members.items() if len(found) >= 2}
    linked: dict[str, tuple[str, int]] = {}
    for record in sorted(records, key=lambda r: (r[2], r[1])):  # canonical, then number
        if record[4] in ambiguous and record[4] not in linked:
            linked[record[4]] = (record[5], record[2])
    assert set(linked) == ambiguous
    return [
        GroupRow(
            config,
            spectrum,
            len(members[spectrum]),
            linked[spectrum][0],
            linked[spectrum][1],
            max(len(set(a) - set(b)) for a, b in itertools.combinations(members[spectrum], 2)),
        )
        for spectrum in ambiguous
    ]


def listed(groups: list[GroupRow], *, all_rows: bool, size: int | None, order: str) -> list[GroupRow]:
    """The groups a listing shows: ``id`` rows unless ``all_rows``, of one size if given, in ``order``."""
    shown = [g for g in groups if (all_rows or g.transform == "id") and (size is None or g.nb_mol == size)]
    if order == "size":
        return sorted(shown, key=lambda g: (-g.nb_mol, g.canonical_number, g.spectrum))
    return sorted(shown, key=lambda g: (g.canonical_number, g.spectrum))


_stores: dict[tuple[str, str], Path] = {}


@pytest.fixture
def stored(request, tmp_path_factory) -> tuple[Config, Path]:
    """``(config, path)``: the configuration explored in a store of the kind asked, opened (one file per
    configuration and store, explored once per session)."""
    name, store = request.param
    key = (name, store)
    if key not in _stores:
        path = tmp_path_factory.mktemp(f"{name}-{store}") / "groups.sqlite"
        assert explore(parse_config(name), path, store=store) == COMPLETE
        _stores[key] = path
    open_database(_stores[key])
    return parse_config(name), _stores[key]


BOTH = pytest.mark.parametrize(
    "stored",
    [
        pytest.param((name, store), marks=[pytest.mark.slow] if name in SLOW else [])
        for name in CONFIGS
        for store in STORES
    ],
    indirect=True,
    ids=lambda p: f"{p[0]}-{p[1]}",
)


@pytest.fixture
def expected(stored, whole_reference) -> list[GroupRow]:
    config, _ = stored
    return expected_groups(config, whole_reference(config))


def variants(groups: list[GroupRow]):
    """Every filter of the listing: all rows or one per family, every size and none."""
    sizes = sorted({g.nb_mol for g in groups})
    for all_rows in (False, True):
        for size in [None, *sizes, max(sizes) + 1]:
            yield all_rows, size


@BOTH
def test_counts_and_sizes_match_a_plain_grouping(stored, expected):
    config, _ = stored
    assert expected, "every configuration tested has ambiguous spectra"
    assert queries.group_sizes(config) == sorted({g.nb_mol for g in expected})
    for all_rows, size in variants(expected):
        want = listed(expected, all_rows=all_rows, size=size, order="canonical")
        assert queries.group_count(config, all_rows=all_rows, size=size) == len(want), (all_rows, size)


@BOTH
@pytest.mark.parametrize("order", ORDERS)
def test_every_page_in_every_order_and_filter_matches_a_plain_grouping(stored, expected, order):
    config, _ = stored
    for all_rows, size in variants(expected):
        want = listed(expected, all_rows=all_rows, size=size, order=order)
        for page_size in (7, 50):
            pages = [
                queries.group_page(config, page, page_size, all_rows=all_rows, size=size, order=order)
                for page in range(len(want) // page_size + 2)  # one page past the end too
            ]
            assert all(len(page) == page_size for page in pages[: len(want) // page_size])
            assert pages[-1] == []
            assert [row for page in pages for row in page] == want, (all_rows, size, page_size)


@BOTH
@pytest.mark.parametrize("order", ORDERS)
def test_the_nth_group_is_the_nth_of_a_plain_grouping(stored, expected, order):
    config, _ = stored
    for all_rows, size in variants(expected):
        want = listed(expected, all_rows=all_rows, size=size, order=order)
        options = {"all_rows": all_rows, "size": size, "order": order}
        assert [queries.group_at(config, i, **options) for i in range(len(want))] == want
        assert queries.group_at(config, -1, **options) is None
        assert queries.group_at(config, len(want), **options) is None


def cli_rows(capsys, path: Path, config: Config, *options: str) -> tuple[str, list[tuple]]:
    """``bbcore groups``'s heading and its lines as (size, canonical, transform, differ, spectrum)."""
    assert main(["--db", str(path), "groups", config.name, *options]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1:3] == ["size  canonical  transf. atoms  spectrum", "                         differ"]
    rows = []
    for line in lines[3:]:
        size, canonical, transform, differ, spectrum = line.split()
        rows.append(
            (int(size), int(canonical.lstrip("#").replace(",", "")), transform, int(differ), spectrum)
        )
    return lines[0], rows


@BOTH
def test_the_groups_command_lists_a_plain_grouping_in_order(capsys, stored, expected):
    config, path = stored
    largest = max(g.nb_mol for g in expected)
    cases = [
        ((), False, None, "canonical"),
        (("--all",), True, None, "canonical"),
        (("--by-size",), False, None, "size"),
        (("--all", "--by-size"), True, None, "size"),
        (("--size", "2"), False, 2, "canonical"),
        (("--all", "--size", str(largest), "--by-size"), True, largest, "size"),
    ]
    for options, all_rows, size, order in cases:
        want = listed(expected, all_rows=all_rows, size=size, order=order)
        heading, rows = cli_rows(capsys, path, config, *options)
        assert rows == [(g.nb_mol, g.canonical_number, g.transform, g.max_diff, g.spectrum) for g in want]
        what = "spectral groups" if all_rows else "families of spectral groups (transform id)"
        if len(want) == 1:
            what = "spectral group" if all_rows else "family of spectral groups (transform id)"
        assert heading == f"{config.name}: {len(want):,} {what}" + (f" of size {size}" if size else "")


def test_a4_b4_matches_the_spec_ambiguity_table(whole_reference):
    """The plain grouping itself, against the spec's figures: 9 and 2 families, 58 and 8 groups."""
    config = Config(4, 4)
    groups = expected_groups(config, whole_reference(config))
    by_size = {k: [g for g in groups if g.nb_mol == k] for k in (2, 3)}
    assert len(groups) == 66
    assert [len(by_size[2]), len(by_size[3])] == [58, 8]
    assert [sum(g.transform == "id" for g in by_size[k]) for k in (2, 3)] == [9, 2]
