"""A compact store's groups phase: every Families row, re-traced, its columns and ordinals compared."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bbcore import engine, families, sql
from bbcore.check.blocks import rows_in_blocks
from bbcore.check.family_blocks import FamilyBlock, family_spectra, max_atoms_apart
from bbcore.check.report import CheckProgressCallback, CheckResult, Difference
from bbcore.config import Config
from bbcore.families import numbers_dtype
from bbcore.store import index_exists

FAMILY_INTEGERS = tuple(name for name in sql.FAMILY_COLUMNS if name not in ("config", "spectrum", "numbers"))
"""The integer columns of a ``Families`` row, read into arrays a block at a time."""


@dataclass
class FamilyRows:
    """A block of ``Families`` rows as arrays, in position order (``sql.FAMILY_COLUMNS``)."""

    columns: dict[str, np.ndarray]  # FAMILY_INTEGERS, int64 each
    spectrum: list[str]
    numbers: list[bytes]

    @classmethod
    def of(cls, rows: list[tuple], result: CheckResult) -> FamilyRows | None:
        """The block's rows as arrays; a row with a value of another type (text for a number, NULL)
        is named (``groups.malformed``) and left out.  None when none is left."""
        at = {name: i for i, name in enumerate(sql.FAMILY_COLUMNS)}
        types = {name: int for name in FAMILY_INTEGERS} | {"spectrum": str, "numbers": bytes}
        values = list(zip(*rows))
        if any(set(map(type, values[at[name]])) != {kind} for name, kind in types.items()):
            kept = []
            for row in rows:
                wrong = [name for name, kind in types.items() if type(row[at[name]]) is not kind]
                for name in wrong:
                    result.add(
                        Difference(
                            "groups.malformed",
                            None,
                            f"family at position {row[at['position']]!r}: {name}",
                            repr(row[at[name]]),
                            {int: "an integer", str: "text", bytes: "a blob"}[types[name]],
                        )
                    )
                if not wrong:
                    kept.append(row)
            if not kept:
                return None
            values = list(zip(*kept))
        columns = {name: np.array(values[at[name]], dtype=np.int64) for name in FAMILY_INTEGERS}
        return cls(columns, list(values[at["spectrum"]]), list(values[at["numbers"]]))


class CompactGroups:
    """The families of a compact store, read once in position order, a block at a time.

    Each block's families are re-traced (``family_spectra``: every stored
    molecule must have the family's first spectrum, the canonical number
    must be the smallest canonical number of its molecules), and every
    stored column is compared with what the molecules give: the numbers
    blob, nb_mol, spectra (the distinct spectra among c's 8 images),
    spectrum (c's own), key (``engine.stored_keys`` of it, either keying), max_diff.  The
    ordinals are checked as they stream: position 0, 1, 2, ... in
    increasing canonical number; spectra_before the spectra of the families
    before; in the size order (nb_mol descending, then canonical number) each
    family's size_position and size_spectra_before follow the previous family
    of its size, and each size starts after the larger ones (checked at the
    end, from the counts by size, a few hundred numbers).  Those counts are
    then compared with ``GroupedShards``'.  Nothing grows with the
    configuration but the counts by size.
    """

    def __init__(self, config: Config) -> None:
        self.config = config
        self.families = self.molecules = self.spectra = 0
        self.last_position, self.last_canonical = -1, 0
        self.next_of_size: dict[int, tuple[int, int]] = {}  # size: (size_position, size_spectra_before)
        self.first_of_size: dict[int, tuple[int, int, int]] = {}  # size: (canonical, the two ordinals)
        self.counts: dict[int, list[int]] = {}  # size: [families, spectra]

    def check(self, progress: CheckProgressCallback) -> CheckResult:
        config = self.config
        result = CheckResult("groups")
        for index in sql.family_key_index(config), sql.family_size_index(config):
            if not index_exists(index):
                result.add(Difference("groups.index", None, "family index", "missing", f'"{index}"'))
        _, total = families.spectra_counts(config)
        total = max(total, 1)
        progress("groups", 0, total)
        statement = sql.families_by(config, "position", "position >= ?")
        for rows in rows_in_blocks(statement, (0,)):
            block = FamilyRows.of(rows, result)
            if block is not None:
                self.block(block, result)
            progress("groups", min(self.families, total - 1), total)
        self.size_starts(result)
        self.compare_counts(result)
        result.covered = (
            f"{self.families:,} families ({self.molecules:,} molecules re-traced), "
            f"{self.spectra:,} ambiguous spectra: molecules, nb_mol, spectra, spectrum, key, "
            "canonical number, max_diff, ordinals; counts by size"
        )
        progress("groups", total, total)
        return result

    def block(self, rows: FamilyRows, result: CheckResult) -> None:
        """One block of families: re-traced, every column compared, the ordinals followed."""
        config = self.config
        column = rows.columns
        canonical = column["canonical_number"]
        block, kept = self.unpack(canonical, rows.numbers, result)
        self.molecules += len(block.numbers)
        spectra = column["spectra"].copy()  # the computed ones where the family could be traced
        if len(kept):
            expected = family_spectra(config, block, result)
            spectra[kept] = expected.groups
            first_rows = np.r_[0, np.cumsum(expected.groups)[:-1]]
            own = [s.tobytes().decode("ascii") for s in expected.spectrum[first_rows]]
            keys = engine.stored_keys(config, expected.partner)
            lexical, hashed = keys[:, 0], keys[:, 1]  # a store keeps its run's keying
            keys = np.where(column["key"][kept] == hashed, hashed, lexical)
            for name, want in (
                ("nb_mol", block.sizes),
                ("spectra", expected.groups),
                ("key", keys),
                ("max_diff", max_atoms_apart(config, block)),
            ):
                have = column[name][kept]
                for i in np.nonzero(have != want)[0].tolist():
                    result.add(
                        Difference(
                            f"groups.{name}",
                            None,
                            f"family {int(block.canonical[i]):,}: {name}",
                            f"{int(have[i]):,}",
                            f"{int(want[i]):,}",
                        )
                    )
            for i, k in enumerate(kept.tolist()):
                if rows.spectrum[k] != own[i]:
                    result.add(
                        Difference(
                            "groups.spectrum",
                            None,
                            f"family {int(block.canonical[i]):,}: spectrum",
                            repr(rows.spectrum[k]),
                            f"{own[i]!r} (molecule {int(block.canonical[i]):,}'s, re-traced)",
                        )
                    )
        self.ordinals(column, spectra, result)
        self.families += len(canonical)
        self.spectra += int(spectra.sum())

    def ordinals(self, column: dict[str, np.ndarray], spectra: np.ndarray, result: CheckResult) -> None:
        """Position, spectra_before and the size order's ordinals of a block, after the blocks before."""
        canonical, position = column["canonical_number"], column["position"]
        previous = np.r_[self.last_position, position[:-1]]
        before = np.r_[self.last_canonical, canonical[:-1]]
        # The order is checked between two molecules' numbers: a family numbered as no molecule
        # (0, or past the last) is groups.canonical_number's to name, and the first family has
        # no family before it (last_canonical 0).
        nb_mol = self.config.nb_mol
        numbered = (canonical >= 1) & (canonical <= nb_mol) & (before >= 1) & (before <= nb_mol)
        out_of_order = numbered & (canonical <= before)
        for i in np.nonzero((position != previous + 1) | out_of_order)[0].tolist():
            c, p, q, b = (int(v[i]) for v in (canonical, position, previous, before))
            want = f"{q + 1:,}"
            if out_of_order[i]:
                want += f" after a family numbered below {c:,}"
            result.add(
                Difference(
                    "groups.position",
                    None,
                    f"family {c:,}: position",
                    f"{p:,} after the family {b:,} at {q:,}" if q >= 0 else f"{p:,} as the first family",
                    want,
                )
            )
        self.last_position, self.last_canonical = int(position[-1]), int(canonical[-1])
        want = self.spectra + np.r_[0, np.cumsum(spectra)[:-1]]
        self._differ("spectra_before", canonical, column["spectra_before"], want, result)
        sizes = column["nb_mol"]
        order = np.argsort(sizes, kind="stable")  # each size's families, by position
        size, ordinal, spectra_before = (
            sizes[order],
            column["size_position"][order],
            column["size_spectra_before"][order],
        )
        these = spectra[order]
        starts = np.nonzero(np.r_[True, size[1:] != size[:-1]])[0]
        want_ordinal = np.r_[0, ordinal[:-1] + 1]
        want_before = np.r_[0, spectra_before[:-1] + these[:-1]]
        for start in starts.tolist():
            s = int(size[start])
            if s in self.next_of_size:
                want_ordinal[start], want_before[start] = self.next_of_size[s]
            else:  # its first family: where it starts is checked at the end (size_starts)
                self.first_of_size[s] = (
                    int(canonical[order[start]]),
                    int(ordinal[start]),
                    int(spectra_before[start]),
                )
                want_ordinal[start], want_before[start] = ordinal[start], spectra_before[start]
        for last in np.r_[starts[1:] - 1, len(size) - 1].tolist():
            s = int(size[last])
            self.next_of_size[s] = (int(ordinal[last]) + 1, int(spectra_before[last] + these[last]))
        for s, families_of, spectra_of in zip(*_by_size(sizes, spectra)):
            line = self.counts.setdefault(s, [0, 0])
            line[0] += families_of
            line[1] += spectra_of
        self._differ("size_position", canonical[order], ordinal, want_ordinal, result, " (its size's next)")
        self._differ(
            "size_spectra_before", canonical[order], spectra_before, want_before, result, " (its size's next)"
        )

    @staticmethod
    def _differ(name, canonical, have, want, result: CheckResult, why: str = "") -> None:
        for i in np.nonzero(have != want)[0].tolist():
            result.add(
                Difference(
                    f"groups.{name}",
                    None,
                    f"family {int(canonical[i]):,}: {name}",
                    f"{int(have[i]):,}",
                    f"{int(want[i]):,}{why}",
                )
            )

    def size_starts(self, result: CheckResult) -> None:
        """Each size's first family: after every family (and spectrum) of the larger sizes."""
        families_above = spectra_above = 0
        for size in sorted(self.counts, reverse=True):
            canonical, ordinal, before = self.first_of_size[size]
            for name, have, want in (
                ("size_position", ordinal, families_above),
                ("size_spectra_before", before, spectra_above),
            ):
                if have != want:
                    result.add(
                        Difference(
                            f"groups.{name}",
                            None,
                            f"family {canonical:,}: {name}",
                            f"{have:,}",
                            f"{want:,} (the first of {size} molecules, after the larger ones)",
                        )
                    )
            families_above += self.counts[size][0]
            spectra_above += self.counts[size][1]

    def unpack(
        self, canonical: np.ndarray, blobs: list[bytes], result: CheckResult
    ) -> tuple[FamilyBlock, np.ndarray]:
        """A block's numbers blobs at once: the families that can be traced, and their rows in the block.

        A damaged blob is named (``groups.numbers``) and its good numbers kept;
        a family with none, or a canonical number that is no molecule, is left out.
        """
        config = self.config
        dtype = numbers_dtype(config)
        lengths = np.fromiter(map(len, blobs), dtype=np.int64, count=len(blobs))
        if not (lengths % dtype.itemsize).any():
            sizes = lengths // dtype.itemsize
            numbers = np.frombuffer(b"".join(blobs), dtype=dtype).astype(np.int64)
            family_of = np.repeat(np.arange(len(blobs)), sizes)
            later = np.r_[False, family_of[1:] == family_of[:-1]]  # not a family's first molecule
            if (
                (sizes >= 2).all()
                and ((numbers >= 1) & (numbers <= config.nb_mol)).all()
                and (np.diff(numbers)[later[1:]] > 0).all()
                and ((canonical >= 1) & (canonical <= config.nb_mol)).all()
            ):
                return FamilyBlock(canonical, numbers, family_of), np.arange(len(blobs))
        return self._unpack_damaged(canonical, blobs, result)

    def _unpack_damaged(
        self, canonical: np.ndarray, blobs: list[bytes], result: CheckResult
    ) -> tuple[FamilyBlock, np.ndarray]:
        """``unpack``, a family at a time, naming what is wrong in each (a block with damage only)."""
        config = self.config
        dtype = numbers_dtype(config)
        kept, parts = [], []
        for k, (c, blob) in enumerate(zip(canonical.tolist(), blobs)):
            subject = f"family {c:,}: numbers"
            if len(blob) % dtype.itemsize:
                result.add(
                    Difference(
                        "groups.numbers",
                        None,
                        subject,
                        f"{len(blob)} bytes",
                        f"a multiple of {dtype.itemsize}",
                    )
                )
                blob = blob[: len(blob) - len(blob) % dtype.itemsize]
            numbers = np.frombuffer(blob, dtype=dtype).astype(np.int64)
            inside = (numbers >= 1) & (numbers <= config.nb_mol)
            if not inside.all() or (np.diff(numbers) <= 0).any() or len(numbers) < 2:
                result.add(
                    Difference(
                        "groups.numbers",
                        None,
                        subject,
                        _listed(numbers),
                        f"2 or more increasing numbers from 1 to {config.nb_mol:,}",
                    )
                )
            numbers = np.unique(numbers[inside])
            if not 1 <= c <= config.nb_mol:
                result.add(
                    Difference(
                        "groups.canonical_number",
                        None,
                        f"family {c:,}",
                        f"{c:,}",
                        f"a number from 1 to {config.nb_mol:,}",
                    )
                )
                continue
            if len(numbers):
                kept.append(k)
                parts.append(numbers)
        sizes = [len(p) for p in parts]
        block = FamilyBlock(
            canonical[np.array(kept, dtype=np.int64)],
            np.concatenate(parts) if parts else np.empty(0, dtype=np.int64),
            np.repeat(np.arange(len(parts)), sizes),
        )
        return block, np.array(kept, dtype=np.int64)

    def compare_counts(self, result: CheckResult) -> None:
        """``GroupedShards``' counts (the groups listing and the status read them) against the families."""
        config = self.config
        stored = families.spectra_counts(config)
        if stored != (self.spectra, self.families):
            result.add(
                Difference(
                    "groups.shard_totals",
                    None,
                    "GroupedShards (spectra, families)",
                    f"({stored[0]:,}, {stored[1]:,})",
                    f"({self.spectra:,}, {self.families:,}) in the families",
                )
            )
        have = families.size_counts(config)
        want = {size: tuple(line) for size, line in sorted(self.counts.items())}
        if have != want:
            result.add(
                Difference(
                    "groups.shard_sizes",
                    None,
                    "GroupedShards.sizes (families, spectra)",
                    str(have),
                    str(want),
                )
            )


def _by_size(sizes: np.ndarray, spectra: np.ndarray) -> tuple[list[int], list[int], list[int]]:
    """Families counted by size: (sizes, families, spectra)."""
    values, inverse = np.unique(sizes, return_inverse=True)
    return (
        values.tolist(),
        np.bincount(inverse, minlength=len(values)).tolist(),
        np.bincount(inverse, weights=spectra, minlength=len(values)).astype(np.int64).tolist(),
    )


def _listed(numbers: np.ndarray) -> str:
    """A few numbers of a family, for a message."""
    shown = ", ".join(f"{n:,}" for n in numbers[:6].tolist())
    return f"[{shown}{', ...' if len(numbers) > 6 else ''}]"
