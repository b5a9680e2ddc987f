"""The seeker's book: the best-next-shot strategy played against every molecule.

Glossary (see the spec for molecule, ray, spectrum, spectral group):

- *policy*: how a perfect seeker plays.  The *state* is the candidates (the
  molecules agreeing with every ray seen) and the known positions: a shot
  position is known, and so is the exit of a ray that came out (the same
  ray reversed).  The seeker *stops* when all candidates share one spectrum
  (one molecule, or a spectral group no ray can split); otherwise they shoot
  the unknown position ranked first by ``bbcore.shots``' order: ``remaining``
  (fewest expected candidates left, the sum of n^2 / N over the outcomes;
  ties by most information; then the lowest position) or ``information``
  (most information first, then fewest left, then the lowest position);
- *cost*: rays shot, and points as the game scores them: 1 for an absorbed
  or reflected ray, 2 for a ray that comes out (a marker at each end);
- *book*: the policy as one decision tree over every molecule of a
  configuration.  The root holds every molecule; a *node* shoots one
  position and has one child per outcome (absorbed, reflected, out at an
  exit), holding the candidates that give it; a *leaf* holds one molecule
  or one spectral group;
- *line*: the book's sequence of shots for one molecule, root to leaf.

How it is computed: every molecule's spectrum is one row of small integers
(``codes``: the engine's partner code + 2, so 0 reflected, 1 absorbed, 2 + q
out at 0-based position q), read from the store when the configuration is
fully explored, traced otherwise.  A numba kernel then walks the tree depth
first over one array of molecule indexes, each node a segment of it: it
counts the outcomes of every unknown position over the segment, picks the
shot, and sorts the segment by that shot's outcome so that the children are
segments in turn.  The figures of a shot come from ``bbcore.shots.shot_figures``,
compiled into the kernel: the book ranks exactly as the Decode screen does.

What is kept: each molecule's rays and points, the tree's size by depth, the
molecule indexes in tree order, and the nodes of the first ``STORED_DEPTH``
levels.  A node deeper down is rebuilt on demand from its segment of
molecules (``StrategyBook.children``): the policy at a node depends only on
its candidates and known positions, so the rebuilt part is the same tree.
The book is stored in the ``Books`` table (``bbcore.store.Book``), so that
the TUI and ``bbcore decode`` read it without computing it again.
"""

from __future__ import annotations

import io
import json
import threading
import time
import zipfile
from dataclasses import dataclass, field
from typing import Final, Literal

import numpy as np

from bbcore.config import Config
from bbcore.decode import MoleculesDone, Stop, tick
from bbcore.engine import compiled, trace_batch
from bbcore.game import ABSORBED, REFLECTED, Game, Result
from bbcore.numbering import atoms_of_numbers, molecule_batches
from bbcore.shots import NextShot, Ranking, shot_figures, shot_of_counts

STORED_DEPTH: Final = 3
"""Levels of the tree below the root kept with the book (the rest is rebuilt on demand)."""
HARDEST: Final = 20
"""Hardest molecules listed: the most rays, then the most points, then the lowest number."""
BATCH: Final = 1 << 16
"""Molecules traced or read at once while gathering the spectra."""
POLICIES: Final = ("remaining", "information")
BYTES_PER_MOLECULE: Final = 60
"""Memory a book takes per molecule while computed (A5_B8 peaked at 540 MB): its spectrum
as codes, its place in the tree twice, its rays and points."""
BOOK_LIMIT: Final = 20_000_000
"""The most molecules a book is computed for (A5_B8 has 7,624,512; A6_B8 74,974,368)."""

Source = Literal["auto", "store", "compute"]


class StrategyError(ValueError):
    """A book that cannot be made or read; the message is one line for the user."""


# ---------------------------------------------------------------------------
# Spectra as codes


def codes_of_partner(partner: np.ndarray) -> np.ndarray:
    """The engine's partner arrays as codes (int8, partner + 2)."""
    return (partner + 2).astype(np.int8)


def codes_of_spectra(
    chars: np.ndarray, rows: np.ndarray | None = None, out: np.ndarray | None = None
) -> np.ndarray:
    """Normalised spectra (uint8 characters, shape (k, 4W)) as codes, written to the
    ``rows`` of ``out`` (default: a new array, in order)."""
    k, npos = chars.shape
    if out is None:
        out = np.empty((k, npos), dtype=np.int8)
    if rows is None:
        rows = np.arange(k, dtype=np.int64)
    compiled(_letters_kernel)(chars, rows, out)
    return out


def _letters_kernel(chars, rows, codes):  # pragma: no cover  # pragma: no mutate block
    """Spectrum characters to codes (compiled by numba): the two ends of a letter point at
    each other."""
    first = np.empty(26, dtype=np.int64)
    for i in range(chars.shape[0]):
        row = rows[i]
        first[:] = -1
        for j in range(chars.shape[1]):
            ch = chars[i, j]
            if ch == 64:  # '@'
                codes[row, j] = 1
            elif ch == 38:  # '&'
                codes[row, j] = 0
            else:
                letter = ch - 97
                if first[letter] < 0:
                    first[letter] = j
                else:
                    codes[row, j] = first[letter] + 2
                    codes[row, first[letter]] = j + 2


def spectra_codes(
    config: Config,
    source: Source = "auto",
    progress: MoleculesDone | None = None,
    stop: Stop | None = None,
) -> tuple[np.ndarray, str]:
    """Every molecule's spectrum as codes, shape (C(W², N), 4W), in number order,
    and where they came from (``"store"`` or ``"computed"``).

    ``"auto"`` reads the store when the open database holds the whole
    configuration, and traces the rays otherwise.
    """
    from bbcore.decode import is_explored

    if source == "auto":
        source = "store" if is_explored(config) else "compute"
    if source == "store":
        return _stored_codes(config, progress, stop), "store"
    codes = np.empty((config.nb_mol, config.positions), dtype=np.int8)
    done = 0
    for atoms in molecule_batches(config, BATCH):
        tick(stop, progress, done, config.nb_mol)
        codes[done : done + len(atoms)] = codes_of_partner(trace_batch(config, atoms)[0])
        done += len(atoms)
    tick(stop, progress, done, config.nb_mol)
    return codes, "computed"


def _stored_codes(config: Config, progress: MoleculesDone | None, stop: Stop | None) -> np.ndarray:
    """The stored spectra of a complete configuration, in number order.

    The rows are read in the table's own order (rowid), within the rowids of
    the configuration, and put in place by number: reading them in number
    order went through the primary key's index, a table look-up per row, 3
    times slower (bench/strategy.py).
    """
    from bbcore import sql
    from bbcore.decode import is_explored
    from bbcore.store import db

    if not is_explored(config):
        raise StrategyError(f"{config.name} is not completely explored: its spectra are not all stored")
    low, high = db.execute_sql(sql.dialect.rowid_bounds(config)).fetchone()
    codes = np.empty((config.nb_mol, config.positions), dtype=np.int8)
    cursor = db.execute_sql(sql.dialect.spectra_by_rowid(config), (low, high))
    done = 0
    while rows := cursor.fetchmany(BATCH):
        tick(stop, progress, done, config.nb_mol)
        numbers = np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows)) - 1
        chars = np.frombuffer("".join(row[1] for row in rows).encode("ascii"), dtype=np.uint8)
        codes_of_spectra(chars.reshape(len(rows), config.positions), numbers, codes)
        done += len(rows)
    if done != config.nb_mol:
        raise StrategyError(f"{config.name}: {done:,} spectra stored, {config.nb_mol:,} expected")
    tick(stop, progress, done, config.nb_mol)
    return codes


# ---------------------------------------------------------------------------
# The kernel


_figures = shot_figures
"""The kernel's ranking figures: ``shot_figures``, numba's once the kernel is compiled (``_kernel``)."""


# The kernel's stack: one column per pending node, one row per field.
S_START, S_COUNT, S_KNOWN, S_RAYS, S_POINTS, S_DEPTH, S_PARENT, S_OUTCOME = range(8)
# The kernel's state between two calls (``_book_kernel``'s ``state``).
TOP, RECORDED, PLACED, CURSOR, NODE, FIRST, COUNT, KNOWN, RAYS, POINTS, LEVEL = range(11)
STEP: Final = 1 << 17
"""Molecules the kernel reads per call (an A4_B8 book plays about 5 million a second on a
busy machine, so a few hundredths of a second): ``stop`` is checked, and the progress
told, between two calls."""


def _book_kernel(
    codes,
    order,
    buffer,
    by_information,
    record_depth,
    budget,
    stack,
    state,
    tally,
    kinds,
    seen,
    rays_out,
    points_out,
    parent,
    depth,
    shot,
    outcome,
    start,
    count,
    known,
    rays,
    points,
    depth_nodes,
    depth_leaves,
):  # pragma: no cover  # pragma: no mutate block
    """Play the policy over the molecules ``order`` (compiled by numba), ``budget``
    molecules read at a time: returns True once the tree is played, False when the budget
    ran out (called again with the same arrays, it goes on where it stopped, in the middle
    of a node if need be).

    ``codes[m]`` is molecule m's spectrum; ``order`` (the molecules) is sorted
    in place into the tree's segments, ``buffer`` as long.  ``stack`` holds
    the nodes still to play (columns; rows ``S_*``), ``state`` the rest
    (``TOP`` ... ``LEVEL``: the stack's height, the nodes recorded, the
    molecules placed in a leaf, and the node being counted, its next molecule
    at ``CURSOR``, -1 between nodes); ``tally``, ``kinds`` and ``seen`` that
    node's outcome counts so far (zero between nodes).  Each molecule's rays
    and points go to ``rays_out`` and ``points_out``; the nodes down to
    ``record_depth`` levels below the first go to the node arrays (``shot``
    -1 at a leaf; ``outcome`` the code that led there, -1 at the first node).
    """
    npos = codes.shape[1]
    ncodes = npos + 2
    values = np.empty(ncodes, dtype=np.int64)
    offsets = np.empty(ncodes, dtype=np.int64)
    work = 0
    while True:
        if state[CURSOR] < 0:
            # The next node: recorded if shallow enough, its counts started.
            top = state[TOP]
            if top == 0:
                return True
            if work >= budget:
                return False
            top -= 1
            state[TOP] = top
            first, n, d = stack[S_START, top], stack[S_COUNT, top], stack[S_DEPTH, top]
            node = -1
            if d <= record_depth:
                node = state[RECORDED]
                state[RECORDED] += 1
                parent[node], depth[node], outcome[node] = stack[S_PARENT, top], d, stack[S_OUTCOME, top]
                start[node], count[node], known[node] = first, n, stack[S_KNOWN, top]
                rays[node], points[node], shot[node] = stack[S_RAYS, top], stack[S_POINTS, top], -1
            depth_nodes[stack[S_RAYS, top]] += 1
            state[NODE], state[FIRST], state[COUNT] = node, first, n
            state[KNOWN], state[RAYS] = stack[S_KNOWN, top], stack[S_RAYS, top]
            state[POINTS], state[LEVEL] = stack[S_POINTS, top], d
            state[CURSOR] = first
            for j in range(npos):
                kinds[j] = 0
        node, first, n, mask = state[NODE], state[FIRST], state[COUNT], state[KNOWN]
        r, pts, d = state[RAYS], state[POINTS], state[LEVEL]
        best = -1
        if n > 1:
            # Outcome counts of every unknown position, and the outcomes seen.
            i = state[CURSOR]
            while i < first + n:
                if work >= budget:
                    state[CURSOR] = i
                    return False
                m = order[i]
                for j in range(npos):
                    if (mask >> j) & 1:
                        continue
                    c = codes[m, j]
                    if tally[j, c] == 0:
                        seen[j, kinds[j]] = c
                        kinds[j] += 1
                    tally[j, c] += 1
                i += 1
                work += 1
            best_square, best_information = 0, 0.0
            for j in range(npos):
                if (mask >> j) & 1 or kinds[j] < 2:
                    continue
                square = 0
                for k in range(kinds[j]):
                    values[k] = tally[j, seen[j, k]]
                    square += values[k] * values[k]
                if by_information:
                    information = _figures(values[: kinds[j]])[1]
                    if (
                        best < 0
                        or information > best_information
                        or (information == best_information and square < best_square)
                    ):
                        best, best_square, best_information = j, square, information
                elif best < 0 or square < best_square:
                    best, best_square = j, square
                    best_information = -1.0  # computed only if another shot ties
                elif square == best_square:
                    if best_information < 0:
                        for k in range(kinds[best]):
                            values[k] = tally[best, seen[best, k]]
                        best_information = _figures(values[: kinds[best]])[1]
                        for k in range(kinds[j]):
                            values[k] = tally[j, seen[j, k]]
                    information = _figures(values[: kinds[j]])[1]
                    if information > best_information:
                        best, best_information = j, information
            if best >= 0:
                # The children's segments, in code order.
                total = 0
                for c in range(ncodes):
                    offsets[c] = total
                    total += tally[best, c]
                for i in range(first, first + n):
                    m = order[i]
                    c = codes[m, best]
                    buffer[first + offsets[c]] = m
                    offsets[c] += 1
                for i in range(first, first + n):
                    order[i] = buffer[i]
                work += n
                end = first + n
                top = state[TOP]
                for c in range(ncodes - 1, -1, -1):
                    size = tally[best, c]
                    if size == 0:
                        continue
                    end -= size
                    child = mask | (1 << best)
                    if c >= 2:
                        child |= 1 << (c - 2)
                    stack[S_START, top], stack[S_COUNT, top], stack[S_KNOWN, top] = end, size, child
                    stack[S_RAYS, top], stack[S_POINTS, top] = r + 1, pts + (2 if c >= 2 else 1)
                    stack[S_DEPTH, top], stack[S_PARENT, top], stack[S_OUTCOME, top] = d + 1, node, c
                    top += 1
                state[TOP] = top
            for j in range(npos):
                for k in range(kinds[j]):
                    tally[j, seen[j, k]] = 0
        state[CURSOR] = -1
        if best < 0:
            depth_leaves[r] += 1
            state[PLACED] += n
            for i in range(first, first + n):
                rays_out[order[i]] = r
                points_out[order[i]] = pts
        elif node >= 0:
            shot[node] = best


def _kernel():
    """The compiled kernel, ``shot_figures`` compiled with it where it calls ``_figures``."""
    return compiled(_book_kernel, calls={"_figures": shot_figures})


# ---------------------------------------------------------------------------
# Nodes


NODE_COLUMNS: Final = ("parent", "depth", "shot", "outcome", "start", "count", "known", "rays", "points")


@dataclass
class Nodes:
    """Recorded nodes of a book, one array per column (``NODE_COLUMNS``).

    ``depth`` counts levels below the root; ``shot`` is the 0-based position
    shot there (-1 at a leaf); ``outcome`` the code of the parent's shot that
    led there (-1 at the root); ``start`` and ``count`` the node's segment of
    the book's ``order``; ``known`` a bit mask of the known positions;
    ``rays`` and ``points`` what the seeker spent to get there.
    """

    parent: np.ndarray
    depth: np.ndarray
    shot: np.ndarray
    outcome: np.ndarray
    start: np.ndarray
    count: np.ndarray
    known: np.ndarray
    rays: np.ndarray
    points: np.ndarray

    @classmethod
    def empty(cls, size: int) -> Nodes:
        """Room for ``size`` nodes."""
        return cls(*(np.zeros(size, dtype=np.int64) for _ in NODE_COLUMNS))

    def __len__(self) -> int:
        return len(self.parent)

    def head(self, size: int) -> Nodes:
        """The first ``size`` nodes."""
        return Nodes(*(getattr(self, name)[:size].copy() for name in NODE_COLUMNS))


@dataclass
class PolicyRun:
    """What one kernel run gives: per-molecule costs, recorded nodes, tree size by depth."""

    rays: np.ndarray
    points: np.ndarray
    nodes: Nodes
    depth_nodes: np.ndarray
    depth_leaves: np.ndarray


def run_policy(
    codes: np.ndarray,
    order: np.ndarray,
    by: Ranking,
    *,
    known: int = 0,
    rays: int = 0,
    points: int = 0,
    record_depth: int | None = None,
    played: MoleculesDone | None = None,
    stop: Stop | None = None,
) -> PolicyRun:
    """Play the policy over the molecules ``order`` (indexes into ``codes``, sorted in
    place into the tree's segments) from a node where ``known`` positions are known.

    Records the nodes down to ``record_depth`` levels below (every node when
    None).  The per-molecule ``rays`` and ``points`` of the result are
    indexed like ``codes`` (zero for molecules not in ``order``).  The kernel
    runs ``STEP`` molecules at a time: between two, ``stop`` is checked
    (DecodeCancelled) and ``played`` told (molecules placed in a leaf, in all).
    """
    if by not in POLICIES:
        raise StrategyError(f"unknown policy {by!r}: expected 'remaining' or 'information'")
    npos = codes.shape[1]
    n = len(order)
    levels = npos + 1 if record_depth is None else record_depth
    # At most 2n - 1 nodes (every inner node has two children or more), and at
    # most (4W + 2)^d at depth d.
    bound = 2 * n
    if record_depth is not None:
        bound = min(bound, sum((npos + 2) ** d for d in range(record_depth + 1)))
    nodes = Nodes.empty(max(1, bound))
    rays_out = np.zeros(len(codes), dtype=np.int16)
    points_out = np.zeros(len(codes), dtype=np.int16)
    depth_nodes = np.zeros(npos + 2, dtype=np.int64)
    depth_leaves = np.zeros(npos + 2, dtype=np.int64)
    # The depth-first stack holds at most npos + 1 outcomes of each level.
    stack = np.empty((8, (npos + 2) * (npos + 2)), dtype=np.int64)
    stack[:, 0] = (0, n, known, rays, points, 0, -1, -1)
    state = np.zeros(11, dtype=np.int64)
    state[TOP], state[CURSOR] = 1, -1
    tally = np.zeros((npos, npos + 2), dtype=np.int64)
    kinds = np.zeros(npos, dtype=np.int64)
    seen = np.empty((npos, npos + 2), dtype=np.int64)
    buffer = np.empty_like(order)
    kernel = _kernel()
    while not kernel(
        codes,
        order,
        buffer,
        by == "information",
        levels,
        STEP,
        stack,
        state,
        tally,
        kinds,
        seen,
        rays_out,
        points_out,
        *(getattr(nodes, name) for name in NODE_COLUMNS),
        depth_nodes,
        depth_leaves,
    ):
        tick(stop, played, int(state[PLACED]), n)
    tick(stop, played, n, n)
    return PolicyRun(rays_out, points_out, nodes.head(int(state[RECORDED])), depth_nodes, depth_leaves)


# ---------------------------------------------------------------------------
# The book


def result_of_code(code: int) -> Result:
    """A code (partner + 2) as a game result: ``ABSORBED``, ``REFLECTED`` or the 1-based exit."""
    return REFLECTED if code == 0 else ABSORBED if code == 1 else code - 1


def code_of_result(result: Result) -> int:
    """A game result as a code (the inverse of ``result_of_code``)."""
    return 0 if result == REFLECTED else 1 if result == ABSORBED else int(result) + 1


def shot_text(position: int, result: Result) -> str:
    """One shot of a line: ``2:H``, ``5:R``, ``3->19``."""
    return (
        f"{position}:H"
        if result == ABSORBED
        else f"{position}:R"
        if result == REFLECTED
        else f"{position}->{result}"
    )


def line_text(line: list[tuple[int, Result]]) -> str:
    """A line of shots, space-separated (``(no ray)`` when empty)."""
    return " ".join(shot_text(p, r) for p, r in line) or "(no ray)"


@dataclass
class BookNode:
    """One node of a book, as the screens and the CLI show it."""

    index: int
    depth: int
    shot: int | None  # 1-based position shot here; None at a leaf
    outcome: Result | None  # the parent's shot's result that led here; None at the root
    count: int
    rays: int
    points: int

    @property
    def leaf(self) -> bool:
        """Whether the seeker stops here (one spectrum left)."""
        return self.shot is None


@dataclass
class StrategyBook:
    """The policy played against every molecule of a configuration.

    ``rays`` and ``points`` hold each molecule's cost (index number - 1);
    ``order`` holds the molecule indexes so that each node's molecules are
    one segment; ``nodes`` the recorded nodes, the first ``STORED_DEPTH``
    levels and any rebuilt since (``children``).
    """

    config: Config
    by: Ranking
    source: str
    seconds: float
    rays: np.ndarray
    points: np.ndarray
    order: np.ndarray
    nodes: Nodes
    depth_nodes: np.ndarray
    depth_leaves: np.ndarray
    _children: dict[int, list[int]] = field(default_factory=dict, repr=False)
    _hardest: list[int] | None = field(default=None, repr=False)
    _expanded: set[int] = field(default_factory=set, repr=False)
    _rebuilding: threading.RLock = field(default_factory=threading.RLock, repr=False, compare=False)
    """Held while a node is rebuilt (``children``), which reorders its molecules in ``order``,
    and while ``leaf_of`` searches the whole of ``order``: two threads never rebuild one node
    twice, nor search molecules being moved."""

    def __post_init__(self) -> None:
        """The recorded nodes' children, indexed once, where the book is made (a worker)."""
        self._index_children(0)

    # -- figures --------------------------------------------------------------

    @property
    def molecules(self) -> int:
        """Molecules in the book."""
        return len(self.rays)

    def histogram(self, what: Literal["rays", "points"]) -> dict[int, int]:
        """How many molecules needed each number of rays (or points)."""
        counts = np.bincount(getattr(self, what))
        return {int(k): int(n) for k, n in enumerate(counts) if n}

    def mean(self, what: Literal["rays", "points"]) -> float:
        """The mean rays (or points) over every molecule."""
        return float(getattr(self, what).mean())

    def maximum(self, what: Literal["rays", "points"]) -> int:
        """The most rays (or points) any molecule needed."""
        return int(getattr(self, what).max())

    def hardest(self, limit: int = HARDEST) -> list[int]:
        """Numbers of the molecules needing the most rays, then the most points, then by number
        (the first ``HARDEST`` kept: sorting every molecule takes a second for A5_B8, so a
        worker asks first and a screen's later call is free)."""
        if limit > HARDEST or self._hardest is None:
            index = np.lexsort((np.arange(self.molecules), -self.points.astype(np.int64), -self.rays))
            self._hardest = [int(i) + 1 for i in index[:HARDEST]]
            if limit > HARDEST:
                return [int(i) + 1 for i in index[:limit]]
        return self._hardest[:limit]

    def hardest_count(self) -> int:
        """How many molecules need the most rays."""
        return int((self.rays == self.rays.max()).sum())

    def size_by_depth(self) -> list[tuple[int, int, int]]:
        """(rays shot, nodes, leaves) for each depth of the tree that has nodes."""
        return [
            (d, int(n), int(leaves))
            for d, (n, leaves) in enumerate(zip(self.depth_nodes, self.depth_leaves))
            if n
        ]

    @property
    def first_shot(self) -> NextShot | None:
        """The root's shot with its figures over every molecule (None when one spectrum only)."""
        return self.shot_at(0)

    def shot_at(self, index: int) -> NextShot | None:
        """The shot of a recorded node with its outcomes over the node's molecules."""
        position = int(self.nodes.shot[index])
        if position < 0:
            return None
        counts = np.zeros(self.config.positions + 2, dtype=np.int64)
        for child in self.children(index):
            counts[int(self.nodes.outcome[child])] = int(self.nodes.count[child])
        return shot_of_counts(position + 1, counts)

    def summary(self) -> dict:
        """The figures of ``bbcore strategy --json`` (histogram keys are strings)."""
        first = self.first_shot
        return {
            "config": self.config.name,
            "by": self.by,
            "molecules": self.molecules,
            "first_shot": first.position if first else None,
            "rays": {
                "mean": self.mean("rays"),
                "max": self.maximum("rays"),
                "histogram": {str(k): n for k, n in self.histogram("rays").items()},
            },
            "points": {
                "mean": self.mean("points"),
                "max": self.maximum("points"),
                "histogram": {str(k): n for k, n in self.histogram("points").items()},
            },
            "hardest": self.hardest(),
        }

    # -- the tree -------------------------------------------------------------

    def node(self, index: int) -> BookNode:
        """A recorded node."""
        nodes = self.nodes
        shot = int(nodes.shot[index])
        outcome = int(nodes.outcome[index])
        return BookNode(
            index=index,
            depth=int(nodes.depth[index]),
            shot=shot + 1 if shot >= 0 else None,
            outcome=result_of_code(outcome) if outcome >= 0 else None,
            count=int(nodes.count[index]),
            rays=int(nodes.rays[index]),
            points=int(nodes.points[index]),
        )

    def numbers(self, index: int) -> np.ndarray:
        """The molecule numbers of a node, sorted."""
        first, n = int(self.nodes.start[index]), int(self.nodes.count[index])
        return np.sort(self.order[first : first + n]).astype(np.int64) + 1

    def children(self, index: int) -> list[int]:
        """The recorded children of a node, most candidates first, rebuilding them when the
        node is below the stored levels (tracing its molecules and playing the policy over
        them: seconds for a large node, so never on a UI's event loop)."""
        known = self.known_children(index)
        if known is not None:
            return known
        with self._rebuilding:
            if index not in self._children and index not in self._expanded:
                self._expand(index)
        return self._children.get(index, [])

    def known_children(self, index: int) -> list[int] | None:
        """The children of a node if they are known without rebuilding anything, else None."""
        if int(self.nodes.shot[index]) < 0:
            return []
        return self._children.get(index)

    def _index_children(self, since: int) -> None:
        """Index the children of the nodes from ``since`` on: each parent's list is made
        whole, then put in place at once (a reader in another thread sees it whole)."""
        nodes = self.nodes
        new = np.arange(since, len(nodes), dtype=np.int64)
        new = new[nodes.parent[since:] >= 0]
        if not len(new):
            return
        parents = nodes.parent[new]
        new = new[np.lexsort((nodes.outcome[new], -nodes.count[new], parents))]
        parents = nodes.parent[new]
        cuts = np.flatnonzero(np.diff(parents)) + 1
        for kids in np.split(new, cuts):
            parent = int(nodes.parent[kids[0]])
            merged = self._children.get(parent, []) + [int(c) for c in kids]
            merged.sort(key=lambda c: (-int(nodes.count[c]), int(nodes.outcome[c])))
            self._children[parent] = merged

    def _expand(self, index: int) -> None:
        """Rebuild the subtree under a node from its molecules (the same policy, the same tree)."""
        self._expanded.add(index)
        nodes = self.nodes
        first, n = int(nodes.start[index]), int(nodes.count[index])
        segment = self.order[first : first + n].astype(np.int64)
        atoms = atoms_of_numbers(self.config, segment + 1)
        codes = codes_of_partner(trace_batch(self.config, atoms)[0])
        local = np.arange(n, dtype=np.int64)
        run = run_policy(
            codes,
            local,
            self.by,
            known=int(nodes.known[index]),
            rays=int(nodes.rays[index]),
            points=int(nodes.points[index]),
        )
        self.order[first : first + n] = segment[local]
        new = run.nodes
        offset = len(nodes)
        # The subtree's first node is this node again: its children hang from ``index``.
        kept = slice(1, len(new))
        parent = np.where(new.parent[kept] == 0, index, new.parent[kept] - 1 + offset)
        self.nodes = Nodes(
            parent=np.concatenate([nodes.parent, parent]),
            depth=np.concatenate([nodes.depth, new.depth[kept] + nodes.depth[index]]),
            shot=np.concatenate([nodes.shot, new.shot[kept]]),
            outcome=np.concatenate([nodes.outcome, new.outcome[kept]]),
            start=np.concatenate([nodes.start, new.start[kept] + first]),
            count=np.concatenate([nodes.count, new.count[kept]]),
            known=np.concatenate([nodes.known, new.known[kept]]),
            rays=np.concatenate([nodes.rays, new.rays[kept]]),
            points=np.concatenate([nodes.points, new.points[kept]]),
        )
        self._index_children(offset)

    def leaf_of(self, number: int) -> int:
        """The leaf holding molecule ``number`` (rebuilding the nodes on its way)."""
        with self._rebuilding:
            where = int(np.flatnonzero(self.order == number - 1)[0])
            index = 0
            while int(self.nodes.shot[index]) >= 0:
                index = next(
                    c
                    for c in self.children(index)
                    if self.nodes.start[c] <= where < self.nodes.start[c] + self.nodes.count[c]
                )
                where = int(np.flatnonzero(self.order == number - 1)[0])
            return index

    def path(self, index: int) -> list[int]:
        """The nodes from the root down to ``index``."""
        path = [index]
        while self.nodes.parent[path[-1]] >= 0:
            path.append(int(self.nodes.parent[path[-1]]))
        return path[::-1]

    def line(self, number: int) -> list[tuple[int, Result]]:
        """The book's shots for molecule ``number``: (position, result) from the first."""
        path = self.path(self.leaf_of(number))
        return [
            (int(self.nodes.shot[a]) + 1, result_of_code(int(self.nodes.outcome[b])))
            for a, b in zip(path, path[1:])
        ]

    def follow(self, game: Game) -> int | None:
        """The node a game has reached by following the book: its shown rays are exactly the
        book's shots (and their exits) from the root; None when the game left the book."""
        if game.width != self.config.width:
            return None
        shown = sum(1 << (p - 1) for p in game.shown)
        index = 0
        while int(self.nodes.known[index]) != shown:
            shot = int(self.nodes.shot[index])
            result = game.result(shot + 1) if shot >= 0 else None
            if result is None:
                return None
            code = code_of_result(result)
            index = next((c for c in self.children(index) if self.nodes.outcome[c] == code), -1)
            if index < 0:
                return None
        return index

    def ahead(self, index: int) -> tuple[float, int, float, int]:
        """What the book still spends below a node: mean and most rays, mean and most points."""
        first, n = int(self.nodes.start[index]), int(self.nodes.count[index])
        members = self.order[first : first + n]
        rays = self.rays[members].astype(np.int64) - int(self.nodes.rays[index])
        points = self.points[members].astype(np.int64) - int(self.nodes.points[index])
        return float(rays.mean()), int(rays.max()), float(points.mean()), int(points.max())

    def advice(self, game: Game) -> str:
        """One sentence on what the book does from a game: its next shot and what follows,
        or that the game has left the book."""
        index = self.follow(game)
        if index is None:
            return f"The book (by {self.by}) does not play this game: its shots differ."
        node = self.node(index)
        if node.leaf:
            return f"The book (by {self.by}) stops here: its {node.count:,} candidates share one spectrum."
        rays, most, points, _ = self.ahead(index)
        return (
            f"The book (by {self.by}) shoots position {node.shot} next; from here it needs "
            f"{rays:.2f} more rays on average (at most {most}) and {points:.2f} more points."
        )


def compute_book(
    config: Config,
    by: Ranking = "remaining",
    *,
    source: Source = "auto",
    progress: MoleculesDone | None = None,
    played: MoleculesDone | None = None,
    stop: Stop | None = None,
) -> StrategyBook:
    """Play the policy against every molecule of ``config`` (one decision tree).

    ``progress`` is told (molecules done, in all) while the spectra are read
    or traced, ``played`` (molecules placed in a leaf, in all) while the tree
    is played; ``stop`` is checked between two batches of either, a few
    hundredths of a second apart (DecodeCancelled).  StrategyError when the
    configuration is too large.
    """
    if not config.fixed_count:  # one molecule number per count: a book is of one count
        raise StrategyError(f"{config.name} is a range of atom counts: a book is made for one count")
    if config.nb_mol > BOOK_LIMIT:
        raise StrategyError(
            f"{config.name} has {config.nb_mol:,} molecules: too many for a book in memory "
            f"(the limit is {BOOK_LIMIT:,}, about {BOOK_LIMIT * BYTES_PER_MOLECULE // 10**6:,} MB)"
        )
    began = time.perf_counter()
    codes, where = spectra_codes(config, source, progress, stop)
    order = np.arange(config.nb_mol, dtype=np.int64)
    run = run_policy(codes, order, by, record_depth=STORED_DEPTH, played=played, stop=stop)
    return StrategyBook(
        config=config,
        by=by,
        source=where,
        seconds=time.perf_counter() - began,
        rays=run.rays.astype(np.uint8),
        points=run.points.astype(np.uint8),
        order=order.astype(np.int32),
        nodes=run.nodes,
        depth_nodes=run.depth_nodes,
        depth_leaves=run.depth_leaves,
    )


# ---------------------------------------------------------------------------
# Storage


def save_book(book: StrategyBook) -> None:
    """Store a book (replacing the same configuration and policy's)."""
    from bbcore.store import Book, db, now

    arrays = io.BytesIO()
    np.savez(
        arrays,
        rays=book.rays,
        points=book.points,
        order=book.order,
        depth_nodes=book.depth_nodes,
        depth_leaves=book.depth_leaves,
        **{f"node_{name}": getattr(book.nodes, name) for name in NODE_COLUMNS},
    )
    summary = book.summary()
    summary["size_by_depth"] = book.size_by_depth()
    summary["hardest_count"] = book.hardest_count()
    with db.atomic():
        Book.delete().where((Book.config == book.config.name) & (Book.by == book.by)).execute()
        Book.create(
            config=book.config.name,
            by=book.by,
            nb_mol=book.molecules,
            source=book.source,
            seconds=book.seconds,
            first_shot=summary["first_shot"],
            rays_mean=summary["rays"]["mean"],
            rays_max=summary["rays"]["max"],
            points_mean=summary["points"]["mean"],
            points_max=summary["points"]["max"],
            summary=json.dumps(summary),
            arrays=arrays.getvalue(),
            dh1=now(),
        )


def stored_book(config: Config, by: Ranking = "remaining") -> StrategyBook | None:
    """The stored book of a configuration and policy, or None."""
    from bbcore.store import Book, is_open

    if not is_open():
        return None
    row = Book.get_or_none((Book.config == config.name) & (Book.by == by))
    if row is None:
        return None
    try:
        with np.load(io.BytesIO(row.arrays)) as arrays:
            nodes = Nodes(*(arrays[f"node_{name}"] for name in NODE_COLUMNS))
            made = StrategyBook(
                config=config,
                by=by,
                source=row.source,
                seconds=row.seconds,
                rays=arrays["rays"],
                points=arrays["points"],
                order=arrays["order"].copy(),
                nodes=nodes,
                depth_nodes=arrays["depth_nodes"],
                depth_leaves=arrays["depth_leaves"],
            )
    except (ValueError, OSError, KeyError, zipfile.BadZipFile) as error:
        raise StrategyError(
            f"the stored {by} book of {config.name} is unreadable ({error}); --recompute plays it again"
        ) from None
    if made.molecules != config.nb_mol:
        raise StrategyError(
            f"the stored {by} book of {config.name} has {made.molecules:,} molecules, not "
            f"{config.nb_mol:,}; --recompute plays it again"
        )
    return made


def book(
    config: Config,
    by: Ranking = "remaining",
    *,
    source: Source = "auto",
    recompute: bool = False,
    progress: MoleculesDone | None = None,
    played: MoleculesDone | None = None,
    stop: Stop | None = None,
) -> tuple[StrategyBook, bool]:
    """The stored book, else computed and stored (when a database is open and writable);
    and whether it was computed now."""
    from bbcore.store import is_open, is_read_only

    if not recompute:
        found = stored_book(config, by)
        if found is not None:
            return found, False
    made = compute_book(config, by, source=source, progress=progress, played=played, stop=stop)
    if is_open() and not is_read_only():
        save_book(made)
    return made, True
