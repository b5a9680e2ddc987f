"""The fast batch engine: whole ranges of molecules at once.

Checked against the reference (``bbcore.rays``) by the tests over every
molecule of small configurations and random molecules of large ones.

How it goes fast:

- two numba kernels do the per-ray and per-molecule work: ``_trace_kernel``
  traces every ray of a batch, ``_enantiomer_kernel`` expands traced canonical
  molecules into their whole enantiomer groups; numba is imported only when
  a kernel first runs, and its compiled code is cached on disk;
- a ray's cell is an index into the box padded by one cell, and what happens
  in a cell is one table look-up: the cell's 8-neighbourhood code (which
  neighbours hold atoms) and the ray's direction index ``action`` and
  ``heading`` tables built once from the spec's rules;
- only canonical molecules are traced, and with all positions a ray that
  comes out fills its exit position too (reversibility); each image's
  spectrum is the canonical spectrum with its positions permuted (spec,
  "The 8 symmetries");
- a spectrum is kept as a ``partner`` array: for each position the 0-based
  exit position, or ``ABSORBED_CODE`` / ``REFLECTED_CODE``; letters are only
  given when the string is made.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import NamedTuple

import numpy as np

from bbcore.config import Config
from bbcore.geometry import TRANSFORM_NAMES, cell_permutation, entry, position_at, position_source
from bbcore.numbering import atoms_of_numbers, binomial_table, numbers_of
from bbcore.rays import STAT_FIELDS, RayLoopError

ABSORBED_CODE, REFLECTED_CODE = -1, -2

# Directions as indexes: 0 east, 1 north, 2 west, 3 south.
_DIRS = ((0, 1), (-1, 0), (0, -1), (1, 0))


# An 8-neighbourhood code per padded cell: bit b set when the neighbour at
# _NEIGHBOURS[b] holds an atom; OUTSIDE marks cells outside the box.
_NEIGHBOURS = ((-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1))
OUTSIDE = 256
# Actions of the step tables.
GO, EXIT, HIT, REFLECT = 0, 1, 2, 3


@dataclass(frozen=True)
class Geometry:
    """Flat-index tables for one width (the box padded by one cell each side).

    A ray's state is its absolute index in a batch of padded boards and its
    direction; ``action[dir * 512 + code]`` says what happens in a cell whose
    neighbourhood code is ``code``, ``heading[...]`` the direction it leaves
    with and ``turned[...]`` whether that counts as a turn.  ``entry_*`` are the
    same for the perimeter cell a ray starts from (rule 1 of the spec).
    """

    width: int
    side: int  # W + 2
    step: np.ndarray  # flat offset of each direction
    start_cell: np.ndarray  # flat perimeter cell of each position (0-based)
    start_dir: np.ndarray
    exit_position: np.ndarray  # 0-based position of each flat cell, -1 elsewhere
    outside: np.ndarray  # OUTSIDE for flat cells outside the box, else 0
    box_cell: np.ndarray  # flat cell of each 0-based box cell
    neighbour_step: np.ndarray  # flat offset of each of _NEIGHBOURS
    action: np.ndarray
    heading: np.ndarray
    turned: np.ndarray
    entry_action: np.ndarray


def _step_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The action, heading, turned and entry-action tables of the ray rules."""
    bit = {offset: b for b, offset in enumerate(_NEIGHBOURS)}
    action = np.zeros(4 * 512, dtype=np.int8)
    heading = np.zeros(4 * 512, dtype=np.int32)
    turned = np.zeros(4 * 512, dtype=np.int32)
    entry_action = np.zeros(4 * 512, dtype=np.int8)
    dir_index = {d: i for i, d in enumerate(_DIRS)}
    for d, (dl, dc) in enumerate(_DIRS):
        perp = (dc, dl)
        ahead = (dl, dc)
        left = (dl + perp[0], dc + perp[1])
        right = (dl - perp[0], dc - perp[1])
        for code in range(512):
            key = d * 512 + code

            def atom(offset: tuple[int, int], code: int = code) -> bool:
                return bool(code & (1 << bit[offset]))

            heading[key] = d
            if code & OUTSIDE:
                action[key] = EXIT
            elif atom(ahead):
                action[key] = HIT
            elif atom(left) and atom(right):
                action[key] = REFLECT
            elif atom(left):
                heading[key], turned[key] = dir_index[(-perp[0], -perp[1])], 1
            elif atom(right):
                heading[key], turned[key] = dir_index[perp], 1
            if atom(ahead):
                entry_action[key] = HIT
            elif atom(left) or atom(right):
                entry_action[key] = REFLECT
    return action, heading, turned, entry_action


@cache
def geometry(width: int, height: int | None = None) -> Geometry:
    """The flat tables of a box (``width`` wide, ``height`` high: the square when None), computed once."""
    height = width if height is None else height
    side = width + 2
    flat = lambda l, c: l * side + c  # noqa: E731
    dir_index = {d: i for i, d in enumerate(_DIRS)}
    step = np.array([flat(*d) for d in _DIRS], dtype=np.int32)
    starts = [entry(width, p, height) for p in range(1, 2 * (width + height) + 1)]
    start_cell = np.array([flat(*cell) for cell, _ in starts], dtype=np.int32)
    start_dir = np.array([dir_index[d] for _, d in starts], dtype=np.int32)
    exit_position = np.full(side * (height + 2), -1, dtype=np.int32)
    outside = np.full(side * (height + 2), OUTSIDE, dtype=np.int32)
    for l in range(height + 2):
        for c in range(side):
            if 1 <= l <= height and 1 <= c <= width:
                outside[flat(l, c)] = 0
            elif (l in (0, height + 1)) != (c in (0, width + 1)):
                exit_position[flat(l, c)] = position_at(width, (l, c), height) - 1
    box_cell = np.array([flat(i // width + 1, i % width + 1) for i in range(width * height)])
    neighbour_step = np.array([flat(dl, dc) for dl, dc in _NEIGHBOURS], dtype=np.int64)
    return Geometry(
        width,
        side,
        step,
        start_cell,
        start_dir,
        exit_position,
        outside,
        box_cell,
        neighbour_step,
        *_step_tables(),
    )


UNKNOWN = -3


def compiled(kernel, molecules: int | None = None, calls: dict[str, Callable] | None = None):
    """The numba-compiled version of a kernel, compiled (or loaded from cache) on first use.

    numba is imported only here, so that importing bbcore (``bbcore --help``,
    the TUI's start) does not pay for it.  The compiled code is cached beside
    the module, else (a read-only install) in the user's cache folder
    (``$XDG_CACHE_HOME/numba``, numba's own choice), else not at all.

    A caller that gives the batch's ``molecules`` gets the kernel itself, run
    as plain Python, when the batch is small (``PLAIN_AT_MOST``) and this
    kernel is not compiled yet in this process: the same code, so the same
    results, without numba's start.  A stored spectrum's family is 8 molecules.

    ``calls`` names the functions the kernel calls through a global of its
    module (``{"_image_number": _number_image}``): numba compiles a kernel
    with the functions it calls, which must be numba's too, so each is put in
    that global as numba's, inlined where the kernel calls it (called, not
    inlined, it cost the families kernel 4%), for good: a kernel still run
    as plain Python then calls numba's, with the same results.
    """
    identity = kernel_identity(kernel)
    if identity not in _COMPILED:
        if molecules is not None and molecules <= PLAIN_AT_MOST:
            return kernel
        for name, function in (calls or {}).items():
            kernel.__globals__[name] = _jit(function, inline="always")
        _COMPILED[identity] = _jit(kernel)
    return _COMPILED[identity]


def _jit(function, **options):
    """numba's version of a function, its compiled code cached on disk where it can be.

    Every kernel releases the GIL (``nogil``): they touch only arrays, and the
    TUI calls them from thread workers (a strategy book, a node of it, a
    decode), where a kernel that held the GIL stopped the event loop, every
    key waiting for it (3 s a key while an A5_B8 book was played).
    """
    from numba import njit

    try:
        return njit(cache=True, nogil=True, **options)(function)
    except RuntimeError:  # no folder to cache in (read-only install, no writable home)
        return njit(nogil=True, **options)(function)


def kernel_identity(kernel) -> tuple[str, str]:
    """What ``compiled`` knows a kernel by: its module and qualified name.

    Not its bare name: kernels of other modules go through ``compiled`` too
    (``check``'s, ``strategy``'s), and two of the same name would share one
    compiled function, the first one's.
    """
    return kernel.__module__, kernel.__qualname__


PLAIN_AT_MOST = 64
"""Molecules up to which a kernel not compiled yet runs as plain Python (``compiled``).
A fresh ``bbcore decode`` of a stored A6_B8 spectrum: the family's 8 molecules took
0.09 s in plain Python, importing numba and loading the two cached kernels 1.7 s
(both on a loaded machine).  A page of the groups listing (35 families, 280
molecules) is above it: it compiles, as every later call of the process does."""
_COMPILED: dict[tuple[str, str], object] = {}
"""The kernels compiled in this process, by ``kernel_identity``."""


def kernels_cached(compact: bool = False) -> bool:
    """Whether a run will load its kernels from numba's cache (about a second) rather than
    compile them (a first run after installing: up to a minute).

    A full run calls the tracing and enantiomer kernels only; a compact run
    (``compact``) the tracing, canonical, keys, profile and families ones.
    Asking for every kernel made a user who had only ever run one kind of
    exploration see "compiling" on every start (and a helper named like a
    kernel, never cached, was asked for too).  Not the kernels compiled by this
    process: the app knows those itself (``engine_loaded``).
    """
    if compact:
        kernels = (
            _trace_kernel,
            _canonical_kernel,
            _keys_kernel,
            _profile_kernel,
            _families_kernel,
            _asymmetric_families_kernel,
        )
    else:
        kernels = (_trace_kernel, _enantiomer_kernel)
    return all(_cached_on_disk(kernel) for kernel in kernels)


def kernel_ready(kernel) -> bool:
    """Whether ``compiled(kernel)`` comes at once: compiled in this process already, or
    cached on disk (loaded in about a second; compiled, it takes up to a minute).  Any
    kernel of bbcore's modules (the solver's, the strategy's, the engine's)."""
    return kernel_identity(kernel) in _COMPILED or _cached_on_disk(kernel)


def _cached_on_disk(kernel) -> bool:
    """numba names a cached kernel ``<module>.<function>-<line>.py<version>.nbi``, in one
    of the folders of ``numba_cache_folders`` (the same for every module of bbcore)."""
    version = f"py{sys.version_info.major}{sys.version_info.minor}"
    module = kernel.__module__.rpartition(".")[2]
    name = f"{module}.{kernel.__name__}-{kernel.__code__.co_firstlineno}.{version}.nbi"
    return any((folder / name).exists() for folder in numba_cache_folders())


def numba_cache_folders() -> list[Path]:
    """Where numba caches this module's kernels, in its order (``numba.core.caching``'s
    locators): ``$NUMBA_CACHE_DIR`` when set, else beside the module, else (a read-only
    install) the user's cache folder.  The last two are named after the module's folder.

    Only the folder beside the module was looked in: a cache elsewhere
    (``$NUMBA_CACHE_DIR``, a read-only install) said "compiling the engine"
    at every run, in every served session too.
    """
    source = Path(os.path.abspath(__file__))  # numba's own: not resolved
    named = f"{source.parent.name}_{hashlib.sha1(str(source.parent).encode()).hexdigest()}"
    if os.environ.get("NUMBA_CACHE_DIR"):
        return [Path(os.environ["NUMBA_CACHE_DIR"]) / named]
    user = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "numba"
    return [source.with_name("__pycache__"), user / named]


def _trace_kernel(
    atoms,
    box_cell,
    neighbour_step,
    outside,
    start_cell,
    start_dir,
    step,
    move,
    entry_action,
    exit_position,
    max_steps,
    reversible,
    partner,
    length,
    turns,
):  # pragma: no cover
    """Trace every selected position of every molecule (compiled by numba).

    Each molecule's neighbourhood codes are built in one reused buffer: each
    atom sets its bit in its 8 neighbours' codes.  With ``reversible`` (all
    positions, in order) a ray that came out at a later position fills that
    position too, which is then not traced again.  Returns the number of rays
    that did not end (always 0 unless a bug).
    """
    k, npos = partner.shape
    n_atoms = atoms.shape[1]
    code = outside.copy()
    base = 0
    lost = 0
    for m in range(k):
        for a in range(n_atoms):
            cell = box_cell[atoms[m, a]]
            for b in range(8):
                # the atom is neighbour 7 - b of the cell at offset b from it
                code[cell + neighbour_step[b]] |= 1 << (7 - b)
        for j in range(npos):
            if partner[m, j] != UNKNOWN:
                continue
            d = start_dir[j]
            p = base + start_cell[j]
            first = entry_action[d * 512 + code[p]]
            if first == HIT:
                partner[m, j] = ABSORBED_CODE
                continue
            if first == REFLECT:
                partner[m, j] = REFLECTED_CODE
                continue
            bent = 0
            ended = False
            p += step[d]
            for s in range(1, max_steps + 1):
                # one look-up a cell: what happens, the heading, a turn, the next cell's offset
                mv = move[d * 512 + code[p]]
                act = mv & 3
                if act == GO:
                    bent += (mv >> 4) & 1
                    d = (mv >> 2) & 3
                    p += mv >> 5
                    continue
                ended = True
                turns[m, j] = bent
                if act == EXIT:
                    q = exit_position[p]
                    partner[m, j] = q
                    length[m, j] = s - 1
                    if reversible:
                        partner[m, q] = j
                        length[m, q] = s - 1
                        turns[m, q] = bent
                else:
                    partner[m, j] = ABSORBED_CODE if act == HIT else REFLECTED_CODE
                    length[m, j] = s
                break
            if not ended:
                lost += 1
        for a in range(n_atoms):
            cell = box_cell[atoms[m, a]]
            for b in range(8):
                code[cell + neighbour_step[b]] &= ~(1 << (7 - b))
    return lost


@cache
def _move_table(width: int) -> np.ndarray:
    """``action``, ``heading``, ``turned`` and the flat offset of the heading's next cell in one
    int64 a (direction, neighbourhood code): ``action | heading << 2 | turned << 4 | offset << 5``.

    A ray's step is then two dependent loads (the cell's code, this entry)
    instead of four: tracing is a chain of them, so its latency is the
    kernel's time."""
    geo = geometry(width)
    return (
        geo.action.astype(np.int64)
        | geo.heading.astype(np.int64) << 2
        | geo.turned.astype(np.int64) << 4
        | geo.step[geo.heading].astype(np.int64) << 5
    )


def trace_batch(config: Config, atoms: np.ndarray, positions: np.ndarray | None = None):
    """Trace rays of a batch of molecules (cells, shape (k, N)).

    ``positions`` are 0-based (default: all 4W).  Returns three int32 arrays
    of shape (k, len(positions)): ``partner`` (0-based exit position, or
    ABSORBED_CODE / REFLECTED_CODE), ``length`` and ``turns``.
    """
    geo = geometry(config.width, config.height)
    reversible = positions is None
    positions = np.arange(config.positions) if positions is None else np.asarray(positions)
    shape = (len(atoms), len(positions))
    partner = np.full(shape, UNKNOWN, dtype=np.int32)
    length = np.zeros(shape, dtype=np.int32)
    turns = np.zeros(shape, dtype=np.int32)
    lost = compiled(_trace_kernel, len(atoms))(
        np.ascontiguousarray(atoms, dtype=np.int64),
        geo.box_cell,
        geo.neighbour_step,
        geo.outside,
        geo.start_cell[positions],
        geo.start_dir[positions],
        geo.step,
        _move_table(config.width),
        geo.entry_action,
        geo.exit_position,
        2 * config.cells,
        reversible,
        partner,
        length,
        turns,
    )
    if lost:
        raise RayLoopError(f"{config.name}: {lost} rays did not end")
    return partner, length, turns


def letters(partner: np.ndarray) -> np.ndarray:
    """Normalised spectra as uint8 characters, shape (k, 4W), from partner arrays."""
    k, npos = partner.shape
    index = np.arange(npos)
    first = partner > index  # first end of an exit pair (an exit to oneself is impossible)
    letter = np.cumsum(first, axis=1) - 1
    paired = np.take_along_axis(letter, np.where(partner >= 0, partner, 0), axis=1)
    chars = np.where(first, letter, paired) + ord("a")
    chars = np.where(partner == ABSORBED_CODE, ord("@"), chars)
    chars = np.where(partner == REFLECTED_CODE, ord("&"), chars)
    return chars.astype(np.uint8)


@cache
def _symmetry_tables(width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cell permutations, position sources and their inverses of the 8 transforms."""
    cells = np.array([cell_permutation(width, t) for t in TRANSFORM_NAMES], dtype=np.int64)
    source = np.array([position_source(width, t) for t in TRANSFORM_NAMES], dtype=np.int64) - 1
    inverse = np.argsort(source, axis=1)
    return cells, source, inverse


def image_numbers(config: Config, atoms: np.ndarray, table: np.ndarray) -> np.ndarray:
    """Numbers of the 8 images of each molecule, shape (k, 8), in transform order."""
    cells, _, _ = _symmetry_tables(config.width)
    return np.stack([numbers_of(config, np.sort(cells[t][atoms], axis=1), table) for t in range(8)], axis=1)


@dataclass
class EnantiomerBatch:
    """Every molecule of the enantiomer groups whose canonical molecule is in a range.

    Rows are ordered by canonical number, then by number; ``transform`` holds
    indexes into ``TRANSFORM_NAMES``.
    """

    config: Config
    start: int
    stop: int
    number: np.ndarray
    canonical_number: np.ndarray
    transform: np.ndarray
    molecule: np.ndarray  # uint8 (k, W*W)
    spectrum: np.ndarray  # uint8 (k, 4W)
    stats: np.ndarray  # int (k, 17)

    def __len__(self) -> int:
        return len(self.number)

    def rows(self, *constants: object) -> list[tuple]:
        """Row tuples in ``store.MOLECULE_COLUMNS`` order, ``constants`` appended (dh1, dh2).

        Strings are decoded here, in the worker, rather than cast by SQLite:
        ``CAST(? AS TEXT)`` doubled the writer's time (bench/explore.py).
        """
        names = np.array(TRANSFORM_NAMES, dtype=object)
        return list(
            zip(
                [self.config.name] * len(self),
                self.number.tolist(),
                self.canonical_number.tolist(),
                _ascii(self.molecule),
                _ascii(self.spectrum),
                names[self.transform].tolist(),
                *self.stats.T.tolist(),
                *([value] * len(self) for value in constants),
            )
        )


def _ascii(chars: np.ndarray) -> list[str]:
    """Rows of a uint8 character array as Python strings."""
    return [row.decode("ascii") for row in chars.view(f"S{chars.shape[1]}").ravel().tolist()]


_STAT = {name: index for index, name in enumerate(STAT_FIELDS)}
_STATS = len(STAT_FIELDS)
_ABSORBED_NUMBER, _REFLECTED_NUMBER, _OUT_NUMBER = (
    _STAT[f"{c}_number"] for c in ("absorbed", "reflected", "out")
)
_REFLECTED_EDGE, _REFLECTED_DEEP = _STAT["reflected_edge"], _STAT["reflected_deep"]
_ABSORBED_FIGURES, _REFLECTED_FIGURES, _OUT_FIGURES = (
    _STAT[f"{c}_max_length"] for c in ("absorbed", "reflected", "out")
)
"""Where the kernel counts each ray class: its number, and its figures from max length on.

A class's four figures follow each other in STAT_FIELDS (max length, max
turns, total length, total turns), which the kernel relies on."""
assert all(
    [STAT_FIELDS[first + i] for i in range(4)]
    == [f"{c}_{m}" for m in ("max_length", "max_turns", "tot_length", "tot_turns")]
    for c, first in (
        ("absorbed", _ABSORBED_FIGURES),
        ("reflected", _REFLECTED_FIGURES),
        ("out", _OUT_FIGURES),
    )
)


def _number_image(atoms, m, t, cell_perm, table, nb_mol, image):  # pragma: no cover
    """The number of molecule ``m``'s image by transform ``t``; its cells are left in ``image``, sorted.

    What both grouping kernels (``_enantiomer_kernel``, ``_families_kernel``)
    do for each of a molecule's 8 images: the image's cells in increasing
    order (an insertion sort: numba's sort is slow on tiny arrays), then its
    number, as ``numbering.numbers_of`` gives it.  The kernels call it as
    ``_image_number``, compiled with them (``compiled``'s ``calls``).
    """
    n = atoms.shape[1]
    cells = cell_perm.shape[1]
    for i in range(n):
        cell = cell_perm[t, atoms[m, i]]
        j = i - 1
        while j >= 0 and image[j] > cell:
            image[j + 1] = image[j]
            j -= 1
        image[j + 1] = cell
    colex = 0
    for i in range(n):
        colex += table[cells - 1 - image[i], n - i]
    return nb_mol - colex


_image_number = _number_image
"""What the grouping kernels call: ``_number_image`` itself while they run as plain Python,
numba's compiled version once one of them is compiled (``compiled``'s ``calls``)."""


def _cells_apart(image, x, y):  # pragma: no cover
    """How many atoms of row ``x`` of ``image`` (sorted cells, a molecule a row) are not in row
    ``y``: the atoms differing between two molecules (a merge of the two rows).  The families
    kernels call it as ``_atoms_apart``, compiled with them, as ``_image_number``."""
    n = image.shape[1]
    i = j = common = 0
    while i < n and j < n:
        if image[x, i] == image[y, j]:
            common += 1
            i += 1
            j += 1
        elif image[x, i] < image[y, j]:
            i += 1
        else:
            j += 1
    return n - common


_atoms_apart = _cells_apart


def _equal_rows(spectrum, x, y):  # pragma: no cover
    """Whether rows ``x`` and ``y`` of ``spectrum`` (a spectrum a row) are equal, position by
    position: the exact check of two spectra whose hashes agree.  Called as ``_same_spectrum``."""
    for j in range(spectrum.shape[1]):
        if spectrum[x, j] != spectrum[y, j]:
            return False
    return True


_same_spectrum = _equal_rows
_KERNEL_CALLS = {"_image_number": _number_image, "_atoms_apart": _cells_apart, "_same_spectrum": _equal_rows}
"""The functions the grouping kernels call through a global (``compiled``'s ``calls``)."""


def _enantiomer_kernel(
    atoms,
    own,
    partner,
    length,
    turns,
    cell_perm,
    source,
    inverse,
    table,
    nb_mol,
    number,
    canonical,
    transform,
    molecule,
    spectrum,
    stats,
):  # pragma: no cover
    """Expand traced canonical molecules into their whole enantiomer groups (numba).

    For each canonical molecule: its 17 statistics; then each distinct image
    (first transform in table order), its number, board and normalised
    spectrum; a group's rows sorted by number.  Returns the number of rows.
    """
    k, n = atoms.shape
    npos = partner.shape[1]
    cells = cell_perm.shape[1]
    image = np.empty(n, dtype=np.int64)
    numbers = np.empty(8, dtype=np.int64)
    kept = np.empty(8, dtype=np.int64)
    letter_of = np.empty(npos, dtype=np.int64)
    st = np.empty(_STATS, dtype=np.int64)
    row = 0
    for m in range(k):
        # The statistics, in STAT_FIELDS order (the _STAT indexes above).
        st[:] = 0
        for j in range(npos):
            q = partner[m, j]
            ln = length[m, j]
            if q == ABSORBED_CODE:
                first, figures = _ABSORBED_NUMBER, _ABSORBED_FIGURES
            elif q == REFLECTED_CODE:
                first, figures = _REFLECTED_NUMBER, _REFLECTED_FIGURES
                st[_REFLECTED_DEEP if ln > 0 else _REFLECTED_EDGE] += 1
            elif q > j:  # an exit pair, counted at its first end
                first, figures = _OUT_NUMBER, _OUT_FIGURES
            else:
                continue
            st[first] += 1
            st[figures] = max(st[figures], ln)
            st[figures + 1] = max(st[figures + 1], turns[m, j])
            st[figures + 2] += ln
            st[figures + 3] += turns[m, j]
        # Image numbers; keep the first transform giving each distinct image.
        nkept = 0
        for t in range(8):
            numbers[t] = _image_number(atoms, m, t, cell_perm, table, nb_mol, image)
            seen = False
            for u in range(nkept):
                if numbers[kept[u]] == numbers[t]:
                    seen = True
            if not seen:
                kept[nkept] = t
                nkept += 1
        # A group's rows by increasing number (insertion sort of at most 8).
        for i in range(1, nkept):
            t = kept[i]
            j = i - 1
            while j >= 0 and numbers[kept[j]] > numbers[t]:
                kept[j + 1] = kept[j]
                j -= 1
            kept[j + 1] = t
        for u in range(nkept):
            t = kept[u]
            number[row] = numbers[t]
            canonical[row] = own[m]
            transform[row] = t
            for c in range(cells):
                molecule[row, c] = 45  # '-'
            for i in range(n):
                molecule[row, cell_perm[t, atoms[m, i]]] = 79  # 'O'
            letter = 0
            for j in range(npos):
                q = partner[m, source[t, j]]
                if q == ABSORBED_CODE:
                    spectrum[row, j] = 64  # '@'
                elif q == REFLECTED_CODE:
                    spectrum[row, j] = 38  # '&'
                else:
                    other = inverse[t, q]
                    if other > j:
                        letter_of[j] = letter
                        letter += 1
                    else:
                        letter_of[j] = letter_of[other]
                    spectrum[row, j] = 97 + letter_of[j]
            for f in range(_STATS):
                stats[row, f] = st[f]
            row += 1
    return row


def explore_range(config: Config, start: int, stop: int) -> EnantiomerBatch:
    """All enantiomer groups whose canonical molecule is numbered start..stop-1."""
    atoms, own = canonical_molecules(config, start, stop)
    return groups_of_canonicals(config, atoms, own)


# -- the compact exploration: canonical molecules and spectrum keys ---------------


def _canonical_kernel(
    first, count, start, cells, cell_perm, smallest_image, table, out_atoms, out_numbers
):  # pragma: no cover
    """The canonical molecules among ``count`` consecutive numbers from ``start`` (numba).

    ``first`` holds the atoms of molecule ``start``; the next ones follow in
    lexicographic order, which is number order.  A molecule is canonical
    when none of its 7 other images is lexicographically smaller (has a
    smaller number): an image whose first cell comes after the molecule's
    first atom is larger, and no other needs sorting to tell.  One
    with an atom some image of which lies before its first atom
    (``smallest_image``: each cell's smallest image) is not, nor is any
    molecule with the same atoms up to that one: when it is the first of
    them, they are skipped together (``table``: the binomials, for how many
    they are), which skips most numbers of a configuration unvisited.
    Returns how many were written to ``out_atoms`` / ``out_numbers``.
    """
    n = first.shape[0]
    atoms = first.copy()
    image = np.empty(n, dtype=np.int64)
    found = 0
    i = 0
    while i < count:
        step = 1
        canonical = True
        before = -1  # the first atom with an image before the first atom
        for a in range(n):
            if smallest_image[atoms[a]] < atoms[0]:
                before = a
                break
        if before >= 0:
            canonical = False
            first_of_them = True
            for a in range(before + 1, n):
                if atoms[a] != atoms[before] + a - before:
                    first_of_them = False
                    break
            if first_of_them:  # on to the last of them, and past it
                step = table[cells - 1 - atoms[before], n - 1 - before]
                for a in range(before + 1, n):
                    atoms[a] = cells - n + a
        else:
            for t in range(1, 8):
                low = cell_perm[t, atoms[0]]
                for a in range(1, n):
                    low = min(low, cell_perm[t, atoms[a]])
                if low > atoms[0]:
                    continue  # the image starts after the molecule: larger, no sorting needed
                for a in range(n):  # insertion sort of the image's cells
                    cell = cell_perm[t, atoms[a]]
                    b = a - 1
                    while b >= 0 and image[b] > cell:
                        image[b + 1] = image[b]
                        b -= 1
                    image[b + 1] = cell
                for a in range(n):
                    if image[a] != atoms[a]:
                        if image[a] < atoms[a]:
                            canonical = False
                        break
                if not canonical:
                    break
        if canonical:
            for a in range(n):
                out_atoms[found, a] = atoms[a]
            out_numbers[found] = start + i
            found += 1
        i += step
        # the next combination in lexicographic order
        j = n - 1
        while j >= 0 and atoms[j] == cells - n + j:
            j -= 1
        if j < 0:
            break
        atoms[j] += 1
        for a in range(j + 1, n):
            atoms[a] = atoms[a - 1] + 1
    return found


def canonical_molecules(config: Config, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
    """The canonical molecules numbered start..stop-1: their atoms (k, N) and numbers (k,)."""
    count = stop - start
    if count <= 0:
        return np.empty((0, config.atoms), dtype=np.int64), np.empty(0, dtype=np.int64)
    cells, _, _ = _symmetry_tables(config.width)
    table = binomial_table(config)  # once a call: 135 us on A7_B8, a call every 65,536 numbers
    first = atoms_of_numbers(config, np.array([start], dtype=np.int64), table)[0]
    atoms = np.empty((count, config.atoms), dtype=np.int64)
    numbers = np.empty(count, dtype=np.int64)
    found = compiled(_canonical_kernel)(
        first, count, start, config.cells, cells, cells.min(axis=0), table, atoms, numbers
    )
    return atoms[:found], numbers[:found]


_HASH_START = np.uint64(0x243F6A8885A308D3)
_HASH_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)
_MIX_1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX_2 = np.uint64(0x94D049BB133111EB)


LEXICAL = "lexical"
"""A compact run's keying since 2026-12-02: a key is the hash of the spectrum's lexicographically
smallest image (one hash a molecule; the images compared position by position stop at the first
difference, mostly the first or second position)."""
HASHED = "hashed"
"""The keying of compact runs begun before 2026-12-02: the smallest of the images' 8 hashes.  A run
keeps the keying it began with (``compact.trace.run_keying``); a reader tries both (``KEYINGS``)."""
KEYINGS = (LEXICAL, HASHED)


def _keys_kernel(
    atoms, partner, cell_perm, source, codes, lexical, keys, orbit, shared, lowest
):  # pragma: no cover
    """Spectrum keys of traced canonical molecules (numba).

    An image's spectrum is the molecule's partner array with the positions
    moved by the transform (exit positions, not letters, so no normalising
    is needed); ``codes`` gives each position's code.  The key is the same
    for every molecule of the enantiomer group and for every molecule whose
    spectrum is one of these images': with ``lexical`` (``LEXICAL``), the
    64-bit hash of the lexicographically smallest image (by codes); else
    (``HASHED``) the smallest of the distinct images' hashes.  ``orbit`` is
    the number of distinct images.  ``shared`` is set when two distinct
    images may have the same spectrum: with ``lexical``, exactly when they
    do (more transforms leave the spectrum unchanged than leave the atoms
    in place); else when their hashes are equal.  ``lowest`` is the
    transform of the key's image (the smallest, either way) when the
    molecule has 8 distinct images and ``shared`` is not set, else -1.
    """
    k, n = atoms.shape
    npos = partner.shape[1]
    image = np.empty(n, dtype=np.int64)
    seen = np.empty((8, n), dtype=np.int64)
    kept = np.empty(8, dtype=np.int64)
    every = np.empty(8, dtype=np.uint64)
    hashes = np.empty(8, dtype=np.uint64)
    occupied = np.zeros(cell_perm.shape[1], dtype=np.bool_)
    for m in range(k):
        # most molecules have 8 distinct images: none but the identity maps the atoms onto
        # themselves (one look-up a transform, mostly), and their images need no sorting
        for a in range(n):
            occupied[atoms[m, a]] = True
        symmetric = False
        for t in range(1, 8):
            onto = True
            for a in range(n):
                if not occupied[cell_perm[t, atoms[m, a]]]:
                    onto = False
                    break
            if onto:
                symmetric = True
                break
        for a in range(n):
            occupied[atoms[m, a]] = False
        distinct = 0
        for t in range(8):
            if not symmetric:
                kept[t] = t
                distinct = 8
                continue
            for a in range(n):
                cell = cell_perm[t, atoms[m, a]]
                b = a - 1
                while b >= 0 and image[b] > cell:
                    image[b + 1] = image[b]
                    b -= 1
                image[b + 1] = cell
            repeated = False
            for u in range(distinct):
                same = True
                for a in range(n):
                    if seen[u, a] != image[a]:
                        same = False
                        break
                if same:
                    repeated = True
                    break
            if repeated:
                continue
            for a in range(n):
                seen[distinct, a] = image[a]
            kept[distinct] = t
            distinct += 1
        ties = 0
        if lexical:
            # the smallest image: the first transform giving it, and how many others give it too
            # (compared with it once it is the smallest; the ones before it are larger)
            best = 0
            for t in range(1, 8):
                order = 0
                for j in range(npos):
                    mine = codes[t, partner[m, source[t, j]] + 2]
                    theirs = codes[best, partner[m, source[best, j]] + 2]
                    if mine != theirs:
                        order = -1 if mine < theirs else 1
                        break
                if order < 0:
                    best = t
                    ties = 0
                elif order == 0:
                    ties += 1
            h = _HASH_START
            for j in range(npos):
                h = (h ^ codes[best, partner[m, source[best, j]] + 2]) * _HASH_MULTIPLIER
                h = h ^ (h >> np.uint64(29))
            every[best] = h
            kept[0] = best
            hashed = 1
        else:
            # the 8 images' hashes side by side (a repeated image's too: the same hash, not used),
            # so that 8 independent chains of multiplications overlap in the CPU; a position's
            # code is one look-up (``_hash_codes``), without a branch on the ray's outcome
            for t in range(8):
                every[t] = _HASH_START
            for j in range(npos):
                for t in range(8):
                    h = (every[t] ^ codes[t, partner[m, source[t, j]] + 2]) * _HASH_MULTIPLIER
                    every[t] = h ^ (h >> np.uint64(29))
            hashed = distinct
        smallest = np.uint64(0xFFFFFFFFFFFFFFFF)
        clash = False
        chosen = -1
        for u in range(hashed):
            h = every[kept[u]]
            h = h ^ (h >> np.uint64(30))
            h = h * _MIX_1
            h = h ^ (h >> np.uint64(27))
            h = h * _MIX_2
            h = h ^ (h >> np.uint64(31))
            for v in range(u):
                if hashes[v] == h:
                    clash = True
            hashes[u] = h
            if h < smallest:
                smallest = h
                chosen = kept[u]
        if lexical:
            clash = (1 + ties) * distinct > 8
        keys[m] = smallest
        orbit[m] = distinct
        shared[m] = clash
        lowest[m] = chosen if distinct == 8 and not clash else -1


@cache
def _hash_codes(width: int) -> np.ndarray:
    """What a spectrum's hash mixes in for each transform and partner code, shape (8, 4W + 2):
    column ``q + 2`` holds ``q + 3`` for an absorbed or reflected ray (q < 0), else the moved
    exit position plus 3 (``inverse[t, q] + 3``), as ``spectra_keys`` computes it."""
    _, _, inverse = _symmetry_tables(width)
    codes = np.empty((8, 4 * width + 2), dtype=np.uint64)
    codes[:, 0] = REFLECTED_CODE + 3
    codes[:, 1] = ABSORBED_CODE + 3
    codes[:, 2:] = inverse + 3
    return codes


class SpectrumKeys(NamedTuple):
    """What ``spectrum_keys`` gives for each traced canonical molecule (see ``_keys_kernel``)."""

    keys: np.ndarray  # uint64
    orbit: np.ndarray  # int8: its distinct images
    shared: np.ndarray  # bool: two distinct images with the same spectrum
    lowest: np.ndarray  # int8: the transform of the image giving the key when asymmetric, else -1


def spectrum_keys(
    config: Config, atoms: np.ndarray, partner: np.ndarray, keying: str = LEXICAL
) -> SpectrumKeys:
    """The keys, orbits, ``shared`` and ``lowest`` of traced canonical molecules (``SpectrumKeys``).

    ``keys`` (uint64) is equal for two molecules whose spectra are equal
    or images of each other by a symmetry; different spectra may rarely
    share a key (a 64-bit hash), so a key only ever proposes a spectral
    group, which is then checked spectrum by spectrum.  ``keying`` is
    ``LEXICAL`` or ``HASHED`` (a run begun before 2026-12-02).
    """
    cells, source, _ = _symmetry_tables(config.width)
    k = len(atoms)
    keys = np.empty(k, dtype=np.uint64)
    orbit = np.empty(k, dtype=np.int8)
    shared = np.empty(k, dtype=np.bool_)
    lowest = np.empty(k, dtype=np.int8)
    compiled(_keys_kernel)(
        np.ascontiguousarray(atoms, dtype=np.int64),
        partner,
        cells,
        source,
        _hash_codes(config.width),
        _lexical(keying),
        keys,
        orbit,
        shared,
        lowest,
    )
    return SpectrumKeys(keys, orbit, shared, lowest)


def _lexical(keying: str) -> bool:
    """Whether a keying is ``LEXICAL`` (else ``HASHED``); any other name is a programming error."""
    if keying not in KEYINGS:
        raise ValueError(f"unknown keying {keying!r}: one of {', '.join(KEYINGS)}")
    return keying == LEXICAL


def spectra_keys(config: Config, partner: np.ndarray, keying: str = LEXICAL) -> np.ndarray:
    """The keys (uint64) of spectra given as partner arrays (k, 4W), as ``spectrum_keys`` gives them.

    The key of any molecule with that spectrum, so a typed spectrum finds
    its family in a compact store (``bbcore.families``) without tracing
    anything.  numpy, not numba: a reader asks for one spectrum at a time.
    """
    _, source, _ = _symmetry_tables(config.width)
    partner = np.asarray(partner, dtype=np.int64).reshape(-1, config.positions)
    # codes[m, t, j]: position j's code in spectrum m's image by transform t (``_hash_codes``)
    codes = _hash_codes(config.width)[np.arange(8)[None, :, None], partner[:, source] + 2]
    if _lexical(keying):
        smallest = np.ones(codes.shape[:2], dtype=bool)  # the images still tied for the smallest
        for j in range(config.positions):
            column = np.where(smallest, codes[:, :, j], np.iinfo(np.uint64).max)
            smallest &= column == column.min(axis=1, keepdims=True)
        codes = codes[np.arange(len(codes)), smallest.argmax(axis=1)][:, None, :]
    hashes = np.full(codes.shape[:2], _HASH_START, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(config.positions):
            hashes = (hashes ^ codes[:, :, j]) * _HASH_MULTIPLIER
            hashes ^= hashes >> np.uint64(29)
        hashes ^= hashes >> np.uint64(30)
        hashes *= _MIX_1
        hashes ^= hashes >> np.uint64(27)
        hashes *= _MIX_2
        hashes ^= hashes >> np.uint64(31)
    return hashes.min(axis=1)


def stored_keys(config: Config, partner: np.ndarray) -> np.ndarray:
    """The keys a compact store's family of each of these spectra may have: shape (k, 2), int64 (as
    ``Families.key`` holds them), one column a keying (``KEYINGS``: a store keeps its run's)."""
    return np.stack([spectra_keys(config, partner, keying) for keying in KEYINGS], axis=1).view(np.int64)


def _profile_kernel(partner, length, turns, out):  # pragma: no cover
    """The 9 profile statistics of each traced molecule into ``out`` (numba; see ``ray_profile``)."""
    k, npos = partner.shape
    for m in range(k):
        for column in range(9):
            out[m, column] = 0
        for j in range(npos):
            q = partner[m, j]
            if q == ABSORBED_CODE:
                kind = 0
            elif q == REFLECTED_CODE:
                kind = 1
            elif q > j:
                kind = 2
            else:
                continue  # an out ray's second end: counted at its first
            out[m, kind] += 1
            if length[m, j] > out[m, 3 + kind]:
                out[m, 3 + kind] = length[m, j]
            if turns[m, j] > out[m, 6 + kind]:
                out[m, 6 + kind] = turns[m, j]


def ray_profile(partner: np.ndarray, length: np.ndarray, turns: np.ndarray) -> np.ndarray:
    """The 9 profile statistics of traced molecules, shape (k, 9), int64.

    In ``statistics.PROFILE_COLUMNS`` order: the number of absorbed,
    reflected and out rays (out: pairs), then the longest ray of each class,
    then the most turns of each class (0 when the class has no ray), as the
    stored statistics count them (an out pair at its first end).  A numba
    kernel: numpy's masks over the (k, 4W) arrays took as long as tracing.
    """
    out = np.empty((len(partner), 9), dtype=np.int64)
    compiled(_profile_kernel)(partner, length, turns, out)
    return out


# -- the compact grouping: families of ambiguous spectra, exactly -----------------


INSERTION_ROWS = 64
"""The most rows of a run that ``_families_kernel`` sorts by insertion, numba's argsort beyond
(``families_of_runs``' default: ``bench/grouping.py`` compares them)."""


def _families_kernel(
    atoms,
    own,
    runs,
    partner,
    cell_perm,
    source,
    inverse,
    table,
    nb_mol,
    family_row,
    family_size,
    family_spectra,
    family_max_diff,
    family_end,
    members,
    insertion_rows,
):  # pragma: no cover
    """The families of ambiguous spectra among runs of traced canonical molecules (numba).

    ``runs[r]..runs[r + 1]`` are the canonical molecules of one key, whose
    enantiomer groups may share spectra.  Each run's molecules (each
    canonical molecule's distinct images, the first transform in table
    order giving each) are grouped by spectrum, exactly: sorted by a hash of
    the spectrum (the image's partner array, positions moved by the
    transform), then compared position by position within equal hashes.  A
    group of two molecules or more whose first molecule (the smallest
    canonical number, then number) is a canonical molecule itself opens a
    family; its other spectra are the groups whose first molecule is an
    image of that canonical molecule.  For each family: its canonical
    molecule's row, the molecules of a spectrum, its spectra, the most atoms
    differing between two molecules of a spectrum (symmetry keeps it equal
    in every spectrum), and the molecules of its first spectrum by number
    into ``members`` up to ``family_end``.  No strings, no statistics: what
    ``bbcore.compact`` writes and nothing more.  Returns the families.
    """
    n = atoms.shape[1]
    npos = partner.shape[1]
    longest = 0
    for r in range(len(runs) - 1):
        longest = max(longest, runs[r + 1] - runs[r])
    rows = 8 * longest
    number = np.empty(rows, dtype=np.int64)
    row_of = np.empty(rows, dtype=np.int64)
    transform = np.empty(rows, dtype=np.int64)
    image = np.empty((rows, n), dtype=np.int64)
    spectrum = np.empty((rows, npos), dtype=np.int64)
    hashed = np.empty(rows, dtype=np.uint64)
    order = np.empty(rows, dtype=np.int64)
    group = np.empty(rows, dtype=np.int64)
    listed = np.empty(rows, dtype=np.int64)
    start = np.empty(rows + 1, dtype=np.int64)
    filled = np.empty(rows, dtype=np.int64)
    spectra_of = np.zeros(max(longest, 1), dtype=np.int64)
    numbers = np.empty(8, dtype=np.int64)
    sorted_cells = np.empty(n, dtype=np.int64)
    families = 0
    written = 0
    for r in range(len(runs) - 1):
        first, last = runs[r], runs[r + 1]
        count = 0
        for m in range(first, last):
            for t in range(8):
                numbers[t] = _image_number(atoms, m, t, cell_perm, table, nb_mol, sorted_cells)
                seen = False
                for u in range(t):
                    if numbers[u] == numbers[t]:
                        seen = True
                        break
                if seen:
                    continue
                number[count] = numbers[t]
                row_of[count] = m
                transform[count] = t
                for i in range(n):
                    image[count, i] = sorted_cells[i]
                h = _HASH_START
                for j in range(npos):
                    q = partner[m, source[t, j]]
                    code = q if q < 0 else inverse[t, q]
                    spectrum[count, j] = code
                    h = (h ^ np.uint64(code + 3)) * _HASH_MULTIPLIER
                    h = h ^ (h >> np.uint64(29))
                hashed[count] = h
                count += 1
        # rows by hash (an insertion sort while few: numba's argsort of a run's 8 to 40 rows took
        # a fifth of the kernel), then exact groups within each stretch of equal hashes
        if count <= insertion_rows:
            for i in range(count):
                h = hashed[i]
                j = i - 1
                while j >= 0 and hashed[order[j]] > h:
                    order[j + 1] = order[j]
                    j -= 1
                order[j + 1] = i
        else:
            order[:count] = np.argsort(hashed[:count])
        groups = 0
        for i in range(count):
            group[i] = -1
        low = 0
        while low < count:
            high = low + 1
            while high < count and hashed[order[high]] == hashed[order[low]]:
                high += 1
            for a in range(low, high):
                x = order[a]
                if group[x] >= 0:
                    continue
                group[x] = groups
                for b in range(a + 1, high):
                    y = order[b]
                    if group[y] >= 0:
                        continue
                    if _same_spectrum(spectrum, x, y):
                        group[y] = groups
                groups += 1
            low = high
        # the rows group by group (a counting sort), each group's by number
        for g in range(groups + 1):
            start[g] = 0
        for i in range(count):
            start[group[i] + 1] += 1
        for g in range(groups):
            start[g + 1] += start[g]
        for g in range(groups):
            filled[g] = start[g]
        for i in range(count):
            g = group[i]
            j = filled[g] - 1  # insertion by number among the group's rows placed so far
            while j >= start[g] and number[listed[j]] > number[i]:
                listed[j + 1] = listed[j]
                j -= 1
            listed[j + 1] = i
            filled[g] += 1
        # each group: its first molecule, and what it adds to a family
        for m in range(last - first):
            spectra_of[m] = 0
        for g in range(groups):
            size = start[g + 1] - start[g]
            head = listed[start[g]]
            for a in range(start[g] + 1, start[g + 1]):
                i = listed[a]
                if own[row_of[i]] < own[row_of[head]]:
                    head = i
            if size < 2:
                continue
            spectra_of[row_of[head] - first] += 1
            if transform[head] != 0:
                continue
            most = 0
            for a in range(start[g], start[g + 1]):
                for b in range(a + 1, start[g + 1]):
                    most = max(most, _atoms_apart(image, listed[a], listed[b]))
            family_row[families] = row_of[head]
            family_size[families] = size
            family_max_diff[families] = most
            for a in range(start[g], start[g + 1]):
                members[written] = number[listed[a]]
                written += 1
            family_end[families] = written
            families += 1
        for f in range(families - 1, -1, -1):
            m = family_row[f]
            if m < first:
                break
            family_spectra[f] = spectra_of[m - first]
    return families


def _asymmetric_families_kernel(
    atoms,
    own,
    lowest,
    runs,
    partner,
    cell_perm,
    source,
    inverse,
    compose,
    table,
    nb_mol,
    family_row,
    family_size,
    family_max_diff,
    family_end,
    members,
):  # pragma: no cover
    """The families of ambiguous spectra among runs of asymmetric canonical molecules (numba).

    What ``_families_kernel`` finds, when every molecule of a run has 8
    distinct images whose spectra are distinct, and ``lowest[m]`` is the
    transform of the image that gives the key (``spectrum_keys``: the
    smallest image, or the one of smallest hash with a run's hashed keys).
    That image's spectrum is the run's key's: so the run's molecules are
    grouped by that one image's spectrum (the partner array moved by the
    transform), exactly, position by position, and no other image is
    hashed.  A group of two molecules or more is a family of 8 spectra,
    one molecule of each canonical molecule in each: its canonical
    molecule is the one of smallest number, and its first spectrum's
    molecules are each one's image by ``lowest`` then back by the
    canonical molecule's inverse (``compose``: ``compose[u, t]`` is t then
    u).  Returns the families.
    """
    n = atoms.shape[1]
    npos = partner.shape[1]
    longest = 1
    for r in range(len(runs) - 1):
        longest = max(longest, runs[r + 1] - runs[r])
    spectrum = np.empty((longest, npos), dtype=np.int64)
    label = np.empty(longest, dtype=np.int64)
    rows = np.empty(longest, dtype=np.int64)
    number = np.empty(longest, dtype=np.int64)
    image = np.empty((longest, n), dtype=np.int64)
    sorted_cells = np.empty(n, dtype=np.int64)
    identity = 0
    families = 0
    written = 0
    for r in range(len(runs) - 1):
        first, last = runs[r], runs[r + 1]
        count = last - first
        for x in range(count):
            t = lowest[first + x]
            for j in range(npos):
                q = partner[first + x, source[t, j]]
                spectrum[x, j] = q if q < 0 else inverse[t, q]
            label[x] = -1
        for x in range(count):
            if label[x] >= 0:
                continue
            label[x] = x
            size = 1
            rows[0] = x
            for y in range(x + 1, count):
                if label[y] >= 0:
                    continue
                if _same_spectrum(spectrum, x, y):
                    label[y] = x
                    rows[size] = y
                    size += 1
            if size < 2:
                continue
            head = rows[0]
            for a in range(1, size):
                if own[first + rows[a]] < own[first + head]:
                    head = rows[a]
            back = 0
            for u in range(8):
                if compose[u, lowest[first + head]] == identity:
                    back = u
            for a in range(size):
                m = first + rows[a]
                number[a] = _image_number(
                    atoms, m, compose[back, lowest[m]], cell_perm, table, nb_mol, sorted_cells
                )
                for i in range(n):
                    image[a, i] = sorted_cells[i]
            most = 0
            for a in range(size):
                for b in range(a + 1, size):
                    most = max(most, _atoms_apart(image, a, b))
            for a in range(size):  # the first spectrum's molecules by number (an insertion sort)
                value = number[a]
                b = written + a - 1
                while b >= written and members[b] > value:
                    members[b + 1] = members[b]
                    b -= 1
                members[b + 1] = value
            written += size
            family_row[families] = first + head
            family_size[families] = size
            family_max_diff[families] = most
            family_end[families] = written
            families += 1
    return families


@dataclass
class Families:
    """The families of ambiguous spectra of some canonical molecules (``families_of_runs``), in
    the order of their runs: each family's canonical molecule (its row among those given), the
    molecules of each of its spectra, its spectra, its most atoms differing, and the molecules
    of its first spectrum (the canonical molecule's own), ``members[ends[f - 1]:ends[f]]``."""

    row: np.ndarray
    size: np.ndarray
    spectra: np.ndarray
    max_diff: np.ndarray
    ends: np.ndarray
    members: np.ndarray
    spectrum: np.ndarray  # uint8 (families, 4W): the first spectrum's letters


def families_of_runs(
    config: Config,
    atoms: np.ndarray,
    own: np.ndarray,
    runs: np.ndarray,
    insertion_rows: int = INSERTION_ROWS,
    lowest: np.ndarray | None = None,
) -> Families:
    """The families of ambiguous spectra among runs of canonical molecules that share a key.

    ``atoms`` (k, N) and ``own`` (k,) are the canonical molecules, run after
    run; ``runs`` the k + 1 bounds.  Traces them and groups their enantiomer
    groups by spectrum exactly (``_families_kernel``): the lean path of a
    compact run's grouping, checked against ``groups_of_canonicals`` (every
    spectrum with its molecules) by the tests.  A run of ``insertion_rows``
    images or fewer is sorted by insertion, a longer one by numba's argsort
    (the tests and ``bench/grouping.py`` move the bound).

    Given ``lowest`` (``spectrum_keys``' transform of the image giving the key
    of each molecule, none -1: every molecule asymmetric), the runs are grouped
    by that image's spectrum alone (``_asymmetric_families_kernel``): the
    same families, the other 7 images neither numbered nor hashed.
    """
    table = binomial_table(config)
    atoms = np.ascontiguousarray(atoms, dtype=np.int64)
    own = np.ascontiguousarray(own, dtype=np.int64)
    runs = np.ascontiguousarray(runs, dtype=np.int64)
    partner, _, _ = trace_batch(config, atoms)
    cells, source, inverse = _symmetry_tables(config.width)
    k = len(atoms)
    row = np.empty(k, dtype=np.int64)
    size = np.empty(k, dtype=np.int64)
    spectra = np.empty(k, dtype=np.int64)
    max_diff = np.empty(k, dtype=np.int64)
    ends = np.empty(k, dtype=np.int64)
    if lowest is None:
        members = np.empty(8 * k, dtype=np.int64)
        found = compiled(_families_kernel, calls=_KERNEL_CALLS)(
            atoms,
            own,
            runs,
            partner,
            cells,
            source,
            inverse,
            table,
            config.nb_mol,
            row,
            size,
            spectra,
            max_diff,
            ends,
            members,
            insertion_rows,
        )
    else:
        lowest = np.ascontiguousarray(lowest, dtype=np.int64)
        if k and lowest.min() < 0:
            raise ValueError("families_of_runs: lowest is -1 for a molecule that is not asymmetric")
        members = np.empty(k, dtype=np.int64)
        found = compiled(_asymmetric_families_kernel, calls=_KERNEL_CALLS)(
            atoms,
            own,
            lowest,
            runs,
            partner,
            cells,
            source,
            inverse,
            _compose_table(config.width),
            table,
            config.nb_mol,
            row,
            size,
            max_diff,
            ends,
            members,
        )
        spectra[:found] = 8  # a family of asymmetric molecules has 8 distinct spectra
    ends = ends[:found]
    return Families(
        row[:found],
        size[:found],
        spectra[:found],
        max_diff[:found],
        ends,
        members[: ends[-1] if found else 0],
        letters(partner[row[:found]]),
    )


@cache
def _compose_table(width: int) -> np.ndarray:
    """``compose[u, t]``: the transform that is ``t`` then ``u`` (of cells), shape (8, 8); transform
    0 is the identity."""
    cells, _, _ = _symmetry_tables(width)
    assert (cells[0] == np.arange(width * width)).all()
    index = {row.tobytes(): t for t, row in enumerate(cells)}
    return np.array(
        [[index[cells[u][cells[t]].tobytes()] for t in range(8)] for u in range(8)], dtype=np.int64
    )


def groups_of_canonicals(config: Config, atoms: np.ndarray, own: np.ndarray) -> EnantiomerBatch:
    """Every molecule of the enantiomer groups of these canonical molecules, with spectra and statistics."""
    table = binomial_table(config)
    atoms = np.ascontiguousarray(atoms, dtype=np.int64)
    own = np.ascontiguousarray(own, dtype=np.int64)
    partner, length, turns = trace_batch(config, atoms)
    cells, source, inverse = _symmetry_tables(config.width)
    rows = 8 * len(atoms)
    start = int(own[0]) if len(own) else 1
    stop = int(own[-1]) + 1 if len(own) else 1
    out = EnantiomerBatch(
        config=config,
        start=start,
        stop=stop,
        number=np.empty(rows, dtype=np.int64),
        canonical_number=np.empty(rows, dtype=np.int64),
        transform=np.empty(rows, dtype=np.int8),
        molecule=np.empty((rows, config.cells), dtype=np.uint8),
        spectrum=np.empty((rows, config.positions), dtype=np.uint8),
        stats=np.empty((rows, len(STAT_FIELDS)), dtype=np.int64),
    )
    count = compiled(_enantiomer_kernel, len(atoms), _KERNEL_CALLS)(
        atoms,
        own,
        partner,
        length,
        turns,
        cells,
        source,
        inverse,
        table,
        config.nb_mol,
        out.number,
        out.canonical_number,
        out.transform,
        out.molecule,
        out.spectrum,
        out.stats,
    )
    for name in ("number", "canonical_number", "transform", "molecule", "spectrum", "stats"):
        setattr(out, name, getattr(out, name)[:count])
    return out


def molecules_of_numbers(config: Config, numbers: np.ndarray) -> EnantiomerBatch:
    """The molecules with these numbers (any order, no repeats), in number order, computed.

    Square boxes only, as every enantiomer-group kernel here (their 8 transforms keep
    W = H): a rectangle's records come from ``queries.computed_record``.  Raises ValueError.
    """
    if config.width != config.height:
        raise ValueError(f"{config.name}: the engine's enantiomer groups are for square boxes only")
    numbers = np.unique(np.asarray(numbers, dtype=np.int64))
    table = binomial_table(config)
    canonical = np.unique(image_numbers(config, atoms_of_numbers(config, numbers, table), table).min(axis=1))
    batch = groups_of_canonicals(config, atoms_of_numbers(config, canonical, table), canonical)
    order = np.argsort(batch.number, kind="stable")
    keep = order[np.isin(batch.number[order], numbers)]
    for name in ("number", "canonical_number", "transform", "molecule", "spectrum", "stats"):
        setattr(batch, name, getattr(batch, name)[keep])
    return batch
