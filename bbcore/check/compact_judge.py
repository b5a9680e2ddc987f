"""A compact store's judge: a re-traced molecule in the stored spectral groups and profiles,
and the store's count (its profiles).
"""

from __future__ import annotations

import numpy as np
from peewee import chunked

from bbcore import engine, families, sql
from bbcore.check import blocks
from bbcore.check.report import CheckResult, Difference
from bbcore.check.samples import MOLECULE_FIELDS, Judge
from bbcore.check.traces import partners
from bbcore.compact.trace import PROFILE_FIELDS
from bbcore.config import Config
from bbcore.families import images_of, numbers_dtype, unpack_numbers
from bbcore.geometry import TRANSFORM_NAMES
from bbcore.store import db, index_exists


def _whole(config: Config, blob: bytes) -> int:
    """The bytes of a numbers blob that hold whole numbers (a damaged blob's last ones left out)."""
    size = numbers_dtype(config).itemsize
    return len(blob) - len(blob) % size


def _inside(config: Config, numbers: np.ndarray) -> np.ndarray:
    """The numbers that are molecules of the configuration (a damaged family's others left out)."""
    return numbers[(numbers >= 1) & (numbers <= config.nb_mol)]


def _profile_keys(profiles: np.ndarray) -> np.ndarray:
    """Profiles (k, 9) int64 as one comparable key each (their bytes)."""
    return (
        np.ascontiguousarray(profiles, dtype=np.int64)
        .view(np.dtype((np.void, 8 * len(PROFILE_FIELDS))))
        .ravel()
    )


class CompactJudge(Judge):
    """A compact store (``bbcore.compact``): no row per molecule, its spectral groups and profiles.

    A re-traced molecule must fall in the stored groups: if its spectrum is
    an ambiguous one stored (its key names a family that derives it), it is
    among that spectrum's molecules (the family's stored ones, moved by the
    spectrum's transform: ``groups_of``).  Its 9 profile statistics must
    have a ``Profiles`` row whose lowest number is at most its own; with
    every molecule re-traced (``--all``), the profiles are counted and must
    equal the stored ones exactly.  The count names a Profiles row holding
    text or a real (left out) and a profile in several rows (the first of
    them read judges the molecules).  A molecule listed in a group with
    another spectrum is found by ``CompactGroups``, which re-traces them all.
    The profiles are held as arrays (326,131 on A6_B8: 29 MB).
    """

    covers = "in the stored spectral groups, profile statistics"

    def __init__(self, config: Config, everything: bool) -> None:
        self.config = config
        # the table is not STRICT: a damaged row may hold text or a real, named by the count, left out
        rows = db.execute_sql(sql.profile_rows(PROFILE_FIELDS), (config.name,)).fetchall()
        stored = np.array(rows)  # numpy's own inference: integers only (the rule) give int64 at once
        self.malformed: list[tuple] = []
        if stored.dtype != np.int64:  # a text, a real or a NULL somewhere: sorted out row by row
            whole = [all(type(value) is int for value in row) for row in rows]
            self.malformed = [row for row, ok in zip(rows, whole) if not ok]
            stored = np.array([row for row, ok in zip(rows, whole) if ok], dtype=np.int64)
        stored = stored.reshape(-1, len(PROFILE_FIELDS) + 2)
        self.total = int(stored[:, -2].sum())  # every row's molecules, for the count
        # each profile once, in the keys' order, from the first row read that has it: a molecule is
        # judged against that row, and a profile in several rows is named by the count
        self.keys, first, rows = np.unique(
            _profile_keys(stored[:, : len(PROFILE_FIELDS)]), return_index=True, return_counts=True
        )
        self.molecules, self.lowest = stored[first, -2], stored[first, -1]
        self.repeated = [
            (tuple(stored[i, : len(PROFILE_FIELDS)].tolist()), n)
            for i, n in zip(first.tolist(), rows.tolist())
            if n > 1
        ]
        self.counted: dict[bytes, list[int]] | None = {} if everything else None
        self.key_index = index_exists(sql.family_key_index(config))

    def check_count(self) -> CheckResult:
        """No molecule rows, every profile value an integer, each profile in one row, and the profiles
        count every molecule."""
        config = self.config
        result = CheckResult("count", f"{config.nb_mol:,} molecules in the profiles, no molecule rows")
        for row in self.malformed:
            for name, value in zip((*PROFILE_FIELDS, "molecules", "lowest"), row):
                if type(value) is not int:
                    result.add(
                        Difference(
                            "count.malformed",
                            None,
                            f"Profiles {row[: len(PROFILE_FIELDS)]}: {name}",
                            repr(value),
                            "an integer",
                        )
                    )
        (rows,) = db.execute_sql(sql.COUNT_MOLECULES, (config.name,)).fetchone()
        if rows:
            result.add(
                Difference("count.molecule_rows", None, "molecule rows of a compact store", f"{rows:,}", "0")
            )
        for profile, copies in self.repeated:
            result.add(Difference("count.repeated", None, f"Profiles {profile}", f"{copies} rows", "1 row"))
        counted = self.total
        if counted != config.nb_mol:
            result.add(
                Difference(
                    "count.profiles", None, "molecules in Profiles", f"{counted:,}", f"{config.nb_mol:,}"
                )
            )
        return result

    def judge(self, result: CheckResult, rows: dict[int, tuple]) -> None:
        numbers = sorted(rows)
        members = self.groups_of(sorted({rows[n][4] for n in numbers}))
        for number in numbers:
            spectrum = rows[number][4]
            if spectrum in members and number not in members[spectrum]:
                result.add(
                    Difference(
                        f"{result.name}.not_in_group",
                        number,
                        f"group of spectrum {spectrum}",
                        "not among its molecules",
                        "a member",
                    )
                )
        columns = [MOLECULE_FIELDS.index(name) for name in PROFILE_FIELDS]
        stats = np.array([[rows[n][c] for c in columns] for n in numbers], dtype=np.int64).reshape(
            -1, len(columns)
        )
        keys = _profile_keys(stats)
        keys_stored = self.keys if len(self.keys) else _profile_keys(np.full((1, len(columns)), -1))
        lowest = self.lowest if len(self.keys) else np.zeros(1, dtype=np.int64)
        at = np.minimum(np.searchsorted(keys_stored, keys), len(keys_stored) - 1)
        found = keys_stored[at] == keys
        for i in np.nonzero(~found | (lowest[at] > np.array(numbers)))[0].tolist():
            profile = tuple(stats[i].tolist())
            have = "no such row" if not found[i] else f"lowest {int(lowest[at[i]]):,}"
            result.add(
                Difference(
                    f"{result.name}.profile",
                    numbers[i],
                    f"Profiles {profile}",
                    have,
                    f"a row, lowest <= {numbers[i]:,}",
                )
            )
        if self.counted is not None and result.name == "engine":
            for key, number in zip(keys.tolist(), numbers):
                line = self.counted.setdefault(key, [0, number])
                line[0] += 1
                line[1] = min(line[1], number)

    def groups_of(self, spectra: list[str]) -> dict[str, set[int]]:
        """The stored ambiguous spectra among these, each with its molecules (derived from its family).

        Each spectrum's keys (``engine.stored_keys``) name its family through
        the key index (a scan of the families if that index is missing: the
        groups phase names it); the families found are derived
        (``families.derived``) and a spectrum's molecules are the images of
        the family's stored ones by its transform.  Only this batch's
        families are read.
        """
        config = self.config
        partner, valid = partners(config, spectra)
        spectra = [s for s, ok in zip(spectra, valid.tolist()) if ok]
        keys = sorted(set(engine.stored_keys(config, partner[valid]).ravel().tolist()))
        column = "key" if self.key_index else "position"
        at = {name: i for i, name in enumerate(sql.FAMILY_COLUMNS)}
        found: dict[int, np.ndarray] = {}
        for chunk in chunked(keys, blocks.ROWS_PER_QUERY):
            statement = sql.families_by(config, column, f"key IN ({', '.join('?' * len(chunk))})")
            for row in db.execute_sql(statement, tuple(chunk)):
                blob, canonical = row[at["numbers"]], row[at["canonical_number"]]
                if type(blob) is not bytes or type(canonical) is not int:
                    continue  # malformed: the groups phase names it
                if not 1 <= canonical <= config.nb_mol:
                    continue  # no molecule (the engine would read out of bounds): the groups phase names it
                numbers = unpack_numbers(config, blob[: _whole(config, blob)])
                found[canonical] = _inside(config, numbers)
        wanted = set(spectra)
        members: dict[str, set[int]] = {}
        canonical, text, transform = families.derived(config, sorted(found))
        for c, s, t in zip(canonical.tolist(), text.tolist(), transform.tolist()):
            spectrum = s.decode("ascii")
            if spectrum in wanted and spectrum not in members:
                members[spectrum] = set(images_of(config, found[c], TRANSFORM_NAMES[t]).tolist())
        return members

    def every_profile(self, result: CheckResult) -> CheckResult:
        """With every molecule re-traced: the profiles counted equal the stored ones."""
        counted = self.counted or {}
        stored = {k: (int(m), int(low)) for k, m, low in zip(self.keys.tolist(), self.molecules, self.lowest)}
        for key in sorted(set(counted) | set(stored)):
            have, want = stored.get(key), counted.get(key)
            if have != (tuple(want) if want else None):
                profile = tuple(np.frombuffer(key, dtype=np.int64).tolist())
                result.add(
                    Difference(
                        "engine.profiles_counted",
                        None,
                        f"Profiles {profile} (molecules, lowest)",
                        str(have or "no row"),
                        str(tuple(want) if want else "no molecule"),
                    )
                )
        result.covered += "; every profile counted"
        return result
